"""The drawing shortcuts of accelkit/widgets/_fast.py draw the picture matplotlib would draw."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from accelkit.widgets._base import _svg, new_figure
from accelkit.widgets._fast import (FastText, LocatedTicks, Ticks, fast_texts, key_row,
                                    pin_axis_labels, room_for)


def _figure():
    figure = new_figure(5, 3)
    ax = figure.add_subplot()
    ax.plot([1, 10, 100], [3, 30, 300])
    ax.set_title("a title")
    ax.set_xlabel("an x label")
    ax.set_ylabel("a y label")
    ax.text(2, 20, "a note", fontsize=8)
    return figure, ax


def test_fast_texts_give_the_same_svg_bytes_as_plain_texts():
    figure, _ = _figure()
    plain = _svg(figure)
    fast_texts(figure)
    assert figure.findobj(lambda a: type(a) is FastText)  # the texts were switched
    first, again = _svg(figure), _svg(figure)  # laid out, then from the layout cache
    assert first == plain and again == plain


def test_a_fast_text_lays_out_again_when_its_text_changes():
    figure, ax = _figure()
    fast_texts(figure)
    note = ax.texts[0]
    renderer = FigureCanvasAgg(figure).get_renderer()
    short = note.get_window_extent(renderer).width
    note.set_text("a much longer note than before")
    assert note.get_window_extent(renderer).width > 2 * short


def test_pinned_axis_labels_stay_where_matplotlib_put_them():
    figure, ax = _figure()
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    auto = [ax.xaxis.label.get_window_extent(renderer), ax.yaxis.label.get_window_extent(renderer)]
    pin_axis_labels(figure)
    figure.draw(renderer)
    pinned = [ax.xaxis.label.get_window_extent(renderer),
              ax.yaxis.label.get_window_extent(renderer)]
    for a, b in zip(auto, pinned):
        assert (a.x0, a.y0) == pytest.approx((b.x0, b.y0), abs=0.01)
    pin_axis_labels(figure)  # a second call leaves pinned labels alone
    assert ax.yaxis.label.get_window_extent(renderer).x0 == pytest.approx(pinned[1].x0)


def test_ticks_draw_labels_at_their_data_positions_and_skip_those_out_of_view():
    figure, ax = _figure()
    ax.set_xscale("log")
    ax.set_xlim(1, 100)
    pin_axis_labels(figure)
    ticks = Ticks(ax, "x")
    ticks.set([0.1, 1, 10, 100, 1000], ["0.1", "1", "10", "100", "1k"])
    shown = [t for t in ticks.texts if t.get_visible()]
    assert [t.get_text() for t in shown] == ["1", "10", "100"]
    assert list(ticks.marks.get_xdata()) == [1, 10, 100]
    assert not len(ax.get_xticks())  # the axis itself draws none
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    ten = shown[1].get_window_extent(renderer)
    x_display = ax.transData.transform((10, 1))[0]
    assert ten.x0 < x_display < ten.x1  # centred under its place
    assert ten.y1 < ax.bbox.y0  # below the axes


def test_located_ticks_follow_the_limits_with_the_locator_matplotlib_would_use():
    from matplotlib.ticker import LogLocator

    figure, ax = _figure()
    ax.set_yscale("log")
    room_for(ax, "y", "100k")
    pin_axis_labels(figure)
    ticks = LocatedTicks(ax, "y", LogLocator(base=10, numticks=5), lambda v: f"{v:g}")
    ax.set_ylim(1, 1e4)
    ticks.update()
    expected = [v for v in LogLocator(base=10, numticks=5).tick_values(1, 1e4) if 1 <= v <= 1e4]
    assert [t.get_text() for t in ticks.texts if t.get_visible()] == [f"{v:g}" for v in expected]
    ax.set_ylim(10, 100)
    ticks.update()
    assert [t.get_text() for t in ticks.texts if t.get_visible()] == ["10", "100"]


def test_a_key_row_places_its_entries_side_by_side_without_overlap():
    figure, _ = _figure()
    artists = key_row(figure, [("first", "#1565c0"), ("second entry", "#2e7d32", "━")],
                      x=0.5, y=0.95)
    assert all(isinstance(a, Text) for a in artists)
    renderer = FigureCanvasAgg(figure).get_renderer()
    boxes = [a.get_window_extent(renderer) for a in artists]
    for left, right in zip(boxes, boxes[1:]):
        assert left.x1 <= right.x0 + 0.5
    middle = (boxes[0].x0 + boxes[-1].x1) / 2
    assert middle == pytest.approx(0.5 * figure.bbox.width, abs=2)
