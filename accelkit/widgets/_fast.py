"""Drawing shortcuts for the widgets of lessons 05-09 (presentation only, no numbers).

A few costs dominate a widget's redraw, each paid again on every render although the picture
it makes does not change:

* an axis label placed automatically is moved clear of the tick labels on every draw, which
  lays out every tick label's text once more (about a third of a small figure's SVG time);
  :func:`pin_axis_labels` measures the place once and fixes it there;
* each tick is a group of artists of its own, a millisecond or two per tick and draw;
  :class:`Ticks` (fixed places) and :class:`LocatedTicks` (places from a matplotlib locator,
  as the axis would pick them) draw the same marks and labels as one marker line and a text
  per label;
* a legend re-packs its boxes on every draw; :func:`key_row` draws the same key as a few texts
  placed once;
* matplotlib keys its text-metrics cache on the renderer, and every SVG render makes a new
  one, so each text is measured again on every draw; :class:`FastText` (:func:`fast_texts`)
  lays a text out once per look.

With these, the figures of lessons 05-09 redraw as SVG (sharp at any screen density) within
the speed budget, with no background frozen as pixels.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any, cast

from matplotlib.figure import Figure

__all__ = ["pin_axis_labels", "Ticks", "LocatedTicks", "room_for", "key_row", "FastText",
           "fast_texts"]


_PINNED: "weakref.WeakSet[Any]" = weakref.WeakSet()  # labels already pinned: leave them


def pin_axis_labels(figure: Figure, which: str = "xy") -> None:
    """Fix the axis labels of ``figure`` (``which``: "x", "y" or both) where matplotlib's
    automatic placement puts them now.

    Call it once the ticks are set: a later draw then skips re-measuring the tick labels to
    place the axis labels. An x label only depends on the tick labels' height (one line of
    text), always the same; a y label depends on their width, so pin "y" only on axes whose
    tick labels keep their width (fixed ticks). A label pinned before is left where it is.
    """
    figure.draw_without_rendering()
    for ax in figure.axes:
        to_axes = ax.transAxes.inverted()
        for axis, horizontal in ((ax.xaxis, True), (ax.yaxis, False)):
            label = axis.label
            if not label.get_text() or ("x" if horizontal else "y") not in which \
                    or label in _PINNED:
                continue
            _PINNED.add(label)
            x, y = label.get_position()
            # An automatic x label sits at (axes x, display y), a y label at (display x, axes y).
            if horizontal:
                y = float(to_axes.transform((0.0, y))[1])
            else:
                x = float(to_axes.transform((x, 0.0))[0])
            axis.set_label_coords(x, y)


class Ticks:
    """The tick marks and labels of one axis, drawn as one marker line and a few texts.

    matplotlib draws each tick as its own group of artists (two marks, two labels, a grid line)
    and measures every label again to place the axis label: a millisecond or two per tick and
    draw, most of a small figure's redraw. This draws the same marks and labels (the axis's own
    size, width, pad and font), positioned in data coordinates, for a fraction of that. The
    axis's own ticks are removed; pin the axis label (:func:`pin_axis_labels`) first, while
    the real ticks are there to make room for, since the axis no longer knows about these.
    Ticks outside the axis's view limits are not drawn.
    """

    def __init__(self, ax: Any, which: str = "x", side: str | None = None,
                 fontsize: float | None = None) -> None:
        import matplotlib as mpl
        from matplotlib import markers
        from matplotlib.lines import Line2D
        from matplotlib.markers import MarkerStyle
        from matplotlib.ticker import NullLocator
        from matplotlib.transforms import ScaledTranslation

        self.ax, self.which = ax, which
        axis = ax.xaxis if which == "x" else ax.yaxis
        side = side or ("bottom" if which == "x" else
                        ("right" if axis.get_label_position() == "right" else "left"))
        figure = ax.get_figure(root=True)
        prefix = "xtick" if which == "x" else "ytick"
        rc = cast(dict[str, Any], mpl.rcParams)  # (typed with literal keys only)
        size = float(rc[f"{prefix}.major.size"])
        pad = float(rc[f"{prefix}.major.pad"])
        label = axis.get_majorticklabels()[0] if axis.get_majorticklabels() else None
        if fontsize is None:
            fontsize = label.get_fontsize() if label is not None else \
                rc[f"{prefix}.labelsize"]
        colour = rc[f"{prefix}.labelcolor"]
        colour = rc[f"{prefix}.color"] if colour == "inherit" else colour
        axis.set_major_locator(_fixed([]))
        axis.set_minor_locator(NullLocator())
        base = ax.get_xaxis_transform() if which == "x" else ax.get_yaxis_transform()
        offset = (size + pad) / 72
        if which == "x":
            at, marker = (0.0 if side == "bottom" else 1.0), \
                (markers.TICKDOWN if side == "bottom" else markers.TICKUP)
            shift = ScaledTranslation(0, -offset if side == "bottom" else offset,
                                      figure.dpi_scale_trans)
            align = {"ha": "center", "va": "top" if side == "bottom" else "bottom"}
        else:
            at, marker = (0.0 if side == "left" else 1.0), \
                (markers.TICKLEFT if side == "left" else markers.TICKRIGHT)
            shift = ScaledTranslation(-offset if side == "left" else offset, 0,
                                      figure.dpi_scale_trans)
            align = {"ha": "right" if side == "left" else "left", "va": "center_baseline"}
        self._at, self._base = at, base
        self._text_transform = base + shift
        self._text_style = {"fontsize": fontsize, "color": colour, **align}
        self._text_class = FastText
        self.marks = Line2D([], [], linestyle="none", marker=MarkerStyle(marker),
                            markersize=size, markeredgewidth=float(rc[f"{prefix}.major.width"]),
                            color=rc[f"{prefix}.color"], transform=base, clip_on=False)
        # On the figure, not the axes: an axes' own lines would count in its autoscaling.
        figure.add_artist(self.marks)
        self.texts: list[Any] = []
        self._figure = figure
        self._shown: tuple = ()

    def set(self, positions: Sequence[float], labels: Sequence[str]) -> None:
        """Draw ticks at ``positions`` (data coordinates) labelled ``labels``; those outside the
        view limits at draw time are left out here, so call it after setting the limits."""
        low, high = sorted(self.ax.get_xlim() if self.which == "x" else self.ax.get_ylim())
        span = (high - low) * 1e-9
        kept = [(p, t) for p, t in zip(positions, labels) if low - span <= p <= high + span]
        if tuple(kept) == self._shown:
            return
        self._shown = tuple(kept)
        where = [p for p, _ in kept]
        fixed = [self._at] * len(kept)
        if self.which == "x":
            self.marks.set_data(where, fixed)
        else:
            self.marks.set_data(fixed, where)
        while len(self.texts) < len(kept):
            text = self._text_class(0, 0, "", transform=self._text_transform, clip_on=False,
                                    **self._text_style)
            self._figure.add_artist(text)
            self.texts.append(text)
        for text, (p, label) in zip(self.texts, kept):
            text.set_position((p, self._at) if self.which == "x" else (self._at, p))
            text.set_text(label)
            text.set_visible(True)
        for text in self.texts[len(kept):]:
            text.set_visible(False)


def _fixed(values: list[float]) -> Any:
    from matplotlib.ticker import FixedLocator

    return FixedLocator(values)


def key_row(figure: Figure, entries: Sequence[tuple[str, ...]], x: float, y: float,
            fontsize: float = 8, gap_points: float = 12, ha: str = "center") -> list[Any]:
    """A one-row colour key centred at ``(x, y)`` in figure coordinates (starting there with
    ``ha="left"``, ending there with ``ha="right"``): per entry
    ``(label, colour)`` ("■ label", the square in the colour) or ``(label, colour, glyph)`` (a
    glyph such as "━" or "●" instead of the square). A legend's picture, as a few texts placed
    once (a legend re-packs its boxes on every draw)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    texts = []
    for entry in entries:
        label, colour = entry[0], entry[1]
        glyph = entry[2] if len(entry) > 2 else "■"
        square = figure.text(0, y, glyph, color=colour, fontsize=fontsize, va="center")
        text = figure.text(0, y, " " + label, color="#212121", fontsize=fontsize, va="center")
        square.__class__ = text.__class__ = FastText
        texts.append((square, text))
    renderer = FigureCanvasAgg(figure).get_renderer()
    width_px = figure.bbox.width
    gap = gap_points / 72 * figure.dpi / width_px
    widths = [(s.get_window_extent(renderer).width / width_px,
               t.get_window_extent(renderer).width / width_px) for s, t in texts]
    total = sum(a + b for a, b in widths) + gap * (len(texts) - 1)
    left = {"center": x - total / 2, "left": x, "right": x - total}[ha]
    for (square, text), (a, b) in zip(texts, widths):
        square.set_x(left)
        text.set_x(left + a)
        left += a + b + gap
    return [artist for pair in texts for artist in pair]


