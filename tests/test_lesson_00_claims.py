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
