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
    # The book's step is memory time alone; the tensor-parallel all-reduces come on top.
    d = inference.decode_step(MODEL, BOOK_V5E, n_chips=16, batch=43, context_tokens=8192)
    assert d.seconds - d.communication_seconds == pytest.approx(16e9 / 8.2e11, rel=0.03)
    assert d.communication_seconds > 0 and d.bound == "memory"
    # QPS per chip with 512-token generations: 0.27 (bf16 on 16 chips), without communication
    at_limit = inference.decode_step(MODEL, BOOK_V5E, n_chips=16, batch=limit,
                                     context_tokens=8192)
    qps = limit / (at_limit.seconds - at_limit.communication_seconds) / 16 / 512
    assert qps == pytest.approx(0.27, rel=0.05)


def test_minimum_decode_latency_is_weight_loading() -> None:
    # applied-inference.md: 16-way model parallel, int8 weights: "latency ... from 5.5ms with
    # low batch size"; int4 parameters only, on 4 chips: "about 10ms / step".
    # The book counts weight and KV loading only; ours adds the all-reduces on top.
    d = inference.decode_step(MODEL, BOOK_V5E, n_chips=16, batch=1, context_tokens=2048,
                              weight_dtype="int8", kv_dtype="int8")
    assert d.seconds - d.communication_seconds == pytest.approx(5.5e-3, rel=0.05)
    d4 = inference.decode_step(MODEL, BOOK_V5E, n_chips=4, batch=1, context_tokens=8192,
                               weight_dtype="int4", kv_dtype="int4")
    assert d4.seconds - d4.communication_seconds == pytest.approx(10e-3, rel=0.1)


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
    # The all-reduces grow with the tokens of a step: 8,192 prompt tokens pay
    # 160 x 2 (15/16) 134 MB / (2 x 45 GB/s), about 0.45 s, more than prefill's own compute.
    assert p.communication_seconds > p.compute_seconds
    assert p.tokens_per_second > 15 * d.tokens_per_second
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
@given(batch=st.integers(1, 2000), context=st.integers(0, 100_000),
       n=st.sampled_from([1, 2, 4, 8]))  # the groups that split the 64 heads (others: refused)
def test_decode_step_invariants(batch: int, context: int, n: int) -> None:
    d = inference.decode_step(MODEL, "H100", n_chips=n, batch=batch, context_tokens=context)
    roofline = d.seconds - d.communication_seconds
    assert max(d.compute_seconds, d.memory_seconds) <= roofline * (1 + 1e-12)
    assert roofline <= d.compute_seconds + d.memory_seconds + 1e-15
    assert (d.communication_seconds > 0) == (n > 1)
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
# -- tensor parallelism across chips ---------------------------------------------------------

def test_tensor_parallel_decode_charges_two_all_reduces_per_layer() -> None:
    # Megatron-style TP: each layer all-reduces its attention output and its MLP output,
    # batch x d_model activations each (bf16). On 8 H100s inside the NVLink node:
    m = ak.models.get(MODEL)
    d = inference.decode_step(MODEL, "H100", n_chips=8, batch=64, context_tokens=2048)
    one = ak.collectives.all_reduce("H100", array_bytes=64 * m.d_model * 2, over=8)
    assert d.communication_seconds == pytest.approx(2 * m.layers * one.seconds, rel=1e-12)
    assert d.communication_network == "NVLink"
    assert d.seconds == pytest.approx(
        inference.decode_step(MODEL, "H100", n_chips=8, batch=64, context_tokens=2048).seconds)
    # NCCL ring LL latency: 3.6 us + 2 (n-1) x 0.47 us per all-reduce; the bytes, 2 (n-1)/n x
    # 1 MiB / 450 GB/s = 4.1 us, are comparable: small-batch decode is latency-bound.
    latency = 3.6e-6 + 14 * 0.47e-6
    assert one.latency_seconds == pytest.approx(latency, rel=0.01)
    assert one.latency_seconds > one.bandwidth_seconds
    # One chip: nothing to communicate.
    assert inference.decode_step(MODEL, "H100", batch=64).communication_seconds == 0.0


