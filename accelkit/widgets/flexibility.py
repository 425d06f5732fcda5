"""Lesson 09's widgets: the same work on the toy GPU and the toy TPU, and on real chips' rooflines.

Every number comes from :mod:`accelkit.labs.flexibility` (the lab's machines, memoised
comparisons, the mix's operations, the roofline pair, the Amdahl presets), :mod:`accelkit.workloads` and
:mod:`accelkit.roofline`; this module only gathers inputs and draws.
"""

from __future__ import annotations

import ipywidgets as W
import numpy as np
from matplotlib.ticker import FormatStrFormatter, MaxNLocator

from accelkit import roofline
from accelkit.labs.flexibility import (DENSE_LAYER_BATCH, TENSOR_CORES, amdahl_numbers,
                                       lab_compare, mix_ops, recurrent_batch_sweep,
                                       roofline_pair, with_side_instructions)
from accelkit.workloads import WORKLOADS, Comparison
from accelkit.widgets._axes import Ticks, fixed_ticks, log_ticks
from accelkit.widgets._base import (CHOICE_COLOUR, INK, STYLE, TPU_COLOUR, Explorer, View,
                                    legend_lines, new_figure, table_html, vendor_colour,
                                    vendor_key)
from accelkit.widgets._worked import WorkedProblem
from accelkit.widgets.quiz import MultipleChoice, multiple_choice

__all__ = ["flexibility_lab", "mix_builder", "gather_vs_matmul_roofline", "flexibility_quiz",
           "flexibility_worked_problem"]

_SIDES = (4, 16, 64, 256)
#: The TPU's vector unit (its systolic array takes the TPU colour).
_VECTOR_UNIT = "#e65100"


class _RatioBars:
    """A panel of horizontal bars, one per operation: TPU ÷ GPU cell-cycles, drawn in log2 units.

    Built once per figure; :meth:`update` moves bar lengths and colours, and the x limits and
    ticks when the ratios need a wider range. Its ticks are :class:`~accelkit.widgets._axes.Ticks`
    (one marker line and a text per label), made on the first update."""

    def __init__(self, ax, rows: int,
                 xlabel: str = "TPU cell-cycles ÷ GPU cell-cycles  (← TPU wins per cell · GPU wins →)"):
        self.ax = ax
        self.y = np.arange(rows)[::-1]
        self.bars = ax.barh(self.y, np.zeros(rows), left=0)
        ax.axvline(0, color=INK, linewidth=1)
        ax.set_xlabel(xlabel)
        self.limits: tuple[float, float] | None = None
        self.ticks: tuple[Ticks, Ticks] | None = None

    def update(self, comparison: Comparison) -> None:
        rows = comparison.operations
        ratios = [r.tpu_over_gpu_per_area for r in rows]
        for bar, row, ratio in zip(self.bars, rows, ratios):
            bar.set_width(np.log2(ratio))
            bar.set_color(TPU_COLOUR if row.tpu_unit == "matrix" else _VECTOR_UNIT)
        if self.ticks is None:
            self.ticks = (Ticks(self.ax, "x"), Ticks(self.ax, "y", fontsize=8))
        x_ticks, y_ticks = self.ticks
        y_ticks.set(list(self.y), [r.label + (f" ×{r.count}" if r.count > 1 else "")
                                   for r in rows])
        low = min(-4.5, min(np.log2(ratios)) - 0.5)
        high = max(4.5, max(np.log2(ratios)) + 0.5)
        if (low, high) != self.limits:
            ticks = [t for t in range(int(np.floor(low)), int(np.ceil(high)) + 1) if t % 2 == 0]
            # the limits take in every tick (as matplotlib's set_xticks widens them)
            self.ax.set_xlim(min(low, ticks[0]), max(high, ticks[-1]))
            x_ticks.set(ticks, [f"{2.0 ** t:g}" if t >= 0 else f"1/{2.0 ** -t:g}"
                                for t in ticks])
            self.limits = (low, high)


