"""Context parallelism (ring attention) as a layout degree: accelkit.parallel.Layout(cp=...).

What is checked: cp multiplies the chip count but not the replicas; the activations per chip
fall by cp; the K/V ring's bytes are the (cp-1)/cp all-gather of the micro-batch's K/V (GQA's
8 K/V heads of Llama 3 405B, split over tp = 8); the ring hides behind the attention's FLOPs
at long context and shows at short context; the gradients are reduced over cp as over a data
axis; impossible configurations are refused by name. Sources: Liu et al. 2023 (ring
attention, arXiv:2310.01889); Llama 3, arXiv:2407.21783 §3.3.2 (2 x CP chunks per sequence;
Table 4: TP 8, CP 16, PP 16 on 16,384 H100 at 131,072 tokens; the table's DP 4 does not
multiply to 16,384, DP 8 does, and 8 replicas x 16 sequences x 131,072 is its 16M tokens).
"""

from __future__ import annotations

import pytest

from accelkit import models, parallel
from accelkit.layout import AXES, Layout, check_layout
from accelkit import chips

LONG = 131072
BATCH = 16 * 2**20


def _long(cp: int = 16, recompute: str = "full", **kw: int) -> Layout:
    degrees = dict(dp=128 // cp, tp=8, pp=16)
    degrees.update(kw)
    return Layout(cp=cp, microbatch_tokens=LONG, recompute=recompute, **degrees)


def test_cp_is_a_degree_but_not_a_replica() -> None:
    layout = _long()
    assert layout.chips == 16384 and layout.cp == 16
    assert layout.data_parallel == 8  # the 16 cp chips share each sequence
    assert AXES.index("cp") == 1  # Llama 3's order: [TP, CP, PP, DP]
    assert layout.strides["cp"] == 8 and layout.strides["pp"] == 8 * 16
    assert str(layout) == "dp8 tp8 cp16 pp16 mb=131,072 recompute=full"
    assert Layout(dp=2).cp == 1 and str(Layout(dp=2)) == "dp2 mb=auto recompute=none"


def test_activations_per_chip_fall_by_cp() -> None:
    # The same replica layout with cp = 1, 2, 4: each chip holds 1/cp of every sequence.
    kw = dict(dp=1, tp=8, pp=1, microbatch_tokens=LONG, recompute="full")
    held = {cp: parallel.train_step("llama-3-70b", "H100", Layout(cp=cp, **kw), LONG,
                                    seq_len=LONG).activation_bytes_per_chip
            for cp in (1, 2, 4)}
    assert held[2] == pytest.approx(held[1] / 2)
    assert held[4] == pytest.approx(held[1] / 4)


def test_ring_bytes_are_the_kv_all_gather_and_hide_at_long_context() -> None:
    step = parallel.train_step("llama-3.1-405b", "H100", _long(), BATCH, seq_len=LONG)
    ring = {c.name: c for c in step.collectives}["cp"]
    m = models.get("llama-3.1-405b")
    # K and V of one token and layer, bf16, 8 K/V heads of 128 over tp = 8: one head per chip
    per_token = 2 * 2 * m.kv_heads * m.head_dim / 8
    assert ring.kind == "all_gather" and ring.group_chips == 16
    assert ring.array_bytes == pytest.approx(LONG * per_token)
    # 126 layers over 16 stages: 8 per stage, x (1 forward + 2 backward + 1 recompute), x 16
    # micro-batches per step (16M tokens / 8 replicas / 131,072)
    assert ring.calls_per_step == pytest.approx(8 * 4 * 16)
    assert ring.seconds > 0 and ring.exposed_seconds == 0.0  # hidden behind attention
    assert step.fits


def test_ring_shows_at_short_context() -> None:
    # At 4,096 tokens a 70B layer's attention is too short to hide a ring over 64 chips.
    layout = Layout(dp=1, tp=1, cp=64, microbatch_tokens=4096, recompute="full")
    step = parallel.train_step("llama-3-70b", "H100", layout, 4096, seq_len=4096)
    ring = {c.name: c for c in step.collectives}["cp"]
    assert ring.exposed_seconds > 0


def test_gradients_are_reduced_over_cp() -> None:
    no_cp = parallel.train_step("llama-3-8b", "H100", Layout(tp=8, microbatch_tokens=LONG,
                                recompute="full"), LONG, seq_len=LONG)
    with_cp = parallel.train_step("llama-3-8b", "H100", Layout(tp=8, cp=4,
                                  microbatch_tokens=LONG, recompute="full"), LONG, seq_len=LONG)
    assert "dp_grads" not in {c.name for c in no_cp.collectives}
    grads = {c.name: c for c in with_cp.collectives}["dp_grads"]
    assert grads.group_chips == 4 and grads.seconds > 0
    # the optimizer state is sharded over the cp chips too
    assert with_cp.optimizer_bytes_per_chip == pytest.approx(no_cp.optimizer_bytes_per_chip / 4)
    # compute per chip falls by cp (same tokens, four times the chips)
    assert with_cp.compute_seconds == pytest.approx(no_cp.compute_seconds / 4, rel=0.02)


def test_predicted_mfu_takes_cp() -> None:
    p = parallel.predicted_mfu("llama-3.1-405b", "H100", _long(), BATCH, seq_len=LONG)
    assert 0.2 < p.mfu < 1.0 and p.step.layout.cp == 16


def test_best_layouts_searches_cp_only_when_asked() -> None:
    args = ("llama-3-8b", "H100", 64, 32 * 65536)
    plain = parallel.best_layouts(*args, top=3, seq_len=65536)
    assert all(s.layout.cp == 1 for s in plain)
    wide = parallel.best_layouts(*args, top=3, seq_len=65536, max_cp=16)
    assert wide[0].layout.cp > 1 and wide[0].seconds <= plain[0].seconds
    cand = parallel.candidate_layouts("llama-3-8b", 64, 32 * 65536, seq_len=65536, max_cp=16)
    assert set(cand["cp"].tolist()) == {1, 2, 4, 8, 16}
    # cp needs whole sequences: none offered for token-level micro-batches
    split = parallel.candidate_layouts("llama-3-8b", 64, 32 * 65536, seq_len=65536, max_cp=16,
                                       whole_sequences=False)
    assert set(split["cp"].tolist()) == {1}


@pytest.mark.parametrize("layout, seq, match", [
    (Layout(tp=8, cp=3, microbatch_tokens=8192), 8192, "2·cp = 6 equal chunks"),
    (Layout(tp=8, cp=8192, microbatch_tokens=8192), 8192, "2·cp = 16384"),
    (Layout(tp=8, cp=4, microbatch_tokens=4096), 8192, "whole sequences of 8,192"),
])
def test_impossible_cp_is_refused(layout: Layout, seq: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parallel.train_step("llama-3-8b", "H100", layout, 8 * 8192, seq_len=seq)


def test_cp_bad_types_and_batches() -> None:
    with pytest.raises(TypeError, match="cp must be a whole number"):
        Layout(cp=2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cp must be"):
        Layout(cp=0)
    model = models.get("llama-3-8b")
    # a replica batch that is not whole sequences cannot be context-parallel
    with pytest.raises(ValueError, match="whole sequences"):
        check_layout(model, chips.get("H100"), Layout(tp=8, cp=2), 4096, seq_len=8192)
    with pytest.raises(ValueError, match="max_cp must be"):
        parallel.best_layouts("llama-3-8b", "H100", 8, 8 * 8192, max_cp=0)
