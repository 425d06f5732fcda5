"""Graded assignments: student versions with no solution in them or in the student's kernel, graded.

``publish/build.py`` (conftest's ``course_build``) generates, with nbgrader, a student version of
each exercise notebook and a library without the answer keys, then grades two submissions of each:
solved (every answer cell holding the checker's own solution) and unsolved (as handed out).
"""

from __future__ import annotations

import importlib
import json
import os
import re

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import built_step
from tests.notebook_runner import EXERCISES

pytestmark = pytest.mark.deploy


@pytest.fixture(scope="module")
def graded(course_build):
    out, step = built_step(course_build, "grading")
    return out / "grading", step["result"]


def _solution_lines(path) -> set[str]:
    """The lines of every solution of exercise notebook ``path`` that would give an answer away:
    those not already in the notebook as shipped (its setup and stubs are no secret)."""
    from accelkit.exercises import questions

    shipped = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)
    lines = set()
    for question in questions(importlib.import_module(f"accelkit.exercises.ex{path.name[:2]}")).values():
        for line in question.solution_code.splitlines():
            line = line.strip()
            if len(line) > 12 and not line.startswith("#") and line not in shipped:
                lines.add(line)
    return lines


def test_the_student_versions_hold_no_solution_no_hidden_test_and_no_answer_key(graded):
    folder, _ = graded
    student = folder / "student"
    assert sorted(p.name for p in (student / "exercises").glob("*.ipynb")) == [p.name for p in EXERCISES]
    for path in EXERCISES:
        text = (student / "exercises" / path.name).read_text(encoding="utf-8")
        notebook = nbformat.reads(text, as_version=4)
        sources = "\n".join(c.source for c in notebook.cells)
        secrets = _solution_lines(path)
        assert secrets, path.name
        for line in secrets:
            assert line not in text, f"{path.name}: a solution line is in the student version: {line}"
        assert "BEGIN HIDDEN" not in text and "_answer_key" not in text and "BEGIN SOLUTION" not in text
        assert not re.search(rf"\bex{path.name[:2]}\b", sources), f"{path.name} refers to its answer key"
        tests = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
        answers = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution")]
        assert tests and len(tests) == len(answers)
    # The library the students get has no answer keys, and nothing else of the repository's tree.
    keys = sorted(p.name for p in (student / "accelkit" / "exercises").iterdir() if p.suffix == ".py")
    assert keys == ["__init__.py", "_core.py"], keys
    assert (student / "pyproject.toml").is_file()


def test_the_students_kernel_cannot_import_or_print_a_solution(graded):
    folder, _ = graded
    student = folder / "student"
    notebook = nbformat.read(student / "exercises" / "05_roofline.ipynb", as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(
        "import accelkit, accelkit.exercises\nprint('LIBRARY', accelkit.__file__)\n"
        "try:\n    import accelkit.exercises.ex05\n    print('KEY IMPORTED')\n"
        "except ModuleNotFoundError as error:\n    print('NO KEY', error)\n"
        "try:\n    from accelkit.exercises import ex05\n    print('KEY IMPORTED')\n"
        "except ImportError as error:\n    print('NO KEY', error)\n"))
    env = {**os.environ, "PYTHONPATH": str(student), "MPLBACKEND": "Agg"}
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(student / "exercises")}})
    client.execute(env=env)
    printed = "".join(o.get("text", "") for o in notebook.cells[-1].outputs)
    assert f"LIBRARY {student / 'accelkit' / '__init__.py'}" in printed, printed
    assert "KEY IMPORTED" not in printed and printed.count("NO KEY") == 2, printed


def test_a_solved_copy_gets_full_marks_and_an_unsolved_one_none(graded):
    folder, result = graded
    grades = result["grades"]
    assert set(grades["solved"]) == set(grades["unsolved"]) == {p.stem for p in EXERCISES}
    for stem in grades["solved"]:
        solved, unsolved = grades["solved"][stem], grades["unsolved"][stem]
        assert solved["max_score"] == unsolved["max_score"] > 0
        assert solved["score"] == solved["max_score"], (stem, solved)
        assert unsolved["score"] == 0, (stem, unsolved)
    # The grading run's feedback is the checker's own: the solved copies say "correct".
    graded_notebook = nbformat.read(folder / "graded" / "solved" / "autograded" / "solved" / "accelkit" / "05_roofline.ipynb",
                                    as_version=4)
    printed = "".join(o.get("text", "") for c in graded_notebook.cells for o in c.get("outputs", []))
    assert "✔ q1: correct" in printed, printed[:2000]
    assert json.loads((folder / "grades.json").read_text(encoding="utf-8"))["grades"] == grades


def test_the_syllabus_counts_the_graded_points(graded):
    from tests.notebook_runner import ROOT

    _, result = graded
    total = sum(g["max_score"] for g in result["grades"]["solved"].values())
    assert f"Total: {total:.0f} points" in (ROOT / "docs" / "syllabus.md").read_text(encoding="utf-8")