def _totals(comparison: Comparison) -> list[tuple[str, str]]:
    c = comparison
    return [
        ("MAC cells (area): GPU / TPU", f"{c.gpu_mac_cells:,} / {c.tpu_mac_cells:,}"),
        ("cycles: GPU / TPU", f"{c.gpu_cycles:,} / {c.tpu_cycles:,}"),
        ("TPU ÷ GPU cell-cycles (whole workload)",
         f"{c.tpu_cell_cycles / c.gpu_cell_cycles:.2f} → {c.winner_per_area} wins per cell"),
        ("share of time outside matrix work: GPU / TPU",
         f"{c.gpu_outside_matrix_share:.1%} / {c.tpu_outside_matrix_share:.1%}"),
        # Busy MAC cells of the units' peak, not MFU (lesson 07: a model's FLOPs over the
        # chips' peak).
        ("matrix-unit utilization (busy MAC cells of peak): GPU / TPU",
         f"{c.gpu_mac_utilization:.1%} / {c.tpu_mac_utilization:.1%}"),
    ]


def flexibility_lab(workload: str = "transformer_layer", tensor_core: str = "none (toy default)",
                    double_buffer: bool = False, side_instructions: int = 64) -> Explorer:
    """A preset workload on both toy machines: per-operation cell-cycles (area × time), the
    whole workload, and Amdahl's share of time outside the matrix unit. Three of the toy's
    assumptions can be flipped: a GPU tensor core, TPU weight double-buffering, branch length."""
    controls = {
        "workload": W.Dropdown(options=list(WORKLOADS), value=workload, description="workload",
                               style=STYLE),
        "tensor_core": W.Dropdown(options=list(TENSOR_CORES), value=tensor_core,
                                  description="GPU tensor core", style=STYLE),
        "double_buffer": W.Checkbox(value=double_buffer,
                                    description="TPU double-buffers weights (real TPUs do)"),
        "side_instructions": W.Dropdown(options=list(_SIDES), value=side_instructions,
                                        description="branch: instructions per side", style=STYLE),
    }

    # One figure per workload (its height follows its number of operations), built the first
    # time the workload is shown and reused after: a render only moves the bars.
    panels: dict[str, tuple] = {}

    def panel(name: str, rows: int) -> tuple:
        if name not in panels:
            height = 1.2 + 0.24 * rows
            figure = new_figure(7.4, height, margins={"left": 0.33, "right": 0.97,
                                                      "bottom": 0.75 / height, "top": 0.97})
            bars = _RatioBars(figure.add_subplot(), rows)
            panels[name] = (figure, bars)
        return panels[name]

    def render(values: dict) -> View:
        ops = with_side_instructions(WORKLOADS[values["workload"]], values["side_instructions"])
        result = lab_compare(ops, values["workload"], values["tensor_core"],
                             values["double_buffer"])
        figure, bars = panel(values["workload"], len(ops))
        bars.update(result)
        note = (f"<br><span style='color:{TPU_COLOUR}'>■</span> runs on the TPU's systolic array "
                f"&nbsp;<span style='color:{_VECTOR_UNIT}'>■</span> runs on its vector unit")
        return View(figure=figure, text=table_html(_totals(result)) + note, result=result)

    # Work done once at build (well inside a lesson's 10 s), so that a learner's first move of
    # any knob only redraws: every workload's panel is built (its axis label placed by a
    # draw), and every setting one knob away from the start is simulated (memoised by
    # accelkit.flexibility).
    start = {name: control.value for name, control in controls.items()}
    for name in WORKLOADS:
        render({**start, "workload": name})
    for knob, control in controls.items():
        if knob == "workload":
            continue
        for option in (control.options if hasattr(control, "options") else (True, False)):
            values = {**start, knob: option}
            lab_compare(with_side_instructions(WORKLOADS[values["workload"]],
                                               values["side_instructions"]),
                        values["workload"], values["tensor_core"], values["double_buffer"])

    return Explorer(controls, render, title="The same work on both toy machines")


_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
_MEMORY = {"toy default (32 in flight)": 8, "generous (256 in flight)": 64}