def test_tensor_parallel_on_a_v5e_axis_is_latency_bound_at_small_batch() -> None:
    # applied-inference.md serves LLaMA 3-70B on 16 v5e; 16 v5e are bought as a 4x4 slice
    # (v5litepod-16; issue 21: a group is the slice it really is), whose axes of 4 do not wrap
    # (v5e wraps only at 16). sharding.md: ~1 us per ICI hop, 3 + 3 hops per phase over the two
    # axes, so one all-reduce of batch-1 activations (16 KB) is 2 x 6 us of hops + 2 x 15/16 x
    # 16 KB / (2 axes x 45 GB/s) of bytes (the same bytes term as one wrapped 16-ring's);
    # 160 of them per step.
    d = inference.decode_step(MODEL, "v5e", n_chips=16, batch=1, context_tokens=2048)
    assert ak.collectives.slice_shape("v5e", 16) == (4, 4)
    hops = 2 * 6 * 1e-6
    bytes_ = 2 * 15 / 16 * 8192 * 2 / (2 * 45e9)
    assert d.communication_seconds == pytest.approx(160 * (hops + bytes_), rel=0.02)
    assert d.communication_network == "ICI"
    big = inference.decode_step(MODEL, "v5e", n_chips=16, batch=256, context_tokens=2048)
    assert big.communication_seconds < 256 * d.communication_seconds / 8  # latency amortised


def test_tensor_parallelism_stops_at_the_scale_up_domain() -> None:
    with pytest.raises(ValueError, match="n_chips=16.*replicas"):
        inference.decode_step(MODEL, "H100", n_chips=16, batch=1)
    with pytest.raises(ValueError, match="n_chips=512"):
        inference.prefill(MODEL, "v5e", n_chips=512)
    # the whole 256-chip slice is inside the domain, but it cannot split 64 heads; 64 can
    with pytest.raises(ValueError, match="n_chips=256 does not divide .* 64 attention heads"):
        inference.decode_step(MODEL, "v5e", n_chips=256, batch=1)
    assert inference.decode_step(MODEL, "v5e", n_chips=64, batch=1).fits
    with pytest.raises(ak.chips.MissingFigureError, match="NVLink"):
        inference.decode_step("llama-3-8b", "L4", n_chips=2)
    with pytest.raises(ValueError, match="n_chips=16"):
        inference.decode_sweep(MODEL, ["H100"], [1, 2], n_chips=16)


# -- attention conventions ---------------------------------------------------------------------

def test_prefill_attention_conventions_against_hand_counts() -> None:
    # Llama-3-8B, one 2,048-token prompt: L=32 layers, H=32 heads of 128, 8 KV heads.
    m = ak.models.get("llama-3-8b")
    T, L, H, Q = 2048, 32, 32, 128
    causal = inference.prefill(m, "H100", prompt_tokens=T)
    full = inference.prefill(m, "H100", prompt_tokens=T, attention_mask="full")
    matmuls = inference.prefill(m, "H100", prompt_tokens=T, attention_mask="full",
                                softmax_flops=False)
    assert causal.attention_mask == "causal" and full.attention_mask == "full"
    assert causal.attention_flops == pytest.approx(L * H * (4 * Q + 5) * T * (T + 1) / 2)
    assert full.attention_flops == pytest.approx(L * H * (4 * Q + 5) * T * T)
    # PaLM's forward share of 12 L H Q T per token is 4 L H Q T: QK^T and A V over all T keys
    assert matmuls.attention_flops == pytest.approx(4 * L * H * Q * T * T)
    assert full.flops - causal.flops == pytest.approx(full.attention_flops
                                                      - causal.attention_flops)
    # The KV-cache write: 2 (K and V) x L x 8 KV heads x 128 x 2 bytes per prompt token
    no_write = inference.prefill(m, "H100", prompt_tokens=T, kv_write=False)
    assert causal.bytes - no_write.bytes == pytest.approx(2 * L * 8 * Q * 2 * T)
    assert not no_write.kv_write and causal.kv_write


