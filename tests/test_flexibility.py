"""accelkit.labs.flexibility: the memoised lab equals an unmemoised workloads.compare, and the real-chip
pair matches the roofline's closed forms (Williams, Waterman & Patterson, "Roofline", CACM 2009:
time = max(FLOPs / peak, bytes / bandwidth))."""

from __future__ import annotations

from dataclasses import replace

import pytest

from accelkit import chips
from accelkit.labs import flexibility as flex
from accelkit import workloads as wl
from accelkit.simd import SIMDMachine
from accelkit.systolic import SystolicArray


def _direct(ops, tc="none (toy default)", double_buffer=False, warps=8, name="custom"):
    """The same comparison on freshly built machines, without any memoised run."""
    gpu = SIMDMachine(tensor_core=flex.TENSOR_CORES[tc], warps_per_core=warps)
    tpu = wl.TPUStyleMachine(SystolicArray(16, 16, "ws", double_buffer=double_buffer),
                             memory_in_flight=4 * warps)
    return replace(wl.compare(list(ops), gpu, tpu), workload=name)


@pytest.mark.parametrize("preset, tc, db, warps", [
    ("transformer_layer", "none (toy default)", False, 8),
    ("recommender_step", "16×8×16", False, 64),
    ("block_sparse_matmul", "4×4×4", True, 8),
])
def test_lab_compare_equals_compare_on_fresh_machines(preset, tc, db, warps):
    ops = wl.WORKLOADS[preset]
    assert flex.lab_compare(ops, preset, tc, db, warps) == _direct(ops, tc, db, warps, preset)
    # the second call is served from the memo and still equal
    assert flex.lab_compare(ops, preset, tc, db, warps) == _direct(ops, tc, db, warps, preset)


def test_default_lab_is_workloads_compare_with_default_machines():
    ops = wl.WORKLOADS["transformer_layer"]
    assert flex.lab_compare(ops, "transformer_layer") == wl.compare("transformer_layer")


def test_machines_carry_their_knobs():
    gpu = flex.gpu_machine("16×8×16", 64)
    assert gpu.tensor_core == (16, 8, 16) and gpu.warps_per_core == 64 and gpu.peak_macs_per_cycle == 4 * 16 * 8 * 16
    tpu = flex.tpu_machine(True, 256)
    assert tpu.array.double_buffer and tpu.vector.warps_per_core == 256
    assert tpu.mac_cells == 16 * 16 + 16


def test_with_side_instructions_changes_only_branches():
    ops = wl.WORKLOADS["branchy_elementwise"] + wl.WORKLOADS["transformer_layer"]
    out = flex.with_side_instructions(ops, 4)
    assert len(out) == len(ops)
    for before, after in zip(ops, out):
        if isinstance(before, wl.Branchy):
            assert after == replace(before, side_instructions=4)
        else:
            assert after is before


def test_shorter_branch_sides_shrink_the_gpu_and_tpu_gap():
    ops = wl.WORKLOADS["branchy_elementwise"]
    long, short = (flex.lab_compare(flex.with_side_instructions(ops, s)) for s in (64, 4))
    assert short.gpu_cycles < long.gpu_cycles and short.tpu_cycles < long.tpu_cycles


def test_mix_ops_puts_each_knob_where_it_belongs():
    dense, step, gather, branch, sparse = flex.mix_ops(batch=32, taken_fraction=0.1,
                                                       side_instructions=16, density=0.25,
                                                       embedding_dim=64)
    assert (dense.M, dense.N, dense.K) == (1024, 1024, 1024)
    assert (step.M, step.N, step.K) == (32, 1024, 256)
    assert (gather.vocab, gather.dim, gather.lookups) == (20_000, 64, 256)
    assert (branch.n, branch.taken_fraction, branch.side_instructions) == (8192, 0.1, 16)
    assert (sparse.density, sparse.block) == (0.25, 32)


def test_recurrent_batch_sweep_equals_one_comparison_per_batch():
    sweep = flex.recurrent_batch_sweep((1, 64), "16×8×16", 64)
    for b, ratio in sweep.items():
        one = _direct([wl.Matmul(b, 1024, 256)], "16×8×16", False, 64)
        assert ratio == one.operations[0].tpu_over_gpu_per_area
        assert ratio == one.tpu_cell_cycles / one.gpu_cell_cycles


@pytest.mark.parametrize("chip", ["TPU v5e", "NVIDIA H100 (SXM)"])
def test_roofline_pair_matches_the_closed_forms(chip):
    the_chip = chips.get(chip)
    gather, dense = flex.roofline_pair(chip, batch=256)
    # gather: 4096·128 bf16 elements read once, one add each: 0.5 FLOP/byte
    assert gather.flops == pytest.approx(4096 * 128)
    assert gather.bytes == pytest.approx(2 * 4096 * 128)
    assert gather.arithmetic_intensity == pytest.approx(0.5)
    assert gather.bound == "memory"
    assert gather.seconds == pytest.approx(2 * 4096 * 128 / the_chip.hbm_bytes_per_second)
    # dense: 2·B·D·D FLOPs over bf16 A, W and C
    assert dense.flops == pytest.approx(2 * 256 * 4096 * 4096)
    assert dense.bytes == pytest.approx(2 * (256 * 4096 + 4096 * 4096 + 256 * 4096))
    assert dense.seconds == pytest.approx(max(dense.flops / the_chip.peak_flops("bf16"),
                                              dense.bytes / the_chip.hbm_bytes_per_second))


def test_amdahl_numbers_are_the_default_comparisons_and_a_fresh_dict():
    numbers = flex.amdahl_numbers()
    assert numbers == {n: wl.compare(n) for n in ("recommender_step", "transformer_layer")}
    numbers.clear()
    assert len(flex.amdahl_numbers()) == 2


@pytest.mark.parametrize("call, error, match", [
    (lambda: flex.gpu_machine("8×8×8"), ValueError, "tensor_core"),
    (lambda: flex.gpu_machine(warps_per_core=0), ValueError, "warps_per_core"),
    (lambda: flex.tpu_machine("yes"), TypeError, "double_buffer"),
    (lambda: flex.tpu_machine(memory_in_flight=0), ValueError, "memory_in_flight"),
    (lambda: flex.lab_compare(()), ValueError, "at least one"),
    (lambda: flex.lab_compare(("matmul",)), TypeError, r"ops\[0\]"),
    (lambda: flex.lab_compare(wl.Matmul(4, 4, 4)), TypeError, "ops"),
    (lambda: flex.lab_compare((wl.Matmul(0, 4, 4),)), ValueError, "Matmul.M"),
    (lambda: flex.lab_compare((wl.Matmul(4, 4, 4),), warps_per_core=2.5), ValueError, "warps"),
    (lambda: flex.with_side_instructions(wl.WORKLOADS["branchy_elementwise"], 0), ValueError, "side"),
    (lambda: flex.mix_ops(density=2.0), ValueError, "density"),
    (lambda: flex.mix_ops(batch="4"), TypeError, "batch"),
    (lambda: flex.recurrent_batch_sweep(()), TypeError, "batches"),
    (lambda: flex.recurrent_batch_sweep((1, 0)), ValueError, r"batches\[1\]"),
    (lambda: flex.roofline_pair("TPU v9", 8), ValueError, "chip"),
    (lambda: flex.roofline_pair("TPU v5e", 8, lookups=0), ValueError, "lookups"),
])
def test_bad_input_is_refused_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call()
