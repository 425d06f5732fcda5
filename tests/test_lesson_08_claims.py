"""Every quantitative claim in lessons/08_inference.ipynb, recomputed with the library.

Published figures: jax-ml/scaling-book applied-inference.md ("Serving LLaMA 3-70B on TPUs"),
with its rounded v5e figures (16e9 bytes of HBM, 8.2e11 B/s); prices from the chip catalog.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

import accelkit as ak
from accelkit import inference, scenarios

M70, M8 = "llama-3-70b", "llama-3-8b"
BOOK_V5E = dataclasses.replace(ak.chips.get("v5e"), hbm_bytes=16e9, hbm_bytes_per_second=8.2e11)
CHIPS = ("TPU v5e", "TPU v6e", "TPU v5p", "A100", "H100", "H200", "B200")


def _replica(model, chip):
    return scenarios.replica_chips(model, chip, headroom=1.5)


def _full(model, chip, context=2048):
    n = _replica(model, chip)
    return inference.decode_step(model, chip, n, context_tokens=context,
                                 batch=inference.max_batch(model, chip, n, context))


def test_prefill_compute_bound_decode_memory_bound_hundreds_vs_one():
    """Prefill does hundreds of FLOPs per byte, right of the ridge; decode does about one."""
    p = inference.prefill(M8, "H100", batch=1, prompt_tokens=2048)
    d = inference.decode_step(M8, "H100", batch=1, context_tokens=2048)
    ridge = ak.chips.get("H100").ridge_flops_per_byte()
    assert 100 <= p.arithmetic_intensity < 1000 and p.arithmetic_intensity > ridge
    assert p.bound == "compute" and d.bound == "memory"
    assert 0.5 < d.arithmetic_intensity < 2


def test_v5e_critical_batch_near_the_books_240():
    """The scaling book's number for TPU v5e is 240."""
    assert inference.compute_bound_batch(M70, "v5e", kinds=("matmul",)) == pytest.approx(240, rel=0.05)


@pytest.mark.parametrize("chip", CHIPS + ("L4",))
def test_b_star_a_little_above_the_ridge_and_halved_by_int8(chip):
    """Each chip's B* sits a little above its ridge point, within about 10%, and int8 weights halve it."""
    ridge = ak.chips.get(chip).ridge_flops_per_byte()
    bf16 = inference.compute_bound_batch(M70, chip, kinds=("matmul",))
    int8 = inference.compute_bound_batch(M70, chip, weight_dtype="int8", kinds=("matmul",))
    assert ridge <= bf16 <= 1.1 * ridge
    assert int8 == pytest.approx(bf16 / 2, rel=0.02)


def test_flop_rich_chips_need_bigger_batches():
    """FLOP-rich, bandwidth-poor chips (v6e, L4) need bigger batches before their matrix units are busy."""
    b = {c: inference.compute_bound_batch(M70, c, kinds=("matmul",)) for c in CHIPS + ("L4",)}
    others = [b[c] for c in CHIPS if c != "TPU v6e"]
    assert b["TPU v6e"] > max(others) and b["L4"] > max(others)


@pytest.mark.parametrize("chip", ("TPU v5e", "TPU v5p", "A100", "H100"))
def test_whole_step_compute_bound_only_much_later_or_never(chip):
    """With a 2,048-token context the whole step turns compute-bound only at a batch several times larger, or never."""
    whole = inference.compute_bound_batch(M70, chip, n_chips=8, context_tokens=2048)
    matmul = inference.compute_bound_batch(M70, chip, kinds=("matmul",))
    assert math.isinf(whole) or whole > 3 * matmul


def test_kv_cache_figures_match_the_book():
    """KV cache 160 KiB per token int8 (book 160 KiB); 5.3 GB per 32k sequence; 86 v5e chips for batch 240."""
    m = ak.models.get(M70)
    assert m.kv_cache_bytes_per_token("int8") / 1024 == pytest.approx(160)
    assert inference.kv_cache_bytes(m, 1, 32768, "int8") == pytest.approx(5.3e9, rel=0.02)
    big = inference.decode_step(m, BOOK_V5E, n_chips=16, batch=240, context_tokens=32768,
                                weight_dtype="int8", kv_dtype="int8")
    assert big.min_chips == pytest.approx(86, abs=2)
    assert big.kv_cache_bytes > 5 * big.weight_bytes  # "the cache, not the weights, fills memory"


def test_full_hbm_step_and_latency_floor_match_the_book():
    """16 v5e, bf16, 8k context: 43 sequences fit and a step reads HBM for 19 ms, plus the
    tensor-parallel all-reduces; int8 batch 1: 5.5 ms reading HBM (the book counts memory time)."""
    full = inference.max_batch(M70, BOOK_V5E, n_chips=16, context_tokens=8192)
    assert full == pytest.approx(43, abs=1)
    step = inference.decode_step(M70, BOOK_V5E, 16, full, 8192)
    assert step.seconds - step.communication_seconds == pytest.approx(0.019, rel=0.05)
    assert step.communication_seconds > 0
    low = inference.decode_step(M70, BOOK_V5E, 16, 1, 2048, weight_dtype="int8", kv_dtype="int8")
    assert low.seconds - low.communication_seconds == pytest.approx(5.5e-3, rel=0.05)
    assert low.communication_seconds > 0.2 * low.seconds  # "mostly per-hop latency" at batch 1
    assert low.communication_seconds > 160 * 16e-6        # 160 all-reduces x 16 ICI hops x 1 us


