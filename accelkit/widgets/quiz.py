"""A small "check yourself" question for lessons: pick an answer, press Check, read why.

Each option carries its own feedback, so a wrong pick explains *which* misconception it reflects
rather than only saying "no". Driven from tests without a kernel::

    q = multiple_choice("Which bound holds?", ["compute", "memory"], correct=1,
                        feedback=["Intensity is below the ridge...", "Yes: ..."])
    q.select(q.position(0)); q.check()   # -> (False, "... Intensity is below the ridge...")

:func:`multiple_choice` shows the right option at a position derived from a SHA-256 hash of the
question text (not where the author wrote it, and not Python's salted ``hash()``), so across the
course the position gives nothing away while each quiz's order, and so the answer key, stays the
same from run to run. The other options keep their written order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from accelkit import _validate as check

__all__ = ["MultipleChoice", "correct_position", "multiple_choice"]


def _strings(name: str, values: object) -> list[str]:
    """``values`` as a list of str: TypeError for a non-sequence or a non-str entry."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of str, got {type(values).__name__}")
    items = list(values)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{index}] must be a str, got {type(item).__name__} {item!r}")
    return items


class MultipleChoice:
    """A question with one correct option and a feedback line per option.

    Args:
        question: the question text (HTML), non-empty.
        options: at least two option strings.
        correct: the index of the right option.
        feedback: one string per option, shown when that option is checked.
    Raises:
        TypeError: a non-str question, options or feedback that are not sequences of str, or a
            non-integer ``correct`` (as :mod:`accelkit._validate`: wrong kind of thing).
        ValueError: an empty question, fewer than two options, feedback of the wrong length, or
            ``correct`` out of range (right kind, wrong value).
    """

    def __init__(self, question: str, options: Sequence[str], correct: int,
                 feedback: Sequence[str]):
        if not isinstance(question, str):
            raise TypeError(f"question must be a str, got {type(question).__name__}")
        if not question.strip():
            raise ValueError("question must be a non-empty str")
        options = _strings("options", options)
        if len(options) < 2:
            raise ValueError(f"options must hold at least two strings, got {len(options)}")
        feedback = _strings("feedback", feedback)
        if len(feedback) != len(options):
            raise ValueError(f"feedback must have one entry per option ({len(options)}), "
                             f"got {len(feedback)}")
        self.question = question
        self.options = options
        self.correct = check.nonnegative_int("correct", correct, maximum=len(options) - 1)
        self.feedback = feedback
        self.order = tuple(range(len(options)))  # order[shown index] = index as written
        self._widget = None
        self.selected: int | None = None
        self.attempts = 0

    def position(self, written_index: int) -> int:
        """Where the option written at ``written_index`` is shown (see :func:`multiple_choice`)."""
        written_index = check.nonnegative_int("written_index", written_index,
                                              maximum=len(self.options) - 1)
        return self.order.index(written_index)

    def select(self, index: int) -> None:
        self.selected = check.nonnegative_int("index", index, maximum=len(self.options) - 1)
        if self._widget is not None:
            self._radio.index = self.selected

    def check(self) -> tuple[bool, str]:
        """(is it right, the feedback for the chosen option)."""
        if self.selected is None:
            message = "Pick an option first."
            right = False
        else:
            self.attempts += 1
            right = self.selected == self.correct
            message = ("✔ Correct. " if right else "✘ Not quite. ") + self.feedback[self.selected]
        if self._widget is not None:
            colour = "#1b5e20" if right else "#b00020"
            self._out.value = f"<span style='color:{colour}'>{message}</span>"
        return right, message

    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as W

            self._radio = W.RadioButtons(options=self.options, index=None,
                                         layout=W.Layout(width="max-content"))
            button = W.Button(description="Check", button_style="info")
            self._out = W.HTML()

            def picked(change: dict) -> None:
                self.selected = change["new"]

            self._radio.observe(picked, names="index")
            button.on_click(lambda _: self.check())
            self._button = button
            self._widget = W.VBox([W.HTML(f"<b>Check yourself.</b> {self.question}"), self._radio,
                                   button, self._out])
        return self._widget

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def correct_position(question: str, n_options: int) -> int:
    """The position the right option is shown at: SHA-256 of the question text, mod n_options."""
    digest = hashlib.sha256(question.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n_options


def multiple_choice(question: str, options: Sequence[str], correct: int,
                    feedback: Sequence[str]) -> MultipleChoice:
    """Build a check-yourself question (see :class:`MultipleChoice`), the right option moved to
    :func:`correct_position` and the others kept in their written order.

    ``options``, ``correct`` and ``feedback`` are as written; the result's ``options``,
    ``correct`` and ``feedback`` are as shown, and ``order`` / ``position()`` map between them.
    """
    written = MultipleChoice(question, options, correct, feedback)  # validates everything
    others = [i for i in range(len(written.options)) if i != written.correct]
    order = others[:]
    order.insert(correct_position(written.question, len(order) + 1), written.correct)
    shown = MultipleChoice(question, [written.options[i] for i in order], order.index(written.correct),
                           [written.feedback[i] for i in order])
    shown.order = tuple(order)
    return shown
