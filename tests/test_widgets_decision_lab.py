"""Lesson 10's decision lab, driven without a kernel."""

from __future__ import annotations

import pytest

from accelkit import scenarios
from accelkit.widgets import decision_explorer, decision_quiz


def test_lab_shows_the_library_comparison_for_the_knobs():
    w = decision_explorer()
    assert w.view.result == scenarios.compare("chatbot", n_chips=None, batch=4,
                                              precision="bf16", latency_ms=50.0,
                                              price_source="list")
    w.controls["batch"].value = 1
    rows = w.view.result
    assert all(r.batch == 1 for r in rows)
    h100 = next(r for r in rows if "H100" in r.chip)
    assert f"{h100.latency_seconds * 1e3:,.1f}" in w.html.value


def test_changing_scenario_loads_its_knobs_with_one_render():
    w = decision_explorer()
    before = w.renders
    w.controls["scenario"].value = "pretrain"
    assert w.renders == before + 1
    assert w.controls["n_chips"].value == 4096 and w.controls["mfu"].value == 0.4
    assert w.view.result == scenarios.compare("pretrain", n_chips=4096, precision="bf16",
                                              mfu=0.4, price_source="list")
    w.controls["mfu"].value = 0.2
    doubled = {r.chip: r.days for r in w.view.result}
    w.controls["mfu"].value = 0.4
    assert all(doubled[r.chip] == pytest.approx(2 * r.days, rel=0.01) for r in w.view.result)


def test_chart_metric_and_precision_without_support():
    w = decision_explorer("pretrain")
    w.controls["metric"].value = "time (days)"
    shown = w.view.extras["metric"]
    assert shown["H100"] == pytest.approx(next(r.days for r in w.view.result
                                               if "H100" in r.chip))
    w.controls["precision"].value = "fp8"  # v5e and A100 have no fp8 peak
    assert "no published dense fp8" in w.html.value
    assert any(isinstance(r, scenarios.Unavailable) for r in w.view.result)


def test_recording_a_choice_keeps_it_in_memory():
    lab = scenarios.DecisionLab()
    w = decision_explorer("offline", lab=lab)
    w.choice.value = "v6e"
    w.reason.value = ""
    assert "reason" in w.record() and not lab.decisions
    w.reason.value = "lowest cost per million tokens at full batch"
    w.record()
    (d,) = lab.decisions
    assert d.chip == "TPU v6e (Trillium)" and d.outcome is not None
    assert d.outcome.scenario == "offline"
    assert "TPU v6e (Trillium)" in w.summary.value and "no choice yet" in w.summary.value


def test_decision_quiz():
    q = decision_quiz()
    q.select(q.position(0))  # the option written first: peak FLOP/s
    assert not q.check()[0]
    q.select(q.correct)
    assert q.check()[0]


def test_worked_problem_reveals_replicas_and_daily_cost():
    from accelkit.widgets import decision_worked_problem

    w = decision_worked_problem()
    assert not w.revealed
    text = w.reveal()
    o = scenarios.evaluate("chatbot", "H100")
    assert f"${o.usd_per_million * 2e9 / 1e6:,.0f} per day" in text
    per_replica = scenarios.get("chatbot").work / o.seconds
    replicas = -(-2e9 / 86_400 // per_replica)
    assert f"<b>{int(replicas)} replicas</b>" in text


def test_knobs_a_scenario_ignores_are_greyed_out():
    """scenarios.evaluate uses MFU only to train, the latency target only to serve, and no
    serving batch to train; the lab greys out what the chosen scenario ignores."""
    lab = decision_explorer("chatbot")
    controls = lab.controls
    assert controls["mfu"].disabled and not controls["latency_ms"].disabled
    assert not controls["batch"].disabled
    renders = lab.renders
    controls["scenario"].value = "pretrain"
    assert lab.renders == renders + 1  # loading a scenario's knobs renders once
    assert not controls["mfu"].disabled and controls["latency_ms"].disabled
    assert controls["batch"].disabled
