"""Every exercise notebook runs twice: as shipped (all "not attempted") and with the solutions
filled in from the checker's own solution strings (all "correct")."""

from __future__ import annotations

import importlib
import re

import pytest

from accelkit.exercises import CORRECT, INCORRECT, NOT_ATTEMPTED, questions
from tests.notebook_runner import ROOT, execute, load, outputs_text, tags

EXERCISES = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))
CHECK_LINE = re.compile(r"^(✔|✘|…) (q\d+): ", re.MULTILINE)


def _module_for(path):
    return importlib.import_module(f"accelkit.exercises.ex{path.name[:2]}")


def _check_lines(notebook) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for text in outputs_text(notebook) for m in CHECK_LINE.finditer(text)]


def test_every_lesson_from_01_has_an_exercise_notebook():
    lessons = sorted(p.name[:2] for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb") if p.name[:2] != "00")
    assert lessons, "no lessons found"
    assert [p.name[:2] for p in EXERCISES] == lessons


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.name)
def test_shipped_exercise_says_not_attempted_everywhere(path):
    module = _module_for(path)
    notebook = load(path)
    answer_cells = {t.split(":", 1)[1] for cell in notebook.cells for t in tags(cell) if t.startswith("answer:")}
    assert answer_cells == set(questions(module)), "every question needs exactly one answer cell"
    assert 3 <= len(answer_cells) <= 8
    ran = execute(notebook, path.parent)
    lines = _check_lines(ran)
    assert sorted(q for _, q in lines) == sorted(questions(module)), lines
    assert all(symbol == "…" for symbol, _ in lines), lines
    assert not any(text.startswith("ERROR") or "\nERROR" in text for text in outputs_text(ran))


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.name)
def test_exercise_with_solutions_filled_in_says_correct_everywhere(path):
    module = _module_for(path)
    notebook = load(path)
    for cell in notebook.cells:
        for tag in tags(cell):
            if tag.startswith("answer:"):
                cell.source = questions(module)[tag.split(":", 1)[1]].solution_code
    ran = execute(notebook, path.parent)
    lines = _check_lines(ran)
    assert sorted(q for _, q in lines) == sorted(questions(module)), lines
    assert all(symbol == "✔" for symbol, _ in lines), lines


def test_outcomes_are_the_three_named_strings():
    assert {CORRECT, INCORRECT, NOT_ATTEMPTED} == {"correct", "incorrect", "not attempted"}
