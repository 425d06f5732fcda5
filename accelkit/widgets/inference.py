"""Lesson 08's widgets: prefill vs decode, the KV cache, batch vs latency and throughput, cost.

Every number comes from :mod:`accelkit.inference` (and :mod:`accelkit.scenarios` for the chip
count a replica needs); these functions only gather inputs and draw.
"""

from __future__ import annotations


import ipywidgets as W
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator
from matplotlib.transforms import ScaledTranslation

from accelkit import chips, inference, models, price, roofline, scenarios, serving
from accelkit.widgets.quiz import MultipleChoice, multiple_choice
from accelkit.widgets._axes import Ticks, key_row
from accelkit.widgets._base import (INK, STYLE, WARNING_COLOUR, Explorer, View, chip_label,
                                    compact_number, new_figure, si, table_html, vendor_colour,
                                    vendor_key)
from accelkit.widgets._worked import WorkedProblem

__all__ = ["batch_latency_explorer", "inference_quiz", "inference_worked_problem",
           "kv_cache_explorer", "prefill_decode_explorer", "serving_cost_explorer",
           "serving_load_explorer"]

LANGUAGE_MODELS = ("llama-3-8b", "llama-2-13b", "llama-3-70b", "llama-3.1-405b")
SERVING_CHIPS = ("TPU v5e", "TPU v6e (Trillium)", "TPU v5p", "NVIDIA L4", "NVIDIA A100 (SXM 80GB)",
                 "NVIDIA H100 (SXM)", "NVIDIA H200 (SXM)", "NVIDIA B200 (HGX)")
#: Batches swept by the plots: powers of two and the steps between them.
BATCHES = np.unique(np.round(np.logspace(0, 11, 45, base=2)).astype(int))
_KEY = ("<span style='color:#6a1b9a'>━ latency (left axis)</span> · "
        "<span style='color:#00838f'>━ throughput (right axis)</span> · "
        f"<span style='color:{WARNING_COLOUR}'>╌ latency target, ● best batch under it</span> · "
        "<span style='color:#757575'>┆ B*, where the matmuls turn compute-bound</span> · "
        "dotted curves: batches that do not fit")


def _log(ax, axes: str = "xy") -> None:
    """Log scale on the named axes with a few plain labelled ticks and no minor ticks."""
    for name in axes:
        axis = ax.xaxis if name == "x" else ax.yaxis
        (ax.set_xscale if name == "x" else ax.set_yscale)("log")
        axis.set_major_locator(LogLocator(base=10, numticks=5))
        axis.set_minor_locator(NullLocator())
        axis.set_major_formatter(FuncFormatter(lambda x, _pos: compact_number(x)))


def _fast_log(ax, axes: str = "xy", widest: str = "100k",
              side: str | None = None) -> list[Ticks]:
    """The named axes' ticks as :func:`_log` draws them, as one marker line and texts
    (:mod:`accelkit.widgets._axes`): the axis labels are placed once, leaving room for a y tick
    label as wide as ``widest``; call ``update()`` on each returned ticks after setting the
    limits."""
    return [Ticks(ax, name, side=side, locator=LogLocator(base=10, numticks=5),
                  format=compact_number, widest=widest if name == "y" else None)
            for name in ("x", "y") if name in axes]


def _label(chip_name: str) -> str:
    """'NVIDIA H100 (SXM)' -> 'H100', 'TPU v6e (Trillium)' -> 'v6e'."""
    return chip_label(chips.get(chip_name).name, family=False)


def _dropdown(options, value, description):
    return W.Dropdown(options=options, value=value, description=description, style=STYLE)


