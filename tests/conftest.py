"""The suite's two tiers, its per-lesson markers, and the notebook runs the tests share.

Two tiers:

* ``python -m pytest`` (the README's test command, after ``pip install -e ".[test]"``) is the
  contributor's suite: unit, property and claim tests, the docstring examples of ``accelkit/``,
  and every lesson and exercise notebook run once. It needs no root, browser, node or network.
* ``python -m pytest -m deploy`` (after ``pip install -e ".[deploy]"``) runs the deployment
  checks: the modules that set ``pytestmark = pytest.mark.deploy`` (the browser, the hub, Binder,
  the offline namespace, the determinism rerun, the declared lower bounds). They are deselected
  whenever the ``-m`` expression does not name ``deploy``, so a run such as ``-m lesson05`` leaves
  them out too; ``-m "deploy and lesson05"`` runs lesson 05's. A deploy module imports at its top
  only what the ``test`` extra installs (the contributor's run collects it before deselecting it).

Per-lesson markers, ``lesson00`` ... ``lesson11`` (``-m lesson05``: lesson 05's claims, widgets,
notebook and exercise tests), given here so that test modules need no marks of their own:

* by module: ``test_lesson_NN_*`` is lesson NN's; ``LESSON_OF_MODULE`` maps the other lesson
  modules (a widget module to the lesson that shows its widgets). A module may also mark itself.
* by parameter: a test whose parameter names a lesson or exercise notebook (``"05_roofline"``,
  ``exercises/05_roofline.ipynb``) or an exercise question (``"ex05.q2"``) is that lesson's.

The notebook runs (tests/notebook_runner.py), one session-wide batch each, made only when a
selected test asks for them and only of the notebooks the selected tests read (``pytest
tests/test_lessons.py -k 07`` runs lesson 07 alone; ``-m lesson07`` runs lesson 07's notebook and
exercise once each):

* contributor's tier: ``lesson_runs``, every lesson once as an nbval pass (``pytest --nbval-lax``,
  one test item per code cell; ``PYTHONHASHSEED=1``), read by tests/test_lessons.py and the
  tests that check what a lesson printed; ``exercise_runs``, every exercise notebook twice with
  nbclient, as shipped and with the checker's solutions filled into its answer cells
  (tests/test_exercises.py).
* deploy tier: ``offline_lesson_runs`` and ``offline_exercise_runs``, the same runs inside a
  network namespace (tests/test_offline.py); ``second_lesson_runs``, every lesson once more the
  same nbval way, outside the namespace with ``PYTHONHASHSEED=2`` (tests/test_determinism.py
  compares it with the offline run); ``course_build``, ``python publish/build.py`` once: every
  notebook run and measured, then the book, the slides, the graded versions and the JupyterLite
  site (tests/test_hub_memory.py, test_book.py, test_slides.py, test_grading.py, test_lite.py).
"""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path

import nbformat
import pytest

from tests.notebook_runner import EXERCISES, LESSONS, ROOT, Batch, Job, load, run_batch, tags

# -- the deploy tier --------------------------------------------------------------------------

DEPLOY = "deploy"
_DESELECTED = pytest.StashKey[int]()


def names_deploy(markexpr: str) -> bool:
    """Whether a ``-m`` expression names the deploy marker (``deploy``, ``not deploy``,
    ``deploy and lesson05``): only then are the deploy tests left to the expression."""
    return re.search(rf"\b{DEPLOY}\b", markexpr) is not None


# -- the lesson markers -----------------------------------------------------------------------

#: Test modules that belong to one or more lessons but do not say so in their name. Widget tests
#: shared by every lesson (drawing conventions, the quiz) are in SHARED_WIDGET_MODULES instead;
#: tests/test_tiers.py checks that every tests/test_widgets_*.py is in one or the other.
LESSON_OF_MODULE: dict[str, tuple[str, ...]] = {
    "test_widgets_start": ("00",),
    "test_widgets_why_matmul": ("01",),
    "test_widgets_simd": ("02",),
    "test_widgets_systolic": ("03",),
    "test_widgets_shapes": ("04",),
    "test_widgets_roofline": ("05",),
    "test_widgets_energy_price": ("06",),
    "test_widgets_training": ("07",),
    "test_widgets_layouts": ("07",),
    "test_widgets_inference": ("08",),
    "test_widgets_flexibility": ("09",),
    "test_widgets_decision_lab": ("10",),
    "test_widgets_at_scale": ("11",),
    "test_ex01_ex05": ("01", "05"),  # the checkers of exercises 01 and 05
}
SHARED_WIDGET_MODULES = {"test_widgets_axes", "test_widgets_base", "test_widgets_render",
                         "test_widgets_quiz"}
