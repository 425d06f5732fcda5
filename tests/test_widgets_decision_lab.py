"""Lesson 10's decision lab, driven without a kernel."""

from __future__ import annotations

import pytest

from accelkit import chips, decisions, scenarios
from accelkit.widgets import decision_explorer, decision_quiz


def test_lab_shows_the_library_comparison_for_the_knobs():
    w = decision_explorer()
    assert w.view.result == scenarios.compare("chatbot", n_chips=None, precision="bf16",
                                              latency_ms=50.0, users=1000, prompt_tokens=1000,
                                              output_tokens=250, price_source="list")
    w.controls["users"].value = 3000
    rows = w.view.result
    assert rows == scenarios.compare("chatbot", users=3000)
    h100 = next(r for r in rows if "H100" in r.chip)
    assert f"{h100.tpot_p99_seconds * 1e3:,.1f}" in w.html.value
    assert f"{h100.plan.usd_per_hour:,.0f}" in w.html.value


def test_changing_scenario_loads_its_knobs_with_one_render():
    w = decision_explorer()
    before = w.renders
    w.controls["scenario"].value = "pretrain"
    assert w.renders == before + 1
    assert w.controls["n_chips"].value == 4096 and w.controls["mfu"].value == "modelled"
    assert w.controls["compute_efficiency"].value == scenarios.PREDICTED
    assert w.view.result == scenarios.compare("pretrain", n_chips=4096, precision="bf16",
                                              compute_efficiency="predicted",
                                              price_source="list")
    w.controls["mfu"].value = 0.2
    doubled = {r.chip: r.days for r in w.view.result}
    w.controls["mfu"].value = 0.4
    assert all(doubled[r.chip] == pytest.approx(2 * r.days, rel=0.01) for r in w.view.result)


def test_training_table_shows_each_chips_layout_mfu_and_memory():
    """The per-chip MFU is on screen, with its basis: predicted by the engines (the default),
    from kernels at an assumed fraction of peak, or assumed outright."""
    import re

    w = decision_explorer("finetune")
    text = w.html.value
    head = w.view.extras["head"]
    rows = [dict(zip(head, re.findall(r"<td [^>]*>(.*?)</td>", row)))
            for row in re.findall(r"<tr>(.*?)</tr>", text)[1:]]
    for r, cells in zip(w.view.result, rows):
        assert r.mfu_basis.startswith("predicted from the engines")
        assert cells["MFU (basis)"] == f"{r.utilization:.1%} (predicted)"
        assert cells["kernels % of peak"] == f"{100 * r.kernel_efficiency:.0f}"
        assert r.layout in text and f"{r.memory_bytes_per_chip / 1e9:,.1f}" in text
    assert "assumed" not in text and "MFU predicted from the engines, per chip" in text
    w.controls["mfu"].value = 0.3
    assert "30.0% (assumed)" in w.html.value and "(predicted)" not in w.html.value
    w.controls["mfu"].value = "modelled"
    w.controls["compute_efficiency"].value = 1.0
    assert w.view.result == scenarios.compare("finetune", n_chips=8, precision="bf16",
                                              compute_efficiency=1.0, price_source="list")
    assert "(kernels assumed)" in w.html.value and "(predicted)" not in w.html.value
    assert "an assumed 100% of peak" in w.html.value


def test_table_columns_line_up():
    """Every row has the header's cell count; numbers are right-aligned in a fixed-width font."""
    import re

    for key in scenarios.SCENARIOS:
        w = decision_explorer(key)
        text = w.html.value
        assert "monospace" in text
        head = w.view.extras["head"]
        rows = re.findall(r"<tr>(.*?)</tr>", text)
        assert len(rows) == 1 + len(w.view.result)
        assert all(len(re.findall(r"<t[dh] ", row)) == len(head) for row in rows)
        assert "text-align:right" in rows[1]
    # a chip that cannot take the knobs spans the rest of its row
    w = decision_explorer("chatbot")
    w.controls["n_chips"].value = 16
    rows = re.findall(r"<tr>(.*?)</tr>", w.html.value)
    spans = [row for row in rows if "colspan" in row]
    assert len(spans) == 4 and "scale-up domain" in spans[0]
    head = w.view.extras["head"]
    for row in spans:
        assert 1 + int(re.search(r"colspan='(\d+)'", row).group(1)) == len(head)


