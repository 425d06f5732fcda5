"""What a serving simulation measured: latency percentiles, throughput, the fleet's price.

The definitions are vLLM's (``benchmarks/benchmark_serving.py``, ``calculate_metrics``) and
MLPerf Inference's (LoadGen's Server scenario), which agree on them:

* **TTFT**, time to first token: from the request's arrival (its issue, in LoadGen) to its first
  output token, queueing included.
* **TPOT**, time per output token, per request: ``(latency - TTFT) / (output tokens - 1)``, the
  mean gap between its later tokens (vLLM's "Time per Output Token (excl. 1st token)"); a
  request of one output token has none (NaN, left out of the percentiles).
* **Latency** (vLLM's E2EL): arrival to the last token.
* **Percentiles** are over requests, numpy's ``percentile`` (linear interpolation), as vLLM
  reports them; MLPerf's Server limits are on the 99th percentiles of TTFT and TPOT.
* **Throughput** counts output tokens only (MLPerf's "Tokens per second", vLLM's output token
  throughput), over the run: first arrival to last completion.
* **Goodput**: requests per second that meet every given limit (DistServe's definition, vLLM's
  ``--goodput``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accelkit import _validate


@dataclass(frozen=True)
class ServingResult:
    """One simulated run of a serving fleet (:func:`accelkit.serving.simulate`).

    Percentiles and means are over requests, in seconds. ``mean_in_flight`` is measured from
    the simulation's own clock (requests waiting plus requests held by a replica, integrated
    over the run), so Little's law, ``mean_in_flight = completed_per_second ×
    mean_latency_seconds``, is a check on the bookkeeping, not a definition; ``mean_batch``
    counts only the requests a replica has admitted (per replica: the batch it runs). The per-request
    arrays (read-only) are in request order: ``arrival_seconds`` and ``first_token_seconds``
    and ``finish_seconds`` on the run's clock, the rest per request.
    """

    model: str
    chip: str
    n_chips: int                      # chips per replica (one tensor-parallel group)
    replicas: int
    prefill_chips: int                # chips in a separate prefill pool (0: none)
    scheduler: str
    arrival_rate: float               # requests per second offered (inf: all at once)
    requests: int
    ttft_p50: float
    ttft_p99: float
    tpot_p50: float
    tpot_p99: float
    mean_ttft_seconds: float
    mean_tpot_seconds: float
    mean_latency_seconds: float
    latency_p99_seconds: float
    throughput_tokens_per_second: float   # output tokens
    completed_per_second: float
    mean_in_flight: float
    mean_batch: float                 # requests held by a replica (admitted), per replica
    duration_seconds: float           # first arrival to last completion
    kv_cache_tokens: int              # tokens one replica's cache holds (whole blocks)
    peak_sequences: int               # most sequences one replica held at once
    iterations: int                   # over all replicas
    preemptions: int                  # over all requests
    busy_fraction: float              # of the run, mean over replicas (and pools)
    usd_per_hour: float | None        # the whole fleet; None without a price
    usd_per_million_tokens: float | None
    arrival_seconds: np.ndarray
    first_token_seconds: np.ndarray
    finish_seconds: np.ndarray
    ttft_seconds: np.ndarray
    tpot_seconds: np.ndarray          # NaN for one-token outputs
    latency_seconds: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    replica: np.ndarray
    preempted: np.ndarray             # times each request was preempted and recomputed

    @property
    def total_chips(self) -> int:
        return self.n_chips * self.replicas + self.prefill_chips

    def attainment(self, *, ttft_seconds: float | None = None, tpot_seconds: float | None = None,
                   latency_seconds: float | None = None) -> float:
        """The fraction of requests that meet every given limit (at least one limit)."""
        return float(self._meets(ttft_seconds, tpot_seconds, latency_seconds).mean())

    def goodput(self, *, ttft_seconds: float | None = None, tpot_seconds: float | None = None,
                latency_seconds: float | None = None) -> float:
        """Requests per second that meet every given limit (DistServe's goodput, vLLM's
        ``--goodput``): those requests over the run's duration."""
        meets = self._meets(ttft_seconds, tpot_seconds, latency_seconds)
        return float(meets.sum()) / self.duration_seconds

    def _meets(self, ttft: float | None, tpot: float | None, latency: float | None
               ) -> np.ndarray:
        limits = [(name, value, array) for name, value, array in (
            ("ttft_seconds", ttft, self.ttft_seconds), ("tpot_seconds", tpot, self.tpot_seconds),
            ("latency_seconds", latency, self.latency_seconds)) if value is not None]
        if not limits:
            raise ValueError("give at least one limit: ttft_seconds, tpot_seconds or "
                             "latency_seconds (each > 0)")
        meets = np.ones(self.requests, dtype=bool)
        for name, value, array in limits:
            limit = _validate.positive_float(name, value)
            # a one-token output has no TPOT: it meets any TPOT limit
            meets &= np.where(np.isnan(array), True, array <= limit)
        return meets

    def meets(self, *, ttft_p99_seconds: float, tpot_p99_seconds: float) -> bool:
        """Whether the 99th percentiles are within both limits (MLPerf's Server test)."""
        ttft = _validate.positive_float("ttft_p99_seconds", ttft_p99_seconds)
        tpot = _validate.positive_float("tpot_p99_seconds", tpot_p99_seconds)
        return self.ttft_p99 <= ttft and (math.isnan(self.tpot_p99) or self.tpot_p99 <= tpot)

    def __repr__(self) -> str:
        usd = ("no price" if self.usd_per_hour is None else
               f"${self.usd_per_hour:,.2f}/h, ${self.usd_per_million_tokens:,.3f}/M tokens")
        rate = "all at once" if math.isinf(self.arrival_rate) else f"{self.arrival_rate:g}/s"
        return (f"ServingResult({self.requests:,} requests of {self.model} at {rate} on "
                f"{self.replicas} x {self.n_chips} {self.chip} ({self.scheduler}): TTFT p50/p99 "
                f"{self.ttft_p50 * 1e3:,.0f}/{self.ttft_p99 * 1e3:,.0f} ms, TPOT p50/p99 "
                f"{self.tpot_p50 * 1e3:,.1f}/{self.tpot_p99 * 1e3:,.1f} ms, "
                f"{self.throughput_tokens_per_second:,.0f} tokens/s, {self.mean_in_flight:,.1f} "
                f"in flight; {usd})")


def percentile(values: np.ndarray, q: float) -> float:
    """numpy's percentile over the finite values (NaN if there are none)."""
    finite = values[np.isfinite(values)]
    return float(np.percentile(finite, q)) if finite.size else math.nan


def frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array)
    array.flags.writeable = False
    return array


__all__ = ["ServingResult", "frozen", "percentile"]
