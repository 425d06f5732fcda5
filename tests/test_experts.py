"""accelkit.experts: the all-to-all on a torus axis against a switch, and node-limited routing.

Published shapes checked: the scaling book (sharding.md: "AllToAll is 1/4 of an AllGather on a
bidirectional ring"; gpus.md: on a switched node each GPU sends (n-1)/n² of the array through
its own port) and DeepSeek-V3 (arXiv:2412.19437 §2.1.2: each token sent to at most M = 4
nodes; §3.2.2: once per node over InfiniBand, forwarded over NVLink). The book's MoE critical
batch (gpus.md, Data Parallelism: per-GPU tokens > (E/k)·C/W_node, "32 * 2475 = 79,200" for
gpt-oss on H100 from 990e12 FLOP/s over 400e9 B/s per node).
"""

from __future__ import annotations

import dataclasses

import pytest

import accelkit as ak
from accelkit import experts


def test_one_wrapped_torus_axis_does_not_speed_up_with_chips() -> None:
    rows = experts.all_to_all_scaling("v5p", array_bytes=1e9, counts=(4, 8, 16))
    assert all(r.fabric == "torus axis (wrapped)" and r.network == "ICI" for r in rows)
    times = [r.seconds for r in rows]
    # V / (8 w) whatever n is (w = one v5p ICI link one way); latency adds a hop per 2 chips
    w = ak.chips.get("v5p").link_bytes_per_second
    for t in times:
        assert t == pytest.approx(1e9 / (8 * w), rel=0.01)
    assert times[-1] >= times[0]  # more chips on the axis: not faster
    ag = ak.collectives.all_gather("v5p", array_bytes=1e9, over=16)
    assert rows[-1].seconds == pytest.approx(ag.bandwidth_seconds / 4, rel=0.1)


def test_a_switch_speeds_up_as_chips_are_added() -> None:
    rows = experts.all_to_all_scaling("GB200", array_bytes=1e9, counts=(8, 16, 32, 72))
    assert all(r.fabric == "NVLink switch" for r in rows)
    times = [r.seconds for r in rows]
    assert times == sorted(times, reverse=True)
    assert rows[-1].seconds < rows[0].seconds / 5  # about 1/n: 8 -> 72 chips
    nv = ak.chips.get("GB200").scaleup_bytes_per_second
    for r in rows:
        assert r.seconds - ak.collectives.all_to_all("GB200", array_bytes=1e9,
                                                      over=r.chips).latency_seconds == \
            pytest.approx((r.chips - 1) * 1e9 / (r.chips ** 2 * nv))
    # H100 beyond its 8-GPU node: the InfiniBand part also falls as GPUs are added
    ib = experts.all_to_all_scaling("H100", array_bytes=1e9, counts=(16, 64, 256))
    assert [r.seconds for r in ib] == sorted((r.seconds for r in ib), reverse=True)
    assert all("scale-out" in r.network for r in ib)


