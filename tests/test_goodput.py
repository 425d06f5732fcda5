"""accelkit.goodput: failures, checkpoints and restarts as a factor on training time.

Checked against Llama 3 (arXiv:2407.21783 §3.3.4: 466 interruptions in 54 days on up to 16,384
H100, 419 unexpected) and the first-order checkpoint model (Young 1974: the interval
sqrt(2 c M) maximises goodput)."""

from __future__ import annotations

import dataclasses

import pytest

from accelkit import goodput as G


def test_llama3_rate_and_job_mtbf() -> None:
    rate = G.llama3_failures_per_chip_hour()
    assert rate == pytest.approx(466 / (54 * 24 * 16384))
    assert G.llama3_failures_per_chip_hour(unexpected_only=True) == pytest.approx(
        419 / (54 * 24 * 16384))
    g = G.goodput(chips=16384, failures_per_chip_hour=rate, checkpoint_seconds=60,
                  restart_seconds=600)
    assert g.failures_per_day == pytest.approx(466 / 54)
    assert g.job_mtbf_seconds == pytest.approx(54 * 86400 / 466)
    with pytest.raises(TypeError, match="unexpected_only"):
        G.llama3_failures_per_chip_hour(1)  # type: ignore[arg-type]


def test_young_interval_maximises_goodput() -> None:
    kw = dict(chips=16384, failures_per_chip_hour=G.llama3_failures_per_chip_hour(),
              checkpoint_seconds=60.0, restart_seconds=600.0)
    best = G.goodput(**kw)
    assert best.checkpoint_interval_seconds == pytest.approx((2 * 60 * best.job_mtbf_seconds) ** 0.5)
    for factor in (0.5, 0.8, 1.25, 2.0):
        other = G.goodput(**kw, checkpoint_interval_seconds=best.checkpoint_interval_seconds * factor)
        assert other.goodput < best.goodput
    assert best.goodput == pytest.approx(
        1 / ((1 + best.checkpoint_overhead) * (1 + best.failure_overhead)))


def test_bigger_jobs_fail_more_often_and_spares_cost_chips() -> None:
    rate = G.llama3_failures_per_chip_hour()
    small = G.goodput(chips=1024, failures_per_chip_hour=rate, checkpoint_seconds=60,
                      restart_seconds=600)
    large = G.goodput(chips=16384, failures_per_chip_hour=rate, checkpoint_seconds=60,
                      restart_seconds=600)
    assert large.job_mtbf_seconds == pytest.approx(small.job_mtbf_seconds / 16)
    assert large.goodput < small.goodput
    spared = G.goodput(chips=16384, failures_per_chip_hour=rate, checkpoint_seconds=60,
                       restart_seconds=600,
                       spare_fraction=G.RECOVERY["gpu_hot_spares"].spare_fraction)
    assert spared.useful_fraction == pytest.approx(large.goodput * 16 / 18)
    assert G.RECOVERY["tpu_ocs_reroute"].spare_fraction == pytest.approx(14 / 144)
    assert all(r.source for r in G.RECOVERY.values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        large.goodput = 1.0  # type: ignore[misc]


def test_bad_input_is_refused() -> None:
    rate = G.llama3_failures_per_chip_hour()
    ok = dict(chips=16384, failures_per_chip_hour=rate, checkpoint_seconds=60.0,
              restart_seconds=600.0)
    for name, bad in (("chips", 0), ("failures_per_chip_hour", 0.0), ("checkpoint_seconds", -1.0),
                      ("restart_seconds", float("nan")), ("spare_fraction", 1.0)):
        with pytest.raises(ValueError, match=name):
            G.goodput(**{**ok, name: bad})
    with pytest.raises(TypeError, match="restart_seconds"):
        G.goodput(**{**ok, "restart_seconds": "10"})
    with pytest.raises(ValueError, match="too frequent"):
        G.goodput(**{**ok, "restart_seconds": 20000.0})
    with pytest.raises(ValueError, match="checkpoint_interval_seconds is needed"):
        G.goodput(**{**ok, "checkpoint_seconds": 0.0})