def test_decode_attention_conventions() -> None:
    # One new token sees all c + 1 keys under either mask; the softmax adds 5 FLOPs per pair.
    m = ak.models.get("llama-3-8b")
    c, L, H, Q = 4096, 32, 32, 128
    causal = inference.decode_step(m, "H100", batch=4, context_tokens=c)
    full = inference.decode_step(m, "H100", batch=4, context_tokens=c, attention_mask="full")
    assert causal.flops == pytest.approx(full.flops)
    no_softmax = inference.decode_step(m, "H100", batch=4, context_tokens=c, softmax_flops=False)
    assert causal.attention_flops - no_softmax.attention_flops == pytest.approx(
        4 * L * H * 5 * (c + 1))
    no_write = inference.decode_step(m, "H100", batch=4, context_tokens=c, kv_write=False)
    assert causal.bytes - no_write.bytes == pytest.approx(4 * 2 * L * 8 * Q * 2)
    with pytest.raises(ValueError, match="attention_mask"):
        inference.decode_step(m, "H100", attention_mask="sliding")
    with pytest.raises(TypeError, match="kv_write"):
        inference.prefill(m, "H100", kv_write="no")


def test_tp_all_reduces_turn_latency_bound_below_the_books_buffer_size() -> None:
    # inference.md, Appendix C ("Latency bound communications"): with 4.5e10 B/s one-way ICI and
    # ~1 us per hop, an 8-way Megatron collective is latency bound when bytes / 8 / 4.5e10 < 1 us,
    # i.e. below ~360 kB; "BS=16 and D=8192" activations are already latency bound.
    m = ak.models.get(MODEL)
    small = ak.collectives.all_reduce("v5e", array_bytes=16 * m.d_model * 2, over=8)
    big = ak.collectives.all_reduce("v5e", array_bytes=256 * m.d_model * 2, over=8)
    assert 16 * m.d_model * 2 < 360e3 < 256 * m.d_model * 2
    assert small.latency_seconds > small.bandwidth_seconds
    assert big.bandwidth_seconds > big.latency_seconds
    # decode on 8 v5e charges exactly these, twice per layer, on the 4x2 slice 8 v5e are
    small2d = ak.collectives.all_reduce("v5e", array_bytes=16 * m.d_model * 2, over=(4, 2))
    assert small2d.latency_seconds > small2d.bandwidth_seconds
    d = inference.decode_step("llama-3-8b", "v5e", n_chips=8, batch=16, context_tokens=1024)
    per = ak.collectives.all_reduce("v5e", array_bytes=16 * 4096 * 2, over=(4, 2)).seconds
    assert d.communication_seconds == pytest.approx(2 * 32 * per)


# -- mixtures of experts ---------------------------------------------------------------------

@pytest.mark.skipif("mixtral-8x7b" not in ak.models.names(),
                    reason="the MoE catalog models arrive with accelkit.parallel's branch")
