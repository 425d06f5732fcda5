"""The systolic array's closed-form timing and traffic: how a GEMM's folds lie in time, and what
each fold moves between the buffers and the array.

:meth:`SystolicArray.estimate <accelkit.systolic.SystolicArray.estimate>` and ``matmul`` report
:func:`counts`; the simulator (:mod:`accelkit.systolic.simulator`) walks the :func:`timeline`
this module lays out and tallies the same counts from what actually moved. The conventions (why a
fold costs what it does) are in :mod:`accelkit.systolic`'s docstring.

    >>> from accelkit.systolic.dataflows import DATAFLOW_SPECS
    >>> ws = DATAFLOW_SPECS["ws"]
    >>> serial_cycles(ws, R=8, C=8, T=64, folds=64, double_buffer=False, os_drain=False)
    (86, 0, 5504)
    >>> timeline(ws, 8, 8, 64, 64, double_buffer=True, overlap=True, os_drain=False).cycles
    4118
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from accelkit.systolic.dataflows import DataflowSpec
from accelkit.systolic.results import Counts

#: An int, or a numpy array of ints: :func:`fold_count` and :func:`serial_cycles` work on both,
#: so a map of shapes is one pass of the same arithmetic that :func:`counts` does per shape.
Size = TypeVar("Size", int, np.ndarray)


def fold_count(total: Size, side: int) -> Size:
    """Folds needed to cut ``total`` rows (or columns) of the problem into tiles of ``side``."""
    return -(-total // side)


def fold_sizes(total: int, side: int) -> list[tuple[int, int]]:
    """[(used, how many folds use that much)] for cutting ``total`` into tiles of ``side``."""
    full, rest = divmod(total, side)
    sizes = [(side, full)] if full else []
    if rest:
        sizes.append((rest, 1))
    return sizes


@dataclass(frozen=True)
class Timeline:
    """How a GEMM's folds lie in time. ``lengths`` are the cycles each fold occupies on the
    timeline (they sum to ``cycles``); most folds occupy ``base``, ``special`` lists the few that
    differ (the first carries the first load, the last the final fill-out and drain)."""

    per_fold: int          # cycles one fold takes alone: load, T + R + C - 2, drain
    cycles: int
    base: int
    special: Mapping[int, int]
    gap: int | None        # overlap_folds: cycles from one fold's stream start to the next's

    def length(self, index: int) -> int:
        """Cycles fold ``index`` occupies the timeline (its load or drain hidden if
        double-buffered, its stream overlapped with the next fold's with ``overlap_folds``)."""
        return self.special.get(index, self.base)


def phase_cycles(spec: DataflowSpec, R: int, os_drain: bool) -> tuple[int, int]:
    """(cycles before a fold's stream: its stationary tile's load; cycles after its last MAC:
    shifting the outputs out of the cells, counted only with ``os_drain``)."""
    if spec.load_phase:
        return R, 0
    return 0, (R if os_drain else 0)


def overlap_gap(spec: DataflowSpec, R: int, T: int, double_buffer: bool, os_drain: bool) -> int:
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
    before, after = phase_cycles(spec, R, os_drain)
    if not (before or after):
        return T
    if double_buffer:
        return max(T, 2 * R - 1)
    return T + 2 * R - 1 if before else max(T + R - 1, 2 * R - 1)


def serial_cycles(spec: DataflowSpec, R: int, C: int, T: Size, folds: Size, double_buffer: bool,
                  os_drain: bool) -> tuple[Size, int, Size]:
    """Folds run one after another (SCALE-Sim): (cycles one fold takes alone, cycles a double
    buffer hides of every fold but one, the total).

    A fold loads (or drains), then streams ``T`` skewed across ``R + C - 1`` diagonals. A double
    buffer hides the load of every fold but the first (or the drain of every fold but the last).
    ``T`` and ``folds`` may be numpy arrays (a map of shapes): the arithmetic is the same.
    """
    before, after = phase_cycles(spec, R, os_drain)
    per_fold = before + (T + R + C - 2) + after
    hidden = R if (double_buffer and (before or after)) else 0
    return per_fold, hidden, folds * per_fold - (folds - 1) * hidden


def timeline(spec: DataflowSpec, R: int, C: int, T: int, folds: int, double_buffer: bool,
             overlap: bool, os_drain: bool, *, gap: int | None = None) -> Timeline:
    """Where each of ``folds`` folds lies in time on an ``R × C`` array streaming ``T``.

    ``overlap``: folds pipelined, consecutive streams ``gap`` cycles apart (None: the fewest the
    hand-overs allow, :func:`overlap_gap`; a test passes a tighter one to see the simulator
    refuse it); otherwise one after another (:func:`serial_cycles`).
    """
    before, after = phase_cycles(spec, R, os_drain)
    if not overlap:
        per_fold, hidden, cycles = serial_cycles(spec, R, C, T, folds, double_buffer, os_drain)
        special = {(0 if before else folds - 1): per_fold} if hidden else {}
        return Timeline(per_fold, cycles, per_fold - hidden, MappingProxyType(special), None)
    core = T + R + C - 2  # the stream, skewed across R + C - 1 diagonals
    if gap is None:
        gap = overlap_gap(spec, R, T, double_buffer, os_drain)
    special = {folds - 1: core + after}
    special[0] = special.get(0, gap) + before
    return Timeline(before + core + after, before + (folds - 1) * gap + core + after, gap,
                    MappingProxyType(special), gap)


def stall_cycles(words: int, busy_cycles: int, bandwidth: float | None) -> int:
    """Cycles a fold waits when it must move ``words`` in ``busy_cycles`` at ``bandwidth``."""
    if bandwidth is None:
        return 0
    return max(0, math.ceil(words / bandwidth) - busy_cycles)


def counts(spec: DataflowSpec, R: int, C: int, M: int, N: int, K: int, double_buffer: bool,
           bandwidth: float | None, overlap: bool = False,
           os_drain: bool = False) -> dict[str, Any]:
    """Every count of :class:`~accelkit.systolic.SystolicRun` but the problem and the options,
    in closed form: cycles, utilizations, folds, buffer traffic and memory stalls."""
    rows_total, cols_total, T = spec.geometry(M, N, K)
    row_sizes = fold_sizes(rows_total, R)
    col_sizes = fold_sizes(cols_total, C)
    row_folds = sum(n for _, n in row_sizes)
    col_folds = sum(n for _, n in col_sizes)
    folds = row_folds * col_folds
    line = timeline(spec, R, C, T, folds, double_buffer, overlap, os_drain)
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
            stall += n * stall_cycles(sum(words.values()), line.base, bandwidth)
    # The first fold maps the first row and column tiles, the last fold the last ones (column
    # folds outer, row folds inner); either may occupy the timeline longer than the others.
    ends = {0: (row_sizes[0][0], col_sizes[0][0]), folds - 1: (row_sizes[-1][0], col_sizes[-1][0])}
    for index, length in (line.special.items() if bandwidth is not None else ()):
        words_i = sum(spec.fold_words(*ends[index], T).values())
        stall += stall_cycles(words_i, length, bandwidth) - stall_cycles(words_i, line.base,
                                                                         bandwidth)
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


__all__ = ["Size", "Timeline", "counts", "fold_count", "fold_sizes", "overlap_gap",
           "phase_cycles", "serial_cycles", "stall_cycles", "timeline"]
