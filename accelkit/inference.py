"""Serving cost: prefill and decode on a roofline, the KV cache, batch, latency and price.

    >>> import accelkit as ak
    >>> d = ak.inference.decode_step(model="llama-3-70b", chip="TPU v5e", n_chips=16, batch=32,
    ...                              context_tokens=8192)
    >>> d.bound, round(d.seconds * 1e3, 1), round(d.communication_seconds * 1e3, 1)
    ('memory', 21.6, 4.3)

The roofline part is 17.3 ms; the 160 tensor-parallel all-reduces over the 16 chips' ICI add 4.3.

Conventions:

* Each operation of the model (see :mod:`accelkit.models` for FLOPs and bytes) is timed on the
  roofline, ``max(flops / (n·peak), bytes / (n·bandwidth))``, and the times are summed, as the
  scaling book sums its weight-loading and KV-loading times. ``bound`` says which of the total
  compute time and total memory time is larger.
* ``n_chips`` > 1 are one tensor-parallel group (Megatron-style: attention heads and the MLP's
  hidden units split across chips). They share the arithmetic and the weight and KV reads
  evenly and pool their HBM, and each layer pays two all-reduces of the activations, ``batch ·
  tokens · d_model`` values in the activation format (after attention and after the MLP),
  costed by :func:`accelkit.collectives.all_reduce` over the group. They sit on the critical
  path (no overlap with compute is modelled) and are added to ``seconds`` as
  ``communication_seconds``. At small batch they are latency-bound (about 1 µs per ICI hop, or
  NCCL's per-step latencies on NVLink), which is why the scaling book finds tensor parallelism
  for LLaMA 3-70B on TPU v5e turns communication-bound beyond about 16 chips
  (applied-inference.md).
* **Mixtures of experts** (models with ``active_params``): the FLOPs follow the experts each
  token is routed to (:mod:`accelkit.models`), the weight memory holds every expert, and the
  routed experts are spread over the ``n_chips`` (expert parallelism): each MoE layer pays two
  all-to-alls (dispatch and combine) of ``tokens · experts_per_token · d_model`` values instead
  of the MLP's all-reduce; attention, shared experts and dense layers stay tensor-parallel.
* **Where tensor parallelism stops.** The group must fit in one scale-up domain: an HGX node's
  NVLink (8 GPUs) or one TPU slice's ICI (256 chips on v5e and v6e). A larger ``n_chips`` is
  refused with a ValueError naming it: beyond the domain, serve *replicas* (independent copies,
  each a TP group inside one domain; throughput adds, latency is one replica's). GPUs without
  NVLink (L4, T4) have no modelled multi-GPU link: ``n_chips`` > 1 raises
  :class:`accelkit.chips.MissingFigureError`.
* **Attention conventions** (named options on :func:`prefill`, :func:`decode_step` and the other
  decode functions, so a published derivation that counts the other way can be reproduced):
  ``attention_mask="causal"`` (default) counts only the unmasked (query, key) pairs, T(T+1)/2
  for a T-token prompt (c·T + T(T+1)/2 after c cached tokens); ``"full"`` counts all T·(c+T),
  as PaLM's 12·L·H·Q·T does (and MaxText did before its PR 1988).
  ``softmax_flops=True`` (default) adds the softmax's 5 FLOPs per pair per head to the
  4·head_dim of QKᵀ and A·V; ``False`` counts the matmuls only, as MFU formulas do.
  ``kv_write=True`` (default) counts writing the new keys and values to the cache in the bytes;
  ``False`` leaves it out (the cache write is 2·layers·kv_heads·head_dim values per new token).
  Decode of one token sees every cached key under either mask, so only ``softmax_flops`` and
  ``kv_write`` change it.
* Decode reads every weight and the whole KV cache once per step. The FLOPs run in
  ``compute_dtype`` (default bf16, in prefill and decode alike), whatever the weight and KV
  formats: int8 weights halve the bytes, not the arithmetic, so decode turns compute-bound at
  half the batch.
* Precision defaults, one rule for every function here and for :mod:`accelkit.scenarios`:
  ``weight_dtype`` names the weights' format; activations and the KV cache (``kv_dtype=None``)
  follow :func:`accelkit.dtypes.activation_dtype` -- the weight format for 16- and 32-bit
  float weights, bf16 for 8- and 4-bit weights (dequantised before the arithmetic). An int8
  or int4 cache is a choice you make by passing ``kv_dtype``.
* A configuration that does not fit (weights + KV cache > n_chips × HBM; activations ignored)
  still gets a result, with ``fits=False``, ``message`` saying how short it is and
  ``min_chips`` what would fit; its times are what it would take if it did fit. Functions
  that pick a configuration (:func:`best_batch`, :func:`max_batch`) only consider ones that fit,
  and ``require_fit=True`` turns a misfit into a ValueError.
* **Fixed per-operation cost** (``overhead=True`` on :func:`prefill`, :func:`decode_step`,
  :func:`best_batch` and :func:`capacity`; off by default): each kernel of the step (one per
  operation occurrence, eager execution, as :func:`accelkit.roofline.operations_time` counts)
  takes at least :data:`accelkit.roofline.OVERHEAD_SECONDS` of launch and dispatch time.
  ``overhead_seconds`` on the result is what that added; ``bound="overhead"`` when the step's
  fixed cost (``n_operations × OVERHEAD_SECONDS``) exceeds both its compute and memory
  times, as batch-1 decode of an 8B model on a B200 does. Fused graphs (XLA, CUDA graphs)
  launch fewer kernels, so this is an upper view of the cost; the collectives carry their own
  latencies and pay no extra.
* **Capacity planning** (:func:`capacity`): the cheapest replicas × tensor-parallel group
  that serves ``concurrent_users`` streams under ``max_seconds_per_token``, searched exactly
  over the allowed group sizes (:func:`tensor_parallel_sizes`) and whole batches.
* Prices: chip list price × n_chips × seconds; None where the chip has no list price.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from accelkit import _html, _validate, chips, collectives, dtypes, models, price, roofline
from accelkit.dtypes import DType

_MAX_BATCH = 10**7
_MAX_CONTEXT = 10**8

#: How attention's (query, key) pairs are counted (module docstring).
ATTENTION_MASKS = ("causal", "full")


@dataclass(frozen=True)
class InferenceResult:
    """One prefill or decode step of ``batch`` sequences on ``n_chips`` chips."""

    phase: str                 # "prefill" or "decode"
    model: str
    chip: str
    n_chips: int
    batch: int
    tokens: int                # new tokens per sequence (prompt length, or 1 for decode)
    context_tokens: int        # tokens in the KV cache when the step ends
    weight_dtype: str
    kv_dtype: str
    compute_dtype: str
    flops: float
    bytes: float
    weight_bytes: float
    kv_cache_bytes: float
    compute_seconds: float     # total FLOPs at peak
    memory_seconds: float      # total bytes at full bandwidth
    seconds: float             # sum over operations of each one's roofline time + communication
    bound: str                 # "compute" or "memory"
    tokens_per_second: float   # new tokens per second, all sequences together
    usd_per_million_tokens: float | None
    memory_bytes: float        # weights + KV cache
    hbm_bytes: float           # n_chips x HBM per chip
    fits: bool
    min_chips: int
    message: str
    # tensor-parallel all-reduces, 2 per layer, on the critical path (0 on one chip)
    communication_seconds: float = 0.0
    communication_network: str = "none"   # networks that carried them ("ICI", "NVLink", ...)
    attention_flops: float = 0.0           # the attention operations' FLOPs, under the options
    attention_mask: str = "causal"         # how attention pairs were counted
    kv_write: bool = True                  # whether the KV-cache write is in ``bytes``
    # what the fixed per-operation cost added to ``seconds`` (0 unless ``overhead=True``)
    overhead_seconds: float = 0.0
    n_operations: int = 0                  # kernels in the step (one per operation occurrence)

    @property
    def arithmetic_intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def tokens_per_second_per_chip(self) -> float:
        return self.tokens_per_second / self.n_chips

    def __repr__(self) -> str:
        usd = ("n/a" if self.usd_per_million_tokens is None
               else f"${self.usd_per_million_tokens:,.3f}/M tokens")
        fit = "fits" if self.fits else "DOES NOT FIT"
        return (f"InferenceResult({self.phase} {self.model} on {self.n_chips} x {self.chip}, "
                f"batch {self.batch}, context {self.context_tokens:,}: "
                f"{self.seconds * 1e3:,.2f} ms, {self.bound}-bound, "
                f"{self.tokens_per_second:,.0f} tokens/s, {usd}; KV cache "
                f"{self.kv_cache_bytes / 1e9:,.2f} GB; {fit})")

    def _repr_html_(self) -> str:
        rows = [("step", f"{self.phase}, batch {self.batch}, context {self.context_tokens:,}"),
                ("hardware", f"{self.n_chips} x {self.chip}"),
                ("time", f"{self.seconds * 1e3:,.3f} ms ({self.bound}-bound)"),
                ("tokens/s", f"{self.tokens_per_second:,.0f}"),
                ("USD / M tokens", "n/a" if self.usd_per_million_tokens is None
                 else f"{self.usd_per_million_tokens:,.3f}"),
                ("weights + KV", f"{self.memory_bytes / 1e9:,.1f} GB of "
                                 f"{self.hbm_bytes / 1e9:,.1f} GB"),
                ("fits", self.message)]
        return _html.table(rows)


@dataclass(frozen=True)
class DecodeSweep:
    """Decode steps over chips × batches: every array has shape (len(chips), len(batches)).

    The arrays are read-only, like the rest of a frozen result.
    """

    model: str
    chips: tuple[str, ...]
    batches: np.ndarray
    n_chips: int
    context_tokens: int
    seconds: np.ndarray
    tokens_per_second: np.ndarray
    compute_bound: np.ndarray          # bool
    fits: np.ndarray                   # bool
    usd_per_million_tokens: np.ndarray  # NaN where the chip has no price

    def __repr__(self) -> str:
        return (f"DecodeSweep({self.model}, {len(self.chips)} chips x {len(self.batches)} "
                f"batches, {self.n_chips} chips each, context {self.context_tokens:,})")


def _transformer(model: object) -> models.Transformer:
    m = models.get(model)  # type: ignore[arg-type]
    if not isinstance(m, models.Transformer):
        raise ValueError(f"inference cost models cover transformer language models; {m.name} is "
                         f"a {m.family}")
    return m


def _conventions(attention_mask: object, softmax_flops: object, kv_write: object
                 ) -> tuple[str, bool, bool]:
    mask = _validate.choice("attention_mask", attention_mask, ATTENTION_MASKS)
    for name, value in (("softmax_flops", softmax_flops), ("kv_write", kv_write)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    return mask, bool(softmax_flops), bool(kv_write)


def _operation_arrays(m: models.Transformer, batch: int, tokens: int, context: int, phase: str,
                      weight_dtype: DType, kv_dtype: DType, mask: str, softmax: bool,
                      kv_write: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-operation FLOPs and bytes of a prefill or decode step under the attention options.

    :mod:`accelkit.models` counts causal pairs, the softmax and the cache write; each option
    rescales or removes that part of the attention operation (module docstring). Returns
    ``(flops, bytes, is_attention)``.
    """
    if phase == "prefill":
        ops = m.operations(batch=batch, seq_len=tokens, phase="prefill", dtype=weight_dtype,
                           kv_dtype=kv_dtype)
    else:
        ops = m.operations(batch=batch, phase="decode", context_tokens=context,
                           dtype=weight_dtype, kv_dtype=kv_dtype)
    flops = np.array([op.flops for op in ops])
    moved = np.array([op.bytes for op in ops])
    is_attention = np.array([op.kind == "attention" for op in ops])
    causal_pairs = batch * (tokens * context + tokens * (tokens + 1) / 2.0)
    pairs = batch * tokens * (context + tokens) if mask == "full" else causal_pairs
    per_pair = attention_matmul_flops_per_pair(m) + (5.0 if softmax else 0.0)
    flops[is_attention] = m.layers * m.heads * per_pair * pairs
    if not kv_write:  # the cache holds what one token leaves behind, in every layer
        moved[is_attention] -= batch * tokens * m.kv_cache_bytes_per_token(kv_dtype)
    return flops, moved, is_attention


