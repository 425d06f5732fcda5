"""How long the exhaustive layout search takes (the target: <= 1 s each on 2 cores).

Times ``accelkit.parallel.best_layouts`` cold (collective costs not yet cached, as in a fresh
kernel) and warm, for Llama 3.1 405B on 16,384 H100 (16M-token batch) and Llama 3 70B on
8,960 TPU v5p (4M-token batch, the scaling book's example), and prints how many candidate
layouts each search evaluated and the best one. Prints figures; asserts nothing about speed.
Each case is timed again with ``compute_efficiency="predicted"`` (accelkit.mfu; the same <= 1 s).
Each figure is wall-clock time and, in brackets, CPU time (``time.process_time``): on a shared,
loaded machine the wall clock includes waiting for a core, the CPU time does not.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_parallel.py
"""

from __future__ import annotations

import sys
import time

from accelkit import parallel

CASES = (("llama-3.1-405b", "H100", 16384, 16 * 2**20, True),
         ("llama-3-70b", "TPU v5p", 8960, 4 * 2**20, True),
         ("llama-3-70b", "TPU v5p", 8960, 8960 * 468, False),  # the book: 468 tokens per chip
         ("deepseek-v3", "H100", 2048, 16 * 2**20, True))


def timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call of ``fn``."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def clear_caches() -> None:
    """Every ``functools.lru_cache`` in ``accelkit.*`` (as bench_widgets clears them), and the
    parallel module's cost table: a cold search, as in a fresh kernel."""
    for name, module in list(sys.modules.items()):
        if name.startswith("accelkit") and module is not None:
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
    table = getattr(parallel, "_COST_CACHE", None)
    if table is not None:
        table.clear()


def main() -> None:
    parallel.best_layouts("llama-3-8b", "H100", 8, 2**20)  # import and catalog load
    for model, chip, n, batch, whole in CASES:
        candidates = len(parallel.candidate_layouts(model, n, batch,
                                                    whole_sequences=whole)["dp"])
        clear_caches()
        cold, cold_cpu = timed(lambda: parallel.best_layouts(model, chip, n, batch,
                                                             whole_sequences=whole))
        best = parallel.best_layouts(model, chip, n, batch, whole_sequences=whole)
        warm, warm_cpu = min(timed(lambda: parallel.best_layouts(model, chip, n, batch,
                                                                 whole_sequences=whole))
                             for _ in range(3))
        kind = "whole sequences" if whole else "token-level micro-batches"
        print(f"{model} on {n:,} x {chip} ({kind}): {candidates:,} candidates, "
              f"cold {cold * 1e3:.0f} ms ({cold_cpu * 1e3:.0f} cpu), "
              f"warm {warm * 1e3:.0f} ms ({warm_cpu * 1e3:.0f} cpu)")
        print(f"    best: {best[0].layout}  {best[0].seconds:.3g} s/step, MFU "
              f"{best[0].mfu:.1%}" if best else "    nothing fits")
        # compute_efficiency="predicted" (accelkit.mfu), cold: no cached matmul shapes
        clear_caches()
        cold, cold_cpu = timed(lambda: parallel.best_layouts(
            model, chip, n, batch, whole_sequences=whole, compute_efficiency="predicted"))
        best = parallel.best_layouts(model, chip, n, batch, whole_sequences=whole,
                                     compute_efficiency="predicted")
        warm, warm_cpu = timed(lambda: parallel.best_layouts(
            model, chip, n, batch, whole_sequences=whole, compute_efficiency="predicted"))
        print(f"    predicted MFU: cold {cold * 1e3:.0f} ms ({cold_cpu * 1e3:.0f} cpu), warm "
              f"{warm * 1e3:.0f} ms ({warm_cpu * 1e3:.0f} cpu); best: "
              f"{best[0].layout}  MFU {best[0].mfu:.1%}" if best else "    nothing fits")


if __name__ == "__main__":
    main()
