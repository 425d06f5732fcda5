"""Checked exercises in the style of Kaggle's learntools: ``check()``, ``hint()``, ``solution()``.

Three outcomes, always printed as one friendly line and returned as an :class:`Outcome` (a str
equal to one of):

* ``"correct"``;
* ``"incorrect"`` with a nudge that never prints the expected answer (a wrong *type* is also
  "incorrect", with a message saying what type is wanted). Where the answer matches a common
  slip (seconds for days, a missing factor of 2, GiB for GB, a sum where a max is wanted...) the
  nudge names that slip;
* ``"not attempted"`` when the answer is still the stub: ``None``, ``...``, or a function that
  raises ``NotImplementedError`` or returns ``None``.

The message is printed once; the returned :class:`Outcome` displays nothing more in a notebook,
so a ``check()`` or ``hint()`` on a cell's last line shows its line once.

Each question's solution is written once, as the ``solution`` code string. ``solution()`` shows
it, and CI runs every exercise notebook a second time with each answer cell (tagged
``answer:<question>``) replaced by that string, expecting "correct" everywhere: so the shipped
solution and the checker's independent reference (the library, or a separate implementation)
are proven to agree.

Explain-questions are not marked on keywords: the learner writes an explanation for themselves,
then picks the true statements among several plausible ones (:class:`ExplainQuestion`).
"""

from __future__ import annotations

import hashlib
import inspect
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

CORRECT = "correct"
INCORRECT = "incorrect"
NOT_ATTEMPTED = "not attempted"

KEYWORD_NOTE = ("The checker calls your function with keyword arguments named as above; if your "
                "parameters are named differently, it calls it by position, in this order.")


class Outcome(str):
    """A check's outcome: equal to ``"correct"``, ``"incorrect"`` or ``"not attempted"``.

    ``message`` is the line that was printed. In a notebook the outcome displays nothing (the
    line was already printed), so the result is shown once.
    """

    message: str

    def __new__(cls, value: str, message: str = "") -> Outcome:
        self = super().__new__(cls, value)
        self.message = message
        return self

    def _ipython_display_(self) -> None:  # already printed: show nothing twice
        return None


class Shown(str):
    """A hint or solution text that was printed; displays nothing more in a notebook."""

    def _ipython_display_(self) -> None:
        return None


class _Stub(Exception):
    """The learner's function is still a stub."""


def tolerance_text(rel_tol: float) -> str:
    """The accepted error, said truthfully: "exactly", "within 1%", "within 0.01%"."""
    if rel_tol <= 0:
        return "exactly"
    percent = rel_tol * 100
    if percent >= 1e-3:
        return f"within {percent:.3g}%"
    return f"within a relative error of {rel_tol:.1g}"


# Common slips: (factor, what it probably is, the quantities it can happen to). Matched on the
# ratio answer / expected, either way. A slip tied to a quantity is named only for a question of
# that quantity (``NumberQuestion(quantity=...)``): a FLOP count 5% off is not "MiB vs MB".
BYTES = "bytes"
SLIPS: tuple[tuple[float, str, str | None], ...] = (
    (86_400.0, "seconds where days are wanted, or the reverse (a day is 86,400 s)", None),
    (3_600.0, "seconds where hours are wanted, or the reverse (an hour is 3,600 s)", None),
    (1_440.0, "minutes where days are wanted, or the reverse (a day is 1,440 min)", None),
    (24.0, "hours where days are wanted, or the reverse (a day is 24 h)", None),
    (60.0, "minutes where seconds or hours are wanted (a factor of 60)", None),
    (1e6, "a factor of a million: per token vs per million tokens, or bytes vs MB?", None),
    (1024.0, "KiB where bytes are wanted, or the reverse (a KiB is 1,024 bytes)", BYTES),
    (1024.0 ** 2, "MiB where bytes are wanted, or the reverse (a MiB is 2**20 bytes)", BYTES),
    (1024.0 ** 3, "GiB where bytes are wanted, or the reverse (a GiB is 2**30 bytes)", BYTES),
    (1.024, "1,024 where 1,000 is meant, or the reverse (KiB vs kB)", BYTES),
    (1.024 ** 2, "2**20 where 10**6 is meant, or the reverse (MiB vs MB)", BYTES),
    (1.024 ** 3, "2**30 where 10**9 is meant, or the reverse (GiB vs GB)", BYTES),
    (1.024 ** 4, "2**40 where 10**12 is meant, or the reverse (TiB vs TB)", BYTES),
    (2.0, "a factor of 2 missing or doubled: 2 FLOPs per multiply-accumulate, 2 bytes per "
          "bf16 value, keys and values, or a ring all-reduce's 2×?", None),
)


