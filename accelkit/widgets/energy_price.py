"""Lesson 06's widgets: what an operation costs against what moving its data costs, perf per watt,
and FLOPs per dollar on real (and conflicting) price lists.

Every number comes from :mod:`accelkit.energy`, :mod:`accelkit.price`, :mod:`accelkit.chips` and
the two engines; this module only gathers inputs and draws.
"""

from __future__ import annotations

from types import SimpleNamespace

import ipywidgets as W
from matplotlib.ticker import FixedFormatter, FixedLocator

from accelkit import chips, energy, price
from accelkit.dtypes import DType
from accelkit.widgets.quiz import MultipleChoice, multiple_choice
from accelkit.simd import SIMDMachine
from accelkit.systolic import DATAFLOW_NAMES, SystolicArray
from accelkit.widgets._axes import Ticks, fixed_ticks, key_row, log_ticks
from accelkit.widgets._base import (STYLE, Explorer, View, chip_label, new_figure, si, table_html,
                                    vendor_colour, vendor_key)
from accelkit.widgets._worked import WorkedProblem

__all__ = ["energy_costs", "reuse_energy", "perf_per_watt", "flops_per_dollar_explorer",
           "energy_quiz", "energy_worked_problem"]

_MAC_DTYPES: tuple[DType, ...] = ("int8", "bf16", "fp32")
_LEVEL_LABELS = {"sram_8kb": "SRAM 8 KB read", "sram_32kb": "SRAM 32 KB read",
                 "sram_1mb": "SRAM 1 MB read", "dram": "DRAM read"}
_PRICE_DTYPES: tuple[DType, ...] = ("bf16", "fp8")
_PRICE_CHOICES = ("catalog list price", "cheapest sourced price", "dearest sourced price")
# Where energy goes (not chip colours: blue and green mean TPU and GPU in every widget).
_ARITHMETIC, _ARITHMETIC_PALE, _SRAM, _DRAM = "#ef6c00", "#ffcc80", "#6a1b9a", "#c62828"


# -- drawing helpers (presentation only) ---------------------------------------------------------

def _frame(width: float = 6.6, height: float = 2.8, left: float = 0.3):
    """A figure with fixed margins: no layout engine and no automatic log ticks, both of which
    cost more than the whole rest of a render. Each widget draws its frame once and then only
    moves its artists, so a render stays well under 50 ms."""
    figure = new_figure(width, height, margins={"left": left, "bottom": 0.2})
    return figure, figure.add_subplot()


def _log_axis(ax, low: float, high: float, ticks: list[float], labels: list[str]) -> None:
    log_ticks(ax, "x", ticks, labels)
    ax.set_xlim(low, high)


# -- 1. energy per operation versus per access -------------------------------------------------

