"""MyST's content tree (``myst build --site``'s JSON) as static HTML, for the book and the slides.

MyST's own HTML build (``myst build --html``) renders that tree with a theme, a web application
that ``mystmd`` downloads from the internet at build time (the "book-theme" template, which is
on neither npm nor PyPI). These machines cannot reach it, so the course builds the content with
MyST offline (``myst build --site``: the parser, the notebook reader, the cross-references, the
formulas typeset by KaTeX) and turns the resulting tree into HTML here: one small function per
node type of the MyST spec that the lessons use. A node type this module does not know is
rendered by its children and recorded in :attr:`Renderer.unknown`, which the tests require to
stay empty.

Notebook outputs are rendered as nbconvert would: streams as preformatted text, ``text/html``
as HTML (the lessons' widget pictures are HTML by then: publish/widget_state.py), ``image/*``
as images, else ``text/plain``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


class Renderer:
    """Render one page's tree. ``link`` maps a MyST link node to an href (or None to keep it);
    ``public`` is the site's ``public/`` folder, where MyST puts large outputs."""

    def __init__(self, link: Callable[[dict], str | None] | None = None, public: Path | None = None):
        self.link = link or (lambda node: None)
        self.public = public
        self.unknown: set[str] = set()
        self.images: list[str] = []  # alt text of every <img> written from an output or image node
        self.assets: dict[str, Path] = {}  # figures/<name> -> the public file it copies

    def children(self, node: dict) -> str:
        return "".join(self.render(child) for child in node.get("children", []) or [])

    def render(self, node: dict) -> str:
        method = getattr(self, "node_" + node.get("type", ""), None)
        if method is None:
            self.unknown.add(node.get("type", "?"))
            return self.children(node)
        return method(node)

    # -- structure -------------------------------------------------------------------------
    def node_root(self, node):
        return self.children(node)

    def node_block(self, node):
        return f'<section class="block">{self.children(node)}</section>'

    def node_heading(self, node):
        depth = min(max(int(node.get("depth", 2)), 1), 6)
        ident = f' id="{_esc(node["identifier"])}"' if node.get("identifier") else ""
        return f"<h{depth}{ident}>{self.children(node)}</h{depth}>"

    def node_paragraph(self, node):
        return f"<p>{self.children(node)}</p>"

    def node_text(self, node):
        return _esc(node.get("value", ""))

    def node_emphasis(self, node):
        return f"<em>{self.children(node)}</em>"

    def node_strong(self, node):
        return f"<strong>{self.children(node)}</strong>"

    def node_delete(self, node):
        return f"<del>{self.children(node)}</del>"

    def node_subscript(self, node):
        return f"<sub>{self.children(node)}</sub>"

    def node_superscript(self, node):
        return f"<sup>{self.children(node)}</sup>"

    def node_keyboard(self, node):
        return f"<kbd>{self.children(node)}</kbd>"

    def node_break(self, node):
        return "<br>"

    def node_thematicBreak(self, node):
        return "<hr>"

    def node_blockquote(self, node):
        return f"<blockquote>{self.children(node)}</blockquote>"

    def node_list(self, node):
        tag = "ol" if node.get("ordered") else "ul"
        start = f' start="{int(node["start"])}"' if node.get("ordered") and node.get("start", 1) != 1 else ""
        return f"<{tag}{start}>{self.children(node)}</{tag}>"

    def node_listItem(self, node):
        return f"<li>{self.children(node)}</li>"

    def node_inlineCode(self, node):
        return f"<code>{_esc(node.get('value', ''))}</code>"

    def node_code(self, node):
        lang = node.get("lang") or ""
        cls = f' class="language-{_esc(lang)}"' if lang else ""
        return f'<pre class="code"><code{cls}>{_esc(node.get("value", ""))}</code></pre>'

    def node_inlineMath(self, node):
        return node["html"] if node.get("html") else f'<span class="math">{_esc(node.get("value", ""))}</span>'

    def node_math(self, node):
        inner = node["html"] if node.get("html") else _esc(node.get("value", ""))
        return f'<div class="math display">{inner}</div>'

    def node_html(self, node):
        return node.get("value", "")

    def node_div(self, node):
        cls = f' class="{_esc(node["class"])}"' if node.get("class") else ""
        return f"<div{cls}>{self.children(node)}</div>"

    def node_span(self, node):
        cls = f' class="{_esc(node["class"])}"' if node.get("class") else ""
        return f"<span{cls}>{self.children(node)}</span>"

    def node_details(self, node):
        return f"<details>{self.children(node)}</details>"

    def node_summary(self, node):
        return f"<summary>{self.children(node)}</summary>"

    def node_table(self, node):
        return f"<table>{self.children(node)}</table>"

    def node_tableRow(self, node):
        return f"<tr>{self.children(node)}</tr>"

    def node_tableCell(self, node):
        tag = "th" if node.get("header") else "td"
        align = f' style="text-align:{_esc(node["align"])}"' if node.get("align") else ""
        return f"<{tag}{align}>{self.children(node)}</{tag}>"

    def node_admonition(self, node):
        kind = _esc(node.get("kind", "note"))
        return f'<aside class="admonition {kind}">{self.children(node)}</aside>'

    def node_admonitionTitle(self, node):
        return f'<p class="admonition-title">{self.children(node)}</p>'

    def node_link(self, node):
        if not node.get("url") and node.get("identifier"):
            # An anchor (``<a id="flop"></a>`` in the glossary): a target for links, not a link.
            return f'<a id="{_esc(node["identifier"])}"></a>{self.children(node)}'
        href = self.link(node) or node.get("url", "")
        return f'<a href="{_esc(href)}">{self.children(node)}</a>'

    def node_crossReference(self, node):
        """A reference MyST resolved: to a target on another page (``url`` names the page, as
        ``/glossary``) or on this one."""
        anchor = node.get("html_id") or node.get("identifier", "")
        if node.get("url"):
            return self.node_link({**node, "url": f"{node['url']}#{anchor}", "internal": True})
        return self.node_link({**node, "url": f"#{anchor}"})

    def node_image(self, node):
        alt = node.get("alt", "")
        self.images.append(alt)
        url = node.get("url", "")
        if url.startswith("/") and self.public is not None and (self.public / url[1:]).is_file():
            # A picture MyST took out of the page into its public folder (an inline data: URL):
            # the page's figures/ folder holds it (the caller copies :attr:`assets` there).
            self.assets[url[1:]] = self.public / url[1:]
            url = f"figures/{url[1:]}"
        style = f' style="{_esc(node["style"])}"' if isinstance(node.get("style"), str) else ""
        return f'<img class="widget-figure" src="{_esc(url)}" alt="{_esc(alt)}"{style}>'

    def node_footnoteReference(self, node):
        label = _esc(node.get("label", node.get("identifier", "")))
        return f'<sup class="footnote-ref"><a href="#fn-{label}">{label}</a></sup>'

    def node_footnoteDefinition(self, node):
        label = _esc(node.get("label", node.get("identifier", "")))
        return f'<div class="footnote" id="fn-{label}"><sup>{label}</sup> {self.children(node)}</div>'

    def node_comment(self, node):
        return ""

    # -- notebook outputs ------------------------------------------------------------------
    def node_outputs(self, node):
        inner = self.children(node)
        return f'<div class="outputs">{inner}</div>' if inner else ""

    def node_output(self, node):
        data = node.get("jupyter_data") or {}
        kind = data.get("output_type")
        if kind == "stream":
            return f'<pre class="output stream {_esc(data.get("name", ""))}">{_esc(self._text(data.get("text", "")))}</pre>'
        if kind == "error":
            return f'<pre class="output error">{_esc(data.get("ename", ""))}: {_esc(data.get("evalue", ""))}</pre>'
        bundle = data.get("data", {})
        if "text/html" in bundle:
            return f'<div class="output html">{self._text(bundle["text/html"])}</div>'
        for mime in ("image/svg+xml", "image/png", "image/jpeg"):
            if mime in bundle:
                raise ValueError(f"a {mime} output without alt text: the lessons' pictures come "
                                 "from widgets (publish/widget_state.py gives them words)")
        if "text/plain" in bundle:
            return f'<pre class="output text">{_esc(self._text(bundle["text/plain"]))}</pre>'
        return ""

    def _text(self, value) -> str:
        """An output's text: inline, in MyST's ``{"content": ...}`` wrapper, or in a file of the
        site's public folder when MyST moved a large output there (a dict naming its ``path``)."""
        if isinstance(value, list):
            return "".join(value)
        if isinstance(value, dict) and "content" in value:
            return self._text(value["content"])
        if isinstance(value, dict):
            if self.public is None or "path" not in value:
                raise ValueError(f"an output MyST moved out of the page, and no public folder: {value}")
            return (self.public / value["path"].lstrip("/")).read_text(encoding="utf-8")
        return str(value)


def page(path: Path) -> dict:
    """One page of ``_build/site/content``."""
    return json.loads(path.read_text(encoding="utf-8"))