class LocatedTicks(Ticks):
    """:class:`Ticks` whose places a matplotlib locator picks from the current view limits and
    whose labels ``format`` writes: call :meth:`update` after each change of the limits (the
    same ticks the axis itself would draw with that locator and formatter)."""

    def __init__(self, ax: Any, which: str, locator: Any, format: Any,
                 side: str | None = None, fontsize: float | None = None) -> None:
        super().__init__(ax, which, side, fontsize)
        self.locator, self.format = locator, format

    def update(self) -> None:
        low, high = sorted(self.ax.get_xlim() if self.which == "x" else self.ax.get_ylim())
        values = [float(v) for v in self.locator.tick_values(low, high)]
        self.set(values, [self.format(v) for v in values])


def room_for(ax: Any, which: str, widest: str) -> None:
    """Give the axis one tick labelled ``widest`` (the widest label it will show), so that
    :func:`pin_axis_labels` leaves room for any of its later labels."""
    low, high = ax.get_xlim() if which == "x" else ax.get_ylim()
    middle = (low * high) ** 0.5 if low > 0 and high > 0 else (low + high) / 2
    (ax.set_xticks if which == "x" else ax.set_yticks)([middle], [widest])


# -- text laid out once -------------------------------------------------------------------------

_LAYOUTS: dict[tuple, Any] = {}
_MAX_LAYOUTS = 4096


