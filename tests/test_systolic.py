"""The systolic array: exact products, three paths that agree, and SCALE-Sim's counts."""

from __future__ import annotations

import csv
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelkit import SystolicArray
from accelkit.systolic import DATAFLOWS
from tests.strategies import array_sides, dataflows, gemm_operands, systolic_options

SCALESIM_CASES = Path(__file__).parent / "data" / "scalesim" / "cases.csv"


def _closed_form_cycles(flow: str, R: int, C: int, M: int, N: int, K: int) -> int:
    """Cycles written out independently of the engine (tests/data/scalesim/DERIVATION.md)."""
    if flow == "os":
        folds, per_fold = math.ceil(M / R) * math.ceil(N / C), K + R + C - 2
    elif flow == "ws":
        folds, per_fold = math.ceil(K / R) * math.ceil(N / C), 2 * R + C + M - 2
    else:
        folds, per_fold = math.ceil(K / R) * math.ceil(M / C), 2 * R + C + N - 2
    return folds * per_fold


# -- exactness and agreement of the three paths (property tests) --------------------------------

@settings(max_examples=60, deadline=None)
@given(flow=dataflows, R=array_sides, C=array_sides, operands=gemm_operands())
def test_simulate_matmul_and_estimate_agree_and_are_exact(flow, R, C, operands):
    A, B = operands
    sa = SystolicArray(rows=R, cols=C, dataflow=flow)
    simulated = sa.simulate(A, B)
    fast = sa.matmul(A, B)
    estimated = sa.estimate(M=A.shape[0], N=B.shape[1], K=A.shape[1])
    reference = A @ B
    if A.dtype.kind == "i":
        assert np.array_equal(simulated.output, reference)
        assert np.array_equal(fast.output, reference)
    else:
        np.testing.assert_allclose(simulated.output, reference, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(fast.output, reference, rtol=1e-12, atol=1e-12)
    assert estimated.output is None
    assert simulated.counts() == fast.counts() == estimated.counts()
    M, K = A.shape
    N = B.shape[1]
    assert simulated.macs == M * N * K
    assert simulated.cycles == _closed_form_cycles(flow, R, C, M, N, K)
    assert 0 < simulated.utilization <= 1
    assert 0 < simulated.mapping_efficiency <= 1


@settings(max_examples=30, deadline=None)
@given(flow=dataflows, R=array_sides, C=array_sides, operands=gemm_operands(max_dim=14),
       double_buffer=st.booleans(),
       bandwidth=st.one_of(st.none(), st.floats(0.25, 64, allow_nan=False)))
def test_options_agree_across_paths(flow, R, C, operands, double_buffer, bandwidth):
    A, B = operands
    sa = SystolicArray(R, C, flow, double_buffer=double_buffer, bandwidth_words_per_cycle=bandwidth)
    simulated = sa.simulate(A, B)
    assert simulated.counts() == sa.matmul(A, B).counts() == \
        sa.estimate(M=A.shape[0], N=B.shape[1], K=A.shape[1]).counts()
    assert simulated.total_cycles == simulated.cycles + simulated.stall_cycles
    assert 0 < simulated.utilization <= 1


@settings(max_examples=25, deadline=None)
@given(flow=dataflows, R=st.integers(1, 5), C=st.integers(1, 5), operands=gemm_operands(max_dim=10))
def test_steps_walk_every_cycle_and_every_mac(flow, R, C, operands):
    A, B = operands
    sa = SystolicArray(R, C, flow)
    steps = list(sa.steps(A, B))
    run = sa.matmul(A, B)
    assert [s.cycle for s in steps] == list(range(run.cycles))
    assert sum(s.active_macs for s in steps) == run.macs
    np.testing.assert_allclose(steps[-1].output, A @ B, rtol=1e-9, atol=1e-9)


def test_steps_is_lazy_and_shows_operand_values():
    A = np.arange(1, 17).reshape(4, 4)
    B = np.arange(17, 33).reshape(4, 4)
    walk = SystolicArray(4, 4, "os").steps(A, B)
    first = next(walk)  # a generator: nothing else has been computed yet
    assert first.cycle == 0 and first.phase == "compute"
    # Cycle 0: only cell (0, 0) holds operands, A[0,0] and B[0,0], and it does a MAC.
    assert first.active_macs == 1 and first.active[0, 0]
    assert first.a[0, 0] == A[0, 0] and first.b[0, 0] == B[0, 0]
    assert tuple(first.a_index[0, 0]) == (0, 0) and tuple(first.b_index[0, 0]) == (0, 0)
    assert np.isnan(first.a[0, 1]) and tuple(first.a_index[0, 1]) == (-1, -1)
    second = next(walk)
    # A moved one cell right and B one cell down; new values entered at the edges, skewed.
    assert second.a[0, 1] == A[0, 0] and second.b[1, 0] == B[0, 0]
    assert second.a[0, 0] == A[0, 1] and second.a[1, 0] == A[1, 0]
    assert second.psum[0, 0] == A[0, 0] * B[0, 0] + A[0, 1] * B[1, 0]


@pytest.mark.parametrize("flow", ["ws", "is"])
def test_stationary_tile_loads_before_streaming(flow):
    A = np.arange(1, 10).reshape(3, 3)
    B = np.arange(10, 19).reshape(3, 3)
    steps = list(SystolicArray(3, 3, flow).steps(A, B))
    assert [s.phase for s in steps[:3]] == ["load"] * 3
    loaded = steps[2]
    stationary = loaded.b if flow == "ws" else loaded.a
    expected = B if flow == "ws" else A.T  # ws holds B (K×N); is holds Aᵀ (K on rows, M on cols)
    assert np.array_equal(stationary, expected)
    assert all(s.active_macs == 0 for s in steps[:3])
    labels = loaded.b_index if flow == "ws" else loaded.a_index
    assert tuple(labels[2, 1]) == ((2, 1) if flow == "ws" else (1, 2))


def test_utilization_reaches_one_only_when_fill_and_drain_are_amortised():
    sa = SystolicArray(4, 4, "os")
    small = sa.estimate(M=4, N=4, K=4)
    long = sa.estimate(M=4, N=4, K=10_000)
    assert small.utilization == pytest.approx(64 / (16 * 10))
    assert long.utilization > 0.999 and long.utilization <= 1


def test_folds_and_mapping_efficiency_closed_form():
    run = SystolicArray(8, 8, "ws").estimate(M=100, N=20, K=12)
    assert (run.row_folds, run.col_folds, run.folds) == (2, 3, 6)
    # K=12 on 8 rows maps 8 then 4; N=20 on 8 columns maps 8, 8 then 4.
    assert run.mapping_efficiency == pytest.approx((12 * 20) / (6 * 64))


def test_double_buffering_hides_every_load_but_the_first():
    plain = SystolicArray(8, 8, "ws").estimate(M=64, N=64, K=64)
    hidden = SystolicArray(8, 8, "ws", double_buffer=True).estimate(M=64, N=64, K=64)
    assert plain.cycles - hidden.cycles == (plain.folds - 1) * 8
    os_plain = SystolicArray(8, 8, "os").estimate(M=64, N=64, K=64)
    os_db = SystolicArray(8, 8, "os", double_buffer=True).estimate(M=64, N=64, K=64)
    assert os_plain.cycles == os_db.cycles  # nothing to preload in output-stationary


def test_low_bandwidth_stalls_and_high_bandwidth_does_not():
    kwargs = dict(M=64, N=64, K=64)
    free = SystolicArray(8, 8, "os").estimate(**kwargs)
    ample = SystolicArray(8, 8, "os", bandwidth_words_per_cycle=1e6).estimate(**kwargs)
    starved = SystolicArray(8, 8, "os", bandwidth_words_per_cycle=1).estimate(**kwargs)
    assert free.stall_cycles == ample.stall_cycles == 0
    # Each os fold moves 8·64 + 64·8 + 8·8 = 1088 words in 78 cycles: at 1 word/cycle it waits.
    assert starved.stall_cycles == starved.folds * (1088 - 78)
    assert starved.cycles == free.cycles


def test_integers_are_bit_exact_even_when_large():
    rng = np.random.default_rng(7)
    A = rng.integers(-(2**20), 2**20, (9, 13))
    B = rng.integers(-(2**20), 2**20, (13, 5))
    for flow in DATAFLOWS:
        assert np.array_equal(SystolicArray(4, 3, flow).simulate(A, B).output, A @ B)
    small = np.ones((2, 2), dtype=np.int8) * 127
    assert np.array_equal(SystolicArray(2, 2).matmul(small, small).output, np.full((2, 2), 2 * 127 * 127))


# -- SCALE-Sim agreement ---------------------------------------------------------------------------

def _scalesim_cases():
    with SCALESIM_CASES.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("case", _scalesim_cases(),
                         ids=lambda c: f"{c['dataflow']}-{c['rows']}x{c['cols']}-{c['M']}.{c['N']}.{c['K']}")
def test_agrees_with_scalesim(case):
    """Figures from SCALE-Sim 3.0.0 runs (tests/data/scalesim/README.md says how they were made)."""
    flow = case["dataflow"]
    R, C, M, N, K = (int(case[k]) for k in ("rows", "cols", "M", "N", "K"))
    run = SystolicArray(R, C, flow).estimate(M=M, N=N, K=K)
    # SCALE-Sim reports the 0-based index of the last cycle.
    assert run.cycles == int(case["total_cycles_reported"]) + 1
    # Its "Overall Util" divides by that reported number (one less than the cycles used).
    assert 100 * run.macs / (R * C * (run.cycles - 1)) == pytest.approx(float(case["overall_util_pct"]))
    assert 100 * run.mapping_efficiency == pytest.approx(float(case["mapping_efficiency_pct"]))
    # Its "Compute Util" charges ws/is folds C - 1 cycles more than they last (DERIVATION.md).
    per_fold = run.cycles / run.folds
    charged = per_fold if flow == "os" else per_fold + C - 1
    assert 100 * run.compute_utilization * per_fold / charged == \
        pytest.approx(float(case["compute_util_pct"]))
    assert run.sram_reads == {"A": int(case["sram_reads_A"]), "B": int(case["sram_reads_B"])}
    # In os it adds R + C writes per fold that no hardware makes (systolic_compute_os.py:403).
    spurious = run.folds * (R + C) if flow == "os" else 0
    assert run.sram_writes["C"] + spurious == int(case["sram_writes_C"])


def test_scalesim_cases_cover_every_dataflow():
    cases = _scalesim_cases()
    assert {c["dataflow"] for c in cases} == set(DATAFLOWS)
    assert len(cases) >= 150


# -- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, words", [
    (dict(rows=0), ValueError, "rows"),
    (dict(rows=-3), ValueError, "rows"),
    (dict(cols=2.5), ValueError, "cols"),
    (dict(cols="8"), TypeError, "cols"),
    (dict(rows=True), TypeError, "rows"),
    (dict(rows=10**6), ValueError, "rows"),
    (dict(dataflow="rs"), ValueError, "dataflow"),
    (dict(dataflow=None), TypeError, "dataflow"),
    (dict(double_buffer="yes"), TypeError, "double_buffer"),
    (dict(bandwidth_words_per_cycle=0), ValueError, "bandwidth_words_per_cycle"),
    (dict(bandwidth_words_per_cycle=float("nan")), ValueError, "bandwidth_words_per_cycle"),
])
def test_bad_construction_names_the_argument(kwargs, error, words):
    with pytest.raises(error, match=words):
        SystolicArray(**kwargs)


