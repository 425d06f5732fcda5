"""Every quantitative claim in lessons/04_shapes_and_utilization.ipynb, recomputed with the
library.

Utilizations, fold counts, tile and wave counts are printed by the lesson's code cells and its prose
points at them. What the prose itself states (the closed forms, the padding fractions, the load
cycles, the chips' 8 MXUs and 132 SMs, the 8,192-row stream) is read out of its markdown (tests/prose.py) and compared with the library and the catalog.
"""

from __future__ import annotations

import pytest

import accelkit as ak
from accelkit import SIMDMachine, SystolicArray
from accelkit.labs.shapes import TENSOR_CORE, cell_cycles
from tests import prose


def test_k129_second_row_fold_makes_padding_the_largest_share():
    """"K = 129 ... needs a second row fold that maps a single row of weights out of 128 — that
    fold is mostly padding, which is why padding is the largest share above." """
    run = SystolicArray(128, 128, "ws").estimate(M=300, N=200, K=129)
    assert run.row_folds == 2 and 129 - 128 == 1
    shares = cell_cycles(run)
    assert max(shares, key=shares.get) == "padding"


@pytest.mark.parametrize("M,N,K", [(300, 200, 129), (7, 500, 64), (1024, 128, 1024)])
def test_utilization_is_mapping_efficiency_times_useful_share_of_a_fold(M, N, K):
    """"utilization = mapping efficiency × T / (cycles per fold), with cycles per fold =
    2R + C + T − 2 (ws, T = M)." """
    run = SystolicArray(128, 128, "ws").estimate(M=M, N=N, K=K)
    assert prose.says("04", "with cycles per fold = 2R + C + T − 2 (ws, T = M)")
    assert prose.says("04", "spends R cycles loading its weights and R + C − 2 cycles")
    assert run.utilization == pytest.approx(run.mapping_efficiency * M / (2 * 128 + 128 + M - 2))


def test_tpu_matrix_units_are_128_wide_until_v6e():
    """"A TPU's matrix unit is a square array: 128×128 from TPU v2 to v5, 256×256 from the v6e on"
    (issue 24: the lesson said 128×128 beside its own v6e output of 256×256)."""
    small, small_b, big, big_b = prose.shown(
        "04", "a square array: {}×{} from TPU v2 to v5, {}×{} from the v6e on")
    widths = {c.name: int(c.matrix_unit_shape.split("x")[0].split("-")[0]) for c in ak.chips.all()
              if c.kind == "tpu"}
    older = {n: w for n, w in widths.items() if n.split()[1][1] in "2345" and n.startswith("TPU v")}
    newer = {n: w for n, w in widths.items() if n not in older}
    assert small.value == small_b.value and big.value == big_b.value
    assert sorted(older) == ["TPU v2", "TPU v3", "TPU v4", "TPU v5e", "TPU v5p"]
    assert set(older.values()) == {small.value} and set(newer.values()) == {big.value}, widths
    prose.check("04", "the same cliffs sit at multiples of {}", big.value)


def test_n129_nearly_halves_utilization_and_257_repeats_the_cliff_but_m129_costs_nothing():
    """"N = 129 nearly halves utilization against N = 128 ... N = 257 repeats the cliff. But
    M = 129 costs nothing" """
    sa = SystolicArray(128, 128, "ws")
    u = {N: sa.estimate(M=1024, N=N, K=1024).utilization for N in (127, 128, 129, 256, 257)}
    assert 0.45 < u[129] / u[128] < 0.55
    assert u[257] < 0.75 * u[256]
    assert u[127] < u[128]
    m128 = sa.estimate(M=128, N=1024, K=1024)
    m129 = sa.estimate(M=129, N=1024, K=1024)
    assert m129.utilization >= m128.utilization
    prose.check("04", "makes each fold {} cycle longer", (m129.cycles - m128.cycles) / m128.folds)


