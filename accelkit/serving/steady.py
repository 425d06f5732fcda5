"""One replica's steady state under Poisson arrivals, in closed form: the estimate the decision
lab sizes a fleet from before one simulation checks it (:mod:`accelkit.serving.lab`).

    >>> from accelkit import serving
    >>> s = serving.steady_state("llama-3-8b", "H100", prompt_tokens=1000, output_tokens=250)
    >>> top = s.max_rate(ttft_p99_seconds=2.0, tpot_p99_seconds=0.03)
    >>> bool(0 < top < s.saturation_rate), bool(s.mean_tpot(top) < 0.03)
    (True, True)

Every figure is priced by the simulator's own iteration rule
(:func:`accelkit.serving.simulation.replica_group`, so no second cost model), for requests
that all have ``prompt_tokens`` and ``output_tokens``, decoding at their mean context:

* A decode iteration of ``B`` sequences takes ``t(B)``; a prompt joining an iteration adds
  ``Δ(B)`` to it (its prefill, with the weights already being read for the decodes); a prompt
  alone takes ``t_p``, a floor under every time to first token.
* At ``λ`` requests a second, a fraction ``λ·Δ`` of the time goes to prompts, so each decoding
  sequence gets a token every ``t(B) / (1 - λ·Δ)`` seconds (its mean TPOT), and by Little's
  law ``B = λ·(output - 1)·TPOT`` sequences decode at once: the rate that holds ``B`` in decode
  is ``λ(B) = B / ((output - 1)·t(B) + B·Δ(B))``. The largest batch the KV cache holds at the
  mean context (:func:`accelkit.inference.max_batch`) gives the **saturation rate**.
* The spread of TPOT, from the arrivals alone: a request decoding for ``D`` seconds shares its
  iterations with the others in decode, ``B`` on average, and meets the prompts that arrive
  meanwhile, ``B`` on average. With Poisson arrivals and a fixed ``D`` (an M/G/∞ system) the
  batch it sees, averaged over its life, has variance ``2B/3``, the prompts ``B``, their
  covariance ``B/2``; its TPOT ``≈ t'·batch + Δ/(output - 1)·prompts`` then has standard
  deviation ``σ = sqrt(B·(2t'²/3 + c² + t'·c))`` with ``t'`` the slope of ``t`` and
  ``c = Δ/(output - 1)``, and the 99th percentile is estimated as the mean plus 2.33 σ (a
  normal approximation).

* The time to first token: a request waits out the iteration it arrives in (iterations last
  ``t + Δ·k`` with ``k`` the prompts that arrived during the one before: mean ``t / (1 - λΔ)``,
  variance ``Δ²·λ·mean / (1 - (λΔ)²)``), then its own iteration, the decodes, its own prompt
  and those that came with it. The mean's floor counts half an iteration of waiting; the 99th
  percentile estimate a whole one and each part at its mean plus 2.33 standard deviations.

Simplifications, said where they matter: one prompt per iteration (several joining together
share the weight reads: the estimate is pessimistic there); no queueing for admission below
saturation (the time to first token's queueing is left to the simulation); equal lengths.
It is an estimate to start a search from, not a result: the lab simulates the fleet it
proposes and adds replicas until the simulation meets the limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accelkit import _validate, chips, inference, models, tensor_parallel
from accelkit.dtypes import DType
from accelkit.serving.simulation import replica_group

#: The standard normal's 99th percentile (the estimate's normal approximation).
Z99 = 2.326
#: Batches the estimate is evaluated at, spread geometrically from 1 to the largest that fits.
POINTS = 40


@dataclass(frozen=True)
class SteadyState:
    """A replica's estimated mean and 99th-percentile TPOT (seconds) against its arrival rate
    (requests/s), one entry per decode batch in ``batches`` (module docstring)."""

    model: str
    chip: str
    n_chips: int
    prompt_tokens: int
    output_tokens: int
    prefill_seconds: float            # one prompt alone: a floor under every TTFT
    saturation_rate: float            # requests/s at the largest batch the cache holds
    batches: np.ndarray
    rates: np.ndarray                 # the rate that holds each batch in decode
    tpot_mean: np.ndarray
    tpot_p99: np.ndarray
    ttft_mean: np.ndarray             # a floor under the mean TTFT (module docstring)
    ttft_p99: np.ndarray

    def mean_tpot(self, rate: float) -> float:
        """The mean TPOT at ``rate`` (below saturation; interpolated between batches)."""
        return float(np.interp(rate, self.rates, self.tpot_mean))

    def max_rate(self, *, ttft_p99_seconds: float, tpot_p99_seconds: float,
                 percentile: str = "p99") -> float:
        """The highest rate, below saturation, whose estimated TPOT (``percentile`` "p99", or
        "mean": a ceiling, since a 99th percentile is above the mean) is within
        ``tpot_p99_seconds``; 0 when even one request alone misses a limit (its prompt alone
        takes longer than ``ttft_p99_seconds``, or its decode alone than the TPOT limit)."""
        ttft = _validate.positive_float("ttft_p99_seconds", ttft_p99_seconds)
        tpot = _validate.positive_float("tpot_p99_seconds", tpot_p99_seconds)
        curves = {"p99": (self.tpot_p99, self.ttft_p99),
                  "mean": (self.tpot_mean, self.ttft_mean)}.get(percentile)
        if curves is None:
            raise ValueError(f"percentile must be 'p99' or 'mean', got {percentile!r}")
        per_token, first = curves
        if self.prefill_seconds > ttft or per_token[0] > tpot or first[0] > ttft:
            return 0.0
        # both rise with the batch: each limit's crossing, between the grid's batches
        top = self.saturation_rate
        for curve, limit in ((per_token, tpot), (first, ttft)):
            if curve[-1] > limit:
                top = min(top, float(np.interp(limit, curve, self.rates)))
        return top


def steady_state(model: str | models.Model, chip: str | chips.Chip, *, n_chips: int = 1,
                 prompt_tokens: int, output_tokens: int, weight_dtype: DType = "bf16",
                 kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
                 tp_overlap: bool = False) -> SteadyState:
    """The closed-form steady state of one replica of ``n_chips`` (module docstring);
    ``tp_overlap`` as :func:`accelkit.serving.simulate`.

    Raises:
        ValueError, TypeError: a bad argument (named); a group that does not hold the weights
            and one request's cache.
    """
    m = tensor_parallel.transformer(model)
    the_chip = chips.get(chip)
    n = _validate.positive_int("n_chips", n_chips, maximum=4096)
    prompt = _validate.positive_int("prompt_tokens", prompt_tokens, maximum=inference.MAX_CONTEXT)
    output = _validate.positive_int("output_tokens", output_tokens, maximum=inference.MAX_CONTEXT)
    weight, kv, compute = inference.check_formats(weight_dtype, kv_dtype, compute_dtype)
    g = replica_group(m, the_chip, n, (weight, kv, compute), tp_overlap=tp_overlap)
    decodes = max(output - 1, 1)
    context = prompt + (output - 1) / 2.0          # the mean context of a decode token
    most = inference.max_batch(m, the_chip, n, int(math.ceil(context)), weight, kv)
    if most < 1:
        raise ValueError(f"{n} x {the_chip.name} cannot hold {m.name}'s {weight} weights and one "
                         f"request of {prompt:,} + {output:,} tokens")
    prompt_pairs = g.pairs(prompt, 0)
    batches = np.unique(np.round(np.geomspace(1, most, min(POINTS, most))).astype(np.int64))

    b = batches.astype(float)
    ones = np.ones_like(b)
    held = b * (context + 1)
    # one vectorised pricing: decode at b and b + 1, decode at b with one prompt joining
    t, t_next, with_prompt = np.split(g.seconds_many(
        np.concatenate([b, b + 1, b + prompt]),
        np.concatenate([b, b + 1, b + 1]),
        np.concatenate([held, held + context + 1, held + prompt_pairs * ones]),
        np.concatenate([held, held + context + 1, held + prompt * ones])), 3)
    slope = t_next - t
    joined = with_prompt - t
    rates = batches / (decodes * t + batches * joined)
    mean = t / (1.0 - rates * joined)
    c = joined / decodes
    sigma = np.sqrt(batches * (2.0 * slope ** 2 / 3.0 + c ** 2 + slope * c))
    p99 = np.maximum.accumulate(mean + Z99 * sigma)
    # an iteration lasts t + Δ·(prompts that arrived during the one before): mean t / (1 - λΔ)
    # (the mean TPOT), variance Δ²·λ·mean / (1 - (λΔ)²)
    load = np.minimum(rates * joined, 1.0 - 1e-9)
    spread = joined * np.sqrt(rates * mean / (1.0 - load ** 2))
    # a request waits out the iteration it arrives in (on average at least half one), then
    # its own iteration: the decodes, its prompt and the prompts that came with it
    first_mean = mean / 2.0 + t + joined
    first_p99 = (mean + Z99 * spread) + (t + joined + Z99 * spread)
    alone = float(g.seconds_many(np.array([prompt]), ones[:1], np.array([prompt_pairs]),
                                 np.array([prompt]))[0])
    return SteadyState(
        model=m.name, chip=the_chip.name, n_chips=n, prompt_tokens=prompt, output_tokens=output,
        prefill_seconds=alone, saturation_rate=float(rates[-1]), batches=batches,
        rates=np.maximum.accumulate(rates), tpot_mean=np.maximum.accumulate(mean),
        tpot_p99=p99, ttft_mean=np.maximum.accumulate(first_mean),
        ttft_p99=np.maximum.accumulate(np.maximum(first_p99, alone)))


__all__ = ["POINTS", "SteadyState", "Z99", "steady_state"]
