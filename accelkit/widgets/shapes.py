"""Lesson 04's widgets: folds, padding, fill and drain, and utilization as a map.

Every number comes from :mod:`accelkit.labs.shapes` (shares of cell-cycles, sweeps over shapes)
and :meth:`accelkit.systolic.SystolicArray.estimate`; this module only chooses what to ask for
and draws it. Sweeps that do not depend on a control are computed once and cached.
"""

from __future__ import annotations


import ipywidgets as W
import numpy as np

from accelkit.systolic import DATAFLOW_NAMES, MAPPING, SystolicArray
from accelkit.labs.shapes import (LINE_SIZES, MAP_SIZES, TOKENS, cell_cycles,
                                   smallest_M_reaching, tile_curves, utilization_grid,
                                   utilization_line)
from accelkit.widgets._axes import fixed_ticks, key_column, key_row
from accelkit.widgets._base import CHOICE_COLOUR, STYLE, Explorer, View, new_figure, table_html
from accelkit.widgets._worked import WorkedProblem
from accelkit.widgets.quiz import MultipleChoice, multiple_choice

__all__ = ["fold_explorer", "utilization_map", "tile_comparison", "shapes_quiz",
           "shapes_worked_problem"]

#: Which problem dimensions a dataflow maps on the array's rows and columns, and which streams
#: (the table in accelkit.systolic's docstring).
MAPPED = {flow: (rows, cols) for flow, (rows, cols, _) in MAPPING.items()}
STREAMED = {flow: streamed for flow, (_, _, streamed) in MAPPING.items()}
_USEFUL, _PADDING, _IDLE = "#2e7d32", "#e57373", "#ffcc80"


# --------------------------------------------------------------------------------------------
# Folds and padding of one GEMM
# --------------------------------------------------------------------------------------------


