"""Regenerate everything in docs/ that is derived from the lessons, in the order it depends.

After editing a lesson or exercise, run from the repository root:

    python docs/regenerate.py

It links glossary terms at their first use, re-measures the notebooks (benchmarks/lesson_timings.py
--write, which executes each one), writes each lesson header's "About N–M minutes." and lesson 00's
course-map minutes (the same range) from those timings, then the plans, the projector pages, the answer key, the
MLPerf gap note and the syllabus (docs/syllabus.md, from the lessons' learning objectives). Afterwards every generated figure is exact.

Between runs the tests allow the text to move ahead of what was generated, within stated tolerances,
so that rewording a sentence does not fail the suite:

* minutes: docs/timings.json's planned minutes for a notebook may differ by one minute
  (``make_plans.MINUTES_TOLERANCE``) from what its current text would get (tests/test_glossary.py
  counts the text without executing it). One minute, because the reading rates are assumptions far
  coarser than that and a minute is about 125 words, so a one-word edit (1/125 minute) never fails
  while a new section or widget does. The lesson headers, lesson 00's course map and docs/plans.md
  are written from docs/timings.json and stay exactly equal to it (their own minutes do not change
  word counts), so they drift with it and no further;
* projector pages: their copies of a lesson's title and takeaway may differ from the lesson's by a
  tenth of their words (``make_projector.PROSE_TOLERANCE``), never in a number
  (tests/test_projector.py); everything else on a page is exact.

docs/answers.md and docs/mlperf_gap.md come from the library (quizzes, exercise modules, published
runs), not from lesson prose, so tests/test_docs.py and test_mlperf.py compare them exactly. Past a tolerance, or after
a library change, the failing test says to run this script.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))

import make_plans  # noqa: E402

LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
HEADER_MINUTES = re.compile(r"About \d+(?:–\d+)? minutes\.")
MAP_ROW = re.compile(r"^(\| \[(\d\d) ·.*\| )(\d+(?:–\d+)?)( \| [^|]+ \|)$")


def _run(*args: str) -> None:
    print("$", " ".join(args), flush=True)
    subprocess.run([sys.executable, *args], cwd=ROOT, check=True)


def _rewrite_markdown(path: Path, edit) -> bool:
    """Apply ``edit(source) -> source`` to every markdown cell of ``path``; True if it changed."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    changed = False
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        old = "".join(cell["source"])
        new = edit(old)
        if new != old:
            cell["source"] = new.splitlines(keepends=True)
            changed = True
    if changed:
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


def _minutes() -> dict[str, str]:
    """Each lesson's range as its header and the course map show it: "52–84"."""
    rows = make_plans.timings()
    return {p.name[:2]: minutes_range(rows[f"lessons/{p.name}"]) for p in LESSONS}


def minutes_range(row: dict) -> str:
    return f"{row['minutes_low']}–{row['minutes_high']}"


def _write_minutes() -> None:
    minutes = _minutes()
    for path in LESSONS:
        header_done = False

        def header(source: str, number: str = path.name[:2]) -> str:
            nonlocal header_done
            if header_done or not source.lstrip().startswith("# "):
                return source
            header_done = True
            return HEADER_MINUTES.sub(f"About {minutes[number]} minutes.", source, count=1)

        if _rewrite_markdown(path, header):
            print(f"header minutes: {path.name} -> {minutes[path.name[:2]]}")

    def course_map(source: str) -> str:
        if "| minutes | needs |" not in source:
            return source
        lines = []
        for line in source.split("\n"):
            match = MAP_ROW.match(line)
            if match and match.group(2) in minutes:
                line = f"{match.group(1)}{minutes[match.group(2)]}{match.group(4)}"
            lines.append(line)
        return "\n".join(lines)

    if _rewrite_markdown(ROOT / "lessons" / "00_start_here.ipynb", course_map):
        print("course map minutes updated")


def main() -> None:
    _run("docs/link_glossary.py", "--write", *[str(p.relative_to(ROOT)) for p in LESSONS])
    _run("benchmarks/lesson_timings.py", "--write")
    _write_minutes()
    # The headers' minute figures do not change word counts, so the timings stay valid.
    for script in ("docs/make_plans.py", "docs/make_projector.py", "docs/make_answers.py",
                   "docs/make_mlperf_gap.py", "publish/syllabus.py"):
        _run(script)


if __name__ == "__main__":
    main()
