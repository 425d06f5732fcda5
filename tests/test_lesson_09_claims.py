"""Lesson 09's quantitative claims, recomputed with the library so the prose cannot drift.

These are also the toy machines' required outcomes, read through the lesson's wording. The
numbers the prose states (the two toys' sizes, the workloads' shapes, the catalog's MXUs, the
load cycles) are read out of its markdown (tests/prose.py) and compared with the library."""

from __future__ import annotations

from accelkit import chips, mfu, roofline
from accelkit import workloads as wl
from accelkit.labs.flexibility import lab_compare, roofline_pair, with_side_instructions
from tests import prose


def test_the_two_toys_and_the_real_tensorcores_they_stand_for():
    """'The toy GPU (lesson 02) has 4 cores × 32 flexible lanes. The toy TPU (lesson 03) has a 16×16
    systolic array ... (four 128×128 MXUs per TensorCore on v4, v5e and v5p ...)'."""
    gpu, tpu = wl.SIMDMachine(), wl.TPUStyleMachine()
    prose.check("09", "The toy GPU (lesson 02) has {} cores × {} flexible lanes", gpu.cores, gpu.lanes)
    prose.check("09", "The toy TPU (lesson 03) has a {}×{} systolic array", tpu.array.rows, tpu.array.cols)
    for name in ("TPU v4", "TPU v5e", "TPU v5p"):
        chip = chips.get(name)
        prose.check("09", "({} {}×{} MXUs per TensorCore on v4, v5e and v5p",
                    mfu.mxu_count(chip) / chip.tensorcores_per_chip, *mfu.mxu_shape(chip))


def test_the_suite_is_the_workloads_the_prose_names():
    """'a 90% block-sparse matmul' and '4 rows cannot fill a 16×16 array' (the small-batch LSTM);
    the interaction dots '(×256)' run one by one."""
    (sparse,) = wl.WORKLOADS["block_sparse_matmul"]
    prose.check("09", "a {}% block-sparse matmul", 100 * (1 - sparse.density))
    rows = {op.M for op in wl.WORKLOADS["rnn_small_batch"] if isinstance(op, wl.Matmul)}
    tpu = wl.TPUStyleMachine()
    prose.check("09", "{} rows cannot fill a {}×{} array", *rows, tpu.array.rows, tpu.array.cols)
    dots = next(r for r in wl.compare("recommender_step").operations if r.label == "interaction dots")
    prose.check("09", "repeated small matmuls (×{})", dots.count)
    prose.check("09", "branch sides are {} instructions long",
                next(op for op in wl.WORKLOADS["branchy_elementwise"]).side_instructions)


def _ratio(c):
    return c.tpu_cell_cycles / c.gpu_cell_cycles


def test_dense_matmul_tpu_wins_per_cell():
    """'A 2048³ matmul is the systolic array's home ground' — TPU wins per unit of area."""
    assert wl.compare("dense_matmul").winner_per_area == "TPU"


def test_suite_winners_as_the_lesson_reads_them():
    """'dense matmul, transformer layer: the TPU wins per cell ... recommender step: the GPU wins
    ... branchy elementwise: the GPU wins by the largest factor ... block-sparse: the GPU wins ...
    small-batch LSTM: nearly a tie per cell.'"""
    suite = {name: wl.compare(name) for name in wl.WORKLOADS}
    assert suite["transformer_layer"].winner_per_area == "TPU"
    assert _ratio(suite["dense_matmul"]) < _ratio(suite["transformer_layer"]) < 1
    for name in ("recommender_step", "branchy_elementwise", "block_sparse_matmul"):
        assert suite[name].winner_per_area == "GPU"
    assert max(suite, key=lambda n: _ratio(suite[n])) == "branchy_elementwise"
    assert 0.9 < _ratio(suite["rnn_small_batch"]) < 1.1
    # 'The TPU spends almost all of its time outside the array' for the recommender.
    assert suite["recommender_step"].tpu_outside_matrix_share > 0.9
    assert suite["transformer_layer"].tpu_outside_matrix_share > suite["transformer_layer"].gpu_outside_matrix_share


def test_short_branches_shrink_but_keep_the_gpu_win():
    """'The GPU still wins with short sides, by much less.'"""
    ops = wl.WORKLOADS["branchy_elementwise"]
    long, short = (_ratio(lab_compare(with_side_instructions(ops, s))) for s in (64, 4))
    assert 1 < short < long / 3


def test_batch_sweep_tie_then_gpu_then_tpu():
    """'At batch 1 to 4 ... close to a tie per cell. In between, the GPU wins by more; the TPU's
    per-cell advantage appears only once the batch is large enough.'"""
    r = {b: wl.compare([wl.Matmul(b, 1024, 256)]).operations[0].tpu_over_gpu_per_area
         for b in (1, 4, 16, 64, 256)}
    assert all(0.9 < r[b] < 1.1 for b in (1, 4))
    assert r[16] > r[4] and r[64] > r[4]
    assert r[256] < 1


