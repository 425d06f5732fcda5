"""Speed of the SIMD engine: a 256³ matmul simulated on the default machine, estimate() per call.

Run: python benchmarks/bench_simd.py   (prints figures; not a test)
"""

from __future__ import annotations

import time

import numpy as np

from accelkit import SIMDMachine


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((256, 256)), rng.standard_normal((256, 256))
    for label, machine in [("default (tiled)", SIMDMachine()),
                           ("naive kernel", SIMDMachine(shared_memory=False)),
                           ("tensor core 16x8x16", SIMDMachine(tensor_core=(16, 8, 16)))]:
        seconds = _best(lambda: machine.matmul(A, B), 5)
        per_call = _best(lambda: machine.estimate(M=4096, N=4096, K=4096), 200)
        print(f"{label:22s} matmul 256³: {seconds * 1e3:8.1f} ms   "
              f"estimate(4096³): {per_call * 1e6:7.1f} µs/call   "
              f"cycles(256³) = {machine.matmul(A, B).cycles:,}")
    x = rng.standard_normal(1 << 20)
    print(f"branchy over 2^20 elements: {_best(lambda: SIMDMachine().branchy(x), 3) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
