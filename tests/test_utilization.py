"""accelkit.labs.shapes against closed forms of a weight-stationary array and of tile padding.

Closed forms used (the engine's cycle model, SCALE-Sim's: Samajdar et al., "A Systematic
Methodology for Characterizing Scalability of DNN Accelerators using SCALE-Sim", ISPASS 2020):
a ws fold on an R×C array maps K on rows and N on columns and streams M, taking 2R + C + M − 2
cycles; with weights double-buffered every fold after the first hides its R-cycle load.
Padding: a dimension d on tiles of side t fills d / (t·⌈d/t⌉) of them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelkit import SIMDMachine, SystolicArray
from accelkit.labs.shapes import (LINE_SIZES, MAP_SIZES, TENSOR_CORE, TOKENS, cell_cycles,
                                  smallest_M_reaching, tile_curves, utilization_grid,
                                  utilization_line)


def _ws_cycles(side: int, M: int, N: int, K: int) -> int:
    folds = math.ceil(K / side) * math.ceil(N / side)
    return folds * (3 * side + M - 2)


def _ws_utilization(side: int, M: int, N: int, K: int) -> float:
    return M * N * K / (side * side * _ws_cycles(side, M, N, K))


def _padding_share(d: int, t: int) -> float:
    return d / (t * math.ceil(d / t))


def test_cell_cycles_matches_the_closed_form_for_the_lessons_k129_gemm():
    run = SystolicArray(128, 128, "ws").estimate(M=300, N=200, K=129)
    shares = cell_cycles(run)
    assert list(shares) == ["useful", "padding", "load, fill and drain"]
    assert shares["useful"] == pytest.approx(300 * 200 * 129 / (128 * 128 * _ws_cycles(128, 300, 200, 129)))
    # 4 folds map 129·200 of their 4·128·128 cells
    assert shares["padding"] == pytest.approx(1 - 129 * 200 / (4 * 128 * 128))
    assert sum(shares.values()) == pytest.approx(1.0)
    assert all(0.0 <= v <= 1.0 for v in shares.values())
    assert max(shares, key=shares.get) == "padding"


def test_cell_cycles_without_padding_is_useful_plus_load_fill_drain():
    run = SystolicArray(16, 16, "os").estimate(M=64, N=64, K=100)
    shares = cell_cycles(run)
    assert shares["padding"] == pytest.approx(0.0, abs=1e-12)
    assert shares["useful"] + shares["load, fill and drain"] == pytest.approx(1.0)


def test_cell_cycles_refuses_what_is_not_a_systolic_run():
    with pytest.raises(TypeError, match="run must be a SystolicRun"):
        cell_cycles(SIMDMachine().estimate(M=8, N=8, K=8))


def test_utilization_grid_equals_the_ws_closed_form_everywhere():
    grid = utilization_grid(128, 1024, "ws")
    assert grid.shape == (len(MAP_SIZES), len(MAP_SIZES))
    expected = np.array([[_ws_utilization(128, int(m), int(n), 1024) for n in MAP_SIZES]
                         for m in MAP_SIZES])
    np.testing.assert_allclose(grid, expected, rtol=1e-12)


def test_utilization_grid_takes_its_own_sizes_and_other_dataflows():
    grid = utilization_grid(8, 16, "os", sizes=[4, 8, 9])
    # os maps M × N and streams K: padding alone is (m / 8⌈m/8⌉)(n / 8⌈n/8⌉); the rest is fill.
    for i, m in enumerate([4, 8, 9]):
        for j, n in enumerate([4, 8, 9]):
            assert grid[i, j] <= _padding_share(m, 8) * _padding_share(n, 8) + 1e-12
    assert grid[1, 1] > grid[1, 2] and grid[1, 1] > grid[2, 1]  # one past the side adds a fold


def test_utilization_line_shows_the_129_cliff():
    line = utilization_line(128, 1024, "ws", 128)
    assert len(line) == len(LINE_SIZES) and LINE_SIZES[128] == 129
    assert line[127] == pytest.approx(_ws_utilization(128, 128, 128, 1024))
    assert line[128] == pytest.approx(_ws_utilization(128, 128, 129, 1024))
    assert line[128] < 0.6 * line[127]


@pytest.mark.parametrize("width", [1024, 4100])
def test_tile_curves_match_padding_closed_forms(width):
    curves = tile_curves(width)
    tc, tile, mxu, mxu_db, piped = curves.values()
    pipelined = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    for i, m in enumerate(TOKENS):
        # lesson 04's "pipelined MXU" (issue 24: the widget had no line for the 99.85% it quotes)
        assert piped[i] == pipelined.estimate(M=m, N=width, K=width).utilization >= mxu_db[i]
        pad16 = _padding_share(m, 16) * _padding_share(width, 16) ** 2
        assert tc[i] == pytest.approx(pad16)
        assert tile[i] == pytest.approx(_padding_share(m, 128) * _padding_share(width, 128))
        assert mxu[i] == pytest.approx(_ws_utilization(128, m, width, width))
        assert mxu_db[i] >= mxu[i]
    assert TENSOR_CORE["tensor_core"] == (16, 8, 16)


def test_smallest_M_reaching_half_matches_the_closed_form():
    # ws without padding: utilization M / (M + 3·128 − 2) >= 1/2  <=>  M >= 382.
    assert smallest_M_reaching(0.5, SystolicArray(128, 128, "ws"), 4096) == 382
    # double-buffered: 1024 folds of (2·128 + M − 2) cycles plus one 128-cycle load:
    # 1024·M >= (1024·(254 + M) + 128) / 2  <=>  M >= 254.125.
    assert smallest_M_reaching(0.5, SystolicArray(128, 128, "ws", double_buffer=True), 4096) == 255


def test_smallest_M_reaching_agrees_with_a_linear_scan():
    array = SystolicArray(8, 8, "ws")
    for target in (0.1, 0.33, 0.8):
        scan = next(m for m in range(1, 4097)
                    if array.estimate(M=m, N=24, K=24).utilization >= target)
        assert smallest_M_reaching(target, array, 24) == scan


@pytest.mark.parametrize("call, error, match", [
    (lambda: smallest_M_reaching(0.5, SystolicArray(8, 8, "os"), 64), ValueError, "weight-stationary"),
    (lambda: smallest_M_reaching(0.0, SystolicArray(8, 8, "ws"), 64), ValueError, "target"),
    (lambda: smallest_M_reaching(1.0, SystolicArray(8, 8, "ws"), 64, limit=10), ValueError, "limit"),
    (lambda: smallest_M_reaching(0.5, "ws", 64), TypeError, "array"),
    (lambda: smallest_M_reaching("half", SystolicArray(8, 8, "ws"), 64), TypeError, "target"),
    (lambda: utilization_grid(128, 0, "ws"), ValueError, "K"),
    (lambda: utilization_grid(128, 16, "xs"), ValueError, "dataflow"),
    (lambda: utilization_grid(128, 16, "ws", sizes={16, 32}), TypeError, "sizes"),
    (lambda: utilization_grid(128, 16, "ws", sizes=list(range(1, 300))), ValueError, "grid points"),
    (lambda: utilization_grid(128, 16, "ws", sizes=[]), ValueError, "sizes"),
    (lambda: utilization_line(128, 16, "ws", M=1.5), ValueError, "M"),
    (lambda: utilization_line(128, 16, "ws", 4, sizes="1,2"), TypeError, "sizes"),
    (lambda: tile_curves(0), ValueError, "width"),
    (lambda: tile_curves(64, tokens=[1, -2]), ValueError, r"tokens\[1\]"),
])
def test_bad_input_is_refused_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call()