def energy_costs() -> Explorer:
    """Bar chart (log scale) of the 45 nm energy table: a MAC at each precision against one 64-bit
    read at each memory level. Pick the MAC precision and the DRAM estimate (1.3-2.6 nJ range)."""
    controls = {
        "dtype": W.ToggleButtons(options=_MAC_DTYPES, value="bf16", description="MAC precision",
                                 style=STYLE),
        "dram": W.ToggleButtons(options=("low", "mid", "high"), value="mid",
                                description="DRAM estimate", style=STYLE),
    }
    macs = {d: energy.mac_picojoules(d) for d in _MAC_DTYPES}
    sram = {lv: energy.access_picojoules(lv) for lv in ("sram_8kb", "sram_32kb", "sram_1mb")}
    dram = {e: energy.access_picojoules("dram", estimate=e) for e in ("low", "mid", "high")}

    figure, ax = _frame(6.2, 2.6, 0.26)
    labels = [f"{d} MAC" for d in _MAC_DTYPES] + [_LEVEL_LABELS[lv] for lv in sram] + ["DRAM read"]
    values = list(macs.values()) + list(sram.values()) + [dram["mid"]]
    bars = ax.barh(labels, values, color=[_ARITHMETIC_PALE] * 3 + [_SRAM] * 3 + [_DRAM])
    # Only the two bars the controls change carry a label (text is the costliest thing to draw);
    # the table under the chart gives every value.
    mac_note = ax.text(1, 1, "", va="center", fontsize=8)  # (rows are 0, 1, ... top down)
    dram_note = ax.text(1, len(labels) - 1, "", va="center", fontsize=8)
    ax.invert_yaxis()
    _log_axis(ax, 0.1, 3e4, [0.1, 1, 10, 100, 1000, 10000],
              ["0.1", "1", "10", "100", "1,000", "10,000"])
    ax.set_xlabel("picojoules (log scale): one operation, or one 64-bit read")
    ax.set_title("Moving data costs more than computing (45 nm)")
    fixed_ticks(ax)  # one marker line and texts per axis (widgets/_axes.py)

    def render(values: dict) -> View:
        dtype, estimate = values["dtype"], values["dram"]
        for index, d in enumerate(_MAC_DTYPES):
            bars[index].set_color(_ARITHMETIC if d == dtype else _ARITHMETIC_PALE)
        bars[-1].set_width(dram[estimate])
        dram_note.set_x(dram[estimate])
        dram_note.set_text(f" {dram[estimate]:g} pJ ({estimate})")
        mac = macs[dtype]
        mac_note.set_position((mac, _MAC_DTYPES.index(dtype)))
        mac_note.set_text(f" {mac:g} pJ")
        ratios = {"dram": dram[estimate] / mac, "sram_32kb": sram["sram_32kb"] / mac}
        text = table_html([
            (f"one {dtype} MAC (wide accumulator)", f"{mac:g} pJ"),
            (f"one 64-bit DRAM read ({estimate})", f"{dram[estimate]:g} pJ"),
            (f"DRAM read ÷ {dtype} MAC", f"{ratios['dram']:,.0f}×"),
            (f"32 KB SRAM read ÷ {dtype} MAC", f"{ratios['sram_32kb']:,.1f}×"),
        ])
        result = SimpleNamespace(dtype=dtype, estimate=estimate, mac_picojoules=mac,
                                 dram_picojoules=dram[estimate], ratios=ratios)
        return View(figure=figure, text=text, result=result)

    return Explorer(controls, render, title="Energy per operation versus per memory access")


# -- 2. why reuse saves energy -----------------------------------------------------------------

_SIMD_LABELS = ("SIMD naive (no reuse)", "SIMD tiled (shared memory)", "SIMD + tensor core 4×4×4")


def _simd_machines() -> dict[str, SIMDMachine]:
    return dict(zip(_SIMD_LABELS, (SIMDMachine(shared_memory=False), SIMDMachine(),
                                   SIMDMachine(tensor_core=(4, 4, 4)))))