def _slip_window(rel_tol: float) -> float:
    return min(max(rel_tol, 1e-6), 0.01)


def name_slip(value: float, expected: float, rel_tol: float,
              alternatives: Mapping[str, float] | None = None, quantity: str | None = None,
              factors: bool = True) -> str:
    """The nudge for the common slip ``value`` matches, or "" when none does.

    ``alternatives`` (a question's own slips, ``{nudge: wrong value}``) are tried first; then,
    unless ``factors`` is False, the factors of :data:`SLIPS` that can happen to ``quantity``,
    then a power of ten.
    """
    window = _slip_window(rel_tol)
    for message, alternative in (alternatives or {}).items():
        if alternative is not None and math.isfinite(alternative) and \
                math.isclose(value, alternative, rel_tol=window, abs_tol=1e-12):
            return message
    if not factors or expected == 0 or value == 0 or (value > 0) != (expected > 0):
        return ""
    ratio = value / expected
    for factor, meaning, applies in SLIPS:
        if applies is not None and applies != quantity:
            continue
        for direction, size in (("large", factor), ("small", 1 / factor)):
            if math.isclose(ratio, size, rel_tol=window):
                return f"Your answer is {_factor(factor)} too {direction}: {meaning}"
    exponent = math.log10(abs(ratio))
    if round(exponent) != 0 and abs(exponent - round(exponent)) < 0.02:
        direction = "large" if exponent > 0 else "small"
        return (f"Your answer is {10 ** abs(round(exponent)):,}× too {direction}, a power of ten: "
                "check your units (GB vs bytes, TFLOP/s vs FLOP/s, ms vs s).")
    return ""


def _factor(factor: float) -> str:
    if factor == int(factor):
        return f"{int(factor):,}×"
    return f"{factor:.4g}×"


class Question:
    """Common behaviour: hints revealed one at a time, a solution shown only when asked."""

    kind = "question"

    def __init__(self, name: str, prompt: str, *, hints: Sequence[str], solution: str):
        self.name = name
        self.prompt = prompt
        self.hints = list(hints)
        self.solution_code = solution.strip("\n")
        self._hints_shown = 0

    def hint(self, number: int | None = None) -> Shown:
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
        return Shown(text)

    def solution(self) -> Shown:
        """Print the solution code (and only when asked)."""
        print(f"Solution to {self.name}:\n{self.solution_code}")
        return Shown(self.solution_code)

    def _say(self, outcome: str, message: str) -> Outcome:
        symbol = {CORRECT: "✔", INCORRECT: "✘", NOT_ATTEMPTED: "…"}[outcome]
        line = f"{symbol} {self.name}: {message}"
        print(line)
        return Outcome(outcome, line)

    def check(self, answer: Any) -> Outcome:  # pragma: no cover - overridden
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}: {self.prompt}>"


def _is_stub_value(answer: Any) -> bool:
    return answer is None or answer is Ellipsis


