"""The checking API itself: three outcomes, nudges that never leak the answer, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from accelkit.exercises import (CORRECT, INCORRECT, NOT_ATTEMPTED, ChoiceQuestion, ExplainQuestion,
                                FunctionQuestion, NumberQuestion)


def _number():
    return NumberQuestion("q1", "2 + 2 in FLOPs", expected=lambda: 4096.0, rel_tol=0.01,
                          hints=["first", "second"], solution="answer = 4096")


def _function():
    def reference(n):
        return n * n

    return FunctionQuestion("q2", "square", reference=reference,
                            cases=lambda rng: [{"n": int(x)} for x in rng.integers(1, 100, 5)],
                            rel_tol=1e-9, hints=["multiply"], teaching_case={"n": 10},
                            solution="def square(n):\n    return n * n")


@pytest.mark.parametrize("answer, outcome", [
    (None, NOT_ATTEMPTED), (..., NOT_ATTEMPTED), (4096, CORRECT), (4100.0, CORRECT),
    (np.float64(4096), CORRECT), (5000, INCORRECT), (40960, INCORRECT), ("4096", INCORRECT),
    (True, INCORRECT), (float("nan"), INCORRECT), ([4096], INCORRECT),
])
def test_number_outcomes(answer, outcome, capsys):
    assert _number().check(answer) == outcome
    printed = capsys.readouterr().out
    if outcome == INCORRECT:
        assert "4096" not in printed  # never the expected answer


def test_number_nudges_direction_and_powers_of_ten(capsys):
    q = _number()
    q.check(10)
    assert "too low" in capsys.readouterr().out
    q.check(40960)
    assert "power of ten" in capsys.readouterr().out
    q.check("4096")
    assert "should be a number" in capsys.readouterr().out


def test_function_outcomes(capsys):
    q = _function()

    def stub(n):
        raise NotImplementedError

    assert q.check(stub) == NOT_ATTEMPTED
    assert q.check(lambda n: None) == NOT_ATTEMPTED
    assert q.check(lambda n: n * n) == CORRECT
    assert q.check(lambda n: n + n) == INCORRECT
    assert q.check(lambda n: 1 / 0) == INCORRECT
    assert "ZeroDivisionError" in capsys.readouterr().out
    assert q.check(42) == INCORRECT
    assert "pass your function itself" in capsys.readouterr().out


def test_choice_and_explain_outcomes(capsys):
    choice = ChoiceQuestion("q3", "bound?", options=["compute", "memory"], expected=lambda: "memory",
                            hints=[], solution="answer = 'memory'",
                            nudges={"compute": "Compare the intensity with the ridge point."})
    assert choice.check(None) == NOT_ATTEMPTED
    assert choice.check("Memory") == CORRECT
    assert choice.check("compute") == INCORRECT
    assert "ridge point" in capsys.readouterr().out
    assert choice.check("latency") == INCORRECT
    assert choice.check(3) == INCORRECT
    explain = ExplainQuestion("q4", "why?", statements=[
        ("the chip waits on memory bandwidth", True, "bytes per FLOP are high"),
        ("each byte is reused many times in the array", True, "systolic reuse"),
        ("the clock slows down", False, "no clock scaling"),
        ("the FLOPs double", False, "they do not"),
    ], hints=[], solution='q4_explanation = "..."')
    true = set(explain.expected)
    assert len(true) == 2 and explain.solution_code.splitlines()[1] == \
        "q4_answer = {" + ", ".join(repr(t) for t in sorted(true)) + "}"
    assert explain.check("") == NOT_ATTEMPTED and explain.check(None) == NOT_ATTEMPTED
    assert explain.check(set()) == NOT_ATTEMPTED
    assert explain.check("the chip waits on memory bandwidth and reuse") == INCORRECT  # prose
    assert "letters of the true statements" in capsys.readouterr().out
    assert explain.check({"z"}) == INCORRECT
    assert explain.check(set(explain.letters)) == INCORRECT
    assert "2 of your 4 picks are false" in capsys.readouterr().out
    assert explain.check(true) == CORRECT
    assert explain.check(", ".join(sorted(true)).upper()) == CORRECT
    assert explain.check(sorted(true)) == CORRECT
    with pytest.raises(ValueError, match="two true and two false"):
        ExplainQuestion("q", "?", statements=[("a", True, ""), ("b", True, ""), ("c", True, ""),
                                              ("d", False, "")], hints=[], solution="")


def test_hints_are_progressive_and_solution_only_on_request(capsys):
    q = _number()
    assert q.hint().startswith("Hint 1/2: first")
    assert q.hint().startswith("Hint 2/2: second")
    assert q.hint().startswith("Hint 2/2")  # stays on the last one
    assert q.solution() == "answer = 4096"
    assert "Solution to q1" in capsys.readouterr().out


def test_other_right_functions_are_accepted_whole_not_mixed(capsys):
    def reference(n):
        return n / 4

    q = FunctionQuestion("q5", "quarters", reference=reference,
                         cases=lambda rng: [{"n": int(x)} for x in rng.integers(1, 100, 6)],
                         rel_tol=1e-9, hints=[], teaching_case={"n": 8}, solution="",
                         accepted={"(rounded up: also right)": lambda n: -(-n // 4)})
    assert q.check(lambda n: n / 4) == CORRECT
    assert q.check(lambda n: -(-n // 4)) == CORRECT
    assert "rounded up: also right" in capsys.readouterr().out
    # right one way on some inputs and the other way on others is neither
    assert q.check(lambda n: n / 4 if n % 2 else -(-n // 4)) == INCORRECT


def test_choices_accept_numerals_and_resolved_names(capsys):
    from accelkit.exercises._core import chip_resolver

    degree = ChoiceQuestion("q6", "degree?", options=["1", "2", "none"], expected=lambda: "2",
                            hints=[], solution="")
    assert degree.check(2) == CORRECT and degree.check(2.0) == CORRECT
    assert degree.check(np.int64(2)) == CORRECT and degree.check(" 2") == CORRECT
    assert degree.check(1) == INCORRECT and degree.check(True) == INCORRECT
    assert degree.check(2.5) == INCORRECT
    assert "not one of the options" in capsys.readouterr().out
    chip = ChoiceQuestion("q4", "chip?", options=["TPU v6e", "H100"], expected=lambda: "H100",
                          hints=[], solution="", resolve=chip_resolver(["TPU v6e", "H100"]))
    for name in ("H100", "NVIDIA H100 (SXM)", "h100 ", "nvidia h100"):
        assert chip.check(name) == CORRECT, name
    assert chip.check("TPU v6e (Trillium)") == INCORRECT
    assert chip.check("B200") == INCORRECT and chip.check("no such chip") == INCORRECT
