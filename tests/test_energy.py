"""Energy table and run costing, against Horowitz's 45 nm figures and closed-form arithmetic.

Published figures: M. Horowitz, "Computing's energy problem (and what we can do about it)",
ISSCC 2014, read in the transcription gist.github.com/V0XNIHILI/2b6fa61edd4c06d9ffce5551065124c1:
int add 8b 0.03 / 32b 0.1 pJ; int mult 8b 0.2 / 32b 3.1 pJ; FP add 16b 0.4 / 32b 0.9 pJ;
FP mult 16b 1.1 / 32b 3.7 pJ; 64-bit cache read 8 KB 10 / 32 KB 20 / 1 MB 100 pJ; DRAM 1.3-2.6 nJ.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

import accelkit as ak
from accelkit import energy

HOROWITZ = {
    "int8_add": 0.03, "int32_add": 0.1, "int8_mult": 0.2, "int32_mult": 3.1,
    "fp16_add": 0.4, "fp16_mult": 1.1, "fp32_add": 0.9, "fp32_mult": 3.7,
    "sram_8kb": 10.0, "sram_32kb": 20.0, "sram_1mb": 100.0,
}


def test_table_matches_horowitz() -> None:
    t = energy.table()
    for name, published in HOROWITZ.items():
        assert t[name] == published, name
    assert 1300 <= t["dram"] <= 2600
    assert energy.access_picojoules("dram", estimate="low") == 1300
    assert energy.access_picojoules("dram", estimate="high") == 2600
    assert energy.access_picojoules("dram") == 1950


def test_every_figure_has_a_source_and_register_has_none() -> None:
    src = energy.sources()
    for name in energy.table():
        assert "Horowitz" in src[name], name
    assert "register" not in energy.table()
    assert "not in Horowitz" in src["register"]
    with pytest.raises(ValueError, match="no cited energy figure for a register access"):
        energy.access_picojoules("register")


def test_dram_access_costs_over_100x_a_16bit_fp_multiply() -> None:
    t = energy.table()
    assert energy.access_picojoules("dram", bytes=8, estimate="low") > 100 * t["fp16_mult"]
    # and moving data on chip already costs more than computing on it
    assert energy.access_picojoules("sram_8kb", bytes=8) > t["fp16_mult"] + t["fp16_add"]


def test_mac_energy() -> None:
    assert energy.mac_picojoules("bf16") == pytest.approx(1.1 + 0.9)
    assert energy.mac_picojoules("fp16", wide_accumulator=False) == pytest.approx(1.1 + 0.4)
    assert energy.mac_picojoules("fp32") == pytest.approx(3.7 + 0.9)
    assert energy.mac_picojoules("int8") == pytest.approx(0.2 + 0.1)
    assert energy.mac_picojoules("int8", wide_accumulator=False) == pytest.approx(0.2 + 0.03)
    with pytest.raises(ValueError, match="no fp8 multiplier figure"):
        energy.mac_picojoules("fp8")
    with pytest.raises(ValueError, match="dtype must be one of"):
        energy.mac_picojoules("fp64")


def test_access_scales_linearly_with_bytes() -> None:
    assert energy.access_picojoules("sram_32kb", bytes=2) == pytest.approx(20.0 * 2 / 8)
    assert energy.access_picojoules("sram_1mb", bytes=64) == pytest.approx(800.0)
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="bytes must be"):
            energy.access_picojoules("dram", bytes=bad)
    with pytest.raises(ValueError, match="level must be one of"):
        energy.access_picojoules("l7_cache")


def test_of_run_closed_form() -> None:
    run = SimpleNamespace(macs=1000, sram_reads={"A": 300, "B": 200}, sram_writes={"C": 50},
                          dram_reads={"A": 10}, dram_writes={"C": 5})
    e = energy.of_run(run, dtype="bf16", sram_level="sram_32kb")
    assert e.compute_joules == pytest.approx(1000 * 2.0e-12)
    assert e.sram_joules == pytest.approx(550 * 2 / 8 * 20.0e-12)
    assert e.dram_joules == pytest.approx(15 * 2 / 8 * 1950e-12)
    assert e.total_joules == pytest.approx(e.compute_joules + e.sram_joules + e.dram_joules)
    assert e.sram_bytes == 1100 and e.dram_bytes == 30
    assert e.picojoules_per_useful_mac == pytest.approx(e.total_joules * 1e12 / 1000)


def test_of_run_without_dram_fields() -> None:
    run = SimpleNamespace(macs=8, sram_reads={"A": 4, "B": 4}, sram_writes={"C": 2})
    e = energy.of_run(run, dtype="fp32", sram_level="sram_8kb")
    assert e.dram_joules == 0.0
    assert e.total_joules == pytest.approx(8 * 4.6e-12 + 10 * 4 / 8 * 10e-12)


def test_systolic_reuse_saves_energy() -> None:
    # C[M,N] = A[M,K] @ B[K,N]. With no reuse each MAC reads both operands from SRAM; a systolic
    # array reads each operand element once per fold and passes it cell to cell.
    M = N = K = 128
    macs = M * N * K
    no_reuse = SimpleNamespace(macs=macs, sram_reads={"A": macs, "B": macs}, sram_writes={"C": M * N})
    systolic = SimpleNamespace(macs=macs, sram_reads={"A": M * K, "B": K * N}, sram_writes={"C": M * N})
    naive, reused = energy.of_run(no_reuse), energy.of_run(systolic)
    assert naive.compute_joules == reused.compute_joules
    assert naive.sram_joules / reused.sram_joules == pytest.approx((2 * macs + M * N) / (2 * M * K + M * N))
    assert naive.data_movement_fraction > 0.5 > reused.data_movement_fraction
    assert reused.total_joules < naive.total_joules / 4


@given(macs=st.integers(0, 10**12), reads=st.integers(0, 10**12), writes=st.integers(0, 10**12))
def test_of_run_is_additive(macs: int, reads: int, writes: int) -> None:
    e = energy.of_run(SimpleNamespace(macs=macs, sram_reads={"A": reads}, sram_writes={"C": writes}))
    assert e.total_joules == pytest.approx(e.compute_joules + e.sram_joules + e.dram_joules)
    assert e.compute_joules >= 0 and e.sram_joules >= 0 and e.dram_joules == 0
    assert 0.0 <= e.data_movement_fraction <= 1.0


def test_of_run_rejects_bad_runs() -> None:
    with pytest.raises(TypeError, match="has no 'sram_reads'"):
        energy.of_run(SimpleNamespace(macs=1))
    with pytest.raises(TypeError, match="mapping of operand"):
        energy.of_run(SimpleNamespace(macs=1, sram_reads=[1], sram_writes={}))
    with pytest.raises(ValueError, match="run.sram_reads"):
        energy.of_run(SimpleNamespace(macs=1, sram_reads={"A": -1}, sram_writes={}))
    with pytest.raises(ValueError, match="run.macs"):
        energy.of_run(SimpleNamespace(macs=-3, sram_reads={}, sram_writes={}))
    with pytest.raises(ValueError, match="sram_level must be one of"):
        energy.of_run(SimpleNamespace(macs=1, sram_reads={}, sram_writes={}), sram_level="dram")


def test_breakdown_is_frozen_and_readable() -> None:
    e = ak.energy.of_run(SimpleNamespace(macs=10, sram_reads={"A": 10}, sram_writes={"C": 1}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.total_joules = 0.0  # type: ignore[misc]
    assert "moving data" in repr(e) and "<table>" in e._repr_html_()


# -- the DRAM floor a systolic run is given ---------------------------------------------------------

def test_with_dram_floor_reads_each_input_once_and_writes_the_output_once():
    run = ak.SystolicArray(16, 16, "ws").estimate(M=48, N=40, K=24)
    floored = ak.energy.with_dram_floor(run)
    assert floored.dram_reads == {"A": 48 * 24, "B": 24 * 40}
    assert floored.dram_writes == {"C": 48 * 40}
    assert floored.macs == 48 * 40 * 24
    assert floored.sram_reads == run.sram_reads and floored.sram_writes == run.sram_writes
    with pytest.raises(dataclasses.FrozenInstanceError):
        floored.macs = 0  # type: ignore[misc]
    # costed: the DRAM share is exactly the floor's bytes at the table's mid DRAM figure
    plain, costed = ak.energy.of_run(run), ak.energy.of_run(floored)
    floor_bytes = 2 * (48 * 24 + 24 * 40 + 48 * 40)  # bf16
    assert costed.dram_bytes == floor_bytes and plain.dram_bytes == 0
    per_byte = ak.energy.access_picojoules("dram", bytes=8) / 8
    assert costed.dram_joules == pytest.approx(floor_bytes * per_byte * 1e-12)
    assert costed.compute_joules == plain.compute_joules
    assert costed.sram_joules == plain.sram_joules


def test_with_dram_floor_refuses_what_is_not_a_gemm_run():
    with pytest.raises(TypeError, match="has no 'M'"):
        ak.energy.with_dram_floor(SimpleNamespace(macs=1, sram_reads={}, sram_writes={}))
    with pytest.raises(ValueError, match="run.K"):
        ak.energy.with_dram_floor(SimpleNamespace(M=1, N=1, K=0, macs=1, sram_reads={},
                                                  sram_writes={}))


def test_45nm_is_the_default_node_and_7nm_figures_carry_their_source() -> None:
    assert energy.NODES == ("45nm", "7nm")
    assert energy.table("45nm") == energy.table()
    assert energy.missing() == ("register", "hbm2", "gddr6")
    # Jouppi et al., ISCA 2021, Table 2 (7 nm column), as transcribed publicly: spot values.
    seven = energy.table("7nm")
    assert (seven["int8_add"], seven["int32_add"], seven["int8_mult"]) == (0.007, 0.03, 0.07)
    assert (seven["bf16_mult"], seven["fp16_mult"], seven["fp32_add"], seven["fp32_mult"]) == (0.21, 0.34, 0.38, 1.31)
    assert (seven["sram_8kb"], seven["sram_32kb"], seven["sram_1mb"], seven["dram"]) == (7.5, 8.5, 14.0, 1300.0)
    # Every 7 nm figure names the paper and how it was read; the ones no transcription gave stay out.
    src = energy.sources("7nm")
    assert all("Jouppi" in note and "ISCA 2021" in note for note in src.values())
    assert set(energy.missing("7nm")) == {"int32_mult", "register"}
    assert "int32_mult" not in seven
    with pytest.raises(energy.MissingEnergyFigureError, match="no cited energy figure for a register access") as err:
        energy.access_picojoules("register", node="7nm")
    assert (err.value.node, err.value.figure) == ("7nm", "register")
    assert isinstance(err.value, ValueError)
    with pytest.raises(energy.MissingEnergyFigureError, match="hbm2"):
        energy.access_picojoules("hbm2")              # not in Horowitz's 45 nm table
    with pytest.raises(ValueError, match="node must be one of"):
        energy.table("5nm")


def test_7nm_mac_uses_the_tables_own_bf16_rows_and_dram_kinds_have_ranges() -> None:
    # bf16 at 7 nm: its own multiplier (0.21) plus a 32-bit float add (0.38); at 45 nm the fp16 one.
    assert energy.mac_picojoules("bf16", node="7nm") == pytest.approx(0.21 + 0.38)
    assert energy.mac_picojoules("bf16", node="7nm", wide_accumulator=False) == pytest.approx(0.21 + 0.11)
    assert energy.mac_picojoules("int8", node="7nm") == pytest.approx(0.07 + 0.03)
    assert energy.mac_picojoules("fp16", node="7nm") == pytest.approx(0.34 + 0.38)
    hbm = [energy.access_picojoules("hbm2", node="7nm", estimate=e) for e in ("low", "mid", "high")]
    assert hbm == [250.0, 350.0, 450.0]
    gddr = [energy.access_picojoules("gddr6", node="7nm", estimate=e) for e in ("low", "mid", "high")]
    assert gddr == [350.0, 415.0, 480.0]
    # a single figure is its own low, mid and high
    assert energy.access_picojoules("dram", node="7nm", estimate="low") == 1300.0 == \
        energy.access_picojoules("dram", node="7nm", estimate="high")
    # the DRAM kinds are not SRAM levels
    with pytest.raises(ValueError, match="sram_level must be one of"):
        energy.of_run(SimpleNamespace(macs=1, sram_reads={}, sram_writes={}), sram_level="hbm2")


def test_break_even_closed_form_and_how_far_it_moves() -> None:
    # 2 FLOPs per MAC x (1950 pJ / 8 bytes) / 2.0 pJ per bf16 MAC = 243.75 FLOPs per byte
    assert energy.break_even_flops_per_byte() == pytest.approx(2 * 1950 / 8 / 2.0)
    assert energy.break_even_flops_per_byte("int8", estimate="high") == pytest.approx(2 * 2600 / 8 / 0.3)
    assert energy.break_even_flops_per_byte("fp32", estimate="low") == pytest.approx(2 * 1300 / 8 / 4.6)
    # precision and the DRAM figure alone move it by more than 20x
    spread = (energy.break_even_flops_per_byte("int8", estimate="high")
              / energy.break_even_flops_per_byte("fp32", estimate="low"))
    assert spread > 20
    # 7 nm: 2 x 1300 / 8 / 0.59 with DDR; HBM2's 250-450 pJ range brings it down
    assert energy.break_even_flops_per_byte(node="7nm") == pytest.approx(2 * 1300 / 8 / 0.59)
    assert energy.break_even_flops_per_byte(node="7nm", dram="hbm2", estimate="low") == \
        pytest.approx(2 * 250 / 8 / 0.59)
    with pytest.raises(energy.MissingEnergyFigureError):
        energy.break_even_flops_per_byte(dram="hbm2")      # 45 nm has no HBM figure
    with pytest.raises(ValueError, match="dram must be one of"):
        energy.break_even_flops_per_byte(dram="sram_1mb")


def test_of_run_takes_a_node() -> None:
    run = SimpleNamespace(macs=10, sram_reads={"A": 4}, sram_writes={})
    assert energy.of_run(run, node="45nm") == energy.of_run(run)
    seven = energy.of_run(run, node="7nm")
    assert seven.compute_joules == pytest.approx(10 * 0.59e-12)
    assert seven.sram_joules == pytest.approx(4 * 2 * 8.5 / 8 * 1e-12)   # 4 bf16 elements from 32 KB


def test_tdp_energy_is_not_called_an_upper_bound() -> None:
    doc = energy.tdp_joules.__doc__ or ""
    assert "not* an\n    upper bound" in doc or "not* an upper bound" in doc
    for word in ("host", "network", "cooling"):
        assert word in doc
