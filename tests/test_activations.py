"""One activation-memory model (accelkit.activations), shared by accelkit.parallel's layouts and
accelkit.training.estimate's data-parallel view."""

from __future__ import annotations

import numpy as np
import pytest

import accelkit as ak
from accelkit import activations
from accelkit.parallel import Layout


def test_training_estimate_counts_the_full_recompute_checkpoints_of_the_shared_model():
    m = ak.models.get("llama-3-8b")
    for checkpoints in (1, 3):
        t = ak.training.estimate("llama-3-8b", tokens=1e12, chip="H100", n_chips=8,
                                 activation_checkpoints_per_layer=checkpoints)
        per_token_layer = activations.activation_bytes_per_token_per_layer(m, "full")
        assert t.activation_bytes_per_chip == pytest.approx(
            checkpoints * per_token_layer * m.layers * t.microbatch_tokens)
        assert t.activation_bytes_per_chip == activations.checkpoint_bytes(
            m, t.microbatch_tokens, checkpoints)


def test_parallel_layouts_hold_the_shared_model_per_stage():
    # one chip, no pipeline: the layers' kept bytes for one micro-batch, plus the logits and
    # (recompute) the working set of one layer, as activations.stage_bytes counts them. The
    # framework's attention kind decides whether the s x s scores count: the default framework's
    # fused kernel keeps none (so "none" holds what "selective" holds), Megatron-LM 2021's
    # materialized attention (with its dropout) keeps them under "none".
    m = ak.models.get("llama-3-8b")
    held = {}
    for name in ("default", "megatron-2021"):
        fw = ak.frameworks.get(name)
        layer = activations.of(m, fw.dropout, fused_attention=fw.attention == "fused")
        for code, policy in enumerate(activations.RECOMPUTE):
            step = ak.parallel.train_step(m, "H100", Layout(recompute=policy), 8192,
                                          framework=name)
            kept = float(layer.kept_bytes(code, m.seq_len))
            working = float(layer.working_bytes(code, m.seq_len)) * 8192
            logits = activations.LOGIT_BYTES * m.vocab * 8192
            assert step.activation_bytes_per_chip == pytest.approx(
                m.layers * kept * 8192 + working + logits)
            held[name, policy] = step.activation_bytes_per_chip
    assert ak.frameworks.get("default").attention == "fused"
    assert held["default", "none"] == pytest.approx(held["default", "selective"])
    # "none" keeps every layer's scores; "selective" recomputes one layer's at a time
    scores = activations.of(m, True).score_bytes(m.seq_len)
    assert held["megatron-2021", "none"] - held["megatron-2021", "selective"] == pytest.approx(
        (m.layers - 1) * scores * 8192)
    # with no framework named, train_step is the default framework's accounting
    for policy in activations.RECOMPUTE:
        assert ak.parallel.train_step(m, "H100", Layout(recompute=policy), 8192
                                      ).activation_bytes_per_chip == held["default", policy]


def test_recomputation_keeps_less_and_tensor_parallelism_divides():
    m = ak.models.get("llama-3-70b")
    none, selective, full = (activations.activation_bytes_per_token_per_layer(m, p)
                             for p in activations.RECOMPUTE)
    assert none > selective > full == 2 * m.d_model
    assert activations.activation_bytes_per_token_per_layer(m, "none", tp=8) == pytest.approx(
        none / 8)
    # the attention scores grow with the sequence; the rest does not
    longer = activations.activation_bytes_per_token_per_layer(m, "none", seq_len=2 * m.seq_len)
    assert longer - none == pytest.approx(2 * m.heads * m.seq_len)


def test_latent_attention_stores_keys_and_values_per_head():
    deepseek = ak.models.get("deepseek-v3")
    assert deepseek.latent_attention and deepseek.attention_kv_heads == deepseek.heads
    assert activations.of(deepseek).stored_bytes > 0


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="transformer"):
        activations.of("resnet-50")
    with pytest.raises(ValueError, match="recompute"):
        activations.activation_bytes_per_token_per_layer("llama-3-8b", "some")
    with pytest.raises(ValueError, match="seq_len"):
        activations.activation_bytes_per_token_per_layer("llama-3-8b", seq_len=0)
    with pytest.raises(TypeError, match="tp"):
        activations.activation_bytes_per_token_per_layer("llama-3-8b", tp="2")


def test_fused_attention_keeps_no_scores_per_token():
    """With a fused (FlashAttention-style) kernel "none" keeps what "selective" keeps; written to
    memory (materialized) the scores add 2·a·s bytes per token per layer (5·a·s with dropout)."""
    m = ak.models.get("llama-3-8b")
    per = activations.activation_bytes_per_token_per_layer
    assert per(m, "none", fused_attention=True) == per(m, "selective")
    assert per(m, "none") - per(m, "selective") == pytest.approx(2 * m.heads * m.seq_len)
    assert per(m, "full", fused_attention=True) == per(m, "full")


# -- micro-batches in flight on a pipeline (Megatron-core's warm-up counts) ------------------

def _one_layer_microbatch(layer, tp=8, mb=8192):
    """Bytes one layer keeps for one micro-batch under "selective" with a fused kernel (no
    working set), the unit the pipeline tests count in."""
    return float(layer.kept_bytes(1, 8192, tp)) * mb


def _held(layer, **kw):
    args = dict(recompute=1, seq_len=8192, microbatch_tokens=8192, tp=8, interleave=1)
    args.update(kw)
    return activations.stage_bytes(layer, **args)


