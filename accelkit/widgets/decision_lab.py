"""Lesson 10's widgets: the decision lab and its check-yourself question.

The scenarios, their default knobs and every number come from :mod:`accelkit.scenarios`
(which calls the parallel-layout, inference, model and price cost models); this module only
gathers the knobs, draws the comparison as an aligned table and a chart, and keeps the
learner's choices in a :class:`~accelkit.decisions.DecisionLab`. A choice is recorded only with
a reason that cites a number of the table; **Save** writes the choices to a JSON file (which a
Binder user can download) and **Load** reads one back.
"""

from __future__ import annotations

import html
from functools import partial
from collections.abc import Callable
from typing import Any, cast

import ipywidgets as W
from matplotlib.ticker import FuncFormatter

from accelkit import chips, decisions, scenarios
from accelkit.widgets.quiz import MultipleChoice, multiple_choice
from accelkit.widgets._axes import Ticks, fixed_ticks
from accelkit.widgets._base import (STYLE, WARNING_COLOUR, Explorer, View, chip_label,
                                    compact_number, new_figure, vendor_colour)
from accelkit.widgets._worked import WorkedProblem

__all__ = ["decision_explorer", "decision_quiz", "decision_worked_problem"]

_AUTO = "auto"
_MODELLED = "modelled"
#: Cell styles: numbers right-aligned in a fixed-width font so columns line up.
_TABLE = ("<table style='border-collapse:collapse;font-size:90%;"
          "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace'>")
_TH = "<th style='text-align:{align};padding:1px 6px;border-bottom:1px solid #999'>{text}</th>"
_TD = "<td style='text-align:{align};padding:1px 6px;white-space:nowrap'>{text}</td>"
#: What the bar chart can show, and how to read it off an Outcome.
METRICS = {
    "cost (USD)": lambda o: o.usd,
    "cost per million (USD)": lambda o: o.usd_per_million,
    "fleet cost (USD/h)": lambda o: getattr(o, "fleet_usd_per_hour", None),
    # a service's "days" are set by demand, not by the chip: not drawn
    "time (days)": lambda o: None if isinstance(o, scenarios.ServingOutcome) else o.days,
    "energy at TDP (kWh)": lambda o: o.kilowatt_hours,
    "utilization (% of peak)": lambda o: 100 * o.utilization,
}


#: Chips are named short in the lab (the colour and the table say TPU): 'v5e', 'H100'.
_short = partial(chip_label, family=False)


def _compact(x: float, _pos: object = None) -> str:
    # 30000 -> "30k", 0.000125 -> "125µ": narrow tick labels keep the y label inside the figure
    return compact_number(x, small=True)


def _fmt(value: float | None, pattern: str) -> str:
    return "n/a" if value is None else pattern.format(value)


class _Lab(Explorer):
    """An Explorer whose scenario dropdown loads that scenario's knobs with a single render.

    :func:`decision_explorer` sets the recording attributes declared here.
    """

    lab: decisions.DecisionLab
    choice: W.Dropdown
    reason: W.Textarea
    summary: W.HTML
    path: W.Text
    record: Callable[..., str]
    save: Callable[..., str]
    load: Callable[..., str]

    def _changed(self, change: dict) -> None:
        # a scenario change is rendered by decision_explorer's own observer, after its knobs load
        if change.get("owner") is not self.controls.get("scenario"):
            super()._changed(change)


