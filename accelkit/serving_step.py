"""A serving step's operations and its time: the rule :mod:`accelkit.inference` prices every
prefill and decode step by (and :mod:`accelkit.capacity` every step of a plan).

    >>> import accelkit as ak
    >>> from accelkit import serving_step
    >>> m, chip = ak.models.get("llama-3-8b"), ak.chips.get("H100")
    >>> flops, moved, _, counts = serving_step.operation_arrays(
    ...     m, 8, 1, 2048, "decode", "bf16", "bf16", "causal", True, True, 1)
    >>> t = serving_step.timing(flops, moved, counts, *serving_step.chip_rates(chip, 1, "bf16")[:2],
    ...                         0.0, 0.0)
    >>> float(t.seconds) == ak.inference.decode_step(m, chip, 1, 8, 2048).seconds
    True

Each operation (:mod:`accelkit.models` counts its FLOPs and bytes) costs its roofline time, the
longest of its compute time, its memory time and, with ``overhead``, the fixed per-operation
cost; the operations of a step run one after another, and the tensor-parallel collectives
(:mod:`accelkit.tensor_parallel`) wait for them: :func:`timing`, with every combination through
:func:`accelkit.roofline.times`. A decode step's FLOPs and bytes are lines in the batch for a
dense model, so :class:`accelkit.serving_decode.DecodeGroup` evaluates what every batch shares
once and prices many batches at the cost of the arithmetic (the searches over batches, the
widgets' sweeps); an :class:`IterationGroup` does the same for continuous batching's mixed
iterations.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from accelkit import (chips, collectives, models, roofline, run_sums, serving_kernels,
                      tensor_parallel)
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


#: The ceilings a step is priced at: the datasheet's peaks, or what kernels measurably reach
#: (:meth:`accelkit.chips.Chip.achievable_flops`, ``achievable_hbm_bytes_per_second`` and, for
#: the collectives, :func:`accelkit.collectives.at_bandwidth`; each with its source), or
#: ``"kernels"`` (continuous batching's iterations only, :func:`iteration_group`): the
#: achievable ceilings with the layers' matmuls at the tile/wave efficiency of their shape
#: per tensor-parallel shard (:func:`accelkit.mfu.matmul_efficiency`, the model training is
#: priced by), which falls for the skinny matmuls of small iterations, and what Vidur's
#: measured H100 profiles add (:mod:`accelkit.serving_kernels`: the sustained matmul share and
#: the norms' and activations' measured bandwidths training's kernels are priced by
#: (:mod:`accelkit.calibration`), a kernel floor, norms and residuals on every rank, the
#: all-reduces at NCCL's measured time for their size, the curve training's are priced by).
#: The
#: language-model head and attention stay at the flat achievable ceiling. The tile is one
#: (CUTLASS's 128×256 on NVIDIA, the MXU on TPU): cuBLAS picks smaller tiles or splits K for a
#: few tokens, so for iterations of tens of tokens this prices the matmuls high (measured:
#: 1.7x at 128 tokens or fewer, benchmarks/serving_ops_vs_vidur.py).
CEILINGS = ("datasheet", "achievable", "kernels")

#: ``tp_overlap``, the serving step's one overlap choice (the training step's name for it,
#: :attr:`accelkit.frameworks.Framework.tp_overlap`): ``False`` (default), the group's
#: all-reduces wait for each layer's result and add to the step (TensorRT-LLM's and vLLM's
#: decode: a layer's all-reduce needs its output); ``True``, they run behind the step's kernels
#: (XLA's collective matmul and async collectives, Transformer Engine's userbuffers; the scaling
#: book's serving derivations, applied-inference.md: they "can be overlapped"). Both through
#: :func:`accelkit.roofline.times`.
TP_OVERLAP = (False, True)


def check_tp_overlap(tp_overlap: object) -> bool:
    """``tp_overlap`` checked: True or False (:data:`TP_OVERLAP`)."""
    if not isinstance(tp_overlap, bool):
        raise TypeError(f"tp_overlap must be True (tensor-parallel all-reduces behind the "
                        f"kernels) or False (on the critical path), got "
                        f"{type(tp_overlap).__name__} {tp_overlap!r}")
    return tp_overlap


def chip_rates(chip: chips.Chip, n_chips: int, compute_dtype: DType,
               ceilings: str = "datasheet") -> tuple[float, float, float]:
    """A group's pooled peak FLOP/s (in ``compute_dtype``), HBM bytes/s and HBM bytes: the
    datasheet's, or with ``ceilings="achievable"`` the measured matmul and HBM ceilings."""
    hbm = float(chip.require("hbm_bytes"))
    if ceilings in ("achievable", "kernels"):
        return (n_chips * chip.achievable_flops(compute_dtype),
                n_chips * chip.achievable_hbm_bytes_per_second, n_chips * hbm)
    if ceilings != "datasheet":
        raise ValueError(f"ceilings must be one of {CEILINGS}, got {ceilings!r}")
    bandwidth = chip.require("hbm_bytes_per_second")
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


