"""A cycle-level systolic array: the matrix unit at the heart of a TPU.

An ``rows × cols`` grid of multiply-accumulate (MAC) cells. Every cycle each cell multiplies the
two operands it holds, adds the product to a partial sum, and passes operands to its neighbours:
one cell per cycle, rightwards along rows and downwards along columns. One operand stays put in
the cells (it is *stationary*); the others stream through. Which one stays is the *dataflow*:

====  ===========================  ================================  =================
name  stationary                   mapped on (rows × cols)           streamed
====  ===========================  ================================  =================
os    the output C (M×N)           M × N                             K (A and B both)
ws    the weights B (K×N)          K × N                             M (rows of A)
is    the input A (M×K)            K × M                             N (columns of B)
====  ===========================  ================================  =================

A GEMM larger than the array is *folded*: cut into ``row_folds × col_folds`` tiles that run one
after another, each paying the full array's fill and drain even when it maps only part of it.

Conventions follow SCALE-Sim 3.0.0 (scalesim-project), the field's reference simulator, so that a
learner's numbers agree with the literature. Per fold, with R×C the array and T the streamed
length (K for os, M for ws, N for is):

* os: ``T + R + C - 2`` cycles: A enters row r at cycle r + k, B enters column c at cycle c + k,
  so the MAC for k in cell (r, c) happens at cycle r + c + k (operands skewed by one cycle a row).
  Outputs stay in the cells; writing them back is not counted (as in SCALE-Sim).
* ws / is: ``2R + C + T - 2`` cycles: R cycles to shift the stationary tile down into the array,
  then the streamed rows enter skewed; a partial sum flows down a column and leaves the bottom row
  at cycle ``2R - 1 + t + c``.
* SCALE-Sim reports "Total Cycles" as the 0-based index of the last cycle; ``cycles`` here is the
  count, one more (tests/data/scalesim holds the comparison).
* Buffer traffic, in elements, padding excluded: os reads A ``col_folds·M·K`` and B
  ``row_folds·K·N``, writes C ``M·N``; ws reads A ``col_folds·M·K`` and B ``K·N``, writes C
  ``row_folds·M·N`` (one partial sum per row fold); is reads A ``K·M`` and B ``col_folds·K·N``,
  writes C ``row_folds·M·N``.
* ``mapping_efficiency`` is the share of cells a fold maps, averaged over folds;
  ``compute_utilization`` is SCALE-Sim's "Compute Util" (per-fold utilization averaged over folds);
  ``utilization`` is useful MACs over ``rows · cols · cycles`` (SCALE-Sim's "Overall Util").

Two options go beyond SCALE-Sim and default off:

* ``double_buffer=True`` loads the next fold's stationary tile into shadow registers while the
  current fold computes (as real TPUs do), hiding the R load cycles of every fold after the first.
  It changes nothing for ``os``, which has no load phase.
* ``bandwidth_words_per_cycle=w`` limits how many elements per cycle can move between the
  buffers and the array. A fold that needs to move more words than ``w × its cycles`` stalls for
  the difference; ``stall_cycles`` and ``total_cycles`` report it while ``cycles`` stays the
  stall-free compute count. (SCALE-Sim's own stall model has known bugs and is not matched.)

Three paths, one truth: :meth:`SystolicArray.simulate` moves every operand one cell per cycle and
accumulates the product in the cells; :meth:`SystolicArray.matmul` (numpy product plus closed-form
counts) and :meth:`SystolicArray.estimate` (counts only, no data) are fast paths that must agree
with it on every count, and the tests check that they do.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import numpy as np

from accelkit import _validate as check

Dataflow = Literal["os", "ws", "is"]

#: The problem dimensions each GEMM operand spans: A is M×K, B is K×N, C is M×N.
OPERAND_DIMS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {"A": ("M", "K"), "B": ("K", "N"), "C": ("M", "N")})


@dataclass(frozen=True)
class DataflowSpec:
    """Everything the engine, its fast paths and the widgets need to know about one dataflow.

    Attributes:
        name, long_name: ``"ws"`` / ``"weight-stationary"`` and so on.
        stationary: the operand that stays in the cells: ``"A"``, ``"B"`` or ``"C"``.
        on_rows, on_cols, streamed: the problem dimension (``"M"``, ``"N"`` or ``"K"``) mapped on
            the array's rows, on its columns, and streamed through it (the stream never folds).
        load_phase: whether a stationary input tile is shifted into the cells (``rows`` cycles)
            before the stream starts; False for ``os``, whose stationary operand is the output.
        transposed: the array computes Cᵀ = Bᵀ·Aᵀ (``is``): B streams from the left in place of
            A, A's tile stays in place of B's, and the outputs leave transposed.
        story: what moves and what stays, in words, for a widget.
    """

    name: str
    long_name: str
    stationary: str
    on_rows: str
    on_cols: str
    streamed: str
    load_phase: bool
    transposed: bool
    story: str

    def geometry(self, M: int, N: int, K: int) -> tuple[int, int, int]:
        """(problem size on rows, problem size on columns, streamed length T)."""
        sizes = {"M": M, "N": N, "K": K}
        return sizes[self.on_rows], sizes[self.on_cols], sizes[self.streamed]

    def fold_words(self, used_rows: int, used_cols: int, T: int) -> dict[str, int]:
        """Elements each operand moves between the buffers and the array in one fold that maps
        ``used_rows × used_cols`` cells and streams ``T``: an operand's tile spans two of the
        three dimensions, each as long as its share of the fold."""
        extent = {self.on_rows: used_rows, self.on_cols: used_cols, self.streamed: T}
        return {op: extent[d1] * extent[d2] for op, (d1, d2) in OPERAND_DIMS.items()}

    @property
    def left_operand(self) -> str:
        """The operand that enters from the array's left edge (``A``, or ``B`` when transposed)."""
        return "B" if self.transposed else "A"

    @property
    def other_operand(self) -> str:
        """The operand that enters from the top (``os``) or is held stationary (``ws``/``is``)."""
        return "A" if self.transposed else "B"


