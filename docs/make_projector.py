"""Write docs/projector/: one page per lesson to put on the projector while the room works.

Run: ``python docs/make_projector.py``. Each page has the lesson's takeaway (its boxed takeaway,
verbatim), the one number to remember (computed here by the library call the lesson itself makes;
the call's text must appear in the lesson), the widget to show (the lesson's first interactive
widget, with what it does from its docstring) and the lesson's check-yourself question.
tests/test_projector.py fails when a page is out of date or a number's call left its lesson.

"Out of date" allows for prose (``stale``): a page's copy of its lesson's title and takeaway may
lag the lesson by ``PROSE_TOLERANCE`` of their words, so a reworded sentence in a takeaway does not
fail the suite; every number, link, widget and question on the page must be what this script
writes now. ``python docs/regenerate.py`` makes the pages exact again.
"""

from __future__ import annotations

import difflib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

import accelkit as ak  # noqa: E402
from accelkit import inference, parallel, scenarios, widgets, workloads  # noqa: E402
from accelkit.widgets.quiz import MultipleChoice  # noqa: E402

OUT = ROOT / "docs" / "projector"
# The share of a copied prose line's words (a lesson's title or takeaway) that may differ from the
# lesson's before its page counts as stale: a tenth, so a fixed typo or a reworded phrase passes and
# a rewritten takeaway does not. The numbers in the line may not differ at all: the projector must
# never show a number its lesson no longer says.
PROSE_TOLERANCE = 0.10
NUMBER = re.compile(r"\d[\d,.]*")


@dataclass(frozen=True)
class Number:
    label: str
    compute: Callable[[], float]
    fmt: str
    call: str  # the text of the lesson's own call, which must appear in its source


NUMBERS = {
    "00": Number("utilization of an 8×8 weight-stationary array on a 64×64×64 product",
                 lambda: ak.SystolicArray(rows=8, cols=8, dataflow="ws").estimate(M=64, N=64, K=64).utilization,
                 "{:.0%}", 'SystolicArray(rows=8, cols=8, dataflow="ws").estimate(M=64, N=64, K=64)'),
    "01": Number("share of the 2-layer LSTM's bytes moved by its recurrent matmul (batch 1)",
                 lambda: ak.models.kind_share(ak.models.get("lstm").operations(), "recurrent-matmul").bytes_fraction,
                 "{:.0%}", 'kind_share(lstm.operations(), "recurrent-matmul")'),
    "02": Number("slowdown when 2% of lanes take a branch (whole warps diverge)",
                 lambda: (workloads.Branchy(4096, 0.02).run(ak.SIMDMachine()).cycles
                          / workloads.Branchy(4096, 0.0).run(ak.SIMDMachine()).cycles),
                 "{:.2f}×", "Branchy(4096, 0.02).run(gpu)"),
    "03": Number("times each value of A is read from the buffer, 1024³ on a 128×128 ws array",
                 lambda: ak.SystolicArray(128, 128, "ws").estimate(M=1024, N=1024, K=1024).sram_reads["A"] / 1024**2,
                 "{:g}×", 'SystolicArray(128, 128, "ws").estimate(M=n, N=n, K=n)'),
    "04": Number("utilization of a 128×128 ws array at batch 1 (one token × a 4096×4096 weight)",
                 lambda: ak.SystolicArray(128, 128, "ws").estimate(M=1, N=4096, K=4096).utilization,
                 "{:.2%}", 'SystolicArray(128, 128, "ws").estimate(M=1, N=4096, K=4096)'),
    "05": Number("TPU v5e's bf16 ridge point, FLOPs per byte",
                 lambda: ak.chips.get("TPU v5e").ridge_flops_per_byte("bf16"), "{:,.0f}",
                 'v5e.ridge_flops_per_byte("bf16")'),
    "06": Number("bf16 multiply-accumulates that cost as much energy as one DRAM read",
                 lambda: ak.energy.access_picojoules("dram") / ak.energy.mac_picojoules("bf16"), "{:,.0f}",
                 'ak.energy.access_picojoules("dram")'),
    "07": Number("days to train Llama-3-70B on 15T tokens with 8,960 TPU v5p at 40% MFU (compute only)",
                 lambda: ak.training.estimate(model="llama-3-70b", tokens=15e12, chip="TPU v5p",
                                              n_chips=8960, mfu=0.40).days, "{:.1f}",
                 'ak.training.estimate(model="llama-3-70b", tokens=15e12, chip="TPU v5p", n_chips=8960, mfu=0.40)'),
    "08": Number("batch at which Llama-3-70B's decode matmuls turn compute-bound on one H100 (bf16)",
                 lambda: inference.compute_bound_batch("llama-3-70b", "H100", kinds=("matmul",)), "{:.0f}",
                 'compute_bound_batch("llama-3-70b", chip, kinds=("matmul",))'),
    "09": Number("share of the toy TPU's time spent outside its systolic array on a recommender step",
                 lambda: workloads.compare("recommender_step").tpu_outside_matrix_share, "{:.0%}",
                 'suite["recommender_step"]'),
    "10": Number("dollars per million tokens for the chatbot scenario on H100s (its SLO fleet, list price)",
                 lambda: scenarios.evaluate("chatbot", "H100").usd_per_million, "${:.2f}",
                 'scenarios.evaluate("chatbot", chip)'),
    "11": Number("times a dense 70B model's tokens per chip that DeepSeek-V3 needs to hide its gradient "
                 "all-reduce (data parallel, 1,024 H100)",
                 lambda: (parallel.dp_critical_tokens_per_chip("deepseek-v3", "H100", 1024)
                          / parallel.dp_critical_tokens_per_chip("llama-3-70b", "H100", 1024)), "{:.0f}×",
                 "parallel.dp_critical_tokens_per_chip(name, chip, 1024)"),
}

