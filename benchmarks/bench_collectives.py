"""How long one collective estimate takes (budget: <= 50 us), plus the figures it gives.

Prints figures; asserts nothing about speed.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_collectives.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import accelkit as ak
from accelkit import collectives as C


def per_call_microseconds(fn: Callable[[], object], repeat: int = 1000) -> float:
    fn()  # warm the catalog and the cached group layout
    best = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


CASES = [
    ("all_reduce", "TPU v5p", 16, {}),
    ("all_reduce", "TPU v5p", (16, 16, 24), {}),
    ("all_reduce", "TPU v5p", 16384, {}),  # 4 slices over DCN
    ("all_gather", "TPU v5e", 256, {}),
    ("all_to_all", "TPU v5e", (16, 16), {}),
    ("all_reduce", "H100", 8, {}),
    ("all_reduce", "H100", 16384, {}),
    ("all_reduce", "H100", 16384, {"algorithm": "flat_ring"}),
    ("reduce_scatter", "H100", 128, {"inner": 8}),
    ("all_to_all", "H100", 64, {}),
    ("all_reduce", "B200", 144, {"scaleup_domain": 72}),
]


def main() -> None:
    size = 2 * 70e9  # bf16 gradients of a 70B model
    print(f"{'collective':<15} {'chip':<8} {'over':<14} {'options':<24} {'network':<18} "
          f"{'seconds':>10} {'us/call':>8}")
    for kind, chip, over, options in CASES:
        fn = getattr(C, kind)
        r = fn(chip, array_bytes=size, over=over, **options)
        us = per_call_microseconds(lambda: fn(chip, array_bytes=size, over=over, **options))
        print(f"{kind:<15} {chip:<8} {str(over):<14} {str(options or ''):<24} {r.network:<18} "
              f"{r.seconds:10.4f} {us:8.1f}")
    crit = per_call_microseconds(lambda: C.dp_critical_tokens_per_chip("v5p", over=(16, 16, 24)))
    print(f"dp_critical_tokens_per_chip(v5p, (16,16,24)) = "
          f"{C.dp_critical_tokens_per_chip('v5p', over=(16, 16, 24)):.0f} tokens/chip, {crit:.1f} us/call")
    for chip, over in (("v5p", 16), ("H100", 8), ("H100", 1024), ("v5e", 256)):
        t = C.dp_critical_tokens_per_chip(chip, over=over)
        print(f"DP critical tokens per chip, {chip:5} over {over!s:6}: {t:8.0f}")
    start = time.perf_counter()
    for n in range(17, 8961):  # first call for every v5p group size: the layout search, then cached
        try:
            C.all_reduce("v5p", array_bytes=size, over=n)
        except C.GroupLayoutError:  # a prime count, say, factors into no slice
            pass
    print(f"first calls for every v5p group of 17..8960 chips: {time.perf_counter() - start:.2f} s "
          f"(layouts are cached after)")
    print(f"catalog loaded: {len(ak.chips.all())} chips")


if __name__ == "__main__":
    main()