DATAFLOW_SPECS: Mapping[str, DataflowSpec] = MappingProxyType({
    "os": DataflowSpec(
        "os", "output-stationary", stationary="C", on_rows="M", on_cols="N", streamed="K",
        load_phase=False, transposed=False,
        story="each cell owns one output C[m, n]; A streams in from the left, B from the top; "
              "the sums stay in the cells."),
    "ws": DataflowSpec(
        "ws", "weight-stationary", stationary="B", on_rows="K", on_cols="N", streamed="M",
        load_phase=True, transposed=False,
        story="B (the weights) is shifted into the cells and stays; rows of A stream in from the "
              "left; partial sums flow down and leave at the bottom."),
    "is": DataflowSpec(
        "is", "input-stationary", stationary="A", on_rows="K", on_cols="M", streamed="N",
        load_phase=True, transposed=True,
        story="A (the input) is shifted into the cells and stays; columns of B stream in from "
              "the left; partial sums flow down and leave at the bottom."),
})
DATAFLOWS: tuple[str, ...] = tuple(DATAFLOW_SPECS)
#: What each dataflow maps onto the array's rows and columns, and what it streams through
#: (derived from :data:`DATAFLOW_SPECS`).
MAPPING: Mapping[str, tuple[str, str, str]] = MappingProxyType(
    {name: (d.on_rows, d.on_cols, d.streamed) for name, d in DATAFLOW_SPECS.items()})
DATAFLOW_NAMES: Mapping[str, str] = MappingProxyType(
    {name: d.long_name for name, d in DATAFLOW_SPECS.items()})


class Counts(Mapping[str, int]):
    """A read-only, hashable mapping of operand name to element count (``run.sram_reads``).

    Compares equal to a plain dict with the same items, so ``run.sram_reads == {"A": 4, "B": 2}``
    holds; item assignment raises TypeError.
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, int]):
        object.__setattr__(self, "_items", dict(items))

    def __getitem__(self, key: str) -> int:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._items == dict(other)
        return NotImplemented

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Counts is read-only")

    def __repr__(self) -> str:
        return repr(self._items)


def dataflow_spec(dataflow: str) -> DataflowSpec:
    """The :class:`DataflowSpec` for a dataflow name (any case)."""
    return DATAFLOW_SPECS[check.choice("dataflow", dataflow, DATAFLOWS)]


#: Largest array side the engine accepts (a TPU v6e MXU is 256; this leaves room to explore).
MAX_SIDE = 4096
#: Elements of per-cycle state a simulation may hold at once before it is refused up front
#: (32 Mi elements, about 256 MiB).
MAX_STATE_ELEMENTS = 1 << 25
#: Fold-batch size for simulate(): keep the per-cycle working set small enough to stay in cache.
_CACHE_ELEMENTS = 1 << 16


@dataclass(frozen=True)
class SystolicRun:
    """What one GEMM cost on a systolic array. ``output`` is None for :meth:`estimate`.

    Attributes:
        dataflow, rows, cols, M, N, K: the array and the problem (A is M×K, B is K×N).
        output: ``A @ B`` (integers exact; floats to rounding), or None for an estimate.
        cycles: compute cycles, fill and drain included, no memory stalls.
        macs: useful multiply-accumulates, ``M·N·K``.
        utilization: ``macs / (rows · cols · cycles)``, in (0, 1].
        folds, row_folds, col_folds: how the GEMM was tiled onto the array.
        mapping_efficiency: share of cells a fold maps, averaged over folds.
        compute_utilization: per-fold utilization averaged over folds (SCALE-Sim "Compute Util").
        sram_reads: element reads from each operand buffer, ``{"A": ..., "B": ...}`` (a
            read-only :class:`Counts` mapping; the run is hashable).
        sram_writes: element writes to the output buffer, ``{"C": ...}`` (read-only too).
        output: read-only (``output.flags.writeable`` is False); copy it to change it.
        stall_cycles: cycles lost waiting for memory (0 unless a bandwidth is set).
        total_cycles: ``cycles + stall_cycles``.
    """

    dataflow: str
    rows: int
    cols: int
    M: int
    N: int
    K: int
    cycles: int
    macs: int
    utilization: float
    folds: int
    row_folds: int
    col_folds: int
    mapping_efficiency: float
    compute_utilization: float
    sram_reads: Mapping[str, int]
    sram_writes: Mapping[str, int]
    stall_cycles: int = 0
    total_cycles: int = 0
    double_buffer: bool = False
    bandwidth_words_per_cycle: float | None = None
    output: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Immutable all the way down: read-only counts and a read-only product.
        for name in ("sram_reads", "sram_writes"):
            value = getattr(self, name)
            if not isinstance(value, Counts):
                object.__setattr__(self, name, Counts(value))
        if self.output is not None:
            self.output.flags.writeable = False

    def __repr__(self) -> str:
        shown = "estimate" if self.output is None else "output=%d×%d array" % self.output.shape
        return (
            f"SystolicRun({self.dataflow}, {self.rows}×{self.cols} array, M={self.M} N={self.N} "
            f"K={self.K}: cycles={self.cycles:,}, utilization={self.utilization:.1%}, "
            f"folds={self.folds}, mapping_efficiency={self.mapping_efficiency:.1%}, "
            f"sram_reads={self.sram_reads}, sram_writes={self.sram_writes}, "
            f"stall_cycles={self.stall_cycles:,}, {shown})"
        )

    def _repr_html_(self) -> str:
        rows = [
            ("dataflow", f"{self.dataflow} ({DATAFLOW_NAMES[self.dataflow]})"),
            ("array", f"{self.rows} × {self.cols}"),
            ("GEMM (M, N, K)", f"{self.M}, {self.N}, {self.K}"),
            ("folds (row × col)", f"{self.folds} ({self.row_folds} × {self.col_folds})"),
            ("cycles", f"{self.cycles:,}"),
            ("stall cycles", f"{self.stall_cycles:,}"),
            ("utilization", f"{self.utilization:.1%}"),
            ("mapping efficiency", f"{self.mapping_efficiency:.1%}"),
            ("SRAM reads A / B", f"{self.sram_reads['A']:,} / {self.sram_reads['B']:,}"),
            ("SRAM writes C", f"{self.sram_writes['C']:,}"),
        ]
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
        return f"<table>{body}</table>"

    def counts(self) -> dict[str, object]:
        """Every field except ``output``: what the three paths must agree on."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "output"}


