"""Print how long ``import accelkit`` takes in a fresh interpreter.

Run: ``python benchmarks/bench_import.py``. Starts ten fresh Pythons, each timing only the import
(interpreter start-up excluded), and prints the best, the median and the worst. Target: best of
ten under 0.5 s on the course's 2-core reference machine, so a lesson's first cell answers at
once (the package imports its heavy submodules, such as the widgets and matplotlib, lazily).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 0.5
CODE = "import time; t = time.perf_counter(); import accelkit; print(time.perf_counter() - t)"


def main() -> None:
    timings = sorted(float(subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                                          check=True, cwd=ROOT).stdout) for _ in range(10))
    best, median, worst = timings[0], statistics.median(timings), timings[-1]
    print(f"import accelkit: best {best * 1000:.0f} ms, median {median * 1000:.0f} ms, "
          f"worst {worst * 1000:.0f} ms over {len(timings)} fresh interpreters")
    print(f"target: best under {TARGET_SECONDS * 1000:.0f} ms: "
          f"{'met' if best < TARGET_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()
