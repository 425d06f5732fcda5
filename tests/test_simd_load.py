"""The toy GPU's plain load in an access pattern (issue 24: lesson 02's warp lab ran gathers, 12
transactions a warp, beside cell 11's 4 for a plain coalesced load)."""

from __future__ import annotations

import numpy as np
import pytest

from accelkit.simd import PATTERN_ELEMENTS, SIMDMachine, access_pattern_indices

PATTERNS = ("coalesced", "stride 2", "stride 8", "random")
X = np.arange(8 * PATTERN_ELEMENTS, dtype=np.float32)  # the span of stride 8 and random


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("lanes", (8, 32, 64))
def test_the_loads_transactions_are_lesson_02s_count_plus_a_coalesced_store(pattern, lanes):
    machine = SIMDMachine(lanes=lanes)
    idx = access_pattern_indices(pattern)
    run = machine.load(X, idx)
    store = machine.transactions(np.arange(idx.size))
    assert run.global_transactions == machine.transactions(idx) + store
    assert run.warps == -(-idx.size // lanes) and run.instructions == 3 * run.warps
    assert np.array_equal(run.output, X[idx])
    assert run.operation == "load" and run.dram_reads == {"x": idx.size}


def test_a_coalesced_load_costs_what_lesson_02_prints_and_far_less_than_a_gather():
    gpu = SIMDMachine()
    idx = access_pattern_indices("coalesced")
    warps = PATTERN_ELEMENTS // gpu.lanes
    # cell 11: 4 transactions a warp for the load; the store is 4 more
    assert gpu.transactions(idx) / warps == 4.0
    assert gpu.load(X, idx).global_transactions / warps == 8.0
    # the gather also reads an index array: 12 a warp
    assert gpu.gather(X.reshape(-1, 1), idx).global_transactions / warps == 12.0


def test_the_load_has_the_memory_program_of_an_elementwise_op():
    gpu = SIMDMachine()
    x = np.random.default_rng(0).standard_normal(PATTERN_ELEMENTS)
    gelu = gpu.elementwise(x, "gelu")
    load = gpu.load(x, access_pattern_indices("coalesced"))
    assert load.global_transactions == gelu.global_transactions
    assert load.memory_cycles == gelu.memory_cycles and load.issue_cycles < gelu.issue_cycles


@pytest.mark.parametrize("x, idx, error, words", [
    (X, np.array([len(X)]), ValueError, "indices must lie in"),
    (X, np.array([-1]), ValueError, "indices must be >= 0"),
    (X, np.array([0.5]), TypeError, "whole numbers"),
    (X.reshape(2, -1), np.array([0]), ValueError, "1-D"),
    ("x", np.array([0]), TypeError, "numpy array"),
])
def test_bad_input_is_refused_by_name(x, idx, error, words):
    with pytest.raises(error, match=words):
        SIMDMachine().load(x, idx)
