"""docs/syllabus.md is what publish/syllabus.py writes from the lessons' learning objectives.

A line copied from a lesson may lag its lesson by docs/make_projector.py's PROSE_TOLERANCE of its
words (never in a number), so rewording an objective does not fail the suite until the page is
regenerated; a new or removed objective, lesson or question does."""

from __future__ import annotations

import sys

from tests.notebook_runner import LESSONS, ROOT

sys.path.insert(0, str(ROOT / "docs"))

import make_projector  # noqa: E402

from publish import syllabus  # noqa: E402


def test_the_syllabus_is_current():
    committed = (ROOT / "docs" / "syllabus.md").read_text(encoding="utf-8").split("\n")
    fresh = syllabus.render().split("\n")
    assert len(committed) == len(fresh), "run: python publish/syllabus.py"
    for old, new in zip(committed, fresh):
        if old == new:
            continue
        assert new.startswith("- "), f"run: python publish/syllabus.py ({old!r} is now {new!r})"
        assert make_projector.NUMBER.findall(old) == make_projector.NUMBER.findall(new), (old, new)
        allowed = int(make_projector.PROSE_TOLERANCE * len(new.split()))
        assert make_projector.words_changed(old, new) <= allowed, "run: python publish/syllabus.py"


def test_every_lesson_has_its_objectives_on_the_page():
    page = (ROOT / "docs" / "syllabus.md").read_text(encoding="utf-8")
    for path in LESSONS:
        info = syllabus.header(path)
        assert len(info["objectives"]) >= 3, path.name
        assert f"## [{info['title']}](../lessons/{path.name})" in page
