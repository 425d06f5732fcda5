"""What each lesson needs of the ones before it, as lesson 00's course map and each lesson's header say.

Two kinds of prerequisite, kept apart because a workshop plan treats them differently:

* **needs**: the lesson uses what that lesson taught and does not teach it again. A plan must hold
  it before (in the session, or as pre-work each learner runs alone).
* **helpful**: the lesson refers back to it (a comparison, a term it links to the glossary), but a
  learner can follow without it. A plan may leave it for homework, and docs/plans.md says which.

Both places state both, in one form each, so a script can read them:

* the course map (lesson 00, the table with a ``| needs |`` column): ``05``, ``03, 05``,
  ``this notebook`` (lesson 00), ``all`` (every lesson before), each optionally followed by
  ``; helpful: 06, 07``;
* a lesson's header (its first cell): ``*Before this:* needs [lesson 05 · ...](05_roofline.ipynb)
  (...); helpful, not needed: [lesson 07 · ...](07_training.ipynb) (...). About N–M minutes.`` The
  lessons linked before the word "helpful" are needed, those after it helpful.

A new lesson joins by having a header in that form and a course-map row: nothing here names a
lesson. tests/test_plans.py fails when the two places disagree (:func:`disagreements`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
START = LESSONS / "00_start_here.ipynb"

MAP_ROW = re.compile(r"^\| \[(\d\d) ·.*\| ([^|]+) \|$")
LINKED_LESSON = re.compile(r"\]\((\d\d)_[\w.-]*\.ipynb\)")
BEFORE_THIS = re.compile(r"Before this:?\**:?(.*?)(?:About \d+(?:–\d+)? minutes\.|\Z)", re.S)
HELPFUL = re.compile(r"\bhelpful\b", re.I)


@dataclass(frozen=True)
class Prerequisites:
    needs: frozenset[str]
    helpful: frozenset[str] = frozenset()


def lesson_numbers() -> list[str]:
    return sorted(p.name[:2] for p in LESSONS.glob("[0-9][0-9]_*.ipynb"))


def lesson_path(number: str) -> Path:
    found = sorted(LESSONS.glob(f"{number}_*.ipynb"))
    if len(found) != 1:
        raise ValueError(f"number: no single lessons/{number}_*.ipynb")
    return found[0]


def _markdown(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


def map_table(cells: list[str] | None = None) -> str:
    """The course map's table, from lesson 00's markdown cells (or ``cells``)."""
    cells = _markdown(START) if cells is None else cells
    found = [c for c in cells if "| needs |" in c]
    if len(found) != 1:
        raise ValueError("lesson 00 should hold exactly one course map (a table with a '| needs |' column)")
    return found[0]


def parse_map_cell(number: str, cell: str, lessons: list[str]) -> Prerequisites:
    """One course-map "needs" cell: ``05; helpful: 06, 07`` -> needs {05}, helpful {06, 07}."""
    needed, _, helpful = cell.partition(";")
    needed = needed.strip()
    if needed == "this notebook":
        needs = {"00"}
    elif needed == "all":
        needs = {n for n in lessons if n < number}
    else:
        needs = set(re.findall(r"\b\d\d\b", needed))
    if helpful and not helpful.strip().startswith("helpful:"):
        raise ValueError(f"course map row {number}: after ';' write 'helpful: NN, NN', not {helpful.strip()!r}")
    return Prerequisites(frozenset(needs), frozenset(re.findall(r"\b\d\d\b", helpful)))


def from_map(cells: list[str] | None = None) -> dict[str, Prerequisites]:
    """Lesson number -> its prerequisites, from the course map (lesson 00 itself needs nothing)."""
    lessons = lesson_numbers()
    found = {"00": Prerequisites(frozenset())}
    for row in map_table(cells).splitlines():
        match = MAP_ROW.match(row)
        if match:
            found[match.group(1)] = parse_map_cell(match.group(1), match.group(2).strip(), lessons)
    return found


def parse_header(source: str) -> Prerequisites:
    """The prerequisites a lesson's first cell states after "Before this"."""
    match = BEFORE_THIS.search(source)
    if not match:
        raise ValueError("the header should say 'Before this: needs ...' (lessons/00_start_here.ipynb's map has the form)")
    stated = match.group(1)
    split = HELPFUL.search(stated)
    needed, helpful = (stated[:split.start()], stated[split.start():]) if split else (stated, "")
    return Prerequisites(frozenset(LINKED_LESSON.findall(needed)), frozenset(LINKED_LESSON.findall(helpful)))


def from_headers() -> dict[str, Prerequisites]:
    return {n: parse_header(_markdown(lesson_path(n))[0]) for n in lesson_numbers()}


def closure(number: str, needs: dict[str, Prerequisites]) -> set[str]:
    """Every lesson ``number`` needs, directly or through the lessons it needs."""
    found: set[str] = set()
    todo = list(needs[number].needs)
    while todo:
        n = todo.pop()
        if n not in found:
            found.add(n)
            todo.extend(needs[n].needs)
    return found


def disagreements(course_map: dict[str, Prerequisites] | None = None,
                  headers: dict[str, Prerequisites] | None = None) -> list[str]:
    """Where the course map and the lesson headers state different prerequisites, or either is
    impossible (a lesson that needs a later one, or one that does not exist)."""
    course_map = from_map() if course_map is None else course_map
    headers = from_headers() if headers is None else headers
    problems = []
    for number in sorted(set(course_map) | set(headers)):
        if number not in course_map:
            problems.append(f"lesson {number} has no row in lesson 00's course map")
            continue
        if number not in headers:
            problems.append(f"the course map has a row for lesson {number}, which does not exist")
            continue
        for kind in ("needs", "helpful"):
            in_map, in_header = getattr(course_map[number], kind), getattr(headers[number], kind)
            if in_map != in_header:
                problems.append(f"lesson {number} {kind}: course map {', '.join(sorted(in_map)) or 'nothing'}, "
                                f"header {', '.join(sorted(in_header)) or 'nothing'}")
        stated = course_map[number].needs | course_map[number].helpful
        if any(n >= number for n in stated):
            problems.append(f"lesson {number} names a lesson that is not before it: {', '.join(sorted(stated))}")
        if course_map[number].needs & course_map[number].helpful:
            problems.append(f"lesson {number}: a lesson is both needed and helpful")
    return problems