@dataclass(frozen=True)
class Step:
    """The array's state at the end of one cycle, for animation.

    ``a``, ``b`` and ``psum`` are ``rows × cols`` float arrays holding, per cell, the A value, the
    B value and the partial sum (or accumulated output, for ``os``) it holds; NaN where a cell holds
    nothing. ``a_index`` / ``b_index`` give, per cell, the (row, column) of that value in A or B
    (-1 where empty), so a widget can label cells ``A[2,1]``. ``active`` marks the cells that did a
    useful MAC this cycle. ``output`` is C as written to the output buffer so far (NaN where not
    yet written); for ``os``, outputs are written when their fold ends.
    """

    cycle: int
    fold: int
    fold_cycle: int
    phase: str  # "load" | "compute"
    fold_rows: tuple[int, int]  # [start, stop) of the problem dimension mapped on array rows
    fold_cols: tuple[int, int]  # [start, stop) of the problem dimension mapped on array columns
    a: np.ndarray = field(repr=False)
    b: np.ndarray = field(repr=False)
    psum: np.ndarray = field(repr=False)
    active: np.ndarray = field(repr=False)
    a_index: np.ndarray = field(repr=False)
    b_index: np.ndarray = field(repr=False)
    output: np.ndarray = field(repr=False)

    @property
    def active_macs(self) -> int:
        return int(self.active.sum())


# --------------------------------------------------------------------------------------------
# Closed-form counts (shared by estimate() and matmul())
# --------------------------------------------------------------------------------------------


def _fold_sizes(total: int, side: int) -> list[tuple[int, int]]:
    """[(used, how many folds use that much)] for cutting ``total`` into tiles of ``side``."""
    full, rest = divmod(total, side)
    sizes = [(side, full)] if full else []
    if rest:
        sizes.append((rest, 1))
    return sizes


def _fold_cycles(spec: DataflowSpec, R: int, C: int, T: int) -> int:
    """One fold alone: the load phase (if any), then T streamed steps skewed across R + C - 1
    diagonals."""
    return (R if spec.load_phase else 0) + T + R + C - 2


