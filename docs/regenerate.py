"""Regenerate everything in docs/ that is derived from the lessons, in the order it depends.

After editing a lesson or exercise, run from the repository root:

    python docs/regenerate.py

It links glossary terms at their first use, re-measures the notebooks (benchmarks/lesson_timings.py
--write, which executes each one), writes each lesson header's "About N minutes." and lesson 00's
course-map minutes from those timings, then the plans, the projector pages, the answer key and the
MLPerf gap note. tests/test_glossary.py, test_plans.py, test_projector.py and test_docs.py fail
until this has been run on the current text.
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
HEADER_MINUTES = re.compile(r"About \d+ minutes\.")
MAP_ROW = re.compile(r"^(\| \[(\d\d) ·.*\| )(\d+)( \| [^|]+ \|)$")


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


def _minutes() -> dict[str, int]:
    rows = make_plans.timings()
    return {p.name[:2]: make_plans.item_minutes(make_plans.lesson(p.name[:2]), rows) for p in LESSONS}


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
                   "docs/make_mlperf_gap.py"):
        _run(script)


if __name__ == "__main__":
    main()
