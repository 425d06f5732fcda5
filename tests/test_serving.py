"""accelkit.serving: the contract, the metrics' definitions, Little's law, the scheduler's
physics (latency rises with load and explodes past saturation; continuous batching needs no
more chips than static), every option, and an independent naive simulator that the fast engine
must agree with iteration for iteration."""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import accelkit as ak
from accelkit import inference, serving, serving_step

M8, H100 = "llama-3-8b", "H100"


def _sim(**kw):
    base = dict(model=M8, chip=H100, arrival_rate=5.0, requests=300, prompt_tokens=500,
                output_tokens=100)
    return serving.simulate(**{**base, **kw})


# -- the contract ----------------------------------------------------------------------------

def test_the_contract_fields_and_units():
    r = serving.simulate(M8, H100, n_chips=1, replicas=2, arrival_rate=6.0, requests=200,
                         prompt_tokens=300, output_tokens=[50] * 200, scheduler="continuous",
                         seed=3)
    for name in ("ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "mean_latency_seconds",
                 "throughput_tokens_per_second", "completed_per_second", "mean_in_flight"):
        value = getattr(r, name)
        assert isinstance(value, float) and math.isfinite(value) and value > 0, name
    for name in ("arrival_seconds", "first_token_seconds", "finish_seconds", "ttft_seconds",
                 "tpot_seconds", "latency_seconds", "prompt_tokens", "output_tokens"):
        array = getattr(r, name)
        assert array.shape == (200,) and not array.flags.writeable, name
    assert r.replicas == 2 and r.total_chips == 2 and set(r.replica.tolist()) == {0, 1}


def test_metrics_are_vllms_and_mlperfs_definitions():
    """TTFT from arrival (queueing included); TPOT = (e2e - TTFT) / (output - 1) per request;
    percentiles over requests (numpy's); throughput counts output tokens over the run."""
    out = np.random.default_rng(0).integers(1, 80, 300)
    r = _sim(output_tokens=out, arrival_rate=20.0)
    assert np.allclose(r.ttft_seconds, r.first_token_seconds - r.arrival_seconds)
    assert np.allclose(r.latency_seconds, r.finish_seconds - r.arrival_seconds)
    many = out > 1
    assert np.allclose(r.tpot_seconds[many], (r.latency_seconds[many] - r.ttft_seconds[many])
                       / (out[many] - 1))
    assert np.isnan(r.tpot_seconds[~many]).all()
    assert r.ttft_p99 == pytest.approx(np.percentile(r.ttft_seconds, 99))
    assert r.tpot_p50 == pytest.approx(np.percentile(r.tpot_seconds[many], 50))
    duration = r.finish_seconds.max() - r.arrival_seconds.min()
    assert r.duration_seconds == pytest.approx(duration)
    assert r.throughput_tokens_per_second == pytest.approx(out.sum() / duration)
    assert r.completed_per_second == pytest.approx(300 / duration)


def test_goodput_counts_requests_meeting_every_limit():
    r = _sim(arrival_rate=30.0)
    ttft, tpot = float(np.median(r.ttft_seconds)), float(np.median(r.tpot_seconds))
    both = (r.ttft_seconds <= ttft) & (r.tpot_seconds <= tpot)
    assert r.goodput(ttft_seconds=ttft, tpot_seconds=tpot) == pytest.approx(
        both.sum() / r.duration_seconds)
    assert r.attainment(ttft_seconds=ttft) == pytest.approx((r.ttft_seconds <= ttft).mean())
    with pytest.raises(ValueError, match="at least one limit"):
        r.goodput()


def test_seeded_and_deterministic():
    a, b, c = _sim(seed=4), _sim(seed=4), _sim(seed=5)
    assert np.array_equal(a.finish_seconds, b.finish_seconds)
    assert not np.array_equal(a.arrival_seconds, c.arrival_seconds)


