"""Graded assignments with nbgrader: student versions, hidden tests, and a grading run.

``python publish/build.py --only grading`` writes into ``build/course/grading/``:

* ``student/``: what a student gets (with ``lessons/`` and the glossary). ``exercises/NN_*.ipynb``, nbgrader's release of each
  exercise notebook: the answer cells as shipped (a stub to replace), each followed by a test
  cell whose visible part checks only the form of the answer (a number, one of the options, a
  function); and ``accelkit/`` with ``pyproject.toml``: the library *without* the answer keys
  (``accelkit/exercises/exNN.py``, which hold each question's solution and reference). A course
  that grades installs this library in the students' image (``pip install ./student``), not the
  repository's, so no solution is in the notebook or importable in the student's kernel.
* ``source/``, ``release/``: nbgrader's course folder (``graded/solved`` and ``graded/unsolved``
  are two more, one per submission, each with its ``submitted/``, ``autograded/`` and
  ``gradebook.db``, so that the two grade side by side). The source notebooks are generated from the shipped exercises and their checkers: each
  answer cell becomes a solution cell (the checker's own solution between nbgrader's solution
  markers), each check cell an autograded test cell worth one point whose hidden part calls the
  checker (``exNN.qK.check(answer) == "correct"``), which nbgrader strips from the release and puts
  back when grading.
* ``grades.json``: ``nbgrader autograde`` run on two submissions of every exercise, ``solved``
  (each answer cell replaced by the checker's solution) and ``unsolved`` (the release as handed
  out): each notebook's score and its maximum.

Why nbgrader rather than otter-grader: it is the autograder university courses run on a
JupyterHub (its formgrader and exchange are hub services), its hidden tests are part of the test
cell and need no separate test files, and grading needs no container engine (otter's ``grade``
command runs each submission in Docker; its local ``run`` path still ships results through
pickles, which this project does not use).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from accelkit.exercises import questions  # noqa: E402
from accelkit.exercises._core import (ChoiceQuestion, ExplainQuestion, FunctionQuestion,  # noqa: E402
                                      NumberQuestion)

ASSIGNMENT = "accelkit"
POINTS = 1
CHECK = re.compile(r"^\s*ex(\d\d)\.(q\d+)\.check\((.+)\)\s*$")
STUB = "# YOUR CODE HERE"
INTRO = (
    "For [lesson {number}](../lessons/{lesson}). This is the graded version: fill in each answer "
    "cell (replace the `None`, or the function's body), then run the test cell under it. The "
    "visible test checks only the form of your answer; whether it is right is decided when your "
    "submission is graded, by tests you do not see. There are no hints or solutions in this "
    "version: the lesson has what you need.")


def _nbgrader(cell, **fields) -> None:
    cell.metadata["nbgrader"] = {"schema_version": 3, "task": False, "locked": False,
                                 "solution": False, "grade": False, **fields}


def _public_test(question, argument: str) -> str:
    name = question.name
    if isinstance(question, NumberQuestion):
        return (f"import numbers\nassert isinstance({argument}, numbers.Real) and not isinstance({argument}, bool), "
                f"\"{name}: {argument} should be a number\"")
    if isinstance(question, ChoiceQuestion):
        return (f"assert isinstance({argument}, str) and {argument}.strip().lower() in {question.options!r}, "
                f"\"{name}: {argument} should be one of {question.options}\"")
    if isinstance(question, FunctionQuestion):
        return f"assert callable({argument}), \"{name}: {argument} should be a function\""
    if isinstance(question, ExplainQuestion):
        letters = sorted(set(question.letters))
        return (f"assert {argument} is not None and {argument} != set(), \"{name}: give the letters of "
                f"the true statements\"\nassert set(str(x).strip().lower() for x in ({argument} if not "
                f"isinstance({argument}, str) else {argument}.replace(',', ' ').split())) <= set({letters!r}), "
                f"\"{name}: letters are {letters}\"")
    raise TypeError(f"{name}: no public test for a {type(question).__name__}")


def source_notebook(path: Path) -> nbformat.NotebookNode:
    """The nbgrader source version of exercise notebook ``path`` (see the module docstring)."""
    number = path.name[:2]
    module = importlib.import_module(f"accelkit.exercises.ex{number}")
    asked = questions(module)
    notebook = nbformat.read(path, as_version=4)
    cells = []
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        answer = next((t.split(":", 1)[1] for t in tags if t.startswith("answer:")), None)
        if cell is notebook.cells[0]:
            title = cell.source.splitlines()[0]
            cell.source = f"{title} (graded)\n\n" + INTRO.format(number=number, lesson=path.name)
            _nbgrader(cell, locked=True, grade_id="intro")
        elif cell.cell_type == "code" and f"import ex{number}" in cell.source:
            cell.source = "\n".join(line for line in cell.source.splitlines() if f"import ex{number}" not in line)
            _nbgrader(cell, locked=True, grade_id="setup")
        elif answer is not None:
            cell.source = (f"{cell.source.rstrip()}\n### BEGIN SOLUTION\n{asked[answer].solution_code}\n"
                           "### END SOLUTION")
            cell.metadata["tags"] = [t for t in tags if not t.startswith("answer:")]
            _nbgrader(cell, solution=True, grade_id=f"{answer}-answer")
        elif cell.cell_type == "code" and CHECK.match(cell.source):
            _, name, argument = CHECK.match(cell.source).groups()
            cell.source = (f"{_public_test(asked[name], argument)}\n### BEGIN HIDDEN TESTS\n"
                           f"from accelkit.exercises import ex{number} as _answer_key\n"
                           f"assert _answer_key.{name}.check({argument}) == \"correct\", "
                           f"\"{name} is not right yet\"\n### END HIDDEN TESTS")
            _nbgrader(cell, grade=True, locked=True, points=POINTS, grade_id=f"{name}-tests")
        elif cell.cell_type == "markdown" and f"ex{number}." in cell.source and "hint()" in cell.source:
            continue  # "Stuck? hint() ... solution()": not in a graded version
        cells.append(cell)
    notebook.cells = cells
    if f"ex{number}" in "".join(c.source for c in cells if "BEGIN HIDDEN" not in c.source):
        raise ValueError(f"{path.name}: a cell still refers to the answer key ex{number}")
    return notebook


def _config(course: Path) -> None:
    (course / "nbgrader_config.py").write_text("\n".join([
        "c = get_config()  # noqa: F821 (nbgrader's config loader defines it)",
        f"c.CourseDirectory.root = {str(course)!r}",
        f"c.CourseDirectory.course_id = {ASSIGNMENT!r}",
        f"c.ClearSolutions.code_stub = {{'python': {STUB!r}}}",
        "c.ExecutePreprocessor.timeout = 300",
        "c.Execute.timeout = 300",
    ]) + "\n", encoding="utf-8")


def _env() -> dict[str, str]:
    """nbgrader runs ``alembic`` (its database migrations) by name: this environment's scripts
    folder goes first on PATH, as an activated virtual environment would have it."""
    scripts = str(Path(sys.executable).parent)
    return {**os.environ, "MPLBACKEND": "Agg", "PATH": scripts + os.pathsep + os.environ.get("PATH", "")}


def _run(course: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=course,
                          capture_output=True, text=True, timeout=1200, env=_env())
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{(done.stdout + done.stderr)[-5000:]}")
    return done.stdout + done.stderr


def student_library(destination: Path) -> None:
    """The library without the answer keys, installable with pip (see the module docstring)."""
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(ROOT / "accelkit", destination / "accelkit",
                    ignore=shutil.ignore_patterns("__pycache__", "ex[0-9][0-9].py"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    deps = ", ".join(json.dumps(d) for d in project["dependencies"])
    (destination / "pyproject.toml").write_text(
        "[build-system]\nrequires = [\"setuptools>=68\"]\nbuild-backend = \"setuptools.build_meta\"\n\n"
        f"[project]\nname = \"accelkit\"\nversion = \"{project['version']}+student\"\n"
        f"description = \"accelkit for graded work: the library without the exercises' answer keys\"\n"
        f"requires-python = \"{project['requires-python']}\"\ndependencies = [{deps}]\n\n"
        "[tool.setuptools.packages.find]\ninclude = [\"accelkit*\"]\n\n"
        "[tool.setuptools.package-data]\naccelkit = [\"data/*.json\"]\n", encoding="utf-8")


def solved(notebook: nbformat.NotebookNode, number: str) -> nbformat.NotebookNode:
    """A student version with every answer cell replaced by the checker's solution."""
    asked = questions(importlib.import_module(f"accelkit.exercises.ex{number}"))
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("-answer"):
            cell.source = asked[grade_id.removesuffix("-answer")].solution_code
    return notebook


