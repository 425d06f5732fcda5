"""Lesson 07's layout explorer: lay a model out over many chips and see where one step goes.

Every number comes from :mod:`accelkit.parallel` (``train_step``, ``best_layouts``,
``hardware_flops_utilization``, ``critical_tokens_per_chip``); this module gathers the controls
into a :class:`~accelkit.parallel.Layout` and draws the result.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as W

from accelkit import chips, models, parallel
from accelkit.widgets._axes import Ticks, key_row
from accelkit.widgets._base import STYLE, Explorer, View, new_figure, table_html

__all__ = ["layout_explorer"]

_MODELS = tuple(n for n in models.names() if isinstance(models.get(n), models.Transformer))
_CHIPS = ("v4", "v5e", "v5p", "v6e", "7x", "A100", "H100", "H200", "B200")
_COUNTS = (8, 16, 64, 256, 512, 1024, 2048, 4096, 6144, 8192, 8960, 16384)
_PER_CHIP = (128, 256, 448, 512, 1024, 2048, 4096, 8192)
_TP = (1, 2, 4, 8, 16, 32, 64)
_PP = (1, 2, 4, 5, 7, 8, 16, 32, 35)
_EP = (1, 2, 4, 8, 16, 32, 64)
_MICRO = (("auto", None), ("256", 256), ("512", 512), ("1,024", 1024), ("2,048", 2048),
          ("4,096", 4096), ("8,192", 8192), ("16,384", 16384))
# Categories, not vendors: kept clear of the TPU blue and GPU green (widgets/_base.py).
_COLOURS = {"compute": "#455a64", "exposed communication": "#c62828", "pipeline bubble": "#f9a825",
            "weights + grads + optimizer": "#6a1b9a", "activations": "#ce93d8"}


@lru_cache(maxsize=64)
def _best(model: str, chip: str, n: int, batch: int, whole: bool) -> parallel.TrainStep | None:
    """The fastest fitting layout. Kept for the 64 most recent settings: the exhaustive search
    is the one slow call (hundreds of ms), and a learner toggling back to a setting should not
    wait for it again."""
    found = parallel.best_layouts(model, chip, n, batch, top=1, whole_sequences=whole)
    return found[0] if found else None


def _layout(values: dict, n: int) -> parallel.Layout:
    tp, pp, ep = values["tp"], values["pp"], values["ep"]
    inner = tp * pp * ep
    if n % inner:
        raise ValueError(f"tp·pp·ep = {tp}·{pp}·{ep} = {inner} must divide the {n:,} chips")
    rest = n // inner
    data = {"fsdp": rest, "dp": 1} if values["rest"] == "fsdp" else {"fsdp": 1, "dp": rest}
    return parallel.Layout(tp=tp, pp=pp, ep=ep, microbatch_tokens=values["microbatch"],
                           recompute=values["recompute"], **data)


def layout_explorer() -> Explorer:
    """Pick a model, a chip, a chip count and the degrees (or let ``best_layouts`` choose): see
    one step split into compute, exposed communication and pipeline bubble, memory per chip
    against HBM, MFU and HFU, and every collective with the network that carried it."""
    controls = {
        "model": W.Dropdown(options=_MODELS, value="llama-3-70b", description="model",
                            style=STYLE),
        "chip": W.Dropdown(options=[(chips.get(c).name, chips.get(c).name) for c in _CHIPS],
                           value=chips.get("v5p").name, description="chip", style=STYLE),
        "n_chips": W.SelectionSlider(options=_COUNTS, value=8960, description="chips",
                                     continuous_update=False, style=STYLE),
        "per_chip": W.SelectionSlider(options=_PER_CHIP, value=448,
                                      description="batch per chip (tokens)",
                                      continuous_update=False, style=STYLE),
        "mode": W.ToggleButtons(options=[("set the degrees", "manual"),
                                         ("best_layouts", "best")],
                                value="manual", description="layout", style=STYLE),
        "rest": W.ToggleButtons(options=[("FSDP", "fsdp"), ("DP", "dp")], value="fsdp",
                                description="remaining chips are", style=STYLE),
        "tp": W.Dropdown(options=_TP, value=1, description="tp", style=STYLE),
        "pp": W.Dropdown(options=_PP, value=1, description="pp", style=STYLE),
        "ep": W.Dropdown(options=_EP, value=1, description="ep (MoE)", style=STYLE),
        "microbatch": W.Dropdown(options=_MICRO, value=None, description="micro-batch (tokens)",
                                 style=STYLE),
        "recompute": W.ToggleButtons(options=list(parallel.RECOMPUTE), value="none",
                                     description="recompute", style=STYLE),
        "split": W.Checkbox(value=True, description="best: micro-batches may split sequences",
                            style=STYLE),
    }
    # One fixed axis: the step as shares of its time, memory as a share of the chip's HBM
    # (dashed line = 100%). Cheap to redraw: its ticks are one marker line and texts and its
    # keys texts placed once (widgets/_axes.py).
    figure = new_figure(6.6, 1.9, margins={"left": 0.2, "bottom": 0.22, "top": 0.78})
    ax = figure.add_subplot()
    rows_y = (1, 0)
    time_bars = [ax.barh([rows_y[0]], [0.0], left=[0.0], color=_COLOURS[k], label=k)[0]
                 for k in ("compute", "exposed communication", "pipeline bubble")]
    mem_bars = [ax.barh([rows_y[1]], [0.0], left=[0.0], color=_COLOURS[k], label=k)[0]
                for k in ("weights + grads + optimizer", "activations")]
    ax.axvline(1.0, color="#333", linestyle="--", linewidth=1.2)
    ax.set_xlim(0, 1.6)
    ax.set_ylim(-0.6, 1.6)
    Ticks(ax, "y", fontsize=8).set(list(rows_y), ["step time", "memory ÷ HBM"])
    Ticks(ax, "x", fontsize=7).set([0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5],
                                   ["0", "25%", "50%", "75%", "100%", "125%", "≥150%"])
    box = ax.get_position()
    middle = box.x0 + 0.45 * box.width
    key_row(figure, [(k, _COLOURS[k]) for k in ("compute", "exposed communication",
                                                  "pipeline bubble")], middle, 0.935, fontsize=7)
    key_row(figure, [(k, _COLOURS[k]) for k in ("weights + grads + optimizer", "activations")],
            middle, 0.855, fontsize=7)
    # The figures themselves are in the table under the chart (text is the costliest artist).

    def render(values: dict) -> View:
        chip = chips.get(values["chip"])
        n = values["n_chips"]
        batch = n * values["per_chip"]
        if values["mode"] == "best":
            step = _best(values["model"], chip.name, n, batch, not values["split"])
            if step is None:
                raise ValueError(f"no layout of {values['model']} fits on {n:,} × {chip.name} "
                                 f"at {values['per_chip']} tokens per chip")
        else:
            step = parallel.train_step(values["model"], chip, _layout(values, n), batch)
        parts = (step.compute_seconds, step.exposed_communication_seconds, step.bubble_seconds)
        left = 0.0
        for bar, value in zip(time_bars, parts):
            share = value / step.seconds if step.seconds else 0.0
            bar.set_x(left)
            bar.set_width(share)
            left += share
        hbm = step.hbm_bytes / 1e9
        shares = (step.state_bytes_per_chip / step.hbm_bytes,
                  step.activation_bytes_per_chip / step.hbm_bytes)
        mem_bars[0].set_width(min(shares[0], 1.6))
        mem_bars[1].set_x(min(shares[0], 1.6))
        mem_bars[1].set_width(max(0.0, min(shares[0] + shares[1], 1.6) - min(shares[0], 1.6)))
        hfu = parallel.hardware_flops_utilization(step)
        critical = parallel.critical_tokens_per_chip(step.model, chip, step.layout)
        rows = [("layout", str(step.layout)),
                ("global batch", f"{step.batch_tokens:,} tokens, {step.microbatches:,} "
                                 f"micro-batches of {step.microbatch_tokens:,}"),
                ("step", f"{step.seconds:.3g} s = compute {step.compute_seconds:.3g} + exposed "
                         f"communication {step.exposed_communication_seconds:.3g} + bubble "
                         f"{step.bubble_seconds:.3g}"),
                ("MFU / HFU", f"{step.mfu:.1%} / {hfu:.1%}"),
                ("memory per chip", f"{step.memory_bytes_per_chip / 1e9:,.1f} GB of "
                                    f"{hbm:,.0f} GB" + ("" if step.fits else " — does NOT fit")),
                ("critical tokens per chip per micro-batch (FSDP/DP hide above it)",
                 f"{critical:,.0f}" if critical else "no data-parallel axis")]
        header = ("<tr><th>collective</th><th>kind</th><th>group (per domain)</th>"
                  "<th>network</th><th>calls</th><th>seconds</th><th>exposed</th></tr>")
        body = "".join(
            f"<tr><td>{c.name}</td><td>{c.kind}</td><td>{c.group_chips:,} "
            f"({c.chips_per_domain:,})</td><td>{c.network}</td><td>{c.calls_per_step:,.0f}</td>"
            f"<td>{c.seconds:.3g}</td><td>{c.exposed_seconds:.3g}</td></tr>"
            for c in step.collectives) or "<tr><td colspan=7>none (one chip)</td></tr>"
        text = (table_html(rows) + "<table style='font-size:90%'>" + header + body + "</table>")
        return View(figure=figure, text=text, result=step)

    # The exhaustive search behind "best_layouts" takes a few hundred ms: run it once at build
    # for the starting model, chip and batch (memoised), so that the first press of the toggle
    # only draws. Other settings are searched when chosen.
    start = {name: control.value for name, control in controls.items()}
    _best(start["model"], start["chip"], start["n_chips"], start["n_chips"] * start["per_chip"],
          not start["split"])
    return Explorer(controls, render, title="Lay out a training step", columns=3)
