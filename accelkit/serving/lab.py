"""A serving scenario priced on one chip: the SLO capacity plan the decision lab shows
(:func:`accelkit.scenarios.evaluate` calls :func:`outcome`).

* **A service** (users and latency limits): ``users`` people, each sending a request every
  ``interval_seconds`` on average (they read the answer and type the next question: an
  assumption the scenario names), make ``users / interval_seconds`` Poisson arrivals a second.
  For each group size tried (``n_chips``, or the two smallest tensor-parallel groups that hold
  the weights and a request), one replica's :func:`accelkit.serving.load_curve` sizes the fleet
  (:meth:`~accelkit.serving.LoadCurve.plan`: the fewest replicas that keep each under the
  highest load that met both 99th-percentile limits); the cheapest fleet wins, and one replica
  is read at the plan's rate for the percentiles the table shows (interpolated between the
  simulated loads).
* **A bulk job** (no users, no limits): one replica with every request queued at once, the
  group size with the lowest cost per token.

Sizes, said where they matter: :data:`REQUESTS` requests a run, so a 99th percentile is
uncertain by about ±1.4 ranks (between the 98.3rd and 99.7th percentiles, roughly); the curve
is simulated at :data:`FRACTIONS` of saturation, so a plan may be a replica larger than the
exact search of :func:`accelkit.serving.capacity` finds. Runs are kept (a learner moving the
users, the latency limit or the price re-prices without simulating again).

Speed, measured (benchmarks/bench_widgets.py decision_explorer, the course's 2-core machine):
moving the users, a latency limit, the price or the chart re-prices seven chips in 9-15 ms;
a new prompt or output length or precision simulates 7 chips x 2 group sizes x 6 runs of
200 requests, about 0.55 s on its first visit (10 ms when revisited). That misses the 50 ms
budget on purpose: the lab's one answer is a simulated one, and fewer requests would make its
99th percentiles noise.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from accelkit import chips, dtypes, inference, models, tensor_parallel
from accelkit.dtypes import DType
from accelkit.outcomes import FleetPlan, ServingOutcome
from accelkit.serving.curve import LoadCurve, load_curve
from accelkit.serving.result import ServingResult
from accelkit.serving.simulation import simulate

#: Requests per simulated run in the lab (module docstring: the statistical error).
REQUESTS = 200
#: The most requests a bulk job's run queues at once.
BULK_REQUESTS = 3000
#: The loads each group size is simulated at, as fractions of its saturation rate.
FRACTIONS = (0.2, 0.4, 0.6, 0.75, 0.9)


@functools.lru_cache(maxsize=256)
def _curve(model: str, chip: str, n: int, weights: DType, prompt: int, output: int
           ) -> LoadCurve:
    """One replica's load curve. Kept: the lab re-prices the same curves whenever a learner
    moves the users, the latency limit or the price (benchmarks/bench_widgets.py
    decision_explorer measures a move)."""
    return load_curve(model, chip, n_chips=n, prompt_tokens=prompt, output_tokens=output,
                      requests=REQUESTS, fractions=FRACTIONS, weight_dtype=weights,
                      compute_dtype="bf16")


@dataclass(frozen=True)
class _Point:
    """What the table shows of one replica at one load."""

    ttft_p50: float
    ttft_p99: float
    tpot_p50: float
    tpot_p99: float
    mean_batch: float
    completed_per_second: float
    throughput_tokens_per_second: float

    @classmethod
    def of(cls, r: ServingResult) -> _Point:
        return cls(r.ttft_p50, r.ttft_p99, r.tpot_p50, r.tpot_p99, r.mean_batch,
                   r.completed_per_second, r.throughput_tokens_per_second)


def _at(curve: LoadCurve, rate: float) -> _Point:
    """One replica's figures at ``rate``, interpolated between the loads its curve simulated
    (below the lightest, that one's: an upper bound, since latency only rises with load)."""
    def at(values: np.ndarray) -> float:
        return float(np.interp(rate, curve.rates, values))
    return _Point(at(curve.ttft_p50), at(curve.ttft_p99), at(curve.tpot_p50),
                  at(curve.tpot_p99), at(curve.mean_batch), rate,
                  rate * curve.mean_output_tokens)


@functools.lru_cache(maxsize=512)
def _run(model: str, chip: str, n: int, weights: DType, prompt: int, output: int,
         rate: float) -> ServingResult:
    """One replica at ``rate`` requests per second (``inf``: all at once, with enough requests
    to fill the cache three times over, at most :data:`BULK_REQUESTS`). Kept as above."""
    requests = REQUESTS
    if math.isinf(rate):
        kv = dtypes.activation_dtype(weights)
        fit = inference.max_batch(model, chip, n, prompt + output, weights, kv)
        requests = min(BULK_REQUESTS, max(REQUESTS, 3 * fit))
    return simulate(model, chip, n_chips=n, arrival_rate=rate, requests=requests,
                    prompt_tokens=prompt, output_tokens=output, weight_dtype=weights,
                    compute_dtype="bf16")


def group_sizes(m: models.Transformer, chip: chips.Chip, weights: DType, prompt: int,
                output: int) -> tuple[int, ...]:
    """The two smallest tensor-parallel group sizes whose HBM holds the weights and one
    request's whole cache (bigger groups add chips and collectives to every step)."""
    kv = dtypes.activation_dtype(weights)
    fit = [n for n in tensor_parallel.tensor_parallel_sizes(m, chip)
           if inference.max_batch(m, chip, n, prompt + output, weights, kv) >= 1]
    return tuple(fit[:2])


def outcome(key: str, model: str, chip: chips.Chip, *, n_chips: int | None, weights: DType,
            users: int | None, interval_seconds: float | None, prompt: int, output: int,
            ttft_limit: float | None, tpot_limit: float | None, work: float,
            usd_per_hour: float | None) -> ServingOutcome:
    """The scenario's :class:`accelkit.outcomes.ServingOutcome` on ``chip`` (module docstring)."""
    m = tensor_parallel.transformer(model)
    sizes = ((n_chips,) if n_chips is not None else
             group_sizes(m, chip, weights, prompt, output))
    notes: list[str] = []
    service = users is not None and ttft_limit is not None and tpot_limit is not None
    rate = users / interval_seconds if users is not None and service and interval_seconds \
        else None
    best: tuple[float, int, FleetPlan, _Point] | None = None
    for n in sizes:
        try:
            if service:
                curve = _curve(m.name, chip.name, n, weights, prompt, output)
                cplan = curve.plan(rate, ttft_p99_seconds=ttft_limit,  # type: ignore[arg-type]
                                   tpot_p99_seconds=tpot_limit)  # type: ignore[arg-type]
                if cplan is None:
                    notes.append(f"{n} chips a replica: even {curve.rates[0]:.2g} requests/s "
                                 f"give TTFT p99 {curve.ttft_p99[0] * 1e3:,.0f} ms and TPOT p99 "
                                 f"{curve.tpot_p99[0] * 1e3:,.1f} ms")
                    continue
                hourly = None if usd_per_hour is None else usd_per_hour * cplan.n_chips
                tokens = rate * output  # type: ignore[operator]
                plan = FleetPlan(cplan.replicas, n, cplan.n_chips, cplan.rate_per_replica,
                                 hourly, None if hourly is None else
                                 hourly / (tokens * 3600.0) * 1e6)
                run = _at(curve, cplan.rate_per_replica)
                key_ = (float(cplan.n_chips), n)
            else:
                run = _Point.of(_run(m.name, chip.name, n, weights, prompt, output, math.inf))
                hourly = None if usd_per_hour is None else usd_per_hour * n
                per_m = (None if hourly is None else
                         hourly / (run.throughput_tokens_per_second * 3600.0) * 1e6)
                plan = FleetPlan(1, n, n, run.completed_per_second, hourly, per_m)
                key_ = (per_m if per_m is not None else n / run.throughput_tokens_per_second, n)
        except (ValueError, chips.MissingFigureError) as why:
            notes.append(f"{n} chips a replica: {why}")
            continue
        if best is None or key_ < best[:2]:
            best = (*key_, plan, run)
    if best is None:
        return _unplanned(key, m, chip, sizes, weights, users, rate, prompt, output,
                          ttft_limit, tpot_limit, usd_per_hour, notes)
    _, n, plan, run = best
    in_flight = run.mean_batch
    context = prompt + output // 2
    step = inference.decode_step(m, chip, n, max(1, round(in_flight)), context, weights,
                                 dtypes.activation_dtype(weights))
    per_replica = plan.rate_per_replica
    flops = per_replica * (prompt + output) * 2.0 * m.active_params
    peak = n * chip.peak_flops("bf16")
    tokens = per_replica * output * plan.replicas
    seconds = work / tokens
    usd = None if plan.usd_per_million_tokens is None else work * plan.usd_per_million_tokens / 1e6
    energy = None if chip.watts is None else chip.watts * plan.n_chips * seconds
    met = None
    if service:
        met = (run.ttft_p99 <= ttft_limit  # type: ignore[operator]
               and run.tpot_p99 <= tpot_limit)  # type: ignore[operator]
        notes.insert(0, f"{plan.replicas:,} replicas of {n} chips for {rate:,.1f} requests/s "
                        f"({users:,} users, one request every {interval_seconds:g} s each)")
    else:
        notes.insert(0, f"{n} chips a replica, every request queued: "
                        f"{run.throughput_tokens_per_second:,.0f} tokens/s")
    if n > 1:
        notes.append(f"tensor-parallel collectives over {n} chips are "
                     f"{step.communication_seconds / step.seconds:.0%} of a decode step")
    held = m.weight_bytes(weights) + in_flight * context * m.kv_cache_bytes_per_token(
        dtypes.activation_dtype(weights))
    return ServingOutcome(
        scenario=key, chip=chip.name, n_chips=n, batch=max(1, round(in_flight)),
        precision=weights, seconds=seconds, usd=usd, usd_per_hour=usd_per_hour, joules=energy,
        utilization=flops / peak, bound=step.bound, fits=True,
        usd_per_million=plan.usd_per_million_tokens, memory_bytes=held,
        hbm_bytes=n * float(chip.require("hbm_bytes")), note="; ".join(notes),
        arrival_rate=rate, prompt_tokens=prompt, output_tokens=output,
        ttft_limit_seconds=ttft_limit, tpot_limit_seconds=tpot_limit,
        ttft_p99_seconds=run.ttft_p99, tpot_p99_seconds=run.tpot_p99,
        tokens_per_second_per_replica=per_replica * output if service
        else run.throughput_tokens_per_second,
        meets_latency=met, communication_seconds=step.communication_seconds, plan=plan)


def _unplanned(key: str, m: models.Transformer, chip: chips.Chip, sizes: tuple[int, ...],
               weights: DType, users: int | None, rate: float | None, prompt: int, output: int,
               ttft_limit: float | None, tpot_limit: float | None,
               usd_per_hour: float | None, notes: list[str]) -> ServingOutcome:
    """No fleet: the smallest group's batch-1 figures, marked as missing the limits (or not
    fitting)."""
    n = sizes[0] if sizes else max(tensor_parallel.tensor_parallel_sizes(m, chip))
    kv = dtypes.activation_dtype(weights)
    fits = inference.max_batch(m, chip, n, prompt + output, weights, kv) >= 1
    pre = inference.prefill(m, chip, n, 1, prompt, weights, kv)
    dec = inference.decode_step(m, chip, n, 1, prompt, weights, kv)
    if not fits:
        notes.insert(0, f"does not fit: {dec.message}")
    return ServingOutcome(
        scenario=key, chip=chip.name, n_chips=n, batch=1, precision=weights,
        seconds=0.0, usd=None, usd_per_hour=usd_per_hour, joules=None, utilization=0.0,
        bound=dec.bound, fits=fits, usd_per_million=None, memory_bytes=dec.memory_bytes,
        hbm_bytes=dec.hbm_bytes, note="; ".join(["no fleet meets the limits"] + notes),
        arrival_rate=rate, prompt_tokens=prompt, output_tokens=output,
        ttft_limit_seconds=ttft_limit, tpot_limit_seconds=tpot_limit,
        ttft_p99_seconds=pre.seconds, tpot_p99_seconds=dec.seconds,
        tokens_per_second_per_replica=0.0, meets_latency=False if ttft_limit else None,
        communication_seconds=dec.communication_seconds, plan=None)


__all__ = ["BULK_REQUESTS", "FRACTIONS", "REQUESTS", "group_sizes", "outcome"]
