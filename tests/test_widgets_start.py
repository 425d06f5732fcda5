"""Lesson 00's widget, driven without a kernel: move the control, read what it shows."""

from accelkit import SystolicArray
from accelkit.widgets import first_widget


def test_first_widget_follows_its_slider():
    widget = first_widget()
    assert widget.view.result.M == 32 and widget.image.value  # drew a picture at start
    widget.controls["size"].value = 256
    shown = widget.view.result
    assert shown == SystolicArray(8, 8, "ws").estimate(M=256, N=256, K=256)
    assert f"{shown.cycles:,}" in widget.html.value
    widget.controls["size"].value = 2
    assert widget.view.result.utilization < shown.utilization  # tiny products waste the array
    assert widget.renders == 3


def test_start_quiz_gives_feedback_for_each_option():
    from accelkit.widgets import start_quiz

    q = start_quiz()
    assert q.check() == (False, "Pick an option first.")
    q.select(q.position(0))  # written first: the clock
    right, message = q.check()
    assert not right and "clock" in message
    q.widget  # builds the ipywidgets view; choosing there drives the same object
    q._radio.index = q.correct
    right, message = q.check()
    assert right and "Lesson 04" in message and "Correct" in q._out.value


def test_widget_names_are_unique_across_topic_modules():
    """``from accelkit.widgets import name`` must be unambiguous."""
    import importlib
    import pkgutil

    import accelkit.widgets as package

    seen: dict[str, str] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"accelkit.widgets.{info.name}")
        for name in getattr(module, "__all__", ()):
            assert name not in seen, f"{name} is exported by both {seen[name]} and {info.name}"
            seen[name] = info.name


def test_holding_changes_controls_without_rendering():
    widget = first_widget()
    before = widget.renders
    with widget.holding():
        widget.controls["size"].value = 4
        widget.controls["size"].value = 8
    assert widget.renders == before
    widget.controls["size"].value = 16
    assert widget.renders == before + 1 and widget.view.result.M == 16