def fold_explorer() -> Explorer:
    """Vary M, N, K, the array side and the dataflow; see the folds, the padding, and where the
    array's time goes (useful work, padding, load/fill/drain)."""
    controls = {
        "M": W.IntSlider(value=300, min=1, max=1024, description="M", continuous_update=False),
        "N": W.IntSlider(value=200, min=1, max=1024, description="N", continuous_update=False),
        "K": W.IntSlider(value=129, min=1, max=1024, description="K", continuous_update=False),
        "side": W.Dropdown(options=[8, 16, 32, 64, 128, 256], value=128,
                           description="array side", style=STYLE),
        "dataflow": W.ToggleButtons(options=["ws", "os", "is"], value="ws",
                                    description="dataflow", style=STYLE),
    }
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Rectangle

    figure = new_figure(8.2, 3.3)
    left = figure.add_axes((0.08, 0.14, 0.4, 0.7))
    right = figure.add_axes((0.6, 0.3, 0.37, 0.4))
    # Built, then added: add_patch / add_collection return the base types, and these are resized.
    padded_patch = Rectangle((0, 0), 1, 1, facecolor=_PADDING, alpha=0.5, hatch="//",
                             edgecolor="white", label="padding")
    problem_patch = Rectangle((0, 0), 1, 1, facecolor="#64b5f6", label="the problem")
    fold_lines = LineCollection([], colors="black", linewidths=1.2)
    left.add_patch(padded_patch)
    left.add_patch(problem_patch)
    left.add_collection(fold_lines)
    segments = []
    labels = ["useful MACs", "padding", "load, fill\nand drain"]
    colours = [_USEFUL, _PADDING, _IDLE]
    for label, colour in zip(labels, colours):
        segments.append(right.barh([0], [0.0], color=colour, label=label)[0])
    right.set_xlim(0, 100)
    right.set_yticks([])
    right.set_xlabel("share of the array's cell-cycles (%)")
    right.set_title("where the array's time goes", fontsize=9)
    fixed_ticks(right, which="x")  # ticks and keys as a few texts (widgets/_axes.py)
    box = right.get_position()
    key_row(figure, list(zip(labels, colours)), x=(box.x0 + box.x1) / 2, y=0.1, fontsize=7)
    # The left axes rescale to the problem (the padded extent, rounded up to a power of two):
    # their tick labels are three texts a side, rewritten per render.
    left.set_xlim(0, 1)
    left.set_ylim(1, 0)
    left.set_aspect("equal")
    left.set_xticks([])
    left.set_yticks([])
    fractions = (0.0, 0.5, 1.0)  # few tick texts: each is redrawn every render
    x_ticks = [left.text(f, -0.015, "", transform=left.transAxes, ha="center", va="top",
                         fontsize=8) for f in fractions]
    y_ticks = [left.text(-0.015, f, "", transform=left.transAxes, ha="right", va="center",
                         fontsize=8) for f in fractions]
    x_label = left.text(0.5, -0.1, "", transform=left.transAxes, ha="center", va="top")
    y_label = left.text(-0.2, 0.5, "", transform=left.transAxes, ha="right", va="center",
                        rotation=90)
    title = figure.text(0.28, 0.93, "", ha="center", fontsize=9)
    box = left.get_position()
    key_column(figure, [("the problem", problem_patch), ("padding", padded_patch)],
               x=box.x1 - 0.08, y=box.y0 + 0.1, fontsize=7)

    def render(values: dict) -> View:
        M, N, K, side, flow = (values[k] for k in ("M", "N", "K", "side", "dataflow"))
        run = SystolicArray(side, side, flow).estimate(M=M, N=N, K=K)
        dims = {"M": M, "N": N, "K": K}
        row_name, col_name = MAPPED[flow]
        rows_total, cols_total = dims[row_name], dims[col_name]
        padded_rows, padded_cols = run.row_folds * side, run.col_folds * side
        limit = _axis_limit(max(padded_rows, padded_cols))
        left.set_xlim(0, limit)
        left.set_ylim(limit, 0)
        for fraction, x_tick, y_tick in zip(fractions, x_ticks, y_ticks):
            x_tick.set_text(f"{fraction * limit:g}")
            y_tick.set_text(f"{fraction * limit:g}")
        padded_patch.set_bounds(0, 0, padded_cols, padded_rows)
        problem_patch.set_bounds(0, 0, cols_total, rows_total)
        lines = [[(c * side, 0), (c * side, padded_rows)] for c in range(1, run.col_folds)]
        lines += [[(0, r * side), (padded_cols, r * side)] for r in range(1, run.row_folds)]
        fold_lines.set_segments(lines)
        x_label.set_text(f"{col_name} (mapped on array columns)")
        y_label.set_text(f"{row_name} (mapped on array rows)")
        title.set_text(f"{flow} on a {side}×{side} array: {run.row_folds} × {run.col_folds} = "
                       f"{run.folds} folds; {STREAMED[flow]} = {dims[STREAMED[flow]]} streams")
        shares = cell_cycles(run)
        start = 0.0
        for bar, share in zip(segments, shares.values()):
            bar.set_x(start)
            bar.set_width(100 * share)
            start += 100 * share
        text = table_html([
            ("dataflow", f"{flow} ({DATAFLOW_NAMES[flow]}): {row_name} × {col_name} mapped, "
                         f"{STREAMED[flow]} streamed"),
            ("folds (row × column)", f"{run.folds:,} ({run.row_folds} × {run.col_folds})"),
            ("cycles, fill and drain included", f"{run.cycles:,}"),
            ("mapping efficiency (1 − padding)", f"{run.mapping_efficiency:.1%}"),
            ("utilization", f"{run.utilization:.1%}"),
            ("share lost to load, fill and drain", f"{shares['load, fill and drain']:.1%}"),
        ])
        return View(figure=figure, text=text, result=run,
                    extras={"shares": shares, "axis_limit": limit})

    return Explorer(controls, render, title="Folds, padding, fill and drain", columns=3)