def prefill_decode_explorer(model: str = "llama-3-8b", chip: str = "NVIDIA H100 (SXM)") -> Explorer:
    """Prefill and one decode step of the same model on a chip's roofline: where each lands."""
    controls = {
        "model": _dropdown(LANGUAGE_MODELS, model, "model"),
        "chip": _dropdown(SERVING_CHIPS, chips.get(chip).name, "chip"),
        "prompt": W.SelectionSlider(options=[128, 256, 512, 1024, 2048, 4096, 8192], value=2048,
                                    description="prompt tokens", continuous_update=False,
                                    style=STYLE),
        "batch": W.SelectionSlider(options=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512], value=1,
                                   description="batch", continuous_update=False, style=STYLE),
    }
    intensities = np.logspace(-1, 4.5, 60)
    # One figure, built once; renders move its lines (new axes cost ~30 ms a render).
    figure = new_figure(6.4, 3.0)
    ax = figure.add_subplot()
    _log(ax)
    roof, = ax.plot(intensities, intensities, color="#455a64", label="roofline")
    points = {phase: ax.plot([], [], "o", markersize=10, color=colour, label=phase)[0]
              for phase, colour in (("prefill", "#e65100"), ("decode step", "#6a1b9a"))}
    peak_line = ax.axhline(1.0, color="#9e9e9e", linestyle=":", linewidth=1)
    ax.set_xlim(intensities[0], intensities[-1])
    ax.set_xlabel("arithmetic intensity (FLOPs per byte)")
    ax.set_ylabel("achieved FLOP/s")
    ticks = _fast_log(ax, "xy", widest="100P")
    # The key, placed once (a legend re-packs its boxes on every draw), under the flat roof.
    box = ax.get_position()
    key_row(figure, [("roofline of the replica", "#455a64", "━"),
                     ("prefill", "#e65100", "●"), ("decode step", "#6a1b9a", "●")],
            x=box.x0 + 0.7 * box.width, y=box.y0 + 0.07)

    def render(v: dict) -> View:
        n = scenarios.replica_chips(v["model"], v["chip"], headroom=1.5)
        p = inference.prefill(v["model"], v["chip"], n, v["batch"], v["prompt"])
        d = inference.decode_step(v["model"], v["chip"], n, v["batch"], v["prompt"])
        peak = n * chips.get(v["chip"]).peak_flops("bf16")
        attainable = n * roofline.curve(v["chip"], "bf16", intensities)
        roof.set_ydata(attainable)
        for r, line in ((p, points["prefill"]), (d, points["decode step"])):
            line.set_data([r.arithmetic_intensity], [r.flops / r.seconds])
        peak_line.set_ydata([peak, peak])
        ax.set_ylim(attainable[0] / 2, peak * 2)
        for axis_ticks in ticks:
            axis_ticks.update()
        ax.set_title(f"{v['model']} on {n} x {_label(v['chip'])}, batch {v['batch']}", fontsize=9)
        text = table_html([
            ("chips in the replica (weights fit 1.5x)", f"{n}"),
            ("prefill: time to first token", f"{p.seconds * 1e3:,.1f} ms ({p.bound}-bound)"),
            ("prefill: intensity", f"{p.arithmetic_intensity:,.0f} FLOPs/byte"),
            ("decode: time per generated token", f"{d.seconds * 1e3:,.2f} ms ({d.bound}-bound)"),
            ("decode: intensity", f"{d.arithmetic_intensity:,.1f} FLOPs/byte"),
            ("decode: share of peak used", f"{d.flops / d.seconds / peak:.1%}"),
        ])
        return View(figure=figure, text=text, result=(p, d), extras={"n_chips": n})

    return Explorer(controls, render, title="Prefill vs decode on the roofline")


