"""Measure each lesson and exercise notebook, for the lesson headers and the workshop plans.

Run: ``python benchmarks/lesson_timings.py`` (about a minute; ``--write`` also saves the rows to
``docs/timings.json``, from which ``python docs/regenerate.py`` writes each lesson header's "About
N–M minutes.", lesson 00's course map and, with ``python docs/make_plans.py``, the workshop plans).
For every notebook it measures what a script can measure honestly:

* ``run s``: wall time to execute it top to bottom in a fresh kernel on this machine (what a
  learner waits for in total when running every cell; Binder's shared CPUs are slower);
* ``words``, ``code cells``, ``widgets``, ``worked``, ``quiz``, ``tasks``: counted from the
  notebook itself (an exercise question's answer cell and its check cell belong to its task, not
  to the code cells).

From those it derives a learner's minutes as a range, with each rate given as a pair: a quick
learner's and a careful one's (:data:`RATES`). The header shows the range; the plans use its
middle (``planned_minutes``).

Why these rates. A lesson is read to learn, not for the gist: its sentences carry numbers to
check against the cells above them, formulas and code. Reading rates are commonly put at about
238 words a minute for adults reading non-fiction silently (Brysbaert, "How many words do we
read per minute?", Journal of Memory and Language 109, 2019: most adults between 175 and 300),
and well below that when the purpose is to learn the material: Carver's "learning" process,
roughly 100–200 words a minute, slower still for memorising (Carver, "Reading rate: theory,
research, and practical implications", Journal of Reading 36(2), 1992). A course for engineers
new to hardware sits at the slow half of that band: 100–150 words a minute. (150 words a minute
for everything and two minutes a widget give the eleven lessons 4.9 hours; a learner who went
through them all took about 8.8, issue 24.)
The other rates have no published measurement: they are named assumptions, set from what each
item asks of a learner (a widget names two or three things to try; a worked problem says to work
it on paper first), and checked against that learner's times: the lessons' total range holds
their 8.8 hours near its middle, and their three slowest lessons (05, 07, 08) at or near its top.
Replace them with what you observe in your own first session and run ``python docs/regenerate.py``.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.notebook_runner import execute, load  # noqa: E402

#: Each rate as (a quick learner's, a careful learner's): the two ends of a notebook's range.
RATES: dict[str, tuple[float, float]] = {
    "words_per_minute": (150.0, 100.0),          # reading to learn (module docstring)
    "minutes_per_code_cell": (0.75, 1.25),       # read the code, run it, read what it prints
    "minutes_per_widget": (3.0, 5.0),            # try the two or three things the lesson names
    "minutes_per_worked_problem": (5.0, 8.0),    # on paper first, then reveal and compare
    "minutes_per_question": (1.0, 2.0),          # a check-yourself question and its feedback
    "minutes_per_exercise_task": (4.0, 6.0),     # write an answer, check it, perhaps a hint
}
WORDS_PER_MINUTE = RATES["words_per_minute"]


def middle(rate: str) -> float:
    """The middle of a rate's range: what the plans use."""
    quick, careful = RATES[rate]
    return (quick + careful) / 2


def _widget_names() -> set[str]:
    from accelkit import widgets

    return {n for n in dir(widgets) if not n.startswith("_") and n not in ("Explorer", "View")}


CALL = re.compile(r"\b(\w+)\(")
CHECK_CELL = re.compile(r"^\s*ex\d\d\.q\d+\.check\(")


def _minutes(counts: dict[str, int], end: int) -> float:
    """Minutes at one end of the rates (0: quick, 1: careful)."""
    return (counts["words"] / RATES["words_per_minute"][end]
            + counts["code_cells"] * RATES["minutes_per_code_cell"][end]
            + counts["widgets"] * RATES["minutes_per_widget"][end]
            + counts["worked_problems"] * RATES["minutes_per_worked_problem"][end]
            + counts["questions"] * RATES["minutes_per_question"][end]
            + counts["tasks"] * RATES["minutes_per_exercise_task"][end])


def count(path: Path) -> dict:
    """What the minutes are derived from, counted from the notebook (nothing executed), and the
    minutes: ``minutes_low``–``minutes_high`` for the header, ``planned_minutes`` (their middle)
    for the plans, and ``reading_minutes`` (the middle without the exercise tasks)."""
    notebook = load(path)
    words = sum(len(c.source.split()) for c in notebook.cells if c.cell_type == "markdown")
    code = [c for c in notebook.cells if c.cell_type == "code"]
    names = _widget_names()
    called = [name for c in code for name in CALL.findall(c.source) if name in names]
    tasks = sum(1 for c in code for t in c.get("metadata", {}).get("tags", []) if t.startswith("answer:"))
    # an exercise's answer cell and its check cell are the task's, timed with it
    plain = [c for c in code if not any(t.startswith("answer:") for t in c.get("metadata", {}).get("tags", []))
             and not CHECK_CELL.match(c.source)]
    counts = {"words": words, "code_cells": len(plain),
              "widgets": sum(1 for n in called if "quiz" not in n and "worked_problem" not in n),
              "worked_problems": sum(1 for n in called if "worked_problem" in n),
              "questions": sum(1 for n in called if "quiz" in n), "tasks": tasks}
    low, high = _minutes(counts, 0), _minutes(counts, 1)
    planned = (low + high) / 2
    name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    return {"notebook": name, **counts,
            "minutes_low": round(low), "minutes_high": round(high),
            "planned_minutes": round(planned),
            # Reading and running, without the tasks: an exercise's share of it goes with each task.
            "reading_minutes": round(planned - tasks * middle("minutes_per_exercise_task"), 1)}


def measure(path: Path) -> dict:
    """``count(path)`` and the wall time to execute the notebook in a fresh kernel."""
    row = count(path)
    started = time.perf_counter()
    execute(load(path), path.parent)
    seconds = time.perf_counter() - started
    return {"notebook": row.pop("notebook"), "run_seconds": round(seconds, 1), **row}


def main() -> None:
    paths = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")) + \
        sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))
    rows = [measure(p) for p in paths]
    print(f"{'notebook':<44}{'run s':>7}{'words':>7}{'code':>6}{'widgets':>8}{'worked':>7}{'quiz':>5}"
          f"{'tasks':>6}{'minutes':>10}{'plan':>6}")
    for r in rows:
        print(f"{r['notebook']:<44}{r['run_seconds']:>7}{r['words']:>7}{r['code_cells']:>6}"
              f"{r['widgets']:>8}{r['worked_problems']:>7}{r['questions']:>5}{r['tasks']:>6}"
              f"{r['minutes_low']:>5}–{r['minutes_high']:<4}{r['planned_minutes']:>6}")
    lessons = [r for r in rows if r["notebook"].startswith("lessons/")]
    print(f"\nlessons: {sum(r['minutes_low'] for r in lessons)}–{sum(r['minutes_high'] for r in lessons)} "
          f"minutes, planned {sum(r['planned_minutes'] for r in lessons)}")
    print("rates (quick, careful): " + ", ".join(f"{k} {v[0]:g}–{v[1]:g}" for k, v in RATES.items()))
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
    if "--write" in sys.argv:
        import os
        import platform
        from datetime import date

        out = ROOT / "docs" / "timings.json"
        out.write_text(json.dumps({
            "measured_on": date.today().isoformat(),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "command": "python benchmarks/lesson_timings.py --write",
            "rates": {k: list(v) for k, v in RATES.items()},
            "notebooks": rows}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
