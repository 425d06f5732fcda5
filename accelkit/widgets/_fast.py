"""Drawing shortcuts for the widgets of lessons 05-09 (presentation only, no numbers).

Two costs dominate a widget's redraw, and both are paid again on every render although the
picture they make does not change:

* an axis label placed automatically is moved clear of the tick labels on every draw, which
  lays out every tick label's text once more (about a third of a small figure's SVG time);
  :func:`pin_axis_labels` measures the place once and fixes it there;
* a frozen background (:func:`accelkit.widgets._base.freeze_background`) is pasted back through
  matplotlib's general image path, which resamples and masks the whole bitmap each draw (most
  of a render at twice the pixels); :func:`freeze_background_hidpi` keeps the same picture at
  twice the pixel density, for a sharp image on a high-dpi (2×) screen, and pastes its pixels
  straight onto the canvas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.image import FigureImage
from matplotlib.transforms import IdentityTransform

__all__ = ["pin_axis_labels", "freeze_background_hidpi"]


def pin_axis_labels(figure: Figure) -> None:
    """Fix every axis label of ``figure`` where matplotlib's automatic placement puts it now.

    Call it once the ticks are set: a later draw then skips re-measuring the tick labels to
    place the axis labels. Tick labels that later grow wider than now would not push the label
    out, so use it on axes whose tick labels keep their size (fixed ticks, or similar ones).
    """
    figure.draw_without_rendering()
    for ax in figure.axes:
        to_axes = ax.transAxes.inverted()
        for axis, horizontal in ((ax.xaxis, True), (ax.yaxis, False)):
            label = axis.label
            if not label.get_text():
                continue
            x, y = label.get_position()
            # An automatic x label sits at (axes x, display y), a y label at (display x, axes y).
            if horizontal:
                y = float(to_axes.transform((0.0, y))[1])
            else:
                x = float(to_axes.transform((x, 0.0))[0])
            axis.set_label_coords(x, y)


class _Pixels(FigureImage):
    """A figure-sized RGBA bitmap drawn as is: no resampling, no colour mapping, no mask."""

    def __init__(self, figure: Figure, pixels: np.ndarray) -> None:
        super().__init__(figure, origin="upper", zorder=-10)
        self._pixels = pixels  # rows from the bottom of the figure up, as Agg expects
        self.set_array(pixels[::-1])

    def make_image(self, renderer: Any, magnification: float = 1.0,
                   unsampled: bool = False) -> tuple[np.ndarray, float, float, IdentityTransform]:
        if renderer.dpi != self.get_figure(root=True).dpi or magnification != 1.0:
            # drawn at another resolution (a save at another dpi): the general path is correct
            return super().make_image(renderer, magnification, unsampled)
        return self._pixels, 0.0, 0.0, IdentityTransform()


def freeze_background_hidpi(figure: Figure, dynamic: Sequence[Artist]) -> FigureImage:
    """As :func:`accelkit.widgets._base.freeze_background` (everything but ``dynamic`` drawn once
    and kept as pixels; the widget is then sent as PNG), with two differences: the figure's dpi
    is doubled first, so the PNG has two device pixels per CSS pixel and stays sharp on a
    high-dpi screen at the same on-screen size, and the kept pixels are pasted straight back on
    each draw instead of going through matplotlib's image resampling."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from accelkit.widgets._base import DPI

    figure.set_dpi(2 * DPI)
    canvas = FigureCanvasAgg(figure)
    for artist in dynamic:
        artist.set_visible(False)
    canvas.draw()
    background = np.asarray(canvas.buffer_rgba()).copy()
    keep = {id(artist) for artist in dynamic}
    for owner in [figure, *figure.axes]:
        for artist in owner.get_children():
            if id(artist) not in keep and artist is not figure.patch \
                    and artist not in figure.axes:
                artist.set_visible(False)
    for ax in figure.axes:
        ax.set_axis_off()
    for artist in dynamic:
        artist.set_visible(True)
    image = _Pixels(figure, background[::-1].copy())
    image.stale_callback = _stale_figure
    figure.images.append(image)
    figure.stale = True
    return image


def _stale_figure(artist: Artist, value: bool) -> None:
    figure = artist.get_figure(root=False)
    if value and figure is not None:
        figure.stale = value