def reuse_energy() -> Explorer:
    """The same GEMM costed on a systolic array and on three SIMD kernels: picojoules per useful
    MAC, split into arithmetic, SRAM and DRAM (``accelkit.energy.of_run`` on each engine run)."""
    sizes = [32, 64, 128, 256, 512]
    sides = [8, 16, 32, 64, 128]
    controls = {
        "n": W.SelectionSlider(options=sizes, value=128, description="M = N = K",
                               continuous_update=False, style=STYLE),
        "side": W.SelectionSlider(options=sides, value=32, description="systolic array side",
                                  continuous_update=False, style=STYLE),
        "dataflow": W.ToggleButtons(options=[("WS", "ws"), ("OS", "os"), ("IS", "is")],
                                    value="ws", description="dataflow", style=STYLE),
        "dram_floor": W.Checkbox(value=True, description="add the DRAM floor to the systolic run",
                                 style=STYLE),
    }
    machines = _simd_machines()

    parts = (("arithmetic", "compute_joules", _ARITHMETIC), ("SRAM", "sram_joules", _SRAM),
             ("DRAM", "dram_joules", _DRAM))
    # Shares on a LINEAR axis (a stacked bar on a log axis misstates each segment's share);
    # the total per MAC, which spans orders of magnitude, is written at each bar's end.
    figure, ax = _frame(6.8, 2.8, 0.37)
    figure.subplots_adjust(right=0.8)
    rows = ["systolic", *_SIMD_LABELS]
    segments = [ax.barh(rows, [1.0] * 4, left=[0.0] * 4, color=colour, label=part)
                for part, _, colour in parts]
    totals = [ax.text(1.01, i, "", va="center", fontsize=8, transform=ax.get_yaxis_transform())
              for i in range(len(rows))]  # (row i of the bars; a category name would do too, but
    # matplotlib 3.8 turns it into a one-element array and warns that it is not a number)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_locator(FixedLocator([0, 0.25, 0.5, 0.75, 1.0]))
    ax.xaxis.set_major_formatter(FixedFormatter(["0", "25%", "50%", "75%", "100%"]))
    ax.set_xlabel("share of the energy per useful bf16 MAC  (right: total, pJ per MAC)")
    figure.subplots_adjust(bottom=0.3)
    # The key under the x label, centred on the axes (placed once: a legend re-packs per draw).
    key_row(figure, [(part, colour) for part, _, colour in parts],
            x=(ax.get_position().x0 + ax.get_position().x1) / 2, y=0.07)
    title = ax.set_title("")
    Ticks(ax, "x").set([0, 0.25, 0.5, 0.75, 1.0], ["0", "25%", "50%", "75%", "100%"])
    row_ticks = Ticks(ax, "y")

    def render(values: dict) -> View:
        n, side, dataflow = values["n"], values["side"], values["dataflow"]
        run = SystolicArray(side, side, dataflow).estimate(M=n, N=n, K=n)
        costed = energy.of_run(energy.with_dram_floor(run) if values["dram_floor"] else run)
        simd = {name: energy.of_run(m.estimate(M=n, N=n, K=n)) for name, m in machines.items()}
        bars = [costed, *(simd[name] for name in _SIMD_LABELS)]
        per_mac = [[getattr(costs, field) * 1e12 / costs.macs for _, field, _ in parts]
                   for costs in bars]
        left = [0.0] * len(bars)
        for part, segment in enumerate(segments):
            for index, patch in enumerate(segment):
                share = per_mac[index][part] / sum(per_mac[index])
                patch.set_x(left[index])
                patch.set_width(share)
                left[index] += share
        for text, pj in zip(totals, per_mac):
            text.set_text(f" {sum(pj):,.3g} pJ")
        row_ticks.set(range(4), [f"systolic {side}×{side} {dataflow.upper()}", *_SIMD_LABELS])
        title.set_text(f"One {n}×{n}×{n} GEMM, four ways")
        sys_pj = costed.picojoules_per_useful_mac
        naive_pj = bars[1].picojoules_per_useful_mac
        text = table_html([
            (f"systolic {side}×{side}, {DATAFLOW_NAMES[dataflow]}: SRAM reads A / B",
             f"{run.sram_reads['A']:,} / {run.sram_reads['B']:,}"),
            ("systolic: pJ per MAC" + (" (with DRAM floor)" if values["dram_floor"] else
                                       " (array and buffers only)"), f"{sys_pj:,.3g}"),
            ("SIMD naive: pJ per MAC", f"{naive_pj:,.3g}"),
            ("share of the systolic run spent moving data", f"{costed.data_movement_fraction:.0%}"),
        ])
        result = SimpleNamespace(systolic_run=run, systolic=costed, simd=simd, n=n,
                                 picojoules_per_mac=[sum(pj) for pj in per_mac])
        return View(figure=figure, text=text, result=result)

    return Explorer(controls, render, title="Why reuse saves energy: one GEMM on each machine")


# -- 3. perf per watt ---------------------------------------------------------------------------