@lru_cache(maxsize=256)
def attention_matmul_flops_per_pair(model: str | models.Model) -> float:
    """QKᵀ and A·V FLOPs per (query, key) pair per head per layer: 4·head_dim for standard
    attention (2·qk_dim + 2·v_dim for latent attention), read off the catalog's own count of
    one token attending to itself less the softmax's 5 (see :mod:`accelkit.models`)."""
    m = _transformer(model)
    op = next(o for o in m.operations(batch=1, seq_len=1, phase="forward")
              if o.kind == "attention")
    return op.flops / (m.layers * m.heads) - 5.0


@lru_cache(maxsize=256)
def _decode_coefficients(model: models.Transformer, context: int, weight_dtype: DType,
                         kv_dtype: DType, mask: str = "causal", softmax: bool = True,
                         kv_write: bool = True
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-operation decode FLOPs and bytes as ``f0 + f1·batch`` and ``b0 + b1·batch``.

    Every decode operation is affine in the batch (weights are read once, everything else
    scales with the number of sequences), so two evaluations give the exact line.
    """
    fl1, by1, _ = _operation_arrays(model, 1, 1, context, "decode", weight_dtype, kv_dtype,
                                    mask, softmax, kv_write)
    fl2, by2, _ = _operation_arrays(model, 2, 1, context, "decode", weight_dtype, kv_dtype,
                                    mask, softmax, kv_write)
    f1, b1 = fl2 - fl1, by2 - by1
    return fl1 - f1, f1, by1 - b1, b1


@lru_cache(maxsize=256)
def _attention_ops(model: models.Transformer) -> np.ndarray:
    """Which of a decode step's operations is attention (the order never changes)."""
    ops = model.operations(batch=1, phase="decode", context_tokens=1)
    flags = np.array([op.kind == "attention" for op in ops])
    flags.flags.writeable = False
    return flags


@lru_cache(maxsize=256)
def _operation_counts(model: models.Transformer, phase: str) -> np.ndarray:
    """How many times each operation of a prefill or decode step runs (one kernel each)."""
    if phase == "prefill":
        ops = model.operations(batch=1, seq_len=1, phase="prefill")
    else:
        ops = model.operations(batch=1, phase="decode", context_tokens=1)
    counts = np.array([op.count for op in ops], dtype=float)
    counts.flags.writeable = False
    return counts


def _overhead_per_operation(overhead: object, overhead_seconds: object) -> float:
    """The fixed cost per operation: 0 by default, :data:`accelkit.roofline.OVERHEAD_SECONDS`
    with ``overhead=True``, or a checked ``overhead_seconds`` (as :func:`accelkit.roofline.estimate`)."""
    if not isinstance(overhead, bool):
        raise TypeError(f"overhead must be True or False, got {type(overhead).__name__} "
                        f"{overhead!r}; pass overhead_seconds=<float> to set the per-operation cost")
    if overhead_seconds is not None:
        return roofline.per_step_overhead_seconds(1, overhead_seconds)  # type: ignore[arg-type]
    return roofline.OVERHEAD_SECONDS if overhead else 0.0


def _affine(model: models.Transformer) -> bool:
    """Whether a decode step's FLOPs and bytes are affine in the batch. A mixture of experts's
    are not: the experts whose weights a step reads grow with the batch as
    ``n_experts · (1 - (1 - k/n_experts)^batch)`` (:mod:`accelkit.models`)."""
    return not getattr(model, "moe_layers", 0)


def _decode_arrays(m: models.Transformer, batch: int, context: int, weight_dtype: DType,
                   kv_dtype: DType, mask: str = "causal", softmax: bool = True,
                   kv_write: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per-operation decode FLOPs and bytes at one batch: the cached line for dense models,
    the operations themselves for a mixture of experts."""
    if _affine(m):
        f0, f1, b0, b1 = _decode_coefficients(m, context, weight_dtype, kv_dtype, mask,
                                              softmax, kv_write)
        return f0 + f1 * batch, b0 + b1 * batch
    flops, moved, _ = _operation_arrays(m, batch, 1, context, "decode", weight_dtype, kv_dtype,
                                        mask, softmax, kv_write)
    return flops, moved


def _tensor_parallel_group(chip: chips.Chip, n_chips: int) -> None:
    """Refuse a tensor-parallel group that leaves the scale-up domain or has no modelled link."""
    if n_chips == 1:
        return
    if chip.kind == "gpu":
        if chip.scaleup_bytes_per_second is None:
            raise chips.MissingFigureError(
                chip.name, "scaleup_bytes_per_second",
                f"{chip.name} has no NVLink: tensor parallelism over PCIe is not modelled, so "
                f"n_chips={n_chips} cannot be costed; serve replicas of one chip instead")
        domain = chip.scaleup_domain_chips or 1
    else:
        if chip.link_bytes_per_second is None:
            raise chips.MissingFigureError(
                chip.name, "link_bytes_per_second",
                f"{chip.name} has no published ICI link bandwidth, so the tensor-parallel "
                f"all-reduces of n_chips={n_chips} cannot be costed")
        domain = chip.max_slice_chips or 1
    if n_chips > domain:
        where = "NVLink node" if chip.kind == "gpu" else "ICI slice"
        raise ValueError(f"n_chips={n_chips} exceeds {chip.name}'s {domain}-chip {where}: tensor "
                         f"parallelism stops at the scale-up domain; beyond it serve replicas "
                         f"(each a group of at most {domain} chips; throughput adds)")


def _communication_plan(m: models.Transformer, act_bytes: float
                        ) -> tuple[tuple[str, int, float], ...]:
    """The collectives of one step across the group: ``(kind, how many, bytes per new token)``.

    Dense: two all-reduces of the activations per layer (after attention, after the MLP).
    Mixture of experts: the routed experts are spread over the chips (expert parallelism), so
    each MoE layer sends every token to its ``experts_per_token`` experts and back, two
    all-to-alls of ``tokens · k · d_model`` values, while attention, shared experts and dense
    layers stay tensor-parallel (one all-reduce each per layer).
    """
    width = m.d_model * act_bytes
    moe_layers = int(getattr(m, "moe_layers", 0))
    if not moe_layers:
        return (("all_reduce", 2 * m.layers, width),)
    k = int(getattr(m, "experts_per_token"))
    shared = moe_layers if getattr(m, "shared_experts", 0) else 0
    reduces = m.layers + (m.layers - moe_layers) + shared
    return (("all_reduce", reduces, width), ("all_to_all", 2 * moe_layers, k * width))


@lru_cache(maxsize=1024)
def _tp_line(chip: chips.Chip, n_chips: int, plan: tuple[tuple[str, int, float], ...]
             ) -> tuple[float, float, str]:
    """A step's communication as ``c0 + c1·tokens`` and the networks that carry it.

    A collective's time is affine in its size (bandwidth term + fixed latency), so two
    evaluations per kind give the exact line.
    """
    if n_chips == 1:
        return 0.0, 0.0, "none"
    c0 = c1 = 0.0
    networks: list[str] = []
    for kind, count, per_token in plan:
        one = collectives.collective(kind, chip, array_bytes=per_token, over=n_chips)
        two = collectives.collective(kind, chip, array_bytes=2 * per_token, over=n_chips)
        slope = two.seconds - one.seconds
        c1 += count * slope
        c0 += count * (one.seconds - slope)
        networks += [net for net in one.network.split("+") if net not in networks]
    return c0, c1, "+".join(networks)


def _tp_seconds(m: models.Transformer, chip: chips.Chip, n_chips: int, tokens: float,
                weight_dtype: DType) -> tuple[float, str]:
    """Seconds of a step's collectives for ``tokens`` new tokens, and their networks."""
    act = dtypes.nbytes(dtypes.activation_dtype(weight_dtype))
    c0, c1, network = _tp_line(chip, n_chips, _communication_plan(m, act))
    return c0 + c1 * tokens, network


def _chip_rates(chip: chips.Chip, n_chips: int, compute_dtype: DType) -> tuple[float, float, float]:
    bandwidth = chip.require("hbm_bytes_per_second")
    hbm = float(chip.require("hbm_bytes"))
    return n_chips * chip.peak_flops(compute_dtype), n_chips * bandwidth, n_chips * hbm


def _result(phase: str, m: models.Transformer, chip: chips.Chip, n_chips: int, batch: int,
            tokens: int, context: int, weight_dtype: DType, kv_dtype: DType, compute_dtype: DType,
            flops: np.ndarray, moved: np.ndarray, require_fit: bool, is_attention: np.ndarray,
            mask: str, kv_write: bool, per_op_overhead: float = 0.0) -> InferenceResult:
    peak, bandwidth, hbm = _chip_rates(chip, n_chips, compute_dtype)
    compute, memory, per_op = roofline.times(flops, moved, peak, bandwidth)
    compute_s, memory_s = float(np.sum(compute)), float(np.sum(memory))
    counts = _operation_counts(m, phase)
    # each occurrence of an operation costs max(its roofline time, the fixed per-operation cost)
    # (roofline.operations_time's rule; on a TP group every chip launches every kernel)
    device = float(np.sum(per_op))
    seconds = float(np.sum(np.maximum(per_op, counts * per_op_overhead)))
    overhead_added = seconds - device
    fixed = float(counts.sum()) * per_op_overhead
    communication, network = _tp_seconds(m, chip, n_chips, batch * tokens, weight_dtype)
    seconds += communication
    weights = m.weight_bytes(weight_dtype)
    kv = batch * context * m.kv_cache_bytes_per_token(kv_dtype)
    need = weights + kv
    fits = need <= hbm
    per_chip_hbm = hbm / n_chips
    min_chips = max(1, math.ceil(need / per_chip_hbm))
    if fits:
        message = (f"fits: {need / 1e9:,.1f} GB of weights and KV cache in "
                   f"{hbm / 1e9:,.1f} GB of HBM")
    else:
        message = (f"does not fit: {m.name} needs {weights / 1e9:,.1f} GB of weights + "
                   f"{kv / 1e9:,.1f} GB of KV cache = {need / 1e9:,.1f} GB, but {n_chips} x "
                   f"{chip.name} hold {hbm / 1e9:,.1f} GB; use at least {min_chips} chips, a "
                   "smaller batch or context, or narrower weight_dtype/kv_dtype")
        if require_fit:
            raise ValueError(message)
    new_tokens = batch * tokens
    rate = new_tokens / seconds
    step_usd = price.usd_for(chip.usd_per_hour, seconds, n_chips)
    usd = None if step_usd is None else float(step_usd) / new_tokens * 1e6
    return InferenceResult(
        phase=phase, model=m.name, chip=chip.name, n_chips=n_chips, batch=batch, tokens=tokens,
        context_tokens=context, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
        compute_dtype=compute_dtype, flops=float(flops.sum()), bytes=float(moved.sum()),
        weight_bytes=weights, kv_cache_bytes=kv, compute_seconds=compute_s,
        memory_seconds=memory_s, seconds=seconds,
        bound=("overhead" if fixed > max(compute_s, memory_s) else
               "compute" if compute_s >= memory_s else "memory"), tokens_per_second=rate,
        usd_per_million_tokens=usd, memory_bytes=need, hbm_bytes=hbm, fits=fits,
        min_chips=min_chips, message=message, communication_seconds=communication,
        communication_network=network, attention_flops=float(flops[is_attention].sum()),
        attention_mask=mask, kv_write=kv_write, overhead_seconds=overhead_added,
        n_operations=int(counts.sum()))


def _dtypes(weight_dtype: object, kv_dtype: object | None,
            compute_dtype: object) -> tuple[DType, DType, DType]:
    """Checked formats; a KV cache left as None follows :func:`accelkit.dtypes.activation_dtype`."""
    weight = dtypes.check(weight_dtype, "weight_dtype")
    kv = dtypes.activation_dtype(weight) if kv_dtype is None else dtypes.check(kv_dtype,
                                                                              "kv_dtype")
    return weight, kv, dtypes.check(compute_dtype, "compute_dtype")


def prefill(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1, batch: int = 1,
            prompt_tokens: int = 2048, weight_dtype: DType = "bf16",
            kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
            require_fit: bool = False, attention_mask: str = "causal",
            softmax_flops: bool = True, kv_write: bool = True, overhead: bool = False,
            overhead_seconds: float | None = None) -> InferenceResult:
    """Process ``batch`` prompts of ``prompt_tokens`` tokens, writing the KV cache.

    Args:
        n_chips: one tensor-parallel group, at most the chip's scale-up domain (module
            docstring); its all-reduces are ``communication_seconds``.
        weight_dtype: the weights' format.
        kv_dtype: KV cache format (default :func:`accelkit.dtypes.activation_dtype` of the
            weights: bf16 for 8- and 4-bit weights, else ``weight_dtype``).
        compute_dtype: the arithmetic's format, whose peak applies (default bf16).
        require_fit: raise ValueError instead of returning ``fits=False``.
        attention_mask, softmax_flops, kv_write: how attention is counted (module docstring).
        overhead: charge every operation at least the fixed per-operation cost
            :data:`accelkit.roofline.OVERHEAD_SECONDS` (kernel launch and framework dispatch,
            eager, one kernel per operation; module docstring); ``overhead_seconds`` overrides
            the cost per operation. Off by default.
    Returns:
        An :class:`InferenceResult` (``tokens_per_second`` counts prompt tokens).
    Raises:
        ValueError: unknown model or chip, a non-transformer, sizes < 1, a precision the chip
            lacks, ``n_chips`` beyond the scale-up domain, an unknown attention_mask.
    """
    m = _transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    batch = _validate.positive_int("batch", batch, maximum=_MAX_BATCH)
    prompt_tokens = _validate.positive_int("prompt_tokens", prompt_tokens, maximum=_MAX_CONTEXT)
    weight_dtype, kv_dtype, compute_dtype = _dtypes(weight_dtype, kv_dtype, compute_dtype)
    mask, softmax, write = _conventions(attention_mask, softmax_flops, kv_write)
    per_op = _overhead_per_operation(overhead, overhead_seconds)
    _tensor_parallel_group(the_chip, n_chips)
    flops, moved, is_attention = _operation_arrays(m, batch, prompt_tokens, 0, "prefill",
                                                   weight_dtype, kv_dtype, mask, softmax, write)
    return _result("prefill", m, the_chip, n_chips, batch, prompt_tokens, prompt_tokens,
                   weight_dtype, kv_dtype, compute_dtype, flops, moved, require_fit,
                   is_attention, mask, write, per_op)


def decode_step(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
                batch: int = 1, context_tokens: int = 2048, weight_dtype: DType = "bf16",
                kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
                require_fit: bool = False, attention_mask: str = "causal",
                softmax_flops: bool = True, kv_write: bool = True, overhead: bool = False,
                overhead_seconds: float | None = None) -> InferenceResult:
    """Generate one token for each of ``batch`` sequences holding ``context_tokens`` in cache.

    Formats, ``n_chips`` (one tensor-parallel group inside the scale-up domain, whose two
    all-reduces per layer of ``batch · d_model`` activations are ``communication_seconds``) and
    the attention options as :func:`prefill`: ``kv_dtype=None`` follows
    :func:`accelkit.dtypes.activation_dtype` of ``weight_dtype``; the arithmetic is bf16.
    ``overhead=True`` charges each of the step's kernels at least the fixed per-operation cost
    (as :func:`prefill`): a small model's batch-1 decode then shows ``bound="overhead"``.

    Returns:
        An :class:`InferenceResult`; ``seconds`` is the time per generated token of one
        sequence, ``tokens_per_second`` counts all sequences.
    Raises:
        ValueError: unknown model or chip, a non-transformer, batch < 1, context < 0, an
            unknown precision or one the chip lacks, ``n_chips`` beyond the scale-up domain;
            with ``require_fit``, a misfit.
    """
    m = _transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    batch = _validate.positive_int("batch", batch, maximum=_MAX_BATCH)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=_MAX_CONTEXT)
    weight_dtype, kv_dtype, compute_dtype = _dtypes(weight_dtype, kv_dtype, compute_dtype)
    mask, softmax, write = _conventions(attention_mask, softmax_flops, kv_write)
    per_op = _overhead_per_operation(overhead, overhead_seconds)
    _tensor_parallel_group(the_chip, n_chips)
    flops, moved = _decode_arrays(m, batch, context, weight_dtype, kv_dtype, mask, softmax,
                                  write)
    return _result("decode", m, the_chip, n_chips, batch, 1, context + 1, weight_dtype,
                   kv_dtype, compute_dtype, flops, moved, require_fit, _attention_ops(m), mask,
                   write, per_op)


def compute_bound_batch(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
                        context_tokens: int = 0, weight_dtype: DType = "bf16",
                        kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
                        kinds: Sequence[str] | None = None) -> float:
    """The batch at which a decode step's compute time catches up with its memory time.

    Solves ``Σ flops(B) / peak = Σ bytes(B) / bandwidth`` over the operations of the given
    ``kinds`` (default all); returns ``inf`` when it never happens (the KV cache grows as fast
    as the arithmetic, as for long contexts). With ``kinds=("matmul",)`` and no context this is
    about the chip's ridge point × weight bytes / 2: ~240 for bf16 on TPU v5e. Tensor-parallel
    communication is neither compute nor memory time and is left out of this balance.
    """
    m = _transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=_MAX_CONTEXT)
    weight_dtype, kv_dtype, compute_dtype = _dtypes(weight_dtype, kv_dtype, compute_dtype)
    keep = np.ones(len(_attention_ops(m)), dtype=bool)
    if kinds is not None:
        wanted = {_validate.choice("kinds", k, models.KINDS) for k in kinds}
        ops = m.operations(batch=1, phase="decode", context_tokens=context, dtype=weight_dtype,
                           kv_dtype=kv_dtype)
        keep = np.array([op.kind in wanted for op in ops])
    ridge = the_chip.ridge_flops_per_byte(compute_dtype)
    if not _affine(m):
        return _moe_balance_batch(m, context, weight_dtype, kv_dtype, keep, ridge)
    f0, f1, b0, b1 = _decode_coefficients(m, context, weight_dtype, kv_dtype)
    f0, f1, b0, b1 = f0[keep], f1[keep], b0[keep], b1[keep]
    slope = f1.sum() - ridge * b1.sum()
    if slope <= 0:
        return math.inf
    return max(0.0, float((ridge * b0.sum() - f0.sum()) / slope))