def _axis_limit(extent: int) -> int:
    """The smallest power of two (at least 4) that holds ``extent``: the fold panel's axis."""
    return max(4, 1 << max(0, int(extent) - 1).bit_length())


# --------------------------------------------------------------------------------------------
# Utilization as a map over M × N
# --------------------------------------------------------------------------------------------

def utilization_map() -> Explorer:
    """A heatmap of utilization over M × N (fixed K) for one array, with your (M, N) marked, and
    beside it utilization against N at your M, one value per N, to show the 129 cliff."""
    controls = {
        "side": W.Dropdown(options=[16, 32, 64, 128, 256], value=128, description="array side",
                           style=STYLE),
        "K": W.Dropdown(options=[16, 128, 1024, 8192], value=1024, description="K", style=STYLE),
        "dataflow": W.ToggleButtons(options=["ws", "os", "is"], value="ws",
                                    description="dataflow", style=STYLE),
        "M": W.IntSlider(value=128, min=1, max=int(LINE_SIZES[-1]), description="M",
                         continuous_update=False),
        "N": W.IntSlider(value=129, min=1, max=int(LINE_SIZES[-1]), description="N",
                         continuous_update=False),
    }
    figure = new_figure(8.4, 3.5)
    heat_ax = figure.add_axes((0.07, 0.14, 0.36, 0.72))
    line_ax = figure.add_axes((0.58, 0.14, 0.4, 0.72))
    step = MAP_SIZES[1] - MAP_SIZES[0]
    edges = (MAP_SIZES[0] - step / 2, MAP_SIZES[-1] + step / 2)
    image = heat_ax.imshow(np.zeros((len(MAP_SIZES), len(MAP_SIZES))), origin="lower",
                           extent=(*edges, *edges), vmin=0, vmax=1, cmap="viridis",
                           interpolation="none", aspect="auto")  # SVG: raw cells, pixelated
    colourbar = figure.colorbar(image, ax=heat_ax, fraction=0.06, pad=0.02)
    colourbar.set_label("utilization", fontsize=8)
    heat_ax.set_xlabel("N (columns of C)")
    heat_ax.set_ylabel("M (rows of C)")
    (marker,) = heat_ax.plot([0], [0], "o", color=CHOICE_COLOUR, markersize=8,
                             markeredgecolor="white")
    from matplotlib.collections import LineCollection

    heat_ax.set_xlim(*edges)
    heat_ax.set_ylim(*edges)
    # Dotted guides at multiples of 128 (a TPU MXU's side), drawn over the image each frame.
    heat_ax.add_collection(LineCollection(
        [[(x, edges[0]), (x, edges[1])] for x in range(128, int(edges[1]), 128)]
        + [[(edges[0], y), (edges[1], y)] for y in range(128, int(edges[1]), 128)],
        colors="white", linewidths=0.8, linestyles=":"))
    (curve,) = line_ax.plot(LINE_SIZES, np.zeros(len(LINE_SIZES)), color="#37474f", linewidth=1.2)
    (point,) = line_ax.plot([0], [0], "o", color=CHOICE_COLOUR, markersize=8)
    line_ax.set_xlim(0, LINE_SIZES[-1] + 1)
    line_ax.set_ylim(0, 1)
    line_ax.set_xlabel("N (columns of C), every value")
    line_ax.set_ylabel("utilization")
    # Every limit is fixed: the ticks (the grid too) are read once and drawn as a few texts
    # and one marker line per axis (widgets/_axes.py).
    fixed_ticks(heat_ax)
    fixed_ticks(colourbar.ax, which="y")
    fixed_ticks(line_ax, grid={"alpha": 0.3})
    heat_title = figure.text(0.25, 0.92, "", ha="center", fontsize=9)
    line_title = figure.text(0.78, 0.92, "", ha="center", fontsize=9)

    def render(values: dict) -> View:
        side, K, flow, M, N = (values[k] for k in ("side", "K", "dataflow", "M", "N"))
        grid, line = utilization_grid(side, K, flow), utilization_line(side, K, flow, M)
        array = SystolicArray(side, side, flow)
        run = array.estimate(M=M, N=N, K=K)
        image.set_data(grid)
        marker.set_data([N], [M])
        curve.set_ydata(line)
        point.set_data([N], [run.utilization])
        heat_title.set_text(f"{flow}, {side}×{side} array, K = {K}")
        line_title.set_text(f"utilization against N at M = {M}")
        neighbours = [(label, array.estimate(M=m, N=n, K=K)) for label, m, n in
                      [("N + 1", M, N + 1), ("M + 1", M + 1, N)]]
        text = table_html(
            [(f"M = {M}, N = {N}, K = {K}", f"utilization {run.utilization:.1%}, "
                                            f"{run.folds} folds, {run.cycles:,} cycles")]
            + [(f"one more: {label}", f"utilization {r.utilization:.1%}, {r.folds} folds")
               for label, r in neighbours])
        return View(figure=figure, text=text, result=run,
                    extras={"grid": grid, "line": line})

    return Explorer(controls, render, title="Utilization as a map", columns=3)


