"""Decision scenarios: each Outcome is the cost models' own answer, recombined openly."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import accelkit as ak
from accelkit import kernels
from accelkit import scenarios as sc


def test_every_scenario_prices_every_default_chip():
    for key in sc.SCENARIOS:
        rows = sc.compare(key)
        assert [r.chip for r in rows] == [ak.chips.get(c).name for c in sc.DEFAULT_CHIPS]
        for r in rows:
            assert isinstance(r, sc.Outcome)
            assert r.seconds > 0 and 0 < r.utilization <= 1
            assert r.bound in ("compute", "memory", "communication")


def test_training_outcome_with_an_assumed_mfu_is_the_training_estimate():
    o = sc.evaluate("pretrain", "TPU v5p", n_chips=8960, mfu=0.4)
    t = ak.training.estimate(model="llama-3-70b", tokens=15e12, chip="TPU v5p", n_chips=8960,
                             mfu=0.4, batch_tokens=2**24)
    assert o.seconds == pytest.approx(t.seconds)
    assert o.usd == pytest.approx(t.usd)
    assert o.mfu_basis == "assumed"
    # the scaling book's LLaMA-3-70B example: about 44 days (applied-training.md)
    assert o.days == pytest.approx(44, rel=0.05)


def test_training_outcome_is_the_best_layouts_step_at_the_predicted_efficiency():
    """By default the MFU, layout, step and memory are parallel.best_layouts' own with each
    chip's kernel efficiency predicted by the engines (accelkit.mfu), and the basis says so."""
    assert sc.get("pretrain").compute_efficiency == sc.PREDICTED == "predicted"
    assert sc.PREDICTED != sc.COMPUTE_EFFICIENCY  # the old constant is an override only
    o = sc.evaluate("pretrain", "H100")
    (step,) = ak.parallel.best_layouts("llama-3-70b", "H100", 4096, 2**24, top=1,
                                       compute_efficiency="predicted")
    assert o.layout == str(step.layout) and o.utilization == pytest.approx(step.mfu)
    assert o.step_seconds == pytest.approx(step.seconds)
    assert o.seconds == pytest.approx(step.seconds * 15e12 / 2**24)
    assert o.memory_bytes_per_chip == pytest.approx(step.memory_bytes_per_chip)
    # the kernels the step was priced with (accelkit.kernels, issue 21), in executed FLOPs
    eff = kernels.microbatch("llama-3-70b", "H100", tp=step.layout.tp, ep=step.layout.ep,
                             microbatch_tokens=step.microbatch_tokens, seq_len=step.seq_len,
                             recompute=step.layout.recompute)
    executed = ak.parallel.hardware_flops_utilization(step) / step.mfu
    assert o.kernel_efficiency == pytest.approx(eff.efficiency * executed)
    assert o.mfu_basis.startswith("predicted from the engines (128x256 tensor-core tiles")
    assert "under the published 80% matmul ceiling" in o.mfu_basis
    assert o.kernel_efficiency < ak.chips.get("H100").achievable_fraction("achievable_flops:bf16")
    assert sc.evaluate("pretrain", "TPU v6e").mfu_basis.startswith(
        "predicted from the engines (256x256 systolic MXUs")
    # MFU differs from chip to chip once modelled (it was a flat 0.4 before)
    mfus = {r.chip: round(r.utilization, 3) for r in sc.compare("pretrain")}
    assert len(set(mfus.values())) > 3
    # and an assumed MFU is the same on every chip that is not communication-bound
    assert {round(r.utilization, 3) for r in sc.compare("pretrain", mfu=0.4)
            if r.bound == "compute"} == {0.4}


def test_predicted_kernels_are_no_faster_than_peak_and_bound_the_mfu():
    """The predicted kernels reach at most the peak, so each chip's step is no shorter than at
    compute_efficiency=1.0, and bubbles, exposed communication and recomputation only lower the
    MFU below the kernels' efficiency."""
    for pred, peak in zip(sc.compare("pretrain"), sc.compare("pretrain", compute_efficiency=1.0)):
        assert 0 < pred.kernel_efficiency <= 1.0 and peak.kernel_efficiency == 1.0
        assert pred.seconds >= peak.seconds * (1 - 1e-12)
        assert pred.utilization <= pred.kernel_efficiency * (1 + 1e-12)


