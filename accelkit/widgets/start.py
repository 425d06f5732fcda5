"""Lesson 00's first widget: one slider, one library call, one picture."""

from __future__ import annotations

import ipywidgets as W

from accelkit.systolic import SystolicArray
from accelkit.widgets._axes import fixed_ticks, key_row
from accelkit.widgets._base import CHOICE_COLOUR, STYLE, Explorer, View, new_figure, table_html

__all__ = ["first_widget", "start_quiz"]


def first_widget(rows: int = 8, cols: int = 8) -> Explorer:
    """Slide the size of a square matrix product and watch an ``rows × cols`` systolic array's
    cycles and utilization respond (every number comes from ``SystolicArray.estimate``)."""
    sizes = [2, 4, 8, 16, 32, 64, 128, 256]
    controls = {
        "size": W.SelectionSlider(options=sizes, value=32, description="M = N = K",
                                  continuous_update=False, style=STYLE),
    }
    array = SystolicArray(rows=rows, cols=cols, dataflow="ws")
    sweep = [array.estimate(M=n, N=n, K=n) for n in sizes]
    # The figure is built once; a render only moves the highlight and sets the title. Its
    # ticks and key are drawn as a few texts (widgets/_axes.py: about half the time of
    # matplotlib's own ticks and legend).
    figure = new_figure(6.5, 2.8)
    ax = figure.add_subplot()
    ax.plot(sizes, [100 * r.utilization for r in sweep], "o-", color="#607d8b", label="every size")
    (choice,) = ax.plot([], [], "o", markersize=12, color=CHOICE_COLOUR, label="your choice")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.set_xlabel("matrix size M = N = K (log scale)")
    ax.set_ylabel("utilization of the array (%)")
    ax.set_ylim(0, 100)
    title = ax.set_title("")
    fixed_ticks(ax)
    box = ax.get_position()
    key_row(figure, [("every size", "#607d8b", "●"), ("your choice", CHOICE_COLOUR, "●")],
            x=box.x1 - 0.015, y=box.y0 + 0.08, fontsize=9, ha="right")

    def render(values: dict) -> View:
        n = values["size"]
        run = array.estimate(M=n, N=n, K=n)
        choice.set_data([n], [100 * run.utilization])
        title.set_text(f"A {rows}×{cols} systolic array multiplying two {n}×{n} matrices")
        text = table_html([
            ("multiply-accumulates (M·N·K)", f"{run.macs:,}"),
            ("cycles, fill and drain included", f"{run.cycles:,}"),
            ("tiles (folds) the product was cut into", f"{run.folds:,}"),
            ("utilization", f"{run.utilization:.1%}"),
        ])
        return View(figure=figure, text=text, result=run)

    return Explorer(controls, render, title="Your first widget: move the slider")


def start_quiz():
    """Lesson 00's check-yourself question."""
    from accelkit.widgets.quiz import multiple_choice

    return multiple_choice(
        "You moved the slider from 256 down to 2. Why did the array's utilization fall?",
        [
            "The array runs at a lower clock speed for small matrices.",
            "A small product fills few of the 8×8 cells, and filling and draining the grid costs "
            "cycles anyway.",
            "Small matrices need more memory bandwidth per multiply, so the array stalls waiting "
            "for operands to arrive.",
        ],
        correct=1,
        feedback=[
            "The clock never changes in this model: every cycle is a cycle. Look at how the cycle "
            "count compares with the number of multiply-accumulates.",
            "A 2×2 product maps 4 of 64 cells, and the operands still have to travel across the "
            "whole array. Lesson 04 measures exactly how much this wastes.",
            "Bandwidth is not modelled in this widget (there are no stalls). The loss you saw is "
            "in the cycles themselves.",
        ],
    )
