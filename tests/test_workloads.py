"""The same work on both toy machines: the results the course requires from the defaults."""

from __future__ import annotations

import numpy as np
import pytest

from accelkit import SIMDMachine, SystolicArray
from accelkit.workloads import (WORKLOADS, Branchy, Comparison, Elementwise, Gather, Matmul,
                                Reduction, SparseMatmul, TPUStyleMachine, compare, workload)


@pytest.fixture(scope="module")
def results() -> dict[str, Comparison]:
    return {name: compare(name) for name in WORKLOADS}


def test_default_areas():
    assert SIMDMachine().mac_cells == 128                 # 4 cores × 32 lanes
    assert TPUStyleMachine().mac_cells == 16 * 16 + 16    # array cells + vector lanes


def test_systolic_wins_large_dense_matmul_per_cell(results):
    dense = results["dense_matmul"]
    assert dense.winner_per_area == "TPU"
    assert dense.tpu_mac_utilization > dense.gpu_mac_utilization


@pytest.mark.parametrize("name", ["recommender_step", "branchy_elementwise", "rnn_small_batch"])
def test_simd_wins_or_loses_less_on_flexible_work(results, name):
    dense_ratio = results["dense_matmul"].tpu_cell_cycles / results["dense_matmul"].gpu_cell_cycles
    ratio = results[name].tpu_cell_cycles / results[name].gpu_cell_cycles
    assert ratio > dense_ratio        # loses less ...
    assert results[name].winner_per_area == "GPU"  # ... and, with these defaults, wins


def test_gather_op_alone_favours_the_simd_machine(results):
    gather = next(op for op in results["recommender_step"].operations if op.kind == "gather")
    assert gather.winner_per_area == "GPU"


def test_half_divergence_roughly_doubles_branchy_cycles():
    gpu = SIMDMachine()
    none = Branchy(1 << 16, taken_fraction=0.0).run(gpu)
    half = Branchy(1 << 16, taken_fraction=0.5).run(gpu)
    assert 1.7 <= half.cycles / none.cycles <= 2.1
    # the TPU's vector unit predicates: it pays for both sides whatever the data
    tpu = TPUStyleMachine()
    assert Branchy(4096, 0.0).run(tpu).cycles == Branchy(4096, 0.5).run(tpu).cycles


def test_totals_and_shares_add_up(results):
    for c in results.values():
        assert c.gpu_cycles == sum(op.gpu_cycles for op in c.operations)
        assert c.tpu_cycles == sum(op.tpu_cycles for op in c.operations)
        assert 0 <= c.tpu_outside_matrix_share <= 1 and 0 <= c.gpu_outside_matrix_share <= 1
        assert c.gpu_cell_cycles == c.gpu_cycles * c.gpu_mac_cells
        for op in c.operations:
            assert 0 < op.gpu_utilization <= 1 and 0 < op.tpu_utilization <= 1
    # Amdahl: in a recommender step almost all the TPU's time is off the matrix unit
    assert results["recommender_step"].tpu_outside_matrix_share > 0.5
    assert results["dense_matmul"].tpu_outside_matrix_share == 0
    text = repr(results["transformer_layer"])
    assert "TOTAL" in text and "FFN up" in text
    assert "<table>" in results["transformer_layer"]._repr_html_()


def test_matmul_operation_counts_equal_simulation():
    op = Matmul(40, 24, 56)
    rng = np.random.default_rng(0)
    A, B = rng.integers(-3, 4, (40, 56)), rng.integers(-3, 4, (56, 24))
    gpu, tpu = SIMDMachine(), TPUStyleMachine()
    assert op.run(gpu).counts() == gpu.matmul(A, B).counts()
    assert op.run(tpu).cycles == tpu.matmul(A, B).cycles
    assert np.array_equal(tpu.matmul(A, B).output, A @ B)


def test_tpu_vector_unit_computes_the_same_values():
    tpu, gpu = TPUStyleMachine(), SIMDMachine()
    x = np.random.default_rng(2).standard_normal(300)
    np.testing.assert_allclose(tpu.elementwise(x, "gelu").output, gpu.elementwise(x, "gelu").output)
    table = np.arange(40.0).reshape(10, 4)
    np.testing.assert_array_equal(tpu.gather(table, np.array([3, 1])).output, table[[3, 1]])
    X = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(tpu.reduction(X, "sum").output, X.sum(1))


def test_systolic_array_cannot_skip_zeros():
    tpu = TPUStyleMachine()
    sparse = SparseMatmul(128, 128, 128, density=0.1).run(tpu)
    assert sparse.cycles == tpu.estimate(M=128, N=128, K=128).cycles
    gpu = SIMDMachine()
    assert SparseMatmul(256, 256, 256, density=0.1).run(gpu).cycles < \
        gpu.estimate(M=256, N=256, K=256).cycles / 2


def test_custom_workload_and_lookup():
    ops = [Elementwise(1000, "relu"), Reduction(8, 100, "max"), Gather(100, 16, 64),
           Matmul(8, 8, 8, count=3)]
    c = compare(ops, gpu=SIMDMachine(cores=2), tpu=TPUStyleMachine(SystolicArray(8, 8)))
    assert c.workload == "custom" and len(c.operations) == 4
    assert c.operations[3].gpu_cycles == 3 * SIMDMachine(cores=2).estimate(M=8, N=8, K=8).cycles
    assert workload("Transformer Layer") == WORKLOADS["transformer_layer"]


@pytest.mark.parametrize("call, error, word", [
    (lambda: compare("transformr_layer"), ValueError, "transformer_layer"),
    (lambda: compare([]), ValueError, "workload"),
    (lambda: compare([1]), TypeError, r"workload\[0\]"),
    (lambda: compare(3), TypeError, "workload"),
    (lambda: compare("dense_matmul", gpu="h100"), TypeError, "gpu"),
    (lambda: compare("dense_matmul", tpu=SIMDMachine()), TypeError, "tpu"),
    (lambda: compare([Matmul(0, 1, 1)]), ValueError, "Matmul.M"),
    (lambda: compare([Elementwise(5, "swish")]), ValueError, "Elementwise.op"),
    (lambda: compare([Branchy(5, taken_fraction=1.5)]), ValueError, "taken_fraction"),
    (lambda: TPUStyleMachine(array="16x16"), TypeError, "array"),
    (lambda: TPUStyleMachine(vector_lanes=0), ValueError, "vector_lanes"),
    (lambda: TPUStyleMachine(vector_cycles_per_op=1.5), ValueError, "vector_cycles_per_op"),
])
def test_bad_input(call, error, word):
    with pytest.raises(error, match=word):
        call()


@pytest.mark.parametrize("build, match", [
    (lambda: Matmul(0, 1, 1), "Matmul.M"), (lambda: Matmul(2, 2, 2, count=0), "Matmul.count"),
    (lambda: Elementwise(5, "swish"), "Elementwise.op"),
    (lambda: Branchy(5, taken_fraction=1.5), "taken_fraction"),
    (lambda: Reduction(4, 2.5), "Reduction.cols"),
    (lambda: SparseMatmul(8, 8, 8, block=0), "SparseMatmul.block"),
    (lambda: Gather(vocab=10**9, dim=10**6, lookups=4), "Gather would generate"),
])
def test_operations_are_checked_when_built(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_operations_store_whole_sizes_as_ints():
    op = Matmul(np.int64(4), 8.0, 2)
    assert (op.M, op.N, op.K) == (4, 8, 2) and all(type(v) is int for v in (op.M, op.N, op.K))
