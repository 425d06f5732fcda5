"""Capacity planning: the cheapest fleet of tensor-parallel replicas that serves a number of
concurrent users under a latency target per generated token.

    >>> from accelkit import capacity
    >>> p = capacity.plan("llama-3-8b", "H100", concurrent_users=1000,
    ...                   max_seconds_per_token=0.05)
    >>> p.n_chips, p.chips_per_replica, p.bound
    (4, 2, 'memory')

A plan is searched exactly over the group sizes :func:`accelkit.inference.tensor_parallel_sizes`
allows and over whole batches; every step in it is :func:`accelkit.inference.decode_step`'s (and
the first-token times :func:`accelkit.inference.prefill`'s), so a plan is priced by the same
rule as a single step.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from accelkit import _validate, chips, inference, models, tensor_parallel
from accelkit.dtypes import DType

#: What set a capacity plan's batch per replica (see :class:`CapacityPlan`).
BOUNDS = ("latency", "memory", "users")


@dataclass(frozen=True)
class CapacityPlan:
    """The cheapest way to serve ``concurrent_users`` decoding streams under a latency target.

    ``replicas`` independent copies of the model, each a tensor-parallel group of
    ``chips_per_replica`` chips inside one scale-up domain, each decoding ``batch_per_replica``
    sequences per step (the users spread as evenly as whole numbers allow; this is the fullest
    replica). ``bound`` says what stopped the batch per replica growing: ``"latency"`` (one
    more sequence would miss ``max_seconds_per_token``), ``"memory"`` (one more would not fit
    in HBM beside the weights) or ``"users"`` (one replica already holds every user).
    """

    model: str
    chip: str
    concurrent_users: int
    max_seconds_per_token: float
    context_tokens: int
    prompt_tokens: int
    replicas: int
    chips_per_replica: int
    batch_per_replica: int
    n_chips: int
    seconds_per_token: float        # one decode step of the fullest replica
    first_token_seconds: float      # prefill of a replica's whole batch of prompts at once
    first_token_seconds_one_prompt: float  # prefill of one prompt alone on a replica
    tokens_per_second: float        # all users together: concurrent_users / seconds_per_token
    bound: str                      # "latency", "memory" or "users"
    max_batch_per_replica: int      # the exact largest batch meeting latency and memory
    usd_per_hour: float | None      # n_chips x the chip-hour price; None without a price
    usd_per_million_tokens: float | None
    decode_bound: str               # the step's own regime: "compute", "memory" or "overhead"
    overhead_seconds: float         # what the per-operation cost added to a step (0 when off)
    candidates: tuple[tuple[int, int, int], ...]  # (chips_per_replica, batch, n_chips) tried

    def __repr__(self) -> str:
        usd = ("no price" if self.usd_per_hour is None else
               f"${self.usd_per_hour:,.2f}/h, ${self.usd_per_million_tokens:,.3f}/M tokens")
        return (f"CapacityPlan({self.concurrent_users:,} users of {self.model} on {self.chip}: "
                f"{self.replicas:,} replica{'' if self.replicas == 1 else 's'} x "
                f"{self.chips_per_replica} chips = "
                f"{self.n_chips:,} chips, batch {self.batch_per_replica} per replica "
                f"({self.bound}-bound), {self.seconds_per_token * 1e3:,.1f} ms per token, "
                f"first token {self.first_token_seconds:,.2f} s; {usd})")


def _largest_batch(seconds: Callable[[int], float], limit: int, target: float,
                   low: int = 1) -> int:
    """The largest batch in [low, limit] whose step meets ``target`` (``low - 1`` if batch
    ``low`` misses it; 0 for ``low`` = 1); exact, since a step's time never falls as the batch
    grows."""
    if limit < low or seconds(low) > target:
        return low - 1
    high = limit  # invariant: seconds(low) meets the target
    while low < high:
        mid = (low + high + 1) // 2
        if seconds(mid) <= target:
            low = mid
        else:
            high = mid - 1
    return low


class NoCapacityPlan(ValueError):
    """:func:`plan` found no plan: the weights and one sequence's cache fit on no
    tensor-parallel group the chip allows, or no group meets the latency target even at batch
    1. A caller that reports "no plan" catches this type, not every ValueError."""


def plan(model: str | models.Model, chip: str | chips.Chip, *, concurrent_users: int,
         max_seconds_per_token: float, context_tokens: int = 2048,
         prompt_tokens: int | None = None, weight_dtype: DType = "bf16",
         kv_dtype: DType | None = None, compute_dtype: DType = "bf16",
         usd_per_hour: float | None = None, overhead: bool = False,
         overhead_seconds: float | None = None, kv_cache_split: str = "even") -> CapacityPlan:
    """The cheapest plan that serves ``concurrent_users`` streams at ``max_seconds_per_token``.

    For every tensor-parallel size in :func:`accelkit.inference.tensor_parallel_sizes`, the
    exact largest batch per replica whose decode step (at ``context_tokens`` of cache) both fits
    in HBM and meets the latency target (the same rule as :func:`accelkit.inference.max_batch`
    and :func:`accelkit.inference.best_batch`: every step is
    :func:`accelkit.inference.decode_step`'s), capped at
    the users; ``replicas = ceil(users / batch)`` and the users are spread evenly over them.
    The plan with the fewest chips wins (lowest $/h, the same thing for one chip type);
    ties go to the faster step, then the smaller group.

    Simplifications, said where used: the group splits the KV cache as ``kv_cache_split``
    says (``"even"``, the default: evenly over every chip, beyond the KV heads by context;
    ``"heads"``: each KV head replicated over the chips beyond them, as vLLM does, so wider
    groups hold less cache; :mod:`accelkit.tensor_parallel`); every user is mid-stream
    at ``context_tokens`` (a steady state; real traffic mixes lengths); prefill is not
    interleaved with decode (it would lengthen steps); and ``first_token_seconds`` is the
    prefill of a replica's whole batch of ``prompt_tokens``-token prompts at once on its
    group, the cold-start worst case (``first_token_seconds_one_prompt`` is one arriving
    prompt prefilled alone).

    How it relates to :func:`accelkit.serving.capacity`: this is the steady state, a fast
    estimate with no requests in it. The serving capacity simulates them (Poisson arrivals,
    prompts prefilled between decodes, queueing, continuous batching, the KV cache at its real
    occupancy) and sizes the fleet on the 99th percentiles of time to first token and time per
    output token; its users are an arrival rate, and the concurrent users here are what
    Little's law makes of one (arrival rate × mean latency). This plan charges no prompt
    processing and no queueing (which makes it smaller) and holds every user's cache at one
    context (larger, when that is the longest): use it for the order of magnitude, the
    simulation for the answer.

    Args:
        concurrent_users: streams decoding at once, >= 1.
        max_seconds_per_token: the latency target per generated token, > 0.
        context_tokens: tokens in each stream's KV cache.
        prompt_tokens: prompt length for the first-token time (default ``context_tokens``,
            at least 1).
        usd_per_hour: price per chip-hour (default the chip's list price; None where it has none).
        weight_dtype, kv_dtype, compute_dtype, overhead, overhead_seconds, kv_cache_split: as
            :func:`accelkit.inference.decode_step`.
    Raises:
        ValueError: a bad argument (named); the weights fit at no allowed group size (the
            message names the model and chip); no group size meets the latency target.
    """
    m = tensor_parallel.transformer(model)
    the_chip = chips.get(chip)
    users = _validate.positive_int("concurrent_users", concurrent_users, maximum=10**9)
    target = _validate.positive_float("max_seconds_per_token", max_seconds_per_token)
    context = _validate.nonnegative_int("context_tokens", context_tokens,
                                        maximum=inference.MAX_CONTEXT)
    prompt = (max(1, context) if prompt_tokens is None else
              _validate.positive_int("prompt_tokens", prompt_tokens, maximum=inference.MAX_CONTEXT))
    weight, kv, compute = inference.check_formats(weight_dtype, kv_dtype, compute_dtype)
    per_op = inference.overhead_per_operation(overhead, overhead_seconds)
    split = tensor_parallel.check_split(kv_cache_split)
    hourly = (the_chip.usd_per_hour if usd_per_hour is None else
              _validate.positive_float("usd_per_hour", usd_per_hour))
    sizes = tensor_parallel.tensor_parallel_sizes(m, the_chip, split)
    fitting = 0
    best: tuple[tuple[int, float, int], int, int, int] | None = None  # key, tp, batch, limit
    tried: list[tuple[int, int, int]] = []
    searches: dict[int, Callable[[int], float]] = {}  # each group size's step time, by batch
    # max_batch's rule, its checks and per-chip figures taken once for every group size
    hbm_bytes = float(the_chip.require("hbm_bytes"))
    weight_bytes = m.weight_bytes(weight)
    sequence_bytes = (context + 1) * m.kv_cache_bytes_per_token(kv)

    def memory_limit_of(tp: int) -> int:
        free = tp * hbm_bytes - weight_bytes
        copies = tensor_parallel.copies(m, tp, split)
        return 0 if free <= 0 else int(free // (sequence_bytes * copies))

    for tp in sizes:
        memory_limit = memory_limit_of(tp)
        if memory_limit < 1:
            continue
        fitting += 1

        seconds = inference.decode_seconds(m, the_chip, tp, context, weight, kv, compute,
                                           overhead_seconds=per_op, kv_cache_split=split)
        searches[tp] = seconds
        # Only whether the limit reaches the users matters here: search up to them (the
        # winner's exact limit, if larger, is found once below).
        cap = min(memory_limit, users)
        limit = cap if seconds(cap) <= target else _largest_batch(seconds, cap - 1, target)
        if limit < 1:
            continue
        batch = min(limit, users)
        replicas = math.ceil(users / batch)
        batch = math.ceil(users / replicas)  # spread the users evenly
        tried.append((tp, batch, replicas * tp))
        key = (replicas * tp, seconds(batch), tp)
        if best is None or key < best[0]:
            best = (key, tp, batch, limit)
    if not fitting:
        largest = sizes[-1]
        need = m.weight_bytes(weight) + (context + 1) * m.kv_cache_bytes_per_token(kv)
        raise NoCapacityPlan(
            f"{m.name}'s {weight} weights and one sequence's KV cache ({need / 1e9:,.1f} GB) fit "
            f"on no tensor-parallel group of {the_chip.name} it allows (at most {largest} chips, "
            f"{largest * float(the_chip.require('hbm_bytes')) / 1e9:,.1f} GB of HBM): use "
            "narrower weight_dtype/kv_dtype, a shorter context or a chip with more HBM or a "
            "larger scale-up domain")
    if best is None:
        fastest = min(inference.decode_step(m, the_chip, tp, 1, context, weight, kv, compute,
                                            overhead_seconds=per_op,
                                            kv_cache_split=split).seconds
                      for tp in sizes if memory_limit_of(tp) >= 1)
        raise NoCapacityPlan(
            f"max_seconds_per_token={target * 1e3:,.2f} ms is out of reach for {m.name} on "
            f"{the_chip.name}: its fastest batch-1 step takes {fastest * 1e3:,.2f} ms; relax the "
            "target, use narrower weights or a faster chip")
    (n_total, _, _), tp, batch, limit = best
    memory_limit = memory_limit_of(tp)
    if limit == users < memory_limit:   # the search stopped at the users: find the true limit
        limit = _largest_batch(searches[tp], memory_limit, target, low=users + 1)
    step = inference.decode_step(m, the_chip, tp, batch, context, weight, kv, compute,
                                 overhead_seconds=per_op, kv_cache_split=split)
    first = inference.prefill(m, the_chip, tp, batch, prompt, weight, kv, compute,
                              overhead_seconds=per_op, kv_cache_split=split)
    alone = inference.prefill(m, the_chip, tp, 1, prompt, weight, kv, compute,
                              overhead_seconds=per_op, kv_cache_split=split)
    if batch == users and limit >= users:
        bound = "users"
    elif limit == memory_limit:
        bound = "memory"
    else:
        bound = "latency"
    rate = users / step.seconds
    usd_hour = None if hourly is None else hourly * n_total
    usd_million = None if usd_hour is None else usd_hour / (rate * 3600.0) * 1e6
    return CapacityPlan(
        model=m.name, chip=the_chip.name, concurrent_users=users, max_seconds_per_token=target,
        context_tokens=context, prompt_tokens=prompt, replicas=n_total // tp,
        chips_per_replica=tp, batch_per_replica=batch, n_chips=n_total,
        seconds_per_token=step.seconds, first_token_seconds=first.seconds,
        first_token_seconds_one_prompt=alone.seconds,
        tokens_per_second=rate, bound=bound, max_batch_per_replica=limit,
        usd_per_hour=usd_hour, usd_per_million_tokens=usd_million, decode_bound=step.bound,
        overhead_seconds=step.overhead_seconds, candidates=tuple(tried))


__all__ = ["BOUNDS", "CapacityPlan", "plan"]
