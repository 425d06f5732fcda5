"""How fast the serving simulation runs: 10,000 requests per configuration (target <= 1 s), a
capacity search, a decision-lab move (target <= 50 ms median), and building lesson 08's
serving widget (every load curve it draws is simulated when it is built: 3 prompt lengths x 3
schedulers x an Offline run and 8 loads, 1,000 requests each).

Run: ``python benchmarks/bench_serving.py``. CPU time (``time.process_time``) is what is
compared with the targets: the machine is shared, so the wall clock also counts waiting for a
core (both are printed). Every figure is a fresh run with the serving caches cleared, so a
configuration's first simulation, tables and all, is what is timed.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accelkit import scenarios, serving  # noqa: E402

TARGET_SIMULATION_SECONDS = 1.0
TARGET_MOVE_MS = 50.0


def _clear() -> None:
    """Every functools cache of the library, as benchmarks/bench_widgets.py clears them."""
    for name, module in list(sys.modules.items()):
        if name.startswith("accelkit") and module is not None:
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def _lengths(requests: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(50, 2000, requests), rng.integers(10, 600, requests)


#: (label, simulate arguments); lengths drawn per request (50-2,000 prompt, 10-600 output).
CASES = (
    ("Llama-3-8B, 1 H100, 5 requests/s (light: long quiet decode runs)",
     dict(model="llama-3-8b", chip="H100", arrival_rate=5.0)),
    ("Llama-3-8B, 1 H100, 20 requests/s (near the knee)",
     dict(model="llama-3-8b", chip="H100", arrival_rate=20.0)),
    ("Llama-3-8B, 1 H100, every request at once (Offline, preemption)",
     dict(model="llama-3-8b", chip="H100", arrival_rate=math.inf)),
    ("Llama-3-8B, 1 H100, static batching, 10 requests/s",
     dict(model="llama-3-8b", chip="H100", arrival_rate=10.0, scheduler="static")),
    ("Llama-3-8B, 1 H100, chunked prefill (512), 10 requests/s",
     dict(model="llama-3-8b", chip="H100", arrival_rate=10.0, token_budget=512,
          chunked_prefill=True)),
    ("Llama-3-70B, 4 x 2 H100, 30 requests/s",
     dict(model="llama-3-70b", chip="H100", n_chips=2, replicas=4, arrival_rate=30.0)),
    ("Llama-2-70B fp8, 8 x 1 H200, 101 requests/s (the MLPerf v4.1 Server row)",
     dict(model="llama-2-70b", chip="H200", replicas=8, arrival_rate=101.0, weight_dtype="fp8",
          kv_dtype="fp8", compute_dtype="fp8", max_batch=896, token_budget=4096,
          kv_memory_fraction=0.9, dispatch="least_loaded")),
    ("Mixtral-8x7B, 2 H100 (expert-parallel), 20 requests/s",
     dict(model="mixtral-8x7b", chip="H100", n_chips=2, arrival_rate=20.0)),
    ("Llama-3-70B, 8 H100 + Llama-3-8B draft (speculative), 5 requests/s",
     dict(model="llama-3-70b", chip="H100", n_chips=8, arrival_rate=5.0,
          draft_model="llama-3-8b", acceptance_rate=0.7)),
)


def main() -> int:
    load = os.getloadavg()
    print(f"cpus {os.cpu_count()}  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    prompts, outputs = _lengths(10_000)
    print(f"\n10,000 requests per simulation (target <= {TARGET_SIMULATION_SECONDS:.0f} s CPU)")
    print(f"{'configuration':<74}{'cpu s':>7}{'wall s':>8}{'iterations':>12}")
    over = 0
    for label, kw in CASES:
        _clear()
        started, cpu = time.perf_counter(), time.process_time()
        r = serving.simulate(requests=10_000, prompt_tokens=prompts, output_tokens=outputs,
                             **kw)  # type: ignore[arg-type]
        cpu, wall = time.process_time() - cpu, time.perf_counter() - started
        flag = "  OVER" if cpu > TARGET_SIMULATION_SECONDS else ""
        over += cpu > TARGET_SIMULATION_SECONDS
        print(f"{label:<74}{cpu:>7.2f}{wall:>8.2f}{r.iterations:>12,}{flag}")

    print("\nserving.capacity (exact search), Llama-3-70B on H100, 30 requests/s, 2,000 requests")
    _clear()
    started, cpu = time.process_time(), time.perf_counter()
    plan = serving.capacity("llama-3-70b", "H100", arrival_rate=30.0, prompt_tokens=1000,
                            output_tokens=250, ttft_p99_seconds=2.0, tpot_p99_seconds=0.05,
                            requests=2000)
    print(f"  {time.process_time() - started:.2f} s CPU, {time.perf_counter() - cpu:.2f} s wall, "
          f"{len(plan.candidates)} fleets simulated: {plan}")

    print(f"\ndecision-lab serving moves (7 chips; target <= {TARGET_MOVE_MS:.0f} ms median)")
    moves = {"users": [300, 3000, 10000, 100], "latency_ms": [20.0, 30.0, 100.0, 200.0],
             "price_source": ["lowest", "list"], "prompt_tokens": [250, 2000, 4000],
             "output_tokens": [100, 500, 1000], "precision": ["int8", "fp8"]}
    for knob, values in moves.items():
        _clear()
        scenarios.compare("chatbot")       # the lab's first render, as when it is built
        times = []
        for value in values:
            started = time.process_time()
            scenarios.compare("chatbot", **{knob: value})  # type: ignore[arg-type]
            times.append((time.process_time() - started) * 1e3)
        flag = "  OVER" if statistics.median(times) > TARGET_MOVE_MS else ""
        print(f"  {knob:<14} median {statistics.median(times):7.1f} ms, max {max(times):7.1f} "
              f"ms CPU (each a first visit){flag}")

    from accelkit import widgets
    _clear()
    started, cpu = time.perf_counter(), time.process_time()
    widgets.serving_load_explorer()
    print(f"\nlesson 08's serving_load_explorer built in {time.process_time() - cpu:.2f} s CPU, "
          f"{time.perf_counter() - started:.2f} s wall (81 simulations of 1,000 requests)")
    return 0 if not over else 1


if __name__ == "__main__":
    raise SystemExit(main())
