"""The one pattern every widget follows: controls in, library call, picture and text out.

A widget here is an :class:`Explorer`: a dict of ipywidgets controls, a ``render`` function that
receives the controls' current values and returns a :class:`View` (a matplotlib figure and/or an
HTML summary, plus the library result it drew), and the glue that re-renders whenever a control
changes. Tests drive it without a kernel: set ``explorer.controls["M"].value = 256`` and read
``explorer.view.text`` or ``explorer.view.result``.

Figures are drawn with matplotlib's object API (no pyplot state) and shown in an
``ipywidgets.Image``, so the same picture appears in JupyterLab, on Binder and in a browser test
without any extra front-end extension. A figure of lines, bars and text is sent as SVG with its
text kept as text: the browser draws it at the screen's own resolution, so it is sharp on a
high-dpi laptop, and writing SVG skips rasterising glyphs, the costliest part of a redraw. A
figure that holds figure-level pixel images (none of the course's does now) is sent as PNG at
the figure's own dpi, shown at :data:`DPI` CSS pixels per inch: one made with
``new_figure(..., dpi=2 * DPI)`` is then sharp at 2× device pixels, at four times the pixels.
"""

from __future__ import annotations

import contextlib
import functools
import io
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import ipywidgets as W
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D

#: Dots per inch of a widget figure's layout (its size on screen: 1 inch = DPI CSS pixels).
DPI = 80


@dataclass
class View:
    """What a render produced: a figure (optional), an HTML summary, and the library result."""

    figure: Figure | None = None
    text: str = ""
    result: Any = None
    extras: dict[str, Any] = field(default_factory=dict)


def new_figure(width: float = 7.0, height: float = 3.6, *,
               layout: Literal["constrained", "compressed", "tight"] | None = None,
               margins: dict[str, float] | None = None, dpi: float = DPI) -> Figure:
    """A figure not managed by pyplot (no global state, no memory growth across renders).

    By default the margins are fixed (``subplots_adjust``) rather than computed by a layout
    engine: constrained layout costs an extra full draw, about half a widget's render budget.
    Pass ``layout="constrained"`` for a multi-panel figure whose labels need it, or ``margins``
    (keys of ``subplots_adjust``: left, right, bottom, top, wspace, hspace) to tune. ``dpi``
    sets the pixel density of a PNG-sent figure (see :func:`figure_image`); its on-screen size
    is always ``width`` × ``height`` inches at :data:`DPI`.
    """
    figure = Figure(figsize=(width, height), dpi=dpi, layout=layout)
    if layout is None:
        figure.subplots_adjust(**{**_MARGINS, **(margins or {})})
    return figure


# --------------------------------------------------------------------------------------------
# One colour code for the two kinds of chip, used by every widget (and keyed on each figure)
# --------------------------------------------------------------------------------------------

#: TPUs are blue and GPUs green in every widget; several chips of one kind get shades of it.
TPU_COLOUR, GPU_COLOUR = "#1565c0", "#2e7d32"
_SHADES = {"tpu": ("#1565c0", "#0d47a1", "#42a5f5", "#1e88e5", "#01579b", "#64b5f6", "#283593"),
           "gpu": ("#2e7d32", "#1b5e20", "#66bb6a", "#43a047", "#33691e", "#9ccc65", "#004d40")}
#: An HTML key of the code, for a widget's text.
VENDOR_KEY_HTML = (f"<span style='color:{TPU_COLOUR}'>■ TPU</span> "
                   f"<span style='color:{GPU_COLOUR}'>■ GPU</span>")


def vendor_colour(chip: Any, shade: int = 0) -> str:
    """The colour of a chip (a :class:`accelkit.chips.Chip`, or its name): blue for a TPU,
    green for a GPU; ``shade`` picks a distinguishable variant when several of a kind share
    a figure."""
    if isinstance(chip, str):
        from accelkit import chips

        chip = chips.get(chip)
    kind = getattr(chip, "kind", None)
    if kind not in _SHADES:
        raise ValueError(f"chip kind must be 'tpu' or 'gpu', got {kind!r}")
    shades = _SHADES[kind]
    return shades[shade % len(shades)]


def vendor_key(figure: Figure, x: float = 0.99, y: float = 0.99,
               ha: Literal["left", "right"] = "right") -> list[Artist]:
    """Put the TPU / GPU colour key on ``figure`` (top right by default, figure coordinates)."""
    tpu = figure.text(x, y, "■ TPU", color=TPU_COLOUR, ha=ha, va="top", fontsize=8,
                      fontweight="bold")
    gpu = figure.text(x, y - 0.055, "■ GPU", color=GPU_COLOUR, ha=ha, va="top",
                      fontsize=8, fontweight="bold")
    return [tpu, gpu]


_MARGINS = {"left": 0.1, "right": 0.97, "bottom": 0.17, "top": 0.88, "wspace": 0.3, "hspace": 0.45}


_IMAGE_CACHE: "weakref.WeakKeyDictionary[Figure, tuple[str, bytes]]" = weakref.WeakKeyDictionary()


def figure_image(figure: Figure) -> tuple[str, bytes]:
    """``(format, bytes)`` of the figure, for an ``ipywidgets.Image``: ``("svg+xml", ...)`` or
    ``("png", ...)``: SVG unless the figure holds figure-level pixel images (``figimage``).

    A figure unchanged since its last encoding (no artist touched: matplotlib's ``stale`` flag
    is clear) is not drawn again: its bytes are reused, so a widget that switches between
    figures drawn once (one per precision, say) only swaps images.
    """
    cached = _IMAGE_CACHE.get(figure)
    if cached is not None and not figure.stale:
        return cached
    if not figure.images:
        result = ("svg+xml", _svg(figure))
    else:
        result = ("png", figure_png(figure))
    if not figure.stale:
        _IMAGE_CACHE[figure] = result
    return result


