"""A static batch's decode step on one tensor-parallel group, less the batch: what every batch
shares, taken once, so a search over batches prices each by :func:`accelkit.serving_step.timing`
at the cost of the arithmetic (:mod:`accelkit.inference`'s decode steps and batch searches).

    >>> import accelkit as ak
    >>> from accelkit import serving_decode
    >>> m, chip = ak.models.get("llama-3-8b"), ak.chips.get("H100")
    >>> group = serving_decode.decode_group(m, chip, 1, 2048, ("bf16", "bf16", "bf16"),
    ...                                     ("causal", True, True), "even", 0.0)
    >>> float(group.timing(8)[2].seconds) == ak.inference.decode_step(m, chip, 1, 8, 2048).seconds
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from accelkit import chips, models, tensor_parallel
from accelkit.dtypes import DType
from accelkit.serving_step import (Timing, affine, check_tp_overlap, chip_rates, decode_line,
                                   operation_arrays, timing)

__all__ = ["DecodeGroup", "decode_group", "decode_shape"]


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
    tp_overlap: bool = False               # the collectives behind the kernels (TP_OVERLAP)

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
                                    self.per_op_overhead, communication, self.tp_overlap)


def decode_group(m: models.Transformer, chip: chips.Chip, n_chips: int, context: int,
                 formats: tuple[DType, DType, DType], conventions: tuple[str, bool, bool],
                 split: str, per_op_overhead: float, tp_overlap: bool = False) -> DecodeGroup:
    """The :class:`DecodeGroup` of checked arguments (the group itself checked here);
    ``tp_overlap`` as :data:`TP_OVERLAP`."""
    tensor_parallel.check_group(m, chip, n_chips, split)
    weight, kv, _ = formats
    line, is_attention, counts = decode_shape(m, context, weight, kv, conventions,
                                              tensor_parallel.copies(m, n_chips, split))
    one, network = tensor_parallel.communication_seconds(m, chip, n_chips, 1.0, weight)
    two, _ = tensor_parallel.communication_seconds(m, chip, n_chips, 2.0, weight)
    return DecodeGroup(m, chip, n_chips, context, formats, conventions, split, per_op_overhead,
                       line, is_attention, counts, (one, two - one), network,
                       chip_rates(chip, n_chips, formats[2]), check_tp_overlap(tp_overlap))