def test_chatbot_table_shows_the_slo_plan_not_days():
    """A chatbot buyer reads the SLO plan (replicas, $/h, $ per million tokens) and the p99s,
    the library's; never days, and no "largest batch that fits"."""
    import re

    w = decision_explorer("chatbot")
    head = w.view.extras["head"]
    assert head[1:7] == ["plan: replicas × chips", "fleet chips", "fleet USD/h",
                         "USD/M tokens", "TTFT p99 (ms)", "TPOT p99 (ms)"]
    assert "days" not in head and "USD" not in head and "batch" not in head
    o = scenarios.evaluate("chatbot", "H100")
    plan = o.plan
    rows = [re.findall(r"<td [^>]*>(.*?)</td>", row)
            for row in re.findall(r"<tr>(.*?)</tr>", w.html.value)[1:]]
    cells = dict(zip(head, next(r for r in rows if r[0] == "H100")))
    assert cells["plan: replicas × chips"] == f"{plan.replicas:,} × {plan.chips_per_replica}"
    assert cells["fleet USD/h"] == f"{plan.usd_per_hour:,.0f}"
    assert cells["USD/M tokens"] == f"{plan.usd_per_million_tokens:,.2f}"
    assert cells["TTFT p99 (ms)"] == f"{o.ttft_p99_seconds * 1e3:,.0f}"
    assert cells["in flight / replica"] == f"{o.batch:,}"
    w.controls["latency_ms"].value = 20  # a tighter limit changes the plan, from the library
    tight = scenarios.evaluate("chatbot", "H100", latency_ms=20.0)
    h100 = next(r for r in w.view.result if "H100" in r.chip)
    assert h100.plan == tight.plan
    # a bulk job shows its throughput and cost, no days either
    offline = decision_explorer("offline").view.extras["head"]
    assert "days" not in offline and "tokens/s / replica" in offline


def test_chart_metric_and_precision_without_support():
    w = decision_explorer("pretrain")
    w.controls["metric"].value = "time (days)"
    shown = w.view.extras["metric"]
    assert shown["H100"] == pytest.approx(next(r.days for r in w.view.result
                                               if "H100" in r.chip))
    w.controls["precision"].value = "fp8"  # v5e and A100 have no fp8 peak
    assert "no published dense fp8" in w.html.value
    assert any(isinstance(r, scenarios.Unavailable) for r in w.view.result)


def test_recording_a_choice_needs_a_reason_citing_the_table():
    lab = decisions.DecisionLab()
    w = decision_explorer("offline", lab=lab)
    w.choice.value = "v6e"
    w.reason.value = ""
    assert "reason" in w.record() and not lab.decisions
    w.reason.value = "lowest cost per million tokens at full batch"
    assert "cite a number" in w.record() and not lab.decisions
    v6e = next(r for r in w.view.result if "v6e" in r.chip)
    w.reason.value = f"lowest cost: ${v6e.usd_per_million:,.2f} per million tokens"
    w.record()
    (d,) = lab.decisions
    assert d.chip == "TPU v6e (Trillium)" and d.outcome == v6e
    assert d.outcome.scenario == "offline" and d.cited_column == "USD / M"
    assert "TPU v6e (Trillium)" in w.summary.value and "no choice yet" in w.summary.value


def test_save_and_load_buttons_round_trip(tmp_path):
    w = decision_explorer("offline")
    v6e = next(r for r in w.view.result if "v6e" in r.chip)
    w.choice.value = "v6e"
    w.reason.value = f"{v6e.tokens_per_second_per_replica:,.0f} tokens a second"
    w.record()
    w.path.value = str(tmp_path / "mine.json")
    assert "Saved 1 choices" in w.save()
    other = decision_explorer("chatbot")
    other.path.value = w.path.value
    assert "Loaded 1 choices" in other.load()
    assert other.lab.decisions == w.lab.decisions
    (tmp_path / "bad.json").write_text('{"format": "pickle"}')
    other.path.value = str(tmp_path / "bad.json")
    assert "not a decision file" in other.load()
    other.path.value = str(tmp_path / "missing.json")
    assert "⚠" in other.load()


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
    assert f"<b>{o.plan.replicas} replicas of {o.plan.chips_per_replica} chips</b>" in text
    assert f"<b>${o.plan.usd_per_hour:,.0f}/h</b>" in text
    assert f"${o.plan.usd_per_hour * 24:,.0f} a day" in text
    more = scenarios.evaluate("chatbot", "H100", users=2000)
    assert f"At 2,000 users: {more.plan.replicas} replicas" in text


