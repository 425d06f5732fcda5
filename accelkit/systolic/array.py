"""The systolic array as a learner builds one: a ``rows × cols`` grid with a dataflow and options,
and the three ways to run a GEMM on it (:meth:`SystolicArray.estimate`, ``matmul``, ``simulate``),
plus ``steps`` for an animation. The conventions are in :mod:`accelkit.systolic`'s docstring.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from accelkit import _gemm
from accelkit import _validate as check
from accelkit.systolic.dataflows import DATAFLOW_SPECS, DATAFLOWS
from accelkit.systolic.results import Step, SystolicRun
from accelkit.systolic.simulator import Simulation
from accelkit.systolic.timing import counts, fold_count, serial_cycles, timeline

#: Largest array side the engine accepts (a TPU v6e MXU is 256; this leaves room to explore).
MAX_SIDE = 4096
#: Elements of per-cycle state a simulation may hold at once before it is refused up front
#: (32 Mi elements, about 256 MiB).
MAX_STATE_ELEMENTS = 1 << 25
#: Cells of one batch of folds simulate() walks side by side: a working set that stays in the
#: CPU's cache (a speed setting, not a store of results).
_BATCH_ELEMENTS = 1 << 16


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
        R, C = self.rows, self.cols
        rows_total, cols_total, T = self.spec.geometry(M_, N_, K_)  # type: ignore[arg-type]
        folds = fold_count(rows_total, R) * fold_count(cols_total, C)
        # The closed form's own rule for folds run one after another, fed arrays.
        _, _, cycles = serial_cycles(self.spec, R, C, T, folds, self.double_buffer,
                                     self.os_drain)
        return (M_ * N_ * K_) / (R * C * cycles)

    def matmul(self, A: object, B: object) -> SystolicRun:
        """Multiply A (M×K) by B (K×N): numpy's exact product plus the closed-form counts."""
        A, B = self._operands(A, B)
        return self._run(A.shape[0], B.shape[1], A.shape[1], _gemm.exact_product(A, B))

    def _run(self, M: int, N: int, K: int, output: np.ndarray | None) -> SystolicRun:
        closed_form = counts(self.spec, self.rows, self.cols, M, N, K, self.double_buffer,
                             self.bandwidth_words_per_cycle, self.overlap_folds, self.os_drain)
        return SystolicRun(dataflow=self.dataflow, rows=self.rows, cols=self.cols, M=M, N=N, K=K,
                           double_buffer=self.double_buffer, overlap_folds=self.overlap_folds,
                           os_drain=self.os_drain,
                           bandwidth_words_per_cycle=self.bandwidth_words_per_cycle,
                           output=output, **closed_form)

    def _operands(self, A: object, B: object) -> tuple[np.ndarray, np.ndarray]:
        A, B = _gemm.operands(A, B)
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

        The walk is :class:`accelkit.systolic.simulator.Simulation`: several folds side by side,
        every cycle one numpy update of the whole array, no Python loop over cells.
        """
        A, B = self._operands(A, B)
        self._check_state_fits(A.shape[0], B.shape[1], A.shape[1])
        machine = Simulation(self, A, B)
        if self.overlap_folds:
            machine.run_overlapped()
        else:
            for _ in machine.cycles(batch=max(1, _BATCH_ELEMENTS // (self.rows * self.cols))):
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
        return Simulation(self, A, B).snapshots()

    def _check_state_fits(self, M: int, N: int, K: int) -> None:
        rows_total, cols_total, T = self.spec.geometry(M, N, K)
        folds = fold_count(rows_total, self.rows) * fold_count(cols_total, self.cols)
        line = timeline(self.spec, self.rows, self.cols, T, folds, self.double_buffer,
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



__all__ = ["MAX_SIDE", "MAX_STATE_ELEMENTS", "SystolicArray"]
