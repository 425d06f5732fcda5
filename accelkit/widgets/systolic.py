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
from matplotlib.figure import Figure
from matplotlib.image import FigureImage
from matplotlib.text import Text

from accelkit.widgets.quiz import MultipleChoice, multiple_choice
from accelkit.simd import SIMDMachine, SIMDRun
from accelkit.systolic import DATAFLOW_NAMES, DATAFLOW_SPECS, SystolicArray, SystolicRun
from accelkit.widgets._base import DPI, Explorer, View, freeze_background, new_figure, table_html
from accelkit.widgets._frozen import frozen_figure
from accelkit.widgets._worked import WorkedProblem

__all__ = ["systolic_animation", "reuse_comparison", "systolic_quiz", "systolic_worked_problem"]

_STYLE = {"description_width": "initial"}
#: What moves and what stays, per dataflow (each dataflow's record in accelkit.systolic).
FLOW_STORY = {name: spec.story for name, spec in DATAFLOW_SPECS.items()}
#: The order the toggles offer the dataflows in (display only): the TPU's weight-stationary first.
_FLOW_ORDER = ["ws", "os", "is"]
assert set(_FLOW_ORDER) == set(DATAFLOW_SPECS)
# Cell colours: did a useful MAC this cycle / holds an operand but idle / holds nothing.
_ACTIVE, _HOLDING, _EMPTY = (0.98, 0.55, 0.0), (0.82, 0.90, 0.97), (0.97, 0.97, 0.97)
_WRITTEN, _PENDING = (0.78, 0.92, 0.78), (0.97, 0.97, 0.97)
_MOVIES_KEPT = 24  # cached (dataflow, shape, double-buffer) step lists; figures are per M×N


class _Labels:
    """Cell labels painted straight into a frame's pixels, each distinct line rasterised once.

    Matplotlib re-lays-out and re-rasterises every text line on every draw; a 4×4 array needs
    48 lines a frame, which alone would exceed the 50 ms budget. Lines repeat from frame to
    frame (a value keeps its label as it moves), so their bitmaps are cached.
    """

    @classmethod
    def fitting(cls, cell_pixels: int, lines: int, widest: str,
                largest: float = 12.0, smallest: float = 5.0) -> "_Labels":
        """The largest size (points) at which ``lines`` lines as wide as ``widest`` fit a cell."""
        points = largest
        while points > smallest:
            labels = cls(points)
            if (labels.bitmap(widest).shape[1] <= cell_pixels - 6
                    and lines * labels.line_pixels <= cell_pixels - 4):
                return labels
            points -= 0.5
        return cls(smallest)

    def __init__(self, points: float):
        from matplotlib.font_manager import FontProperties, findfont
        from matplotlib.ft2font import FT2Font

        self._font = FT2Font(findfont(FontProperties()))
        self._points = points
        self._cache: dict[str, np.ndarray] = {}
        self.line_pixels = int(round(points * DPI / 72 * 1.25))

    def bitmap(self, line: str) -> np.ndarray:
        """Coverage (0..1) of ``line`` rendered at this size: a (height, width) float array."""
        if line not in self._cache:
            font = self._font
            font.clear()
            font.set_size(self._points, DPI)
            font.set_text(line, 0.0)
            font.draw_glyphs_to_bitmap(antialiased=True)
            self._cache[line] = np.asarray(font.get_image(), dtype=np.float32) / 255.0
        return self._cache[line]

    def paint(self, frame: np.ndarray, lines: list[str], centre: tuple[int, int]) -> None:
        """Blend black ``lines`` into ``frame`` (H×W×4 uint8), centred on pixel (row, col)."""
        top = centre[0] - len(lines) * self.line_pixels // 2
        for i, line in enumerate(lines):
            glyphs = self.bitmap(line)
            h, w = glyphs.shape
            r0 = top + i * self.line_pixels + (self.line_pixels - h) // 2
            c0 = centre[1] - w // 2
            if r0 < 0 or c0 < 0 or r0 + h > frame.shape[0] or c0 + w > frame.shape[1]:
                continue  # a label wider than its cell is left out rather than wrapped
            region = frame[r0:r0 + h, c0:c0 + w, :3]
            region[...] = (region * (1.0 - glyphs[..., None])).astype(np.uint8)