class NumberQuestion(Question):
    """A number, checked against ``expected()`` within a relative tolerance.

    Args:
        expected: computes the reference value (from the library, not from the solution text).
        rel_tol: accepted relative error, stated to the learner in the prompt (0: exact).
        too_high / too_low: nudges for answers off in one direction that match no named slip.
            They fire for any miss that way, so they ask rather than tell ("did you ...?"):
            a slip they could name belongs in ``slips``, where it is named only when made.
        slips: ``{nudge: value}`` for question-specific wrong approaches (e.g. the sum where the
            answer is a max): an answer matching that value gets that nudge. Values are callables
            computed on demand.
        accepted: ``{note: value}``: other right answers (another convention the lesson also
            teaches, such as a FLOP count with attention): one within ``rel_tol`` is correct,
            and the note says which convention it followed.
        quantity: what the number counts; ``"bytes"`` lets the checker name binary-prefix slips
            (KiB for bytes, GiB vs GB), which other quantities never get.
    """

    kind = "number question"

    def __init__(self, name: str, prompt: str, *, expected: Callable[[], float], rel_tol: float,
                 hints: Sequence[str], solution: str, too_high: str = "", too_low: str = "",
                 slips: Mapping[str, Callable[[], float]] | None = None,
                 accepted: Mapping[str, Callable[[], float]] | None = None,
                 quantity: str | None = None):
        super().__init__(name, prompt, hints=hints, solution=solution)
        self._expected = expected
        self.rel_tol = rel_tol
        self.too_high = too_high or "Your number is too high."
        self.too_low = too_low or "Your number is too low."
        self.slips = dict(slips or {})
        self.accepted = dict(accepted or {})
        self.quantity = quantity

    @property
    def expected(self) -> float:
        return float(self._expected())

    def check(self, answer: Any) -> Outcome:
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
        for note, other in self.accepted.items():
            if math.isclose(value, float(other()), rel_tol=self.rel_tol, abs_tol=1e-12):
                return self._say(CORRECT, f"correct! {note}")
        # For a small whole-number answer (a count of chips, folds, cycles) "2× too small" would
        # give the answer away: keep to the question's own slips and the directional nudge there.
        small_count = expected == int(expected) and abs(expected) < 100
        slip = name_slip(value, expected, self.rel_tol,
                         {message: float(f()) for message, f in self.slips.items()},
                         quantity=self.quantity, factors=not small_count)
        nudge = slip or (self.too_high if value > expected else self.too_low)
        return self._say(INCORRECT, f"not yet. {nudge} (accepted: {tolerance_text(self.rel_tol)})")


class ChoiceQuestion(Question):
    """One of a few named options (e.g. "compute" or "memory").

    Written the way a learner might write it, an option is still that option: any case and
    surrounding spaces; a number where the options are numerals (``2`` for ``"2"``); and any name
    ``resolve`` maps to an option (:func:`chip_resolver`: "NVIDIA H100 (SXM)", the name the
    library returns, for "H100").
    """

    kind = "choice question"

    def __init__(self, name: str, prompt: str, *, options: Sequence[str], expected: Callable[[], str],
                 hints: Sequence[str], solution: str, nudges: dict[str, str] | None = None,
                 resolve: Callable[[str], str | None] | None = None):
        super().__init__(name, prompt, hints=hints, solution=solution)
        self.options = [o.lower() for o in options]
        self._expected = expected
        self.nudges = {k.lower(): v for k, v in (nudges or {}).items()}
        self._resolve = resolve

    @property
    def expected(self) -> str:
        return str(self._expected()).lower()

    def _option(self, answer: Any) -> str | None:
        """The option ``answer`` names, or None."""
        if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
            value = float(answer)
            answer = str(int(value)) if math.isfinite(value) and value == int(value) else str(answer)
        if not isinstance(answer, str):
            return None
        picked = answer.strip().lower()
        if picked in self.options:
            return picked
        resolved = self._resolve(answer.strip()) if self._resolve else None
        return resolved.lower() if resolved and resolved.lower() in self.options else None

    def check(self, answer: Any) -> Outcome:
        if _is_stub_value(answer):
            return self._say(NOT_ATTEMPTED, "not attempted yet: set the answer to one of "
                                            f"{self.options}.")
        numeral = isinstance(answer, numbers.Real) and not isinstance(answer, bool)
        if not isinstance(answer, str) and not numeral:
            return self._say(INCORRECT, f"the answer should be a string, one of {self.options}; "
                                        f"got {type(answer).__name__}.")
        picked = self._option(answer)
        if picked is None:
            if numeral:
                return self._say(INCORRECT, f"the number {answer!r} is not one of the options "
                                            f"{self.options}.")
            return self._say(INCORRECT, f"{answer!r} is not one of the options {self.options}.")
        if picked == self.expected:
            return self._say(CORRECT, "correct!")
        return self._say(INCORRECT, "not yet. " + self.nudges.get(picked, "Look at the numbers again."))


