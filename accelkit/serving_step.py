"""A serving step's operations and its time: the rule :mod:`accelkit.inference` prices every
prefill and decode step by (and :mod:`accelkit.capacity` every step of a plan).

    >>> import accelkit as ak
    >>> from accelkit import serving_step
    >>> m, chip = ak.models.get("llama-3-8b"), ak.chips.get("H100")
    >>> group = serving_step.decode_group(m, chip, 1, 2048, ("bf16", "bf16", "bf16"),
    ...                                   ("causal", True, True), "even", 0.0)
    >>> float(group.timing(8)[2].seconds) == ak.inference.decode_step(m, chip, 1, 8, 2048).seconds
    True

Each operation (:mod:`accelkit.models` counts its FLOPs and bytes) costs its roofline time, the
longest of its compute time, its memory time and, with ``overhead``, the fixed per-operation
cost; the operations of a step run one after another, and the tensor-parallel collectives
(:mod:`accelkit.tensor_parallel`) wait for them: :func:`timing`, with every combination through
:func:`accelkit.roofline.times`. A decode step's FLOPs and bytes are lines in the batch for a
dense model, so a :class:`DecodeGroup` evaluates what every batch shares once and prices many
batches at the cost of the arithmetic (the searches over batches, the widgets' sweeps).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from accelkit import chips, models, roofline, tensor_parallel
from accelkit.dtypes import DType


def operation_arrays(m: models.Transformer, batch: int, tokens: int, context: int, phase: str,
                     weight_dtype: DType, kv_dtype: DType, mask: str, softmax: bool,
                     kv_write: bool, copies: int = 1
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-operation FLOPs, bytes, attention flags and kernel counts of a prefill or decode
    step under the attention options, for a group holding ``copies`` of the KV cache.

    :mod:`accelkit.models` counts causal pairs, the softmax and the cache write; each option
    rescales or removes that part of the attention operation (module docstring); each extra
    copy of the cache is read and written again.
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
    counts = np.array([op.count for op in ops], dtype=float)
    causal_pairs = batch * (tokens * context + tokens * (tokens + 1) / 2.0)
    pairs = batch * tokens * (context + tokens) if mask == "full" else causal_pairs
    per_pair = m.attention_matmul_flops_per_pair + (5.0 if softmax else 0.0)
    flops[is_attention] = m.layers * m.heads * per_pair * pairs
    per_token = m.kv_cache_bytes_per_token(kv_dtype)
    if not kv_write:  # the cache holds what one token leaves behind, in every layer
        moved[is_attention] -= batch * tokens * per_token
    if copies > 1:  # every copy of the cache is read, and written
        cache = batch * (context + tokens) * per_token + (batch * tokens * per_token
                                                          if kv_write else 0.0)
        moved[is_attention] += (copies - 1) * cache
    return flops, moved, is_attention, counts


def decode_line(m: models.Transformer, context: int, weight_dtype: DType, kv_dtype: DType,
                mask: str = "causal", softmax: bool = True, kv_write: bool = True,
                copies: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-operation decode FLOPs and bytes as ``f0 + f1·batch`` and ``b0 + b1·batch``.

    Every decode operation of a dense model is affine in the batch (weights are read once,
    everything else scales with the number of sequences), so two evaluations give the exact
    line; a mixture of experts is not (:func:`affine`).
    """
    fl1, by1, _, _ = operation_arrays(m, 1, 1, context, "decode", weight_dtype, kv_dtype,
                                      mask, softmax, kv_write, copies)
    fl2, by2, _, _ = operation_arrays(m, 2, 1, context, "decode", weight_dtype, kv_dtype,
                                      mask, softmax, kv_write, copies)
    f1, b1 = fl2 - fl1, by2 - by1
    return fl1 - f1, f1, by1 - b1, b1


