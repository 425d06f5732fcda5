"""How long the exhaustive layout search takes (the target: <= 1 s each on 2 cores).

Times ``accelkit.parallel.best_layouts`` cold (collective costs not yet cached, as in a fresh
kernel) and warm, for Llama 3.1 405B on 16,384 H100 (16M-token batch) and Llama 3 70B on
8,960 TPU v5p (4M-token batch, the scaling book's example), and prints how many candidate
layouts each search evaluated and the best one. Prints figures; asserts nothing about speed.
Each case is timed again with ``compute_efficiency="predicted"`` (accelkit.mfu; the same <= 1 s).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_parallel.py
"""

from __future__ import annotations

import time

from accelkit import mfu, parallel

CASES = (("llama-3.1-405b", "H100", 16384, 16 * 2**20, True),
         ("llama-3-70b", "TPU v5p", 8960, 4 * 2**20, True),
         ("llama-3-70b", "TPU v5p", 8960, 8960 * 468, False),  # the book: 468 tokens per chip
         ("deepseek-v3", "H100", 2048, 16 * 2**20, True))


def main() -> None:
    parallel.best_layouts("llama-3-8b", "H100", 8, 2**20)  # import and catalog load
    for model, chip, n, batch, whole in CASES:
        candidates = len(parallel.candidate_layouts(model, n, batch,
                                                    whole_sequences=whole)["dp"])
        parallel._COST_CACHE.clear()
        start = time.perf_counter()
        best = parallel.best_layouts(model, chip, n, batch, whole_sequences=whole)
        cold = time.perf_counter() - start
        warm = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            parallel.best_layouts(model, chip, n, batch, whole_sequences=whole)
            warm = min(warm, time.perf_counter() - start)
        kind = "whole sequences" if whole else "token-level micro-batches"
        print(f"{model} on {n:,} x {chip} ({kind}): {candidates:,} candidates, "
              f"cold {cold * 1e3:.0f} ms, warm {warm * 1e3:.0f} ms")
        print(f"    best: {best[0].layout}  {best[0].seconds:.3g} s/step, MFU "
              f"{best[0].mfu:.1%}" if best else "    nothing fits")
        # compute_efficiency="predicted" (accelkit.mfu), cold: no cached matmul shapes
        parallel._COST_CACHE.clear()
        mfu._step_numbers.cache_clear()
        start = time.perf_counter()
        best = parallel.best_layouts(model, chip, n, batch, whole_sequences=whole,
                                     compute_efficiency="predicted")
        cold = time.perf_counter() - start
        start = time.perf_counter()
        parallel.best_layouts(model, chip, n, batch, whole_sequences=whole,
                              compute_efficiency="predicted")
        warm = time.perf_counter() - start
        print(f"    predicted MFU: cold {cold * 1e3:.0f} ms, warm {warm * 1e3:.0f} ms; best: "
              f"{best[0].layout}  MFU {best[0].mfu:.1%}" if best else "    nothing fits")


if __name__ == "__main__":
    main()
