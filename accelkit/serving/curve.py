"""One replica's latency against its load, simulated at a ladder of arrival rates, and the
fleet that curve sizes: what lesson 08's serving widget draws and the decision lab plans with.

    >>> from accelkit import serving
    >>> c = serving.load_curve("llama-3-8b", "H100", prompt_tokens=1000, output_tokens=250,
    ...                        requests=200)
    >>> bool(c.ttft_p99[-1] > c.ttft_p99[0]), bool(c.rates[-1] > c.saturation_rate)
    (True, True)

:func:`load_curve` first runs the replica with every request queued at once (MLPerf's Offline
scenario): the requests per second it completes is its **saturation** rate. It then simulates
Poisson arrivals at :data:`FRACTIONS` of that rate (the last beyond it, where the queue grows
without bound), each run the same requests and seed, and keeps the percentiles at each rate.

:meth:`LoadCurve.plan` sizes a fleet from it: with requests dispatched to replicas at random,
each of ``R`` replicas sees Poisson arrivals at ``arrival_rate / R``, so the fleet meets a limit
when one replica does at that rate; the plan takes the fewest replicas whose per-replica rate is
at most the highest simulated rate that met both limits. It is a cheaper cousin of
:func:`accelkit.serving.capacity` (which simulates each fleet it tries, round-robin): its
resolution is the ladder's step (a plan may be one replica larger), and with ``requests``
requests per run a 99th percentile is uncertain by about ``sqrt(0.01 · requests)`` requests of
rank (±1.5 at 240: roughly a percentile between the 98.4th and the 99.6th).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelkit import _validate, models
from accelkit.serving.result import frozen
from accelkit.serving.simulation import simulate

#: Arrival rates simulated, as fractions of the replica's saturation rate: light load, the
#: knee and beyond it.
FRACTIONS = (0.1, 0.25, 0.4, 0.55, 0.7, 0.8, 0.9, 1.0, 1.25)


@dataclass(frozen=True)
class CurvePlan:
    """A fleet sized from a :class:`LoadCurve` (:meth:`LoadCurve.plan`)."""

    replicas: int
    chips_per_replica: int
    n_chips: int
    rate_per_replica: float           # requests per second each replica sees
    tested_rate: float                # the highest simulated rate that met both limits
    usd_per_hour: float | None        # the fleet
    usd_per_million_tokens: float | None


@dataclass(frozen=True)
class LoadCurve:
    """One replica's percentiles (seconds) at each simulated arrival rate (requests/s)."""

    model: str
    chip: str
    n_chips: int
    requests: int
    mean_prompt_tokens: float
    mean_output_tokens: float
    saturation_rate: float            # requests/s with every request queued at once
    saturation_tokens_per_second: float
    rates: np.ndarray
    ttft_p50: np.ndarray
    ttft_p99: np.ndarray
    tpot_p50: np.ndarray
    tpot_p99: np.ndarray
    mean_in_flight: np.ndarray
    mean_batch: np.ndarray            # requests the replica holds (admitted), on average
    usd_per_hour: float | None        # one replica; None without a price

    def max_rate(self, *, ttft_p99_seconds: float, tpot_p99_seconds: float) -> float:
        """The highest simulated rate below saturation whose p99s meet both limits (0 if none
        does). A rate at or past saturation never counts: a long run's queue grows without
        bound there, however a short run of ``requests`` looks."""
        ttft = _validate.positive_float("ttft_p99_seconds", ttft_p99_seconds)
        tpot = _validate.positive_float("tpot_p99_seconds", tpot_p99_seconds)
        ok = ((self.ttft_p99 <= ttft) & ((self.tpot_p99 <= tpot) | np.isnan(self.tpot_p99))
              & (self.rates < self.saturation_rate * (1 - 1e-9)))
        # latency rises with load: the rates that meet the limits are the lowest ones
        met = 0
        while met < ok.size and ok[met]:
            met += 1
        return float(self.rates[met - 1]) if met else 0.0

    def plan(self, arrival_rate: float, *, ttft_p99_seconds: float,
             tpot_p99_seconds: float) -> CurvePlan | None:
        """The fewest replicas that keep each one at or below :meth:`max_rate` (None when even
        the lightest simulated load misses a limit)."""
        rate = _validate.positive_float("arrival_rate", arrival_rate, maximum=1e9)
        top = self.max_rate(ttft_p99_seconds=ttft_p99_seconds, tpot_p99_seconds=tpot_p99_seconds)
        if top <= 0:
            return None
        replicas = max(1, math.ceil(rate / top * (1 - 1e-12)))
        usd = None if self.usd_per_hour is None else self.usd_per_hour * replicas
        tokens = rate * self.mean_output_tokens
        return CurvePlan(replicas=replicas, chips_per_replica=self.n_chips,
                         n_chips=replicas * self.n_chips, rate_per_replica=rate / replicas,
                         tested_rate=top, usd_per_hour=usd,
                         usd_per_million_tokens=None if usd is None else
                         usd / (tokens * 3600.0) * 1e6)