def test_arrivals_are_poisson_and_not_clipped():
    """Exponential gaps of mean 1/rate, none clipped (Vidur clips at three means)."""
    times = serving.arrivals(10.0, 200_000, 1)
    gaps = np.diff(times)
    assert gaps.mean() == pytest.approx(0.1, rel=0.01)
    assert (gaps > 0.3).mean() == pytest.approx(math.exp(-3), rel=0.05)  # the tail is there
    assert gaps.max() > 0.9


# -- Little's law, percentiles, load ---------------------------------------------------------

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rate=st.floats(0.5, 400.0), requests=st.integers(1, 120), seed=st.integers(0, 10**6),
       prompt=st.integers(1, 3000), output=st.integers(1, 400),
       scheduler=st.sampled_from(["continuous", "static"]), replicas=st.integers(1, 3),
       budget=st.sampled_from([None, 256, 4096]), policy=st.sampled_from([None, "reserve"]),
       spread=st.booleans(), dispatch=st.sampled_from(["round_robin", "least_loaded"]))
def test_littles_law_holds_in_every_simulation(rate, requests, seed, prompt, output, scheduler,
                                               replicas, budget, policy, spread, dispatch):
    """mean in flight (integrated on the simulation's own clock) = completed/s x mean latency."""
    rng = np.random.default_rng(seed)
    prompts = rng.integers(1, prompt + 1, requests) if spread else prompt
    outputs = rng.integers(1, output + 1, requests) if spread else output
    kw = dict(arrival_rate=rate, requests=requests, prompt_tokens=prompts,
              output_tokens=outputs, scheduler=scheduler, replicas=replicas, seed=seed,
              dispatch=dispatch)
    if scheduler == "continuous":
        kw.update(token_budget=budget, chunked_prefill=budget is not None, kv_policy=policy)
    r = serving.simulate(M8, H100, **kw)
    expected = r.completed_per_second * r.mean_latency_seconds
    assert r.mean_in_flight == pytest.approx(expected, rel=0.03)
    assert r.ttft_p99 >= r.ttft_p50
    if not math.isnan(r.tpot_p50):
        assert r.tpot_p99 >= r.tpot_p50
    assert (r.first_token_seconds >= r.arrival_seconds).all()
    assert (r.finish_seconds >= r.first_token_seconds).all()


def test_littles_law_with_preemption_disaggregation_beams_and_speculation():
    cases = [
        dict(arrival_rate=math.inf, requests=300, prompt_tokens=4000, output_tokens=600,
             kv_memory_fraction=0.05),                       # preemption by recompute
        dict(prefill_pool=(1, 1), replicas=2),
        dict(beam_width=4),
        dict(model="llama-3-70b", n_chips=8, draft_model=M8, acceptance_rate=0.7,
             speculative_tokens=3),
        dict(prefix_hit_rate=0.5),
    ]
    for kw in cases:
        r = _sim(**kw)
        assert r.mean_in_flight == pytest.approx(
            r.completed_per_second * r.mean_latency_seconds, rel=1e-9), kw
    assert _sim(**cases[0]).preemptions > 0


def test_least_loaded_dispatch_gives_each_request_to_the_replica_with_fewest_in_flight():
    """NVIDIA's MLPerf harness's loadBalancing: at each arrival, the replica with the fewest
    requests given and not finished (the lowest on a tie), recounted here from the result's own
    arrays; an idle fleet sends everything to the first replica, a burst deals it round."""
    rng = np.random.default_rng(3)
    n = 400
    kw = dict(arrival_rate=60.0, requests=n, prompt_tokens=rng.integers(20, 900, n),
              output_tokens=rng.integers(1, 300, n), replicas=3, seed=5)
    r = _sim(dispatch="least_loaded", token_budget=2048, **kw)
    arrive, finish, which = r.arrival_seconds, r.finish_seconds, r.replica
    for i in range(n):
        earlier = np.arange(i)
        busy = finish[earlier] > arrive[i]
        counts = np.bincount(which[earlier][busy], minlength=3)
        assert which[i] == int(np.argmin(counts)), i
    assert r.mean_in_flight == pytest.approx(r.completed_per_second * r.mean_latency_seconds,
                                             rel=1e-9)
    assert len(set(which.tolist())) == 3
    # not the round robin's deal, nor the same run
    rr = _sim(dispatch="round_robin", token_budget=2048, **kw)
    assert not np.array_equal(rr.replica, which)
    idle = _sim(dispatch="least_loaded", arrival_rate=0.01, requests=20, replicas=4)
    alone = [i for i in range(20) if (idle.finish_seconds[:i] <= idle.arrival_seconds[i]).all()]
    assert len(alone) >= 15 and (idle.replica[alone] == 0).all()
    burst = _sim(dispatch="least_loaded", arrival_rate=math.inf, requests=20, replicas=4)
    assert (burst.replica == np.arange(20) % 4).all()
    one = [_sim(dispatch=d, arrival_rate=30.0, requests=200) for d in ("round_robin",
                                                                      "least_loaded")]
    assert np.array_equal(one[0].finish_seconds, one[1].finish_seconds)