CALL = re.compile(r"\b(\w+)\(")


def widget_names() -> set[str]:
    """The lesson widgets' names (``accelkit.widgets``' public functions)."""
    return {n for n in dir(widgets) if not n.startswith("_") and n not in ("Explorer", "View")}


def lesson_parts(path: Path) -> dict:
    notebook = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    title = notebook.cells[0].source.splitlines()[0].lstrip("# ").strip()
    box = next(c.source for c in notebook.cells if c.cell_type == "markdown" and "<b>Takeaway.</b>" in c.source)
    takeaway = box[box.index("<b>Takeaway.</b>") + len("<b>Takeaway.</b>"):box.index("</div>")]
    names = widget_names()
    called = [n for n in CALL.findall(code) if n in names]
    shown = [n for n in called if "quiz" not in n and "worked" not in n]
    quizzes = [getattr(widgets, n)() for n in called if "quiz" in n]
    # The lesson links docs from lessons/; this page lives in docs/projector/.
    takeaway = takeaway.replace("](../docs/", "](../").replace('href="../docs/', 'href="../')
    return {"title": title, "code": code, "takeaway": " ".join(takeaway.split()),
            "widget": shown[0] if shown else None, "quiz": next((q for q in quizzes if isinstance(q, MultipleChoice)), None)}


def render(path: Path) -> str:
    number = path.name[:2]
    parts = lesson_parts(path)
    fact = NUMBERS[number]
    if fact.call not in parts["code"]:
        raise ValueError(f"lesson {number} no longer computes {fact.call!r}: update NUMBERS")
    lines = [f"# {parts['title']}", "",
             f"*Projector page, generated by `python docs/make_projector.py` from "
             f"[the lesson](../../lessons/{path.name}); do not edit by hand.*", "",
             "## The one number to remember", "",
             f"# {fact.fmt.format(fact.compute())}", "",
             f"{fact.label}. The lesson computes it with `{fact.call}`.", "",
             "## Takeaway", "", parts["takeaway"], ""]
    if parts["widget"]:
        doc = (getattr(widgets, parts["widget"]).__doc__ or "").strip().split("\n\n")[0]
        lines += ["## The widget to show", "", f"`widgets.{parts['widget']}()`: {' '.join(doc.split())}", ""]
    if parts["quiz"]:
        quiz = parts["quiz"]
        lines += ["## Ask the room", "", quiz.question, ""]
        lines += [f"{chr(ord('A') + i)}. {option}" for i, option in enumerate(quiz.options)]
        lines += ["", f"(Answer: {chr(ord('A') + quiz.correct)}; the reasoning is in [answers.md](../answers.md).)", ""]
    return "\n".join(lines).rstrip() + "\n"