# --------------------------------------------------------------------------------------------
# Small tiles (a GPU's tensor cores) against one big array
# --------------------------------------------------------------------------------------------

def tile_comparison() -> Explorer:
    """How much of a matrix unit does useful work as the token count M grows, for small GPU-like
    tiles and for one 128×128 array, multiplying by a width×width weight matrix."""
    controls = {
        "width": W.Dropdown(options=[1024, 4096, 4100], value=4096,
                            description="layer width N = K", style=STYLE),
        "M": W.SelectionSlider(options=TOKENS, value=1, description="tokens M",
                               continuous_update=False, style=STYLE),
    }
    figure = new_figure(8.2, 3.4)
    ax = figure.add_axes((0.08, 0.15, 0.5, 0.72))
    # One style per curve of tile_curves; the last, darkest and solid, is the MXU as a real one
    # runs (pipelined), which lesson 04's cells 15-16 quote.
    styles = [("#7b1fa2", "-", "o"), ("#e57373", "--", "s"), ("#1565c0", "-", "^"),
              ("#64b5f6", ":", "v"), ("#0d47a1", "-", "D")]
    names = list(tile_curves(16))  # the labels only (a 16-wide layer is cheap)
    artists = []
    for name, (colour, dash, mark) in zip(names, styles):
        (line,) = ax.plot(TOKENS, np.zeros(len(TOKENS)), dash, color=colour, marker=mark,
                          markersize=4, label=name)
        artists.append(line)
    ax.set_xscale("log", base=2)
    ax.set_xticks(TOKENS, [str(t) for t in TOKENS], fontsize=7)
    ax.minorticks_off()
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("tokens in the batch, M (log scale)")
    ax.set_ylabel("useful share")
    fixed_ticks(ax, grid={"alpha": 0.3})  # ticks, grid and key as a few artists (widgets/_axes.py)
    box = ax.get_position()
    key_column(figure, list(zip(names, artists)), x=box.x1 + 0.02, y=box.y1, fontsize=7)
    cursor = ax.axvline(1, color=CHOICE_COLOUR, linewidth=1)
    title = figure.text(0.33, 0.92, "", ha="center", fontsize=9)

    def render(values: dict) -> View:
        width, M = values["width"], values["M"]
        curves = tile_curves(width)
        for line, ys in zip(artists, curves.values()):
            line.set_ydata(ys)
        cursor.set_xdata([M, M])
        title.set_text(f"M × {width} times {width} × {width}")
        i = TOKENS.index(M)
        text = table_html([(name, f"{ys[i]:.1%}") for name, ys in curves.items()],
                          caption=f"At M = {M}:")
        return View(figure=figure, text=text, result={k: v[i] for k, v in curves.items()},
                    extras={"curves": curves})

    return Explorer(controls, render, title="Small tiles vs one big array")


