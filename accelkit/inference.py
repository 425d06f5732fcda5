"""Serving cost: prefill and decode on a roofline, the KV cache, batch, latency and price.

    >>> import accelkit as ak
    >>> d = ak.inference.decode_step(model="llama-3-70b", chip="TPU v5e", n_chips=16, batch=32,
    ...                              context_tokens=8192)
    >>> d.bound, round(d.seconds * 1e3, 1), round(d.communication_seconds * 1e3, 1)
    ('memory', 21.0, 3.7)

The roofline part is 17.3 ms; the 160 tensor-parallel all-reduces over the 16 chips' ICI (the
4x4 slice they are bought as: :func:`accelkit.collectives.slice_shape`) add 3.7.

Conventions:

* Each operation of the model (see :mod:`accelkit.models` for FLOPs and bytes) is timed on the
  roofline, ``max(flops / (n·peak), bytes / (n·bandwidth))`` (:func:`accelkit.roofline.times`,
  overlapped), and the times are summed, as the scaling book sums its weight-loading and
  KV-loading times. ``bound`` says which of the total compute time and total memory time is
  larger.
* ``n_chips`` > 1 are one tensor-parallel group (:mod:`accelkit.tensor_parallel`: Megatron-style,
  attention heads and the MLP's hidden units split across chips; the group must divide the
  heads; ``kv_cache_split`` says how it splits the KV cache, ``"even"`` by default). They share
  the arithmetic and the weight and KV reads and pool their HBM, and each layer pays two
  all-reduces of the activations, ``batch · tokens · d_model`` values in the activation format
  (after attention and after the MLP), costed by :func:`accelkit.collectives.all_reduce` over
  the group (on a TPU, over the torus shape of the slice it is bought as): their time is
  ``communication_seconds``. By default (``tp_overlap=False``) they sit on the critical path
  and add to ``seconds``; ``tp_overlap=True`` runs them behind the step's kernels, as XLA's
  collective matmul does and the scaling book's serving derivations assume, so only what
  outlasts the kernels shows (:data:`accelkit.serving_step.TP_OVERLAP`; the training step's
  choice of the same name, :mod:`accelkit.frameworks`). At small batch they are
  latency-bound (about 1 µs per ICI hop, or NCCL's per-step latencies on NVLink), which is why the scaling book finds tensor parallelism
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
  :func:`best_batch` and :func:`accelkit.capacity.plan`; off by default): each kernel of the
  step (one per operation occurrence, eager execution, as
  :func:`accelkit.roofline.operations_time` counts) takes at least
  :data:`accelkit.roofline.OVERHEAD_SECONDS` of launch and dispatch time.
  ``overhead_seconds`` on the result is what that added; ``bound="overhead"`` when the step's
  fixed cost (``n_operations × OVERHEAD_SECONDS``) exceeds both its compute and memory
  times, as batch-1 decode of an 8B model on a B200 does. Fused graphs (XLA, CUDA graphs)
  launch fewer kernels, so this is an upper view of the cost; the collectives carry their own
  latencies and pay no extra.
* **Capacity planning** (how many replicas of which group serve a number of users under a
  latency target) is :mod:`accelkit.capacity`, priced by these steps.
* Prices: chip list price × n_chips × seconds; None where the chip has no list price.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from accelkit import (_html, _validate, chips, dtypes, models, price, roofline, serving_decode,
                      serving_step, tensor_parallel)
from accelkit.dtypes import DType
from accelkit.tensor_parallel import KV_CACHE_SPLITS, kv_cache_copies, tensor_parallel_sizes

#: The largest batch and context accepted: far beyond any real server.
MAX_BATCH = 10**7
MAX_CONTEXT = 10**8

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
    kv_cache_bytes: float      # the cache the group holds, every copy counted
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
    # copies of the cache the group holds (``kv_cache_bytes`` counts them all): 1 unless
    # kv_cache_split="heads" on a group wider than the model's KV heads
    kv_cache_copies: int = 1

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


def _conventions(attention_mask: object, softmax_flops: object, kv_write: object
                 ) -> tuple[str, bool, bool]:
    mask = _validate.choice("attention_mask", attention_mask, ATTENTION_MASKS)
    for name, value in (("softmax_flops", softmax_flops), ("kv_write", kv_write)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    return mask, bool(softmax_flops), bool(kv_write)


def overhead_per_operation(overhead: object, overhead_seconds: object) -> float:
    """The fixed cost per operation: 0 by default, :data:`accelkit.roofline.OVERHEAD_SECONDS`
    with ``overhead=True``, or a checked ``overhead_seconds`` (as :func:`accelkit.roofline.estimate`)."""
    if not isinstance(overhead, bool):
        raise TypeError(f"overhead must be True or False, got {type(overhead).__name__} "
                        f"{overhead!r}; pass overhead_seconds=<float> to set the per-operation cost")
    if overhead_seconds is not None:
        return roofline.per_step_overhead_seconds(1, overhead_seconds)  # type: ignore[arg-type]
    return roofline.OVERHEAD_SECONDS if overhead else 0.0


def _min_chips(m: models.Transformer, weights: float, kv_one_copy: float, per_chip_hbm: float,
               split: str) -> int:
    """The fewest chips whose HBM holds the weights and the cache (its copies, under
    ``"heads"``, grow with the group beyond the KV heads); 0 if no group does."""
    even = max(1, math.ceil((weights + kv_one_copy) / per_chip_hbm))
    heads = tensor_parallel.kv_cache_heads(m)
    if split == "even" or even <= heads:
        return even
    room = per_chip_hbm - kv_one_copy / heads   # per chip, beyond the KV heads
    return max(heads + 1, math.ceil(weights / room)) if room > 0 else 0


def _result(phase: str, m: models.Transformer, chip: chips.Chip, n_chips: int, batch: int,
            tokens: int, context: int, formats: tuple[DType, DType, DType],
            flops: np.ndarray, moved: np.ndarray, is_attention: np.ndarray, t: serving_step.Timing,
            network: str, require_fit: bool, conventions: tuple[str, bool, bool], split: str
            ) -> InferenceResult:
    weight_dtype, kv_dtype, compute_dtype = formats
    mask, _, kv_write = conventions
    hbm = n_chips * float(chip.require("hbm_bytes"))
    seconds = float(t.seconds)
    compute_s, memory_s = float(t.compute_seconds), float(t.memory_seconds)
    weights = m.weight_bytes(weight_dtype)
    copies = tensor_parallel.copies(m, n_chips, split)
    one_copy = batch * context * m.kv_cache_bytes_per_token(kv_dtype)
    kv = one_copy * copies
    need = weights + kv
    fits = need <= hbm
    min_chips = _min_chips(m, weights, one_copy, hbm / n_chips, split)
    held = f" ({copies} copies: each KV head on {copies} chips)" if copies > 1 else ""
    if fits:
        message = (f"fits: {need / 1e9:,.1f} GB of weights and KV cache{held} in "
                   f"{hbm / 1e9:,.1f} GB of HBM")
    else:
        message = (f"does not fit: {m.name} needs {weights / 1e9:,.1f} GB of weights + "
                   f"{kv / 1e9:,.1f} GB of KV cache{held} = {need / 1e9:,.1f} GB, but {n_chips} "
                   f"x {chip.name} hold {hbm / 1e9:,.1f} GB; use at least {min_chips} chips, a "
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
        bound=roofline.bound(compute_s, memory_s, t.fixed_seconds), tokens_per_second=rate,
        usd_per_million_tokens=usd, memory_bytes=need, hbm_bytes=hbm, fits=fits,
        min_chips=min_chips, message=message,
        communication_seconds=float(t.communication_seconds), communication_network=network,
        attention_flops=float(flops[is_attention].sum()), attention_mask=mask, kv_write=kv_write,
        overhead_seconds=float(t.kernel_seconds) - float(t.device_seconds),
        n_operations=t.n_operations, kv_cache_copies=copies)


def check_formats(weight_dtype: object, kv_dtype: object | None,
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
            overhead_seconds: float | None = None,
            kv_cache_split: str = "even", tp_overlap: bool = False) -> InferenceResult:
    """Process ``batch`` prompts of ``prompt_tokens`` tokens, writing the KV cache.

    Args:
        n_chips: one tensor-parallel group, at most the chip's scale-up domain, dividing the
            attention heads (module docstring); its all-reduces are ``communication_seconds``.
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
        kv_cache_split: ``"even"`` or ``"heads"``: how the group splits the cache (module
            docstring).
        tp_overlap: the group's all-reduces behind the step's kernels (``True``: as XLA's
            collective matmul does and the scaling book assumes) or on the critical path
            (``False``, the default): :data:`accelkit.serving_step.TP_OVERLAP`.
    Returns:
        An :class:`InferenceResult` (``tokens_per_second`` counts prompt tokens).
    Raises:
        ValueError: unknown model or chip, a non-transformer, sizes < 1, a precision the chip
            lacks, ``n_chips`` beyond the scale-up domain or not dividing the heads (or, with
            ``"heads"``, the KV heads), an unknown attention_mask.
        MissingFigureError: ``n_chips`` > 1 on a chip with no modelled link between chips.
    """
    m = tensor_parallel.transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    batch = _validate.positive_int("batch", batch, maximum=MAX_BATCH)
    prompt_tokens = _validate.positive_int("prompt_tokens", prompt_tokens, maximum=MAX_CONTEXT)
    weight_dtype, kv_dtype, compute_dtype = check_formats(weight_dtype, kv_dtype, compute_dtype)
    mask, softmax, write = _conventions(attention_mask, softmax_flops, kv_write)
    per_op = overhead_per_operation(overhead, overhead_seconds)
    split = tensor_parallel.check_split(kv_cache_split)
    tensor_parallel.check_group(m, the_chip, n_chips, split)
    flops, moved, is_attention, counts = serving_step.operation_arrays(
        m, batch, prompt_tokens, 0, "prefill", weight_dtype, kv_dtype, mask, softmax, write,
        tensor_parallel.copies(m, n_chips, split))
    communication, network = tensor_parallel.communication_seconds(
        m, the_chip, n_chips, batch * prompt_tokens, weight_dtype)
    peak, bandwidth, _ = serving_step.chip_rates(the_chip, n_chips, compute_dtype)
    t = serving_step.timing(flops, moved, counts, peak, bandwidth, per_op, communication,
                            serving_step.check_tp_overlap(tp_overlap))
    return _result("prefill", m, the_chip, n_chips, batch, prompt_tokens, prompt_tokens,
                   (weight_dtype, kv_dtype, compute_dtype), flops, moved, is_attention, t,
                   network, require_fit, (mask, softmax, write), split)


def decode_step(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
                batch: int = 1, context_tokens: int = 2048, weight_dtype: DType = "bf16",
                kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
                require_fit: bool = False, attention_mask: str = "causal",
                softmax_flops: bool = True, kv_write: bool = True, overhead: bool = False,
                overhead_seconds: float | None = None,
                kv_cache_split: str = "even", tp_overlap: bool = False) -> InferenceResult:
    """Generate one token for each of ``batch`` sequences holding ``context_tokens`` in cache.

    Formats, ``n_chips`` (one tensor-parallel group inside the scale-up domain, whose two
    all-reduces per layer of ``batch · d_model`` activations are ``communication_seconds``),
    ``kv_cache_split``, ``tp_overlap`` and the attention options as :func:`prefill`:
    ``kv_dtype=None`` follows
    :func:`accelkit.dtypes.activation_dtype` of ``weight_dtype``; the arithmetic is bf16.
    ``overhead=True`` charges each of the step's kernels at least the fixed per-operation cost
    (as :func:`prefill`): a small model's batch-1 decode then shows ``bound="overhead"``.

    Returns:
        An :class:`InferenceResult`; ``seconds`` is the time per generated token of one
        sequence, ``tokens_per_second`` counts all sequences.
    Raises:
        ValueError: unknown model or chip, a non-transformer, batch < 1, context < 0, an
            unknown precision or one the chip lacks, ``n_chips`` beyond the scale-up domain or
            one the model cannot split (as :func:`prefill`); with ``require_fit``, a misfit.
        MissingFigureError: ``n_chips`` > 1 on a chip with no modelled link between chips.
    """
    m = tensor_parallel.transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    batch = _validate.positive_int("batch", batch, maximum=MAX_BATCH)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=MAX_CONTEXT)
    weight_dtype, kv_dtype, compute_dtype = check_formats(weight_dtype, kv_dtype, compute_dtype)
    mask, softmax, write = _conventions(attention_mask, softmax_flops, kv_write)
    per_op = overhead_per_operation(overhead, overhead_seconds)
    formats, conventions = (weight_dtype, kv_dtype, compute_dtype), (mask, softmax, write)
    group = serving_decode.decode_group(m, the_chip, n_chips, context, formats, conventions,
                                      tensor_parallel.check_split(kv_cache_split), per_op,
                                      tp_overlap)
    flops, moved, t = group.timing(batch)
    return _result("decode", m, the_chip, n_chips, batch, 1, context + 1, formats, flops, moved,
                   group.is_attention, t, group.network, require_fit, conventions, group.split)


def decode_seconds(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
                   context_tokens: int = 2048, weight_dtype: DType = "bf16",
                   kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
                   overhead: bool = False, overhead_seconds: float | None = None,
                   kv_cache_split: str = "even", tp_overlap: bool = False
                   ) -> Callable[[int], float]:
    """``batch -> decode_step(model, chip, n_chips, batch, context_tokens, ...).seconds``, for
    searches over the batch (:func:`best_batch`, :func:`accelkit.capacity.plan`).

    The arguments are checked once and what every batch shares is taken once; each batch is
    then priced by the same rule as :func:`decode_step` (the same float), without building a
    result. The function refuses a batch as :func:`decode_step` does.

    Raises:
        ValueError, TypeError: as :func:`decode_step`.
    """
    m = tensor_parallel.transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=MAX_CONTEXT)
    formats = check_formats(weight_dtype, kv_dtype, compute_dtype)
    group = serving_decode.decode_group(m, the_chip, n_chips, context, formats,
                                      ("causal", True, True),
                                      tensor_parallel.check_split(kv_cache_split),
                                      overhead_per_operation(overhead, overhead_seconds),
                                      tp_overlap)

    def seconds(batch: int) -> float:
        batch = _validate.positive_int("batch", batch, maximum=MAX_BATCH)
        return float(group.timing(batch)[2].seconds)
    return seconds


def compute_bound_batch(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
                        context_tokens: int = 0, weight_dtype: DType = "bf16",
                        kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
                        kinds: Sequence[str] | None = None,
                        kv_cache_split: str = "even") -> float:
    """The batch at which a decode step's compute time catches up with its memory time.

    Solves ``Σ flops(B) / peak = Σ bytes(B) / bandwidth`` over the operations of the given
    ``kinds`` (default all); returns ``inf`` when it never happens (the KV cache grows as fast
    as the arithmetic, as for long contexts). With ``kinds=("matmul",)`` and no context this is
    about the chip's ridge point × weight bytes / 2: ~240 for bf16 on TPU v5e. Tensor-parallel
    communication is neither compute nor memory time and is left out of this balance; the
    group's copies of the cache (``kv_cache_split``, as :func:`decode_step`) are in its bytes.
    """
    m = tensor_parallel.transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=MAX_CONTEXT)
    weight_dtype, kv_dtype, compute_dtype = check_formats(weight_dtype, kv_dtype, compute_dtype)
    split = tensor_parallel.check_split(kv_cache_split)
    problem = tensor_parallel.kv_problem(m, n_chips, split)
    if problem is not None:
        raise problem
    copies = tensor_parallel.copies(m, n_chips, split)
    ops = m.operations(batch=1, phase="decode", context_tokens=context, dtype=weight_dtype,
                       kv_dtype=kv_dtype)
    keep = np.ones(len(ops), dtype=bool)
    if kinds is not None:
        wanted = {_validate.choice("kinds", k, models.KINDS) for k in kinds}
        keep = np.array([op.kind in wanted for op in ops])
    ridge = the_chip.ridge_flops_per_byte(compute_dtype)
    if not serving_step.affine(m):
        return _moe_balance_batch(m, context, weight_dtype, kv_dtype, keep, ridge, copies)
    f0, f1, b0, b1 = serving_step.decode_line(m, context, weight_dtype, kv_dtype, copies=copies)
    f0, f1, b0, b1 = f0[keep], f1[keep], b0[keep], b1[keep]
    slope = f1.sum() - ridge * b1.sum()
    if slope <= 0:
        return math.inf
    return max(0.0, float((ridge * b0.sum() - f0.sum()) / slope))


def _moe_balance_batch(m: models.Transformer, context: int, weight_dtype: DType,
                       kv_dtype: DType, keep: np.ndarray, ridge: float, copies: int) -> float:
    """The smallest whole batch at which a mixture of experts's decode FLOPs reach ridge × bytes
    (its bytes are not affine in the batch: more experts are read as the batch grows; once all
    are, the balance is a line again). ``inf`` if not reached by the largest batch accepted."""
    def ahead(batch: int) -> bool:
        flops, moved, _, _ = serving_step.operation_arrays(
            m, batch, 1, context, "decode", weight_dtype, kv_dtype, "causal", True, True, copies)
        return float(flops[keep].sum()) >= ridge * float(moved[keep].sum())
    if ahead(1):
        return 1.0
    high = 2
    while not ahead(high):
        if high >= MAX_BATCH:
            return math.inf
        high = min(2 * high, MAX_BATCH)
    low = high // 2  # invariant: not ahead(low), ahead(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if ahead(mid) else (mid, high)
    return float(high)


def max_batch(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
              context_tokens: int = 2048, weight_dtype: DType = "bf16",
              kv_dtype: DType | None = None, kv_cache_split: str = "even") -> int:
    """The largest batch whose weights and KV cache fit in n_chips × HBM (0 if none does).

    Exact, and the same rule as :func:`decode_step`'s ``fits``: a decode step at
    ``context_tokens`` holds ``context_tokens + 1`` tokens per sequence (0 is allowed: the
    first generated token), every copy of the cache counted (``kv_cache_split``).
    ``kv_dtype=None`` follows :func:`accelkit.dtypes.activation_dtype` of ``weight_dtype``.
    """
    m = tensor_parallel.transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=MAX_CONTEXT)
    weight_dtype, kv_dtype, _ = check_formats(weight_dtype, kv_dtype, "bf16")
    split = tensor_parallel.check_split(kv_cache_split)
    problem = tensor_parallel.kv_problem(m, n_chips, split)
    if problem is not None:
        raise problem
    return _max_batch(m, the_chip, n_chips, context, weight_dtype, kv_dtype, split)


def _max_batch(m: models.Transformer, chip: chips.Chip, n_chips: int, context: int,
               weight_dtype: DType, kv_dtype: DType, split: str) -> int:
    """:func:`max_batch` on checked arguments."""
    free = n_chips * float(chip.require("hbm_bytes")) - m.weight_bytes(weight_dtype)
    if free <= 0:
        return 0
    # the step writes one more token per sequence
    copies = tensor_parallel.copies(m, n_chips, split)
    sequence = (context + 1) * m.kv_cache_bytes_per_token(kv_dtype) * copies
    return int(free // sequence)


def best_batch(model: str | models.Model, chip: str | chips.Chip, n_chips: int = 1,
               context_tokens: int = 2048, max_seconds_per_token: float = 0.05,
               weight_dtype: DType = "bf16", kv_dtype: DType | None = None,
               compute_dtype: DType = "bf16", overhead: bool = False,
               overhead_seconds: float | None = None,
               kv_cache_split: str = "even") -> InferenceResult:
    """The highest-throughput decode step whose time per token stays under a latency target.

    Step time grows with batch, so this is the largest batch that both fits and meets
    ``max_seconds_per_token`` (exact: a bisection over whole batches). ``overhead``,
    ``overhead_seconds`` and ``kv_cache_split`` as :func:`decode_step`.

    Raises:
        ValueError: even batch 1 does not fit or misses the target (the message says which).
    """
    target = _validate.positive_float("max_seconds_per_token", max_seconds_per_token)
    m, the_chip = tensor_parallel.transformer(model), chips.get(chip)  # resolved once
    limit = max_batch(m, the_chip, n_chips, context_tokens, weight_dtype, kv_dtype,
                      kv_cache_split)
    if limit < 1:
        decode_step(m, the_chip, n_chips, 1, context_tokens, weight_dtype, kv_dtype,
                    compute_dtype, require_fit=True,
                    kv_cache_split=kv_cache_split)  # raises with the full message
    seconds = decode_seconds(m, the_chip, n_chips, context_tokens, weight_dtype, kv_dtype,
                             compute_dtype, overhead, overhead_seconds, kv_cache_split)
    if seconds(1) > target:
        raise ValueError(f"even batch 1 takes {seconds(1) * 1e3:,.2f} ms per token, more "
                         f"than max_seconds_per_token={target * 1e3:,.2f} ms; add chips or "
                         "use narrower weights")
    low, high = 1, limit  # invariant: seconds(low) meets the target
    while low < high:
        mid = (low + high + 1) // 2
        if seconds(mid) <= target:
            low = mid
        else:
            high = mid - 1
    return decode_step(m, the_chip, n_chips, low, context_tokens, weight_dtype, kv_dtype,
                       compute_dtype, overhead=overhead, overhead_seconds=overhead_seconds,
                       kv_cache_split=kv_cache_split)


def decode_sweep(model: str | models.Model, chips_: Sequence[str | chips.Chip],
                 batches: Sequence[int] | np.ndarray, n_chips: int = 1,
                 context_tokens: int = 2048, weight_dtype: DType = "bf16",
                 kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
                 kv_cache_split: str = "even") -> DecodeSweep:
    """Decode steps for every (chip, batch) pair at once, vectorised for widgets.

    Gives the same ``seconds`` as :func:`decode_step` for each pair (to rounding), by the same
    rule, tensor-parallel communication included (default attention conventions), every batch
    at once: a dense model's FLOPs and bytes per operation and each chip's collectives are
    lines in the batch (a mixture of experts, whose bytes are not, is evaluated per batch).
    """
    m = tensor_parallel.transformer(model)
    chip_list = [chips.get(c) for c in chips_]
    if not chip_list:
        raise ValueError("chips_ must name at least one chip")
    b = np.asarray(batches)
    if b.ndim != 1 or b.size == 0 or b.dtype.kind not in "iu" or (b < 1).any() or \
            (b > MAX_BATCH).any():
        raise ValueError(f"batches must be a non-empty 1-D sequence of whole numbers in "
                         f"[1, {MAX_BATCH:,}]")
    if len(chip_list) * b.size > 10**7:
        raise ValueError("chips x batches is more than 10,000,000 points")
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    context = _validate.nonnegative_int("context_tokens", context_tokens, maximum=MAX_CONTEXT)
    weight_dtype, kv_dtype, compute_dtype = check_formats(weight_dtype, kv_dtype, compute_dtype)
    split = tensor_parallel.check_split(kv_cache_split)
    if not serving_step.affine(m) and b.size > 10_000:
        raise ValueError("a mixture-of-experts sweep takes at most 10,000 batches")
    formats = (weight_dtype, kv_dtype, compute_dtype)
    groups = [serving_decode.decode_group(m, c, n_chips, context, formats, ("causal", True, True),
                                        split, 0.0) for c in chip_list]
    batch = b.astype(float)
    arrays = groups[0].arrays(b)                   # (ops, batches): the same on every chip
    timings = [g.timing(b, arrays)[2] for g in groups]  # each chip's rates and collectives
    seconds = np.stack([t.seconds for t in timings])
    copies = tensor_parallel.copies(m, n_chips, split)
    hbm = np.array([[n_chips * float(c.require("hbm_bytes"))] for c in chip_list])
    need = m.weight_bytes(weight_dtype) + batch * (context + 1) * m.kv_cache_bytes_per_token(
        kv_dtype) * copies
    hourly = np.array([np.nan if c.usd_per_hour is None else c.usd_per_hour for c in chip_list])
    usd = price.usd_for(hourly[:, None], seconds, n_chips) / batch * 1e6
    fields = {"batches": b.copy(), "seconds": seconds, "tokens_per_second": batch / seconds,
              "compute_bound": np.stack([t.compute_seconds >= t.memory_seconds
                                         for t in timings]),
              "fits": need[None, :] <= hbm, "usd_per_million_tokens": usd}
    for array in fields.values():
        array.flags.writeable = False  # a frozen result: its arrays are read-only too
    return DecodeSweep(model=m.name, chips=tuple(c.name for c in chip_list), n_chips=n_chips,
                       context_tokens=context, **fields)


def kv_cache_bytes(model: str | models.Model, batch: int, context_tokens: int,
                   dtype: DType = "bf16") -> float:
    """Bytes of KV cache for ``batch`` sequences of ``context_tokens`` (see Transformer)."""
    return tensor_parallel.transformer(model).kv_cache_bytes(batch, context_tokens, dtype)


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


__all__ = ["ATTENTION_MASKS", "COST_CURVE_BATCHES", "CostCurve", "DecodeSweep", "InferenceResult", "KV_CACHE_SPLITS", "MAX_BATCH",
           "MAX_CONTEXT", "best_batch", "check_formats", "compute_bound_batch", "cost_curve", "decode_step",
           "decode_sweep", "kv_cache_bytes", "kv_cache_copies", "max_batch",
           "overhead_per_operation", "prefill", "tensor_parallel_sizes"]