def _cell_boxes(ax, rows: int, cols: int, figure: Figure) -> np.ndarray:
    """Pixel boxes (row0, row1, col0, col1) of a rows × cols grid drawn with row 0 at the top,
    1 pixel inset so neighbouring cells keep a white gap."""
    height = int(round(figure.bbox.height))
    boxes = np.empty((rows, cols, 4), dtype=int)
    for r in range(rows):
        for c in range(cols):
            (x0, y0), (x1, y1) = ax.transData.transform([(c - 0.5, r + 0.5), (c + 0.5, r - 0.5)])
            boxes[r, c] = (height - int(round(y1)) + 1, height - int(round(y0)) - 1,
                           int(round(x0)) + 1, int(round(x1)) - 1)
    return boxes


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
    """One (dataflow, shape, double-buffer) choice: its steps, its run and a figure to redraw."""

    steps: list
    run: SystolicRun
    macs_so_far: np.ndarray
    figure: Figure
    frame_image: FigureImage
    background: np.ndarray
    array_boxes: np.ndarray
    output_boxes: np.ndarray
    labels: _Labels
    title: Text
    operands: tuple
    tick_labels: _Labels


def _grid_axes(ax, rows: int, cols: int) -> None:
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))


@dataclass
class _Canvas:
    """The one figure every choice redraws: the array panel drawn once and frozen; the C panel
    (whose shape, M×N, changes) is painted straight into the frame's pixels."""

    figure: Figure
    frame_image: FigureImage
    background: np.ndarray
    array_boxes: np.ndarray
    panel: tuple[int, int, int, int]  # the C panel's pixel box: row0, row1, col0, col1
    title: Text
    ticks: _Labels


def _build_canvas(rows: int, cols: int) -> _Canvas:
    figure = new_figure(8.2, 4.6)
    left = figure.add_axes((0.08, 0.12, 0.5, 0.74))
    right_box = (0.68, 0.12, 0.29, 0.66)
    _grid_axes(left, rows, cols)
    left.set_xlabel("array column (cell)")
    left.set_ylabel("array row (cell)")
    x0, y0, w, h = right_box
    figure.text(x0 + w / 2, 0.04, "n (column of C)", ha="center", fontsize=10)
    figure.text(x0 - 0.04, y0 + h / 2, "m (row of C)", ha="center", va="center", rotation=90,
                fontsize=10)
    figure.text(x0 + w / 2, 0.86, "C = A·B: green = written to the buffer,\norange = written "
                "this cycle", ha="center", va="bottom", fontsize=9)
    title = figure.text(0.33, 0.93, "", ha="center", fontsize=10)
    frame_image = freeze_background(figure, [title])
    background = np.asarray(frame_image.get_array()).copy()
    width, height = figure.bbox.width, figure.bbox.height
    panel = (int(round(height * (1 - y0 - h))), int(round(height * (1 - y0))),
             int(round(width * x0)), int(round(width * (x0 + w))))
    return _Canvas(figure, frame_image, background, _cell_boxes(left, rows, cols, figure),
                   panel, title, _Labels(9))


