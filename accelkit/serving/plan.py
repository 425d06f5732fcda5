"""The cheapest fleet whose simulation meets a TTFT and a TPOT limit at the 99th percentile.

    >>> from accelkit import serving
    >>> p = serving.capacity("llama-3-8b", "H100", arrival_rate=20.0, prompt_tokens=1000,
    ...                      output_tokens=250, ttft_p99_seconds=2.0, tpot_p99_seconds=0.05,
    ...                      requests=500)
    >>> p.n_chips, p.meets, p.fewer_meets
    (1, True, False)

For each tensor-parallel group size the chip allows (:func:`accelkit.tensor_parallel.
tensor_parallel_sizes`, or the one given as ``chips_per_replica``), the fewest replicas whose
simulated fleet (:func:`accelkit.serving.simulate`, the same requests, seed and options)
meets both limits: a lower bound from throughput first (no fleet of fewer replicas can carry
the offered tokens: one replica's throughput with every request queued at once, MLPerf's
Offline scenario, is the most it can give), then doubling until the limits are met, then
bisection. The plan with the fewest chips wins (the lowest $/h for one chip type), ties to the
lower TPOT, then the smaller group; one replica fewer is simulated too and, by construction,
misses a limit (``fewer_meets`` is False).

Statistical error, said where it matters: a 99th percentile over ``requests`` requests is
itself uncertain: about ``sqrt(0.01 · 0.99 · requests)`` requests either side of the rank
(±4.4 at 2,000 requests: the estimate is a percentile between about the 98.8th and the
99.2nd). Near a limit a different seed can move the plan by a replica.

:func:`accelkit.capacity.plan` is the steady-state estimate this refines: every user
mid-stream at one context, no arrivals, no prompt processing, no queueing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelkit import _validate, chips, models, tensor_parallel
from accelkit.serving.result import ServingResult
from accelkit.serving.simulation import lengths, simulate

#: Requests a capacity search simulates when lengths are given as numbers (a sequence of
#: lengths sets its own count).
DEFAULT_REQUESTS = 2000
#: The most replicas a search tries before it gives up on a group size.
MAX_REPLICAS = 100_000


class NoServingPlan(ValueError):
    """:func:`capacity` found no fleet: no group size fits the model with one request's cache,
    or none meets the limits even with a replica per request (each request alone is too slow:
    its prefill misses the TTFT limit or its decode the TPOT limit)."""


@dataclass(frozen=True)
class ServingPlan:
    """The cheapest fleet that meets both 99th-percentile limits (:func:`capacity`).

    ``replicas`` tensor-parallel groups of ``chips_per_replica`` chips, ``n_chips`` in all
    (with a separate prefill pool's, if one was given); ``result`` is the plan's simulation and
    ``fewer`` the simulation with one replica fewer (None for one replica), which misses a
    limit. ``throughput_bound_replicas`` is the fewest replicas whose throughput could carry
    the load at all (the search's start).
    """

    model: str
    chip: str
    arrival_rate: float
    ttft_p99_seconds: float           # the limits
    tpot_p99_seconds: float
    replicas: int
    chips_per_replica: int
    n_chips: int
    usd_per_hour: float | None
    usd_per_million_tokens: float | None
    ttft_p99: float                   # what the plan's simulation gives
    tpot_p99: float
    mean_in_flight_per_replica: float
    throughput_bound_replicas: int
    result: ServingResult
    fewer: ServingResult | None
    candidates: tuple[tuple[int, int, int], ...]   # (chips per replica, replicas, chips) tried

    @property
    def meets(self) -> bool:
        return self.result.meets(ttft_p99_seconds=self.ttft_p99_seconds,
                                 tpot_p99_seconds=self.tpot_p99_seconds)

    @property
    def fewer_meets(self) -> bool:
        return self.fewer is not None and self.fewer.meets(
            ttft_p99_seconds=self.ttft_p99_seconds, tpot_p99_seconds=self.tpot_p99_seconds)

    def __repr__(self) -> str:
        usd = ("no price" if self.usd_per_hour is None else
               f"${self.usd_per_hour:,.2f}/h, ${self.usd_per_million_tokens:,.3f}/M tokens")
        return (f"ServingPlan({self.model} on {self.chip} at {self.arrival_rate:g} requests/s: "
                f"{self.replicas:,} x {self.chips_per_replica} chips = {self.n_chips:,} chips, "
                f"TTFT p99 {self.ttft_p99 * 1e3:,.0f} ms (limit "
                f"{self.ttft_p99_seconds * 1e3:,.0f}), TPOT p99 {self.tpot_p99 * 1e3:,.1f} ms "
                f"(limit {self.tpot_p99_seconds * 1e3:,.1f}); {usd})")


def capacity(model: str | models.Model, chip: str | chips.Chip, *, arrival_rate: float,
             prompt_tokens: int | Sequence[int] | np.ndarray,
             output_tokens: int | Sequence[int] | np.ndarray, ttft_p99_seconds: float,
             tpot_p99_seconds: float, requests: int | None = None,
             chips_per_replica: int | None = None, seed: int = 0,
             **options: Any) -> ServingPlan:
    """The cheapest plan whose simulation meets ``ttft_p99_seconds`` and ``tpot_p99_seconds``,
    and one replica fewer would not (module docstring).

    Args:
        arrival_rate: requests per second offered to the fleet (> 0, finite).
        prompt_tokens, output_tokens: an int, or one length per request.
        ttft_p99_seconds, tpot_p99_seconds: the limits on the 99th percentiles (> 0).
        requests: requests simulated (default the lengths' count, or :data:`DEFAULT_REQUESTS`).
        chips_per_replica: search only this group size (default every size the chip allows).
        seed: the arrivals' seed, the same for every fleet tried.
        options: :func:`accelkit.serving.simulate`'s (``scheduler``, ``weight_dtype``,
            ``token_budget``, ...), the same for every fleet tried.
    Raises:
        NoServingPlan: no group size fits, or none meets the limits at any number of replicas.
        ValueError, TypeError: a bad argument (named).
    """
    m = tensor_parallel.transformer(model)
    the_chip = chips.get(chip)
    rate = _validate.positive_float("arrival_rate", arrival_rate, maximum=1e9)
    ttft = _validate.positive_float("ttft_p99_seconds", ttft_p99_seconds)
    tpot = _validate.positive_float("tpot_p99_seconds", tpot_p99_seconds)
    for name in ("replicas", "n_chips", "arrival_rate"):
        if name in options:
            raise TypeError(f"capacity() chooses {name}; pass chips_per_replica to fix the "
                            "group size")
    count = requests
    if count is None:
        sized = [v for v in (prompt_tokens, output_tokens) if not isinstance(v, (int, float))]
        count = len(sized[0]) if sized else DEFAULT_REQUESTS
    count = _validate.positive_int("requests", count, maximum=10**6)
    prompts = lengths("prompt_tokens", prompt_tokens, count)
    outputs = lengths("output_tokens", output_tokens, count)
    split = options.get("kv_cache_split", "even")
    if chips_per_replica is None:
        sizes = tensor_parallel.tensor_parallel_sizes(m, the_chip, split)
    else:
        size = _validate.positive_int("chips_per_replica", chips_per_replica, maximum=4096)
        tensor_parallel.check_group(m, the_chip, size, tensor_parallel.check_split(split))
        sizes = (size,)
    common = dict(arrival_rate=rate, requests=count, prompt_tokens=prompts,
                  output_tokens=outputs, seed=seed, **options)
    limits = dict(ttft_p99_seconds=ttft, tpot_p99_seconds=tpot)
    found: list[tuple[tuple[int, float, int], int, int, ServingResult, ServingResult | None,
                      int]] = []
    tried: list[tuple[int, int, int]] = []
    reasons: list[str] = []
    for tp in sizes:
        try:
            offline = simulate(m, the_chip, n_chips=tp, replicas=1,
                               **{**common, "arrival_rate": math.inf})
        except ValueError as why:       # the model or one request's cache does not fit
            reasons.append(f"{tp} chips: {why}")
            continue
        offered = rate * float(outputs.mean())
        bound = max(1, math.ceil(offered / offline.throughput_tokens_per_second))
        runs: dict[int, ServingResult] = {}

        def run(r: int) -> ServingResult:
            if r not in runs:
                runs[r] = simulate(m, the_chip, n_chips=tp, replicas=r, **common)
                tried.append((tp, r, runs[r].total_chips))
            return runs[r]

        # Double from the throughput bound until the limits are met; a replica per request
        # (no queueing at all) is the best any fleet can do, so stop there.
        alone = min(count, MAX_REPLICAS)
        low, high = 0, min(bound, alone)   # run(low) misses (or low is 0)
        while not run(high).meets(**limits):
            if high >= alone:
                break
            low, high = high, min(alone, 2 * high)
        if not runs[high].meets(**limits):
            best = runs[high]
            reasons.append(f"{tp} chips: even {high:,} replicas give TTFT p99 "
                           f"{best.ttft_p99 * 1e3:,.0f} ms and TPOT p99 "
                           f"{best.tpot_p99 * 1e3:,.1f} ms")
            continue
        while high - low > 1:
            mid = (low + high) // 2
            if run(mid).meets(**limits):
                high = mid
            else:
                low = mid
        # the throughput bound is a start, not a proof (a saturated replica recomputes
        # preempted work): step down while one replica fewer still meets the limits
        while high > 1 and run(high - 1).meets(**limits):
            high -= 1
        fewer = run(high - 1) if high > 1 else None
        plan = runs[high]
        found.append(((plan.total_chips, plan.tpot_p99, tp), tp, high, plan, fewer, bound))
    if not found:
        raise NoServingPlan(f"no fleet of {m.name} on {the_chip.name} meets TTFT p99 <= "
                            f"{ttft * 1e3:,.0f} ms and TPOT p99 <= {tpot * 1e3:,.1f} ms: "
                            + "; ".join(reasons))
    _, tp, replicas, plan, fewer, bound = min(found, key=lambda f: f[0])
    return ServingPlan(
        model=m.name, chip=the_chip.name, arrival_rate=rate, ttft_p99_seconds=ttft,
        tpot_p99_seconds=tpot, replicas=replicas, chips_per_replica=tp, n_chips=plan.total_chips,
        usd_per_hour=plan.usd_per_hour, usd_per_million_tokens=plan.usd_per_million_tokens,
        ttft_p99=plan.ttft_p99, tpot_p99=plan.tpot_p99,
        mean_in_flight_per_replica=plan.mean_in_flight / replicas, throughput_bound_replicas=bound,
        result=plan, fewer=fewer, candidates=tuple(tried))


__all__ = ["DEFAULT_REQUESTS", "MAX_REPLICAS", "NoServingPlan", "ServingPlan", "capacity"]
