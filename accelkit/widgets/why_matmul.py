"""Lesson 01's widgets: where a network's FLOPs and bytes go, by kind of operation.

Every number comes from :mod:`accelkit.models` (``Model.operations``, ``by_kind``,
``kind_share``); this module only chooses what to ask for and draws it.
"""

from __future__ import annotations

import ipywidgets as W

import accelkit.models as models
from accelkit.widgets.quiz import MultipleChoice, multiple_choice

from accelkit.widgets._axes import fixed_ticks, key_row
from accelkit.widgets._base import STYLE, Explorer, View, new_figure, si, table_html
from accelkit.widgets._worked import WorkedProblem

__all__ = ["where_flops_go", "all_models_share", "why_matmul_worked_problem", "why_matmul_quiz"]

# One colour per kind, the same in every picture: warm for matrix products (what a matrix unit
# runs), cool greys and blues for the rest.
KIND_COLOURS = {
    "matmul": "#e65100", "conv": "#ff9800", "recurrent-matmul": "#c62828", "attention": "#8e24aa",
    "elementwise": "#607d8b", "normalization": "#90a4ae", "gather": "#1e88e5", "pooling": "#80cbc4",
}
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
CONTEXTS = [0, 512, 2048, 8192, 32768, 131072]
PHASES = ["forward", "train", "prefill", "decode"]


def _model_label(name: str) -> str:
    """'DLRM (Criteo 1TB, TorchRec example)' -> 'DLRM': labels that fit beside a bar."""
    return name.split(" (")[0]


def _operations(values: dict) -> tuple[models.Model, tuple[models.Operation, ...]]:
    model = models.get(values["model"])
    phase = values["phase"]
    context = values.get("context", 0) if phase in ("prefill", "decode") else 0
    return model, model.operations(batch=values["batch"], phase=phase, context_tokens=context)


def _kind_table(parts: tuple[models.Operation, ...], flops: float, moved: float) -> str:
    head = ("<tr><th style='text-align:left'>kind</th><th>FLOPs</th><th>% of FLOPs</th>"
            "<th>bytes</th><th>% of bytes</th><th>FLOPs per byte</th></tr>")
    rows = []
    for op in parts:
        swatch = f"<span style='color:{KIND_COLOURS[op.kind]}'>■</span>"
        rows.append(
            f"<tr><td style='text-align:left'>{swatch} {op.kind}</td>"
            f"<td>{si(op.flops, 'FLOP')}</td><td>{op.flops / flops:.1%}</td>"
            f"<td>{si(op.bytes, 'B')}</td><td>{op.bytes / moved:.1%}</td>"
            f"<td>{op.intensity:,.1f}</td></tr>")
    return f"<table style='text-align:right'>{head}{''.join(rows)}</table>"


class _StackedBars:
    """Two horizontal 100% bars (FLOPs, bytes) with one segment per kind, built once.

    A render only moves segments and rewrites labels: rebuilding the axes, bars and a legend
    each time cost ~30 ms of the 50 ms budget on this machine. The kinds' colours are keyed in
    the HTML table under the picture (its ■ swatches), so the figure needs no legend.
    """

    rows = ("FLOPs", "bytes moved")

    def __init__(self) -> None:
        self.figure = new_figure(7.0, 1.8, margins=dict(left=0.15, right=0.97, top=0.86,
                                                        bottom=0.27))
        self.ax = ax = self.figure.add_subplot()
        ys = range(len(self.rows))
        self.bars = {kind: ax.barh(ys, [0.0, 0.0], color=colour, height=0.6)
                     for kind, colour in KIND_COLOURS.items()}
        self.labels = {kind: [ax.text(0, y, "", ha="center", va="center", color="white",
                                      fontsize=8, fontweight="bold") for y in ys]
                       for kind in KIND_COLOURS}
        ax.set_yticks(ys, self.rows)
        ax.set_xticks([0, 50, 100])
        ax.set_xlim(0, 100)
        ax.set_ylim(len(self.rows) - 0.5, -0.5)
        ax.set_xlabel("share of the pass (%)")
        fixed_ticks(ax)  # the ticks as one marker line and texts (widgets/_axes.py)

    def draw(self, fractions: list[dict[str, float]], title: str):
        lefts = [0.0] * len(self.rows)
        for kind in KIND_COLOURS:
            for y, (bar, label) in enumerate(zip(self.bars[kind], self.labels[kind])):
                width = 100 * fractions[y].get(kind, 0.0)
                bar.set_x(lefts[y])
                bar.set_width(width)
                # Name the segment where it is wide enough to hold its name.
                text = f"{kind} {width:.0f}%" if width >= 6 * (len(kind) + 4) / 5 else (
                    f"{width:.0f}%" if width >= 7 else "")
                label.set_text(text)
                label.set_x(lefts[y] + width / 2)
                lefts[y] += width
        self.ax.set_title(title, fontsize=10)
        return self.figure


