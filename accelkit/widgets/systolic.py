"""Lesson 03's widgets: watch a systolic array multiply, cycle by cycle, and count memory reads.

Every state drawn comes from :meth:`accelkit.systolic.SystolicArray.steps` (the cycle-by-cycle
walk the reference simulator makes) and every count from ``SystolicArray.matmul`` /
``estimate`` and :class:`accelkit.simd.SIMDMachine`; this module only chooses what to ask for
and draws it.
"""

from __future__ import annotations

import contextlib

from collections import OrderedDict
from dataclasses import dataclass
from typing import TypedDict

import ipywidgets as W
import numpy as np

from accelkit.widgets.quiz import MultipleChoice, multiple_choice
from accelkit.simd import SIMDMachine, SIMDRun
from accelkit.systolic import DATAFLOW_NAMES, DATAFLOW_SPECS, SystolicArray, SystolicRun
from accelkit.widgets._axes import fixed_ticks, key_column
from accelkit.widgets._base import DPI, STYLE, Explorer, View, new_figure, table_html
from accelkit.widgets._worked import WorkedProblem

__all__ = ["systolic_animation", "reuse_comparison", "systolic_quiz", "systolic_worked_problem"]

#: What moves and what stays, per dataflow (each dataflow's record in accelkit.systolic).
FLOW_STORY = {name: spec.story for name, spec in DATAFLOW_SPECS.items()}
#: The order the toggles offer the dataflows in (display only): the TPU's weight-stationary first.
_FLOW_ORDER = ["ws", "os", "is"]
assert set(_FLOW_ORDER) == set(DATAFLOW_SPECS)
# Cell colours: did a useful MAC this cycle / holds an operand but idle / holds nothing.
_ACTIVE, _HOLDING, _EMPTY = (0.98, 0.55, 0.0), (0.82, 0.90, 0.97), (0.97, 0.97, 0.97)
_WRITTEN, _PENDING = (0.78, 0.92, 0.78), (0.97, 0.97, 0.97)
_MAX_SIDE = 8  # M, N and K run from 1 to 8: C's panel has at most 8 rows and columns
# Step lists kept, one per (dataflow, shape, double-buffer) choice: simulating a choice's
# cycles takes up to ~20 ms (8×8×8, ws), so scrubbing the cycle slider or the Play button
# would wait on it every frame; the 24 most recent choices are kept.
_MOVIES_KEPT = 24


def _operands(M: int, N: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Small positive integers, so every product and sum fits in a cell's label."""
    rng = np.random.default_rng(seed)
    return rng.integers(1, 10, (M, K)), rng.integers(1, 10, (K, N))


def _value(x: float) -> str:
    return "·" if np.isnan(x) else f"{x:.0f}"


def _matrix_html(name: str, X: np.ndarray) -> str:
    cells = "".join("<tr>" + "".join(f"<td style='padding:0 4px'>{v}</td>" for v in row) + "</tr>"
                    for row in X)
    return (f"<table style='display:inline-block;margin-right:1.5em;font-family:monospace'>"
            f"<caption>{name} ({X.shape[0]}×{X.shape[1]})</caption>{cells}</table>")


@dataclass
class _Movie:
    """One (dataflow, shape, double-buffer) choice: its steps, its run and its operands."""

    steps: list
    run: SystolicRun
    macs_so_far: np.ndarray
    operands: tuple


def _grid_axes(ax, rows: int, cols: int) -> None:
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))


def _squares(rows: int, cols: int, inset: float = 0.04) -> list[np.ndarray]:
    """Unit squares (as paths' vertices) of a rows × cols grid, cell (r, c) centred on (c, r),
    a little inset so neighbouring cells keep a white gap."""
    low, high = -0.5 + inset, 0.5 - inset
    return [np.array([(c + low, r + low), (c + high, r + low), (c + high, r + high),
                      (c + low, r + high)]) for r in range(rows) for c in range(cols)]


