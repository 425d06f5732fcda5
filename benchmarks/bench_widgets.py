"""Drive every lesson widget's controls and print the median render time per widget.

Run: ``python benchmarks/bench_widgets.py [widget names...]`` (no names: every widget). Each widget function in ``accelkit.widgets`` is
called with its defaults; then every control is moved through a few of its allowed values and
each re-render (library call + drawing + PNG encoding) is timed. Target (the course's speed budget): median
<= 50 ms per widget on the course's 2-core reference machine.
"""

from __future__ import annotations

import inspect
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ipywidgets as W  # noqa: E402

from accelkit import widgets  # noqa: E402
from accelkit.widgets._base import Explorer  # noqa: E402

TARGET_MS = 50.0


def candidate_values(control: W.Widget) -> list:
    """A few values the control allows, other than its current one."""
    current = control.value
    if isinstance(control, (W.Dropdown, W.SelectionSlider, W.RadioButtons, W.ToggleButtons, W.Select)):
        options = [o[1] if isinstance(o, tuple) else o for o in control.options]
        picks = options[:: max(1, len(options) // 4)] + options[-1:]
        return [v for v in picks if v != current][:5]
    if isinstance(control, W.SelectMultiple):
        options = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return [tuple(options[:k]) for k in (1, 2, 3) if k <= len(options)]
    if isinstance(control, W.Checkbox):
        return [not current, current]
    if isinstance(control, (W.IntSlider, W.FloatSlider, W.FloatLogSlider,
                            W.BoundedIntText, W.BoundedFloatText, W.Play)):
        low, high = control.min, control.max
        if isinstance(control, W.FloatLogSlider):
            low, high = control.base ** control.min, control.base ** control.max
        span = [low + (high - low) * f for f in (0.1, 0.35, 0.6, 0.9)]
        is_int = isinstance(control, (W.IntSlider, W.BoundedIntText, W.Play))
        return [int(round(v)) if is_int else v for v in span]
    return []


def explorers_of(obj) -> list[Explorer]:
    if isinstance(obj, Explorer):
        return [obj]
    found = []
    for value in getattr(obj, "__dict__", {}).values():
        if isinstance(value, Explorer):
            found.append(value)
    return found


def bench_layout_explorer() -> None:
    """The layout explorer's two kinds of update, timed apart: a layout set by hand (one
    train_step) and ``best_layouts`` (an exhaustive search, cached per model, chip, chip count
    and batch: timed cold, with the cache cleared, and warm)."""
    from accelkit.widgets import layouts

    w = layouts.layout_explorer()
    manual = []
    for tp in (2, 4, 8, 1) * 3:
        w.controls["tp"].value = tp
        manual.append(w.last_seconds * 1e3)
    scenarios = (("llama-3-70b", "TPU v5p", 8960), ("llama-3.1-405b", "NVIDIA H100 (SXM)", 16384))
    cold, warm = [], []
    for model, chip, n in scenarios:
        with w.holding():
            w.controls["mode"].value = "manual"
            w.controls["model"].value = model
            w.controls["chip"].value = chip
            w.controls["n_chips"].value = n
        for split in (True, False):
            layouts._best.cache_clear()
            with w.holding():
                w.controls["split"].value = split
            w.controls["mode"].value = "best"
            cold.append(w.last_seconds * 1e3)
            w.controls["mode"].value = "manual"
            w.controls["mode"].value = "best"
            warm.append(w.last_seconds * 1e3)
    print(f"\nlayout_explorer, by kind of update (target {TARGET_MS:.0f} ms):")
    print(f"  manual layout (one train_step):  median {statistics.median(manual):6.1f} ms, "
          f"max {max(manual):6.1f} ms over {len(manual)}")
    print(f"  best_layouts, cold search:       median {statistics.median(cold):6.1f} ms, "
          f"max {max(cold):6.1f} ms over {len(cold)} (70B/8,960 v5p and 405B/16,384 H100, "
          f"whole and split sequences)")
    print(f"  best_layouts, cached:            median {statistics.median(warm):6.1f} ms, "
          f"max {max(warm):6.1f} ms over {len(warm)}")


def main() -> int:
    names = [n for n in dir(widgets) if not n.startswith("_") and n not in ("Explorer", "View")]
    if sys.argv[1:]:
        names = [n for n in names if n in sys.argv[1:]]
    print(f"{'widget':<34}{'renders':>9}{'median ms':>11}{'max ms':>9}  target {TARGET_MS:.0f} ms")
    worst = 0.0
    for name in names:
        factory = getattr(widgets, name)
        if not inspect.isfunction(factory) or name == "quiz" or name.endswith("_quiz"):
            continue
        try:
            built = factory()
        except TypeError:
            continue  # needs arguments: not a widget factory
        for index, explorer in enumerate(explorers_of(built)):
            times = []
            for control_name, control in explorer.controls.items():
                default = getattr(control, "value", None)
                for value in candidate_values(control) + [default]:
                    before = explorer.renders
                    try:
                        control.value = value
                    except Exception:  # noqa: BLE001 - a value a validator refused: skip it
                        continue
                    if explorer.renders > before:
                        times.append(explorer.last_seconds * 1e3)
            if not times:
                continue
            label = name if index == 0 else f"{name}[{index}]"
            median = statistics.median(times)
            worst = max(worst, median)
            flag = "" if median <= TARGET_MS else "  OVER"
            print(f"{label:<34}{len(times):>9}{median:>11.1f}{max(times):>9.1f}{flag}")
    print(f"\nworst median: {worst:.1f} ms")
    if "layout_explorer" in names:
        bench_layout_explorer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