def _moe_balance_batch(m: models.Transformer, context: int, weight_dtype: DType,
                       kv_dtype: DType, keep: np.ndarray, ridge: float) -> float:
    """The smallest whole batch at which a mixture of experts's decode FLOPs reach ridge × bytes
    (its bytes are not affine in the batch: more experts are read as the batch grows; once all
    are, the balance is a line again). ``inf`` if not reached by the largest batch accepted."""
    def ahead(batch: int) -> bool:
        flops, moved = _decode_arrays(m, batch, context, weight_dtype, kv_dtype)
        return float(flops[keep].sum()) >= ridge * float(moved[keep].sum())
    if ahead(1):
        return 1.0
    high = 2
    while not ahead(high):
        if high >= _MAX_BATCH:
            return math.inf
        high = min(2 * high, _MAX_BATCH)
    low = high // 2  # invariant: not ahead(low), ahead(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if ahead(mid) else (mid, high)
    return float(high)


def max_batch(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
              context_tokens: int = 2048, weight_dtype: DType = "bf16",
              kv_dtype: DType | None = None) -> int:
    """The largest batch whose weights and KV cache fit in n_chips × HBM (0 if none does).

    Exact, and the same rule as :func:`decode_step`'s ``fits``: a decode step at
    ``context_tokens`` holds ``context_tokens + 1`` tokens per sequence (0 is allowed: the
    first generated token). ``kv_dtype=None`` follows
    :func:`accelkit.dtypes.activation_dtype` of ``weight_dtype``.
    """
    m = _transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=_MAX_CONTEXT)
    weight_dtype, kv_dtype, _ = _dtypes(weight_dtype, kv_dtype, "bf16")
    free = n_chips * float(the_chip.require("hbm_bytes")) - m.weight_bytes(weight_dtype)
    if free <= 0:
        return 0
    # the step writes one more token per sequence
    return int(free // ((context + 1) * m.kv_cache_bytes_per_token(kv_dtype)))


def best_batch(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
               context_tokens: int = 2048, max_seconds_per_token: float = 0.05,
               weight_dtype: DType = "bf16", kv_dtype: DType | None = None,
               compute_dtype: DType = "bf16", overhead: bool = False,
               overhead_seconds: float | None = None) -> InferenceResult:
    """The highest-throughput decode step whose time per token stays under a latency target.

    Step time grows with batch, so this is the largest batch that both fits and meets
    ``max_seconds_per_token`` (exact: a bisection over whole batches). ``overhead`` and
    ``overhead_seconds`` as :func:`decode_step`.

    Raises:
        ValueError: even batch 1 does not fit or misses the target (the message says which).
    """
    target = _validate.positive_float("max_seconds_per_token", max_seconds_per_token)
    limit = max_batch(model, chip, n_chips, context_tokens, weight_dtype, kv_dtype)
    if limit < 1:
        decode_step(model, chip, n_chips, 1, context_tokens, weight_dtype, kv_dtype,
                    compute_dtype, require_fit=True)  # raises with the full message
    def step(b: int) -> InferenceResult:
        return decode_step(model, chip, n_chips, b, context_tokens, weight_dtype, kv_dtype,
                           compute_dtype, overhead=overhead, overhead_seconds=overhead_seconds)
    if step(1).seconds > target:
        raise ValueError(f"even batch 1 takes {step(1).seconds * 1e3:,.2f} ms per token, more "
                         f"than max_seconds_per_token={target * 1e3:,.2f} ms; add chips or "
                         "use narrower weights")
    low, high = 1, limit  # invariant: step(low) meets the target
    while low < high:
        mid = (low + high + 1) // 2
        if step(mid).seconds <= target:
            low = mid
        else:
            high = mid - 1
    return step(low)


def decode_sweep(model: str | models.Model, chips_: Sequence[str | chips.Chip],
                 batches: Sequence[int] | np.ndarray, n_chips: int = 1,
                 context_tokens: int = 2048, weight_dtype: DType = "bf16",
                 kv_dtype: DType | None = None, compute_dtype: DType = "bf16") -> DecodeSweep:
    """Decode steps for every (chip, batch) pair at once, vectorised for widgets.

    Gives the same ``seconds`` as :func:`decode_step` for each pair, tensor-parallel
    communication included (default attention conventions).
    """
    m = _transformer(model)
    chip_list = [chips.get(c) for c in chips_]
    if not chip_list:
        raise ValueError("chips_ must name at least one chip")
    b = np.asarray(batches)
    if b.ndim != 1 or b.size == 0 or b.dtype.kind not in "iu" or (b < 1).any() or \
            (b > _MAX_BATCH).any():
        raise ValueError(f"batches must be a non-empty 1-D sequence of whole numbers in "
                         f"[1, {_MAX_BATCH:,}]")
    if len(chip_list) * b.size > 10**7:
        raise ValueError("chips x batches is more than 10,000,000 points")
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=_MAX_CONTEXT)
    weight_dtype, kv_dtype, compute_dtype = _dtypes(weight_dtype, kv_dtype, compute_dtype)
    act = dtypes.nbytes(dtypes.activation_dtype(weight_dtype))
    for c in chip_list:
        _tensor_parallel_group(c, n_chips)
    plan = _communication_plan(m, act)
    lines = np.array([_tp_line(c, n_chips, plan)[:2] for c in chip_list])
    rates = np.array([_chip_rates(c, n_chips, compute_dtype) for c in chip_list])
    peak, bandwidth, hbm = rates[:, 0, None, None], rates[:, 1, None, None], rates[:, 2, None]
    batch = b.astype(float)
    if _affine(m):
        f0, f1, b0, b1 = _decode_coefficients(m, context, weight_dtype, kv_dtype)
        flops = f0[:, None] + f1[:, None] * batch          # (ops, batches)
        moved = b0[:, None] + b1[:, None] * batch
    else:  # a mixture of experts: one evaluation per batch (see _affine)
        if b.size > 10_000:
            raise ValueError("a mixture-of-experts sweep takes at most 10,000 batches")
        pairs = [_decode_arrays(m, int(x), context, weight_dtype, kv_dtype) for x in b]
        flops = np.stack([f for f, _ in pairs], axis=1)
        moved = np.stack([y for _, y in pairs], axis=1)
    # (chips, ops, batches)
    compute, memory, per_op = roofline.times(flops[None], moved[None], peak, bandwidth)
    seconds = np.asarray(per_op).sum(axis=1) + lines[:, :1] + lines[:, 1:] * batch[None, :]
    need = m.weight_bytes(weight_dtype) + batch * (context + 1) * m.kv_cache_bytes_per_token(
        kv_dtype)
    hourly = np.array([np.nan if c.usd_per_hour is None else c.usd_per_hour for c in chip_list])
    usd = price.usd_for(hourly[:, None], seconds, n_chips) / batch * 1e6
    arrays = {"batches": b.copy(), "seconds": seconds, "tokens_per_second": batch / seconds,
              "compute_bound": np.sum(compute, axis=1) >= np.sum(memory, axis=1),
              "fits": need[None, :] <= hbm, "usd_per_million_tokens": usd}
    for array in arrays.values():
        array.flags.writeable = False  # a frozen result: its arrays are read-only too
    return DecodeSweep(model=m.name, chips=tuple(c.name for c in chip_list), n_chips=n_chips,
                       context_tokens=context, **arrays)


