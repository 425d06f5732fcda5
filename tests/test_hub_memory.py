"""The hub's recorded kernel memory is today's: the deploy tier measures again and compares.

docs/hub/measured_memory.json sizes the hub (config.yaml's guarantee and limit, the sizing table
in docs/hub/README.md; tests/test_hub_recipe.py checks both against it). A lesson that grows
(lesson 07 went from 103 to 166 MiB) would leave the hub under-reserved while every contributor
test still passed, so this deploy check re-takes the measurement (``publish/build.py``'s notebook
run: benchmarks/kernel_memory.py, every lesson and exercise in a fresh kernel, and a JupyterLab
server with the image's extensions) and fails when a recorded figure is stale, by
benchmarks/kernel_memory.py's tolerance (10% and at least 8 MiB; its ``stale`` says why).
"""

from __future__ import annotations

import copy
import json
import sys

import pytest
import yaml

from tests.conftest import built_step
from tests.notebook_runner import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import kernel_memory  # noqa: E402

pytestmark = pytest.mark.deploy
RECORDED = ROOT / "docs" / "hub" / "measured_memory.json"


@pytest.fixture(scope="module")
def measured(course_build):
    out, _ = built_step(course_build, "run")
    return json.loads((out / "measured_memory.json").read_text(encoding="utf-8"))


def test_the_recorded_memory_is_current(measured):
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    problems = kernel_memory.stale(recorded, measured)
    print("re-measured kernel peaks (MiB):",
          {r["notebook"]: r["kernel_peak_mb"] for r in measured["notebooks"]},
          "server", measured["server_peak_mb"])
    assert not problems, ("docs/hub/measured_memory.json is stale: run python "
                          "benchmarks/kernel_memory.py, then python docs/hub/make_sizing.py:\n"
                          + "\n".join(problems))


def test_the_guarantee_still_holds_a_lesson_and_its_exercise_at_their_peaks(measured):
    single = yaml.safe_load((ROOT / "docs" / "hub" / "config.yaml").read_text(encoding="utf-8"))["singleuser"]
    guarantee_mib = float(single["memory"]["guarantee"].removesuffix("Mi"))
    lessons = max(r["kernel_peak_mb"] for r in measured["notebooks"] if r["notebook"].startswith("lessons/"))
    exercises = max(r["kernel_peak_mb"] for r in measured["notebooks"] if r["notebook"].startswith("exercises/"))
    assert measured["server_peak_mb"] + lessons + exercises <= guarantee_mib


def test_the_staleness_check_catches_the_drift_the_issue_found(measured):
    # The record as it was before this measurement: lesson 07 at 103 MiB (it peaks at 166 now).
    old = copy.deepcopy(measured)
    for row in old["notebooks"]:
        if row["notebook"] == "lessons/07_training.ipynb":
            assert row["kernel_peak_mb"] > 103 * 1.1 + 1, row  # the drift is real today
            row["kernel_peak_mb"] = 103
    problems = kernel_memory.stale(old, measured)
    assert any("07_training" in p for p in problems), problems
    assert kernel_memory.stale(measured, measured) == []
    # Noise of a few MiB is not staleness.
    jitter = copy.deepcopy(measured)
    for row in jitter["notebooks"]:
        row["kernel_peak_mb"] += 3
    assert kernel_memory.stale(jitter, measured) == []
