"""Kernels as they run: one micro-batch's forward and backward pass on one chip, kernel by kernel,
at the ceilings the chip measurably reaches (issue 21, item 2).

    >>> from accelkit import kernels
    >>> k = kernels.microbatch("llama-3.1-405b", "H100", tp=8, microbatch_tokens=8192)
    >>> round(k.efficiency, 2), round(k.matmul_efficiency, 2)
    (0.71, 0.74)
    >>> m = kernels.microbatch("gpt-3-175b", "A100", tp=8, microbatch_tokens=2048,
    ...                        framework="megatron-2021")
    >>> f = kernels.microbatch("gpt-3-175b", "A100", tp=8, microbatch_tokens=2048)
    >>> round(m.attention_seconds / f.attention_seconds, 1)  # scores through HBM
    4.9

What each kernel costs (per chip, one tensor-parallel shard):

* **Matmuls** (:func:`accelkit.mfu.layer_matmuls`' shapes; forward ``Y = X·W``, backward
  ``dX = dY·Wᵀ`` and ``dW = Xᵀ·dY``): a roofline per kernel, the longer of its arithmetic at
  the chip's *achievable* matmul ceiling (:meth:`accelkit.chips.Chip.achievable_flops`, the
  measured maximum over shapes) times the share of it library kernels sustain at a model's
  linear-layer shapes (:func:`accelkit.calibration.matmul_sustained`: 0.894 on A100, 0.949 on
  H100, from vidur's measured linear layers; 1.0 where none is measured) times the tile/wave
  efficiency of its shape
  (:func:`accelkit.mfu.matmul_efficiency`, which falls for small and skinny shapes), and its
  memory traffic at the achievable HBM bandwidth: inputs, weights and outputs all counted
  (operands at the matmul precision's bytes, outputs in bf16, the weight gradient read and
  written in the framework's gradient precision to accumulate it). With 8-bit matmuls (fp8,
  int8), each bf16 activation entering a linear layer, and each gradient leaving one, is cast
  by a memory-bound kernel (read 2 bytes, write the 8-bit copy and its transpose); the weights'
  casts (once per step where the framework caches them) are not counted.
* **Transformer Engine's overlapped GEMMs** (where the framework names them,
  :attr:`accelkit.frameworks.Framework.te_overlap`, on a GPU with TP > 1): a ``ring_exchange``
  GEMM runs as ``tp`` pieces of the tokens, a ``pipeline`` one as ``num_splits`` pieces of its
  output features, each piece priced by the same roofline and tile/wave model at its own
  shape, up to :data:`accelkit.frameworks.TE_GEMM_STREAMS` pieces at once (TE's concurrent
  streams: their tiles share the waves, as one batched GEMM; ASSUMPTION that they do run
  concurrently); with ``set_sm_margin`` on the SMs the collective leaves (the waves over those
  SMs, at most their share of the peak: :func:`accelkit.mfu.matmul_efficiencies` ``sms``).
* **Attention** (:data:`accelkit.frameworks.ATTENTION`): *fused* (FlashAttention-style): the
  score and value products on the matrix units, the causal mask's diagonal blocks half wasted,
  and the backward pass recomputing the scores (4 score products and 3 value products in all);
  the s×s scores never reach HBM. *Materialized* (Megatron-LM before FlashAttention): the whole
  s×s square is computed (the mask applied after), the scores are written to HBM, and the
  scale-mask-softmax and dropout kernels read and write them (each a memory-bound kernel), the
  value product and the backward products read them again. Selective recomputation reruns
  the materialized core in the backward pass (Korthikanti et al. 2022).
* **Non-matmul kernels** (norms, activations, rotary, residual adds, the embedding gather:
  :meth:`accelkit.models.Model.operations`, bytes as each op moves them): memory-bound at the
  achievable HBM bandwidth, norms and activations at the share of it their measured kernels
  reach (:func:`accelkit.calibration.vector_efficiency`: about 0.4 and 0.5-0.6 on A100 and
  H100, vLLM's kernels as vidur profiled them; 1.0 elsewhere); the backward pass moves twice the forward's bytes (read the saved
  input and the incoming gradient, write the outgoing one: an approximation); split over the
  TP group where the op acts on a TP-split width (the MLP activation) or where the framework
  uses sequence parallelism, else repeated on every TP rank; rerun under full recomputation.
  Dropout (where the framework's model uses it) adds a 1-byte mask written forward and read
  backward at each of the two hidden-state dropouts per layer.
* **Cross-entropy** over the vocabulary (split over TP, as vocabulary-parallel): three passes
  over the bf16 logits forward (max, exponent-sum, normalise) and two backward (read the
  probabilities, write the gradient): 10 bytes per logit, memory-bound.

Kernels run one after another (:func:`accelkit.roofline.times`, not overlapped between
kernels; each kernel's arithmetic and its own memory traffic overlap: Calculon's A100/H100
system files add them instead, ``processing_mode: no_overlap``, but vidur's linear layers do not
settle which fits better, A100's favouring the sum and H100's the maximum). Not counted:
launch gaps, the materialized softmax's and the cross-entropy's own kernel efficiency (run at
the achievable bandwidth: no measurement read), the optimizer step and collectives
(:mod:`accelkit.step_cost` adds those, and the share of compute overlapped collectives take).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from accelkit import _validate, calibration, chips, dtypes, frameworks, mfu, models, roofline
from accelkit.activations import RECOMPUTE
from accelkit.dtypes import DType

__all__ = ["CEILINGS", "CROSS_ENTROPY_BYTES_PER_LOGIT", "KernelTimes", "TE_LAYER_GEMMS",
           "head_seconds", "microbatch", "microbatch_seconds", "te_gemms"]

#: Which ceilings kernels run at: the measured ones (default) or the datasheet's.
CEILINGS = ("achievable", "datasheet")
#: Transformer Engine's layer names (:data:`accelkit.frameworks.TE_GEMMS`) of the catalog
#: models' tensor-parallel matmuls (:func:`accelkit.mfu.layer_matmuls`).
TE_LAYER_GEMMS = {"qkv_proj": "qkv", "attn_out": "proj", "mlp_in": "fc1", "mlp_down": "fc2"}
#: HBM bytes per logit of the cross-entropy, forward and backward (module doc).
CROSS_ENTROPY_BYTES_PER_LOGIT = 10.0
_OUT_BYTES = 2.0  # matmul outputs and activations in bf16


@dataclass(frozen=True)
class KernelTimes:
    """One micro-batch through every layer on one chip (seconds), and its model FLOPs."""

    model: str
    chip: str
    tp: int
    ep: int
    microbatch_tokens: int
    recompute: str
    framework: str
    matmul_seconds: float      # the linear layers' matmuls (incl. the LM head)
    attention_seconds: float   # score and value products and, materialized, their softmax/dropout
    vector_seconds: float      # the non-matmul kernels and the cross-entropy
    seconds: float             # all of them, one after another
    model_flops: float         # model FLOPs of the micro-batch on this chip (MFU's numerator)
    peak_seconds: float        # model_flops at the datasheet peak

    @property
    def efficiency(self) -> float:
        """Model FLOPs at the datasheet peak over the kernels' time: the compute MFU."""
        return self.peak_seconds / self.seconds

    @property
    def matmul_efficiency(self) -> float:
        """The linear matmuls' FLOPs at peak over their time (their achieved fraction of peak)."""
        return self._linear_peak_seconds / self.matmul_seconds if self.matmul_seconds else 1.0

    _linear_peak_seconds: float = field(default=0.0, repr=False)


