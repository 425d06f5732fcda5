"""The matmuls of a serving iteration by their shape: what ``ceilings="kernels"``
(:data:`accelkit.serving_step.CEILINGS`) prices continuous batching's iterations with.

An iteration of ``tokens`` new tokens multiplies a ``tokens × K`` activation by each dense
layer's ``K × N`` weight shard (:func:`accelkit.mfu.layer_matmuls`, Megatron column and row
parallel over the tensor-parallel group); its arithmetic runs at the chip's achievable ceiling
times the tile/wave efficiency of that shape (:func:`accelkit.mfu.matmul_efficiency`, falling
for few tokens) times the share library kernels sustain beyond it
(:func:`accelkit.calibration.matmul_sustained`): the rule :mod:`accelkit.kernels` prices
training's matmuls by. Only the
matmuls whose FLOPs depend on the token count alone are shaped (:data:`SHAPED_MATMULS`, routed
experts each at its share of the tokens); the language-model head (its rows are the sequences
sampling a token) and attention stay at the flat achievable ceiling.

    >>> import accelkit as ak
    >>> from accelkit import serving_kernels
    >>> m = ak.models.get("llama-2-70b")
    >>> shaped = serving_kernels.shaped_matmuls(m, 2, "fp8", "fp8", np.zeros(14, dtype=bool))
    >>> shaped[0], round(float(serving_kernels.efficiencies(ak.chips.get("H100"), "fp8",
    ...                                                    shaped, 14, 150)[2]), 2)
    ((2, 5120, 8192, 1.0, 1), 0.17)

Llama-2-70B's QKV projection on one of two H100s, at 150 tokens: its 150 × 5,120 output is 2 ×
20 tiles of 128 × 256 for 132 SMs (a third of one wave), each tile 150/256 full; times 0.949.

Beside the shapes, ``"kernels"`` prices what kernel measurements of a serving step show and
the ceilings alone miss (``benchmarks/serving_ops_vs_vidur.py`` prints each against Vidur's
measured H100 profiles, ``validation/vidur_h100.json``), with the figures training's kernels
are priced by where one measurement serves both (:mod:`accelkit.calibration`):

* :func:`accelkit.calibration.matmul_sustained`: every shaped matmul at its tile/wave
  efficiency times the share of the achievable ceiling cuBLAS sustains at a model's linear-layer
  shapes beyond the tile model's losses (0.949 on H100 and H200, 0.894 on A100, 1.0 on a TPU:
  no measurement), the figure :mod:`accelkit.kernels` prices training's matmuls by;
* :data:`EXPERT_GEMM_FRACTIONS`: on a GPU a mixture's routed experts, a grouped GEMM, no
  faster than CUTLASS's measured grouped GEMMs at their tokens per expert;
* :func:`accelkit.calibration.bandwidth_share`: the norms and activations at the share of the
  achievable HBM bandwidth their measured kernels reach (:func:`byte_weights`: their bytes
  weighted by its inverse, as :mod:`accelkit.kernels` weights training's);
* :data:`KERNEL_FLOOR_SECONDS`: on a GPU no kernel of the step takes less than the measured
  shortest kernels (the norms, rotary embedding, activation and residual adds of one token:
  the roofline puts them at nanoseconds);
* :data:`REPLICATED`: the norms and residual adds run whole on every tensor-parallel rank
  (:func:`replication`; the model's operation counts spread them over the group);
* :func:`accelkit.calibration.all_reduce_seconds`: the tensor-parallel all-reduces inside an
  NVLink node of A100s, H100s or H200s at NCCL's measured time for their size, the curve
  training's all-reduces are priced by, with its measured fixed cost at decode's small
  messages (the alpha-beta model's NCCL latency puts it at 5-10 us, against 29-40 us
  measured) (:func:`all_reduce_seconds`, :func:`communication`).

    >>> chip, fixed = links(ak.chips.get("H100"), 2, 0.0)
    >>> round(all_reduce_seconds(ak.chips.get("H100"), 2**20, 2) * 1e6), fixed
    (43, 5e-06)
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np

from accelkit import calibration, chips, collectives, dtypes, mfu, models, tensor_parallel
from accelkit.dtypes import DType

_VIDUR = "microsoft/vidur@7d47513 (profiles last changed e26eb8f7, 2024-05-14)"
#: The highest fraction of the achievable matmul ceiling a mixture's routed experts reach, by
#: the tokens each expert multiplies (a grouped GEMM): CUTLASS 3.6's measured fp8 grouped
#: GEMMs on H800 (the H100's SMs, clocks and HBM) at N 4,096, K 7,168, as DeepGEMM's table
#: gives them (its TFLOPS over its speedup), over the H100's achievable fp8 1,402.6 TFLOP/s;
#: between the measured counts linear in log2 of the tokens, outside them the nearest.
EXPERT_GEMM_FRACTIONS = ((256, 0.604), (512, 0.618), (1024, 0.733), (4096, 0.765),
                         (8192, 0.771))
EXPERT_GEMM_SOURCE = (
    "deepseek-ai/DeepGEMM:README.md@a6d97a1c (grouped GEMMs for MoE models, H800, fp8): at N "
    "4096, K 7168, M per group 256/512/1024/4096/8192: 932/1040/1233/1288/1297 TFLOPS at "
    "speedups 1.1/1.2/1.2/1.2/1.2 over CUTLASS 3.6, so CUTLASS 847/867/1028/1073/1081 TFLOPS, "
    "0.60-0.77 of the H100's achievable 1402.6; ASSUMPTION: TensorRT-LLM's MoE GEMMs reach "
    "CUTLASS 3.6's fraction, at every expert shape and format")
#: The shortest a GPU kernel of a serving step takes: the median of the measured times of
#: Llama-2-70B's non-matmul kernels (two RMSNorms, rotary embedding, SiLU-and-gate, residual
#: add) at one token, tensor parallelism 1 to 8 (20 kernels, 1-15 us, median 5 us).
KERNEL_FLOOR_SECONDS = 5e-6
KERNEL_FLOOR_SOURCE = (
    f"{_VIDUR}:data/profiling/compute/h100/meta-llama/Llama-2-70b-hf/mlp.csv, medians of "
    "input_layernorm, attn_rope, post_attention_layernorm, mlp_act, add at num_tokens 1, TP "
    "1-8: median 5 us; ASSUMPTION: TensorRT-LLM's kernels (which fuse some of these, the "
    "residual add into the norm) have the same floor as vLLM's PyTorch ones")
#: The matmuls the ``"kernels"`` ceiling prices by their shape: the operation's name
#: (:meth:`accelkit.models.Model.operations`) and its shape's in :func:`accelkit.mfu.layer_matmuls`.
#: A mixture of experts's routed experts are spread over the group (expert parallelism, as
#: :mod:`accelkit.tensor_parallel` prices them), each receiving ``tokens · k / n_experts`` of
#: the iteration's tokens (balanced routing, as :func:`accelkit.mfu.layer_matmuls` assumes).
SHAPED_MATMULS = (("qkv_proj", "qkv_proj"), ("attn_out", "attn_out"), ("mlp_gate_up", "mlp_in"),
                  ("mlp_down", "mlp_down"), ("experts_gate_up", "experts_in"),
                  ("experts_down", "experts_down"))

#: One shaped matmul: (operation index, N, K, the share of the iteration's tokens it
#: multiplies (its M), the independent products it runs (experts on one chip)).
Shaped = tuple[int, int, int, float, int]


@lru_cache(maxsize=64)
def _shapes(m: models.Transformer, n_chips: int, weight: DType, kv: DType
            ) -> tuple[Shaped, ...]:
    """Every decode matmul's shape on a group of ``n_chips``. Cached for the reason
    :func:`accelkit.serving_step.iteration_shape` is: each simulation and each of the decision
    lab's group sizes builds its iteration group from the same model and formats, and would
    read the model's operations again each time."""
    names = [op.name for op in m.operations(batch=1, phase="decode", context_tokens=0,
                                            dtype=weight, kv_dtype=kv)]
    dense = {s.name: s for s in mfu.layer_matmuls(m, 1, tp=n_chips)}
    share = 1.0
    if isinstance(m, models.MoETransformer):   # experts whole, spread over the chips
        experts = {s.name: s for s in mfu.layer_matmuls(m, 1, tp=1, ep=n_chips)
                   if s.name.startswith("experts")}
        dense.update(experts)
        share = m.experts_per_token / m.n_experts
    return tuple((names.index(op), dense[shape].N, dense[shape].K,
                  share if shape.startswith("experts") else 1.0,
                  dense[shape].batch if shape.startswith("experts") else 1)
                 for op, shape in SHAPED_MATMULS if op in names and shape in dense)