def mix_builder(batch: int = 4, taken_fraction: float = 0.5, side_instructions: int = 64,
                density: float = 0.1, embedding_dim: int = 16, tensor_core: str = "none (toy default)",
                memory: str = "toy default (32 in flight)") -> Explorer:
    """Build a mix of five operations and move their knobs: recurrent batch, branch divergence
    and length, sparsity, embedding width; flip the GPU tensor core and both machines' memory
    parallelism. Bars: who wins each operation per cell; line: the recurrent step against batch."""
    controls = {
        "batch": W.SelectionSlider(options=list(_BATCHES), value=batch,
                                   description="recurrent batch", continuous_update=False,
                                   style=STYLE),
        "taken_fraction": W.SelectionSlider(options=[0.0, 0.02, 0.1, 0.5, 0.9, 1.0],
                                            value=taken_fraction, description="branch taken by",
                                            continuous_update=False, style=STYLE),
        "side_instructions": W.Dropdown(options=list(_SIDES), value=side_instructions,
                                        description="instructions per side", style=STYLE),
        "density": W.SelectionSlider(options=[0.05, 0.1, 0.25, 0.5, 1.0], value=density,
                                     description="sparse: blocks kept", continuous_update=False,
                                     style=STYLE),
        "embedding_dim": W.SelectionSlider(options=[1, 4, 16, 64], value=embedding_dim,
                                           description="embedding row width",
                                           continuous_update=False, style=STYLE),
        "tensor_core": W.Dropdown(options=list(TENSOR_CORES), value=tensor_core,
                                  description="GPU tensor core", style=STYLE),
        "memory": W.Dropdown(options=list(_MEMORY), value=memory,
                             description="memory parallelism (both)", style=STYLE),
    }

    # Built once; a render moves the bars, the batch curve and its highlight.
    figure = new_figure(8.0, 2.6, margins={"left": 0.26, "right": 0.98, "bottom": 0.22,
                                           "top": 0.96, "wspace": 0.3})
    grid = figure.add_gridspec(1, 2, width_ratios=(1.6, 1))
    bars = _RatioBars(figure.add_subplot(grid[0]), len(mix_ops()),
                      "TPU ÷ GPU cell-cycles (← TPU · GPU →)")
    ax = figure.add_subplot(grid[1])
    (curve,) = ax.plot(range(len(_BATCHES)), np.ones(len(_BATCHES)), "o-", color="#37474f",
                       markersize=3)
    (choice,) = ax.plot([], [], "o", color=CHOICE_COLOUR, markersize=10)
    ax.axhline(1.0, color=INK, linewidth=1)
    ax.set_xticks(range(0, len(_BATCHES), 2), [str(b) for b in _BATCHES[::2]])
    ax.set_xlabel("recurrent step: batch")
    ax.set_ylabel("TPU ÷ GPU cell-cycles")
    # Tick labels of one width (two decimals: every ratio drawn is below 10), so the axis labels
    # can be placed once instead of on every draw.
    y_locator = MaxNLocator(nbins=4, steps=[1, 2, 5, 10])
    ax.yaxis.set_major_locator(y_locator)
    ax.yaxis.set_major_formatter(FormatStrFormatter("%.2f"))
    Ticks(ax, "x").set(list(range(0, len(_BATCHES), 2)), [str(b) for b in _BATCHES[::2]])
    y_ticks = Ticks(ax, "y")

    def compute(values: dict) -> tuple[Comparison, list[float]]:
        warps = _MEMORY[values["memory"]]
        ops = mix_ops(values["batch"], values["taken_fraction"], values["side_instructions"],
                      values["density"], values["embedding_dim"])
        result = lab_compare(ops, "custom", values["tensor_core"], False, warps)
        batch_sweep = list(recurrent_batch_sweep(_BATCHES, values["tensor_core"], warps).values())
        return result, batch_sweep

    # Run now every setting one knob away from the start (the densities included, about 20 ms
    # of GPU sparse matmul each), and the lesson's 16×8×16 + generous memory, so that the first
    # move of a knob only draws: a few hundred ms at build, well inside a lesson's 10 s; the
    # runs are memoised.
    start = {name: control.value for name, control in controls.items()}
    for name, control in controls.items():
        for option in control.options:
            compute({**start, name: option})
    compute({**start, "tensor_core": "16×8×16", "memory": "generous (256 in flight)"})

    def render(values: dict) -> View:
        result, batch_sweep = compute(values)
        bars.update(result)
        curve.set_ydata(batch_sweep)
        i = _BATCHES.index(values["batch"])
        choice.set_data([i], [batch_sweep[i]])
        ax.relim()
        ax.autoscale_view()
        ys = [float(t) for t in y_locator.tick_values(*ax.get_ylim())]
        y_ticks.set(ys, [f"{t:.2f}" for t in ys])
        return View(figure=figure, text=table_html(_totals(result)), result=result,
                    extras={"batch_sweep": dict(zip(_BATCHES, batch_sweep))})

    return Explorer(controls, render, title="Build a mix: where flexibility wins", columns=3)


