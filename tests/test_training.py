"""Training estimates against the scaling book's worked examples (jax-ml/scaling-book)."""

from __future__ import annotations

import dataclasses

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
    kwargs = dict(model="llama-3-70b", tokens=15e12, mfu=0.4, batch_tokens=4e6,
                  weight_bytes_per_param=2, grad_bytes_per_param=0, optimizer_bytes_per_param=8,
                  activation_checkpoints_per_layer=3)
    book_v5p = dataclasses.replace(ak.chips.get("v5p"), hbm_bytes=96e9)
    t = training.estimate(chip=book_v5p, n_chips=8960, **kwargs)
    assert t.total_memory_bytes == pytest.approx(16.5e12, rel=0.01)
    assert t.memory_bytes_per_chip == pytest.approx(1.8e9, rel=0.03)
    assert t.min_chips_to_fit == pytest.approx(171, abs=2)
    assert t.fits


def test_default_memory_is_16_bytes_per_param_sharded() -> None:
    t = training.estimate(params=1e9, tokens=1e9, chip="H100", n_chips=8)
    assert t.memory_bytes_per_chip == pytest.approx(16e9 / 8)
    unsharded = training.estimate(params=1e9, tokens=1e9, chip="H100", n_chips=8, sharded=False)
    assert unsharded.memory_bytes_per_chip == pytest.approx(16e9)


def test_model_that_does_not_fit_says_so() -> None:
    t = training.estimate(model="llama-3.1-405b", tokens=1e12, chip="H100", n_chips=8)
    assert not t.fits
    assert any("needs" in note for note in t.notes)
    assert t.min_chips_to_fit == pytest.approx(405.85e9 * 16 / 80 / 2**30, abs=1)


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


# -- network choice, the all-reduce sweep and published runs ---------------------------------------

def test_network_bandwidth_uses_infiniband_only_for_gpus_beyond_their_nvlink_node() -> None:
    h100, v5p = ak.chips.get("H100"), ak.chips.get("v5p")
    assert h100.max_domain_chips == 8
    assert training.network_bandwidth(h100, 8, "infiniband") is None  # inside the node
    assert training.network_bandwidth(h100, 9, "infiniband") == 100e9  # 400 Gb/s NDR, both ways
    assert training.network_bandwidth(h100, 9, "catalog") is None
    assert training.network_bandwidth(v5p, 16384, "infiniband") is None  # TPUs keep ICI


def test_communication_ratios_match_the_ring_all_reduce_closed_form() -> None:
    # allreduce / backward = [2(n−1)/n · P · g / W] / [4 · P · (B/n) / (peak · MFU)]
    #                      = (n − 1) · g · peak · MFU / (2 · W · B), g = 2 bytes (bf16 gradients)
    h100 = ak.chips.get("H100")
    ratios = training.communication_ratios("llama-3-70b", h100, [1, 8, 64, 1024],
                                           batch_tokens=4e6, mfu=0.4, network="infiniband")
    assert ratios[1] == 0.0  # one chip: no all-reduce
    for n in (8, 64, 1024):
        bandwidth = h100.interconnect_bytes_per_second if n <= 8 else 100e9
        expected = (n - 1) * 2 * h100.peak_flops("bf16") * 0.4 / (2 * bandwidth * 4e6)
        assert ratios[n] == pytest.approx(expected, rel=1e-12)


def test_compare_published_uses_the_most_direct_reported_unit() -> None:
    by_name = {r.name: training.compare_published(r) for r in training.PUBLISHED_RUNS}
    llama = by_name["Llama 3.1 405B on 16k H100"]
    params = ak.models.get("llama-3.1-405b").params
    hours = 6 * params * 15.6e12 / (989e12 * 0.40) / 3600  # chip-hours, compute only
    assert llama.unit == "million chip-hours"
    assert llama.ours == pytest.approx(hours / 1e6) and llama.reported == pytest.approx(30.84)
    assert llama.ratio == pytest.approx(30.84e6 / hours)
    gpt3 = by_name["GPT-3 175B"]
    assert gpt3.unit == "FLOPs" and gpt3.reported == 3.14e23
    assert gpt3.ours == pytest.approx(6 * ak.models.get("gpt-3-175b").params * 300e9)
    book = training.compare_published(0)
    assert book.unit == "days" and book.reported == 44.0 and book.ours == pytest.approx(45, abs=1)
    assert book == by_name[training.PUBLISHED_RUNS[0].name]


@pytest.mark.parametrize("call, error, match", [
    (lambda: training.network_bandwidth("H100", 16, "ethernet"), ValueError, "network"),
    (lambda: training.network_bandwidth("H100", 0), ValueError, "n_chips"),
    (lambda: training.network_bandwidth("H900", 16), ValueError, "chip"),
    (lambda: training.communication_ratios("llama-3-8b", "H100", [], batch_tokens=1e6),
     TypeError, "n_chips"),
    (lambda: training.communication_ratios("llama-3-8b", "H100", [8, -1], batch_tokens=1e6),
     ValueError, r"n_chips\[1\]"),
    (lambda: training.compare_published(99), ValueError, "run"),
    (lambda: training.compare_published("GPT-3 175B"), TypeError, "run"),
    (lambda: training.compare_published(True), TypeError, "run"),
])
def test_bad_input_to_the_run_helpers_is_refused_by_name(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