def _counts(spec: DataflowSpec, R: int, C: int, M: int, N: int, K: int, double_buffer: bool,
            bandwidth: float | None) -> dict[str, object]:
    rows_total, cols_total, T = spec.geometry(M, N, K)
    row_sizes = _fold_sizes(rows_total, R)
    col_sizes = _fold_sizes(cols_total, C)
    row_folds = sum(n for _, n in row_sizes)
    col_folds = sum(n for _, n in col_sizes)
    folds = row_folds * col_folds
    per_fold = _fold_cycles(spec, R, C, T)
    hidden = R if (double_buffer and spec.load_phase) else 0
    cycles = folds * per_fold - (folds - 1) * hidden
    macs = M * N * K
    cells = R * C
    # Every fold lasts the same; they differ only in how many cells they map.
    mapped = rows_total * cols_total  # sum over folds of used_rows * used_cols
    moved = {"A": 0, "B": 0, "C": 0}
    stall = 0
    for used_r, n_r in row_sizes:
        for used_c, n_c in col_sizes:
            words = spec.fold_words(used_r, used_c, T)
            n = n_r * n_c
            for name in moved:
                moved[name] += words[name] * n
            stall += n * _stall(sum(words.values()), per_fold - hidden, bandwidth)
    if hidden:
        # The first fold (fold 0 maps the first row and column tiles) also has its load cycles.
        words_0 = sum(spec.fold_words(row_sizes[0][0], col_sizes[0][0], T).values())
        stall += _stall(words_0, per_fold, bandwidth) - _stall(words_0, per_fold - hidden, bandwidth)
    return {
        "cycles": cycles,
        "macs": macs,
        "utilization": macs / (cells * cycles),
        "folds": folds,
        "row_folds": row_folds,
        "col_folds": col_folds,
        "mapping_efficiency": mapped / (cells * folds),
        "compute_utilization": macs / (cells * per_fold * folds),
        "sram_reads": Counts({"A": moved["A"], "B": moved["B"]}),
        "sram_writes": Counts({"C": moved["C"]}),
        "stall_cycles": stall,
        "total_cycles": cycles + stall,
    }


def _stall(words: int, busy_cycles: int, bandwidth: float | None) -> int:
    """Cycles a fold waits when it must move ``words`` in ``busy_cycles`` at ``bandwidth``."""
    if bandwidth is None:
        return 0
    return max(0, math.ceil(words / bandwidth) - busy_cycles)


def _accumulator(A: np.ndarray, B: np.ndarray) -> type:
    """int64 for integer operands (after checking the sums cannot overflow), else float64."""
    if A.dtype.kind in "iu" and B.dtype.kind in "iu":
        bound = int(np.abs(A).max(initial=0)) * int(np.abs(B).max(initial=0)) * A.shape[1]
        if bound >= 2**63:
            raise ValueError(
                "A and B hold integers too large to accumulate exactly in 64 bits "
                f"(|A|max·|B|max·K = {bound:.3g} >= 2**63); scale them down or pass floats"
            )
        return np.int64
    return np.float64


