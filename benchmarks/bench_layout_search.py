"""The layout explorer in "best_layouts" mode, moved the way a learner moves it.

``benchmarks/bench_widgets.py`` moves each control from the widget's defaults, where the
explorer is in manual mode. In "best_layouts" mode every move of the model, chip, chip count or
tokens per chip reruns ``accelkit.parallel.best_layouts``'s exhaustive search; this script times
those moves with bench_widgets' own protocol (a fresh widget and cleared library caches per
control, every option visited), the mode set to best first. It prints each control's median
and max wall-clock time and its median CPU time, against the course's 50 ms budget (OVER:
the CPU median is above it; on the shared machine the wall clock also counts waiting).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_layout_search.py
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_layout_search.py --experts

``--experts`` times instead ``best_layouts``' search of expert parallelism (issue 25: within
1 s) for the two mixtures of experts in the catalog, mixtral-8x7b and deepseek-v3, on GPUs and
TPUs at several job sizes: the median and max of 5 runs each (the first includes any warm-up), the number of candidates and how many have ep > 1, and the fastest layout found.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import time  # noqa: E402

from bench_widgets import TARGET_MS, time_control  # noqa: E402

from accelkit import parallel, widgets  # noqa: E402

#: issue 25: the expert-parallel search must finish within this many seconds.
EP_BUDGET_S = 1.0
#: (model, chip, chips, global batch tokens): DeepSeek-V3 trained on 2,048 H800 with batches of
#: 15,360 sequences of 4K tokens (arXiv:2412.19437 §3.1 and §4.2); the rest are sizes a lesson
#: would try.
EP_CASES = (
    ("mixtral-8x7b", "H100", 64, 2**22), ("mixtral-8x7b", "H100", 512, 2**24),
    ("mixtral-8x7b", "GB200", 576, 2**24), ("mixtral-8x7b", "TPU v5p", 512, 2**24),
    ("deepseek-v3", "H800", 2048, 15360 * 4096), ("deepseek-v3", "H100", 4096, 15360 * 4096),
    ("deepseek-v3", "GB200", 2304, 15360 * 4096), ("deepseek-v3", "TPU v5p", 2048, 15360 * 4096),
    ("deepseek-v3", "TPU7x", 4096, 15360 * 4096),
)


def best_mode(explorer: object) -> None:
    explorer.controls["mode"].value = "best"  # type: ignore[attr-defined]


def expert_search() -> None:
    """Time best_layouts' expert-parallel search on every EP_CASES row (see the docstring)."""
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'model':14s} {'chip':22s} {'chips':>6s} {'candidates':>10s} {'ep>1':>7s} "
          f"{'median s':>9s} {'max s':>7s}  fastest layout")
    worst = 0.0
    for model, chip, n, batch in EP_CASES:
        cand = parallel.candidate_layouts(model, n, batch)
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            best = parallel.best_layouts(model, chip, n, batch, top=1)
            runs.append(time.perf_counter() - start)
        worst = max(worst, max(runs))
        layout = str(best[0].layout) if best else "none fits"
        print(f"{model:14s} {chip:22s} {n:6d} {len(cand['ep']):10,d} "
              f"{int((cand['ep'] > 1).sum()):7,d} {statistics.median(runs):9.3f} "
              f"{max(runs):7.3f}  {layout}{'  OVER' if max(runs) > EP_BUDGET_S else ''}")
    print(f"slowest search {worst:.3f} s against the {EP_BUDGET_S:g} s budget: "
          f"{'within' if worst <= EP_BUDGET_S else 'OVER'}")
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    if "--experts" in sys.argv[1:]:
        expert_search()
        return
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
