"""Every exercise notebook runs twice, and only twice: as shipped (all "not attempted") and with
the solutions filled in from the checker's own solution strings (all "correct"). Both runs are
conftest's ``exercise_runs``, made once per session; this module reads their outputs. (The deploy
tier runs both again inside a network namespace: tests/test_offline.py.)"""

from __future__ import annotations

import importlib
import re

import pytest

from accelkit.exercises import questions
from tests.notebook_runner import EXERCISES, LESSONS, load, outputs_text, tags

CHECK_LINE = re.compile(r"^(✔|✘|…) (q\d+): ", re.MULTILINE)


def _module_for(path):
    return importlib.import_module(f"accelkit.exercises.ex{path.name[:2]}")


def _check_lines(notebook) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for text in outputs_text(notebook) for m in CHECK_LINE.finditer(text)]


def test_every_lesson_from_01_has_an_exercise_notebook():
    lessons = sorted(p.name[:2] for p in LESSONS if p.name[:2] != "00")
    assert lessons, "no lessons found"
    assert [p.name[:2] for p in EXERCISES] == lessons


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.name)
def test_every_question_has_one_answer_cell(path):
    answer_cells = {t.split(":", 1)[1] for cell in load(path).cells for t in tags(cell)
                    if t.startswith("answer:")}
    assert answer_cells == set(questions(_module_for(path))), "every question needs exactly one answer cell"
    assert 3 <= len(answer_cells) <= 8


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.name)
def test_shipped_exercise_says_not_attempted_everywhere(exercise_runs, path):
    name = f"{path.stem}-shipped"
    assert name not in exercise_runs.errors, exercise_runs.errors.get(name)
    ran = exercise_runs.notebooks[name]
    lines = _check_lines(ran)
    assert sorted(q for _, q in lines) == sorted(questions(_module_for(path))), lines
    assert all(symbol == "…" for symbol, _ in lines), lines
    assert not any(text.startswith("ERROR") or "\nERROR" in text for text in outputs_text(ran))


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.name)
def test_exercise_with_solutions_filled_in_says_correct_everywhere(exercise_runs, path):
    name = f"{path.stem}-solved"
    assert name not in exercise_runs.errors, exercise_runs.errors.get(name)
    lines = _check_lines(exercise_runs.notebooks[name])
    assert sorted(q for _, q in lines) == sorted(questions(_module_for(path))), lines
    assert all(symbol == "✔" for symbol, _ in lines), lines
