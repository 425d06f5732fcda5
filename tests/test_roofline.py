"""Roofline estimates, checked against closed forms and the scaling book.

Published figures: jax-ml/scaling-book roofline.md (commit 0819a7d8; read at 0296c23d):
- "For the TPU v5e MXU, this is about 240 FLOPs/byte, since the TPU can perform 1.97e14 FLOPs/s
  and load 8.2e11 bytes/s from HBM." (our catalog uses 819 GB/s, from an older revision of Google's v5e page; see chips.json)
- Matmul bf16[B,D] x bf16[D,F]: intensity BDF / (BD + DF + BF) ≈ B when B ≪ D, F; compute-bound
  when B > 240.
- Question 1 (int8 matmul): intensity ≈ 2B, int8 ridge 3.94e14 / 8.2e11 = 480, so still B > 240.
- Question 2 (int8 weights, bf16 activations and math): compute-bound when B > 120.
- "For GPUs, this number is slightly higher (closer to 300)" -- H100 9.89e14 / 3.35e12 ≈ 295.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import accelkit as ak
from accelkit import roofline

CHIP_NAMES = [c.name for c in ak.chips.all()]


def test_v5e_ridge_is_240() -> None:
    r = roofline.matmul("TPU v5e", M=4096, N=4096, K=4096)
    assert r.ridge_flops_per_byte == pytest.approx(240, rel=0.01)
    assert roofline.critical_batch("v5e") == pytest.approx(240, rel=0.01)


def test_matmul_closed_form() -> None:
    r = roofline.matmul("H100", M=128, N=1024, K=512, dtype="bf16")
    flops = 2 * 128 * 1024 * 512
    moved = (128 * 512 + 512 * 1024 + 128 * 1024) * 2
    assert r.flops == flops and r.bytes == moved
    assert r.compute_seconds == pytest.approx(flops / 989e12)
    assert r.memory_seconds == pytest.approx(moved / 3.35e12)
    assert r.seconds == max(r.compute_seconds, r.memory_seconds)
    assert r.arithmetic_intensity == pytest.approx(flops / moved)
    assert r.chip == "NVIDIA H100 (SXM)" and r.dtype == "bf16"


def test_small_batch_intensity_is_about_the_batch() -> None:
    # scaling book: BDF / (BD + DF + BF) ≈ B for B ≪ D, F.
    for batch in (1, 8, 64, 128):
        r = roofline.matmul("v5e", M=batch, N=16384, K=16384)
        assert r.arithmetic_intensity == pytest.approx(batch, rel=0.02)


def test_compute_bound_above_240_tokens_on_v5e() -> None:
    assert roofline.matmul("v5e", M=200, N=16384, K=16384).bound == "memory"
    assert roofline.matmul("v5e", M=300, N=16384, K=16384).bound == "compute"


def test_int8_matmul_intensity_doubles_and_critical_batch_stays_240() -> None:
    # scaling book Question 1.
    r = roofline.matmul("v5e", M=64, N=16384, K=16384, dtype="int8")
    assert r.arithmetic_intensity == pytest.approx(2 * 64, rel=0.02)
    assert r.ridge_flops_per_byte == pytest.approx(480, rel=0.01)
    assert roofline.critical_batch("v5e", "int8") == pytest.approx(240, rel=0.01)


def test_int8_weights_bf16_math_halves_the_critical_batch() -> None:
    # scaling book Question 2: bf16[B,D] x int8[D,F] with bf16 FLOPs is compute-bound for B > 120.
    assert roofline.critical_batch("v5e", "bf16", weight_bytes_per_element=1) == pytest.approx(120, rel=0.01)
    mixed = dict(N=16384, K=16384, dtype="bf16", bytes_per_element=(2, 1, 2))
    assert roofline.matmul("v5e", M=100, **mixed).bound == "memory"
    assert roofline.matmul("v5e", M=140, **mixed).bound == "compute"


def test_gpu_ridge_is_closer_to_300() -> None:
    assert roofline.matmul("H100", M=1, N=1, K=1).ridge_flops_per_byte == pytest.approx(295, rel=0.01)


def test_explicit_bytes_per_element_overrides_dtype_size() -> None:
    r = roofline.matmul("A100", M=10, N=20, K=30, dtype="bf16", bytes_per_element=4)
    assert r.bytes == (10 * 30 + 30 * 20 + 10 * 20) * 4


def test_estimate_and_overrides() -> None:
    r = roofline.estimate("v5e", flops=1.97e14, bytes=8.19e11, dtype="bf16")
    assert r.compute_seconds == pytest.approx(1.0) and r.memory_seconds == pytest.approx(1.0)
    assert r.bound == "compute"  # a tie counts as compute-bound
    # scaling book dot-product footnote: a VPU of ~7e12 FLOPs/s has a critical intensity around 3.
    vpu = roofline.estimate("v5p", flops=1e9, bytes=2e9, peak_flops_per_second=7e12,
                            bytes_per_second=2.765e12)
    assert vpu.ridge_flops_per_byte == pytest.approx(7e12 / 2.765e12)
    assert vpu.bound == "memory"


def test_elementwise_is_memory_bound_everywhere() -> None:
    for name in CHIP_NAMES:
        r = roofline.elementwise(name, n_elements=10**8)
        assert r.bound == "memory"
        assert r.arithmetic_intensity == pytest.approx(1 / 6)  # 1 FLOP per (2 reads + 1 write) x 2 B
        assert r.bytes == 10**8 * 3 * 2


def test_curve_is_min_of_roofs() -> None:
    chip = ak.chips.get("v5e")
    x = np.array([1.0, 100.0, 240.0, 241.0, 1e4])
    y = roofline.curve(chip, "bf16", x)
    np.testing.assert_allclose(y, np.minimum(197e12, x * 819e9))
    assert roofline.curve("H100").shape == (200,)
    assert np.all(np.diff(roofline.curve("H100")) >= 0)


@given(
    chip=st.sampled_from(CHIP_NAMES),
    m=st.integers(1, 10**5), n=st.integers(1, 10**5), k=st.integers(1, 10**5),
)
def test_matmul_invariants(chip: str, m: int, n: int, k: int) -> None:
    r = roofline.matmul(chip, M=m, N=n, K=k)
    assert r.seconds == max(r.compute_seconds, r.memory_seconds) > 0
    assert r.achieved_flops_per_second <= r.peak_flops_per_second * (1 + 1e-12)
    assert (r.bound == "compute") == (r.arithmetic_intensity >= r.ridge_flops_per_byte)
    assert math.isclose(r.achieved_flops_per_second,
                        min(r.peak_flops_per_second, r.arithmetic_intensity * r.bytes_per_second),
                        rel_tol=1e-9)


@pytest.mark.parametrize("bad", [0, -1, 1.5, float("nan"), float("inf")])
def test_bad_sizes_rejected(bad: float) -> None:
    with pytest.raises(ValueError, match="M must be"):
        roofline.matmul("v5e", M=bad, N=1, K=1)


@pytest.mark.parametrize("field, bad", [(f, b) for f in ("flops", "bytes")
                                        for b in (-5.0, float("nan"), float("inf"))] + [("bytes", 0)])
def test_bad_counts_rejected(field: str, bad: float) -> None:
    kwargs = {"flops": 1e9, "bytes": 1e9, field: bad}
    with pytest.raises(ValueError, match=f"{field} must be"):
        roofline.estimate("v5e", **kwargs)


def test_pure_data_movement_is_memory_bound() -> None:
    """A gather does no arithmetic: its time is its bytes over the bandwidth."""
    r = roofline.estimate("H100", flops=0, bytes=3.35e9)
    assert r.bound == "memory" and r.arithmetic_intensity == 0
    assert r.seconds == pytest.approx(1e-3)


def test_bad_chip_dtype_and_types_rejected() -> None:
    with pytest.raises(ValueError, match="unknown chip"):
        roofline.matmul("TPU v9", M=1, N=1, K=1)
    with pytest.raises(ValueError, match="dtype must be one of"):
        roofline.matmul("v5e", M=1, N=1, K=1, dtype="fp64")
    with pytest.raises(ValueError, match="no published dense fp8 peak"):
        roofline.matmul("v5e", M=1, N=1, K=1, dtype="fp8")
    with pytest.raises(TypeError):
        roofline.matmul("v5e", M="8", N=1, K=1)
    with pytest.raises(TypeError):
        roofline.matmul(None, M=1, N=1, K=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="three entries"):
        roofline.matmul("v5e", M=1, N=1, K=1, bytes_per_element=(1, 2))
    with pytest.raises(ValueError, match="bytes_per_element must be"):
        roofline.matmul("v5e", M=1, N=1, K=1, bytes_per_element=0)
    with pytest.raises(ValueError, match="n_elements must be"):
        roofline.elementwise("v5e", n_elements=0)
    with pytest.raises(ValueError, match=">= 1"):
        roofline.elementwise("v5e", n_elements=4, reads_per_element=0, writes_per_element=0)
    for bad in ([], [1.0, -1.0], [float("nan")], [[1, 2], [3]]):
        with pytest.raises(ValueError, match="intensities"):
            roofline.curve("v5e", "bf16", bad)
    with pytest.raises(TypeError, match="intensities"):
        roofline.curve("v5e", "bf16", "abc")


def test_result_is_frozen_and_readable() -> None:
    r = roofline.matmul("v5e", M=64, N=8192, K=8192)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.seconds = 0.0  # type: ignore[misc]
    assert "memory-bound" in repr(r) and "TPU v5e" in repr(r)
    assert "<table>" in r._repr_html_()
    assert r.fraction_of_peak == pytest.approx(r.arithmetic_intensity / r.ridge_flops_per_byte)


def test_decode_mlp_numbers_match_the_matmul_closed_form() -> None:
    """[B, D] × [D, F] in bf16: FLOPs 2BDF, bytes 2(BD + DF + BF); time max(FLOPs/peak, bytes/BW)."""
    n = roofline.decode_mlp_numbers("TPU v5e", 4096, 14336)
    peak, bw = 1.97e14, 8.19e11  # TPU v5e bf16 peak and HBM (the catalog's C6 choice)
    assert n["peak_flops_per_second"] == pytest.approx(peak)
    assert n["hbm_bytes_per_second"] == pytest.approx(bw)
    assert n["ridge"] == pytest.approx(peak / bw)
    assert n["critical_batch"] == pytest.approx(peak / bw)  # bf16 weights: B* = ridge
    D, F = 4096, 14336
    for B in (8, 512):
        flops, moved = 2 * B * D * F, 2 * (B * D + D * F + B * F)
        assert n[f"intensity_b{B}"] == pytest.approx(flops / moved)
        assert n[f"seconds_b{B}"] == pytest.approx(max(flops / peak, moved / bw))
    assert (n["bound_b8"], n["bound_b512"]) == ("memory", "compute")


def test_decode_mlp_numbers_refuse_bad_widths() -> None:
    with pytest.raises(ValueError, match="N"):
        roofline.decode_mlp_numbers("TPU v5e", 4096, 0)


@pytest.mark.parametrize("chip", ["TPU v5e", "H100", "TPU v6e", "A100"])
@pytest.mark.parametrize("n, k", [(8192, 8192), (14336, 4096), (4096, 14336)])
def test_crossing_batch_is_where_the_matmul_changes_bound(chip, n, k):
    """crossing_batch against the roofline itself: the whole batch just below it is
    memory-bound, the one at or above it compute-bound, and intensity there equals the ridge."""
    crossing = ak.roofline.crossing_batch(chip, N=n, K=k)
    assert ak.roofline.matmul(chip, M=math.floor(crossing), N=n, K=k).bound == "memory"
    assert ak.roofline.matmul(chip, M=math.ceil(crossing), N=n, K=k).bound == "compute"
    # closed form, written out independently: 2MNK = R (MK·2 + KN·2 + MN·2) in bf16
    ridge = ak.chips.get(chip).ridge_flops_per_byte("bf16")
    m = crossing
    assert 2 * m * n * k == pytest.approx(ridge * 2 * (m * k + k * n + m * n), rel=1e-12)
    assert crossing > ak.roofline.critical_batch(chip)  # activations only add bytes


def test_crossing_batch_tends_to_critical_batch_for_wide_weights_and_halves_with_int8():
    big = ak.roofline.crossing_batch("v5e", N=1 << 20, K=1 << 20)
    assert big == pytest.approx(ak.roofline.critical_batch("v5e"), rel=1e-3)
    bf16 = ak.roofline.crossing_batch("v5e", N=8192, K=8192)
    int8 = ak.roofline.crossing_batch("v5e", N=8192, K=8192, bytes_per_element=(2, 1, 2))
    assert int8 == pytest.approx(bf16 / 2)


def test_crossing_batch_is_inf_when_activations_alone_exceed_the_ridge():
    # 256 x 256 weight: 2·K·N = 131,072 FLOPs per batch row against R·(2K + 2N) ≈ 246,000
    assert ak.roofline.crossing_batch("v5e", N=256, K=256) == float("inf")
    assert ak.roofline.matmul("v5e", M=1 << 20, N=256, K=256).bound == "memory"


def test_crossing_batch_rejects_bad_sizes():
    with pytest.raises(ValueError, match="N"):
        ak.roofline.crossing_batch("v5e", N=0, K=8)
    with pytest.raises(TypeError, match="bytes_per_element"):
        ak.roofline.crossing_batch("v5e", N=8, K=8, bytes_per_element="2")


# ----------------------------------------------------------------------------- overhead, the third regime
# Horace He, "Making Deep Learning Go Brrrr From First Principles" (horace.io/brrr_intro.html):
# time goes to compute, memory bandwidth, or overhead ("everything else"). The per-operation
# figure is eager PyTorch's measured dispatch + launch cost (roofline.OVERHEAD_SOURCE).

def test_overhead_default_is_the_cited_measurement() -> None:
    assert ak.roofline.OVERHEAD_SECONDS == 7e-6
    low, high = ak.roofline.OVERHEAD_RANGE_SECONDS
    assert low <= ak.roofline.OVERHEAD_SECONDS <= high
    for cited in ("FlagGems#4812", "pytorch/pytorch#41383", "pytorch/pytorch#82793"):
        assert cited in ak.roofline.OVERHEAD_SOURCE


def test_a_tiny_matmul_is_overhead_bound_and_a_large_one_is_not() -> None:
    # [1,256]x[256,256] bf16 on H100: 131072 FLOPs / 989e12 = 0.13 ns; 132096 bytes / 3.35e12
    # = 39 ns; both far below 7 us, so the operation costs its overhead.
    tiny = ak.roofline.matmul("H100", M=1, N=256, K=256, overhead=True)
    assert tiny.bound == "overhead" and tiny.seconds == tiny.overhead_seconds == 7e-6
    assert tiny.memory_seconds == pytest.approx((256 + 256 * 256 + 256) * 2 / 3.35e12)
    assert tiny.achieved_flops_per_second == pytest.approx(2 * 256 * 256 / 7e-6)
    plain = ak.roofline.matmul("H100", M=1, N=256, K=256)
    assert plain.bound == "memory" and plain.overhead_seconds == 0.0
    assert plain.seconds == pytest.approx(tiny.memory_seconds)
    big = ak.roofline.matmul("H100", M=8192, N=8192, K=8192, overhead=True)
    assert big.bound == "compute" and big.seconds == big.compute_seconds > 100 * big.overhead_seconds


def test_square_matmuls_leave_the_overhead_regime_where_the_closed_form_says() -> None:
    # An NxNxN bf16 matmul's compute time 2N^3 / 989e12 reaches 7 us at
    # N = (7e-6 * 989e12 / 2)^(1/3) = 1512.7, before its memory time 6N^2 / 3.35e12 does
    # (N = 1979): below 1513 it is overhead-bound, from 1513 compute-bound.
    edge = (7e-6 * 989e12 / 2) ** (1 / 3)
    assert edge == pytest.approx(1512.7, abs=0.05)
    assert ak.roofline.matmul("H100", M=1512, N=1512, K=1512, overhead=True).bound == "overhead"
    assert ak.roofline.matmul("H100", M=1513, N=1513, K=1513, overhead=True).bound == "compute"
    # A decode-shaped matmul (8 tokens against 4096x4096 bf16 weights): 33.6 MB / 3.35 TB/s
    # = 10 us, memory-bound even with the overhead counted; the same at 1024x1024 weights is 0.6 us.
    assert ak.roofline.matmul("H100", M=8, N=4096, K=4096, overhead=True).bound == "memory"
    assert ak.roofline.matmul("H100", M=8, N=1024, K=1024, overhead=True).bound == "overhead"


def test_overhead_override_and_bad_values() -> None:
    r = ak.roofline.matmul("v5e", M=1, N=128, K=128, overhead_seconds=2e-5)
    assert r.overhead_seconds == 2e-5 and r.seconds == 2e-5 and r.bound == "overhead"
    assert ak.roofline.matmul("v5e", M=1, N=128, K=128, overhead=True,
                              overhead_seconds=0.0).bound == "memory"
    with pytest.raises(TypeError, match="overhead must be True or False"):
        ak.roofline.matmul("H100", M=1, N=1, K=1, overhead="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="overhead must be True or False"):
        ak.roofline.matmul("H100", M=1, N=1, K=1, overhead=7e-6)  # type: ignore[arg-type]
    for bad in (-1e-6, float("nan"), float("inf"), 5.0):
        with pytest.raises(ValueError, match="overhead_seconds"):
            ak.roofline.matmul("H100", M=1, N=1, K=1, overhead_seconds=bad)


def test_estimate_and_elementwise_take_the_overhead_too() -> None:
    e = ak.roofline.estimate("H100", flops=1e3, bytes=1e3, overhead=True)
    assert e.bound == "overhead" and e.seconds == ak.roofline.OVERHEAD_SECONDS
    add = ak.roofline.elementwise("H100", n_elements=1024, overhead=True)
    assert add.bound == "overhead"
    # 64M-element add moves 384 MB: 115 us of memory time, so it stays memory-bound.
    assert ak.roofline.elementwise("H100", n_elements=64 * 2**20, overhead=True).bound == "memory"
    assert ak.roofline.per_step_overhead_seconds(320) == pytest.approx(320 * 7e-6)
    assert ak.roofline.per_step_overhead_seconds(10, overhead_seconds=1e-6) == pytest.approx(1e-5)
    with pytest.raises(ValueError, match="n_operations"):
        ak.roofline.per_step_overhead_seconds(-1)
    assert "overhead" in repr(e) and "overhead per operation" in e._repr_html_()


def test_sparse_peaks_in_estimate_and_no_sparse_figure_passed_as_dense() -> None:
    dense = ak.roofline.estimate("H100", flops=1e12, bytes=1e6, dtype="fp8")
    sparse = ak.roofline.estimate("H100", flops=1e12, bytes=1e6, dtype="fp8", sparse=True)
    assert sparse.peak_flops_per_second == 3958e12 == 2 * dense.peak_flops_per_second
    assert sparse.compute_seconds == pytest.approx(dense.compute_seconds / 2)
    with pytest.raises(ValueError, match=r"peak_flops_per_second=.*2:4 structured-sparsity fp8 peak"):
        ak.roofline.estimate("H100", flops=1e12, bytes=1e6, dtype="fp8",
                             peak_flops_per_second=3958e12)
    # the same number passed with sparse=True is accepted, and a vector-unit peak is untouched
    assert ak.roofline.estimate("H100", flops=1e12, bytes=1e6, dtype="fp8", sparse=True,
                                peak_flops_per_second=3958e12).peak_flops_per_second == 3958e12
    assert ak.roofline.estimate("H100", flops=1e6, bytes=1e6,
                                peak_flops_per_second=67e12).peak_flops_per_second == 67e12
    with pytest.raises(ak.chips.MissingFigureError, match="sparse=True"):
        ak.roofline.estimate("MI300X", flops=1e12, bytes=1e6, dtype="bf16", sparse=True)
    with pytest.raises(TypeError, match="sparse must be True or False"):
        ak.roofline.estimate("H100", flops=1.0, bytes=1.0, sparse=1)  # type: ignore[arg-type]


def test_operations_time_sums_occurrences_against_a_closed_form() -> None:
    from typing import NamedTuple

    class Op(NamedTuple):
        flops: float
        bytes: float
        count: int

    # Ten tiny copies (0.1 us of memory each on H100's 3.35 TB/s) and one 1 ms matmul
    # (989e9 FLOPs at 989 TFLOP/s): 10 x 7 us + 1 ms with the overhead, 1 us + 1 ms without.
    ops = [Op(0.0, 3.35e6, 10), Op(989e9, 1e6, 1)]
    t = ak.roofline.operations_time("H100", ops, overhead=True)
    assert t.n_operations == 11 and t.seconds == pytest.approx(70e-6 + 1e-3)
    assert t.device_seconds == pytest.approx(1e-6 + 1e-3)
    assert t.count("overhead") == 10 and t.count("compute") == 1 and t.count("memory") == 0
    assert t.overhead_share == pytest.approx((70e-6 - 1e-6) / (70e-6 + 1e-3))
    off = ak.roofline.operations_time("H100", ops)
    assert off.seconds == off.device_seconds == pytest.approx(t.device_seconds)
    assert off.overhead_seconds == 0.0 and off.count("overhead") == 0
    with pytest.raises(TypeError, match="operations must be a sequence"):
        ak.roofline.operations_time("H100", 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"operations\[0\] must have flops, bytes and count"):
        ak.roofline.operations_time("H100", [(1.0, 2.0)])
    with pytest.raises(ValueError, match=r"operations\[0\].bytes"):
        ak.roofline.operations_time("H100", [Op(1.0, 0.0, 1)])
    with pytest.raises(ValueError, match="bound must be one of"):
        t.count("latency")


def test_batch_one_decode_of_an_8b_model_is_mostly_overhead_bound_operations() -> None:
    # llama-3-8b decode at batch 1, 1024 tokens of context, eager on H100: the model's 355
    # operations (its per-layer list times 32 layers) include 226 small enough that 7 us of
    # dispatch outlasts them; the step is memory-bound in total but a third slower.
    ops = ak.models.get("llama-3-8b").operations(batch=1, phase="decode", context_tokens=1024)
    t = ak.roofline.operations_time("H100", ops, overhead=True)
    assert t.n_operations == sum(o.count for o in ops) == 355
    assert t.count("overhead") == 226 and t.count("compute") == 0
    assert t.seconds / t.device_seconds == pytest.approx(1.34, abs=0.01)


def test_times_overlapped_is_the_longest_part_and_not_overlapped_the_sum():
    parts = dict(compute_seconds=3e-3, memory_seconds=2e-3, communication_seconds=4e-3,
                 overhead_seconds=1e-3)
    together = roofline.times(**parts, overlap=True)
    assert together.seconds == 4e-3
    assert together.exposed_communication_seconds == pytest.approx(1e-3)
    assert (together.compute_seconds, together.memory_seconds, together.overhead_seconds) == (
        3e-3, 2e-3, 1e-3)
    apart = roofline.times(**parts, overlap=False)
    assert apart.seconds == pytest.approx(10e-3)
    assert apart.exposed_communication_seconds == 4e-3
    hidden = roofline.times(compute_seconds=5.0, communication_seconds=2.0, overlap=True)
    assert hidden.seconds == 5.0 and hidden.exposed_communication_seconds == 0.0
    assert all(type(v) is float for v in together[:6])


def test_times_broadcast_arrays_as_a_layout_search_needs():
    compute = np.array([1.0, 2.0, 3.0])
    t = roofline.times(compute_seconds=compute, communication_seconds=np.array([[0.5], [2.5]]),
                       overlap=True)
    np.testing.assert_array_equal(t.seconds, [[1.0, 2.0, 3.0], [2.5, 2.5, 3.0]])
    np.testing.assert_array_equal(t.exposed_communication_seconds, [[0, 0, 0], [1.5, 0.5, 0]])
    s = roofline.times(compute_seconds=compute, memory_seconds=1.0, overlap=False)
    np.testing.assert_array_equal(s.seconds, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(s.exposed_communication_seconds, [0.0, 0.0, 0.0])


def test_times_refuses_a_missing_or_non_bool_overlap_and_bad_times():
    with pytest.raises(TypeError):
        roofline.times(compute_seconds=1.0)  # the call must say which
    with pytest.raises(TypeError, match="overlap must be True"):
        roofline.times(compute_seconds=1.0, overlap=1)
    with pytest.raises(ValueError, match="memory_seconds"):
        roofline.times(memory_seconds=-1.0, overlap=True)
    with pytest.raises(ValueError, match="communication_seconds"):
        roofline.times(communication_seconds=np.array([1.0, np.nan]), overlap=False)
    with pytest.raises(TypeError, match="compute_seconds"):
        roofline.times(compute_seconds="1", overlap=True)


def test_bound_names_the_regime_as_roofline_results_do():
    assert roofline.bound(2.0, 1.0) == "compute"
    assert roofline.bound(1.0, 1.0) == "compute"
    assert roofline.bound(1.0, 2.0) == "memory"
    assert roofline.bound(1.0, 2.0, overhead_seconds=3.0) == "overhead"
    r = roofline.matmul("H100", M=1, N=256, K=256, overhead=True)
    assert roofline.bound(r.compute_seconds, r.memory_seconds, r.overhead_seconds) == r.bound
