"""The notebook executions the suite shares, one session-wide batch each (tests/notebook_runner.py).

* ``lesson_runs``: every lesson once, as an nbval pass (``pytest --nbval-lax``, one test item per
  code cell) inside a network namespace (``PYTHONHASHSEED=1``). Read by tests/test_lessons.py
  (nbval passed every cell), test_offline.py (that run was offline) and test_determinism.py (the
  first of its two runs).
* ``second_lesson_runs``: every lesson once more, the same nbval way but outside the namespace,
  ``PYTHONHASHSEED=2``: test_determinism.py's second run, and the only other one (the same runner
  both times, so the two runs' outputs are collected alike and comparable).
* ``exercise_runs``: every exercise notebook twice, with nbclient, in the namespace: as shipped,
  and with the checker's solutions filled into its answer cells (tests/test_exercises.py).

A fixture runs only when a selected test asks for it, and only the notebooks the selected tests
read (``pytest tests/test_lessons.py -k 07`` runs lesson 07 alone; ``pytest tests/test_exercises.py``
runs no lesson); a selected test that reads the batch as a whole (tests/test_offline.py) gets all.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import nbformat
import pytest

from tests.notebook_runner import EXERCISES, LESSONS, Batch, Job, load, run_batch, tags


def _wanted(request, fixture: str, param: str, paths: list[Path]) -> list[Path]:
    """The notebooks among ``paths`` that the selected tests using ``fixture`` read: those named
    by their ``param`` (a stem or a path), or all when one of them has no such parameter."""
    wanted: set[str] = set()
    for item in request.session.items:
        if fixture not in getattr(item, "fixturenames", ()):
            continue
        value = getattr(item, "callspec", None) and item.callspec.params.get(param)
        if value is None:
            return paths
        wanted.add(Path(value).stem)
    return [p for p in paths if p.stem in wanted] or paths


@pytest.fixture(scope="session")
def lesson_runs(request, tmp_path_factory) -> Batch:
    jobs = [Job(p.stem, p, p.parent, hash_seed="1", runner="nbval")
            for p in _wanted(request, "lesson_runs", "lesson", LESSONS)]
    return run_batch(jobs, tmp_path_factory.mktemp("lesson-runs"))


@pytest.fixture(scope="session")
def second_lesson_runs(request, tmp_path_factory) -> Batch:
    jobs = [Job(p.stem, p, p.parent, hash_seed="2", runner="nbval")
            for p in _wanted(request, "second_lesson_runs", "lesson", LESSONS)]
    return run_batch(jobs, tmp_path_factory.mktemp("second-lesson-runs"), offline=False)


def solved_copy(path, destination):
    """``path`` with each answer cell replaced by the checker's own solution, written to
    ``destination``."""
    from accelkit.exercises import questions

    module = importlib.import_module(f"accelkit.exercises.ex{path.name[:2]}")
    notebook = load(path)
    for cell in notebook.cells:
        for tag in tags(cell):
            if tag.startswith("answer:"):
                cell.source = questions(module)[tag.split(":", 1)[1]].solution_code
    nbformat.write(notebook, destination)
    return destination


@pytest.fixture(scope="session")
def exercise_runs(request, tmp_path_factory) -> Batch:
    solved = tmp_path_factory.mktemp("solved-exercises")
    jobs = []
    for path in _wanted(request, "exercise_runs", "path", EXERCISES):
        jobs.append(Job(f"{path.stem}-shipped", path, path.parent))
        jobs.append(Job(f"{path.stem}-solved", solved_copy(path, solved / path.name), path.parent))
    return run_batch(jobs, tmp_path_factory.mktemp("exercise-runs"))
