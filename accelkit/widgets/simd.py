"""Lesson 02's widgets: a toy GPU's warps, divergence, coalescing and tensor cores, by moving knobs.

Every number comes from :class:`accelkit.simd.SIMDMachine` (and the seeded operations of
:mod:`accelkit.workloads`); this module only gathers inputs and draws. Sizes are small (4,096
elements) or go through ``estimate()``, so each render stays within the 50 ms budget.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as W
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from accelkit.widgets.quiz import MultipleChoice, multiple_choice
from accelkit.simd import PATTERN_ELEMENTS, SIMDMachine, SIMDRun, access_pattern_indices
from accelkit.workloads import Branchy
from accelkit.widgets._axes import Ticks, fixed_ticks, key_column
from accelkit.widgets._base import CHOICE_COLOUR, STYLE, Explorer, View, new_figure, si, table_html
from accelkit.widgets._worked import WorkedProblem

__all__ = ["warp_lab", "divergence_lab", "tensor_core_lab", "simd_quiz", "simd_worked_problem"]

#: Elements per kernel launch in the lesson's small experiments: 128 warps of 32 lanes.
ELEMENTS = PATTERN_ELEMENTS

#: Kernels of the warp lab: one elementwise op and one plain load in four access patterns.
KERNELS = ("GELU, coalesced", "load, coalesced", "load, stride 2", "load, stride 8", "load, random")
_WARPS = (1, 2, 4, 8, 16, 32)
_LANES = (8, 16, 32, 64)
_FRACTIONS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 1.0)
_SIDES = (4, 16, 64, 256)

#: Matmul kernels of the tensor-core lab: label -> (shared_memory, tensor_core tile).
MATMUL_KERNELS = {
    "naive (no shared memory)": (False, None),
    "tiled SIMD (shared memory)": (True, None),
    "tensor core 4×4×4": (True, (4, 4, 4)),
    "tensor core 16×8×16": (True, (16, 8, 16)),
}
_SIZES = (64, 128, 256, 512, 1024, 2048)
# Not blue or green: those mean TPU and GPU in every widget (accelkit.widgets._base).
_KERNEL_COLOURS = ("#9e9e9e", "#6a1b9a", "#00838f", "#e65100")


_PLAIN = FuncFormatter(lambda value, _pos: si(value, digits=3))


def _lean_log(ax, x_ticks: tuple[int, ...] | None = None) -> None:
    """Log axes with decade ticks in plain text: minor log ticks and mathtext labels (10^k)
    would cost most of a render's drawing time."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=6))
    ax.yaxis.set_major_formatter(_PLAIN)
    ax.yaxis.set_minor_locator(NullLocator())
    if x_ticks is not None:
        ax.set_xscale("log", base=2)
        ax.set_xticks(x_ticks, [str(v) for v in x_ticks])
        ax.xaxis.set_minor_locator(NullLocator())


def _fit_log_y(ax, values) -> None:
    """Set log y-limits around ``values`` with autoscale-like margins (5% of the decades spanned),
    without asking matplotlib to autoscale: a persistent figure only moves its limits."""
    logs = np.log10(np.asarray(values, dtype=float))
    low, high = float(logs.min()), float(logs.max())
    pad = max(0.05 * (high - low), 0.05)
    ax.set_ylim(10 ** (low - pad), 10 ** (high + pad))


def _pattern(kernel: str) -> str:
    """The access pattern of one of :data:`KERNELS`' loads: "load, stride 2" -> "stride 2"."""
    return kernel.split(", ", 1)[1]