#: What set a capacity plan's batch per replica (see :class:`CapacityPlan`).
CAPACITY_BOUNDS = ("latency", "memory", "users")


@dataclass(frozen=True)
class CapacityPlan:
    """The cheapest way to serve ``concurrent_users`` decoding streams under a latency target.

    ``replicas`` independent copies of the model, each a tensor-parallel group of
    ``chips_per_replica`` chips inside one scale-up domain, each decoding ``batch_per_replica``
    sequences per step (the users spread as evenly as whole numbers allow; this is the fullest
    replica). ``bound`` says what stopped the batch per replica growing: ``"latency"`` (one
    more sequence would miss ``max_seconds_per_token``), ``"memory"`` (one more would not fit
    in HBM beside the weights) or ``"users"`` (one replica already holds every user).
    """

    model: str
    chip: str
    concurrent_users: int
    max_seconds_per_token: float
    context_tokens: int
    prompt_tokens: int
    replicas: int
    chips_per_replica: int
    batch_per_replica: int
    n_chips: int
    seconds_per_token: float        # one decode step of the fullest replica
    first_token_seconds: float      # prefill of a replica's whole batch of prompts at once
    first_token_seconds_one_prompt: float  # prefill of one prompt alone on a replica
    tokens_per_second: float        # all users together: concurrent_users / seconds_per_token
    bound: str                      # "latency", "memory" or "users"
    max_batch_per_replica: int      # the exact largest batch meeting latency and memory
    usd_per_hour: float | None      # n_chips x the chip-hour price; None without a price
    usd_per_million_tokens: float | None
    decode_bound: str               # the step's own regime: "compute", "memory" or "overhead"
    overhead_seconds: float         # what the per-operation cost added to a step (0 when off)
    candidates: tuple[tuple[int, int, int], ...]  # (chips_per_replica, batch, n_chips) tried

    def __repr__(self) -> str:
        usd = ("no price" if self.usd_per_hour is None else
               f"${self.usd_per_hour:,.2f}/h, ${self.usd_per_million_tokens:,.3f}/M tokens")
        return (f"CapacityPlan({self.concurrent_users:,} users of {self.model} on {self.chip}: "
                f"{self.replicas:,} replica{'' if self.replicas == 1 else 's'} x "
                f"{self.chips_per_replica} chips = "
                f"{self.n_chips:,} chips, batch {self.batch_per_replica} per replica "
                f"({self.bound}-bound), {self.seconds_per_token * 1e3:,.1f} ms per token, "
                f"first token {self.first_token_seconds:,.2f} s; {usd})")


