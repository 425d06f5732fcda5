"""The systolic array cycle by cycle: every operand moves one cell a cycle, every product
accumulates in a cell, and every count is tallied from what actually happened.

This is the reference the closed form (:mod:`accelkit.systolic.timing`) is checked against, and
the walk :meth:`SystolicArray.steps <accelkit.systolic.SystolicArray.steps>` animates. Folds
have identical schedules, so several are simulated side by side (a batch axis) and laid out one
after another in time; within a fold every cycle updates the whole array with numpy, and no
Python loop runs over cells. With ``overlap_folds`` the folds share one continuous timeline whose
hand-overs are checked cell by cell (:class:`ScheduleHazard` if one breaks).

    >>> import numpy as np
    >>> from accelkit.systolic import SystolicArray
    >>> A, B = np.arange(6).reshape(2, 3), np.ones((3, 2), dtype=int)
    >>> sim = Simulation(SystolicArray(2, 2, "os"), A, B)
    >>> for _ in sim.cycles(batch=1):
    ...     pass
    >>> run = sim.result()
    >>> run.output.tolist(), run.cycles
    ([[3, 3], [12, 12]], 5)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import numpy as np

from accelkit._gemm import accumulator
from accelkit.systolic.dataflows import DataflowSpec
from accelkit.systolic.results import Counts, Step, SystolicRun
from accelkit.systolic.timing import Timeline, fold_count, phase_cycles, stall_cycles, timeline


class ArraySettings(Protocol):
    """What the simulator reads of an array (a :class:`~accelkit.systolic.SystolicArray`)."""

    rows: int
    cols: int
    dataflow: str
    spec: DataflowSpec
    double_buffer: bool
    overlap_folds: bool
    os_drain: bool
    bandwidth_words_per_cycle: float | None


def _shift_right(now: np.ndarray, nxt: np.ndarray, entering: np.ndarray) -> None:
    """Next cycle's registers: every value one cell right; ``entering`` at the left edge."""
    nxt[..., 1:] = now[..., :-1]
    nxt[..., 0] = entering


def _shift_down(now: np.ndarray, nxt: np.ndarray, entering: np.ndarray) -> None:
    """Next cycle's registers: every value one cell down; ``entering`` at the top edge."""
    nxt[..., 1:, :] = now[..., :-1, :]
    nxt[..., 0, :] = entering


class ScheduleHazard(RuntimeError):
    """The overlapped schedule broke a hand-over (an engine bug, never bad input)."""


class Simulation:
    """One simulation: the folds of one GEMM on one array, walked cycle by cycle.

    All dataflows run on one mechanism. ``os`` streams A from the left and B from the top and
    keeps the sums in the cells. ``ws`` and ``is`` first shift a stationary tile down into the
    cells, then stream rows in from the left while partial sums flow down and leave at the
    bottom; ``is`` is ``ws`` on the transposed problem (Cᵀ = Bᵀ·Aᵀ) with the roles of A and B
    swapped, exactly as the hardware would hold A in place and stream B.

    Drive it with :meth:`cycles` (folds one after another), :meth:`snapshots` (one fold at a
    time, a :class:`~accelkit.systolic.Step` per cycle) or :meth:`run_overlapped`
    (``overlap_folds``), then read :meth:`result`.

    Args:
        array: the array's settings (a :class:`~accelkit.systolic.SystolicArray`).
        A, B: checked operands (M×K and K×N numpy matrices).
        line: the folds' timeline; None lays it out as the closed form does
            (:func:`accelkit.systolic.timing.timeline`). Pass another to test the walk's checks.
    """

    def __init__(self, array: ArraySettings, A: np.ndarray, B: np.ndarray,
                 line: Timeline | None = None):
        self.array = array
        self.R, self.C = array.rows, array.cols
        self.flow = array.dataflow
        self.spec = array.spec
        self.M, self.K = A.shape
        self.N = B.shape[1]
        self.dtype: np.dtype = np.dtype(accumulator(A, B))
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
        self.row_folds = fold_count(self.rows_total, self.R)
        self.col_folds = fold_count(self.cols_total, self.C)
        # SCALE-Sim's order: column folds outer, row folds inner.
        self.fold_list = [(fr, fc) for fc in range(self.col_folds) for fr in range(self.row_folds)]
        if line is None:
            line = timeline(self.spec, self.R, self.C, self.T, len(self.fold_list),
                            array.double_buffer, array.overlap_folds, array.os_drain)
        self.line = line
        self.per_fold = self.line.per_fold
        self.before, self.after = phase_cycles(self.spec, self.R, array.os_drain)
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
                    raise ScheduleHazard(f"two folds' operands would enter row {k} together")
                e_fold[when, k] = i
                e_t[when, k] = t_idx
                if k < r1 - r0:
                    e_val[when, k] = self.stream[:, r0 + k]
            for c in range(C):
                when = s + c - R + load
                if (w_fold[when, c] >= 0).any():
                    raise ScheduleHazard(f"two tiles would load into column {c} together")
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
                    raise ScheduleHazard(f"cycle {tau}: an operand reached a cell before its fold's "
                                  "weight did")
                w[new], w_ok[new], wf[new] = sh[new], sh_ok[new], shf[new]
            # 3. Multiply; partial sums move one cell down, picking up each cell's product.
            for reg in (p, p_fold, p_t):
                reg[1:] = reg[:-1]
            p[0] = 0
            p_fold[0], p_t[0] = x_fold[0], x_t[0]
            if ((p_fold != x_fold) | (p_t != x_t))[x_ok].any():
                raise ScheduleHazard(f"cycle {tau}: a partial sum met another row's operand")
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
                        raise ScheduleHazard(f"cycle {tau}: a tile load overwrote a shadow tile "
                                      "before it was latched")
                elif x_ok[:, loading].any():
                    raise ScheduleHazard(f"cycle {tau}: a tile load overwrote weights in use")
                for reg, edge in ((sh, w_val[tau]), (sh_ok, w_in_ok[tau]), (shf, incoming)):
                    reg[1:, loading] = reg[:-1, loading]
                    reg[0, loading] = edge[loading]
        if F and last < 0:
            raise ScheduleHazard("nothing ran")
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
                        raise ScheduleHazard("two folds' operands would enter one edge together")
                    fold[when, j] = i
                    kk[when, j] = k_idx
                    if j < used:
                        val[when, j] = src(j)
                        real[when, j] = True
            if drain:
                for c in range(C):
                    when = s + T + R + c - 1 + np.arange(R)
                    if (d_sched[when, c] >= 0).any():
                        raise ScheduleHazard(f"two folds would drain column {c} together")
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
                raise ScheduleHazard(f"cycle {tau}: operands of different folds or k met")
            if mac.any():
                last = tau
                start = mac & (acc_fold != af)
                if (acc_fold[start] >= 0).any():
                    raise ScheduleHazard(f"cycle {tau}: a fold started in a cell still holding a sum")
                if drain and not double and (d_fold[mac] >= 0).any():
                    raise ScheduleHazard(f"cycle {tau}: a fold started in a cell whose accumulator is "
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
                        raise ScheduleHazard(f"cycle {tau}: an output register still held a sum")
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
        stall = sum(stall_cycles(words, self._fold_length(index), bandwidth)
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


__all__ = ["ArraySettings", "ScheduleHazard", "Simulation"]