def decision_explorer(scenario: str = "chatbot", lab: decisions.DecisionLab | None = None) -> Explorer:
    """Pick a scenario, set its knobs, compare chips, then record a choice and a reason.

    Args:
        scenario: the scenario shown first (a key of ``accelkit.scenarios.SCENARIOS``).
        lab: a DecisionLab to record into (default a new one; the widget's ``.lab``).
    Returns:
        An Explorer with extra attributes ``lab`` (the choices), ``record()`` (what the
        Record button does) and ``summary`` (an HTML widget showing ``lab.summary()``).
    """
    first = scenarios.get(scenario)
    record_into = lab if lab is not None else decisions.DecisionLab()
    chip_counts = [_AUTO, 1, 2, 4, 8, 16, 32, 64, 256, 1024, 4096, 8192]
    controls = {
        "scenario": W.Dropdown(options=[(s.title, k) for k, s in scenarios.SCENARIOS.items()],
                               value=first.key, description="scenario", style=STYLE,
                               layout=W.Layout(width="420px")),
        "metric": W.Dropdown(options=list(METRICS), value="cost (USD)", description="chart",
                             style=STYLE),
        "n_chips": W.Dropdown(options=chip_counts, description="chips per job", style=STYLE),
        "batch": W.Dropdown(options=[("largest that fits", 0)] + [
            (f"{b:,}", b) for b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 8192, 65536)],
            description="batch", style=STYLE),
        "precision": W.Dropdown(options=["bf16", "fp8", "int8", "fp32"], description="precision",
                                style=STYLE),
        "mfu": W.Dropdown(options=[("from the best layout, per chip", _MODELLED)]
                          + [(f"assumed {m:.0%} on every chip", m)
                             for m in (0.2, 0.3, 0.4, 0.5, 0.6)],
                          value=_MODELLED, description="MFU (train)", style=STYLE),
        "compute_efficiency": W.Dropdown(
            options=[("predicted by the engines, per chip", scenarios.PREDICTED)]
            + [(f"assumed {e:.0%} of peak", e) for e in (0.4, 0.5, 0.6, 0.7, 0.8, 1.0)],
            value=scenarios.PREDICTED, description="kernels (train)", style=STYLE),
        "latency_ms": W.Dropdown(options=[20, 30, 50, 100, 200], value=50,
                                 description="TPOT p99 (ms)", style=STYLE),
        "users": W.Dropdown(options=[100, 300, 1000, 3000, 10000], value=1000,
                            description="users (serve)", style=STYLE),
        "prompt_tokens": W.Dropdown(options=[250, 1000, 2000, 4000], value=1000,
                                    description="prompt tokens", style=STYLE),
        "output_tokens": W.Dropdown(options=[100, 250, 500, 1000], value=250,
                                    description="output tokens", style=STYLE),
        "price": W.Dropdown(options=[("catalog list price", "list"),
                                     ("lowest sourced price", "lowest")], description="price",
                            style=STYLE),
    }

    def load(key: str) -> None:
        # Set the knobs to the scenario's defaults without a render per knob.
        s = scenarios.get(key)
        with explorer.holding():
            controls["n_chips"].value = s.n_chips if s.n_chips in chip_counts else _AUTO
            batches = [b for _, b in controls["batch"].options]
            controls["batch"].value = s.batch if s.batch in batches else 0
            controls["precision"].value = s.precision
            controls["mfu"].value = _MODELLED if s.mfu is None else s.mfu
            controls["compute_efficiency"].value = s.compute_efficiency
            if s.latency_ms is not None:
                controls["latency_ms"].value = s.latency_ms
            if s.users is not None:
                controls["users"].value = s.users
            if s.kind == "serve":
                controls["prompt_tokens"].value = s.prompt_tokens
                controls["output_tokens"].value = s.output_tokens
                if controls["metric"].value in ("cost (USD)", "time (days)"):
                    controls["metric"].value = "cost per million (USD)"
        # Knobs a scenario ignores are greyed out (scenarios.knobs_for says which it uses).
        used = scenarios.knobs_for(s)
        for name in ("mfu", "compute_efficiency", "latency_ms", "batch", "users",
                     "prompt_tokens", "output_tokens"):
            controls[name].disabled = name not in used

    # One bar chart, built once; renders only change heights (new axes cost ~30 ms). Its key
    # is in the HTML above the table, not a title: a two-line title costs ~25 ms of text
    # drawing on every render (measured on the course's 2-core machine).
    figure = new_figure(6.6, 2.7, margins={"top": 0.95, "left": 0.11})
    ax = figure.add_subplot()
    bars = ax.bar([_short(c) for c in scenarios.DEFAULT_CHIPS],
                  [0.0] * len(scenarios.DEFAULT_CHIPS),
                  color=[vendor_colour(c) for c in scenarios.DEFAULT_CHIPS])
    ax.tick_params(axis="x", labelsize=8)
    ax.yaxis.set_major_formatter(FuncFormatter(_compact))
    ax.set_ylabel(controls["metric"].value)  # its text follows the metric; its place is fixed
    # The ticks as one marker line and texts (widgets/_axes.py): the chips' names read once,
    # the y axis's own locator and formatter per render, its label clear of the widest label.
    fixed_ticks(ax, which="x")
    y_ticks = Ticks(ax, "y", widest="0.025")

    def render(v: dict) -> View:
        s = scenarios.get(v["scenario"])
        rows = scenarios.compare(s, **_knobs(s, v))
        done = [r for r in rows if isinstance(r, scenarios.Outcome)]
        read = METRICS[v["metric"]]
        names = [_short(r.chip) for r in done]
        values = [read(r) for r in done]
        by_chip = {r.chip: (r, x) for r, x in zip(done, values)}
        top = max([x for x in values if x is not None] or [1.0])
        for bar, chip in zip(bars, scenarios.DEFAULT_CHIPS):
            hit = by_chip.get(chips.get(chip).name)
            r, x = (None, None) if hit is None else hit
            bar.set_height(0.0 if x is None else x)
            faded = r is None or x is None or not r.feasible
            bar.set_hatch("//" if faded else "")
            bar.set_alpha(0.45 if faded else 1.0)
        ax.set_ylim(0, top * 1.1)
        y_ticks.update()
        if ax.get_ylabel() != v["metric"]:
            ax.set_ylabel(v["metric"])
        head, cells_of = _columns(s)
        lines = []
        for row in rows:
            if isinstance(row, scenarios.Unavailable):
                lines.append("<tr>" + _TD.format(align="left", text=html.escape(_short(row.chip)))
                             + f"<td colspan='{len(head) - 1}' style='padding:1px 6px'>"
                             f"{html.escape(row.reason)}</td></tr>")
                continue
            lines.append("<tr>" + "".join(
                _TD.format(align="left" if i == 0 or not _numeric(c) else "right", text=c)
                for i, c in enumerate(cells_of(row))) + "</tr>")
        notes = [f"{_short(r.chip)}: {r.note}" for r in done if r.note][:4]
        first = done[0] if done else None
        if isinstance(first, scenarios.TrainingOutcome):
            notes.insert(0, _basis_line(first))
        text = (f"<p><b>{html.escape(s.title)}.</b> {html.escape(s.description)}<br>"
                f"<i>{html.escape(s.question)}</i></p>"
                f"<div style='font-size:85%'>Chart: {html.escape(v['metric'])} per chip; blue: "
                "TPU, green: GPU; faded: n/a, misses the target or does not fit.</div>"
                + _TABLE + "<tr>" + "".join(
                    _TH.format(align="left" if i == 0 else "right", text=h)
                    for i, h in enumerate(head)) + "</tr>"
                + "".join(lines) + "</table>"
                + "".join(f"<div style='font-size:85%'>• {html.escape(n)}</div>"
                          for n in notes))
        return View(figure=figure, text=text, result=rows,
                    extras={"scenario": s, "metric": dict(zip(names, values)),
                            "head": head})

    explorer = _Lab(controls, render, title="Decision lab: choose hardware and defend it",
                    columns=2)
    controls["scenario"].observe(lambda change: load(change["new"]), names="value")
    controls["scenario"].observe(lambda change: explorer.update(), names="value")
    load(first.key)
    explorer.update()
    # First visits: the training scenarios' layout searches (0.1-0.5 s cold) are done once here
    # and kept by the library's cache, so switching scenario later only re-renders.
    for key, s in scenarios.SCENARIOS.items():
        if s.kind == "train" and key != first.key:
            scenarios.compare(s)

    # Recording: a chip, a reason that cites the table, a button; Save / Load as JSON.
    choice = W.Dropdown(options=[_short(c) for c in scenarios.DEFAULT_CHIPS],
                        description="my choice", style=STYLE)
    reason = W.Textarea(placeholder="why, citing a number from the table as it is shown "
                        "(e.g. the USD, days or plan USD/h column)", description="reason",
                        layout=W.Layout(width="420px", height="60px"))
    button = W.Button(description="Record", button_style="success")
    path = W.Text(value="my_decisions.json", description="file", style=STYLE)
    save_button = W.Button(description="Save")
    load_button = W.Button(description="Load")
    summary = W.HTML()
    full_names = dict(zip([_short(c) for c in scenarios.DEFAULT_CHIPS], scenarios.DEFAULT_CHIPS))

    def _error(error: Exception) -> str:
        summary.value = f"<span style='color:{WARNING_COLOUR}'>⚠ {html.escape(str(error))}</span>"
        return summary.value

    def _show(extra: str = "") -> str:
        summary.value = extra + "<pre>" + html.escape(explorer.lab.summary()) + "</pre>"
        return summary.value

    def record(_: object = None) -> str:
        key = controls["scenario"].value
        table = tuple(explorer.view.result or ())
        outcome = next((r for r in table if isinstance(r, scenarios.Outcome)
                        and _short(r.chip) == choice.value), None)
        if outcome is None:
            return _error(ValueError(f"{choice.value} has no row in this table (its "
                                     "precision is unavailable): choose another chip"))
        try:
            d = explorer.lab.record(key, full_names[choice.value], reason.value, outcome,
                                    table=table)
        except (ValueError, TypeError) as error:
            return _error(error)
        return _show(f"<div>Recorded; your reason cites {html.escape(d.cited)} "
                     f"({html.escape(d.cited_column)}).</div>")

    def save(_: object = None) -> str:
        try:
            written = explorer.lab.save(path.value)
        except (OSError, ValueError, TypeError) as error:
            return _error(error)
        return _show(f"<div>Saved {len(explorer.lab.decisions)} choices to "
                     f"<code>{html.escape(written)}</code> (JSON; download it from the file "
                     "browser to keep it).</div>")

    def load_file(_: object = None) -> str:
        try:
            loaded = decisions.DecisionLab.load(path.value)
        except (OSError, ValueError, TypeError) as error:
            return _error(error)
        for d in loaded.decisions:  # into the same lab (replacing a scenario's choice)
            explorer.lab.record(d.scenario, d.chip, d.reason, d.outcome)
        return _show(f"<div>Loaded {len(loaded.decisions)} choices from "
                     f"<code>{html.escape(path.value)}</code>.</div>")

    button.on_click(record)
    save_button.on_click(save)
    load_button.on_click(load_file)
    explorer.lab = record_into
    explorer.choice, explorer.reason, explorer.summary = choice, reason, summary
    explorer.path = path
    explorer.record, explorer.save, explorer.load = record, save, load_file
    explorer.widget = W.VBox([explorer.widget, W.HBox([choice, button]), reason,
                              W.HBox([path, save_button, load_button]), summary])
    return explorer