def tensor_parallel_sizes(model: str | models.Model, chip: str | chips.Chip) -> tuple[int, ...]:
    """The tensor-parallel group sizes :func:`capacity` considers: powers of two that divide the
    attention heads, up to the chip's scale-up domain (1 alone where the chip has no modelled
    link between chips, as L4 and T4)."""
    m = _transformer(model)
    the_chip = chips.get(chip)
    sizes = [1]
    n = 2
    while m.heads % n == 0:
        try:
            _tensor_parallel_group(the_chip, n)
        except (ValueError, chips.MissingFigureError):
            break
        sizes.append(n)
        n *= 2
    return tuple(sizes)


def _largest_batch(seconds: Callable[[int], float], limit: int, target: float,
                   low: int = 1) -> int:
    """The largest batch in [low, limit] whose step meets ``target`` (``low - 1`` if batch
    ``low`` misses it; 0 for ``low`` = 1); exact, since a step's time never falls as the batch
    grows."""
    if limit < low or seconds(low) > target:
        return low - 1
    high = limit  # invariant: seconds(low) meets the target
    while low < high:
        mid = (low + high + 1) // 2
        if seconds(mid) <= target:
            low = mid
        else:
            high = mid - 1
    return low


def _step_seconds(m: models.Transformer, chip: chips.Chip, n_chips: int, context: int,
                  weight_dtype: DType, kv_dtype: DType, compute_dtype: DType,
                  per_op_overhead: float) -> Callable[[int], float]:
    """``b -> decode_step(m, chip, n_chips, b, context, ...).seconds``, for a search that asks
    for many batches: the same arithmetic as :func:`_result` (so the same float, bit for bit),
    with the batch-independent parts (rates, kernel counts, the communication line) taken once
    and no result built. Arguments are already checked; a batch beyond what
    :func:`decode_step` allows goes to it, which raises."""
    peak, bandwidth, _ = _chip_rates(chip, n_chips, compute_dtype)
    peak, bandwidth = float(peak), float(bandwidth)  # as roofline.times checks them
    floor = _operation_counts(m, "decode") * per_op_overhead
    act = dtypes.nbytes(dtypes.activation_dtype(weight_dtype))
    c0, c1, _ = _tp_line(chip, n_chips, _communication_plan(m, act))
    known: dict[int, float] = {}

    def seconds(b: int) -> float:
        found = known.get(b)
        if found is not None:
            return found
        if b > _MAX_BATCH:
            return decode_step(m, chip, n_chips, b, context, weight_dtype, kv_dtype,
                               compute_dtype, overhead_seconds=per_op_overhead).seconds
        flops, moved = _decode_arrays(m, b, context, weight_dtype, kv_dtype)
        per_op = np.maximum(np.divide(flops, peak), np.divide(moved, bandwidth))
        step = float(np.sum(np.maximum(per_op, floor)))
        step += c0 + c1 * b
        known[b] = step
        return step
    return seconds


