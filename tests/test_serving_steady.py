"""accelkit.serving.steady: one replica's closed-form steady state under Poisson load, the
estimate the decision lab starts its fleet search from, against the simulator it must agree
with on the mean, and its bad input."""

from __future__ import annotations

import numpy as np
import pytest

import accelkit as ak
from accelkit import serving
from accelkit.serving import lab

CASES = [("llama-3-70b", "H100", 2, 1000, 250, 0.05), ("llama-3-8b", "H100", 1, 1000, 250, 0.03),
         ("llama-3-70b", "TPU v5e", 16, 2000, 250, 0.05)]


@pytest.mark.parametrize("model, chip, n, prompt, output, limit", CASES)
def test_the_mean_tpot_is_the_simulators_at_half_the_ceiling(model, chip, n, prompt, output,
                                                              limit):
    """At half the rate where the estimated mean TPOT reaches the limit, a long simulation's
    mean TPOT is within 10% of the estimate (the same iteration rule; the estimate leaves out
    several prompts sharing an iteration and the batch's spread)."""
    s = serving.steady_state(model, chip, n_chips=n, prompt_tokens=prompt, output_tokens=output)
    top = s.max_rate(ttft_p99_seconds=100.0, tpot_p99_seconds=limit, percentile="mean")
    assert 0 < top <= s.saturation_rate
    run = serving.simulate(model, chip, n_chips=n, arrival_rate=0.5 * top, requests=3000,
                           prompt_tokens=prompt, output_tokens=output)
    assert run.mean_tpot_seconds == pytest.approx(s.mean_tpot(0.5 * top), rel=0.10)


def test_the_curves_rise_with_the_load_and_the_p99_is_above_the_mean():
    s = serving.steady_state("llama-3-70b", "H200", n_chips=2, prompt_tokens=1000,
                             output_tokens=250)
    assert np.all(np.diff(s.rates) >= 0) and np.all(np.diff(s.batches) > 0)
    assert np.all(s.tpot_p99 >= s.tpot_mean) and np.all(s.ttft_p99 >= s.ttft_mean)
    assert np.all(s.ttft_mean >= s.prefill_seconds)
    limits = dict(ttft_p99_seconds=2.0, tpot_p99_seconds=0.05)
    assert 0 < s.max_rate(**limits) <= s.max_rate(**limits, percentile="mean")
    # a looser limit allows more load; one request alone slower than the limit allows none
    assert s.max_rate(ttft_p99_seconds=2.0, tpot_p99_seconds=0.1) >= s.max_rate(**limits)
    assert s.max_rate(ttft_p99_seconds=2.0, tpot_p99_seconds=1e-4) == 0.0
    assert s.max_rate(ttft_p99_seconds=1e-4, tpot_p99_seconds=0.05) == 0.0


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="prompt_tokens"):
        serving.steady_state("llama-3-8b", "H100", prompt_tokens=0, output_tokens=10)
    s = serving.steady_state("llama-3-8b", "H100", prompt_tokens=100, output_tokens=10)
    with pytest.raises(ValueError, match="percentile"):
        s.max_rate(ttft_p99_seconds=1.0, tpot_p99_seconds=0.1, percentile="p50")
    with pytest.raises(ValueError, match="tpot_p99_seconds"):
        s.max_rate(ttft_p99_seconds=1.0, tpot_p99_seconds=-1.0)
    with pytest.raises(ValueError, match="cannot hold"):
        serving.steady_state("llama-3-70b", "H100", prompt_tokens=1000, output_tokens=10)


def test_the_lab_prices_a_service_with_the_all_reduces_overlapped_when_asked():
    """serving.lab.outcome(tp_overlap=True): every simulation and estimate of the plan hides the
    tensor-parallel all-reduces; a 70B chatbot on v5e (16-chip groups, all-reduces a visible
    part of each step) needs no more chips, and the default is the exposed plan."""
    chip = ak.chips.get("TPU v5e")
    args = dict(n_chips=16, weights="bf16", users=400, interval_seconds=20.0, prompt=500,
                output=200, ttft_limit=2.0, tpot_limit=0.05, work=1e9, usd_per_hour=1.2)
    exposed = lab.outcome("chat", "llama-3-70b", chip, **args)
    hidden = lab.outcome("chat", "llama-3-70b", chip, **args, tp_overlap=True)
    assert exposed == lab.outcome("chat", "llama-3-70b", chip, **args,
                                             tp_overlap=False)
    assert hidden.plan is not None and exposed.plan is not None
    assert hidden.plan.n_chips <= exposed.plan.n_chips
    assert hidden.tpot_p99_seconds < exposed.tpot_p99_seconds or \
        hidden.plan.n_chips < exposed.plan.n_chips
    assert "tp_overlap" in hidden.note and "tp_overlap" not in exposed.note