def test_moe_decode_reads_all_experts_but_computes_with_the_active_ones() -> None:
    # Mixtral 8x7B (46.7e9 total, 12.9e9 active; Jiang et al. 2024, arXiv:2401.04088): memory
    # holds every expert, a token's FLOPs follow the two it is routed to. At batch 1 a step
    # reads the two routed experts per layer; by batch 32 every expert (1 - (6/8)^32 ~ 1).
    m = ak.models.get("mixtral-8x7b")
    one = inference.decode_step(m, "H100", n_chips=2, batch=1, context_tokens=0)
    full = inference.decode_step(m, "H100", n_chips=2, batch=32, context_tokens=0)
    assert one.weight_bytes == full.weight_bytes == pytest.approx(2 * m.params)
    assert one.flops == pytest.approx(2 * m.active_params, rel=0.02)
    assert one.bytes < 0.4 * one.weight_bytes < full.bytes
    assert full.bytes == pytest.approx(2 * m.params, rel=0.03)
    # the decode step is exact at every batch, not a line through batch 1 and 2
    for b in (1, 7, 32, 300):
        ops = m.operations(batch=b, phase="decode", context_tokens=0)
        assert inference.decode_step(m, "H100", 2, b, 0).bytes == pytest.approx(
            sum(op.bytes for op in ops))
    sweep = inference.decode_sweep(m, ["H100"], [1, 7, 32, 300], n_chips=2, context_tokens=0)
    for j, b in enumerate((1, 7, 32, 300)):
        assert sweep.seconds[0, j] == pytest.approx(
            inference.decode_step(m, "H100", 2, b, 0).seconds, rel=1e-12)


@pytest.mark.skipif("mixtral-8x7b" not in ak.models.names(),
                    reason="the MoE catalog models arrive with accelkit.parallel's branch")
def test_moe_matmuls_turn_compute_bound_at_ridge_times_experts_over_k() -> None:
    # inference.md, worked problem 5 (an MoE with E experts, k per token): the expert weights
    # are read once for the whole batch but each token uses k of E, so the batch must be about
    # E/k times the dense one, ridge x E / k = 295 x 8 / 2 ~ 1,180 on H100 for Mixtral.
    m = ak.models.get("mixtral-8x7b")
    ridge = ak.chips.get("H100").ridge_flops_per_byte()
    b = inference.compute_bound_batch(m, "H100", kinds=("matmul",))
    assert b == pytest.approx(ridge * 8 / 2, rel=0.05)
    dense = inference.compute_bound_batch("llama-3-70b", "H100", kinds=("matmul",))
    assert b > 3 * dense


@pytest.mark.skipif("mixtral-8x7b" not in ak.models.names(),
                    reason="the MoE catalog models arrive with accelkit.parallel's branch")
def test_moe_serving_pays_expert_parallel_all_to_alls() -> None:
    # Routed experts spread over the group: per MoE layer a dispatch and a combine all-to-all of
    # tokens x k x d_model activations; attention's all-reduce stays (Mixtral: no shared
    # experts, every layer MoE).
    m = ak.models.get("mixtral-8x7b")
    d = inference.decode_step(m, "H100", n_chips=8, batch=64, context_tokens=1024)
    act = 64 * m.d_model * 2
    a2a = ak.collectives.all_to_all("H100", array_bytes=act * m.experts_per_token, over=8)
    ar = ak.collectives.all_reduce("H100", array_bytes=act, over=8)
    assert d.communication_seconds == pytest.approx(m.layers * (2 * a2a.seconds + ar.seconds))
    # DeepSeek-V3 on a v5p slice: 671e9 parameters in memory, 37e9 active per token
    ds = ak.models.get("deepseek-v3")
    v = inference.decode_step(ds, "v5p", n_chips=64, batch=1, context_tokens=0)
    assert v.weight_bytes == pytest.approx(2 * ds.params) and v.fits
    assert v.flops == pytest.approx(2 * ds.active_params, rel=0.05)
    assert v.communication_network == "ICI"


# -- capacity planning -----------------------------------------------------------------------------