def _knobs(s: scenarios.Scenario, v: dict) -> scenarios.Knobs:
    """The knobs ``s`` uses (:func:`accelkit.scenarios.select_knobs`) from the controls' values.

    "auto" chips and "modelled" MFU are left out, so the scenario's defaults apply.
    """
    used = scenarios.select_knobs(s, {
        "n_chips": None if v["n_chips"] == _AUTO else v["n_chips"], "batch": v["batch"],
        "precision": v["precision"], "mfu": None if v["mfu"] == _MODELLED else v["mfu"],
        "compute_efficiency": v["compute_efficiency"], "latency_ms": v["latency_ms"],
        "users": v["users"], "prompt_tokens": v["prompt_tokens"],
        "output_tokens": v["output_tokens"], "price_source": v["price"]})
    # The values were mapped to knob names above; "auto" and "modelled" became None (unset).
    return cast(scenarios.Knobs, {name: value for name, value in used.items() if value is not None})


def _basis_word(r: scenarios.TrainingOutcome) -> str:
    """One word for the MFU's basis (``Outcome.mfu_basis`` says it in full)."""
    if r.mfu_basis.startswith("predicted"):
        return "predicted"
    if r.mfu_basis == "assumed":
        return "assumed"
    return "kernels assumed"


def _basis_line(r: scenarios.TrainingOutcome) -> str:
    """The note under a training table: what the MFU column rests on."""
    word = _basis_word(r)
    if word == "predicted":
        return ("MFU predicted from the engines, per chip: each matmul's shape on the chip's "
                "matrix units (systolic MXUs on TPUs, tensor-core tiles in waves on GPUs) under "
                "the chip's best measured matmul throughput (a sibling chip's where none is published), "
                "every kernel's memory traffic at achievable HBM bandwidth give the kernels' % "
                "of peak, then each layout's bubbles and exposed communication at achievable "
                "link bandwidth. How far this lands from published runs: lesson 07's "
                "validation table (docs/validation.md).")
    if word == "assumed":
        return "MFU assumed, the same on every chip (the MFU menu)."
    return (f"MFU from the best layout with every kernel at an assumed "
            f"{_required(r.kernel_efficiency, 'kernel_efficiency'):.0%} of peak (the kernels "
            "menu), then each layout's bubbles and exposed communication.")


