"""The answer key's numbers are what the solutions compute and what the lessons print.

docs/answers.md shows, for every number and choice question, the checker's own expected value
(tests/test_docs.py keeps the page regenerated). Here every shipped solution is run in a kernel, as
a learner would paste it, and must give that value (to 1e-9, not just within the learner's
tolerance: a solution that only lands inside ±10% is a second, different answer); and the
numbers a lesson prints for the same quantity must agree with the key.
"""

from __future__ import annotations

import importlib
import math
import re

import nbformat
import pytest

from accelkit.exercises import questions
from accelkit.exercises._core import ChoiceQuestion, NumberQuestion
from tests.notebook_runner import ROOT, execute, load, outputs_text

MODULES = sorted(p.stem for p in (ROOT / "accelkit" / "exercises").glob("ex[0-9][0-9].py"))


def test_every_solution_gives_the_keys_answer():
    cells, asked = [], []
    for name in MODULES:
        module = importlib.import_module(f"accelkit.exercises.{name}")
        # The exercise notebook's set-up cell (its imports) first, as a learner has run it.
        exercise = load(next((ROOT / "exercises").glob(f"{name[2:]}_*.ipynb")))
        cells.append(next(c for c in exercise.cells if c.cell_type == "code"))
        cells.append(nbformat.v4.new_code_cell("pass"))
        asked.append(None)
        for key, question in sorted(questions(module).items()):
            if isinstance(question, (NumberQuestion, ChoiceQuestion)):
                cells.append(nbformat.v4.new_code_cell(question.solution_code))
                cells.append(nbformat.v4.new_code_cell(f"print(repr({key}_answer))"))
                asked.append((name, key, question))
    assert asked
    notebook = nbformat.v4.new_notebook(cells=cells)
    printed = outputs_text(execute(notebook, ROOT / "exercises", timeout=300))[1::2]
    for entry, text in zip(asked, printed, strict=True):
        if entry is None:
            continue
        name, key, question = entry
        if isinstance(question, NumberQuestion):
            got = float(text.strip())
            assert math.isclose(got, question.expected, rel_tol=1e-9, abs_tol=1e-12), (
                f"{name} {key}: the solution gives {got}, the key and the checker {question.expected}")
        else:
            assert text.strip().strip("'\"").lower() == str(question._expected()).lower(), (name, key, text)


@pytest.mark.parametrize("lesson", ["08_inference"])
def test_ex08_q2_matches_lesson_08s_table(lesson_runs, lesson):
    """The batch where Llama-3-70B's decode matmuls turn compute-bound on an H100 (310, not 295).

    Reads the suite's one run of lesson 08 (conftest's ``lesson_runs``) rather than running it again."""
    key = (ROOT / "docs" / "answers.md").read_text(encoding="utf-8")
    section = key[key.index("### Exercises ([08_inference.ipynb]"):]
    shown = re.search(r"\*\*q2\.\*\*.*?\*\*Answer: ([\d,.]+)\*\*", section, re.DOTALL).group(1)
    assert lesson not in lesson_runs.errors, lesson_runs.errors[lesson]
    ran = lesson_runs.notebooks[lesson]
    table = next(text for text in outputs_text(ran) if "B* bf16" in text)
    h100 = re.search(r"H100[^\n]*B\* bf16\s+(\d+)", table)
    assert h100, table
    assert round(float(shown.replace(",", ""))) == int(h100.group(1)), (shown, h100.group(0))
