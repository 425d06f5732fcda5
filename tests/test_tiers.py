"""The suite's tiers and per-lesson markers select what the README and tests/conftest.py say.

* ``-m lessonNN`` selects lesson NN's notebook run and (from lesson 01) its exercise runs, its
  claim tests and its widget tests; checked for every lesson on one collection (``--collect-only
  -m lesson05``, recorded by tests/selection_record.py), which also shows that ``-m`` really
  selects by those markers and that deploy checks stay out of a run whose ``-m`` does not name
  ``deploy``.
* The deploy checks are marked ``deploy`` and left out of this (the contributor's) run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest

from tests.conftest import LESSON_OF_MODULE, SHARED_WIDGET_MODULES, names_deploy
from tests.notebook_runner import EXERCISES, LESSONS, ROOT

#: The deployment checks the README lists (a new deploy module is welcome; these must stay).
DEPLOY_MODULES = {"test_browser", "test_hub", "test_binder", "test_binder_pins", "test_offline",
                  "test_determinism", "test_lower_bounds"}


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> list[dict]:
    """Every item of tests/ as ``-m lesson05`` collects it: nodeid, markers, selected or not."""
    record = tmp_path_factory.mktemp("selection") / "record.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "tests.selection_record", "-m", "lesson05", "tests"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "ACCELKIT_SELECTION_RECORD": str(record)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(record.read_text(encoding="utf-8"))


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")


def test_every_lesson_marker_selects_its_notebook_exercise_claims_and_widgets(collected):
    by_lesson = defaultdict(set)
    for item in collected:
        for marker in item["markers"]:
            if marker.startswith("lesson"):
                by_lesson[marker].add(item["nodeid"])
    assert set(by_lesson) == {f"lesson{p.name[:2]}" for p in LESSONS}
    exercises = {p.name[:2]: p for p in EXERCISES}
    for lesson in LESSONS:
        number, selected = lesson.name[:2], by_lesson[f"lesson{lesson.name[:2]}"]
        assert f"tests/test_lessons.py::test_lesson_runs_without_error[{lesson.stem}]" in selected
        if number in exercises:
            name = exercises[number].name
            for test in ("test_shipped_exercise_says_not_attempted_everywhere",
                         "test_exercise_with_solutions_filled_in_says_correct_everywhere"):
                assert f"tests/test_exercises.py::{test}[{name}]" in selected, (number, test)
        claims = {i["nodeid"] for i in collected if _module(i["nodeid"]) == f"test_lesson_{number}_claims"}
        assert claims <= selected, sorted(claims - selected)[:5]
        widgets = {i["nodeid"] for i in collected
                   if number in LESSON_OF_MODULE.get(_module(i["nodeid"]), ())}
        assert widgets <= selected, sorted(widgets - selected)[:5]
    assert all(by_lesson[f"lesson{p.name[:2]}"] for p in LESSONS)


def test_minus_m_lesson05_selects_exactly_lesson_05s_tests_less_the_deploy_checks(collected):
    selected = {i["nodeid"] for i in collected if i["selected"]}
    marked = {i["nodeid"] for i in collected if "lesson05" in i["markers"] and "deploy" not in i["markers"]}
    assert selected == marked and selected
    assert any("deploy" in i["markers"] and "lesson05" in i["markers"] for i in collected), \
        "a deploy check of lesson 05 (its determinism rerun) should exist, and stay deselected"


def test_the_deploy_checks_are_marked_and_left_out_of_this_run(collected, request):
    deploy = {_module(i["nodeid"]) for i in collected if "deploy" in i["markers"]}
    assert DEPLOY_MODULES <= deploy, DEPLOY_MODULES - deploy
    for item in collected:  # a deploy module is deploy throughout
        assert (_module(item["nodeid"]) in deploy) == ("deploy" in item["markers"]), item["nodeid"]
    if not names_deploy(request.config.getoption("markexpr") or ""):
        assert not any(item.get_closest_marker("deploy") for item in request.session.items)


def test_names_deploy_reads_the_marker_expression():
    assert names_deploy("deploy") and names_deploy("not deploy") and names_deploy("lesson05 and deploy")
    assert not names_deploy("") and not names_deploy("lesson05") and not names_deploy("deployment")


def test_every_widget_test_module_is_mapped_to_a_lesson_or_shared():
    modules = {p.stem for p in (ROOT / "tests").glob("test_widgets_*.py")}
    mapped = {name for name in LESSON_OF_MODULE if name.startswith("test_widgets_")}
    assert modules == mapped | SHARED_WIDGET_MODULES, (
        f"unmapped: {sorted(modules - mapped - SHARED_WIDGET_MODULES)}; "
        f"gone: {sorted((mapped | SHARED_WIDGET_MODULES) - modules)} (tests/conftest.py's LESSON_OF_MODULE)")
    assert all((ROOT / "tests" / f"{name}.py").exists() for name in LESSON_OF_MODULE)


def test_the_lesson_markers_are_registered_for_every_lesson(request):
    registered = {line.split(":", 1)[0] for line in request.config.getini("markers")}
    assert {f"lesson{p.name[:2]}" for p in LESSONS} | {"deploy"} <= registered
    assert {m for m in registered if m.startswith("lesson")} == {f"lesson{p.name[:2]}" for p in LESSONS}
