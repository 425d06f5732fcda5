"""A worked problem whose answer stays hidden until the learner asks for it (scaling-book style).

The answer is a function, not a string: it is computed from the library when revealed, so the
numbers in it cannot drift from the code. Tests call :meth:`WorkedProblem.reveal` without a kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as W


class WorkedProblem:
    """A question in HTML, a "Show the answer" button, and the answer computed on demand.

    Args:
        question: the problem statement (HTML).
        answer: ``() -> str`` returning the worked answer (HTML), built from library calls.
        title: a short heading.
    """

    def __init__(self, question: str, answer: Callable[[], str], title: str = "Worked problem"):
        self.question = question
        self._answer = answer
        self.title = title
        self.revealed = False
        self.answer_html = W.HTML()
        self.button = W.Button(description="Show the answer", button_style="warning")
        self.button.on_click(lambda _: self.reveal())
        self.widget = W.VBox([W.HTML(f"<b>{title}.</b> {question}"), self.button, self.answer_html])

    def reveal(self) -> str:
        """Compute the answer, show it under the question, and return it."""
        text = self._answer()
        self.answer_html.value = text
        self.button.layout.display = "none"
        self.revealed = True
        return text

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
