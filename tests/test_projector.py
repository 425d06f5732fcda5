"""docs/projector/ is what docs/make_projector.py writes: one page per lesson, numbers the lesson computes.

A page's copy of its lesson's title and takeaway may lag the lesson by make_projector.PROSE_TOLERANCE
of their words (numbers excluded: they must be the lesson's), so rewording a takeaway does not fail
the suite until the pages are regenerated (python docs/regenerate.py)."""

from __future__ import annotations

import sys

from tests.notebook_runner import ROOT

sys.path.insert(0, str(ROOT / "docs"))

import make_projector  # noqa: E402


def test_projector_pages_are_up_to_date():
    pages = make_projector.pages()
    on_disk = {p.name for p in (ROOT / "docs" / "projector").glob("*.md")}
    assert on_disk == set(pages), "run: python docs/make_projector.py"
    for name, text in pages.items():
        committed = (ROOT / "docs" / "projector" / name).read_text(encoding="utf-8")
        assert make_projector.stale(name, committed, text) == [], "run: python docs/make_projector.py"


def test_the_prose_tolerance_passes_a_reworded_takeaway_only():
    name = "05_roofline.md"
    page = make_projector.pages()[name]
    lines = page.split("\n")
    at = lines.index("## Takeaway") + 2
    takeaway = lines[at]

    def with_takeaway(text: str, line: int = at) -> list[str]:
        edited = lines.copy()
        edited[line] = text
        return make_projector.stale(name, "\n".join(edited), page)

    words = takeaway.split()
    assert with_takeaway(takeaway) == []
    assert with_takeaway(" ".join(words[:3] + ["really"] + words[3:])) == []  # one word more
    assert with_takeaway(" ".join(words[:3] + ["quite", "plainly"] + words[4:])) == []  # reworded
    assert with_takeaway("Compare the intensity with the ridge.")  # rewritten: stale
    assert with_takeaway(takeaway + " 3 more.")  # a number the lesson does not say: stale
    number = lines.index("## The one number to remember") + 2
    assert with_takeaway("# 240", number)  # not prose: exact


def test_one_page_per_lesson_with_takeaway_number_and_widget():
    lessons = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
    assert set(make_projector.NUMBERS) == {p.name[:2] for p in lessons}
    for path in lessons:
        parts = make_projector.lesson_parts(path)
        number = make_projector.NUMBERS[path.name[:2]]
        # The number on the page comes from the same call the lesson makes.
        assert number.call in parts["code"], (path.name, number.call)
        assert parts["takeaway"] and parts["widget"], path.name
        page = make_projector.render(path)
        assert f"# {number.fmt.format(number.compute())}\n" in page
        assert f"`widgets.{parts['widget']}()`" in page


def test_lesson_08s_page_gives_the_answer_keys_number():
    from accelkit.exercises import ex08

    page = (ROOT / "docs" / "projector" / "08_inference.md").read_text(encoding="utf-8")
    assert f"\n# {ex08.q2.expected:.0f}\n" in page
