"""The check-yourself question: feedback per option, and errors typed as accelkit._validate types
them (wrong kind of thing -> TypeError, right kind but wrong value -> ValueError)."""

from __future__ import annotations

import pytest

import hashlib
import re

from accelkit import widgets
from accelkit.widgets.quiz import MultipleChoice, correct_position, multiple_choice
from tests.notebook_runner import ROOT, load


def _question(**changes):
    args = dict(question="Which bound holds?", options=["compute", "memory"], correct=1,
                feedback=["Intensity is below the ridge.", "Yes: below the ridge."])
    args.update(changes)
    return multiple_choice(**args)


def test_check_gives_the_chosen_options_feedback():
    q = _question()
    assert isinstance(q, MultipleChoice)
    assert q.check() == (False, "Pick an option first.") and q.attempts == 0
    q.select(q.position(0))
    right, message = q.check()
    assert not right and message.endswith("Intensity is below the ridge.")
    q.select(q.position(1))
    right, message = q.check()
    assert right and "Correct" in message and q.attempts == 2
    assert q.widget is q.widget  # built once
    q.select(q.position(0))
    assert q._radio.index == q.position(0)


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


def test_the_right_option_is_placed_by_a_hash_of_the_question_and_feedback_follows():
    options = ["w", "x", "y", "z"]
    feedback = ["fw", "fx", "fy", "fz"]
    seen = set()
    for n in range(40):
        question = f"Question number {n}?"
        q = multiple_choice(question, options, 2, feedback)
        digest = hashlib.sha256(question.encode("utf-8")).digest()
        assert q.correct == int.from_bytes(digest[:8], "big") % 4 == correct_position(question, 4)
        assert q.options[q.correct] == "y" and q.feedback[q.correct] == "fy"
        assert [o for o in q.options if o != "y"] == ["w", "x", "z"]  # others keep their order
        assert all(q.feedback[q.position(i)] == feedback[i] for i in range(4))
        assert multiple_choice(question, options, 2, feedback).options == q.options  # stable
        seen.add(q.correct)
    assert seen == {0, 1, 2, 3}
    written = MultipleChoice("Q?", options, 2, feedback)  # the class itself keeps the written order
    assert written.options == options and written.correct == 2 and written.position(3) == 3


def _course_quizzes() -> dict[str, MultipleChoice]:
    found = {}
    for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")):
        for cell in load(path).cells:
            if cell.cell_type == "code":
                for name in re.findall(r"\b(\w*quiz\w*)\(\)", cell.source):
                    quiz = getattr(widgets, name)()
                    if isinstance(quiz, MultipleChoice):
                        found[name] = quiz
    return found


def test_neither_position_nor_length_gives_the_course_quizzes_away():
    quizzes = _course_quizzes()
    assert len(quizzes) >= 11, sorted(quizzes)
    positions = [q.correct for q in quizzes.values()]
    assert max(positions.count(p) for p in set(positions)) <= len(quizzes) // 2, positions
    assert min(positions) == 0 and max(positions) >= 2, positions  # first, and past the second
    lengths = {name: [len(o) for o in q.options] for name, q in quizzes.items()}
    longest = [name for name, q in quizzes.items()
               if len(q.options[q.correct]) == max(lengths[name])]
    shortest = [name for name, q in quizzes.items()
                if len(q.options[q.correct]) == min(lengths[name])]
    assert len(longest) <= len(quizzes) / 3, longest
    assert len(shortest) <= len(quizzes) / 3, shortest  # and not flipped to the shortest
