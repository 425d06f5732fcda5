"""Lesson 05's widgets: the roofline of real chips, operations dropped on it, and ridge points.

Every number comes from :mod:`accelkit.roofline`, :mod:`accelkit.chips` and
:mod:`accelkit.models`; this module only gathers inputs and draws.
"""

from __future__ import annotations

import math
from typing import Any

import ipywidgets as W
import numpy as np

import accelkit.models as models
from accelkit import chips, roofline
from accelkit.dtypes import DType
from accelkit.widgets.quiz import MultipleChoice, multiple_choice
from accelkit.widgets._axes import fixed_ticks, key_row, log_ticks
from accelkit.widgets._base import (GPU_COLOUR, STYLE, TPU_COLOUR, VENDOR_KEY_HTML, Explorer,
                                    View, chip_label, new_figure, si, table_html, vendor_colour,
                                    vendor_key)
from accelkit.widgets._worked import WorkedProblem

__all__ = ["roofline_explorer", "batch_intensity", "ridge_points", "roofline_worked_problem",
           "roofline_quiz"]

OPERATIONS = ("matmul", "decode-step matmul", "decode attention", "elementwise add")
POWERS = [2**i for i in range(0, 17)]  # 1 ... 65,536
BATCHES = [2**i for i in range(0, 15)]  # 1 ... 16,384
CONTEXTS = [512, 2048, 8192, 32768, 131072]
DTYPES = ("bf16", "fp8", "int8")
#: The model whose decode-time attention the explorer drops on the roofline.
ATTENTION_MODEL = "llama-3-8b"
# Intensities spanned by the x axis, FLOPs per byte.
_X_MIN, _X_MAX = 0.1, 1e4


def _colour(chip: chips.Chip) -> str:
    """The course's TPU / GPU colour, a different shade per chip of the same kind."""
    same_kind = [c.name for c in chips.all() if c.kind == chip.kind]
    return vendor_colour(chip, same_kind.index(chip.name))


