"""Lesson 10's widgets: the decision lab and its check-yourself question.

The scenarios, their default knobs and every number come from :mod:`accelkit.scenarios`
(which calls the training, inference, model and price cost models); this module only gathers
the knobs, draws the comparison and keeps the learner's choices in a
:class:`~accelkit.scenarios.DecisionLab` (in memory: nothing is written to disk).
"""

from __future__ import annotations

import html

import ipywidgets as W
from matplotlib.ticker import FuncFormatter

from accelkit import chips, scenarios
from accelkit.widgets.quiz import MultipleChoice, multiple_choice
from accelkit.widgets._base import Explorer, View, new_figure
from accelkit.widgets._worked import WorkedProblem

__all__ = ["decision_explorer", "decision_quiz", "decision_worked_problem"]

_STYLE = {"description_width": "initial"}
_AUTO = "auto"
#: What the bar chart can show, and how to read it off an Outcome.
METRICS = {
    "cost (USD)": lambda o: o.usd,
    "time (days)": lambda o: o.days,
    "energy at TDP (kWh)": lambda o: o.kilowatt_hours,
    "utilization (% of peak)": lambda o: 100 * o.utilization,
}


def _short(name: str) -> str:
    return name.replace("NVIDIA ", "").replace("TPU ", "").split(" (")[0]


def _compact(x: float, _pos: object = None) -> str:
    # 30000 -> "30k": narrow tick labels keep the y label inside the figure
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:g}{suffix}"
    return f"{x:g}"


def _fmt(value: float | None, pattern: str) -> str:
    return "n/a" if value is None else pattern.format(value)


class _Lab(Explorer):
    """An Explorer whose scenario dropdown loads that scenario's knobs with a single render."""

    def _changed(self, change: dict) -> None:
        # a scenario change is rendered by decision_explorer's own observer, after its knobs load
        if change.get("owner") is not self.controls.get("scenario"):
            super()._changed(change)