def test_dataflow_is_case_insensitive():
    assert SystolicArray(dataflow="WS").dataflow == "ws"


@pytest.mark.parametrize("A, B, error, words", [
    (np.ones((3, 4)), np.ones((5, 2)), ValueError, "chain"),
    (np.ones(4), np.ones((4, 2)), ValueError, "A must be 2-D"),
    (np.ones((2, 2)), np.ones((2, 2, 2)), ValueError, "B must be 2-D"),
    (np.array([["a", "b"]]), np.ones((2, 1)), TypeError, "A must hold"),
    (np.ones((2, 2), dtype=bool), np.ones((2, 2)), TypeError, "A must hold"),
    (np.ones((2, 2)), np.ones((2, 2), dtype=complex), TypeError, "B must hold"),
    (np.full((2, 2), np.nan), np.ones((2, 2)), ValueError, "NaN"),
    (np.ones((0, 2)), np.ones((2, 2)), ValueError, "at least one"),
    ("not a matrix", np.ones((2, 2)), TypeError, "A must be"),
    (np.full((2, 2), 2**40), np.full((2, 2), 2**40), ValueError, "64 bits"),
])
def test_bad_operands_name_the_argument(A, B, error, words):
    sa = SystolicArray(4, 4)
    for method in (sa.matmul, sa.simulate, sa.steps):
        with pytest.raises(error, match=words):
            method(A, B)


