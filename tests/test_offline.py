"""The course works behind a workshop firewall: lessons and exercises pass with no network.

How, and why this way: the suite's one run of every lesson and its two runs of every exercise
notebook (tests/conftest.py) happen inside a new network namespace made with ``unshare --net``
(tests/notebook_runner.py): its only interface is loopback, brought up because Jupyter kernels
talk to their client over 127.0.0.1, and there is no route anywhere else, so any attempt to reach
the internet fails at once instead of hanging or quietly succeeding. That is the kernel's own
guarantee, not a monkey-patched socket module (which code in a kernel subprocess or a C extension
could bypass). Before the notebooks run, the same process in the same namespace proves the
premise: an outbound TCP connection fails, a DNS lookup fails, and a loopback connection works.
This module re-executes nothing: it checks that those runs were offline and passed. (The unit
tests are no longer rerun offline: they are not what a learner runs, and every library module a
notebook uses is imported and exercised by the notebooks there.)

``unshare -n`` needs root (CI runs as root). Outside CI, a machine where it is not permitted skips
this test with the reason (the notebooks then ran with the network); under CI (``CI=true``) that
is a failure.
"""

from __future__ import annotations

import os

import pytest

from tests.notebook_runner import EXERCISES, LESSONS, Batch


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


def test_lessons_pass_with_the_network_unreachable(lesson_runs):
    _check(lesson_runs, {p.stem for p in LESSONS})


def test_exercises_pass_with_the_network_unreachable(exercise_runs):
    _check(exercise_runs, {f"{p.stem}-{how}" for p in EXERCISES for how in ("shipped", "solved")})
