"""The axes furniture of accelkit/widgets/_axes.py draws the picture matplotlib's own axis and
legend would draw: the same tick labels at the same places, axis labels where matplotlib puts
them, keys whose entries do not overlap."""

from __future__ import annotations

import pytest
from matplotlib.text import Text
from matplotlib.ticker import LogLocator

from accelkit.widgets._axes import Ticks, fixed_ticks, key_column, key_row, pin_axis_labels
from accelkit.widgets._base import new_figure


def _figure(log: bool = False):
    figure = new_figure(5, 3)
    ax = figure.add_subplot()
    ax.plot([1, 10, 100], [3, 30, 300])
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_title("a title")
    ax.set_xlabel("an x label")
    ax.set_ylabel("a y label")
    return figure, ax


def _drawn_ticks(ax, which: str, across: bool = False) -> list[tuple[float, str]]:
    """(display position along the axis, or across it, label) of the tick labels matplotlib
    draws itself."""
    ax.get_figure().draw_without_rendering()
    axis = ax.xaxis if which == "x" else ax.yaxis
    low, high = sorted(axis.get_view_interval())
    out = []
    for tick in axis.get_major_ticks():
        if low <= tick.get_loc() <= high and tick.label1.get_visible():
            box = tick.label1.get_window_extent()
            out.append((_middle(box, which, across), tick.label1.get_text()))
    return out


def _middle(box, which: str, across: bool) -> float:
    along_x = (which == "x") != across
    return (box.x0 + box.x1) / 2 if along_x else (box.y0 + box.y1) / 2


def _our_ticks(ticks: Ticks, across: bool = False) -> list[tuple[float, str]]:
    ticks.ax.get_figure().draw_without_rendering()
    return [(_middle(text.get_window_extent(), ticks.which, across), text.get_text())
            for text in ticks.texts if text.get_visible()]


@pytest.mark.parametrize("log", [False, True])
def test_fixed_ticks_draw_the_labels_matplotlib_draws_where_it_draws_them(log):
    reference, rax = _figure(log)
    figure, ax = _figure(log)
    made = fixed_ticks(ax)
    assert not len(ax.get_xticks()) and not len(ax.get_yticks())  # the axis draws none itself
    for name in "xy":
        for across in (False, True):  # along the axis and away from it
            expected = _drawn_ticks(rax, name, across)
            ours = _our_ticks(made[ax, name], across)
            assert [t for _, t in ours] == [t for _, t in expected] and len(ours) >= 2
            for (mine, _), (theirs, _) in zip(ours, expected):
                assert mine == pytest.approx(theirs, abs=0.6)


def test_pinned_axis_labels_stay_where_matplotlib_put_them():
    figure, ax = _figure()
    figure.draw_without_rendering()
    auto = [ax.xaxis.label.get_window_extent(), ax.yaxis.label.get_window_extent()]
    pin_axis_labels(ax)
    figure.draw_without_rendering()
    pinned = [ax.xaxis.label.get_window_extent(), ax.yaxis.label.get_window_extent()]
    for a, b in zip(auto, pinned):
        assert (a.x0, a.y0) == pytest.approx((b.x0, b.y0), abs=0.01)
    # a pinned label stays put: neither a second pin nor removing the ticks moves it
    pin_axis_labels(ax)
    fixed_ticks(ax)
    figure.draw_without_rendering()
    assert ax.yaxis.label.get_window_extent().x0 == pytest.approx(pinned[1].x0, abs=0.01)
    assert ax.xaxis.label.get_window_extent().y0 == pytest.approx(pinned[0].y0, abs=0.01)


def test_ticks_sit_at_their_data_positions_and_skip_those_out_of_view():
    figure, ax = _figure(log=True)
    ax.set_xlim(1, 100)
    ticks = Ticks(ax, "x")
    ticks.set([0.1, 1, 10, 100, 1000], ["0.1", "1", "10", "100", "1k"])
    assert ticks.labels() == ["1", "10", "100"]
    assert list(ticks.marks.get_xdata()) == [1, 10, 100]
    figure.draw_without_rendering()
    ten = [t for t in ticks.texts if t.get_text() == "10"][0].get_window_extent()
    x_display = ax.transData.transform((10, 1))[0]
    assert ten.x0 < x_display < ten.x1  # centred under its place
    assert ten.y1 < ax.bbox.y0  # below the axes