@pytest.mark.parametrize("kwargs, words", [
    (dict(M=0, N=1, K=1), "M"), (dict(M=1, N=-1, K=1), "N"), (dict(M=1, N=1, K=1.5), "K"),
    (dict(M=float("inf"), N=1, K=1), "M"),
])
def test_bad_estimate_sizes(kwargs, words):
    with pytest.raises(ValueError, match=words):
        SystolicArray().estimate(**kwargs)


def test_huge_estimate_is_instant_and_huge_simulation_is_refused_up_front():
    sa = SystolicArray(128, 128)
    assert sa.estimate(M=10**6, N=10**6, K=10**6).macs == 10**18
    with pytest.raises(ValueError, match="more than"):
        sa.matmul(np.ones((1, 1)), np.broadcast_to(np.ones(1), (1, 10**8)))  # no 800 MB allocation
    # A long streamed dimension makes the per-fold state too large to simulate.
    with pytest.raises(ValueError, match="per-cycle state"):
        SystolicArray(4096, 4096, "ws").simulate(np.ones((8000, 1)), np.ones((1, 1)))


# -- dataflows as data; results immutable --------------------------------------------------------

def test_each_dataflow_record_matches_the_docstring_table():
    from accelkit.systolic import DATAFLOW_SPECS, MAPPING

    ws, os_, is_ = (DATAFLOW_SPECS[k] for k in ("ws", "os", "is"))
    assert (ws.stationary, os_.stationary, is_.stationary) == ("B", "C", "A")
    assert MAPPING == {"os": ("M", "N", "K"), "ws": ("K", "N", "M"), "is": ("K", "M", "N")}
    assert (ws.load_phase, os_.load_phase, is_.load_phase) == (True, False, True)
    # Words per fold: each operand spans two dimensions; the stationary one has no streamed axis.
    assert ws.fold_words(3, 5, 7) == {"A": 7 * 3, "B": 3 * 5, "C": 7 * 5}
    assert os_.fold_words(3, 5, 7) == {"A": 3 * 7, "B": 7 * 5, "C": 3 * 5}
    assert is_.fold_words(3, 5, 7) == {"A": 5 * 3, "B": 3 * 7, "C": 5 * 7}


