"""Lesson 11's widgets: the expert all-to-all on a torus and on a switched fabric, what one
scale-up domain holds, and the goodput of a job as it grows.

Every number comes from :mod:`accelkit.collectives` (the all-to-all),
:func:`accelkit.training.estimate` (the chips a model's training state needs) and
:mod:`accelkit.goodput` (failures, checkpoints and restarts); this module gathers inputs and
draws.
"""

from __future__ import annotations

from types import SimpleNamespace

import ipywidgets as W

from accelkit import chips, collectives, goodput, models, parallel, training
from accelkit.widgets._axes import fixed_ticks, key_row, log_ticks
from accelkit.widgets._base import (CHOICE_COLOUR, INK, STYLE, Explorer, View, chip_label,
                                    new_figure, si, table_html, vendor_colour)
from accelkit.widgets._worked import WorkedProblem
from accelkit.widgets.quiz import MultipleChoice, multiple_choice

__all__ = ["all_to_all_explorer", "scaleup_domain_explorer", "goodput_explorer",
           "at_scale_quiz", "at_scale_worked_problem"]

#: The whole array an all-to-all exchanges (the contract of accelkit.collectives), in bytes.
_ARRAYS = (64e6, 256e6, 1e9, 4e9)

#: The groups each fabric is drawn over: one wrapped axis of a v5p slice (at most 16 chips, an
#: axis of the largest slice), cubes of v5p axes, and GPUs whole NVLink domains at a time
#: beyond one (8-GPU HGX nodes, 72-GPU GB200 racks).
_AXIS = (2, 4, 8, 16)
_CUBES = ((2, 2, 2), (4, 4, 4), (8, 8, 8), (16, 16, 16))
_GPUS = (2, 4, 8, 16, 64, 512, 4096)
_RACKS = (2, 8, 72, 576, 4608)  # GB200 NVL72: beyond one rack, whole racks


def _product(shape: tuple[int, ...]) -> int:
    total = 1
    for n in shape:
        total *= n
    return total


def _systems() -> dict[str, tuple[str, tuple[int | tuple[int, ...], ...], str]]:
    """Label -> (chip, groups, colour) of each fabric the explorer draws."""
    v5p, h100, gb200 = chips.get("v5p"), chips.get("H100"), chips.get("GB200")
    return {
        "TPU v5p: one wrapped torus axis": (v5p.name, _AXIS, vendor_colour(v5p, 0)),
        "TPU v5p: a cube of 3 axes": (v5p.name, _CUBES, vendor_colour(v5p, 2)),
        "H100: NVLink node, then NICs": (h100.name, _GPUS, vendor_colour(h100, 0)),
        "GB200: NVL72 rack, then NICs": (gb200.name, _RACKS, vendor_colour(gb200, 2)),
    }


def all_to_all_explorer() -> Explorer:
    """The same all-to-all (an expert layer's dispatch: a fixed array, spread over more chips)
    on one wrapped torus axis, on a cube of torus axes and on switched NVLink and InfiniBand
    (:func:`accelkit.collectives.all_to_all`): its time as the group grows."""
    controls = {
        "array": W.SelectionSlider(options=[(si(v, "B"), v) for v in _ARRAYS], value=1e9,
                                   description="whole array exchanged",
                                   continuous_update=False, style=STYLE),
    }
    systems = _systems()
    figure = new_figure(6.4, 3.0, margins={"left": 0.15, "bottom": 0.17, "top": 0.9})
    ax = figure.add_subplot()
    lines = {}
    for label, (_, groups, colour) in systems.items():
        xs = [g if isinstance(g, int) else _product(g) for g in groups]
        lines[label] = ax.plot(xs, [1.0] * len(xs), "o-", color=colour, markersize=4)[0]
    log_ticks(ax, "x", [2, 8, 64, 512, 4096], ["2", "8", "64", "512", "4,096"])
    log_ticks(ax, "y", [0.001, 0.01, 0.1, 1, 10, 100], ["1 µs", "10 µs", "0.1 ms", "1 ms",
                                                          "10 ms", "100 ms"])
    ax.set_xlim(1.6, 6000)
    ax.set_ylim(0.0005, 300)
    ax.set_xlabel("chips in the all-to-all")
    ax.set_ylabel("time")
    title = ax.set_title("")
    fixed_ticks(ax)
    box = ax.get_position()
    key_row(figure, [(label, colour, "●") for label, (_, _, colour) in list(systems.items())[:2]],
            x=box.x1 - 0.01, y=box.y1 - 0.05, fontsize=7, ha="right")
    key_row(figure, [(label, colour, "●") for label, (_, _, colour) in list(systems.items())[2:]],
            x=box.x1 - 0.01, y=box.y1 - 0.11, fontsize=7, ha="right")

    def render(values: dict) -> View:
        size = values["array"]
        table: dict[str, dict[int, collectives.Collective]] = {}
        rows = []
        for label, (chip, groups, _) in systems.items():
            results = {}
            for group in groups:
                n = group if isinstance(group, int) else _product(group)
                results[n] = collectives.all_to_all(chip, array_bytes=size, over=group)
            table[label] = results
            lines[label].set_ydata([r.seconds * 1e3 for r in results.values()])
            first, last = min(results), max(results)
            rows.append((label, f"{results[first].seconds * 1e3:,.3g} ms over {first:,} → "
                                f"{results[last].seconds * 1e3:,.3g} ms over {last:,}"))
        title.set_text(f"all-to-all of a {si(size, 'B')} array")
        return View(figure=figure, text=table_html(rows), result=SimpleNamespace(table=table))

    return Explorer(controls, render, title="The expert all-to-all: torus against switch",
                    columns=1)


