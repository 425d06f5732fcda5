"""The roofline: is an operation limited by the chip's arithmetic or by its memory bandwidth?

An operation that does ``flops`` of arithmetic and moves ``bytes`` through memory takes at least
``flops / peak`` seconds to compute and ``bytes / bandwidth`` seconds to move its data. The
roofline estimate is the larger of the two -- the optimistic answer that assumes compute and data
movement overlap perfectly (the scaling book's lower bound; their sum is the upper bound).

That choice, overlapped (the longest part) or not (the sum), is :func:`times`: the one function
every cost model calls to combine compute, memory, communication and overhead times, naming its
choice where it calls it (inference, the parallel layouts, the predicted MFU, training).

Which one wins depends on the operation's arithmetic intensity, FLOPs per byte, against the
chip's ridge point, peak FLOP/s over bytes/s (about 240 FLOPs/byte for a TPU v5e in bf16).

    >>> import accelkit as ak
    >>> r = ak.roofline.matmul("TPU v5e", M=64, N=8192, K=8192)
    >>> r.bound, round(r.arithmetic_intensity)
    ('memory', 63)

The third regime is overhead: a fixed cost per operation that a framework user pays whatever the
operation's size (the kernel launch and the framework's dispatch, a few microseconds in eager
PyTorch; :data:`OVERHEAD_SECONDS` and its source). ``overhead=True`` adds it, and an operation
whose compute and memory times are both shorter is overhead-bound:

    >>> tiny = ak.roofline.matmul("H100", M=1, N=256, K=256, overhead=True)
    >>> tiny.bound, tiny.overhead_seconds
    ('overhead', 7e-06)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypedDict

import numpy as np

from accelkit import _html, _validate, chips, dtypes
from accelkit.dtypes import DType

_Numbers = float | np.ndarray
_Counts = float | Sequence[float] | np.ndarray

#: Fixed cost per operation as a framework user sees it: seconds from the Python call to the
#: kernel running (framework dispatch plus the CUDA kernel launch), for an operation whose own
#: GPU work is negligible. Measured figures, eager PyTorch on NVIDIA GPUs:
#: flagos-ai/FlagGems issue #4812 (2026): tiny-tensor sigmoid/relu/abs/silu/gelu "~7 us eager";
#: pytorch/pytorch issue #41383: "an overhead of ~7 microseconds for the simplest tensor
#: operations" (5 us without autograd); pytorch/pytorch issue #82793: "4 us per op on CUDA";
#: flagos-ai/Torch-FL PR #27 (A100): 8 us per add submitted back to back (17 us with a sync after
#: each). The model uses 7 us; :data:`OVERHEAD_RANGE_SECONDS` keeps the spread. No JAX figure
#: was read: a jitted JAX program dispatches once per program, not once per operation, so this
#: per-operation figure describes eager (op-by-op) execution; under ``jax.jit``,
#: ``torch.compile`` or CUDA graphs the per-kernel cost is lower.
OVERHEAD_SECONDS = 7e-6
#: The measured spread behind :data:`OVERHEAD_SECONDS` (see its sources).
OVERHEAD_RANGE_SECONDS = (4e-6, 8e-6)
OVERHEAD_SOURCE = (
    "eager PyTorch per-operation overhead on NVIDIA GPUs: flagos-ai/FlagGems#4812 (~7 us eager for "
    "tiny elementwise ops); pytorch/pytorch#41383 (~7 us for the simplest tensor operations, 5 us "
    "without autograd); pytorch/pytorch#82793 (4 us per op on CUDA); flagos-ai/Torch-FL#27 (A100, 8 us "
    "per add submitted back to back). Used: 7 us; range 4-8 us")


class Times(NamedTuple):
    """What :func:`times` returns: the parts as given (checked) and their combination, floats
    when every input is a scalar, else arrays (``seconds`` broadcast over the inputs)."""

    compute_seconds: _Numbers
    memory_seconds: _Numbers
    communication_seconds: _Numbers
    overhead_seconds: _Numbers
    seconds: _Numbers                        # the parts combined: max if overlapped, else sum
    exposed_communication_seconds: _Numbers  # what communication adds to the other parts
    overlap: bool


def times(*, compute_seconds: _Counts = 0.0, memory_seconds: _Counts = 0.0,
          communication_seconds: _Counts = 0.0, overhead_seconds: _Counts = 0.0,
          overlap: bool) -> Times:
    """The rule that combines a step's times, written once: overlapped, the longest part;
    not overlapped, their sum.

    ``overlap=True``: the parts run at the same time, ``max(compute, memory, communication,
    overhead)``: arithmetic under data movement (the roofline), a collective prefetched under
    the compute it hides behind, the next kernel's launch under this one's run.
    ``overlap=False``: one after another, the sum. Every cost model calls this and names its
    choice at the call site; parts that overlap in pairs (compute with memory, communication
    on top) are two calls, the first's ``seconds`` the second's ``compute_seconds``.
    ``exposed_communication_seconds`` is what communication adds to the rest:
    ``max(0, communication - max(the others))`` overlapped, all of it otherwise.

    Args:
        compute_seconds, memory_seconds, communication_seconds, overhead_seconds: times at
            the arithmetic's rate, moving data to and from memory, in collectives between
            chips, and the fixed per-operation cost; each finite and >= 0, scalars or arrays
            (broadcast like numpy's: a sweep over operations, layouts or chips is one call).
        overlap: True or False, required: the call says which.

    >>> t = times(compute_seconds=3e-3, memory_seconds=2e-3, communication_seconds=4e-3,
    ...           overlap=True)
    >>> t.seconds, round(t.exposed_communication_seconds, 6)
    (0.004, 0.001)
    >>> times(compute_seconds=3e-3, memory_seconds=2e-3, overlap=False).seconds
    0.005

    Raises:
        TypeError / ValueError: ``overlap`` not a bool, a non-number, a negative or
            non-finite time.
    """
    if not isinstance(overlap, bool):
        raise TypeError(f"overlap must be True (the parts run at the same time) or False (one "
                        f"after another), got {type(overlap).__name__} {overlap!r}")
    compute = _counts("compute_seconds", compute_seconds, positive=False)
    memory = _counts("memory_seconds", memory_seconds, positive=False)
    communication = _counts("communication_seconds", communication_seconds, positive=False)
    overhead = _counts("overhead_seconds", overhead_seconds, positive=False)
    seconds: _Numbers
    exposed: _Numbers
    if (type(compute) is float and type(memory) is float and type(communication) is float
            and type(overhead) is float):
        if overlap:
            rest = max(compute, memory, overhead)
            seconds, exposed = max(rest, communication), max(0.0, communication - rest)
        else:
            seconds, exposed = compute + memory + communication + overhead, communication
    elif overlap:
        longest = np.maximum(np.maximum(compute, memory), overhead)
        seconds = np.maximum(longest, communication)
        exposed = np.maximum(0.0, np.subtract(communication, longest))
    else:
        seconds = np.add(np.add(np.add(compute, memory), communication), overhead)
        exposed = np.add(communication, np.zeros_like(seconds))
    return Times(compute, memory, communication, overhead, seconds, exposed, overlap)


class RooflineTimes(NamedTuple):
    """The roofline of operations from their counts, floats for scalar inputs, arrays for
    array inputs (:func:`times_from_counts`)."""

    compute_seconds: _Numbers  # flops / peak
    memory_seconds: _Numbers   # bytes / bandwidth
    seconds: _Numbers          # max of the two: perfect overlap


def _counts(name: str, value: object, *, positive: bool) -> _Numbers:
    """A scalar (checked by ``_validate``) or a float array of finite values >= 0 (or > 0)."""
    if type(value) is float and value < math.inf and (value > 0.0 if positive else value >= 0.0):
        return value  # the common cases, a float or a float array, checked without a message
    if type(value) is np.ndarray and value.dtype.kind == "f":
        array = value
    elif isinstance(value, numbers.Real) or not isinstance(value, (Sequence, np.ndarray)):
        if positive:
            return _validate.positive_float(name, value)
        return _validate.real_in_range(name, value, low=0.0)
    else:
        array = np.asarray(value)
        if array.dtype.kind not in "iuf":
            raise TypeError(f"{name} must be numbers, got an array of {array.dtype}")
        array = array.astype(float, copy=False)
    if array.size:  # min and max: NaN fails both comparisons
        low, high = array.min(), array.max()
        if not ((low > 0 if positive else low >= 0) and high < math.inf):
            raise ValueError(f"{name} must all be finite and {'> 0' if positive else '>= 0'}")
    return float(array) if array.ndim == 0 else array


def times_from_counts(flops: _Counts, bytes: _Counts,  # noqa: A002 - a unit name
                      peak_flops_per_second: _Counts, bytes_per_second: _Counts
                      ) -> RooflineTimes:
    """The roofline of operations given as counts: :func:`times` of ``compute_seconds = flops /
    peak_flops_per_second`` and ``memory_seconds = bytes / bytes_per_second``, overlapped, so
    ``seconds`` is the larger (arithmetic and data movement overlap perfectly). Inputs
    broadcast like numpy arrays; all-scalar inputs give floats.

    Args:
        flops: arithmetic operations, finite and >= 0.
        bytes: bytes moved to and from memory, finite and >= 0.
        peak_flops_per_second, bytes_per_second: the rates, finite and > 0.

    Raises:
        TypeError / ValueError: a non-number, a negative or non-finite count, a rate <= 0.
    """
    f = _counts("flops", flops, positive=False)
    b = _counts("bytes", bytes, positive=False)
    peak = _counts("peak_flops_per_second", peak_flops_per_second, positive=True)
    bandwidth = _counts("bytes_per_second", bytes_per_second, positive=True)
    t = times(compute_seconds=f / peak, memory_seconds=b / bandwidth, overlap=True)
    return RooflineTimes(t.compute_seconds, t.memory_seconds, t.seconds)


@dataclass(frozen=True)
class RooflineResult:
    """A roofline estimate for one operation on one chip.

    ``seconds = max(compute_seconds, memory_seconds, overhead_seconds)``: optimistic, it assumes
    perfect overlap of arithmetic and data movement at peak speed for both, and, with overhead
    counted, that the framework dispatches the next operation while this one runs (a stream of
    operations each costing the largest of the three; a lone operation that waits for its own
    launch pays the overhead on top, up to ``overhead_seconds + max(compute, memory)``).
    ``bound`` names the largest: "compute", "memory" or "overhead".
    """

    chip: str
    dtype: str
    flops: float
    bytes: float
    seconds: float
    compute_seconds: float
    memory_seconds: float
    arithmetic_intensity: float  # FLOPs per byte moved
    ridge_flops_per_byte: float  # the chip's peak FLOP/s over its bytes/s
    bound: str  # "compute", "memory" or "overhead"
    achieved_flops_per_second: float
    peak_flops_per_second: float
    bytes_per_second: float
    # the fixed per-operation cost counted (0.0 unless overhead=True or overhead_seconds given)
    overhead_seconds: float = 0.0

    @property
    def fraction_of_peak(self) -> float:
        """Achieved over peak FLOP/s: 1.0 when compute-bound, intensity/ridge when memory-bound."""
        return self.achieved_flops_per_second / self.peak_flops_per_second

    def __repr__(self) -> str:
        overhead = (f", overhead {_seconds(self.overhead_seconds)}" if self.overhead_seconds else "")
        return (
            f"RooflineResult({self.chip}, {self.dtype}: {_seconds(self.seconds)}, {self.bound}-bound{overhead}; "
            f"intensity {self.arithmetic_intensity:,.1f} FLOPs/byte vs ridge "
            f"{self.ridge_flops_per_byte:,.1f}; {self.achieved_flops_per_second / 1e12:,.1f} TFLOP/s "
            f"= {self.fraction_of_peak:.0%} of peak)"
        )

    def _repr_html_(self) -> str:
        rows = [
            ("chip / dtype", f"{self.chip} / {self.dtype}"),
            ("FLOPs", f"{self.flops:.3g}"),
            ("bytes moved", f"{self.bytes:.3g}"),
            ("compute time", _seconds(self.compute_seconds)),
            ("memory time", _seconds(self.memory_seconds)),
            *([("overhead per operation", _seconds(self.overhead_seconds))]
              if self.overhead_seconds else []),
            ("roofline time (max of the " + ("three" if self.overhead_seconds else "two") + ")",
             _seconds(self.seconds)),
            ("arithmetic intensity", f"{self.arithmetic_intensity:,.1f} FLOPs/byte"),
            ("chip ridge point", f"{self.ridge_flops_per_byte:,.1f} FLOPs/byte"),
            ("bound", self.bound),
            ("achieved", f"{self.achieved_flops_per_second / 1e12:,.1f} TFLOP/s "
                         f"({self.fraction_of_peak:.0%} of peak)"),
        ]
        return _html.table(rows)


def _seconds(value: float) -> str:
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value >= scale:
            return f"{value / scale:,.3g} {unit}"
    return f"{value / 1e-9:,.3g} ns"


def estimate(
    chip: str | chips.Chip,
    *,
    flops: float,
    bytes: float,  # noqa: A002 - a unit name, as the course's result fields use
    dtype: DType = "bf16",
    peak_flops_per_second: float | None = None,
    bytes_per_second: float | None = None,
    sparse: bool = False,
    overhead: bool = False,
    overhead_seconds: float | None = None,
) -> RooflineResult:
    """Roofline time of any operation from its FLOP and byte counts.

    Args:
        chip: a chip name ("TPU v5e", "H100", ...) or a Chip.
        flops: arithmetic operations performed (>= 0: a gather or a copy does none).
        bytes: bytes moved to and from memory (> 0).
        dtype: precision of the arithmetic; sets the peak (``chip.peak_flops(dtype)``).
        peak_flops_per_second: override the peak (e.g. a vector unit's, for elementwise work).
        bytes_per_second: override the bandwidth (default the chip's HBM; e.g. an interconnect).
        sparse: use the chip's 2:4 structured-sparsity peak (``chip.peak_flops(dtype,
            sparse=True)``); ``flops`` are then dense-equivalent FLOPs. Default: the dense peak.
        overhead: add the fixed per-operation cost :data:`OVERHEAD_SECONDS` (kernel launch and
            framework dispatch); the result is overhead-bound when it exceeds both other times.
        overhead_seconds: the per-operation cost to use instead (>= 0; giving it counts it).

    Returns:
        A RooflineResult; ``seconds`` is max(compute, memory[, overhead]), the perfect-overlap
        roofline.

    Raises:
        TypeError: ``sparse`` or ``overhead`` not a bool.
        ValueError: unknown chip or dtype, a precision the chip lacks, non-positive or
            non-finite counts, a ``peak_flops_per_second`` that is the chip's sparse peak while
            ``sparse`` is False (a sparse figure passed as dense).
        MissingFigureError: ``sparse=True`` on a chip with no published sparse peak for ``dtype``.
    """
    the_chip = chips.get(chip)
    flops = _validate.real_in_range("flops", flops, low=0.0)
    moved = _validate.positive_float("bytes", bytes)
    dtype = dtypes.check(dtype)
    if not isinstance(sparse, bool):
        raise TypeError(f"sparse must be True or False, got {type(sparse).__name__} {sparse!r}")
    per_op = _overhead("overhead", overhead, overhead_seconds)
    if peak_flops_per_second is None:
        peak = the_chip.peak_flops(dtype, sparse=sparse)
    else:
        peak = _validate.positive_float("peak_flops_per_second", peak_flops_per_second)
        if not sparse and dtype in dtypes.PEAK_DTYPES and the_chip.is_sparse_peak(dtype, peak):
            raise ValueError(
                f"peak_flops_per_second={peak:.4g} is {the_chip.name}'s 2:4 structured-sparsity "
                f"{dtype} peak, not a dense one (dense: {the_chip.peak_flops(dtype):.4g}); pass "
                f"sparse=True for a sparse matrix, or the dense peak")
    if bytes_per_second is None:
        bandwidth = the_chip.require("hbm_bytes_per_second")
    else:
        bandwidth = _validate.positive_float("bytes_per_second", bytes_per_second)
    return _result(the_chip.name, dtype, flops, moved, peak, bandwidth, per_op)


def _overhead(name: str, overhead: object, overhead_seconds: object) -> float:
    """The per-operation overhead in seconds: 0, the default, or a checked override."""
    if not isinstance(overhead, bool):
        raise TypeError(f"{name} must be True or False, got {type(overhead).__name__} {overhead!r}; "
                        "pass overhead_seconds=<float> to set the per-operation cost")
    if overhead_seconds is not None:
        return _validate.real_in_range("overhead_seconds", overhead_seconds, low=0.0, high=1.0)
    return OVERHEAD_SECONDS if overhead else 0.0


def per_step_overhead_seconds(n_operations: int, overhead_seconds: float | None = None) -> float:
    """Fixed cost of ``n_operations`` framework operations (kernels) run one after another:
    ``n_operations * OVERHEAD_SECONDS`` (or ``* overhead_seconds``).

    For a step made of many operations (a decode step: a few kernels per layer times the layers)
    whose device time is shorter than this, the step is overhead-bound: the GPU waits for the
    framework. Compare it with the step's roofline time, as :func:`estimate` does for one
    operation (``max`` of the two when dispatch overlaps execution).

    Raises:
        TypeError / ValueError: ``n_operations`` not a whole number >= 0, or a bad override.
    """
    n = _validate.nonnegative_int("n_operations", n_operations)
    per_op = _overhead("overhead", True, overhead_seconds)
    return n * per_op


@dataclass(frozen=True)
class PassTime:
    """The roofline time of a sequence of operations (a model's pass), one after another.

    ``seconds`` sums each operation's :func:`estimate` time (the max of its compute, memory and,
    if counted, overhead times) over every occurrence; ``device_seconds`` is the same sum with no
    overhead, so ``seconds - device_seconds`` is what the per-operation cost adds.
    ``operations_by_bound`` counts occurrences per regime: ``(("compute", n), ("memory", n),
    ("overhead", n))``.
    """

    chip: str
    dtype: str
    n_operations: int
    seconds: float
    device_seconds: float
    overhead_seconds: float  # per operation, as counted (0.0 when off)
    operations_by_bound: tuple[tuple[str, int], ...]

    @property
    def overhead_share(self) -> float:
        """Fraction of ``seconds`` the overhead adds: (seconds - device_seconds) / seconds."""
        return (self.seconds - self.device_seconds) / self.seconds if self.seconds else 0.0

    def count(self, bound: str) -> int:
        """Occurrences bound by ``bound`` ("compute", "memory" or "overhead")."""
        bound = _validate.choice("bound", bound, BOUNDS)
        return dict(self.operations_by_bound)[bound]


#: The regimes a RooflineResult's ``bound`` can name.
BOUNDS = ("compute", "memory", "overhead")


def operations_time(chip: str | chips.Chip, operations: object, *, dtype: DType = "bf16",
                    overhead: bool = False, overhead_seconds: float | None = None) -> PassTime:
    """Roofline time of ``operations`` run one after another on one chip.

    ``operations`` is a sequence of objects with ``flops``, ``bytes`` (totals) and ``count``
    (occurrences), as ``accelkit.models.Model.operations`` returns: each occurrence is one
    operation (one kernel launch in eager execution) costing :func:`estimate` of its share.
    With ``overhead=True`` every occurrence pays :data:`OVERHEAD_SECONDS` at least: the way
    small operations and batch-1 decode of small models stop looking free. Fused kernels
    (XLA, ``torch.compile``, CUDA graphs) launch fewer, so this is the eager, op-by-op view.

    Raises:
        TypeError: ``operations`` is not a sequence of such objects; ``overhead`` not a bool.
        ValueError: an occurrence with no bytes, a bad chip or dtype, a bad override.
    """
    the_chip = chips.get(chip)
    dtype = dtypes.check(dtype)
    per_op = _overhead("overhead", overhead, overhead_seconds)
    if isinstance(operations, (str, bytes)) or not isinstance(operations, Sequence):
        raise TypeError("operations must be a sequence of operations with flops, bytes and count "
                        f"(as Model.operations returns), got {type(operations).__name__}")
    if len(operations) > _validate.MAX_ELEMENTS:
        raise ValueError(f"operations has {len(operations):,} entries, more than "
                         f"{_validate.MAX_ELEMENTS:,}")
    peak = the_chip.peak_flops(dtype)
    bandwidth = the_chip.require("hbm_bytes_per_second")
    total = device = 0.0
    n = 0
    counts = dict.fromkeys(BOUNDS, 0)
    for i, op in enumerate(operations):
        if not all(hasattr(op, a) for a in ("flops", "bytes", "count")):
            raise TypeError(f"operations[{i}] must have flops, bytes and count, got "
                            f"{type(op).__name__}")
        occurrences = _validate.positive_int(f"operations[{i}].count", op.count)
        flops = _validate.real_in_range(f"operations[{i}].flops", op.flops, low=0.0) / occurrences
        moved = _validate.positive_float(f"operations[{i}].bytes", op.bytes) / occurrences
        with_overhead = _result(the_chip.name, dtype, flops, moved, peak, bandwidth, per_op)
        total += with_overhead.seconds * occurrences
        device += float(times(compute_seconds=with_overhead.compute_seconds,
                              memory_seconds=with_overhead.memory_seconds, overlap=True
                              ).seconds) * occurrences
        counts[with_overhead.bound] += occurrences
        n += occurrences
    return PassTime(chip=the_chip.name, dtype=dtype, n_operations=n, seconds=total,
                    device_seconds=device, overhead_seconds=per_op,
                    operations_by_bound=tuple(counts.items()))


def bound(compute_seconds: float, memory_seconds: float, overhead_seconds: float = 0.0) -> str:
    """The regime that sets a time: ``"overhead"`` when the fixed per-operation cost exceeds
    both the compute and the memory time, else ``"compute"`` when compute takes at least as
    long as memory, else ``"memory"`` (for one operation, or a pass's totals)."""
    device = times(compute_seconds=compute_seconds, memory_seconds=memory_seconds, overlap=True)
    if overhead_seconds > device.seconds:
        return "overhead"
    return "compute" if compute_seconds >= memory_seconds else "memory"


def _result(name: str, dtype: str, flops: float, moved: float, peak: float,
            bandwidth: float, overhead_seconds: float = 0.0) -> RooflineResult:
    device = times_from_counts(flops, moved, peak, bandwidth)
    # the next operation's dispatch overlaps this one's run: the longest of the three
    seconds = float(times(compute_seconds=device.seconds, overhead_seconds=overhead_seconds,
                          overlap=True).seconds)
    compute_seconds, memory_seconds = float(device.compute_seconds), float(device.memory_seconds)
    return RooflineResult(
        chip=name, dtype=dtype, flops=flops, bytes=moved, seconds=seconds,
        compute_seconds=compute_seconds, memory_seconds=memory_seconds,
        arithmetic_intensity=flops / moved, ridge_flops_per_byte=peak / bandwidth,
        bound=bound(compute_seconds, memory_seconds, overhead_seconds),
        achieved_flops_per_second=flops / seconds if seconds else 0.0, peak_flops_per_second=peak,
        bytes_per_second=bandwidth, overhead_seconds=overhead_seconds,
    )


def matmul(
    chip: str | chips.Chip,
    *,
    M: int,  # noqa: N803 - matrix dimensions are conventionally capitals
    N: int,  # noqa: N803
    K: int,  # noqa: N803
    dtype: DType = "bf16",
    bytes_per_element: float | Sequence[float] | None = None,
    overhead: bool = False,
    overhead_seconds: float | None = None,
) -> RooflineResult:
    """Roofline time of C[M,N] = A[M,K] @ B[K,N], each matrix read or written once from memory.

    FLOPs = 2·M·N·K (a multiply and an add per MAC); bytes = (M·K + K·N + M·N) · bytes per
    element. With M ≪ K, N (a token batch against a weight matrix) the intensity is about M,
    so the chip's ridge point is the batch needed to be compute-bound.

    Args:
        chip: a chip name or a Chip.
        M, N, K: matrix dimensions (whole numbers >= 1).
        dtype: precision of the arithmetic (sets the peak and, by default, the element size).
        bytes_per_element: one size for all three matrices, or a 3-sequence (A, B, C) for mixed
            storage such as int8 weights with bf16 activations (B=1, A=C=2).
        overhead: count the fixed per-operation cost :data:`OVERHEAD_SECONDS` (kernel launch
            and eager-framework dispatch); a matmul too small to outlast it is
            ``bound="overhead"``. The result's ``overhead_seconds`` says what was counted.
        overhead_seconds: the per-operation cost to use instead (seconds >= 0; giving it counts
            it, whatever ``overhead`` says).

    Raises:
        ValueError/TypeError: unknown chip or dtype, a precision the chip lacks, bad sizes,
            ``overhead`` not a bool, a negative or non-finite ``overhead_seconds``.
    """
    the_chip = chips.get(chip)
    m = _validate.positive_int("M", M)
    n = _validate.positive_int("N", N)
    k = _validate.positive_int("K", K)
    dtype = dtypes.check(dtype)
    per_op = _overhead("overhead", overhead, overhead_seconds)
    a_size, b_size, c_size = _element_sizes(bytes_per_element, dtypes.BYTES[dtype])
    flops = 2.0 * m * n * k
    moved = float(m * k) * a_size + float(k * n) * b_size + float(m * n) * c_size
    return _result(the_chip.name, dtype, flops, moved, the_chip.peak_flops(dtype),
                   the_chip.require("hbm_bytes_per_second"), per_op)


def _element_sizes(value: object, default: float) -> tuple[float, float, float]:
    if value is None:
        return (default, default, default)
    if isinstance(value, (str, bytes)) or not isinstance(value, (numbers.Real, Sequence)):
        raise TypeError("bytes_per_element must be a number > 0 or a sequence of three "
                        f"(A, B, C), got {type(value).__name__} {value!r}")
    if isinstance(value, Sequence):
        if len(value) != 3:
            raise ValueError(f"bytes_per_element must have three entries (A, B, C), got {len(value)}")
        sizes = [_validate.positive_float(f"bytes_per_element[{i}]", v) for i, v in enumerate(value)]
        return (sizes[0], sizes[1], sizes[2])
    size = _validate.positive_float("bytes_per_element", value)
    return (size, size, size)


def elementwise(
    chip: str | chips.Chip,
    *,
    n_elements: int,
    flops_per_element: float = 1.0,
    dtype: DType = "bf16",
    reads_per_element: int = 2,
    writes_per_element: int = 1,
    peak_flops_per_second: float | None = None,
    overhead: bool = False,
    overhead_seconds: float | None = None,
) -> RooflineResult:
    """Roofline time of an elementwise op over ``n_elements`` (default: c = a + b, 2 reads, 1 write).

    Its intensity is ``flops_per_element / ((reads + writes) · element size)`` -- well under one
    FLOP per byte for an add, far below any chip's ridge, so it is memory-bound. The compute
    ceiling is the matrix-unit peak unless ``peak_flops_per_second`` gives the vector unit's
    (elementwise work runs there); either way such ops stay memory-bound -- or, with
    ``overhead=True`` and few elements, overhead-bound (see :func:`estimate`).

    Raises:
        ValueError/TypeError: unknown chip or dtype, bad counts.
    """
    n = _validate.positive_int("n_elements", n_elements)
    per_element = _validate.positive_float("flops_per_element", flops_per_element)
    reads = _validate.nonnegative_int("reads_per_element", reads_per_element)
    writes = _validate.nonnegative_int("writes_per_element", writes_per_element)
    if reads + writes == 0:
        raise ValueError("reads_per_element + writes_per_element must be >= 1, got 0")
    dtype = dtypes.check(dtype)
    moved = float(n) * (reads + writes) * dtypes.BYTES[dtype]
    return estimate(chip, flops=float(n) * per_element, bytes=moved, dtype=dtype,
                    peak_flops_per_second=peak_flops_per_second, overhead=overhead,
                    overhead_seconds=overhead_seconds)


def curve(chip: str | chips.Chip, dtype: DType = "bf16",
          intensities: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """Attainable FLOP/s at each arithmetic intensity: ``min(peak, intensity · bandwidth)``.

    Args:
        chip: a chip name or a Chip.
        dtype: precision (sets the peak).
        intensities: FLOPs per byte, each finite and > 0 (default: 200 points, 0.1 to 10^4,
            log-spaced, for a plot).

    Returns:
        A float array the shape of ``intensities``.

    Raises:
        ValueError/TypeError: unknown chip or dtype, empty, non-numeric, non-positive or
            non-finite intensities, or more than the element limit.
    """
    the_chip = chips.get(chip)
    peak = the_chip.peak_flops(dtype)
    bandwidth = the_chip.require("hbm_bytes_per_second")
    if intensities is None:
        x = np.logspace(-1, 4, 200)
    else:
        x = _intensity_array(intensities)
    return np.minimum(peak, x * bandwidth)


def _intensity_array(value: object) -> np.ndarray:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray, numbers.Real)):
        raise TypeError(f"intensities must be numbers (FLOPs/byte), got {type(value).__name__}")
    try:
        x = np.asarray(value)
    except ValueError as exc:
        raise ValueError(f"intensities must be a flat list of numbers: {exc}") from None
    if x.dtype.kind not in "iuf":
        raise TypeError(f"intensities must hold numbers, got dtype {x.dtype}")
    if x.size == 0:
        raise ValueError("intensities must not be empty")
    if x.size > _validate.MAX_ELEMENTS:
        raise ValueError(f"intensities has {x.size:,} entries, more than {_validate.MAX_ELEMENTS:,}")
    x = x.astype(float)
    if not np.isfinite(x).all() or (x <= 0).any():
        raise ValueError("intensities must all be finite and > 0 (FLOPs per byte)")
    return x


def critical_batch(chip: str | chips.Chip, dtype: DType = "bf16",
                   weight_bytes_per_element: float | None = None) -> float:
    """Token batch above which a [B,D]x[D,F] matmul (B ≪ D, F) is compute-bound on this chip.

    Intensity ≈ 2·B / weight bytes per element, so the batch is ridge · weight bytes / 2:
    the ridge itself for bf16 (240 on TPU v5e), half of it for int8 weights with bf16 math.
    """
    the_chip = chips.get(chip)
    dtype = dtypes.check(dtype)
    size = (dtypes.BYTES[dtype] if weight_bytes_per_element is None
            else _validate.positive_float("weight_bytes_per_element", weight_bytes_per_element))
    return the_chip.ridge_flops_per_byte(dtype) * size / 2.0


def crossing_batch(chip: str | chips.Chip, *, N: int, K: int,  # noqa: N803
                   dtype: DType = "bf16",
                   bytes_per_element: float | Sequence[float] | None = None) -> float:
    """The batch M at which :func:`matmul` ``(M, N, K)`` reaches the ridge, every byte counted.

    :func:`critical_batch` counts only the weight's bytes (the limit B ≪ D, F); the real
    [M,K]x[K,N] matmul also reads its M×K input and writes its M×N output. With element sizes
    a, b, c for A, B, C and ridge R, intensity 2·M·N·K / (M·K·a + K·N·b + M·N·c) equals R at

        M = R·K·N·b / (2·K·N − R·(K·a + N·c)),

    a little above ``critical_batch`` (256 rather than 240 for 8192×8192 on TPU v5e). A matmul
    with M at or above this is compute-bound, below it memory-bound. Returns ``inf`` when no
    batch gets there (the activations alone move more bytes per FLOP than the ridge allows).

    Args:
        chip: a chip name or a Chip.
        N, K: the weight's dimensions (K = d_in, N = d_out), whole numbers >= 1.
        dtype, bytes_per_element: as :func:`matmul`.
    Raises:
        ValueError/TypeError: unknown chip or dtype, a precision the chip lacks, bad sizes.
    """
    the_chip = chips.get(chip)
    n = _validate.positive_int("N", N)
    k = _validate.positive_int("K", K)
    dtype = dtypes.check(dtype)
    a_size, b_size, c_size = _element_sizes(bytes_per_element, dtypes.BYTES[dtype])
    ridge = the_chip.ridge_flops_per_byte(dtype)
    slope = 2.0 * k * n - ridge * (k * a_size + n * c_size)
    if slope <= 0:
        return float("inf")
    return ridge * k * n * b_size / slope


class DecodeMLPNumbers(TypedDict):
    """What :func:`decode_mlp_numbers` returns (a plain dict at run time), with each key's type."""

    peak_flops_per_second: float
    hbm_bytes_per_second: float
    ridge: float
    critical_batch: float
    crossing_batch: float
    intensity_b8: float
    seconds_b8: float
    bound_b8: str
    intensity_b512: float
    seconds_b512: float
    bound_b512: str


def decode_mlp_numbers(chip: str | chips.Chip = "TPU v5e", d_model: int = 4096,
                       d_ff: int = 14336) -> DecodeMLPNumbers:
    """A decode step's MLP matmul, ``[B, d_model] × [d_model, d_ff]`` in bf16, at B = 8 and 512.

    Args:
        chip: a chip name or Chip with a bf16 peak and HBM bandwidth.
        d_model: the model width, >= 1.
        d_ff: the MLP's hidden width, >= 1.
    Returns:
        ``peak_flops_per_second``, ``hbm_bytes_per_second``, ``ridge`` (FLOPs per byte),
        ``critical_batch`` (:func:`critical_batch`), ``crossing_batch`` (:func:`crossing_batch`), and for each batch (suffix ``_b8`` and
        ``_b512``) ``intensity``, ``seconds`` and ``bound`` from :func:`matmul`.
    Raises:
        TypeError, ValueError: an unknown chip, one without published bf16 figures, or a bad
            width.
    """
    the_chip = chips.get(chip)
    small = matmul(the_chip, M=8, N=d_ff, K=d_model)
    big = matmul(the_chip, M=512, N=d_ff, K=d_model)
    return {
        "peak_flops_per_second": the_chip.peak_flops("bf16"),
        "hbm_bytes_per_second": the_chip.require("hbm_bytes_per_second"),
        "ridge": the_chip.ridge_flops_per_byte("bf16"),
        "critical_batch": critical_batch(the_chip),
        "crossing_batch": crossing_batch(the_chip, N=d_ff, K=d_model),
        "intensity_b8": small.arithmetic_intensity, "seconds_b8": small.seconds,
        "bound_b8": small.bound,
        "intensity_b512": big.arithmetic_intensity, "seconds_b512": big.seconds,
        "bound_b512": big.bound,
    }


__all__ = ["BOUNDS", "DecodeMLPNumbers", "OVERHEAD_RANGE_SECONDS", "OVERHEAD_SECONDS",
           "OVERHEAD_SOURCE", "PassTime", "RooflineResult", "RooflineTimes", "Times", "bound",
           "critical_batch", "crossing_batch", "curve", "decode_mlp_numbers", "elementwise",
           "estimate", "matmul", "operations_time", "per_step_overhead_seconds", "times",
           "times_from_counts"]
