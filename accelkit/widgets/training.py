"""Lesson 07's widgets: plan a training run, see when gradient communication sets the pace, and
hold the model against published runs.

Every number comes from :func:`accelkit.training.estimate` (the run's cost) and
:mod:`accelkit.parallel` (the gradient all-reduce); this module gathers inputs and draws.
The published runs the lesson compares with are evidence kept outside the package (the
repository's ``validation/totals.py``): :func:`published_runs` takes their comparisons as an
argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import ipywidgets as W
from matplotlib.ticker import MaxNLocator

from accelkit import chips, models, parallel, price, training
from accelkit.widgets.quiz import MultipleChoice, multiple_choice
from accelkit.widgets._axes import Ticks, fixed_ticks, key_row, log_ticks
from accelkit.widgets._base import STYLE, Explorer, View, new_figure, si, table_html, vendor_colour
from accelkit.widgets._worked import WorkedProblem

__all__ = ["training_planner", "communication_explorer", "published_runs", "training_quiz",
           "training_worked_problem"]

_TRANSFORMERS = tuple(n for n in models.names() if isinstance(models.get(n), models.Transformer))
_TOKENS = (1e10, 3e10, 1e11, 3e11, 1e12, 3e12, 1e13, 1.5e13, 3e13)
_CHIP_COUNTS = (1, 8, 64, 256, 1024, 2048, 4096, 8192, 8960, 16384, 32768)


def _frame(width: float, height: float, left: float = 0.12, bottom: float = 0.2):
    """A figure with fixed margins and no layout engine: the layout pass would cost more than the
    rest of a render."""
    return new_figure(width, height, margins={"left": left, "bottom": bottom})


def _fast_ticks(ax, rows: list[str]) -> Ticks:
    """A bar chart's ticks as one marker line and texts (:mod:`accelkit.widgets._axes`): its
    rows' names once, the x axis's (linear, as matplotlib's own locator would place them) on
    each ``update()``, and the axis labels placed once."""
    Ticks(ax, "y").set(list(range(len(rows))), rows)
    return Ticks(ax, "x", locator=MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10]), format=_plain)


def _plain(value: float) -> str:
    return f"{value:,.6g}"


# -- 1. plan a run ------------------------------------------------------------------------------

def training_planner() -> Explorer:
    """Pick model, tokens, chip, chip count and MFU; see FLOPs, days, chip-hours, dollars, energy
    and memory per chip. How the chips share the work (and what the network costs) is the layout
    explorer's job (:func:`accelkit.widgets.layout_explorer`)."""
    controls = {
        "model": W.Dropdown(options=_TRANSFORMERS, value="llama-3-70b", description="model",
                            style=STYLE),
        "tokens": W.SelectionSlider(options=[(f"{t:.3g}", t) for t in _TOKENS], value=1.5e13,
                                    description="tokens D", continuous_update=False, style=STYLE),
        "chip": W.Dropdown(options=chips.names(), value=chips.get("v5p").name,
                           description="chip", style=STYLE),
        "n_chips": W.SelectionSlider(options=_CHIP_COUNTS, value=8960, description="chips",
                                     continuous_update=False, style=STYLE),
        "mfu": W.FloatSlider(value=0.4, min=0.05, max=0.8, step=0.05, description="MFU",
                             readout_format=".0%", continuous_update=False, style=STYLE),
    }
    figure = _frame(6.4, 1.6, left=0.3, bottom=0.3)
    figure.subplots_adjust(top=0.8)  # room for the title (it was clipped at 0.88)
    ax = figure.add_subplot()
    bar = ax.barh(["days, compute only"], [1.0], color="#455a64")[0]
    label = ax.text(1, 0, "", va="center", fontsize=8)
    ax.set_xlabel("days")
    title = ax.set_title("")
    x_ticks = _fast_ticks(ax, ["days, compute only"])

    def render(values: dict) -> View:
        chip = chips.get(values["chip"])
        n = values["n_chips"]
        est = training.estimate(model=values["model"], tokens=values["tokens"], chip=chip,
                                n_chips=n, mfu=values["mfu"])
        days = est.compute_seconds / training.SECONDS_PER_DAY
        bar.set_width(days)
        label.set_x(days)
        label.set_text(f" {days:,.3g}")
        ax.set_xlim(0, days * 1.25 or 1)
        x_ticks.update()
        title.set_text(f"{est.model} on {n:,} × {chip.name}: {est.days:,.1f} days")
        rows = [("FLOPs (6·N·D)", f"{est.flops:.3g}"), ("days", f"{est.days:,.1f}"),
                ("chip-hours", f"{est.chip_hours:,.0f}"),
                ("dollars (list price)", "no published price" if est.usd is None
                 else f"${est.usd:,.0f}"),
                ("energy at TDP", "no published power" if est.joules is None
                 else f"{est.joules / 3.6e9:,.0f} MWh"),
                ("memory per chip (sharded)", f"{est.memory_bytes_per_chip / 1e9:,.1f} GB of "
                 f"{est.hbm_bytes / 1e9:,.0f} GB" + ("" if est.fits else " — does NOT fit"))]
        # The peak the MFU divides by, beside the best a matmul has been measured to reach on
        # the chip (the planner's estimate is bf16, training.estimate's default precision).
        key = "achievable_flops:bf16"
        ceiling = chip.achievable_fraction(key)
        rows.append(("bf16 peak: datasheet / best measured matmul",
                     f"{chip.peak_flops('bf16') / 1e12:,.0f} / {chip.achievable_flops('bf16') / 1e12:,.0f} "
                     f"TFLOP/s ({ceiling:.0%}{', assumed' if chip.achievable_is_assumption(key) else ''})"))
        shown = [note for note in est.notes if note.kind == "does_not_fit"]
        notes = "".join(f"<br><small>⚠ {note}</small>" for note in shown)
        if values["mfu"] > ceiling:
            notes += (f"<br><small>⚠ an MFU of {values['mfu']:.0%} is above the {ceiling:.0%} of "
                      "peak the chip's best measured matmul reaches: out of reach for a whole run"
                      "</small>")
        return View(figure=figure, text=table_html(rows) + notes, result=est)

    return Explorer(controls, render, title="Plan a training run", columns=2)


# -- 2. when communication sets the pace --------------------------------------------------------

def communication_explorer() -> Explorer:
    """Pure data parallelism at a fixed global batch: the gradient all-reduce over the backward
    pass as the chip count grows (:func:`accelkit.parallel.dp_communication_ratios`), on a TPU
    v5p pod (ICI, then DCN between slices) and on H100s (NVLink in the node, then all 8 NICs of
    each node, hierarchical). Above 1, communication sets the pace."""
    controls = {
        "model": W.Dropdown(options=_TRANSFORMERS, value="llama-3-70b", description="model",
                            style=STYLE),
        "batch": W.SelectionSlider(options=[(f"{b / 1e6:g}M", b) for b in (1e6, 4e6, 16e6, 64e6)],
                                   value=4e6, description="global batch (tokens)",
                                   continuous_update=False, style=STYLE),
    }
    counts = [8, 16, 64, 256, 1024, 4096, 8960, 16384]
    systems = {"TPU v5p (ICI, DCN between slices)": (chips.get("v5p"), vendor_colour("v5p")),
               "H100 (NVLink node, then 8 NICs per node)": (chips.get("H100"), vendor_colour("H100"))}
    figure = _frame(6.2, 2.8, left=0.12)
    ax = figure.add_subplot()
    lines = {name: ax.plot(counts, [1.0] * len(counts), "o-", color=colour, label=name,
                           markersize=4)[0] for name, (_, colour) in systems.items()}
    ax.axhline(1.0, color="#555", linestyle="--", linewidth=1)
    ax.text(counts[0], 1.3, "comm.-bound ↑", fontsize=8, color="#555")
    log_ticks(ax, "x", [8, 64, 1024, 8960], ["8", "64", "1,024", "8,960"])
    log_ticks(ax, "y", [0.001, 0.01, 0.1, 1, 10, 100])
    ax.set_ylim(0.0003, 300)
    ax.set_xlabel("chips (data parallel, fixed global batch)")
    ax.set_ylabel("all-reduce ÷ backward time")
    title = ax.set_title("")
    # The log axes cost most of a render: their ticks are drawn as one marker line and texts,
    # the axis labels and the key (instead of a legend) placed once (widgets/_axes.py).
    fixed_ticks(ax)
    box = ax.get_position()
    key_row(figure, [(name, colour, "●") for name, (_, colour) in systems.items()],
            x=box.x1 - 0.01, y=box.y0 + 0.06, fontsize=7, ha="right")

    def render(values: dict) -> View:
        ratios, crossing = {}, {}
        for name, (chip, _) in systems.items():
            by_count = parallel.dp_communication_ratios(values["model"], chip, counts,
                                                        batch_tokens=values["batch"])
            series = list(by_count.values())
            lines[name].set_ydata(series)
            ratios[name] = dict(zip(counts, series))
            crossing[name] = next((n for n, r in zip(counts, series) if r > 1), None)
        title.set_text(f"{values['model']}, {values['batch'] / 1e6:g}M-token batch")
        rows = [(f"{name}: communication-bound from",
                 f"{crossing[name]:,} chips" if crossing[name] else "never, up to 16,384")
                for name in systems]
        return View(figure=figure, text=table_html(rows),
                    result=SimpleNamespace(ratios=ratios, first_communication_bound=crossing))

    return Explorer(controls, render, title="When does gradient communication set the pace?",
                    columns=2)


# -- 3. published runs --------------------------------------------------------------------------

def published_runs(comparisons: Sequence[Any]) -> Explorer:
    """Pick a published run: its stated inputs went into ``training.estimate``; the chart puts
    our compute-only figure beside the one its authors reported.

    Args:
        comparisons: one per run, each with the fields of ``validation.totals``'
            PublishedComparison (``run``, ``estimate``, ``unit``, ``ours``, ``reported``,
            ``ratio``); lesson 07 passes ``[compare_published(r) for r in PUBLISHED_RUNS]``.
    """
    comparisons = list(comparisons)
    if not comparisons:
        raise ValueError("comparisons must hold at least one published run's comparison")
    controls = {"run": W.Dropdown(options=[(c.run.name, i) for i, c in enumerate(comparisons)],
                                  value=min(1, len(comparisons) - 1),
                                  description="published run", style=STYLE,
                                  layout=W.Layout(width="420px"))}
    figure = _frame(6.4, 2.4, left=0.3)
    ax = figure.add_subplot()
    bars = ax.barh(["ours: compute only", "reported"], [1.0, 1.0], color=["#455a64", "#ef6c00"])
    labels = [ax.text(1, i, "", va="center", fontsize=8) for i in range(2)]
    ax.invert_yaxis()
    title = ax.set_title("")
    ax.set_xlabel("GPU-hours")  # its text follows the run's unit
    x_ticks = _fast_ticks(ax, ["ours: compute only", "reported"])

    def render(values: dict) -> View:
        result = comparisons[values["run"]]
        run, est = result.run, result.estimate
        ours, theirs, unit = result.ours, result.reported, result.unit
        for bar, text, value in zip(bars, labels, (ours, theirs)):
            bar.set_width(value)
            text.set_x(value)
            text.set_text(f" {value:,.3g}")
        ax.set_xlim(0, max(ours, theirs) * 1.3)
        x_ticks.update()
        ax.set_xlabel(unit)
        title.set_text(f"{run.name}: reported ÷ ours = {result.ratio:.2f}")
        rows = [("inputs", f"{run.model}, {run.tokens:.3g} tokens, {run.n_chips:,} × "
                           f"{est.chip}, MFU {run.mfu:.0%}"),
                ("FLOPs: ours / reported", f"{est.flops:.3g} / "
                 + (f"{run.reported_flops:.3g}" if run.reported_flops else "not reported")),
                ("compute-only days (ours)", f"{est.days:,.1f}"),
                ("compute-only chip-hours (ours)", f"{est.chip_hours:,.3g}"),
                ("reported", f"{theirs:,.3g} {unit}"),
                ("why they differ", run.note),
                ("inputs from", run.inputs_source), ("reported figure from", run.reported_source)]
        return View(figure=figure, text=table_html(rows), result=result)

    return Explorer(controls, render, title="Published training runs against the model", columns=1)


# -- check yourself and the worked problem ------------------------------------------------------

def training_quiz() -> MultipleChoice:
    """What happens to a data-parallel run's step when the chip count grows at a fixed batch."""
    return multiple_choice(
        "You keep the global batch fixed and go from 1,024 to 16,384 H100s (beyond the NVLink node, "
        "over the nodes' NICs). What happens to each optimizer step?",
        ["Both the backward pass and the gradient all-reduce get about 16× shorter, since each "
         "chip now holds a sixteenth of the work.",
         "The backward pass gets about 16× shorter but the all-reduce does not, so communication "
         "can set the pace.",
         "The all-reduce gets 16× longer because there are 16× more chips.",
         "Nothing changes: the model FLOPs are the same."],
        correct=1,
        feedback=["Each chip still sends about 2× the gradient bytes in a ring all-reduce, however "
                  "many chips share the work.",
                  "Per-chip compute shrinks with the tokens per chip; the ring all-reduce moves "
                  "2(n−1)/n × the gradients per chip, nearly constant. Fewer tokens per chip than "
                  "the critical number and communication wins.",
                  "A ring all-reduce's per-chip traffic is 2(n−1)/n of the gradients: it barely "
                  "grows with n.",
                  "Total FLOPs are the same, but they are spread over more chips: per-step compute "
                  "time falls while communication does not."])


def training_worked_problem() -> WorkedProblem:
    """Llama-3-8B on 15T tokens on 1,024 H100s at 40% MFU: FLOPs, days, GPU-hours and dollars at
    two price sources — computed with ``training.estimate`` and ``price`` when revealed."""
    question = ("Train llama-3-8b (take N from the catalog) on 15 trillion tokens with 1,024 H100s "
                "at 40% MFU. (1) How many FLOPs? (2) How many days, compute only? (3) How many "
                "GPU-hours, and what do they cost at the catalog (Google Cloud) price and at "
                "Lambda's? (4) Would the run still fit in time if MFU fell to 30%?")

    def answer() -> str:
        est = training.estimate(model="llama-3-8b", tokens=15e12, chip="H100", n_chips=1024,
                                mfu=0.4)
        lambda_price = min(p.usd_per_hour for p in price.alternatives("H100"))
        lambda_usd = price.usd("H100", est.seconds, 1024, usd_per_hour=lambda_price)
        slower = training.estimate(model="llama-3-8b", tokens=15e12, chip="H100", n_chips=1024,
                                   mfu=0.3)
        if est.usd is None or lambda_usd is None:  # the H100 has a catalog price: unreachable
            raise ValueError("the worked problem needs the H100's catalog and Lambda prices")
        return (f"<ol><li>6·N·D = 6 × {est.params:.3g} × 1.5e13 = <b>{est.flops:.3g} FLOPs</b>."
                f"</li><li>{est.flops:.3g} / (1,024 × {si(est.peak_flops_per_chip, 'FLOP/s')} × "
                f"0.4) = {est.seconds:.3g} s = <b>{est.days:,.1f} days</b>.</li>"
                f"<li>{est.chip_hours:,.0f} GPU-hours: <b>${est.usd:,.0f}</b> at the catalog "
                f"price, <b>${lambda_usd:,.0f}</b> at ${lambda_price:.2f}/h — the price source "
                f"moves the bill {est.usd / lambda_usd:.1f}×, more than any MFU tuning.</li>"
                f"<li>At 30% MFU: {slower.days:,.1f} days (time scales as 1/MFU).</li></ol>")

    return WorkedProblem(question, answer)