def _roof(flops: np.ndarray, nbytes: np.ndarray, ceiling: np.ndarray, hbm: float) -> float:
    """Sum over kernels of each kernel's roofline (its arithmetic and its traffic overlap)."""
    per = roofline.times(compute_seconds=flops / ceiling, memory_seconds=nbytes / hbm,
                         overlap=True).seconds
    return float(np.sum(per))


def _ceilings(chip: chips.Chip, dtype: DType, ceilings: str) -> tuple[float, float]:
    """(matmul FLOP/s, HBM bytes/s) the kernels run at: the achievable ceilings, the matmul one
    times the share library kernels sustain at model shapes (:func:`accelkit.calibration.
    matmul_sustained`), or the datasheet's."""
    if ceilings == "achievable":
        return (chip.achievable_flops(dtype) * calibration.matmul_sustained(chip),
                chip.achievable_hbm_bytes_per_second)
    return chip.peak_flops(dtype), float(chip.require("hbm_bytes_per_second"))


def _vector_bytes(model: models.Transformer, s: int, chip: chips.Chip, ceilings: str
                  ) -> tuple[float, float]:
    """(bytes of the TP-split non-matmul kernels, bytes of the others) of one sequence's
    forward pass, each weighted by 1 / its kind's measured bandwidth share
    (:func:`accelkit.calibration.vector_efficiency`: norms, activations) under achievable
    ceilings, so that at the achievable HBM bandwidth they take their measured time."""
    shares: dict[str | None, float] = {None: 1.0}
    for name in calibration.VECTOR_KINDS:
        shares[name] = (calibration.vector_efficiency(chip, name) if ceilings == "achievable"
                        else 1.0)
    split = rep = 0.0
    for op in model.operations(batch=1, seq_len=s, phase="forward"):
        if op.kind in models.MATRIX_KINDS:
            continue
        kind = calibration.vector_kind(op)   # the rule serving's "kernels" step uses too
        if kind == "activation":             # on the TP-split MLP width
            split += op.bytes / shares[kind]
        else:
            rep += op.bytes / shares[kind]
    return split, rep