def perf_per_watt() -> Explorer:
    """FLOP/s per watt of published power (TDP) for every chip that has both, twice: at the
    datasheet peak (an outlined bar) and at the matmul rate kernels measurably reach (the filled
    bar; hatched where that rate is a named assumption, not a measurement). The chips without a
    published power figure are named, not guessed."""
    dtypes: tuple[DType, ...] = ("bf16", "fp8", "int8")
    controls = {"dtype": W.ToggleButtons(options=dtypes, value="bf16", description="precision",
                                         style=STYLE)}
    catalog = chips.all()
    # One chart per precision, drawn once: the set of chips differs between them.
    charts = {}
    for dtype in dtypes:
        rated = sorted(((c, c.peak_flops(dtype) / c.watts, c.achievable_flops(dtype) / c.watts,
                         c.achievable_is_assumption(f"achievable_flops:{dtype}"))
                        for c in catalog if c.watts is not None and dtype in c.dtypes),
                       key=lambda item: item[2])
        figure, ax = _frame(6.4, 3.0, 0.24)
        figure.subplots_adjust(right=0.86)
        labels = [chip_label(c.name) for c, *_ in rated]
        colours = [vendor_colour(c) for c, *_ in rated]
        ax.barh(labels, [peak / 1e12 for _, peak, _, _ in rated], facecolor="none",
                edgecolor=colours, linewidth=1.0)
        ax.barh(labels, [ach / 1e12 for _, _, ach, _ in rated], color=colours,
                hatch=["//" if assumed else "" for *_, assumed in rated])
        ax.set_xlabel(f"dense {dtype} TFLOP/s per watt of TDP\nfilled: measured matmul rate "
                      "(hatched: assumed) · outline: datasheet peak", fontsize=8)
        ax.set_title("Perf per watt", fontsize=10)
        vendor_key(figure)
        fixed_ticks(ax)  # its limits are set: the same ticks, as one marker line and texts
        charts[dtype] = (figure, rated)
    no_power = [chip_label(c.name) for c in catalog if c.watts is None]

    def render(values: dict) -> View:
        dtype = values["dtype"]
        figure, rated = charts[dtype]
        no_dtype = [chip_label(c.name) for c in catalog if c.watts is not None and dtype not in c.dtypes]
        best_peak = max(rated, key=lambda item: item[1]) if rated else None
        best = rated[-1] if rated else None
        assumed = [chip_label(c.name) for c, _, _, a in rated if a]
        text = table_html([
            ("best at the datasheet peak",
             f"{chip_label(best_peak[0].name)}: {best_peak[1] / 1e12:.2f} TFLOP/s per W"
             if best_peak else "—"),
            ("best at the measured matmul rate",
             f"{chip_label(best[0].name)}: {best[2] / 1e12:.2f} TFLOP/s per W"
             + (" (an assumed rate)" if best[3] else "") if best else "—"),
            ("matmul rate assumed, not measured", ", ".join(assumed) or "—"),
            ("no published power figure", ", ".join(no_power) or "—"),
            (f"no published dense {dtype} peak", ", ".join(no_dtype) or "—"),
        ])
        result = SimpleNamespace(dtype=dtype, flops_per_watt={c.name: v for c, v, _, _ in rated},
                                 achievable_flops_per_watt={c.name: v for c, _, v, _ in rated},
                                 assumed=[c.name for c, _, _, a in rated if a],
                                 no_power=no_power)
        return View(figure=figure, text=text, result=result)

    return Explorer(controls, render, title="Performance per watt, where the watts are published",
                    columns=1)


# -- 4. FLOPs per dollar, and how the price source flips the answer -----------------------------

def _list_prices(points: list[price.PricePoint]) -> list[price.PricePoint]:
    """Drop points that are not list prices (the TPU7x point is a 3-year-commitment model):
    a bar must compare like with like."""
    return [p for p in points if p.list_price]


def _pick_price(points: list[price.PricePoint], choice: str) -> price.PricePoint:
    """The catalog's own price (listed first), or the cheapest or dearest sourced list price.

    Only chips with a list price are drawn, so ``points`` holds one; none is a bug, refused.
    """
    listed = _list_prices(points)
    if not listed:
        raise ValueError("no list price to pick from")
    if choice == _PRICE_CHOICES[0]:
        return listed[0]
    return (min if choice == _PRICE_CHOICES[1] else max)(listed, key=lambda p: p.usd_per_hour)


def _per_dollar(flops: float) -> str:
    """FLOPs per dollar with its unit: '1.02 EFLOPs/$' (a quantity per dollar, not a quantity)."""
    return si(flops, "FLOPs") + "/$"


