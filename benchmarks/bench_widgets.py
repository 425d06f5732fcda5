"""Move every control of every lesson widget the way a learner does, and time each move.

Run: ``python benchmarks/bench_widgets.py [name-substring ...]``. For every widget function in
``accelkit.widgets`` (called with its defaults, as the lessons call them) and for every control
of every explorer it returns, a FRESH widget is built and every library cache is cleared, so
first visits count; then the control is moved through its whole range: every option of a
menu, every step of a slider with up to 12 steps (else 10 evenly spaced stops from one end to
the other), both states of a checkbox; and every button the widget shows beside its controls
(the systolic animation's step buttons, the decision lab's Record / Save / Load) is clicked a
few times. Each move is timed from setting the value (or the click) to the end of everything
it triggered (library call, drawing, SVG writing, any follow-on renders), i.e. what the
learner waits for. Per control the wall-clock and CPU (``time.process_time``) medians and
maxima are printed; the target (the course's speed budget) is a median <= 50 ms per control
on the course's 2-core machine.

Caches cleared per control, so first visits count: every ``functools`` cache in
``accelkit.*`` (anything with ``cache_clear``) and every module-level dict named ``*CACHE*``.
Properties cached on module-level catalog objects (``functools.cached_property``) stay warm,
as they would after a lesson's first cells ran, and so does whatever a widget computes when
it is built (within a lesson's 10 s). The load average is printed with the figures: on a
shared, loaded machine the wall clock includes waiting for a core, and the CPU time is the
closer estimate of an idle machine's wall clock (it also counts any extra threads, so it is no
lower bound). A control is OVER when its CPU median is above the target; re-run the worst
(pass a name substring) before trusting one. Files the Save button writes go to a temporary
directory.
"""

from __future__ import annotations

import functools
import inspect
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ipywidgets as W  # noqa: E402

from accelkit import widgets  # noqa: E402
from accelkit.widgets._base import Explorer  # noqa: E402

TARGET_MS = 50.0
MAX_SLIDER_STOPS = 12


def _published_comparisons() -> tuple[Any, ...]:
    from validation.totals import PUBLISHED_RUNS, compare_published
    return ([compare_published(r) for r in PUBLISHED_RUNS],)


#: Widgets that take arguments, called as their lessons call them (lesson 07 passes the
#: repository's published runs to ``published_runs``).
LESSON_ARGUMENTS: dict[str, Any] = {"published_runs": _published_comparisons}


def sweep_values(control: W.Widget) -> list[Any]:
    """The values a learner passes through moving the control across its whole range."""
    if isinstance(control, (W.Dropdown, W.SelectionSlider, W.RadioButtons, W.ToggleButtons,
                            W.Select)):
        return [o[1] if isinstance(o, tuple) else o for o in control.options]
    if isinstance(control, W.SelectMultiple):
        options = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return [tuple(options[:k]) for k in range(1, len(options) + 1)]
    if isinstance(control, (W.Checkbox, W.ToggleButton)):
        return [not control.value, control.value]
    if isinstance(control, W.FloatLogSlider):
        steps = int(round((control.max - control.min) / control.step)) + 1
        n = min(steps, 10)
        return [control.base ** (control.min + (control.max - control.min) * i / (n - 1))
                for i in range(n)]
    if isinstance(control, (W.IntSlider, W.FloatSlider, W.BoundedIntText, W.BoundedFloatText,
                            W.Play, W.IntRangeSlider)):
        if isinstance(control, W.IntRangeSlider):
            return []
        low, high, step = control.min, control.max, control.step or 1
        steps = int(round((high - low) / step)) + 1
        if steps <= MAX_SLIDER_STOPS:
            values = [low + i * step for i in range(steps)]
        else:
            values = [low + (high - low) * i / 9 for i in range(10)]
            values = [low + round((v - low) / step) * step for v in values]
        is_int = isinstance(control, (W.IntSlider, W.BoundedIntText, W.Play))
        return [int(round(v)) if is_int else float(v) for v in values]
    return []


def explorers_of(obj: object) -> list[Explorer]:
    if isinstance(obj, Explorer):
        return [obj]
    return [v for v in getattr(obj, "__dict__", {}).values() if isinstance(v, Explorer)]