def test_an_assumed_kernel_efficiency_and_an_assumed_mfu_stay_as_overrides():
    o = sc.evaluate("pretrain", "H100", compute_efficiency=sc.COMPUTE_EFFICIENCY)
    (step,) = ak.parallel.best_layouts("llama-3-70b", "H100", 4096, 2**24, top=1,
                                       compute_efficiency=0.6)
    assert o.utilization == pytest.approx(step.mfu) and o.layout == str(step.layout)
    assert o.kernel_efficiency == 0.6
    assert o.mfu_basis.startswith("layout model, kernels at an assumed 60% of peak")
    a = sc.evaluate("pretrain", "H100", mfu=0.4)
    assert a.mfu_basis == "assumed" and a.kernel_efficiency is None
    # a Scenario built with a number keeps it
    custom = dataclasses.replace(sc.get("finetune"), compute_efficiency=0.5)
    assert sc.evaluate(custom, "H100").kernel_efficiency == 0.5
    with pytest.raises(ValueError, match="compute_efficiency"):
        sc.evaluate("pretrain", "H100", compute_efficiency="best")
    with pytest.raises(ValueError, match="compute_efficiency"):
        sc.evaluate("pretrain", "H100", compute_efficiency=1.5)


def test_chips_the_engines_cannot_model_are_unavailable_not_guessed():
    """AMD GPUs (no sourced GEMM tiles) and TPU7x (unpublished MXU count): the predicted
    default refuses them by name; an assumed efficiency prices them."""
    rows = sc.compare("pretrain", ["TPU7x", "MI300X", "H100"])
    assert [type(r).__name__ for r in rows] == ["Unavailable", "Unavailable", "TrainingOutcome"]
    assert "MXU count" in rows[0].reason and "compute_efficiency=" in rows[1].reason
    with pytest.raises(sc.NotPredicted, match="compute_efficiency"):
        sc.evaluate("pretrain", "MI300X")
    o = sc.evaluate("pretrain", "MI300X", compute_efficiency=0.6)
    assert o.kernel_efficiency == 0.6 and o.mfu_basis.startswith("layout model")


def test_memory_breakdown_adds_up_and_holds_the_microbatch_not_the_batch():
    """weights + gradients + optimizer + activations = memory per chip; the activations are
    those of the micro-batch in flight (whole 8K sequences: two on both chips since fused
    attention keeps no scores), not of the 1M-token batch."""
    n = ak.models.get("llama-3-8b").params
    for chip in ("TPU v6e", "H100"):
        o = sc.evaluate("finetune", chip)
        parts = (o.weight_bytes_per_chip + o.gradient_bytes_per_chip
                 + o.optimizer_bytes_per_chip + o.activation_bytes_per_chip)
        assert parts == pytest.approx(o.memory_bytes_per_chip)
        step = sc.layout_step("finetune", chip)
        assert step.microbatch_tokens % 8192 == 0
        # all eight chips hold the data: fully sharded on the v6e; on the H100 the hidden FSDP
        # gathers' processor share (accelkit.calibration) tips it to dp4 fsdp2
        lay = step.layout
        assert lay.dp * lay.fsdp == 8 and lay.tp == lay.pp == 1
        fused = ak.frameworks.get(step.framework).attention == "fused"
        per_token = ak.parallel.activation_bytes_per_token_per_layer(
            "llama-3-8b", step.layout.recompute, tp=step.layout.tp, fused_attention=fused)
        assert o.activation_bytes_per_chip >= per_token * 32 * step.microbatch_tokens
        # the replica's whole share of the batch (131,072 tokens), stored without
        # recomputation, would need over ten times as much
        whole = ak.parallel.activation_bytes_per_token_per_layer("llama-3-8b", "none")
        assert o.activation_bytes_per_chip < whole * 32 * 2**20 / 8 / 10
        # Adam: 2 + 2 + 12 bytes per parameter; the gradients sharded over fsdp, the optimizer
        # state over all 8 chips (the default framework's distributed optimizer)
        assert ak.frameworks.get(step.framework).distributed_optimizer
        assert o.gradient_bytes_per_chip == pytest.approx(2 * n / lay.fsdp)
        assert o.optimizer_bytes_per_chip == pytest.approx(12 * n / 8)


def test_finetune_fits_a_v6e_slice_and_a_v5e_slice_needs_sixteen():
    assert sc.evaluate("finetune", "TPU v6e").fits
    small = sc.evaluate("finetune", "TPU v5e")
    assert not small.fits and "does not fit" in small.note
    assert small.memory_bytes_per_chip > small.hbm_bytes_per_chip
    assert sc.fitting_chips("finetune", "TPU v5e") == 16
    assert sc.evaluate("finetune", "TPU v5e", n_chips=16).fits