def kv_cache_explorer(model: str = "llama-3-70b", chip: str = "NVIDIA H100 (SXM)") -> Explorer:
    """Weights plus KV cache against the HBM of n chips, as the context and batch grow."""
    controls = {
        "model": _dropdown(LANGUAGE_MODELS, model, "model"),
        "chip": _dropdown(SERVING_CHIPS, chips.get(chip).name, "chip"),
        "n_chips": W.SelectionSlider(options=[1, 2, 4, 8, 16, 32, 64], value=8,
                                     description="chips", continuous_update=False, style=STYLE),
        "context": W.SelectionSlider(options=[512, 1024, 2048, 4096, 8192, 16384, 32768, 131072],
                                     value=8192, description="context tokens",
                                     continuous_update=False, style=STYLE),
        "batch": W.SelectionSlider(options=[1, 4, 16, 32, 64, 128, 256, 512], value=32,
                                   description="batch", continuous_update=False, style=STYLE),
        "kv_dtype": _dropdown(("bf16", "fp8", "int8", "int4"), "bf16", "KV format"),
    }

    # One figure, built once; renders resize the bars.
    figure = new_figure(6.4, 2.7)
    ax = figure.add_subplot()
    weights_bar = ax.barh([0], [1.0], color="#546e7a", label="weights")[0]
    kv_bar = ax.barh([0], [1.0], left=[1.0], color="#ef6c00", label="KV cache")[0]
    hbm_line = ax.axvline(1.0, color=WARNING_COLOUR, linewidth=2, label="HBM of the chips")
    ax.set_yticks([])
    ax.set_xlabel("GB (10^9 bytes; vendors' '80 GB' of HBM is 80 GiB = 85.9 GB)")
    gb_ticks = Ticks(ax, "x", locator=MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10]),
                     format=lambda v: f"{v:g}")
    # The key above the axes, placed once (a legend re-packs its boxes on every draw, and
    # inside the axes it covered long bars).
    key_row(figure, [("weights", "#546e7a"), ("KV cache", "#ef6c00"),
                     ("HBM", WARNING_COLOUR, "┃")],
            x=ax.get_position().x1, y=ax.get_position().y1 + 0.06, ha="right")

    def render(v: dict) -> View:
        m = models.get(v["model"])
        d = inference.decode_step(m, v["chip"], v["n_chips"], v["batch"], v["context"],
                                  kv_dtype=v["kv_dtype"])
        limit = inference.max_batch(m, v["chip"], v["n_chips"], v["context"],
                                    kv_dtype=v["kv_dtype"])
        weights_bar.set_width(d.weight_bytes / 1e9)
        kv_bar.set_x(d.weight_bytes / 1e9)
        kv_bar.set_width(d.kv_cache_bytes / 1e9)
        hbm_line.set_xdata([d.hbm_bytes / 1e9] * 2)
        ax.set_xlim(0, 1.1 * max(d.memory_bytes, d.hbm_bytes) / 1e9)
        gb_ticks.update()
        ax.set_title("fits" if d.fits else "does NOT fit", color=INK if d.fits else WARNING_COLOUR)
        text = table_html([
            ("KV cache per token",
             f"{inference.kv_cache_bytes(m, 1, 1, v['kv_dtype']) / 1024:,.0f} KiB"),
            ("KV cache per sequence", si(d.kv_cache_bytes / v["batch"], "B")),
            ("KV cache for the batch", si(d.kv_cache_bytes, "B")),
            ("weights", si(d.weight_bytes, "B")),
            ("HBM per chip", chips.get(v["chip"]).hbm_label),
            ("largest batch that fits", f"{limit:,}"),
            ("time per decode step", f"{d.seconds * 1e3:,.1f} ms"),
        ], caption=d.message)
        return View(figure=figure, text=text, result=d, extras={"max_batch": limit})

    return Explorer(controls, render, title="The KV cache against memory", columns=3)