def _layout_key(text: Any, renderer: Any) -> tuple | None:
    if text.get_wrap() or text.get_usetex():
        return None
    font = text.get_fontproperties()
    return (type(renderer).__name__, text.get_figure(root=True).dpi, text.get_text(),
            tuple(font.get_family()), font.get_style(), font.get_variant(), font.get_weight(),
            font.get_stretch(), font.get_size_in_points(), font.get_file(),
            font.get_math_fontfamily(), text.get_rotation(), text.get_rotation_mode(),
            text.get_horizontalalignment(), text.get_verticalalignment(),
            text._get_multialignment(), text._linespacing, text.get_parse_math())


def _make_fast_text_class() -> type:
    from matplotlib.text import Text

    class FastText(Text):
        """A :class:`matplotlib.text.Text` that lays its text out once per look (string, font,
        size, alignment, rotation, dpi, kind of renderer) instead of on every draw.

        matplotlib keys its own text-metrics cache on the renderer object, and a widget's
        every SVG render makes a new renderer, so each text was measured again (the font set
        to its size, the string's glyphs loaded) on every draw: about a millisecond a text.
        The layout does not depend on where the text sits, so the result is the same."""

        def _get_layout(self, renderer: Any) -> Any:
            key = _layout_key(self, renderer)
            # (matplotlib's type stubs omit its private _get_layout: looked up by name)
            layout = getattr(Text, "_get_layout")
            if key is None:
                return layout(self, renderer)
            found = _LAYOUTS.get(key)
            if found is None:
                if len(_LAYOUTS) >= _MAX_LAYOUTS:
                    _LAYOUTS.clear()
                found = _LAYOUTS[key] = layout(self, renderer)
            return found

    return FastText


FastText = _make_fast_text_class()


def fast_texts(figure: Figure) -> None:
    """Make every text now in ``figure`` (titles, axis labels, texts and legends' texts; not
    matplotlib's own tick labels, which it remakes) a :class:`FastText`: laid out once per
    look rather than on every draw."""
    from matplotlib.text import Text

    for artist in figure.findobj(lambda a: type(a) is Text):
        artist.__class__ = FastText
