"""How a widget's figure reaches the screen: vector SVG with text kept as text (sharp on a
high-dpi screen), the same bytes for the same picture, drawn through matplotlib's public API
only (no private names, no class swaps, no patched methods)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from matplotlib.text import Text

from accelkit import widgets
from accelkit.widgets import _base
from accelkit.widgets._base import figure_image, new_figure

WIDGETS = Path(_base.__file__).parent


def test_a_figure_is_sent_as_svg_with_its_text_as_text_and_the_same_bytes_each_time():
    figure = new_figure(4, 2)
    ax = figure.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set_title("a <title> & more")
    kind, data = figure_image(figure)
    svg = data.decode("utf-8")
    assert kind == "svg+xml" and svg.lstrip().startswith("<?xml")
    assert ">a &lt;title&gt; &amp; more<" in svg  # a <text> element, escaped, not glyph paths
    assert 'width="288pt"' in svg and 'height="144pt"' in svg  # 4 × 2 inches
    assert figure_image(figure)[1] == data  # no date stamp, fixed ids
    assert figure.dpi == 72  # drawing leaves the figure's geometry as it was
    ax.set_title("changed")
    assert figure_image(figure)[1] != data


def _print_svg(figure) -> bytes:
    """The figure as matplotlib's own SVG canvas writes it, with the widgets' settings."""
    import io

    from matplotlib import rc_context
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buffer = io.BytesIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "accelkit"}):
        FigureCanvasSVG(figure).print_svg(buffer, metadata={"Date": None})
    return buffer.getvalue()


def test_the_bytes_sent_are_the_ones_matplotlibs_svg_canvas_writes():
    # figure_image draws as print_svg does, with text measurements kept across renders: the
    # same bytes, first draw and later, after texts change, with images (the heat map)
    for name, control, value in (("first_widget", "size", 4),
                                 ("systolic_animation", "cycle", 5),
                                 ("utilization_map", "N", 200),
                                 ("roofline_explorer", "dtype", "fp8"),
                                 ("decision_explorer", "metric", "time (days)")):
        explorer = getattr(widgets, name)()
        figure = explorer.view.figure
        assert bytes(explorer.image.value) == _print_svg(figure), name
        explorer.controls[control].value = value
        assert bytes(explorer.image.value) == _print_svg(figure), name
        assert figure_image(figure)[1] == _print_svg(figure), name  # measured once, reused


def test_a_figure_not_at_the_layout_dpi_is_refused():
    import pytest
    from matplotlib.figure import Figure

    with pytest.raises(ValueError, match="dpi"):
        figure_image(Figure(dpi=100))


def test_lesson_00_to_04_figures_are_sent_as_svg():
    """Sharp on a high-dpi screen. Every figure of lessons 00-04 is vector
    SVG (no pixel images but the utilization map, whose cells are drawn unresampled with
    pixelated scaling), after a control moves as well as at first, with its text as text."""
    moves = {"first_widget": ("size", 128), "where_flops_go": ("phase", "decode"),
             "all_models_share": ("batch", 64), "warp_lab": ("lanes", 16),
             "divergence_lab": ("lanes", 8), "tensor_core_lab": ("size", 256),
             "systolic_animation": ("M", 3), "reuse_comparison": ("side", 8),
             "fold_explorer": ("side", 16), "utilization_map": ("side", 64),
             "tile_comparison": ("M", 64)}
    for name, (control, value) in moves.items():
        explorer = getattr(widgets, name)()
        assert explorer.image.format == "svg+xml", name
        explorer.controls[control].value = value
        assert explorer.image.format == "svg+xml" and not explorer.view.figure.images, name
        svg = bytes(explorer.image.value).decode("utf-8")
        assert "<text" in svg, name  # text kept as text
        # every line of every visible text of the figure is in the picture sent
        figure = explorer.view.figure
        texts = [*figure.texts, *(a for a in figure.artists if isinstance(a, Text))] + [
            t for ax in figure.axes for t in (*ax.texts, ax.title, ax.xaxis.label,
                                              ax.yaxis.label)]
        for text in texts:
            for words in text.get_text().split("\n") if text.get_visible() else []:
                if words and "$" not in words:
                    escaped = words.replace("&", "&amp;").replace("<", "&lt;").replace(">",
                                                                                        "&gt;")
                    assert f">{escaped}<" in svg, (name, words)
        if name == "utilization_map":
            assert "image-rendering:pixelated" in svg


def test_every_shown_width_is_the_figure_at_the_screen_density():
    explorer = widgets.first_widget()
    figure = explorer.view.figure
    assert explorer.image.width == f"{figure.get_figwidth() * _base.DPI:.0f}px"


def _own_names_only(path: Path) -> list[str]:
    """Uses of private names (a single leading underscore) on anything but ``self`` or
    ``super()`` (as attributes or looked up by name, which name-mangled ones would be),
    assignments to ``__class__``, ``setattr`` and private modules of other libraries, in one
    widget module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and re.match(r"_[a-z]", node.attr):
            owner = node.value
            own = (isinstance(owner, ast.Name) and owner.id == "self") or (
                isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
                and owner.func.id == "super")
            if not own:
                found.append(f"{path.name}:{node.lineno}: .{node.attr}")
        if isinstance(node, ast.Attribute) and node.attr == "__class__" and \
                isinstance(node.ctx, ast.Store):
            found.append(f"{path.name}:{node.lineno}: __class__ assigned")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("setattr", "delattr"):
            found.append(f"{path.name}:{node.lineno}: {node.func.id}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("getattr", "hasattr") and len(node.args) > 1 and \
                isinstance(node.args[1], ast.Constant) and \
                re.match(r"_[a-zA-Z]", str(node.args[1].value)):
            found.append(f"{path.name}:{node.lineno}: {node.func.id} {node.args[1].value}")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [module] if module else [alias.name for alias in node.names]
            for name in names:
                parts = (name or "").split(".")
                if parts[0] != "accelkit" and any(re.match(r"_[a-z]", p) for p in parts):
                    found.append(f"{path.name}:{node.lineno}: import {name}")
            if isinstance(node, ast.ImportFrom) and (module or "").split(".")[0] != "accelkit":
                found += [f"{path.name}:{node.lineno}: import {alias.name}"
                          for alias in node.names if re.match(r"_[a-z]", alias.name)]
    return found


def test_widgets_use_only_public_names_of_other_libraries():
    offenders = [hit for path in sorted(WIDGETS.glob("*.py")) for hit in _own_names_only(path)]
    assert not offenders, offenders


def test_the_public_names_check_catches_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from matplotlib._api import check\n"
                      "def f(text, self):\n"
                      "    text._get_layout(None)\n"
                      "    text.__class__ = object\n"
                      "    setattr(text, 'x', 1)\n"
                      "    getattr(text, '_XMLWriter__write')\n"
                      "    self._mine = 1\n", encoding="utf-8")
    found = sorted(hit.split(": ", 1)[1] for hit in _own_names_only(sample))
    assert found == sorted(["import matplotlib._api", "._get_layout", "__class__ assigned",
                            "setattr", "getattr _XMLWriter__write"])