class NoCapacityPlan(ValueError):
    """:func:`capacity` found no plan: the weights and one sequence's cache fit on no
    tensor-parallel group the chip allows, or no group meets the latency target even at batch
    1. A caller that reports "no plan" catches this type, not every ValueError."""


def capacity(model: str | models.Model, chip: str | chips.Chip, *, concurrent_users: int,
             max_seconds_per_token: float, context_tokens: int = 2048,
             prompt_tokens: int | None = None, weight_dtype: DType = "bf16",
             kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
             usd_per_hour: float | None = None, overhead: bool = False,
             overhead_seconds: float | None = None) -> CapacityPlan:
    """The cheapest plan that serves ``concurrent_users`` streams at ``max_seconds_per_token``.

    For every tensor-parallel size in :func:`tensor_parallel_sizes`, the exact largest batch
    per replica whose decode step (at ``context_tokens`` of cache) both fits in HBM and meets
    the latency target (the same rule as :func:`max_batch` and :func:`best_batch`), capped at
    the users; ``replicas = ceil(users / batch)`` and the users are spread evenly over them.
    The plan with the fewest chips wins (lowest $/h, the same thing for one chip type);
    ties go to the faster step, then the smaller group.

    Simplifications, said where used: the group shares the KV cache evenly even beyond the
    model's KV heads (a real server replicates a KV head over the chips that share it, so
    groups wider than ``kv_heads`` hold less cache than modelled); every user is mid-stream
    at ``context_tokens`` (a steady state; real traffic mixes lengths); prefill is not
    interleaved with decode (it would lengthen steps); and ``first_token_seconds`` is the
    prefill of a replica's whole batch of ``prompt_tokens``-token prompts at once on its
    group, the cold-start worst case (``first_token_seconds_one_prompt`` is one arriving
    prompt prefilled alone).

    Args:
        concurrent_users: streams decoding at once, >= 1.
        max_seconds_per_token: the latency target per generated token, > 0.
        context_tokens: tokens in each stream's KV cache.
        prompt_tokens: prompt length for the first-token time (default ``context_tokens``,
            at least 1).
        usd_per_hour: price per chip-hour (default the chip's list price; None where it has none).
        weight_dtype, kv_dtype, compute_dtype, overhead, overhead_seconds: as :func:`decode_step`.
    Raises:
        ValueError: a bad argument (named). :class:`NoCapacityPlan` (a ValueError): the
            weights fit at no allowed group size (the message names the model and chip), or
            no group size meets the latency target.
    """
    m = _transformer(model)
    the_chip = chips.get(chip)
    users = _validate.positive_int("concurrent_users", concurrent_users, maximum=10**9)
    target = _validate.positive_float("max_seconds_per_token", max_seconds_per_token)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=_MAX_CONTEXT)
    prompt = (max(1, context) if prompt_tokens is None else
              _validate.positive_int("prompt_tokens", prompt_tokens, maximum=_MAX_CONTEXT))
    weight, kv, compute = _dtypes(weight_dtype, kv_dtype, compute_dtype)
    per_op = _overhead_per_operation(overhead, overhead_seconds)
    hourly = (the_chip.usd_per_hour if usd_per_hour is None else
              _validate.positive_float("usd_per_hour", usd_per_hour))
    sizes = tensor_parallel_sizes(m, the_chip)
    fitting = 0
    best: tuple[tuple[int, float, int], int, int, int] | None = None  # key, tp, batch, limit
    tried: list[tuple[int, int, int]] = []
    searches: dict[int, Callable[[int], float]] = {}  # each group's step time, remembered
    # max_batch's rule, its checks and per-chip figures taken once for every group size
    hbm_bytes = float(the_chip.require("hbm_bytes"))
    weight_bytes = m.weight_bytes(weight)
    sequence_bytes = (context + 1) * m.kv_cache_bytes_per_token(kv)

    def memory_limit_of(tp: int) -> int:
        free = tp * hbm_bytes - weight_bytes
        return 0 if free <= 0 else int(free // sequence_bytes)

    for tp in sizes:
        memory_limit = memory_limit_of(tp)
        if memory_limit < 1:
            continue
        fitting += 1

        seconds = _step_seconds(m, the_chip, tp, context, weight, kv, compute, per_op)
        searches[tp] = seconds
        # Only whether the limit reaches the users matters here: search up to them (the
        # winner's exact limit, if larger, is found once below).
        cap = min(memory_limit, users)
        limit = cap if seconds(cap) <= target else _largest_batch(seconds, cap - 1, target)
        if limit < 1:
            continue
        batch = min(limit, users)
        replicas = math.ceil(users / batch)
        batch = math.ceil(users / replicas)  # spread the users evenly
        tried.append((tp, batch, replicas * tp))
        key = (replicas * tp, seconds(batch), tp)
        if best is None or key < best[0]:
            best = (key, tp, batch, limit)
    if not fitting:
        largest = sizes[-1]
        need = m.weight_bytes(weight) + (context + 1) * m.kv_cache_bytes_per_token(kv)
        raise NoCapacityPlan(
            f"{m.name}'s {weight} weights and one sequence's KV cache ({need / 1e9:,.1f} GB) fit "
            f"on no tensor-parallel group of {the_chip.name} it allows (at most {largest} chips, "
            f"{largest * float(the_chip.require('hbm_bytes')) / 1e9:,.1f} GB of HBM): use "
            "narrower weight_dtype/kv_dtype, a shorter context or a chip with more HBM or a "
            "larger scale-up domain")
    if best is None:
        fastest = min(decode_step(m, the_chip, tp, 1, context, weight, kv, compute,
                                  overhead_seconds=per_op).seconds
                      for tp in sizes if max_batch(m, the_chip, tp, context, weight, kv) >= 1)
        raise NoCapacityPlan(
            f"max_seconds_per_token={target * 1e3:,.2f} ms is out of reach for {m.name} on "
            f"{the_chip.name}: its fastest batch-1 step takes {fastest * 1e3:,.2f} ms; relax the "
            "target, use narrower weights or a faster chip")
    (n_total, _, _), tp, batch, limit = best
    memory_limit = memory_limit_of(tp)
    if limit == users < memory_limit:   # the search stopped at the users: find the true limit
        limit = _largest_batch(searches[tp], memory_limit, target, low=users + 1)
    step = decode_step(m, the_chip, tp, batch, context, weight, kv, compute,
                       overhead_seconds=per_op)
    first = prefill(m, the_chip, tp, batch, prompt, weight, kv, compute,
                    overhead_seconds=per_op)
    alone = prefill(m, the_chip, tp, 1, prompt, weight, kv, compute, overhead_seconds=per_op)
    if batch == users and limit >= users:
        bound = "users"
    elif limit == memory_limit:
        bound = "memory"
    else:
        bound = "latency"
    rate = users / step.seconds
    usd_hour = None if hourly is None else hourly * n_total
    usd_million = None if usd_hour is None else usd_hour / (rate * 3600.0) * 1e6
    return CapacityPlan(
        model=m.name, chip=the_chip.name, concurrent_users=users, max_seconds_per_token=target,
        context_tokens=context, prompt_tokens=prompt, replicas=n_total // tp,
        chips_per_replica=tp, batch_per_replica=batch, n_chips=n_total,
        seconds_per_token=step.seconds, first_token_seconds=first.seconds,
        first_token_seconds_one_prompt=alone.seconds,
        tokens_per_second=rate, bound=bound, max_batch_per_replica=limit,
        usd_per_hour=usd_hour, usd_per_million_tokens=usd_million, decode_bound=step.bound,
        overhead_seconds=step.overhead_seconds, candidates=tuple(tried))


def kv_cache_bytes(model: str | models.Model, batch: int, context_tokens: int,
                   dtype: DType = "bf16") -> float:
    """Bytes of KV cache for ``batch`` sequences of ``context_tokens`` (see Transformer)."""
    return _transformer(model).kv_cache_bytes(batch, context_tokens, dtype)


#: Batches a cost curve samples by default: powers of two from 1 to 2,048 and the steps between.
COST_CURVE_BATCHES = np.unique(np.round(np.logspace(0, 11, 45, base=2)).astype(int))
COST_CURVE_BATCHES.flags.writeable = False


@dataclass(frozen=True)
class CostCurve:
    """Dollars per million generated tokens of one replica's decode, against batch.

    ``batches`` are the sampled batches that fit, ending exactly at ``max_batch`` (the largest
    batch that fits, :func:`max_batch`), so the curve's last point is the number a lesson
    prints for "the largest batch"; the arrays are read-only.
    """

    model: str
    chip: str
    n_chips: int
    context_tokens: int
    usd_per_hour: float                 # per chip: the price the curve uses
    max_batch: int
    batches: np.ndarray
    seconds: np.ndarray                 # decode step time at each batch
    usd_per_million_tokens: np.ndarray

    @property
    def usd_per_million_tokens_at_max_batch(self) -> float:
        """The cost at the largest batch that fits: the curve's last point."""
        return float(self.usd_per_million_tokens[-1])

    def __repr__(self) -> str:
        return (f"CostCurve({self.model} on {self.n_chips} x {self.chip} at "
                f"${self.usd_per_hour:g}/h, context {self.context_tokens:,}: batch 1 "
                f"${self.usd_per_million_tokens[0]:,.2f}/M ... batch {self.max_batch:,} "
                f"${self.usd_per_million_tokens_at_max_batch:,.3f}/M)")


def cost_curve(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
               context_tokens: int = 2048, batches: Sequence[int] | np.ndarray | None = None, *,
               usd_per_hour: float | None = None, weight_dtype: DType = "bf16",
               kv_dtype: DType | None = None) -> CostCurve:
    """Decode's cost per million generated tokens on one replica, from batch 1 to the largest
    batch that fits.

    The curve samples ``batches`` (default :data:`COST_CURVE_BATCHES`) up to
    :func:`max_batch` and always ends at that exact batch, so a plot of it and a table of the
    largest batch show one number. Times are :func:`decode_sweep`'s (the same as
    :func:`decode_step`'s); ``usd_per_hour`` (per chip) defaults to the chip's list price.

    Raises:
        ValueError: the weights alone do not fit on ``n_chips`` (no batch fits), or bad input.
        accelkit.chips.MissingFigureError: no ``usd_per_hour`` and the chip has no list price.
    """
    the_chip = chips.get(chip)
    hourly = _validate.positive_float("usd_per_hour", usd_per_hour if usd_per_hour is not None
                                      else the_chip.require("usd_per_hour"))
    limit = max_batch(model, the_chip, n_chips, context_tokens, weight_dtype, kv_dtype)
    if limit < 1:
        decode_step(model, the_chip, n_chips, 1, context_tokens, weight_dtype, kv_dtype,
                    require_fit=True)  # raises with the full message
    grid = COST_CURVE_BATCHES if batches is None else np.asarray(batches)
    if grid.ndim != 1 or grid.size == 0 or grid.dtype.kind not in "iu" or (grid < 1).any():
        raise ValueError("batches must be a non-empty 1-D sequence of whole numbers >= 1")
    points = np.union1d(grid[grid <= limit], np.array([limit], dtype=grid.dtype))
    sweep = decode_sweep(model, [the_chip], points, n_chips, context_tokens,
                         weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    seconds = np.array(sweep.seconds[0])
    usd = np.asarray(price.usd_for(hourly, seconds, n_chips), dtype=float) / points * 1e6
    for array in (points, seconds, usd):
        array.flags.writeable = False
    return CostCurve(model=sweep.model, chip=the_chip.name, n_chips=sweep.n_chips,
                     context_tokens=sweep.context_tokens, usd_per_hour=hourly, max_batch=limit,
                     batches=points, seconds=seconds, usd_per_million_tokens=usd)


__all__ = ["ATTENTION_MASKS", "CAPACITY_BOUNDS", "COST_CURVE_BATCHES", "CapacityPlan", "CostCurve",
           "DecodeSweep", "InferenceResult", "NoCapacityPlan", "cost_curve",
           "attention_matmul_flops_per_pair", "best_batch", "capacity", "compute_bound_batch",
           "decode_step", "decode_sweep", "kv_cache_bytes", "max_batch", "prefill",
           "tensor_parallel_sizes"]