def _kernel_run(kernel: str, machine: SIMDMachine) -> SIMDRun:
    """Run one of :data:`KERNELS` on ``machine`` over :data:`ELEMENTS` elements (seeded).

    The "load" kernels are plain loads (:meth:`SIMDMachine.load`: each thread computes its
    address, no index array is read), so their load costs exactly lesson 02's
    ``transactions`` count for the pattern, not a gather's."""
    if kernel.startswith("GELU"):
        x = np.random.default_rng(0).standard_normal(ELEMENTS)
        return machine.elementwise(x, "gelu")
    idx = access_pattern_indices(_pattern(kernel))
    x = np.arange(8 * ELEMENTS, dtype=np.float32)  # the span of stride 8 and random
    return machine.load(x, idx)


def _transactions_row(kernel: str, run: SIMDRun) -> str:
    """The transactions row: the total per warp and, for a load kernel, the load's share (the
    same call as lesson 02's coalescing cell) beside the store's."""
    tx = run.global_transactions
    if kernel.startswith("GELU"):
        return f"{tx:,} ({tx / run.warps:.1f} per warp)"
    load = SIMDMachine(lanes=run.lanes).transactions(access_pattern_indices(_pattern(kernel)))
    return (f"{tx:,} ({tx / run.warps:.1f} per warp: the load {load / run.warps:.1f}, "
            f"the store {(tx - load) / run.warps:.1f})")


@lru_cache(maxsize=len(KERNELS) * len(_LANES))
def _warp_sweep(kernel: str, lanes: int) -> tuple[SIMDRun, ...]:
    """One kernel's runs at every resident-warp count. Kept, one per (kernel, lanes) choice
    (20): each is a few ms of simulation, all run when the lab is built, so that no knob then
    waits on one."""
    return tuple(_kernel_run(kernel, SIMDMachine(lanes=lanes, warps_per_core=w)) for w in _WARPS)


def warp_lab(kernel: str = "GELU, coalesced", lanes: int = 32, warps_per_core: int = 8) -> Explorer:
    """One kernel over 4,096 elements on a 4-core toy GPU: move lanes, resident warps and the
    access pattern, and watch issue cycles, memory cycles and utilization."""
    controls = {
        "kernel": W.Dropdown(options=list(KERNELS), value=kernel, description="kernel",
                             style=STYLE),
        "lanes": W.SelectionSlider(options=list(_LANES), value=lanes, description="lanes per warp",
                                   continuous_update=False, style=STYLE),
        "warps_per_core": W.SelectionSlider(options=list(_WARPS), value=warps_per_core,
                                            description="resident warps per core",
                                            continuous_update=False, style=STYLE),
    }

    # Every (kernel, lanes) sweep is a few milliseconds: run them all now, so no knob waits on
    # a simulation later.
    for k in KERNELS:
        for n in _LANES:
            _warp_sweep(k, n)
    # The figure is built once; a render only moves data, the y limits and ticks, and the
    # title. Ticks and key are drawn as a few texts (widgets/_axes.py).
    figure = new_figure(7.0, 2.9, margins={"left": 0.1, "bottom": 0.19})
    ax = figure.add_subplot()
    ones = np.ones(len(_WARPS))
    (total,) = ax.plot(_WARPS, ones, "o-", color="#37474f", label="total cycles")
    (memory,) = ax.plot(_WARPS, ones, "--", color="#e65100", label="memory cycles")
    (issue,) = ax.plot(_WARPS, ones, ":", color="#6a1b9a", label="issue cycles")
    (choice,) = ax.plot([], [], "o", markersize=12, color=CHOICE_COLOUR)
    _lean_log(ax, _WARPS)
    ax.set_xlabel("resident warps per core (memory requests in flight)")
    ax.set_ylabel("cycles (log scale)")
    title = ax.set_title("")
    fixed_ticks(ax, which="x")
    # Its range follows the curves: the axis's own locator, per render (and the y label clear
    # of the widest label it can show).
    y_ticks = Ticks(ax, "y", widest="100 k")
    box = ax.get_position()
    key_column(figure, [("total cycles", total), ("memory cycles", memory),
                        ("issue cycles", issue)], x=box.x1 - 0.2, y=box.y1 - 0.02)

    def render(values: dict) -> View:
        sweep = _warp_sweep(values["kernel"], values["lanes"])
        run = sweep[_WARPS.index(values["warps_per_core"])]
        curves = [[r.cycles for r in sweep], [r.memory_cycles for r in sweep],
                  [r.issue_cycles for r in sweep]]
        for line, ys in zip((total, memory, issue), curves):
            line.set_ydata(ys)
        choice.set_data([values["warps_per_core"]], [run.cycles])
        _fit_log_y(ax, curves)
        y_ticks.update()
        title.set_text(f"{values['kernel']}: {ELEMENTS:,} elements, 4 cores × {values['lanes']} lanes")
        bound = "memory" if run.memory_cycles > run.issue_cycles else "instruction issue"
        text = table_html([
            ("cycles", f"{run.cycles:,}"),
            ("issue cycles / memory cycles", f"{run.issue_cycles:,} / {run.memory_cycles:,}"),
            ("what sets the pace", bound),
            ("global-memory transactions", _transactions_row(values["kernel"], run)),
            ("utilization (busy lane-slots of peak)", f"{run.utilization:.1%}"),
        ])
        return View(figure=figure, text=text, result=run, extras={"sweep": sweep})

    return Explorer(controls, render, title="Warps, lanes and access patterns")


