"""Checked exercises in the style of Kaggle's learntools: ``check()``, ``hint()``, ``solution()``.

Three outcomes, always printed as one friendly line and returned as a string:

* ``"correct"``;
* ``"incorrect"`` with a nudge that never prints the expected answer (a wrong *type* is also
  "incorrect", with a message saying what type is wanted);
* ``"not attempted"`` when the answer is still the stub: ``None``, ``...``, or a function that
  raises ``NotImplementedError`` or returns ``None``.

Each question's solution is written once, as the ``solution`` code string. ``solution()`` shows
it, and CI runs every exercise notebook a second time with each answer cell (tagged
``answer:<question>``) replaced by that string, expecting "correct" everywhere: so the shipped
solution and the checker's independent reference (the library, or a separate implementation)
are proven to agree.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

CORRECT = "correct"
INCORRECT = "incorrect"
NOT_ATTEMPTED = "not attempted"


class _Stub(Exception):
    """The learner's function is still a stub."""


class Question:
    """Common behaviour: hints revealed one at a time, a solution shown only when asked."""

    kind = "question"

    def __init__(self, name: str, prompt: str, *, hints: Sequence[str], solution: str):
        self.name = name
        self.prompt = prompt
        self.hints = list(hints)
        self.solution_code = solution.strip("\n")
        self._hints_shown = 0

    def hint(self, number: int | None = None) -> str:
        """Show the next hint (or hint ``number``, counting from 1)."""
        if not self.hints:
            text = "No hint for this one: re-read the lesson section it points to."
        else:
            if number is None:
                self._hints_shown = min(self._hints_shown + 1, len(self.hints))
                number = self._hints_shown
            number = max(1, min(int(number), len(self.hints)))
            more = " (call hint() again for another)" if number < len(self.hints) else ""
            text = f"Hint {number}/{len(self.hints)}: {self.hints[number - 1]}{more}"
        print(text)
        return text

    def solution(self) -> str:
        """Print the solution code (and only when asked)."""
        print(f"Solution to {self.name}:\n{self.solution_code}")
        return self.solution_code

    def _say(self, outcome: str, message: str) -> str:
        symbol = {CORRECT: "✔", INCORRECT: "✘", NOT_ATTEMPTED: "…"}[outcome]
        print(f"{symbol} {self.name}: {message}")
        return outcome

    def check(self, answer: Any) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}: {self.prompt}>"


def _is_stub_value(answer: Any) -> bool:
    return answer is None or answer is Ellipsis


class NumberQuestion(Question):
    """A number, checked against ``expected()`` within a relative tolerance.

    Args:
        expected: computes the reference value (from the library, not from the solution text).
        rel_tol: accepted relative error, stated to the learner in the prompt.
        too_high / too_low: nudges for answers off in one direction (never the value itself).
    """

    kind = "number question"

    def __init__(self, name: str, prompt: str, *, expected: Callable[[], float], rel_tol: float,
                 hints: Sequence[str], solution: str, too_high: str = "", too_low: str = ""):
        super().__init__(name, prompt, hints=hints, solution=solution)
        self._expected = expected
        self.rel_tol = rel_tol
        self.too_high = too_high or "Your number is too high."
        self.too_low = too_low or "Your number is too low."

    @property
    def expected(self) -> float:
        return float(self._expected())

    def check(self, answer: Any) -> str:
        if _is_stub_value(answer):
            return self._say(NOT_ATTEMPTED, "not attempted yet: replace the None with your answer.")
        if isinstance(answer, np.ndarray) and answer.size == 1:
            answer = answer.item()
        if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
            return self._say(INCORRECT, f"the answer should be a number (int or float), got "
                                        f"{type(answer).__name__}.")
        value = float(answer)
        if not math.isfinite(value):
            return self._say(INCORRECT, "the answer should be a finite number, not NaN or inf.")
        expected = self.expected
        if math.isclose(value, expected, rel_tol=self.rel_tol, abs_tol=1e-12):
            return self._say(CORRECT, "correct!")
        nudge = self.too_high if value > expected else self.too_low
        if expected != 0 and 0 < abs(value / expected) and \
                abs(math.log10(abs(value / expected)) - round(math.log10(abs(value / expected)))) < 0.02 \
                and round(math.log10(abs(value / expected))) != 0:
            nudge += " It is off by a power of ten: check your units (GB vs bytes, TFLOP/s vs FLOP/s)."
        return self._say(INCORRECT, f"not yet. {nudge} (tolerance ±{self.rel_tol:.0%})")