def _brute_force_plan(model: str, chip: str, users: int, target: float, context: int,
                      group_sizes: list[int]) -> tuple[int, int, int]:
    """Cheapest (n_chips, chips_per_replica, batch_per_replica) by trying EVERY batch from 1 to
    ``users`` with decode_step at each group size: no bisection, no monotonicity assumed."""
    best = None
    for tp in group_sizes:
        ok = [b for b in range(1, users + 1)
              if (s := inference.decode_step(model, chip, tp, b, context)).fits
              and s.seconds <= target]
        if not ok:
            continue
        largest = max(ok)
        replicas = -(-users // largest)
        spread = -(-users // replicas)
        key = (replicas * tp, inference.decode_step(model, chip, tp, spread, context).seconds, tp)
        if best is None or key < best[0]:
            best = (key, tp, spread)
    assert best is not None
    return best[0][0], best[1], best[2]


@pytest.mark.parametrize("model, chip, groups", [
    ("llama-3-8b", "H100", [1, 2, 4, 8]),               # 8-GPU NVLink node
    ("llama-3-8b", "TPU v5e", [1, 2, 4, 8, 16, 32]),    # 32 heads, a 256-chip slice
    ("llama-3-70b", "H100", [1, 2, 4, 8]),
    ("llama-3-70b", "TPU v5e", [1, 2, 4, 8, 16, 32, 64]),
    ("mixtral-8x7b", "H100", [1, 2, 4, 8]),             # MoE: steps not affine in the batch
])
def test_capacity_matches_a_brute_force_search_over_decode_steps(model, chip, groups) -> None:
    users, target, context = 1000, 0.05, 2048
    plan = ak.capacity.plan(model, chip, concurrent_users=users, max_seconds_per_token=target,
                              context_tokens=context)
    n, tp, batch = _brute_force_plan(model, chip, users, target, context, groups)
    assert (plan.n_chips, plan.chips_per_replica, plan.batch_per_replica) == (n, tp, batch)
    assert plan.replicas * plan.chips_per_replica == plan.n_chips
    assert plan.replicas * plan.batch_per_replica >= users
    assert (plan.replicas - 1) * plan.batch_per_replica < users
    step = inference.decode_step(model, chip, tp, batch, context)
    assert plan.seconds_per_token == pytest.approx(step.seconds, rel=1e-12)
    assert plan.seconds_per_token <= target and step.fits
    assert plan.first_token_seconds == pytest.approx(
        inference.prefill(model, chip, tp, batch, context).seconds, rel=1e-12)
    price = ak.chips.get(chip).usd_per_hour
    assert plan.usd_per_hour == pytest.approx(price * n)
    tokens_per_hour = users / plan.seconds_per_token * 3600
    assert plan.usd_per_million_tokens == pytest.approx(plan.usd_per_hour / tokens_per_hour * 1e6)
    # what bound the batch: one more sequence breaks that limit (and not the other)
    limit = plan.max_batch_per_replica
    over = inference.decode_step(model, chip, tp, limit + 1, context)
    if plan.bound == "users":
        assert plan.replicas == 1 and plan.batch_per_replica == users <= limit
    elif plan.bound == "memory":
        assert not over.fits
    else:
        assert plan.bound == "latency" and over.fits and over.seconds > target


@pytest.mark.parametrize("model, chip, weight, overhead", [
    ("llama-3-8b", "TPU v5e", "bf16", 0.0),
    ("llama-3-70b", "H100", "fp8", 0.0),
    ("llama-2-7b", "L4", "int8", 7e-6),
    ("mixtral-8x7b", "H100", "bf16", 7e-6),        # MoE: not affine in the batch
])
def test_capacity_plan_is_priced_by_decode_step_exactly(model, chip, weight, overhead) -> None:
    # the plan's step is decode_step's own float (plans are compared exactly, ties included),
    # and its batch limit is exact under the same rule, per-operation overhead included
    kv = ak.dtypes.activation_dtype(weight)
    plan = ak.capacity.plan(model, chip, concurrent_users=100_000, max_seconds_per_token=0.03,
                              context_tokens=1500, weight_dtype=weight,
                              overhead_seconds=overhead or None)
    tp = plan.chips_per_replica
    step = inference.decode_step(model, chip, tp, plan.batch_per_replica, 1500, weight, kv,
                                 "bf16", overhead_seconds=overhead or None)
    assert plan.seconds_per_token == step.seconds
    limit = inference.decode_step(model, chip, tp, plan.max_batch_per_replica, 1500, weight, kv,
                                  "bf16", overhead_seconds=overhead or None)
    over = inference.decode_step(model, chip, tp, plan.max_batch_per_replica + 1, 1500, weight,
                                 kv, "bf16", overhead_seconds=overhead or None)
    assert limit.fits and limit.seconds <= 0.03
    assert not over.fits or over.seconds > 0.03


def test_capacity_bounds_users_memory_and_latency() -> None:
    few = ak.capacity.plan("llama-3-8b", "H100", concurrent_users=3, max_seconds_per_token=0.05)
    assert (few.replicas, few.chips_per_replica, few.batch_per_replica, few.bound) == (1, 1, 3,
                                                                                        "users")
    # a loose target leaves HBM to bind; a tight one, latency
    loose = ak.capacity.plan("llama-3-8b", "H100", concurrent_users=10_000,
                               max_seconds_per_token=1.0, context_tokens=8192)
    assert loose.bound == "memory"
    assert loose.max_batch_per_replica == inference.max_batch("llama-3-8b", "H100",
                                                              loose.chips_per_replica, 8192)
    tight = ak.capacity.plan("llama-3-8b", "H100", concurrent_users=10_000,
                               max_seconds_per_token=0.008, context_tokens=512)
    assert tight.bound == "latency"
    assert tight.max_batch_per_replica == inference.best_batch(
        "llama-3-8b", "H100", tight.chips_per_replica, 512, 0.008).batch


def test_capacity_without_a_price_and_with_one_given() -> None:
    plan = ak.capacity.plan("llama-3-8b", "H100", concurrent_users=100,
                              max_seconds_per_token=0.05, usd_per_hour=2.0)
    assert plan.usd_per_hour == pytest.approx(2.0 * plan.n_chips)
    unpriced = dataclasses.replace(ak.chips.get("H100"), usd_per_hour=None)
    p = ak.capacity.plan("llama-3-8b", unpriced, concurrent_users=100,
                           max_seconds_per_token=0.05)
    assert p.usd_per_hour is None and p.usd_per_million_tokens is None
    assert p.n_chips == plan.n_chips  # fewest chips still decides


def test_tensor_parallel_sizes_stop_at_the_domain_and_the_heads() -> None:
    assert inference.tensor_parallel_sizes("llama-3-8b", "H100") == (1, 2, 4, 8)
    assert inference.tensor_parallel_sizes("llama-3-8b", "TPU v5e") == (1, 2, 4, 8, 16, 32)
    assert inference.tensor_parallel_sizes("llama-3-70b", "TPU v5e") == (1, 2, 4, 8, 16, 32, 64)
    assert inference.tensor_parallel_sizes("llama-3-8b", "L4") == (1,)  # no NVLink


def test_capacity_refuses_what_cannot_be_served() -> None:
    with pytest.raises(ValueError, match=r"llama-3-70b.*L4"):
        ak.capacity.plan("llama-3-70b", "L4", concurrent_users=10, max_seconds_per_token=0.05)
    with pytest.raises(ValueError, match="max_seconds_per_token"):
        ak.capacity.plan("llama-3-8b", "H100", concurrent_users=10,
                           max_seconds_per_token=1e-4)


@pytest.mark.parametrize("kwargs, name", [
    ({"concurrent_users": 0}, "concurrent_users"),
    ({"concurrent_users": 2.5}, "concurrent_users"),
    ({"max_seconds_per_token": 0.0}, "max_seconds_per_token"),
    ({"max_seconds_per_token": -1.0}, "max_seconds_per_token"),
    ({"max_seconds_per_token": float("nan")}, "max_seconds_per_token"),
    ({"context_tokens": -1}, "context_tokens"),
    ({"prompt_tokens": 0}, "prompt_tokens"),
    ({"usd_per_hour": 0.0}, "usd_per_hour"),
])
def test_capacity_bad_input_names_the_argument(kwargs, name) -> None:
    args = {"concurrent_users": 100, "max_seconds_per_token": 0.05} | kwargs
    with pytest.raises((ValueError, TypeError), match=name):
        ak.capacity.plan("llama-3-8b", "H100", **args)


def test_capacity_plan_is_frozen() -> None:
    plan = ak.capacity.plan("llama-3-8b", "TPU v5e", concurrent_users=10,
                              max_seconds_per_token=0.05)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.replicas = 1  # type: ignore[misc]
    assert "1 replica x 2 chips" in repr(plan)


# -- per-operation overhead in serving -------------------------------------------------------------

def test_decode_overhead_follows_roofline_operations_time_on_one_chip() -> None:
    m = ak.models.get("llama-3-8b")
    ops = m.operations(batch=1, phase="decode", context_tokens=2048)
    plain = inference.decode_step(m, "H100", batch=1, context_tokens=2048)
    timed = inference.decode_step(m, "H100", batch=1, context_tokens=2048, overhead=True)
    reference = ak.roofline.operations_time("H100", ops, dtype="bf16", overhead=True)
    assert timed.seconds == pytest.approx(reference.seconds, rel=1e-9)
    assert plain.seconds == pytest.approx(reference.device_seconds, rel=1e-9)
    assert timed.overhead_seconds == pytest.approx(reference.seconds - reference.device_seconds)
    assert timed.n_operations == reference.n_operations
    assert plain.overhead_seconds == 0.0 and plain.bound == "memory"


def test_batch_one_decode_of_a_small_model_on_a_fast_chip_is_overhead_bound() -> None:
    step = inference.decode_step("llama-3-8b", "B200", batch=1, context_tokens=128, overhead=True)
    fixed = ak.roofline.per_step_overhead_seconds(step.n_operations)
    assert fixed > max(step.compute_seconds, step.memory_seconds)
    assert step.bound == "overhead"
    # a big batch makes the kernels long enough that the fixed cost stops mattering
    big = inference.decode_step("llama-3-8b", "B200", batch=256, context_tokens=128,
                                overhead=True)
    assert big.bound != "overhead"
    assert big.overhead_seconds < step.overhead_seconds


def test_prefill_overhead_and_its_override() -> None:
    plain = inference.prefill("llama-3-8b", "H100", prompt_tokens=16)
    zero = inference.prefill("llama-3-8b", "H100", prompt_tokens=16, overhead_seconds=0.0)
    more = inference.prefill("llama-3-8b", "H100", prompt_tokens=16, overhead_seconds=1e-4)
    assert zero.seconds == plain.seconds
    assert more.seconds >= plain.seconds + 0 and more.seconds >= more.n_operations * 1e-4
    with pytest.raises(TypeError, match="overhead"):
        inference.decode_step("llama-3-8b", "H100", overhead="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="overhead_seconds"):
        inference.decode_step("llama-3-8b", "H100", overhead_seconds=-1.0)


def test_capacity_with_overhead_reports_it_and_never_needs_fewer_chips() -> None:
    args = {"concurrent_users": 1000, "max_seconds_per_token": 0.05}
    plain = ak.capacity.plan("llama-3-8b", "H100", **args)
    timed = ak.capacity.plan("llama-3-8b", "H100", overhead=True, **args)
    assert timed.overhead_seconds > 0 and plain.overhead_seconds == 0
    assert timed.n_chips >= plain.n_chips


# -- groups the model cannot split, and the KV cache beyond its KV heads ------------------------

@pytest.mark.parametrize("call", [
    lambda **kw: inference.decode_step("llama-3-70b", "H100", n_chips=7, **kw),
    lambda **kw: inference.prefill("llama-3-70b", "H100", n_chips=7, **kw),
    lambda **kw: inference.max_batch("llama-3-70b", "H100", n_chips=7, **kw),
    lambda **kw: inference.best_batch("llama-3-70b", "H100", n_chips=7, **kw),
    lambda **kw: inference.compute_bound_batch("llama-3-70b", "H100", n_chips=7, **kw),
    lambda **kw: inference.decode_sweep("llama-3-70b", ["H100"], [1, 2], n_chips=7, **kw),
])
@pytest.mark.parametrize("split", inference.KV_CACHE_SPLITS)
def test_a_group_that_cannot_split_the_heads_is_refused_everywhere(call, split) -> None:
    # 7 H100s cannot split Llama 3 70B's 64 attention heads, under either cache split
    with pytest.raises(ValueError, match="n_chips=7 does not divide llama-3-70b's 64"):
        call(kv_cache_split=split)


def test_capacity_only_considers_groups_the_model_can_split() -> None:
    m = ak.models.get("llama-3-70b")
    for split in inference.KV_CACHE_SPLITS:
        sizes = inference.tensor_parallel_sizes(m, "TPU v5e", kv_cache_split=split)
        assert sizes == (1, 2, 4, 8, 16, 32, 64)  # 128 cannot split 64 heads
        plan = ak.capacity.plan(m, "TPU v5e", concurrent_users=100, max_seconds_per_token=0.1,
                                kv_cache_split=split)
        assert m.heads % plan.chips_per_replica == 0
        assert {tp for tp, _, _ in plan.candidates} <= set(sizes)


def test_heads_split_replicates_each_kv_head_beyond_the_kv_heads() -> None:
    m = ak.models.get("llama-3-70b")  # 8 KV heads
    assert [inference.kv_cache_copies(m, n, "heads") for n in (1, 4, 8, 16, 64)] == [1, 1, 1, 2, 8]
    assert [inference.kv_cache_copies(m, n, "even") for n in (1, 8, 16, 64)] == [1, 1, 1, 1]
    even = inference.decode_step(m, "TPU v5e", 16, 32, 8192)
    heads = inference.decode_step(m, "TPU v5e", 16, 32, 8192, kv_cache_split="heads")
    assert (even.kv_cache_copies, heads.kv_cache_copies) == (1, 2)
    assert heads.kv_cache_bytes == 2 * even.kv_cache_bytes
    # the second copy is read (all 8,193 tokens) and written (the new one) too, nothing else
    cache = 32 * (8193 + 1) * m.kv_cache_bytes_per_token("bf16")
    assert heads.bytes - even.bytes == pytest.approx(cache)
    assert heads.flops == even.flops and heads.seconds > even.seconds
    # up to the KV heads the two agree
    assert inference.decode_step(m, "H100", 8, 32, 8192, kv_cache_split="heads") == \
        inference.decode_step(m, "H100", 8, 32, 8192)
    # and memory counts every copy, in max_batch and in capacity's plans alike
    limit = inference.max_batch(m, "TPU v5e", 16, 8192, kv_cache_split="heads")
    assert inference.decode_step(m, "TPU v5e", 16, limit, 8192, kv_cache_split="heads").fits
    assert not inference.decode_step(m, "TPU v5e", 16, limit + 1, 8192,
                                     kv_cache_split="heads").fits
    assert limit < inference.max_batch(m, "TPU v5e", 16, 8192)


def test_heads_split_refuses_a_group_neither_dividing_nor_a_multiple_of_the_kv_heads() -> None:
    # DeepSeek-V3's latent is one cache shared by every head: each chip holds all of it
    assert inference.kv_cache_copies("deepseek-v3", 8, "heads") == 8
    with pytest.raises(ValueError, match="kv_cache_split"):
        inference.kv_cache_copies("llama-3-70b", 16, "rows")
    toy = dataclasses.replace(ak.models.get("llama-3-8b"), name="toy", heads=24, kv_heads=8)
    assert inference.kv_cache_copies(toy, 12, "even") == 1  # 12 divides its 24 heads
    with pytest.raises(ValueError, match="n_chips=12 can neither split toy's 8 KV heads"):
        inference.kv_cache_copies(toy, 12, "heads")
    with pytest.raises(ValueError, match="n_chips=12 can neither"):
        inference.decode_step(toy, "TPU v5e", 12, kv_cache_split="heads")
