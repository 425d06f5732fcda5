"""Axes furniture drawn for less, on matplotlib's public API (presentation only, no numbers).

A widget's figure is kept alive and drawn again, whole, on every render
(:func:`accelkit.widgets._base.figure_image`). Much of that time goes on furniture that looks
the same from one render to the next: matplotlib draws each tick as a group of artists of its
own (two marks, two labels, a grid line) and measures every tick label once more to place the
axis label; a legend re-packs its boxes on every draw. On the course's 2-core machine a
log-log axes with nine ticks took about 12 ms a draw that way (plain ``print_svg``), and a
three-entry legend about 10 ms more. The helpers here draw the same picture with fewer
artists:

* :class:`Ticks`: an axis's tick marks as one marker line and its labels as one text each,
  in the axis's own sizes, pad, font and colours (about 7 ms for the same axes);
  :func:`fixed_ticks` makes them from the ticks matplotlib would draw, for fixed limits, and
  :func:`log_ticks` sets a log axis's fixed ticks to read from;
* :func:`pin_axis_labels`: axis labels fixed where matplotlib's automatic placement puts them
  (measured once, at build), so no draw re-measures the tick labels to place them;
* :func:`key_row` and :func:`key_column`: a legend's key as a few texts (and line or bar
  samples) placed once.

Everything else in a widget's figure is an ordinary matplotlib artist, changed through its
public setters. tests/test_widgets_axes.py checks the pictures against matplotlib's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, cast

import matplotlib as mpl
from matplotlib import markers
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.markers import MarkerStyle
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter, FixedLocator, Formatter, Locator, NullLocator
from matplotlib.transforms import ScaledTranslation

from accelkit.widgets._base import INK

__all__ = ["pin_axis_labels", "Ticks", "fixed_ticks", "log_ticks", "room_for", "key_row",
           "key_column"]

#: What a key's sample copies: a line, or a bar (a rectangle patch).
Sampled = TypeVar("Sampled", Line2D, Rectangle)


def _figure_of(ax: Axes) -> Figure:
    figure = ax.get_figure()
    if not isinstance(figure, Figure):
        raise ValueError("the axes must belong to a figure")
    return figure


def pin_axis_labels(*axes: Axes, which: str = "xy") -> None:
    """Fix the axis labels of ``axes`` (``which``: "x", "y" or both) where matplotlib's
    automatic placement puts them now, clear of the current tick labels.

    Call it with the axis's own ticks in place (a :class:`Ticks` does, before it replaces
    them): no later draw then measures the tick labels to place the axis labels. An x label
    depends only on the tick labels' height (one line of text), always the same; a y label
    depends on their width, so pin "y" only where the tick labels keep their width (fixed
    ticks, or :func:`room_for` the widest first). A label pinned already (placed in axes
    coordinates, as ``set_label_coords`` does) is left where it is.
    """
    if not axes:
        raise TypeError("pin_axis_labels needs at least one axes")
    _figure_of(axes[0]).draw_without_rendering()
    for ax in axes:
        to_axes = ax.transAxes.inverted()
        for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            label = axis.label
            if name not in which or not label.get_text() or label.get_transform() is ax.transAxes:
                continue
            x, y = label.get_position()
            # An automatic x label sits at (axes x, display y), a y label at (display x, axes y).
            if name == "x":
                y = float(to_axes.transform((0.0, y))[1])
            else:
                x = float(to_axes.transform((x, 0.0))[0])
            axis.set_label_coords(x, y)


def log_ticks(ax: Axes, which: Literal["x", "y"], ticks: Sequence[float],
              labels: Sequence[str] | None = None, base: float = 10) -> None:
    """A log scale on one axis with fixed major ticks labelled in plain text (``labels``, or
    each tick as ``f"{t:g}"``) and no minor ticks: matplotlib's automatic log locators and its
    mathtext labels (10^k) would cost more than the rest of a render. Follow with
    :func:`fixed_ticks` once the limits are set."""
    texts = list(labels) if labels is not None else [f"{t:g}" for t in ticks]
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=base)
    axis.set_major_locator(FixedLocator(list(ticks)))
    axis.set_major_formatter(FixedFormatter(texts))
    axis.set_minor_locator(NullLocator())


def room_for(ax: Axes, which: str, widest: str) -> None:
    """Give the axis one tick labelled ``widest`` (the widest label it will show), so that
    :func:`pin_axis_labels` leaves room for any of its later labels."""
    low, high = ax.get_xlim() if which == "x" else ax.get_ylim()
    middle = (low * high) ** 0.5 if low > 0 and high > 0 else (low + high) / 2
    (ax.set_xticks if which == "x" else ax.set_yticks)([middle], [widest])


class Ticks:
    """The major ticks of one axis as one marker line (the marks) and a text per label.

    The axis's own ticks are removed, its label first pinned where they put it
    (:func:`pin_axis_labels`; ``widest``: the widest label the axis will show, to make room
    for). Either give places and labels (:meth:`set`), or call :meth:`update` after each change
    of the limits: the places and labels of the axis's own locator and formatter (or those
    given). Ticks outside the view limits are not drawn.

    Args:
        ax, which: the axes and its axis ("x" or "y").
        side: "bottom"/"top" for x, "left"/"right" for y (default: where the axis's label is).
        fontsize: of the labels (default: the axis's tick labels' size).
        locator, format: what :meth:`update` uses: a matplotlib locator, and a matplotlib
            formatter or ``value -> str`` (default: the axis's own).
        grid: keyword arguments of a line collection (``{"alpha": 0.3}``): a grid line at
            each tick, as one collection under the data.
        widest: a label as wide as any this axis will show (pins a y label clear of it).
    """

    def __init__(self, ax: Axes, which: Literal["x", "y"] = "x", *, side: str | None = None,
                 fontsize: float | None = None, locator: Locator | None = None,
                 format: Callable[[float], str] | Formatter | None = None,
                 grid: dict[str, Any] | None = None, widest: str | None = None) -> None:
        if which not in ("x", "y"):
            raise ValueError(f"which must be 'x' or 'y', got {which!r}")
        self.ax, self.which = ax, which
        axis = ax.xaxis if which == "x" else ax.yaxis
        # By default update() places and labels ticks as the axis itself would have.
        self.locator = locator if locator is not None else axis.get_major_locator()
        self.format = format if format is not None else axis.get_major_formatter()
        if side is None:
            side = "bottom" if which == "x" else \
                ("right" if str(ax.yaxis.get_label_position()) == "right" else "left")
        sides = ("bottom", "top") if which == "x" else ("left", "right")
        if side not in sides:
            raise ValueError(f"side must be one of {sides} for the {which} axis, got {side!r}")
        figure = _figure_of(ax)
        rc = cast(dict[str, Any], mpl.rcParams)  # (typed with literal keys only)
        prefix = f"{which}tick"
        size, pad = float(rc[f"{prefix}.major.size"]), float(rc[f"{prefix}.major.pad"])
        if fontsize is None:
            labels = axis.get_majorticklabels()
            fontsize = float(labels[0].get_fontsize()) if labels else \
                FontProperties(size=rc[f"{prefix}.labelsize"]).get_size_in_points()
        colour = rc[f"{prefix}.labelcolor"]
        colour = rc[f"{prefix}.color"] if colour == "inherit" else colour
        if widest is not None:
            room_for(ax, which, widest)
        pin_axis_labels(ax, which=which)
        axis.set_major_locator(FixedLocator([]))
        axis.set_minor_locator(NullLocator())
        # Marks in (data, axes) coordinates: x along the axis, 0 or 1 across it.
        base = ax.get_xaxis_transform() if which == "x" else ax.get_yaxis_transform()
        offset = (size + pad) / 72  # inches from the spine to the label
        outward = side in ("bottom", "left")
        self._at = 0.0 if outward else 1.0
        self._style: dict[str, Any]
        if which == "x":
            marker = markers.TICKDOWN if outward else markers.TICKUP
            shift = ScaledTranslation(0, -offset if outward else offset, figure.dpi_scale_trans)
            self._style = {"ha": "center", "va": "top" if outward else "bottom"}
        else:
            marker = markers.TICKLEFT if outward else markers.TICKRIGHT
            shift = ScaledTranslation(-offset if outward else offset, 0, figure.dpi_scale_trans)
            self._style = {"ha": "right" if outward else "left", "va": "center_baseline"}
        self._style.update(fontsize=fontsize, color=colour)
        self._text_transform = base + shift
        self.marks = Line2D([], [], linestyle="none", marker=MarkerStyle(marker),
                            markersize=size, markeredgewidth=float(rc[f"{prefix}.major.width"]),
                            color=rc[f"{prefix}.color"], transform=base, clip_on=False)
        # On the figure, not the axes: an axes' own lines would count in its autoscaling.
        figure.add_artist(self.marks)
        self.grid: LineCollection | None = None
        if grid is not None:
            style = {"colors": rc["grid.color"], "linewidths": float(rc["grid.linewidth"]),
                     "linestyles": rc["grid.linestyle"], "zorder": 0.5, **grid}
            self.grid = LineCollection([], transform=base, **style)
            ax.add_collection(self.grid, autolim=False)
        self.texts: list[Text] = []
        self._figure = figure
        self._shown: tuple = ()

    def set(self, positions: Sequence[float], labels: Sequence[str]) -> None:
        """Draw ticks at ``positions`` (data coordinates) labelled ``labels``; those outside the
        view limits now are left out, so call it after setting the limits."""
        low, high = sorted(self.ax.get_xlim() if self.which == "x" else self.ax.get_ylim())
        span = (high - low) * 1e-9
        kept = tuple((float(p), str(t)) for p, t in zip(positions, labels)
                     if low - span <= p <= high + span)
        if kept == self._shown:
            return
        self._shown = kept
        where = [p for p, _ in kept]
        across = [self._at] * len(kept)
        if self.which == "x":
            self.marks.set_data(where, across)
            segments = [[(p, 0.0), (p, 1.0)] for p in where]
        else:
            self.marks.set_data(across, where)
            segments = [[(0.0, p), (1.0, p)] for p in where]
        if self.grid is not None:
            self.grid.set_segments(segments)
        while len(self.texts) < len(kept):
            text = Text(0, 0, "", transform=self._text_transform, clip_on=False, **self._style)
            self._figure.add_artist(text)
            self.texts.append(text)
        for text, (p, label) in zip(self.texts, kept):
            text.set_position((p, self._at) if self.which == "x" else (self._at, p))
            text.set_text(label)
            text.set_visible(True)
        for text in self.texts[len(kept):]:
            text.set_visible(False)

    def update(self) -> None:
        """Ticks where the locator puts them for the current view limits, labelled by
        ``format`` (by default the axis's own locator and formatter, as it had them when these
        ticks replaced its own)."""
        low, high = sorted(self.ax.get_xlim() if self.which == "x" else self.ax.get_ylim())
        values = [float(v) for v in self.locator.tick_values(low, high)]
        kept = [v for v in values if low - (high - low) * 1e-9 <= v <= high + (high - low) * 1e-9]
        if isinstance(self.format, Formatter):
            labels = self.format.format_ticks(kept)
        else:
            labels = [self.format(v) for v in kept]
        self.set(kept, labels)

    def labels(self) -> list[str]:
        """The labels drawn now, in order."""
        return [t.get_text() for t in self.texts if t.get_visible()]


def fixed_ticks(*axes: Axes, which: str = "xy",
                grid: dict[str, Any] | None = None) -> dict[tuple[Axes, str], Ticks]:
    """For axes whose limits no longer change: replace the named axes' ticks by
    :class:`Ticks` (their labels pinned) at the places and with the labels matplotlib draws now (read
    back from a draw, so the picture is the one the axis itself would draw); ``grid`` as
    :class:`Ticks` takes it."""
    if not axes:
        raise TypeError("fixed_ticks needs at least one axes")
    _figure_of(axes[0]).draw_without_rendering()
    drawn = {}
    for ax in axes:
        for name in which:
            axis = ax.xaxis if name == "x" else ax.yaxis
            low, high = sorted(axis.get_view_interval())
            ticks = [(float(t.get_loc()), _shown_label(t)) for t in axis.get_major_ticks()
                     if low <= t.get_loc() <= high]
            drawn[ax, name] = ticks
    made = {}
    for (ax, name), ticks in drawn.items():
        made[ax, name] = Ticks(ax, cast(Literal["x", "y"], name), grid=grid)
        made[ax, name].set([p for p, _ in ticks], [t for _, t in ticks])
    return made


def _shown_label(tick: Any) -> str:
    """The text of a tick's visible label (the left/bottom one, else the right/top one)."""
    for label in (tick.label1, tick.label2):
        if label.get_visible():
            return label.get_text()
    return ""


def key_row(figure: Figure, entries: Sequence[tuple[str, ...]], x: float, y: float,
            fontsize: float = 8, gap_points: float = 12,
            ha: Literal["center", "left", "right"] = "center") -> list[Text]:
    """A one-row colour key centred at ``(x, y)`` in figure coordinates (starting there with
    ``ha="left"``, ending there with ``ha="right"``): per entry ``(label, colour)`` ("■ label",
    the square in the colour) or ``(label, colour, glyph)`` (a glyph such as "━" or "●"
    instead of the square). A legend's picture, as texts measured and placed once.

    Returns the texts, glyph and label of each entry in turn."""
    texts = []
    for entry in entries:
        label, colour = entry[0], entry[1]
        glyph = entry[2] if len(entry) > 2 else "■"
        square = figure.text(0, y, glyph, color=colour, fontsize=fontsize, va="center")
        text = figure.text(0, y, " " + label, color=INK, fontsize=fontsize, va="center")
        texts.append((square, text))
    figure.draw_without_rendering()
    width = figure.bbox.width
    gap = gap_points / 72 * figure.dpi / width
    widths = [(s.get_window_extent().width / width, t.get_window_extent().width / width)
              for s, t in texts]
    total = sum(a + b for a, b in widths) + gap * (len(texts) - 1)
    left = {"center": x - total / 2, "left": x, "right": x - total}[ha]
    for (square, text), (a, b) in zip(texts, widths):
        square.set_x(left)
        text.set_x(left + a)
        left += a + b + gap
    return [artist for pair in texts for artist in pair]


def key_column(figure: Figure, entries: Sequence[tuple[str, Sampled]], x: float, y: float,
               fontsize: float = 8, title: str = "") -> list[tuple[Sampled, Text]]:
    """A legend's key as a column, its top left at ``(x, y)`` in figure coordinates, under an
    optional ``title``: per entry ``(label, artist)``, a sample of the artist (a line's colour,
    style, width and marker, or a bar's colours and hatch) and the label. What a legend
    draws, placed once in points from ``(x, y)`` (nothing to measure or re-pack per draw); the
    returned (sample, label) pairs can be restyled like the artists they copy."""
    from matplotlib.transforms import offset_copy

    pitch = 1.5 * fontsize  # points from one row's middle to the next
    sample = 2.0 * fontsize / (figure.get_figwidth() * 72)  # a sample's length, figure width
    top = 1.2 * fontsize * (title.count("\n") + 1) if title else 0.0
    if title:
        figure.text(x, y, title, fontsize=fontsize, va="top", ha="left")
    made: list[tuple[Any, Text]] = []
    for i, (label, artist) in enumerate(entries):
        row = offset_copy(figure.transFigure, figure, y=-(top + (i + 0.5) * pitch),
                          units="points")
        handle: Line2D | Rectangle
        if isinstance(artist, Line2D):
            # three points, the marker (if any) on the middle one, as a legend draws it
            handle = Line2D([x, x + sample / 2, x + sample], [y, y, y], transform=row,
                            color=artist.get_color(), linestyle=artist.get_linestyle(),
                            linewidth=artist.get_linewidth(), marker=artist.get_marker(),
                            markersize=artist.get_markersize(), markevery=[1])
        elif isinstance(artist, Rectangle):
            height = 0.7 * fontsize / (figure.get_figheight() * 72)
            handle = Rectangle((x, y - height / 2), sample, height, transform=row,
                               facecolor=artist.get_facecolor(), edgecolor=artist.get_edgecolor(),
                               hatch=artist.get_hatch(), linewidth=artist.get_linewidth())
        else:
            raise TypeError(f"a key entry's artist must be a line or a bar, got {artist!r}")
        figure.add_artist(handle)
        text = figure.text(x + sample * 1.25, y, label, color=INK, fontsize=fontsize,
                           va="center", transform=row)
        made.append((handle, text))
    return made