@lru_cache(maxsize=4096)
def _times(model: models.Transformer, chip: chips.Chip, dtype: DType, tp: int, ep: int, mb: int,
           s: int, rc: int, fw: frameworks.Framework, ceilings: str, forward_only: bool = False
           ) -> tuple[float, float, float, float, float]:
    """(matmul, attention, vector seconds, model FLOPs, linear FLOPs) of one micro-batch
    (``forward_only``: its forward pass alone, as an evaluation runs it).

    Cached (with :func:`_forward_times` and :func:`_head`, for the same reason): the decision
    lab's training scenarios search every chip's layouts at the predicted kernels on each move,
    and the same (model, chip, tp, ep, micro-batch, recompute) groups recur from move to move.
    ``scenarios.evaluate("pretrain", ...)`` on the six default chips at a chip count not seen
    before took 218 ms CPU with these kept and 567 ms without (2-core machine, 2026-12-02),
    against the widgets' 50 ms budget."""
    if forward_only:
        return _forward_times(model, chip, dtype, tp, ep, mb, s, fw, ceilings)
    flops_ceiling, hbm = _ceilings(chip, dtype, ceilings)
    ib = dtypes.nbytes(dtype)
    shapes = mfu.layer_matmuls(model, mb, tp=tp, ep=ep, seq_len=s)
    fwd_again = 1.0 if rc == 2 else 0.0  # full recomputation reruns every forward kernel
    # -- linear matmuls ------------------------------------------------------------------
    te = te_gemms(fw, chip, tp)
    chip_sms = int(chip.sms_per_chip or 0)
    rows = []  # (M, N, K, batch, count, bytes, SMs) of each GEMM (or each piece of one)
    linear_flops = 0.0  # forward + 2 backward, recomputation not counted
    for sh in shapes:
        if sh.name.startswith("attention"):
            continue
        M, N, K, B = sh.M, sh.N, sh.K, sh.batch
        linear_flops += 3.0 * 2.0 * M * N * K * B * sh.count
        grad_acc = 2.0 * fw.grad_bytes  # read and write the accumulated weight gradient
        prefix = TE_LAYER_GEMMS.get(sh.name)
        # forward Y = X W, input gradient dX = dY W^T (M x K out), weight gradient dW = X^T dY
        for m_, n_, k_, out_b, times, kind in (
                (M, N, K, _OUT_BYTES, sh.count * (1.0 + fwd_again), "fprop"),
                (M, K, N, _OUT_BYTES, sh.count, "dgrad"),
                (K, N, M, grad_acc, sh.count, "wgrad")):
            how = te.get(f"{prefix}_{kind}") if prefix else None
            pieces, streams, sms = 1, 1, chip_sms
            if how is not None:  # Transformer Engine runs it in pieces, on the SMs it leaves
                pieces, sms = how.pieces(tp), how.gemm_sms(chip_sms)
                streams = min(pieces, frameworks.TE_GEMM_STREAMS)
                if how.method == "ring_exchange":
                    m_ = max(1, m_ // pieces)  # the tokens, one gathered chunk at a time
                else:
                    n_ = max(1, n_ // pieces)  # the output features (TE's split_overlap_rs)
            # the pieces on TE's concurrent streams: `streams` at a time, as one batched GEMM
            # whose tiles share the waves, pieces / streams times
            rows.append((m_, n_, k_, B * streams, times * pieces / streams,
                         (ib * (m_ * k_ + k_ * n_) + out_b * m_ * n_) * B * streams, sms))
    arr = np.array([r[:4] for r in rows], dtype=np.int64)
    count = np.array([r[4] for r in rows])
    eff = mfu.matmul_efficiencies(chip, dtype, arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3],
                                  sms=np.array([r[6] for r in rows]) if te else None)
    flops = 2.0 * arr[:, 0] * arr[:, 1] * arr[:, 2] * arr[:, 3] * count
    matmul = _roof(flops, np.array([r[5] for r in rows]) * count, flops_ceiling * eff, hbm)
    if ib < _OUT_BYTES:
        # 8-bit matmuls take 8-bit operands: each bf16 activation entering a linear layer is
        # cast forward (read 2 bytes, write the 8-bit copy and its transpose for the weight
        # gradient) and each incoming gradient likewise backward: memory-bound cast kernels
        casts = sum(((sh.M * sh.K) * (1.0 + fwd_again) + sh.M * sh.N) * sh.batch * sh.count
                    for sh in shapes if not sh.name.startswith("attention"))
        matmul += casts * (_OUT_BYTES + 2.0 * ib) / hbm
    attention = _attention(model, chip, dtype, shapes, s, rc, fw, flops_ceiling, hbm, ib)
    vector = _vector(model, chip, ceilings, tp, mb, s, rc, fw, hbm)
    model_flops = model.flops_per_token("train", seq_len=s) * mb / tp
    return matmul, attention, vector, model_flops, linear_flops


def te_gemms(fw: frameworks.Framework, chip: chips.Chip, tp: int | None = None
             ) -> dict[str, frameworks.GemmOverlap]:
    """The framework's Transformer Engine overlaps (:attr:`accelkit.frameworks.Framework.
    te_overlap`) by GEMM name where they apply: a GPU with an SM count in the catalog,
    ``tp_overlap``, and tensor parallelism (``tp`` > 1; None: whatever the group, for a
    search over layouts whose groups without TP have no TP traffic to price); else none."""
    if not (fw.tp_overlap and fw.te_overlap and (tp is None or tp > 1)
            and chip.kind != "tpu" and chip.sms_per_chip):
        return {}
    return {g.gemm: g for g in fw.te_overlap}


@lru_cache(maxsize=1024)
def _forward_times(model: models.Transformer, chip: chips.Chip, dtype: DType, tp: int, ep: int,
                   mb: int, s: int, fw: frameworks.Framework, ceilings: str
                   ) -> tuple[float, float, float, float, float]:
    """:func:`_times` for the forward pass alone: the forward matmuls (and their activation
    casts), the forward attention products (fused) or the materialized core without dropout,
    the non-matmul kernels once, and the cross-entropy's three forward passes (6 of its 10
    bytes per logit); no weight-gradient traffic, no dropout masks (evaluation runs none)."""
    flops_ceiling, hbm = _ceilings(chip, dtype, ceilings)
    ib = dtypes.nbytes(dtype)
    shapes = mfu.layer_matmuls(model, mb, tp=tp, ep=ep, seq_len=s)
    linear = [sh for sh in shapes if not sh.name.startswith("attention")]
    arr = np.array([[sh.M, sh.N, sh.K, sh.batch] for sh in linear], dtype=np.int64)
    count = np.array([float(sh.count) for sh in linear])
    eff = mfu.matmul_efficiencies(chip, dtype, arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])
    flops = 2.0 * arr[:, 0] * arr[:, 1] * arr[:, 2] * arr[:, 3] * count
    nbytes = np.array([(ib * (sh.M * sh.K + sh.K * sh.N) + _OUT_BYTES * sh.M * sh.N) * sh.batch
                       for sh in linear]) * count
    matmul = _roof(flops, nbytes, flops_ceiling * eff, hbm)
    if ib < _OUT_BYTES:  # each bf16 activation entering a linear layer cast to 8 bits
        casts = sum(sh.M * sh.K * sh.batch * sh.count for sh in linear)
        matmul += casts * (_OUT_BYTES + ib) / hbm
    score = next(sh for sh in shapes if sh.name == "attention_scores")
    value = next(sh for sh in shapes if sh.name == "attention_values")
    att_arr = np.array([[score.M, score.N, score.K, score.batch],
                        [value.M, value.N, value.K, value.batch]], dtype=np.int64)
    att_eff = mfu.matmul_efficiencies(chip, dtype, att_arr[:, 0], att_arr[:, 1], att_arr[:, 2],
                                      att_arr[:, 3])
    if fw.attention == "fused" or not score.causal:
        causal = (mfu.causal_factor(score.M, mfu.causal_block(chip)) if score.causal else 1.0)
        attention = _roof(np.array([score.flops, value.flops]), np.zeros(2),
                          flops_ceiling * att_eff * causal, hbm)
    else:  # materialized: the whole square, written, softmaxed and read back (no dropout)
        B, hd, vd = score.batch, score.K, value.N
        sq = float(s) * s * B
        full = np.array([2.0 * s * s * hd * B, 2.0 * s * vd * s * B]) * score.count
        moved = np.array([ib * 2 * s * hd * B + _OUT_BYTES * sq,
                          _OUT_BYTES * sq + ib * s * vd * B * 2]) * score.count
        attention = (_roof(full, moved, flops_ceiling * att_eff, hbm)
                     + sq * score.count * 2 * _OUT_BYTES / hbm)
    split, rep = _vector_bytes(model, s, chip, ceilings)
    rep_tp = tp if fw.sequence_parallel else 1
    vector = ((split / tp + rep / rep_tp) / s * mb
              + float(mb) * model.vocab / tp * 6.0) / hbm
    model_flops = model.flops_per_token("forward", seq_len=s) * mb / tp
    return matmul, attention, vector, model_flops, float(np.sum(flops))


