"""One reveal.js slide deck per lesson, for the projector: takeaway, number, figure, question, answer.

``python publish/build.py --only slides`` writes ``build/course/slides/NN_lesson.html`` and an
``index.html``. Each deck's content is docs/make_projector.py's :func:`deck` (the same takeaway,
number and question as the projector pages in docs/projector/), with the one figure: the picture
the lesson's first widget (the projector page's "widget to show") drew in the measured run, with
its alt text. MyST parses the deck (``myst build --site``, offline) and publish/myst_html.py
renders it; each ``---`` starts a slide.

reveal.js comes from npm's ``reveal.js`` package at build time and is copied beside the decks
(``reveal/``), with KaTeX's style sheet and fonts: a deck loads nothing from the internet when it
is shown, so it works on a lecture-room machine that has no network.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))
sys.path.insert(0, str(ROOT / "docs" / "hub"))

import nbformat  # noqa: E402

import links  # noqa: E402
import make_projector  # noqa: E402
from publish import node_tools  # noqa: E402
from publish.myst_html import Renderer, page  # noqa: E402
from publish.widget_state import VIEW, shown, widgets_called  # noqa: E402

STYLE = Path(__file__).with_name("slides.css")


def lesson_figure(executed: Path, widget: str) -> tuple[str, str]:
    """(img tag, title) of the first picture ``widget`` drew in the executed lesson."""
    notebook = nbformat.read(executed, as_version=4)
    names = make_projector.widget_names()
    for cell in notebook.cells:
        if cell.cell_type != "code" or widget not in widgets_called(cell.source, names):
            continue
        for output in cell.outputs:
            if VIEW in output.get("data", {}):
                what = shown(notebook, output["data"][VIEW]["model_id"], widget)
                images = [value for kind, value in what.parts if kind == "img"]
                titles = [value for kind, value in what.parts if kind == "html"]
                if images:
                    title = html.unescape(_strip_tags(titles[0])) if titles else widget
                    return images[0], title
    raise ValueError(f"{executed.name}: {widget}() drew no picture in the executed lesson")


def _strip_tags(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text).strip()


def prepare(executed: Path, source: Path) -> list[str]:
    if source.exists():
        shutil.rmtree(source)
    (source / "decks").mkdir(parents=True)
    (source / "template").mkdir()
    (source / "template" / "template.yml").write_text(
        "myst: v1\nkind: site\ntitle: accelkit slides (rendered by publish/slides.py)\n", encoding="utf-8")
    stems = []
    for lesson in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")):
        widget = make_projector.lesson_parts(lesson)["widget"]
        image, title = lesson_figure(executed / "lessons" / lesson.name, widget)
        (source / "decks" / f"{lesson.stem}.md").write_text(
            make_projector.deck(lesson, image, title), encoding="utf-8")
        stems.append(lesson.stem)
    toc = "\n".join(f"    - file: decks/{stem}.md" for stem in stems)
    (source / "myst.yml").write_text(
        f"version: 1\nproject:\n  title: accelkit slides\n  toc:\n{toc}\nsite:\n  template: ./template\n",
        encoding="utf-8")
    return stems


def _slides(mdast: dict) -> list[list[dict]]:
    """The page's top-level nodes cut at each thematic break (``---``)."""
    nodes = []
    for child in mdast.get("children", []):
        nodes.extend(child.get("children", []) if child.get("type") == "block" else [child])
    slides, current = [], []
    for node in nodes:
        if node.get("type") == "thematicBreak":
            slides.append(current)
            current = []
        else:
            current.append(node)
    slides.append(current)
    return [s for s in slides if s]


def _deck_html(title: str, sections: list[str]) -> str:
    body = "\n".join(f"<section>{s}</section>" for s in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n"
            "<link rel=\"stylesheet\" href=\"reveal/dist/reset.css\">\n"
            "<link rel=\"stylesheet\" href=\"reveal/dist/reveal.css\">\n"
            "<link rel=\"stylesheet\" href=\"reveal/dist/theme/white.css\">\n"
            "<link rel=\"stylesheet\" href=\"katex/katex.min.css\">\n"
            "<link rel=\"stylesheet\" href=\"slides.css\">\n</head>\n<body>\n"
            f"<div class=\"reveal\"><div class=\"slides\">\n{body}\n</div></div>\n"
            "<script src=\"reveal/dist/reveal.js\"></script>\n"
            "<script>Reveal.initialize({hash: true, width: 1280, height: 800, margin: 0.04});</script>\n"
            "</body>\n</html>\n")


def render(site: Path, stems: list[str], out: Path) -> dict:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    reveal = node_tools.reveal()
    shutil.copytree(reveal / "dist", out / "reveal" / "dist")
    shutil.copy(reveal / "LICENSE", out / "reveal" / "LICENSE")
    node_tools.copy_katex(out / "katex")
    shutil.copy(STYLE, out / "slides.css")
    repository = links.repository().rstrip("/")

    def link(node: dict) -> str | None:
        url = node.get("url", "")
        if url.startswith(("http://", "https://", "#")):
            return None
        clean = re.sub(r"^(\.\./)+", "", url).lstrip("/")
        return f"{repository}/blob/main/{clean}"

    report = {"decks": {}, "unknown": set()}
    by_stem = {Path(page(p).get("location", "")).stem: p for p in (site / "content").glob("*.json")}
    for stem in stems:
        data = page(by_stem[stem])
        renderer = Renderer(link, public=site / "public")
        sections = [renderer.render({"type": "root", "children": nodes}) for nodes in _slides(data["mdast"])]
        title = data["frontmatter"].get("title")
        if title and not data["frontmatter"].get("content_includes_title"):
            # MyST lifts a page's first heading into its title: it heads the first slide again.
            sections[0] = f"<h1>{html.escape(title)}</h1>" + sections[0]
        (out / f"{stem}.html").write_text(_deck_html(data["frontmatter"].get("title", stem), sections),
                                          encoding="utf-8")
        for name, source in renderer.assets.items():
            (out / "figures").mkdir(exist_ok=True)
            shutil.copy(source, out / "figures" / name)
        report["decks"][stem] = len(sections)
        report.setdefault("alt", {})[stem] = renderer.images
        report["unknown"] |= renderer.unknown
    items = "".join(f'<li><a href="{s}.html">{html.escape(s.replace("_", " "))}</a></li>' for s in stems)
    (out / "index.html").write_text(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>accelkit slides</title>"
        "</head><body><h1>accelkit: one deck per lesson</h1><p>Arrow keys move; <kbd>F</kbd> is full "
        f"screen; <kbd>S</kbd> opens the speaker view.</p><ol>{items}</ol></body></html>\n", encoding="utf-8")
    report["unknown"] = sorted(report["unknown"])
    return report


def build(executed: Path, out: Path, work: Path) -> dict:
    stems = prepare(executed, work)
    done = subprocess.run([*node_tools.myst(), "build", "--site"], cwd=work, capture_output=True,
                          text=True, timeout=600, env=node_tools.offline_env())
    if done.returncode != 0:
        raise RuntimeError(f"myst build --site failed for the slides:\n{(done.stdout + done.stderr)[-4000:]}")
    report = render(work / "_build" / "site", stems, out)
    (out / "build.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return report