def test_update_follows_the_limits_with_the_axis_own_locator_and_formatter():
    figure, ax = _figure()
    ticks = Ticks(ax, "y", widest="1000")
    for limits in ((0, 300), (0, 50), (-2, 7)):
        ax.set_ylim(*limits)
        ticks.update()
        reference, rax = _figure()
        rax.set_ylim(*limits)
        assert ticks.labels() == [t for _, t in _drawn_ticks(rax, "y")]


def test_update_with_a_given_locator_and_format():
    figure, ax = _figure(log=True)
    ticks = Ticks(ax, "y", locator=LogLocator(base=10, numticks=5), format=lambda v: f"{v:g}",
                  widest="100k")
    ax.set_ylim(1, 1e4)
    ticks.update()
    assert ticks.labels() == ["1", "10", "100", "1000", "10000"]
    ax.set_ylim(10, 100)
    ticks.update()
    assert ticks.labels() == ["10", "100"]


def test_a_y_label_pinned_for_the_widest_label_clears_every_label():
    figure, ax = _figure()
    ticks = Ticks(ax, "y", widest="100000")
    ax.set_ylim(0, 100000)
    ticks.update()
    figure.draw_without_rendering()
    label = ax.yaxis.label.get_window_extent()
    assert all(label.x1 < t.get_window_extent().x0 for t in ticks.texts if t.get_visible())


def test_a_grid_follows_the_ticks():
    figure, ax = _figure()
    made = fixed_ticks(ax, which="x", grid={"alpha": 0.3})
    grid = made[ax, "x"].grid
    assert grid is not None and grid.get_alpha() == 0.3
    xs = [segment[0][0] for segment in grid.get_segments()]
    assert xs == list(made[ax, "x"].marks.get_xdata())


def test_bad_arguments_are_refused_by_name():
    figure, ax = _figure()
    with pytest.raises(ValueError, match="which"):
        Ticks(ax, "z")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="side"):
        Ticks(ax, "x", side="left")
    with pytest.raises(TypeError, match="axes"):
        pin_axis_labels()
    with pytest.raises(TypeError, match="line or a bar"):
        key_column(figure, [("a", Text())], 0.1, 0.9)  # type: ignore[list-item]


def test_a_key_row_places_its_entries_side_by_side_without_overlap():
    figure, _ = _figure()
    artists = key_row(figure, [("first", "#1565c0"), ("second entry", "#2e7d32", "━")],
                      x=0.5, y=0.95)
    assert all(isinstance(a, Text) for a in artists)
    figure.draw_without_rendering()
    boxes = [a.get_window_extent() for a in artists]
    for left, right in zip(boxes, boxes[1:]):
        assert left.x1 <= right.x0 + 0.5
    middle = (boxes[0].x0 + boxes[-1].x1) / 2
    assert middle == pytest.approx(0.5 * figure.bbox.width, abs=2)


def test_a_key_column_copies_its_artists_and_stacks_its_rows():
    figure, ax = _figure()
    (line,) = ax.plot([1, 2], [1, 2], "o--", color="#e65100", linewidth=2.5)
    bars = ax.bar([1], [1], color="#64b5f6", hatch="//")
    rows = key_column(figure, [("a line", line), ("a bar", bars[0])], x=0.2, y=0.9,
                      title="key")
    sample, label = rows[0]
    assert (sample.get_color(), sample.get_linestyle(), sample.get_linewidth(),
            sample.get_marker()) == ("#e65100", "--", 2.5, "o")
    assert rows[1][0].get_hatch() == "//"
    figure.draw_without_rendering()
    first, second = (text.get_window_extent() for _, text in rows)
    assert second.y1 <= first.y0 + 0.5  # one row under the other, not overlapping
    assert label.get_window_extent().x0 > sample.get_window_extent().x1  # label after sample
