"""accelkit.calibration (issue 21): each calibration figure is what its kernel- or
collective-level measurement gives (validation/kernel_measurements.py, vidur's profiles), and
the kernel and step models apply it where they say they do.

Independent references: the measured times themselves (recomputed into shares and bus
bandwidths here), and the models' outputs with and without each figure.
"""

from __future__ import annotations

import statistics

import numpy as np
import pytest

import accelkit as ak
from accelkit import calibration, kernels
from accelkit.parallel import Layout, train_step
from validation import kernel_check
from validation import kernel_measurements as measured

A100, H100, H200 = (ak.chips.get(n) for n in ("A100", "H100", "H200"))


@pytest.mark.parametrize("chip", [A100, H100], ids=["A100", "H100"])
def test_sustained_matmul_share_is_the_measured_median(chip) -> None:
    short = "A100" if chip is A100 else "H100"
    assert calibration.matmul_sustained(chip) == pytest.approx(
        kernel_check.sustained_share(short), abs=5e-4)
    # and after it, the full-wave linear layers are priced at their measured time (median)
    rows = [r for r in kernel_check.linear_rows()
            if r["chip"] == short and int(r["tokens"]) >= kernel_check.FULL_WAVE_TOKENS]
    assert statistics.median(float(r["model_ratio"]) for r in rows) == pytest.approx(1.0, abs=0.02)


def test_h200_carries_h100s_figures_as_named_assumptions() -> None:
    assert calibration.matmul_sustained(H200) == calibration.matmul_sustained(H100)
    for table in ("matmul_sustained", "vector_efficiency", "all_reduce_busbw"):
        assert calibration.SOURCES[table][H200.name].startswith("ASSUMPTION")


@pytest.mark.parametrize("kind,op", [("normalization", "input_layernorm"),
                                     ("activation", "mlp_act")])
@pytest.mark.parametrize("chip", [A100, H100], ids=["A100", "H100"])
def test_vector_shares_are_the_measured_bandwidths(chip, kind, op) -> None:
    short = "A100" if chip is A100 else "H100"
    rates = [nbytes / (ms * 1e-3) for c, _, _, _, o, nbytes, ms in measured.VECTOR
             if c == short and o == op]
    share = statistics.median(rates) / chip.achievable_hbm_bytes_per_second
    assert calibration.vector_efficiency(chip, kind) == pytest.approx(share, abs=0.006)


@pytest.mark.parametrize("model", ["llama-2-70b", "mixtral-8x7b", "gpt-3-175b", "gpt-oss-20b"])
def test_one_rule_names_the_norms_and_activations_for_training_and_serving(model) -> None:
    """calibration.vector_kind is the one mapping from a model's operations to the measured
    kinds (kernels.py's training kernels and serving_kernels.byte_weights both read it): every
    normalization operation is a norm, the MLP's activation (and a mixture's experts') an
    activation, matmuls, attention and the residual adds neither; the share follows."""
    m = ak.models.get(model)
    for phase in ("forward", "decode"):
        kw = {"seq_len": 2048} if phase == "forward" else {"context_tokens": 0}
        ops = m.operations(batch=1, phase=phase, **kw)
        kinds = {op.name: calibration.vector_kind(op) for op in ops}
        assert {n for n, k in kinds.items() if k == "activation"} and \
            {n for n, k in kinds.items() if k == "normalization"}
        for op in ops:
            kind = kinds[op.name]
            if op.kind in ak.models.MATRIX_KINDS or "residual" in op.name:
                assert kind is None
            if op.kind == "normalization":
                assert kind == "normalization"
            share = calibration.bandwidth_share(H100, op)
            assert share == (1.0 if kind is None else calibration.vector_efficiency(H100, kind))
            assert calibration.bandwidth_share(ak.chips.get("TPU v5p"), op) == 1.0


def test_chips_without_measurements_run_at_the_catalogs_ceilings() -> None:
    v5p = ak.chips.get("TPU v5p")
    assert calibration.matmul_sustained(v5p) == 1.0
    assert calibration.vector_efficiency(v5p, "normalization") == 1.0
    assert calibration.all_reduce_busbw(v5p, 8, 2**26) is None
    assert calibration.processor_usage(v5p, "NVLink") == 0.0
    with pytest.raises(ValueError, match="kind"):
        calibration.vector_efficiency(A100, "softmax")
    with pytest.raises(ValueError, match="network"):   # a misspelt network is no silent 0
        calibration.processor_usage(A100, "nvlink")