def test_memory_parallelism_shrinks_the_tpu_matmul_margin_with_a_tensor_core():
    """'The GPU's cycles fall by the factor its memory parallelism rose, and the TPU's per-cell
    margin shrinks with them ... The margin stays'; without a tensor core memory does not matter."""
    op = (wl.Matmul(1024, 1024, 1024),)
    low = lab_compare(op, tensor_core="16×8×16", warps_per_core=8).operations[0]
    high = lab_compare(op, tensor_core="16×8×16", warps_per_core=64).operations[0]
    (more,) = prose.shown("09", "give both machines {} times the memory requests in flight")
    assert more.value == 64 / 8
    assert 0.75 * more.value < low.gpu_cycles / high.gpu_cycles <= more.value  # 'fall by the factor'
    
    assert low.tpu_over_gpu_per_area < high.tpu_over_gpu_per_area < 1
    plain = [lab_compare(op, warps_per_core=w).operations[0].gpu_cycles for w in (8, 64)]
    assert plain[0] == plain[1]


def test_interaction_dots_leave_the_array_mostly_idle():
    """'the recommender's pairwise interactions are many tiny products run one at a time' — the
    row's utilization is low on both machines."""
    dots = next(r for r in wl.compare("recommender_step").operations if r.label == "interaction dots")
    assert dots.count > 100 and dots.tpu_utilization < 0.2 and dots.gpu_utilization < 0.2


def test_gather_is_memory_bound_on_every_chip_and_the_matrix_units_idle():
    """'A gather runs at the speed of memory on every chip: the matrix units ... sit idle.'"""
    gather, _ = roofline_pair("TPU v5e", batch=256)
    elements = gather.bytes / 2  # bf16, read once
    prose.check("09", "about {} FLOP per element read", gather.flops / elements)
    for chip in chips.names():
        g = roofline.elementwise(chip, n_elements=4096 * 128, flops_per_element=1.0,
                                 reads_per_element=1, writes_per_element=0)
        assert g.bound == "memory" and g.fraction_of_peak < 0.01


def test_the_dense_layer_is_compute_bound_at_the_lessons_batch_and_not_at_256():
    """"The dense layer at a batch of 1,024 reuses each weight often enough to be compute-bound on
    both chips; at a batch of 256 it would still be memory-bound on both" (issue 24: the lesson ran
    it at 256, where it was memory-bound like the gather, so the contrast did not show)."""
    from accelkit.labs.flexibility import DENSE_LAYER_BATCH

    (big,) = prose.shown("09", "The dense layer at a batch of {} reuses each weight")
    (small,) = prose.shown("09", "at a batch of {} it would still be memory-bound")
    assert big.value == DENSE_LAYER_BATCH
    for chip in ("TPU v5e", "NVIDIA H100 (SXM)"):
        gather, dense = roofline_pair(chip)  # the library's default is the lesson's batch
        assert gather.bound == "memory" and dense.bound == "compute"
        assert dense.flops == 2 * DENSE_LAYER_BATCH * 4096 * 4096
        assert roofline_pair(chip, batch=int(small.value))[1].bound == "memory"


def test_amdahl_bounds_of_the_worked_problem():
    """Worked problem: recommender at most ~1.03× from an infinitely fast array; transformer ~5×."""
    rec, tfm = wl.compare("recommender_step"), wl.compare("transformer_layer")
    assert 1 / rec.tpu_outside_matrix_share < 1.1
    assert 3 < 1 / tfm.tpu_outside_matrix_share < 10


def test_pipelined_array_wins_per_cell_at_every_batch_but_idles_at_small_ones():
    """"Pipelined, the toy TPU wins per cell at every batch here ... the array is busy only a
    small share of the time at batch 1 to 4, because a 16-row weight tile takes longer to shift
    in than the few rows that use it." """
    from accelkit import SystolicArray

    piped = wl.TPUStyleMachine(SystolicArray(16, 16, "ws", double_buffer=True, overlap_folds=True))
    prose.check("09", "because a {}-row weight tile takes longer to shift in", piped.array.rows)
    loads = []
    for name in ("TPU v5e", "TPU v6e"):  # 'the load is 128 (or 256) cycles': what double buffering saves a fold
        rows, cols = mfu.mxu_shape(name)
        plain = SystolicArray(rows, cols, "ws").estimate(M=8, N=4 * cols, K=rows)
        buffered = SystolicArray(rows, cols, "ws", double_buffer=True).estimate(M=8, N=4 * cols, K=rows)
        loads.append((plain.cycles - buffered.cycles) / (plain.folds - 1))
    prose.check("09", "real TPU's {}×{} (or {}×{}) matrix unit the load is {} (or {}) cycles",
                *mfu.mxu_shape("TPU v5e"), *mfu.mxu_shape("TPU v6e"), *loads)
    rows = {b: wl.compare([wl.Matmul(b, 1024, 256)], tpu=piped).operations[0]
            for b in (1, 4, 16, 64, 256)}
    assert all(r.tpu_over_gpu_per_area < 1 and r.winner_per_area == "TPU" for r in rows.values())
    assert all(rows[b].tpu_utilization < 0.15 for b in (1, 4))
    # Once the stream is at least 2R - 1 = 31 rows, every load hides: the array is full.
    assert rows[64].tpu_utilization > 0.99 and rows[256].tpu_utilization > 0.99
    default = wl.compare([wl.Matmul(64, 1024, 256)]).operations[0]
    assert default.tpu_utilization < 0.7  # the per-fold convention's figure at the same batch