def deck(path: Path, figure_html: str = "", figure_title: str = "") -> str:
    """Lesson ``path``'s slide deck as MyST markdown, one slide per ``---``: the title, the
    takeaway, the one number, the one figure (``figure_html``: the picture the lesson's first
    widget drew, with its alt text; publish/slides.py passes it in), the question, and on the
    next slide its answer with the reason the lesson gives for it."""
    number = path.name[:2]
    parts = lesson_parts(path)
    fact = NUMBERS[number]
    slides = [f"# {parts['title']}\n\naccelkit · lesson {number} · "
              f"[the lesson](../lessons/{path.name})",
              f"## Takeaway\n\n{parts['takeaway']}",
              f"## The one number to remember\n\n<p class=\"big-number\">{fact.fmt.format(fact.compute())}</p>"
              f"\n\n{fact.label}.\n\nThe lesson computes it with `{fact.call}`."]
    if figure_html:
        slides.append(f"## {figure_title or 'The figure'}\n\n{figure_html}\n\n"
                      f"From `widgets.{parts['widget']}()`: move its controls live in the lesson.")
    if parts["quiz"]:
        quiz = parts["quiz"]
        letters = [chr(ord("A") + i) for i in range(len(quiz.options))]
        options = "\n\n".join(f"**{letter}.** {option}" for letter, option in zip(letters, quiz.options))
        slides.append(f"## Ask the room\n\n{quiz.question}\n\n{options}")
        slides.append(f"## Answer: {letters[quiz.correct]}\n\n**{quiz.options[quiz.correct]}**\n\n"
                      f"{quiz.feedback[quiz.correct]}")
    return "\n\n---\n\n".join(slides) + "\n"


def pages() -> dict[str, str]:
    found = {}
    for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")):
        found[path.name.replace(".ipynb", ".md")] = render(path)
    index = ["# Projector pages", "", "One page per lesson: the takeaway, the one number to remember, "
             "the widget to show and a question to ask the room. Generated by "
             "`python docs/make_projector.py`.", ""]
    index += [f"- [{lesson_parts(ROOT / 'lessons' / name.replace('.md', '.ipynb'))['title']}]({name})"
              for name in found]
    index += ["", "The same content as slides, one reveal.js deck per lesson with the lesson's figure and "
              "each question's answer on the slide after it: `python publish/build.py --only slides` "
              "(into `build/course/slides/`; docs/make_projector.py's `deck` writes each deck's text)."]
    found["README.md"] = "\n".join(index) + "\n"
    return found


def _prose_lines(name: str, lines: list[str]) -> set[int]:
    """The lines of a page copied from lesson prose: the title and the takeaway (index: the titles)."""
    if name == "README.md":
        return {i for i, line in enumerate(lines) if line.startswith("- [")}
    return {0} | {i + 2 for i, line in enumerate(lines) if line == "## Takeaway"}


def words_changed(old: str, new: str) -> int:
    """Words inserted, deleted or replaced between two lines (a replacement counts its longer side)."""
    a, b = old.split(), new.split()
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in
               difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal")


def stale(name: str, committed: str, fresh: str) -> list[str]:
    """Why the committed page ``name`` is not what this script writes now, beyond the prose tolerance."""
    old, new = committed.split("\n"), fresh.split("\n")
    if len(old) != len(new):
        return [f"{name}: {len(old)} lines, {len(new)} written now"]
    prose, problems = _prose_lines(name, new), []
    for i, (a, b) in enumerate(zip(old, new)):
        if a == b:
            continue
        allowed = int(PROSE_TOLERANCE * len(b.split()))
        if i not in prose:
            problems.append(f"{name} line {i + 1}: {a!r} is now {b!r}")
        elif NUMBER.findall(a) != NUMBER.findall(b):
            problems.append(f"{name} line {i + 1}: its numbers {NUMBER.findall(a)} are now {NUMBER.findall(b)}")
        elif words_changed(a, b) > allowed:
            problems.append(f"{name} line {i + 1}: {words_changed(a, b)} words differ from the lesson's, "
                            f"more than {allowed} ({PROSE_TOLERANCE:.0%})")
    return problems


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in pages().items():
        (OUT / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(pages())} pages in docs/projector/")


if __name__ == "__main__":
    main()