def where_flops_go(model: str = "llama-3-8b", phase: str = "forward", batch: int = 1,
                   context: int = 0) -> Explorer:
    """Pick a model, phase, batch and KV-cache length; see its FLOPs and bytes split by kind.

    ``context`` (tokens already in the KV cache) applies to the prefill and decode phases only.
    """
    controls = {
        "model": W.Dropdown(options=[(m.display_name, m.name) for m in models.all()],
                            value=models.get(model).name, description="model", style=STYLE),
        "phase": W.Dropdown(options=PHASES, value=phase, description="phase", style=STYLE),
        "batch": W.SelectionSlider(options=BATCHES, value=batch, description="batch",
                                   continuous_update=False, style=STYLE),
        "context": W.SelectionSlider(options=CONTEXTS, value=context,
                                     description="KV cache (prefill/decode)",
                                     continuous_update=False, style=STYLE),
    }
    bars = _StackedBars()

    def render(values: dict) -> View:
        model_, ops = _operations(values)
        parts = models.by_kind(ops)
        share = models.kind_share(ops)
        flops = sum(op.flops for op in parts)
        moved = sum(op.bytes for op in parts)
        figure = bars.draw([{op.kind: op.flops / flops for op in parts},
                            {op.kind: op.bytes / moved for op in parts}],
                           f"{_model_label(model_.display_name)}, {values['phase']}, batch "
                           f"{values['batch']}: where the work goes")
        seq_len = getattr(model_, "seq_len", None)  # transformers and the LSTM have one
        tokens = (f"{seq_len:,} tokens (the model's default)"
                  if values["phase"] in ("forward", "train") and seq_len
                  else "n/a")
        summary = table_html([
            ("parameters", si(model_.params, "", 3)),
            ("sequence length", tokens),
            ("FLOPs of this pass", si(flops, "FLOP")),
            ("bytes moved (no fusion)", si(moved, "B")),
            ("matrix products (matmul, conv, recurrent, attention): share of FLOPs",
             f"{share.flops_fraction:.1%}"),
            ("matrix products: share of bytes", f"{share.bytes_fraction:.1%}"),
        ])
        return View(figure=figure, text=summary + _kind_table(parts, flops, moved), result=share,
                    extras={"by_kind": parts, "operations": ops})

    return Explorer(controls, render, title="Where do the FLOPs and the bytes go?")


