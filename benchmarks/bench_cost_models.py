"""Per-call cost of the catalog lookup and the roofline model, so widgets can sweep freely.

Run: .venv/bin/python benchmarks/bench_cost_models.py
Prints microseconds per call and the time of a 10,000-point sweep (batch sizes x chips).
"""

from __future__ import annotations

import time
import timeit

import accelkit as ak


def _per_call_us(stmt, number: int = 20_000, repeat: int = 5) -> float:
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    start = time.perf_counter()
    from accelkit import chips, price, roofline  # noqa: F401 - timed separately from the load
    print(f"import chips, roofline, price:        {(time.perf_counter() - start) * 1e3:8.2f} ms")
    start = time.perf_counter()
    ak.chips.all()  # first call loads the JSON and builds the alias table
    print(f"catalog load (first call):            {(time.perf_counter() - start) * 1e3:8.2f} ms")

    chip = ak.chips.get("v5e")
    rows = [
        ("chips.get('v5e')", lambda: ak.chips.get("v5e")),
        ("chips.get('NVIDIA H100 (SXM)')", lambda: ak.chips.get("NVIDIA H100 (SXM)")),
        ("chips.get(Chip)", lambda: ak.chips.get(chip)),
        ("roofline.matmul('v5e', ...)", lambda: ak.roofline.matmul("v5e", M=64, N=8192, K=8192)),
        ("roofline.matmul(Chip, ...)", lambda: ak.roofline.matmul(chip, M=64, N=8192, K=8192)),
        ("roofline.estimate(...)", lambda: ak.roofline.estimate(chip, flops=1e12, bytes=1e9)),
        ("price.flops_per_dollar('H100')", lambda: ak.price.flops_per_dollar("H100")),
    ]
    for label, call in rows:
        print(f"{label:38s} {_per_call_us(call):8.2f} µs/call")

    names = [c.name for c in ak.chips.all() if c.usd_per_hour is not None]
    batches = range(1, 10_000 // len(names) + 2)
    start = time.perf_counter()
    points = 0
    for name in names:
        for batch in batches:
            ak.roofline.matmul(name, M=batch, N=8192, K=8192)
            points += 1
    elapsed = time.perf_counter() - start
    print(f"sweep of {points:,} roofline.matmul points:    {elapsed * 1e3:8.1f} ms "
          f"({elapsed / points * 1e6:.2f} µs/point)")


if __name__ == "__main__":
    main()
