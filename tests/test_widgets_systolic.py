"""Lesson 03's widgets, driven without a kernel: move a control, read what is shown."""

from __future__ import annotations

import numpy as np

from accelkit import SIMDMachine, SystolicArray
from accelkit.widgets import (reuse_comparison, systolic_animation, systolic_quiz,
                              systolic_worked_problem)
from accelkit.widgets.systolic import SIMD_MACHINES, _operands


def _steps(flow, M=4, N=4, K=4, double_buffer=False, seed=0):
    A, B = _operands(M, N, K, seed)
    return list(SystolicArray(4, 4, flow, double_buffer=double_buffer).steps(A, B)), A, B


def test_animation_shows_the_engines_step_for_the_chosen_cycle():
    w = systolic_animation()
    # The slider counts cycles from 1, as the figure's title and the table do.
    assert w.image.value and w.view.result.cycle + 1 == w.controls["cycle"].value
    assert w.controls["cycle"].min == 1 == w.play.min
    steps, A, B = _steps("ws")
    w.controls["cycle"].value = 10
    assert any(f"cycle 10 of {len(steps)}" in t.get_text() for t in w.view.figure.texts)
    assert f"<b>10 of {len(steps)}</b>" in w.html.value
    shown = w.view.result
    assert shown.cycle == steps[9].cycle and shown.phase == steps[9].phase
    np.testing.assert_array_equal(shown.active, steps[9].active)
    np.testing.assert_array_equal(np.nan_to_num(shown.psum, nan=-1), np.nan_to_num(steps[9].psum, nan=-1))
    assert f"{steps[9].active_macs} of 16 cells" in w.html.value
    # Scrubbing to the end shows the finished product, equal to numpy's.
    w.controls["cycle"].value = w.controls["cycle"].max
    np.testing.assert_array_equal(w.view.result.output, A @ B)


def test_dataflow_change_resizes_the_cycle_range_without_an_extra_render():
    w = systolic_animation()
    w.controls["cycle"].value = 14  # ws: 2R + C + K - 2 = 14 cycles, the last one
    before = w.renders
    w.controls["dataflow"].value = "os"  # os: K + R + C - 2 = 10 cycles
    assert w.renders == before + 1
    run = SystolicArray(4, 4, "os").estimate(M=4, N=4, K=4)
    assert w.controls["cycle"].max == run.cycles == w.play.max
    assert w.view.result.cycle == run.cycles - 1  # clamped to the last cycle, not an error
    assert w.view.extras["run"].cycles == run.cycles


def test_folds_and_double_buffering_follow_the_engine():
    w = systolic_animation()
    w.controls["K"].value = 8  # ws maps K×N: two row folds
    plain = SystolicArray(4, 4, "ws").estimate(M=4, N=4, K=8)
    assert w.view.extras["steps"] == plain.cycles and w.view.extras["run"].folds == plain.folds == 2
    w.controls["double_buffer"].value = True
    doubled = SystolicArray(4, 4, "ws", double_buffer=True).estimate(M=4, N=4, K=8)
    assert w.view.extras["steps"] == doubled.cycles == plain.cycles - 4
    assert f"{doubled.cycles}" in w.html.value


def test_step_buttons_move_one_cycle_and_stop_at_the_ends():
    w = systolic_animation()
    w.controls["cycle"].value = 1
    w.back.click()
    assert w.controls["cycle"].value == 1
    w.forward.click()
    assert w.view.result.cycle + 1 == 2
    w.controls["cycle"].value = w.controls["cycle"].max
    w.forward.click()
    assert w.controls["cycle"].value == w.controls["cycle"].max


def test_cached_choice_redraws_the_same_figure():
    w = systolic_animation()
    figure = w.view.figure
    w.controls["dataflow"].value = "is"
    w.controls["dataflow"].value = "ws"
    assert w.view.figure is figure  # the step list and figure were cached, not rebuilt


def test_cell_labels_name_the_operands_they_hold():
    from accelkit.widgets.systolic import _cell_lines, _value

    w = systolic_animation()
    w.controls["cycle"].value = 10
    step = w.view.result
    r, c = map(int, np.argwhere(step.active)[0])
    ai, bi = step.a_index[r, c], step.b_index[r, c]
    assert _cell_lines(step, r, c) == [f"a[{ai[0]},{ai[1]}]={_value(step.a[r, c])}",
                                       f"b[{bi[0]},{bi[1]}]={_value(step.b[r, c])}",
                                       f"Σ={_value(step.psum[r, c])}"]
    # The label is drawn as text centred in that cell (SVG text: sharp at any screen
    # resolution), and it is in the image sent to the browser.
    ax = w.view.figure.axes[0]
    (label,) = [t for t in ax.texts if t.get_text() == "\n".join(_cell_lines(step, r, c))]
    assert label.get_position() == (c, r) and label.get_transform() == ax.transData
    assert (label.get_ha(), label.get_va()) == ("center", "center")
    assert w.image.format == "svg+xml"
    shown = bytes(w.image.value).decode("utf-8")
    assert all(f">{line}<" in shown for line in _cell_lines(step, r, c))
    # Readable: the cell labels are at least 8 points (about 9 CSS pixels), not ~6 px.
    assert label.get_fontsize() >= 8
    # and they fit their cell: the label's box lies inside the cell's square
    figure = w.view.figure
    figure.draw_without_rendering()
    box = label.get_window_extent()
    (x0, y0), (x1, y1) = ax.transData.transform([(c - 0.5, r - 0.5), (c + 0.5, r + 0.5)])
    assert min(x0, x1) < box.x0 and box.x1 < max(x0, x1)
    assert min(y0, y1) < box.y0 and box.y1 < max(y0, y1)


def test_reuse_comparison_counts_reads_with_the_engines():
    w = reuse_comparison()
    w.controls["n"].value = 64
    w.controls["side"].value = 8
    runs = w.view.result
    mine = runs["systolic 8×8 (ws)"]
    assert mine == SystolicArray(8, 8, "ws").estimate(M=64, N=64, K=64)
    assert runs["SIMD, tiled kernel"] == SIMDMachine(**SIMD_MACHINES["SIMD, tiled kernel"]).estimate(
        M=64, N=64, K=64)
    # ws reads each A value once per column fold (64 / 8) and each weight once.
    assert "on-chip SRAM 8 / 1" in w.html.value
    w.controls["dataflow"].value = "is"
    assert "on-chip SRAM 1 / 8" in w.html.value


def test_quiz_and_worked_problem():
    q = systolic_quiz()
    q.select(q.position(1))
    assert q.check()[0] is False
    q.select(q.correct)
    assert q.check()[0] is True
    problem = systolic_worked_problem()
    assert not problem.revealed
    text = problem.reveal()
    run = SystolicArray(128, 128, "ws").estimate(M=512, N=384, K=256)
    assert f"{run.cycles:,} cycles" in text and f"{run.folds} folds" in text
