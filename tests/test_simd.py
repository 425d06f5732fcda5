"""The SIMD engine: exact products, matmul() == estimate(), and the cost model's invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelkit import SIMDMachine, SIMDRun
from accelkit.simd import ELEMENTWISE_INSTRUCTIONS
from tests.strategies import gemm_operands, simd_machines

RNG = np.random.default_rng(1234)


# -- exactness and the two paths -----------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(machine=simd_machines(), operands=gemm_operands(max_dim=40))
def test_matmul_is_exact_and_agrees_with_estimate(machine, operands):
    A, B = operands
    run = machine.matmul(A, B)
    if A.dtype.kind == "i":
        assert run.output.dtype == np.int64 and np.array_equal(run.output, A @ B)
    else:
        np.testing.assert_allclose(run.output, A @ B, rtol=1e-12, atol=1e-12)
    est = machine.estimate(M=A.shape[0], N=B.shape[1], K=A.shape[1])
    assert est.output is None
    assert run.counts() == est.counts()
    assert 0 < run.utilization <= 1
    assert 0 < run.lane_utilization <= 1
    assert run.macs == A.shape[0] * A.shape[1] * B.shape[1]
    assert run.cycles >= max(run.issue_cycles, run.memory_cycles)


def test_result_is_frozen_and_readable():
    run = SIMDMachine().matmul(np.eye(3, dtype=int), np.ones((3, 2), dtype=int))
    assert isinstance(run, SIMDRun)
    with pytest.raises(AttributeError):
        run.cycles = 1  # type: ignore[misc]
    assert "cycles=" in repr(run) and "<table>" in run._repr_html_()


# -- memory: coalescing and the tiled kernel -----------------------------------------------------

def test_transactions_coalesced_strided_random():
    gpu = SIMDMachine()  # 32 lanes, 4-byte elements, 32-byte segments
    coalesced = gpu.transactions(np.arange(1024))
    strided = gpu.transactions(np.arange(1024) * 8)  # 32 bytes apart: one segment per lane
    random = gpu.transactions(np.random.default_rng(0).integers(0, 10**7, 1024))
    assert coalesced == 1024 * 4 // 32          # 8 lanes share each segment
    assert strided == 1024
    assert random >= 1000 and random > 7 * coalesced  # nearly one segment per lane
    assert gpu.transactions(np.zeros(64, dtype=int)) == 2  # a broadcast: one per warp


def test_naive_kernel_transactions_by_hand():
    # 64³, 32 lanes: per warp-step A is one broadcast transaction, B one 128-byte row = 4.
    M = N = K = 64
    run = SIMDMachine(shared_memory=False).matmul(np.ones((M, K)), np.ones((K, N)))
    warps = M * N // 32
    assert run.global_transactions == warps * K * (1 + 4) + M * N * 4 // 32
    assert run.dram_reads == {"A": M * N * K, "B": M * N * K}
    assert run.instructions == warps * (3 * K + 1)


def test_tiled_kernel_reads_global_memory_less_than_naive():
    A, B = RNG.standard_normal((128, 128)), RNG.standard_normal((128, 128))
    naive = SIMDMachine(shared_memory=False).matmul(A, B)
    tiled = SIMDMachine(tile=32).matmul(A, B)
    # Each element of A is fetched once per block column (N/T = 4 times) instead of N times.
    assert tiled.dram_reads == {"A": 128 * 128 * 4, "B": 128 * 128 * 4}
    assert naive.dram_reads["A"] == 128**3
    assert tiled.global_transactions * 10 < naive.global_transactions
    assert tiled.cycles < naive.cycles
    assert tiled.sram_reads["A"] > 0 and naive.sram_reads["A"] == 0
    np.testing.assert_allclose(tiled.output, naive.output)


def test_more_resident_warps_hide_more_latency():
    A, B = np.ones((64, 64)), np.ones((64, 64))
    few = SIMDMachine(shared_memory=False, warps_per_core=1).matmul(A, B)
    many = SIMDMachine(shared_memory=False, warps_per_core=16).matmul(A, B)
    assert few.global_transactions == many.global_transactions
    assert few.memory_cycles == 16 * many.memory_cycles


# -- tensor core ---------------------------------------------------------------------------------

@pytest.mark.parametrize("tile", [(4, 4, 4), (16, 8, 16)])
def test_tensor_core_raises_throughput_by_its_tile_factor(tile):
    # Issue-bound (fast memory), shapes a multiple of every tile: the instruction mix is the same,
    # each multiply instruction does m·n·k MACs instead of 32.
    M = N = K = 256
    plain = SIMDMachine(memory_latency_cycles=1, tile=64).estimate(M=M, N=N, K=K)
    mma = SIMDMachine(memory_latency_cycles=1, tile=64, tensor_core=tile).estimate(M=M, N=N, K=K)
    factor = tile[0] * tile[1] * tile[2] / 32
    mult_plain = plain.macs / 32
    mult_mma = mma.macs / (factor * 32)
    assert mult_plain / mult_mma == pytest.approx(factor)
    # The cooperative tile loads and barriers do not shrink (Amdahl on the instruction mix): a
    # small MMA tile gets nearly its factor, a large one much less.
    speedup = plain.cycles / mma.cycles
    assert speedup <= factor
    assert speedup >= (0.8 * factor if factor <= 2 else 0.2 * factor)
    assert SIMDMachine(tensor_core=tile).mac_cells == 4 * (32 + tile[0] * tile[1] * tile[2])


def test_tensor_core_matmul_is_exact():
    A, B = RNG.integers(-9, 9, (70, 45)), RNG.integers(-9, 9, (45, 33))
    assert np.array_equal(SIMDMachine(tensor_core=(16, 8, 16)).matmul(A, B).output, A @ B)


# -- divergence ----------------------------------------------------------------------------------

def test_half_divergent_branch_roughly_doubles_cycles():
    gpu = SIMDMachine()
    rng = np.random.default_rng(7)
    x = np.abs(rng.standard_normal(1 << 15)) + 0.5
    uniform = gpu.branchy(x)                                  # every lane takes the then-side
    mixed = gpu.branchy(x * np.where(rng.random(x.size) < 0.5, 1, -1))
    assert uniform.diverged_warps == 0 and mixed.diverged_warps == mixed.warps
    assert 1.7 <= mixed.cycles / uniform.cycles <= 2.1
    assert mixed.lane_utilization == pytest.approx(0.5, abs=0.05)
    assert uniform.lane_utilization == 1.0


def test_branch_output_matches_numpy_and_predication_runs_both_sides():
    x = RNG.integers(-5, 6, 200)
    run = SIMDMachine().branchy(x, threshold=0)
    np.testing.assert_array_equal(run.output, np.where(x > 0, x * x, -x))
    always = SIMDMachine(skip_uniform_branches=False).branchy(np.ones(256))
    skip = SIMDMachine().branchy(np.ones(256))
    assert always.issue_cycles > 1.8 * skip.issue_cycles


# -- other operations against numpy --------------------------------------------------------------

@pytest.mark.parametrize("op", sorted(ELEMENTWISE_INSTRUCTIONS))
def test_elementwise_matches_numpy(op):
    x = RNG.standard_normal(1000)
    y = RNG.standard_normal(1000)
    run = SIMDMachine().elementwise(x, op, y if op in ("add", "mul") else None)
    expected = {"relu": np.maximum(x, 0), "add": x + y, "mul": x * y, "exp": np.exp(x),
                "tanh": np.tanh(x), "sigmoid": 1 / (1 + np.exp(-x)),
                # GELU, tanh approximation: Hendrycks & Gimpel (2016), arXiv:1606.08415
                "gelu": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))}[op]
    np.testing.assert_allclose(run.output, expected, rtol=1e-12, atol=1e-12)
    assert run.global_transactions == (3 if op in ("add", "mul") else 2) * 1000 * 4 // 32
    loads_stores = 3 if op in ("add", "mul") else 2
    assert run.instructions == -(-1000 // 32) * (ELEMENTWISE_INSTRUCTIONS[op] + loads_stores)


def test_elementwise_instruction_count():
    run = SIMDMachine().elementwise(np.ones(1000), "gelu")
    warps = -(-1000 // 32)
    assert run.warps == warps and run.instructions == warps * (1 + 10 + 1)
    assert np.array_equal(SIMDMachine().elementwise(np.array([-2, 3]), "relu").output, [0, 3])


@pytest.mark.parametrize("op", ["sum", "max", "softmax"])
def test_reduction_matches_numpy(op):
    X = RNG.standard_normal((17, 70))
    run = SIMDMachine().reduction(X, op)
    expected = {"sum": X.sum(1), "max": X.max(1),
                "softmax": np.exp(X - X.max(1, keepdims=True)).sum(1)}[op]
    np.testing.assert_allclose(run.output, expected)
    assert 0 < run.lane_utilization < 1  # the shuffle tree idles half the lanes each step


def test_gather_matches_numpy_and_random_rows_cost_more_than_sequential():
    table = RNG.standard_normal((5000, 4)).astype(np.float32)
    idx = np.random.default_rng(3).integers(0, 5000, 512)
    gpu = SIMDMachine()
    run = gpu.gather(table, idx)
    np.testing.assert_array_equal(run.output, table[idx])
    sequential = gpu.gather(table, np.arange(512))
    assert run.global_transactions > sequential.global_transactions
    assert run.cycles > sequential.cycles


# -- sparsity ------------------------------------------------------------------------------------

def test_block_sparse_matmul_skips_tiles_but_scattered_zeros_do_not():
    rng = np.random.default_rng(11)
    B = rng.standard_normal((256, 256))
    keep = rng.random((8, 8)) < 0.1
    keep[0, 0] = True
    block_sparse = rng.standard_normal((256, 256)) * np.kron(keep, np.ones((32, 32)))
    scattered = rng.standard_normal((256, 256)) * (rng.random((256, 256)) < 0.1)
    gpu = SIMDMachine()
    dense = gpu.matmul(block_sparse, B)
    skipped = gpu.sparse_matmul(block_sparse, B)
    np.testing.assert_allclose(skipped.output, block_sparse @ B)
    assert skipped.cycles * 3 < dense.cycles
    assert skipped.macs == keep.sum() * 32 * 32 * 256
    scattered_run = gpu.sparse_matmul(scattered, B)
    np.testing.assert_allclose(scattered_run.output, scattered @ B)
    assert scattered_run.cycles >= 0.95 * gpu.matmul(scattered, B).cycles


def test_naive_sparse_kernel_skips_zero_elements():
    A = np.diag(np.arange(1, 33)).astype(float)
    B = RNG.standard_normal((32, 64))
    run = SIMDMachine(shared_memory=False).sparse_matmul(A, B)
    np.testing.assert_allclose(run.output, A @ B)
    assert run.macs == 32 * 64  # one nonzero per row
    assert run.dram_reads["B"] == 32 * 64


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, word", [
    ({"cores": 0}, ValueError, "cores"),
    ({"lanes": 2.5}, ValueError, "lanes"),
    ({"warps_per_core": "8"}, TypeError, "warps_per_core"),
    ({"memory_latency_cycles": -1}, ValueError, "memory_latency_cycles"),
    ({"transaction_bytes": True}, TypeError, "transaction_bytes"),
    ({"shared_memory": 1}, TypeError, "shared_memory"),
    ({"tensor_core": (4, 4)}, TypeError, "tensor_core"),
    ({"tensor_core": (4, 0, 4)}, ValueError, "tensor_core"),
    ({"tile": 6}, ValueError, "tile"),
    ({"tile": 48}, ValueError, "tile"),
])
def test_bad_machine_arguments(kwargs, error, word):
    with pytest.raises(error, match=word):
        SIMDMachine(**kwargs)


def test_bad_operands():
    gpu = SIMDMachine()
    with pytest.raises(ValueError, match="chain"):
        gpu.matmul(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(TypeError, match="A"):
        gpu.matmul(np.array([[True]]), np.ones((1, 1)))
    with pytest.raises(ValueError, match="B"):
        gpu.matmul(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="K"):
        gpu.estimate(M=1, N=1, K=0)
    with pytest.raises(ValueError, match="op"):
        gpu.elementwise(np.ones(3), "swish")
    with pytest.raises(ValueError, match="y"):
        gpu.elementwise(np.ones(3), "add")
    with pytest.raises(ValueError, match="x"):
        gpu.elementwise(np.array([1.0, np.nan]), "relu")
    with pytest.raises(ValueError, match="indices"):
        gpu.gather(np.ones((4, 2)), np.array([0, 4]))
    with pytest.raises(TypeError, match="indices"):
        gpu.gather(np.ones((4, 2)), np.array([0.5]))
    with pytest.raises(ValueError, match="X"):
        gpu.reduction(np.ones(3))
    with pytest.raises(ValueError, match="then_instructions"):
        gpu.branchy(np.ones(3), then_instructions=0)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3000), seed=st.integers(0, 2**32 - 1))
def test_divergence_never_speeds_a_branch_up(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    gpu = SIMDMachine()
    mixed = gpu.branchy(x)
    assert gpu.branchy(np.abs(x) + 1).cycles <= mixed.cycles
    assert 0 < mixed.utilization <= 1 and 0 < mixed.lane_utilization <= 1


def test_access_pattern_indices_closed_forms():
    from accelkit.simd import access_pattern_indices

    np.testing.assert_array_equal(access_pattern_indices("coalesced", n=64), np.arange(64))
    np.testing.assert_array_equal(access_pattern_indices("stride 8", n=64), 8 * np.arange(64))
    random = access_pattern_indices("random", n=4096, seed=3)
    assert random.dtype == np.int64 and len(random) == 4096
    assert random.min() >= 0 and random.max() < 8 * 4096  # the span of stride 8
    np.testing.assert_array_equal(random, access_pattern_indices("random", n=4096, seed=3))
    assert not np.array_equal(random, access_pattern_indices("random", n=4096, seed=4))
    # Coalescing, counted independently: 32 lanes of 4-byte words, 32-byte segments.
    gpu = SIMDMachine()
    assert gpu.transactions(access_pattern_indices("coalesced")) == 4096 * 4 // 32
    assert gpu.transactions(access_pattern_indices("stride 8")) == 4096


@pytest.mark.parametrize("args, error, match", [
    (("diagonal",), ValueError, "pattern"), (("stride -2",), ValueError, "pattern"),
    (("stride 0",), ValueError, "stride"), ((3,), TypeError, "pattern"),
    (("coalesced", 0), ValueError, "n"), (("random", 8, -1), ValueError, "seed"),
])
def test_access_pattern_indices_refuses_bad_input(args, error, match):
    from accelkit.simd import access_pattern_indices

    with pytest.raises(error, match=match):
        access_pattern_indices(*args)