def test_all_reduce_curve_is_the_measurement_then_rises_to_the_plateau() -> None:
    for name, n, nbytes, ms in measured.ALL_REDUCE:
        chip = ak.chips.get(name)
        expected = 2 * (n - 1) / n * nbytes / (ms * 1e-3)
        assert float(calibration.all_reduce_busbw(chip, n, nbytes)) == pytest.approx(
            expected, rel=0.002)
    sizes = np.array([2.0**26, 2.0**27, 2.0**30, 2.0**34, 2.0**36])
    bw = calibration.all_reduce_busbw(A100, 8, sizes)
    assert bw is not None and np.all(np.diff(bw[:4]) > 0)
    assert bw[3] == pytest.approx(A100.achievable_scaleup_bytes_per_second)
    assert bw[4] == bw[3]
    assert calibration.all_reduce_busbw(A100, 16, 2**26) is None  # no 16-GPU node curve


def test_kernels_apply_the_sustained_share_and_the_vector_shares() -> None:
    m = "llama-3-70b"
    now = kernels.microbatch(m, "A100", tp=8, microbatch_tokens=8192)
    peak = kernels.microbatch(m, "A100", tp=8, microbatch_tokens=8192, ceilings="datasheet")
    # matmuls compute-bound at these shapes: the ratio is the ceiling's share of peak times
    # the sustained share
    expected = A100.achievable_fraction("achievable_flops:bf16") * calibration.matmul_sustained(A100)
    assert peak.matmul_seconds / now.matmul_seconds == pytest.approx(expected, rel=0.02)
    # the vector kernels take longer than their bytes at the achievable bandwidth
    hbm_ratio = A100.achievable_hbm_bytes_per_second / A100.hbm_bytes_per_second
    assert now.vector_seconds * hbm_ratio > 1.3 * peak.vector_seconds


def test_tp_all_reduces_are_priced_at_the_measured_bus_bandwidth() -> None:
    layout = Layout(dp=8, tp=8, microbatch_tokens=8192, recompute="selective")
    step = train_step("llama-3-70b", "A100", layout, 64 * 8192, compute_efficiency="predicted")
    tp = next(c for c in step.collectives if c.name == "tp")
    nbytes = 8192 * ak.models.get("llama-3-70b").d_model * 2
    busbw = float(calibration.all_reduce_busbw(A100, 8, nbytes))
    assert tp.seconds_each == pytest.approx(2 * 7 / 8 * nbytes / busbw, rel=1e-6)
    # slower than the 16 GiB plateau the alpha-beta line runs at
    assert busbw < 0.8 * A100.achievable_scaleup_bytes_per_second


def test_overlapped_data_parallel_traffic_takes_its_processor_share() -> None:
    layout = Layout(dp=64, microbatch_tokens=8192)
    fw = ak.frameworks.Framework("overlap", dp_overlap=True)
    step = train_step("llama-3-8b", "H100", layout, 64 * 8 * 8192,
                      compute_efficiency="predicted", framework=fw)
    dp = next(c for c in step.collectives if c.name == "dp_grads")
    hidden = dp.seconds - dp.exposed_seconds
    assert hidden > 0
    usage = calibration.processor_usage(H100, "scale-out")
    assert usage == 0.02
    # the step pays 2% of the hidden time: compute + bubble + exposed + optimizer + stolen
    stolen = step.seconds - step.compute_seconds - step.bubble_seconds - step.optimizer_seconds
    assert stolen == pytest.approx(dp.exposed_seconds + usage * hidden, rel=1e-3, abs=1e-9)


def test_kernel_check_prints_every_kernel_and_the_headline(capsys) -> None:
    assert kernel_check.main([]) == 0
    out = capsys.readouterr().out
    assert out.count("\nA100 ") + out.count("\nH100 ") >= len(measured.LINEAR) + len(measured.VECTOR)
    assert "sustained matmul share, A100: 0.894" in out and measured.SOURCE in out
    # the headline says where the model still disagrees: mid-sized A100 GEMMs read too slow
    mid = next(r for r in kernel_check.headline()
               if r[0].startswith("linear layers, 512") and "A100" in r[1])
    assert mid[3] > 1.15