def timing(flops: np.ndarray, moved: np.ndarray, counts: np.ndarray,
            peak: float | np.ndarray, bandwidth: float, per_op_overhead: float,
            communication: float | np.ndarray, tp_overlap: bool = False,
            iteration_seconds: float = 0.0) -> Timing:
    """A step's time from its operations' FLOPs and bytes (one row per operation; columns, if
    any, are batches): the rule every step here is priced by. ``tp_overlap`` (:data:`TP_OVERLAP`
    says what each choice means) hides the tensor-parallel collectives behind the kernels;
    ``iteration_seconds``, a runtime's fixed cost per step, adds to the kernels' side."""
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
    kernels = kernels + iteration_seconds
    # The tensor-parallel collectives wait for the layer's result (on the critical path), or,
    # with tp_overlap, run behind the kernels as a framework that overlaps them does.
    seconds = roofline.times(compute_seconds=kernels, communication_seconds=communication,
                             overlap=tp_overlap).seconds
    return Timing(np.asarray(launched.compute_seconds).sum(axis=0),
                   np.asarray(launched.memory_seconds).sum(axis=0),
                   device, kernels, float(counts.sum()) * per_op_overhead, communication,
                   seconds, int(counts.sum()))


# -- one iteration of continuous batching ---------------------------------------------------

def _pairs(mask: str, tokens: float, context: float) -> float:
    """Attention pairs of one sequence, as :func:`operation_arrays` counts them."""
    if mask == "full":
        return tokens * (context + tokens)
    return tokens * context + tokens * (tokens + 1) / 2.0