class ChoiceQuestion(Question):
    """One of a few named options (e.g. "compute" or "memory")."""

    kind = "choice question"

    def __init__(self, name: str, prompt: str, *, options: Sequence[str], expected: Callable[[], str],
                 hints: Sequence[str], solution: str, nudges: dict[str, str] | None = None):
        super().__init__(name, prompt, hints=hints, solution=solution)
        self.options = [o.lower() for o in options]
        self._expected = expected
        self.nudges = {k.lower(): v for k, v in (nudges or {}).items()}

    def check(self, answer: Any) -> str:
        if _is_stub_value(answer):
            return self._say(NOT_ATTEMPTED, "not attempted yet: set the answer to one of "
                                            f"{self.options}.")
        if not isinstance(answer, str):
            return self._say(INCORRECT, f"the answer should be a string, one of {self.options}; "
                                        f"got {type(answer).__name__}.")
        picked = answer.strip().lower()
        if picked not in self.options:
            return self._say(INCORRECT, f"{answer!r} is not one of the options {self.options}.")
        if picked == str(self._expected()).lower():
            return self._say(CORRECT, "correct!")
        return self._say(INCORRECT, "not yet. " + self.nudges.get(picked, "Look at the numbers again."))


class FunctionQuestion(Question):
    """A function, checked against a reference on small randomized (seeded) inputs.

    Args:
        reference: the independent implementation to compare with.
        cases: ``rng -> list of kwargs`` producing inputs (seeded, so the check is repeatable).
        rel_tol: accepted relative error per output.
    """

    kind = "function question"

    def __init__(self, name: str, prompt: str, *, reference: Callable[..., Any],
                 cases: Callable[[np.random.Generator], list[dict[str, Any]]], rel_tol: float,
                 hints: Sequence[str], solution: str, seed: int = 2024):
        super().__init__(name, prompt, hints=hints, solution=solution)
        self._reference = reference
        self._cases = cases
        self.rel_tol = rel_tol
        self.seed = seed

    def check(self, answer: Any) -> str:
        if _is_stub_value(answer):
            return self._say(NOT_ATTEMPTED, "not attempted yet: write the function, then check it.")
        if not callable(answer):
            return self._say(INCORRECT, f"pass your function itself (without calling it), got "
                                        f"{type(answer).__name__}.")
        cases = self._cases(np.random.default_rng(self.seed))
        for number, kwargs in enumerate(cases, start=1):
            try:
                got = answer(**kwargs)
            except NotImplementedError:
                return self._say(NOT_ATTEMPTED, "not attempted yet: the function still raises "
                                                "NotImplementedError.")
            except Exception as error:  # noqa: BLE001 - any learner error becomes a message
                return self._say(INCORRECT, f"your function raised {type(error).__name__}: {error} "
                                            f"on test input {number} ({_describe(kwargs)}).")
            if got is None:
                if number == 1:
                    return self._say(NOT_ATTEMPTED, "not attempted yet: the function returns None.")
                return self._say(INCORRECT, f"your function returned None for input {number}.")
            want = self._reference(**kwargs)
            if not _close(got, want, self.rel_tol):
                return self._say(INCORRECT, f"not yet: wrong result for input {number} "
                                            f"({_describe(kwargs)}). Try that case by hand.")
        return self._say(CORRECT, f"correct on all {len(cases)} test inputs!")


class ExplainQuestion(Question):
    """An open "explain what you see" question, checked for the ideas a good answer names.

    A short rubric of concepts (each a tuple of acceptable words); the check says which concept
    is missing, never what to write.
    """

    kind = "explain question"

    def __init__(self, name: str, prompt: str, *, concepts: dict[str, Sequence[str]],
                 hints: Sequence[str], solution: str, min_words: int = 8):
        super().__init__(name, prompt, hints=hints, solution=solution)
        self.concepts = {k: [w.lower() for w in v] for k, v in concepts.items()}
        self.min_words = min_words

    def check(self, answer: Any) -> str:
        if _is_stub_value(answer) or (isinstance(answer, str) and not answer.strip()):
            return self._say(NOT_ATTEMPTED, "not attempted yet: write a few sentences in the string.")
        if not isinstance(answer, str):
            return self._say(INCORRECT, f"the answer should be a string of prose, got "
                                        f"{type(answer).__name__}.")
        if len(answer.split()) < self.min_words:
            return self._say(INCORRECT, f"say a little more: at least {self.min_words} words.")
        text = answer.lower()
        missing = [concept for concept, words in self.concepts.items()
                   if not any(word in text for word in words)]
        if missing:
            return self._say(INCORRECT, f"a good start. Your explanation does not yet mention "
                                        f"{missing[0]}.")
        return self._say(CORRECT, "your explanation names the key ideas. Compare it with "
                                  "solution() for another wording.")


def _describe(kwargs: dict[str, Any]) -> str:
    parts = []
    for key, value in kwargs.items():
        if isinstance(value, np.ndarray):
            parts.append(f"{key}=<array {value.shape}>")
        else:
            parts.append(f"{key}={value!r}")
    return ", ".join(parts)


def _close(got: Any, want: Any, rel_tol: float) -> bool:
    if isinstance(want, str):
        return isinstance(got, str) and got.strip().lower() == want.lower()
    if isinstance(want, (tuple, list)):
        return isinstance(got, (tuple, list)) and len(got) == len(want) and \
            all(_close(g, w, rel_tol) for g, w in zip(got, want))
    try:
        got_array = np.asarray(got, dtype=float)
        want_array = np.asarray(want, dtype=float)
    except (TypeError, ValueError):
        return False
    return got_array.shape == want_array.shape and \
        bool(np.allclose(got_array, want_array, rtol=rel_tol, atol=1e-12))
