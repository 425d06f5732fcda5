"""Lesson 02's widgets, driven without a kernel: move a control, check what is shown is the
SIMD engine's own answer."""

from __future__ import annotations

import numpy as np

import accelkit as ak
from accelkit.simd import SIMDMachine
from accelkit.workloads import Branchy
from accelkit.widgets import (divergence_lab, simd_quiz, simd_worked_problem, tensor_core_lab,
                              warp_lab)
from accelkit.simd import access_pattern_indices
from accelkit.widgets.simd import ELEMENTS
from tests import prose


def test_warp_lab_follows_warps_lanes_and_pattern():
    w = warp_lab()
    x = np.random.default_rng(0).standard_normal(ELEMENTS)
    assert w.view.result == SIMDMachine().elementwise(x, "gelu")
    w.controls["warps_per_core"].value = 1
    one = SIMDMachine(warps_per_core=1).elementwise(x, "gelu")
    assert w.view.result == one and f"{one.cycles:,}" in w.html.value
    w.controls["kernel"].value = "load, random"
    x = np.arange(8 * ELEMENTS, dtype=np.float32)
    random = SIMDMachine(warps_per_core=1).load(x, access_pattern_indices("random"))
    assert w.view.result == random
    w.controls["kernel"].value = "load, coalesced"
    assert w.view.result.global_transactions < random.global_transactions
    w.controls["lanes"].value = 16
    assert w.view.result.lanes == 16


def test_access_patterns_cost_what_transactions_says():
    gpu = SIMDMachine()
    per_warp = {p: gpu.transactions(access_pattern_indices(p)) / (ELEMENTS / gpu.lanes)
                for p in ("coalesced", "stride 2", "stride 8", "random")}
    # 32 lanes × 4 bytes = 128 bytes = four 32-byte segments when consecutive.
    assert per_warp["coalesced"] == 4
    assert per_warp["stride 2"] == 8
    assert per_warp["stride 8"] == 32 and per_warp["random"] > 31  # random: rare shared segments


def test_warp_lab_loads_cost_lesson_02s_transactions_per_pattern():
    """Issue 24: the lab's "load" kernels were gathers (12 transactions a warp, coalesced) where
    lesson 02's coalescing cell prints 4 for a plain coalesced load. Now each load's share of
    the row is that cell's number (the same call), and the store adds a coalesced write."""
    w = warp_lab()
    for lanes in (32, 8):
        w.controls["lanes"].value = lanes
        gpu = SIMDMachine(lanes=lanes)
        warps = ELEMENTS // lanes
        store = gpu.transactions(np.arange(ELEMENTS)) / warps
        for pattern in ("coalesced", "stride 2", "stride 8", "random"):
            w.controls["kernel"].value = f"load, {pattern}"
            run = w.view.result
            load = gpu.transactions(access_pattern_indices(pattern)) / warps  # cell 11's count
            assert run.global_transactions / run.warps == load + store
            assert (f"({load + store:.1f} per warp: the load {load:.1f}, the store {store:.1f})"
                    in w.html.value)
    w.controls["lanes"].value = 32
    w.controls["kernel"].value = "load, coalesced"
    assert "8.0 per warp: the load 4.0, the store 4.0" in w.html.value
    coalesced = w.view.result
    w.controls["kernel"].value = "GELU, coalesced"  # the same memory program, more ALU work
    assert w.view.result.global_transactions == coalesced.global_transactions
    assert w.view.result.memory_cycles == coalesced.memory_cycles
    assert "(8.0 per warp)" in w.html.value and "the load" not in w.html.value


def test_divergence_lab_follows_fraction_side_and_skip():
    w = divergence_lab()
    gpu = SIMDMachine()
    half = Branchy(ELEMENTS, 0.5, side_instructions=64).run(gpu)
    assert w.view.result == half
    assert w.view.extras["uniform"] == Branchy(ELEMENTS, 0.0, side_instructions=64).run(gpu)
    w.controls["side_instructions"].value = 4
    assert w.view.result == Branchy(ELEMENTS, 0.5, side_instructions=4).run(gpu)
    w.controls["taken_fraction"].value = 0.0
    w.controls["skip_uniform_branches"].value = False
    pred = Branchy(ELEMENTS, 0.0, side_instructions=4).run(SIMDMachine(skip_uniform_branches=False))
    assert w.view.result == pred and pred.diverged_warps == pred.warps  # predication runs both sides
    assert f"{pred.cycles:,}" in w.html.value


def test_divergence_lab_says_what_its_checkbox_models():
    """Issue 24: "warps that agree skip the other side" did not say what unticking it models;
    the table says it for either state, and the box keeps the name lesson 02 gives it."""
    w = divergence_lab()
    box = w.controls["skip_uniform_branches"]
    assert prose.says("02", f"the box {box.description} is what a GPU does")
    assert "GPU: a warp whose lanes agree runs one side" in w.html.value
    assert "predication" not in w.html.value
    box.value = False
    assert "predication: every warp runs both sides under a mask" in w.html.value
    assert w.view.result.diverged_warps == w.view.result.warps  # what it says is what it ran


def test_tensor_core_lab_speedup_and_promise_from_engine():
    w = tensor_core_lab()
    base, tc = SIMDMachine(), SIMDMachine(tensor_core=(16, 8, 16))
    run = tc.estimate(M=1024, N=1024, K=1024)
    assert w.view.result == run
    assert w.view.extras["promise"] == 64
    speedup = base.estimate(M=1024, N=1024, K=1024).cycles / run.cycles
    assert f"{speedup:.2f}×" in w.html.value
    # the real chip's peak ratio shown beside the toy's, from the catalog
    h100 = ak.chips.get("NVIDIA H100 (SXM)")
    real = h100.peak_flops("fp16") / h100.peak_flops("fp32")
    assert w.view.extras["h100_tensor_over_simd_peak"] == real
    assert f"{real:.1f}×" in w.html.value and "not the toy" in w.html.value
    w.controls["kernel"].value = "naive (no shared memory)"
    assert w.view.result == SIMDMachine(shared_memory=False).estimate(M=1024, N=1024, K=1024)
    w.controls["size"].value = 256
    w.controls["warps_per_core"].value = 32
    naive = SIMDMachine(shared_memory=False, warps_per_core=32).estimate(M=256, N=256, K=256)
    assert w.view.result == naive and f"{naive.cycles:,}" in w.html.value


def test_worked_problem_hides_then_shows_the_engine_numbers():
    w = simd_worked_problem()
    run = SIMDMachine(tensor_core=(16, 8, 16)).estimate(M=1024, N=1024, K=1024)
    assert f"{run.memory_cycles:,}" not in w.question and not w.answer_html.value
    text = w.reveal()
    assert f"{run.memory_cycles:,}" in text and "64×" in text and w.revealed
    assert f"{run.issue_cycles:,}" in text


def test_quiz_right_and_wrong():
    q = simd_quiz()
    q.select(q.correct)
    assert q.check()[0]
    q.select(q.position(0))  # written first: "every taking lane"
    right, message = q.check()
    assert not right and "warps" in message
    rare = Branchy(ELEMENTS, 0.02).run(SIMDMachine())
    assert f"{rare.diverged_warps} of {rare.warps}" in q.options[q.correct]