def _attention(model: models.Transformer, chip: chips.Chip, dtype: DType,
               shapes: tuple[mfu.MatmulShape, ...], s: int, rc: int, fw: frameworks.Framework,
               flops_ceiling: float, hbm: float, ib: float) -> float:
    score = next(sh for sh in shapes if sh.name == "attention_scores")
    value = next(sh for sh in shapes if sh.name == "attention_values")
    if fw.attention == "fused" or not score.causal:
        # forward QK and AV, backward: recomputed QK, dQ, dK (score-shaped), dV, dP (value-shaped)
        n_score, n_value = 4.0 + (rc == 2), 3.0 + (rc == 2)
        block = mfu.causal_block(chip)
        causal = mfu.causal_factor(score.M, block) if score.causal else 1.0
        arr = np.array([[score.M, score.N, score.K, score.batch],
                        [value.M, value.N, value.K, value.batch]], dtype=np.int64)
        eff = mfu.matmul_efficiencies(chip, dtype, arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])
        flops = np.array([score.flops * n_score, value.flops * n_value])
        return _roof(flops, np.zeros(2), flops_ceiling * eff * causal, hbm)
    # materialized: the whole s x s square, the scores in HBM
    B, hd, vd = score.batch, score.K, value.N
    sq = float(s) * s * B  # score elements per layer
    mask = 1.0 if fw.dropout else 0.0
    # (M, N, K, flops-multiplicity, bytes) of each s^2 matmul per pass
    fwd = [(s, s, hd, ib * 2 * s * hd * B + _OUT_BYTES * sq),            # S = Q K^T, write S
           (s, vd, s, _OUT_BYTES * sq + ib * s * vd * B * 2)]           # O = P V, read P
    bwd = [(s, s, vd, ib * 2 * s * vd * B + _OUT_BYTES * sq),           # dP = dO V^T, write dP
           (s, vd, s, _OUT_BYTES * sq + ib * 2 * s * vd * B),           # dV = P^T dO, read P
           (s, hd, s, _OUT_BYTES * sq + ib * 2 * s * hd * B),           # dQ = dS K, read dS
           (s, hd, s, _OUT_BYTES * sq + ib * 2 * s * hd * B)]           # dK = dS^T Q, read dS
    again = 1.0 if rc >= 1 else 0.0  # selective and full recomputation rerun the core
    layers = score.count
    kernels = [(k, 1.0 + again) for k in fwd] + [(k, 1.0) for k in bwd]
    arr = np.array([k[:3] for k, _ in kernels], dtype=np.int64)
    mult = np.array([m for _, m in kernels]) * layers
    eff = mfu.matmul_efficiencies(chip, dtype, arr[:, 0], arr[:, 1], arr[:, 2],
                                  np.full(len(kernels), B, dtype=np.int64))
    flops = 2.0 * arr[:, 0] * arr[:, 1] * arr[:, 2] * B * mult
    nbytes = np.array([k[3] for k, _ in kernels]) * mult
    products = _roof(flops, nbytes, flops_ceiling * eff, hbm)
    # scale-mask-softmax (read, write) and dropout (read, write, mask) forward; backward the
    # dropout (read grad and mask, write) and the softmax (read grad and output, write)
    fwd_elem = 2 * _OUT_BYTES + (2 * _OUT_BYTES + mask) * (mask > 0)
    bwd_elem = 3 * _OUT_BYTES + (2 * _OUT_BYTES + mask) * (mask > 0)
    elementwise = sq * layers * (fwd_elem * (1.0 + again) + bwd_elem) / hbm
    return products + elementwise