@lru_cache(maxsize=2 * len(_LANES))
def _divergence_sweep(lanes: int, skip: bool) -> dict[int, tuple[SIMDRun, ...]]:
    """Every branch length's runs over the taken fractions. Kept, one per (lanes, skip)
    choice (8): each is about 10 ms of simulation, all run when the lab is built, so that no
    knob then waits on one."""
    machine = SIMDMachine(lanes=lanes, skip_uniform_branches=skip)
    return {side: tuple(Branchy(ELEMENTS, f, side_instructions=side).run(machine)
                        for f in _FRACTIONS) for side in _SIDES}


def divergence_lab(taken_fraction: float = 0.5, side_instructions: int = 64, lanes: int = 32,
                   skip_uniform_branches: bool = True) -> Explorer:
    """A data-dependent branch over 4,096 elements: choose the share of lanes that take it and
    the length of each side, and see the slowdown against a branch every lane agrees on."""
    controls = {
        "taken_fraction": W.SelectionSlider(options=list(_FRACTIONS), value=taken_fraction,
                                            description="share of lanes taking the branch",
                                            continuous_update=False, style=STYLE),
        "side_instructions": W.Dropdown(options=list(_SIDES), value=side_instructions,
                                        description="instructions per side", style=STYLE),
        "lanes": W.SelectionSlider(options=list(_LANES), value=lanes, description="lanes per warp",
                                   continuous_update=False, style=STYLE),
        "skip_uniform_branches": W.Checkbox(value=skip_uniform_branches,
                                            description="warps that agree skip the other side"),
    }

    # Eight sweeps (lanes × skip) of about 10 ms each: run them now, not when a knob moves.
    for n in _LANES:
        for skip in (True, False):
            _divergence_sweep(n, skip)
    # Built once; a render restyles the chosen curve (and its key) and moves data; its ticks
    # and key are drawn as a few texts (widgets/_axes.py).
    figure = new_figure(7.0, 2.9, margins={"left": 0.1, "bottom": 0.19, "right": 0.84})
    ax = figure.add_subplot()
    lines = [ax.plot(_FRACTIONS, np.ones(len(_FRACTIONS)), "-", markersize=4, label=str(s))[0]
             for s in _SIDES]
    (choice,) = ax.plot([], [], "o", markersize=12, color=CHOICE_COLOUR)
    ax.set_xlabel("share of lanes taking the branch")
    ax.set_ylabel("slowdown (×)")
    title = ax.set_title("", fontsize=9)
    greys = ("#b0bec5", "#78909c", "#37474f", "#000000")
    fixed_ticks(ax, which="x")
    y_ticks = Ticks(ax, "y", widest="10.0")  # autoscaled to the curves: the axis's locator
    # The key beside the axes, not over the curves; its samples follow the chosen side.
    box = ax.get_position()
    keys = [sample for sample, _ in key_column(
        figure, [(str(s), line) for s, line in zip(_SIDES, lines)], x=box.x1 + 0.015,
        y=box.y1, title="instructions\nper branch\nside")]

    def render(values: dict) -> View:
        sweeps = _divergence_sweep(values["lanes"], values["skip_uniform_branches"])
        side = values["side_instructions"]
        runs = sweeps[side]
        i = _FRACTIONS.index(values["taken_fraction"])
        run, uniform = runs[i], runs[0]
        for s, line, key, grey in zip(_SIDES, lines, keys, greys):
            line.set_ydata([r.cycles / sweeps[s][0].cycles for r in sweeps[s]])
            for artist in (line, key):
                artist.set_color(CHOICE_COLOUR if s == side else grey)
                artist.set_linewidth(2.5 if s == side else 1)
                artist.set_marker("o" if s == side else "None")
        choice.set_data([_FRACTIONS[i]], [run.cycles / uniform.cycles])
        ax.relim()
        ax.autoscale_view()
        y_ticks.update()
        title.set_text(f"Branch divergence on 4 cores × {values['lanes']} lanes: slowdown "
                       "against no lane taking the branch")
        # What the checkbox models, on screen: its short label does not say what unticking it
        # means (lesson 02 says it in the cell before the lab).
        model = ("GPU: a warp whose lanes agree runs one side" if values["skip_uniform_branches"]
                 else "predication: every warp runs both sides under a mask")
        text = table_html([
            ("model", model),
            ("cycles (none take the branch → your choice)", f"{uniform.cycles:,} → {run.cycles:,}"),
            ("slowdown", f"{run.cycles / uniform.cycles:.2f}×"),
            ("warps that ran both sides", f"{run.diverged_warps} of {run.warps}"),
            ("lane utilization of the branch", f"{run.lane_utilization:.1%}"),
            ("issue / memory cycles", f"{run.issue_cycles:,} / {run.memory_cycles:,}"),
        ])
        return View(figure=figure, text=text, result=run, extras={"uniform": uniform})

    return Explorer(controls, render, title="Branch divergence: both sides under a mask")


