"""A figure that draws its unchanging part to SVG once and, on each render, only what moved.

Most of a widget's redraw is axes furniture: ticks, tick labels, axis labels, legends, grids.
Laying out and writing that text costs more than a 50 ms budget allows on the course's 2-core
machine, yet it is the same on every render. A :class:`FrozenFigure` is an ordinary matplotlib
figure (every artist stays in place, so tests and PNG output see the whole picture) that, when
drawn to SVG, writes the SVG of its static artists from a cache and draws only the artists it
was told are dynamic, on top. The result is still vector SVG with text as text: sharp on a
high-dpi screen.

The static SVG is cached per *key*: a function of the figure's state that changes whenever
the static picture would (by default the limits of every axes, so moving a limit redraws the
ticks). Anything else a render changes must be among the dynamic artists.

Unlike a background frozen as pixels, nothing is rasterised: the cached part is SVG text. :class:`TextBlock` goes one step further
for many small labels (an animation's cells): it writes them as ``<text>`` elements directly.

Both write into matplotlib's SVG writer through its (name-mangled) raw output; should a
future matplotlib lack it, the figure simply draws in full, as any figure does.
"""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from typing import Any, Literal

from matplotlib import rc_context
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.spines import Spine
from matplotlib.text import Text

from accelkit.widgets._base import _MARGINS, DPI

_KEPT = 16  # static pictures kept per figure (one per key)


def _raw_writer(renderer: Any) -> Callable[[str], None] | None:
    """The SVG renderer's raw output (None for any other renderer, or if matplotlib's writer
    no longer exposes it: the figure then draws in full)."""
    from matplotlib.backends.backend_svg import RendererSVG

    svg = getattr(renderer, "_renderer", renderer)  # a MixedModeRenderer wraps the SVG one
    if not isinstance(svg, RendererSVG):
        return None
    write = getattr(svg.writer, "_XMLWriter__write", None)
    close_tag = getattr(svg.writer, "_XMLWriter__flush", None)
    if write is None or close_tag is None:
        return None
    close_tag()  # end a start tag left open (">") before writing raw elements after it
    return write


def _body(document: str) -> str:
    """The drawing inside an SVG document (no prolog, root element, metadata or default style),
    with its ids renamed so that they cannot clash with the dynamic part's."""
    start = document.index(">", document.index("<svg")) + 1
    end = document.rindex("</svg>")
    body = document[start:end]
    for opening, closing in (("<metadata>", "</metadata>"), ("<defs>", "</defs>")):
        i = body.find(opening)
        if i >= 0 and body[:i].strip() == "":
            body = body[body.index(closing, i) + len(closing):]
    return (body.replace('id="', 'id="s_').replace("url(#", "url(#s_")
            .replace('xlink:href="#', 'xlink:href="#s_'))


def _limits(figure: Figure) -> Hashable:
    return tuple((ax.get_xlim(), ax.get_ylim()) for ax in figure.axes)


