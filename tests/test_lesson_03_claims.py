"""Every quantitative claim in lessons/03_tpu_systolic.ipynb, recomputed with the library.

The lesson's numbers are mostly printed by its code cells; its prose states the closed forms and a
few counts (the four load cycles, two folds, 128 cycles to shift a tile in, the SIMD machine's 4
cores × 32 lanes). Those are read out of its markdown (tests/prose.py) and compared with the engine,
and the closed forms the tests check are the ones the prose writes.
"""

from __future__ import annotations

import numpy as np
import pytest

from accelkit import SIMDMachine, SystolicArray
from tests import prose

N1024 = 1024
VALUES = N1024 * N1024


@pytest.fixture(scope="module")
def machines():
    n = N1024
    return {
        "mxu": SystolicArray(128, 128, "ws").estimate(M=n, N=n, K=n),
        "naive": SIMDMachine(shared_memory=False).estimate(M=n, N=n, K=n),
        "tiled": SIMDMachine().estimate(M=n, N=n, K=n),
        "tensor": SIMDMachine(tensor_core=(16, 8, 16)).estimate(M=n, N=n, K=n),
    }


def test_engine_product_is_exact():
    """"Our engine really moves every operand cell by cell; its product is exact." """
    rng = np.random.default_rng(0)
    A, B = rng.integers(1, 10, (4, 4)), rng.integers(1, 10, (4, 4))
    assert np.array_equal(SystolicArray(4, 4, "ws").simulate(A, B).output, A @ B)


def test_os_has_no_load_phase_so_one_fold_is_shorter():
    """"Switch to os: no load phase" (ws and is first shift the stationary tile in)."""
    cycles = {f: SystolicArray(4, 4, f).estimate(M=4, N=4, K=4).cycles for f in ("os", "ws", "is")}
    assert cycles["os"] < cycles["ws"] == cycles["is"]
    prose.check("03", "watch the first {} cycles: the weights B shift down", cycles["ws"] - cycles["os"])


def test_which_dimension_folds_depends_on_the_dataflow():
    """"Set K = 8 and see ws cut the problem into two folds ... M = 8: ws needs no second fold
    (M is the dimension it streams), but os and is do." """
    prose.check("03", "cut the problem into {} folds", SystolicArray(4, 4, "ws").estimate(M=4, N=4, K=8).folds)
    folds = {f: SystolicArray(4, 4, f).estimate(M=8, N=4, K=4).folds for f in ("os", "ws", "is")}
    assert folds == {"os": 2, "ws": 1, "is": 2}


@pytest.mark.parametrize("R,C,T", [(4, 4, 4), (8, 3, 17), (128, 128, 512), (2, 9, 1)])
def test_cycles_per_fold_closed_forms(R, C, T):
    """"os: T + R + C − 2 cycles ... ws / is: R + (R + C + T − 2) cycles." """
    assert prose.says("03", "os: T + R + C − 2 cycles") and prose.says("03", "ws / is: R + (R + C + T − 2) cycles")
    assert SystolicArray(R, C, "os").estimate(M=R, N=C, K=T).cycles == T + R + C - 2
    assert SystolicArray(R, C, "ws").estimate(M=T, N=C, K=R).cycles == 2 * R + C + T - 2
    assert SystolicArray(R, C, "is").estimate(M=C, N=T, K=R).cycles == 2 * R + C + T - 2


def test_systolic_reads_each_weight_once_and_A_once_per_column_fold(machines):
    """"The systolic array reads each weight once and each value of A once per column fold
    (N / 128 times)." """
    mxu = machines["mxu"]
    assert mxu.sram_reads["B"] == VALUES
    assert mxu.sram_reads["A"] / VALUES == N1024 / 128 == mxu.col_folds
    prose.check("03", "once per column fold (N / {} times)", mxu.cols)


def test_naive_kernel_reads_every_value_once_per_mac(machines):
    """"The naive kernel fetches every value once per MAC that uses it: N times, the largest
    number above." """
    naive = machines["naive"]
    assert naive.dram_reads["A"] / VALUES == N1024 == naive.dram_reads["B"] / VALUES
    simd = SIMDMachine()
    prose.check("03", "the SIMD machine of lesson 02 ({} cores × {} lanes)", simd.cores, simd.lanes)
    others = [machines["mxu"].sram_reads["A"], machines["tiled"].dram_reads["A"],
              machines["tiled"].sram_reads["A"], machines["tensor"].sram_reads["A"]]
    assert all(naive.dram_reads["A"] > x for x in others)


