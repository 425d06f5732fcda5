"""docs/projector/ is what docs/make_projector.py writes: one page per lesson, numbers the lesson computes."""

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
        assert (ROOT / "docs" / "projector" / name).read_text(encoding="utf-8") == text, \
            f"{name} is stale: run python docs/make_projector.py"


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