def _required(value: float | None, what: str) -> float:
    """``value``, or a ValueError naming ``what`` the outcome lacks."""
    if value is None:
        raise ValueError(f"the outcome has no {what}")
    return value


def _numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or text[0] in "$-" or text == "n/a")


def _gb(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 1e9:,.1f}"


def _columns(s: scenarios.Scenario) -> tuple[list[str], Callable[[Any], list[str]]]:
    """The table's header and a function giving one row's cells, for this kind of job (its
    argument is that kind's outcome: scenarios.TrainingOutcome, ServingOutcome or
    RecommenderOutcome)."""
    unit = s.work_unit.split()[-1]
    fits = lambda r: "yes" if r.fits else f"<b style='color:{WARNING_COLOUR}'>no</b>"  # noqa: E731
    if s.kind == "train":
        head = ["chip", "chips", "layout (best that fits)", "MFU (basis)", "kernels % of peak",
                "GB/chip", "of which act.", "HBM GB", "fits", "days", "USD", f"USD/M {unit}",
                "kWh (TDP)"]

        def train_cells(r: scenarios.TrainingOutcome) -> list[str]:
            mfu = f"{r.utilization:.1%} ({_basis_word(r)})"
            kernels = _fmt(None if r.kernel_efficiency is None else 100 * r.kernel_efficiency,
                           "{:.0f}")
            return [_short(r.chip), f"{r.n_chips:,}", html.escape(r.layout), mfu, kernels,
                    _gb(r.memory_bytes_per_chip), _gb(r.activation_bytes_per_chip),
                    _gb(r.hbm_bytes_per_chip), fits(r), f"{r.days:,.2f}",
                    _fmt(r.usd, "{:,.0f}"), _fmt(r.usd_per_million, "{:,.3g}"),
                    _fmt(r.kilowatt_hours, "{:,.0f}")]
        return head, train_cells
    if s.kind == "serve" and s.users is not None and s.latency_ms is not None:
        # A service: the SLO capacity plan is the answer a buyer reads (the fleet, its $/h and
        # $ per million tokens), then one replica's simulated percentiles at the plan's load.
        # A service's "days" are set by demand, not by the chip: not shown.
        head = ["chip", "plan: replicas × chips", "fleet chips", "fleet USD/h",
                f"USD/M {unit}", "TTFT p99 (ms)", "TPOT p99 (ms)", "in flight / replica",
                "util.", "bound", "fits"]

        def plan_cells(r: scenarios.ServingOutcome) -> list[str]:
            p = r.plan
            ok = "" if r.meets_latency is not False else " ✘"
            if p is None:  # no fleet meets the limits: the note says why
                plan = ["n/a", "n/a", "n/a", "n/a"]
            else:
                plan = [f"{p.replicas:,} × {p.chips_per_replica}", f"{p.n_chips:,}",
                        _fmt(p.usd_per_hour, "{:,.0f}"), _fmt(r.usd_per_million, "{:,.2f}")]
            return [_short(r.chip)] + plan + [
                f"{r.ttft_p99_seconds * 1e3:,.0f}{ok}", f"{r.tpot_p99_seconds * 1e3:,.1f}{ok}",
                f"{r.batch:,}", f"{r.utilization:.1%}", html.escape(r.bound), fits(r)]
        return head, plan_cells
    if s.kind == "serve":
        head = ["chip", "chips/replica", "in flight / replica", "tokens/s / replica",
                "USD/h / replica", f"USD/M {unit}", "util.", "bound", "fits", "USD"]

        def serve_cells(r: scenarios.ServingOutcome) -> list[str]:
            p = r.plan
            return [_short(r.chip), f"{r.n_chips:,}", f"{r.batch:,}",
                    f"{r.tokens_per_second_per_replica:,.0f}",
                    _fmt(None if p is None else p.usd_per_hour, "{:,.2f}"),
                    _fmt(r.usd_per_million, "{:,.2f}"), f"{r.utilization:.1%}", r.bound,
                    fits(r), _fmt(r.usd, "{:,.0f}")]
        return head, serve_cells
    head = ["chip", "chips", "lookups run on", "gathers", "util.", "bound", "fits", "days",
            "USD", f"USD/M {unit}"]

    def recommender_cells(r: scenarios.RecommenderOutcome) -> list[str]:
        return [_short(r.chip), f"{r.n_chips:,}", html.escape(r.gather_unit),
                f"{r.gather_share:.0%}", f"{r.utilization:.1%}", r.bound, fits(r),
                f"{r.days:,.2f}", _fmt(r.usd, "{:,.0f}"), _fmt(r.usd_per_million, "{:,.3g}")]
    return head, recommender_cells