def test_finetune_runs_multiply_time_and_cost():
    step = sc.layout_step("finetune", "H100")
    o = sc.evaluate("finetune", "H100")
    assert o.seconds == pytest.approx(50 * step.seconds * 1e9 / 2**20)
    assert o.usd == pytest.approx(10.8 * 8 * o.seconds / 3600)
    assert o.joules == pytest.approx(700 * 8 * o.seconds)


def test_layout_step_is_cached_and_refuses_serving():
    a = sc.layout_step("pretrain", "TPU v5p")
    assert sc.layout_step("pretrain", "TPU v5p") is a
    with pytest.raises(ValueError, match="scenario"):
        sc.layout_step("chatbot", "H100")


def test_a_lone_request_matches_a_closed_form_on_published_figures():
    """One chatbot request alone on 8 H100s, worked by hand from published figures, not from
    the library: its first token is its prompt's prefill, its later tokens decode steps.

    Llama-3-70B: 70.6e9 parameters, 80 layers, 8 KV heads of dimension 128, d_model 8192,
    vocabulary 128,256 (meta-llama/Meta-Llama-3-70B config.json and model card). H100 SXM:
    3.35 TB/s HBM, 989 TFLOP/s dense bf16 (NVIDIA H100 Tensor Core GPU datasheet). Prefill is
    compute-bound: at least 2 FLOPs per weight per prompt token, less the two vocabulary-sized
    matrices (the embedding is a lookup; logits only for the last token). A decode step reads
    every weight but the embedding table, plus the bf16 KV cache, 2·80·8·128·2 = 327,680 bytes
    per token. Tensor parallelism adds two all-reduces per layer of tokens x 8192 bf16
    activations, each a ring over NVLink: 2 (7/8) V / 450 GB/s plus NCCL's ring latency,
    3.6 us + 14 steps x 0.47 us (NVIDIA/nccl src/graph/tuning.cc; scaling-book gpus.md).
    """
    params, vocab_rows = 70.6e9, 128_256 * 8192
    bandwidth, peak = 8 * 3.35e12, 8 * 989e12

    def all_reduces(tokens):  # 2 per layer x 80 layers
        return 160 * (3.6e-6 + 14 * 0.47e-6 + 2 * 7 / 8 * tokens * 8192 * 2 / 450e9)
    prefill = 2 * (params - 2 * vocab_rows) * 1000 / peak + all_reduces(1000)
    decode = (2 * (params - vocab_rows) + 1125 * 327_680) / bandwidth + all_reduces(1)
    r = ak.serving.simulate("llama-3-70b", "H100", n_chips=8, arrival_rate=1.0, requests=1,
                            prompt_tokens=1000, output_tokens=250)
    # the compute floor; attention and unfused elementwise work add up to 10% on top
    assert prefill <= r.ttft_seconds[0] <= 1.1 * prefill
    assert r.tpot_seconds[0] == pytest.approx(decode, rel=0.02)


def _replica_run(s, chip, n, rate):
    return ak.serving.simulate(s.model, chip, n_chips=n, arrival_rate=rate,
                               requests=ak.serving.lab.REQUESTS, prompt_tokens=s.prompt_tokens,
                               output_tokens=s.output_tokens, weight_dtype=s.precision,
                               compute_dtype="bf16")