@pytest.mark.parametrize("flow", DATAFLOWS)
def test_runs_are_immutable_and_hashable(flow):
    sa = SystolicArray(3, 3, flow)
    A, B = np.arange(20).reshape(4, 5), np.arange(10).reshape(5, 2)
    for run in (sa.simulate(A, B), sa.matmul(A, B), sa.estimate(M=4, N=2, K=5)):
        with pytest.raises(TypeError):
            run.sram_reads["A"] = 0
        with pytest.raises(TypeError):
            run.sram_writes["C"] = 0
        assert hash(run) == hash(sa.estimate(M=4, N=2, K=5))
        if run.output is not None:
            with pytest.raises(ValueError):
                run.output[0, 0] = 1


# -- pipelined folds (overlap_folds) and the output drain (os_drain) ------------------------------

def _pipelined_cycles(flow, R, C, M, N, K, double_buffer, os_drain):
    """Cycles of overlapped folds, written out independently of the engine.

    The first fold pays its load (ws/is: R cycles), every fold streams T behind the previous one
    unless a load or drain of R cycles per column cannot hide in T, and the last fold pays the
    fill-out (R + C - 2) and, for os with the drain counted, R more cycles to shift the outputs out.
    """
    if flow == "os":
        folds, T = math.ceil(M / R) * math.ceil(N / C), K
        before, after = 0, (R if os_drain else 0)
    elif flow == "ws":
        folds, T, before, after = math.ceil(K / R) * math.ceil(N / C), M, R, 0
    else:
        folds, T, before, after = math.ceil(K / R) * math.ceil(M / C), N, R, 0
    if not (before or after):
        gap = T
    elif double_buffer:
        gap = max(T, 2 * R - 1)        # the next tile's R-cycle shift waits for the last latch
    elif before:
        gap = T + 2 * R - 1            # one set of weight registers: reload after the stream
    else:
        gap = max(T + R - 1, 2 * R - 1)  # accumulators drain through the cells below
    return before + (folds - 1) * gap + T + R + C - 2 + after


@settings(max_examples=80, deadline=None)
@given(flow=dataflows, R=array_sides, C=array_sides, operands=gemm_operands(max_dim=16),
       options=systolic_options())
def test_every_option_agrees_across_the_three_paths(flow, R, C, operands, options):
    A, B = operands
    M, K = A.shape
    N = B.shape[1]
    sa = SystolicArray(R, C, flow, **options)
    simulated = sa.simulate(A, B)
    fast = sa.matmul(A, B)
    estimated = sa.estimate(M=M, N=N, K=K)
    if A.dtype.kind == "i":
        assert np.array_equal(simulated.output, A @ B)
    else:
        np.testing.assert_allclose(simulated.output, A @ B, rtol=1e-9, atol=1e-9)
    assert simulated.counts() == fast.counts() == estimated.counts()
    assert simulated.macs == M * N * K
    if options["overlap_folds"]:
        assert simulated.cycles == _pipelined_cycles(flow, R, C, M, N, K, options["double_buffer"],
                                                     options["os_drain"])
    assert simulated.total_cycles == simulated.cycles + simulated.stall_cycles
    assert 0 < simulated.utilization <= 1


