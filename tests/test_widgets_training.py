"""Lesson 07's widgets, driven without a kernel: what they show is training.estimate's answer."""

import pytest

import accelkit as ak
from accelkit.widgets import (communication_explorer, published_runs, training_planner,
                              training_quiz, training_worked_problem)
from accelkit.training import PUBLISHED_RUNS


def test_planner_shows_the_library_estimate_and_follows_controls():
    w = training_planner()
    default = w.view.result
    assert default == ak.training.estimate(model="llama-3-70b", tokens=1.5e13, chip="TPU v5p",
                                           n_chips=8960, mfu=0.4, batch_tokens=4e6)
    assert f"{default.days:,.1f}" in w.html.value and "no published power" in w.html.value
    w.controls["mfu"].value = 0.2
    assert w.view.result.compute_seconds == pytest.approx(2 * default.compute_seconds)
    w.controls["chip"].value = ak.chips.get("H100").name
    w.controls["n_chips"].value = 16384
    est = w.view.result
    assert est == ak.training.estimate(model="llama-3-70b", tokens=1.5e13, chip="H100",
                                       n_chips=16384, mfu=0.2, batch_tokens=4e6)
    assert est.communication_bound and "NVLink+scale-out" in w.html.value
    assert f"{est.joules / 3.6e9:,.0f} MWh" in w.html.value
    # switching the network changes what is shown: NVLink everywhere is faster, a flat ring
    # through each GPU's NIC about 8x slower
    w.controls["network"].value = "catalog"
    assert w.view.result.communication_seconds < est.communication_seconds
    assert "450 GB/s" in w.html.value
    w.controls["network"].value = "flat_ring"
    assert w.view.result.communication_seconds > 5 * est.communication_seconds
    assert "50 GB/s" in w.html.value


def test_planner_reports_a_refusal_instead_of_a_traceback():
    w = training_planner()
    w.controls["chip"].value = ak.chips.get("TPU v2").name   # no published ICI link figure
    assert w.view.result is None and "interconnect" in w.html.value


def test_communication_explorer_tpu_pod_stays_compute_bound_longer():
    w = communication_explorer()
    first = w.view.result.first_communication_bound
    tpu, ib, nvlink = first.values()
    # the v5p pod turns communication-bound only at 16,384 chips (244 tokens per chip against
    # its critical 340), H100s beyond the node at 4,096 (977 against 1,004)
    assert ib is not None and (tpu is None or tpu > ib) and (nvlink is None or nvlink > ib)
    ratio = w.view.result.ratios["TPU v5p (ICI pod)"][8960]
    est = ak.training.estimate(model="llama-3-70b", tokens=4e6, chip="v5p", n_chips=8960, mfu=0.4,
                               batch_tokens=4e6)
    assert ratio == pytest.approx(est.allreduce_seconds_per_step / est.backward_seconds_per_step)
    w.controls["batch"].value = 64e6       # more tokens per chip hides the all-reduce
    later = w.view.result.first_communication_bound["H100 (NVLink 8, then IB)"]
    assert later is None or later > ib


def test_published_runs_put_the_estimate_beside_the_reported_figure():
    w = published_runs()
    for index, run in enumerate(PUBLISHED_RUNS):
        w.controls["run"].value = index
        shown = w.view.result
        est = ak.training.estimate(model=run.model, tokens=run.tokens, chip=run.chip,
                                   n_chips=run.n_chips, mfu=run.mfu)
        assert shown.estimate == est and shown.ratio == pytest.approx(shown.reported / shown.ours)
        assert f"{shown.ratio:.2f}" in w.view.figure.axes[0].get_title()


def test_quiz_and_worked_problem():
    q = training_quiz()
    q.select(0)
    assert not q.check()[0]
    q.select(q.correct)
    assert q.check()[0]
    p = training_worked_problem()
    text = p.reveal()
    est = ak.training.estimate(model="llama-3-8b", tokens=15e12, chip="H100", n_chips=1024, mfu=0.4)
    assert f"{est.days:,.1f} days" in text and f"${est.usd:,.0f}" in text