def _spread_labels(ys: list[float], min_ratio: float = 2.0) -> list[float]:
    """Label heights (log axis) nudged apart so that no two overlap: each at least
    ``min_ratio`` times the one below it, keeping their order."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    placed = list(ys)
    for previous, current in zip(order, order[1:]):
        placed[current] = max(placed[current], placed[previous] * min_ratio)
    return placed


def _log_axes(ax, xticks: list[float], yticks: list[float]) -> None:
    log_ticks(ax, "x", xticks)
    log_ticks(ax, "y", yticks)


def _operation(chip: chips.Chip, values: dict) -> roofline.RooflineResult:
    """The roofline result of the operation the controls describe, on one chip."""
    op, dtype = values["operation"], values["dtype"]
    if op == "matmul":
        return roofline.matmul(chip, M=values["M"], N=values["N"], K=values["K"], dtype=dtype)
    if op == "decode-step matmul":
        # [B, K] activations times a [K, N] weight: one token per sequence, batch B.
        return roofline.matmul(chip, M=values["B"], N=values["N"], K=values["K"], dtype=dtype)
    if op == "elementwise add":
        return roofline.elementwise(chip, n_elements=values["M"] * values["N"], dtype=dtype)
    attention = _decode_attention(values["B"], values["context"])
    return roofline.estimate(chip, flops=attention.flops_each, bytes=attention.bytes_each,
                             dtype=dtype)


def _decode_attention(batch: int, context: int) -> models.Operation:
    """One layer's attention in one decode step (from the model catalog's own count)."""
    ops = models.get(ATTENTION_MODEL).operations(batch=batch, phase="decode",
                                                 context_tokens=context)
    return next(op for op in ops if op.kind == "attention")


def _describe(values: dict) -> str:
    op = values["operation"]
    if op == "matmul":
        return f"matmul M={values['M']:,} N={values['N']:,} K={values['K']:,}"
    if op == "decode-step matmul":
        return f"decode-step matmul [B={values['B']:,}, {values['K']:,}]×[{values['K']:,}, " \
               f"{values['N']:,}]"
    if op == "elementwise add":
        return f"elementwise add over {values['M']:,}×{values['N']:,} elements"
    return (f"decode attention, one layer of {models.get(ATTENTION_MODEL).display_name}, "
            f"B={values['B']:,}, {values['context']:,} cached tokens")


class _RooflinePlot:
    """The explorer's figure, built once: the roofs, ridge markers and stars of all the chosen
    chips are three collections (one draw call each, whatever the number of chips), and each
    chip's name a text created on first use and then only shown, hidden or moved. Rebuilding
    the axes each render cost ~25 ms of the 50 ms budget on this machine; a line per chip, most
    of the rest with many chips."""

    def __init__(self) -> None:
        from matplotlib.collections import LineCollection

        self.figure = new_figure(7.0, 3.4, margins=dict(left=0.11, right=0.97, top=0.91,
                                                        bottom=0.14))
        self.ax = ax = self.figure.add_subplot()
        _log_axes(ax, [0.1, 1, 10, 100, 1000, 10000], [0.1, 10, 1000])
        ax.set_xlim(_X_MIN, _X_MAX)
        ax.set_ylim(0.05, 2e4)
        ax.set_xlabel("arithmetic intensity (FLOPs/byte)   ○ ridge   ★ your operation   "
                      "dotted: best measured")
        self.ylabel = ax.set_ylabel("attainable bf16 TFLOP/s")  # its text follows the dtype
        fixed_ticks(ax)  # one marker line and texts per axis (widgets/_axes.py)
        self.marker = ax.axvline(1.0, color="black", ls="--", lw=1)
        vendor_key(self.figure, x=0.01, y=0.99, ha="left")
        self.roofs = LineCollection([], linewidths=2)
        ax.add_collection(self.roofs, autolim=False)
        # Beside each datasheet roof, the measured one (catalog achievable figures, or the
        # datasheet where none is published): a thin dotted line in the chip's colour.
        self.ceilings = LineCollection([], linewidths=1, linestyles=":")
        ax.add_collection(self.ceilings, autolim=False)
        self.ridges = ax.scatter([], [], s=36, marker="o", facecolors="white", linewidths=1.0)
        self.stars = ax.scatter([], [], s=169, marker="*", edgecolors="black", linewidths=0.5)
        self.labels: dict[str, Any] = {}

    @staticmethod
    def _curve(chip: chips.Chip, dtype: DType) -> tuple[list[float], list[float]]:
        # The roof is two straight lines on log axes: its ends and the ridge draw it exactly.
        xs = [_X_MIN, chip.ridge_flops_per_byte(dtype), _X_MAX]
        return xs, list(roofline.curve(chip, dtype, xs) / 1e12)

    @staticmethod
    def _ceiling(chip: chips.Chip, dtype: DType) -> tuple[list[float], list[float]]:
        # The same two lines at the catalog's achievable matmul FLOP/s and HBM bandwidth.
        flops, bandwidth = chip.achievable_flops(dtype), chip.achievable_hbm_bytes_per_second
        xs = [_X_MIN, flops / bandwidth, _X_MAX]
        return xs, [min(flops, x * bandwidth) / 1e12 for x in xs]

    def _label(self, chip: chips.Chip) -> Any:
        if chip.name not in self.labels:
            self.labels[chip.name] = self.ax.text(_X_MAX / 1.3, 1.0, chip_label(chip.name),
                                                  color=_colour(chip), ha="right",
                                                  va="bottom", fontsize=8)
        return self.labels[chip.name]

    def draw(self, usable: list[chips.Chip], results: tuple, dtype: DType, title: str):
        shown = {c.name for c in usable}
        for name, label in self.labels.items():
            label.set_visible(name in shown)
        curves = [self._curve(chip, dtype) for chip in usable]
        colours = [_colour(chip) for chip in usable]
        self.roofs.set_segments([np.column_stack(curve) for curve in curves])
        self.roofs.set_color(colours)
        self.roofs.set_linestyle(["-" if c.kind == "tpu" else "--" for c in usable])
        self.ceilings.set_segments([np.column_stack(self._ceiling(c, dtype)) for c in usable])
        self.ceilings.set_color(colours)
        self.ridges.set_offsets([(xs[1], ys[1]) for xs, ys in curves])
        self.ridges.set_edgecolor(colours)
        self.stars.set_offsets([(r.arithmetic_intensity, r.achieved_flops_per_second / 1e12)
                                for r in results])
        self.stars.set_facecolor(colours)
        for chip in usable:
            self._label(chip).set_visible(True)
        # Labelled directly at the lines' right ends, nudged apart where peaks are close.
        tops = [ys[-1] * 1.05 for _, ys in curves]
        for chip, y in zip(usable, _spread_labels(tops)):
            self.labels[chip.name].set_y(y)
        self.marker.set_xdata([results[0].arithmetic_intensity] * 2)
        self.ylabel.set_text(f"attainable {dtype} TFLOP/s")
        self.ax.set_title(title, fontsize=9)
        return self.figure


def _peak_pair(chip: chips.Chip, dtype: DType) -> str:
    """'989 / 794 TFLOP/s (80%)': the datasheet peak beside the achievable one, * if assumed."""
    key = f"achievable_flops:{dtype}"
    mark = "*" if chip.achievable_is_assumption(key) else ""
    return (f"{chip.peak_flops(dtype) / 1e12:,.0f} / {chip.achievable_flops(dtype) / 1e12:,.0f}{mark} "
            f"T/s ({chip.achievable_fraction(key):.0%})")


def roofline_explorer(chip_names: tuple[str, ...] = ("TPU v5e", "H100"),
                      operation: str = "decode-step matmul") -> Explorer:
    """Roofline of any catalog chips (multi-select); drop an operation on it; see which bound holds.

    Operations: a matmul of chosen M, N, K; a decode-step matmul [B, K]×[K, N]; one layer of
    decode-time attention (Llama 3 8B, batch B, a KV cache of chosen length); an elementwise add
    over M×N elements. Chips lacking the chosen precision are skipped and listed.
    """
    catalog = chips.all()
    controls = {
        "chips": W.SelectMultiple(options=[(chip_label(c.name), c.name) for c in catalog],
                                  value=tuple(chips.get(n).name for n in chip_names), rows=6,
                                  description="chips", style=STYLE),
        "operation": W.Dropdown(options=OPERATIONS, value=operation, description="operation",
                                style=STYLE),
        "dtype": W.Dropdown(options=DTYPES, value="bf16", description="precision",
                            style=STYLE),
        "B": W.SelectionSlider(options=BATCHES, value=64, description="batch B (decode)",
                               continuous_update=False, style=STYLE),
        "M": W.SelectionSlider(options=POWERS, value=4096, description="M (matmul, add)",
                               continuous_update=False, style=STYLE),
        "N": W.SelectionSlider(options=POWERS, value=8192, description="N",
                               continuous_update=False, style=STYLE),
        "K": W.SelectionSlider(options=POWERS, value=8192, description="K (= D for decode)",
                               continuous_update=False, style=STYLE),
        "context": W.SelectionSlider(options=CONTEXTS, value=8192,
                                     description="KV cache (attention)",
                                     continuous_update=False, style=STYLE),
    }
    plot = _RooflinePlot()

    def render(values: dict) -> View:
        picked = [chips.get(n) for n in values["chips"]]
        if not picked:
            return View(text="Pick one or more chips (ctrl/cmd-click for several).")
        dtype = values["dtype"]
        usable = [c for c in picked if dtype in c.dtypes]
        skipped = [chip_label(c.name) for c in picked if dtype not in c.dtypes]
        if not usable:
            return View(text=f"None of the chosen chips has a published dense {dtype} peak.")
        results = tuple(_operation(c, values) for c in usable)
        figure = plot.draw(usable, results, dtype, _describe(values))
        intensity = results[0].arithmetic_intensity
        head = ("<tr><th style='text-align:left'>chip</th><th>ridge (FLOPs/byte)</th>"
                "<th>time</th><th>bound</th><th>achieved</th><th>of peak</th>"
                f"<th>{dtype} peak: datasheet / best measured</th></tr>")
        rows = "".join(
            f"<tr><td style='text-align:left'><span style='color:{_colour(chips.get(r.chip))}'>"
            f"■</span> {chip_label(r.chip)}</td>"
            f"<td>{r.ridge_flops_per_byte:,.0f}</td><td>{si(r.seconds, 's')}</td>"
            f"<td><b>{r.bound}</b></td><td>{si(r.achieved_flops_per_second, 'FLOP/s')}</td>"
            f"<td>{r.fraction_of_peak:.0%}</td><td>{_peak_pair(chips.get(r.chip), dtype)}</td></tr>"
            for r in results)
        text = (f"<b>{_describe(values)}</b>: {si(results[0].flops, 'FLOP')}, "
                f"{si(results[0].bytes, 'B')} moved, intensity "
                f"<b>{intensity:,.1f} FLOPs/byte</b>"
                f"<table style='text-align:right'>{head}{rows}</table>")
        text += ("<i>Best measured: the fastest matmul and HBM copy published for the chip "
                 "(catalog sources); * none of its own published: a sibling chip's figure or the datasheet "
                 "stands in, an assumption.</i><br>")
        if skipped:
            text += f"<i>No published dense {dtype} peak, so not drawn: {', '.join(skipped)}.</i>"
        return View(figure=figure, text=text, result=results)

    return Explorer(controls, render, title="The roofline: which bound holds?")


def batch_intensity(chip: str = "TPU v5e", d_model: int = 8192, d_ff: int = 8192) -> Explorer:
    """Intensity of a decode-step matmul [B, D]×[D, F] against B, with the chip's ridge.

    Shows that intensity ≈ B while B ≪ D, F (bf16), so the ridge is about the batch a decode
    step needs (:func:`accelkit.roofline.critical_batch`, weight bytes only); the dashed line
    is the exact crossing with the activations' bytes counted
    (:func:`accelkit.roofline.crossing_batch`), where the curve meets the ridge.
    """
    controls = {
        "chip": W.Dropdown(options=[(chip_label(c.name), c.name) for c in chips.all()],
                           value=chips.get(chip).name, description="chip", style=STYLE),
        "D": W.SelectionSlider(options=POWERS[9:], value=d_model, description="D = d_model",
                               continuous_update=False, style=STYLE),
        "F": W.SelectionSlider(options=POWERS[9:], value=d_ff, description="F = d_ff",
                               continuous_update=False, style=STYLE),
    }
    # One figure, built once; a render moves the lines (rebuilding it cost ~15 ms of 50).
    figure = new_figure(6.5, 3.1, margins=dict(left=0.12, right=0.97, top=0.90, bottom=0.15))
    ax = figure.add_subplot()
    ax.plot(BATCHES, BATCHES, ":", color="#9e9e9e", label="intensity = B")
    (measured,) = ax.plot(BATCHES, BATCHES, "o-", color="#0277bd", ms=4,
                          label="[B, D]×[D, F] in bf16")
    ridge_line = ax.axhline(1.0, color="#e65100", lw=1.5, label="the chip's ridge")
    critical_line = ax.axvline(1.0, color="#e65100", ls="--", lw=1)
    _log_axes(ax, [1, 10, 100, 1000, 10000], [1, 100, 10000])
    ax.set_xlabel("batch B (tokens per decode step)")
    ax.set_ylabel("FLOPs per byte")
    fixed_ticks(ax)  # one marker line and texts per axis (widgets/_axes.py)
    # The key in the empty upper left, placed once (a legend re-packs its boxes every draw).
    box = ax.get_position()
    key_row(figure, [("intensity = B", "#9e9e9e", "┈"), ("[B, D]×[D, F] in bf16", "#0277bd", "●"),
                     ("the chip's ridge", "#e65100", "━")],
            x=box.x0 + 0.015, y=box.y1 - 0.05, ha="left")

    def render(values: dict) -> View:
        the_chip = chips.get(values["chip"])
        d, f = values["D"], values["F"]
        intensities = [roofline.matmul(the_chip, M=b, N=f, K=d).arithmetic_intensity
                       for b in BATCHES]
        ridge = the_chip.ridge_flops_per_byte("bf16")
        critical = roofline.critical_batch(the_chip)
        crossing = roofline.crossing_batch(the_chip, N=f, K=d)
        near = max(1, round(critical))
        at_critical = roofline.matmul(the_chip, M=near, N=f, K=d)
        measured.set_ydata(intensities)
        ridge_line.set_ydata([ridge, ridge])
        critical_line.set_visible(math.isfinite(crossing))
        if math.isfinite(crossing):
            critical_line.set_xdata([crossing, crossing])
        ax.set_title(f"{chip_label(the_chip.name)}, D = {d:,}, F = {f:,}: memory-bound until B "
                     "reaches the ridge", fontsize=10)
        text = table_html([
            (f"{chip_label(the_chip.name)} ridge (bf16 peak ÷ HBM bandwidth)",
             f"{ridge:,.0f} FLOPs/byte"),
            ("critical batch, weight bytes only (ridge × 2 bytes ÷ 2 FLOPs)", f"{critical:,.0f}"),
            (f"actual intensity at B = {near:,} (activations counted too)",
             f"{at_critical.arithmetic_intensity:,.0f} FLOPs/byte ({at_critical.bound}-bound)"),
            ("exact crossing, every byte counted (dashed line)",
             "never" if not math.isfinite(crossing) else f"B = {crossing:,.1f}"),
        ])
        return View(figure=figure, text=text,
                    result={"critical_batch": critical, "crossing_batch": crossing,
                            "ridge_flops_per_byte": ridge,
                            "intensities": dict(zip(BATCHES, intensities))})

    return Explorer(controls, render, title="Intensity ≈ batch: the critical batch of decode")


def ridge_points(dtype: str = "bf16") -> Explorer:
    """Every catalog chip's ridge point (peak FLOP/s ÷ HBM bytes/s), TPUs and GPUs, by year.

    Drawn as an HTML bar chart: 14 labelled bars are ~60 ms of matplotlib text on this machine,
    over the 50 ms budget, and a bar chart needs nothing HTML cannot draw.
    """
    controls = {"dtype": W.Dropdown(options=DTYPES, value=dtype, description="precision",
                                    style=STYLE)}
    catalog = chips.all()

    def render(values: dict) -> View:
        dt = values["dtype"]
        ridges = {c.name: c.ridge_flops_per_byte(dt) for c in catalog if dt in c.dtypes}
        top = max(ridges.values())
        rows = []
        for chip in catalog:
            colour = TPU_COLOUR if chip.kind == "tpu" else GPU_COLOUR
            if chip.name in ridges:
                width = 100 * ridges[chip.name] / top
                measured = chip.achievable_flops(dt) / chip.achievable_hbm_bytes_per_second
                mark = "*" if (chip.achievable_is_assumption(f"achievable_flops:{dt}") or
                               chip.achievable_is_assumption("achievable_hbm_bytes_per_second")) else ""
                bar = (f"<div style='background:{colour};width:{width:.1f}%;height:0.9em;"
                       f"display:inline-block'></div> {ridges[chip.name]:,.0f} "
                       f"<span style='color:#757575'>(best measured {measured:,.0f}{mark})</span>")
            else:
                bar = f"<i style='color:#757575'>no published dense {dt} peak</i>"
            rows.append(f"<tr><td style='text-align:right;padding-right:0.6em;"
                        f"white-space:nowrap'>{chip_label(chip.name)} ({chip.year})</td>"
                        f"<td style='width:28em'>{bar}</td></tr>")
        have = [c for c in catalog if c.name in ridges]
        low = min(have, key=lambda c: ridges[c.name])
        high = max(have, key=lambda c: ridges[c.name])
        chart = (f"<table><caption style='text-align:left'><b>Ridge point, {dt}</b> "
                 "(FLOPs per byte of HBM traffic = peak FLOP/s ÷ HBM bytes/s; in brackets the "
                 "same from the best measured matmul and HBM copy, * where either is assumed). "
                 f"{VENDOR_KEY_HTML}</caption>{''.join(rows)}</table>")
        summary = table_html([
            ("lowest ridge", f"{chip_label(low.name)}: {ridges[low.name]:,.0f} FLOPs/byte"),
            ("highest ridge", f"{chip_label(high.name)}: {ridges[high.name]:,.0f} FLOPs/byte"),
        ])
        return View(text=chart + summary, result=ridges)

    return Explorer(controls, render, title="Ridge points of real chips")


def roofline_worked_problem(chip: str = "TPU v5e", d_model: int = 4096,
                            d_ff: int = 14336) -> WorkedProblem:
    """A scaling-book-style worked problem; press the button to see the answer, computed with
    :func:`accelkit.roofline.decode_mlp_numbers`."""
    the_chip = chips.get(chip)
    question = (
        f"A {chip_label(the_chip.name)} does "
        f"{si(the_chip.peak_flops('bf16'), 'FLOP/s')} in bf16 and reads HBM at "
        f"{si(the_chip.require('hbm_bytes_per_second'), 'B/s')}. One decode step multiplies a batch of B "
        f"token vectors [B, {d_model:,}] by an MLP weight [{d_model:,}, {d_ff:,}], in bf16. "
        "(a) What is the chip's ridge point? (b) About what B makes the step compute-bound? "
        "(c) How long does the matmul take at B = 8 and at B = 512, and what bounds each? "
        "Work it out, then press the button.")

    def answer() -> str:
        n = roofline.decode_mlp_numbers(chip, d_model, d_ff)
        return (
            f"(a) ridge = {si(n['peak_flops_per_second'], 'FLOP/s')} ÷ "
            f"{si(n['hbm_bytes_per_second'], 'B/s')} = <b>{n['ridge']:,.0f} FLOPs/byte</b>.<br>"
            f"(b) FLOPs 2·B·D·F; bytes ≈ 2·D·F (the bf16 weight dominates while B ≪ D, F), so "
            f"intensity ≈ B and the step turns compute-bound near "
            f"<b>B ≈ {n['critical_batch']:,.0f}</b>. (The activations add a few bytes, so the "
            f"exact crossing is a little higher: B = {n['crossing_batch']:,.1f}, "
            "<code>roofline.crossing_batch</code>.)<br>"
            f"(c) B = 8: intensity {n['intensity_b8']:,.1f}, {n['bound_b8']}-bound, "
            f"<b>{si(n['seconds_b8'], 's')}</b>, the time to read the weight. "
            f"B = 512: intensity {n['intensity_b512']:,.0f}, {n['bound_b512']}-bound, "
            f"<b>{si(n['seconds_b512'], 's')}</b>. 64× the tokens for "
            f"{n['seconds_b512'] / n['seconds_b8']:.1f}× the time: batching decode is almost "
            "free until the ridge.")

    return WorkedProblem(question, answer)


def roofline_quiz() -> MultipleChoice:
    """Check yourself: does a bigger batch help decode-time attention the way it helps matmuls?"""
    return multiple_choice(
        "Raising the decode batch B from 1 to 256 moves a decode-step matmul from memory-bound "
        "towards compute-bound. What does it do to decode-time attention's arithmetic "
        "intensity?",
        ["It rises with B too, just like the matmul's: more rows share each byte read.",
         "It stays about the same: each sequence reads its own keys and values.",
         "It falls, because the KV cache grows with B while the FLOPs per sequence stay fixed."],
        correct=1,
        feedback=[
            "Try it in the explorer: pick 'decode attention' and move B. The matmul's intensity "
            "grows because B rows share one weight matrix; what would attention's B rows share?",
            "Attention's bytes grow with B exactly as its FLOPs do, so the ratio does not move: "
            "decode attention stays memory-bound at any batch (one reason long-context serving "
            "is bandwidth-hungry).",
            "The cache does grow with B, but so do the FLOPs, in the same proportion. Look at "
            "the intensity in the explorer as you move B.",
        ])
