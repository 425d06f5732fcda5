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
                            rel_tol=1e-9, hints=["multiply"], solution="def square(n):\n    return n * n")


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
    explain = ExplainQuestion("q4", "why?", concepts={"bandwidth": ["bandwidth", "bytes"],
                                                     "reuse": ["reuse", "re-use"]},
                              hints=[], solution="...")
    assert explain.check("") == NOT_ATTEMPTED
    assert explain.check("too short") == INCORRECT
    assert explain.check("the chip waits on memory bandwidth because every byte is read once") == INCORRECT
    assert "reuse" in capsys.readouterr().out.split("\n")[-2]
    assert explain.check("the chip waits on bandwidth, and reuse of each byte in the array helps") == CORRECT


def test_hints_are_progressive_and_solution_only_on_request(capsys):
    q = _number()
    assert q.hint().startswith("Hint 1/2: first")
    assert q.hint().startswith("Hint 2/2: second")
    assert q.hint().startswith("Hint 2/2")  # stays on the last one
    assert q.solution() == "answer = 4096"
    assert "Solution to q1" in capsys.readouterr().out
