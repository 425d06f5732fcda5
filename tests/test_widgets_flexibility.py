"""Lesson 09's widgets, driven without a kernel: what is shown must be the library's own answer."""

from __future__ import annotations

from dataclasses import replace

from accelkit import roofline
from accelkit import workloads as wl
from accelkit.widgets import (flexibility_lab, flexibility_quiz, flexibility_worked_problem,
                              gather_vs_matmul_roofline, mix_builder)
from accelkit.labs.flexibility import (gpu_machine, lab_compare, mix_ops, roofline_pair,
                                       tpu_machine, with_side_instructions)


def _library(ops, name="custom", tc="none (toy default)", double_buffer=False, warps=8):
    return replace(wl.compare(ops, gpu_machine(tc, warps), tpu_machine(double_buffer, 4 * warps)),
                   workload=name)


def test_lab_default_is_compare_on_the_default_machines():
    w = flexibility_lab()
    assert w.view.result == wl.compare("transformer_layer")
    assert f"{w.view.result.tpu_outside_matrix_share:.1%}" in w.html.value


def test_lab_flips_follow_the_library():
    w = flexibility_lab()
    w.controls["workload"].value = "block_sparse_matmul"
    w.controls["tensor_core"].value = "4×4×4"
    w.controls["double_buffer"].value = True
    ops = wl.WORKLOADS["block_sparse_matmul"]
    assert w.view.result == _library(ops, "block_sparse_matmul", "4×4×4", True)
    w.controls["workload"].value = "branchy_elementwise"
    w.controls["side_instructions"].value = 4
    short = _library(with_side_instructions(wl.WORKLOADS["branchy_elementwise"], 4),
                     "branchy_elementwise", "4×4×4", True)
    assert w.view.result == short
    assert f"{short.tpu_cell_cycles / short.gpu_cell_cycles:.2f}" in w.html.value


def test_memoised_comparison_equals_compare_for_a_vector_heavy_preset_with_a_tensor_core():
    ops = wl.WORKLOADS["recommender_step"]
    assert lab_compare(ops, "r", "16×8×16", False, 64) == _library(ops, "r", "16×8×16", False, 64)


def test_mix_builder_follows_its_knobs():
    w = mix_builder()
    assert w.view.result == _library(mix_ops())
    w.controls["batch"].value = 64
    w.controls["density"].value = 0.5
    w.controls["memory"].value = "generous (256 in flight)"
    w.controls["tensor_core"].value = "16×8×16"
    ops = mix_ops(batch=64, density=0.5)
    assert w.view.result == _library(ops, tc="16×8×16", warps=64)
    sweep = w.view.extras["batch_sweep"]
    one = wl.compare([wl.Matmul(64, 1024, 256)], gpu_machine("16×8×16", 64), tpu_machine(False, 256))
    assert sweep[64] == one.operations[0].tpu_over_gpu_per_area


def test_roofline_widget_shows_library_numbers_for_chosen_chips():
    w = gather_vs_matmul_roofline()
    w.controls["chip_b"].value = "NVIDIA B200 (HGX)"
    w.controls["batch"].value = 4096
    dense = roofline.matmul("NVIDIA B200 (HGX)", M=4096, N=4096, K=4096)
    assert w.view.result["NVIDIA B200 (HGX)"][1] == dense
    assert f"{dense.seconds * 1e6:,.1f} µs" in w.html.value
    gather = w.view.result["TPU v5e"][0]
    assert gather.bound == "memory"


def test_roofline_widget_opens_at_the_lessons_batch_where_the_contrast_shows():
    """Issue 24: at the old default batch 256 the dense layer was memory-bound on both chips,
    like the gather; the widget opens at lesson 09's batch, compute-bound on both."""
    from accelkit.labs.flexibility import DENSE_LAYER_BATCH

    w = gather_vs_matmul_roofline()
    assert w.controls["batch"].value == DENSE_LAYER_BATCH
    assert set(w.view.result) == {w.controls["chip_a"].value, w.controls["chip_b"].value}
    for chip, (gather, dense) in w.view.result.items():
        assert (gather, dense) == roofline_pair(chip)  # the lesson's cell 21 call
        assert gather.bound == "memory" and dense.bound == "compute"
        assert f"{dense.seconds * 1e6:,.1f} µs, compute-bound" in w.html.value
    assert w.html.value.count("compute-bound") == 2


def test_utilization_row_is_not_called_mfu():
    """Issue 24: the busy-MAC-cell share was labelled "(MFU)", which lesson 07 defines as a
    model's FLOPs over the chips' peak; the row says what it counts, in both labs."""
    for w in (flexibility_lab(), mix_builder()):
        result = w.view.result
        assert "MFU" not in w.html.value
        assert "matrix-unit utilization (busy MAC cells of peak): GPU / TPU" in w.html.value
        assert (f"{result.gpu_mac_utilization:.1%} / {result.tpu_mac_utilization:.1%}"
                in w.html.value)


def test_worked_problem_hides_then_shows_amdahl_bounds():
    w = flexibility_worked_problem()
    rec = wl.compare("recommender_step")
    bound = f"{1 / rec.tpu_outside_matrix_share:.2f}×"
    assert bound not in w.question and not w.answer_html.value
    assert f"{rec.tpu_outside_matrix_share:.1%}" in w.question
    text = w.reveal()
    assert bound in text and w.answer_html.value == text


def test_quiz_right_and_wrong():
    q = flexibility_quiz()
    q.select(q.correct)
    assert q.check()[0]
    q.select(q.position(0))  # written first: a larger systolic array
    right, message = q.check()
    assert not right and "Amdahl" in message