def _matmul_kernel_machine(kernel: str, warps_per_core: int = 8) -> SIMDMachine:
    """The default toy GPU running one of :data:`MATMUL_KERNELS`."""
    shared, tile = MATMUL_KERNELS[kernel]
    return SIMDMachine(warps_per_core=warps_per_core, shared_memory=shared, tensor_core=tile)


def _matmul_sweep(warps_per_core: int) -> dict[str, tuple[SIMDRun, ...]]:
    return {k: tuple(_matmul_kernel_machine(k, warps_per_core).estimate(M=n, N=n, K=n)
                     for n in _SIZES) for k in MATMUL_KERNELS}


def tensor_core_lab(size: int = 1024, kernel: str = "tensor core 16×8×16",
                    warps_per_core: int = 8) -> Explorer:
    """A square matmul on the toy GPU with four kernels: naive, shared-memory tiled SIMD, and
    tiled with a 4×4×4 or 16×8×16 tensor core. Speed-up against the tile's promise, and why."""
    controls = {
        "size": W.SelectionSlider(options=list(_SIZES), value=size, description="M = N = K",
                                  continuous_update=False, style=STYLE),
        "kernel": W.Dropdown(options=list(MATMUL_KERNELS), value=kernel, description="kernel",
                             style=STYLE),
        "warps_per_core": W.SelectionSlider(options=[2, 8, 32, 128], value=warps_per_core,
                                            description="resident warps per core",
                                            continuous_update=False, style=STYLE),
    }

    # All four memory-parallelism settings are closed-form estimates (a few ms in all): compute
    # them now, so the axes keep one range (and one set of ticks) whichever knob moves.
    sweeps = {w: _matmul_sweep(w) for w in controls["warps_per_core"].options}
    # For scale, a real chip's promise (catalog peaks): a different machine, with an L2, larger
    # MMA tiles and asynchronous copies that the toy lacks (lesson 02 says which).
    from accelkit import chips  # local: keeps this change off the module's import block
    h100 = chips.get("NVIDIA H100 (SXM)")
    real_ratio = h100.peak_flops("fp16") / h100.peak_flops("fp32")
    figure = new_figure(7.6, 2.8, margins={"left": 0.1, "bottom": 0.19, "top": 0.96,
                                            "wspace": 0.42})
    left, right = figure.add_subplot(1, 2, 1), figure.add_subplot(1, 2, 2)
    cycle_lines, read_lines = [], []
    for k, colour in zip(MATMUL_KERNELS, _KERNEL_COLOURS):
        cycle_lines += left.plot(_SIZES, np.ones(len(_SIZES)), "o-", color=colour, markersize=3,
                                 label=k)
        read_lines += right.plot(_SIZES, np.ones(len(_SIZES)), "o-", color=colour, markersize=3)
    (choice,) = left.plot([], [], "o", markersize=11, color=CHOICE_COLOUR, zorder=5)
    for ax, label in ((left, "cycles"), (right, "global-memory reads (elements)")):
        _lean_log(ax, _SIZES[::2] + _SIZES[-1:])
        ax.set_xlabel("M = N = K")
        ax.set_ylabel(label)
    _fit_log_y(left, [r.cycles for s in sweeps.values() for runs in s.values() for r in runs])
    _fit_log_y(right, [sum(r.dram_reads.values())
                       for s in sweeps.values() for runs in s.values() for r in runs])
    # The axes' ranges are fixed over every choice: their ticks are read once and drawn as a
    # few texts, and the key (whose samples follow the chosen kernel) placed once, in the
    # empty upper left (widgets/_axes.py).
    fixed_ticks(left, right)
    box = left.get_position()
    keys = [sample for sample, _ in key_column(
        figure, [(k, line) for k, line in zip(MATMUL_KERNELS, cycle_lines)], x=box.x0 + 0.01,
        y=box.y1 - 0.02, fontsize=7)]

    def render(values: dict) -> View:
        sweep = sweeps[values["warps_per_core"]]
        i = _SIZES.index(values["size"])
        run = sweep[values["kernel"]][i]
        simd = sweep["tiled SIMD (shared memory)"][i]
        machine = _matmul_kernel_machine(values["kernel"], values["warps_per_core"])
        promise = machine.peak_macs_per_cycle / SIMDMachine().peak_macs_per_cycle
        for (k, runs), cyc, reads, key in zip(sweep.items(), cycle_lines, read_lines, keys):
            cyc.set_ydata([r.cycles for r in runs])
            reads.set_ydata([sum(r.dram_reads.values()) for r in runs])
            for artist in (cyc, reads, key):
                artist.set_linewidth(2.5 if k == values["kernel"] else 1)
        choice.set_data([values["size"]], [run.cycles])
        bound = "memory" if run.memory_cycles > run.issue_cycles else "instruction issue"
        text = table_html([
            ("kernel (thread-block tile)", run.kernel),
            ("cycles", f"{run.cycles:,}"),
            ("issue / memory cycles", f"{run.issue_cycles:,} / {run.memory_cycles:,}"),
            ("what sets the pace", bound),
            ("speed-up over tiled SIMD", f"{simd.cycles / run.cycles:.2f}×"),
            ("MACs per instruction: the unit's promise", f"{promise:g}×"),
            ("for scale, H100: 16-bit tensor ÷ fp32 SIMD peak (catalog; not the toy)",
             f"{real_ratio:.1f}×"),
            ("utilization of peak MACs", f"{run.utilization:.1%}"),
            ("global-memory reads (A + B)", si(sum(run.dram_reads.values()), "elements")),
        ])
        return View(figure=figure, text=text, result=run,
                    extras={"simd": simd, "promise": promise, "sweep": sweep,
                            "h100_tensor_over_simd_peak": real_ratio})

    return Explorer(controls, render, title="Matmul kernels: naive, tiled, tensor core")


