"""The one pattern every widget follows: controls in, library call, picture and text out.

A widget here is an :class:`Explorer`: a dict of ipywidgets controls, a ``render`` function that
receives the controls' current values and returns a :class:`View` (a matplotlib figure and/or an
HTML summary, plus the library result it drew), and the glue that re-renders whenever a control
changes. Tests drive it without a kernel: set ``explorer.controls["M"].value = 256`` and read
``explorer.view.text`` or ``explorer.view.result``.

Figures are drawn with matplotlib's object API (no pyplot state), kept alive between renders
and changed through their artists' public setters (``set_data``, ``set_width``, ``set_text``),
then sent as SVG with text as text (:func:`figure_image`) into an ``ipywidgets.Image``: the
same picture appears in JupyterLab, on Binder and in a browser test without any front-end
extension, sharp at any screen density.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import ipywidgets as W
from matplotlib import rc_context
from matplotlib.artist import Artist
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.legend import Legend
from matplotlib.lines import Line2D

#: CSS pixels per inch of a widget figure on screen (an Image of ``width`` inches is shown
#: ``width × DPI`` pixels wide).
DPI = 80
#: The figures' own dpi: SVG is laid out in points, 72 to the inch (``print_svg`` draws at 72
#: dpi whatever the figure's dpi was; a figure made at 72 keeps one geometry throughout).
_LAYOUT_DPI = 72


@dataclass
class View:
    """What a render produced: a figure (optional), an HTML summary, and the library result."""

    figure: Figure | None = None
    text: str = ""
    result: Any = None
    extras: dict[str, Any] = field(default_factory=dict)


def new_figure(width: float = 7.0, height: float = 3.6, *,
               layout: Literal["constrained", "compressed", "tight"] | None = None,
               margins: dict[str, float] | None = None) -> Figure:
    """A figure not managed by pyplot (no global state, no memory growth across renders).

    By default the margins are fixed (``subplots_adjust``) rather than computed by a layout
    engine: constrained layout costs an extra full draw, about half a widget's render budget.
    Pass ``layout="constrained"`` for a multi-panel figure whose labels need it, or ``margins``
    (keys of ``subplots_adjust``: left, right, bottom, top, wspace, hspace) to tune. On screen
    it is ``width`` × ``height`` inches at :data:`DPI`.
    """
    figure = Figure(figsize=(width, height), dpi=_LAYOUT_DPI, layout=layout)
    if layout is None:
        figure.subplots_adjust(**{**_MARGINS, **(margins or {})})
    return figure


# --------------------------------------------------------------------------------------------
# One colour code for the two kinds of chip, used by every widget (and keyed on each figure)
# --------------------------------------------------------------------------------------------

#: TPUs are blue and GPUs green in every widget; several chips of one kind get shades of it.
#: Every TPU shade stays distinguishable from every GPU shade under simulated protanopia,
#: deuteranopia and tritanopia (tests/test_colours.py: at least 10 CIEDE2000 apart); two GPU
#: shades were moved by about 2-3 of those units for tritanopia (#66bb6a and #33691e were 9.6-9.8
#: from the light and the dark TPU blues).
TPU_COLOUR, GPU_COLOUR = "#1565c0", "#2e7d32"
_SHADES = {"tpu": ("#1565c0", "#0d47a1", "#42a5f5", "#1e88e5", "#01579b", "#64b5f6", "#283593"),
           "gpu": ("#2e7d32", "#1b5e20", "#6ebb62", "#43a047", "#436926", "#9ccc65", "#004d40")}
#: The learner's current choice, marked alike in every figure (its dot, cursor or curve).
CHOICE_COLOUR = "#e65100"
#: What does not fit, misses its target or went wrong, and the limits it is held to.
WARNING_COLOUR = "#b00020"
#: Dark text and reference lines.
INK = "#212121"
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


#: Text measurements kept across renders (see :func:`figure_image`): at most this many.
_TEXT_METRICS_KEPT = 4096
_TEXT_METRICS_CACHE: "OrderedDict[tuple[str, FontProperties, Any], tuple[float, float, float]]" = \
    OrderedDict()


class _SVGMeasuringOnce(RendererSVG):
    """matplotlib's SVG renderer, measuring each (text, font, math mode) once across renders.

    Why: matplotlib caches text measurements per renderer object, and each SVG draw makes
    a new renderer, so every label of a widget was measured again (the string laid out by
    FreeType) on every render, although most of them (ticks, axis labels, keys) never
    change: about 30% of the systolic animation's draw. A measurement is a pure function of
    the text, the font properties and the math mode (SVG is laid out in points, whatever the
    figure's dpi), so the answer is the one the renderer would give (TeX-set text is not kept).
    Bounded: the 4,096 most recently used are kept."""

    def get_text_width_height_descent(self, s: str, prop: FontProperties,
                                      ismath: Any) -> tuple[float, float, float]:
        if ismath == "TeX":  # (usetex: measured by TeX, under rcParams of its own; not kept)
            return super().get_text_width_height_descent(s, prop, ismath)
        key = (s, prop.copy(), ismath)  # (a copy: the text may change its font later)
        found = _TEXT_METRICS_CACHE.get(key)
        if found is None:
            found = super().get_text_width_height_descent(s, prop, ismath)
            _TEXT_METRICS_CACHE[key] = found
            if len(_TEXT_METRICS_CACHE) > _TEXT_METRICS_KEPT:
                _TEXT_METRICS_CACHE.popitem(last=False)
        else:
            _TEXT_METRICS_CACHE.move_to_end(key)
        return found


def figure_image(figure: Figure) -> tuple[str, bytes]:
    """``("svg+xml", bytes)``: the figure as SVG, for an ``ipywidgets.Image``.

    Vector SVG with its text kept as ``<text>`` elements (``svg.fonttype: none``): the browser
    draws lines and glyphs at the screen's own resolution, so the picture is sharp on a
    high-dpi screen, and no glyph is rasterised or turned into a path here. No date stamp and
    fixed ids (``svg.hashsalt``): the same picture gives the same bytes (the browser tests
    compare hashes of what is shown).

    Drawn as ``FigureCanvasSVG.print_svg`` draws, through public API only (the figure, at 72
    dpi, drawn by ``Figure.draw`` on a ``MixedModeRenderer`` around an SVG renderer, then
    ``finalize``), with one difference: the SVG renderer is a subclass that measures each text
    once across renders (see its docstring); tests/test_widgets_render.py checks that the
    bytes are ``print_svg``'s.

    Why SVG and not PNG at 2× density: on the course's machine (matplotlib 3.11, 2 cores) Agg
    at 2× draws a text in about twice the time SVG writes one, and encoding the 2× frame as
    PNG adds 9-14 ms a render (``benchmarks/bench_figure_formats.py``).
    """
    if figure.dpi != _LAYOUT_DPI:
        raise ValueError(f"figure.dpi must be {_LAYOUT_DPI} (SVG is laid out in points; make "
                         f"widget figures with new_figure), got {figure.dpi}")
    width, height = figure.get_size_inches()
    buffer = io.StringIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "accelkit"}):
        svg = _SVGMeasuringOnce(width * 72, height * 72, buffer, image_dpi=_LAYOUT_DPI,
                                metadata={"Date": None})
        renderer = MixedModeRenderer(figure, width, height, _LAYOUT_DPI, svg)
        figure.draw(cast(RendererBase, renderer))  # (it is one, by delegation)
        renderer.finalize()
    return "svg+xml", buffer.getvalue().encode("utf-8")


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
            view = View(text=f"<span style='color:{WARNING_COLOUR}'>⚠ {error}</span>")
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


# --------------------------------------------------------------------------------------------
# Labels and control styles shared by every widget
# --------------------------------------------------------------------------------------------

#: Every control's style: its description is shown whole, not cut to a fixed width.
STYLE = {"description_width": "initial"}


def chip_label(name: str, *, family: bool = True) -> str:
    """A chip's name short enough for a bar or a tick: 'NVIDIA H100 (SXM)' -> 'H100',
    'TPU v6e (Trillium)' -> 'TPU v6e', or 'v6e' with ``family=False`` (where the colour or a
    column already says TPU)."""
    short = name.replace("NVIDIA ", "").split(" (")[0]
    return short if family else short.replace("TPU ", "")


def compact_number(value: float, small: bool = False) -> str:
    """A narrow tick label: 30000 -> '30k', 2.5e15 -> '2.5P'; with ``small``, 0.000125 ->
    '125µ' too (below 0.01)."""
    for scale, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:g}{suffix}"
    if small and value and abs(value) < 0.01:
        for scale, suffix in ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n")):
            if abs(value) >= scale:
                return f"{value / scale:g}{suffix}"
    return f"{value:g}"