def test_knobs_a_scenario_ignores_are_greyed_out():
    """scenarios.evaluate uses MFU only to train, the latency target only to serve, and no
    serving batch to train; the lab greys out what the chosen scenario ignores."""
    lab = decision_explorer("chatbot")
    controls = lab.controls
    assert controls["mfu"].disabled and not controls["latency_ms"].disabled
    assert controls["compute_efficiency"].disabled
    assert controls["batch"].disabled   # continuous batching sets the batch
    assert not controls["users"].disabled and not controls["prompt_tokens"].disabled
    renders = lab.renders
    controls["scenario"].value = "pretrain"
    assert lab.renders == renders + 1  # loading a scenario's knobs renders once
    assert not controls["mfu"].disabled and controls["latency_ms"].disabled
    assert controls["batch"].disabled and controls["users"].disabled
    controls["scenario"].value = "offline"
    assert controls["users"].disabled and controls["latency_ms"].disabled
    assert not controls["output_tokens"].disabled
    controls["scenario"].value = "recommender"
    assert not controls["batch"].disabled


def test_chart_sent_as_svg_shows_the_metric_of_every_chip():
    # the bars are the library's numbers for the chosen metric; the picture sent carries the
    # chips' names, the metric's name and the y tick labels as text
    import re

    from accelkit.widgets.decision_lab import METRICS

    w = decision_explorer()
    figure = w.view.figure
    ax = figure.axes[0]
    for metric, latency in (("fleet cost (USD/h)", 50), ("cost per million (USD)", 20)):
        w.controls["metric"].value = metric
        w.controls["latency_ms"].value = latency
        svg = bytes(w.image.value).decode("utf-8")
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
        assert metric in texts and "H100" in texts and "v5e" in texts
        drawn = {chip: (r, METRICS[metric](r)) for r in w.view.result
                 if isinstance(r, scenarios.Outcome) for chip in [r.chip]}
        heights = [b.get_height() for b in ax.patches]
        assert max(heights) > 0
        for bar, chip in zip(ax.patches, scenarios.DEFAULT_CHIPS):
            hit = drawn.get(chips.get(chip).name)
            value = None if hit is None else hit[1]
            assert bar.get_height() == (0.0 if value is None else value)
        # a patch per bar in the picture sent, besides the figure's and axes' backgrounds and
        # the four spines
        assert len(re.findall(r'<g id="patch_\d+">', svg)) == len(ax.patches) + 2 + 4


def test_y_tick_labels_are_matplotlibs_and_the_metric_name_clears_them():
    # the y ticks are drawn as texts (widgets/_axes.Ticks): the labels matplotlib's own axis
    # would draw, at the same heights; the metric's name, placed once, clears the widest
    from matplotlib.text import Text
    from matplotlib.ticker import FuncFormatter

    from accelkit.widgets import _base
    from accelkit.widgets.decision_lab import _compact

    w = decision_explorer()
    figure = w.view.figure
    ax = figure.axes[0]
    for scenario, metric in (("chatbot", "cost (USD)"), ("recommender", "cost per million (USD)"),
                             ("pretrain", "time (days)")):
        w.controls["scenario"].value = scenario
        w.controls["metric"].value = metric
        reference = _base.new_figure(6.6, 2.7, margins={"top": 0.95, "left": 0.11})
        rax = reference.add_subplot()
        rax.bar(range(len(ax.patches)), [b.get_height() for b in ax.patches])
        rax.set_ylim(ax.get_ylim())
        rax.yaxis.set_major_formatter(FuncFormatter(_compact))
        reference.draw_without_rendering()
        low, high = ax.get_ylim()
        theirs = [(t.label1.get_window_extent().y0, t.label1.get_text())
                  for t in rax.yaxis.get_major_ticks() if low <= t.get_loc() <= high]
        figure.draw_without_rendering()
        shown = {text for _, text in theirs}
        drawn = [t for t in figure.artists if isinstance(t, Text) and t.get_visible()]
        ours = [(t.get_window_extent().y0, t.get_text()) for t in drawn if t.get_text() in shown]
        assert [t for _, t in sorted(ours)] == [t for _, t in sorted(theirs)] and len(ours) >= 3
        for (mine, _), (their, _) in zip(sorted(ours), sorted(theirs)):
            assert mine == pytest.approx(their, abs=0.5)
        label = ax.yaxis.label.get_window_extent()
        assert ax.get_ylabel() == metric and label.x0 >= 0
        assert all(label.x1 < t.get_window_extent().x0 for t in drawn if t.get_text() in shown)


def test_tick_labels_stay_narrow_at_both_ends_of_the_scale() -> None:
    # Wide tick labels (0.000125, 30000) push the y axis title out of the figure.
    from accelkit.widgets.decision_lab import _compact

    assert [_compact(x) for x in (0.000125, 0.0025, 0.05, 0.0, 1.5, 30000.0, 2.5e9)] == \
        ["125µ", "2.5m", "0.05", "0", "1.5", "30k", "2.5G"]
