"""The one table of number formats and the cost kernel's three rules, against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import accelkit as ak
from accelkit import dtypes, energy, price, roofline


def test_bytes_per_element_are_the_formats_widths():
    # Bits per element / 8: fp32 and tf32 are stored in 32 bits (tf32 narrows only the
    # multiplier's inputs, NVIDIA A100 whitepaper), bf16/fp16 16, fp8/int8 8, fp6 6 and fp4/int4 4
    # (the OCP MX element widths; their per-block scales are not counted).
    widths = {"fp32": 32, "tf32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "fp6": 6,
              "fp4": 4, "int4": 4}
    assert dict(dtypes.BYTES) == {k: bits / 8 for k, bits in widths.items()}
    with pytest.raises(TypeError):
        dtypes.BYTES["fp64"] = 8.0  # type: ignore[index]


def test_check_names_the_parameter_and_the_formats():
    assert dtypes.check(" BF16 ") == "bf16"
    with pytest.raises(ValueError, match=r"kv_dtype must be one of .*'int4'.*got 'int3'"):
        dtypes.check("int3", "kv_dtype")
    with pytest.raises(TypeError, match="weight_dtype"):
        dtypes.nbytes(16, "weight_dtype")
    with pytest.raises(ValueError, match="dtype must be one of"):
        ak.chips.get("H100").peak_flops("tf32")  # a storage format no catalog chip has a peak for
    with pytest.raises(ValueError, match="no published dense int4 peak"):
        ak.chips.get("H100").peak_flops("int4")  # a peak format this chip has no figure for
    assert dtypes.nbytes("fp4") == dtypes.nbytes("int4") == 0.5 and dtypes.nbytes("fp6") == 0.75
    assert set(dtypes.PEAK_DTYPES) <= set(dtypes.BYTES) and "tf32" not in dtypes.PEAK_DTYPES
    for bad in ("fp3", "nvfp4", "fp64"):
        with pytest.raises(ValueError, match=r"precision must be one of .*'fp4'"):
            dtypes.check(bad, "precision")


@pytest.mark.parametrize("weights, activations", [
    ("fp32", "fp32"), ("tf32", "tf32"), ("bf16", "bf16"), ("fp16", "fp16"),
    ("fp8", "bf16"), ("int8", "bf16"), ("fp6", "bf16"), ("fp4", "bf16"), ("int4", "bf16")])
def test_one_activation_rule_in_models_prefill_and_decode(weights, activations):
    assert dtypes.activation_dtype(weights) == activations
    m = ak.models.get("llama-3-8b")
    explicit = m.operations(batch=1, phase="decode", context_tokens=64, dtype=weights,
                            kv_dtype=activations)
    assert m.operations(batch=1, phase="decode", context_tokens=64, dtype=weights) == explicit
    if weights in ("tf32",):
        return  # no chip publishes a tf32 peak to price it on
    kwargs = dict(model="llama-3-8b", chip="H100", weight_dtype=weights)
    assert ak.inference.prefill(**kwargs).kv_dtype == activations
    assert ak.inference.decode_step(**kwargs).kv_dtype == activations
    assert ak.inference.prefill(**kwargs).compute_dtype == "bf16"
    assert ak.inference.decode_step(**kwargs).compute_dtype == "bf16"


def test_roofline_times_is_max_of_compute_and_memory():
    # 1e12 FLOPs at 1e14 FLOP/s = 10 ms; 1e9 bytes at 1e12 B/s = 1 ms: compute-bound, 10 ms.
    t = roofline.times_from_counts(1e12, 1e9, 1e14, 1e12)
    assert t == (pytest.approx(0.01), pytest.approx(0.001), pytest.approx(0.01))
    assert all(type(v) is float for v in t)
    flops = np.array([[1e12, 0.0], [1e9, 4e12]])
    moved = np.array([[1e9, 5e9], [2e9, 1e9]])
    swept = roofline.times_from_counts(flops, moved, np.array([[1e14], [2e14]]), 1e12)
    np.testing.assert_allclose(swept.seconds, [[0.01, 0.005], [0.002, 0.02]])
    for bad in (dict(flops=-1.0), dict(bytes=float("nan")), dict(bytes_per_second=0.0)):
        args = {"flops": 1.0, "bytes": 1.0, "peak_flops_per_second": 1.0,
                "bytes_per_second": 1.0, **bad}
        with pytest.raises(ValueError, match=next(iter(bad))):
            roofline.times_from_counts(**args)


def test_usd_for_and_tdp_joules_are_rate_times_chips_times_time():
    assert price.usd_for(3.99, 3600.0, 8) == pytest.approx(31.92)  # 8 GPUs for an hour
    assert price.usd_for(None, 10.0) is None
    np.testing.assert_allclose(price.usd_for(np.array([[1.0], [np.nan]]), np.array([3600.0, 1800.0])),
                               [[1.0, 0.5], [np.nan, np.nan]])
    assert energy.tdp_joules(700.0, 10.0, 8) == pytest.approx(56_000.0)  # 700 W x 8 x 10 s
    assert energy.tdp_joules(None, 10.0) is None
    with pytest.raises(ValueError, match="seconds"):
        price.usd_for(1.0, -1.0)
    with pytest.raises(ValueError, match="n_chips"):
        energy.tdp_joules(700.0, 1.0, 0)


def test_every_cost_model_uses_the_kernel():
    # Same numbers by two routes: the training estimate's dollars and joules are the kernel's.
    t = ak.training.estimate(model="llama-3-8b", tokens=1e9, chip="H100", n_chips=8)
    h100 = ak.chips.get("H100")
    assert t.usd == price.usd_for(h100.usd_per_hour, t.seconds, 8)
    assert t.joules == energy.tdp_joules(h100.watts, t.seconds, 8)
    # TPU v5e publishes no power; 8B parameters x 16 bytes do not fit one 16 GiB chip.
    v5e = ak.training.estimate(model="llama-3-8b", tokens=1e9, chip="v5e")
    assert [n.kind for n in v5e.notes] == ["no_power", "does_not_fit"] and v5e.joules is None
