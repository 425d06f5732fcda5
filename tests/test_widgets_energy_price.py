"""Lesson 06's widgets, driven without a kernel: move a control, check what is shown is the
library's own answer."""

import re

import pytest

import accelkit as ak
from accelkit import SIMDMachine, SystolicArray
from accelkit.widgets import (energy_costs, energy_quiz, energy_worked_problem,
                              flops_per_dollar_explorer, perf_per_watt, reuse_energy)


def test_energy_costs_follows_precision_and_dram_estimate():
    w = energy_costs()
    assert w.view.result.mac_picojoules == ak.energy.mac_picojoules("bf16") and w.image.value
    w.controls["dtype"].value = "int8"
    assert w.view.result.mac_picojoules == ak.energy.mac_picojoules("int8")
    w.controls["dram"].value = "high"
    high = ak.energy.access_picojoules("dram", estimate="high")
    assert w.view.result.ratios["dram"] == pytest.approx(high / ak.energy.mac_picojoules("int8"))
    assert f"{high / ak.energy.mac_picojoules('int8'):,.0f}×" in w.html.value


def test_reuse_energy_costs_the_engine_runs():
    w = reuse_energy()
    w.controls["side"].value = 128
    w.controls["dram_floor"].value = False
    run = SystolicArray(128, 128, "ws").estimate(M=128, N=128, K=128)
    assert w.view.result.systolic == ak.energy.of_run(run)
    assert w.view.result.systolic.dram_joules == 0          # the engine counts no DRAM
    w.controls["dram_floor"].value = True
    assert w.view.result.systolic.dram_bytes == 3 * 128 * 128 * 2
    naive = ak.energy.of_run(SIMDMachine(shared_memory=False).estimate(M=128, N=128, K=128))
    assert w.view.result.simd["SIMD naive (no reuse)"] == naive
    assert f"{naive.picojoules_per_useful_mac:,.3g}" in w.html.value
    # A bigger array re-reads operands fewer times: less SRAM energy for the same GEMM.
    big = w.view.result.systolic.sram_joules
    w.controls["side"].value = 8
    assert w.view.result.systolic.sram_joules > big


def test_perf_per_watt_names_chips_without_power():
    w = perf_per_watt()
    h100 = ak.chips.get("H100")
    assert w.view.result.flops_per_watt[h100.name] == h100.peak_flops("bf16") / h100.watts
    unpowered = [c.name for c in ak.chips.all() if c.watts is None]
    assert unpowered and all(name not in w.view.result.flops_per_watt for name in unpowered)
    assert "TPU v5p" in w.html.value
    # beside the peak, the matmul rate kernels measurably reach, and where it is an assumption
    assert w.view.result.achievable_flops_per_watt[h100.name] == \
        h100.achievable_flops("bf16") / h100.watts < w.view.result.flops_per_watt[h100.name]
    v4 = ak.chips.get("v4")
    assert v4.name in w.view.result.assumed and h100.name not in w.view.result.assumed
    w.controls["dtype"].value = "fp8"
    assert ak.chips.get("V100").name not in w.view.result.flops_per_watt


def test_flops_per_dollar_flips_with_the_price_source():
    w = flops_per_dollar_explorer()
    h100, v5p = ak.chips.get("H100"), ak.chips.get("v5p")
    shown = w.view.result.flops_per_dollar
    assert shown[h100.name] == pytest.approx(ak.price.flops_per_dollar(h100, mfu=0.4))
    assert shown[v5p.name] > shown[h100.name] and "TPU v5p</b>" in w.html.value
    w.controls["prices"].value = "cheapest sourced price"
    shown = w.view.result.flops_per_dollar
    cheapest = min(p.usd_per_hour for p in ak.price.price_points(h100))
    assert shown[h100.name] == pytest.approx(ak.price.flops_per_dollar(h100, mfu=0.4,
                                                                       usd_per_hour=cheapest))
    assert shown[h100.name] > shown[v5p.name] and "H100</b>" in w.html.value
    w.controls["mfu"].value = 0.8
    assert w.view.result.flops_per_dollar[h100.name] == pytest.approx(2 * shown[h100.name])


def test_commitment_prices_are_not_list_prices():
    w = flops_per_dollar_explorer()
    assert ak.chips.get("TPU7x").name not in w.view.result.flops_per_dollar


def test_quiz_and_worked_problem():
    q = energy_quiz()
    q.select(q.position(0))
    assert q.check()[0] is False
    q.select(q.correct)
    assert q.check()[0] is True
    p = energy_worked_problem()
    assert not p.revealed and p.answer_html.value == ""
    text = p.reveal()
    assert p.revealed and f"{4096 ** 3 * ak.energy.mac_picojoules('bf16') * 1e-12:.3g} J" in text


def test_flops_per_dollar_shows_each_prices_basis():
    w = flops_per_dollar_explorer()
    bases = w.view.result.bases
    assert set(bases["GPU only, host VM extra"]) >= {"L4", "T4"}
    assert any(note.startswith("GPU only, host VM extra; the 16 GB SKU") for note in bases)
    assert "price basis: GPU only, host VM extra" in w.html.value
    assert "price basis: TPU slice as billed" in w.html.value
    # spot and commitment points are listed with their basis, not drawn as bars
    assert "not list prices (not drawn)" in w.html.value and "spot" in w.html.value
    assert w.view.result.prices[ak.chips.get("v6e").name].usd_per_hour == 2.7


def _rows(html: str) -> dict[str, str]:
    """The table's rows, label -> value, as the widget writes them (widgets._base.table_html)."""
    return dict(re.findall(r"<tr><td[^>]*>(.*?)</td><td[^>]*><b>(.*?)</b></td></tr>", html))


def test_flops_per_dollar_rows_carry_their_unit_and_name_lesson_06s_top_chip():
    """Issue 24: "most FLOPs per dollar: MI300X: 1.02 EFLOPs" showed a quantity per dollar
    without "/$". Every per-dollar figure now carries it, and the top chip at the defaults is
    the one lesson 06's cell computes (catalog prices, 40% MFU, bf16), at its value."""
    from accelkit.widgets._base import chip_label, si

    listed = {c.name: ak.price.flops_per_dollar(c, "bf16", 0.4) for c in ak.chips.all()
              if c.usd_per_hour is not None and "bf16" in c.dtypes}  # lesson 06's cell
    top = max(listed, key=listed.get)
    w = flops_per_dollar_explorer()
    rows = _rows(w.html.value)
    assert rows["most FLOPs per dollar"] == f"{chip_label(top)}: {si(listed[top], 'FLOPs')}/$"
    assert top == ak.chips.get("MI300X").name and w.view.result.flops_per_dollar[top] == listed[top]
    per_dollar = [v for k, v in rows.items() if k.startswith(("most FLOPs", "H100 at", "TPU v5p at"))]
    assert len(per_dollar) == 3 and all(v.endswith("FLOPs/$") for v in per_dollar)
    w.controls["prices"].value = "dearest sourced price"
    assert _rows(w.html.value)["most FLOPs per dollar"].endswith("FLOPs/$")