class FrozenFigure(Figure):
    """A figure drawn to SVG as a cached static part plus its dynamic artists.

    Call :meth:`freeze` once the figure is built, naming the artists a render changes. Drawn by
    any renderer other than SVG, or before :meth:`freeze`, it draws like any figure.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._dynamic: list[Artist] = []
        self._key: Callable[[Figure], Hashable] = _limits
        self._statics: OrderedDict[Hashable, str] = OrderedDict()
        self._drawing_static = False
        self._layout_dpi = self.dpi

    def freeze(self, dynamic: Sequence[Artist],
               key: Callable[[Figure], Hashable] | None = None) -> None:
        """From now on SVG draws write the static picture from a cache (one per ``key(figure)``;
        default: every axes' limits) and draw ``dynamic`` over it, in z-order, with the spines
        of their axes."""
        # The spines of an axes that holds a dynamic artist are redrawn with it (four paths):
        # drawn in z-order, they stay over bars and patches as in a full draw.
        spines = [spine for ax in dict.fromkeys(a.axes for a in dynamic if a.axes is not None)
                  for spine in ax.spines.values()]
        self._dynamic = list(dict.fromkeys([*dynamic, *spines]))
        self._key = key or _limits
        self._statics.clear()

    def static_svg(self) -> str:
        """The SVG body of everything but the dynamic artists, for the current key (cached)."""
        key = self._key(self)
        cached = self._statics.get(key)
        if cached is not None:
            self._statics.move_to_end(key)
            return cached
        from matplotlib.backends.backend_svg import FigureCanvasSVG

        # Hidden for the static pass: texts by blanking them (an axes title that is merely
        # invisible would be moved by the axes' title placement, which measures it as empty),
        # every other artist by visibility.
        texts = [a for a in self._dynamic if isinstance(a, Text)]
        others = [a for a in self._dynamic if not isinstance(a, Text)]
        words = [t.get_text() for t in texts]
        shown = [a.get_visible() for a in others]
        canvas, dpi = self.canvas, self.dpi
        buffer = io.BytesIO()
        self._drawing_static = True
        try:
            for text in texts:
                text.set_text("")
            for artist in others:
                artist.set_visible(False)
            self.dpi = self._layout_dpi
            FigureCanvasSVG(self).print_svg(buffer, metadata={"Date": None})
        finally:
            self._drawing_static = False
            for text, word in zip(texts, words):
                text.set_text(word)
            for artist, visible in zip(others, shown):
                artist.set_visible(visible)
            self.dpi = dpi
            self.set_canvas(canvas)
        body = _body(buffer.getvalue().decode("utf-8"))
        self._statics[key] = body
        if len(self._statics) > _KEPT:
            self._statics.popitem(last=False)
        return body

    def draw(self, renderer: Any) -> None:
        write = None if self._drawing_static or not self._dynamic else _raw_writer(renderer)
        if write is None:
            super().draw(renderer)
            return
        write(self.static_svg())
        axes = {id(a.axes): a.axes for a in self._dynamic if isinstance(a.axes, Axes)}
        for ax in axes.values():
            ax.apply_aspect()  # what Axes.draw would do first: the data transform is current
        renderer.open_group("dynamic")
        for artist in sorted(self._dynamic, key=lambda a: a.get_zorder()):
            if artist.get_visible() and not (isinstance(artist, Spine) and not (
                    artist.axes.axison and artist.axes.get_frame_on())):
                artist.draw(renderer)  # (an axes without its frame draws no spines)
        renderer.close_group("dynamic")
        self.stale = False


def frozen_figure(width: float = 7.0, height: float = 3.6, *,
                  layout: Literal["constrained", "compressed", "tight"] | None = None,
                  margins: dict[str, float] | None = None) -> FrozenFigure:
    """:func:`accelkit.widgets._base.new_figure`, as a :class:`FrozenFigure`."""
    figure = FrozenFigure(figsize=(width, height), dpi=DPI, layout=layout)
    if layout is None:
        figure.subplots_adjust(**{**_MARGINS, **(margins or {})})
    return figure


@lru_cache(maxsize=1)
def _font_family_css() -> str:
    """The CSS font-family list matplotlib's SVG writer gives text in the default font (taken
    from a sample it writes, so the labels below match every other text of a figure)."""
    import re

    from matplotlib.backends.backend_svg import FigureCanvasSVG

    sample = Figure(figsize=(1, 1))
    sample.text(0.5, 0.5, "x")
    buffer = io.BytesIO()
    with rc_context({"svg.fonttype": "none"}):
        FigureCanvasSVG(sample).print_svg(buffer)
    found = re.search(r"font-family: ([^;\"]+)", buffer.getvalue().decode("utf-8"))
    return found.group(1).strip() if found else "sans-serif"


class TextBlock(Artist):
    """Many short labels, each centred on a point in data coordinates, drawn as one artist.

    Drawn to SVG, each line is written straight as a ``<text>`` element (centred with CSS,
    sized in points like matplotlib's own): no per-label layout, which for the 50-odd labels
    of an animation frame would cost more than the frame's budget. Drawn by any other renderer
    (PNG), the labels are ordinary matplotlib texts.

    Args:
        transform: data to display (``ax.transData``, possibly offset).
        fontsize: points.
        ha: ``"center"`` or ``"right"`` (the label's anchor on the point).
        va: ``"center"`` or ``"top"``.
        linespacing: line pitch of multi-line labels, in font sizes.
    """

    _ANCHOR = {"center": "middle", "right": "end"}

    def __init__(self, transform: Any, fontsize: float, *, ha: str = "center",
                 va: str = "center", linespacing: float = 1.2):
        super().__init__()
        self.set_zorder(3)  # as matplotlib's texts: over lines, patches and collections
        if ha not in self._ANCHOR or va not in ("center", "top"):
            raise ValueError(f"ha must be 'center' or 'right' and va 'center' or 'top', "
                             f"got {ha!r}, {va!r}")
        self.set_transform(transform)
        self.fontsize, self.ha, self.va, self.linespacing = fontsize, ha, va, linespacing
        self.items: list[tuple[float, float, str]] = []

    def set_items(self, items: Sequence[tuple[float, float, str]]) -> None:
        """The labels: (x, y, text) with x, y in data coordinates; ``\\n`` separates lines."""
        self.items = [(float(x), float(y), str(text)) for x, y, text in items]
        self.stale = True

    def draw(self, renderer: Any) -> None:
        if not self.get_visible() or not self.items:
            return
        write = _raw_writer(renderer)
        if write is None:
            from matplotlib.text import Text

            for x, y, text in self.items:
                label = Text(x, y, text, ha=self.ha, va=self.va, fontsize=self.fontsize,
                             linespacing=self.linespacing)
                figure = self.get_figure(root=False)
                if figure is not None:
                    label.set_figure(figure)
                label.set_transform(self.get_transform())
                label.draw(renderer)
            return
        from xml.sax.saxutils import escape

        height = renderer.get_canvas_width_height()[1]
        points = self.get_transform().transform([(x, y) for x, y, _ in self.items])
        style = (f"font-size: {self.fontsize:g}px; font-family: {_font_family_css()}; "
                 f"text-anchor: {self._ANCHOR[self.ha]}")
        pitch = self.fontsize * self.linespacing
        # A line's baseline sits 0.36 em below its middle (DejaVu Sans: cap height ~0.73 em).
        middle = 0.36 * self.fontsize
        out = ['<g style="' + style + '">\n']
        for (x, y), (_, _, text) in zip(points, self.items):
            lines = text.split("\n")
            top = height - y - (len(lines) - 1) * pitch / 2 + middle
            if self.va == "top":
                top = height - y + 0.76 * self.fontsize
            for i, line in enumerate(lines):
                out.append(f'<text x="{x:.2f}" y="{top + i * pitch:.2f}">{escape(line)}</text>\n')
        out.append("</g>\n")
        write("".join(out))
        self.stale = False
