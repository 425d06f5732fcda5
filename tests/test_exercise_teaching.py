"""Exercise checks that teach: a round teaching case with expected and got,
named slips, no answer given away, truthful tolerances, one display per check, keyword or
positional calls, and explain-questions that keyword lists, negations and substring tricks cannot
pass."""

from __future__ import annotations

import importlib
import itertools
import math
import numbers
import re

import nbformat
import pytest

from accelkit.exercises import (CORRECT, INCORRECT, ChoiceQuestion, ExplainQuestion,
                                FunctionQuestion, NumberQuestion, questions)
from accelkit.exercises._core import KEYWORD_NOTE, Outcome, Shown, _show, tolerance_text
from tests.notebook_runner import ROOT, execute, load

MODULES = {f"ex{n:02d}": importlib.import_module(f"accelkit.exercises.ex{n:02d}")
           for n in range(1, 12)}
ALL = {f"{mod}.{name}": q for mod, module in MODULES.items()
       for name, q in sorted(questions(module).items())}


def _of(kind):
    return {key: q for key, q in ALL.items() if isinstance(q, kind)}


def _said(q, answer, capsys):
    outcome = q.check(answer)
    return outcome, capsys.readouterr().out


# --- function questions: a teaching case, random cases decide, keyword or positional ---------

@pytest.mark.parametrize("key", sorted(_of(FunctionQuestion)))
def test_a_wrong_function_is_shown_the_round_teaching_case(key, capsys):
    q = ALL[key]
    for value in q.teaching_case.values():
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            power_of_two = value > 0 and math.log2(value) == int(math.log2(value))
            assert float(f"{value:.2g}") == value or power_of_two, \
                f"{key}: teaching value {value} is neither round nor a power of two"

    def wrong(*args, **kwargs):
        return -7.5

    outcome, out = _said(q, wrong, capsys)
    want = q._reference(**q.teaching_case)
    assert outcome == INCORRECT
    assert f"On the example {q.teaching_label}: expected {_show(want)}, got -7.5." in out, out
    assert "e+" not in q.teaching_label


@pytest.mark.parametrize("key", sorted(_of(FunctionQuestion)))
def test_the_random_cases_still_decide(key, capsys):
    q = ALL[key]
    teaching_answer = q._reference(**q.teaching_case)
    outcome, out = _said(q, lambda *args, **kwargs: teaching_answer, capsys)
    assert outcome == INCORRECT and "Right on the example, but on random test input" in out, out


@pytest.mark.parametrize("key", sorted(_of(FunctionQuestion)))
def test_called_by_keyword_or_by_position_and_the_prompt_says_so(key, capsys):
    q = ALL[key]
    assert KEYWORD_NOTE in q.prompt
    n = len(q.parameters)

    def renamed(*values):  # no parameter names the prompt uses: must be called by position
        assert len(values) == n
        return q._reference(*values)

    outcome, out = _said(q, renamed, capsys)
    assert outcome == CORRECT and "by position, in that order" in out, out
    outcome, out = _said(q, lambda only: 1, capsys)
    assert outcome == INCORRECT and f"it should take {n} arguments" in out


def test_every_function_prompt_in_the_notebooks_says_how_it_is_called():
    for path in sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb")):
        module = MODULES[f"ex{path.name[:2]}"]
        text = "\n".join(c.source for c in load(path).cells if c.cell_type == "markdown")
        for name, q in questions(module).items():
            if isinstance(q, FunctionQuestion):
                block = re.search(rf"\*\*{name}\b.*", text).group(0)
                assert KEYWORD_NOTE in block, (path.name, name)


# --- slips are named ------------------------------------------------------------------------

def _number(expected=100.5, rel_tol=0.01, **kw):
    nudges = {"too_high": "TOO HIGH", "too_low": "TOO LOW", **kw}
    return NumberQuestion("q", "?", expected=lambda: expected, rel_tol=rel_tol, hints=[],
                          solution="", **nudges)