def _exact_product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B with integers accumulated exactly in int64 and floats in float64."""
    dtype = _accumulator(A, B)
    return A.astype(dtype) @ B.astype(dtype)


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------


class SystolicArray:
    """A ``rows × cols`` systolic array with a chosen dataflow.

    Args:
        rows, cols: array size in MAC cells (1 .. 4096 each).
        dataflow: ``"ws"`` (weight-stationary), ``"os"`` (output-stationary) or ``"is"``
            (input-stationary); any case.
        double_buffer: hide the stationary tile's load behind the previous fold (ws/is).
        bandwidth_words_per_cycle: elements per cycle the buffers can supply and accept; None
            means unlimited (no stalls).

    Raises:
        ValueError / TypeError naming the argument, for anything out of range.

    Example:
        >>> sa = SystolicArray(rows=8, cols=8, dataflow="ws")
        >>> sa.estimate(M=64, N=64, K=64).cycles
        1216
    """

    def __init__(self, rows: int = 8, cols: int = 8, dataflow: str = "ws", *,
                 double_buffer: bool = False, bandwidth_words_per_cycle: float | None = None):
        self.rows = check.positive_int("rows", rows, maximum=MAX_SIDE)
        self.cols = check.positive_int("cols", cols, maximum=MAX_SIDE)
        self.dataflow = check.choice("dataflow", dataflow, DATAFLOWS)
        self.spec = DATAFLOW_SPECS[self.dataflow]
        if not isinstance(double_buffer, bool):
            raise TypeError(f"double_buffer must be True or False, got {double_buffer!r}")
        self.double_buffer = double_buffer
        self.bandwidth_words_per_cycle = (
            None if bandwidth_words_per_cycle is None
            else check.positive_float("bandwidth_words_per_cycle", bandwidth_words_per_cycle)
        )

    def __repr__(self) -> str:
        extras = ""
        if self.double_buffer:
            extras += ", double_buffer=True"
        if self.bandwidth_words_per_cycle is not None:
            extras += f", bandwidth_words_per_cycle={self.bandwidth_words_per_cycle:g}"
        return f"SystolicArray(rows={self.rows}, cols={self.cols}, dataflow={self.dataflow!r}{extras})"

    # -- fast paths ----------------------------------------------------------------------------

    def estimate(self, *, M: int, N: int, K: int) -> SystolicRun:
        """Closed-form counts for an M×K by K×N GEMM, without any data (``output`` is None)."""
        M = check.positive_int("M", M)
        N = check.positive_int("N", N)
        K = check.positive_int("K", K)
        return self._run(M, N, K, None)

    def matmul(self, A: object, B: object) -> SystolicRun:
        """Multiply A (M×K) by B (K×N): numpy's exact product plus the closed-form counts."""
        A, B = self._operands(A, B)
        return self._run(A.shape[0], B.shape[1], A.shape[1], _exact_product(A, B))

    def _run(self, M: int, N: int, K: int, output: np.ndarray | None) -> SystolicRun:
        counts = _counts(self.spec, self.rows, self.cols, M, N, K, self.double_buffer,
                         self.bandwidth_words_per_cycle)
        return SystolicRun(dataflow=self.dataflow, rows=self.rows, cols=self.cols, M=M, N=N, K=K,
                           double_buffer=self.double_buffer,
                           bandwidth_words_per_cycle=self.bandwidth_words_per_cycle,
                           output=output, **counts)

    def _operands(self, A: object, B: object) -> tuple[np.ndarray, np.ndarray]:
        A = check.matrix("A", A)
        B = check.matrix("B", B)
        check.chained("A", A, "B", B)
        M, K = A.shape
        N = B.shape[1]
        if M * N > check.MAX_ELEMENTS:
            raise ValueError(
                f"the output would have M·N = {M * N:,} elements, more than the "
                f"{check.MAX_ELEMENTS:,} this toy engine holds in memory; use estimate()"
            )
        return A, B

    # -- the reference model: operands really move ---------------------------------------------

    def simulate(self, A: object, B: object) -> SystolicRun:
        """Run the GEMM cycle by cycle: operands shift one cell per cycle, products accumulate
        in the cells, and every count is tallied from what actually happened.

        Folds have identical schedules, so several are simulated side by side (a batch axis),
        then laid out one after another in time; within a fold every cycle updates the whole
        array with numpy. No Python loop runs over cells.
        """
        A, B = self._operands(A, B)
        self._check_state_fits(A.shape[0], B.shape[1], A.shape[1])
        machine = _Machine(self, A, B)
        for _ in machine.cycles(batch=max(1, _CACHE_ELEMENTS // (self.rows * self.cols))):
            pass
        return machine.result()

    def steps(self, A: object, B: object) -> Iterator[Step]:
        """Yield the array's state at the end of every cycle (lazily), for animation.

        The walk is the one :meth:`simulate` makes, one fold at a time. Each step copies only a
        few ``rows × cols`` arrays and the output, so it is cheap for the small arrays a widget
        draws.
        """
        A, B = self._operands(A, B)
        self._check_state_fits(A.shape[0], B.shape[1], A.shape[1])
        return _Machine(self, A, B).snapshots()

    def _check_state_fits(self, M: int, N: int, K: int) -> None:
        rows_total, cols_total, T = self.spec.geometry(M, N, K)
        # The largest per-fold working set: the skewed edge streams for one fold, plus the cells.
        per_fold = _fold_cycles(self.spec, self.rows, self.cols, T)
        # Per fold: skewed edge streams (values and valid flags) and ~10 cell-sized registers.
        state = 2 * per_fold * (self.rows + self.cols) + 10 * self.rows * self.cols
        if state > MAX_STATE_ELEMENTS:
            raise ValueError(
                f"simulating this GEMM needs about {state:,} elements of per-cycle state, more "
                f"than the {MAX_STATE_ELEMENTS:,} allowed; use matmul() or estimate(), which give "
                "the same counts"
            )


def _shift_right(now: np.ndarray, nxt: np.ndarray, entering: np.ndarray) -> None:
    """Next cycle's registers: every value one cell right; ``entering`` at the left edge."""
    nxt[..., 1:] = now[..., :-1]
    nxt[..., 0] = entering


def _shift_down(now: np.ndarray, nxt: np.ndarray, entering: np.ndarray) -> None:
    """Next cycle's registers: every value one cell down; ``entering`` at the top edge."""
    nxt[..., 1:, :] = now[..., :-1, :]
    nxt[..., 0, :] = entering


class _Machine:
    """One simulation: the folds of one GEMM on one array, walked cycle by cycle.

    All dataflows run on one mechanism. ``os`` streams A from the left and B from the top and
    keeps the sums in the cells. ``ws`` and ``is`` first shift a stationary tile down into the
    cells, then stream rows in from the left while partial sums flow down and leave at the
    bottom; ``is`` is ``ws`` on the transposed problem (Cᵀ = Bᵀ·Aᵀ) with the roles of A and B
    swapped, exactly as the hardware would hold A in place and stream B.
    """

    def __init__(self, array: SystolicArray, A: np.ndarray, B: np.ndarray):
        self.array = array
        self.R, self.C = array.rows, array.cols
        self.flow = array.dataflow
        self.spec = array.spec
        self.M, self.K = A.shape
        self.N = B.shape[1]
        self.dtype = _accumulator(A, B)
        A = A.astype(self.dtype)
        B = B.astype(self.dtype)
        # ws: A streams (T × K) and B stays (K × cols); is: the transposed problem, Bᵀ streams
        # and Aᵀ stays; os: A enters from the left (rows × T) and B from the top (T × cols).
        left, other = (B.T, A.T) if self.spec.transposed else (A, B)
        if self.spec.load_phase:
            self.stream, self.fixed = left, other
        else:
            self.first, self.second = left, other
        self.rows_total, self.cols_total, self.T = self.spec.geometry(self.M, self.N, self.K)
        self.row_folds = math.ceil(self.rows_total / self.R)
        self.col_folds = math.ceil(self.cols_total / self.C)
        # SCALE-Sim's order: column folds outer, row folds inner.
        self.fold_list = [(fr, fc) for fc in range(self.col_folds) for fr in range(self.row_folds)]
        self.per_fold = _fold_cycles(self.spec, self.R, self.C, self.T)
        self.hidden = self.R if (array.double_buffer and self.spec.load_phase) else 0
        self.out = np.zeros((self.M, self.N), dtype=self.dtype)
        self.written = np.zeros((self.M, self.N), dtype=bool)  # for snapshots: what C holds yet
        self.useful_macs = 0
        self.reads = {"A": 0, "B": 0}
        self.writes = {"C": 0}
        self.cycles_run = 0
        self.fold_words: list[int] = []

    # -- fold data --------------------------------------------------------------------------

    def _ranges(self, fr: int, fc: int) -> tuple[int, int, int, int]:
        r0, c0 = fr * self.R, fc * self.C
        return r0, min(r0 + self.R, self.rows_total), c0, min(c0 + self.C, self.cols_total)

    def _fold_length(self, index: int) -> int:
        """Cycles fold ``index`` occupies the timeline (its load hidden if double-buffered)."""
        return self.per_fold if index == 0 else self.per_fold - self.hidden

    def _fold_start(self, index: int) -> int:
        return 0 if index == 0 else self.per_fold + (index - 1) * (self.per_fold - self.hidden)

    # -- the cycle loop ---------------------------------------------------------------------

    def cycles(self, batch: int) -> Iterator[None]:
        """Advance every fold through its cycles, ``batch`` folds side by side."""
        for start in range(0, len(self.fold_list), batch):
            group = list(range(start, min(start + batch, len(self.fold_list))))
            if self.spec.load_phase:
                yield from self._stationary_folds(group, snapshots=False)
            else:
                yield from self._os_folds(group, snapshots=False)

    def snapshots(self) -> Iterator[Step]:
        for index in range(len(self.fold_list)):
            if self.spec.load_phase:
                yield from self._stationary_folds([index], snapshots=True)
            else:
                yield from self._os_folds([index], snapshots=True)

    def _os_folds(self, group: list[int], snapshots: bool) -> Iterator[Step | None]:
        R, C, T, F = self.R, self.C, self.T, len(group)
        # Skewed edge streams: row r of A enters at cycle r + k, column c of B at cycle c + k.
        a_edge = np.zeros((F, self.per_fold, R), dtype=self.dtype)
        b_edge = np.zeros((F, self.per_fold, C), dtype=self.dtype)
        a_edge_ok = np.zeros((F, self.per_fold, R), dtype=bool)
        b_edge_ok = np.zeros((F, self.per_fold, C), dtype=bool)
        k = np.arange(T)
        spans = []
        for f, index in enumerate(group):
            r0, r1, c0, c1 = self._ranges(*self.fold_list[index])
            spans.append((r0, r1, c0, c1))
            for r in range(r1 - r0):
                a_edge[f, k + r, r] = self.first[r0 + r]
                a_edge_ok[f, k + r, r] = True
            for c in range(c1 - c0):
                b_edge[f, k + c, c] = self.second[:, c0 + c]
                b_edge_ok[f, k + c, c] = True
            self.fold_words.append(sum(self.spec.fold_words(r1 - r0, c1 - c0, T).values()))
        a = np.zeros((F, R, C), dtype=self.dtype)
        b = np.zeros((F, R, C), dtype=self.dtype)
        a_ok = np.zeros((F, R, C), dtype=bool)
        b_ok = np.zeros((F, R, C), dtype=bool)
        acc = np.zeros((F, R, C), dtype=self.dtype)
        product = np.empty((F, R, C), dtype=self.dtype)
        active = np.empty((F, R, C), dtype=bool)
        self.reads[self.spec.left_operand] += int(a_edge_ok.sum())
        self.reads[self.spec.other_operand] += int(b_edge_ok.sum())
        # Registers are double-buffered (this cycle's and next), as clocked hardware is.
        a2, b2, a_ok2, b_ok2 = (np.empty_like(v) for v in (a, b, a_ok, b_ok))
        for t in range(self.per_fold):
            # Operands move one cell: A rightwards along rows, B downwards along columns.
            _shift_right(a, a2, a_edge[:, t])
            _shift_right(a_ok, a_ok2, a_edge_ok[:, t])
            _shift_down(b, b2, b_edge[:, t])
            _shift_down(b_ok, b_ok2, b_edge_ok[:, t])
            a, a2, a_ok, a_ok2, b, b2, b_ok, b_ok2 = a2, a, a_ok2, a_ok, b2, b, b_ok2, b_ok
            # Every cell multiplies what it holds and accumulates in place.
            np.multiply(a, b, out=product)
            acc += product
            np.logical_and(a_ok, b_ok, out=active)
            self.useful_macs += int(np.count_nonzero(active))
            if t == self.per_fold - 1:
                # The last MAC is done: outputs leave the cells (write-back not counted as cycles).
                for f, (r0, r1, c0, c1) in enumerate(spans):
                    self.out[r0:r1, c0:c1] = acc[f, : r1 - r0, : c1 - c0]
                    self.written[r0:r1, c0:c1] = True
                    self.writes["C"] += (r1 - r0) * (c1 - c0)
            if snapshots:
                yield self._step(group[0], t, "compute", spans[0], a[0], a_ok[0], b[0], b_ok[0],
                                 acc[0], np.ones((R, C), bool), active[0])
            else:
                yield None
        self.cycles_run += sum(self._fold_length(i) for i in group)

    def _stationary_folds(self, group: list[int], snapshots: bool) -> Iterator[Step | None]:
        R, C, T, F = self.R, self.C, self.T, len(group)
        fixed = np.zeros((F, R, C), dtype=self.dtype)
        fixed_ok = np.zeros((F, R, C), dtype=bool)
        edge = np.zeros((F, self.per_fold, R), dtype=self.dtype)
        edge_ok = np.zeros((F, self.per_fold, R), dtype=bool)
        t_idx = np.arange(T)
        spans = []
        for f, index in enumerate(group):
            r0, r1, c0, c1 = self._ranges(*self.fold_list[index])
            spans.append((r0, r1, c0, c1))
            fixed[f, : r1 - r0, : c1 - c0] = self.fixed[r0:r1, c0:c1]
            fixed_ok[f, : r1 - r0, : c1 - c0] = True
            # Streamed element (t, k) enters array row k at cycle R + t + k (after the load).
            for k in range(r1 - r0):
                edge[f, R + t_idx + k, k] = self.stream[:, r0 + k]
                edge_ok[f, R + t_idx + k, k] = True
            self.fold_words.append(sum(self.spec.fold_words(r1 - r0, c1 - c0, T).values()))
        # Load phase: the stationary tile shifts down one row per cycle, last row first.
        cells = np.zeros((F, R, C), dtype=self.dtype)
        cells_ok = np.zeros((F, R, C), dtype=bool)
        x = np.zeros((F, R, C), dtype=self.dtype)
        x_ok = np.zeros((F, R, C), dtype=bool)
        psum = np.zeros((F, R, C), dtype=self.dtype)
        fresh = np.empty((F, R, C), dtype=self.dtype)
        bottom = np.zeros((F, self.per_fold, C), dtype=self.dtype)  # what leaves, per cycle
        spare = np.empty((F, R, C), dtype=self.dtype)  # next-cycle registers, swapped in
        spare_ok = np.empty((F, R, C), dtype=bool)
        active = np.empty((F, R, C), dtype=bool)
        stationary_reads = int(fixed_ok.sum())
        stream_reads = int(edge_ok.sum())
        self.reads[self.spec.stationary] += stationary_reads
        self.reads[self.spec.left_operand] += stream_reads
        first_fold_in_group = group[0]
        for t in range(self.per_fold):
            loading = t < R
            if loading:
                hidden = self.hidden and first_fold_in_group > 0
                _shift_down(cells, spare, fixed[:, R - 1 - t, :])
                _shift_down(cells_ok, spare_ok, fixed_ok[:, R - 1 - t, :])
                cells, spare, cells_ok, spare_ok = spare, cells, spare_ok, cells_ok
                if hidden:
                    continue  # loaded into shadow registers during the previous fold
                if snapshots:
                    yield self._step(group[0], t, "load", spans[0], x[0], x_ok[0], cells[0],
                                     cells_ok[0], psum[0], np.zeros((R, C), bool),
                                     np.zeros((R, C), bool))
                else:
                    yield None
                continue
            # Streamed operands move one cell rightwards; partial sums move one cell down,
            # picking up each cell's product on the way.
            _shift_right(x, spare, edge[:, t])
            _shift_right(x_ok, spare_ok, edge_ok[:, t])
            x, spare, x_ok, spare_ok = spare, x, spare_ok, x_ok
            np.multiply(x, cells, out=fresh)
            fresh[:, 1:, :] += psum[:, :-1, :]
            psum, fresh = fresh, psum
            np.logical_and(x_ok, cells_ok, out=active)
            self.useful_macs += int(np.count_nonzero(active))
            # The bottom row's sums are complete and leave the array.
            bottom[:, t] = psum[:, R - 1, :]
            if snapshots:
                self._drain(bottom, spans, t, t + 1)
                yield self._step(group[0], t, "compute", spans[0], x[0], x_ok[0], cells[0],
                                 cells_ok[0], psum[0], x_ok[0], active[0])
            else:
                yield None
        if not snapshots:
            self._drain(bottom, spans, 0, self.per_fold)
        self.cycles_run += sum(self._fold_length(i) for i in group)

    def _drain(self, bottom: np.ndarray, spans: list[tuple[int, int, int, int]], t0: int,
               t1: int) -> None:
        """Write what left the bottom row in cycles [t0, t1): output (t_out, c) of a fold leaves
        at cycle ``2R - 1 + t_out + c``."""
        t = np.arange(t0, t1)[:, None]
        c = np.arange(self.C)[None, :]
        t_out = t - (2 * self.R - 1) - c
        for f, (_, _, c0, c1) in enumerate(spans):
            leaving = (t_out >= 0) & (t_out < self.T) & (c < c1 - c0)
            tt, cc = np.nonzero(leaving)
            if tt.size:
                self._write_partial(t_out[tt, cc], c0 + cc, bottom[f, t0 + tt, cc])

    def _write_partial(self, t_out: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        """Add a row fold's partial sums into C (a read-modify-write of the output buffer)."""
        self.writes["C"] += int(t_out.size)
        if not self.spec.transposed:
            self.out[t_out, cols] += values
            self.written[t_out, cols] = True
        else:  # the array computes Cᵀ; column index is m, streamed index is n
            self.out[cols, t_out] += values
            self.written[cols, t_out] = True

    # -- snapshots for animation --------------------------------------------------------------

    def _step(self, index: int, t: int, phase: str, span: tuple[int, int, int, int],
              first: np.ndarray, first_ok: np.ndarray, second: np.ndarray, second_ok: np.ndarray,
              psum: np.ndarray, psum_ok: np.ndarray, active: np.ndarray) -> Step:
        R, C = self.R, self.C
        r0, _, c0, _ = span
        rr, cc = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
        start = self._fold_start(index)
        fold_t = t - (self.hidden if index > 0 else 0)
        cycle = start + fold_t
        # Which problem element each cell holds follows from when it entered the array.
        if not self.spec.load_phase:
            k = t - rr - cc
            a_index = np.stack([r0 + rr, k], axis=-1)
            b_index = np.stack([k, c0 + cc], axis=-1)
            a_vals, b_vals = first, second
            a_ok, b_ok = first_ok, second_ok
        else:
            t_in = t - R - rr - cc  # streamed index of the value in cell (row k, column c)
            stream_index = np.stack([t_in, r0 + rr], axis=-1)     # (t, k) in the stream
            # Row r of the array holds, during the load, the tile row that entered R-1-t+r... it
            # has reached row r after (t - entry) shifts: tile row R - 1 - (t - r).
            tile_row = R - 1 - (t - rr) if phase == "load" else rr
            fixed_index = np.stack([r0 + tile_row, c0 + cc], axis=-1)  # (k, column) in fixed
            if not self.spec.transposed:   # A streams: A[m, k]; B fixed: B[k, n]
                a_index, b_index = stream_index, fixed_index
                a_vals, b_vals, a_ok, b_ok = first, second, first_ok, second_ok
            else:                   # B streams: B[k, n] = Bᵀ[n, k]; A fixed: A[m, k] = Aᵀ[k, m]
                a_index = fixed_index[..., ::-1]
                b_index = stream_index[..., ::-1]
                a_vals, b_vals, a_ok, b_ok = second, first, second_ok, first_ok
        a_index = np.where(a_ok[..., None], a_index, -1)
        b_index = np.where(b_ok[..., None], b_index, -1)
        output = np.where(self.written, self.out.astype(np.float64), np.nan)
        return Step(
            cycle=int(cycle), fold=index, fold_cycle=int(t), phase=phase,
            fold_rows=(span[0], span[1]), fold_cols=(span[2], span[3]),
            a=np.where(a_ok, a_vals, np.nan), b=np.where(b_ok, b_vals, np.nan),
            psum=np.where(psum_ok, psum.astype(np.float64), np.nan), active=active.copy(),
            a_index=a_index, b_index=b_index, output=output,
        )

    # -- result -------------------------------------------------------------------------------

    def result(self) -> SystolicRun:
        R, C = self.R, self.C
        folds = len(self.fold_list)
        cycles = self.cycles_run
        bandwidth = self.array.bandwidth_words_per_cycle
        stall = sum(_stall(words, self._fold_length(index), bandwidth)
                    for index, words in enumerate(self.fold_words))
        mapped = self.rows_total * self.cols_total
        return SystolicRun(
            dataflow=self.flow, rows=R, cols=C, M=self.M, N=self.N, K=self.K,
            cycles=cycles, macs=self.useful_macs,
            utilization=self.useful_macs / (R * C * cycles),
            folds=folds, row_folds=self.row_folds, col_folds=self.col_folds,
            mapping_efficiency=mapped / (R * C * folds),
            compute_utilization=self.useful_macs / (R * C * self.per_fold * folds),
            sram_reads=Counts(self.reads), sram_writes=Counts(self.writes),
            stall_cycles=stall, total_cycles=cycles + stall,
            double_buffer=self.array.double_buffer, bandwidth_words_per_cycle=bandwidth,
            output=self.out,
        )
