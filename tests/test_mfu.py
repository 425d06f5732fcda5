"""accelkit.mfu: per-matmul efficiency from the engines, step efficiency, predicted MFU.

Independent references:
* The TPU model's closed form is checked against the cycle-level engine's own estimate
  (accelkit.systolic.SystolicArray, weight-stationary, double-buffered, overlap_folds=True),
  which tests/test_systolic.py checks against its cell-by-cell simulation.
* The GPU model is checked against a hand count of tiles and waves.
* End to end against published MFUs (bands stated per run; where ours disagrees, docs/mfu.md
  says why; nothing is tuned to match):
  - PaLM 540B on 6,144 TPU v4: MFU 46.2% (Chowdhery et al. 2022, arXiv:2204.02311, Table 3).
  - Llama 3 405B on 8,192 / 16,384 H100, TP 8, PP 16: BF16 MFU 43% / 41% (Llama Team 2024,
    arXiv:2407.21783, Table 4; the paper gives 38-43% across its configurations).
  - MaxText on TPU v5p (AI-Hypercomputer/maxtext README, "Runtime Performance Results":
    32B on v5p-128 71.47%, 128B on v5p-256 68.68%; configs MaxText/configs/v5p/32b.sh and
    128b.sh: tensor parallelism 4 / 8, FSDP over the rest, per-device batch 7 / 1 of 2048
    tokens; v5p-N counts TensorCores, two per chip).
  - Megatron-LM SC'21 (Narayanan et al., arXiv:2104.04473, Table 1): achieved TFLOP/s per A100
    in Megatron's own FLOP count, which includes the recomputed forward pass.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import accelkit as ak
from accelkit import mfu, models
from accelkit.parallel import Layout, best_layouts, train_step
from accelkit.systolic import SystolicArray
# The runs' definitions live in the script that prints docs/mfu.md's table (evidence, in the
# repository's validation/ folder).
from validation import mfu_published_runs as runs
from validation import published

M = 2**20


# -- one matmul --------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1000, 300, 500), (64, 128, 256), (8192, 1024, 4096),
                                   (5, 7, 9), (300, 129, 127), (255, 256, 1)])
def test_tpu_closed_form_matches_the_systolic_engine(shape: tuple[int, int, int]) -> None:
    Mm, N, K = shape
    engine = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    ours = mfu._tpu_efficiency(128, 128, 1, np.array([Mm]), np.array([N]), np.array([K]),
                               np.array([1]))[0]
    assert ours == pytest.approx(engine.estimate(M=Mm, N=N, K=K).utilization, rel=1e-12)


def test_tpu_folds_dealt_to_mxus_the_busiest_sets_the_time() -> None:
    # TPU v5p: 2 TensorCores x 4 MXUs of 128x128. 9 folds over 8 MXUs: the busiest runs 2.
    assert mfu.mxu_count("TPU v5p") == 8 and mfu.mxu_shape("TPU v5p") == (128, 128)
    assert mfu.mxu_shape("TPU v6e") == (256, 256)
    Mm, N, K = 4096, 128 * 9, 128
    engine = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    busiest = engine.estimate(M=Mm, N=128 * 2, K=K).cycles
    expected = Mm * N * K / (8 * 128 * 128 * busiest)
    assert mfu.matmul_efficiency("TPU v5p", Mm, N, K) == pytest.approx(expected, rel=1e-12)
    assert expected < 0.6  # 9 folds on 8 MXUs: nearly half the second wave idle


def test_gpu_wave_quantization_by_hand() -> None:
    sms = ak.chips.get("H100").sms_per_chip
    assert sms == 132
    # 12 x 11 = 132 tiles of 128x256: one full wave, no padding (K a multiple of 64).
    assert mfu.matmul_efficiency("H100", 128 * 12, 256 * 11, 4096) == pytest.approx(1.0)
    # One more row of tiles: 13 x 11 = 143 tiles, two waves; the 256x128 orientation gives
    # ceil(1664/256)=7 x 22 = 154 tiles, two waves too, with padding: the first wins.
    eff = mfu.matmul_efficiency("H100", 128 * 13, 256 * 11, 4096)
    assert eff == pytest.approx(143 / (2 * 132))
    # K padded to 64 bf16 elements; fp8 packs 128 per 128-byte step.
    assert mfu.matmul_efficiency("H100", 128 * 12, 256 * 11, 4097) == pytest.approx(
        4097 / 4160)
    assert mfu.matmul_efficiency("H100", 128 * 12, 256 * 11, 4097, "fp8") == pytest.approx(
        4097 / 4224)


def test_efficiency_grows_toward_one_with_size_and_is_a_fraction() -> None:
    for chip in ("H100", "A100", "TPU v4", "TPU v5p", "TPU v6e"):
        small = mfu.matmul_efficiency(chip, 16, 512, 512)
        big = mfu.matmul_efficiency(chip, 16384, 16384, 16384)
        assert 0 < small < big <= 1.0


def test_refusals_name_the_argument() -> None:
    with pytest.raises(ValueError, match="MI300X|compute units"):
        mfu.matmul_efficiency("MI300X", 1024, 1024, 1024)
    with pytest.raises(ValueError, match="MXU count"):
        mfu.matmul_efficiency("TPU7x", 1024, 1024, 1024)
    with pytest.raises(ValueError, match="M"):
        mfu.matmul_efficiency("H100", 0, 1024, 1024)
    with pytest.raises(ValueError, match="dtype|fp4"):
        mfu.matmul_efficiency("H100", 1024, 1024, 1024, "fp4")
    with pytest.raises(ValueError, match="compute_efficiency"):
        train_step("llama-3-8b", "H100", Layout(dp=8), 8 * 8192, compute_efficiency="best")
    with pytest.raises(ValueError, match="MI300X|compute units"):
        train_step("llama-3-8b", "MI300X", Layout(dp=8), 8 * 8192,
                   compute_efficiency="predicted")


# -- a layer's matmuls -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["llama-3-8b", "gpt-3-175b", "palm-540b", "mixtral-8x7b",
                                  "deepseek-v3"])
def test_layer_shapes_carry_the_model_forward_matmul_flops(name: str) -> None:
    model = models.get(name)
    s = 4096
    ops = model.operations(batch=1, seq_len=s, phase="forward")
    published = math.fsum(op.flops for op in ops if op.kind in models.MATRIX_KINDS)
    ours = math.fsum(sh.flops for sh in mfu.layer_matmuls(model, s, seq_len=s))
    # attention's softmax adds 5 FLOPs per 4·head_dim in the model's count; biases a few more
    assert ours == pytest.approx(published, rel=0.01)


def test_token_level_microbatches_keep_the_attention_flops() -> None:
    """A micro-batch of part of a sequence still attends over the sequence's keys."""
    model = models.get("llama-3-70b")
    whole = math.fsum(sh.flops for sh in mfu.layer_matmuls(model, 8192))
    parts = math.fsum(sh.flops for sh in mfu.layer_matmuls(model, 1024))
    assert parts * 8 == pytest.approx(whole, rel=1e-3)


