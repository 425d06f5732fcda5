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

Each dataflow is one frozen record in :data:`DATAFLOW_SPECS` (:class:`DataflowSpec`); the timing
model, the simulator and the widgets read it rather than switching on the name.

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

The parts, each its own module (everything public is importable from here):

* :mod:`~accelkit.systolic.dataflows`: what each dataflow keeps in the cells and streams.
* :mod:`~accelkit.systolic.timing`: the closed form, how folds lie in time and what they move.
* :mod:`~accelkit.systolic.simulator`: the cycle-level walk (``simulate``, ``steps``).
* :mod:`~accelkit.systolic.results`: :class:`SystolicRun` and the animation's :class:`Step`.
* :mod:`~accelkit.systolic.array`: :class:`SystolicArray`, which ties them together.
"""

from __future__ import annotations

from accelkit.systolic.array import MAX_SIDE, MAX_STATE_ELEMENTS, SystolicArray
from accelkit.systolic.dataflows import (DATAFLOW_NAMES, DATAFLOW_SPECS, DATAFLOWS, MAPPING,
                                         OPERAND_DIMS, Dataflow, DataflowSpec, dataflow_spec)
from accelkit.systolic.results import Counts, Step, SystolicRun

__all__ = ["DATAFLOWS", "DATAFLOW_NAMES", "DATAFLOW_SPECS", "MAPPING", "MAX_SIDE",
           "MAX_STATE_ELEMENTS", "OPERAND_DIMS", "Counts", "Dataflow", "DataflowSpec", "Step",
           "SystolicArray", "SystolicRun", "dataflow_spec"]
