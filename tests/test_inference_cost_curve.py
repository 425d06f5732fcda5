"""inference.cost_curve: one call for a cost curve and its largest batch (issue 24: lesson 08's
serving_cost_explorer sampled a batch grid and said "batch 181: $0.975/M" for 16 × v5e where the
lesson printed the exact "batch 199, $0.940/M")."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelkit import chips, inference, price, scenarios

CHIPS = ("TPU v5e", "TPU v6e", "TPU v5p", "A100", "H100", "H200", "B200")


@pytest.mark.parametrize("name", CHIPS)
@pytest.mark.parametrize("context", (512, 2048, 8192))
def test_the_curve_ends_at_the_exact_largest_batch_and_its_cost(name, context):
    n = scenarios.replica_chips("llama-3-70b", name, headroom=1.5)
    limit = inference.max_batch("llama-3-70b", name, n, context)
    curve = inference.cost_curve("llama-3-70b", name, n, context)
    full = inference.decode_step("llama-3-70b", name, n, limit, context)
    assert curve.max_batch == limit and int(curve.batches[-1]) == limit
    assert curve.usd_per_million_tokens_at_max_batch == pytest.approx(
        full.usd_per_million_tokens, rel=1e-12)
    assert curve.batches[0] == 1 and np.all(np.diff(curve.batches) > 0)
    assert set(curve.batches[:-1]) <= set(inference.COST_CURVE_BATCHES)
    # every point is a decode step's own cost
    for b, usd in zip(curve.batches[::7], curve.usd_per_million_tokens[::7]):
        step = inference.decode_step("llama-3-70b", name, n, int(b), context)
        assert usd == pytest.approx(step.usd_per_million_tokens, rel=1e-12)


def test_another_price_scales_the_whole_curve():
    n = scenarios.replica_chips("llama-3-70b", "H100", headroom=1.5)
    listed = inference.cost_curve("llama-3-70b", "H100", n)
    low = price.lowest("H100")
    cheap = inference.cost_curve("llama-3-70b", "H100", n, usd_per_hour=low.usd_per_hour)
    assert listed.usd_per_hour == chips.get("H100").usd_per_hour
    ratio = cheap.usd_per_million_tokens / listed.usd_per_million_tokens
    assert np.allclose(ratio, low.usd_per_hour / listed.usd_per_hour)
    one = price.usd_per_million_tokens("H100", 1 / cheap.seconds[0], n,
                                       usd_per_hour=low.usd_per_hour)
    assert math.isclose(cheap.usd_per_million_tokens[0], one, rel_tol=1e-12)


def test_a_grid_of_its_own_and_a_frozen_result():
    curve = inference.cost_curve("llama-3-8b", "H100", 1, 2048, batches=[1, 10, 100])
    assert list(curve.batches[:-1]) == [1, 10, 100] and curve.batches[-1] == curve.max_batch
    with pytest.raises(ValueError):
        curve.usd_per_million_tokens[0] = 0.0
    assert "batch 1" in repr(curve) and f"batch {curve.max_batch:,}" in repr(curve)


@pytest.mark.parametrize("kwargs, error, words", [
    ({"n_chips": 1, "model": "llama-3-70b"}, ValueError, "does not fit"),
    ({"batches": [0, 4]}, ValueError, "batches"),
    ({"batches": [[1, 2]]}, ValueError, "batches"),
    ({"usd_per_hour": -1.0}, ValueError, "usd_per_hour"),
])
def test_bad_input_is_refused_by_name(kwargs, error, words):
    args = {"model": "llama-3-8b", "chip": "H100", "n_chips": 1} | kwargs
    with pytest.raises(error, match=words):
        inference.cost_curve(**args)


def test_a_chip_without_a_price_needs_one():
    unpriced = next(c for c in chips.all() if c.usd_per_hour is None and c.kind == "gpu"
                    and c.hbm_bytes and c.hbm_bytes > 40e9)
    with pytest.raises(chips.MissingFigureError, match="usd_per_hour"):
        inference.cost_curve("llama-3-8b", unpriced, 1)
    assert inference.cost_curve("llama-3-8b", unpriced, 1, usd_per_hour=2.0).usd_per_hour == 2.0