@settings(max_examples=40, deadline=None)
@given(flow=dataflows, R=st.integers(1, 6), C=st.integers(1, 6),
       operands=gemm_operands(max_dim=14), double_buffer=st.booleans(), os_drain=st.booleans())
def test_overlapped_folds_cannot_start_one_cycle_sooner(flow, R, C, operands, double_buffer,
                                                        os_drain):
    """The walk checks every hand-over; a schedule one cycle tighter breaks one of them."""
    from accelkit.systolic import simulator, timing

    A, B = operands
    sa = SystolicArray(R, C, flow, double_buffer=double_buffer, overlap_folds=True,
                       os_drain=os_drain)
    run = sa.estimate(M=A.shape[0], N=B.shape[1], K=A.shape[1])
    if run.folds < 2:
        return
    T = sa.spec.geometry(A.shape[0], B.shape[1], A.shape[1])[2]
    tightest = timing.overlap_gap(sa.spec, R, T, double_buffer, os_drain)
    tighter = timing.timeline(sa.spec, R, C, T, run.folds, double_buffer, True, os_drain,
                              gap=tightest - 1)
    with pytest.raises(simulator.ScheduleHazard):
        simulator.Simulation(sa, A, B, line=tighter).run_overlapped()


def test_pipelined_mxu_pays_fill_and_drain_once():
    """A 1024×128 by 128×1024 GEMM (M = 1024, K = 128, N = 1024) on a 128×128 ws array.

    The scaling book (jax-ml/scaling-book, tpus.md, Appendix B "How does a systolic array work?")
    describes an MXU that pays one pipeline bubble while the first weights (RHS) and activations
    (LHS) load, and no further bubble as new inputs and weights follow. Derivation: K = 128 fills the rows once, N = 1024 makes F = 8 column
    folds, and M = 1024 rows of A stream through each (T = M).

    * Per fold (SCALE-Sim's convention): each fold loads its tile (R), streams T skewed across
      R + C - 1 diagonals: 2R + C + T - 2 = 1406 cycles, so 8 · 1406 = 11,248 cycles and
      utilization MNK / (RC · 11,248) = 8 · 1024 · 16,384 / (16,384 · 11,248) = 72.8%.
    * Pipelined: fold f + 1's rows of A enter right behind fold f's (T = 1024 ≥ 2R - 1 = 255, so
      its tile, preloaded in the shadow registers, is ready): R + F·T + R + C - 2 = 8,574 cycles,
      utilization 8 · 1024 / 8,574 = 95.5%, "about 96%" (the upper bound F·T / (F·T + 2R + C - 2)
      → 1 as the stream grows).
    """
    R = C = 128
    M, K, N = 1024, 128, 1024
    F, T = 8, M
    per_fold = SystolicArray(R, C, "ws").estimate(M=M, N=N, K=K)
    assert per_fold.cycles == F * (2 * R + C + T - 2) == 11_248
    assert per_fold.utilization == pytest.approx(M * N * K / (R * C * 11_248))
    assert round(100 * per_fold.utilization, 1) == 72.8
    piped = SystolicArray(R, C, "ws", double_buffer=True, overlap_folds=True).estimate(M=M, N=N, K=K)
    assert piped.cycles == R + F * T + R + C - 2 == 8_574
    assert piped.utilization == pytest.approx(F * T / 8_574)
    assert round(100 * piped.utilization) == 96
    assert piped.sram_reads == per_fold.sram_reads and piped.sram_writes == per_fold.sram_writes
    # The same shape scaled down 8× is simulated cell by cell and agrees.
    rng = np.random.default_rng(3)
    A, B = rng.integers(-9, 10, (128, 16)), rng.integers(-9, 10, (16, 128))
    small = SystolicArray(16, 16, "ws", double_buffer=True, overlap_folds=True)
    run = small.simulate(A, B)
    assert np.array_equal(run.output, A @ B)
    assert run.cycles == 16 + 8 * 128 + 16 + 16 - 2
    assert run.counts() == small.estimate(M=128, N=128, K=16).counts()