_READ_GRADES = """
import json, sys
from nbgrader.api import Gradebook
course, assignment, students, names = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4:]
found = {}
with Gradebook("sqlite:///" + course + "/gradebook.db") as book:
    for student in students:
        for name in names:
            notebook = book.find_submission_notebook(name, assignment, student)
            found.setdefault(student, {})[name] = {"score": notebook.score, "max_score": notebook.max_score}
print(json.dumps(found))
"""


def grades(course: Path, exercises: list[Path], students=("solved", "unsolved")) -> dict:
    """Each submission's score and maximum, from nbgrader's gradebook (its public API, run in a
    subprocess with :func:`_env`'s PATH)."""
    done = subprocess.run([sys.executable, "-c", _READ_GRADES, str(course), ASSIGNMENT, ",".join(students),
                           *(p.stem for p in exercises)], capture_output=True, text=True,
                          timeout=120, env=_env())
    if done.returncode != 0:
        raise RuntimeError(f"reading the gradebook failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _grade(course: Path, who: str, notebooks: dict[str, nbformat.NotebookNode]) -> str:
    """Grade one submission of every exercise in its own nbgrader course folder (``course``),
    so that the two submissions grade side by side (nbgrader grades one notebook at a time)."""
    (course / "source").mkdir(parents=True)
    shutil.copytree(course.parent.parent / "source" / ASSIGNMENT, course / "source" / ASSIGNMENT)
    # The gradebook generate_assignment wrote: the assignment, its notebooks and their test cells.
    shutil.copy(course.parent.parent / "gradebook.db", course / "gradebook.db")
    _config(course)
    for name, notebook in notebooks.items():
        target = course / "submitted" / who / ASSIGNMENT / name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)
    return _run(course, "autograde", ASSIGNMENT, "--create")