def test_batch_is_the_biggest_lever_about_a_hundredfold():
    """One user at a time costs about a hundred times more per token than a full batch."""
    for chip in ("TPU v5e", "TPU v6e", "H100", "B200"):
        one = inference.decode_step(M70, chip, _replica(M70, chip), 1, 2048)
        ratio = one.usd_per_million_tokens / _full(M70, chip).usd_per_million_tokens
        assert 50 < ratio < 200, (chip, ratio)


def test_prompt_tokens_cheaper_and_each_phase_rewards_a_different_chip():
    """Prompt tokens are cheaper than generated ones even at full batch; v6e beats v5e on prefill, loses on decode."""
    pre = {c: inference.prefill(M70, c, _replica(M70, c), batch=8, prompt_tokens=2048)
           for c in ("TPU v5e", "TPU v6e", "H100", "B200")}
    for chip, p in pre.items():
        assert p.usd_per_million_tokens < _full(M70, chip).usd_per_million_tokens
    assert pre["TPU v6e"].usd_per_million_tokens < pre["TPU v5e"].usd_per_million_tokens
    assert _full(M70, "TPU v6e").usd_per_million_tokens > _full(M70, "TPU v5e").usd_per_million_tokens


def test_latency_small_batch_gpus_with_fewer_chips():
    """A single GPU serves the 8B model at the lowest latency, the v5e needs two chips and is slowest; 16 v5e are still slower than 4 H100s on 70B, and their all-reduces take longer."""
    lat = {}
    for chip in ("TPU v5e", "TPU v5p", "H100", "B200"):
        n = _replica(M8, chip)
        lat[chip] = (n, inference.decode_step(M8, chip, n, 1, 2048).seconds)
    assert lat["B200"][0] == 1 and lat["B200"][1] == min(s for _, s in lat.values())
    assert lat["TPU v5e"][0] == 2 and lat["TPU v5e"][1] == max(s for _, s in lat.values())
    v5e = inference.decode_step(M70, "v5e", _replica(M70, "v5e"), 1, 2048)
    h100 = inference.decode_step(M70, "H100", _replica(M70, "H100"), 1, 2048)
    assert _replica(M70, "v5e") == 16 and _replica(M70, "H100") == 4
    assert v5e.seconds > h100.seconds
    assert v5e.communication_seconds > h100.communication_seconds


def test_list_prices_buy_more_flops_and_bandwidth_on_v5e_than_h100():
    """At Google Cloud's list prices a v5e hour buys more FLOPs and bandwidth per dollar than an H100 hour."""
    v5e, h100 = ak.chips.get("v5e"), ak.chips.get("H100")
    assert ak.price.flops_per_dollar(v5e) > ak.price.flops_per_dollar(h100)
    assert v5e.hbm_bytes_per_second / v5e.usd_per_hour > h100.hbm_bytes_per_second / h100.usd_per_hour


def test_full_batch_cost_flips_with_the_price_source():
    """List prices: v5e cheaper than H100; Lambda's H100 price: H100 cheaper; B200 cheapest at either of its prices."""
    v5e, h100, b200 = (_full(M70, c) for c in ("TPU v5e", "H100", "B200"))
    assert v5e.usd_per_million_tokens < h100.usd_per_million_tokens
    lambda_h100 = ak.price.usd_per_million_tokens("H100", h100.tokens_per_second, h100.n_chips,
                                                  usd_per_hour=3.99)
    assert lambda_h100 < v5e.usd_per_million_tokens
    for p in ak.price.price_points("B200"):
        usd = ak.price.usd_per_million_tokens("B200", b200.tokens_per_second, b200.n_chips,
                                              usd_per_hour=p.usd_per_hour)
        assert usd < min(v5e.usd_per_million_tokens, lambda_h100)


def test_more_chips_of_tp_beyond_16_flagged():
    """A 70B model needs a 16-chip v5e slice, where tensor-parallel communication starts to cost:
    its all-reduces are in every step time and their share of a step grows with each chip you add
    (the scaling book finds it dominates beyond about 16 v5e chips)."""
    assert _replica(M70, "v5e") == 16
    shares = [(d.communication_seconds / d.seconds) for d in
              (inference.decode_step(M70, "v5e", n, 1, 2048) for n in (16, 32, 64))]
    assert 0 < shares[0] < shares[1] < shares[2] and shares[2] > 0.5


def test_gqa_shares_each_kv_head_among_8_query_heads():
    """Grouped-query attention helps — Llama-3-70B shares each key/value head among 8 query heads."""
    m = ak.models.get(M70)
    assert m.heads // m.kv_heads == 8 and m.heads % m.kv_heads == 0