def simd_worked_problem(size: int = 1024) -> WorkedProblem:
    """Scaling-book-style worked problem: why a 64× tensor core gives a few × on the toy GPU."""
    base = SIMDMachine()
    tc = SIMDMachine(tensor_core=(16, 8, 16))
    question = (
        f"The default toy GPU has {base.cores} cores × {base.lanes} lanes. "
        f"Give each core a 16×8×16 tensor core and multiply two {size}×{size} matrices. "
        "(a) How many MACs does one MMA instruction do, against one SIMD FMA instruction: what "
        "speed-up does the unit promise? (b) Which bound holds with the unit on: instruction "
        "issue or memory? (c) What speed-up do you get, and what caps it? Work it out, then press "
        "the button.")

    def answer() -> str:
        simd, run = base.estimate(M=size, N=size, K=size), tc.estimate(M=size, N=size, K=size)
        promise = tc.peak_macs_per_cycle / base.peak_macs_per_cycle
        latency = tc.memory_latency_cycles
        return (
            f"(a) 16·8·16 = {16 * 8 * 16:,} MACs per MMA against {base.lanes} "
            f"per FMA: the unit promises <b>{promise:g}×</b>.<br>"
            f"(b) With it, issue takes {run.issue_cycles:,} cycles but memory "
            f"{run.memory_cycles:,}: <b>memory</b> sets the pace. Memory cycles are "
            f"transactions × latency ÷ requests in flight = {run.global_transactions:,} × "
            f"{latency} ÷ ({tc.cores} cores × {tc.warps_per_core} warps).<br>"
            f"(c) {simd.cycles:,} ÷ {run.cycles:,} = <b>{simd.cycles / run.cycles:.2f}×</b>. "
            f"The tensor core shrinks the multiply instructions, not the bytes: the same tiles "
            f"must still come from global memory, and the SIMD kernel was already only "
            f"{simd.cycles / run.memory_cycles:.1f}× slower than that memory floor. To get more, "
            f"a real GPU keeps more bytes in flight and reuses each loaded tile more (larger "
            f"tiles), which is why its memory system grew with its tensor cores.")

    return WorkedProblem(question, answer)