def test_latency_rises_with_load_and_explodes_past_saturation():
    base = dict(requests=1500, prompt_tokens=1000, output_tokens=200, seed=2)
    capacity = serving.simulate(M8, H100, arrival_rate=math.inf, **base)
    saturation = capacity.completed_per_second
    fractions = (0.2, 0.5, 0.8, 1.5)
    runs = [serving.simulate(M8, H100, arrival_rate=f * saturation, **base) for f in fractions]
    ttft = [r.ttft_p99 for r in runs]
    tpot = [r.tpot_p50 for r in runs]
    assert ttft == sorted(ttft) and tpot == sorted(tpot)
    assert ttft[-1] > 20 * ttft[-2]          # past saturation the queue grows without bound
    assert runs[-1].completed_per_second < 1.1 * saturation


def test_continuous_batching_needs_no_more_chips_than_static():
    for chip, rate in (("H100", 10.0), ("TPU v5e", 4.0)):
        kw = dict(arrival_rate=rate, prompt_tokens=800, output_tokens=200, ttft_p99_seconds=2.0,
                  tpot_p99_seconds=0.1, requests=400)
        cont = serving.capacity(M8, chip, **kw)
        static = serving.capacity(M8, chip, scheduler="static", **kw)
        assert cont.n_chips <= static.n_chips, chip
        assert cont.meets and static.meets


def test_static_batching_waits_for_the_batch():
    """A request that arrives while a static batch runs waits for all of it."""
    cont, static = _sim(arrival_rate=8.0, scheduler="continuous"), _sim(arrival_rate=8.0,
                                                                        scheduler="static")
    assert static.ttft_p50 > 3 * cont.ttft_p50


# -- against an independent, naive simulator ------------------------------------------------

