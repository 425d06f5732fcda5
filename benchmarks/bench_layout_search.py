"""The layout explorer in "best_layouts" mode, moved the way a learner moves it.

``benchmarks/bench_widgets.py`` moves each control from the widget's defaults, where the
explorer is in manual mode. In "best_layouts" mode every move of the model, chip, chip count or
tokens per chip reruns ``accelkit.parallel.best_layouts``'s exhaustive search; this script
measures those moves: a fresh widget and cleared library caches per control, the mode set to
best, then the control moved through every option. It prints each control's median and max
wall-clock time and its median CPU time, against the course's 50 ms budget.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_layout_search.py
"""

from __future__ import annotations

import functools
import gc
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accelkit import widgets  # noqa: E402

TARGET_MS = 50.0


def clear_caches() -> None:
    for obj in gc.get_objects():
        if isinstance(obj, functools._lru_cache_wrapper) and \
                getattr(obj, "__module__", "").startswith("accelkit"):
            obj.cache_clear()


def main() -> None:
    print(f"{'control (mode = best)':28s} {'moves':>5s} {'median ms':>10s} {'max ms':>8s} {'cpu ms':>7s}")
    for name in ("model", "chip", "n_chips", "per_chip"):
        clear_caches()
        explorer = widgets.layout_explorer()
        explorer.controls["mode"].value = "best"
        control = explorer.controls[name]
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        walls, cpus = [], []
        for value in values:
            wall, cpu = time.perf_counter(), time.process_time()
            control.value = value
            walls.append(1e3 * (time.perf_counter() - wall))
            cpus.append(1e3 * (time.process_time() - cpu))
        median = statistics.median(walls)
        print(f"{name:28s} {len(values):5d} {median:10.1f} {max(walls):8.1f} "
              f"{statistics.median(cpus):7.1f}{'  OVER' if median > TARGET_MS else ''}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
