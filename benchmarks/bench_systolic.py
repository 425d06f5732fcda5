"""Speed of the systolic-array engine, and the same configurations through SCALE-Sim.

Run: ``python benchmarks/bench_systolic.py`` (add ``--quick`` to skip the 1024³ cases). Prints
per-call times and, where SCALE-Sim 3.0.0 is installed in its own venv (see
tests/data/scalesim/README.md; path in ACCELKIT_SCALESIM_PYTHON), runs it on the same
configurations and prints the ratios. Without it, the ratios use the SCALE-Sim timings recorded
on this machine class in tests/data/scalesim/timings.csv, and say so.

Targets (the course's speed budget): estimate() <= 50 µs; matmul() >= 100x faster than SCALE-Sim; simulate(),
which moves every operand every cycle, >= 10x faster.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from accelkit import SystolicArray  # noqa: E402
from scalesim_runner import run_scalesim  # noqa: E402

CONFIGS = [(flow, 32, 32, 256) for flow in ("os", "ws", "is")] + [("os", 128, 128, 1024), ("ws", 128, 128, 1024)]


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def recorded_scalesim() -> dict[tuple, tuple[float, int]]:
    table = {}
    with (ROOT / "tests" / "data" / "scalesim" / "timings.csv").open() as handle:
        for row in csv.DictReader(handle):
            key = (row["dataflow"], int(row["rows"]), int(row["cols"]), int(row["M"]))
            table[key] = (float(row["seconds"]), int(row["total_cycles_reported"]) + 1)
    return table


def main() -> None:
    quick = "--quick" in sys.argv
    n = 20000
    for label, options in (("per-fold (SCALE-Sim)", {}),
                           ("overlap_folds=True, double_buffer=True",
                            dict(overlap_folds=True, double_buffer=True))):
        sa = SystolicArray(128, 128, "ws", **options)
        started = time.perf_counter()
        for _ in range(n):
            sa.estimate(M=4096, N=4096, K=4096)
        per_call = (time.perf_counter() - started) / n
        print(f"estimate(), {label}: {per_call * 1e6:.1f} µs per call (target <= 50 µs)")
    recorded = recorded_scalesim()
    print()
    header = f"{'config':<26}{'cycles':>10}{'matmul s':>11}{'simulate s':>12}{'SCALE-Sim s':>13}" \
             f"{'matmul x':>10}{'simulate x':>12}"
    print(header)
    print("-" * len(header))
    rng = np.random.default_rng(0)
    for flow, rows, cols, size in CONFIGS:
        if quick and size > 256:
            continue
        A = rng.standard_normal((size, size))
        B = rng.standard_normal((size, size))
        array = SystolicArray(rows, cols, flow)
        t_matmul = best_of(lambda: array.matmul(A, B), 5)
        t_sim = best_of(lambda: array.simulate(A, B), 1 if size > 256 else 3)
        run = array.matmul(A, B)
        live = run_scalesim(flow, rows, cols, size, size, size)
        if live is not None:
            t_ref, source = live["seconds"], "live"
            assert live["total_cycles_reported"] + 1 == run.cycles, "cycle counts disagree"
        elif (flow, rows, cols, size) in recorded:
            t_ref, source = recorded[(flow, rows, cols, size)][0], "recorded"
        else:
            t_ref, source = float("nan"), "n/a"
        name = f"{flow} {rows}x{cols} on {size}^3"
        print(f"{name:<26}{run.cycles:>10,}{t_matmul:>11.4f}{t_sim:>12.3f}{t_ref:>11.2f} {source[0]}"
              f"{t_ref / t_matmul:>10.0f}{t_ref / t_sim:>12.1f}")
    print("\nSCALE-Sim column: l = run live now, r = recorded in tests/data/scalesim/timings.csv, "
          "n = not available.")


if __name__ == "__main__":
    main()