def _naive(group, arrivals, prompts, outputs, blocks, block, policy, cap=None):
    """Iteration by iteration, every sequence's context kept explicitly, every iteration priced
    by IterationGroup.seconds; FIFO admission, vLLM-style recompute preemption of the newest."""
    n = len(arrivals)
    first, done = [math.nan] * n, [math.nan] * n
    waiting: deque = deque()
    running: list[list[int]] = []       # [rid, context, remaining, reserved]
    t, i = 0.0, 0

    def used():
        if policy == "reserve":
            return sum(s[3] for s in running)
        return sum(-(-(s[1] + 1) // block) for s in running)

    while True:
        while i < n and arrivals[i] <= t:
            waiting.append([i, int(prompts[i]), int(outputs[i])])
            i += 1
        while policy == "preempt" and running and used() > blocks:
            rid, context, remaining, _ = running.pop()
            waiting.appendleft([rid, context + 1, remaining])
        new = []
        while waiting:
            rid, prompt, remaining = waiting[0]
            if cap is not None and len(running) + len(new) + 1 > cap:
                break
            need = (-(-(prompt + remaining) // block) if policy == "reserve"
                    else -(-prompt // block))
            held = used() + sum(x[3] for x in new)
            if need > blocks - held:
                break
            waiting.popleft()
            new.append([rid, prompt, remaining, need])
        if not running and not new:
            if i >= n:
                break
            t = max(t, arrivals[i])
            continue
        tokens = len(running) + sum(x[1] for x in new)
        pairs = sum(s[1] + 1 for s in running) + sum(group.pairs(x[1], 0) for x in new)
        reads = pairs if not new else sum(s[1] + 1 for s in running) + sum(x[1] for x in new)
        t += group.seconds(tokens, len(running) + len(new), pairs, reads)
        keep = []
        for s in running:
            s[1] += 1
            s[2] -= 1
            if s[2] == 0:
                done[s[0]] = t
            else:
                keep.append(s)
        for rid, prompt, remaining, need in new:
            if math.isnan(first[rid]):
                first[rid] = t
            if remaining - 1 == 0:
                done[rid] = t
            else:
                keep.append([rid, prompt, remaining - 1, need])
        running = keep
    return np.array(first), np.array(done)


@pytest.mark.parametrize("policy, fraction", [("reserve", 1.0), ("preempt", 1.0),
                                              ("preempt", 0.004), ("reserve", 0.004)])
def test_the_engine_agrees_with_a_naive_simulator(policy, fraction):
    rng = np.random.default_rng(7)
    requests = 120
    prompts = rng.integers(1, 900, requests)
    outputs = rng.integers(1, 150, requests)
    r = serving.simulate(M8, H100, arrival_rate=40.0, requests=requests, prompt_tokens=prompts,
                         output_tokens=outputs, kv_policy=policy, kv_memory_fraction=fraction,
                         seed=11)
    group = serving_step.iteration_group(ak.models.get(M8), ak.chips.get(H100), 1,
                                         ("bf16", "bf16", "bf16"), ("causal", True, True),
                                         "even", 0.0)
    blocks = r.kv_cache_tokens // serving.BLOCK_TOKENS
    first, done = _naive(group, r.arrival_seconds, prompts, outputs, blocks,
                         serving.BLOCK_TOKENS, policy)
    assert np.allclose(r.first_token_seconds, first, rtol=1e-9, atol=1e-12)
    assert np.allclose(r.finish_seconds, done, rtol=1e-9, atol=1e-12)
    if fraction < 1 and policy == "preempt":
        assert r.preemptions > 0


def test_one_iteration_alone_is_the_librarys_prefill_then_decode_steps():
    """One request alone: its TTFT is inference.prefill of its prompt, and its decode steps are
    inference.decode_step at each context."""
    r = serving.simulate(M8, H100, arrival_rate=1.0, requests=1, prompt_tokens=700,
                         output_tokens=5)
    pre = inference.prefill(M8, H100, 1, 1, 700).seconds
    steps = sum(inference.decode_step(M8, H100, 1, 1, 700 + k).seconds for k in range(4))
    assert r.ttft_seconds[0] == pytest.approx(pre, rel=1e-12)
    assert r.latency_seconds[0] == pytest.approx(pre + steps, rel=1e-12)


# -- options ---------------------------------------------------------------------------------

def test_chunked_prefill_bounds_the_decode_stall():
    """Sarathi-Serve: long prompts joining whole stall the running decodes (TPOT); chunks of
    a token budget bound each iteration."""
    kw = dict(arrival_rate=3.0, requests=300, prompt_tokens=8000, output_tokens=200, seed=1)
    whole = serving.simulate(M8, H100, **kw)
    chunked = serving.simulate(M8, H100, token_budget=512, chunked_prefill=True, **kw)
    assert chunked.tpot_p99 < whole.tpot_p99
    assert chunked.ttft_p50 > whole.ttft_p50   # the prompt now takes several iterations


def test_fp8_kv_cache_holds_twice_the_tokens():
    bf16, fp8 = _sim(kv_dtype="bf16"), _sim(kv_dtype="fp8")
    assert fp8.kv_cache_tokens == pytest.approx(2 * bf16.kv_cache_tokens, rel=1e-3)


def test_paged_cache_is_whole_blocks_of_what_hbm_leaves():
    m = ak.models.get(M8)
    free = float(ak.chips.get(H100).hbm_bytes) - m.weight_bytes("bf16")
    r = _sim(block_tokens=32)
    assert r.kv_cache_tokens == int(free // (32 * m.kv_cache_bytes_per_token("bf16"))) * 32


def test_disaggregation_prices_the_kv_transfer():
    kw = dict(arrival_rate=4.0, prefill_pool=(1, 1), replicas=1)
    near, far = _sim(kv_link="scale-up", **kw), _sim(kv_link="scale-out", **kw)
    assert np.all(far.latency_seconds >= near.latency_seconds - 1e-12)
    assert far.mean_latency_seconds > near.mean_latency_seconds
    assert near.total_chips == 2 and near.prefill_chips == 1
    m = ak.models.get(M8)
    send = ak.collectives.point_to_point(H100, array_bytes=500 * m.kv_cache_bytes_per_token(),
                                         network="scale-out").seconds
    assert far.mean_latency_seconds - near.mean_latency_seconds == pytest.approx(
        send - ak.collectives.point_to_point(H100, array_bytes=500 * m.kv_cache_bytes_per_token(),
                                             network="scale-up").seconds, rel=0.2)


def test_beams_cost_decode_and_memory_but_share_the_prompt():
    one, four = _sim(beam_width=1), _sim(beam_width=4)
    assert four.tpot_p50 > one.tpot_p50
    assert four.peak_sequences >= 4


def test_speculative_decoding_speeds_tokens_as_acceptance_rises():
    big = dict(model="llama-3-70b", n_chips=8, arrival_rate=2.0)
    kw = dict(draft_model=M8, speculative_tokens=4, **big)
    low, high = _sim(acceptance_rate=0.1, **kw), _sim(acceptance_rate=0.9, **kw)
    plain = _sim(**big)
    assert high.tpot_p50 < plain.tpot_p50 < low.tpot_p50
    with pytest.raises(ValueError, match="acceptance_rate"):
        _sim(draft_model=M8, **big)


def test_prefix_caching_cuts_the_prefill():
    none, half = _sim(prefix_hit_rate=0.0), _sim(prefix_hit_rate=0.5)
    assert half.ttft_p50 < none.ttft_p50


def test_moe_decodes_expert_parallel_on_the_librarys_rule():
    r = serving.simulate("mixtral-8x7b", H100, n_chips=2, arrival_rate=1.0, requests=1,
                         prompt_tokens=300, output_tokens=3)
    pre = inference.prefill("mixtral-8x7b", H100, 2, 1, 300).seconds
    assert r.ttft_seconds[0] == pytest.approx(pre, rel=1e-12)
    assert inference.prefill("mixtral-8x7b", H100, 2, 1, 300).communication_network == "NVLink"


def test_fleet_price_is_chips_times_the_hourly_rate():
    r = _sim(replicas=3, n_chips=2)
    h100 = ak.chips.get(H100)
    assert r.usd_per_hour == pytest.approx(6 * h100.usd_per_hour)
    assert r.usd_per_million_tokens == pytest.approx(
        r.usd_per_hour / (r.throughput_tokens_per_second * 3600) * 1e6)
    assert _sim(usd_per_hour=1.0).usd_per_hour == 1.0


# -- refusals --------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, error, match", [
    (dict(arrival_rate=0.0), ValueError, "arrival_rate"),
    (dict(arrival_rate=-1.0), ValueError, "arrival_rate"),
    (dict(arrival_rate="fast"), TypeError, "arrival_rate"),
    (dict(requests=0), ValueError, "requests"),
    (dict(prompt_tokens=0), ValueError, "prompt_tokens"),
    (dict(prompt_tokens=[10, 20]), ValueError, "one length per request"),
    (dict(output_tokens="many"), TypeError, "output_tokens"),
    (dict(output_tokens=[1.5] * 300), ValueError, "output_tokens"),
    (dict(scheduler="magic"), ValueError, "scheduler"),
    (dict(n_chips=3, model="llama-3-70b"), ValueError, "divide"),
    (dict(chunked_prefill=True), ValueError, "token_budget"),
    (dict(token_budget=100), ValueError, "longer than token_budget"),
    (dict(prompt_tokens=10**6), ValueError, "cannot hold"),
    (dict(model="llama-3.1-405b"), ValueError, "do not fit"),
    (dict(kv_policy="evict"), ValueError, "kv_policy"),
    (dict(beam_width=2, kv_policy="preempt"), ValueError, "reserve"),
    (dict(scheduler="static", token_budget=4096), ValueError, "static"),
    (dict(prefix_hit_rate=1.0), ValueError, "prefix_hit_rate"),
    (dict(prefill_pool=3), TypeError, "prefill_pool"),
    (dict(kv_link="carrier pigeon", prefill_pool=(1, 1)), ValueError, "kv_link"),
    (dict(chip="L4", n_chips=2), ValueError, "NVLink"),
    (dict(dispatch="shortest"), ValueError, "dispatch"),
    (dict(dispatch="least_loaded", replicas=2, model="llama-3-70b", n_chips=8, draft_model=M8,
          acceptance_rate=0.7), ValueError, "least_loaded"),
])
def test_bad_input_and_impossible_configurations_are_refused(kw, error, match):
    with pytest.raises(error, match=match):
        _sim(**kw)


# -- capacity --------------------------------------------------------------------------------

def test_capacity_contract_meets_both_limits_and_one_fewer_does_not():
    p = serving.capacity("llama-3-70b", H100, arrival_rate=12.0, prompt_tokens=1000,
                         output_tokens=200, ttft_p99_seconds=1.0, tpot_p99_seconds=0.05,
                         requests=600)
    for name in ("replicas", "chips_per_replica", "n_chips"):
        assert isinstance(getattr(p, name), int)
    assert p.n_chips == p.replicas * p.chips_per_replica
    assert p.usd_per_hour == pytest.approx(p.n_chips * ak.chips.get(H100).usd_per_hour)
    assert p.usd_per_million_tokens == pytest.approx(p.result.usd_per_million_tokens)
    assert p.meets and p.result.ttft_p99 <= 1.0 and p.result.tpot_p99 <= 0.05
    fewer = serving.simulate("llama-3-70b", H100, n_chips=p.chips_per_replica,
                             replicas=p.replicas - 1, arrival_rate=12.0, requests=600,
                             prompt_tokens=1000, output_tokens=200) if p.replicas > 1 else None
    if fewer is not None:
        assert not fewer.meets(ttft_p99_seconds=1.0, tpot_p99_seconds=0.05)
        assert not p.fewer_meets
    # no cheaper group size meets the limits either
    for tp, replicas, chips in p.candidates:
        if chips < p.n_chips:
            r = serving.simulate("llama-3-70b", H100, n_chips=tp, replicas=replicas,
                                 arrival_rate=12.0, requests=600, prompt_tokens=1000,
                                 output_tokens=200)
            assert not r.meets(ttft_p99_seconds=1.0, tpot_p99_seconds=0.05)


def test_capacity_refuses_what_no_fleet_can_meet():
    with pytest.raises(serving.NoServingPlan, match="TPOT"):
        serving.capacity(M8, H100, arrival_rate=1.0, prompt_tokens=100, output_tokens=50,
                         ttft_p99_seconds=1.0, tpot_p99_seconds=1e-4, requests=50)
    with pytest.raises(ValueError, match="ttft_p99_seconds"):
        serving.capacity(M8, H100, arrival_rate=1.0, prompt_tokens=100, output_tokens=50,
                         ttft_p99_seconds=0.0, tpot_p99_seconds=0.1)
    with pytest.raises(TypeError, match="chooses replicas"):
        serving.capacity(M8, H100, arrival_rate=1.0, prompt_tokens=100, output_tokens=50,
                         ttft_p99_seconds=1.0, tpot_p99_seconds=0.1, replicas=2)


def test_capacity_plan_docstring_names_the_serving_simulation():
    """capacity.plan stays as the steady-state bound and says how it relates."""
    doc = ak.capacity.plan.__doc__ or ""
    assert "accelkit.serving.capacity" in doc and "steady state" in doc


def test_achievable_ceilings_are_slower_than_the_datasheet_and_named():
    """ceilings="achievable" prices every kernel at the catalog's measured matmul and HBM
    ceilings (below the datasheet's), so the same requests take longer; a bad value is named."""
    common = dict(arrival_rate=2.0, requests=200, prompt_tokens=1000, output_tokens=100)
    peak = ak.serving.simulate("llama-3-8b", "H100", **common)
    real = ak.serving.simulate("llama-3-8b", "H100", ceilings="achievable", **common)
    assert real.tpot_p50 > peak.tpot_p50 and real.ttft_p50 > peak.ttft_p50
    c = ak.chips.get("H100")
    decode = c.hbm_bytes_per_second / c.achievable_hbm_bytes_per_second
    # a memory-bound decode slows by the bandwidth's ratio, at most (attention at batch ~1)
    assert real.tpot_p50 / peak.tpot_p50 == pytest.approx(decode, rel=0.05)
    with pytest.raises(ValueError, match="ceilings"):
        ak.serving.simulate("llama-3-8b", "H100", ceilings="peak", **common)


def test_overlapped_all_reduces_serve_no_slower_and_keep_littles_law():
    """tp_overlap=True (the scaling book's assumption, XLA's collective matmul) hides the
    tensor-parallel all-reduces behind each iteration's kernels: on a 16-chip v5e group, where
    they are a visible part of every step, the same arrivals finish no later, and Little's law
    still holds."""
    runs = [ak.serving.simulate("llama-3-70b", "TPU v5e", n_chips=16, arrival_rate=2.0,
                                requests=300, prompt_tokens=500, output_tokens=200,
                                tp_overlap=o) for o in (False, True)]
    exposed, hidden = runs
    assert hidden.tpot_p50 < exposed.tpot_p50 and hidden.ttft_p99 <= exposed.ttft_p99
    assert hidden.mean_latency_seconds < exposed.mean_latency_seconds
    for r in runs:
        assert r.mean_in_flight == pytest.approx(r.completed_per_second * r.mean_latency_seconds,
                                                 rel=0.03)
    state = ak.serving.steady_state("llama-3-70b", "TPU v5e", n_chips=16, prompt_tokens=500,
                                    output_tokens=200, tp_overlap=True)
    assert state.saturation_rate > ak.serving.steady_state(
        "llama-3-70b", "TPU v5e", n_chips=16, prompt_tokens=500,
        output_tokens=200).saturation_rate


def test_a_per_iteration_runtime_cost_lengthens_every_iteration():
    """iteration_overhead_seconds: every request queued at once (the schedule does not depend on
    the clock), so the run is exactly its iterations times the cost longer; Little's law still
    holds; a bad value is refused by name."""
    common = dict(arrival_rate=math.inf, requests=300, prompt_tokens=300, output_tokens=120,
                  n_chips=2, max_batch=64, weight_dtype="fp8", compute_dtype="fp8",
                  ceilings="kernels")
    bare = ak.serving.simulate("llama-2-70b", "H100", **common)
    slow = ak.serving.simulate("llama-2-70b", "H100", iteration_overhead_seconds=2e-3, **common)
    assert slow.iterations == bare.iterations
    assert slow.duration_seconds == pytest.approx(bare.duration_seconds
                                                  + 2e-3 * bare.iterations, rel=1e-9)
    assert ak.serving.VLLM_ITERATION_SECONDS == 1.2e-3
    r = ak.serving.simulate("llama-3-8b", "H100", arrival_rate=5.0, requests=300,
                            prompt_tokens=500, output_tokens=100,
                            iteration_overhead_seconds=ak.serving.VLLM_ITERATION_SECONDS)
    assert r.mean_in_flight == pytest.approx(r.completed_per_second * r.mean_latency_seconds,
                                             rel=0.03)
    for bad, kind in ((-1e-3, ValueError), (2.0, ValueError), ("1ms", TypeError)):
        with pytest.raises(kind, match="iteration_overhead_seconds"):
            ak.serving.simulate("llama-3-8b", "H100", arrival_rate=1.0, requests=5,
                                prompt_tokens=10, output_tokens=5,
                                iteration_overhead_seconds=bad)