# -- what one scale-up domain holds ---------------------------------------------------------------

#: Chips shown, where the catalog has them: TPU slices and GPU NVLink domains.
_DOMAIN_CHIPS = ("TPU v5p", "TPU7x", "H100", "B200", "GB200")
_TRANSFORMERS = tuple(n for n in models.names() if isinstance(models.get(n), models.Transformer))


def _catalog_chips() -> list[chips.Chip]:
    names = set(chips.names())
    found = []
    for name in _DOMAIN_CHIPS:
        try:
            chip = chips.get(name)
        except (KeyError, ValueError):  # a chip this catalog does not list yet
            continue
        if chip.name in names and chip.scaleup_domain_chips:
            found.append(chip)
    return found


def scaleup_domain_explorer() -> Explorer:
    """Pick a model: the chips its training state needs on each chip (bf16 weights and gradients,
    fp32 master weights and Adam moments, sharded: :func:`accelkit.training.estimate`), against the chips one scale-up domain
    holds (a TPU's largest ICI slice, a GPU's NVLink domain)."""
    controls = {"model": W.Dropdown(options=_TRANSFORMERS, value="deepseek-v3",
                                    description="model", style=STYLE)}
    shown = _catalog_chips()
    labels = [chip_label(c.name) for c in shown]
    figure = new_figure(6.4, 0.5 + 0.42 * len(shown), margins={"left": 0.16, "bottom": 0.22,
                                                               "top": 0.86})
    ax = figure.add_subplot()
    domains = [float(c.scaleup_domain_chips or 1) for c in shown]
    ax.barh(range(len(shown)), domains, color=[vendor_colour(c) for c in shown], alpha=0.45,
            height=0.6)
    marks = ax.plot(domains, range(len(shown)), "k|", markersize=16, markeredgewidth=2.5)[0]
    ax.set_yticks(range(len(shown)), labels)
    ax.invert_yaxis()
    log_ticks(ax, "x", [1, 10, 100, 1000, 10000], ["1", "10", "100", "1,000", "10,000"])
    ax.set_xlim(1, 30000)
    ax.set_xlabel("chips (bar: one scale-up domain; mark: the model's training state)")
    title = ax.set_title("")
    fixed_ticks(ax, which="x")

    def render(values: dict) -> View:
        needs = {}
        for chip in shown:
            est = training.estimate(model=values["model"], tokens=1e12, chip=chip, n_chips=1)
            needs[chip.name] = est.min_chips_to_fit
        marks.set_xdata([float(needs[c.name]) for c in shown])
        title.set_text(f"{values['model']}: its training state against one domain")
        rows = []
        for chip in shown:
            domain = chip.scaleup_domain_chips or 0
            verdict = "fits in one domain" if needs[chip.name] <= domain else "spans domains"
            kind = "ICI slice" if chip.kind == "tpu" else "NVLink domain"
            rows.append((chip_label(chip.name), f"needs {needs[chip.name]:,}; one {kind} holds "
                                                f"{domain:,}: {verdict}"))
        return View(figure=figure, text=table_html(rows),
                    result=SimpleNamespace(needs=needs,
                                           domains={c.name: c.scaleup_domain_chips for c in shown}))

    return Explorer(controls, render, title="What fits in one scale-up domain?", columns=1)


