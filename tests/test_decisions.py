"""The decision lab's records: reasons that cite the table, and a JSON file that survives
versions (tests/data/decisions_v1.json was written by the version-1 library, before the outcome
split into one type per kind of job; version 3 replaced the serving outcome with a simulated
one, so older serving choices are refused by name, the rest still load)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelkit import decisions, scenarios as sc

V1_FILE = Path(__file__).resolve().parent / "data" / "decisions_v1.json"


def test_decision_lab_records_in_memory_and_summarises():
    lab = decisions.DecisionLab()
    assert "no choice yet" in lab.summary()
    h100 = sc.evaluate("chatbot", "H100")
    lab.record("chatbot", "H100", f"lowest latency, {h100.tpot_p99_seconds * 1e3:.1f} ms", h100)
    b200 = sc.evaluate("chatbot", "B200")
    lab.record("chatbot", "B200", f"cheaper: ${b200.usd_per_million:.2f} per million")  # replaces
    v5p = sc.evaluate("pretrain", "v5p")
    lab.record("pretrain", "v5p", f"pods of thousands of chips: {v5p.n_chips:,} chips")
    assert [d.scenario for d in lab.decisions] == ["pretrain", "chatbot"]
    text = lab.summary()
    assert "NVIDIA B200 (HGX)" in text and "because cheaper" in text and "H100" not in text
    assert f"${b200.usd_per_million:,.2f}/M tokens" in text and "days" not in text.split("\n")[2]
    assert lab.decisions[1].cited_column == "USD / M"
    with pytest.raises(ValueError, match="reason"):
        lab.record("chatbot", "H100", "   ")
    with pytest.raises(TypeError, match="reason"):
        lab.record("chatbot", "H100", 3)


def test_a_reason_must_cite_a_number_from_the_table():
    lab = decisions.DecisionLab()
    o = sc.evaluate("offline", "TPU v6e")
    with pytest.raises(ValueError, match="cite a number"):
        lab.record("offline", "TPU v6e", "it is the cheapest", o)
    with pytest.raises(ValueError, match="cite a number"):   # a number, but not the table's
        lab.record("offline", "TPU v6e", "it is 3 times cheaper", o)
    d = lab.record("offline", "TPU v6e", f"${o.usd:,.0f} for the job", o)
    assert d.cited_column == "USD"
    # a figure of another row of the table counts when the table is given
    h100 = sc.evaluate("offline", "H100")
    rows = sc.compare("offline")
    d = lab.record("offline", "TPU v6e", f"the H100 makes "
                   f"{h100.tokens_per_second_per_replica:,.0f} tokens a second", o, table=rows)
    assert d.cited_column == "tokens/s / replica"
    # a service's days are set by demand, not by the chip: not a figure of the table
    assert "days" not in decisions.table_figures(o)
    # rounded as the table shows it: utilization to one decimal, as a percentage
    d = lab.record("offline", "TPU v6e", f"{100 * o.utilization:.1f}% of peak", o)
    assert d.cited_column == "utilization %"
    with pytest.raises(ValueError, match="outcome is for"):
        lab.record("offline", "H100", f"${o.usd:,.0f}", o)


def test_cited_figure_reads_numbers_as_written():
    o = sc.evaluate("pretrain", "H100")
    assert decisions.cited_figure(f"{o.days:,.2f} days", [o])[1] == "days"
    assert decisions.cited_figure(f"${o.usd:,.0f}", [o])[1] == "USD"
    assert decisions.cited_figure(f"{o.n_chips:,} chips", [o])[1] == "chips"
    assert decisions.cited_figure("version 2 of the plan", [o]) is None
    figures = decisions.table_figures(o)
    assert figures["weights GB"] == pytest.approx(o.weight_bytes_per_chip / 1e9)
    with pytest.raises(TypeError, match="outcome"):
        decisions.table_figures("H100")


def _lab_with_choices() -> decisions.DecisionLab:
    lab = decisions.DecisionLab()
    for key, chip in (("pretrain", "TPU v6e"), ("chatbot", "H100"), ("recommender", "v5e")):
        o = sc.evaluate(key, chip)
        lab.record(key, chip, f"{o.n_chips} chips and {100 * o.utilization:.1f}% of peak", o)
    return lab


def test_decisions_round_trip_through_a_json_file(tmp_path):
    lab = _lab_with_choices()
    path = lab.save(tmp_path / "decisions.json")
    text = (tmp_path / "decisions.json").read_text()
    data = __import__("json").loads(text)  # plain JSON, no pickles
    assert data["format"] == "accelkit.decision_lab" and len(data["decisions"]) == 3
    back = decisions.DecisionLab.load(path)
    assert back.decisions == lab.decisions
    assert back.summary() == lab.summary()


@pytest.mark.parametrize("mangle, match", [
    (lambda d: "not json {", "not a decision file"),
    (lambda d: [1, 2], "format"),
    (lambda d: {**d, "format": "pickle"}, "format"),
    (lambda d: {**d, "version": 4}, "version"),
    (lambda d: {**d, "version": True}, "version"),
    (lambda d: {**d, "decisions": {}}, "decisions must be a list"),
    (lambda d: {**d, "decisions": [{"scenario": "chatbot"}]}, "exactly"),
    (lambda d: {**d, "decisions": [{**d["decisions"][0], "scenario": "mining"}]}, "scenario"),
    (lambda d: {**d, "decisions": [{**d["decisions"][0], "chip": "H1000"}]}, "H1000"),
    (lambda d: {**d, "decisions": [{**d["decisions"][0], "reason": 7}]}, "reason"),
    (lambda d: {**d, "decisions": [{**d["decisions"][0], "reason": "no numbers"}]},
     "cite a number"),
    (lambda d: {**d, "decisions": [{**d["decisions"][0], "outcome": None}]}, "outcome"),
    (lambda d: {**d, "decisions": [{**d["decisions"][0], "outcome": {
        **d["decisions"][0]["outcome"], "seconds": "soon"}}]}, "seconds"),
    (lambda d: {**d, "decisions": [{**d["decisions"][0], "outcome": {
        **d["decisions"][0]["outcome"], "evil": 1}}]}, "unknown fields"),
    (lambda d: {**d, "decisions": [{**d["decisions"][0], "outcome": {
        k: v for k, v in d["decisions"][0]["outcome"].items() if k != "chip"}}]}, "lacks"),
])
def test_malformed_decision_files_are_refused(tmp_path, mangle, match):
    import json
    good = json.loads(_lab_with_choices().to_json())
    bad = mangle(good)
    text = bad if isinstance(bad, str) else json.dumps(bad)
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        decisions.DecisionLab.load(path)


def test_non_finite_numbers_and_huge_files_are_refused(tmp_path):
    text = _lab_with_choices().to_json().replace('"seconds": ', '"seconds": NaN, "x": ', 1)
    with pytest.raises(ValueError, match="NaN"):
        decisions.DecisionLab.from_json(text)
    with pytest.raises(TypeError, match="text"):
        decisions.DecisionLab.from_json(b"{}")
    big = tmp_path / "big.json"
    big.write_text(" " * 1_000_001)
    with pytest.raises(ValueError, match="bytes"):
        decisions.DecisionLab.load(big)


def test_chatbot_plan_survives_a_saved_lab() -> None:
    o = sc.evaluate("chatbot", "B200")
    lab = decisions.DecisionLab()
    decision = lab.record("chatbot", "B200", f"the fleet rents for ${o.plan.usd_per_hour:,.2f} "
                          "an hour", o)
    assert decision.cited_column == "fleet USD / h"
    back = decisions.DecisionLab.from_json(lab.to_json())
    again = next(d for d in back.decisions if d.scenario == "chatbot").outcome
    assert again == o


def test_the_chatbot_plan_is_a_citable_figure() -> None:
    o = sc.evaluate("chatbot", "H100")
    figures = decisions.table_figures(o)
    assert figures["plan replicas"] == o.plan.replicas
    assert figures["fleet USD / h"] == pytest.approx(o.plan.usd_per_hour)
    assert figures["USD / M"] == pytest.approx(o.plan.usd_per_million_tokens)
    assert figures["TTFT p99 (ms)"] == pytest.approx(o.ttft_p99_seconds * 1e3)
    assert figures["TPOT p99 (ms)"] == pytest.approx(o.tpot_p99_seconds * 1e3)
    assert "plan replicas" not in decisions.table_figures(sc.evaluate("offline", "H100")) or \
        sc.evaluate("offline", "H100").plan.replicas == 1
    rec = decisions.table_figures(sc.evaluate("recommender", "v6e"))
    assert rec["SparseCores"] == 2 and "TPOT p99 (ms)" not in rec and "kernels %" not in rec


def test_a_version_1_file_still_loads_its_training_and_recommender_choices() -> None:
    """A learner's file from before the split keeps its training and recommender choices,
    reasons and figures; its serving choices, priced by the static-batch model version 3
    replaced, are refused with a message that says so and names the entry."""
    raw = json.loads(V1_FILE.read_text())
    assert raw["version"] == 1 and len(raw["decisions"]) == 5
    with pytest.raises(ValueError, match=r"decisions\[2\] is a serving choice \('chatbot'\) "
                                         r"saved by decision file version 1.*record that"):
        decisions.DecisionLab.load(V1_FILE)
    kept = dict(raw, decisions=[d for d in raw["decisions"]
                                if sc.get(d["scenario"]).kind != "serve"])
    lab = decisions.DecisionLab.from_json(json.dumps(kept))
    assert [d.scenario for d in lab.decisions] == ["pretrain", "finetune", "recommender"]
    for d, saved in zip(lab.decisions, kept["decisions"]):
        flat = saved["outcome"]
        assert d.reason == saved["reason"] and d.chip == saved["chip"]
        assert type(d.outcome) is sc.OUTCOME_TYPES[sc.get(d.scenario).kind]
        for name in ("seconds", "usd", "utilization", "bound", "fits", "memory_bytes", "note"):
            assert getattr(d.outcome, name) == flat[name], (d.scenario, name)
    pretrain = lab.decisions[0].outcome
    assert pretrain.layout == raw["decisions"][0]["outcome"]["layout"]
    assert not hasattr(pretrain, "latency_seconds")
    # saved again, it is a version-3 file that reads back the same
    again = decisions.DecisionLab.from_json(lab.to_json())
    assert json.loads(lab.to_json())["version"] == decisions.FILE_VERSION == 3
    assert again.decisions == lab.decisions


def test_a_version_2_serving_choice_is_refused_by_name() -> None:
    lab = _lab_with_choices()
    data = json.loads(lab.to_json())
    data["version"] = 2
    with pytest.raises(ValueError, match=r"decisions\[1\] is a serving choice .*version 2"):
        decisions.DecisionLab.from_json(json.dumps(data))
    data["decisions"] = [d for d in data["decisions"] if d["scenario"] != "chatbot"]
    assert len(decisions.DecisionLab.from_json(json.dumps(data)).decisions) == 2


def _v1(mangle) -> str:
    data = json.loads(V1_FILE.read_text())
    mangle(data["decisions"][0]["outcome"])
    return json.dumps(data)


@pytest.mark.parametrize("mangle, match", [
    (lambda o: o.update(gather_unit="SMs"), r"sets \['gather_unit'\]"),
    (lambda o: o.update(latency_seconds=0.01), "latency_seconds"),
    (lambda o: o.update(evil=1), "unknown fields"),
    (lambda o: o.pop("seconds"), "lacks"),
    (lambda o: o.update(seconds="soon"), "seconds"),
    (lambda o: o.update(scenario="mining"), "scenario"),
])
def test_a_version_1_file_with_fields_that_cannot_belong_is_refused(mangle, match) -> None:
    with pytest.raises(ValueError, match=match):
        decisions.DecisionLab.from_json(_v1(mangle))


def test_a_version_3_outcome_names_its_kind_and_nests_its_plan() -> None:
    lab = _lab_with_choices()
    o = sc.evaluate("chatbot", "H100")
    lab.record("chatbot", "H100", f"{o.tpot_p99_seconds * 1e3:.1f} ms per token", o)
    data = json.loads(lab.to_json())
    kinds = [d["outcome"]["kind"] for d in data["decisions"]]
    assert kinds == ["train", "serve", "recommender"]
    plan = data["decisions"][1]["outcome"]["plan"]
    assert plan["n_chips"] == o.plan.n_chips and "plan_replicas" not in data["decisions"][1]["outcome"]
    for bad, match in ((dict(kind="mine"), "kind"), (dict(plan={"replicas": 1}), "plan lacks"),
                       (dict(kind="train"), "unknown fields")):
        mangled = json.loads(lab.to_json())
        mangled["decisions"][1]["outcome"].update(bad)
        with pytest.raises(ValueError, match=match):
            decisions.DecisionLab.from_json(json.dumps(mangled))


def test_an_outcome_of_another_kind_is_refused() -> None:
    lab = decisions.DecisionLab()
    o = sc.evaluate("offline", "H100")
    fake = sc.TrainingOutcome(**{f: getattr(o, f) for f in (
        "chip", "n_chips", "batch", "precision", "seconds", "usd", "usd_per_hour", "joules",
        "utilization", "bound", "fits", "usd_per_million", "memory_bytes", "hbm_bytes", "note")},
        scenario="offline", layout="", mfu_basis="", kernel_efficiency=None, step_seconds=None,
        weight_bytes_per_chip=None, gradient_bytes_per_chip=None, optimizer_bytes_per_chip=None,
        activation_bytes_per_chip=None)
    with pytest.raises(ValueError, match="ServingOutcome"):
        lab.record("offline", "H100", f"${o.usd:,.0f}", fake)
