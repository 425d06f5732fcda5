"""The course as a static, printable book: every lesson with its outputs and figures, and the glossary.

``python publish/build.py --only book`` builds it into ``build/course/book/`` (``index.html``, one
page per lesson, ``print.html`` with the whole book on one page for printing or saving as PDF).

How: the lessons as they ran (each with its outputs and saved widget state: the run
benchmarks/kernel_memory.py measures) have their widget outputs turned into static HTML with alt
text (publish/widget_state.py); MyST (``mystmd``, from npm) reads them and the glossary into its
content tree with ``myst build --site``, offline; publish/myst_html.py writes the HTML. MyST's own
``--html`` build cannot run here: its theme is downloaded at build time (see publish/myst_html.py).
Formulas are typeset by MyST with KaTeX; the page carries KaTeX's style sheet and fonts itself, so
nothing is fetched from the internet when the book is read.
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
from publish import node_tools  # noqa: E402
from publish.myst_html import Renderer, page  # noqa: E402
from publish.widget_state import static_outputs  # noqa: E402

STYLE = Path(__file__).with_name("book.css")
GLOSSARY = ROOT / "docs" / "glossary.md"


def widget_names() -> set[str]:
    import make_projector

    return make_projector.widget_names()


def _title(notebook: nbformat.NotebookNode) -> str:
    return notebook.cells[0].source.splitlines()[0].lstrip("# ").strip()


def prepare(executed: Path, source: Path) -> tuple[list[dict], list]:
    """Write the MyST project (static lessons, the glossary, myst.yml) into ``source``."""
    if source.exists():
        shutil.rmtree(source)
    (source / "lessons").mkdir(parents=True)
    (source / "docs").mkdir()
    names, chapters, shown = widget_names(), [], []
    for path in sorted((executed / "lessons").glob("[0-9][0-9]_*.ipynb")):
        notebook, found = static_outputs(nbformat.read(path, as_version=4), names)
        shown += [(path.stem, what) for what in found]
        for cell in notebook.cells:  # nbval's verdicts and our tags are not for readers
            cell.metadata.pop("nbval", None)
        nbformat.write(notebook, source / "lessons" / path.name)
        chapters.append({"file": f"lessons/{path.name}", "title": _title(notebook), "stem": path.stem})
    shutil.copy(GLOSSARY, source / "docs" / "glossary.md")
    (source / "template").mkdir()
    # A local site template, so that MyST resolves its "template" without the internet. It is
    # only named here: the pages are written by publish/myst_html.py, not by a theme.
    (source / "template" / "template.yml").write_text(
        "myst: v1\nkind: site\ntitle: accelkit static book (rendered by publish/myst_html.py)\n",
        encoding="utf-8")
    toc = "\n".join(f"    - file: {c['file']}" for c in chapters) + "\n    - file: docs/glossary.md\n"
    (source / "index.md").write_text(index_markdown(chapters), encoding="utf-8")
    (source / "myst.yml").write_text(
        "version: 1\nproject:\n  title: accelkit — why GPUs and TPUs are built the way they are\n"
        f"  github: {links.repository()}\n  toc:\n    - file: index.md\n{toc}"
        "site:\n  template: ./template\n", encoding="utf-8")
    return chapters, shown


def index_markdown(chapters: list[dict]) -> str:
    lines = ["# accelkit: the book", "",
             "A runnable course, printed: every lesson as it ran, with its outputs and the picture each "
             "widget drew, on one question: for this model, at this scale, with this latency target, "
             "should I train or serve it on GPUs or on TPUs, and why?", "",
             "The pictures here are still: to move the sliders, open the lesson live "
             f"([Binder]({links.binder_url()}), a JupyterHub, or the JupyterLite build of the course). "
             "Each picture says in words what it shows (its alt text), and the numbers it shows are in "
             "the text beside it.", "", "## Lessons", ""]
    lines += [f"{i}. [{c['title']}]({c['file']})" for i, c in enumerate(chapters, 0)]
    lines += ["", "[The glossary](docs/glossary.md) defines every term the lessons use.", "",
              "To print the whole book, or save it as a PDF, open the [one-page edition](print.html) and "
              "use the browser's Print command.", ""]
    return "\n".join(lines)


def run_myst(source: Path) -> Path:
    """``myst build --site`` in ``source``; the content folder it wrote."""
    done = subprocess.run([*node_tools.myst(), "build", "--site"], cwd=source, capture_output=True,
                          text=True, timeout=600, env=node_tools.offline_env())
    log = done.stdout + done.stderr
    if done.returncode != 0 or "Building MyST site" not in log:
        raise RuntimeError(f"myst build --site failed ({done.returncode}):\n{log[-4000:]}")
    (source / "myst-build.log").write_text(log, encoding="utf-8")
    return source / "_build" / "site"


def _slug_map(site: Path) -> dict[str, str]:
    """MyST page slug -> our HTML file name."""
    found = {}
    for path in (site / "content").glob("*.json"):
        data = page(path)
        location = data.get("location", "")
        stem = Path(location).stem
        found[data["slug"]] = "index.html" if stem == "index" else f"{stem}.html"
    return found


def _link_resolver(site: Path, slugs: dict[str, str], one_page: bool):
    repository = links.repository().rstrip("/")

    def resolve(node: dict) -> str | None:
        url = node.get("url", "")
        if node.get("internal") or url.startswith("/"):
            target, _, anchor = url.lstrip("/").partition("#")
            slug = target.split("/")[-1]
            if slug in slugs or not slug:
                name = slugs.get(slug, "")
                if one_page:
                    return f"#{anchor or 'page-' + Path(name).stem}"
                return f"{name}#{anchor}" if anchor else name
        if re.match(r"^[a-z]+:", url) or url.startswith("#"):
            return None
        # A relative link to a file the book does not hold (an exercise, a docs page): the file
        # in the repository, where it can be read or opened.
        clean = re.sub(r"^(\.\./)+", "", url)
        return f"{repository}/blob/main/{clean}"

    return resolve


def _shell(title: str, body: str, nav: str, css: str = "book.css") -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n"
            "<link rel=\"stylesheet\" href=\"assets/katex/katex.min.css\">\n"
            f"<link rel=\"stylesheet\" href=\"assets/{css}\">\n</head>\n<body>\n"
            f"<nav class=\"toc\">{nav}</nav>\n<main>\n{body}\n</main>\n</body>\n</html>\n")


def render(site: Path, chapters: list[dict], out: Path) -> dict:
    """Write the HTML pages into ``out``; return what was written (pages, images, unknown nodes)."""
    if out.exists():
        shutil.rmtree(out)
    (out / "assets").mkdir(parents=True)
    shutil.copy(STYLE, out / "assets" / "book.css")
    node_tools.copy_katex(out / "assets" / "katex")
    slugs = _slug_map(site)
    pages = sorted((site / "content").glob("*.json"), key=lambda p: _order(page(p), chapters))
    nav_items = []
    for path in pages:
        data = page(path)
        nav_items.append(f'<li><a href="{slugs[data["slug"]]}">{html.escape(data["frontmatter"].get("title", data["slug"]))}</a></li>')
    nav = "<p><a href=\"index.html\">accelkit</a></p><ol>" + "".join(nav_items[1:]) + \
        "</ol><p><a href=\"print.html\">The whole book on one page (to print)</a></p>"
    report = {"pages": [], "images_alt": [], "unknown": set()}
    whole = []
    for number, path in enumerate(pages):
        data = page(path)
        renderer = Renderer(_link_resolver(site, slugs, one_page=False), public=site / "public")
        body = renderer.render(data["mdast"])
        title = data["frontmatter"].get("title", data["slug"])
        heading = "" if data["frontmatter"].get("content_includes_title") else f"<h1>{html.escape(title)}</h1>"
        step = _prev_next(pages, number, slugs)
        name = slugs[data["slug"]]
        (out / name).write_text(_shell(title, heading + body + step, nav), encoding="utf-8")
        report["pages"].append(name)
        report["unknown"] |= renderer.unknown
        one = Renderer(_link_resolver(site, slugs, one_page=True), public=site / "public")
        whole.append(f'<article class="chapter" id="page-{Path(name).stem}">{heading}{one.render(data["mdast"])}</article>')
    (out / "print.html").write_text(_shell("accelkit: the book (one page)", "".join(whole), nav, css="book.css"),
                                    encoding="utf-8")
    report["pages"].append("print.html")
    report["unknown"] = sorted(report["unknown"])
    return report


def _order(data: dict, chapters: list[dict]) -> int:
    location = data.get("location", "").lstrip("/")
    files = ["index.md"] + [c["file"] for c in chapters] + ["docs/glossary.md"]
    return files.index(location) if location in files else len(files)


def _prev_next(pages: list[Path], number: int, slugs: dict[str, str]) -> str:
    parts = []
    for offset, label in ((-1, "← previous"), (1, "next →")):
        if 0 <= number + offset < len(pages):
            data = page(pages[number + offset])
            parts.append(f'<a href="{slugs[data["slug"]]}">{label}: '
                         f'{html.escape(data["frontmatter"].get("title", ""))}</a>')
    return f'<p class="prev-next">{" · ".join(parts)}</p>'


def build(executed: Path, out: Path, work: Path) -> dict:
    """The book from the executed lessons in ``executed/lessons``, into ``out``."""
    chapters, shown = prepare(executed, work)
    site = run_myst(work)
    report = render(site, chapters, out)
    report["figures"] = sum(what.images for _, what in shown)
    report["widgets"] = len(shown)
    (out / "build.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return report