def batch_latency_explorer(model: str = "llama-3-70b", chip: str = "TPU v5e",
                           n_chips: int = 16) -> Explorer:
    """Decode latency and throughput against batch on twin axes, with a latency target."""
    controls = {
        "model": _dropdown(LANGUAGE_MODELS, model, "model"),
        "chip": _dropdown(SERVING_CHIPS, chips.get(chip).name, "chip"),
        "n_chips": W.SelectionSlider(options=[1, 2, 4, 8, 16, 32, 64], value=n_chips,
                                     description="chips", continuous_update=False, style=STYLE),
        "context": W.SelectionSlider(options=[0, 512, 2048, 8192, 32768], value=2048,
                                     description="context tokens", continuous_update=False,
                                     style=STYLE),
        "target_ms": W.SelectionSlider(options=[5, 10, 15, 20, 30, 50, 100], value=30,
                                       description="latency target (ms/token)",
                                       continuous_update=False, style=STYLE),
        "weights": _dropdown(("bf16", "int8"), "bf16", "weights"),
    }
    # One figure, built once; each render only moves its lines (building axes costs ~40 ms).
    figure = new_figure(6.6, 3.2)
    ax = figure.add_subplot()
    right = ax.twinx()
    _log(ax)
    _log(right, "y")
    art: dict[str, Line2D] = {}
    art["lat"], = ax.plot([], [], "-", color="#6a1b9a", label="latency (ms/token)")
    art["lat_no"], = ax.plot([], [], ":", color="#6a1b9a", alpha=0.5)
    art["target"] = ax.axhline(1, color=WARNING_COLOUR, linestyle="--", linewidth=1.2,
                               label="latency target")
    art["best"], = ax.plot([], [], "o", color=WARNING_COLOUR, markersize=9,
                           label="best batch under target")
    art["turn"] = ax.axvline(1, color="#757575", linestyle=":", linewidth=1,
                             label="B*: matmuls compute-bound")
    art["rate"], = right.plot([], [], "-", color="#00838f", label="throughput")
    art["rate_no"], = right.plot([], [], ":", color="#00838f", alpha=0.5)
    ax.set_xlim(BATCHES[0], BATCHES[-1])
    ax.set_xlabel("batch (sequences decoded together)")
    ax.set_ylabel("latency per token (ms)", color="#6a1b9a")
    right.set_ylabel("throughput (tokens/s)", color="#00838f")
    # No legend: drawing one costs ~15 ms a render; the key is in the HTML caption instead.
    figure.subplots_adjust(right=0.87, bottom=0.15, top=0.91)  # room for the twin axis label
    ticks = [*_fast_log(ax, "xy", widest="100k"),
             *_fast_log(right, "y", side="right")]

    def render(v: dict) -> View:
        kv = v["weights"]
        args = (v["model"], v["chip"], v["n_chips"], v["context"])
        # Exact values from the library; the plot's grid is only where the curves are sampled.
        limit = inference.max_batch(*args, weight_dtype=v["weights"], kv_dtype=kv)
        turn = inference.compute_bound_batch(*args, weight_dtype=v["weights"], kv_dtype=kv)
        turn_mm = inference.compute_bound_batch(*args, weight_dtype=v["weights"], kv_dtype=kv,
                                                kinds=("matmul",))
        try:
            best = inference.best_batch(*args, v["target_ms"] / 1e3, weight_dtype=v["weights"],
                                        kv_dtype=kv)
            best_text = (f"batch {best.batch:,}: {best.seconds * 1e3:,.1f} ms/token, "
                         f"{best.tokens_per_second:,.0f} tokens/s")
        except ValueError as error:
            # The library's message names its parameter (max_seconds_per_token), as an API
            # user needs; a learner set a slider, so the row speaks of the slider's target.
            best, best_text = None, str(error)
            if limit >= 1:
                one = inference.decode_step(v["model"], v["chip"], v["n_chips"], 1, v["context"],
                                            weight_dtype=v["weights"], kv_dtype=kv)
                if one.seconds * 1e3 > v["target_ms"]:
                    best_text = (f"none: even batch 1 takes {one.seconds * 1e3:,.2f} ms per "
                                 f"token, more than the {v['target_ms']} ms target (add chips"
                                 + (" or use int8 weights)" if v["weights"] != "int8" else ")"))
            else:
                best_text = "none: the weights alone do not fit"
        # Sample the exact largest fitting batch, the first that does not fit and the best
        # batch too, so the solid curve ends where the table says and the dot sits on it.
        top = max(int(BATCHES[-1]), best.batch if best else 1)
        exact = [b for b in (limit, limit + 1, best.batch if best else 0) if 1 <= b <= top]
        batches = np.union1d(BATCHES, np.array(exact, dtype=BATCHES.dtype))
        sweep = inference.decode_sweep(v["model"], [v["chip"]], batches, v["n_chips"],
                                       v["context"], weight_dtype=v["weights"], kv_dtype=kv)
        ms, rate, fits = sweep.seconds[0] * 1e3, sweep.tokens_per_second[0], sweep.fits[0]
        # the dotted part starts at the last batch that fits, so the two parts join
        beyond = ~fits
        if fits.any() and beyond.any():
            beyond[np.flatnonzero(fits)[-1]] = True
        art["lat"].set_data(batches[fits], ms[fits])
        art["lat_no"].set_data(batches[beyond], ms[beyond])
        art["rate"].set_data(batches[fits], rate[fits])
        art["rate_no"].set_data(batches[beyond], rate[beyond])
        ax.set_xlim(batches[0], top)
        art["target"].set_ydata([v["target_ms"], v["target_ms"]])
        for axis, values in ((ax, np.append(ms, v["target_ms"])), (right, rate)):
            axis.set_ylim(values.min() / 1.5, values.max() * 1.5)
        for axis_ticks in ticks:
            axis_ticks.update()
        art["turn"].set_visible(bool(np.isfinite(turn_mm)))
        if np.isfinite(turn_mm):
            art["turn"].set_xdata([turn_mm, turn_mm])
        art["best"].set_data([best.batch] if best else [], [best.seconds * 1e3] if best else [])
        ax.set_title(f"{v['n_chips']} x {_label(v['chip'])} (dotted: does not fit)", fontsize=9)
        text = table_html([
            ("largest batch under the target", best_text),
            ("batch where the matmuls turn compute-bound", "never" if not np.isfinite(turn_mm)
             else f"{turn_mm:,.0f}"),
            ("batch where the whole step turns compute-bound",
             "never (KV-cache reads grow with batch)" if not np.isfinite(turn) else f"{turn:,.0f}"),
            ("largest batch that fits", f"{limit:,}" if limit else
             "none: the weights alone do not fit"),
        ], caption=_KEY)
        return View(figure=figure, text=text, result=best,
                    extras={"sweep": sweep, "max_batch": limit, "compute_bound_batch": turn,
                            "matmul_compute_bound_batch": turn_mm})

    return Explorer(controls, render, title="Batch against latency and throughput", columns=3)


