"""How long the cost models take: one estimate should cost microseconds, a widget's sweep of
10,000 (chip, batch) points well under a second, a capacity plan (which the decision lab asks
for on each move) well under the widgets' 50 ms. Prints figures; asserts nothing about speed.
Per-call figures are the best of five runs, wall clock; capacity plans are timed cold (every
library cache cleared, as bench_widgets does per control) with wall and CPU time.

    .venv/bin/python benchmarks/bench_training_inference.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

import accelkit as ak


def per_call_microseconds(fn: Callable[[], object], repeat: int = 2000) -> float:
    fn()  # warm caches (catalog load, decode coefficients)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


def clear_caches() -> None:
    """Every ``functools.lru_cache`` in ``accelkit.*``, as bench_widgets clears them."""
    for name, module in list(sys.modules.items()):
        if name.startswith("accelkit") and module is not None:
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


CAPACITY_CASES = (  # lesson 08's plans, and the decision lab's chatbot row
    ("llama-3-8b", "H100", 1000, 0.05, 2048),
    ("llama-3-8b", "TPU v5e", 1000, 0.05, 2048),
    ("llama-3-8b", "TPU v5e", 1000, 0.02, 2048),
    ("llama-3-70b", "H100", 1000, 0.05, 1249),
    ("llama-3-70b", "TPU v5e", 1000, 0.05, 1249),
)


def capacity_milliseconds(model: str, chip: str, users: int, target: float, context: int
                          ) -> tuple[float, float]:
    """(wall, CPU) milliseconds of one cold capacity.plan call, median of five."""
    walls, cpus = [], []
    for _ in range(5):
        clear_caches()
        wall, cpu = time.perf_counter(), time.process_time()
        ak.capacity.plan(model, chip, concurrent_users=users, max_seconds_per_token=target,
                              context_tokens=context)
        walls.append((time.perf_counter() - wall) * 1e3)
        cpus.append((time.process_time() - cpu) * 1e3)
    return sorted(walls)[2], sorted(cpus)[2]


def main() -> None:
    train = per_call_microseconds(lambda: ak.training.estimate(
        model="llama-3-70b", tokens=15e12, chip="TPU v5p", n_chips=8960, mfu=0.4))
    decode = per_call_microseconds(lambda: ak.inference.decode_step(
        model="llama-3-70b", chip="TPU v5e", n_chips=16, batch=32, context_tokens=8192))
    prefill = per_call_microseconds(lambda: ak.inference.prefill(
        model="llama-3-70b", chip="TPU v5e", n_chips=16, batch=1, prompt_tokens=8192), 500)
    train_dp = per_call_microseconds(lambda: ak.training.estimate(
        model="llama-3-70b", tokens=15e12, chip="TPU v5p", n_chips=8960, mfu=0.4,
        batch_tokens=4e6))
    train_gpu = per_call_microseconds(lambda: ak.training.estimate(
        model="llama-3.1-405b", tokens=15.6e12, chip="H100", n_chips=16384, mfu=0.4,
        batch_tokens=16e6))
    decode_tp = per_call_microseconds(lambda: ak.inference.decode_step(
        model="llama-3-70b", chip="H100", n_chips=8, batch=32, context_tokens=8192))
    print(f"training.estimate        {train:8.1f} us per call")
    print(f"  + gradient reduction   {train_dp:8.1f} us per call (8,960 v5p, ICI+DCN collectives)")
    print(f"  + gradient reduction   {train_gpu:8.1f} us per call (16,384 H100, hierarchical)")
    print(f"inference.decode_step    {decode_tp:8.1f} us per call (8 H100, TP all-reduces)")
    print(f"inference.decode_step    {decode:8.1f} us per call")
    print(f"inference.prefill        {prefill:8.1f} us per call")

    # chips whose 8-chip tensor-parallel group the collectives can cost (NVLink or ICI figures)
    chip_names = [c.name for c in ak.chips.all()
                  if (c.scaleup_bytes_per_second if c.kind == "gpu" else c.link_bytes_per_second)
                  and (c.scaleup_domain_chips or 1) >= 8][:10]
    batches = np.arange(1, 1001)
    ak.inference.decode_sweep("llama-3-70b", chip_names, batches, n_chips=8,
                              context_tokens=8192)  # warm
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        sweep = ak.inference.decode_sweep("llama-3-70b", chip_names, batches, n_chips=8,
                                          context_tokens=8192)
        best = min(best, time.perf_counter() - start)
    points = sweep.seconds.size
    print(f"inference.decode_sweep   {points:,} points ({len(chip_names)} chips x "
          f"{batches.size} batches) in {best * 1e3:.2f} ms "
          f"({best / points * 1e9:.0f} ns per point; {decode * 1e-6 * points / best:,.0f}x "
          f"faster than {points:,} decode_step calls)")

    if "mixtral-8x7b" in ak.models.names():  # a mixture of experts: exact per-batch evaluation
        moe = per_call_microseconds(lambda: ak.inference.decode_step(
            model="mixtral-8x7b", chip="H100", n_chips=8, batch=32, context_tokens=8192), 200)
        start = time.perf_counter()
        ak.inference.decode_sweep("mixtral-8x7b", ["H100"], np.arange(1, 1001), n_chips=8,
                                  context_tokens=8192)
        print(f"inference.decode_step    {moe:8.1f} us per call (Mixtral 8x7B on 8 H100)")
        print(f"inference.decode_sweep   1,000 Mixtral batches in "
              f"{(time.perf_counter() - start) * 1e3:.0f} ms (one evaluation per batch)")

    for model, chip, users, target, context in CAPACITY_CASES:
        wall, cpu = capacity_milliseconds(model, chip, users, target, context)
        print(f"capacity.plan            {wall:8.1f} ms cold ({cpu:.1f} ms cpu): {model}, "
              f"{users:,} users on {chip} at {target * 1e3:.0f} ms/token, context {context:,}")


if __name__ == "__main__":
    main()
