"""Lesson 07's training widgets, driven without a kernel: what they show is the library's answer
(training.estimate for a run's cost, accelkit.parallel for the gradient all-reduce)."""

import pytest

import accelkit as ak
from accelkit import parallel
from accelkit.widgets import (communication_explorer, published_runs, training_planner,
                              training_quiz, training_worked_problem)
from validation.totals import PUBLISHED_RUNS, compare_published


def test_planner_shows_the_library_estimate_and_every_control_changes_it():
    w = training_planner()
    default = w.view.result
    assert default == ak.training.estimate(model="llama-3-70b", tokens=1.5e13, chip="TPU v5p",
                                           n_chips=8960, mfu=0.4)
    assert f"{default.days:,.1f}" in w.html.value and "no published power" in w.html.value
    w.controls["mfu"].value = 0.2          # "halve the MFU and watch the days double"
    assert w.view.result.compute_seconds == pytest.approx(2 * default.compute_seconds)
    assert f"{w.view.result.days:,.1f}" in w.html.value
    w.controls["chip"].value = ak.chips.get("H100").name
    w.controls["n_chips"].value = 16384
    w.controls["model"].value = "llama-3.1-405b"
    est = w.view.result
    assert est == ak.training.estimate(model="llama-3.1-405b", tokens=1.5e13, chip="H100",
                                       n_chips=16384, mfu=0.2)
    assert f"{est.joules / 3.6e9:,.0f} MWh" in w.html.value
    assert "network" not in w.controls     # the toggle that changed nothing on screen is gone


def test_communication_explorer_shows_parallel_dp_ratios():
    w = communication_explorer()
    counts = [8, 16, 64, 256, 1024, 4096, 8960, 16384]
    ratios = w.view.result.ratios
    tpu_name, gpu_name = list(ratios)
    assert ratios[tpu_name] == parallel.dp_communication_ratios("llama-3-70b", "v5p", counts,
                                                                batch_tokens=4e6)
    first = w.view.result.first_communication_bound
    assert first[gpu_name] == 4096 and first[tpu_name] == 8960
    assert "4,096 chips" in w.html.value
    w.controls["batch"].value = 16e6       # more tokens per chip hides the all-reduce
    first = w.view.result.first_communication_bound
    assert first[tpu_name] is None and first[gpu_name] > 4096
    assert "never, up to 16,384" in w.html.value


def test_published_runs_put_the_estimate_beside_the_reported_figure():
    w = published_runs([compare_published(r) for r in PUBLISHED_RUNS])
    assert w.controls["run"].value == 1  # Llama 3.1 405B first, as before
    for index, run in enumerate(PUBLISHED_RUNS):
        w.controls["run"].value = index
        shown = w.view.result
        est = ak.training.estimate(model=run.model, tokens=run.tokens, chip=run.chip,
                                   n_chips=run.n_chips, mfu=run.mfu)
        assert shown.estimate == est and shown.ratio == pytest.approx(shown.reported / shown.ours)
        assert f"{shown.ratio:.2f}" in w.view.figure.axes[0].get_title()
    with pytest.raises(ValueError, match="comparisons"):
        published_runs([])  # the widget holds no runs of its own


def test_quiz_and_worked_problem():
    q = training_quiz()
    q.select(q.position(0))
    assert not q.check()[0]
    q.select(q.correct)
    assert q.check()[0]
    p = training_worked_problem()
    text = p.reveal()
    est = ak.training.estimate(model="llama-3-8b", tokens=15e12, chip="H100", n_chips=1024, mfu=0.4)
    assert f"{est.days:,.1f} days" in text and f"${est.usd:,.0f}" in text


def test_planner_shows_the_best_measured_matmul_beside_the_peak_and_flags_an_mfu_above_it():
    """Issue 21 item 1: wherever a peak is shown, the achievable figure beside it; an MFU above
    the chip's best measured matmul share of peak is flagged as out of reach."""
    import accelkit as ak
    from accelkit.widgets import training_planner

    w = training_planner()
    w.controls["chip"].value = ak.chips.get("H100").name
    h100 = ak.chips.get("H100")
    pair = (f"{h100.peak_flops('bf16') / 1e12:,.0f} / {h100.achievable_flops('bf16') / 1e12:,.0f} "
            f"TFLOP/s ({h100.achievable_fraction('achievable_flops:bf16'):.0%})")
    assert pair in w.view.text and "out of reach" not in w.view.text
    w.controls["mfu"].value = 0.8  # just below the H100's measured 80.3% of peak
    assert "out of reach" not in w.view.text
    w.controls["chip"].value = ak.chips.get("B200").name  # measured 77.6%
    assert "out of reach" in w.view.text
    w.controls["chip"].value = ak.chips.get("TPU v5p").name
    assert "assumed)" in w.view.text