#: Points from a line's last point to its chip's label, and kept clear between two labels and
#: at the axes' right edge.
_LABEL_OFFSET_POINTS, _LABEL_MARGIN_POINTS = 3.0, 2.0


def _separate(wanted: np.ndarray, left: np.ndarray, right: np.ndarray, gap: float,
              low: float, high: float) -> np.ndarray:
    """Heights for labels wanted at ``wanted``, spanning ``left``-``right`` across (any one
    unit): the heights nearest the wanted ones (least squares) with any two labels that share
    some of their span at least ``gap`` apart, in their wanted order, and all within
    ``[low, high]``.

    Only labels that would meet across are kept apart, so a crowd at one end of a plot does
    not push away a label beside it. The nearest heights are the projection of the wanted
    ones onto those constraints, found by Hildreth's method (one constraint at a time, each
    with its own non-negative multiplier; exact for a handful of labels in a few sweeps)."""
    wanted = np.asarray(wanted, dtype=float)
    count = len(wanted)
    order = sorted(range(count), key=lambda k: (wanted[k], k))
    rank = {k: r for r, k in enumerate(order)}
    # Each constraint: (upper label, lower label or None, least difference); a label's bound
    # is a constraint against a fixed height (None).
    rows: list[tuple[int | None, int | None, float]] = [
        (j, i, gap) for i in range(count) for j in range(count)
        if rank[i] < rank[j] and left[i] < right[j] and left[j] < right[i]]
    rows += [(i, None, low) for i in range(count)] + [(None, i, -high) for i in range(count)]
    placed = wanted.copy()
    multipliers = [0.0] * len(rows)
    for _sweep in range(1000):
        moved = 0.0  # the largest step of this sweep: none left at the optimum
        for k, (up, down, least) in enumerate(rows):
            value = (placed[up] if up is not None else 0.0) - \
                (placed[down] if down is not None else 0.0)
            norm = (up is not None) + (down is not None)
            step = max((least - value) / norm, -multipliers[k])
            if step:
                multipliers[k] += step
                if up is not None:
                    placed[up] += step
                if down is not None:
                    placed[down] -= step
            moved = max(moved, abs(step))
        if moved <= 1e-9 * gap:
            break
    return placed