#: The operations every rank of a tensor-parallel group runs whole (Megatron's tensor
#: parallelism without sequence parallelism, as vLLM and TensorRT-LLM decode): the norms and the
#: residual adds act on the full hidden state after each all-reduce. Measured: Llama-2-70B's
#: RMSNorm and residual add take as long on 2 H100s as on one (21-23 against 24-25 us, 14
#: against 14 us at 1,024 tokens: Vidur's mlp.csv), where the sharded rotary embedding and
#: activation halve.
REPLICATED = ("attn_norm", "mlp_norm", "attn_residual", "mlp_residual", "final_norm")


@lru_cache(maxsize=64)
def replication(m: models.Transformer, n_chips: int, weight: DType, kv: DType) -> np.ndarray:
    """Per operation, how many times the group does its work: ``n_chips`` for
    :data:`REPLICATED`, 1 for the rest (a step's FLOPs and bytes are the model's, spread over
    the group's pooled rates, so a replicated operation's are counted on every chip). Read-only."""
    names = [op.name for op in m.operations(batch=1, phase="decode", context_tokens=0,
                                            dtype=weight, kv_dtype=kv)]
    factor = np.array([float(n_chips) if name in REPLICATED else 1.0 for name in names])
    factor.flags.writeable = False
    return factor


