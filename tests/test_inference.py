"""Inference estimates against the scaling book's TPU v5e serving example.

Source: jax-ml/scaling-book applied-inference.md ("Serving LLaMA 3-70B on TPUs"), which uses
LLaMA 3-70B on TPU v5e with 1.97e14 bf16 FLOP/s, 8.2e11 B/s and 16e9 bytes of HBM per chip.
Tests feed those inputs by replacing the catalog's v5e figures (819 GB/s, 16 GiB).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import accelkit as ak
from accelkit import inference

BOOK_V5E = dataclasses.replace(ak.chips.get("TPU v5e"), hbm_bytes=16e9,
                               hbm_bytes_per_second=8.2e11)
MODEL = "llama-3-70b"


def test_v5e_ridge_is_240() -> None:
    # roofline.md: 1.97e14 / 8.2e11 = 240 FLOPs/byte (the catalog's 819 GB/s gives 240.5)
    assert ak.chips.get("v5e").ridge_flops_per_byte("bf16") == pytest.approx(240, rel=0.01)
    assert BOOK_V5E.ridge_flops_per_byte("bf16") == pytest.approx(240, rel=0.01)


@pytest.mark.parametrize("weight_dtype, published", [("bf16", 240), ("int8", 120), ("int4", 60)])
def test_decode_matmuls_turn_compute_bound_at_the_published_batch(weight_dtype: str,
                                                                  published: int) -> None:
    # applied-inference.md: "FFW blocks are compute bound when B > 240"; 120 for int8 and 60
    # for int4 weights with bf16 FLOPs. We also count activation traffic, which the book's
    # B << D, F rule ignores, so ours sits ~4% higher.
    b = inference.compute_bound_batch(MODEL, BOOK_V5E, weight_dtype=weight_dtype,
                                      kinds=("matmul",))
    assert b == pytest.approx(published, rel=0.05)
    assert b >= published


def test_kv_cache_loading_keeps_long_context_decode_memory_bound() -> None:
    # applied-inference.md: at long context, KV loading keeps decode memory-bound.
    assert inference.compute_bound_batch(MODEL, "v5e", context_tokens=32_768) == float("inf")
    d = inference.decode_step(MODEL, "v5e", n_chips=64, batch=256, context_tokens=32_768)
    assert d.bound == "memory" and d.kv_cache_bytes > d.weight_bytes


def test_full_hbm_decode_step_is_19ms() -> None:
    # applied-inference.md: with weights + KV caches filling 16 chips, a step takes
    # "16GB / 8.2e11 = 19ms"; bf16, 8k context, 43 KV caches fit beside 140 GB of weights.
    limit = inference.max_batch(MODEL, BOOK_V5E, n_chips=16, context_tokens=8192)
    assert limit == pytest.approx(43, abs=1)
    d = inference.decode_step(MODEL, BOOK_V5E, n_chips=16, batch=43, context_tokens=8192)
    assert d.seconds == pytest.approx(16e9 / 8.2e11, rel=0.03)
    assert d.bound == "memory"
    # QPS per chip with 512-token generations: 0.27 (bf16 on 16 chips)
    at_limit = inference.decode_step(MODEL, BOOK_V5E, n_chips=16, batch=limit,
                                     context_tokens=8192)
    assert at_limit.tokens_per_second_per_chip / 512 == pytest.approx(0.27, rel=0.05)


def test_minimum_decode_latency_is_weight_loading() -> None:
    # applied-inference.md: 16-way model parallel, int8 weights: "latency ... from 5.5ms with
    # low batch size"; int4 parameters only, on 4 chips: "about 10ms / step".
    d = inference.decode_step(MODEL, BOOK_V5E, n_chips=16, batch=1, context_tokens=2048,
                              weight_dtype="int8", kv_dtype="int8")
    assert d.seconds == pytest.approx(5.5e-3, rel=0.05)
    d4 = inference.decode_step(MODEL, BOOK_V5E, n_chips=4, batch=1, context_tokens=8192,
                               weight_dtype="int4", kv_dtype="int4")
    assert d4.seconds == pytest.approx(10e-3, rel=0.1)


def test_kv_cache_sizes_and_chips_needed() -> None:
    # applied-inference.md: int8 KV cache is 2*8*128*80 = 160 KiB per token, 5.3 GB per 32k
    # sequence, 1.3 TB for batch 240, so (70e9 + 1.3e12) / 16e9 = 86 v5e chips.
    assert inference.kv_cache_bytes(MODEL, 1, 32_768, "int8") == pytest.approx(5.3e9, rel=0.02)
    d = inference.decode_step(MODEL, BOOK_V5E, n_chips=16, batch=240, context_tokens=32_768,
                              weight_dtype="int8", kv_dtype="int8")
    assert d.kv_cache_bytes == pytest.approx(1.3e12, rel=0.02)
    assert d.min_chips == pytest.approx(86, abs=2)
    # bf16 weights need 140e9 / 16e9 = 8.75 chips; int8 4.38
    assert ak.models.get(MODEL).weight_bytes("bf16") / 16e9 == pytest.approx(8.75, rel=0.01)
    assert ak.models.get(MODEL).weight_bytes("int8") / 16e9 == pytest.approx(4.38, rel=0.01)


def test_prefill_mlp_flops_and_time() -> None:
    # applied-inference.md: prefill MLP FLOPs = batch * 2 * 3 * D^2 * 3.5 * L, "26e12" for 240
    # tokens (the formula gives 2.71e13); on a v5e 4x2 in int8 "8ms minimum at 100% MFU".
    ops = ak.models.get(MODEL).operations(batch=1, seq_len=240, phase="prefill", dtype="int8")
    mlp = sum(op.flops for op in ops if op.name.startswith("mlp_") and op.kind == "matmul")
    assert mlp == pytest.approx(240 * 2 * 3 * 8192**2 * 3.5 * 80, rel=1e-9)
    assert mlp == pytest.approx(26e12, rel=0.05)
    assert mlp / (8 * BOOK_V5E.peak_flops("int8")) == pytest.approx(8e-3, rel=0.1)


def test_prefill_compute_bound_decode_memory_bound() -> None:
    p = inference.prefill(MODEL, "v5e", n_chips=16, batch=1, prompt_tokens=8192)
    d = inference.decode_step(MODEL, "v5e", n_chips=16, batch=8, context_tokens=8192)
    assert p.bound == "compute" and d.bound == "memory"
    assert p.tokens_per_second > 25 * d.tokens_per_second
    assert p.kv_cache_bytes == pytest.approx(8192 * 327_680)


def test_decode_throughput_rises_with_batch_then_latency_grows() -> None:
    small = inference.decode_step(MODEL, "H100", n_chips=8, batch=1, context_tokens=1024)
    big = inference.decode_step(MODEL, "H100", n_chips=8, batch=64, context_tokens=1024)
    assert big.tokens_per_second > 20 * small.tokens_per_second
    assert big.seconds > small.seconds
    assert big.usd_per_million_tokens < small.usd_per_million_tokens
    assert small.usd_per_million_tokens == pytest.approx(
        10.8 * 8 * small.seconds / 3600 / 1 * 1e6)  # H100 $10.8/h in the catalog


def test_best_batch_under_a_latency_target() -> None:
    best = inference.best_batch(MODEL, "v5e", n_chips=16, context_tokens=4096,
                                max_seconds_per_token=0.015)
    assert best.seconds <= 0.015 and best.fits
    over = inference.decode_step(MODEL, "v5e", n_chips=16, batch=best.batch + 1,
                                 context_tokens=4096)
    assert over.seconds > 0.015 or not over.fits
    with pytest.raises(ValueError, match="even batch 1"):
        inference.best_batch(MODEL, "v5e", n_chips=16, context_tokens=4096,
                             max_seconds_per_token=0.001)


def test_model_that_does_not_fit() -> None:
    d = inference.decode_step("llama-3.1-405b", "v5e", n_chips=4, batch=1, context_tokens=2048)
    assert not d.fits and "does not fit" in d.message and d.min_chips > 4
    with pytest.raises(ValueError, match="does not fit.*at least"):
        inference.decode_step("llama-3.1-405b", "v5e", n_chips=4, batch=1, context_tokens=2048,
                              require_fit=True)
    with pytest.raises(ValueError, match="does not fit"):
        inference.best_batch("llama-3.1-405b", "v5e", n_chips=4, context_tokens=2048)
    assert inference.max_batch("llama-3.1-405b", "v5e", n_chips=4) == 0


def test_sweep_matches_single_steps() -> None:
    names = ["v5e", "v5p", "H100", "B200"]
    batches = np.array([1, 7, 64, 300])
    s = inference.decode_sweep(MODEL, names, batches, n_chips=8, context_tokens=4096)
    assert s.seconds.shape == (4, 4)
    for i, name in enumerate(names):
        for j, b in enumerate(batches):
            d = inference.decode_step(MODEL, name, n_chips=8, batch=int(b), context_tokens=4096)
            assert s.seconds[i, j] == pytest.approx(d.seconds, rel=1e-12)
            assert s.fits[i, j] == d.fits
            assert s.compute_bound[i, j] == (d.bound == "compute")


@pytest.mark.parametrize("kwargs, error", [
    ({"batch": 0}, ValueError), ({"batch": -3}, ValueError), ({"n_chips": 0}, ValueError),
    ({"context_tokens": -1}, ValueError), ({"batch": float("nan")}, ValueError),
    ({"chip": "TPU v99"}, ValueError), ({"model": "gpt-5"}, ValueError),
    ({"model": "resnet-50"}, ValueError), ({"weight_dtype": "fp64"}, ValueError),
    ({"compute_dtype": "fp8", "chip": "v5e"}, ValueError), ({"batch": "4"}, TypeError),
])
def test_bad_decode_inputs(kwargs: dict, error: type) -> None:
    base = {"model": MODEL, "chip": "v5e", "n_chips": 16, "batch": 4, "context_tokens": 1024}
    with pytest.raises(error):
        inference.decode_step(**{**base, **kwargs})


@pytest.mark.parametrize("kwargs", [{"prompt_tokens": 0}, {"batch": 0}, {"weight_dtype": "int3"},
                                    {"chip": "nope"}])
def test_bad_prefill_inputs(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        inference.prefill(**{"model": MODEL, "chip": "v5e", "n_chips": 16, **kwargs})


def test_bad_sweep_inputs() -> None:
    with pytest.raises(ValueError):
        inference.decode_sweep(MODEL, ["v5e"], [0, 1])
    with pytest.raises(ValueError):
        inference.decode_sweep(MODEL, [], [1])
    with pytest.raises(ValueError):
        inference.decode_sweep(MODEL, ["v5e"], [1.5])


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 2000), context=st.integers(0, 100_000), n=st.integers(1, 64))
def test_decode_step_invariants(batch: int, context: int, n: int) -> None:
    d = inference.decode_step(MODEL, "H100", n_chips=n, batch=batch, context_tokens=context)
    assert max(d.compute_seconds, d.memory_seconds) <= d.seconds * (1 + 1e-12)
    assert d.seconds <= d.compute_seconds + d.memory_seconds + 1e-15
    m = ak.models.get(MODEL)
    # every weight is read except the input embedding table, of which only `batch` rows are
    assert d.bytes >= d.weight_bytes - m.vocab * m.d_model * 2
    assert d.tokens_per_second == pytest.approx(batch / d.seconds)


@pytest.mark.parametrize("context", [0, 1, 2048, 32768])
def test_max_batch_is_exactly_the_edge_of_decode_steps_fits(context) -> None:
    """max_batch is exact (not a sampled grid): decode_step fits at it and not one past it,
    down to context 0 (the first generated token), which decode_step accepts too."""
    limit = inference.max_batch(MODEL, BOOK_V5E, n_chips=16, context_tokens=context)
    assert limit >= 1
    assert inference.decode_step(MODEL, BOOK_V5E, 16, limit, context).fits
    assert not inference.decode_step(MODEL, BOOK_V5E, 16, limit + 1, context).fits