def chip_resolver(options: Sequence[str]) -> Callable[[str], str | None]:
    """For a question whose options are chips: any name or alias the catalog knows for one of
    them (``accelkit.chips.get``) resolves to that option."""
    from accelkit import chips

    canonical = {chips.get(option).name: option for option in options}

    def resolve(answer: str) -> str | None:
        try:
            return canonical.get(chips.get(answer).name)
        except (TypeError, ValueError):
            return None

    return resolve


class FunctionQuestion(Question):
    """A function, checked against a reference on a teaching case and small randomized inputs.

    Args:
        reference: the independent implementation to compare with; its parameter names and order
            are the ones the prompt names.
        cases: ``rng -> list of kwargs`` producing inputs (seeded, so the check is repeatable).
        teaching_case: one small, round-number input (kwargs). It is checked with the others, and
            a wrong function is shown that case with the expected and the returned value. The
            random cases still decide: a function that only gets the teaching case right fails.
        teaching_label: how to print the teaching case when its values do not print well
            (e.g. a tuple of operations); defaults to ``name=value`` pairs.
        slips: ``{nudge: function}``: common wrong versions (e.g. the sum where the reference
            takes a max), called like the reference; a learner's result on the teaching case that
            matches one gets its nudge.
        accepted: ``{note: function}``: other right versions, called like the reference (e.g.
            rounding a partly filled last batch up where the reference counts it as a fraction,
            when the question does not rule one out). A function that matches one of them on the
            example and every random input is correct, and the note says which it followed.
        rel_tol: accepted relative error per output.

    The learner's function is called by keyword; if its parameter names differ from the
    reference's but it takes as many, it is called by position, and the message says so.
    """

    kind = "function question"

    def __init__(self, name: str, prompt: str, *, reference: Callable[..., Any],
                 cases: Callable[[np.random.Generator], list[dict[str, Any]]], rel_tol: float,
                 hints: Sequence[str], solution: str, teaching_case: dict[str, Any],
                 teaching_label: str = "", slips: Mapping[str, Callable[..., Any]] | None = None,
                 accepted: Mapping[str, Callable[..., Any]] | None = None, seed: int = 2024):
        if KEYWORD_NOTE not in prompt:
            prompt = f"{prompt} {KEYWORD_NOTE}"
        super().__init__(name, prompt, hints=hints, solution=solution)
        self._reference = reference
        self._cases = cases
        self.rel_tol = rel_tol
        self.seed = seed
        self.parameters = list(inspect.signature(reference).parameters)
        if list(teaching_case) != self.parameters:
            raise ValueError(f"{name}: teaching_case must give {self.parameters} in that order, "
                             f"got {list(teaching_case)}")
        self.teaching_case = dict(teaching_case)
        self.teaching_label = teaching_label or _describe(self.teaching_case, exact=True)
        self.slips = dict(slips or {})
        self.accepted = dict(accepted or {})

    def _caller(self, answer: Callable[..., Any]) -> tuple[Callable[[dict], Any] | None, str]:
        """How to call the learner's function, and a note when not by keyword (or why not)."""
        try:
            signature = inspect.signature(answer)
        except (TypeError, ValueError):  # builtins without a signature: try keywords
            return (lambda kwargs: answer(**kwargs)), ""
        try:
            signature.bind(**dict.fromkeys(self.parameters))
            return (lambda kwargs: answer(**kwargs)), ""
        except TypeError:
            pass
        theirs = ", ".join(signature.parameters)
        try:
            signature.bind(*self.parameters)
        except TypeError:
            return None, (f"your function takes ({theirs}); it should take "
                          f"{len(self.parameters)} arguments: ({', '.join(self.parameters)}).")
        note = (f" (Your parameters are named ({theirs}), not ({', '.join(self.parameters)}): "
                "I passed the arguments by position, in that order.)")
        return (lambda kwargs: answer(*[kwargs[p] for p in self.parameters])), note

    def check(self, answer: Any) -> Outcome:
        if _is_stub_value(answer):
            return self._say(NOT_ATTEMPTED, "not attempted yet: write the function, then check it.")
        if not callable(answer):
            return self._say(INCORRECT, f"pass your function itself (without calling it), got "
                                        f"{type(answer).__name__}.")
        call, note = self._caller(answer)
        if call is None:
            return self._say(INCORRECT, note)
        cases = [self.teaching_case] + list(self._cases(np.random.default_rng(self.seed)))
        results = []
        for number, kwargs in enumerate(cases):
            where = self._where(number, kwargs)
            try:
                got = call(dict(kwargs))
            except NotImplementedError:
                return self._say(NOT_ATTEMPTED, "not attempted yet: the function still raises "
                                                "NotImplementedError.")
            except Exception as error:  # noqa: BLE001 - any learner error becomes a message
                return self._say(INCORRECT, f"your function raised {type(error).__name__}: {error} "
                                            f"on {where}.{note}")
            if got is None:
                if number == 0:
                    return self._say(NOT_ATTEMPTED, "not attempted yet: the function returns None.")
                return self._say(INCORRECT, f"your function returned None on {where}.{note}")
            results.append(got)
        done = f"correct on the example and all {len(cases) - 1} random test inputs!"
        miss = next((i for i, (kwargs, got) in enumerate(zip(cases, results))
                     if not _close(got, self._reference(**kwargs), self.rel_tol)), None)
        if miss is None:
            return self._say(CORRECT, f"{done}{note}")
        for accepted_note, other in self.accepted.items():
            if all(_close(got, other(**kwargs), self.rel_tol) for kwargs, got in zip(cases, results)):
                return self._say(CORRECT, f"{done} {accepted_note}{note}")
        where, got, want = self._where(miss, cases[miss]), results[miss], self._reference(**cases[miss])
        if miss == 0:
            slip = self._slip(got, want)
            return self._say(INCORRECT, f"not yet. On {where}: expected {_show(want)}, "
                                        f"got {_show(got)}.{' ' + slip if slip else ''}{note}")
        return self._say(INCORRECT, f"not yet. Right on the example, but on {where}: "
                                    f"expected {_show(want)}, got {_show(got)}. Does your "
                                    f"function use every argument, for any value?{note}")

    def _where(self, number: int, kwargs: dict[str, Any]) -> str:
        return ("the example " + self.teaching_label if number == 0 else
                f"random test input {number} ({_describe(kwargs)})")

    def _slip(self, got: Any, want: Any) -> str:
        try:
            value, expected = float(got), float(want)
        except (TypeError, ValueError):
            return ""
        if not (math.isfinite(value) and math.isfinite(expected)):
            return ""
        alternatives = {}
        for message, wrong in self.slips.items():
            try:
                alternatives[message] = float(wrong(**self.teaching_case))
            except (TypeError, ValueError):
                continue
        return name_slip(value, expected, self.rel_tol, alternatives)