def _vector(model: models.Transformer, chip: chips.Chip, ceilings: str, tp: int, mb: int,
            s: int, rc: int, fw: frameworks.Framework, hbm: float) -> float:
    split, rep = _vector_bytes(model, s, chip, ceilings)
    rep_tp = tp if fw.sequence_parallel else 1
    fwd = (split / tp + rep / rep_tp) / s * mb  # the ops' bytes are for one sequence of s
    passes = 1.0 + 2.0 + (1.0 if rc == 2 else 0.0)  # forward, backward (2x), recompute
    # two hidden-state dropout masks per layer, 1 byte per element: written forward (again
    # under full recomputation), read backward
    masks = 2.0 * model.layers * model.d_model * mb / rep_tp * (2.0 + (rc == 2)) * fw.dropout
    logits = float(mb) * model.vocab / tp * CROSS_ENTROPY_BYTES_PER_LOGIT
    return (fwd * passes + masks + logits) / hbm


def microbatch(model: str | models.Model, chip: str | chips.Chip, *, tp: int = 1, ep: int = 1,
               microbatch_tokens: int, seq_len: int | None = None, dtype: str = "bf16",
               recompute: str = "none", framework: str | frameworks.Framework | None = None,
               ceilings: str = "achievable", forward_only: bool = False) -> KernelTimes:
    """One micro-batch of ``microbatch_tokens`` on one chip of a ``tp``-way (``ep``-way) group:
    every kernel's time (module doc) and the compute efficiency they add up to.
    ``forward_only``: the forward pass alone, as an evaluation runs it (``recompute`` is then
    moot; ``model_flops`` are the forward pass's).

    Raises:
        ValueError: a chip and precision :mod:`accelkit.mfu` cannot model, a bad degree,
            micro-batch, recompute, framework or ``ceilings`` (one of :data:`CEILINGS`).
    """
    the_model = models.get(model)
    if not isinstance(the_model, models.Transformer):
        raise ValueError(f"model must be a catalog transformer; {the_model.name} is a "
                         f"{the_model.family}")
    the_chip = chips.get(chip)
    dt = mfu.check_chip(the_chip, dtype)
    tp = _validate.positive_int("tp", tp, maximum=1 << 20)
    ep = _validate.positive_int("ep", ep, maximum=1 << 20)
    mb = _validate.positive_int("microbatch_tokens", microbatch_tokens, maximum=10**9)
    rc = _validate.choice("recompute", recompute, RECOMPUTE)
    fw = frameworks.get(framework)
    ceilings = _validate.choice("ceilings", ceilings, CEILINGS)
    s = the_model.check_seq_len(seq_len)
    if not isinstance(forward_only, bool):
        raise TypeError(f"forward_only must be True or False, got {forward_only!r}")
    mm, att, vec, model_flops, linear = _times(the_model, the_chip, dt, tp, ep, mb, s,
                                               RECOMPUTE.index(rc), fw, ceilings, forward_only)
    total = roofline.times(compute_seconds=mm + att, memory_seconds=vec, overlap=False).seconds
    peak = the_chip.peak_flops(dt)
    return KernelTimes(model=the_model.name, chip=the_chip.name, tp=tp, ep=ep,
                       microbatch_tokens=mb, recompute=rc, framework=fw.name, matmul_seconds=mm,
                       attention_seconds=att, vector_seconds=vec, seconds=float(total),
                       model_flops=model_flops, peak_seconds=model_flops / peak,
                       _linear_peak_seconds=linear / peak)