def test_the_chatbot_is_sized_from_its_replicas_steady_state_and_simulation():
    """users / interval requests a second; at least the steady state's floor of replicas, the
    first whose replica, simulated at its share, meets both p99 limits (one fewer misses, or is
    below the floor); the table's percentiles are that simulation's; $/h and $/M are the
    fleet's."""
    s = sc.get("chatbot")
    rate = s.users / s.interval_seconds
    limits = dict(ttft_p99_seconds=s.ttft_ms / 1e3, tpot_p99_seconds=s.latency_ms / 1e3)
    for chip in ("TPU v5e", "H100", "B200"):
        o = sc.evaluate("chatbot", chip)
        state = ak.serving.steady_state(s.model, chip, n_chips=o.n_chips,
                                        prompt_tokens=s.prompt_tokens,
                                        output_tokens=s.output_tokens)
        floor, estimate = ak.serving.lab.fleet_bounds(state, rate, *limits.values())
        assert 1 <= floor <= estimate
        r = o.plan.replicas
        assert r >= floor
        run = _replica_run(s, chip, o.n_chips, rate / r)
        assert run.meets(**limits)
        if r > floor and "was not simulated" not in o.note:
            assert not _replica_run(s, chip, o.n_chips, rate / (r - 1)).meets(**limits)
        assert o.plan.n_chips == r * o.n_chips
        assert o.plan.rate_per_replica == pytest.approx(rate / r)
        assert (o.ttft_p99_seconds, o.tpot_p99_seconds) == (run.ttft_p99, run.tpot_p99)
        assert o.ttft_p99_seconds <= s.ttft_ms / 1e3 and o.tpot_p99_seconds <= s.latency_ms / 1e3
        assert o.meets_latency and o.feasible
        price = ak.chips.get(chip).usd_per_hour
        if price is not None:
            assert o.plan.usd_per_hour == pytest.approx(o.plan.n_chips * price)
            assert o.usd_per_million == pytest.approx(
                o.plan.usd_per_hour / (rate * s.output_tokens * 3600) * 1e6)
            assert o.usd == pytest.approx(s.work * o.usd_per_million / 1e6)
        # the group sizes tried: the two smallest that hold the weights and one request
        assert o.n_chips in ak.serving.lab.group_sizes(ak.models.get(s.model),
                                                      ak.chips.get(chip), "bf16", 1000, 250)


def test_the_fleet_grows_with_the_users_and_the_tighter_limit():
    small, big = sc.evaluate("chatbot", "H100", users=300), sc.evaluate("chatbot", "H100",
                                                                         users=3000)
    assert big.plan.n_chips > small.plan.n_chips
    loose, tight = (sc.evaluate("chatbot", "H100", latency_ms=ms) for ms in (100.0, 30.0))
    assert tight.plan.n_chips >= loose.plan.n_chips


def test_offline_is_one_replica_at_full_load():
    s = sc.SCENARIOS["offline"]
    o = sc.evaluate("offline", "H200")
    assert o.plan.replicas == 1 and o.arrival_rate is None and o.meets_latency is None
    # the batch it holds is what memory allows at the prompt's length, not the queue
    assert o.batch <= ak.inference.max_batch(s.model, "H200", o.n_chips,
                                             s.prompt_tokens, "bf16") and o.fits
    price = ak.chips.get("H200").usd_per_hour
    assert o.usd_per_million == pytest.approx(
        o.n_chips * price / (o.tokens_per_second_per_replica * 3600) * 1e6)
    assert o.seconds == pytest.approx(s.work / o.tokens_per_second_per_replica)


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


@settings(max_examples=25, deadline=None)
@given(key=st.sampled_from(list(sc.SCENARIOS)), chip=st.sampled_from(sc.DEFAULT_CHIPS),
       n=st.sampled_from([1, 2, 8, 64]))
def test_a_replica_past_the_domain_is_refused_and_cost_is_consistent(key, chip, n):
    s, the_chip = sc.SCENARIOS[key], ak.chips.get(chip)
    domain = (the_chip.scaleup_domain_chips if the_chip.kind == "gpu"
              else the_chip.max_slice_chips) or 1
    if s.kind == "serve" and n > 1 and (n > domain or the_chip.scaleup_bytes_per_second is None
                                        and the_chip.kind == "gpu"):
        with pytest.raises(ValueError, match=f"n_chips={n}"):  # TP stops at the domain
            sc.evaluate(key, chip, n_chips=n)
        return
    o = sc.evaluate(key, chip, n_chips=n)
    if s.kind == "serve":
        assert o.n_chips == n
        if o.plan is None:      # the weights or one request do not fit, or no fleet meets it
            assert not o.feasible
            return
        assert o.usd == pytest.approx(o.usd_per_hour * o.plan.n_chips * o.seconds / 3600)
        return
    assert math.isfinite(o.seconds) and o.seconds > 0
    assert o.usd == pytest.approx(o.usd_per_hour * o.n_chips * o.seconds / 3600)


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
    # int8 weights: the cache defaults to bf16 in the scenario exactly as in the simulation.
    o = sc.evaluate("chatbot", "H100", n_chips=8, precision="int8")
    run = _replica_run(dataclasses.replace(sc.get("chatbot"), precision="int8"), "H100", 8,
                       o.plan.rate_per_replica)
    assert o.ttft_p99_seconds == run.ttft_p99
    bf16 = ak.serving.simulate("llama-3-70b", "H100", n_chips=8, arrival_rate=1.0, requests=1,
                               prompt_tokens=1000, output_tokens=2, weight_dtype="int8",
                               kv_dtype="bf16")
    auto = ak.serving.simulate("llama-3-70b", "H100", n_chips=8, arrival_rate=1.0, requests=1,
                               prompt_tokens=1000, output_tokens=2, weight_dtype="int8")
    assert auto.kv_cache_tokens == bf16.kv_cache_tokens


