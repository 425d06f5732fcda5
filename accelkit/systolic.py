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

Each dataflow is one frozen record in :data:`DATAFLOW_SPECS` (:class:`DataflowSpec`); the engine,
its fast paths and the widgets read it rather than switching on the name.

A GEMM larger than the array is *folded*: cut into ``row_folds × col_folds`` tiles. By default
(SCALE-Sim's convention) they run one after another, each paying the full array's fill and drain
even when it maps only part of it; ``overlap_folds=True`` pipelines them as a real MXU does.

Conventions follow SCALE-Sim 3.0.0 (scalesim-project), the field's reference simulator, so that a
learner's numbers agree with the literature. Per fold, with R×C the array and T the streamed
length (K for os, M for ws, N for is):

* os: ``T + R + C - 2`` cycles: A enters row r at cycle r + k, B enters column c at cycle c + k,
  so the MAC for k in cell (r, c) happens at cycle r + c + k (operands skewed by one cycle a row).
  Outputs stay in the cells; moving them out is not counted (SCALE-Sim's convention, which
  flatters os against ws and is: they pay their R-cycle load). ``os_drain=True`` counts it:
  after a column's last MAC its sums shift down one cell a cycle and leave at the bottom edge,
  R more cycles a fold.
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

Four options go beyond SCALE-Sim and default off:

* ``double_buffer=True`` loads the next fold's stationary tile into shadow registers while the
  current fold computes (as real TPUs do), hiding the R load cycles of every fold after the first
  (for ``os`` with ``os_drain``: drains the outputs from shadow accumulators, hiding the R drain
  cycles of every fold but the last). Without os_drain it changes nothing for ``os``.
* ``overlap_folds=True`` pipelines the folds (the scaling book, jax-ml/scaling-book tpus.md,
  Appendix B: one pipeline bubble while the first weights and inputs load, none after). The
  next fold's operands enter right behind the current fold's last, so the first load and the
  last fill-out and drain are paid once. ``simulate()`` walks one continuous timeline with
  tagged values and checks every hand-over cell by cell (a tighter schedule fails). Consecutive
  streams start ``T`` cycles apart unless a per-column R-cycle load or drain cannot hide:
  ``max(T, 2R - 1)`` with a double buffer (the next tile's shift into a column's shadow waits
  until the column has latched the current one), ``T + 2R - 1`` for ws/is without one (the only
  weight registers reload after the stream has passed), ``max(T + R - 1, 2R - 1)`` for os with
  ``os_drain`` and no double buffer. ``cycles`` is then
  ``load + (folds - 1) · gap + T + R + C - 2 + drain``. ``compute_utilization`` keeps its
  per-fold-alone definition.
* ``os_drain=True``: see os above.
* ``bandwidth_words_per_cycle=w`` limits how many elements per cycle can move between the
  buffers and the array. A fold that needs to move more words than ``w × its cycles`` stalls for
  the difference; ``stall_cycles`` and ``total_cycles`` report it while ``cycles`` stays the
  stall-free compute count. The budget is per fold: each fold's words over the cycles it
  occupies the timeline (with overlapped folds, the gap to the next fold's start), not a
  cell-level model of the buffer ports. (SCALE-Sim's own stall model has known bugs and is not
  matched.)

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
from typing import Any, Literal, NoReturn

import numpy as np

from accelkit import _html
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


class Counts(dict[str, int]):
    """A read-only, hashable dict of operand name to element count (``run.sram_reads``).

    A ``dict`` subclass, so code that checks for a dict or compares with one keeps working
    (``run.sram_reads == {"A": 4, "B": 2}``); every way of changing it raises TypeError.
    """

    __slots__ = ()

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("run counts are read-only; copy them with dict(...) to change them")

    # mypy before 2.x rejects one callable standing in for dict's overloaded methods; later
    # versions accept it, hence unused-ignore too (the test extra allows either).
    __setitem__ = __delitem__ = __ior__ = _read_only  # type: ignore[assignment, unused-ignore]
    clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment, unused-ignore]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __reduce__(self) -> tuple[type, tuple[dict[str, int]]]:
        return (Counts, (dict(self),))

    def __copy__(self) -> Counts:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Counts:
        return self

    def __repr__(self) -> str:
        return dict.__repr__(self)


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
    overlap_folds: bool = False
    os_drain: bool = False
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
            f"stall_cycles={self.stall_cycles:,}, overlap_folds={self.overlap_folds}, {shown})"
        )

    def _repr_html_(self) -> str:
        rows = [
            ("dataflow", f"{self.dataflow} ({DATAFLOW_NAMES[self.dataflow]})"),
            ("array", f"{self.rows} × {self.cols}"),
            ("GEMM (M, N, K)", f"{self.M}, {self.N}, {self.K}"),
            ("folds (row × col)", f"{self.folds} ({self.row_folds} × {self.col_folds}), "
                                  + ("pipelined" if self.overlap_folds else "one after another")),
            ("cycles", f"{self.cycles:,}"),
            ("stall cycles", f"{self.stall_cycles:,}"),
            ("utilization", f"{self.utilization:.1%}"),
            ("mapping efficiency", f"{self.mapping_efficiency:.1%}"),
            ("SRAM reads A / B", f"{self.sram_reads['A']:,} / {self.sram_reads['B']:,}"),
            ("SRAM writes C", f"{self.sram_writes['C']:,}"),
        ]
        return _html.table(rows, row_headers=True)

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
    phase: str  # "load" | "compute" | "drain"
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