def all_models_share(batch: int = 1) -> Explorer:
    """Every catalog model side by side: matrix products' share of FLOPs and of bytes."""
    controls = {"batch": W.SelectionSlider(options=BATCHES, value=batch, description="batch",
                                           continuous_update=False, style=STYLE)}
    catalog = models.all()
    ys = range(len(catalog))
    # One figure, built once; a render only moves the bars and relabels. Rebuilding the axes
    # and their 10 tick labels each time would cost ~15 ms of the 50 ms budget.
    figure = new_figure(7.0, 3.4, margins=dict(left=0.30, right=0.97, top=0.88, bottom=0.14))
    ax = figure.add_subplot()
    flops_bars = ax.barh([y - 0.2 for y in ys], [0.0] * len(catalog), height=0.4,
                         color="#e65100", label="share of FLOPs")
    bytes_bars = ax.barh([y + 0.2 for y in ys], [0.0] * len(catalog), height=0.4,
                         color="#607d8b", label="share of bytes")
    ax.set_yticks(list(ys), [_model_label(m.display_name) for m in catalog], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xticks([0, 50, 100])
    ax.set_xlabel("matrix products' share of the forward pass (%)")  # its batch is set per render
    fixed_ticks(ax)  # the ticks as one marker line and texts, the key as texts (widgets/_axes.py)
    box = ax.get_position()
    key_row(figure, [("share of FLOPs", "#e65100"), ("share of bytes", "#607d8b")],
            x=(box.x0 + box.x1) / 2, y=box.y1 + 0.05)

    def render(values: dict) -> View:
        shares = {m.name: models.kind_share(m.operations(batch=values["batch"]))
                  for m in catalog}
        for model, f_bar, b_bar in zip(catalog, flops_bars, bytes_bars):
            f_bar.set_width(100 * shares[model.name].flops_fraction)
            b_bar.set_width(100 * shares[model.name].bytes_fraction)
        ax.set_xlabel(f"matrix products' share of the forward pass at batch {values['batch']} (%)")
        low = min(catalog, key=lambda m: shares[m.name].bytes_fraction)
        text = table_html([
            ("lowest share of FLOPs in matrix products",
             f"{min(s.flops_fraction for s in shares.values()):.1%}"),
            ("lowest share of bytes in matrix products",
             f"{shares[low.name].bytes_fraction:.1%} ({low.display_name})"),
        ])
        return View(figure=figure, text=text, result=shares)

    return Explorer(controls, render, title="Matrix products in every model")


def why_matmul_worked_problem(name: str = "llama-3-8b") -> WorkedProblem:
    """A scaling-book-style worked problem; press the button to see the answer, computed with
    :func:`accelkit.models.rule_of_thumb`."""
    model = models.get(name)
    if not isinstance(model, models.Transformer):  # the refusal models.rule_of_thumb makes
        raise TypeError(f"name must be a transformer (it needs seq_len, vocab and d_model), "
                        f"got {type(model).__name__} {model.name!r}")
    question = (
        f"{model.display_name} has {si(model.params, '', 3)} parameters. "
        f"One forward pass over a single {model.seq_len:,}-token sequence: (a) estimate its "
        "FLOPs with the rule of thumb 2 × parameters × tokens; (b) compare with the library's "
        "count; (c) explain the gap. Work it out, then press the button.")

    def answer() -> str:
        n = models.rule_of_thumb(name)
        gap = n["library_flops"] / n["rule_of_thumb_flops"] - 1
        return (
            f"(a) 2 × {si(n['params'], '', 3)} × {n['tokens']:,} = "
            f"<b>{si(n['rule_of_thumb_flops'], 'FLOP')}</b>.<br>"
            f"(b) The library counts <b>{si(n['library_flops'], 'FLOP')}</b>, {gap:+.1%}.<br>"
            f"(c) Two corrections pull in opposite directions. Attention's QKᵀ and A·V have no "
            f"weights, so the rule misses them: {n['attention_fraction']:.1%} of the pass. "
            f"The input embedding ({si(n['embedding_params'], '', 3)} parameters) is a table "
            f"lookup, not a matmul, so the rule over-counts "
            f"{si(n['embedding_flops_in_rule'], 'FLOP')}. At longer sequences attention grows "
            f"as tokens², and the rule falls further behind.")

    return WorkedProblem(question, answer)


def why_matmul_quiz() -> MultipleChoice:
    """Check yourself: does 'matrix products are ~all the FLOPs' mean 'the matrix unit is busy'?"""
    lowest = min(models.kind_share(m.operations()).flops_fraction for m in models.all())
    recurrent = models.kind_share(models.get("lstm").operations(), "recurrent-matmul")
    return multiple_choice(
        f"Matrix products are at least {lowest:.0%} of the FLOPs of every catalog model "
        "(forward pass, batch 1). Does that mean a big matrix unit will be kept busy by every "
        "one of them?",
        ["Yes: FLOPs are what a matrix unit does, so a model that is almost all matrix FLOPs "
         "keeps it busy.",
         f"No: the LSTM's recurrent matmul is {recurrent.flops_fraction:.0%} of its FLOPs but "
         f"{recurrent.bytes_fraction:.0%} of its bytes, so it waits on memory.",
         "No: the elementwise operations have most of the FLOPs in every model."],
        correct=1,
        feedback=[
            "FLOPs only tell you what there is to do. How fast it gets done also depends on how "
            "many bytes each FLOP needs: look at the bytes bar for the LSTM and the recommender.",
            "Being a matrix product is not enough: what counts is how often each weight byte is "
            "reused. Lesson 05 turns that into a number (FLOPs per byte) and a chip's ridge.",
            "Look at the FLOPs bar again: elementwise and normalization are a sliver of FLOPs. "
            "They are a large share of the bytes, which is a different thing.",
        ])