# -- goodput as the job grows --------------------------------------------------------------------

_JOB_CHIPS = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)


def goodput_explorer() -> Explorer:
    """A job at Llama 3's interruption rate per chip (:func:`accelkit.goodput.
    llama3_failures_per_chip_hour`): its goodput, and the share of the chips paid for that train,
    as it grows, for a checkpoint save, a restart and a recovery scheme you pick
    (:func:`accelkit.goodput.goodput`, :data:`accelkit.goodput.RECOVERY`)."""
    recoveries = [("no spares", "")] + [(r.name, key) for key, r in goodput.RECOVERY.items()]
    controls = {
        "checkpoint": W.SelectionSlider(options=[(f"{s:g} s", s) for s in (10, 30, 60, 120, 300, 600)],
                                        value=60, description="checkpoint save",
                                        continuous_update=False, style=STYLE),
        "restart": W.SelectionSlider(options=[(f"{s / 60:g} min", s) for s in (60, 300, 600, 1800, 3600)],
                                     value=600, description="restart",
                                     continuous_update=False, style=STYLE),
        "recovery": W.Dropdown(options=recoveries, value="", description="spares",
                               style=STYLE, layout=W.Layout(width="420px")),
    }
    rate = goodput.llama3_failures_per_chip_hour()
    figure = new_figure(6.4, 2.8, margins={"left": 0.12, "bottom": 0.18, "top": 0.9})
    ax = figure.add_subplot()
    kept = ax.plot(_JOB_CHIPS, [1.0] * len(_JOB_CHIPS), "o-", color=INK, markersize=4)[0]
    useful = ax.plot(_JOB_CHIPS, [1.0] * len(_JOB_CHIPS), "s--", color=CHOICE_COLOUR,
                     markersize=4)[0]
    log_ticks(ax, "x", [1024, 4096, 16384, 65536], ["1,024", "4,096", "16,384", "65,536"])
    ax.set_xlim(800, 170000)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("chips in the job")
    ax.set_ylabel("share of the time / chips")
    title = ax.set_title("")
    fixed_ticks(ax)
    box = ax.get_position()
    key_row(figure, [("goodput (time that trains)", INK, "●"),
                     ("× chips not held as spares", CHOICE_COLOUR, "■")],
            x=box.x0 + 0.01, y=box.y0 + 0.06, fontsize=7, ha="left")

    def render(values: dict) -> View:
        spare = goodput.RECOVERY[values["recovery"]].spare_fraction if values["recovery"] else 0.0
        results: dict[int, goodput.Goodput | str] = {}
        for n in _JOB_CHIPS:
            try:
                results[n] = goodput.goodput(chips=n, failures_per_chip_hour=rate,
                                             checkpoint_seconds=values["checkpoint"],
                                             restart_seconds=values["restart"],
                                             spare_fraction=spare)
            except ValueError as refused:  # failures too frequent for these times: say so
                results[n] = str(refused)
        kept.set_ydata([r.goodput if isinstance(r, goodput.Goodput) else float("nan")
                        for r in results.values()])
        useful.set_ydata([r.useful_fraction if isinstance(r, goodput.Goodput) else float("nan")
                          for r in results.values()])
        title.set_text(f"at Llama 3's rate: one interruption per {1 / rate:,.0f} chip-hours")
        rows = []
        for n in (1024, 16384, 131072):
            r = results[n]
            if isinstance(r, goodput.Goodput):
                rows.append((f"{n:,} chips", f"an interruption every {r.job_mtbf_seconds / 3600:.3g} h; "
                             f"checkpoint every {r.checkpoint_interval_seconds / 60:.0f} min; "
                             f"goodput {r.goodput:.1%}; useful {r.useful_fraction:.1%}"))
            else:
                rows.append((f"{n:,} chips", r))
        return View(figure=figure, text=table_html(rows), result=SimpleNamespace(
            rate=rate, spare_fraction=spare, results=results))

    return Explorer(controls, render, title="Goodput: how much of a big job's time trains?",
                    columns=2)


# -- check yourself and the worked problem ----------------------------------------------------------