def affine(model: models.Transformer) -> bool:
    """Whether a decode step's FLOPs and bytes are affine in the batch. A mixture of experts's
    are not: the experts whose weights a step reads grow with the batch as
    ``n_experts · (1 - (1 - k/n_experts)^batch)`` (:mod:`accelkit.models`)."""
    return not isinstance(model, models.MoETransformer)


def chip_rates(chip: chips.Chip, n_chips: int, compute_dtype: DType) -> tuple[float, float, float]:
    """A group's pooled peak FLOP/s (in ``compute_dtype``), HBM bytes/s and HBM bytes."""
    bandwidth = chip.require("hbm_bytes_per_second")
    hbm = float(chip.require("hbm_bytes"))
    return n_chips * chip.peak_flops(compute_dtype), n_chips * bandwidth, n_chips * hbm


class Timing(NamedTuple):
    """A step's times (floats for one step, arrays over batches for a sweep)."""

    compute_seconds: float | np.ndarray   # every operation's FLOPs at peak, summed
    memory_seconds: float | np.ndarray    # every operation's bytes at full bandwidth, summed
    device_seconds: float | np.ndarray    # each operation's roofline time, summed
    kernel_seconds: float | np.ndarray    # the same, each at least the per-operation cost
    fixed_seconds: float                  # every kernel's per-operation cost, summed
    communication_seconds: float | np.ndarray
    seconds: float | np.ndarray
    n_operations: int                     # kernels in the step (one per operation occurrence)


def timing(flops: np.ndarray, moved: np.ndarray, counts: np.ndarray, peak: float,
            bandwidth: float, per_op_overhead: float,
            communication: float | np.ndarray) -> Timing:
    """A step's time from its operations' FLOPs and bytes (one row per operation; columns, if
    any, are batches): the rule every step here is priced by."""
    # Each operation: its arithmetic and its memory traffic overlap (the roofline), and each
    # occurrence's launch overlaps the previous kernel's run, so it costs at least the fixed
    # per-operation cost (roofline.operations_time's rule; on a TP group every chip launches
    # every kernel). The operations run one after another: their times add.
    fixed = (counts * per_op_overhead).reshape((-1,) + (1,) * (flops.ndim - 1)) \
        if per_op_overhead else 0.0
    launched = roofline.times(compute_seconds=flops / peak, memory_seconds=moved / bandwidth,
                              overhead_seconds=fixed, overlap=True)
    kernels = np.asarray(launched.seconds).sum(axis=0)
    device = kernels if not per_op_overhead else np.asarray(roofline.times(
        compute_seconds=launched.compute_seconds, memory_seconds=launched.memory_seconds,
        overlap=True).seconds).sum(axis=0)
    # The tensor-parallel collectives wait for the layer's result: on the critical path.
    seconds = roofline.times(compute_seconds=kernels, communication_seconds=communication,
                             overlap=False).seconds
    return Timing(np.asarray(launched.compute_seconds).sum(axis=0),
                   np.asarray(launched.memory_seconds).sum(axis=0),
                   device, kernels, float(counts.sum()) * per_op_overhead, communication,
                   seconds, int(counts.sum()))


@lru_cache(maxsize=256)
def decode_shape(m: models.Transformer, context: int, weight_dtype: DType, kv_dtype: DType,
                 conventions: tuple[str, bool, bool], copies: int
                 ) -> tuple[tuple[np.ndarray, ...] | None, np.ndarray, np.ndarray]:
    """What a decode step's operations are, whatever the batch and the chip: their FLOPs and
    bytes as lines in the batch (None for a mixture of experts), which are attention, and how
    many kernels each runs. Arrays read-only.

    Cached: the decision lab (``benchmarks/bench_widgets.py decision_explorer``) prices a
    capacity plan for each of its chips on every move, each plan searching several group sizes
    of the same model and context, and would read the operations again for each (three
    evaluations of the model): its precision control measured 25-34 ms CPU per move without
    this cache and about 20 ms with it, against the 50 ms budget, on the 2-core machine.
    """
    _, _, is_attention, counts = operation_arrays(m, 1, 1, context, "decode", weight_dtype,
                                                  kv_dtype, *conventions, copies)
    line = (decode_line(m, context, weight_dtype, kv_dtype, *conventions, copies=copies)
            if affine(m) else None)
    for array in (is_attention, counts, *(line or ())):
        array.flags.writeable = False
    return line, is_attention, counts