# -- which knobs a scenario uses -------------------------------------------------------------------

def test_knobs_for_each_kind_of_job():
    assert sc.knobs_for("pretrain") == ("n_chips", "precision", "mfu", "compute_efficiency",
                                        "price_source")
    assert sc.knobs_for("chatbot") == ("n_chips", "precision", "latency_ms", "users",
                                       "prompt_tokens", "output_tokens", "price_source")
    assert sc.knobs_for("offline") == ("n_chips", "precision", "prompt_tokens", "output_tokens",
                                       "price_source")
    assert sc.knobs_for("recommender") == ("n_chips", "batch", "precision", "price_source")
    for key in sc.SCENARIOS:
        assert set(sc.knobs_for(key)) <= set(sc.KNOBS)


def test_knobs_a_kind_does_not_use_do_not_change_its_outcome():
    """What KNOBS_BY_KIND leaves out, evaluate ignores: moving it leaves the Outcome as it was."""
    moves = {"mfu": 0.1, "compute_efficiency": 0.3, "batch": 2, "latency_ms": 30.0,
             "users": 3000, "output_tokens": 100}
    for key in ("pretrain", "finetune", "chatbot", "offline", "recommender"):
        used = sc.knobs_for(key)
        base = sc.evaluate(key, "H100")
        for knob, value in moves.items():
            if knob not in used:
                assert sc.evaluate(key, "H100", **{knob: value}) == base, (key, knob)
            else:
                assert sc.evaluate(key, "H100", **{knob: value}) != base, (key, knob)


def test_a_bulk_job_stays_one_whatever_the_latency_and_users():
    """Why knobs_for leaves latency_ms and users out for offline serving: it has no limits."""
    assert sc.get("offline").latency_ms is None and sc.get("offline").users is None
    base = sc.evaluate("offline", "H100")
    assert base.meets_latency is None
    assert sc.evaluate("offline", "H100", latency_ms=5.0, users=10) == base


def test_select_knobs_keeps_what_the_scenario_uses():
    values = {"n_chips": 16, "batch": 8, "precision": "fp8", "mfu": 0.5, "latency_ms": 20.0,
              "price_source": "lowest", "compute_efficiency": 0.5}
    assert sc.select_knobs("pretrain", values) == {"n_chips": 16, "precision": "fp8", "mfu": 0.5,
                                                   "compute_efficiency": 0.5,
                                                   "price_source": "lowest"}
    assert sc.select_knobs("chatbot", {"mfu": 0.5, "batch": 2, "users": 5}) == {"users": 5}
    with pytest.raises(ValueError, match="knob"):
        sc.select_knobs("chatbot", {"tokens": 1})
    with pytest.raises(TypeError, match="values"):
        sc.select_knobs("chatbot", [("batch", 2)])
    with pytest.raises(ValueError, match="scenario"):
        sc.knobs_for("serve-fast")


