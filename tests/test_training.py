"""Training estimates against the scaling book's worked examples (jax-ml/scaling-book)."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import accelkit as ak
from accelkit import training


def test_scaling_book_llama3_70b_on_a_v5p_pod() -> None:
    # applied-training.md: 6 * 70e9 * 15e12 = 6.3e24 FLOPs; on 8960 v5p (4.59e14) at 40% MFU
    # T = 3.8e6 s, "about 44 days". The book rounds the model to 70e9 parameters.
    t = training.estimate(model="llama-3-70b", tokens=15e12, chip="TPU v5p", n_chips=8960,
                          mfu=0.40)
    assert t.flops == pytest.approx(6.3e24, rel=0.01)
    assert t.seconds == pytest.approx(3.8e6, rel=0.02)
    assert t.days == pytest.approx(44, rel=0.02)
    same_inputs = training.estimate(params=70e9, tokens=15e12, chip="v5p", n_chips=8960, mfu=0.4)
    assert same_inputs.flops == pytest.approx(6.3e24, rel=1e-9)
    assert same_inputs.days == pytest.approx(44, rel=0.01)
    assert t.chip_hours == pytest.approx(t.seconds * 8960 / 3600)
    assert t.usd == pytest.approx(t.chip_hours * 4.2)  # v5p $4.2/chip-hour (catalog)


def test_scaling_book_two_pods_at_50_percent() -> None:
    # training.md: 6.3e24 FLOPs on 18,823 chips at 50% MFU: "approximately 17 days"
    t = training.estimate(params=70e9, tokens=15e12, chip="v5p", n_chips=18_823, mfu=0.5)
    assert t.days == pytest.approx(17, rel=0.02)


def test_scaling_book_data_parallel_critical_batch() -> None:
    # training.md: pure data parallelism on v5p is compute-bound when the per-chip batch exceeds
    # C / W_ici = 4.59e14 / (2 * 9e10) = 2550 tokens (one ICI axis, bf16 gradients).
    t = training.estimate(params=70e9, tokens=15e12, chip="v5p", n_chips=8960, mfu=1.0,
                          batch_tokens=8960 * 1000, interconnect_bytes_per_second=1.8e11)
    assert t.critical_tokens_per_chip == pytest.approx(2550, rel=0.01)
    assert t.communication_bound  # 1000 tokens per chip < 2550
    big = training.estimate(params=70e9, tokens=15e12, chip="v5p", n_chips=8960, mfu=1.0,
                            batch_tokens=8960 * 4000, interconnect_bytes_per_second=1.8e11)
    assert not big.communication_bound and big.communication_seconds == 0
    assert t.communication_seconds > 0 and t.seconds > t.compute_seconds
    no_overlap = training.estimate(params=70e9, tokens=15e12, chip="v5p", n_chips=8960,
                                   mfu=1.0, batch_tokens=8960 * 4000, overlap=False,
                                   interconnect_bytes_per_second=1.8e11)
    steps = 15e12 / (8960 * 4000)
    assert no_overlap.communication_seconds == pytest.approx(
        steps * 2 * 8959 / 8960 * 70e9 * 2 / 1.8e11)


def test_scaling_book_training_memory() -> None:
    # applied-training.md: bf16 params 140 GB + fp32 optimizer state 560 GB + checkpoints
    # 2 * 8192 * 4e6 * 3 * 80 = 15.8 TB, total ~16.5 TB; 171 v5p (96 GB) at minimum; about
    # 1.8 GB per chip on 8960 chips.
    # The book keeps the whole 4M-token batch in flight at once: a micro-batch of 4e6 / 8960
    # tokens per chip.
    kwargs = dict(model="llama-3-70b", tokens=15e12, mfu=0.4, batch_tokens=4e6,
                  weight_bytes_per_param=2, grad_bytes_per_param=0, optimizer_bytes_per_param=8,
                  activation_checkpoints_per_layer=3, microbatch_tokens=4e6 / 8960)
    book_v5p = dataclasses.replace(ak.chips.get("v5p"), hbm_bytes=96e9)
    t = training.estimate(chip=book_v5p, n_chips=8960, **kwargs)
    assert t.total_memory_bytes == pytest.approx(16.5e12, rel=0.01)
    assert t.memory_bytes_per_chip == pytest.approx(1.8e9, rel=0.03)
    assert t.total_memory_bytes / 96e9 == pytest.approx(171, abs=2)  # the book's 171 chips
    assert t.fits
    # At that per-chip micro-batch only the 700 GB of states shard: 8 chips would hold them.
    assert t.min_chips_to_fit == math.ceil(70.55e9 * 10 / (96e9 - t.activation_bytes_per_chip))


def test_activation_memory_is_the_micro_batch_in_flight() -> None:
    # Gradient accumulation: a chip holds one micro-batch's checkpoints, 2 bytes x d_model x
    # layers per token (bf16, one per layer), whatever the global batch.
    m = ak.models.get("llama-3-8b")
    one = training.estimate(model=m, tokens=1e9, chip="v6e", n_chips=8, batch_tokens=1e6)
    assert one.microbatch_tokens == m.seq_len == 8192  # default: one sequence per chip
    assert one.activation_bytes_per_chip == 2 * 4096 * 32 * 8192
    bigger = training.estimate(model=m, tokens=1e9, chip="v6e", n_chips=8, batch_tokens=16e6)
    assert bigger.activation_bytes_per_chip == one.activation_bytes_per_chip
    four = training.estimate(model=m, tokens=1e9, chip="v6e", n_chips=8, batch_tokens=1e6,
                             microbatch_tokens=4 * 8192)
    assert four.activation_bytes_per_chip == pytest.approx(4 * one.activation_bytes_per_chip)
    # The breakdown adds up; states are 16 bytes per parameter over 8 chips.
    parts = one.memory_breakdown_bytes
    assert sum(parts.values()) == pytest.approx(one.memory_bytes_per_chip)
    assert parts["weights"] + parts["gradients"] + parts["optimizer state"] == \
        pytest.approx(16 * m.params / 8)
    # A small global batch caps the micro-batch at its share per chip.
    small = training.estimate(model=m, tokens=1e9, chip="v6e", n_chips=8, batch_tokens=8 * 1024)
    assert small.microbatch_tokens == 1024
    with pytest.raises(ValueError, match="microbatch_tokens"):
        training.estimate(model=m, tokens=1e9, chip="v6e", n_chips=8, batch_tokens=1e6,
                          microbatch_tokens=2e6)
    with pytest.raises(ValueError, match="microbatch_tokens"):
        training.estimate(model=m, tokens=1e9, chip="v6e", microbatch_tokens=0)


def test_fine_tuning_llama3_8b_fits_a_v6e_slice_and_needs_16_v5e() -> None:
    # 8.03e9 params x 16 bytes = 128.5 GB of states; one 8,192-token sequence per chip adds
    # 2.1 GB. Over 8 chips: 16.1 + 2.1 = 18.2 GB, inside a v6e's 32 GiB but over a v5e's 16 GiB.
    # A v5e needs 128.5 / (17.18 - 2.15) = 8.6 -> 9 chips (16 as a power-of-two slice).
    def run(chip: str, n: int) -> training.TrainingEstimate:
        return training.estimate(model="llama-3-8b", tokens=1e9, chip=chip, n_chips=n,
                                 batch_tokens=1e6, mfu=0.3)
    assert run("v6e", 8).fits and not run("v5e", 8).fits
    assert run("v5e", 8).min_chips_to_fit == 9
    assert run("v5e", 16).fits


def test_default_memory_is_16_bytes_per_param_sharded() -> None:
    t = training.estimate(params=1e9, tokens=1e9, chip="H100", n_chips=8)
    assert t.memory_bytes_per_chip == pytest.approx(16e9 / 8)
    unsharded = training.estimate(params=1e9, tokens=1e9, chip="H100", n_chips=8, sharded=False)
    assert unsharded.memory_bytes_per_chip == pytest.approx(16e9)


def test_model_that_does_not_fit_says_so() -> None:
    t = training.estimate(model="llama-3.1-405b", tokens=1e12, chip="H100", n_chips=8)
    assert not t.fits
    assert any("needs" in note for note in t.notes)
    # states shard, one 8,192-token sequence of checkpoints (2 x 16384 x 126 x 8192 B) does not
    states, act = t.params * 16, 2 * 16384 * 126 * 8192
    assert t.min_chips_to_fit == math.ceil(states / (80 * 2**30 - act))


def test_joules_from_published_power_or_none() -> None:
    h100 = training.estimate(params=7e9, tokens=1e12, chip="H100", n_chips=64, mfu=0.5)
    assert h100.joules == pytest.approx(700 * 64 * h100.seconds)
    v5p = training.estimate(params=7e9, tokens=1e12, chip="v5p", n_chips=64, mfu=0.5)
    assert v5p.joules is None and any("power" in n for n in v5p.notes)


def test_repr_and_frozen() -> None:
    t = training.estimate(params=7e9, tokens=1e12, chip="v5e", n_chips=256)
    assert "days" in repr(t) and "<table>" in t._repr_html_()
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.seconds = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"mfu": 0.0}, ValueError, "mfu"), ({"mfu": 1.2}, ValueError, "mfu"),
    ({"mfu": -0.1}, ValueError, "mfu"), ({"mfu": float("nan")}, ValueError, "mfu"),
    ({"tokens": 0}, ValueError, "tokens"), ({"tokens": -1e9}, ValueError, "tokens"),
    ({"tokens": float("nan")}, ValueError, "tokens"), ({"n_chips": 0}, ValueError, "n_chips"),
    ({"n_chips": 2.5}, ValueError, "n_chips"), ({"chip": "v9z"}, ValueError, "unknown chip"),
    ({"model": "llama-9"}, ValueError, "unknown model"), ({"params": 7e9}, ValueError, "one of"),
    ({"batch_tokens": 0}, ValueError, "batch_tokens"), ({"dtype": "int4"}, ValueError, "dtype"),
])
def test_bad_inputs(kwargs: dict, error: type, match: str) -> None:
    base = {"model": "llama-3-8b", "tokens": 1e12, "chip": "v5p", "n_chips": 64, "mfu": 0.4}
    with pytest.raises(error, match=match):
        training.estimate(**{**base, **kwargs})


def test_neither_model_nor_params() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        training.estimate(tokens=1e12, chip="v5p")


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 100_000), mfu=st.floats(0.01, 1.0), tokens=st.floats(1e6, 1e14))
def test_time_scales_inversely_with_chips_and_mfu(n: int, mfu: float, tokens: float) -> None:
    t = training.estimate(params=8e9, tokens=tokens, chip="H100", n_chips=n, mfu=mfu)
    assert t.seconds * n * mfu == pytest.approx(6 * 8e9 * tokens / 989e12, rel=1e-9)


# -- the gradient reduction (published runs' totals: tests/test_published.py) ---------------------

def test_gradient_reduction_comes_from_the_collectives() -> None:
    # training.md (v5p, one wrapped ICI axis, bf16 gradients, MFU 1): C / W_ici =
    # 4.59e14 / (2 * 9e10) = 2550 tokens per chip, times the ring's (n-1)/n for n = 16.
    t = training.estimate(params=70e9, tokens=1e12, chip="v5p", n_chips=16, mfu=1.0,
                          batch_tokens=16 * 4096, sharded=False)
    assert t.gradient_network == "ICI"
    assert t.critical_tokens_per_chip == pytest.approx(2550 * 15 / 16, rel=0.01)
    assert t.critical_tokens_per_chip == pytest.approx(ak.collectives.dp_critical_tokens_per_chip(
        "v5p", over=16, params=70e9))
    assert t.allreduce_seconds_per_step == pytest.approx(
        ak.collectives.all_reduce("v5p", array_bytes=140e9, over=16).seconds)
    # gpus.md: beyond the node the gradients leave through all 8 NICs of each node:
    # C / W_node = 990e12 / 400e9 = 2475 tokens per GPU at 16,384 GPUs.
    g = training.estimate(params=70e9, tokens=1e12, chip="H100", n_chips=16384, mfu=1.0,
                          batch_tokens=16384 * 4096)
    assert g.gradient_network == "NVLink+scale-out"
    bandwidth_only = ak.collectives.dp_critical_tokens_per_chip("H100", over=16384,
                                                               strategy="fsdp")
    assert bandwidth_only == pytest.approx(2475, rel=0.01)
    # ... plus the latency of 2,047 ring steps between nodes, twice (reduce-scatter, all-gather)
    assert bandwidth_only < g.critical_tokens_per_chip < 1.02 * bandwidth_only
    assert any(n.kind == "beyond_domain" and "NVLink+scale-out" in n for n in g.notes)
    # MFU scales the critical number: the backward pass is slower by 1 / MFU.
    slow = training.estimate(params=70e9, tokens=1e12, chip="H100", n_chips=16384, mfu=0.4,
                             batch_tokens=16384 * 4096)
    assert slow.critical_tokens_per_chip == pytest.approx(0.4 * g.critical_tokens_per_chip)
    # 8,960 v5p chips are laid out as slices joined by DCN, no longer refused.
    pod = training.estimate(params=70e9, tokens=1e12, chip="v5p", n_chips=8960,
                            batch_tokens=4e6)
    assert pod.gradient_network == "ICI+DCN" and pod.communication_bound is not None


def test_gpu_jobs_the_collectives_cannot_lay_out_are_refused_by_n_chips() -> None:
    with pytest.raises(ValueError, match="n_chips=12"):
        training.estimate(params=7e9, tokens=1e9, chip="H100", n_chips=12, batch_tokens=1e6)
    with pytest.raises(ak.chips.MissingFigureError):
        training.estimate(params=7e9, tokens=1e9, chip="L4", n_chips=4, batch_tokens=1e6)
    ring = training.estimate(params=7e9, tokens=1e9, chip="L4", n_chips=4, batch_tokens=1e6,
                             interconnect_bytes_per_second=8e9)
    assert ring.allreduce_seconds_per_step == pytest.approx(2 * 3 / 4 * 14e9 / 8e9)


def test_model_flops_counts_attention_as_palm_and_maxtext_do() -> None:
    # PaLM appendix B: 6N + 12·L·H·Q·T per token. Llama-3-8B: L=32, H=32, Q=128, T=8192:
    # 12 * 32 * 32 * 128 * 8192 = 1.288e10 attention FLOPs per token.
    m = ak.models.get("llama-3-8b")
    kw = dict(model=m, tokens=1e9, chip="H100")
    six = training.estimate(**kw)
    palm = training.estimate(**kw, flops_count="palm")
    causal = training.estimate(**kw, flops_count="causal")
    assert six.flops_count == "6nd" and six.attention_flops == 0
    assert six.flops == 6 * m.params * 1e9
    assert palm.attention_flops == pytest.approx(12 * 32 * 32 * 128 * 8192 * 1e9)
    assert palm.flops == pytest.approx(six.flops + palm.attention_flops)
    # causal: T(T+1)/2 pairs instead of T^2
    assert causal.attention_flops == pytest.approx(palm.attention_flops * 8193 / (2 * 8192))
    # ... which is 3x the library's forward attention matmuls (4·Q per pair per head, the
    # softmax's 5 per pair left out) of one 8,192-token sequence, per token
    fwd = next(op for op in m.operations(batch=1, seq_len=8192, phase="forward")
               if op.kind == "attention")
    pairs = 8192 * 8193 / 2
    assert fwd.flops == pytest.approx(32 * (4 * 128 + 5) * 32 * pairs)
    assert causal.attention_flops / 1e9 == pytest.approx(3 * 32 * 4 * 128 * 32 * pairs / 8192)
    # a shorter sequence: attention shrinks linearly in T per token
    short = training.estimate(**kw, flops_count="palm", seq_len=2048)
    assert short.attention_flops == pytest.approx(palm.attention_flops / 4)
    assert palm.days > six.days  # same MFU, more model FLOPs
    with pytest.raises(ValueError, match="flops_count"):
        training.estimate(**kw, flops_count="hfu")
    # Recomputation separates HFU from MFU (PaLM appendix B): full recomputation runs the
    # forward pass twice, 8 of every 6 model FLOPs, at the same step time.
    remat = training.estimate(**kw, flops_count="palm", recompute="full")
    assert remat.seconds == palm.seconds and remat.flops == palm.flops
    assert remat.hardware_flops == pytest.approx(palm.flops * 8 / 6)
    assert remat.hfu == pytest.approx(palm.mfu * 4 / 3) and palm.hfu == palm.mfu
    with pytest.raises(ValueError, match="recompute"):
        training.estimate(**kw, recompute="selective")
    with pytest.raises(ValueError, match="flops_count"):
        training.estimate(params=1e9, tokens=1e9, chip="H100", flops_count="palm")


@pytest.mark.skipif("mixtral-8x7b" not in ak.models.names(),
                    reason="the MoE catalog models arrive with accelkit.parallel's branch")
def test_moe_training_flops_follow_active_params_memory_all_params() -> None:
    # Mixtral 8x7B: 12.9e9 active of 46.7e9 (arXiv:2401.04088). 6 x active x D FLOPs; 16 bytes
    # per parameter of every expert; gradients of every expert reduced, backward of the active
    # ones, so the critical batch per chip is params / active (3.6x) a dense model's.
    m = ak.models.get("mixtral-8x7b")
    t = training.estimate(model=m, tokens=1e12, chip="H100", n_chips=1024, batch_tokens=4e6)
    assert t.flops == pytest.approx(6 * m.active_params * 1e12)
    assert t.params == m.params and t.active_params == m.active_params
    assert t.weight_bytes_per_chip + t.gradient_bytes_per_chip + t.optimizer_bytes_per_chip == \
        pytest.approx(16 * m.params / 1024)
    dense = training.estimate(params=m.params, tokens=1e12, chip="H100", n_chips=1024,
                              batch_tokens=4e6)
    assert t.critical_tokens_per_chip == pytest.approx(
        dense.critical_tokens_per_chip * m.params / m.active_params)