def test_os_maps_both_m_and_n_so_cliffs_run_both_ways():
    """"in os both M and N are mapped, so the cliffs run both ways." """
    sa = SystolicArray(128, 128, "os")
    base = sa.estimate(M=256, N=256, K=1024).utilization
    assert sa.estimate(M=257, N=256, K=1024).utilization < 0.8 * base
    assert sa.estimate(M=256, N=257, K=1024).utilization < 0.8 * base


def test_batch_one_decode_leaves_the_array_almost_idle_and_batching_cures_it():
    """"a batch of one leaves almost the whole array idle, because load, fill and drain
    (hundreds of cycles per fold) are paid for one useful cycle. Batching tokens is the only
    cure" """
    decode = SystolicArray(128, 128, "ws").estimate(M=1, N=4096, K=4096)
    batch = SystolicArray(128, 128, "ws").estimate(M=256, N=4096, K=4096)
    assert decode.utilization < 0.01
    assert decode.cycles // decode.folds >= 100
    assert batch.utilization > 40 * decode.utilization


def test_small_tiles_waste_less_at_m1():
    """"padding M = 1 up to 16 wastes 15/16 of the tile, padding it to 128 wastes 127/128" """
    gpu = SIMDMachine(**TENSOR_CORE).estimate(M=1, N=4096, K=4096)
    big = SystolicArray(128, 128, "os").estimate(M=1, N=4096, K=4096)
    small_tile, small_wasted, small_of, big_tile, big_wasted, big_of = prose.shown(
        "04", "padding M = 1 up to {} wastes {}/{} of the tile, padding it to {} wastes {}/{}")
    assert small_tile.value == small_of.value == TENSOR_CORE["tensor_core"][0]
    assert big_tile.value == big_of.value == big.rows
    assert 1 - small_wasted.value / small_of.value == pytest.approx(gpu.lane_utilization)
    assert 1 - big_wasted.value / big_of.value == pytest.approx(big.mapping_efficiency)


def test_ws_mxu_had_no_padding_at_decode():
    """"the ws MXU above had no padding at all — its waste was load, fill and drain." """
    run = SystolicArray(128, 128, "ws").estimate(M=1, N=4096, K=4096)
    assert run.mapping_efficiency == 1.0
    assert cell_cycles(run)["load, fill and drain"] > 0.99


def test_gpus_also_pad_a_4100_wide_layer():
    """"GPUs also pad (a layer of width 4100 wastes tile slots too — try it above)." """
    run = SIMDMachine(**TENSOR_CORE).estimate(M=16, N=4100, K=4100)
    assert run.lane_utilization < 1.0


def test_quiz_answer_n1025_hurts_most():
    """Quiz: "Which one-element change hurts its utilization the most?" — N = 1025."""
    sa = SystolicArray(128, 128, "ws")
    u = {label: sa.estimate(M=M, N=N, K=1024).utilization
         for label, M, N in [("M+1", 1025, 1024), ("N+1", 1024, 1025), ("M-1", 1023, 1024)]}
    assert min(u, key=u.get) == "N+1"
    assert u["N+1"] < 0.95 * sa.estimate(M=1024, N=1024, K=1024).utilization


def test_double_buffering_lowers_the_batch_that_fills_half_the_array():
    """Worked problem: 50% utilization is reached at a smaller M with double buffering."""
    from accelkit.labs.shapes import smallest_M_reaching as _smallest_M_reaching
    plain = _smallest_M_reaching(0.5, SystolicArray(128, 128, "ws"), 4096)
    buffered = _smallest_M_reaching(0.5, SystolicArray(128, 128, "ws", double_buffer=True), 4096)
    assert buffered < plain
    assert SystolicArray(128, 128, "ws").estimate(M=plain, N=4096, K=4096).utilization >= 0.5
    assert SystolicArray(128, 128, "ws").estimate(M=plain - 1, N=4096, K=4096).utilization < 0.5


