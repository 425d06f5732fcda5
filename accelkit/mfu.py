"""Predicted MFU: from one matrix unit's utilization to a cluster's model-FLOPs utilization.

Three layers, each read off a model the course already has:

1. **One matmul on one chip** (:func:`matmul_efficiency`): the fraction of the chip's peak an
   ``M×K`` by ``K×N`` product reaches.

   * *TPU*: the catalog's MXU (``matrix_unit_shape``, 128×128 up to v5p, 256×256 on v6e) as a
     :class:`~accelkit.systolic.SystolicArray`, weight-stationary, double-buffered, with
     ``overlap_folds=True`` (pipelined folds, the scaling book's Appendix B). The weight matrix
     (K×N) is cut into ``ceil(K/R)·ceil(N/C)`` folds, each streaming all M rows; the folds are
     dealt to the chip's MXUs (``TensorCores × MXUs per core`` from ``matrix_units``), so the
     busiest MXU sets the time. Counted: padding to the MXU's side, the pipeline's one fill and
     drain, MXU-level wave quantization. Not counted: memory stalls, VMEM tiling of M, XLA's
     choice of loop order.
   * *NVIDIA GPU*: a tensor-core tile and wave-quantization model. The output is cut into
     128×256 tiles (or 256×128, whichever suits the shape better), each computed by one SM in
     steps of 64 bf16 elements of K (128 bytes); tiles are spread over ``sms_per_chip`` SMs in
     waves and the last wave runs partly idle. The tile is a common CUTLASS 3 Hopper
     warp-specialized GEMM configuration (TileShape 128×256×64, NVIDIA/cutlass sm90 examples;
     two consumer warpgroups issuing 64×256×16 ``wgmma``), and is used for every NVIDIA chip
     in the catalog (Ampere's CUTLASS kernels offer 128×256 tiles too; Volta's mostly 128×128).
     Counted: padding to the tile, wave quantization. Not counted: the prologue and epilogue
     of each tile, the instruction issue rate, L2 misses: a GPU matmul large enough to fill
     every wave is at peak here, which real library kernels are not (docs/mfu.md compares
     with published runs). Against measured linear layers (validation/kernel_check.py, vidur's
     A100 and H100 profiles): at 2,048 tokens and more, cuBLAS sustains 0.894 (A100) and 0.949
     (H100) of the achievable ceiling times this efficiency, which :mod:`accelkit.kernels`
     applies (:func:`accelkit.calibration.matmul_sustained`); at 512-1,024 tokens this model
     reads too slow on A100 (the measured kernels take 0.8 of the time it gives: cuBLAS picks
     smaller tiles or split-K where one 128×256 tile per SM leaves a wave part-empty), about
     right on H100. This function stays the tile/wave geometry alone.
   * *AMD GPUs* store compute units in ``sms_per_chip``; their GEMM libraries' tile shapes are not
     in the catalog with a source, so they are refused with a ValueError.

2. **One training step's compute on one chip** (:func:`step_efficiency`): every matmul of a
   transformer layer at its real shape per tensor-parallel shard (Megatron column/row
   parallel: the first matmul of each pair splits N by tp, the second K), forward and the two
   backward products (``dX = dY·Wᵀ``: M×N by N×K; ``dW = Xᵀ·dY``: K×M by M×N), the attention
   score products per head on the matrix unit with the causal mask's diagonal blocks half
   wasted, and the non-matmul work (norms, activations, RoPE, residual adds, the embedding
   gather) as **memory-bound** kernels at the chip's HBM bandwidth: their bytes from
   :meth:`accelkit.models.Model.operations`, three times the forward pass's for forward plus
   backward, divided by tp (sequence parallelism). That is an upper bound on their time (each
   op a separate kernel; fused into matmul epilogues they cost less) and why they are not
   costed at a vector unit's FLOP/s: at 1-8 FLOPs per 2-byte element they are far below any
   chip's ridge point. The softmax's exponentials run on the GPU's special-function units at
   3.9 TFLOP/s on H100 (FlashAttention-3, Shah et al. 2024, arXiv:2407.08608 §3.1), which
   FlashAttention-3 overlaps with the matmuls; they are not timed here.

3. **A cluster** (:func:`accelkit.parallel.predicted_mfu`): :func:`accelkit.parallel.train_step`
   with ``compute_efficiency="predicted"`` prices kernels with :mod:`accelkit.kernels`, which
   builds on this module's shapes and tile/wave model but runs them under each chip's
   *measured* matmul ceiling, counts every matmul's inputs, weights and outputs, the framework's
   attention and recomputation, and adds exposed communication, bubbles and the optimizer step.
   :func:`step_efficiency` and :func:`compute_efficiencies` here remain the engines' view at
   the datasheet peak (no framework, no measured ceilings).

    >>> from accelkit import mfu
    >>> round(mfu.matmul_efficiency("H100", 8192, 8192, 8192), 3)
    0.97
    >>> round(mfu.matmul_efficiency("TPU v5p", 8192, 8192, 8192), 3)
    1.0
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from accelkit import _validate, chips, dtypes, models, roofline
from accelkit.dtypes import DType
from accelkit.layout import Layout, check_layout

__all__ = ["GPU_TILE", "MatmulShape", "NotModelled", "StepEfficiency", "causal_block", "causal_factor",
           "check_chip", "compute_efficiencies", "layer_matmuls", "matmul_efficiencies",
           "matmul_efficiency", "mxu_count", "mxu_shape", "step_efficiency"]

#: (M tile, N tile, K tile in bytes): CUTLASS 3's Hopper warp-specialized 128×256×64 (bf16).
GPU_TILE = (128, 256, 128)
_MAX_DIM = 1 << 24


@dataclass(frozen=True)
class MatmulShape:
    """One matmul of a layer per chip: ``batch`` independent ``M×K`` by ``K×N`` products,
    ``count`` times per step (layers × passes); ``causal`` for the attention scores."""

    name: str
    M: int
    N: int
    K: int
    batch: int = 1
    count: float = 1.0
    causal: bool = False

    @property
    def flops(self) -> float:
        """Useful FLOPs of all ``count`` occurrences (the causal half for attention)."""
        macs = float(self.M) * self.N * self.K * self.batch
        if self.causal:
            macs *= (self.M + 1) / (2.0 * self.M)
        return 2.0 * macs * self.count


@dataclass(frozen=True)
class StepEfficiency:
    """Where one micro-batch's compute time goes on one chip, relative to the chip's peak."""

    model: str
    chip: str
    tp: int
    ep: int
    microbatch_tokens: int
    matmul_flops: float            # per chip per micro-batch, forward + backward
    peak_seconds: float            # matmul_flops at the chip's peak
    matmul_seconds: float          # at each matmul's predicted efficiency
    vector_bytes: float            # HBM bytes of the non-matmul kernels
    vector_seconds: float          # at the chip's HBM bandwidth
    matmul_efficiency: float       # peak_seconds / matmul_seconds
    efficiency: float              # peak_seconds / (matmul_seconds + vector_seconds)

    def __repr__(self) -> str:
        return (f"StepEfficiency({self.model} on {self.chip}, tp{self.tp} ep{self.ep} "
                f"mb={self.microbatch_tokens:,}: matmuls at {self.matmul_efficiency:.1%} of "
                f"peak, with vector work {self.efficiency:.1%})")


class NotModelled(ValueError):
    """The engines cannot model this chip's matrix units: no sourced GEMM tiles (AMD GPUs), no
    SM count, or a TPU whose MXU shape or count is unpublished. Callers that can fall back to
    an assumed efficiency catch this type, not every ValueError."""


# --------------------------------------------------------------------------------------------
# The matrix units
# --------------------------------------------------------------------------------------------

def mxu_shape(chip: str | chips.Chip) -> tuple[int, int]:
    """(rows, cols) of a TPU's MXU, read from the catalog's ``matrix_unit_shape``."""
    the_chip = chips.get(chip)
    if the_chip.kind != "tpu":
        raise ValueError(f"mxu_shape is for TPUs; {the_chip.name} is a {the_chip.kind}")
    found = re.search(r"(\d+)x(\d+)", the_chip.matrix_unit_shape)
    if found:
        return int(found.group(1)), int(found.group(2))
    wide = re.search(r"(\d+)-wide", the_chip.matrix_unit_shape)
    if wide:
        return int(wide.group(1)), int(wide.group(1))
    raise NotModelled(f"{the_chip.name}'s MXU shape is not in the catalog")


def mxu_count(chip: str | chips.Chip) -> int:
    """MXUs per TPU chip: TensorCores × MXUs per TensorCore, from the catalog's ``matrix_units``
    (its first figure; TPU v6e's sources disagree, 2 or 4, and the catalog leads with 2)."""
    the_chip = chips.get(chip)
    if the_chip.kind != "tpu":
        raise ValueError(f"mxu_count is for TPUs; {the_chip.name} is a {the_chip.kind}")
    found = re.match(r"\s*(\d+) TensorCores? x (\d+) MXU", the_chip.matrix_units)
    if not found:
        raise NotModelled(f"{the_chip.name}'s MXU count is not published in the catalog "
                         f"({the_chip.matrix_units!r}); its matmul efficiency cannot be modelled")
    return int(found.group(1)) * int(found.group(2))


def _ceil(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    return -(-np.asarray(a, dtype=np.int64) // np.asarray(b, dtype=np.int64))


def _tpu_efficiency(R: int, C: int, mxus: int, M: np.ndarray, N: np.ndarray, K: np.ndarray,
                    batch: np.ndarray) -> np.ndarray:
    """Closed form of SystolicArray(R, C, "ws", double_buffer=True, overlap_folds=True) over
    the busiest MXU's folds (tests check it against the engine's estimate)."""
    folds = _ceil(K, R) * _ceil(N, C) * batch
    busiest = _ceil(folds, mxus)
    gap = np.maximum(M, 2 * R - 1)
    cycles = R + (busiest - 1) * gap + M + R + C - 2
    return (M * N * K * batch).astype(float) / (mxus * R * C * cycles.astype(float))


def _gpu_efficiency(sms: int | np.ndarray, k_tile: int, M: np.ndarray, N: np.ndarray, K: np.ndarray,
                    batch: np.ndarray) -> np.ndarray:
    tm, tn = GPU_TILE[0], GPU_TILE[1]
    k_pad = (_ceil(K, k_tile) * k_tile).astype(float)
    best = np.zeros(np.broadcast(M, N, K, batch).shape)
    for a, b in ((tm, tn), (tn, tm)):
        tiles = _ceil(M, a) * _ceil(N, b) * batch
        waves = _ceil(tiles, sms)
        eff = (M * N).astype(float) * K * batch / (waves * sms * a * b * k_pad)
        best = np.maximum(best, eff)
    return best


def _engine(chip: chips.Chip, dtype: DType) -> tuple[str, int, int, int]:
    """("tpu", R, C, mxus) or ("gpu", sms, k_tile, 0)."""
    if chip.kind == "tpu":
        R, C = mxu_shape(chip)
        return "tpu", R, C, mxu_count(chip)
    if chip.vendor.upper() != "NVIDIA":
        raise NotModelled(f"chip {chip.name!r}: its {chip.sms_per_chip} compute units use GEMM "
                         "tiles the catalog has no source for; predicted matmul efficiency "
                         "covers TPUs and NVIDIA GPUs only")
    if not chip.sms_per_chip:
        raise NotModelled(f"chip {chip.name!r} has no SM count in the catalog")
    k_tile = max(1, int(GPU_TILE[2] / dtypes.nbytes(dtype)))
    return "gpu", int(chip.sms_per_chip), k_tile, 0


def _efficiency_array(chip: chips.Chip, dtype: DType, M: np.ndarray, N: np.ndarray,
                      K: np.ndarray, batch: np.ndarray,
                      sms: np.ndarray | None = None) -> np.ndarray:
    kind, a, b, c = _engine(chip, dtype)
    if kind == "tpu":
        return _tpu_efficiency(a, b, c, M, N, K, batch)
    if sms is None:
        return _gpu_efficiency(a, b, M, N, K, batch)
    # on fewer SMs: the waves over those SMs, as a share of those SMs' peak, times their share
    # of the chip
    used = np.asarray(sms, dtype=np.int64)
    return _gpu_efficiency(used, b, M, N, K, batch) * used / a


def matmul_efficiencies(chip: chips.Chip, dtype: DType, M: np.ndarray, N: np.ndarray,
                        K: np.ndarray, batch: np.ndarray, *,
                        sms: np.ndarray | None = None) -> np.ndarray:
    """:func:`matmul_efficiency` for arrays of shapes at once (no argument checks: for callers
    that checked the chip with :func:`check_chip` and build the shapes themselves). ``sms``
    (GPUs; one per shape): the SMs each GEMM is launched on where fewer than the chip's (a
    collective holding the rest, :class:`accelkit.frameworks.GemmOverlap`): its tiles run in
    waves over those SMs and it reaches at most their share of the chip's peak."""
    return _efficiency_array(chip, dtype, np.asarray(M, np.int64), np.asarray(N, np.int64),
                             np.asarray(K, np.int64), np.asarray(batch, np.int64), sms)


def causal_block(chip: chips.Chip) -> int:
    """The score-block side a causal attention kernel computes in (the MXU side on a TPU, the
    GPU tile's M side), whose diagonal blocks are half wasted."""
    return mxu_shape(chip)[0] if chip.kind == "tpu" else GPU_TILE[0]


def causal_factor(s: int, block: int) -> float:
    """Useful share of a causal attention's computed score blocks (see :func:`_causal_factor`)."""
    return _causal_factor(s, block)


def matmul_efficiency(chip: str | chips.Chip, M: int, N: int, K: int, dtype: str = "bf16", *,
                      batch: int = 1) -> float:
    """Fraction of ``chip``'s ``dtype`` peak that ``batch`` products of ``M×K`` by ``K×N`` reach
    (see the module docstring for what is counted).

    Raises:
        ValueError: a dimension out of range, a dtype the chip has no peak for, an AMD GPU, or
            a TPU whose MXU count is unpublished.
    """
    the_chip = chips.get(chip)
    dt = dtypes.check(dtype)
    the_chip.peak_flops(dt)
    dims = [_validate.positive_int(n, v, maximum=_MAX_DIM)
            for n, v in (("M", M), ("N", N), ("K", K), ("batch", batch))]
    arr = [np.array([v], dtype=np.int64) for v in dims]
    return float(_efficiency_array(the_chip, dt, *arr)[0])


def _causal_factor(s: int, block: int) -> float:
    """Useful share of a causal attention's computed score blocks: block×block tiles on or
    below the diagonal are computed, the diagonal ones half wasted."""
    n = -(-s // block)
    return (s * (s + 1) / 2.0) / (block * block * n * (n + 1) / 2.0)


# --------------------------------------------------------------------------------------------
# A transformer's matmuls per chip
# --------------------------------------------------------------------------------------------

def layer_matmuls(model: str | models.Model, microbatch_tokens: int, *, tp: int = 1,
                  ep: int = 1, seq_len: int | None = None) -> tuple[MatmulShape, ...]:
    """Every forward matmul of one micro-batch on one chip, per tensor-parallel shard.

    ``count`` is how often each shape occurs in the forward pass (layers); the training pass
    adds the two backward products of each (see :func:`step_efficiency`). With ``tp`` = 1 and
    ``ep`` = 1 the FLOPs sum to the model's forward matmul and attention FLOPs (tested).
    Expert layers assume balanced routing: each local expert gets ``mb·ep·k/E`` tokens.
    """
    the_model = _transformer(model)
    mb = _validate.positive_int("microbatch_tokens", microbatch_tokens, maximum=10**9)
    tp = _validate.positive_int("tp", tp, maximum=1 << 20)
    ep = _validate.positive_int("ep", ep, maximum=1 << 20)
    s = the_model.check_seq_len(seq_len)
    split = mb < s  # a micro-batch holding part of a sequence (token-level micro-batches)
    seqs = 1 if split else mb // s
    m = the_model
    d, h, L = m.d_model, m.heads, m.layers
    out: list[MatmulShape] = []

    def col(name: str, k: int, n: int, count: float, tokens: int = mb) -> None:
        if tokens > 0 and n // tp > 0:
            out.append(MatmulShape(name, tokens, max(1, n // tp), k, 1, count))

    def row(name: str, k: int, n: int, count: float, tokens: int = mb) -> None:
        if tokens > 0:
            out.append(MatmulShape(name, tokens, n, max(1, k // tp), 1, count))

    moe = m if isinstance(m, models.MoETransformer) else None
    if moe is not None and moe.latent_attention:
        qk, vd = moe.qk_head_dim, moe.value_head_dim
        if moe.q_lora_rank:
            col("q_down", d, moe.q_lora_rank * tp, L)  # replicated low-rank: not split by tp
            col("q_up", moe.q_lora_rank, h * qk, L)
        else:
            col("q_proj", d, h * qk, L)
        col("kv_down", d, (moe.kv_lora_rank + moe.qk_rope_head_dim) * tp, L)
        col("kv_up", moe.kv_lora_rank, h * (moe.head_dim + vd), L)
        row("attn_out", h * vd, d, L)
        score_k, value_n = qk, vd
    else:
        qk = vd = m.head_dim
        col("qkv_proj", d, m.qkv_width, L)
        row("attn_out", h * m.head_dim, d, L)
        score_k, value_n = qk, vd
    heads_local = max(1, h // tp)
    if split:
        # mb queries against the sequence's keys: on average half of them under the mask
        half = L * (s + 1) / (2.0 * s)
        out.append(MatmulShape("attention_scores", mb, s, score_k, heads_local, half))
        out.append(MatmulShape("attention_values", mb, value_n, s, heads_local, half))
    else:
        out.append(MatmulShape("attention_scores", s, s, score_k, seqs * heads_local, L, True))
        out.append(MatmulShape("attention_values", s, value_n, s, seqs * heads_local, L, True))
    if moe is not None:
        if moe.dense_layers:
            col("dense_mlp_in", d, m.mlp_in_width, moe.dense_layers)
            row("dense_mlp_down", m.d_ff, d, moe.dense_layers)
        layers_moe = moe.moe_layers
        out.append(MatmulShape("router", mb, moe.n_experts, d, 1, layers_moe))
        local = max(1, moe.n_experts // ep)
        per_expert = max(1, round(mb * ep * moe.experts_per_token / moe.n_experts))
        out.append(MatmulShape("experts_in", per_expert, max(1, moe.expert_in_width // tp), d,
                               local, layers_moe))
        out.append(MatmulShape("experts_down", per_expert, d, max(1, moe.d_ff_expert // tp),
                               local, layers_moe))
        if moe.shared_experts:
            col("shared_in", d, moe.shared_experts * moe.expert_in_width, layers_moe)
            row("shared_down", moe.shared_experts * moe.d_ff_expert, d, layers_moe)
    else:
        col("mlp_in", d, m.mlp_in_width, L)
        row("mlp_down", m.d_ff, d, L)
    col("lm_head", d, m.vocab, 1)
    return tuple(out)


def _transformer(model: str | models.Model) -> models.Transformer:
    m = models.get(model)
    if not isinstance(m, models.Transformer):
        raise ValueError(f"model must be a catalog transformer; {m.name} is a {m.family}")
    return m


def _per_token_work(model: models.Transformer, seq_len: int) -> tuple[float, float]:
    """(training FLOPs per token, forward HBM bytes per token of the non-matmul kernels: norms,
    elementwise, the gather), the same for every layout of one model and sequence."""
    ops = model.operations(batch=1, seq_len=seq_len, phase="forward")
    vector = math.fsum(op.bytes for op in ops if op.kind not in models.MATRIX_KINDS) / seq_len
    return float(model.flops_per_token("train", seq_len=seq_len)), vector


def _step_numbers(model: models.Transformer, chip: chips.Chip, dtype: DType, tp: int, ep: int,
                  mb: int, seq_len: int, per_token: tuple[float, float]
                  ) -> tuple[float, float, float, float]:
    """(matmul FLOPs, peak seconds, matmul seconds, vector bytes) per chip per micro-batch
    (``per_token``: :func:`_per_token_work` of the model and sequence)."""
    shapes = layer_matmuls(model, mb, tp=tp, ep=ep, seq_len=seq_len)
    kind, _, _, _ = _engine(chip, dtype)
    rows: list[tuple[int, int, int, int, float, bool]] = []
    for sh in shapes:
        fwd = sh.flops
        if sh.name.startswith("attention"):
            # forward and backward (dQ, dK, dV, recomputed scores) at the forward shapes
            rows.append((sh.M, sh.N, sh.K, sh.batch, 3.0 * fwd, sh.causal))
        else:
            rows += [(sh.M, sh.N, sh.K, sh.batch, fwd, False),   # Y = X·W
                     (sh.M, sh.K, sh.N, sh.batch, fwd, False),   # dX = dY·Wᵀ
                     (sh.K, sh.N, sh.M, sh.batch, fwd, False)]   # dW = Xᵀ·dY
    M = np.array([r[0] for r in rows], dtype=np.int64)
    N = np.array([r[1] for r in rows], dtype=np.int64)
    K = np.array([r[2] for r in rows], dtype=np.int64)
    B = np.array([r[3] for r in rows], dtype=np.int64)
    flops = np.array([r[4] for r in rows])
    eff = _efficiency_array(chip, dtype, M, N, K, B)
    block = mxu_shape(chip)[0] if kind == "tpu" else GPU_TILE[0]
    causal = np.array([_causal_factor(int(r[0]), block) if r[5] else 1.0 for r in rows])
    eff = eff * causal
    peak = chip.peak_flops(dtype)
    # The ideal: the model's training FLOPs for this chip's share at peak. Work a chip repeats
    # (replicated low-rank projections, rounding of heads or experts) counts as lost.
    train_flops, vector_bytes = per_token
    total = train_flops * mb / tp
    matmul_seconds = float((flops / (peak * eff)).sum())
    vector = 3.0 * vector_bytes * mb / tp
    return total, total / peak, matmul_seconds, vector


def _compute_seconds(matmul_seconds: float, vector_seconds: float) -> float:
    """A micro-batch's compute time: the matmul kernels, then the memory-bound vector kernels
    between them, one after another (not overlapped: fused into matmul epilogues or run
    beside them, as FlashAttention-3 does its softmax, they would cost less)."""
    return float(roofline.times(compute_seconds=matmul_seconds, memory_seconds=vector_seconds,
                                overlap=False).seconds)


def check_chip(chip: chips.Chip, dtype: str) -> DType:
    """Refuse a chip and precision whose matmul efficiency this module cannot predict; return
    the checked precision.

    Raises:
        ValueError: an unknown precision or one the chip has no peak for, an AMD GPU, an
            NVIDIA GPU without an SM count, a TPU whose MXU shape or count is unpublished.
    """
    dt = dtypes.check(dtype)
    chip.peak_flops(dt)
    _engine(chip, dt)
    return dt


def compute_efficiencies(model: models.Transformer, chip: chips.Chip, dtype: str,
                         tp: np.ndarray, ep: np.ndarray, microbatch_tokens: np.ndarray,
                         seq_len: int) -> np.ndarray:
    """Each layout's compute efficiency (:attr:`StepEfficiency.efficiency`), one entry per
    entry of the ``tp``, ``ep`` and ``microbatch_tokens`` arrays: what
    :func:`accelkit.parallel.train_step` multiplies the peak by with
    ``compute_efficiency="predicted"``. One evaluation per distinct (tp, ep, micro-batch), so a
    search over thousands of layouts costs as many evaluations as it has distinct shapes.

    Raises:
        ValueError: as :func:`check_chip`.
    """
    dt = check_chip(chip, dtype)
    per_token = _per_token_work(model, seq_len)
    # 1-D uniques (fast) of (tp, ep) and of mb, then of their pair's index
    te = (np.asarray(tp, np.int64) << 21) | np.asarray(ep, np.int64)
    u_te, i_te = np.unique(te, return_inverse=True)
    u_mb, i_mb = np.unique(np.asarray(microbatch_tokens, np.int64), return_inverse=True)
    pairs, inverse = np.unique(i_te.reshape(-1) * len(u_mb) + i_mb.reshape(-1),
                               return_inverse=True)
    values = np.empty(len(pairs))
    hbm = float(chip.require("hbm_bytes_per_second"))
    for i, pair in enumerate(pairs.tolist()):
        key, b = int(u_te[pair // len(u_mb)]), int(u_mb[pair % len(u_mb)])
        _, peak_s, mm_s, vec = _step_numbers(model, chip, dt, key >> 21, key & ((1 << 21) - 1),
                                             b, seq_len, per_token)
        values[i] = peak_s / _compute_seconds(mm_s, vec / hbm)
    return values[inverse.reshape(-1)]


def step_efficiency(model: str | models.Model, chip: str | chips.Chip, layout: Layout,
                    batch_tokens: int, *, seq_len: int | None = None,
                    dtype: str = "bf16") -> StepEfficiency:
    """The compute efficiency of one micro-batch of ``layout`` on one chip (module doc, step 2).

    Raises:
        ValueError: as :func:`accelkit.parallel.train_step` for the layout, and as
            :func:`matmul_efficiency` for the chip.
    """
    the_model = _transformer(model)
    the_chip = chips.get(chip)
    dt = check_chip(the_chip, dtype)
    batch = _validate.positive_int("batch_tokens", batch_tokens, maximum=10**12)
    s = the_model.check_seq_len(seq_len)
    mb = check_layout(the_model, the_chip, layout, batch, seq_len=s)
    # a context-parallel chip computes 1/cp of the micro-batch's tokens (its query chunk)
    flops, peak_s, mm_s, vec = _step_numbers(the_model, the_chip, dt, layout.tp, layout.ep,
                                             mb // layout.cp, s, _per_token_work(the_model, s))
    vec_s = vec / float(the_chip.require("hbm_bytes_per_second"))
    return StepEfficiency(model=the_model.name, chip=the_chip.name, tp=layout.tp, ep=layout.ep,
                          microbatch_tokens=mb, matmul_flops=flops, peak_seconds=peak_s,
                          matmul_seconds=mm_s, vector_bytes=vec, vector_seconds=vec_s,
                          matmul_efficiency=peak_s / mm_s,
                          efficiency=peak_s / _compute_seconds(mm_s, vec_s))