def simd_quiz() -> MultipleChoice:
    """Check yourself: why does a 2% branch slow a warp-based machine so much?"""
    machine = SIMDMachine()
    uniform = Branchy(ELEMENTS, 0.0).run(machine)
    rare = Branchy(ELEMENTS, 0.02).run(machine)
    return multiple_choice(
        f"In the divergence lab, only 2% of lanes take the branch, yet the kernel takes "
        f"{rare.cycles / uniform.cycles:.2f}× as long as when none do. Why?",
        ["Every taking lane runs its own extra instruction stream, so the 2% of lanes that "
         "branch add their cost on top of all the others.",
         f"Divergence is per warp: {rare.diverged_warps} of {rare.warps} warps hold a taking "
         "lane, and each runs both sides under a mask.",
         "The branch makes memory accesses uncoalesced, so memory time goes up."],
        correct=1,
        feedback=[
            "Lanes of a warp share one instruction stream; a lane cannot run alone. Count warps, "
            "not lanes.",
            f"The chance that a warp of {machine.lanes} holds no taking lane is "
            f"0.98^{machine.lanes} ≈ {0.98 ** machine.lanes:.0%}, so about half the warps diverge. Sorting or grouping data so that warps agree is the classic fix.",
            "The loads and stores are the same consecutive addresses with or without the branch; "
            "look at the issue cycles, not the memory cycles.",
        ])