def test_all_to_all_scaling_refuses_bad_counts() -> None:
    with pytest.raises(ValueError, match="does not fit one torus axis"):
        experts.all_to_all_scaling("v5p", array_bytes=1e9, counts=(64,))
    with pytest.raises(ValueError, match="at least 2"):
        experts.all_to_all_scaling("H100", array_bytes=1e9, counts=(1, 8))
    with pytest.raises(TypeError, match="counts must be a tuple"):
        experts.all_to_all_scaling("H100", array_bytes=1e9, counts=8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1 to 64"):
        experts.all_to_all_scaling("H100", array_bytes=1e9, counts=())
    with pytest.raises(ValueError, match="array_bytes"):
        experts.all_to_all_scaling("H100", array_bytes=-1.0, counts=(8,))


def test_node_limited_routing_bounds_the_infiniband_copies() -> None:
    kw = dict(tokens_per_chip=4096, ep=256)
    naive = experts.dispatch("deepseek-v3", "H100", **kw)
    per_node = experts.dispatch("deepseek-v3", "H100", scheme="per_node", **kw)
    capped = experts.dispatch("deepseek-v3", "H100", scheme="per_node", max_nodes=4, **kw)
    assert naive.nodes == 32
    assert naive.remote_copies_per_token == pytest.approx(8 * 31 / 32)
    assert per_node.remote_copies_per_token == pytest.approx(31 * (1 - (31 / 32) ** 8))
    assert capped.remote_copies_per_token == pytest.approx(4 * 31 / 32)
    assert capped.scaleout_seconds < per_node.scaleout_seconds < naive.scaleout_seconds
    # bytes: tokens x copies x d_model x 2 bytes, over the GPU's 50 GB/s NIC
    d = ak.models.get("deepseek-v3").d_model
    assert capped.scaleout_bytes_per_chip == pytest.approx(4096 * 4 * 31 / 32 * d * 2)
    assert capped.scaleout_seconds == pytest.approx(capped.scaleout_bytes_per_chip / 50e9)
    assert capped.seconds == max(capped.scaleout_seconds, capped.scaleup_seconds)
    with pytest.raises(dataclasses.FrozenInstanceError):
        capped.seconds = 0.0  # type: ignore[misc]


def test_experts_inside_one_nvl72_rack_never_touch_infiniband() -> None:
    inside = experts.dispatch("deepseek-v3", "GB200", tokens_per_chip=4096, ep=64)
    assert inside.nodes == 1 and inside.scaleout_seconds == 0.0 and inside.seconds > 0
    # the same 64-way EP on H100 spans 8 nodes and is InfiniBand-bound
    spread = experts.dispatch("deepseek-v3", "H100", tokens_per_chip=4096, ep=64)
    assert spread.nodes == 8 and spread.scaleout_seconds > spread.scaleup_seconds
    assert inside.seconds < spread.seconds


def test_dispatch_refuses_what_it_cannot_model() -> None:
    with pytest.raises(ValueError, match="dense"):
        experts.dispatch("llama-3-70b", "H100", tokens_per_chip=4096, ep=8)
    with pytest.raises(ValueError, match="TPU"):
        experts.dispatch("deepseek-v3", "v5p", tokens_per_chip=4096, ep=8)
    with pytest.raises(ValueError, match="ep must divide"):
        experts.dispatch("mixtral-8x7b", "H100", tokens_per_chip=4096, ep=16)
    with pytest.raises(ValueError, match="whole domains"):
        experts.dispatch("deepseek-v3", "GB200", tokens_per_chip=4096, ep=128)  # 72-GPU racks
    with pytest.raises(ValueError, match="scheme='per_node'"):
        experts.dispatch("deepseek-v3", "H100", tokens_per_chip=4096, ep=64, max_nodes=4)
    with pytest.raises(ValueError, match="max_nodes"):
        experts.dispatch("deepseek-v3", "H100", tokens_per_chip=4096, ep=64,
                         scheme="per_node", max_nodes=9)
    with pytest.raises(ValueError, match="scheme must be one of"):
        experts.dispatch("deepseek-v3", "H100", tokens_per_chip=4096, ep=64, scheme="tree")
    with pytest.raises((TypeError, ValueError), match="tokens_per_chip"):
        experts.dispatch("deepseek-v3", "H100", tokens_per_chip=0, ep=64)


def test_the_books_critical_batch_from_the_catalog() -> None:
    c = experts.critical_batch_against_book("gpt-oss-120b", "H100", 1024)
    h100 = ak.chips.get("H100")
    assert c.experts_ratio == 32
    # the book's inputs, 990e12 FLOP/s and 8 x 400 Gb/s per node, are the catalog's to 0.2%
    assert h100.peak_flops("bf16") == pytest.approx(990e12, rel=2e-3)
    assert h100.scaleup_domain_chips * h100.scaleout_bytes_per_second == pytest.approx(400e9)
    assert c.book_tokens_per_chip == pytest.approx(32 * 2475, rel=2e-3)
    assert c.tokens_per_chip == ak.parallel.dp_critical_tokens_per_chip("gpt-oss-120b", "H100", 1024)
    # the split is exact: ours = params ratio x achieved FLOP/byte; the bandwidths agree to 1%
    assert c.params_ratio * c.flops_per_byte == pytest.approx(c.tokens_per_chip)
    assert c.flops_per_byte == pytest.approx(c.book_flops_per_byte, rel=0.01)
    assert round(c.params_ratio, 1) == 20.3  # as docs/parallel.md states it
    m = ak.models.get("gpt-oss-120b")
    assert c.params_ratio < m.params / (m.active_params - m.vocab * m.d_model) < c.experts_ratio


def test_the_books_rule_needs_a_moe_on_a_gpu() -> None:
    with pytest.raises(ValueError, match="mixture of experts"):
        experts.critical_batch_against_book("llama-3-70b", "H100", 1024)
    with pytest.raises(ValueError, match="TPU"):
        experts.critical_batch_against_book("gpt-oss-120b", "v5p", 1024)
    with pytest.raises(ValueError, match="n_chips"):
        experts.critical_batch_against_book("gpt-oss-120b", "H100", 0)