def load_curve(model: str | models.Model, chip: Any, *, n_chips: int = 1,
               prompt_tokens: int | Sequence[int] | np.ndarray,
               output_tokens: int | Sequence[int] | np.ndarray, requests: int = 240,
               fractions: Sequence[float] = FRACTIONS, rates: Sequence[float] | None = None,
               seed: int = 0, **options: Any) -> LoadCurve:
    """Simulate one replica at :data:`FRACTIONS` of its saturation rate (module docstring).

    Args:
        requests: requests per run (each run the same lengths and seed).
        fractions: increasing fractions of the saturation rate to simulate (> 0).
        rates: increasing arrival rates (requests/s) to simulate instead of ``fractions`` (to
            set several replicas' curves on one axis).
        options: :func:`accelkit.serving.simulate`'s, the same for every run.
    Raises:
        ValueError, TypeError: as :func:`accelkit.serving.simulate`; fractions not increasing.
    """
    name, given = ("fractions", fractions) if rates is None else ("rates", rates)
    steps = [_validate.positive_float(name, f, maximum=1e9) for f in given]
    if not steps or any(b <= a for a, b in zip(steps, steps[1:])):
        raise ValueError(f"{name} must be a non-empty increasing sequence of numbers > 0")
    for name in ("replicas", "arrival_rate"):
        if name in options:
            raise TypeError(f"load_curve() simulates one replica at its own rates: no {name}")
    common = dict(n_chips=n_chips, requests=requests, prompt_tokens=prompt_tokens,
                  output_tokens=output_tokens, seed=seed, **options)
    full = simulate(model, chip, arrival_rate=math.inf, **common)
    saturation = full.completed_per_second
    scale = saturation if rates is None else 1.0
    runs = [simulate(model, chip, arrival_rate=f * scale, **common) for f in steps]
    price = full.usd_per_hour
    return LoadCurve(
        model=full.model, chip=full.chip, n_chips=full.n_chips, requests=full.requests,
        mean_prompt_tokens=float(full.prompt_tokens.mean()),
        mean_output_tokens=float(full.output_tokens.mean()), saturation_rate=saturation,
        saturation_tokens_per_second=full.throughput_tokens_per_second,
        rates=frozen(np.array([r.arrival_rate for r in runs])),
        ttft_p50=frozen(np.array([r.ttft_p50 for r in runs])),
        ttft_p99=frozen(np.array([r.ttft_p99 for r in runs])),
        tpot_p50=frozen(np.array([r.tpot_p50 for r in runs])),
        tpot_p99=frozen(np.array([r.tpot_p99 for r in runs])),
        mean_in_flight=frozen(np.array([r.mean_in_flight for r in runs])),
        mean_batch=frozen(np.array([r.mean_batch for r in runs])),
        usd_per_hour=price)


#: The schedulers :func:`scheduler_curves` compares: (label, :func:`accelkit.serving.simulate`
#: options); the first sets the rates the others run at.
SCHEDULES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("continuous batching", {}),
    ("continuous, chunked prefill (512-token budget)", {"token_budget": 512, "chunked_prefill": True}),
    ("static batching", {"scheduler": "static"}))
#: Their loads: fractions of the continuous replica's saturation rate at each prompt length.
SCHEDULE_LOADS = (0.1, 0.3, 0.5, 0.7, 0.85, 1.0, 1.2, 1.5)


def scheduler_curves(model: str | models.Model, chip: Any, *, prompts: Sequence[int],
                     output_tokens: int, requests: int = 240
                     ) -> dict[tuple[str, int], LoadCurve]:
    """Each of :data:`SCHEDULES`' load curves at each prompt length, keyed (label, prompt): the
    continuous replica at :data:`SCHEDULE_LOADS` of its own saturation rate, the other
    schedulers at the same arrival rates, so their latencies compare at equal load.

    Raises:
        ValueError, TypeError: as :func:`load_curve`.
    """
    curves: dict[tuple[str, int], LoadCurve] = {}
    (first, options), *others = SCHEDULES
    for prompt in prompts:
        reference = load_curve(model, chip, prompt_tokens=prompt, output_tokens=output_tokens,
                               requests=requests, fractions=SCHEDULE_LOADS, **options)
        curves[(first, prompt)] = reference
        for label, other in others:
            curves[(label, prompt)] = load_curve(
                model, chip, prompt_tokens=prompt, output_tokens=output_tokens,
                requests=requests, rates=list(reference.rates), **other)
    return curves


__all__ = ["CurvePlan", "FRACTIONS", "LoadCurve", "SCHEDULES", "SCHEDULE_LOADS", "load_curve",
           "scheduler_curves"]