def test_pipelined_mxu_is_busier_but_falls_off_the_same_padding_cliff():
    """"The pipelined MXU (in brackets) is busier at every N, yet falls off the same cliff" """
    sa = SystolicArray(128, 128, "ws")
    mxu = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    util = {N: (sa.estimate(M=1024, N=N, K=1024).utilization,
                mxu.estimate(M=1024, N=N, K=1024).utilization) for N in (127, 128, 129, 256, 257)}
    assert all(piped > plain for plain, piped in util.values())
    assert util[129][1] < 0.55 * util[128][1]
    assert util[257][1] < 0.7 * util[256][1]


def test_pipelined_mxu_still_idles_at_batch_one_and_fills_at_batch_256():
    """"at batch 1 the array still waits on its weight loads and stays almost idle. At batch 256
    ... the pipelined array is nearly full — far above the per-fold figure" """
    mxu = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    one, full = (mxu.estimate(M=M, N=4096, K=4096) for M in (1, 256))
    plain, buffered = (SystolicArray(128, 128, "ws", double_buffer=b).estimate(M=1, N=4096, K=4096)
                       for b in (False, True))
    prose.check("04", "weight tile still takes {} cycles to shift in",
                (plain.cycles - buffered.cycles) / (plain.folds - 1))
    per_fold = SystolicArray(128, 128, "ws").estimate(M=256, N=4096, K=4096)
    assert one.utilization < 0.01
    # Batch 1: folds are 2R - 1 cycles apart, the weight load, not the one-row stream.
    assert one.cycles == 128 + (one.folds - 1) * (2 * 128 - 1) + 1 + 128 + 128 - 2
    assert full.utilization > 0.99 and full.utilization > 2 * per_fold.utilization


# -- From one array to a chip ----------------------------------------------------------------
# Llama 3.1 405B as the Llama 3 paper trained it (arXiv:2407.21783, Table 4: TP 8, PP 16,
# DP 128 on 16,384 H100, 16M-token batches of 8,192-token sequences, BF16 MFU 41%).

def _llama_mlp_shape():
    from accelkit import mfu

    llama = ak.models.get("llama-3.1-405b")
    return next(s for s in mfu.layer_matmuls(llama, 8192, tp=8) if s.name == "mlp_in")


