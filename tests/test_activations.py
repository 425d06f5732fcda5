"""One activation-memory model (accelkit.activations), shared by accelkit.parallel's layouts and
accelkit.training.estimate's data-parallel view."""

from __future__ import annotations

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