def decision_explorer(scenario: str = "chatbot", lab: scenarios.DecisionLab | None = None) -> Explorer:
    """Pick a scenario, set its knobs, compare chips, then record a choice and a reason.

    Args:
        scenario: the scenario shown first (a key of ``accelkit.scenarios.SCENARIOS``).
        lab: a DecisionLab to record into (default a new one; the widget's ``.lab``).
    Returns:
        An Explorer with extra attributes ``lab`` (the choices), ``record()`` (what the
        Record button does) and ``summary`` (an HTML widget showing ``lab.summary()``).
    """
    first = scenarios.get(scenario)
    record_into = lab if lab is not None else scenarios.DecisionLab()
    chip_counts = [_AUTO, 1, 2, 4, 8, 16, 32, 64, 256, 1024, 4096, 8192]
    controls = {
        "scenario": W.Dropdown(options=[(s.title, k) for k, s in scenarios.SCENARIOS.items()],
                               value=first.key, description="scenario", style=_STYLE,
                               layout=W.Layout(width="420px")),
        "metric": W.Dropdown(options=list(METRICS), value="cost (USD)", description="chart",
                             style=_STYLE),
        "n_chips": W.Dropdown(options=chip_counts, description="chips per job", style=_STYLE),
        "batch": W.Dropdown(options=[("largest that fits", 0)] + [
            (f"{b:,}", b) for b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 8192, 65536)],
            description="batch", style=_STYLE),
        "precision": W.Dropdown(options=["bf16", "fp8", "int8", "fp32"], description="precision",
                                style=_STYLE),
        "mfu": W.FloatSlider(value=0.4, min=0.05, max=0.8, step=0.05, description="MFU (train)",
                             continuous_update=False, style=_STYLE),
        "latency_ms": W.Dropdown(options=[10, 20, 30, 50, 100, 200], value=50,
                                 description="latency target (ms)", style=_STYLE),
        "price": W.Dropdown(options=[("catalog list price", "list"),
                                     ("lowest sourced price", "lowest")], description="price",
                            style=_STYLE),
    }

    def load(key: str) -> None:
        # Set the knobs to the scenario's defaults without a render per knob.
        s = scenarios.get(key)
        with explorer.holding():
            controls["n_chips"].value = s.n_chips if s.n_chips in chip_counts else _AUTO
            batches = [b for _, b in controls["batch"].options]
            controls["batch"].value = s.batch if s.batch in batches else 0
            controls["precision"].value = s.precision
            controls["mfu"].value = s.mfu
            if s.latency_ms is not None:
                controls["latency_ms"].value = s.latency_ms
        # Knobs a scenario ignores are greyed out (scenarios.knobs_for says which it uses).
        used = scenarios.knobs_for(s)
        for name in ("mfu", "latency_ms", "batch"):
            controls[name].disabled = name not in used

    # One bar chart, built once; renders only change heights (new axes cost ~30 ms).
    figure = new_figure(6.6, 2.7, margins={"top": 0.84})
    ax = figure.add_subplot()
    bars = ax.bar([_short(c) for c in scenarios.DEFAULT_CHIPS],
                  [0.0] * len(scenarios.DEFAULT_CHIPS),
                  color=["#1565c0" if chips.get(c).kind == "tpu" else "#2e7d32"
                         for c in scenarios.DEFAULT_CHIPS])
    ax.tick_params(axis="x", labelsize=8)
    ax.yaxis.set_major_formatter(FuncFormatter(_compact))

    def render(v: dict) -> View:
        s = scenarios.get(v["scenario"])
        knobs = scenarios.select_knobs(s, {
            "n_chips": None if v["n_chips"] == _AUTO else v["n_chips"], "batch": v["batch"],
            "precision": v["precision"], "mfu": v["mfu"], "latency_ms": v["latency_ms"],
            "price_source": v["price"]})
        rows = scenarios.compare(s, **knobs)
        done = [r for r in rows if isinstance(r, scenarios.Outcome)]
        read = METRICS[v["metric"]]
        names = [_short(r.chip) for r in done]
        values = [read(r) for r in done]
        by_chip = {r.chip: (r, x) for r, x in zip(done, values)}
        top = max([x for x in values if x is not None] or [1.0])
        for bar, chip in zip(bars, scenarios.DEFAULT_CHIPS):
            r, x = by_chip.get(chips.get(chip).name, (None, None))
            bar.set_height(0.0 if x is None else x)
            faded = x is None or not r.fits or r.meets_latency is False
            bar.set_hatch("//" if faded else "")
            bar.set_alpha(0.45 if faded else 1.0)
        ax.set_ylim(0, top * 1.1)
        ax.set_ylabel(v["metric"])
        ax.set_title(f"{s.title}\nblue: TPU, green: GPU; faded: n/a, misses the target or "
                     "does not fit", fontsize=8)
        head = ["chip", "chips", "batch", "days", "USD", "USD / M " + s.work_unit.split()[-1],
                "kWh (TDP)", "util.", "bound", "fits"]
        if s.kind == "serve":
            head[4:4] = ["ms / token", "first token (s)"]
        lines = []
        for r in rows:
            if isinstance(r, scenarios.Unavailable):
                lines.append(f"<tr><td>{html.escape(_short(r.chip))}</td>"
                             f"<td colspan='{len(head) - 1}'>{html.escape(r.reason)}</td></tr>")
                continue
            cells = [_short(r.chip), f"{r.n_chips:,}", f"{r.batch:,}", f"{r.days:,.2f}",
                     _fmt(r.usd, "{:,.0f}"), _fmt(r.usd_per_million, "{:,.3g}"),
                     _fmt(r.kilowatt_hours, "{:,.0f}"), f"{r.utilization:.1%}", r.bound,
                     "yes" if r.fits else "<b style='color:#b00020'>no</b>"]
            if s.kind == "serve":
                ok = "" if r.meets_latency is not False else " ✘"
                cells[4:4] = [f"{r.latency_seconds * 1e3:,.1f}{ok}",
                              f"{r.first_token_seconds:,.2f}"]
            lines.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        notes = [f"{_short(r.chip)}: {r.note}" for r in done if r.note][:3]
        text = (f"<p><b>{html.escape(s.title)}.</b> {html.escape(s.description)}<br>"
                f"<i>{html.escape(s.question)}</i></p>"
                "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
                + "".join(lines) + "</table>"
                + "".join(f"<div style='font-size:85%'>• {html.escape(n)}</div>"
                          for n in notes[:4]))
        return View(figure=figure, text=text, result=rows,
                    extras={"scenario": s, "metric": dict(zip(names, values))})

    explorer = _Lab(controls, render, title="Decision lab: choose hardware and defend it",
                    columns=2)
    controls["scenario"].observe(lambda change: load(change["new"]), names="value")
    controls["scenario"].observe(lambda change: explorer.update(), names="value")
    load(first.key)
    explorer.update()

    # Recording: a chip, a reason, a button; choices stay in memory in explorer.lab.
    choice = W.Dropdown(options=[_short(c) for c in scenarios.DEFAULT_CHIPS],
                        description="my choice", style=_STYLE)
    reason = W.Textarea(placeholder="why, with a number from the table", description="reason",
                        layout=W.Layout(width="420px", height="60px"))
    button = W.Button(description="Record", button_style="success")
    summary = W.HTML()
    full_names = dict(zip([_short(c) for c in scenarios.DEFAULT_CHIPS], scenarios.DEFAULT_CHIPS))

    def record(_: object = None) -> str:
        key = controls["scenario"].value
        outcome = next((r for r in explorer.view.result or ()
                        if isinstance(r, scenarios.Outcome)
                        and _short(r.chip) == choice.value), None)
        try:
            record_into.record(key, full_names[choice.value], reason.value, outcome)
        except (ValueError, TypeError) as error:
            summary.value = f"<span style='color:#b00020'>⚠ {html.escape(str(error))}</span>"
            return summary.value
        summary.value = "<pre>" + html.escape(record_into.summary()) + "</pre>"
        return summary.value

    button.on_click(record)
    explorer.lab = record_into
    explorer.choice, explorer.reason, explorer.summary = choice, reason, summary
    explorer.record = record
    explorer.widget = W.VBox([explorer.widget, W.HBox([choice, button]), reason, summary])
    return explorer