_NUMBERED_MODULE = re.compile(r"test_lesson_(\d\d)_")
_QUESTION = re.compile(r"ex(\d\d)\.q\d+")
_NOTEBOOK_STEMS = {p.stem for p in LESSONS + EXERCISES}


def lessons_of(item: pytest.Item) -> set[str]:
    """The lesson numbers (``"05"``) whose marker ``item`` gets."""
    found: set[str] = set()
    module = getattr(item, "module", None)
    if module is not None:
        name = module.__name__.rsplit(".", 1)[-1]
        numbered = _NUMBERED_MODULE.match(name)
        if numbered:
            found.add(numbered.group(1))
        found.update(LESSON_OF_MODULE.get(name, ()))
    callspec = getattr(item, "callspec", None)
    for value in (callspec.params.values() if callspec else ()):
        if isinstance(value, (str, os.PathLike)):
            stem = Path(value).stem
            if stem in _NOTEBOOK_STEMS:
                found.add(stem[:2])
            elif isinstance(value, str) and _QUESTION.fullmatch(value):
                found.add(value[2:4])
    return found


@pytest.hookimpl(tryfirst=True)  # before pytest's own -m deselection reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for number in sorted(lessons_of(item)):
            item.add_marker(f"lesson{number}")
    deploy = [item for item in items if item.get_closest_marker(DEPLOY)]
    config.stash[_DESELECTED] = 0
    if deploy and not names_deploy(config.getoption("markexpr") or ""):
        items[:] = [item for item in items if not item.get_closest_marker(DEPLOY)]
        config.hook.pytest_deselected(items=deploy)
        config.stash[_DESELECTED] = len(deploy)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    left_out = config.stash.get(_DESELECTED, 0)
    if left_out:
        terminalreporter.write_line(
            f"{left_out} deployment checks deselected: `python -m pytest -m deploy` runs them "
            f"(after pip install -e \".[deploy]\"; see tests/conftest.py)")


# -- the notebook runs ------------------------------------------------------------------------

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


def _lesson_batch(request, tmp_path_factory, fixture: str, hash_seed: str, offline: bool) -> Batch:
    jobs = [Job(p.stem, p, p.parent, hash_seed=hash_seed, runner="nbval")
            for p in _wanted(request, fixture, "lesson", LESSONS)]
    return run_batch(jobs, tmp_path_factory.mktemp(fixture), offline=offline)


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


def _exercise_batch(request, tmp_path_factory, fixture: str, offline: bool) -> Batch:
    solved = tmp_path_factory.mktemp(f"{fixture}-solved")
    jobs = []
    for path in _wanted(request, fixture, "path", EXERCISES):
        jobs.append(Job(f"{path.stem}-shipped", path, path.parent))
        jobs.append(Job(f"{path.stem}-solved", solved_copy(path, solved / path.name), path.parent))
    return run_batch(jobs, tmp_path_factory.mktemp(fixture), offline=offline)


@pytest.fixture(scope="session")
def lesson_runs(request, tmp_path_factory) -> Batch:
    return _lesson_batch(request, tmp_path_factory, "lesson_runs", "1", offline=False)


@pytest.fixture(scope="session")
def exercise_runs(request, tmp_path_factory) -> Batch:
    return _exercise_batch(request, tmp_path_factory, "exercise_runs", offline=False)


@pytest.fixture(scope="session")
def offline_lesson_runs(request, tmp_path_factory) -> Batch:
    return _lesson_batch(request, tmp_path_factory, "offline_lesson_runs", "1", offline=True)


@pytest.fixture(scope="session")
def offline_exercise_runs(request, tmp_path_factory) -> Batch:
    return _exercise_batch(request, tmp_path_factory, "offline_exercise_runs", offline=True)


@pytest.fixture(scope="session")
def second_lesson_runs(request, tmp_path_factory) -> Batch:
    return _lesson_batch(request, tmp_path_factory, "second_lesson_runs", "2", offline=False)


@pytest.fixture(scope="session")
def course_build(tmp_path_factory):
    """``python publish/build.py`` (the one command an instructor runs), once per session: (its
    output folder, its report.json). A failed step is reported by the tests that read it."""
    import json
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("course")
    done = subprocess.run([sys.executable, "publish/build.py", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    report = out / "report.json"
    assert report.exists(), f"publish/build.py wrote no report ({done.returncode}):\n{done.stderr[-4000:]}"
    return out, json.loads(report.read_text(encoding="utf-8"))


def built_step(course_build, step: str):
    """The output folder of one step of :func:`course_build`, failing with its error if it failed."""
    out, report = course_build
    done = report["steps"][step]
    assert done["ok"], f"publish/build.py's {step} step failed: {done['error']}\n{done['traceback']}"
    return out, done