def at_scale_quiz() -> MultipleChoice:
    """What happens to an all-to-all on one wrapped torus axis when the group doubles."""
    return multiple_choice(
        "An expert layer exchanges the same tokens (the same whole array) over 16 TPU v5p chips "
        "on one wrapped torus axis instead of 8. What happens to the all-to-all's time?",
        ["It halves: each chip holds half as much.",
         "It stays about the same: each chip sends half as much, but each byte travels about "
         "twice as many links.",
         "It doubles: twice the chips exchange with each other.",
         "It falls to a quarter, as on a switched fabric."],
        correct=1,
        feedback=["Each chip does hold half, but on a ring a byte crosses about n/4 links on "
                  "average: the busiest link carries about V/8 whatever n is.",
                  "The busiest link of a wrapped ring of n chips carries about n²/8 × V/n² = V/8 "
                  "per direction: the time does not fall as chips are added.",
                  "The whole array is fixed; each chip's share falls as the group grows. It is "
                  "the path length, not the data, that grows.",
                  "On a switch each chip sends (n−1)/n² of the array over its own port, so the "
                  "time falls about as 1/n there; a ring's links are shared by the paths."])


def at_scale_worked_problem() -> WorkedProblem:
    """DeepSeek-V3's training state, its all-to-all and its critical batch against a dense
    model's — computed with ``training.estimate``, ``collectives`` and ``parallel`` when
    revealed."""
    question = ("DeepSeek-V3 (671B parameters, 37B active per token). (1) How many H100s, how "
                "many GB200s and how many TPU v5p must pool their HBM just to hold its training "
                "state (16 bytes per parameter, sharded)? Does that fit one 8-GPU H100 node; one "
                "GB200 NVL72 rack; one v5p slice? (2) Its dispatch all-to-all exchanges a 1 GB "
                "array: how long over the 72 GPUs of one NVL72 rack, and over two racks (144)? "
                "(3) By what factor is its data-parallel critical batch on 1,024 H100s larger "
                "than Llama-3-70B's, and why?")

    def answer() -> str:
        need = {c: training.estimate(model="deepseek-v3", tokens=1e12, chip=c, n_chips=1)
                .min_chips_to_fit for c in ("H100", "GB200", "TPU v5p")}
        h100, gb200, v5p = chips.get("H100"), chips.get("GB200"), chips.get("TPU v5p")
        domain = gb200.scaleup_domain
        if domain is None:  # the catalog gives GB200 its 72-GPU domain: unreachable
            raise ValueError("the worked problem needs GB200's NVLink domain size")
        rack = collectives.all_to_all(gb200, array_bytes=1e9, over=domain)
        two = collectives.all_to_all(gb200, array_bytes=1e9, over=2 * domain)
        moe = parallel.dp_critical_tokens_per_chip("deepseek-v3", "H100", 1024)
        dense = parallel.dp_critical_tokens_per_chip("llama-3-70b", "H100", 1024)
        m = models.get("deepseek-v3")
        ratio = m.params / m.active_params
        fits = {c: "fits" if need[c] <= (chip.scaleup_domain_chips or 0) else "does not fit"
                for c, chip in (("H100", h100), ("GB200", gb200), ("TPU v5p", v5p))}
        return (f"<ol><li>{need['H100']} H100s (an HGX node holds {h100.scaleup_domain_chips}: "
                f"it {fits['H100']}), {need['GB200']} GB200s (a rack holds "
                f"{gb200.scaleup_domain_chips}: it {fits['GB200']}) and {need['TPU v5p']} v5p "
                f"chips (a slice holds up to {v5p.scaleup_domain_chips:,}: it "
                f"{fits['TPU v5p']}).</li>"
                f"<li>{rack.seconds * 1e6:.0f} µs inside one rack ({rack.network}); "
                f"{two.seconds * 1e6:.0f} µs over two ({two.network}): leaving the NVLink "
                f"domain costs more than the smaller share per GPU saves.</li>"
                f"<li>{moe:,.0f} against {dense:,.0f} tokens per chip: {moe / dense:.1f}×. The "
                f"all-reduce carries all {m.params / 1e9:,.0f}B parameters' gradients, the "
                f"backward pass does the active ones' work: about params ÷ active = "
                f"{ratio:.1f}×.</li></ol>")

    return WorkedProblem(question, answer)