@pytest.mark.parametrize("factor, needle, quantity", [
    (86_400, "86,400", None), (1 / 86_400, "86,400", None), (3_600, "3,600", None),
    (1 / 3_600, "3,600", None), (24, "hours where days", None), (1 / 24, "hours where days", None),
    (1e6, "million", None), (1e-6, "million", None), (1.024, "1,024 where 1,000", "bytes"),
    (1 / 1.024 ** 3, "GiB vs GB", "bytes"), (1 / 1024, "KiB where bytes", "bytes"),
    (1024 ** 2, "MiB where bytes", "bytes"), (2, "factor of 2", None), (0.5, "factor of 2", None),
    (1e3, "power of ten", None), (1e-9, "power of ten", None),
])
def test_a_slip_is_named(factor, needle, quantity, capsys):
    outcome, out = _said(_number(quantity=quantity), 100.5 * factor, capsys)
    assert outcome == INCORRECT and needle in out and "TOO" not in out, out
    direction = "large" if factor > 1 else "small"
    assert f"too {direction}" in out


def test_binary_prefixes_are_named_only_for_bytes(capsys):
    """A FLOP count 5% off is not "MiB vs MB" (issue 24): binary prefixes are for bytes."""
    for factor in (1.024, 1.024 ** 2, 1.024 ** 3, 1 / 1.024 ** 2):
        out = _said(_number(), 100.5 * factor, capsys)[1]
        assert "iB" not in out and "TOO" in out, out
    # 320 for 327,680 bytes is KiB, not "a power of ten"
    out = _said(_number(expected=327_680.0, quantity="bytes"), 320, capsys)[1]
    assert "KiB where bytes" in out and "power of ten" not in out, out


def test_other_right_answers_are_accepted_with_a_note(capsys):
    q = _number(accepted={"(You counted attention too.)": lambda: 105.0})
    outcome, out = _said(q, 105.2, capsys)
    assert outcome == CORRECT and "counted attention" in out
    assert _said(q, 120.0, capsys)[0] == INCORRECT


def test_a_small_count_still_gets_its_own_slips(capsys):
    q = _number(expected=10.0, rel_tol=0.0, slips={"That is the ws count.": lambda: 14.0})
    assert "ws count" in _said(q, 14, capsys)[1]
    assert "TOO LOW" in _said(q, 5, capsys)[1]  # not "2× too small": that would give it away


def test_no_slip_named_for_an_ordinary_miss(capsys):
    assert "TOO HIGH" in _said(_number(), 137.0, capsys)[1]
    assert "TOO LOW" in _said(_number(), 71.0, capsys)[1]


def test_question_specific_slip_wins(capsys):
    q = _number(slips={"You added them: take the max.": lambda: 150.0})
    assert "take the max" in _said(q, 150.0, capsys)[1]


def test_no_factor_is_named_for_a_small_whole_number(capsys):
    q = _number(expected=2.0, rel_tol=0.0)  # "2× too small" for an answer of 1 would give it away
    assert "TOO LOW" in _said(q, 1.0, capsys)[1]
    assert "TOO HIGH" in _said(q, 4.0, capsys)[1]


def test_hours_instead_of_days_is_named_not_the_mfu(capsys):
    q = MODULES["ex07"].q2
    outcome, out = _said(q, q.expected * 24, capsys)
    assert "hours where days" in out and "MFU" not in out
    outcome, out = _said(q, q.expected * 86_400, capsys)
    assert "seconds where days" in out
    outcome, out = _said(q, q.expected * 0.45 ** 2, capsys)  # divided by MFU
    assert "multiply the peak by it" in out

    def hours(params, tokens, n_chips, peak_flops, mfu):
        return 6 * params * tokens / (n_chips * peak_flops * mfu) / 3600

    assert "hours where days" in _said(MODULES["ex07"].q3, hours, capsys)[1]