def test_a_serving_replica_stops_at_the_scale_up_domain():
    """Tensor parallelism stops at the NVLink node / ICI slice: compare marks bigger replicas
    unavailable (by type, ReplicaTooLarge), and a replica's TP all-reduces are reported."""
    rows = {r.chip: r for r in sc.compare("chatbot", n_chips=16)}
    h100 = rows["NVIDIA H100 (SXM)"]
    assert isinstance(h100, sc.Unavailable) and "8-chip scale-up domain" in h100.reason
    assert isinstance(rows["TPU v5e"], sc.Outcome)
    with pytest.raises(sc.ReplicaTooLarge, match="n_chips=16"):
        sc.evaluate("chatbot", "H100", n_chips=16)
    o = sc.evaluate("chatbot", "H100", n_chips=8)
    s = sc.SCENARIOS["chatbot"]
    dec = ak.inference.decode_step(s.model, "H100", 8, o.batch,
                                   s.prompt_tokens + s.output_tokens // 2)
    assert o.communication_seconds == dec.communication_seconds > 0
    assert f"{dec.communication_seconds / dec.seconds:.0%} of a decode step" in o.note


def test_chatbot_plan_uses_the_price_chosen() -> None:
    listed = sc.evaluate("chatbot", "H100")
    lowest = sc.evaluate("chatbot", "H100", price_source="lowest")
    assert lowest.plan.usd_per_hour == pytest.approx(lowest.plan.n_chips * lowest.usd_per_hour)
    assert lowest.usd_per_hour < listed.usd_per_hour
    assert lowest.plan.n_chips == listed.plan.n_chips


def test_limits_no_fleet_meets_leave_no_plan_and_say_why() -> None:
    """A TPOT limit under every group's fastest decode step: no fleet, and a note saying so."""
    o = sc.evaluate("chatbot", "H100", latency_ms=1.0)
    assert o.plan is None and "no fleet meets the limits" in o.note
    assert o.meets_latency is False and not o.feasible and o.fits
    with pytest.raises(ValueError, match="users"):   # a bad knob is not "no plan"
        sc.evaluate("chatbot", "H100", users=0)


def test_each_kind_of_job_has_its_own_outcome_type() -> None:
    """A small type per kind: the fields every job shares, plus its own; no field of another
    kind (a training outcome has no latency, a serving one no layout)."""
    kinds = {"pretrain": sc.TrainingOutcome, "finetune": sc.TrainingOutcome,
             "chatbot": sc.ServingOutcome, "offline": sc.ServingOutcome,
             "recommender": sc.RecommenderOutcome}
    shared = {f.name for f in dataclasses.fields(sc.Outcome)}
    own = {cls: {f.name for f in dataclasses.fields(cls)} - shared for cls in set(kinds.values())}
    for key, cls in kinds.items():
        o = sc.evaluate(key, "H100")
        assert type(o) is cls and isinstance(o, sc.Outcome)
        assert sc.OUTCOME_TYPES[sc.get(key).kind] is cls
        for other in set(kinds.values()) - {cls}:
            assert not any(hasattr(o, name) for name in own[other] - own[cls]), (key, other)
    # a serving outcome carries its workload, limits and percentiles; the others stay small
    assert len(shared) <= 16 and len(own[sc.ServingOutcome]) <= 11
    assert all(len(names) <= 8 for cls, names in own.items() if cls is not sc.ServingOutcome)
    assert "layout" in own[sc.TrainingOutcome] and "plan" in own[sc.ServingOutcome]
    assert "gather_unit" in own[sc.RecommenderOutcome]
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.evaluate("chatbot", "H100").batch = 8  # type: ignore[misc]


def test_feasible_is_fit_and_the_latency_target_where_there_is_one() -> None:
    tight = sc.evaluate("chatbot", "H100", latency_ms=1.0)
    assert tight.fits and tight.meets_latency is False and not tight.feasible
    assert sc.evaluate("offline", "H100").meets_latency is None
    assert sc.evaluate("offline", "H100").feasible
    small = sc.evaluate("finetune", "TPU v5e")
    assert not small.fits and not small.feasible


def test_a_chip_count_that_splits_no_batch_is_refused_or_priced_without_a_layout() -> None:
    """3 chips split a 2**24-token batch into no whole replicas: no layout, said plainly."""
    assert sc.layout_step("pretrain", "H100", n_chips=3) is None
    with pytest.raises(ValueError, match="does not divide"):
        sc.evaluate("pretrain", "H100", n_chips=3)
    assumed = sc.evaluate("pretrain", "H100", n_chips=3, mfu=0.4)
    assert assumed.layout == "no layout divides the batch" and not assumed.fits
    assert assumed.step_seconds is None and assumed.weight_bytes_per_chip is None


def test_an_unmodelled_chip_is_refused_by_the_engines_own_error_type() -> None:
    """NotPredicted comes from accelkit.mfu.NotModelled, not from any ValueError."""
    with pytest.raises(ak.mfu.NotModelled):
        ak.mfu.matmul_efficiency("MI300X", 128, 128, 128)
    with pytest.raises(ak.mfu.NotModelled, match="MXU count"):
        ak.mfu.matmul_efficiency("TPU7x", 128, 128, 128)
    with pytest.raises(ValueError, match="M must be"):  # a bad argument is no NotModelled
        ak.mfu.matmul_efficiency("H100", 0, 128, 128)
    with pytest.raises(sc.NotPredicted, match="compute_efficiency") as refused:
        sc.layout_step("pretrain", "TPU7x")
    assert "MXU count" in str(refused.value)