_CHIPS = ("TPU v5e", "TPU v5p", "NVIDIA H100 (SXM)", "NVIDIA B200 (HGX)", "NVIDIA L4")


def gather_vs_matmul_roofline(chip_a: str = "TPU v5e", chip_b: str = "NVIDIA H100 (SXM)",
                              batch: int = DENSE_LAYER_BATCH) -> Explorer:
    """Real chips: an embedding-bag gather and a dense layer on two chips' rooflines (bf16).

    The default batch is lesson 09's (:data:`~accelkit.labs.flexibility.DENSE_LAYER_BATCH`),
    where the dense layer is compute-bound on both default chips and the gather is not: at 256
    both would be memory-bound and the contrast would not show."""
    controls = {
        "chip_a": W.Dropdown(options=list(_CHIPS), value=chip_a, description="chip A",
                             style=STYLE),
        "chip_b": W.Dropdown(options=list(_CHIPS), value=chip_b, description="chip B",
                             style=STYLE),
        "batch": W.SelectionSlider(options=[1, 8, 64, 256, 1024, 4096], value=batch,
                                   description="dense layer batch", continuous_update=False,
                                   style=STYLE),
    }
    x = np.logspace(-1, 4, 60)
    curves = {c: roofline.curve(c, "bf16", x) for c in _CHIPS}
    # One figure, built once with fixed ticks (automatic log tick locators cost more than the
    # whole budget); a render only moves data and swaps the legend's names.
    figure = new_figure(7.0, 3.2, margins={"left": 0.11, "bottom": 0.17, "top": 0.86})
    ax = figure.add_subplot()
    peaks = [float(curves[c].max()) / 1e12 for c in _CHIPS]
    lows = [float(curves[c].min()) / 1e12 for c in _CHIPS]
    xticks = [0.1, 1, 10, 100, 1000, 10000]
    yticks = [t for t in (0.01, 0.1, 1, 10, 100, 1000, 10000)
              if min(lows) / 3 <= t <= max(peaks) * 2]
    log_ticks(ax, "x", xticks)
    log_ticks(ax, "y", yticks)
    ax.set_xlim(x[0], x[-1])
    ax.set_ylim(min(lows) / 3, max(peaks) * 2)
    ax.set_xlabel("arithmetic intensity (FLOPs per byte); ■ gather, ● dense layer")
    ax.set_ylabel("attainable TFLOP/s (bf16)")
    fixed_ticks(ax)  # one marker line and texts per axis (widgets/_axes.py)
    styles = ("-", "--")  # chip A solid, chip B dashed (two chips of a kind share a hue)
    artists = [(ax.plot([], [], ls=style)[0], ax.plot([], [], "s", markersize=8)[0],
                ax.plot([], [], "o", markersize=8)[0]) for style in styles]
    legend = ax.legend([group[0] for group in artists], ["A", "B"], loc="lower right",
                       fontsize=8)
    vendor_key(figure, x=0.99, y=0.99)

    def render(values: dict) -> View:
        pairs = {c: roofline_pair(c, values["batch"]) for c in (values["chip_a"], values["chip_b"])}
        chosen = (values["chip_a"], values["chip_b"])
        for slot, (chip, group) in enumerate(zip(chosen, artists)):
            gather, dense = pairs[chip]
            colour = vendor_colour(chip, slot if chosen[0] != chosen[1] else 0)
            line, square, dot = group
            line.set_data(x, curves[chip] / 1e12)
            square.set_data([gather.arithmetic_intensity],
                            [gather.achieved_flops_per_second / 1e12])
            dot.set_data([dense.arithmetic_intensity], [dense.achieved_flops_per_second / 1e12])
            for artist in group:
                artist.set_color(colour)
            legend_lines(legend)[slot].set_color(colour)
            legend.get_texts()[slot].set_text(("chip A: ", "chip B: ")[slot] + chip)
        rows = []
        for chip, (gather, dense) in pairs.items():
            rows.append((f"{chip}: gather", f"{gather.seconds * 1e6:,.1f} µs, {gather.bound}-bound, "
                                            f"{gather.fraction_of_peak:.2%} of peak"))
            rows.append((f"{chip}: dense layer", f"{dense.seconds * 1e6:,.1f} µs, "
                                                 f"{dense.bound}-bound, "
                                                 f"{dense.fraction_of_peak:.0%} of peak"))
        return View(figure=figure, text=table_html(rows), result=pairs)

    return Explorer(controls, render, title="Real chips: a gather and a dense layer on the roofline")


