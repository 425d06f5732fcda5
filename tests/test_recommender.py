"""accelkit.recommender: a DLRM training step on the roofline, and where its lookups run."""

from __future__ import annotations

import math

import pytest

import accelkit as ak
from accelkit import recommender


def test_a_step_is_its_operations_on_the_roofline_shared_by_the_chips() -> None:
    """Summed by hand from the model's operations: each max(FLOPs / peak, bytes / bandwidth)
    over n chips' pooled peak (bf16) and HBM bandwidth; lookups carry bytes and no FLOPs."""
    m, chip = ak.models.get("dlrm"), ak.chips.get("H100")
    ops = m.operations(batch=65_536, phase="train", dtype="fp32")
    for n in (1, 4):
        peak, bandwidth = n * chip.peak_flops("bf16"), n * chip.hbm_bytes_per_second
        each = [max(op.flops / peak, op.bytes / bandwidth) for op in ops]
        step = recommender.train_step(m, chip, n, batch=65_536, dtype="fp32")
        assert step.seconds == pytest.approx(math.fsum(each), rel=1e-12)
        gathers = [op for op in ops if op.kind == "gather"]
        assert gathers and all(op.flops == 0 for op in gathers)
        assert step.gather_seconds == pytest.approx(
            math.fsum(op.bytes / bandwidth for op in gathers), rel=1e-12)
        assert 0 < step.gather_share < 1 and step.bound == "memory"
        assert step.utilization == pytest.approx(step.flops / (step.seconds * peak))


def test_tables_and_optimizer_state_must_fit_in_pooled_hbm() -> None:
    m = ak.models.get("dlrm")
    assert recommender.table_bytes(m) == pytest.approx(m.params * (4 + 4))
    assert recommender.table_bytes(m, "bf16", 0.0) == pytest.approx(m.params * 2)
    small = recommender.train_step(m, "TPU v5e", 2)
    assert not small.fits and small.memory_bytes > small.hbm_bytes == 2 * 16 * 2**30
    assert recommender.train_step(m, "TPU v5e", 16).fits


def test_lookups_run_on_sparsecores_where_the_chip_has_them() -> None:
    assert recommender.gather_unit("TPU v6e") == "SparseCores (2 per chip)"
    assert recommender.gather_unit("TPU v5e") == "TensorCore vector unit (no SparseCores)"
    assert recommender.gather_unit("H100") == "SMs (no SparseCores)"
    assert recommender.train_step("dlrm", "TPU v5p", 4).sparsecores_per_chip == 4


@pytest.mark.parametrize("kwargs, match", [(dict(n_chips=0), "n_chips"), (dict(batch=0), "batch"),
                                           (dict(dtype="fp3"), "dtype"),
                                           (dict(optimizer_bytes_per_param=-1), "optimizer")])
def test_bad_input_is_refused_by_name(kwargs, match) -> None:
    args = dict(model="dlrm", chip="H100", n_chips=2) | kwargs
    with pytest.raises(ValueError, match=match):
        recommender.train_step(**args)