@dataclass(frozen=True)
class _Timeline:
    """How a GEMM's folds lie in time. ``lengths`` are the cycles each fold occupies on the
    timeline (they sum to ``cycles``); most folds occupy ``base``, ``special`` lists the few that
    differ (the first carries the first load, the last the final fill-out and drain)."""

    per_fold: int          # cycles one fold takes alone: load, T + R + C - 2, drain
    cycles: int
    base: int
    special: Mapping[int, int]
    gap: int | None        # overlap_folds: cycles from one fold's stream start to the next's

    def length(self, index: int) -> int:
        return self.special.get(index, self.base)


def _phase_cycles(spec: DataflowSpec, R: int, os_drain: bool) -> tuple[int, int]:
    """(cycles before a fold's stream: its stationary tile's load; cycles after its last MAC:
    shifting the outputs out of the cells, counted only with ``os_drain``)."""
    if spec.load_phase:
        return R, 0
    return 0, (R if os_drain else 0)


def _overlap_gap(spec: DataflowSpec, R: int, T: int, double_buffer: bool, os_drain: bool) -> int:
    """Fewest cycles between consecutive folds' stream starts when folds overlap.

    The stream itself needs T (the next fold's first operand enters right behind the current
    fold's last). A load or drain of R cycles per column adds a constraint:

    * double-buffered (shadow registers): the next tile's R-cycle shift into a column's shadow
      registers may start only once every cell of that column has latched the current tile
      (R - 1 cycles after the column's first), so the loads need 2R - 1 cycles apart; the os
      drain registers likewise empty in R cycles after the column's last MAC.
    * not double-buffered, ws/is: the column's only weight registers are reloaded after the
      current fold's last operand has passed the column: T + 2R - 1.
    * not double-buffered, os: the accumulators shift out through the cells below, so the next
      fold may start in a cell once the outputs above it have passed (T + R - 1), and its first
      finished sum must not be pushed down by the previous fold's drain (2R - 1).
    """
    before, after = _phase_cycles(spec, R, os_drain)
    if not (before or after):
        return T
    if double_buffer:
        return max(T, 2 * R - 1)
    return T + 2 * R - 1 if before else max(T + R - 1, 2 * R - 1)


def _timeline(spec: DataflowSpec, R: int, C: int, T: int, folds: int, double_buffer: bool,
              overlap: bool, os_drain: bool) -> _Timeline:
    before, after = _phase_cycles(spec, R, os_drain)
    core = T + R + C - 2  # the stream, skewed across R + C - 1 diagonals
    per_fold = before + core + after
    if not overlap:
        # Folds run one after another; a double buffer hides the load of every fold but the
        # first (or the drain of every fold but the last).
        hidden = R if (double_buffer and (before or after)) else 0
        special = {(0 if before else folds - 1): per_fold} if hidden else {}
        return _Timeline(per_fold, folds * per_fold - (folds - 1) * hidden, per_fold - hidden,
                         MappingProxyType(special), None)
    gap = _overlap_gap(spec, R, T, double_buffer, os_drain)
    special = {folds - 1: core + after}
    special[0] = special.get(0, gap) + before
    return _Timeline(per_fold, before + (folds - 1) * gap + core + after, gap,
                     MappingProxyType(special), gap)