def _label_points(cell_pixels: float, lines: int, widest: str,
                  largest: float = 12.0, smallest: float = 5.0) -> float:
    """The largest font size (points, in steps of 0.5) at which ``lines`` lines as wide as
    ``widest`` fit a cell of ``cell_pixels`` screen pixels (at :data:`DPI`)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    width_at_10, _, _ = text_to_path.get_text_width_height_descent(
        widest, FontProperties(size=10), False)
    points = largest
    while points > smallest:
        wide = width_at_10 * points / 10 * DPI / 72
        tall = lines * 1.2 * points * DPI / 72
        if wide <= cell_pixels - 6 and tall <= cell_pixels - 4:
            return points
        points -= 0.5
    return smallest


class _Canvas:
    """The one figure every choice redraws. Built once: the array panel's cells (one
    collection), a text per cell for the operands it holds and its partial sum, the C panel
    and its index labels (up to 8 a side); a render recolours the cells, rewrites the texts
    that changed, reshapes the C panel and sets the title."""

    def __init__(self, rows: int, cols: int):
        from matplotlib.collections import PolyCollection
        from matplotlib.transforms import offset_copy

        self.rows, self.cols = rows, cols
        figure = self.figure = new_figure(8.2, 4.6)
        left = self.left = figure.add_axes((0.08, 0.12, 0.5, 0.74))
        x0, y0, w, h = 0.68, 0.12, 0.29, 0.66
        right = self.right = figure.add_axes((x0, y0, w, h))
        _grid_axes(left, rows, cols)
        left.set_xlabel("array column (cell)")
        left.set_ylabel("array row (cell)")
        fixed_ticks(left)  # as one marker line and texts (widgets/_axes.py)
        right.set_axis_off()
        right.set_aspect("equal", anchor="NW")  # C's cells are square, from the top left
        # The panel's axis names follow its box, which shrinks to C's shape.
        self.axis_names = [
            right.text(0.5, 0, "n (column of C)", ha="center", va="top", fontsize=10,
                       transform=offset_copy(right.transAxes, figure, y=-16, units="points")),
            right.text(0, 0.5, "m (row of C)", ha="right", va="center", rotation=90,
                       fontsize=10,
                       transform=offset_copy(right.transAxes, figure, x=-16, units="points"))]
        figure.text(x0 + w / 2, 0.86, "C = A·B: green = written to the buffer,\norange = "
                    "written this cycle", ha="center", va="bottom", fontsize=9)
        self.title = figure.text(0.33, 0.93, "", ha="center", fontsize=10)
        self.cells = PolyCollection(_squares(rows, cols), facecolors=[_EMPTY],
                                    edgecolors="none")
        left.add_collection(self.cells)
        left.apply_aspect()
        (x_a, y_a), (x_b, y_b) = left.transData.transform([(0, 0), (1, 1)])
        # (in screen pixels: the figure is laid out at its own dpi and shown at DPI)
        cell_pixels = min(abs(x_b - x_a), abs(y_b - y_a)) * 0.92 * DPI / figure.dpi
        points = _label_points(cell_pixels, 3, "a[7,7]=9")
        # One text per cell, centred in it (the operands it holds and its partial sum).
        self.labels = {(r, c): left.text(c, r, "", ha="center", va="center", fontsize=points)
                       for r in range(rows) for c in range(cols)}
        self.outputs = PolyCollection([], facecolors=[_PENDING], edgecolors="none")
        right.add_collection(self.outputs)
        # Index labels of C's rows (left of the panel) and columns (under it): 8 each at most.
        beside = offset_copy(right.transData, figure, x=-4, units="points")
        below = offset_copy(right.transData, figure, y=-3, units="points")
        self.row_ticks = [right.text(-0.5, m, str(m), ha="right", va="center", fontsize=9,
                                     transform=beside, visible=False) for m in range(_MAX_SIDE)]
        self.col_ticks = [right.text(n, 0, str(n), ha="center", va="top", fontsize=9,
                                     transform=below, visible=False) for n in range(_MAX_SIDE)]
        self.shape: tuple[int, int] | None = None

    def set_shape(self, M: int, N: int) -> None:
        """Lay the C panel out for an M×N product: square cells filling the panel from its top
        left (the axes' equal aspect shrinks its box to the cells)."""
        if self.shape == (M, N):
            return
        self.shape = (M, N)
        self.outputs.set_verts(_squares(M, N))
        self.right.set_xlim(-0.5, N - 0.5)
        self.right.set_ylim(M - 0.5, -0.5)
        for m, label in enumerate(self.row_ticks):
            label.set_visible(m < M)
        for n, label in enumerate(self.col_ticks):
            label.set_position((n, M - 0.5))
            label.set_visible(n < N)

    def draw_step(self, movie: _Movie, index: int, flow: str) -> None:
        step = movie.steps[index]
        holding = ~np.isnan(step.a) | ~np.isnan(step.b)
        colours = np.where(step.active[..., None], _ACTIVE,
                           np.where(holding[..., None], _HOLDING, _EMPTY))
        self.cells.set_facecolor([(r, g, b) for r, g, b in colours.reshape(-1, 3).tolist()])
        for (r, c), held in np.ndenumerate(holding):
            self.labels[r, c].set_text("\n".join(_cell_lines(step, r, c)) if held else "")
        written = ~np.isnan(step.output)
        before = (~np.isnan(movie.steps[index - 1].output) if index
                  else np.zeros_like(written))
        self.set_shape(*written.shape)
        out = np.where((written & ~before)[..., None], _ACTIVE,
                       np.where(written[..., None], _WRITTEN, _PENDING))
        self.outputs.set_facecolor([(r, g, b) for r, g, b in out.reshape(-1, 3).tolist()])
        phase = "loading the stationary tile" if step.phase == "load" else "computing"
        self.title.set_text(
            f"{flow}: cycle {step.cycle + 1} of {len(movie.steps)}, fold {step.fold + 1} of "
            f"{movie.run.folds}, {phase}; {step.active_macs} useful MACs")


def _build_movie(rows: int, cols: int, flow: str, M: int, N: int, K: int, double_buffer: bool,
                 seed: int) -> _Movie:
    A, B = _operands(M, N, K, seed)
    array = SystolicArray(rows, cols, flow, double_buffer=double_buffer)
    steps = list(array.steps(A, B))
    run = array.matmul(A, B)
    macs_so_far = np.cumsum([s.active_macs for s in steps])
    return _Movie(steps, run, macs_so_far, (A, B))


def _cell_lines(step, r: int, c: int) -> list[str]:
    ai, bi = step.a_index[r, c], step.b_index[r, c]
    a = f"a[{ai[0]},{ai[1]}]={_value(step.a[r, c])}" if ai[0] >= 0 else "a –"
    b = f"b[{bi[0]},{bi[1]}]={_value(step.b[r, c])}" if bi[0] >= 0 else "b –"
    return [a, b, f"Σ={_value(step.psum[r, c])}"]


class _SteppedExplorer(Explorer):
    """An :class:`Explorer` with a transport: ``play`` (linked to the cycle slider) and the
    ``back`` / ``forward`` step buttons."""

    play: W.Play
    back: W.Button
    forward: W.Button


def systolic_animation(rows: int = 4, cols: int = 4, seed: int = 0) -> _SteppedExplorer:
    """Watch a ``rows × cols`` systolic array multiply A (M×K) by B (K×N), cycle by cycle.

    Controls: the dataflow (ws / os / is), M, N, K (1..8), double buffering, and the cycle
    (a slider, a Play button linked to it, and step buttons). Each cell shows the A and B values
    it holds (with their indices) and its partial sum; orange cells did a useful MAC this cycle;
    the right panel is C as written to the output buffer so far. The step list of each choice
    is computed once and cached, so scrubbing only redraws.

    Args:
        rows, cols: the array (small: every cell is labelled).
        seed: seeds the random small-integer operands.
    """
    movies: OrderedDict[tuple, _Movie] = OrderedDict()
    canvas = _Canvas(rows, cols)  # one figure for every shape and dataflow

    def movie_for(values: dict) -> _Movie:
        key = (values["dataflow"], values["M"], values["N"], values["K"], values["double_buffer"])
        if key in movies:
            movies.move_to_end(key)
        else:
            movies[key] = _build_movie(rows, cols, *key, seed=seed)
            if len(movies) > _MOVIES_KEPT:
                movies.popitem(last=False)
        return movies[key]

    sizes = list(range(1, _MAX_SIDE + 1))
    controls = {
        "dataflow": W.ToggleButtons(options=[(f"{k} ({DATAFLOW_NAMES[k]})", k)
                                             for k in _FLOW_ORDER], value="ws",
                                    description="dataflow", style=STYLE),
        "double_buffer": W.Checkbox(value=False, description="double buffering", indent=False),
        "M": W.Dropdown(options=sizes, value=4, description="M", style=STYLE, layout=W.Layout(width="7em")),
        "N": W.Dropdown(options=sizes, value=4, description="N", style=STYLE, layout=W.Layout(width="7em")),
        "K": W.Dropdown(options=sizes, value=4, description="K", style=STYLE, layout=W.Layout(width="7em")),
        # Counts cycles from 1, as the figure's and the table's text do.
        "cycle": W.IntSlider(value=1, min=1, max=2, description="cycle", continuous_update=True,
                             style=STYLE, layout=W.Layout(width="28em")),
    }
    slider = controls["cycle"]
    first = movie_for({name: c.value for name, c in controls.items()})
    slider.max = len(first.steps)
    slider.value = min(len(first.steps), 6)
    play = W.Play(value=slider.value, min=1, max=slider.max, interval=500, description="play")
    W.jslink((play, "value"), (slider, "value"))
    holder: dict[str, Explorer] = {}

    def set_last_cycle(last: int) -> None:
        """Resize the cycle range without a nested render (the clamp would trigger one)."""
        if slider.max == last:
            return
        explorer = holder.get("explorer")
        with explorer.holding() if explorer is not None else contextlib.nullcontext():
            slider.max = last
            play.max = last

    def render(values: dict) -> View:
        movie = movie_for(values)
        set_last_cycle(len(movie.steps))
        index = min(values["cycle"], len(movie.steps)) - 1
        canvas.draw_step(movie, index, values["dataflow"])
        step, run = movie.steps[index], movie.run
        M, N, K = run.M, run.N, run.K
        text = (
            f"<p><b>{values['dataflow']}</b> ({DATAFLOW_NAMES[values['dataflow']]}): "
            f"{FLOW_STORY[values['dataflow']]}</p>"
            + table_html([
                ("cycle (of the whole run)", f"{step.cycle + 1} of {run.cycles}"),
                ("fold, phase", f"{step.fold + 1} of {run.folds}, {step.phase}"),
                ("useful MACs this cycle", f"{step.active_macs} of {rows * cols} cells"),
                ("MACs done so far", f"{int(movie.macs_so_far[index])} of {run.macs}"),
                ("utilization of the whole run", f"{run.utilization:.1%}"),
                ("buffer reads: A, B", f"{run.sram_reads['A']} ({run.sram_reads['A'] / (M * K):g}"
                                       f" per A value), {run.sram_reads['B']} "
                                       f"({run.sram_reads['B'] / (K * N):g} per B value)"),
            ])
            + "<div style='margin-top:0.5em'>" + _matrix_html("A", movie.operands[0])
            + _matrix_html("B", movie.operands[1])
            + _matrix_html("C so far", np.where(np.isnan(step.output), "·",
                                                np.nan_to_num(step.output).astype(int).astype(str)))
            + "</div>"
        )
        return View(figure=canvas.figure, text=text, result=step,
                    extras={"run": run, "steps": len(movie.steps)})

    explorer = _SteppedExplorer(controls, render,
                               title=f"A {rows}×{cols} systolic array, cycle by cycle")
    holder["explorer"] = explorer

    def nudge(delta: int) -> None:
        slider.value = max(slider.min, min(slider.max, slider.value + delta))

    back = W.Button(description="◀ step", layout=W.Layout(width="6em"))
    forward = W.Button(description="step ▶", layout=W.Layout(width="6em"))
    back.on_click(lambda _: nudge(-1))
    forward.on_click(lambda _: nudge(+1))
    explorer.play, explorer.back, explorer.forward = play, back, forward
    header = list(explorer.widget.children[:1]) if explorer.title else []
    explorer.widget.children = header + [
        W.HBox([controls["dataflow"], controls["double_buffer"]]),
        W.HBox([controls["M"], controls["N"], controls["K"]]),
        W.HBox([play, back, forward, slider]),
        explorer.image, explorer.html,
    ]
    return explorer


# --------------------------------------------------------------------------------------------
# How often each value is read: systolic buffer vs the SIMD machine's memories
# --------------------------------------------------------------------------------------------

#: The GPU-like machines compared (accelkit.simd defaults: 4 cores × 32 lanes, 8 resident warps).
class _SIMDOptions(TypedDict, total=False):
    shared_memory: bool
    tensor_core: tuple[int, int, int]


SIMD_MACHINES: dict[str, _SIMDOptions] = {
    "SIMD, naive kernel": dict(shared_memory=False),
    "SIMD, tiled kernel": dict(),
    "SIMD + 16×8×16 tensor core": dict(tensor_core=(16, 8, 16)),
}


def _simd_runs(n: int) -> dict[str, SIMDRun]:
    """The SIMD machines' runs of an n×n×n GEMM (they do not depend on the systolic array)."""
    return {label: SIMDMachine(**options).estimate(M=n, N=n, K=n)
            for label, options in SIMD_MACHINES.items()}


def reuse_comparison() -> Explorer:
    """How many times each value of A and B is read from memory, per machine, for an n×n×n GEMM.

    Systolic: reads from the array's on-chip buffer (``run.sram_reads``); inside the array a
    value is passed from cell to cell, not re-read. SIMD: reads from global memory
    (``dram_reads``) and from shared memory (``sram_reads``).
    """
    controls = {
        "n": W.Dropdown(options=[16, 32, 64, 128, 256], value=128, description="M = N = K",
                        style=STYLE),
        "side": W.Dropdown(options=[4, 8, 16, 32, 64, 128], value=16, description="array side",
                           style=STYLE),
        "dataflow": W.ToggleButtons(options=_FLOW_ORDER, value="ws",
                                    description="dataflow", style=STYLE),
    }
    figure = new_figure(8.2, 3.3)
    ax = figure.add_axes((0.08, 0.3, 0.62, 0.6))
    machines = ["systolic"] + list(SIMD_MACHINES)
    x = np.arange(len(machines))
    width = 0.2
    series = [("global", "A", -1.5, "A from global memory (DRAM)", "#1565c0", ""),
              ("global", "B", -0.5, "B from global memory (DRAM)", "#64b5f6", ""),
              ("sram", "A", 0.5, "A from on-chip SRAM", "#e65100", "//"),
              ("sram", "B", 1.5, "B from on-chip SRAM", "#ffb74d", "//")]
    bars = {}
    for level, operand, offset, name, colour, hatch in series:
        bars[level, operand] = ax.bar(x + offset * width, np.ones(len(x)), width, bottom=0.5,
                                      label=name, color=colour, hatch=hatch, edgecolor="white")
    ax.set_yscale("log", base=2)
    ax.set_ylim(0.5, 512)  # fixed: every n offered reads each value at most n = 256 times
    ax.set_yticks([1, 4, 16, 64, 256], ["1", "4", "16", "64", "256"])
    ax.minorticks_off()
    ax.set_xticks(x, [""] + [m.replace(", ", ",\n").replace(" + ", "\n+ ") for m in machines[1:]],
                  fontsize=8)
    ax.set_ylabel("reads per value (log scale)")
    fixed_ticks(ax)  # ticks and key as a few texts (widgets/_axes.py)
    box = ax.get_position()
    key_column(figure, [(name, bars[level, operand][0])
                        for level, operand, _, name, _, _ in series],
               x=box.x1 + 0.01, y=box.y1, fontsize=7)
    systolic_label = ax.text(0, -0.08, "", transform=ax.get_xaxis_transform(), ha="center",
                             va="top", fontsize=8)
    title = figure.text(0.39, 0.93, "", ha="center", fontsize=9)

    def render(values: dict) -> View:
        n, side, flow = values["n"], values["side"], values["dataflow"]
        label = f"systolic {side}×{side} ({flow})"
        runs: dict[str, SystolicRun | SIMDRun] = {
            label: SystolicArray(side, side, flow).estimate(M=n, N=n, K=n), **_simd_runs(n)}
        elements = n * n
        rows = []
        for i, run in enumerate(runs.values()):
            reads = {"sram": run.sram_reads, "global": getattr(run, "dram_reads", {})}
            for (level, operand), group in bars.items():
                per_value = reads[level].get(operand, 0) / elements
                group[i].set_height(max(per_value - 0.5, 0.0))
                group[i].set_visible(per_value > 0)
            rows.append((list(runs)[i],
                         f"on-chip SRAM {reads['sram']['A'] / elements:g} / "
                         f"{reads['sram']['B'] / elements:g}, global memory "
                         f"{reads['global'].get('A', 0) / elements:g} / "
                         f"{reads['global'].get('B', 0) / elements:g}; {run.cycles:,} cycles"))
        systolic_label.set_text(f"systolic {side}×{side}\n({flow})")
        title.set_text(f"How many times each value of A and B is read, M = N = K = {n}")
        text = table_html(rows, caption="Reads per value of A / B (the bars). The systolic engine "
                          "models only the array's own buffer, not the DRAM behind it.")
        return View(figure=figure, text=text, result=runs)

    return Explorer(controls, render, title="Reuse: how often each operand value is read",
                    columns=3)


# --------------------------------------------------------------------------------------------
# Check yourself, and the worked problem
# --------------------------------------------------------------------------------------------


def systolic_quiz() -> MultipleChoice:
    """Check yourself: in a weight-stationary array, how often is each weight read per fold?"""
    return multiple_choice(
        "A 128×128 weight-stationary array multiplies A (M×128) by a 128×128 weight tile B. "
        "During that one fold, how many times is each value of B read from the buffer?",
        ["once, whatever M is: it stays put", "M times, once per row of A", "128 times, once per array column",
         "twice: once to load, once to drain"],
        correct=0,
        feedback=[
            "B is shifted into the cells once and stays; all M rows of A stream past it. That "
            "is the whole point: reuse by holding, not by re-reading.",
            "That is what a processor without reuse would do. Here the weight stays in its cell "
            "while the M rows of A flow past it.",
            "Values move between cells through wires, not through the buffer: a weight reaches "
            "its cell by being passed down, and is read from the buffer only once.",
            "Nothing is drained from the B side: what leaves the bottom are partial sums of C.",
        ])


def systolic_worked_problem(M: int = 512, N: int = 384, K: int = 256, side: int = 128
                            ) -> WorkedProblem:
    """Folds, cycles, utilization and reads of one GEMM on a weight-stationary array."""
    def answer() -> str:
        plain = SystolicArray(side, side, "ws").estimate(M=M, N=N, K=K)
        doubled = SystolicArray(side, side, "ws", double_buffer=True).estimate(M=M, N=N, K=K)
        per_fold = plain.cycles // plain.folds  # every fold lasts the same
        return (
            f"<ol><li>ws maps B (K×N = {K}×{N}) on the array: ⌈{K}/{side}⌉ × ⌈{N}/{side}⌉ = "
            f"{plain.row_folds} × {plain.col_folds} = <b>{plain.folds} folds</b>.</li>"
            f"<li>Each fold: load {side} rows of weights, then stream M = {M} rows of A with the "
            f"skew: 2R + C + M − 2 = {per_fold} cycles; {plain.folds} folds → "
            f"<b>{plain.cycles:,} cycles</b>.</li>"
            f"<li>Utilization = M·N·K / (R·C·cycles) = {plain.macs:,} / ({side * side:,} × "
            f"{plain.cycles:,}) = <b>{plain.utilization:.1%}</b>.</li>"
            f"<li>Each A value is read once per column fold: {plain.sram_reads['A']:,} reads / "
            f"{M * K:,} values = <b>{plain.sram_reads['A'] / (M * K):g}</b>; each weight once: "
            f"{plain.sram_reads['B'] / (K * N):g}.</li>"
            f"<li>Double buffering hides the {side}-cycle load of every fold but the first: "
            f"{doubled.cycles:,} cycles, utilization {doubled.utilization:.1%} "
            f"(saves {plain.cycles - doubled.cycles:,} cycles).</li></ol>")

    return WorkedProblem(
        f"A {side}×{side} weight-stationary array computes A·B with A {M}×{K} and B {K}×{N}. "
        "How many folds? How many cycles (no double buffering)? What utilization? How many "
        "times is each value of A read from the array's buffer? What does double buffering "
        "save?", answer)