@lru_cache(maxsize=64)
def byte_weights(m: models.Transformer, chip: chips.Chip, n_chips: int, weight: DType,
                 kv: DType) -> np.ndarray:
    """Per operation, the factor a ``"kernels"`` step weights its bytes by: its
    :func:`replication` over its kernel's measured share of the achievable HBM bandwidth
    (:func:`accelkit.calibration.bandwidth_share`: the norms and activations; 1 for the rest),
    so that at the group's achievable bandwidth it takes its measured time, as
    :mod:`accelkit.kernels` prices training's. Its FLOPs are weighted by :func:`replication`
    alone. Read-only."""
    ops = m.operations(batch=1, phase="decode", context_tokens=0, dtype=weight, kv_dtype=kv)
    factor = replication(m, n_chips, weight, kv) / np.array(
        [calibration.bandwidth_share(chip, op) for op in ops])
    factor.flags.writeable = False
    return factor


def shaped_matmuls(m: models.Transformer, n_chips: int, weight: DType, kv: DType,
                   varies: np.ndarray) -> tuple[Shaped, ...]:
    """Each of :data:`SHAPED_MATMULS` the model has (:data:`Shaped`, per tensor-parallel
    shard or, for routed experts, per chip), whose FLOPs depend on the iteration's token
    count alone (``varies``: the operations that depend on more), for ``ceilings="kernels"``."""
    return tuple(s for s in _shapes(m, n_chips, weight, kv) if not varies[s[0]])


def efficiencies(chip: chips.Chip, dtype: DType, shaped: tuple[Shaped, ...],
                 n_operations: int, tokens: float | np.ndarray) -> np.ndarray:
    """Each of ``n_operations`` operations' fraction of the ceiling at ``tokens`` new tokens
    (an array of counts: one column each): for the ``shaped`` matmuls (:func:`shaped_matmuls`;
    M the tokens' share, rounded up) the tile/wave efficiency of their shape times the share
    library kernels sustain (:func:`accelkit.calibration.matmul_sustained`, as training's
    kernels are priced), 1 for every other operation. A GPU's routed experts run at no more
    than :func:`expert_fraction`: that is a measured fraction of the achievable ceiling itself
    (CUTLASS's grouped GEMMs, their own shape losses included), so it caps the tile-times-
    sustained figure (their minimum) rather than multiplying it."""
    counts = np.maximum(np.atleast_1d(np.asarray(tokens, dtype=float)), 1.0)
    index, n, k, share, batch = (np.array(col) for col in zip(*shaped))
    rows = np.maximum(np.ceil(counts[None, :] * share[:, None]), 1).astype(np.int64)
    eff = np.ones((n_operations, counts.size))
    shaped_eff = mfu.matmul_efficiencies(
        chip, dtype, rows, n.astype(np.int64)[:, None], k.astype(np.int64)[:, None],
        batch.astype(np.int64)[:, None]) * calibration.matmul_sustained(chip)
    if chip.kind == "gpu":   # routed experts: at most a grouped GEMM's measured fraction
        experts = share < 1.0
        shaped_eff[experts] = np.minimum(shaped_eff[experts], expert_fraction(rows[experts]))
    eff[index.astype(np.int64)] = shaped_eff
    return eff[:, 0] if np.ndim(tokens) == 0 else eff


