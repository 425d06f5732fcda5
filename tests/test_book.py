"""The static, printable book: every lesson with its outputs and figures, each figure with alt text.

``publish/build.py`` builds it once for the session (conftest's ``course_build``) from the
lessons as the deploy tier's measured run executed them: MyST reads them offline (``myst build
--site``) and publish/myst_html.py writes the pages (MyST's own ``--html`` needs a theme that is
downloaded at build time; publish/myst_html.py says why it cannot run here).
"""

from __future__ import annotations

import html
import json
import re
import sys

import nbformat
import pytest

from tests.conftest import built_step
from tests.notebook_runner import LESSONS, ROOT

sys.path.insert(0, str(ROOT / "docs"))

pytestmark = pytest.mark.deploy


@pytest.fixture(scope="module")
def book(course_build):
    out, step = built_step(course_build, "book")
    return out / "book", step["result"], out / "executed"


def _page(folder, name: str) -> str:
    return (folder / name).read_text(encoding="utf-8")


def test_one_page_per_lesson_the_glossary_an_index_and_a_one_page_edition(book):
    folder, report, _ = book
    expected = {"index.html", "glossary.html", "print.html"} | {f"{p.stem}.html" for p in LESSONS}
    assert set(report["pages"]) == expected
    assert report["unknown"] == [], f"MyST node types publish/myst_html.py does not render: {report['unknown']}"
    whole = _page(folder, "print.html")
    for path in LESSONS:
        title = nbformat.read(path, as_version=4).cells[0].source.splitlines()[0].lstrip("# ").strip()
        heading = re.search(r"<h1>(.*?)</h1>", _page(folder, f"{path.stem}.html"), re.S).group(1)
        # (MyST sets typographic quotes: the GPU's -> the GPU’s)
        assert html.unescape(heading).replace("\u2019", "'") == title
        assert f'id="page-{path.stem}"' in whole, path.stem  # each chapter on the one page
    assert "@media print" in _page(folder / "assets", "book.css")


def test_every_lesson_page_shows_what_its_cells_printed(book):
    folder, _, executed = book
    for path in LESSONS:
        page = html.unescape(re.sub(r"<[^>]+>", "", _page(folder, f"{path.stem}.html")))
        notebook = nbformat.read(executed / "lessons" / path.name, as_version=4)
        streams = [o["text"] for c in notebook.cells if c.cell_type == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream"]
        assert streams, path.stem
        for text in streams:
            for line in filter(str.strip, text.splitlines()):
                assert line.strip() in page, f"{path.stem}: printed line missing from the book: {line!r}"


def test_every_link_between_pages_lands_on_its_target(book):
    folder, report, _ = book
    ids = {name: set(re.findall(r'\bid="([^"]+)"', _page(folder, name))) for name in report["pages"]}
    checked = 0
    for name in report["pages"]:
        for href in re.findall(r'<a href="([^"]+)"', _page(folder, name)):
            if href.startswith(("http:", "https:", "mailto:")) or href.startswith("assets/"):
                continue
            page, _, anchor = href.partition("#")
            page = page or name
            assert page in ids, f"{name} links to a page the book does not have: {href}"
            assert not anchor or anchor in ids[page], f"{name} links to {href}, which has no such anchor"
            checked += 1
    assert checked > 300, checked  # the glossary links at every term's first use, the lesson links


def test_every_figure_is_there_with_alt_text(book):
    folder, report, executed = book
    images = 0
    for name in report["pages"]:
        for tag in re.findall(r"<img\b[^>]*>", _page(folder, name)):
            alt = re.search(r'\balt="([^"]*)"', tag)
            assert alt and len(html.unescape(alt.group(1)).split()) >= 12, f"{name}: {tag[:200]}"
            if name != "print.html":
                images += 1
    assert images == report["figures"] > 20, (images, report["figures"])


def test_every_drawing_widget_of_the_lessons_has_words():
    from publish.alt_text import ALT_TEXT

    import make_projector

    names = make_projector.widget_names()
    called = set()
    for path in LESSONS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                called |= {n for n in re.findall(r"\b(\w+)\(", cell.source) if n in names}
    drawing = {n for n in called if "quiz" not in n and "worked_problem" not in n}
    assert drawing - set(ALT_TEXT) == set(), "publish/alt_text.py needs these widgets' alt text"
    assert set(ALT_TEXT) - called == set(), "alt text for widgets no lesson shows"


def test_nothing_is_fetched_from_the_internet_when_the_book_is_read(book):
    folder, report, _ = book
    for name in report["pages"]:
        page = _page(folder, name)
        for attribute in re.findall(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="([^"]+)"', page):
            assert not attribute.startswith(("http:", "https:", "//")), f"{name} loads {attribute}"
    assert (folder / "assets" / "katex" / "katex.min.css").exists()
    assert any((folder / "assets" / "katex" / "fonts").glob("*.woff2"))
    assert 'class="katex"' in _page(folder, "05_roofline.html")  # formulas typeset by MyST's KaTeX


def test_the_book_builds_in_chromium_and_prints(book, tmp_path):
    from playwright.sync_api import sync_playwright

    from tests.lab_harness import CHROMIUM, CHROMIUM_ARGS

    folder, _, _ = book
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        failed = []
        page.on("requestfailed", lambda request: failed.append(request.url))
        page.goto((folder / "print.html").as_uri())
        page.wait_for_load_state("load")
        broken = page.evaluate("() => Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).length")
        pdf = page.pdf(path=str(tmp_path / "book.pdf"))
        browser.close()
    assert not failed and broken == 0, (failed[:5], broken)
    assert pdf[:4] == b"%PDF" and len(pdf) > 200_000
    print(f"print edition: {len(pdf) / 1e6:.1f} MB of PDF; {json.dumps(book[1]['pages'])}")