def test_tiled_kernel_reads_global_memory_few_times_but_shared_memory_often(machines):
    """"the tiled kernel above also reads each value from global memory only a few times ... the
    SIMD lanes must read their operands from shared memory and registers for every few MACs" """
    tiled, mxu = machines["tiled"], machines["mxu"]
    assert tiled.dram_reads["A"] / VALUES <= mxu.sram_reads["A"] / VALUES
    assert tiled.sram_reads["A"] > 10 * mxu.sram_reads["A"]


def test_tensor_core_closes_much_of_the_gap(machines):
    """"A tensor core closes much of that gap (the shared-memory count above falls by a lot)" """
    assert machines["tensor"].sram_reads["A"] * 4 <= machines["tiled"].sram_reads["A"]
    assert machines["tensor"].sram_reads["A"] > machines["mxu"].sram_reads["A"]


def test_reuse_widget_claims_bigger_array_fewer_A_reads_and_is_swaps_operands():
    """"Note what happens to A's bar when the array side grows, and to which operand when you
    switch ws → is." """
    reads = [SystolicArray(s, s, "ws").estimate(M=128, N=128, K=128).sram_reads["A"]
             for s in (4, 8, 16, 32, 64, 128)]
    assert reads == sorted(reads, reverse=True) and reads[-1] == 128 * 128
    ws = SystolicArray(16, 16, "ws").estimate(M=128, N=128, K=128).sram_reads
    is_ = SystolicArray(16, 16, "is").estimate(M=128, N=128, K=128).sram_reads
    assert (ws["A"], ws["B"]) == (is_["B"], is_["A"])


def test_double_buffering_saves_most_on_short_streams_and_does_not_fix_decode():
    """"With a short stream the load is a large share of every fold, so hiding it saves the
    most ... at M = 8 the array is still almost idle" """
    savings, util8 = [], None
    for M in (8, 512, 4096):
        plain = SystolicArray(128, 128, "ws").estimate(M=M, N=1024, K=1024)
        buffered = SystolicArray(128, 128, "ws", double_buffer=True).estimate(M=M, N=1024, K=1024)
        assert plain.cycles - buffered.cycles == (plain.folds - 1) * 128
        savings.append(1 - buffered.cycles / plain.cycles)
        util8 = buffered.utilization if util8 is None else util8
    assert savings == sorted(savings, reverse=True)
    assert util8 < 0.05


def test_quiz_answer_each_weight_read_once_whatever_M():
    """Quiz: "how many times is each value of B read from the buffer? — once, whatever M is" """
    for M in (1, 7, 128, 1000):
        run = SystolicArray(128, 128, "ws").estimate(M=M, N=128, K=128)
        assert run.folds == 1 and run.sram_reads["B"] == 128 * 128


def test_pipelined_folds_pay_fill_and_drain_once_but_not_a_load_longer_than_the_stream():
    """"With a stream a few hundred rows long the pipelined array is almost always busy (middle
    line), far above what the per-fold charge says ... folds can start no closer than 2R − 1
    cycles apart ... At M = 8 the pipelined array is still almost idle" """
    R = C = 128
    runs = {}
    for M in (8, 512, 4096):
        plain = SystolicArray(R, C, "ws").estimate(M=M, N=1024, K=1024)
        piped = SystolicArray(R, C, "ws", double_buffer=True, overlap_folds=True).estimate(
            M=M, N=1024, K=1024)
        # One load, folds max(M, 2R - 1) apart, one fill-out at the end.
        assert piped.cycles == R + (piped.folds - 1) * max(M, 2 * R - 1) + M + R + C - 2
        # 'A 128-row tile takes 128 cycles to shift in': what double buffering saves per later fold
        prose.check("03", "A 128-row tile takes {} cycles to shift in", (plain.cycles - SystolicArray(
            R, C, "ws", double_buffer=True).estimate(M=M, N=1024, K=1024).cycles) / (plain.folds - 1))
        runs[M] = plain, piped
    assert prose.says("03", "no closer than 2R − 1 cycles apart")
    plain, piped = runs[512]
    assert piped.utilization > 0.95 and piped.utilization - plain.utilization > 0.3
    assert runs[8][1].utilization < 0.05
    assert all(p.utilization >= q.utilization for q, p in runs.values())