def build(out: Path, work: Path | None = None) -> dict:
    """Generate the student versions and grade a solved and an unsolved copy (into ``out``)."""
    from concurrent.futures import ThreadPoolExecutor

    if out.exists():
        shutil.rmtree(out)
    course = out
    exercises = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    _config(course)
    for path in exercises:
        nbformat.write(source_notebook(path), course / "source" / ASSIGNMENT / path.name)
    _run(course, "generate_assignment", ASSIGNMENT)
    release = course / "release" / ASSIGNMENT
    student = course / "student"
    student_library(student)
    shutil.copytree(release, student / "exercises")
    # The lessons the exercises point to, and the glossary the lessons link (neither holds an
    # exercise's answer: a lesson's check-yourself quiz is not graded).
    shutil.copytree(ROOT / "lessons", student / "lessons", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (student / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "glossary.md", student / "docs" / "glossary.md")
    handed_out = {p.name: nbformat.read(release / p.name, as_version=4) for p in exercises}
    submissions = {"solved": {name: solved(nb, name[:2]) for name, nb in handed_out.items()},
                   "unsolved": handed_out}
    with ThreadPoolExecutor(2) as pool:
        logs = dict(zip(submissions, pool.map(
            lambda who: _grade(course / "graded" / who, who, submissions[who]), submissions)))
    found: dict = {}
    for who in submissions:
        found.update(grades(course / "graded" / who, exercises, (who,)))
    result = {"grades": found, "notebooks": [p.stem for p in exercises]}
    (course / "grades.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (course / "autograde.log").write_text("\n".join(logs.values()), encoding="utf-8")
    return result
