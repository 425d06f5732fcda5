"""The checkers of exercises 01 and 05: right answers pass, wrong ones get a nudge that never
shows the expected value, stubs say 'not attempted'."""

from __future__ import annotations

import pytest

import accelkit as ak
from accelkit.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED, ex01, ex05


def test_ex01_numbers(capsys):
    assert ex01.q1.check(2 * 2048 * 11008 * 4096) == CORRECT
    assert ex01.q1.check(32 * 2 * 2048 * 11008 * 4096) == INCORRECT  # all layers
    assert "all 32 layers" in capsys.readouterr().out
    dlrm = ak.models.get("dlrm")
    assert ex01.q2.check(dlrm.embedding_params / dlrm.params) == CORRECT
    assert ex01.q2.check(100 * dlrm.embedding_params / dlrm.params) == INCORRECT
    assert f"{dlrm.embedding_params / dlrm.params}" not in capsys.readouterr().out


def test_ex01_function_and_explanation():
    def wrong(operations, kind):  # share of bytes, not FLOPs
        return sum(op.bytes for op in operations if op.kind == kind) / \
            sum(op.bytes for op in operations)

    def stub(operations, kind):
        raise NotImplementedError

    assert ex01.q3.check(wrong) == INCORRECT
    assert ex01.q3.check(stub) == NOT_ATTEMPTED
    assert ex01.q4.check("") == NOT_ATTEMPTED
    assert ex01.q4.check("It is slow because the chip is slow and it has to wait.") == INCORRECT


@pytest.mark.parametrize("question, answer, outcome", [
    ("q1", ak.chips.get("H100").ridge_flops_per_byte(), CORRECT),
    ("q1", ak.chips.get("H100").ridge_flops_per_byte() * 1000, INCORRECT),
    ("q2", 32 * 28672 * 8192 / (32 * 8192 + 8192 * 28672 + 32 * 28672), CORRECT),
    ("q2", 64.0, INCORRECT),
    ("q3", "memory", CORRECT), ("q3", "Compute", INCORRECT), ("q3", None, NOT_ATTEMPTED),
    ("q3", "both", INCORRECT),
])
def test_ex05_values(question, answer, outcome, capsys):
    assert getattr(ex05, question).check(answer) == outcome
    if outcome == INCORRECT and question == "q1":
        assert f"{ak.chips.get('H100').ridge_flops_per_byte():.0f}" not in capsys.readouterr().out


def test_ex05_function():
    def summed(flops, bytes_moved, peak_flops_per_second, bytes_per_second):
        return flops / peak_flops_per_second + bytes_moved / bytes_per_second

    def right(flops, bytes_moved, peak_flops_per_second, bytes_per_second):
        return max(flops / peak_flops_per_second, bytes_moved / bytes_per_second)

    assert ex05.q4.check(summed) == INCORRECT
    assert ex05.q4.check(right) == CORRECT
    assert ex05.q4.check(right(1, 1, 1, 1)) == INCORRECT  # a number, not the function
