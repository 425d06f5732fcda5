"""Measure each lesson and exercise notebook, for the instructor's workshop plan.

Run: ``python benchmarks/lesson_timings.py`` (about a minute; ``--write`` also saves the rows to
``docs/timings.json``, from which ``python docs/make_plans.py`` builds the workshop plans). For
every notebook it measures
what a script can measure honestly:

* ``run s``: wall time to execute it top to bottom in a fresh kernel on this machine (what a
  learner waits for in total when running every cell; Binder's shared CPUs are slower);
* ``words``, ``code cells``, ``widgets``, ``questions``: counted from the notebook itself.

From those it derives a planned learner time with stated rates (reading 150 words per minute for
technical prose, 30 s per code cell to read and run, 2 minutes per widget to explore, 1 minute per
check-yourself question, 4 minutes per exercise task). These rates are assumptions, printed with
the table; replace them with the times you observe in your own first session.
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

WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_CELL = 0.5
MINUTES_PER_WIDGET = 2.0
MINUTES_PER_QUESTION = 1.0
MINUTES_PER_EXERCISE_TASK = 4.0

def _widget_names() -> set[str]:
    from accelkit import widgets

    return {n for n in dir(widgets) if not n.startswith("_") and n not in ("Explorer", "View")}


CALL = re.compile(r"\b(\w+)\(")


def count(path: Path) -> dict:
    """What the planned minutes are derived from, counted from the notebook (nothing executed)."""
    notebook = load(path)
    words = sum(len(c.source.split()) for c in notebook.cells if c.cell_type == "markdown")
    code = [c for c in notebook.cells if c.cell_type == "code"]
    names = _widget_names()
    called = [name for c in code for name in CALL.findall(c.source) if name in names]
    questions = sum(1 for name in called if "quiz" in name)
    widgets = len(called) - questions
    tasks = sum(1 for c in code for t in c.get("metadata", {}).get("tags", []) if t.startswith("answer:"))
    minutes = (words / WORDS_PER_MINUTE + len(code) * MINUTES_PER_CODE_CELL
               + widgets * MINUTES_PER_WIDGET + questions * MINUTES_PER_QUESTION
               + tasks * MINUTES_PER_EXERCISE_TASK)
    name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    return {"notebook": name, "words": words,
            "code_cells": len(code), "widgets": widgets, "questions": questions, "tasks": tasks,
            "planned_minutes": round(minutes),
            # Reading and running, without the tasks: an exercise's share of it goes with each task.
            "reading_minutes": round(minutes - tasks * MINUTES_PER_EXERCISE_TASK, 1)}


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
    print(f"{'notebook':<44}{'run s':>7}{'words':>7}{'code':>6}{'widgets':>8}{'quiz':>6}{'tasks':>6}"
          f"{'plan min':>9}")
    for r in rows:
        print(f"{r['notebook']:<44}{r['run_seconds']:>7}{r['words']:>7}{r['code_cells']:>6}"
              f"{r['widgets']:>8}{r['questions']:>6}{r['tasks']:>6}{r['planned_minutes']:>9}")
    print(f"\nrates: {WORDS_PER_MINUTE} words/min, {MINUTES_PER_CODE_CELL} min/code cell, "
          f"{MINUTES_PER_WIDGET} min/widget, {MINUTES_PER_QUESTION} min/question, "
          f"{MINUTES_PER_EXERCISE_TASK} min/exercise task")
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
            "rates": {"words_per_minute": WORDS_PER_MINUTE, "minutes_per_code_cell": MINUTES_PER_CODE_CELL,
                      "minutes_per_widget": MINUTES_PER_WIDGET, "minutes_per_question": MINUTES_PER_QUESTION,
                      "minutes_per_exercise_task": MINUTES_PER_EXERCISE_TASK},
            "notebooks": rows}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