def flops_per_dollar_explorer() -> Explorer:
    """FLOPs one dollar buys on each chip, at the catalog price or at the cheapest or dearest
    sourced price; ticks mark every sourced list price, so the spread per chip is visible."""
    controls = {
        "prices": W.Dropdown(options=_PRICE_CHOICES, value=_PRICE_CHOICES[0],
                             description="prices", style=STYLE),
        "mfu": W.FloatSlider(value=0.4, min=0.05, max=1.0, step=0.05, description="MFU",
                             continuous_update=False, readout_format=".0%", style=STYLE),
        "dtype": W.ToggleButtons(options=_PRICE_DTYPES, value="bf16", description="precision",
                                 style=STYLE),
    }
    points = {c.name: _list_prices(price.price_points(c)) for c in chips.all()}
    h100, v5p = chips.get("H100"), chips.get("v5p")
    charts = {}
    for dtype in _PRICE_DTYPES:
        # Fixed order (by catalog-price FLOPs per dollar), so a flip shows as bars changing length
        # while their places stay put.
        shown = sorted((c for c in chips.all() if dtype in c.dtypes and points[c.name]),
                       key=lambda c: price.flops_per_dollar(
                           c, dtype, usd_per_hour=points[c.name][0].usd_per_hour))
        figure, ax = _frame(6.8, 3.0, 0.17)
        labels = [chip_label(c.name) for c in shown]
        figure.subplots_adjust(right=0.88)
        bars = ax.barh(labels, [1.0] * len(shown), color=[vendor_colour(c) for c in shown])
        vendor_key(figure)
        ticks = ax.plot([], [], "k|", markersize=12)[0]
        _log_axis(ax, 5e15, 3e18, [1e16, 1e17, 1e18], ["10¹⁶", "10¹⁷", "10¹⁸"])
        title = ax.set_title("")
        ax.set_xlabel(f"{dtype} FLOPs per dollar")  # its text is set per render
        fixed_ticks(ax)  # one marker line and texts per axis (widgets/_axes.py)
        charts[dtype] = (figure, ax, shown, bars, ticks, title)
    unpriced_all = [c for c in chips.all() if not points[c.name]]

    def render(values: dict) -> View:
        dtype, mfu, choice = values["dtype"], values["mfu"], values["prices"]
        figure, ax, shown, bars, ticks, title = charts[dtype]
        result_fpd: dict[str, float] = {}
        result_prices: dict[str, price.PricePoint] = {}
        xs, ys = [], []
        for index, (chip, bar) in enumerate(zip(shown, bars)):
            picked = _pick_price(points[chip.name], choice)
            value = price.flops_per_dollar(chip, dtype, mfu, usd_per_hour=picked.usd_per_hour)
            bar.set_width(value)
            result_fpd[chip.name], result_prices[chip.name] = value, picked
            for p in points[chip.name]:
                xs.append(price.flops_per_dollar(chip, dtype, mfu, usd_per_hour=p.usd_per_hour))
                ys.append(index)
        ticks.set_data(xs, ys)
        ax.set_xlabel(f"{dtype} FLOPs per dollar at MFU {mfu:.0%} (log scale; | = each sourced "
                      "list price)")
        title.set_text(f"FLOPs per dollar, {choice}")
        best = max(result_fpd, key=result_fpd.__getitem__)
        lines = [("most FLOPs per dollar", f"{chip_label(best)}: {_per_dollar(result_fpd[best])}")]
        if h100.name in result_fpd and v5p.name in result_fpd:
            a, b = result_prices[h100.name], result_prices[v5p.name]
            winner = "H100" if result_fpd[h100.name] > result_fpd[v5p.name] else "TPU v5p"
            lines += [(f"H100 at ${a.usd_per_hour:.2f}/h ({a.provider}; {a.basis_note})",
                       _per_dollar(result_fpd[h100.name])),
                      (f"TPU v5p at ${b.usd_per_hour:.2f}/h ({b.provider}; {b.basis_note})",
                       _per_dollar(result_fpd[v5p.name])),
                      ("cheaper FLOPs of the two", winner)]
        # What each bar's price covers, on screen: a GPU-only price leaves out the host VM.
        by_basis: dict[str, list[str]] = {}
        for name, p in result_prices.items():
            by_basis.setdefault(p.basis_note, []).append(chip_label(name))
        lines += [(f"price basis: {note}", ", ".join(names)) for note, names in by_basis.items()]
        others = [f"{chip_label(c.name)} ${p.usd_per_hour:.2f}/h ({p.basis_note})"
                  for c in chips.all() for p in price.price_points(c) if not p.list_price]
        if others:
            lines.append(("not list prices (not drawn)", "; ".join(others)))
        lines.append(("no list price (not shown)", ", ".join(chip_label(c.name) for c in unpriced_all)))
        result = SimpleNamespace(choice=choice, dtype=dtype, mfu=mfu, flops_per_dollar=result_fpd,
                                 prices=result_prices, bases=by_basis)
        return View(figure=figure, text=table_html(lines), result=result)

    return Explorer(controls, render, title="FLOPs per dollar — and whose price list?", columns=3)