def expert_fraction(tokens: np.ndarray) -> np.ndarray:
    """:data:`EXPERT_GEMM_FRACTIONS` at each count of tokens per expert."""
    counts, fractions = zip(*EXPERT_GEMM_FRACTIONS)
    return np.interp(np.log2(np.maximum(tokens, 1)), np.log2(counts), fractions)


def links(chip: chips.Chip, n_chips: int, per_op_overhead: float) -> tuple[chips.Chip, float]:
    """The chip a ``"kernels"`` step prices the collectives :func:`communication` leaves to the
    alpha-beta model on (its achievable bus bandwidth, :func:`accelkit.collectives.at_bandwidth`),
    and each kernel's fixed cost: at least :data:`KERNEL_FLOOR_SECONDS` on a GPU."""
    at = collectives.at_bandwidth(chip, "achievable")
    floor = KERNEL_FLOOR_SECONDS if chip.kind == "gpu" else 0.0
    return at, max(per_op_overhead, floor)


def all_reduce_seconds(chip: chips.Chip, array_bytes: float | np.ndarray, n_chips: int
                       ) -> float | np.ndarray:
    """All-reduces of ``array_bytes`` (a number or an array) over ``n_chips`` as a
    ``"kernels"`` step prices them: NCCL's measured time inside one node where it is measured
    (:func:`accelkit.calibration.all_reduce_seconds`: 2, 4 or 8 A100s, H100s or H200s), else
    the alpha-beta model at the achievable bus bandwidth."""
    measured = calibration.all_reduce_seconds(chip, n_chips, array_bytes)
    if measured is None:
        at, _ = links(chip, n_chips, 0.0)
        over = collectives.slice_shape(chip, n_chips)
        seconds = [float(collectives.all_reduce(at, array_bytes=float(b), over=over).seconds)
                   for b in np.atleast_1d(np.asarray(array_bytes, dtype=float))]
        measured = np.array(seconds) if np.ndim(array_bytes) else np.array(seconds[0])
    return float(measured) if np.ndim(array_bytes) == 0 else measured


def communication(m: models.Transformer, chip: chips.Chip, n_chips: int, weight: DType
                  ) -> tuple[float, float, str, tuple[int, float] | None]:
    """A ``"kernels"`` iteration's tensor-parallel collectives
    (:func:`accelkit.tensor_parallel.communication_plan`), split in two: the part the
    alpha-beta model prices, a line in the new tokens (seconds for one token and for each
    further one, on :func:`links`' chip), and where NCCL's all-reduce is measured for the group
    (:func:`accelkit.calibration.all_reduce_seconds`) the all-reduces apart, as (how many,
    bytes per new token): that curve is not a line in the message size. Also the networks."""
    at, _ = links(chip, n_chips, 0.0)
    one, network = tensor_parallel.communication_seconds(m, at, n_chips, 1.0, weight)
    two, _ = tensor_parallel.communication_seconds(m, at, n_chips, 2.0, weight)
    if n_chips == 1 or calibration.all_reduce_seconds(chip, n_chips, 1.0) is None:
        return one, two - one, network, None
    act = dtypes.nbytes(dtypes.activation_dtype(weight))
    over = collectives.slice_shape(chip, n_chips)
    line = [0.0, 0.0]
    measured = None
    for kind, count, per_token in tensor_parallel.communication_plan(m, act):
        if kind == "all_reduce":
            measured = (count, per_token)
            continue
        for j, tokens in enumerate((1.0, 2.0)):
            line[j] += count * collectives.collective(kind, at, array_bytes=tokens * per_token,
                                                      over=over).seconds
    return line[0], line[1] - line[0], network, measured


__all__ = ["EXPERT_GEMM_FRACTIONS", "EXPERT_GEMM_SOURCE", "KERNEL_FLOOR_SECONDS",
           "KERNEL_FLOOR_SOURCE", "REPLICATED", "SHAPED_MATMULS", "Shaped", "all_reduce_seconds",
           "byte_weights", "communication", "efficiencies", "expert_fraction", "links",
           "replication", "shaped_matmuls"]