def test_sum_instead_of_max_is_named(capsys):
    def summed(flops, bytes_moved, peak_flops_per_second, bytes_per_second):
        return flops / peak_flops_per_second + bytes_moved / bytes_per_second

    assert "a max, not a sum" in _said(MODULES["ex05"].q4, summed, capsys)[1]

    def summed_cycles(issue_cycles, transactions, latency, in_flight):
        return issue_cycles + -(-transactions * latency // in_flight) + latency

    assert "a max, not a sum" in _said(MODULES["ex02"].q3, summed_cycles, capsys)[1]


# --- nothing gives the answer away; tolerances are truthful ----------------------------------

def _formats(value: float) -> set[str]:
    """The expected value as a message might print it."""
    found = {f"{value:g}", f"{value:.2g}", f"{value:.3g}", f"{value:.4g}", f"{value:.6g}",
             f"{value:.2e}", f"{value:.3e}", f"{value:.2f}", f"{value:.1%}", f"{value:.2%}",
             f"{value:.0%}", repr(value), f"{value:,.0f}", f"{value:.0f}", f"{value:,.1f}"}
    if value == int(value):
        found |= {f"{int(value):,}", str(int(value))}
    return found


def _parse(shown: str) -> float:
    number = float(shown.replace(",", "").rstrip("%"))
    return number / 100 if shown.endswith("%") else number


def _leaks(q: NumberQuestion, text: str) -> list[str]:
    """Printings of the expected value in ``text`` that the checker would accept as the answer
    (a leak is a number the learner could copy; "at most 1" for a fraction of 0.9999 is not)."""
    expected = q.expected
    found = []
    for shown in _formats(expected):
        if re.search(rf"(?<![\d.,*^]){re.escape(shown)}(?![\d*^])", text) and \
                math.isclose(_parse(shown), expected, rel_tol=q.rel_tol, abs_tol=1e-12):
            found.append(shown)
    return found


WRONG_FACTORS = (0.5, 0.77, 1.3, 2.0, 3.0, 24.0, 1 / 86_400, 1e6, 1e-3, 1.024 ** 3, -1.0)


@pytest.mark.parametrize("key", sorted(_of(NumberQuestion)))
def test_number_nudges_never_show_the_expected_value(key, capsys):
    q = ALL[key]
    expected = q.expected
    answers = [expected * f for f in WRONG_FACTORS] + [expected + 1, expected - 1]
    for answer in answers:
        if math.isclose(answer, expected, rel_tol=q.rel_tol, abs_tol=1e-12):
            continue
        outcome, out = _said(q, answer, capsys)
        assert outcome == INCORRECT
        message = out.split(": ", 1)[1]  # after "✘ q2: ", whose digit is the question's name
        assert not _leaks(q, message), (key, answer, _leaks(q, message), out)
        assert "±" not in out and f"accepted: {tolerance_text(q.rel_tol)}" in out


def test_the_leak_scan_catches_a_leaking_nudge(capsys):
    q = _number(expected=4096.0, too_low="Too low: it is 4,096.")
    out = _said(q, 10.0, capsys)[1]
    assert _leaks(q, out) == ["4,096"]


@pytest.mark.parametrize("key", sorted(_of(ChoiceQuestion)))
def test_choice_nudges_never_name_the_right_option(key, capsys):
    q = ALL[key]
    right = q.expected
    for option in q.options:
        if option != right:
            outcome, out = _said(q, option, capsys)
            assert outcome == INCORRECT
            assert not re.search(rf"\b{re.escape(right)}\b", out.lower()), (key, out)


@pytest.mark.parametrize("key", sorted(_of(ExplainQuestion)))
def test_explain_nudges_never_say_which_statements_are_true(key, capsys):
    q = ALL[key]
    for size in range(1, len(q.letters) + 1):
        for picked in itertools.combinations(q.letters, size):
            if set(picked) == q.expected:
                continue
            outcome, out = _said(q, set(picked), capsys)
            assert outcome == INCORRECT
            assert not re.search(r"\([a-j]\)", out), out
            assert not any(text[:30] in out for text, _, _ in q.statements)


@pytest.mark.parametrize("rel_tol, text", [
    (0.0, "exactly"), (0.01, "within 1%"), (0.1, "within 10%"), (0.005, "within 0.5%"),
    (1e-4, "within 0.01%"), (0.0125, "within 1.25%"), (1e-9, "within a relative error of 1e-09"),
])
def test_tolerances_are_printed_truthfully(rel_tol, text):
    assert tolerance_text(rel_tol) == text


# --- one display per check in a notebook -----------------------------------------------------

def test_check_hint_and_solution_print_once_and_display_nothing_more(capsys):
    q = _number()
    outcome = q.check(5.0)
    assert isinstance(outcome, Outcome) and outcome == INCORRECT and outcome.message
    assert capsys.readouterr().out.strip() == outcome.message
    from IPython.core.formatters import DisplayFormatter

    assert DisplayFormatter().format(outcome) == ({}, {})
    assert DisplayFormatter().format(Shown("Hint 1/1: ...")) == ({}, {})


def test_in_a_kernel_a_check_on_the_last_line_shows_one_line():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("from accelkit.exercises import ex05\n"
                                                "ex05.q1.check(5.0)"),
                      nbformat.v4.new_code_cell("ex05.q1.hint()")]
    ran = execute(notebook, ROOT / "exercises")
    for cell in ran.cells:
        assert [o.output_type for o in cell.outputs] == ["stream"], cell.outputs
        assert cell.outputs[0].text.count("\n") == 1


