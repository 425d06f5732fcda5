"""Hypothesis strategies shared by the test modules."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

dataflows = st.sampled_from(["os", "ws", "is"])
array_sides = st.integers(min_value=1, max_value=9)


@st.composite
def gemm_operands(draw, max_dim: int = 24, integers: bool | None = None):
    """(A, B) with A M×K and B K×N, small enough to span a few folds of a small array."""
    M = draw(st.integers(1, max_dim))
    N = draw(st.integers(1, max_dim))
    K = draw(st.integers(1, max_dim))
    seed = draw(st.integers(0, 2**32 - 1))
    use_ints = draw(st.booleans()) if integers is None else integers
    rng = np.random.default_rng(seed)
    if use_ints:
        return rng.integers(-50, 51, (M, K)), rng.integers(-50, 51, (K, N))
    return rng.standard_normal((M, K)), rng.standard_normal((K, N))


# -- SIMD engine (tests/test_simd.py) ------------------------------------------------------------

@st.composite
def simd_machines(draw):
    """Small SIMD machines across every matmul kernel: naive, tiled, tensor core."""
    from accelkit.simd import SIMDMachine

    lanes = draw(st.sampled_from([4, 8, 32]))
    kernel = draw(st.sampled_from(["naive", "tiled", "tensor_core"]))
    common = dict(cores=draw(st.integers(1, 5)), lanes=lanes,
                  warps_per_core=draw(st.integers(1, 8)),
                  memory_latency_cycles=draw(st.sampled_from([1, 16, 64])),
                  transaction_bytes=draw(st.sampled_from([16, 32, 128])),
                  thread_tile=draw(st.sampled_from([1, 2])))
    if kernel == "naive":
        return SIMDMachine(shared_memory=False, **common)
    if kernel == "tiled":
        tile = draw(st.sampled_from([None, 4, 8, 16]))
        return SIMDMachine(tile=tile, **common)
    return SIMDMachine(tensor_core=draw(st.sampled_from([(4, 4, 4), (2, 4, 8)])), **common)


# -- systolic array options (tests/test_systolic.py) ---------------------------------------------

@st.composite
def systolic_options(draw):
    """Keyword options of SystolicArray beyond its size and dataflow, every combination."""
    return dict(double_buffer=draw(st.booleans()), overlap_folds=draw(st.booleans()),
                os_drain=draw(st.booleans()),
                bandwidth_words_per_cycle=draw(st.one_of(
                    st.none(), st.floats(0.25, 64, allow_nan=False))))