def serving_cost_explorer(model: str = "llama-3-70b") -> Explorer:
    """Dollars per million generated tokens against batch, one line per chip, each ending at
    the largest batch that fits (``inference.cost_curve``)."""
    controls = {
        "model": _dropdown(LANGUAGE_MODELS[:3], model, "model"),
        "context": W.SelectionSlider(options=[512, 2048, 8192], value=2048,
                                     description="context tokens", continuous_update=False,
                                     style=STYLE),
        "price": _dropdown((("catalog list price", "list"), ("lowest sourced price", "lowest")),
                           "list", "price"),
    }
    priced = [c for c in SERVING_CHIPS if chips.get(c).usd_per_hour is not None]

    # One figure, built once; renders move the lines and labels (new axes cost ~30 ms).
    figure = new_figure(6.6, 3.2, margins={"right": 0.95})
    ax = figure.add_subplot()
    _log(ax)
    # Labels at (batch in data, height in axes fraction), a few points right of the line's end.
    beside = ax.get_xaxis_transform() + ScaledTranslation(_LABEL_OFFSET_POINTS / 72, 0,
                                                          figure.dpi_scale_trans)
    shade = {"tpu": 0, "gpu": 0}
    lines, ends = {}, {}
    for name in priced:
        kind = chips.get(name).kind
        colour = vendor_colour(name, shade[kind])
        shade[kind] += 1
        lines[name] = ax.plot([], [], color=colour, label=_label(name),
                              linestyle="-" if kind == "tpu" else "--")[0]
        # Labelled at the line's end (a legend of eight entries crowded the plot).
        # (on a pale box: a label may sit over another chip's line)
        ends[name] = ax.text(1, 0.5, _label(name), color=colour, fontsize=7, va="center",
                             ha="left", transform=beside,
                             bbox={"boxstyle": "square,pad=0.1", "facecolor": "white",
                                   "edgecolor": "none", "alpha": 0.8})
    vendor_key(figure)
    ax.set_xlabel("batch")
    ax.set_ylabel("USD per million tokens")
    ax.set_title("solid: TPU, dashed: GPU", fontsize=9)
    ticks = _fast_log(ax, "xy", widest="1k")
    # The labels' sizes in points (their texts never change), measured once, and the axes'.
    figure.draw_without_rendering()
    size = {name: (t.get_window_extent().width, t.get_window_extent().height)
            for name, t in ends.items()}
    box = ax.get_position()
    width_points = box.width * figure.get_figwidth() * 72
    height_points = box.height * figure.get_figheight() * 72

    def render(v: dict) -> View:
        rows, result = [], {}
        for name in priced:
            chip = chips.get(name)
            n = scenarios.replica_chips(v["model"], chip, headroom=1.5)
            point = price.lowest(chip) if v["price"] == "lowest" else price.price_points(chip)[0]
            if point is None:  # a chip with a catalog price has an on-demand point at least
                raise ValueError(f"{chip.name} has no sourced price")
            try:
                curve = inference.cost_curve(v["model"], chip, n, v["context"],
                                             usd_per_hour=point.usd_per_hour)
            except ValueError as why:  # a TP group the model cannot cost (no NVLink, too
                lines[name].set_data([], [])  # wide), or weights that alone do not fit
                ends[name].set_visible(False)  # (its name stood alone at the axes' corner)
                rows.append((f"{n} x {chip.name}", f"not shown: {why}"))
                continue
            lines[name].set_data(curve.batches, curve.usd_per_million_tokens)
            result[chip.name] = curve
            rows.append((f"{n} x {chip.name} at ${curve.usd_per_hour:g}/h ({point.basis_note})",
                         f"batch 1: ${curve.usd_per_million_tokens[0]:,.2f}; batch "
                         f"{curve.max_batch:,}: ${curve.usd_per_million_tokens_at_max_batch:,.3f}"))
        shown = [name for name in priced if chips.get(name).name in result]
        curves = [result[chips.get(name).name] for name in shown]
        if not curves:
            raise ValueError(f"no chip can serve {v['model']} at {v['context']:,} tokens")
        low = min(float(c.usd_per_million_tokens.min()) for c in curves)
        high = max(float(c.usd_per_million_tokens.max()) for c in curves)
        ax.set_ylim(low / 1.5, high * 1.5)
        # x from batch 1 to just past the longest line and its label: a label of w points
        # after a line ending at log-batch e needs (log top - e) / log top >= (offset + w) / W.
        ends_log = np.log10([c.max_batch for c in curves])
        room = np.array([(_LABEL_OFFSET_POINTS + size[name][0] + _LABEL_MARGIN_POINTS)
                         / width_points for name in shown])
        ax.set_xlim(1, 10 ** float(np.max(ends_log / (1 - room))))
        for axis_ticks in ticks:
            axis_ticks.update()
        # Each label beside its line's last point, heights in axes fractions of the log-y span.
        lo, hi = np.log10(ax.get_ylim())
        wanted = (np.log10([c.usd_per_million_tokens_at_max_batch for c in curves]) - lo) \
            / (hi - lo)
        left = ends_log / np.log10(ax.get_xlim()[1]) * width_points + _LABEL_OFFSET_POINTS
        right = left + np.array([size[name][0] for name in shown])
        gap = (max(size[name][1] for name in shown) + _LABEL_MARGIN_POINTS) / height_points
        placed = _separate(wanted, left - _LABEL_MARGIN_POINTS, right, gap, gap / 2, 1 - gap / 2)
        for name, curve, y in zip(shown, curves, placed):
            ends[name].set_position((curve.max_batch, float(y)))
            ends[name].set_visible(True)
        return View(figure=figure, text=table_html(rows, caption="cost per million generated "
                                                   "tokens, batch 1 and the largest batch that "
                                                   "fits"), result=result)

    return Explorer(controls, render, title="Cost per million tokens", columns=3)