def decision_quiz() -> MultipleChoice:
    """Check yourself: what decides the chatbot's time per output token?"""
    return multiple_choice(
        "The chatbot's plan keeps a few dozen sequences in flight per replica. What mostly sets "
        "its time per output token?",
        ["The chip's peak FLOP/s: a token is a fixed number of FLOPs, about 2 per parameter.",
         "Memory bandwidth per replica: every iteration reads all the weights.",
         "The interconnect between replicas.",
         "The size of the prompt, which every generated token has to attend to."],
        correct=1,
        feedback=["With a few dozen sequences an iteration, the matrix units are idle most of "
                  "it (look at the utilization column): peak FLOP/s barely matter.",
                  "Yes: with a few dozen sequences decode is memory-bound, so bytes per second "
                  "per replica set the time per token, and you pay for idle FLOPs.",
                  "Replicas serve different users and do not talk to each other; within one "
                  "replica tensor parallelism does communicate (see the notes under the "
                  "table for its share of a decode step).",
                  "The prompt is processed once (prefill, inside the time to first token). Each "
                  "later token does read the prompt's KV cache, but beside the weights every "
                  "iteration reads that is the smaller part here."])


def decision_worked_problem() -> WorkedProblem:
    """The chatbot's fleet on two chips: replicas, $/h, $/M tokens, and twice the users."""
    chip_names = ("TPU v5e", "NVIDIA H100 (SXM)")

    def answer() -> str:
        s = scenarios.get("chatbot")
        items = []
        for chip in chip_names:
            o = scenarios.evaluate("chatbot", chip)
            more = scenarios.evaluate("chatbot", chip, users=2 * (s.users or 0))
            if not isinstance(o, scenarios.ServingOutcome) or not isinstance(
                    more, scenarios.ServingOutcome):
                raise TypeError("the chatbot's outcome is not a ServingOutcome")
            p, q = o.plan, more.plan
            if p is None or q is None or p.usd_per_hour is None or q.usd_per_hour is None:
                raise ValueError(f"the chatbot has no priced plan on {chip}")
            per_million = _required(o.usd_per_million, f"usd_per_million on {o.chip}")
            items.append(
                f"<li>{o.chip}: <b>{p.replicas} replicas of {p.chips_per_replica} chips</b> "
                f"({p.n_chips} chips) at {p.rate_per_replica:,.1f} requests/s each: TTFT p99 "
                f"{o.ttft_p99_seconds * 1e3:,.0f} ms, TPOT p99 {o.tpot_p99_seconds * 1e3:,.1f} "
                f"ms; <b>${p.usd_per_hour:,.0f}/h</b>, ${per_million:,.2f} per million tokens, "
                f"${p.usd_per_hour * 24:,.0f} a day. At {2 * (s.users or 0):,} users: "
                f"{q.replicas} replicas, ${q.usd_per_hour:,.0f}/h.</li>")
        return ("<ol>" + "".join(items) + "</ol>Doubling the users about doubles the fleet "
                "(whole replicas round it up) and leaves the cost per token about where it "
                "was: the chip, its price and the load each replica carries set that. Each "
                "replica's load is the highest the simulation found to keep both 99th "
                "percentiles within the limits.")

    s = scenarios.get("chatbot")
    return WorkedProblem(
        f"Your chatbot (the lab's defaults: {s.model}, {s.users:,} users each sending a request "
        f"every {s.interval_seconds:g} s, {s.prompt_tokens:,}-token prompts, "
        f"{s.output_tokens:,}-token answers, TTFT p99 within {s.ttft_ms:g} ms and TPOT p99 "
        f"within {s.latency_ms:g} ms): on TPU v5e and on H100 at list prices, how many "
        "replicas does the SLO plan need, what do they rent for per hour and per day, and what "
        "happens at twice the users?", answer)