def test_in_flight_is_capped_at_the_micro_batches_that_exist():
    # fewer micro-batches than the warm-up: rank 0 holds all m of them (in whole stages), not
    # min(m, pp) x (1 + (pp-1)/(pp v)); at m = pp = 16, v = 4 that was 19.75, now 16
    layer = activations.of("llama-3-405b", fused_attention=True)
    one = _one_layer_microbatch(layer)
    assert _held(layer, microbatches=16, pp=16, interleave=4, stage_layers=8) == pytest.approx(
        8 * 16 * one)
    assert _held(layer, microbatches=4, pp=8, stage_layers=8) == pytest.approx(8 * 4 * one)
    # the counts themselves: 1F1B min(pp - r, m); interleaved min(2(pp-r-1) + (v-1)pp + 1, mv)/v
    inflight = activations._in_flight
    assert inflight(0, microbatches=3, pp=16, interleave=4) == 3.0
    assert inflight(0, microbatches=64, pp=16, interleave=4) == pytest.approx(16 + 15 / 4)
    assert inflight(1, microbatches=64, pp=16, interleave=4) == pytest.approx(77 / 4)
    assert inflight(15, microbatches=64, pp=16, interleave=4) == pytest.approx((3 * 16 + 1) / 4)
    assert inflight(15, microbatches=64, pp=16, interleave=1) == 1.0
    assert inflight(1, microbatches=64, pp=16, interleave=1) == 15.0


def test_second_stage_binds_when_the_end_stages_are_a_layer_short():
    # Llama 3 405B at pp 16: 8 layers a stage, 7 on the first and last. Under 1F1B rank 0 holds
    # 7 x 16 = 112 layer-micro-batches, rank 1 8 x 15 = 120; interleaved (v 4, m 32) rank 0
    # 7 x 79/4 = 138.25, rank 1 8 x 77/4 = 154
    layer = activations.of("llama-3-405b", fused_attention=True)
    one = _one_layer_microbatch(layer)
    for v, expected in ((1, 120.0), (4, 154.0)):
        held = _held(layer, microbatches=32, pp=16, interleave=v, stage_layers=8,
                     end_stage_layers=7)
        assert held == pytest.approx(expected * one)
    # where pp <= layers a stage, rank 0 still binds (pp 4: 7 x 4 = 28 > 8 x 3 = 24)
    assert _held(layer, microbatches=32, pp=4, stage_layers=8, end_stage_layers=7
                 ) == pytest.approx(28 * one)
    # and through train_step: the Llama 3 framework balances its end stages
    fw = ak.frameworks.get("meta-llama3")
    assert fw.balanced_end_stages and fw.attention == "fused"
    step = ak.parallel.train_step("llama-3.1-405b", "H100", Layout(dp=64, tp=8, pp=16,
                                  microbatch_tokens=8192, recompute="selective"),
                                  16 * 2**20, framework=fw.name)
    layer = activations.of("llama-3.1-405b", fw.dropout, fused_attention=True)
    assert step.activation_bytes_per_chip == pytest.approx(120 * _one_layer_microbatch(layer))


def test_many_micro_batches_without_balanced_ends_hold_what_they_held_before():
    # the accounting this replaced: min(m, pp) x (1 + (pp-1)/(pp v)) on the first stage, one
    # micro-batch and the logits on the last; with m >= pp and no shorter end stages the two
    # agree under 1F1B everywhere, and interleaved wherever the first stage binds
    layer = activations.of("llama-3-70b")
    pp = np.array([1, 2, 4, 8, 16, 1, 2, 4, 8, 16, 2, 4, 8, 16, 2, 4, 8], dtype=float)
    v = np.array([1] * 10 + [2, 2, 2, 2, 4, 4, 4], dtype=float)
    m = np.array([16, 16, 32, 64, 64, 128, 128, 128, 256, 16, 64, 64, 64, 64, 64, 64, 64.0])
    layers = np.ceil(80 / (pp * v)) * v
    for rc in (0, 1, 2):
        args = dict(recompute=rc, seq_len=8192, microbatch_tokens=4096.0, microbatches=m,
                    stage_layers=layers, tp=4.0, pp=pp, interleave=v)
        kept = layer.kept_bytes(rc, 8192, 4.0) * 4096
        working = layer.working_bytes(rc, 8192, 4.0) * 4096
        logits = activations.LOGIT_BYTES * layer.vocab * 4096 / 4
        first = layers * kept * np.minimum(m, pp) * np.where(
            v > 1, 1 + (pp - 1) / (pp * v), 1.0) + working
        last = layers * kept + working + logits
        new = activations.stage_bytes(layer, **args)
        plain = v == 1
        np.testing.assert_allclose(new[plain], np.maximum(first, last)[plain], rtol=1e-12)
        # interleaved, the last rank now holds ((v-1) pp + 1)/v stages (its warm-up), not one:
        # unchanged where the first stage still binds, more where the last does
        last_now = layers * kept * ((v - 1) * pp + 1) / v + working + logits
        binds = ~plain & (first > last_now)
        assert binds.sum() >= 7 * (rc < 2)  # all seven under "none" and "selective"
        np.testing.assert_allclose(new[binds], first[binds], rtol=1e-12)
        rest = ~plain & ~binds
        np.testing.assert_allclose(new[rest], last_now[rest], rtol=1e-12)
        assert np.all(new[rest] > np.maximum(first, last)[rest])