def serving_load_explorer(model: str = "llama-3-8b", chip: str = "NVIDIA H100 (SXM)",
                          requests: int = 1000) -> Explorer:
    """One replica's latency percentiles against its arrival rate: continuous against static
    batching, chunked prefill, and the knee where queueing takes over (accelkit.serving)."""
    prompts = (250, 1000, 4000)
    output = 250
    # Every curve is simulated once, here (3 schedules x 3 prompt lengths x the loads): the
    # controls then only choose what to draw.
    curves = serving.scheduler_curves(model, chip, prompts=prompts, output_tokens=output,
                                      requests=requests)
    controls = {
        "schedule": _dropdown([label for label, _ in serving.SCHEDULES], serving.SCHEDULES[0][0],
                              "scheduler"),
        "prompt": W.SelectionSlider(options=list(prompts), value=1000,
                                    description="prompt tokens", continuous_update=False,
                                    style=STYLE),
        "load": W.SelectionSlider(options=[(f"{f:.0%}", i)
                                           for i, f in enumerate(serving.SCHEDULE_LOADS)],
                                  value=3, description="load (of saturation)",
                                  continuous_update=False, style=STYLE),
    }
    figure = new_figure(6.6, 3.2)
    ax = figure.add_subplot()
    colours = {"TTFT": "#e65100", "TPOT": "#6a1b9a"}
    art: dict[str, Line2D] = {}
    for what, colour in colours.items():
        art[f"{what} p99"], = ax.plot([], [], "-o", color=colour, markersize=3)
        art[f"{what} p50"], = ax.plot([], [], "--", color=colour)
        art[f"{what} here"], = ax.plot([], [], "o", color=colour, markersize=9)
    art["saturation"] = ax.axvline(1.0, color="#757575", linestyle=":", linewidth=1)
    ax.set_xlabel("arrival rate (requests/s)")
    ax.set_ylabel("seconds")
    ticks = _fast_log(ax, "y", widest="100m")
    x_ticks = Ticks(ax, "x", locator=MaxNLocator(nbins=6), format=lambda v: f"{v:g}")
    box = ax.get_position()
    key_row(figure, [("TTFT p99", colours["TTFT"], "━"), ("p50", colours["TTFT"], "╌"),
                     ("TPOT p99", colours["TPOT"], "━"), ("p50", colours["TPOT"], "╌"),
                     ("saturation", "#757575", "┆")],
            x=box.x0, y=box.y1 + 0.05, ha="left")

    def render(v: dict) -> View:
        curve = curves[(v["schedule"], v["prompt"])]
        reference = curves[(serving.SCHEDULES[0][0], v["prompt"])]
        i = v["load"]
        for what, p50, p99 in (("TTFT", curve.ttft_p50, curve.ttft_p99),
                               ("TPOT", curve.tpot_p50, curve.tpot_p99)):
            art[f"{what} p99"].set_data(curve.rates, p99)
            art[f"{what} p50"].set_data(curve.rates, p50)
            art[f"{what} here"].set_data([curve.rates[i]], [p99[i]])
        art["saturation"].set_xdata([curve.saturation_rate] * 2)
        values = np.concatenate([curve.ttft_p50, curve.ttft_p99, curve.tpot_p50, curve.tpot_p99])
        values = values[np.isfinite(values) & (values > 0)]
        ax.set_ylim(values.min() / 1.5, values.max() * 1.5)
        ax.set_xlim(0, reference.rates[-1] * 1.05)
        for axis_ticks in (*ticks, x_ticks):
            axis_ticks.update()
        ax.set_title(f"{model}, one {_label(chip)}: {v['prompt']:,}-token prompts, {output}-token "
                     f"answers, {requests} requests a run", fontsize=9)
        rate = curve.rates[i]
        text = table_html([
            ("arrival rate", f"{rate:,.2f} requests/s ({serving.SCHEDULE_LOADS[i]:.0%} of the continuous "
                             f"replica's saturation, {reference.saturation_rate:,.2f}/s)"),
            ("this scheduler's saturation", f"{curve.saturation_rate:,.2f} requests/s"),
            ("time to first token, p50 / p99",
             f"{curve.ttft_p50[i] * 1e3:,.0f} / {curve.ttft_p99[i] * 1e3:,.0f} ms"),
            ("time per output token, p50 / p99",
             f"{curve.tpot_p50[i] * 1e3:,.1f} / {curve.tpot_p99[i] * 1e3:,.1f} ms"),
            ("requests in flight (Little's law)", f"{curve.mean_in_flight[i]:,.1f}"),
        ], caption="TTFT and TPOT as vLLM and MLPerf define them; percentiles over the run's "
                   "requests (a 99th percentile of 1,000 is uncertain by about half a percentile)")
        return View(figure=figure, text=text, result=curve,
                    extras={"rate": rate, "index": i, "curves": curves})

    return Explorer(controls, render, title="Serving as it runs: latency against load", columns=3)