# -- check yourself and the worked problem ------------------------------------------------------

def energy_quiz() -> MultipleChoice:
    """Why a systolic array spends less energy on the same GEMM than a naive SIMD kernel."""
    return multiple_choice(
        "The naive SIMD kernel and the systolic array do exactly the same multiply-accumulates on "
        "the same GEMM, yet one spends hundreds of times more energy. Why?",
        ["Its multipliers are less efficient than the systolic array's, so each MAC itself "
         "costs more energy.",
         "It re-reads every operand from DRAM for every MAC; the array passes operands from cell "
         "to cell.",
         "It runs at a higher clock frequency, and dynamic power grows with frequency, so every "
         "operation costs more.",
         "The SIMD machine computes in fp32 and the array in bf16."],
        correct=1,
        feedback=["Both are costed with the same 2.0 pJ bf16 MAC: the arithmetic bars are equal.",
                  "Data movement, not arithmetic, dominates: one DRAM read costs about a thousand "
                  "MACs, so reuse is what saves energy.",
                  "The energy model counts operations and accesses, not clock speed; the "
                  "arithmetic bars are equal.",
                  "Both runs are costed in bf16 here (of_run's dtype argument)."])


def energy_worked_problem() -> WorkedProblem:
    """A 4096³ bf16 GEMM: the energy of its arithmetic, of reading every operand from DRAM for
    every MAC, and of reading each operand once — computed from the 45 nm table when revealed."""
    n = 4096

    def answer() -> str:
        mac = energy.mac_picojoules("bf16")
        per_byte = energy.access_picojoules("dram", bytes=1)
        macs = n ** 3
        compute_j = macs * mac * 1e-12
        naive_j = energy.access_picojoules("dram", bytes=macs * 2 * 2) * 1e-12
        once_bytes = 3 * n * n * 2
        once_j = energy.access_picojoules("dram", bytes=once_bytes) * 1e-12
        intensity = 2 * macs / once_bytes
        return (
            f"<ol><li>MACs: n³ = {macs:.3g}; at {mac:g} pJ each the arithmetic costs "
            f"<b>{compute_j:.3g} J</b>.</li>"
            f"<li>Naive: two bf16 operands (4 bytes) per MAC from DRAM at {per_byte:g} pJ/byte: "
            f"<b>{naive_j:.3g} J</b>, {naive_j / compute_j:,.0f}× the arithmetic.</li>"
            f"<li>Each of A, B, C crosses DRAM once: 3n² × 2 bytes = {once_bytes / 1e6:.3g} MB, "
            f"<b>{once_j:.3g} J</b>, {once_j / compute_j:.2g}× the arithmetic. The ratio of FLOPs "
            f"to bytes is {intensity:,.0f}: the same reuse that puts a GEMM on the compute side of "
            f"the roofline (lesson 05) puts its energy into arithmetic.</li></ol>")

    return WorkedProblem(
        f"Multiply two {n}×{n} bf16 matrices (45 nm table, wide accumulator, mid DRAM estimate). "
        "(1) How many joules do the multiply-accumulates cost? (2) How many if every MAC fetched "
        "both operands from DRAM? (3) How many if A and B are read once and C written once? "
        "Relate the last answer to arithmetic intensity.", answer)