@functools.lru_cache(maxsize=8192)
def _text_metrics(text: str, font: Any, ismath: Any) -> tuple[float, float, float]:
    from matplotlib.textpath import text_to_path

    return text_to_path.get_text_width_height_descent(text, font, ismath)


@contextlib.contextmanager
def _text_measured_once() -> Iterator[None]:
    """While it lasts, SVG renderers measure each (text, font, size) once across renders.

    matplotlib caches text measurements per renderer object, and every SVG print makes a new
    renderer, so every label of a widget would be measured again on every render. The SVG
    renderer measures with ``text_to_path``, a pure function of text, font and size, which is
    what this cache calls: the numbers, and so the SVG, are the same."""
    from matplotlib.backends.backend_svg import RendererSVG

    name = "get_text_width_height_descent"
    own = RendererSVG.__dict__.get(name)
    setattr(RendererSVG, name,
            lambda self, text, font, ismath: _text_metrics(text, font.copy(), ismath))
    try:
        yield
    finally:
        if own is None:
            delattr(RendererSVG, name)
        else:
            setattr(RendererSVG, name, own)


def _svg(figure: Figure) -> bytes:
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buffer = io.BytesIO()
    # Text as <text> elements (not glyph paths), no date stamp, fixed ids: small, fast and the
    # same bytes for the same picture (the browser tests compare hashes of what is shown).
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "accelkit"}), \
            _text_measured_once():
        FigureCanvasSVG(figure).print_svg(buffer, metadata={"Date": None})
    return buffer.getvalue()


def figure_png(figure: Figure) -> bytes:
    """Draw with Agg at the figure's dpi and encode as PNG (fast zlib level: these images are
    small and short-lived)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    # Reuse the figure's Agg canvas: its renderer persists between draws, and matplotlib caches
    # text layout per renderer, so a widget's unchanged labels are not laid out again.
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()
    image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    buffer = io.BytesIO()
    image.save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


def legend_lines(legend: Legend) -> list[Line2D]:
    """The keys of a legend of plotted lines, in order (matplotlib types them as any artist)."""
    keys = []
    for key in legend.legend_handles:
        if not isinstance(key, Line2D):
            raise TypeError(f"legend key {key!r} is not a line")
        keys.append(key)
    return keys


class Explorer:
    """Controls plus a render function, wired together.

    Args:
        controls: name -> ipywidgets control; the render function receives ``{name: value}``.
        render: ``values -> View``. It must only call the library and draw.
        title: a short heading shown above the controls.
        columns: lay controls out in this many columns.
    """

    def __init__(self, controls: Mapping[str, W.Widget], render: Callable[[dict[str, Any]], View],
                 title: str = "", columns: int = 2):
        self.controls = dict(controls)
        self._render = render
        self.title = title
        self.image = W.Image(format="png", layout=W.Layout(max_width="100%"))
        self.html = W.HTML()
        self.view = View()
        self.last_seconds = 0.0
        self.renders = 0
        self._held = 0
        rows = [W.HBox(list(self.controls.values())[i:i + columns])
                for i in range(0, len(self.controls), columns)]
        header = [W.HTML(f"<b>{title}</b>")] if title else []
        self.widget = W.VBox(header + rows + [self.html, self.image])
        for control in self.controls.values():
            if hasattr(control, "value"):
                control.observe(self._changed, names="value")
        self.update()

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()
                if hasattr(control, "value")}

    def _changed(self, _change: dict) -> None:
        if not self._held:
            self.update()

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Change controls without a render per change (e.g. resizing a slider's range, whose
        clamped value would otherwise trigger a render in the middle of one)."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1

    def update(self) -> View:
        """The callback: read the controls, call the library through ``render``, redraw."""
        started = time.perf_counter()
        try:
            view = self._render(self.values())
        except (ValueError, TypeError) as error:
            # A combination the library refuses: say why, in the widget, instead of a traceback.
            view = View(text=f"<span style='color:#b00020'>⚠ {error}</span>")
        self.view = view
        self.html.value = view.text
        if view.figure is not None:
            kind, data = figure_image(view.figure)
            width = f"{view.figure.get_figwidth() * DPI:.0f}px"
            with self.image.hold_sync():
                self.image.format = kind
                self.image.value = data
                self.image.width = width
            self.image.layout.display = None
        else:
            self.image.layout.display = "none"
        self.last_seconds = time.perf_counter() - started
        self.renders += 1
        return view

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def table_html(rows: list[tuple[str, str]], caption: str = "") -> str:
    """A two-column HTML table: label, value."""
    body = "".join(
        f"<tr><td style='text-align:left;padding-right:1em'>{label}</td>"
        f"<td style='text-align:right'><b>{value}</b></td></tr>" for label, value in rows
    )
    cap = f"<caption style='text-align:left'>{caption}</caption>" if caption else ""
    return f"<table>{cap}{body}</table>"


def si(value: float, unit: str = "", digits: int = 3) -> str:
    """Format with an SI prefix: si(1.97e14, 'FLOP/s') -> '197 TFLOP/s'."""
    if value == 0:
        return f"0 {unit}".strip()
    prefixes = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""),
                (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]
    for scale, prefix in prefixes:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}".strip()
    return f"{value:.{digits}g} {unit}".strip()
