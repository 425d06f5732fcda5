"""Mixture-of-experts models: total and active parameters from the shapes, FLOPs from active.

Published figures: Mixtral 8x7B 46.7e9 total, 12.9e9 used per token (mistral.ai/news/
mixtral-of-experts; Jiang et al. 2024, arXiv:2401.04088 §2.1 rounds to 47B / 13B). DeepSeek-V3
671e9 total, 37e9 activated per token (DeepSeek-AI 2024, arXiv:2412.19437, abstract).
gpt-oss-120b 116.8e9 total, 5.1e9 active; gpt-oss-20b 20.9e9 and 3.6e9 (OpenAI 2025, model card,
arXiv:2508.10925, section 2.1), active counted without the input embedding table.
"""

from __future__ import annotations

import pytest

import accelkit as ak
from accelkit import models

ACTIVE = {"mixtral-8x7b": 12.9e9, "deepseek-v3": 37e9}


@pytest.mark.parametrize("name", sorted(ACTIVE))
def test_active_params_within_two_percent_of_published(name: str) -> None:
    m = models.get(name)
    assert isinstance(m, models.MoETransformer)
    assert m.active_params == pytest.approx(ACTIVE[name], rel=0.02)
    assert m.published_active_params == pytest.approx(ACTIVE[name], rel=1e-3)
    assert m.active_params < m.params


# The gpt-oss card's active count leaves the input embedding (a lookup) out and keeps the
# unembedding; the library's active_params counts both tables.
CARD_ACTIVE = {"gpt-oss-120b": 5.1e9, "gpt-oss-20b": 3.6e9}


@pytest.mark.parametrize("name", sorted(CARD_ACTIVE))
def test_gpt_oss_active_params_as_the_card_counts_them(name: str) -> None:
    m = models.get(name)
    assert isinstance(m, models.MoETransformer)
    assert m.active_params - m.vocab * m.d_model == pytest.approx(CARD_ACTIVE[name], rel=0.02)
    assert m.published_active_params == pytest.approx(CARD_ACTIVE[name], rel=1e-3)
    assert m.experts_per_token == 4 and m.shared_experts == 0 and m.dense_layers == 0


def test_gpt_oss_120b_counts_by_hand() -> None:
    # 36 layers of GQA attention (2880 x (64+16) x 64 + 64 x 64 x 2880), 128 gated experts of
    # 3 x 2880 x 2880, a 2880 x 128 router and two RMSNorm scales; untied 201088 x 2880 tables.
    attention = 2880 * 80 * 64 + 64 * 64 * 2880
    expert = 3 * 2880 * 2880
    per_layer = attention + 128 * expert + 2880 * 128 + 2 * 2880
    m = models.get("gpt-oss-120b")
    assert m.params == 36 * per_layer + 2 * 201088 * 2880 + 2880
    assert m.n_experts / m.experts_per_token == 32


def test_mixtral_counts_by_hand() -> None:
    # 32 layers of GQA attention (4096 x (32+16) x 128 + 32 x 128 x 4096), 8 gated experts of
    # 3 x 4096 x 14336, a 4096 x 8 router and two RMSNorm scales; untied 32000 x 4096 embeddings.
    attention = 4096 * 48 * 128 + 32 * 128 * 4096
    expert = 3 * 4096 * 14336
    per_layer = attention + 8 * expert + 4096 * 8 + 2 * 4096
    total = 32 * per_layer + 2 * 32000 * 4096 + 4096
    assert models.get("mixtral-8x7b").params == total
    active = 32 * (attention + 2 * expert + 4096 * 8 + 2 * 4096) + 2 * 32000 * 4096 + 4096
    assert models.get("mixtral-8x7b").active_params == active


def test_deepseek_v3_mla_attention_by_hand() -> None:
    # MLA (arXiv:2405.04434 §2.1): W_DQ 7168x1536, W_UQ 1536 x 128·(128+64), W_DKV+W_KR
    # 7168 x (512+64), W_UK,W_UV 512 x 128·(128+128), W_O 128·128 x 7168, two latent norms.
    m = models.get("deepseek-v3")
    expected = (7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512
                + 512 * 128 * 256 + 128 * 128 * 7168)
    assert m.attention_params_per_layer == expected
    # MLA caches 576 values per token per layer: 61 x 576 x 2 bytes.
    assert m.kv_cache_bytes_per_token("bf16") == 61 * 576 * 2


def test_dense_models_have_active_equal_to_params() -> None:
    for m in models.all():
        if not isinstance(m, models.MoETransformer):
            assert m.active_params == m.params


@pytest.mark.parametrize("name", sorted(ACTIVE))
def test_flops_follow_active_params_memory_follows_total(name: str) -> None:
    m = models.get(name)
    # Forward at one token with no context: 2 FLOPs per active weight used by a matmul (the
    # input embedding is a gather), plus small norm/elementwise terms (< 1%).
    per_token = m.flops(batch=1, seq_len=1, phase="forward")
    used = m.active_params - m.vocab * m.d_model
    assert per_token == pytest.approx(2 * used, rel=0.01)
    assert m.weight_bytes("bf16") == 2 * m.params
    # Training at a short sequence (attention negligible) is about 6 x the active weights, far
    # below 6 x the total a dense count would give.
    train = m.flops_per_token("train", seq_len=128)
    assert train == pytest.approx(6 * used, rel=0.02)
    assert train < 0.6 * 6 * m.params


def test_moe_decode_reads_only_touched_experts() -> None:
    m = models.get("mixtral-8x7b")
    one = m.bytes(batch=1, seq_len=1, phase="decode", context_tokens=0)
    many = m.bytes(batch=256, seq_len=1, phase="decode", context_tokens=0)
    # One token reads its 2 of 8 experts: about active weights; 256 tokens touch all 8.
    assert one == pytest.approx(2 * m.active_params, rel=0.02)
    assert many > 2 * m.params


def test_moe_operations_cover_every_phase() -> None:
    m = models.get("deepseek-v3")
    for phase in ("forward", "backward", "train", "prefill"):
        assert m.flops(batch=1, seq_len=128, phase=phase) > 0
    assert m.flops(batch=2, phase="decode", context_tokens=64) > 0
    assert ak.models.get("DeepSeek-V3") is m
