"""The course works behind a workshop firewall: lessons and exercises pass with no network.

How, and why this way: this deploy check runs every lesson once (as the contributor's
tests/test_lessons.py does, an nbval pass) and every exercise notebook twice (as shipped and
solved, as tests/test_exercises.py does) inside a new network namespace made with ``unshare
--net`` (conftest's ``offline_lesson_runs`` and ``offline_exercise_runs``; see
tests/notebook_runner.py): its only interface is loopback, brought up because Jupyter kernels
talk to their client over 127.0.0.1, and there is no route anywhere else, so any attempt to reach
the internet fails at once instead of hanging or quietly succeeding. That is the kernel's own
guarantee, not a monkey-patched socket module (which code in a kernel subprocess or a C extension
could bypass). Before the notebooks run, the same process in the same namespace proves the
premise: an outbound TCP connection fails, a DNS lookup fails, and a loopback connection works.
(The unit tests are not rerun offline: they are not what a learner runs, and every library
module a notebook uses is imported and exercised by the notebooks there.) The offline lesson run
is also the first of tests/test_determinism.py's two runs.

``unshare -n`` needs root (CI runs as root). Outside CI, a machine where it is not permitted skips
this test with the reason; under CI (``CI=true``) that is a failure.
"""

from __future__ import annotations

import os

import pytest

from tests.notebook_runner import EXERCISES, LESSONS, Batch, nbval_failures

pytestmark = pytest.mark.deploy


def _require_offline(batch: Batch) -> None:
    if batch.offline:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"the notebooks did not run offline: {batch.not_offline_because}")
    pytest.skip(f"the notebooks did not run offline: {batch.not_offline_because}")


def _check(batch: Batch, expected: set[str]) -> None:
    _require_offline(batch)
    assert "outbound refused" in batch.premise and "DNS refused" in batch.premise \
        and "loopback ok" in batch.premise, batch.premise
    assert set(batch.notebooks) == expected and expected
    assert not batch.errors, f"failed offline: {sorted(batch.errors)}\n" + "\n".join(
        batch.errors.values())[:4000]
    print(f"offline: {len(batch.notebooks)} notebooks passed; {batch.premise.strip()}")


def test_lessons_pass_with_the_network_unreachable(offline_lesson_runs):
    _check(offline_lesson_runs, {p.stem for p in LESSONS})
    failed = {name: nbval_failures(notebook) for name, notebook in offline_lesson_runs.notebooks.items()}
    assert not any(failed.values()), failed


def test_exercises_pass_with_the_network_unreachable(offline_exercise_runs):
    _check(offline_exercise_runs, {f"{p.stem}-{how}" for p in EXERCISES for how in ("shipped", "solved")})