# --------------------------------------------------------------------------------------------
# Check yourself, and the worked problem
# --------------------------------------------------------------------------------------------


def shapes_quiz() -> MultipleChoice:
    """Check yourself: which dimension of a GEMM does a ws array care about?"""
    plain = SystolicArray(128, 128, "ws")
    piped = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    even, odd = (plain.estimate(M=1024, N=n, K=1024) for n in (1024, 1025))
    piped_even, piped_odd = (piped.estimate(M=1024, N=n, K=1024).utilization for n in (1024, 1025))
    return multiple_choice(
        "A 128×128 weight-stationary array runs a GEMM with M = N = K = 1024 at good "
        "utilization. Which one-element change hurts its utilization the most?",
        ["M = 1025 (one more row of A)", "N = 1025 (one more column of the weights)",
         "M = 1023", "none: one element out of a thousand cannot matter"],
        correct=1,
        feedback=[
            "M is the streamed dimension in ws: one more row lengthens each fold's stream by "
            "one cycle, nothing more.",
            # The cause is the padded fold, not load, fill and drain (exercise 04 q5 marks that
            # reading false): a pipelined MXU falls off the same cliff.
            f"N is mapped on the array's columns: 1025 needs a ninth column of folds "
            f"({odd.folds - even.folds} more), each mapping one column out of 128 yet lasting as "
            f"long as a full fold, so utilization falls from {even.utilization:.1%} to "
            f"{odd.utilization:.1%}. Pipelining would not save it (a pipelined MXU falls from "
            f"{piped_even:.1%} to {piped_odd:.1%}): the cost is the padding, not load, fill and "
            "drain.",
            "One row fewer in the stream costs nothing measurable — it saves a cycle per fold.",
            "It can: a mapped dimension just past a multiple of 128 adds a whole fold.",
        ])


def shapes_worked_problem(width: int = 4096, side: int = 128) -> WorkedProblem:
    """Batch-1 decode on a big array, and the batch that fills it."""
    def answer() -> str:
        plain = SystolicArray(side, side, "ws")
        buffered = SystolicArray(side, side, "ws", double_buffer=True)
        one = plain.estimate(M=1, N=width, K=width)
        half = smallest_M_reaching(0.5, plain, width)
        half_db = smallest_M_reaching(0.5, buffered, width)
        odd = plain.estimate(M=half, N=width + 1, K=width)
        even = plain.estimate(M=half, N=width, K=width)
        per_fold = one.cycles // one.folds
        return (
            f"<ol><li>M = 1: {one.folds:,} folds of {per_fold} cycles each, and each fold does "
            f"{side}·{side} useful MACs (one row of A against its weight tile): utilization "
            f"1·{side}²/({side}²·{per_fold}) = <b>{one.utilization:.2%}</b>.</li>"
            f"<li>Each fold's cycles are 2R + C + M − 2 and only M of them are useful per cell, "
            f"so utilization is M / (M + {per_fold - 1}) (the weight matrix is a multiple of "
            f"{side}, so there is no padding). It reaches 50% at <b>M = {half}</b>; with double "
            f"buffering (load hidden) at <b>M = {half_db}</b>.</li>"
            f"<li>At M = {half}, a layer of width N = {width + 1}: {odd.folds:,} folds instead of "
            f"{even.folds:,} (one extra column costs a whole extra column of "
            f"{odd.folds - even.folds} folds), utilization <b>{odd.utilization:.1%}</b> instead of "
            f"{even.utilization:.1%}. Small for a layer this wide; for N = {side + 1} it would "
            f"double the folds.</li></ol>")

    return WorkedProblem(
        f"Decode streams one token at a time through a {width}×{width} weight matrix on a "
        f"{side}×{side} weight-stationary MXU. (1) What is the utilization at batch M = 1? "
        "(2) What is the smallest batch M that reaches 50% utilization, without and with double "
        f"buffering? (3) At that batch, what if the layer were {width + 1} wide (N = {width + 1})?",
        answer)
