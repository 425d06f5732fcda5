"""What a GEMM on the systolic array reports: its counts (:class:`SystolicRun`), and the array's
state cycle by cycle for an animation (:class:`Step`).

The counts are the same whichever path made them (the closed form in
:mod:`accelkit.systolic.timing` or the cell-by-cell walk in :mod:`accelkit.systolic.simulator`);
:meth:`SystolicRun.counts` is what the paths must agree on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np

from accelkit import _html
from accelkit.systolic.dataflows import DATAFLOW_NAMES


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



@dataclass(frozen=True)
class SystolicRun:
    """What one GEMM cost on a systolic array. ``output`` is None for ``SystolicArray.estimate()``.

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


__all__ = ["Counts", "Step", "SystolicRun"]