_LETTERS = "abcdefghij"


class ExplainQuestion(Question):
    """An "explain what you see" question, checked by the statements the learner judges true.

    The learner writes an explanation for themselves (it is not marked: no keyword matching),
    then picks the true statements among several, some of them deliberately plausible but false.
    The check says how many picks are false and how many true statements are missing, never
    which; ``solution()`` gives a model explanation and why each statement is true or false.

    Args:
        statements: ``(text, is_true, why)`` triples, at least two true and two false; lettered
            a, b, c... in an order set by a hash of their text.
        solution: code for a model explanation (``qN_explanation = "..."``); the answer key
            (``qN_answer = {...}``) and the reason for each statement are appended to it.
    """

    kind = "explain question"

    def __init__(self, name: str, prompt: str, *, statements: Sequence[tuple[str, bool, str]],
                 hints: Sequence[str], solution: str):
        statements = [(str(t), bool(v), str(w)) for t, v, w in statements]
        # Lettered in an order fixed by a hash of each text (not by how they were written), so
        # the true ones follow no pattern and the answer key stays stable.
        statements.sort(key=lambda s: hashlib.sha256(s[0].encode("utf-8")).hexdigest())
        if not 4 <= len(statements) <= len(_LETTERS):
            raise ValueError(f"{name}: statements must hold 4 to {len(_LETTERS)} entries")
        if sum(v for _, v, _ in statements) < 2 or sum(not v for _, v, _ in statements) < 2:
            raise ValueError(f"{name}: statements need at least two true and two false")
        self.statements = statements
        self.letters = _LETTERS[:len(statements)]
        self.base_prompt = prompt
        listing = "\n".join(f"- ({letter}) {text}" for letter, (text, _, _) in
                            zip(self.letters, statements))
        prompt = (f"{prompt} Write your explanation for yourself first (it is not marked). Then "
                  f"answer with the letters of every true statement, e.g. {{'a', 'c'}}:\n{listing}")
        reasons = "\n".join(f"# ({letter}) {'true' if v else 'false'}: {why}" for letter, (_, v, why)
                            in zip(self.letters, statements))
        key = "{" + ", ".join(repr(letter) for letter in sorted(self.expected)) + "}"
        super().__init__(name, prompt, hints=hints,
                         solution=f"{solution.rstrip()}\n{name}_answer = {key}\n{reasons}")

    @property
    def expected(self) -> frozenset[str]:
        return frozenset(letter for letter, (_, v, _) in zip(self.letters, self.statements) if v)

    def _picked(self, answer: Any) -> frozenset[str] | str:
        """The letters picked, or a message saying what form the answer must take."""
        form = (f"answer with the letters of the true statements, e.g. {{'a', 'c'}} or 'a, c' "
                f"(your own explanation goes in a separate variable; compare it with solution()).")
        if isinstance(answer, str):
            tokens = [t for t in re.split(r"[\s,;()]+", answer.strip().lower()) if t]
            if not all(len(t) == 1 and t.isalpha() for t in tokens):
                return form
        elif isinstance(answer, (set, frozenset, list, tuple)):
            if not all(isinstance(t, str) for t in answer):
                return form
            tokens = [t.strip().strip("()").lower() for t in answer]
            if not all(len(t) == 1 for t in tokens):
                return form
        else:
            return f"the answer should be the letters of the true statements; got " \
                   f"{type(answer).__name__}. {form}"
        unknown = sorted(set(tokens) - set(self.letters))
        if unknown:
            return (f"there is no statement ({unknown[0]}): the statements are "
                    f"({self.letters[0]}) to ({self.letters[-1]}).")
        return frozenset(tokens)

    def check(self, answer: Any) -> Outcome:
        if _is_stub_value(answer) or (isinstance(answer, (str, set, frozenset, list, tuple))
                                      and not (answer.strip() if isinstance(answer, str)
                                               else answer)):
            return self._say(NOT_ATTEMPTED, "not attempted yet: write your explanation, then give "
                                            "the letters of the true statements.")
        picked = self._picked(answer)
        if isinstance(picked, str):
            return self._say(INCORRECT, picked)
        true = self.expected
        false_picks = len(picked - true)
        missing = len(true - picked)
        if not false_picks and not missing:
            return self._say(CORRECT, "correct: those are the true statements. Compare your "
                                      "own explanation with solution(), which says why each "
                                      "statement is true or false.")
        parts = []
        if false_picks:
            parts.append(f"{false_picks} of your {len(picked)} picks "
                         f"{'is' if false_picks == 1 else 'are'} false")
        if missing:
            parts.append(f"{missing} true statement{'' if missing == 1 else 's'} "
                         f"{'is' if missing == 1 else 'are'} missing")
        return self._say(INCORRECT, f"not yet: {' and '.join(parts)}. Test each statement "
                                    "against what the widget shows; a statement is true only if "
                                    "every part of it is.")


def _show(value: Any) -> str:
    """A value as a learner reads it: 6 significant digits, arrays by shape."""
    if isinstance(value, np.ndarray):
        return f"<array {value.shape}>" if value.size > 6 else repr(value.tolist())
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return f"{float(value):.6g}"
    if isinstance(value, (tuple, list)):
        if len(value) > 6:
            return f"<{type(value).__name__} of {len(value)}>"
        return "(" + ", ".join(_show(v) for v in value) + ")"
    return repr(value)


def _describe(kwargs: dict[str, Any], exact: bool = False) -> str:
    """``name=value`` pairs; floats to 4 significant digits (all of a round teaching case's)."""
    parts = []
    for key, value in kwargs.items():
        if isinstance(value, bool) or isinstance(value, numbers.Integral):
            parts.append(f"{key}={int(value)}" if not isinstance(value, bool) else f"{key}={value}")
        elif isinstance(value, numbers.Real):
            text = f"{float(value):g}" if exact else f"{float(value):.4g}"
            parts.append(f"{key}={text.replace('e+', 'e')}")
        elif isinstance(value, (np.ndarray, tuple, list)):
            parts.append(f"{key}={_show(value)}")
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
