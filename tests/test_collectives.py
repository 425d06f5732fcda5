"""accelkit.collectives against explicit ring simulations and the scaling book's derivations.

Independent references:
* Step-by-step ring simulations written here with numpy: data really moves chip to chip, every
  chip's result is checked against numpy (the gathered array, the sum), and the bytes each
  directed link carries are counted; the time is the sum over steps of the busiest link's bytes
  over its bandwidth (or, for pipelined multi-phase schedules, the busiest link's total).
* How to Scale Your Model (jax-ml/scaling-book), cited per test: sharding.md and training.md at
  commit 0819a7d8 (Feb 2025), gpus.md at commit 1a55377a (2025-08-18).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

import accelkit as ak
from accelkit import collectives as C

V5P = ak.chips.get("v5p")
H100 = ak.chips.get("H100")


# ----------------------------------------------------------------------------- ring simulations

class Links:
    """Bytes carried per directed link (src, dst), per step."""

    def __init__(self) -> None:
        self.steps: list[dict[tuple, float]] = []

    def step(self) -> dict[tuple, float]:
        self.steps.append({})
        return self.steps[-1]

    def stepwise_seconds(self, w: float) -> float:
        """Each step lasts as long as its busiest link needs."""
        return sum(max(s.values()) / w for s in self.steps if s)

    def total(self) -> dict[tuple, float]:
        out: dict[tuple, float] = {}
        for s in self.steps:
            for k, b in s.items():
                out[k] = out.get(k, 0.0) + b
        return out


def send(step: dict, src, dst, block: np.ndarray) -> np.ndarray:
    step[(src, dst)] = step.get((src, dst), 0.0) + block.nbytes
    return block.copy()


def ring_all_gather(shards: list[np.ndarray], *, wrap: bool, links: Links, ids=None):
    """Bidirectional all-gather on a ring (wrap=True) or a line (wrap=False).

    Ring: two counter-rotating rings, each carrying one half of every shard n-1 hops.
    Line: every shard travels left and right to the ends, forwarded one hop per step.
    """
    n = len(shards)
    ids = list(range(n)) if ids is None else ids
    have = [{(i, h): np.array_split(shards[i], 2)[h] for h in (0, 1)} for i in range(n)]
    if wrap:
        for s in range(1, n):
            step = links.step()
            moved = []
            for i in range(n):
                # clockwise carries half 0 of shard (i-s+1); counter-clockwise half 1 of (i+s-1)
                cw_src, ccw_src = (i - s + 1) % n, (i + s - 1) % n
                moved.append(((i + 1) % n, (cw_src, 0), send(step, ids[i], ids[(i + 1) % n], have[i][(cw_src, 0)])))
                moved.append(((i - 1) % n, (ccw_src, 1), send(step, ids[i], ids[(i - 1) % n], have[i][(ccw_src, 1)])))
            for dst, key, block in moved:
                have[dst][key] = block
    else:
        for s in range(1, n):
            step = links.step()
            moved = []
            for i in range(n):
                right_src, left_src = i - s + 1, i + s - 1
                if i + 1 < n and right_src >= 0:
                    for h in (0, 1):
                        moved.append((i + 1, (right_src, h), send(step, ids[i], ids[i + 1], have[i][(right_src, h)])))
                if i - 1 >= 0 and left_src < n:
                    for h in (0, 1):
                        moved.append((i - 1, (left_src, h), send(step, ids[i], ids[i - 1], have[i][(left_src, h)])))
            for dst, key, block in moved:
                have[dst][key] = block
    return [np.concatenate([have[i][(j, h)] for j in range(n) for h in (0, 1)]) for i in range(n)]


def ring_reduce_scatter(arrays: list[np.ndarray], *, links: Links, ids=None):
    """Bidirectional reduce-scatter on a wrapped ring; chip j ends with block j of the sum.

    Block j's two halves travel as partial sums around the two counter-rotating rings, starting
    at the chip after j (clockwise) / before j (counter-clockwise), each accumulating over n-1 hops.
    """
    n = len(arrays)
    ids = list(range(n)) if ids is None else ids
    blocks = [[np.array_split(b, 2) for b in np.array_split(a, n)] for a in arrays]
    part = {(j, 0): ((j + 1) % n, blocks[(j + 1) % n][j][0].copy()) for j in range(n)}
    part.update({(j, 1): ((j - 1) % n, blocks[(j - 1) % n][j][1].copy()) for j in range(n)})
    for _ in range(1, n):
        step = links.step()
        for (j, h), (holder, value) in list(part.items()):
            nxt = (holder + 1) % n if h == 0 else (holder - 1) % n
            part[(j, h)] = (nxt, send(step, ids[holder], ids[nxt], value) + blocks[nxt][j][h])
    assert all(part[(j, h)][0] == j for j in range(n) for h in (0, 1))
    return [np.concatenate([part[(j, 0)][1], part[(j, 1)][1]]) for j in range(n)]


def line_reduce_scatter_link_loads(n: int, block_bytes: float) -> dict[tuple, float]:
    """Reduce-scatter on a line: block j is summed from the left end and the right end towards j,
    so link (i -> i+1) carries the partial sums of every block right of i: n-1-i blocks."""
    loads: dict[tuple, float] = {}
    for j in range(n):
        for i in range(j):  # left partial sums of block j cross i -> i+1
            loads[(i, i + 1)] = loads.get((i, i + 1), 0.0) + block_bytes
        for i in range(j + 1, n):  # right partial sums cross i -> i-1
            loads[(i, i - 1)] = loads.get((i, i - 1), 0.0) + block_bytes
    return loads


def one_way_ring_all_reduce(arrays: list[np.ndarray], links: Links, ids=None):
    """The classic one-direction ring all-reduce (NCCL's ring): n-1 reduce-scatter steps then
    n-1 all-gather steps, each chip sending one 1/n block per step."""
    n = len(arrays)
    ids = list(range(n)) if ids is None else ids
    blocks = [[b.copy() for b in np.array_split(a, n)] for a in arrays]
    for s in range(n - 1):
        step = links.step()
        out = [(i, (i - s) % n, send(step, ids[i], ids[(i + 1) % n], blocks[i][(i - s) % n])) for i in range(n)]
        for i, j, value in out:
            blocks[(i + 1) % n][j] = blocks[(i + 1) % n][j] + value
    for s in range(n - 1):
        step = links.step()
        out = [(i, (i + 1 - s) % n, send(step, ids[i], ids[(i + 1) % n], blocks[i][(i + 1 - s) % n])) for i in range(n)]
        for i, j, value in out:
            blocks[(i + 1) % n][j] = value
    return [np.concatenate(b) for b in blocks]


def torus_all_to_all_loads(axes: tuple[int, ...], wraps: tuple[bool, ...], chunk: float) -> dict:
    """Dimension-order shortest-path routing of one chunk from every chip to every other chip;
    ties (distance n/2 on an even ring) split half each way. Returns bytes per directed link."""
    loads: dict[tuple, float] = {}
    coords = list(itertools.product(*[range(a) for a in axes]))
    for src in coords:
        for dst in coords:
            if src == dst:
                continue
            paths = [(list(src), 1.0)]
            for d, (n, wr) in enumerate(zip(axes, wraps)):
                new_paths = []
                for pos, share in paths:
                    delta = (dst[d] - pos[d]) % n if wr else dst[d] - pos[d]
                    if wr:
                        options = [(+1, delta)] if delta < n - delta else [(-1, n - delta)] if delta > n - delta else [(+1, delta), (-1, n - delta)]
                    else:
                        options = [(1 if delta > 0 else -1, abs(delta))]
                    for direction, hops in options:
                        p = list(pos)
                        part = share / len(options)
                        for _ in range(hops):
                            a = tuple(p)
                            p[d] = (p[d] + direction) % n if wr else p[d] + direction
                            loads[(a, tuple(p))] = loads.get((a, tuple(p)), 0.0) + part * chunk
                        new_paths.append((p, part))
                paths = new_paths
    return loads


# ----------------------------------------------------------------------------- closed forms vs sims

W = V5P.link_bytes_per_second


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8, 9])
@pytest.mark.parametrize("wrap", [True, False])
def test_torus_all_gather_matches_a_stepwise_ring(n: int, wrap: bool) -> None:
    rng = np.random.default_rng(n)
    shards = [rng.standard_normal(8 * 3) for _ in range(n)]  # 2 halves of 12 float64 each
    links = Links()
    out = ring_all_gather(shards, wrap=wrap, links=links)
    for got in out:
        np.testing.assert_array_equal(got, np.concatenate(shards))
    array_bytes = sum(s.nbytes for s in shards)
    r = C.all_gather(V5P, array_bytes=array_bytes, over=n, wraparound=wrap)
    assert r.levels[0].wraps == ((wrap and n > 2),)
    if n == 2 and wrap:  # a 2-chip "ring" is one link pair: the model treats it as a line
        links = Links()
        ring_all_gather(shards, wrap=False, links=links)
    assert r.bandwidth_seconds == pytest.approx(links.stepwise_seconds(W), rel=1e-12)
    assert r.levels[0].steps == ((n // 2) if (wrap and n > 2) else n - 1)


@pytest.mark.parametrize("n", [3, 4, 5, 8])
def test_torus_reduce_scatter_matches_counter_rotating_rings(n: int) -> None:
    rng = np.random.default_rng(10 + n)
    arrays = [rng.standard_normal(n * 2 * 5) for _ in range(n)]
    links = Links()
    out = ring_reduce_scatter(arrays, links=links)
    total = np.sum(arrays, axis=0)
    for j, got in enumerate(out):
        np.testing.assert_allclose(got, np.array_split(total, n)[j], rtol=1e-12)
    r = C.reduce_scatter(V5P, array_bytes=arrays[0].nbytes, over=n, wraparound=True)
    assert r.bandwidth_seconds == pytest.approx(links.stepwise_seconds(W), rel=1e-12)
    ar = C.all_reduce(V5P, array_bytes=arrays[0].nbytes, over=n, wraparound=True)
    assert ar.bandwidth_seconds == pytest.approx(2 * r.bandwidth_seconds, rel=1e-12)


@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_line_reduce_scatter_busiest_link(n: int) -> None:
    # Without wraparound the end links carry n-1 of the n blocks: (n-1)/n * V / w.
    array_bytes = 8.0 * n * 100
    loads = line_reduce_scatter_link_loads(n, array_bytes / n)
    r = C.reduce_scatter(V5P, array_bytes=array_bytes, over=n, wraparound=False)
    assert r.bandwidth_seconds == pytest.approx(max(loads.values()) / W, rel=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_nvlink_ring_all_reduce_matches_nccl_style_ring(n: int) -> None:
    rng = np.random.default_rng(20 + n)
    arrays = [rng.standard_normal(n * 7) for _ in range(n)]
    links = Links()
    out = one_way_ring_all_reduce(arrays, links)
    for got in out:
        np.testing.assert_allclose(got, np.sum(arrays, axis=0), rtol=1e-12)
    r = C.all_reduce(H100, array_bytes=arrays[0].nbytes, over=n)
    assert r.network == "NVLink" and r.levels[0].steps == 2 * (n - 1)
    assert r.bandwidth_seconds == pytest.approx(links.stepwise_seconds(H100.scaleup_bytes_per_second), rel=1e-12)


@pytest.mark.parametrize(("chip", "axes", "wraps"), [
    ("v5p", (4,), (True,)), ("v5p", (5,), (False,)), ("v5p", (6,), (False,)),
    ("v5p", (8,), (True,)), ("v5p", (4, 4), (True, True)), ("v5p", (4, 4, 4), (True, True, True)),
    ("v5p", (2, 2, 4), (False, False, False)), ("v5e", (16, 2), (True, False)),
    ("v5e", (3, 5), (False, False)),
])
def test_torus_all_to_all_matches_routed_link_loads(chip, axes, wraps) -> None:
    n = math.prod(axes)
    array_bytes = float(n * n * 8)
    r = C.all_to_all(chip, array_bytes=array_bytes, over=axes)
    assert r.levels[0].wraps == wraps  # the chip's own wrap rule
    loads = torus_all_to_all_loads(axes, wraps, array_bytes / n**2)
    w = ak.chips.get(chip).link_bytes_per_second
    assert r.bandwidth_seconds == pytest.approx(max(loads.values()) / w, rel=1e-12)


def test_all_to_all_is_a_quarter_of_all_gather_on_a_bidirectional_ring() -> None:
    # sharding.md@0819a7d8: "AllToAll ... AllGather / 4 for a bidirectional ring" (even n, large n).
    ag = C.all_gather(V5P, array_bytes=1e9, over=16)
    a2a = C.all_to_all(V5P, array_bytes=1e9, over=16)
    assert a2a.bandwidth_seconds / ag.bandwidth_seconds == pytest.approx(0.25 * 16 / 15, rel=1e-12)


def test_two_axis_all_gather_attains_the_ingress_bound() -> None:
    # Half the array gathers X then Y, the other half Y then X (each with counter-rotating rings):
    # the busiest link's total equals (N-1)/N * V / (4w), the model's formula for two wrapped axes.
    n = 4
    rng = np.random.default_rng(3)
    shards = {(x, y): rng.standard_normal(4 * 2) for x in range(n) for y in range(n)}
    links = Links()
    gathered = {}
    for order in ((0, 1), (1, 0)):
        half = {k: np.array_split(v, 2)[order[0]] for k, v in shards.items()}
        first, second = order
        stage = {}
        for fixed in range(n):  # rings along the first axis
            members = [tuple(sorted([(first, i), (second, fixed)]))for i in range(n)]
            members = [(m[0][1], m[1][1]) for m in members]
            res = ring_all_gather([half[m] for m in members], wrap=True, links=links, ids=members)
            for m, value in zip(members, res):
                stage[m] = value
        for fixed in range(n):  # then along the second axis, on the gathered rows
            members = [tuple(sorted([(second, i), (first, fixed)]))for i in range(n)]
            members = [(m[0][1], m[1][1]) for m in members]
            res = ring_all_gather([stage[m] for m in members], wrap=True, links=links, ids=members)
            for m, value in zip(members, res):
                gathered.setdefault(m, []).append(value)
    for m, parts in gathered.items():  # every chip holds every element, once per half
        assert sorted(np.concatenate(parts)) == sorted(np.concatenate(list(shards.values())))
    busiest = max(links.total().values())
    array_bytes = sum(v.nbytes for v in shards.values())
    r = C.all_gather(V5P, array_bytes=array_bytes, over=(4, 4))
    assert r.levels[0].wraps == (True, True)
    assert r.bandwidth_seconds == pytest.approx(busiest / W, rel=1e-12)


def test_hierarchical_gpu_all_reduce_numerics_and_bytes() -> None:
    # 2 nodes x 4 GPUs (toy): reduce-scatter in the node, all-reduce across nodes per local rank
    # on 1/4 of the data, all-gather in the node; numerics against numpy.
    nodes, local = 2, 4
    rng = np.random.default_rng(7)
    arrays = {(m, l): rng.standard_normal(local * 6) for m in range(nodes) for l in range(local)}
    total = np.sum(list(arrays.values()), axis=0)
    shard = {}
    for m in range(nodes):
        blocks = [np.array_split(arrays[(m, l)], local) for l in range(local)]
        for l in range(local):
            shard[(m, l)] = sum(blocks[k][l] for k in range(local))
    for l in range(local):
        reduced = one_way_ring_all_reduce([shard[(m, l)] for m in range(nodes)], Links())
        for m in range(nodes):
            shard[(m, l)] = reduced[m]
    for m in range(nodes):
        full = np.concatenate([shard[(m, l)] for l in range(local)])
        np.testing.assert_allclose(full, total, rtol=1e-12)
    # Bytes: the model's scale-out phase sends 2 (M-1)/M * V/L per GPU.
    r = C.all_reduce(H100, array_bytes=1e9, over=16)
    scale_out = [lv for lv in r.levels if lv.network == "scale-out"][0]
    assert scale_out.array_bytes == pytest.approx(1e9 / 8)
    assert scale_out.bytes_sent_per_chip == pytest.approx(2 * (2 - 1) / 2 * 1e9 / 8)
    assert [lv.phase for lv in r.levels] == ["reduce_scatter", "all_reduce", "all_gather"]


# ----------------------------------------------------------------------------- scaling book figures

def test_scaling_book_v5p_dp_critical_batch_per_axis() -> None:
    # training.md@0819a7d8: "For TPUv5p, C=4.6e14 and W=2 * 9e10 for 1D data parallelism over
    # ICI, so our batch size per chip must be at least 2,550"; "if we dedicate all three axes ...
    # we 3x our bandwidth ... BS=850 per TPU". The book drops the ring's (n-1)/n factor.
    one_axis = C.dp_critical_tokens_per_chip("v5p", over=16)
    assert one_axis * 16 / 15 == pytest.approx(4.59e14 / (2 * 9e10), rel=1e-9)  # 2550
    assert one_axis * 16 / 15 == pytest.approx(2550, rel=0.001)
    three = C.dp_critical_tokens_per_chip("v5p", over=(16, 16, 24))
    assert three * 6144 / 6143 == pytest.approx(850, rel=0.001)
    fsdp = C.dp_critical_tokens_per_chip("v5p", over=16, strategy="fsdp")
    assert fsdp == pytest.approx(one_axis, rel=1e-12)  # training.md: FSDP has the same 2550 / n_axes


def test_old_catalog_convention_undercounts_v5p_by_far() -> None:
    # The old model divided by the catalog's 1200 GB/s bidi total as one link's egress:
    # t = C / W = 4.59e14 / 1.2e12 = 383, "well under half" the per-axis derivation.
    old = V5P.peak_flops() / V5P.interconnect_bytes_per_second
    assert old < 0.5 * C.dp_critical_tokens_per_chip("v5p", over=16)


def test_scaling_book_allgather_examples() -> None:
    # sharding.md@0819a7d8 Question 2, TPU v4p 4x4x4 (wraparound on all axes), bf16[1024, 4096]:
    # AllGather_X over one axis of 4 of B_X,D_Y: 2BD/(9e10 * Y) = 23 us; AllGather_XY: 2BD/(2*9e10)
    # = 46 us. Both without the (N-1)/N factor.
    v4 = ak.chips.get("v4")
    bd = 2 * 1024 * 4096
    one = C.all_gather(v4, array_bytes=bd / 4, over=(4,))
    assert one.bandwidth_seconds * 4 / 3 == pytest.approx(23.3e-6, rel=0.01)
    two = C.all_gather(v4, array_bytes=bd, over=(4, 4))
    assert two.bandwidth_seconds * 16 / 15 == pytest.approx(46.6e-6, rel=0.01)
    # Question 3: a tiny array over an axis of 4 with wraparound: "the full gather in only 2 hops,
    # so roughly 2us"; latency-bound.
    tiny = C.all_gather(v4, array_bytes=256, over=(4,))
    assert tiny.latency_seconds == pytest.approx(2e-6) and tiny.bandwidth_seconds < 0.01 * tiny.seconds
    # sharding.md worked answer: v5e, axis of 4 (no wraparound below 16): "3 * 8.4e6 / 4.5e10 =
    # 560us" for a 34e6-byte gather.
    v5e = C.all_gather("v5e", array_bytes=34e6, over=4)
    assert v5e.levels[0].wraps == (False,)
    assert v5e.bandwidth_seconds == pytest.approx(560e-6, rel=0.02)


def test_scaling_book_gpu_node_figures() -> None:
    # gpus.md@1a55377a Quiz 2 Q3: AllGather of bf16[4096, 65536] in an 8xH100 node:
    # 536e6 * 7 / (8 * 450e9) = 1.04 ms; Pop Quiz 1: bf16[1024, 16384] "more precisely, 65us".
    big = C.all_gather("H100", array_bytes=2 * 4096 * 65536, over=8)
    assert big.network == "NVLink"
    assert big.bandwidth_seconds == pytest.approx(1.04e-3, rel=0.01)
    small = C.all_gather("H100", array_bytes=2 * 1024 * 16384, over=8)
    assert small.bandwidth_seconds == pytest.approx(65e-6, rel=0.01)
    # AllToAll inside a node: B (N-1) / (W N^2).
    a2a = C.all_to_all("H100", array_bytes=1e9, over=8)
    assert a2a.bandwidth_seconds == pytest.approx(1e9 * 7 / (450e9 * 64), rel=1e-12)
    # Quiz 4 Q5, AllGather over exactly 2 nodes: node level B*7/(8*450e9) = B/514e9, scale-out
    # B/(2*400e9) = B/800e9: "we're actually bounded by the node level".
    two = C.all_gather("H100", array_bytes=1e9, over=16)
    nvl = two.seconds_on("NVLink") - sum(lv.latency_seconds for lv in two.levels if lv.network == "NVLink")
    out = [lv for lv in two.levels if lv.network == "scale-out"][0]
    assert nvl == pytest.approx(1e9 / 514.3e9, rel=0.001)
    assert out.bandwidth_seconds == pytest.approx(1e9 / 800e9, rel=1e-9)
    assert two.bandwidth_seconds == pytest.approx(nvl)


def test_scaling_book_gpu_dp_critical_batch() -> None:
    # gpus.md@1a55377a Data Parallelism: "Within a node ... 990e12 / 450e9 = 2200"; "Within an SU
    # or at the spine level, BS > 990e12 / 400e9 = 2475". The book drops (n-1)/n; our H100 peak
    # is 989e12.
    node = C.dp_critical_tokens_per_chip("H100", over=8)
    assert node * 8 / 7 == pytest.approx(2200, rel=0.002)
    cluster = C.dp_critical_tokens_per_chip("H100", over=16384)
    assert cluster * 2048 / 2047 == pytest.approx(2475, rel=0.002)
    # Where the model and the book's DP section differ: for 2 nodes the book writes B/N > 1237
    # (scale-out only, alpha (X-1)/X), but its own Quiz 4 Q5 shows 2 nodes are node-level bound.
    # The model keeps the max of both levels, so it gives the node figure (1923), not 1237.
    two_nodes = C.dp_critical_tokens_per_chip("H100", over=16)
    assert two_nodes == pytest.approx(node, rel=1e-12)
    assert two_nodes > 1.5 * 1237


def test_flat_ring_is_slower_across_nodes() -> None:
    # A flat ring pushes 2(N-1)/N * V through each GPU's own NIC; the hierarchical
    # schedule spreads the cross-node part over all 8 NICs of the node, so it is ~8x faster in
    # bandwidth (the NIC count). Against the old training model, which counted the 400 Gb/s NIC
    # as 100 GB/s (both directions, accelkit/training.py), the critical batch was ~4x too large.
    hier = C.dp_critical_tokens_per_chip("H100", over=1024)
    flat = C.dp_critical_tokens_per_chip("H100", over=1024, algorithm="flat_ring")
    assert flat / hier == pytest.approx(8 * 1023 / 1024 * 128 / 127, rel=0.001)
    old = H100.peak_flops() / 100e9  # the old flat ring at 100 GB/s "bidirectional"
    assert old / hier == pytest.approx(4.0, rel=0.02)
    r = C.all_reduce("H100", array_bytes=1e9, over=64, algorithm="flat_ring")
    assert r.network == "scale-out" and r.algorithm == "flat ring"


def test_dcn_level_between_tpu_slices() -> None:
    # 16,384 v5p do not fit one slice (largest 16x16x24 = 6,144): 4 slices of 16x16x16 over DCN.
    r = C.all_reduce("v5p", array_bytes=2e9, over=16384)
    assert r.network == "ICI+DCN" and r.domains == 4 and r.over == (16, 16, 16)
    dcn = [lv for lv in r.levels if lv.network == "DCN"][0]
    assert dcn.array_bytes == pytest.approx(2e9 / 4096)
    assert dcn.bandwidth_seconds == pytest.approx(2 * 3 / 4 * 2e9 / 4096 / 6.25e9)
    # pure DCN data parallelism of one chip per slice would be bound by the per-chip DCN share:
    # the book's "for DCN this is 75,000" (training.md) is C / W_dcn per chip = 4.59e14 / 6.25e9.
    assert V5P.peak_flops() / V5P.scaleout_bytes_per_second == pytest.approx(73_440)
    serial = C.all_reduce("v5p", array_bytes=2e9, over=16384, pipelined=False)
    assert serial.bandwidth_seconds == pytest.approx(sum(lv.bandwidth_seconds for lv in r.levels))


def test_inner_groups_span_nodes_through_their_own_nic() -> None:
    # DP across 16 nodes with TP=8 inside each: one GPU per node, a ring over the NICs.
    r = C.all_reduce("H100", array_bytes=1e9, over=16, inner=8)
    assert r.network == "scale-out" and r.chips_per_domain == 1 and r.domains == 16
    assert r.bandwidth_seconds == pytest.approx(2 * 15 / 16 * 1e9 / 50e9)
    # TP=2 inside: 4 of the group per node.
    r4 = C.all_reduce("H100", array_bytes=1e9, over=16, inner=2)
    assert r4.chips_per_domain == 4 and r4.domains == 4


def test_latency_counts_ring_steps() -> None:
    # NCCL model: base + steps * per-step latency, NVLink and network steps apart.
    r = C.all_reduce("H100", array_bytes=1e3, over=8)
    assert r.latency_seconds == pytest.approx(3.6e-6 + 2 * 7 * 0.47e-6)
    r = C.all_reduce("H100", array_bytes=1e3, over=32)
    assert r.latency_seconds == pytest.approx(3.6e-6 + 2 * 7 * 0.47e-6 + 2 * 3 * 2.7e-6)
    # TPU: ~1 us per hop, floor(n/2) hops per wrapped axis, twice for an all-reduce.
    t = C.all_reduce("v5p", array_bytes=1e3, over=(16, 16, 24))
    assert t.latency_seconds == pytest.approx(2 * (8 + 8 + 12) * 1e-6)
    assert C.all_gather("v5p", array_bytes=1e9, over=1).seconds == 0.0
    one = C.all_reduce("TPU v2", array_bytes=1e9, over=1)  # a group of one needs no ICI figure
    assert one.seconds == 0.0 and one.network == "none" and one.levels == ()
    assert C.all_reduce("L4", array_bytes=1e9, over=1).seconds == 0.0


def test_point_to_point() -> None:
    # one dimension-ordered path: the book's tpus.md example, one link and one hop latency a hop
    p = C.point_to_point("v5e", array_bytes=1.7e7, hops=6, routes=1)
    assert p.bandwidth_seconds == pytest.approx(1.7e7 / 4.5e10) and p.latency_seconds == pytest.approx(6e-6)
    # by default the torus's link-disjoint routes, one per ICI port (4 on a v5e), carry a
    # quarter each; the longest (a detour) is two hops longer
    d = C.point_to_point("v5e", array_bytes=1.7e7, hops=6)
    assert d.bandwidth_seconds == pytest.approx(1.7e7 / (4 * 4.5e10))
    assert d.latency_seconds == pytest.approx(8e-6)
    assert C.point_to_point("v5p", array_bytes=1e9, routes=3).bandwidth_seconds == pytest.approx(
        1e9 / (3 * 9e10))
    for bad in (0, 5, 2.5):  # a v5e has 4 ports
        with pytest.raises((ValueError, TypeError), match="routes"):
            C.point_to_point("v5e", array_bytes=1e9, routes=bad)
    with pytest.raises(ValueError, match="routes must be 1"):
        C.point_to_point("H100", array_bytes=1e9, routes=2)
    g = C.point_to_point("H100", array_bytes=1e9, network="scale-out")
    assert g.network == "scale-out" and g.bandwidth_seconds == pytest.approx(1e9 / 50e9)


def test_group_layout() -> None:
    assert C.group_layout("v5p", 16) == (1, (16,))
    assert C.group_layout("v5p", 6144) == (1, (24, 16, 16))
    # 8960 chips do not fit one slice (6,144); 2 slices of 4,480 would need an axis of 7 or 14 and
    # lose every wraparound, so the layout takes 7 full-cube slices of 20x8x8 (2% rule).
    slices, axes = C.group_layout("v5p", 8960)
    assert slices * math.prod(axes) == 8960 and math.prod(axes) <= 6144
    assert (slices, axes) == (7, (20, 8, 8))
    assert C.all_reduce("v5p", array_bytes=1e9, over=8960).levels[0].wraps == (True, True, True)
    # A whole small slice follows the slice rule: 4x4x2 is not a full cube, so no wraparound.
    assert C.group_layout("v5p", 32) == (1, (4, 4, 2))
    assert C.all_reduce("v5p", array_bytes=1e9, over=32).levels[0].wraps == (False, False, False)
    assert C.group_layout("v5p", 16384) == (4, (16, 16, 16))
    assert C.group_layout("v5e", 256) == (1, (16, 16))
    assert C.group_layout("v5e", 1024) == (4, (16, 16))


def test_results_are_frozen_with_units() -> None:
    r = C.all_reduce("v5p", array_bytes=1e9, over=16)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.seconds = 0  # type: ignore[misc]
    assert r.seconds == pytest.approx(r.bandwidth_seconds + r.latency_seconds)
    assert r.kind == "all_reduce" and r.chip == "TPU v5p" and r.group_chips == 16


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), 1e30])
def test_bad_array_bytes(bad) -> None:
    with pytest.raises(ValueError, match="array_bytes"):
        C.all_gather("v5p", array_bytes=bad, over=4)


@pytest.mark.parametrize("bad", ["1e9", True, None])
def test_array_bytes_of_the_wrong_type(bad) -> None:
    with pytest.raises(TypeError, match="array_bytes"):
        C.all_gather("v5p", array_bytes=bad, over=4)


@pytest.mark.parametrize(("chip", "over", "match"), [
    ("v5p", 0, "over must be"),
    ("v5p", 3.5, "over must be"),
    ("v5p", 10**6, "over must be"),
    ("v5p", (16, 16, 16, 2), "tuple of 1 to 3"),
    ("v5p", (40,), "largest slice"),
    ("v5e", (16, 16, 2), "2D torus"),
    ("v5p", 6143, "cannot be laid out"),
    ("H100", 12, "multiple of 8"),
    ("L4", 2, "over must be 1"),
    ("TPU v3", 4096, "no published DCN"),
    ("TPU v2", 4, "no published ICI link"),
])
def test_bad_groups(chip, over, match) -> None:
    with pytest.raises(ValueError, match=match):
        C.all_reduce(chip, array_bytes=1e9, over=over)


def test_other_bad_arguments() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        C.collective("allreduce", "v5p", array_bytes=1e9, over=4)
    with pytest.raises(ValueError, match="flat_ring"):
        C.all_reduce("v5p", array_bytes=1e9, over=4, algorithm="flat_ring")
    with pytest.raises(ValueError, match="inner must divide"):
        C.all_reduce("H100", array_bytes=1e9, over=16, inner=3)
    with pytest.raises(ValueError, match="inner is for GPU"):
        C.all_reduce("v5p", array_bytes=1e9, over=16, inner=4)
    with pytest.raises(ValueError, match="slices is for TPUs"):
        C.all_reduce("H100", array_bytes=1e9, over=16, slices=2)
    with pytest.raises(TypeError, match="over must be"):
        C.all_reduce("H100", array_bytes=1e9, over="8")
    with pytest.raises(ValueError, match="unknown chip"):
        C.all_reduce("H1000", array_bytes=1e9, over=8)
    with pytest.raises(ValueError, match="dtype must be one of"):
        C.dp_critical_tokens_per_chip("v5p", over=16, dtype="fp64")
    with pytest.raises(ValueError, match="hops must be 1"):
        C.point_to_point("H100", array_bytes=1e9, hops=2)


def test_nvl72_domain_override() -> None:
    # gpus.md@1a55377a: GB200 NVL72 is one 72-GPU NVLink domain at 900 GB/s per GPU; 144 GPUs are
    # two such racks. With the HGX domain of 8 the same 144 B200 span 18 nodes.
    rack = C.all_reduce("B200", array_bytes=1e9, over=72, scaleup_domain=72)
    assert rack.network == "NVLink" and rack.domains == 1
    assert rack.bandwidth_seconds == pytest.approx(2 * 71 / 72 * 1e9 / 900e9)
    two = C.all_reduce("B200", array_bytes=1e9, over=144, scaleup_domain=72)
    hgx = C.all_reduce("B200", array_bytes=1e9, over=144)
    assert two.domains == 2 and hgx.domains == 18
    out = [lv for lv in two.levels if lv.network == "scale-out"][0]
    assert out.array_bytes == pytest.approx(1e9 / 72)  # each GPU carries 1/72 across racks
    assert two.bandwidth_seconds < hgx.bandwidth_seconds
    with pytest.raises(ValueError, match="scaleup_domain is for GPUs"):
        C.all_reduce("v5p", array_bytes=1e9, over=4, scaleup_domain=8)


def test_latency_raises_the_critical_batch_for_small_models() -> None:
    # With params given the latency term counts: a 10M-parameter model's gradient all-reduce on
    # 1,024 H100 is latency-bound, so its critical batch is far above the bandwidth-only figure.
    bw_only = C.dp_critical_tokens_per_chip("H100", over=1024)
    small = C.dp_critical_tokens_per_chip("H100", over=1024, params=1e7)
    big = C.dp_critical_tokens_per_chip("H100", over=1024, params=1e11)
    assert small > 2 * bw_only and big == pytest.approx(bw_only, rel=0.01)


@pytest.mark.parametrize("call, figure", [
    (lambda: C.all_reduce("L4", array_bytes=1e9, over=2), "scaleup_bytes_per_second"),
    (lambda: C.all_gather("TPU v2", array_bytes=1e9, over=4), "link_bytes_per_second"),
    (lambda: C.all_reduce("TPU v3", array_bytes=1e9, over=4096), "scaleout_bytes_per_second"),
    (lambda: C.point_to_point("L4", array_bytes=1e9), "scaleup_bytes_per_second"),
    (lambda: C.point_to_point("TPU v3", array_bytes=1e9, network="scale-out"),
     "scaleout_bytes_per_second"),
    (lambda: C.group_layout("TPU v2", 4), "link_bytes_per_second"),
])
def test_a_missing_figure_is_a_missing_figure_error(call, figure) -> None:
    # like the rest of the library: a chip that cannot be costed this way, not a bad argument
    with pytest.raises(ak.chips.MissingFigureError) as info:
        call()
    assert info.value.figure == figure


@pytest.mark.parametrize("call", [
    lambda: C.all_reduce("H100", array_bytes=1e9, over=12),
    lambda: C.all_reduce("H100", array_bytes=1e9, over=64, inner=3),
    lambda: C.all_reduce("v5p", array_bytes=1e9, over=6143),
    lambda: C.all_reduce("v5e", array_bytes=1e9, over=(32, 16)),
])
def test_a_group_that_cannot_be_placed_is_a_group_layout_error(call) -> None:
    with pytest.raises(C.GroupLayoutError):
        call()
    assert issubclass(C.GroupLayoutError, ValueError)
    assert not issubclass(C.GroupLayoutError, ak.chips.MissingFigureError)