def _counts(spec: DataflowSpec, R: int, C: int, M: int, N: int, K: int, double_buffer: bool,
            bandwidth: float | None, overlap: bool = False,
            os_drain: bool = False) -> dict[str, Any]:
    rows_total, cols_total, T = spec.geometry(M, N, K)
    row_sizes = _fold_sizes(rows_total, R)
    col_sizes = _fold_sizes(cols_total, C)
    row_folds = sum(n for _, n in row_sizes)
    col_folds = sum(n for _, n in col_sizes)
    folds = row_folds * col_folds
    line = _timeline(spec, R, C, T, folds, double_buffer, overlap, os_drain)
    cycles = line.cycles
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
            stall += n * _stall(sum(words.values()), line.base, bandwidth)
    # The first fold maps the first row and column tiles, the last fold the last ones (column
    # folds outer, row folds inner); either may occupy the timeline longer than the others.
    ends = {0: (row_sizes[0][0], col_sizes[0][0]), folds - 1: (row_sizes[-1][0], col_sizes[-1][0])}
    for index, length in (line.special.items() if bandwidth is not None else ()):
        words_i = sum(spec.fold_words(*ends[index], T).values())
        stall += _stall(words_i, length, bandwidth) - _stall(words_i, line.base, bandwidth)
    return {
        "cycles": cycles,
        "macs": macs,
        "utilization": macs / (cells * cycles),
        "folds": folds,
        "row_folds": row_folds,
        "col_folds": col_folds,
        "mapping_efficiency": mapped / (cells * folds),
        "compute_utilization": macs / (cells * line.per_fold * folds),
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
        overlap_folds: pipeline the folds, the next fold's operands right behind the current
            fold's (real MXUs); False charges every fold its fill and drain (SCALE-Sim).
        os_drain: count the cycles that shift os outputs out of the cells (SCALE-Sim does not).

    Raises:
        ValueError / TypeError naming the argument, for anything out of range.

    Example:
        >>> sa = SystolicArray(rows=8, cols=8, dataflow="ws")
        >>> sa.estimate(M=64, N=64, K=64).cycles
        5504
        >>> SystolicArray(8, 8, "ws", double_buffer=True, overlap_folds=True).estimate(
        ...     M=64, N=64, K=64).cycles
        4118
    """

    def __init__(self, rows: int = 8, cols: int = 8, dataflow: str = "ws", *,
                 double_buffer: bool = False, bandwidth_words_per_cycle: float | None = None,
                 overlap_folds: bool = False, os_drain: bool = False):
        self.rows = check.positive_int("rows", rows, maximum=MAX_SIDE)
        self.cols = check.positive_int("cols", cols, maximum=MAX_SIDE)
        self.dataflow = check.choice("dataflow", dataflow, DATAFLOWS)
        self.spec = DATAFLOW_SPECS[self.dataflow]
        for name, flag in (("double_buffer", double_buffer), ("overlap_folds", overlap_folds),
                           ("os_drain", os_drain)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        self.double_buffer = double_buffer
        self.overlap_folds = overlap_folds
        self.os_drain = os_drain
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
        if self.overlap_folds:
            extras += ", overlap_folds=True"
        if self.os_drain:
            extras += ", os_drain=True"
        return f"SystolicArray(rows={self.rows}, cols={self.cols}, dataflow={self.dataflow!r}{extras})"

    # -- fast paths ----------------------------------------------------------------------------

    def estimate(self, *, M: int, N: int, K: int) -> SystolicRun:
        """Closed-form counts for an M×K by K×N GEMM, without any data (``output`` is None)."""
        M = check.positive_int("M", M)
        N = check.positive_int("N", N)
        K = check.positive_int("K", K)
        return self._run(M, N, K, None)

    def utilizations(self, *, M: object, N: object, K: object) -> np.ndarray:
        """``estimate(M=m, N=n, K=k).utilization`` for every (m, n, k) of the broadcast
        arrays ``M``, ``N``, ``K`` at once (the same numbers, computed with numpy: a map of
        shapes costs one pass instead of one estimate per point).

        Raises:
            TypeError, ValueError: a size that is not a whole number >= 1 (as ``estimate``), or
            more than 65,536 points.
        """
        arrays = []
        for name, value in (("M", M), ("N", N), ("K", K)):
            x = np.asarray(value)
            if x.dtype.kind not in "iu" or x.size == 0 or (x < 1).any():
                raise ValueError(f"{name} must hold whole numbers >= 1, got {value!r}")
            arrays.append(x.astype(np.int64))
        M_, N_, K_ = np.broadcast_arrays(*arrays)
        if M_.size > 1 << 16:
            raise ValueError(f"M, N, K broadcast to {M_.size:,} points, more than 65,536")
        one_by_one = np.vectorize(lambda m, n, k: self.estimate(M=int(m), N=int(n), K=int(k))
                                  .utilization, otypes=[float])
        big = max(int(M_.max()), int(N_.max()), int(K_.max()))
        if self.overlap_folds or big > 1 << 16:
            # The overlapped timeline has more cases, and past 2^16 a product of three sizes
            # may not be exact in float64: estimate's own arithmetic decides.
            return one_by_one(M_, N_, K_)
        spec, R, C = self.spec, self.rows, self.cols
        by_name = {"M": M_, "N": N_, "K": K_}  # spec.geometry, on arrays
        rows_total, cols_total, T = (by_name[spec.on_rows], by_name[spec.on_cols],
                                     by_name[spec.streamed])
        folds = (-(-rows_total // R)) * (-(-cols_total // C))
        # The timeline of _timeline without overlap: folds one after another, a double buffer
        # hiding the load (or drain) of every fold but one.
        before, after = _phase_cycles(spec, R, self.os_drain)
        per_fold = before + T + R + C - 2 + after
        hidden = R if (self.double_buffer and (before or after)) else 0
        cycles = folds * per_fold - (folds - 1) * hidden
        return (M_ * N_ * K_) / (R * C * cycles)

    def matmul(self, A: object, B: object) -> SystolicRun:
        """Multiply A (M×K) by B (K×N): numpy's exact product plus the closed-form counts."""
        A, B = self._operands(A, B)
        return self._run(A.shape[0], B.shape[1], A.shape[1], _exact_product(A, B))

    def _run(self, M: int, N: int, K: int, output: np.ndarray | None) -> SystolicRun:
        counts = _counts(self.spec, self.rows, self.cols, M, N, K, self.double_buffer,
                         self.bandwidth_words_per_cycle, self.overlap_folds, self.os_drain)
        return SystolicRun(dataflow=self.dataflow, rows=self.rows, cols=self.cols, M=M, N=N, K=K,
                           double_buffer=self.double_buffer, overlap_folds=self.overlap_folds,
                           os_drain=self.os_drain,
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
        if self.overlap_folds:
            machine.run_overlapped()
        else:
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
        if self.overlap_folds:
            raise ValueError("steps() animates folds one at a time; use overlap_folds=False to "
                             "animate, or simulate() to run overlapped folds cycle by cycle")
        self._check_state_fits(A.shape[0], B.shape[1], A.shape[1])
        return _Machine(self, A, B).snapshots()

    def _check_state_fits(self, M: int, N: int, K: int) -> None:
        rows_total, cols_total, T = self.spec.geometry(M, N, K)
        folds = math.ceil(rows_total / self.rows) * math.ceil(cols_total / self.cols)
        line = _timeline(self.spec, self.rows, self.cols, T, folds, self.double_buffer,
                         self.overlap_folds, self.os_drain)
        # Skewed edge streams (values, valid flags, fold and index tags) for one fold, or for the
        # whole timeline when folds overlap, and ~20 cell-sized registers.
        span = line.cycles if self.overlap_folds else line.per_fold
        state = 4 * span * (self.rows + self.cols) + 20 * self.rows * self.cols
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


class _Hazard(RuntimeError):
    """The overlapped schedule broke a hand-over (an engine bug, never bad input)."""


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
        self.dtype: np.dtype = np.dtype(_accumulator(A, B))
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
        self.line = _timeline(self.spec, self.R, self.C, self.T, len(self.fold_list),
                              array.double_buffer, array.overlap_folds, array.os_drain)
        self.per_fold = self.line.per_fold
        self.before, self.after = _phase_cycles(self.spec, self.R, array.os_drain)
        self.hidden = self.line.per_fold - self.line.base if not array.overlap_folds else 0
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
        """Cycles fold ``index`` occupies the timeline (its load or drain hidden if
        double-buffered, its stream overlapped with the next fold's with ``overlap_folds``)."""
        return self.line.length(index)

    # -- the cycle loop ---------------------------------------------------------------------

    def cycles(self, batch: int) -> Iterator[Step | None]:
        """Advance every fold through its cycles, ``batch`` folds side by side."""
        for start in range(0, len(self.fold_list), batch):
            group = list(range(start, min(start + batch, len(self.fold_list))))
            if self.spec.load_phase:
                yield from self._stationary_folds(group, snapshots=False)
            else:
                yield from self._os_folds(group, snapshots=False)

    def snapshots(self) -> Iterator[Step]:
        for index in range(len(self.fold_list)):
            walk = (self._stationary_folds if self.spec.load_phase else self._os_folds)
            for step in walk([index], snapshots=True):
                assert step is not None
                yield step

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
        last_fold = len(self.fold_list) - 1
        columns = np.arange(C)
        for t in range(self.per_fold):
            if self.after:
                # os_drain: after a column's last MAC its sums shift down one cell a cycle and
                # leave at the bottom edge, the bottom row's first.
                j = t - (T + R - 1) - columns
                cols = columns[(j >= 0) & (j < R)]
                if cols.size:
                    source = R - 1 - (t - (T + R - 1) - cols)  # array row whose sum leaves now
                    for f, (r0, r1, c0, c1) in enumerate(spans):
                        keep = (source < r1 - r0) & (cols < c1 - c0)
                        self.out[r0 + source[keep], c0 + cols[keep]] = acc[f, R - 1, cols[keep]]
                        self.written[r0 + source[keep], c0 + cols[keep]] = True
                        self.writes["C"] += int(keep.sum())
                    acc[:, 1:, cols] = acc[:, :-1, cols]
                    acc[:, 0, cols] = 0
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
            if t == self.per_fold - 1 and not self.after:
                # The last MAC is done: outputs leave the cells (write-back not counted as cycles,
                # SCALE-Sim's convention; os_drain=True counts it).
                for f, (r0, r1, c0, c1) in enumerate(spans):
                    self.out[r0:r1, c0:c1] = acc[f, : r1 - r0, : c1 - c0]
                    self.written[r0:r1, c0:c1] = True
                    self.writes["C"] += (r1 - r0) * (c1 - c0)
            if snapshots:
                if self.hidden and t >= self.per_fold - self.hidden and group[0] != last_fold:
                    continue  # drained from shadow registers while the next fold computes
                phase = "compute" if t < T + R + C - 2 else "drain"
                yield self._step(group[0], t, phase, spans[0], a[0], a_ok[0], b[0], b_ok[0],
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

    # -- overlapped folds: one continuous timeline ---------------------------------------------

    def run_overlapped(self) -> None:
        """Walk every fold on one timeline, each fold's operands entering right behind the
        previous fold's (``overlap_folds=True``).

        Values carry tags (their fold and streamed index), as the control bits travelling with
        data in a real array do, and the walk checks every hand-over cell by cell: a cell must
        hold the right fold's weight when an operand arrives, a shadow register must not be
        overwritten before it was latched, an accumulator must be empty before a new fold
        starts in it. A fold tile smaller than the array streams zeros through the unmapped
        cells (SCALE-Sim's convention of charging each fold the whole array).
        """
        R, C, T = self.R, self.C, self.T
        gap = self.line.gap
        assert gap is not None
        starts = [self.before + i * gap for i in range(len(self.fold_list))]
        spans = [self._ranges(*fold) for fold in self.fold_list]
        for r0, r1, c0, c1 in spans:
            self.fold_words.append(sum(self.spec.fold_words(r1 - r0, c1 - c0, T).values()))
        horizon = self.line.cycles + R + C  # slack: the walk measures when activity ends
        if self.spec.load_phase:
            last = self._overlap_stationary(starts, spans, horizon)
        else:
            last = self._overlap_output(starts, spans, horizon)
        self.cycles_run = last + 1

    def _overlap_stationary(self, starts: list[int], spans: list[tuple[int, int, int, int]],
                            horizon: int) -> int:
        R, C, T = self.R, self.C, self.T
        double = self.array.double_buffer
        F = len(spans)
        # Left edge: fold i's streamed element (t, k) enters array row k at cycle s_i + t + k.
        e_val = np.zeros((horizon, R), dtype=self.dtype)
        e_fold = np.full((horizon, R), -1, dtype=np.int64)
        e_t = np.zeros((horizon, R), dtype=np.int64)
        # Top edge of the weight registers: column c of fold i's tile shifts in over the R cycles
        # ending just before fold i's first operand reaches the column (tile row R-1 first).
        w_val = np.zeros((horizon, C), dtype=self.dtype)
        w_in_ok = np.zeros((horizon, C), dtype=bool)
        w_fold = np.full((horizon, C), -1, dtype=np.int64)
        t_idx = np.arange(T)
        load = np.arange(R)
        for i, (s, (r0, r1, c0, c1)) in enumerate(zip(starts, spans)):
            for k in range(R):
                when = s + t_idx + k
                if (e_fold[when, k] >= 0).any():
                    raise _Hazard(f"two folds' operands would enter row {k} together")
                e_fold[when, k] = i
                e_t[when, k] = t_idx
                if k < r1 - r0:
                    e_val[when, k] = self.stream[:, r0 + k]
            for c in range(C):
                when = s + c - R + load
                if (w_fold[when, c] >= 0).any():
                    raise _Hazard(f"two tiles would load into column {c} together")
                w_fold[when, c] = i
                rows = R - 1 - load
                if c < c1 - c0:
                    valid = rows < r1 - r0
                    w_val[when[valid], c] = self.fixed[r0 + rows[valid], c0 + c]
                    w_in_ok[when[valid], c] = True
            self.reads[self.spec.left_operand] += T * (r1 - r0)
            self.reads[self.spec.stationary] += (r1 - r0) * (c1 - c0)
        col0 = np.array([sp[2] for sp in spans])
        used_c = np.array([sp[3] - sp[2] for sp in spans])
        x = np.zeros((R, C), dtype=self.dtype)
        x_fold = np.full((R, C), -1, dtype=np.int64)
        x_t = np.zeros((R, C), dtype=np.int64)
        w = np.zeros((R, C), dtype=self.dtype)           # active weights
        w_ok = np.zeros((R, C), dtype=bool)
        wf = np.full((R, C), -1, dtype=np.int64)
        if double:                                        # shadow registers
            sh, sh_ok, shf = np.zeros_like(w), np.zeros_like(w_ok), np.full_like(wf, -1)
        else:                                             # loads write the active registers
            sh, sh_ok, shf = w, w_ok, wf
        p = np.zeros((R, C), dtype=self.dtype)
        p_fold = np.full((R, C), -1, dtype=np.int64)
        p_t = np.zeros((R, C), dtype=np.int64)
        last = -1
        for tau in range(horizon):
            # 1. Streamed operands move one cell right.
            for reg, edge in ((x, e_val), (x_fold, e_fold), (x_t, e_t)):
                reg[:, 1:] = reg[:, :-1]
                reg[:, 0] = edge[tau]
            x_ok = x_fold >= 0
            # 2. A cell meeting a new fold's operand latches that fold's tile from its shadow.
            new = x_ok & (wf != x_fold)
            if new.any():
                if not double or (shf[new] != x_fold[new]).any():
                    raise _Hazard(f"cycle {tau}: an operand reached a cell before its fold's "
                                  "weight did")
                w[new], w_ok[new], wf[new] = sh[new], sh_ok[new], shf[new]
            # 3. Multiply; partial sums move one cell down, picking up each cell's product.
            for reg in (p, p_fold, p_t):
                reg[1:] = reg[:-1]
            p[0] = 0
            p_fold[0], p_t[0] = x_fold[0], x_t[0]
            if ((p_fold != x_fold) | (p_t != x_t))[x_ok].any():
                raise _Hazard(f"cycle {tau}: a partial sum met another row's operand")
            active = x_ok & w_ok
            if x_ok.any():
                last = tau
            self.useful_macs += int(np.count_nonzero(active))
            p += np.where(x_ok, x * w, 0)
            # 4. Finished sums leave the bottom row (padding columns are dropped).
            cols = np.nonzero(p_fold[R - 1] >= 0)[0]
            if cols.size:
                last = tau
                folds = p_fold[R - 1, cols]
                keep = cols < used_c[folds]
                self._write_partial(p_t[R - 1, cols[keep]], col0[folds[keep]] + cols[keep],
                                    p[R - 1, cols[keep]])
            # 5. Tiles shift one row down into the shadow (or, without one, the active) registers.
            loading = w_fold[tau] >= 0
            if loading.any():
                incoming = w_fold[tau]
                if double:
                    # Padding counts: the array loads the whole (zero-padded) tile.
                    lost = (shf >= 0) & (shf != wf) & (shf != incoming[None, :])
                    if lost[:, loading].any():
                        raise _Hazard(f"cycle {tau}: a tile load overwrote a shadow tile "
                                      "before it was latched")
                elif x_ok[:, loading].any():
                    raise _Hazard(f"cycle {tau}: a tile load overwrote weights in use")
                for reg, edge in ((sh, w_val[tau]), (sh_ok, w_in_ok[tau]), (shf, incoming)):
                    reg[1:, loading] = reg[:-1, loading]
                    reg[0, loading] = edge[loading]
        if F and last < 0:
            raise _Hazard("nothing ran")
        return last

    def _overlap_output(self, starts: list[int], spans: list[tuple[int, int, int, int]],
                        horizon: int) -> int:
        R, C, T = self.R, self.C, self.T
        double = self.array.double_buffer
        drain = bool(self.after)
        # Fold i's A[r, k] enters row r at s_i + r + k; B[k, c] enters column c at s_i + c + k.
        a_val = np.zeros((horizon, R), dtype=self.dtype)
        a_real = np.zeros((horizon, R), dtype=bool)
        a_fold = np.full((horizon, R), -1, dtype=np.int64)
        a_k = np.zeros((horizon, R), dtype=np.int64)
        b_val = np.zeros((horizon, C), dtype=self.dtype)
        b_real = np.zeros((horizon, C), dtype=bool)
        b_fold = np.full((horizon, C), -1, dtype=np.int64)
        b_k = np.zeros((horizon, C), dtype=np.int64)
        # os_drain: column c's sums shift out over the R cycles after its bottom cell's last MAC.
        d_sched = np.full((horizon, C), -1, dtype=np.int64)
        k_idx = np.arange(T)
        for i, (s, (r0, r1, c0, c1)) in enumerate(zip(starts, spans)):
            for val, real, fold, kk, side, used, src in (
                    (a_val, a_real, a_fold, a_k, R, r1 - r0, lambda j: self.first[r0 + j]),
                    (b_val, b_real, b_fold, b_k, C, c1 - c0, lambda j: self.second[:, c0 + j])):
                for j in range(side):
                    when = s + j + k_idx
                    if (fold[when, j] >= 0).any():
                        raise _Hazard("two folds' operands would enter one edge together")
                    fold[when, j] = i
                    kk[when, j] = k_idx
                    if j < used:
                        val[when, j] = src(j)
                        real[when, j] = True
            if drain:
                for c in range(C):
                    when = s + T + R + c - 1 + np.arange(R)
                    if (d_sched[when, c] >= 0).any():
                        raise _Hazard(f"two folds would drain column {c} together")
                    d_sched[when, c] = i
            self.reads[self.spec.left_operand] += (r1 - r0) * T
            self.reads[self.spec.other_operand] += T * (c1 - c0)
        row0 = np.array([sp[0] for sp in spans])
        col0 = np.array([sp[2] for sp in spans])
        used_r = np.array([sp[1] - sp[0] for sp in spans])
        used_c = np.array([sp[3] - sp[2] for sp in spans])
        shape = (R, C)
        a, ar, af, ak = (np.zeros(shape, self.dtype), np.zeros(shape, bool),
                         np.full(shape, -1, np.int64), np.zeros(shape, np.int64))
        b, br, bf, bk = (np.zeros(shape, self.dtype), np.zeros(shape, bool),
                         np.full(shape, -1, np.int64), np.zeros(shape, np.int64))
        acc = np.zeros(shape, self.dtype)
        acc_fold = np.full(shape, -1, np.int64)
        acc_n = np.zeros(shape, np.int64)
        d = np.zeros(shape, self.dtype)                    # outputs on their way out
        d_fold = np.full(shape, -1, np.int64)
        d_row = np.zeros(shape, np.int64)
        rows_of = np.broadcast_to(np.arange(R)[:, None], shape)
        cols_of = np.broadcast_to(np.arange(C)[None, :], shape)
        last = -1
        for tau in range(horizon):
            # 1. Draining columns shift their finished sums one cell down; the bottom one leaves.
            if drain:
                cols = np.nonzero(d_sched[tau] >= 0)[0]
                if cols.size:
                    leaving = d_fold[R - 1, cols] >= 0
                    if leaving.any():
                        last = tau
                        cc, ff = cols[leaving], d_fold[R - 1, cols[leaving]]
                        rr = d_row[R - 1, cc]
                        keep = (rr < used_r[ff]) & (cc < used_c[ff])
                        self._write_output(row0[ff[keep]] + rr[keep], col0[ff[keep]] + cc[keep],
                                           d[R - 1, cc[keep]])
                    for reg, empty in ((d, 0), (d_fold, -1), (d_row, 0)):
                        reg[1:, cols] = reg[:-1, cols]
                        reg[0, cols] = empty
            # 2. A moves one cell right, B one cell down.
            for reg, edge in ((a, a_val), (ar, a_real), (af, a_fold), (ak, a_k)):
                reg[:, 1:] = reg[:, :-1]
                reg[:, 0] = edge[tau]
            for reg, edge in ((b, b_val), (br, b_real), (bf, b_fold), (bk, b_k)):
                reg[1:] = reg[:-1]
                reg[0] = edge[tau]
            # 3. Every cell holding a matched pair multiplies and accumulates.
            mac = (af >= 0) & (bf >= 0)
            if ((af != bf) | (ak != bk))[mac].any():
                raise _Hazard(f"cycle {tau}: operands of different folds or k met")
            if mac.any():
                last = tau
                start = mac & (acc_fold != af)
                if (acc_fold[start] >= 0).any():
                    raise _Hazard(f"cycle {tau}: a fold started in a cell still holding a sum")
                if drain and not double and (d_fold[mac] >= 0).any():
                    raise _Hazard(f"cycle {tau}: a fold started in a cell whose accumulator is "
                                  "still draining")
                acc[start], acc_fold[start], acc_n[start] = 0, af[start], 0
                acc += np.where(mac, a * b, 0)
                acc_n += mac
                self.useful_macs += int(np.count_nonzero(mac & ar & br))
            # 4. A cell that did its fold's last MAC hands its sum on.
            done = mac & (acc_n == T)
            if done.any():
                ff, rr, cc = acc_fold[done], rows_of[done], cols_of[done]
                if drain:
                    if (d_fold[done] >= 0).any():
                        raise _Hazard(f"cycle {tau}: an output register still held a sum")
                    d[done], d_fold[done], d_row[done] = acc[done], ff, rr
                else:  # SCALE-Sim's convention: outputs leave the cells at no cycle cost
                    keep = (rr < used_r[ff]) & (cc < used_c[ff])
                    self._write_output(row0[ff[keep]] + rr[keep], col0[ff[keep]] + cc[keep],
                                       acc[done][keep])
                acc_fold[done] = -1
        return last

    def _write_output(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        """Store finished output-stationary sums in C."""
        self.writes["C"] += int(rows.size)
        self.out[rows, cols] = values
        self.written[rows, cols] = True

    # -- snapshots for animation --------------------------------------------------------------

    def _step(self, index: int, t: int, phase: str, span: tuple[int, int, int, int],
              first: np.ndarray, first_ok: np.ndarray, second: np.ndarray, second_ok: np.ndarray,
              psum: np.ndarray, psum_ok: np.ndarray, active: np.ndarray) -> Step:
        R, C = self.R, self.C
        r0, _, c0, _ = span
        rr, cc = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
        # Fold i's cycle 0 lies at i·(per_fold - hidden): a hidden load is fold i's first R
        # cycles (skipped), a hidden drain its last R (overlapping the next fold's first).
        cycle = index * (self.per_fold - self.hidden) + t
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
            overlap_folds=self.array.overlap_folds, os_drain=self.array.os_drain,
            output=self.out,
        )