@dataclass(frozen=True)
class DecodeGroup:
    """The decode step of one model on one tensor-parallel group at one context, less the
    batch: what every batch shares, taken once (the FLOPs and bytes as lines in the batch for a
    dense model, the rates, the collectives as a line in the tokens), so a search over batches
    prices each by :func:`timing`, as :func:`accelkit.inference.decode_step` does, at the cost
    of the arithmetic."""

    m: models.Transformer
    chip: chips.Chip
    n_chips: int
    context: int
    formats: tuple[DType, DType, DType]    # weights, KV cache, arithmetic
    conventions: tuple[str, bool, bool]    # attention_mask, softmax_flops, kv_write
    split: str
    per_op_overhead: float
    line: tuple[np.ndarray, ...] | None    # f0, f1, b0, b1 (None: a mixture of experts)
    is_attention: np.ndarray
    counts: np.ndarray
    communication: tuple[float, float]     # seconds for one new token, and for each further one
    network: str
    rates: tuple[float, float, float]      # the group's peak FLOP/s, HBM bytes/s and HBM bytes

    def arrays(self, batch: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-operation FLOPs and bytes at ``batch`` (an array of batches: one column each)."""
        if self.line is not None:
            f0, f1, b0, b1 = self.line
            if isinstance(batch, np.ndarray):
                return f0[:, None] + f1[:, None] * batch, b0[:, None] + b1[:, None] * batch
            return f0 + f1 * batch, b0 + b1 * batch
        weight, kv, _ = self.formats
        copies = tensor_parallel.copies(self.m, self.n_chips, self.split)
        pairs = [operation_arrays(self.m, int(b), 1, self.context, "decode", weight, kv,
                                  *self.conventions, copies)[:2]
                 for b in np.atleast_1d(batch)]
        if not np.ndim(batch):
            return pairs[0]
        return np.stack([f for f, _ in pairs], axis=1), np.stack([y for _, y in pairs], axis=1)

    def timing(self, batch: int | np.ndarray,
               arrays: tuple[np.ndarray, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray, Timing]:
        """FLOPs, bytes and the :class:`Timing` of the step at ``batch`` (``arrays``: its
        :meth:`arrays`, if already in hand)."""
        flops, moved = self.arrays(batch) if arrays is None else arrays
        peak, bandwidth, _ = self.rates
        one, further = self.communication
        communication = one + further * (batch - 1.0)  # a float, or one per batch
        return flops, moved, timing(flops, moved, self.counts, peak, bandwidth,
                                    self.per_op_overhead, communication)


def decode_group(m: models.Transformer, chip: chips.Chip, n_chips: int, context: int,
                 formats: tuple[DType, DType, DType], conventions: tuple[str, bool, bool],
                 split: str, per_op_overhead: float) -> DecodeGroup:
    """The :class:`DecodeGroup` of checked arguments (the group itself checked here)."""
    tensor_parallel.check_group(m, chip, n_chips, split)
    weight, kv, _ = formats
    line, is_attention, counts = decode_shape(m, context, weight, kv, conventions,
                                              tensor_parallel.copies(m, n_chips, split))
    one, network = tensor_parallel.communication_seconds(m, chip, n_chips, 1.0, weight)
    two, _ = tensor_parallel.communication_seconds(m, chip, n_chips, 2.0, weight)
    return DecodeGroup(m, chip, n_chips, context, formats, conventions, split, per_op_overhead,
                       line, is_attention, counts, (one, two - one), network,
                       chip_rates(chip, n_chips, formats[2]))


__all__ = ["DecodeGroup", "Timing", "affine", "chip_rates", "decode_group", "decode_line",
           "decode_shape", "operation_arrays", "timing"]