def test_without_a_double_buffer_overlap_saves_only_the_drain_skew():
    plain = SystolicArray(8, 8, "ws").estimate(M=64, N=64, K=64)
    overlapped = SystolicArray(8, 8, "ws", overlap_folds=True).estimate(M=64, N=64, K=64)
    # Each later fold waits for the weight registers: T + 2R - 1 instead of 2R + C + T - 2.
    assert plain.cycles - overlapped.cycles == (plain.folds - 1) * (8 - 1)


def test_os_drain_is_counted_only_when_asked():
    """SCALE-Sim's os charges T + R + C - 2 a fold and leaves the outputs in the cells for free;
    os_drain=True shifts them out through the bottom edge, R more cycles a fold (like ws's load),
    which a double buffer hides for every fold but the last."""
    R, C, M, N, K = 4, 4, 8, 8, 10
    free = SystolicArray(R, C, "os").estimate(M=M, N=N, K=K)
    drained = SystolicArray(R, C, "os", os_drain=True).estimate(M=M, N=N, K=K)
    hidden = SystolicArray(R, C, "os", os_drain=True, double_buffer=True).estimate(M=M, N=N, K=K)
    assert free.cycles == 4 * (K + R + C - 2)
    assert drained.cycles == 4 * (K + 2 * R + C - 2)
    assert hidden.cycles == drained.cycles - 3 * R
    assert free.sram_writes == drained.sram_writes == {"C": M * N}
    ws = SystolicArray(R, C, "ws").estimate(M=M, N=N, K=K)
    assert ws.os_drain is False and ws.cycles == SystolicArray(R, C, "ws", os_drain=True).estimate(
        M=M, N=N, K=K).cycles  # the drain option concerns only output-stationary


@pytest.mark.parametrize("double_buffer", [False, True])
def test_steps_show_the_os_drain(double_buffer):
    rng = np.random.default_rng(5)
    A, B = rng.integers(1, 9, (5, 3)), rng.integers(1, 9, (3, 6))
    sa = SystolicArray(3, 4, "os", os_drain=True, double_buffer=double_buffer)
    steps = list(sa.steps(A, B))
    run = sa.matmul(A, B)
    assert [s.cycle for s in steps] == list(range(run.cycles))
    assert sum(s.active_macs for s in steps) == run.macs
    assert "drain" in {s.phase for s in steps}
    assert np.array_equal(steps[-1].output, A @ B)


def test_overlap_options_are_checked():
    with pytest.raises(TypeError, match="overlap_folds"):
        SystolicArray(overlap_folds="yes")
    with pytest.raises(TypeError, match="os_drain"):
        SystolicArray(os_drain=1)
    with pytest.raises(ValueError, match="overlap_folds"):
        SystolicArray(2, 2, overlap_folds=True).steps(np.ones((2, 2)), np.ones((2, 2)))


def test_utilizations_are_estimates_utilization_exactly():
    """The vectorised map gives the very numbers of estimate(), point by point (bit for bit),
    for every dataflow, double buffering, os drain and overlapped folds."""
    sizes = np.array([1, 2, 3, 5, 8, 9, 16, 17, 127, 128, 129, 257])
    for flow in ("ws", "os", "is"):
        for double_buffer, os_drain, overlap in itertools.product((False, True), repeat=3):
            for rows, cols in ((4, 4), (3, 5), (128, 128)):
                array = SystolicArray(rows, cols, flow, double_buffer=double_buffer,
                                      os_drain=os_drain, overlap_folds=overlap)
                for K in (1, 7, 129):
                    got = array.utilizations(M=sizes[:, None], N=sizes[None, :], K=K)
                    want = [[array.estimate(M=int(m), N=int(n), K=K).utilization
                             for n in sizes] for m in sizes]
                    assert np.array_equal(got, np.array(want)), (flow, rows, cols, K)


def test_utilizations_refuse_bad_sizes():
    array = SystolicArray(4, 4, "ws")
    for bad in ([0, 4], [1.5], []):
        with pytest.raises(ValueError, match="M must hold whole numbers"):
            array.utilizations(M=bad, N=4, K=4)
    with pytest.raises(ValueError, match="65,536"):
        array.utilizations(M=np.arange(1, 300)[:, None], N=np.arange(1, 300), K=4)
    # past 2^16 the sizes go through estimate() itself: still its numbers
    big = [70_000, 1 << 20]
    assert list(array.utilizations(M=big, N=3, K=5)) == [
        array.estimate(M=m, N=3, K=5).utilization for m in big]
