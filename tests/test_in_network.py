"""accelkit.in_network: NVLink / InfiniBand SHARP as a GPU-only all-reduce option, with the
measured NVLS benefit (NVIDIA/nccl #1455 and NVIDIA/nccl-tests #212: 8x H100 all-reduce busbw
480 GB/s with NVLS against 370 GB/s with the ring; no gain on 4 or fewer GPUs)."""

from __future__ import annotations

import dataclasses

import pytest

import accelkit as ak
from accelkit import in_network


def test_nvls_speedup_is_the_measured_busbw_ratio() -> None:
    assert in_network.nvls_speedup(8) == pytest.approx(480 / 370)
    assert in_network.nvls_speedup(4) == 1.0 and in_network.nvls_speedup(2) == 1.0
    assert in_network.nvls_speedup(6) == pytest.approx(440 / 370)
    assert in_network.nvls_speedup(72) == in_network.nvls_speedup(8)  # named assumption
    with pytest.raises(ValueError, match="at least 2"):
        in_network.nvls_speedup(1)
    with pytest.raises((TypeError, ValueError), match="gpus"):
        in_network.nvls_speedup(2.5)  # type: ignore[arg-type]


def test_one_node_all_reduce_gets_the_measured_gain() -> None:
    r = in_network.all_reduce("H100", array_bytes=1e9, over=8)
    base = ak.collectives.all_reduce("H100", array_bytes=1e9, over=8)
    assert r.baseline_seconds == base.seconds
    assert r.collective.bandwidth_seconds == pytest.approx(base.bandwidth_seconds * 370 / 480)
    assert r.collective.latency_seconds == base.latency_seconds
    assert 1.0 < r.speedup < 480 / 370 and r.assumptions == ()
    assert "1455" in r.source and "212" in r.source
    small = in_network.all_reduce("H100", array_bytes=1e9, over=4)
    assert small.speedup == pytest.approx(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.seconds = 0.0  # type: ignore[misc]


def test_across_nodes_nvls_and_ib_sharp() -> None:
    nvls = in_network.all_reduce("H100", array_bytes=1e9, over=64)
    both = in_network.all_reduce("H100", array_bytes=1e9, over=64, scheme="nvls+ib_sharp")
    # the NVLink phases speed up, the InfiniBand phase (the slowest, pipelined) does not
    assert nvls.scaleout_speedup == 1.0 and nvls.nvlink_speedup > 1.0
    assert both.scaleout_speedup == pytest.approx(2 * 7 / 8)
    assert both.seconds < nvls.seconds <= nvls.baseline_seconds
    assert any("InfiniBand SHARP" in a for a in both.assumptions)
    rack = in_network.all_reduce("GB200", array_bytes=1e9, over=72)
    assert any("8-GPU ratio" in a for a in rack.assumptions)


def test_refused_on_tpus_and_bad_input() -> None:
    with pytest.raises(ValueError, match="TPU"):
        in_network.all_reduce("v5p", array_bytes=1e9, over=16)
    with pytest.raises(ValueError, match="scheme must be one of"):
        in_network.all_reduce("H100", array_bytes=1e9, over=8, scheme="sharp3")
    with pytest.raises(ValueError, match="array_bytes"):
        in_network.all_reduce("H100", array_bytes=0.0, over=8)