def inference_quiz() -> MultipleChoice:
    """Check yourself: why does a bigger batch make decode cheaper per token?"""
    return multiple_choice(
        "Decoding at batch 64 instead of batch 1 costs far less per token on every chip. Why?",
        ["Bigger batches make each FLOP cheaper on the matrix unit.",
         "Each step reads all the weights once, whatever the batch, so more sequences share "
         "that read.",
         "The KV cache shrinks as the batch grows, so each step has fewer bytes to read per "
         "token.",
         "Prefill happens less often at large batch."],
        correct=1,
        feedback=["A FLOP costs the same; at small batch the matrix unit mostly waits for "
                  "memory, so FLOPs are not what you pay for.",
                  "Yes: decode is memory-bound, and the weight read is shared by the batch "
                  "until the step turns compute-bound (or the KV cache fills HBM).",
                  "The opposite: each sequence brings its own KV cache, which grows with "
                  "batch and context.",
                  "Prefill is per request whatever the batch; the saving is in decode."])


def inference_worked_problem() -> WorkedProblem:
    """Llama-3-70B on 8 H100s: latency floor, B*, the batch that fits, and the price of a token."""
    model, chip, n, context = "llama-3-70b", "H100", 8, 4096

    def answer() -> str:
        m, c = models.get(model), chips.get(chip)
        one = inference.decode_step(model, chip, n, 1, context)
        bandwidth, capacity = c.require("hbm_bytes_per_second"), c.require("hbm_bytes")
        floor = m.weight_bytes("bf16") / (n * bandwidth)
        b_star = inference.compute_bound_batch(model, chip, n, kinds=("matmul",))
        limit = inference.max_batch(model, chip, n, context)
        full = inference.decode_step(model, chip, n, limit, context)
        capped = (" — fewer than B*: memory caps the batch before the matmuls are busy"
                  if limit < b_star else " — more than B*, yet attention over the cache keeps "
                  "the whole step memory-bound")
        return (
            f"<ol><li>Batch 1 reads every weight once: {m.weight_bytes('bf16') / 1e9:,.0f} GB over "
            f"{n} × {bandwidth / 1e12:.2f} TB/s = <b>{floor * 1e3:.2f} ms</b>; the "
            f"library, which reads only the embedding rows it needs but adds the KV cache, says "
            f"{one.seconds * 1e3:.2f} ms."
            f"</li><li>B* ≈ ridge × 2 bytes / 2 = ridge = {c.ridge_flops_per_byte():,.0f}; the "
            f"library solves it over every operation: <b>{b_star:,.0f}</b>.</li>"
            f"<li>HBM {n * capacity / 1e9:,.0f} GB − weights {m.weight_bytes('bf16') / 1e9:,.0f}"
            f" GB, over {inference.kv_cache_bytes(m, 1, context + 1) / 1e9:.2f} GB of cache per "
            f"sequence: <b>{limit}</b> sequences fit{capped}.</li><li>At batch {limit} a step takes "
            f"{full.seconds * 1e3:.1f} ms ({full.bound}-bound) and yields "
            f"{full.tokens_per_second:,.0f} tokens/s; {n} chips at ${c.usd_per_hour:g}/h cost "
            f"<b>${full.usd_per_million_tokens:.2f} per million tokens</b>, against "
            f"${one.usd_per_million_tokens:,.0f} at batch 1.</li></ol>")

    return WorkedProblem(
        f"Serve {model} in bf16 on {n} H100s (catalog figures) with {context:,}-token contexts. "
        "(1) What is the shortest possible time per generated token at batch 1? (2) At what "
        "batch do the decode matmuls turn compute-bound? (3) How many sequences fit in HBM "
        "beside the weights? (4) At that batch, how long is a step and what does a million "
        "generated tokens cost?", answer)