@pytest.mark.parametrize("ep", [1, 2, 8, 32])
def test_expert_parallel_moves_experts_not_flops(ep: int) -> None:
    """Balanced routing: E/ep local experts × mb·ep·k/E tokens each = the same work."""
    base = math.fsum(sh.flops for sh in mfu.layer_matmuls("deepseek-v3", 4096))
    ours = math.fsum(sh.flops for sh in mfu.layer_matmuls("deepseek-v3", 4096, ep=ep))
    assert ours == pytest.approx(base, rel=1e-9)


def test_a_256_wide_mxu_pads_head_dim_128() -> None:
    """TPU v6e's 256×256 MXU maps attention's K = head_dim = 128 on half its rows."""
    assert mfu.matmul_efficiency("TPU v6e", 8192, 8192, 128) < 0.51
    assert mfu.matmul_efficiency("TPU v5e", 8192, 8192, 128) > 0.99


def test_tensor_parallel_splits_the_work() -> None:
    one = math.fsum(sh.flops for sh in mfu.layer_matmuls("llama-3-70b", 8192))
    eight = math.fsum(sh.flops for sh in mfu.layer_matmuls("llama-3-70b", 8192, tp=8))
    assert eight == pytest.approx(one / 8, rel=1e-9)


# -- the step ------------------------------------------------------------------------------------
def test_step_efficiency_parts_add_up() -> None:
    layout = Layout(dp=128, tp=8, pp=16, microbatch_tokens=8192, recompute="full",
                    interleave=4)
    eff = mfu.step_efficiency("llama-3.1-405b", "H100", layout, 16 * M)
    assert eff.efficiency == pytest.approx(
        eff.peak_seconds / (eff.matmul_seconds + eff.vector_seconds))
    assert 0 < eff.efficiency < eff.matmul_efficiency <= 1
    hbm = ak.chips.get("H100").hbm_bytes_per_second
    assert eff.vector_seconds == pytest.approx(eff.vector_bytes / hbm)