def clear_caches() -> None:
    for name, module in list(sys.modules.items()):
        if not name.startswith("accelkit") or module is None:
            continue
        for key, value in list(vars(module).items()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()
            elif isinstance(value, dict) and "CACHE" in key.upper():
                value.clear()


def time_control(factory: Any, index: int, control_name: str,
                 setup: Any = None) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU milliseconds of each move of one control on a fresh widget
    (``setup(explorer)``, if given, runs first, untimed: another control set, say)."""
    clear_caches()
    explorer = explorers_of(factory())[index]
    if setup is not None:
        setup(explorer)
    control = explorer.controls[control_name]
    wall, cpu = [], []
    for value in sweep_values(control):
        if getattr(control, "value", None) == value:
            continue
        before = explorer.renders
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            control.value = value
        except Exception:  # noqa: BLE001 - a value a validator refused: skip it
            continue
        elapsed, elapsed_cpu = time.perf_counter() - started, time.process_time() - started_cpu
        if explorer.renders > before:
            wall.append(elapsed * 1e3)
            cpu.append(elapsed_cpu * 1e3)
    return wall, cpu


def buttons_of(explorer: Explorer) -> dict[str, W.Button]:
    """The buttons a widget shows beside its controls (found in its widget tree), by label."""
    found: dict[str, W.Button] = {}
    stack = [explorer.widget]
    while stack:
        widget = stack.pop()
        if isinstance(widget, W.Button):
            found[widget.description] = widget
        stack.extend(getattr(widget, "children", ()))
    return found


def time_button(factory: Any, index: int, name: str,
                clicks: int = 4) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU milliseconds of each of a few clicks of one button of a fresh
    widget (caches cleared first, as for a control)."""
    clear_caches()
    button = buttons_of(explorers_of(factory())[index])[name]
    wall, cpu = [], []
    for _ in range(clicks):
        started, started_cpu = time.perf_counter(), time.process_time()
        button.click()
        wall.append((time.perf_counter() - started) * 1e3)
        cpu.append((time.process_time() - started_cpu) * 1e3)
    return wall, cpu


def widget_factories(filters: list[str]) -> list[tuple[str, Any]]:
    found = []
    for name in dir(widgets):
        if name.startswith("_") or name in ("Explorer", "View"):
            continue
        factory = getattr(widgets, name)
        if not inspect.isfunction(factory) or name == "quiz" or name.endswith("_quiz"):
            continue
        label = f"{factory.__module__.rsplit('.', 1)[-1]}.{name}"
        if name in LESSON_ARGUMENTS:
            factory = functools.partial(factory, *LESSON_ARGUMENTS[name]())
        found.append((label, factory))
    return [(label, f) for label, f in found
            if not filters or any(s in label for s in filters)]


def main(argv: list[str]) -> int:
    filters = [a for a in argv if not a.startswith("-")]
    load = os.getloadavg()
    print(f"cpus {os.cpu_count()}  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'widget / control':<58}{'moves':>6}{'wall med':>9}{'max':>7}{'cpu med':>9}"
          f"{'max':>7}  target {TARGET_MS:.0f} ms (cpu median)")
    results: list[tuple[str, float, float, float, float]] = []

    def report(name: str, wall: list[float], cpu: list[float]) -> None:
        row = (name, statistics.median(wall), max(wall), statistics.median(cpu), max(cpu))
        results.append(row)
        flag = "  OVER" if row[3] > TARGET_MS else ("  (wall over)" if row[1] > TARGET_MS
                                                    else "")
        print(f"{name:<58}{len(wall):>6}{row[1]:>9.1f}{row[2]:>7.1f}{row[3]:>9.1f}{row[4]:>7.1f}"
              f"{flag}", flush=True)

    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)  # where a Save button writes
        for label, factory in widget_factories(filters):
            try:
                built = factory()
            except TypeError:
                continue  # needs arguments: not a widget factory
            for index, explorer in enumerate(explorers_of(built)):
                prefix = f"{label}{'' if index == 0 else f'[{index}]'}"
                for control_name in explorer.controls:
                    wall, cpu = time_control(factory, index, control_name)
                    if wall:
                        report(f"{prefix} / {control_name}", wall, cpu)
                for button_name in buttons_of(explorer):
                    report(f"{prefix} / {button_name} (button)",
                           *time_button(factory, index, button_name))
    within_cpu = sum(1 for r in results if r[3] <= TARGET_MS)
    within_wall = sum(1 for r in results if r[1] <= TARGET_MS)
    load = os.getloadavg()
    print(f"\ncontrols with median <= {TARGET_MS:.0f} ms: {within_cpu} of {len(results)} CPU time, "
          f"{within_wall} of {len(results)} wall clock"
          f"  (load average at end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
    for title, column in (("CPU time", 3), ("wall clock", 1)):
        print(f"worst five ({title}):")
        for name, wall, wall_max, cpu, cpu_max in sorted(results, key=lambda r: -r[column])[:5]:
            print(f"  {name:<56}{wall:>8.1f} ms wall{cpu:>8.1f} ms cpu (medians)")
    return 0 if within_cpu == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