def flexibility_worked_problem() -> WorkedProblem:
    """Scaling-book-style worked problem: Amdahl's law caps what a faster matrix unit can buy."""
    numbers = amdahl_numbers()  # computed once, before any button press
    rec, tfm = numbers["recommender_step"], numbers["transformer_layer"]
    question = (
        "On the default toy TPU the recommender step spends "
        f"{rec.tpu_outside_matrix_share:.1%} of its cycles outside the systolic array, the "
        f"transformer layer {tfm.tpu_outside_matrix_share:.1%}. A next-generation TPU makes the "
        "array infinitely fast and changes nothing else. (a) At most how much faster does each "
        "workload run? (b) For the recommender, what should the chip's designers improve "
        "instead? Work it out, then press the button.")

    def answer() -> str:
        gather = next(r for r in rec.operations if r.kind == "gather")
        pool = next(r for r in rec.operations if r.kind == "reduction")
        return (
            f"(a) Amdahl's law: with the matrix part gone, the time left is the "
            f"share outside it, so the speed-up is at most 1 ÷ that share: recommender "
            f"1 ÷ {rec.tpu_outside_matrix_share:.3f} = <b>{1 / rec.tpu_outside_matrix_share:.2f}×</b>, "
            f"transformer 1 ÷ {tfm.tpu_outside_matrix_share:.3f} = "
            f"<b>{1 / tfm.tpu_outside_matrix_share:.1f}×</b>.<br>"
            f"(b) The recommender's time is in the embedding gathers ({gather.tpu_cycles:,} "
            f"cycles) and pooling ({pool.tpu_cycles:,}), on a narrow vector unit waiting on "
            f"memory. Faster gathers need more memory parallelism and a unit built for "
            f"irregular access — which is why TPU v4 added SparseCores for embeddings (Jouppi et "
            f"al., ISCA 2023), and why a GPU's many flexible lanes lose less here.")

    return WorkedProblem(question, answer)


def flexibility_quiz() -> MultipleChoice:
    """Check yourself: what to improve when most time is outside the matrix unit."""
    rec = amdahl_numbers()["recommender_step"]
    return multiple_choice(
        f"On the toy TPU the recommender step spends {rec.tpu_outside_matrix_share:.0%} of its "
        f"time outside the systolic array and needs {rec.tpu_cell_cycles / rec.gpu_cell_cycles:.2f}× "
        "the GPU's cell-cycles. Which change to the TPU would help this workload most?",
        ["A systolic array four times larger, so the matrix work that remains finishes in a "
         "quarter of the time.",
         "A wider vector unit with more memory requests in flight (or a dedicated gather engine).",
         "Double-buffering the systolic array's weights, so that no fold waits for its load."],
        correct=1,
        feedback=[
            "The array is already idle most of the step: Amdahl's law says speeding up the "
            "matrix part cannot buy more than 1 ÷ the share outside it.",
            "The gathers and pooling are what take the time, and they wait on memory with few "
            "lanes to spread over; real TPUs added SparseCores for exactly this.",
            "Double-buffering hides weight loads in matmuls; the matmuls are a few percent of "
            "this step.",
        ])
