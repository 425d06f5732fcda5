"""One reveal.js deck per lesson: takeaway, the one number, the one figure, the question, then its answer.

Built by ``publish/build.py`` (conftest's ``course_build``) from docs/make_projector.py's content
and the picture the lesson's first widget drew in the measured run. reveal.js comes from npm at
build time and sits beside the decks, so a deck loads nothing from the internet when shown;
Chromium opens one offline here and reveal.js must report every slide.
"""

from __future__ import annotations

import html
import re
import sys

import pytest

from tests.conftest import built_step
from tests.notebook_runner import LESSONS, ROOT

sys.path.insert(0, str(ROOT / "docs"))

import make_projector  # noqa: E402

pytestmark = pytest.mark.deploy


@pytest.fixture(scope="module")
def decks(course_build):
    out, step = built_step(course_build, "slides")
    return out / "slides", step["result"]


def _sections(text: str) -> list[str]:
    return re.findall(r"<section>(.*?)</section>", text, re.S)


def _plain(fragment: str) -> str:
    # (MyST sets typographic apostrophes: LSTM's -> LSTM’s)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).replace("\u2019", "'").split())


def test_each_lesson_has_a_deck_in_the_projector_order(decks):
    folder, report = decks
    assert set(report["decks"]) == {p.stem for p in LESSONS} and report["unknown"] == []
    for path in LESSONS:
        parts = make_projector.lesson_parts(path)
        fact = make_projector.NUMBERS[path.name[:2]]
        slides = _sections((folder / f"{path.stem}.html").read_text(encoding="utf-8"))
        titles = [_plain(re.search(r"<h[12][^>]*>(.*?)</h[12]>", s, re.S).group(1)) for s in slides]
        assert titles[0] == _plain(parts["title"])
        assert titles[1:3] == ["Takeaway", "The one number to remember"], titles
        assert _plain(parts["takeaway"])[:60] in _plain(slides[1])
        assert fact.fmt.format(fact.compute()) in _plain(slides[2])
        figure = slides[3]
        images = re.findall(r"<img\b[^>]*>", figure)
        assert len(images) == 1, (path.stem, titles)
        alt = html.unescape(re.search(r'alt="([^"]*)"', images[0]).group(1))
        assert len(alt.split()) >= 12, alt
        src = re.search(r'src="([^"]+)"', images[0]).group(1)
        assert (folder / src).is_file() and (folder / src).stat().st_size > 2000, src
        quiz = parts["quiz"]
        if quiz is None:
            assert len(slides) == 4
            continue
        # The question on one slide, its answer on the very next one.
        assert titles[4] == "Ask the room" and _plain(quiz.question)[:50] in _plain(slides[4])
        letter = chr(ord("A") + quiz.correct)
        assert titles[5] == f"Answer: {letter}" and _plain(quiz.options[quiz.correct]) in _plain(slides[5])
        assert _plain(quiz.feedback[quiz.correct])[:40] in _plain(slides[5])
        assert "Answer" not in _plain(slides[4])


def test_reveal_runs_every_deck_offline(decks):
    from playwright.sync_api import sync_playwright

    from tests.lab_harness import CHROMIUM, CHROMIUM_ARGS

    folder, report = decks
    for name in re.findall(r'href="([^"]+)"', (folder / "index.html").read_text(encoding="utf-8")):
        assert (folder / name).is_file()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        outside = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
        for stem, count in report["decks"].items():
            page.goto((folder / f"{stem}.html").as_uri())
            page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=30_000)
            assert page.evaluate("() => Reveal.getTotalSlides()") == count, stem
            page.evaluate("() => Reveal.slide(3)")
            shown = page.evaluate("() => { const i = Reveal.getCurrentSlide().querySelector('img');"
                                  " return i && i.complete && i.naturalWidth > 0; }")
            assert shown, f"{stem}: the figure did not load"
        browser.close()
    assert outside == [], f"a deck fetched from outside the folder: {outside[:5]}"
