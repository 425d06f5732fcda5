"""The claims of lessons/00_start_here.ipynb that a test can recompute."""

from __future__ import annotations

import re

from accelkit import SystolicArray, widgets
from tests import prose


def test_the_quiz_asks_about_the_moves_the_lesson_asks_for():
    """"Move the slider up to 256, then all the way down to 2", and the quiz after it: "You moved
    the slider from 256 down to 2" (issue 24: the lesson said only "Move the slider", which starts
    at 32)."""
    up, down = prose.shown("00", "Move the slider up to {}, then all the way down to {}")
    sizes = widgets.first_widget().controls["size"].options
    assert (up.value, down.value) == (max(sizes), min(sizes))
    question = widgets.start_quiz().question
    assert re.search(rf"from {int(up.value)} down to {int(down.value)}\b", question), question


def test_utilization_falls_from_the_large_size_to_the_small():
    array = SystolicArray(rows=8, cols=8, dataflow="ws")
    small, large = (array.estimate(M=n, N=n, K=n) for n in (2, 256))
    assert small.utilization < 0.01 < 0.9 < large.utilization


def test_fill_and_drain_per_fold_is_the_simulators_convention_not_the_chips():
    """"This toy array, like the field's reference simulator SCALE-Sim, charges fill and drain (and
    the loading of each tile's weights) to every tile of work ... A real TPU's matrix unit pipelines
    its folds back to back ... and pays fill and drain about once per product" (issue 21: the lesson
    stated per-fold fill and drain as fact)."""
    assert prose.says("00", "like the field's reference simulator SCALE-Sim, charges fill and drain")
    assert prose.says("00", "pipelines its folds back to back")
    per_fold = SystolicArray(rows=8, cols=8, dataflow="ws").estimate(M=64, N=64, K=64)
    pipelined = SystolicArray(rows=8, cols=8, dataflow="ws", double_buffer=True,
                              overlap_folds=True).estimate(M=64, N=64, K=64)
    R, C, T = 8, 8, 64
    assert per_fold.folds == pipelined.folds == (64 // R) * (64 // C)
    # the simulator's convention: every fold pays its weight load (R) and fill and drain (R + C - 2)
    assert per_fold.cycles == per_fold.folds * (2 * R + C + T - 2)
    # pipelined: all but one fold's load, fill and drain disappear behind the streams
    assert per_fold.cycles - pipelined.cycles == (per_fold.folds - 1) * (2 * R + C - 2)
    assert per_fold.utilization < 0.8 < 0.99 < pipelined.utilization
