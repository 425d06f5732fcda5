"""Decision scenarios: each Outcome is the cost models' own answer, recombined openly."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import accelkit as ak
from accelkit import scenarios as sc


def test_every_scenario_prices_every_default_chip():
    for key in sc.SCENARIOS:
        rows = sc.compare(key)
        assert [r.chip for r in rows] == [ak.chips.get(c).name for c in sc.DEFAULT_CHIPS]
        for r in rows:
            assert isinstance(r, sc.Outcome)
            assert r.seconds > 0 and 0 < r.utilization <= 1
            assert r.bound in ("compute", "memory", "communication")


def test_training_outcome_is_the_training_estimate():
    o = sc.evaluate("pretrain", "TPU v5p", n_chips=8960, mfu=0.4)
    t = ak.training.estimate(model="llama-3-70b", tokens=15e12, chip="TPU v5p", n_chips=8960,
                             mfu=0.4, batch_tokens=16e6)
    assert o.seconds == pytest.approx(t.seconds)
    assert o.usd == pytest.approx(t.usd)
    # the scaling book's LLaMA-3-70B example: about 44 days (applied-training.md)
    assert o.days == pytest.approx(44, rel=0.05)


def test_finetune_runs_multiply_time_and_cost():
    one = ak.training.estimate(model="llama-3-8b", tokens=1e9, chip="H100", n_chips=8, mfu=0.3,
                               batch_tokens=1e6)
    o = sc.evaluate("finetune", "H100")
    assert o.seconds == pytest.approx(50 * one.seconds)
    assert o.usd == pytest.approx(50 * one.usd)
    assert o.joules == pytest.approx(700 * 8 * o.seconds)


def test_serving_outcome_matches_a_closed_form_on_published_figures():
    """The chatbot on 8 H100s, worked by hand from published figures, not from the library.

    Llama-3-70B: 70.6e9 parameters, 80 layers, 8 KV heads of dimension 128, d_model 8192,
    vocabulary 128,256 (meta-llama/Meta-Llama-3-70B config.json and model card). H100 SXM:
    3.35 TB/s HBM, 989 TFLOP/s dense bf16 (NVIDIA H100 Tensor Core GPU datasheet).
    A decode step is memory-bound: it reads every weight but the input embedding table (only
    the looked-up rows) plus the bf16 KV cache, 2·80·8·128·2 = 327,680 bytes per token, at the
    mean context 1,000 + 250/2. Prefill is compute-bound: at least 2 FLOPs per weight per
    prompt token, less the two vocabulary-sized matrices (the embedding is a lookup; logits
    are computed for each sequence's last token only). Tensor parallelism over the 8 GPUs adds
    two all-reduces per layer of tokens x 8192 bf16 activations, each a ring over NVLink:
    2 (7/8) V / 450 GB/s of bytes plus NCCL's ring latency, 3.6 us + 14 steps x 0.47 us
    (NVIDIA/nccl src/graph/tuning.cc; H100 NVLink 450 GB/s each way, scaling-book gpus.md).
    """
    s = sc.SCENARIOS["chatbot"]
    o = sc.evaluate("chatbot", "H100", n_chips=8)
    params, vocab_rows = 70.6e9, 128_256 * 8192
    bandwidth, peak = 8 * 3.35e12, 8 * 989e12

    def all_reduces(tokens):  # 2 per layer x 80 layers
        return 160 * (3.6e-6 + 14 * 0.47e-6 + 2 * 7 / 8 * tokens * 8192 * 2 / 450e9)
    context = 1000 + 250 // 2
    decode = (2 * (params - vocab_rows) + 4 * context * 327_680) / bandwidth    # 5.25 ms
    decode += all_reduces(4)                                                   # + 1.7 ms
    prefill = 2 * (params - 2 * vocab_rows) * 4 * 1000 / peak                  # 69 ms
    prefill += all_reduces(4 * 1000)                                           # + 42 ms
    assert o.latency_seconds == pytest.approx(decode, rel=0.02)
    # the compute floor; attention and unfused elementwise work add up to 10% on top
    assert prefill <= o.first_token_seconds <= 1.1 * prefill
    seconds = 1e9 / (4 * 250) * (prefill + 250 * decode)                        # about 21 days
    assert o.seconds == pytest.approx(seconds, rel=0.02)
    # $10.80 per H100-hour, the catalog's Google Cloud list price
    assert o.usd_per_million == pytest.approx(10.8 * 8 * seconds / 3600 / 1e9 * 1e6, rel=0.02)
    assert o.meets_latency is True  # 5.25 ms is well under the 50 ms target


def test_offline_batch_zero_means_largest_that_fits():
    s = sc.SCENARIOS["offline"]
    o = sc.evaluate("offline", "H200")
    assert o.batch == ak.inference.max_batch(s.model, "H200", o.n_chips,
                                             s.prompt_tokens + s.output_tokens) and o.fits


def test_replica_chips_is_the_smallest_power_of_two_that_holds_the_weights():
    weights = ak.models.get("llama-3-70b").weight_bytes("bf16")
    for chip in ak.chips.all():
        n = sc.replica_chips("llama-3-70b", chip, headroom=1.5)
        assert n & (n - 1) == 0
        assert n * chip.hbm_bytes >= 1.5 * weights
        assert n == 1 or (n // 2) * chip.hbm_bytes < 1.5 * weights


def test_recommender_tables_set_the_chip_count():
    m = ak.models.get("dlrm")
    o = sc.evaluate("recommender", "TPU v5e")
    assert o.memory_bytes == pytest.approx(m.params * (4 + 4))
    assert o.fits and o.hbm_bytes >= o.memory_bytes
    small = sc.evaluate("recommender", "TPU v5e", n_chips=2)
    assert not small.fits and "does not fit" in small.note


def test_lowest_price_is_never_dearer():
    for key in sc.SCENARIOS:
        for chip in sc.DEFAULT_CHIPS:
            a = sc.evaluate(key, chip)
            b = sc.evaluate(key, chip, price_source="lowest")
            assert b.usd <= a.usd
    h = sc.evaluate("offline", "H100", price_source="lowest")
    assert h.usd_per_hour == 3.99  # Lambda on-demand, sourced in accelkit/data/chips.json


def test_chip_without_power_has_no_energy_and_without_price_no_cost():
    assert sc.evaluate("chatbot", "TPU v5e").joules is None
    o = sc.evaluate("chatbot", "TPU7x")
    assert o.usd is None and o.usd_per_million is None


def test_compare_marks_a_missing_precision_unavailable():
    rows = sc.compare("pretrain", ["TPU v5e", "H100"], precision="fp8")
    assert isinstance(rows[0], sc.Unavailable) and "fp8" in rows[0].reason
    assert isinstance(rows[1], sc.Outcome)


@pytest.mark.parametrize("kwargs", [dict(n_chips=0), dict(mfu=0.0), dict(mfu=1.5),
                                    dict(precision="fp3"), dict(latency_ms=-1),
                                    dict(price_source="spot"), dict(batch=-1)])
def test_bad_knobs_are_refused_by_name(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        sc.evaluate("chatbot", "H100", **kwargs)


def test_unknown_scenario_and_chip():
    with pytest.raises(ValueError, match="scenario"):
        sc.evaluate("mining", "H100")
    with pytest.raises(ValueError):
        sc.evaluate("chatbot", "H1000")


def test_decision_lab_records_in_memory_and_summarises():
    lab = sc.DecisionLab()
    assert "no choice yet" in lab.summary()
    lab.record("chatbot", "H100", "lowest latency", sc.evaluate("chatbot", "H100"))
    lab.record("chatbot", "B200", "cheaper and faster")  # replaces
    lab.record("pretrain", "v5p", "pods of thousands of chips")
    assert [d.scenario for d in lab.decisions] == ["pretrain", "chatbot"]
    text = lab.summary()
    assert "NVIDIA B200 (HGX) because cheaper and faster" in text and "H100" not in text
    with pytest.raises(ValueError, match="reason"):
        lab.record("chatbot", "H100", "   ")
    with pytest.raises(TypeError, match="reason"):
        lab.record("chatbot", "H100", 3)


@settings(max_examples=25, deadline=None)
@given(key=st.sampled_from(list(sc.SCENARIOS)), chip=st.sampled_from(sc.DEFAULT_CHIPS),
       n=st.sampled_from([1, 2, 8, 64]))
def test_more_chips_never_slower_for_serving_and_cost_is_consistent(key, chip, n):
    s, the_chip = sc.SCENARIOS[key], ak.chips.get(chip)
    domain = (the_chip.scaleup_domain_chips if the_chip.kind == "gpu"
              else the_chip.max_slice_chips) or 1
    if s.kind == "serve" and n > 1 and (n > domain or the_chip.scaleup_bytes_per_second is None
                                        and the_chip.kind == "gpu"):
        with pytest.raises(ValueError, match=f"n_chips={n}"):  # TP stops at the domain
            sc.evaluate(key, chip, n_chips=n)
        return
    o = sc.evaluate(key, chip, n_chips=n)
    assert math.isfinite(o.seconds) and o.seconds > 0
    assert o.usd == pytest.approx(o.usd_per_hour * o.n_chips * o.seconds / 3600)
    if s.kind == "serve" and 2 * n <= domain:
        # More chips share the roofline work; their all-reduces may cost more than that saves
        # at small batch, so "never slower" holds for the step less its communication.
        context = s.prompt_tokens + s.output_tokens // 2
        one, two = (ak.inference.decode_step(s.model, chip, k, o.batch, context,
                                             weight_dtype=s.precision) for k in (n, 2 * n))
        assert o.latency_seconds == pytest.approx(one.seconds)
        assert two.seconds - two.communication_seconds < one.seconds - one.communication_seconds


def test_a_scenario_with_an_unknown_kind_is_refused_when_built():
    base = sc.SCENARIOS["chatbot"]
    with pytest.raises(ValueError, match=r"kind must be one of \['train', 'serve', 'recommender'\]"):
        dataclasses.replace(base, kind="Serve")
    with pytest.raises(ValueError, match="precision"):
        dataclasses.replace(base, precision="fp3")


def test_unavailable_is_decided_by_the_error_type_not_its_wording():
    # A missing figure is a MissingFigureError (still a ValueError); a bad knob is a plain one.
    with pytest.raises(ak.chips.MissingFigureError) as missing:
        sc.evaluate("pretrain", "TPU v5e", precision="fp8")
    assert isinstance(missing.value, ValueError) and missing.value.figure == "peak_flops:fp8"
    with pytest.raises(ValueError) as bad:
        sc.compare("pretrain", ["H100"], mfu=2.0)
    assert not isinstance(bad.value, ak.chips.MissingFigureError)


def test_serving_cache_follows_the_one_precision_rule():
    # int8 weights: the cache defaults to bf16 in the scenario exactly as in decode_step.
    s = sc.SCENARIOS["chatbot"]
    o = sc.evaluate("chatbot", "H100", n_chips=8, precision="int8")
    dec = ak.inference.decode_step(s.model, "H100", 8, s.batch,
                                   s.prompt_tokens + s.output_tokens // 2, weight_dtype="int8")
    assert dec.kv_dtype == "bf16" and o.latency_seconds == dec.seconds
# -- which knobs a scenario uses -------------------------------------------------------------------

def test_knobs_for_each_kind_of_job():
    assert sc.knobs_for("pretrain") == ("n_chips", "precision", "mfu", "price_source")
    assert sc.knobs_for("chatbot") == ("n_chips", "batch", "precision", "latency_ms", "price_source")
    assert sc.knobs_for("offline") == ("n_chips", "batch", "precision", "price_source")
    assert sc.knobs_for("recommender") == ("n_chips", "batch", "precision", "price_source")
    for key in sc.SCENARIOS:
        assert set(sc.knobs_for(key)) <= set(sc.KNOBS)


def test_knobs_a_kind_does_not_use_do_not_change_its_outcome():
    """What KNOBS_BY_KIND leaves out, evaluate ignores: moving it leaves the Outcome as it was."""
    moves = {"mfu": 0.1, "batch": 2, "latency_ms": 5.0}
    for key in ("pretrain", "finetune", "chatbot", "offline", "recommender"):
        used = sc.KNOBS_BY_KIND[sc.get(key).kind]
        base = sc.evaluate(key, "H100")
        for knob, value in moves.items():
            if knob not in used:
                assert sc.evaluate(key, "H100", **{knob: value}) == base, (key, knob)
            else:
                assert sc.evaluate(key, "H100", **{knob: value}) != base, (key, knob)


def test_a_latency_knob_would_add_a_target_the_offline_scenario_does_not_set():
    """Why knobs_for leaves latency_ms out for offline serving: passing it imposes a target."""
    assert sc.get("offline").latency_ms is None
    assert sc.evaluate("offline", "H100").meets_latency is None
    assert sc.evaluate("offline", "H100", latency_ms=5.0).meets_latency is False


def test_select_knobs_keeps_what_the_scenario_uses():
    values = {"n_chips": 16, "batch": 8, "precision": "fp8", "mfu": 0.5, "latency_ms": 20.0,
              "price_source": "lowest"}
    assert sc.select_knobs("pretrain", values) == {"n_chips": 16, "precision": "fp8", "mfu": 0.5,
                                                   "price_source": "lowest"}
    assert sc.select_knobs("chatbot", {"mfu": 0.5, "batch": 2}) == {"batch": 2}
    with pytest.raises(ValueError, match="knob"):
        sc.select_knobs("chatbot", {"tokens": 1})
    with pytest.raises(TypeError, match="values"):
        sc.select_knobs("chatbot", [("batch", 2)])
    with pytest.raises(ValueError, match="scenario"):
        sc.knobs_for("serve-fast")