def _output_boxes(panel: tuple[int, int, int, int], M: int, N: int) -> np.ndarray:
    """Pixel boxes of an M×N grid of square cells filling the C panel from its top left,
    1 pixel inset so neighbouring cells keep a white gap."""
    row0, row1, col0, col1 = panel
    cell = min((row1 - row0) // M, (col1 - col0) // N)
    boxes = np.empty((M, N, 4), dtype=int)
    for m in range(M):
        for n in range(N):
            boxes[m, n] = (row0 + m * cell + 1, row0 + (m + 1) * cell - 1,
                           col0 + n * cell + 1, col0 + (n + 1) * cell - 1)
    return boxes


def _build_movie(rows: int, cols: int, flow: str, M: int, N: int, K: int, double_buffer: bool,
                 seed: int, canvas: _Canvas, labels: _Labels) -> _Movie:
    A, B = _operands(M, N, K, seed)
    array = SystolicArray(rows, cols, flow, double_buffer=double_buffer)
    steps = list(array.steps(A, B))
    run = array.matmul(A, B)
    macs_so_far = np.cumsum([s.active_macs for s in steps])
    return _Movie(steps, run, macs_so_far, canvas.figure, canvas.frame_image, canvas.background,
                  canvas.array_boxes, _output_boxes(canvas.panel, M, N), labels, canvas.title,
                  (A, B), canvas.ticks)


def _cell_lines(step, r: int, c: int) -> list[str]:
    ai, bi = step.a_index[r, c], step.b_index[r, c]
    a = f"a[{ai[0]},{ai[1]}]={_value(step.a[r, c])}" if ai[0] >= 0 else "a –"
    b = f"b[{bi[0]},{bi[1]}]={_value(step.b[r, c])}" if bi[0] >= 0 else "b –"
    return [a, b, f"Σ={_value(step.psum[r, c])}"]


def _fill(frame: np.ndarray, box: np.ndarray, colour: tuple) -> None:
    frame[box[0]:box[1], box[2]:box[3], :3] = [int(255 * x) for x in colour]


def _draw_step(movie: _Movie, index: int, flow: str) -> None:
    step = movie.steps[index]
    frame = movie.background.copy()
    holding = ~np.isnan(step.a) | ~np.isnan(step.b)
    for (r, c), box in np.ndenumerate(movie.array_boxes[..., 0]):
        cell = movie.array_boxes[r, c]
        colour = _ACTIVE if step.active[r, c] else _HOLDING if holding[r, c] else _EMPTY
        _fill(frame, cell, colour)
        if holding[r, c]:
            movie.labels.paint(frame, _cell_lines(step, r, c),
                               ((cell[0] + cell[1]) // 2, (cell[2] + cell[3]) // 2))
    written = ~np.isnan(step.output)
    before = ~np.isnan(movie.steps[index - 1].output) if index else np.zeros_like(written)
    for (m, n), box in np.ndenumerate(movie.output_boxes[..., 0]):
        colour = (_ACTIVE if written[m, n] and not before[m, n] else _WRITTEN if written[m, n]
                  else _PENDING)
        _fill(frame, movie.output_boxes[m, n], colour)
    # Index labels of C's rows (left of the panel) and columns (under it).
    ticks = movie.tick_labels
    boxes = movie.output_boxes
    for m in range(boxes.shape[0]):
        ticks.paint(frame, [str(m)], ((boxes[m, 0, 0] + boxes[m, 0, 1]) // 2, boxes[m, 0, 2] - 8))
    for n in range(boxes.shape[1]):
        ticks.paint(frame, [str(n)], (boxes[-1, n, 1] + 8, (boxes[-1, n, 2] + boxes[-1, n, 3]) // 2))
    movie.frame_image.set_data(frame)
    phase = "loading the stationary tile" if step.phase == "load" else "computing"
    movie.title.set_text(
        f"{flow}: cycle {step.cycle + 1} of {len(movie.steps)}, fold {step.fold + 1} of "
        f"{movie.run.folds}, {phase}; {step.active_macs} useful MACs")


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
    canvas = _build_canvas(rows, cols)  # one figure for every shape and dataflow
    cell = int(min(canvas.array_boxes[0, 0, 1] - canvas.array_boxes[0, 0, 0],
                   canvas.array_boxes[0, 0, 3] - canvas.array_boxes[0, 0, 2]))
    labels = _Labels.fitting(cell, 3, "a[7,7]=9")

    def movie_for(values: dict) -> _Movie:
        key = (values["dataflow"], values["M"], values["N"], values["K"], values["double_buffer"])
        if key in movies:
            movies.move_to_end(key)
        else:
            movies[key] = _build_movie(rows, cols, *key, seed=seed, canvas=canvas,
                                       labels=labels)
            if len(movies) > _MOVIES_KEPT:
                movies.popitem(last=False)
        return movies[key]

    sizes = list(range(1, 9))
    controls = {
        "dataflow": W.ToggleButtons(options=[(f"{k} ({DATAFLOW_NAMES[k]})", k)
                                             for k in _FLOW_ORDER], value="ws",
                                    description="dataflow", style=_STYLE),
        "double_buffer": W.Checkbox(value=False, description="double buffering", indent=False),
        "M": W.Dropdown(options=sizes, value=4, description="M", style=_STYLE, layout=W.Layout(width="7em")),
        "N": W.Dropdown(options=sizes, value=4, description="N", style=_STYLE, layout=W.Layout(width="7em")),
        "K": W.Dropdown(options=sizes, value=4, description="K", style=_STYLE, layout=W.Layout(width="7em")),
        # Counts cycles from 1, as the figure's and the table's text do.
        "cycle": W.IntSlider(value=1, min=1, max=2, description="cycle", continuous_update=True,
                             style=_STYLE, layout=W.Layout(width="28em")),
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
        _draw_step(movie, index, values["dataflow"])
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
        return View(figure=movie.figure, text=text, result=step,
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
                        style=_STYLE),
        "side": W.Dropdown(options=[4, 8, 16, 32, 64, 128], value=16, description="array side",
                           style=_STYLE),
        "dataflow": W.ToggleButtons(options=_FLOW_ORDER, value="ws",
                                    description="dataflow", style=_STYLE),
    }
    figure = frozen_figure(8.2, 3.3)
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
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    systolic_label = ax.text(0, -0.08, "", transform=ax.get_xaxis_transform(), ha="center",
                             va="top", fontsize=8)
    title = figure.text(0.39, 0.93, "", ha="center", fontsize=9)
    figure.freeze([p for group in bars.values() for p in group] + [systolic_label, title])
    simd_cache: dict[int, dict] = {}

    def render(values: dict) -> View:
        n, side, flow = values["n"], values["side"], values["dataflow"]
        if n not in simd_cache:  # the SIMD runs do not depend on the array: compute once per n
            simd_cache[n] = _simd_runs(n)
        label = f"systolic {side}×{side} ({flow})"
        runs = {label: SystolicArray(side, side, flow).estimate(M=n, N=n, K=n), **simd_cache[n]}
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
