"""A serving scenario priced on one chip: the SLO capacity plan the decision lab shows
(:func:`accelkit.scenarios.evaluate` calls :func:`outcome`).

* **A service** (users and latency limits): ``users`` people, each sending a request every
  ``interval_seconds`` on average (they read the answer and type the next question: an
  assumption the scenario names), make ``users / interval_seconds`` Poisson arrivals a second;
  with requests dispatched at random each of ``R`` replicas sees Poisson arrivals at
  ``1 / R`` of that rate, so the fleet meets a limit when one replica does at its share. For
  each group size tried (``n_chips``, or the two smallest tensor-parallel groups that hold the
  weights and a request), the replica's closed-form steady state
  (:func:`accelkit.serving.steady_state`) gives a **floor**: fewer replicas would load each
  past the rate where even its mean TPOT exceeds the limit, or past saturation (a long run
  would miss the limit; a run of :data:`REQUESTS` may not show it yet, since it starts with an
  empty replica). One replica is simulated at its share with the floor's replicas; if it misses
  a limit, the estimate's 99th percentile proposes a larger fleet and a bisection between the
  two finds the fewest replicas whose simulation meets both limits. The group sizes are tried
  in the order of their estimated fleets (ties to the smaller group), and a later one is
  searched only over fleets of fewer chips than the best simulated one (not at all when even
  its floor needs as many): the cheapest fleet wins, and of two with as many chips the one
  tried first. The percentiles the table shows are its replica's simulation.
* **A bulk job** (no users, no limits): one replica with every request queued at once, the
  group size with the lowest cost per token.

Sizes, said where they matter: :data:`REQUESTS` requests a run, so a 99th percentile is
uncertain by about ±1.4 ranks (between the 98.3rd and 99.7th percentiles, roughly); the
floor is a steady-state figure, so the plan can be a replica larger than
:func:`accelkit.serving.capacity` (which simulates whole fleets, from the throughput bound
down) finds. Runs are kept (a learner moving back to a value re-prices without simulating
again).

Speed, measured (``benchmarks/bench_widgets.py decision``, the course's 2-core machine with
other work on it, load average 1.2-1.5; every cache cleared before each control): a move
simulates 7 to 10 replicas of 200 requests (about 3-4 ms each) beside fourteen closed-form
estimates, where the five-load curve it replaces simulated 84. CPU medians per control went
from 530-690 ms to 43-50 ms for precision, 43-45 for the prompt, 37-40 for the output, 29-35
for the users and 24-37 for the latency limit: within the 50 ms budget on a quiet machine,
at its edge when others load it; a 4,000-token prompt is the slowest single move (about
105-120 ms: its long prompts make the floor miss, and each replica count tried is a run).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from accelkit import chips, dtypes, inference, models, serving_step, tensor_parallel
from accelkit.dtypes import DType
from accelkit.outcomes import FleetPlan, ServingOutcome
from accelkit.serving.result import ServingResult
from accelkit.serving.simulation import simulate
from accelkit.serving.steady import SteadyState, steady_state

#: Requests per simulated run in the lab (module docstring: the statistical error).
REQUESTS = 200
#: The most requests a bulk job's run queues at once.
BULK_REQUESTS = 3000
#: The most replicas a search tries for one group size before it gives up.
MAX_REPLICAS = 100_000


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


@functools.lru_cache(maxsize=512)
def _run(model: str, chip: str, n: int, weights: DType, prompt: int, output: int,
         rate: float, tp_overlap: bool = False) -> ServingResult:
    """One replica at ``rate`` requests per second (``inf``: all at once, with enough requests
    to fill the cache three times over, at most :data:`BULK_REQUESTS`). Kept: a learner moving
    back to a value, or the price, re-prices without simulating again."""
    requests = REQUESTS
    if math.isinf(rate):
        kv = dtypes.activation_dtype(weights)
        fit = inference.max_batch(model, chip, n, prompt + output, weights, kv)
        requests = min(BULK_REQUESTS, max(REQUESTS, 3 * fit))
    return simulate(model, chip, n_chips=n, arrival_rate=rate, requests=requests,
                    prompt_tokens=prompt, output_tokens=output, weight_dtype=weights,
                    compute_dtype="bf16", tp_overlap=tp_overlap)


def _steady(m: models.Transformer, chip: chips.Chip, n: int, weights: DType, prompt: int,
            output: int, tp_overlap: bool = False) -> SteadyState:
    return steady_state(m, chip, n_chips=n, prompt_tokens=prompt, output_tokens=output,
                        weight_dtype=weights, compute_dtype="bf16", tp_overlap=tp_overlap)


def fleet_bounds(state: SteadyState, rate: float, ttft_limit: float, tpot_limit: float
                 ) -> tuple[int, int] | None:
    """The floor and the estimate (replicas) of the fleet for ``rate`` requests/s from one
    replica's steady state (module docstring); None when even one request alone misses a
    limit."""
    floor = state.max_rate(ttft_p99_seconds=ttft_limit, tpot_p99_seconds=tpot_limit,
                           percentile="mean")
    if floor <= 0:
        return None
    guess = state.max_rate(ttft_p99_seconds=ttft_limit, tpot_p99_seconds=tpot_limit)
    low = max(1, math.ceil(rate / floor * (1 - 1e-12)))
    high = low if guess <= 0 else max(low, math.ceil(rate / guess * (1 - 1e-12)))
    return low, high


def fewest_replicas(model: str, chip: str, n: int, weights: DType, prompt: int, output: int,
                    rate: float, ttft_limit: float, tpot_limit: float, floor: int,
                    estimate: int, most: int = MAX_REPLICAS, tp_overlap: bool = False
                    ) -> tuple[int, ServingResult, bool] | None:
    """A fleet whose replica, simulated at its share of ``rate``, meets both limits: the
    ``floor`` (the fewest replicas the steady state allows) if its simulation meets, else the
    ``estimate`` if it meets, else the fewest above it that meet, found by steps that double
    and a bisection (None if even ``most`` replicas, by default :data:`MAX_REPLICAS`, miss: a
    search for a fleet cheaper than one in hand stops there). Each
    replica count tried costs one simulation. When the floor misses and the estimate meets,
    the fewest that meet lie between them and are not searched (a replica count between costs
    a simulation each): the plan is then at most ``estimate - floor - 1`` replicas larger than
    the fewest; the third value says whether one replica fewer is known to miss (the floor, or
    one fewer simulated and missing), and the lab's note says when it is not. ``tp_overlap``
    as :func:`accelkit.serving.simulate`."""
    def run(r: int) -> ServingResult:
        return _run(model, chip, n, weights, prompt, output, rate / r, tp_overlap)

    def meets(r: int) -> bool:
        return run(r).meets(ttft_p99_seconds=ttft_limit, tpot_p99_seconds=tpot_limit)

    most = min(most, MAX_REPLICAS)
    if floor > most:
        return None
    if meets(floor):
        return floor, run(floor), True
    start = max(estimate, floor + 1)
    if start > most:
        return None
    if meets(start):
        return start, run(start), start == floor + 1
    # past the estimate: steps that double until one meets, then a bisection between the
    # last miss and the first meet (a replica's percentiles fall as its share falls)
    missed, r, step = start, start, 1
    while True:
        if r >= most:
            return None
        r = min(most, r + step)
        step *= 2
        if meets(r):
            break
        missed = r
    while r - missed > 1:
        mid = (r + missed) // 2
        if meets(mid):
            r = mid
        else:
            missed = mid
    return r, run(r), True


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
            usd_per_hour: float | None, tp_overlap: bool = False) -> ServingOutcome:
    """The scenario's :class:`accelkit.outcomes.ServingOutcome` on ``chip`` (module docstring);
    ``tp_overlap`` (:data:`accelkit.serving_step.TP_OVERLAP`, default False: the all-reduces on
    the critical path) as :func:`accelkit.serving.simulate`, in every simulation and estimate."""
    overlap = serving_step.check_tp_overlap(tp_overlap)
    m = tensor_parallel.transformer(model)
    sizes = ((n_chips,) if n_chips is not None else
             group_sizes(m, chip, weights, prompt, output))
    notes: list[str] = []
    service = users is not None and ttft_limit is not None and tpot_limit is not None
    rate = users / interval_seconds if users is not None and service and interval_seconds \
        else None
    best: tuple[float, int, FleetPlan, _Point] | None = None
    if service:
        best = _service_plan(m, chip, sizes, weights, rate, prompt,  # type: ignore[arg-type]
                             output, ttft_limit, tpot_limit,  # type: ignore[arg-type]
                             usd_per_hour, notes, overlap)
    for n in () if service else sizes:
        try:
            run = _Point.of(_run(m.name, chip.name, n, weights, prompt, output, math.inf,
                                 overlap))
        except (ValueError, chips.MissingFigureError) as why:
            notes.append(f"{n} chips a replica: {why}")
            continue
        hourly = None if usd_per_hour is None else usd_per_hour * n
        per_m = (None if hourly is None else
                 hourly / (run.throughput_tokens_per_second * 3600.0) * 1e6)
        plan = FleetPlan(1, n, n, run.completed_per_second, hourly, per_m)
        key_ = (per_m if per_m is not None else n / run.throughput_tokens_per_second, n)
        if best is None or key_ < best[:2]:
            best = (*key_, plan, run)
    if best is None:
        return _unplanned(key, m, chip, sizes, weights, users, rate, prompt, output,
                          ttft_limit, tpot_limit, usd_per_hour, notes)
    _, n, plan, run = best
    in_flight = run.mean_batch
    context = prompt + output // 2
    step = inference.decode_step(m, chip, n, max(1, round(in_flight)), context, weights,
                                 dtypes.activation_dtype(weights), tp_overlap=overlap)
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
                     f"{step.communication_seconds / step.seconds:.0%} of a decode step"
                     + (" (run behind its kernels: tp_overlap)" if overlap else ""))
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


def _service_plan(m: models.Transformer, chip: chips.Chip, sizes: tuple[int, ...],
                  weights: DType, rate: float, prompt: int, output: int, ttft_limit: float,
                  tpot_limit: float, usd_per_hour: float | None, notes: list[str],
                  tp_overlap: bool = False) -> tuple[float, int, FleetPlan, _Point] | None:
    """The cheapest simulated fleet over the group sizes (module docstring), or None."""
    bounds: list[tuple[int, int, int, int]] = []     # (estimated chips, n, floor, estimate)
    for n in sizes:
        try:
            found = fleet_bounds(_steady(m, chip, n, weights, prompt, output, tp_overlap),
                                 rate, ttft_limit, tpot_limit)
        except (ValueError, chips.MissingFigureError) as why:
            notes.append(f"{n} chips a replica: {why}")
            continue
        if found is None:
            notes.append(f"{n} chips a replica: one request alone misses a limit")
            continue
        bounds.append((found[1] * n, n, *found))
    best: tuple[float, int, FleetPlan, _Point] | None = None
    for _, n, floor, estimate in sorted(bounds):
        if best is not None and floor * n >= best[0]:
            continue   # even its floor is no cheaper than a fleet already simulated
        # a later group size is searched only over fleets cheaper than the best in hand
        most = MAX_REPLICAS if best is None else (int(best[0]) - 1) // n
        try:
            searched = fewest_replicas(m.name, chip.name, n, weights, prompt, output, rate,
                                       ttft_limit, tpot_limit, floor, estimate, most,
                                       tp_overlap)
        except (ValueError, chips.MissingFigureError) as why:
            notes.append(f"{n} chips a replica: {why}")
            continue
        if searched is None:
            if best is None:
                notes.append(f"{n} chips a replica: even {MAX_REPLICAS:,} replicas miss a "
                             "limit")
            continue
        replicas, result, proven = searched
        if not proven:
            notes.append(f"{n} chips a replica: {floor:,} replicas miss a limit and "
                         f"{replicas:,} meet; between them was not simulated")
        total = replicas * n
        hourly = None if usd_per_hour is None else usd_per_hour * total
        plan = FleetPlan(replicas, n, total, rate / replicas, hourly,
                         None if hourly is None else hourly / (rate * output * 3600.0) * 1e6)
        if best is None or total < best[0]:
            best = (float(total), n, plan, _Point.of(result))
    return best


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


__all__ = ["BULK_REQUESTS", "MAX_REPLICAS", "REQUESTS", "fewest_replicas", "fleet_bounds",
           "group_sizes", "outcome"]
