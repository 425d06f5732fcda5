"""The layout explorer in "best_layouts" mode, moved the way a learner moves it.

``benchmarks/bench_widgets.py`` moves each control from the widget's defaults, where the
explorer is in manual mode. In "best_layouts" mode every move of the model, chip, chip count or
tokens per chip reruns ``accelkit.parallel.best_layouts``'s exhaustive search; this script times
those moves with bench_widgets' own protocol (a fresh widget and cleared library caches per
control, every option visited), the mode set to best first. It prints each control's median
and max wall-clock time and its median CPU time, against the course's 50 ms budget (OVER:
the CPU median is above it; on the shared machine the wall clock also counts waiting).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_layout_search.py
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_widgets import TARGET_MS, time_control  # noqa: E402

from accelkit import widgets  # noqa: E402


def best_mode(explorer: object) -> None:
    explorer.controls["mode"].value = "best"  # type: ignore[attr-defined]


def main() -> None:
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'control (mode = best)':28s} {'moves':>5s} {'median ms':>10s} {'max ms':>8s} {'cpu ms':>7s}")
    for name in ("model", "chip", "n_chips", "per_chip"):
        wall, cpu = time_control(widgets.layout_explorer, 0, name, setup=best_mode)
        median = statistics.median(wall)
        cpu_median = statistics.median(cpu)
        print(f"{name:28s} {len(wall):5d} {median:10.1f} {max(wall):8.1f} "
              f"{cpu_median:7.1f}{'  OVER' if cpu_median > TARGET_MS else ''}")
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