# --- explain-questions cannot be gamed -------------------------------------------------------

def _gaming_corpus(q: ExplainQuestion) -> list:
    words = sorted({w.lower().strip(".,:;()'") for text, _, _ in q.statements
                    for w in text.split() if len(w) > 3})
    true_text = " ".join(text for text, v, _ in q.statements if v)
    corpus = [
        ", ".join(words),                                   # a bare keyword list
        " ".join(words[:12]),
        "It is not " + true_text.replace(".", ". It is not"),  # negations of the true ones
        "None of this is true: " + true_text,
        "it seems ms batch latency target memory bytes kv cache load skew fold reuse "
        "intensity ratio both sides mask failures restart",  # substring tricks
        true_text,                                          # the right ideas, but as prose
        " ".join(q.letters),                                # every statement
        set(q.letters), list(q.letters), "".join(q.letters),
        {"a"}, "a", {q.letters[-1]}, "yes", "true", 1, True, {1, 2}, ["a", 2], "a b c d e f g",
        q.base_prompt,
    ]
    return corpus


@pytest.mark.parametrize("key", sorted(_of(ExplainQuestion)))
def test_gaming_answers_are_never_marked_correct(key, capsys):
    q = ALL[key]
    for answer in _gaming_corpus(q):
        assert q.check(answer) != CORRECT, (key, answer)
    correct = [set(picked) for size in range(len(q.letters) + 1)
               for picked in itertools.combinations(q.letters, size)
               if q.check(set(picked)) == CORRECT]
    assert correct == [set(q.expected)]
    false = [v for _, v, _ in q.statements].count(False)
    assert false >= 2 and len(q.expected) >= 2


@pytest.mark.parametrize("key", sorted(_of(ExplainQuestion)))
def test_the_right_answers_are_marked_correct_in_any_plain_form(key, capsys):
    q = ALL[key]
    letters = sorted(q.expected)
    for answer in (set(letters), frozenset(letters), list(reversed(letters)), tuple(letters),
                   ", ".join(letters), " ".join(letters).upper(), "; ".join(f"({x})" for x in letters)):
        assert q.check(answer) == CORRECT, (key, answer)
    namespace: dict = {}
    exec(q.solution_code, namespace)  # noqa: S102 - the shipped solution string, not user input
    assert q.check(namespace[f"{q.name}_answer"]) == CORRECT
    assert isinstance(namespace[f"{q.name}_explanation"], str)


def test_true_statements_follow_no_common_letter_pattern():
    keys = [frozenset(q.expected) for q in _of(ExplainQuestion).values()]
    assert len(set(keys)) >= len(keys) // 2, keys


@pytest.mark.parametrize("key", sorted(k for k, q in ALL.items()
                                       if isinstance(q, (FunctionQuestion, NumberQuestion))
                                       and q.slips))
def test_every_question_specific_slip_is_named_when_made(key, capsys):
    """Each slip a question lists is wrong on its teaching case (or value) and gets its nudge."""
    q = ALL[key]
    for message, wrong in q.slips.items():
        answer = wrong if isinstance(q, FunctionQuestion) else wrong()
        outcome, out = _said(q, answer, capsys)
        assert outcome == INCORRECT and message in out, (key, message, out)
