"""The check-yourself question: feedback per option, and errors typed as accelkit._validate types
them (wrong kind of thing -> TypeError, right kind but wrong value -> ValueError)."""

from __future__ import annotations

import pytest

from accelkit.widgets.quiz import MultipleChoice, multiple_choice


def _question(**changes):
    args = dict(question="Which bound holds?", options=["compute", "memory"], correct=1,
                feedback=["Intensity is below the ridge.", "Yes: below the ridge."])
    args.update(changes)
    return multiple_choice(**args)


def test_check_gives_the_chosen_options_feedback():
    q = _question()
    assert isinstance(q, MultipleChoice)
    assert q.check() == (False, "Pick an option first.") and q.attempts == 0
    q.select(0)
    right, message = q.check()
    assert not right and message.endswith("Intensity is below the ridge.")
    q.select(1)
    right, message = q.check()
    assert right and "Correct" in message and q.attempts == 2
    assert q.widget is q.widget  # built once
    q.select(0)
    assert q._radio.index == 0


@pytest.mark.parametrize("changes, error, match", [
    ({"question": 3}, TypeError, "question must be a str"),
    ({"question": "   "}, ValueError, "question must be a non-empty"),
    ({"options": "ab"}, TypeError, "options must be a sequence"),
    ({"options": ["a", 2], "feedback": ["x", "y"]}, TypeError, r"options\[1\]"),
    ({"options": ["only"], "feedback": ["x"]}, ValueError, "at least two"),
    ({"feedback": ["x"]}, ValueError, "one entry per option"),
    ({"feedback": ["x", None]}, TypeError, r"feedback\[1\]"),
    ({"correct": 2}, ValueError, "correct"),
    ({"correct": "1"}, TypeError, "correct"),
])
def test_bad_questions_are_refused_with_the_validate_types(changes, error, match):
    with pytest.raises(error, match=match):
        _question(**changes)


def test_select_refuses_an_option_that_does_not_exist():
    q = _question()
    with pytest.raises(ValueError, match="index"):
        q.select(5)
    with pytest.raises(TypeError, match="index"):
        q.select("memory")