def microbatch_seconds(model: models.Transformer, chip: chips.Chip, dtype: DType,
                       tp: np.ndarray, ep: np.ndarray, microbatch_tokens: np.ndarray,
                       recompute: np.ndarray, seq_len: int, framework: frameworks.Framework,
                       ceilings: str = "achievable") -> np.ndarray:
    """:func:`microbatch`'s ``seconds`` for arrays of candidates (``recompute`` as codes, the
    index in :data:`accelkit.activations.RECOMPUTE`), one evaluation per distinct
    (tp, ep, micro-batch, recompute): how :mod:`accelkit.step_cost` prices thousands of
    layouts. Arguments are taken as checked (:func:`accelkit.mfu.check_chip`)."""
    keys = np.stack([np.asarray(a, np.int64).reshape(-1)
                     for a in (tp, ep, microbatch_tokens, recompute)], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    values = np.empty(len(unique))
    for i, (t, e, b, r) in enumerate(unique.tolist()):
        mm, att, vec, _, _ = _times(model, chip, dtype, int(t), int(e), int(b), seq_len, int(r),
                                    framework, ceilings)
        values[i] = math.fsum((mm, att, vec))
    return values[inverse.reshape(-1)]


@lru_cache(maxsize=4096)
def _head(model: models.Transformer, chip: chips.Chip, dtype: DType, tp: int, mb: int, s: int,
          rc: int, fw: frameworks.Framework, ceilings: str) -> float:
    """Seconds of the LM head (its matmul forward, again under full recomputation as
    :func:`_times` counts it, and its two backward products) and the cross-entropy, on one
    chip: the part of a micro-batch that only the last pipeline stage runs."""
    flops_ceiling, hbm = _ceilings(chip, dtype, ceilings)
    ib = dtypes.nbytes(dtype)
    sh = next(x for x in mfu.layer_matmuls(model, mb, tp=tp, seq_len=s) if x.name == "lm_head")
    M, N, K = sh.M, sh.N, sh.K
    fwd_again = 1.0 if rc == 2 else 0.0
    rows = [(M, N, K, 1.0 + fwd_again, ib * (M * K + K * N) + _OUT_BYTES * M * N),
            (M, K, N, 1.0, ib * (M * N + K * N) + _OUT_BYTES * M * K),
            (K, N, M, 1.0, ib * (M * K + M * N) + 2.0 * fw.grad_bytes * K * N)]
    arr = np.array([r[:3] for r in rows], dtype=np.int64)
    count = np.array([r[3] for r in rows])
    eff = mfu.matmul_efficiencies(chip, dtype, arr[:, 0], arr[:, 1], arr[:, 2],
                                  np.ones(3, dtype=np.int64))
    flops = 2.0 * arr[:, 0] * arr[:, 1] * arr[:, 2] * count
    seconds = _roof(flops, np.array([r[4] for r in rows]) * count, flops_ceiling * eff, hbm)
    if ib < _OUT_BYTES:
        seconds += (M * K * (1.0 + fwd_again) + M * N) * (_OUT_BYTES + 2.0 * ib) / hbm
    return seconds + float(mb) * model.vocab / tp * CROSS_ENTROPY_BYTES_PER_LOGIT / hbm


def head_seconds(model: models.Transformer, chip: chips.Chip, dtype: DType,
                 tp: np.ndarray, microbatch_tokens: np.ndarray, recompute: np.ndarray,
                 seq_len: int, framework: frameworks.Framework,
                 ceilings: str = "achievable") -> np.ndarray:
    """The LM head's and the cross-entropy's share of :func:`microbatch_seconds` (the same
    kernels, counted the same way), for arrays of candidates: the work a pipeline puts on its
    last stage alone (:mod:`accelkit.step_cost`). Arguments are taken as checked."""
    keys = np.stack([np.asarray(a, np.int64).reshape(-1)
                     for a in (tp, microbatch_tokens, recompute)], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    values = np.array([_head(model, chip, dtype, int(t), int(b), seq_len, int(r), framework,
                             ceilings) for t, b, r in unique.tolist()])
    return values[inverse.reshape(-1)]
