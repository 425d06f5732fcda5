"""FrozenFigure: the SVG of a figure whose static part is cached holds the same picture as a
full draw (same texts, same dynamic artists), and the static part follows its key."""

from __future__ import annotations

import re

import numpy as np

from accelkit.widgets import _base
from accelkit.widgets._frozen import frozen_figure


def _texts(svg: bytes) -> list[str]:
    return sorted(re.findall(r"<text[^>]*>([^<]*)</text>", svg.decode("utf-8")))


def _full(figure) -> bytes:
    dynamic, figure._dynamic = figure._dynamic, []
    figure.stale = True
    try:
        return _base._svg(figure)
    finally:
        figure._dynamic = dynamic
        figure.stale = True


def _figure():
    figure = frozen_figure(5, 3)
    ax = figure.add_subplot()
    ax.plot([1, 2, 3], [1, 4, 9], label="static curve")
    (moving,) = ax.plot([1], [1], "o")
    ax.legend()
    title = ax.set_title("")
    figure.freeze([moving, title])
    return figure, ax, moving, title


def test_spliced_svg_holds_what_a_full_draw_holds():
    figure, ax, moving, title = _figure()
    for x in (1, 2, 3):
        moving.set_data([x], [x * x])
        title.set_text(f"at x = {x}")
        spliced = _base._svg(figure)
        assert _texts(spliced) == _texts(_full(figure))
        assert f"at x = {x}" in spliced.decode()
    # the dynamic title sits where a full draw puts it (above the axes, not moved away)
    full_y = re.search(r'y="([-\d.]+)"[^>]*>at x = 3<', _full(figure).decode()).group(1)
    spliced_y = re.search(r'y="([-\d.]+)"[^>]*>at x = 3<', _base._svg(figure).decode()).group(1)
    assert np.isclose(float(full_y), float(spliced_y))


def test_static_part_is_drawn_once_per_key():
    figure, ax, moving, title = _figure()
    _base._svg(figure)
    assert len(figure._statics) == 1
    first = figure.static_svg()
    moving.set_data([2], [4])
    _base._svg(figure)
    assert figure.static_svg() is first and len(figure._statics) == 1
    ax.set_ylim(0, 20)  # the default key is every axes' limits: new ticks, new static part
    svg = _base._svg(figure)
    assert len(figure._statics) == 2 and ">20<" in svg.decode()


def test_png_draws_the_whole_figure():
    figure, ax, moving, title = _figure()
    title.set_text("t")
    png = _base.figure_png(figure)
    assert png.startswith(b"\x89PNG")
    assert all(artist.get_visible() for artist in (moving, title)) and title.get_text() == "t"


def test_text_block_writes_each_line_as_text_and_draws_in_png():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from accelkit.widgets._frozen import TextBlock

    figure = frozen_figure(3, 3)
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 2)
    ax.set_ylim(0, 2)
    block = TextBlock(ax.transData, 12)
    ax.add_artist(block)
    figure.freeze([block])
    block.set_items([(0.5, 0.5, "a<1\nb"), (1.5, 1.5, "c")])
    svg = _base._svg(figure).decode()
    assert ">a&lt;1<" in svg and ">b<" in svg and ">c<" in svg
    # the PNG path draws the same labels as matplotlib texts: dark pixels near (1.5, 1.5)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[..., :3]
    x, y = ax.transData.transform((1.5, 1.5))
    row = pixels.shape[0] - int(y)
    assert pixels[row - 10:row + 10, int(x) - 10:int(x) + 10].min() < 100
    try:
        TextBlock(ax.transData, 12, ha="left")
    except ValueError as error:
        assert "ha must be" in str(error)
    else:
        raise AssertionError("ha='left' was accepted")


def test_lesson_00_to_04_figures_are_sent_as_svg():
    """Sharp on a high-dpi screen. Every figure of lessons 00-04 is vector
    SVG (no pixel images but the utilization map, whose cells are drawn unresampled with
    pixelated scaling, and its colour bar), after a control moves as well as at first."""
    from accelkit import widgets

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
        if name == "utilization_map":
            assert "image-rendering:pixelated" in svg