def test_predicted_is_below_peak_and_matches_train_step() -> None:
    layout = Layout(dp=128, tp=8, pp=16, microbatch_tokens=8192, recompute="full",
                    interleave=4)
    peak = train_step("llama-3.1-405b", "H100", layout, 16 * M)
    pred = ak.parallel.predicted_mfu("llama-3.1-405b", "H100", layout, 16 * M)
    assert pred.mfu < peak.mfu
    assert pred.step.mfu == pred.mfu
    # the compute is the model FLOPs at peak over the kernels' efficiency on the slowest
    # pipeline stage: the last, with ceil(126 / 64) x 4 = 8 of the 126 layers' share and the
    # LM head and cross-entropy, which only it runs
    h100 = ak.chips.get("H100")
    ideal = pred.step.model_flops_per_step / layout.chips / h100.peak_flops("bf16")
    total = ideal * 16 / pred.compute_efficiency  # one micro-batch's kernels, whole model
    model = ak.models.get("llama-3.1-405b")
    head = float(ak.kernels.head_seconds(model, h100, "bf16", np.array([8]), np.array([8192]),
                                         np.array([2]), 8192, ak.frameworks.get(None))[0])
    per_mb = (total / pred.step.microbatches - head) * 8 / 126 + head
    assert pred.step.compute_seconds == pytest.approx(per_mb * pred.step.microbatches,
                                                      rel=1e-9)
    assert 0 < head < 0.1 * per_mb
    assert pred.compute_efficiency < pred.matmul_efficiency < 1


def test_best_layouts_accepts_predicted() -> None:
    best = best_layouts("llama-3-8b", "H100", 64, 4 * M, top=3, compute_efficiency="predicted")
    assert best and all(b.fits for b in best)
    for b in best:
        again = train_step("llama-3-8b", "H100", b.layout, 4 * M,
                           compute_efficiency="predicted")
        assert again.seconds == pytest.approx(b.seconds)
    assert [b.seconds for b in best] == sorted(b.seconds for b in best)


# -- published runs ---------------------------------------------------------------------------
RUNS = {label: (step, published, ratio) for label, step, published, ratio in runs.runs()}
# published / predicted, the band each must land in (measured values in docs/mfu.md and the
# validation table, docs/validation.md): kernels as they run under the measured ceilings, each
# run's framework (issue 21); a regression guard, not a fit
BANDS = {"Megatron": (0.85, 1.10), "PaLM": (0.90, 1.12), "Llama 3 405B long": (0.80, 0.90),
         "Llama": (0.95, 1.25), "MaxText": (0.90, 1.10)}


@pytest.mark.parametrize("label", sorted(RUNS))
def test_published_mfu_lands_in_its_band(label: str) -> None:
    """Kernels under the measured ceilings with each run's framework (docs/validation.md says
    why each row is off). Megatron's A100 runs land at 0.92-1.01 (kernels at the rates vidur
    measured, accelkit.calibration); PaLM (recomputation fixed by its published HFU)
    lands within a few percent; MaxText's v5p rows land within 5% (0.95-0.97) with their
    16-way FSDP axis on the 4x4 plane JAX gives it and their tensor-parallel collectives on
    the critical path, as their scripts leave XLA's collective-matmul decomposition off
    (frameworks "maxtext-readme"); Llama 3's 8K rows are predicted slow (1.03-1.14), the
    16,384-GPU row at the paper's no-checkpointing layout (it fits with the gradients sharded
    as the paper's FSDP shards them), the 8,192-GPU row at full recomputation (32 micro-batches
    fit without it only uninterleaved); its long-context row is predicted fast (0.85: attention
    over 131k keys at the predicted matmul efficiency, no recomputation)."""
    step, published, flops_ratio = RUNS[label]
    low, high = next(v for k, v in BANDS.items() if label.startswith(k))
    ratio = published / (step.mfu * flops_ratio)
    assert low <= ratio <= high, (label, step, ratio)


def test_maxtext_model_shapes_match_their_names() -> None:
    assert published.maxtext_model(32).params == pytest.approx(32e9, rel=0.05)
    assert published.maxtext_model(128).params == pytest.approx(128e9, rel=0.05)