def decision_quiz() -> MultipleChoice:
    """Check yourself: what decides the low-latency chatbot?"""
    return multiple_choice(
        "For the batch 1-4 chatbot, what mostly sets the time per generated token?",
        ["The chip's peak FLOP/s: a token is a fixed number of FLOPs, about 2 per parameter.",
         "Memory bandwidth per replica: every step reads all the weights.",
         "The interconnect between replicas.",
         "The size of the prompt, which every generated token has to attend to."],
        correct=1,
        feedback=["At batch 4 the matrix units are idle most of the step (look at the "
                  "utilization column): peak FLOP/s barely matter.",
                  "Yes: at small batch decode is memory-bound, so bytes per second per "
                  "replica set the latency, and you pay for idle FLOPs.",
                  "Replicas serve different users and do not talk to each other; within one "
                  "replica tensor parallelism does communicate, but the lab does not model it.",
                  "The prompt is processed once (prefill, the time to first token). Each later "
                  "token does read the prompt's KV cache, but at batch 4 that is small beside "
                  "the weights every decode step reads."])


def decision_worked_problem() -> WorkedProblem:
    """The chatbot at 2 billion tokens a day: replicas and dollars per day on two chips."""
    daily_tokens = 2e9

    def answer() -> str:
        items = []
        for chip in ("TPU v5e", "NVIDIA H100 (SXM)"):
            o = scenarios.evaluate("chatbot", chip)
            s = scenarios.get("chatbot")
            per_replica = s.work / o.seconds                  # tokens/s of one replica
            replicas = int(-(-daily_tokens / 86_400 // per_replica))
            items.append(
                f"<li>{o.n_chips} × {o.chip} per replica: {o.latency_seconds * 1e3:.1f} ms per "
                f"token (target {s.latency_ms:g} ms), {per_replica:,.0f} tokens/s per replica, "
                f"so <b>{replicas} replicas</b> ({replicas * o.n_chips} chips) for "
                f"{daily_tokens / 86_400:,.0f} tokens/s; at ${o.usd_per_million:,.2f} per million "
                f"tokens, <b>${o.usd_per_million * daily_tokens / 1e6:,.0f} per day</b>.</li>")
        return ("<ol>" + "".join(items) + "</ol>The cost per token does not depend on the "
                "number of replicas, only on the chip, its price and the batch; the replica "
                "count is what you must be able to rent. At batch 4 both chips sit mostly idle "
                "(see the utilization column): raising the batch within the latency target is "
                "worth more than the choice of chip.")

    s = scenarios.get("chatbot")
    sizes = [scenarios.evaluate(s, chip).n_chips for chip in ("TPU v5e", "NVIDIA H100 (SXM)")]
    return WorkedProblem(
        f"Your chatbot (the lab's defaults: {s.model}, batch {s.batch}, {s.prompt_tokens:,}-token "
        f"prompts, {s.output_tokens:,}-token answers, {s.latency_ms:g} ms per token) must "
        f"generate {daily_tokens / 1e9:g} billion tokens a day, spread evenly. For "
        f"{sizes[0]}-chip TPU v5e replicas and {sizes[1]}-chip H100 replicas at list prices: how "
        "many replicas do you need, and what does a day cost?", answer)