@dataclass(frozen=True)
class IterationGroup:
    """One iteration of a continuous-batching server on one tensor-parallel group: any mix of
    decode tokens and prefill chunks of sequences at different contexts, priced by the same
    per-operation rule as :func:`accelkit.inference.decode_step` and
    :func:`accelkit.inference.prefill` (:func:`timing`).

    An iteration is described by four totals over its sequences (each sequence contributing
    ``t`` new tokens after ``c`` cached ones): ``tokens`` (all new tokens, Σ t), ``logits`` (the
    rows the language-model head scores: one per decode token, one per sequence whose prompt
    ends in this iteration), ``pairs`` (attention's (query, key) pairs, :meth:`pairs` of each
    sequence) and ``reads`` (cached and new tokens attention reads, Σ (c + t)). Weights are read
    once per iteration, each sequence's KV cache once, attention is paid per sequence. Every
    operation's FLOPs and bytes are, exactly, a decode step's at context 0 with ``tokens``
    sequences, plus lines in the other three totals; the lines are taken from the library's own
    operation counts (:func:`operation_arrays`) by exact differences, so a decode step of
    ``batch`` sequences at context ``c`` (``tokens = logits = batch``, ``pairs = reads =
    batch·(c + 1)``) and a prefill of ``batch`` prompts of ``t`` tokens (``tokens = batch·t``,
    ``logits = batch``, ``pairs = batch·`` :meth:`pairs` ``(t, 0)``, ``reads = batch·t``) are
    priced as those two functions price them (tests/test_serving_step.py). A mixture of experts
    reads the experts its tokens are routed to, which is not a line in the tokens: its
    per-token part is evaluated for each token count (and kept).

    :meth:`seconds` evaluates the rule for one iteration cheaply (what a simulator calls once
    per iteration); :meth:`decode_run_seconds` sums it over consecutive pure-decode iterations
    in closed form, so a simulator skips through them. Both equal :meth:`timing`'s seconds.
    """

    m: models.Transformer
    chip: chips.Chip
    n_chips: int
    formats: tuple[DType, DType, DType]    # weights, KV cache, arithmetic
    conventions: tuple[str, bool, bool]    # attention_mask, softmax_flops, kv_write
    split: str
    per_op_overhead: float
    line: tuple[np.ndarray, ...] | None    # f0, f1, b0, b1 of the token part (None: MoE)
    per_logit: tuple[np.ndarray, np.ndarray]
    per_pair: tuple[np.ndarray, np.ndarray]
    per_read: tuple[np.ndarray, np.ndarray]
    counts: np.ndarray
    is_attention: np.ndarray
    communication: tuple[float, float]     # line: one new token, each further (measured_reduces apart)
    network: str
    rates: tuple[float, float, float]      # the group's peak FLOP/s, HBM bytes/s and HBM bytes
    tp_overlap: bool = False               # the collectives behind the kernels (TP_OVERLAP)
    # ceilings="kernels": each matmul priced by its shape (serving_kernels.Shaped)
    shaped: tuple[serving_kernels.Shaped, ...] = ()
    iteration_seconds: float = 0.0         # the runtime's fixed cost per iteration
    replicated: np.ndarray | None = field(default=None, compare=False)  # "kernels": copies
    # "kernels": each operation's bytes weight (copies over its measured bandwidth share)
    byte_weights: np.ndarray | None = field(default=None, compare=False)
    # "kernels": the all-reduces at NCCL's measured curve, (how many, bytes per new token),
    # apart from ``communication``'s line (serving_kernels.communication)
    measured_reduces: tuple[int, float] | None = None
    _parts: dict = field(default_factory=dict, compare=False, repr=False)

    def peaks(self, tokens: float | np.ndarray) -> float | np.ndarray:
        """The FLOP/s each operation runs at in an iteration of ``tokens`` new tokens (an array
        of counts: one column each): the group's peak, times the tile/wave efficiency of its
        shape for the :data:`accelkit.serving_kernels.SHAPED_MATMULS` under ``ceilings="kernels"``."""
        peak = self.rates[0]
        if not self.shaped:
            return peak
        return peak * serving_kernels.efficiencies(self.chip, self.formats[2], self.shaped,
                                                   len(self.counts), tokens)

    def collectives_seconds(self, tokens: float | np.ndarray) -> float | np.ndarray:
        """The iteration's collectives at ``tokens`` new tokens (an array of counts: one each):
        the line :attr:`communication`, plus under ``ceilings="kernels"`` the all-reduces at
        NCCL's measured time for their size (:func:`accelkit.serving_kernels.communication`)."""
        one, further = self.communication
        line = one + further * (tokens - 1.0)
        if self.measured_reduces is None:
            return line
        count, per_token = self.measured_reduces
        return line + count * serving_kernels.all_reduce_seconds(
            self.chip, tokens * per_token, self.n_chips)

    def pairs(self, tokens: float, context: float) -> float:
        """Attention's (query, key) pairs of one sequence adding ``tokens`` after ``context``
        cached ones, under the group's mask (as :func:`operation_arrays` counts them)."""
        return _pairs(self.conventions[0], tokens, context)

    def _token_part(self, tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """A decode step's FLOPs and bytes at context 0 with ``tokens`` sequences."""
        if self.line is not None:
            f0, f1, b0, b1 = self.line
            return f0 + f1 * tokens, b0 + b1 * tokens
        weight, kv, _ = self.formats
        copies = tensor_parallel.copies(self.m, self.n_chips, self.split)
        flops, moved, _, _ = operation_arrays(self.m, int(tokens), 1, 0, "decode", weight, kv,
                                              *self.conventions, copies)
        rep = 1.0 if self.replicated is None else self.replicated
        weights = rep if self.byte_weights is None else self.byte_weights
        return flops * rep, moved * weights

    def arrays(self, tokens: int, logits: float, pairs: float, reads: float
               ) -> tuple[np.ndarray, np.ndarray]:
        """Per-operation FLOPs and bytes of an iteration with these totals (``tokens`` >= 1)."""
        flops, moved = self._token_part(tokens)
        extra = ((logits - tokens, self.per_logit), (pairs - tokens, self.per_pair),
                 (reads - tokens, self.per_read))
        for amount, (f, b) in extra:
            flops, moved = flops + amount * f, moved + amount * b
        return flops, moved

    def timing(self, tokens: int, logits: float, pairs: float, reads: float) -> Timing:
        """The iteration's :class:`Timing` by :func:`timing`, the rule every step is priced by."""
        flops, moved = self.arrays(tokens, logits, pairs, reads)
        _, bandwidth, _ = self.rates
        return timing(flops, moved, self.counts, self.peaks(tokens), bandwidth,
                      self.per_op_overhead, self.collectives_seconds(float(tokens)),
                      self.tp_overlap, self.iteration_seconds)

    def seconds_many(self, tokens: np.ndarray, logits: np.ndarray, pairs: np.ndarray,
                     reads: np.ndarray) -> np.ndarray:
        """:meth:`timing`'s seconds of many iterations at once (one per entry of the four
        arrays of totals): one vectorised evaluation of :func:`timing` for a dense model
        (estimates over many batches, :mod:`accelkit.serving.steady`), :meth:`seconds` one
        by one for a mixture of experts."""
        tokens, logits, pairs, reads = (np.asarray(a, dtype=float)
                                        for a in (tokens, logits, pairs, reads))
        if self.line is None:
            return np.array([self.seconds(int(t), lo, p, r)
                             for t, lo, p, r in zip(tokens, logits, pairs, reads)])
        f0, f1, b0, b1 = self.line
        flops = f0[:, None] + f1[:, None] * tokens
        moved = b0[:, None] + b1[:, None] * tokens
        for amount, (f, b) in ((logits - tokens, self.per_logit), (pairs - tokens, self.per_pair),
                               (reads - tokens, self.per_read)):
            flops = flops + f[:, None] * amount
            moved = moved + b[:, None] * amount
        _, bandwidth, _ = self.rates
        return np.asarray(timing(flops, moved, self.counts, self.peaks(tokens), bandwidth,
                                 self.per_op_overhead, self.collectives_seconds(tokens),
                                 self.tp_overlap, self.iteration_seconds).seconds)

    # -- the same rule, fast: what a simulator calls per iteration ---------------------------

    def _varies(self) -> np.ndarray:
        """The operations whose FLOPs or bytes depend on more than the token count."""
        return np.any([self.per_logit[0], self.per_logit[1], self.per_pair[0],
                       self.per_pair[1], self.per_read[0], self.per_read[1]], axis=0) != 0

    def _chunk(self, index: int) -> tuple[list[float], list[tuple[list[float], list[float]]],
                                          list[float]]:
        """For token counts ``index·CHUNK`` to ``(index + 1)·CHUNK - 1``: the seconds of the
        operations that depend on the token count alone, with the collectives unless they are
        overlapped (the rule of :func:`timing`, one vectorised call), for each other operation
        its compute and
        memory seconds at the token part less its lines in the other totals, and the
        collectives' seconds (kept)."""
        found = self._parts.get(index)
        if found is not None:
            return found
        tokens = np.arange(index * _CHUNK, (index + 1) * _CHUNK, dtype=float)
        if self.line is not None:
            f0, f1, b0, b1 = self.line
            flops = f0[:, None] + f1[:, None] * tokens
            moved = b0[:, None] + b1[:, None] * tokens
        else:  # a mixture of experts: per count until every expert is read, then a line
            saturated, (f0, f1, b0, b1) = self._moe_line()
            flops = f0[:, None] + f1[:, None] * tokens
            moved = b0[:, None] + b1[:, None] * tokens
            for j in np.flatnonzero(tokens < saturated):
                flops[:, j], moved[:, j] = self._token_part(max(1, int(tokens[j])))
        varies = self._varies()
        peak, bandwidth, _ = self.rates
        fixed = self.counts * self.per_op_overhead
        shaped = self.peaks(tokens)      # the varying operations are never shaped
        rest = roofline.times(compute_seconds=flops[~varies] / (
                                  shaped[~varies] if isinstance(shaped, np.ndarray) else peak),
                              memory_seconds=moved[~varies] / bandwidth,
                              overhead_seconds=fixed[~varies][:, None], overlap=True)
        comm = np.asarray(self.collectives_seconds(tokens))
        base = np.asarray(rest.seconds).sum(axis=0) + self.iteration_seconds
        if not self.tp_overlap:   # on the critical path: a part of every iteration's sum
            base = base + comm
        others = []
        for i in np.flatnonzero(varies):
            slope_f = self.per_logit[0][i] + self.per_pair[0][i] + self.per_read[0][i]
            slope_b = self.per_logit[1][i] + self.per_pair[1][i] + self.per_read[1][i]
            others.append((((flops[i] - tokens * slope_f) / peak).tolist(),
                           ((moved[i] - tokens * slope_b) / bandwidth).tolist()))
        if len(self._parts) > 4096:
            self._parts.clear()
        # kept as Python floats: a simulator reads one entry per iteration
        self._parts[index] = found = (base.tolist(), others, comm.tolist())
        return found

    def _moe_line(self) -> tuple[int, tuple[np.ndarray, ...]]:
        """A mixture of experts reads ``n_experts·(1 - (1 - k/n_experts)^tokens)`` experts per
        layer (:mod:`accelkit.transformer`): past the count where the missed fraction is below
        2^-60, far under a float's resolution, every expert is read and the token part is a
        line again. That count, and the line (kept)."""
        found = self._parts.get("moe")
        if found is None:
            m = self.m
            assert isinstance(m, models.MoETransformer)
            share = m.experts_per_token / m.n_experts
            saturated = 1 if share >= 1 else math.ceil(-60 * math.log(2) / math.log1p(-share))
            one, two = self._token_part(saturated), self._token_part(saturated + 1)
            f1, b1 = two[0] - one[0], two[1] - one[1]
            found = (saturated, (one[0] - saturated * f1, f1, one[1] - saturated * b1, b1))
            self._parts["moe"] = found
        return found

    def _slopes(self) -> list[tuple[float, ...]]:
        """For each operation of :meth:`_chunk`'s others: compute seconds per logit row, pair
        and read; memory seconds per logit row, pair and read; and its fixed cost (kept)."""
        found = self._parts.get("slopes")
        if found is None:
            peak, bandwidth, _ = self.rates
            found = [(float(self.per_logit[0][i]) / peak, float(self.per_pair[0][i]) / peak,
                      float(self.per_read[0][i]) / peak, float(self.per_logit[1][i]) / bandwidth,
                      float(self.per_pair[1][i]) / bandwidth,
                      float(self.per_read[1][i]) / bandwidth,
                      float(self.counts[i]) * self.per_op_overhead)
                     for i in np.flatnonzero(self._varies())]
            self._parts["slopes"] = found
        return found

    def _at(self, tokens: int) -> tuple[float, list[tuple[float, float]], float]:
        base, others, comm = self._chunk(tokens // _CHUNK)
        j = tokens % _CHUNK
        return base[j], [(c[j], m[j]) for c, m in others], comm[j]

    def seconds(self, tokens: int, logits: float, pairs: float, reads: float) -> float:
        """The iteration's seconds, as :meth:`timing` gives them (the same rule: what depends
        on the token count alone is evaluated for many counts at once and kept)."""
        bases, others, comm = self._chunk(tokens // _CHUNK)
        j = tokens % _CHUNK
        total = bases[j]
        for (cs, ms), (cl, cp, cr, ml, mp, mr, fixed) in zip(others, self._slopes()):
            total += max(cs[j] + cl * logits + cp * pairs + cr * reads,
                         ms[j] + ml * logits + mp * pairs + mr * reads, fixed)
        if self.tp_overlap:   # the collectives behind the kernels: :func:`timing`'s rule
            return float(roofline.times(compute_seconds=total, communication_seconds=comm[j],
                                        overlap=True).seconds)
        return total

    def _run_lines(self, batch: int, pairs: float, reads: float
                   ) -> tuple[float, list[tuple[float, float, float, float, float]]]:
        """A pure-decode run: the seconds every iteration shares, and per other operation its
        compute and memory seconds as lines in the iteration index, and its fixed cost."""
        bases, others, _ = self._chunk(batch // _CHUNK)
        j = batch % _CHUNK
        base = bases[j]
        lines = []
        for (cs, ms), (cl, cp, cr, ml, mp, mr, fixed) in zip(others, self._slopes()):
            c0 = cs[j] + cl * batch + cp * pairs + cr * reads
            m0 = ms[j] + ml * batch + mp * pairs + mr * reads
            c1, m1 = (cp + cr) * batch, (mp + mr) * batch
            if c1 == 0.0 and m1 == 0.0:
                base += max(c0, m0, fixed)   # the same every iteration
            else:
                lines.append((c0, c1, m0, m1, fixed))
        return base, lines

    def decode_run_seconds(self, batch: int, pairs: float, reads: float, start: int,
                           stop: int) -> float:
        """Seconds of iterations ``start`` to ``stop - 1`` (counted from 0) of a run of pure
        decode iterations of ``batch`` tokens whose first iteration has ``pairs`` and
        ``reads``: every sequence's context grows by one token an iteration, so each total
        grows by ``batch``. Exactly the sum of :meth:`seconds` over those iterations, in closed
        form."""
        if stop <= start:
            return 0.0
        base, lines = self._run_lines(batch, pairs, reads)
        if self.tp_overlap:
            return run_sums.overlapped_sum(base, lines, self._at(batch)[2], start, stop)
        return base * (stop - start) + sum(run_sums.sum_max(*line, start, stop) for line in lines)

    def run_seconds(self, tokens: int, logits: float, pairs: float, reads: float,
                    pairs_step: float, reads_step: float, steps: int) -> float:
        """Seconds of ``steps`` consecutive iterations with ``tokens`` and ``logits`` each,
        whose pairs and reads start at ``pairs`` and ``reads`` and grow by ``pairs_step`` and
        ``reads_step`` an iteration (a prompt's chunks of a fixed size beside a fixed set of
        decodes: :mod:`accelkit.serving.engine`). Exactly the sum of :meth:`seconds` over
        them, in closed form."""
        if steps <= 0:
            return 0.0
        base, others, comm = self._at(tokens)
        lines = [(c0 + cl * logits + cp * pairs + cr * reads, cp * pairs_step + cr * reads_step,
                  m0 + ml * logits + mp * pairs + mr * reads, mp * pairs_step + mr * reads_step,
                  fixed)
                 for (c0, m0), (cl, cp, cr, ml, mp, mr, fixed) in zip(others, self._slopes())]
        if self.tp_overlap:
            return run_sums.overlapped_sum(base, lines, comm, 0, steps)
        total = base * steps
        for line in lines:
            total += run_sums.sum_max(*line, 0, steps)
        return total

    def decode_run_steps(self, batch: int, pairs: float, reads: float, seconds: float,
                         limit: int) -> tuple[int, float]:
        """The fewest iterations (at most ``limit``) of such a run that take at least ``seconds``
        together, and their seconds (``limit`` and its seconds if even those fall short)."""
        base, lines = self._run_lines(batch, pairs, reads)
        comm = self._at(batch)[2] if self.tp_overlap else None

        if comm is not None:
            def total(k: int) -> float:
                return run_sums.overlapped_sum(base, lines, comm, 0, k)
        elif len(lines) == 1:     # the usual case (attention alone grows with the context)
            line = lines[0]

            def total(k: int) -> float:
                return base * k + run_sums.sum_max(*line, 0, k)
        else:
            def total(k: int) -> float:
                return base * k + sum(run_sums.sum_max(*line, 0, k) for line in lines)

        def one(k: int) -> float:   # iteration k's seconds alone
            return run_sums.iteration_seconds(base, lines, comm, k)

        first = one(0)
        if first >= seconds or limit <= 1:
            return (1, first) if limit >= 1 else (0, 0.0)
        # Iterations never get shorter, so the answer lies between seconds over the last
        # iteration's time and seconds over the first's.
        high = min(limit, math.ceil(seconds / first))
        whole = total(high)
        if whole < seconds:
            return high, whole   # only when high == limit
        last = one(high - 1)
        low = max(1, min(high - 1, int(seconds // last)))
        if total(low) >= seconds:
            low = 1
        while high - low > 1:    # total(low) < seconds <= total(high)
            mid = (low + high) // 2
            value = total(mid)
            if value >= seconds:
                high, whole = mid, value
            else:
                low = mid
        return high, whole


#: Token counts priced together by :meth:`IterationGroup.seconds` (one vectorised evaluation).
_CHUNK = 512


@lru_cache(maxsize=256)
def iteration_shape(m: models.Transformer, weight: DType, kv: DType,
                    conventions: tuple[str, bool, bool], copies: int
                    ) -> tuple[tuple[np.ndarray, ...] | None, tuple[np.ndarray, np.ndarray],
                               tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray],
                               np.ndarray, np.ndarray]:
    """What an iteration's operations are, whatever the chip: the token part's lines (None for
    a mixture of experts), the FLOPs and bytes per pair, per read and per logit row, which
    operations are attention and how many kernels each runs (:class:`IterationGroup`). Arrays
    read-only.

    Cached, as :func:`decode_shape`: the decision lab prices fourteen groups of one model and
    format on every move, each of which would read the model's operations nine times (about
    0.5 ms a group).
    """
    def at(batch: int, tokens: int, context: int, phase: str, mask: str | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
        conv = conventions if mask is None else (mask, *conventions[1:])
        flops, moved, _, _ = operation_arrays(m, batch, tokens, context, phase, weight, kv,
                                              *conv, copies)
        return flops, moved

    span, reach = 64, 4096  # a prompt of ``span`` tokens; a context of ``reach``
    # The mask changes only the pairs: full minus causal pairs of one prompt of ``span``.
    full, causal = at(1, span, 0, "prefill", "full"), at(1, span, 0, "prefill", "causal")
    extra_pairs = span * span - span * (span + 1) / 2.0
    per_pair = ((full[0] - causal[0]) / extra_pairs, (full[1] - causal[1]) / extra_pairs)
    # One sequence at ``reach`` cached tokens against none: pairs and reads each grow by reach.
    far, near = at(1, 1, reach, "decode"), at(1, 1, 0, "decode")
    per_read = ((far[0] - near[0]) / reach - per_pair[0], (far[1] - near[1]) / reach - per_pair[1])
    # A prompt of ``span`` tokens against ``span`` one-token sequences: the same tokens, one
    # logit row instead of ``span``, and the prompt's causal pairs instead of one each.
    mine = at(1, span, 0, "prefill")
    theirs = at(span, 1, 0, "decode")
    pairs_gap = _pairs(conventions[0], span, 0) - span
    per_logit = tuple((a - b - pairs_gap * p) / (1 - span)
                      for a, b, p in zip(mine, theirs, per_pair))
    line = None
    if affine(m):
        one, two = at(1, 1, 0, "decode"), at(2, 1, 0, "decode")
        f1, b1 = two[0] - one[0], two[1] - one[1]
        line = (one[0] - f1, f1, one[1] - b1, b1)
    _, _, is_attention, counts = operation_arrays(m, 1, 1, 0, "decode", weight, kv,
                                                  *conventions, copies)
    arrays = [is_attention, counts, *per_pair, *per_read, *per_logit, *(line or ())]
    for array in arrays:
        array.flags.writeable = False
    return line, (per_logit[0], per_logit[1]), per_pair, per_read, is_attention, counts


def iteration_group(m: models.Transformer, chip: chips.Chip, n_chips: int,
                    formats: tuple[DType, DType, DType], conventions: tuple[str, bool, bool],
                    split: str, per_op_overhead: float,
                    ceilings: str = "datasheet", tp_overlap: bool = False,
                    iteration_seconds: float = 0.0) -> IterationGroup:
    """The :class:`IterationGroup` of checked arguments (the group itself checked here), its
    kernels and collectives at ``ceilings`` (:data:`CEILINGS`), the collectives overlapped
    or not (``tp_overlap``, :data:`TP_OVERLAP`), ``iteration_seconds`` a runtime's fixed cost
    per iteration (checked by the caller: :func:`accelkit.serving.simulate`)."""
    tensor_parallel.check_group(m, chip, n_chips, split)
    weight, kv, _ = formats
    copies = tensor_parallel.copies(m, n_chips, split)
    line, per_logit, per_pair, per_read, is_attention, counts = iteration_shape(
        m, weight, kv, conventions, copies)
    rates = chip_rates(chip, n_chips, formats[2], ceilings)
    measured = None
    if ceilings == "kernels":   # measured all-reduces and kernel floor (serving_kernels)
        _, per_op_overhead = serving_kernels.links(chip, n_chips, per_op_overhead)
        comm_one, further, network, measured = serving_kernels.communication(m, chip, n_chips,
                                                                             weight)
    else:
        links = collectives.at_bandwidth(chip, ceilings)
        comm_one, network = tensor_parallel.communication_seconds(m, links, n_chips, 1.0, weight)
        comm_two, _ = tensor_parallel.communication_seconds(m, links, n_chips, 2.0, weight)
        further = comm_two - comm_one
    group = IterationGroup(m, chip, n_chips, formats, conventions, split, per_op_overhead, line,
                           per_logit, per_pair, per_read, counts, is_attention,
                           (comm_one, further), network, rates,
                           check_tp_overlap(tp_overlap), iteration_seconds=iteration_seconds,
                           measured_reduces=measured)
    if ceilings != "kernels":
        return group
    r = serving_kernels.replication(m, n_chips, weight, kv)   # norms, residuals on every rank
    # bytes also over the norms' and activations' measured bandwidth shares (calibration)
    w = serving_kernels.byte_weights(m, chip, n_chips, weight, kv)
    return dataclasses.replace(group, shaped=serving_kernels.shaped_matmuls(
        m, n_chips, weight, kv, np.any([*per_logit, *per_pair, *per_read], axis=0) != 0),
        line=None if line is None else (line[0] * r, line[1] * r, line[2] * w, line[3] * w),
        replicated=r, byte_weights=w,
        per_logit=(per_logit[0] * r, per_logit[1] * w), per_pair=(per_pair[0] * r,
        per_pair[1] * w), per_read=(per_read[0] * r, per_read[1] * w))


__all__ = ["CEILINGS", "TP_OVERLAP", "check_tp_overlap", "IterationGroup", "Timing",
           "affine", "chip_rates", "decode_line",
           "iteration_group", "iteration_shape", "operation_arrays", "timing"]
