"""Lesson 04's widgets, driven without a kernel: move a control, read what is shown."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelkit import SIMDMachine, SystolicArray
from accelkit.widgets import (fold_explorer, shapes_quiz, shapes_worked_problem, tile_comparison,
                              utilization_map)
from accelkit.labs.shapes import LINE_SIZES, MAP_SIZES, TENSOR_CORE, TOKENS, cell_cycles
from accelkit.widgets.shapes import MAPPED, STREAMED


@pytest.mark.parametrize("flow", ["os", "ws", "is"])
def test_mapped_and_streamed_dimensions_match_the_engines_folds(flow):
    dims = {"M": 300, "N": 70, "K": 129}
    run = SystolicArray(64, 64, flow).estimate(**dims)
    rows, cols = MAPPED[flow]
    assert run.row_folds == math.ceil(dims[rows] / 64) and run.col_folds == math.ceil(dims[cols] / 64)
    assert {rows, cols, STREAMED[flow]} == {"M", "N", "K"}


def test_cell_cycle_shares_add_up_and_match_a_hand_count():
    run = SystolicArray(128, 128, "ws").estimate(M=300, N=200, K=129)
    shares = cell_cycles(run)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["useful"] == pytest.approx(run.utilization)
    # Without double buffering every fold lasts the same: unmapped cells × all cycles.
    unmapped = (run.row_folds * 128 * run.col_folds * 128 - 129 * 200) * run.cycles // run.folds
    assert shares["padding"] == pytest.approx(unmapped / (128 * 128 * run.cycles))


def test_fold_explorer_follows_its_controls():
    w = fold_explorer()
    assert w.view.result == SystolicArray(128, 128, "ws").estimate(M=300, N=200, K=129)
    w.controls["K"].value = 128
    assert w.view.result.folds == 2 and "2 (1 × 2)" in w.html.value
    w.controls["dataflow"].value = "os"
    shown = w.view.result
    assert shown == SystolicArray(128, 128, "os").estimate(M=300, N=200, K=128)
    assert f"{shown.utilization:.1%}" in w.html.value
    w.controls["side"].value = 8
    assert w.view.result.rows == 8 and w.view.extras["shares"] == cell_cycles(w.view.result)


def test_fold_explorer_axes_rescale_to_the_padded_problem():
    w = fold_explorer()  # 300 × 200 on a 128 array, ws: K × N mapped, padded to 256 × 256
    ax = w.view.figure.axes[0]
    assert w.view.extras["axis_limit"] == 256 and ax.get_xlim() == (0, 256)
    for name, value in (("M", 5), ("N", 6), ("K", 7)):
        w.controls[name].value = value
    w.controls["side"].value = 8  # one 8 × 8 fold: the axes shrink to it
    assert w.view.extras["axis_limit"] == 8 and ax.get_xlim() == (0, 8)
    assert ax.get_ylim() == (8, 0)
    w.controls["K"].value = 1000  # ws maps K on the rows: 125 folds of 8 → 1000 rows padded
    assert w.view.extras["axis_limit"] == 1024 and ax.get_ylim() == (1024, 0)


def test_utilization_map_grid_and_line_come_from_estimate():
    w = utilization_map()
    sa = SystolicArray(128, 128, "ws")
    grid = w.view.extras["grid"]
    assert grid.shape == (len(MAP_SIZES), len(MAP_SIZES))
    i, j = 5, 17
    assert grid[i, j] == sa.estimate(M=int(MAP_SIZES[i]), N=int(MAP_SIZES[j]), K=1024).utilization
    line = w.view.extras["line"]
    assert line[128] == sa.estimate(M=128, N=129, K=1024).utilization  # LINE_SIZES[128] == 129
    assert LINE_SIZES[128] == 129 and line[128] < 0.6 * line[127]  # the 129 cliff
    w.controls["N"].value = 128
    assert w.view.result == sa.estimate(M=128, N=128, K=1024)
    assert "2 folds" not in w.html.value.split("one more")[0]
    w.controls["dataflow"].value = "os"
    assert w.view.result.dataflow == "os"
    before = w.view.extras["grid"]
    w.controls["side"].value = 64
    assert not np.array_equal(before, w.view.extras["grid"])


def test_tile_comparison_curves_come_from_the_engines():
    w = tile_comparison()
    curves = w.view.extras["curves"]
    gpu = SIMDMachine(**TENSOR_CORE).estimate(M=1, N=4096, K=4096)
    assert curves["16×16 tensor-core tiles (padding only)"][0] == gpu.lane_utilization == 1 / 16
    mxu = SystolicArray(128, 128, "ws").estimate(M=1, N=4096, K=4096)
    assert curves["128×128 ws MXU (load, fill, drain too)"][0] == mxu.utilization
    w.controls["M"].value = 16
    assert w.view.result["16×16 tensor-core tiles (padding only)"] == 1.0
    assert f"{curves['128×128 tile (padding only)'][TOKENS.index(16)]:.1%}" in w.html.value
    w.controls["width"].value = 4100
    assert w.view.result["16×16 tensor-core tiles (padding only)"] < 1.0  # 4100 pads to 4112


def test_tile_comparison_draws_the_pipelined_mxu_lesson_04_quotes():
    """Issue 24: the plot drew four of tile_curves' five lines (no pipelined MXU) though cells
    15-16 quote it; every curve now has its line, and the pipelined one is cell 15's call."""
    w = tile_comparison()
    curves = w.view.extras["curves"]
    piped = "128×128 ws MXU, pipelined (as a real one)"
    assert len(curves) == 5 and piped in curves
    drawn = {line.get_label(): line for line in w.view.figure.axes[0].get_lines()
             if line.get_label() in curves}
    assert set(drawn) == set(curves)  # every curve is drawn, with the values the table lists
    assert all(list(drawn[name].get_ydata()) == list(ys) for name, ys in curves.items())
    w.controls["M"].value = 256
    mxu = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    lesson = mxu.estimate(M=256, N=4096, K=4096).utilization  # cell 15: 99.85% at batch 256
    assert w.view.result[piped] == lesson > 0.99
    assert f"{lesson:.1%}" in w.html.value
    assert list(drawn[piped].get_ydata())[TOKENS.index(256)] == lesson


def test_quiz_feedback_blames_the_padded_fold_not_load_fill_and_drain():
    """Issue 24: the N = 1025 feedback said the extra fold "still pays the full load, fill and
    drain", the reading exercise 04 q5 marks false (a pipelined MXU falls off the same cliff).
    It now names the padding, with the engine's numbers for both arrays."""
    q = shapes_quiz()
    q.select(q.correct)
    right, message = q.check()
    plain = SystolicArray(128, 128, "ws")
    piped = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    for array in (plain, piped):
        even, odd = (array.estimate(M=1024, N=n, K=1024) for n in (1024, 1025))
        assert odd.folds - even.folds == 8 and odd.utilization < 0.9 * even.utilization
        assert f"from {even.utilization:.1%} to {odd.utilization:.1%}" in message
    assert right and "the cost is the padding, not load, fill and drain" in message
    assert "pays the full load" not in message


def test_quiz_and_worked_problem():
    q = shapes_quiz()
    q.select(q.position(0))
    assert q.check()[0] is False
    q.select(q.correct)
    assert q.check()[0] is True
    problem = shapes_worked_problem()
    text = problem.reveal()
    one = SystolicArray(128, 128, "ws").estimate(M=1, N=4096, K=4096)
    assert f"{one.utilization:.2%}" in text and problem.revealed