def test_the_mlp_shard_shape_is_2_dff_over_8():
    """"M = 8,192 tokens, K = 16,384, N = 13,312 (2 × d_ff / 8)" """
    shape = _llama_mlp_shape()
    llama = ak.models.get("llama-3.1-405b")
    assert (shape.M, shape.K, shape.N) == (8192, llama.d_model, 2 * llama.d_ff // 8)
    assert (shape.K, shape.N) == (16384, 13312)


def test_one_pipelined_mxu_is_almost_never_idle():
    """"Almost every cell is busy: 128 divides every dimension, and each fold streams 8,192
    rows, so the one pipeline fill and drain are lost in the noise." """
    shape = _llama_mlp_shape()
    cell = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True).estimate(
        M=shape.M, N=shape.N, K=shape.K)
    assert cell.folds == (16384 // 128) * (13312 // 128) == 13312
    assert cell.mapping_efficiency == 1.0
    prose.check("04", "each fold streams {} rows", shape.M)
    assert all(d % 128 == 0 for d in (shape.M, shape.N, shape.K)) and prose.says("04", "128 divides every dimension")
    assert 0 < 1 - cell.utilization < 1e-5


def test_h100_loses_the_last_wave_v5p_loses_nothing():
    """"an H100 deals 128×256 output tiles ... to its 132 SMs in waves, and the last wave runs
    partly idle": 3,328 tiles, 26 waves, the last 28 of 132 busy, 97.0%; v5p ~100%."""
    from accelkit import mfu

    shape = _llama_mlp_shape()
    h100 = mfu.matmul_efficiency("H100", shape.M, shape.N, shape.K)
    v5p = mfu.matmul_efficiency("TPU v5p", shape.M, shape.N, shape.K)
    prose.check("04", "to its {} SMs in waves", ak.chips.get("H100").sms_per_chip)
    prose.check("04", "A TPU v5p deals the folds to its {} MXUs", mfu.mxu_count("TPU v5p"))
    prose.check("04", "deals {}×{} output tiles (a tile size Hopper's matmul kernels use)", *mfu.GPU_TILE[:2])
    tiles = (8192 // 128) * (13312 // 256)
    assert tiles == 3328 and -(-tiles // 132) == 26 and tiles - 25 * 132 == 28
    assert h100 == pytest.approx(3328 / (26 * 132)) and round(h100, 3) == 0.970
    assert v5p > 0.9999 and v5p > h100


def test_the_chip_section_uses_only_what_lesson_04_has_taught():
    """Issue 24 item 3: layouts, pipeline bubbles, recomputation and CUTLASS are lesson 07's; the
    cluster step (44.4% MFU) moved there, beside the 46.5% it differs from."""
    for word in ("pipeline bubble", "recomputation", "CUTLASS", "MFU", "Layout("):
        assert not prose.says("04", word), word
    assert prose.says("04", "lesson 07 picks this run up again")


def test_the_tile_comparisons_pipelined_line_is_the_lessons_pipelined_mxu():
    """Cells 15-16 quote the pipelined MXU at batch 1 and 256 (99.85%); the tile comparison's
    curves (labs.shapes.tile_curves, which the widget draws) include that MXU, same numbers."""
    from accelkit.labs.shapes import TOKENS, tile_curves

    piped = tile_curves(4096)["128×128 ws MXU, pipelined (as a real one)"]
    mxu = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    for M in (1, 256):
        assert piped[TOKENS.index(M)] == mxu.estimate(M=M, N=4096, K=4096).utilization
    assert piped[TOKENS.index(256)] > 0.99 > 0.01 > piped[TOKENS.index(1)]


def test_datasheet_beside_the_best_measured_matmul():
    """"The H100's best measured bf16 matmul reaches 80.3% of its datasheet, on a large shape,
    against the 97.0% that tiles and waves leave for this one; the A100's reaches 86.9% ... Large
    matmuls timed on a TPU v6e reach 90%. For the TPU v5p no measurement of its own is published, so
    the catalog carries the v6e's figure over and says so" (issue 21 item 1: both figures wherever a
    peak is shown, and the difference taught)."""
    from accelkit import mfu

    shape = _llama_mlp_shape()
    h100, a100, v6e, v5p = (ak.chips.get(n) for n in ("H100", "A100", "TPU v6e", "TPU v5p"))
    key = "achievable_flops:bf16"
    prose.check("04", "best measured bf16 matmul reaches {}% of its datasheet",
                100 * h100.achievable_fraction(key))
    prose.check("04", "against the {}% that tiles and waves leave for this one",
                100 * mfu.matmul_efficiency("H100", shape.M, shape.N, shape.K))
    prose.check("04", "the A100's reaches {}%", 100 * a100.achievable_fraction(key))
    prose.check("04", "Large matmuls timed on a TPU v6e reach {}%", 100 * v6e.achievable_fraction(key))
    # the tile model counts only padding and waves: it sits above the measured ceiling
    for chip in (h100, a100):
        assert not chip.achievable_is_assumption(key)
        assert mfu.matmul_efficiency(chip.name, shape.M, shape.N, shape.K) > chip.achievable_fraction(key)
        assert "Maximum Achievable Matmul FLOPS" in chip.source(key)
    assert not v6e.achievable_is_assumption(key)
    assert v5p.achievable_is_assumption(key)
    assert v5p.achievable_fraction(key) == pytest.approx(v6e.achievable_fraction(key))
    assert "ASSUMPTION" in v5p.source(key) and "carried to TPU v5p" in v5p.source(key)
