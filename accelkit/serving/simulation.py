"""Requests in, a fleet's latency percentiles and throughput out: :func:`simulate`.

The fleet is ``replicas`` copies of the model, each a tensor-parallel group of ``n_chips``
(:mod:`accelkit.tensor_parallel`), fed by a dispatcher; each replica runs the scheduler of
:mod:`accelkit.serving.engine`, whose every iteration is priced by
:class:`accelkit.serving_step.IterationGroup`, the rule :func:`accelkit.inference.prefill` and
:func:`accelkit.inference.decode_step` use. The options and their sources are in
:mod:`accelkit.serving`'s docstring.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from accelkit import (_validate, chips, collectives, inference, models, serving_step,
                      tensor_parallel)
from accelkit.dtypes import DType
from accelkit.serving import engine as _engine
from accelkit.serving.result import ServingResult, frozen, percentile

SCHEDULERS = ("continuous", "static")
KV_POLICIES = ("preempt", "reserve")
DISPATCH = ("round_robin", "random", "least_loaded")
#: Where ``dispatch="least_loaded"`` comes from: NVIDIA's MLPerf Inference LLM harness (the one
#: its Llama-2-70B and Mixtral-8x7B submissions ran) gives each query to the inference group
#: with the fewest transactions in flight, counted up when a query is sent and down when its
#: last token comes back; ties go to the lowest group.
LEAST_LOADED_SOURCE = (
    "mlcommons/inference_results_v4.1@a2f5d66:closed/NVIDIA/code/harness/harness_llm/"
    "main_llm.cc (traffic_distribution_policy default 2), llm_server.hpp "
    "(trafficDistributionPolicy: roundRobin 0, staticChop 1, loadBalancing 2), llm_server.cc "
    "(LLMServerLoadGen::getLeastBusyIdx: std::min_element over mNumInFlightTransactions, "
    "incremented in IssueQuery, decremented in responseCompleteThread); the v4.0 main_llm.cc "
    "has the same default")
KV_LINKS = ("scale-up", "scale-out")
#: Requests one simulation takes: far beyond a benchmark's run (MLPerf's Llama-2-70B Server
#: runs complete about 200,000), small enough to stay in memory.
MAX_REQUESTS = 2_000_000
#: vLLM's and Vidur's default KV block (vLLM ``--block-size`` 16; Vidur ``block_size`` 16).
BLOCK_TOKENS = 16
#: A serving runtime's fixed host time per iteration (scheduling, preparing the inputs,
#: sampling, processing the outputs), as measured for vLLM's engine: the intercept of a line
#: through the sum of those four medians against the batch, Llama-2-70B on 2 and 4 A100s
#: (12 batches of 8 to 64: 2.4 to 9.2 ms; intercept 1.2 ms, slope 0.13 ms a sequence).
#: ``simulate(iteration_overhead_seconds=...)`` charges it; the default is 0.
VLLM_ITERATION_SECONDS = 1.2e-3
VLLM_ITERATION_SOURCE = (
    "microsoft/vidur@0633efae:data/profiling/a100/cpu_overheads.csv, SCHEDULE, SAMPLER_E2E, "
    "PREPARE_INPUTS_E2E and PROCESS_MODEL_OUTPUTS medians, Llama-2-70B, TP 2 and 4, batches "
    "8-64: least-squares intercept 1.2 ms (the per-sequence slope, 0.13 ms, is Python "
    "bookkeeping and is not charged); ASSUMPTION: another runtime (TensorRT-LLM's C++ one) "
    "pays the same fixed part")


def lengths(name: str, value: object, requests: int) -> np.ndarray:
    """``value`` as one length per request: an int for all, or a sequence of ``requests`` ints,
    each a whole number from 1 to :data:`accelkit.inference.MAX_CONTEXT`."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        one = _validate.positive_int(name, value, maximum=inference.MAX_CONTEXT)
        return np.full(requests, one, dtype=np.int64)
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a whole number or a sequence of {requests:,} whole "
                        f"numbers (one per request), got {type(value).__name__}")
    array = np.asarray(value)
    if array.ndim != 1 or array.size != requests:
        raise ValueError(f"{name} must hold one length per request ({requests:,}), got "
                         f"{array.size:,} values of shape {array.shape}")
    if array.dtype.kind == "f" and np.all(np.isfinite(array)) and np.all(array == np.round(array)):
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu" or array.min() < 1 or array.max() > inference.MAX_CONTEXT:
        raise ValueError(f"{name} must all be whole numbers from 1 to "
                         f"{inference.MAX_CONTEXT:,}")
    return array.astype(np.int64)


def arrivals(rate: float, requests: int, seed: int) -> np.ndarray:
    """Seeded Poisson arrivals: exponential gaps of mean ``1 / rate`` (not clipped: Vidur clips
    each gap at three means, which raises the true rate 5% and trims the bursts), the first
    request at time 0; all at time 0 when ``rate`` is infinite (MLPerf's Offline scenario)."""
    if math.isinf(rate):
        return np.zeros(requests)
    gaps = np.random.default_rng(seed).exponential(1.0 / rate, size=requests)
    gaps[0] = 0.0
    return np.cumsum(gaps)


@functools.lru_cache(maxsize=64)
def _group(m: models.Transformer, chip: chips.Chip, n_chips: int,
           formats: tuple[DType, DType, DType], split: str,
           per_op: float, ceilings: str = "datasheet", tp_overlap: bool = False,
           iteration: float = 0.0) -> serving_step.IterationGroup:
    """The iteration rule of one group. Kept: building it reads the model's operations a few
    times (about 0.7 ms) and its per-token-count tables fill as a run goes (0.6 ms a block of
    token counts), which a capacity search or the decision lab, simulating the same group many
    times, would otherwise pay on every run (benchmarks/bench_serving.py)."""
    return serving_step.iteration_group(m, chip, n_chips, formats, ("causal", True, True),
                                        split, per_op, ceilings, tp_overlap, iteration)


def replica_group(m: models.Transformer, chip: chips.Chip, n_chips: int,
                  formats: tuple[DType, DType, DType], split: str = "even",
                  per_op: float = 0.0, ceilings: str = "datasheet", tp_overlap: bool = False,
                  iteration_overhead_seconds: float = 0.0) -> serving_step.IterationGroup:
    """The iteration rule :func:`simulate` prices a replica's iterations by (checked formats,
    split and per-operation cost), the same object it uses (kept), for estimates that must
    agree with it (:mod:`accelkit.serving.steady`)."""
    return _group(m, chip, n_chips, formats, split, per_op,
                  _validate.choice("ceilings", ceilings, serving_step.CEILINGS),
                  serving_step.check_tp_overlap(tp_overlap),
                  _iteration(iteration_overhead_seconds))


@dataclass(frozen=True)
class _Pool:
    group: serving_step.IterationGroup
    engine: _engine.Engine
    replicas: int
    n_chips: int


def _kv_blocks(m: models.Transformer, chip: chips.Chip, n_chips: int, weight: DType, kv: DType,
               split: str, fraction: float, block: int,
               draft: tuple[models.Transformer, DType] | None) -> tuple[int, float]:
    """Blocks of ``block`` tokens a replica's cache holds, and bytes per token: the pooled HBM
    less the weights (and a draft model's), times ``fraction``, as
    :func:`accelkit.inference.max_batch` counts it (every copy of the cache counted)."""
    free = n_chips * float(chip.require("hbm_bytes")) - m.weight_bytes(weight)
    per_token = m.kv_cache_bytes_per_token(kv) * tensor_parallel.copies(m, n_chips, split)
    if draft is not None:
        d, d_kv = draft
        free -= d.weight_bytes(weight)
        per_token += d.kv_cache_bytes_per_token(d_kv) * tensor_parallel.copies(d, n_chips, split)
    if free <= 0:
        need = m.weight_bytes(weight) / 1e9
        raise ValueError(f"{m.name}'s {weight} weights ({need:,.1f} GB"
                         f"{' with the draft model' if draft else ''}) do not fit in {n_chips} x "
                         f"{chip.name} ({n_chips * float(chip.require('hbm_bytes')) / 1e9:,.1f} "
                         "GB): add chips per replica or use narrower weights")
    return int(free * fraction // (per_token * block)), per_token


def simulate(model: str | models.Model, chip: str | chips.Chip, *, n_chips: int = 1,
             replicas: int = 1, arrival_rate: float, requests: int,
             prompt_tokens: int | Sequence[int] | np.ndarray,
             output_tokens: int | Sequence[int] | np.ndarray, scheduler: str = "continuous",
             seed: int = 0, weight_dtype: DType = "bf16", kv_dtype: DType | None = None,
             compute_dtype: DType = "bf16", max_batch: int | None = None,
             token_budget: int | None = None, chunked_prefill: bool = False,
             block_tokens: int = BLOCK_TOKENS, kv_policy: str | None = None,
             kv_memory_fraction: float = 1.0, kv_cache_split: str = "even",
             overhead: bool = False, overhead_seconds: float | None = None,
             dispatch: str = "round_robin", beam_width: int = 1,
             draft_model: str | models.Model | None = None, speculative_tokens: int = 4,
             acceptance_rate: float | None = None, prefix_hit_rate: float = 0.0,
             prefill_pool: tuple[int, int] | None = None, kv_link: str = "scale-up",
             usd_per_hour: float | None = None, ceilings: str = "datasheet",
             tp_overlap: bool = False, iteration_overhead_seconds: float = 0.0) -> ServingResult:
    """Serve ``requests`` requests arriving at ``arrival_rate`` on ``replicas`` replicas of
    ``n_chips`` chips each, iteration by iteration; see :mod:`accelkit.serving` for the
    options, their sources and the metrics (vLLM's and MLPerf's definitions).

    Raises:
        ValueError, TypeError: a bad argument (named, with its allowed range); a
            configuration that cannot exist: a tensor-parallel group the heads do not divide,
            weights that do not fit, a KV cache that cannot hold one request's prompt and
            output, a prompt longer than the token budget without chunked prefill, options
            that do not go together.
    """
    m = tensor_parallel.transformer(model)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=4096)
    replicas = _validate.positive_int("replicas", replicas, maximum=100_000)
    rate = _rate(arrival_rate)
    requests = _validate.positive_int("requests", requests, maximum=MAX_REQUESTS)
    prompts = lengths("prompt_tokens", prompt_tokens, requests)
    outputs = lengths("output_tokens", output_tokens, requests)
    scheduler = _validate.choice("scheduler", scheduler, SCHEDULERS)
    seed = _validate.nonnegative_int("seed", seed, maximum=2**63 - 1)
    weight, kv, compute = inference.check_formats(weight_dtype, kv_dtype, compute_dtype)
    split = tensor_parallel.check_split(kv_cache_split)
    per_op = inference.overhead_per_operation(overhead, overhead_seconds)
    cap = None if max_batch is None else _validate.positive_int("max_batch", max_batch,
                                                                 maximum=inference.MAX_BATCH)
    budget = (None if token_budget is None else
              _validate.positive_int("token_budget", token_budget, maximum=inference.MAX_CONTEXT))
    chunked = _flag("chunked_prefill", chunked_prefill)
    block = _validate.positive_int("block_tokens", block_tokens, maximum=4096)
    fraction = _validate.fraction("kv_memory_fraction", kv_memory_fraction)
    dispatch = _validate.choice("dispatch", dispatch, DISPATCH)
    beams = _validate.positive_int("beam_width", beam_width, maximum=64)
    hit = _validate.real_in_range("prefix_hit_rate", prefix_hit_rate, low=0.0, high=1.0,
                                  high_inclusive=False)
    link = _validate.choice("kv_link", kv_link, KV_LINKS)
    hourly = (the_chip.usd_per_hour if usd_per_hour is None else
              _validate.positive_float("usd_per_hour", usd_per_hour))
    policy = _policy(kv_policy, scheduler, beams, draft_model is not None)
    ceil = _validate.choice("ceilings", ceilings, serving_step.CEILINGS)
    overlap = serving_step.check_tp_overlap(tp_overlap)
    iteration = _iteration(iteration_overhead_seconds)
    if chunked and budget is None:
        raise ValueError("chunked_prefill=True needs token_budget, the tokens an iteration may "
                         "hold (Sarathi-Serve's budget: 512 or 2,048, say)")
    if scheduler == "static" and (budget is not None or chunked or prefill_pool is not None
                                  or draft_model is not None):
        raise ValueError("scheduler='static' batches whole requests: token_budget, "
                         "chunked_prefill, prefill_pool and draft_model need "
                         "scheduler='continuous'")
    if draft_model is not None and dispatch == "least_loaded" and replicas > 1:
        raise ValueError("dispatch='least_loaded' is modelled without speculative decoding "
                         "(draft_model): use 'round_robin' or 'random'")
    if draft_model is not None and (beams > 1 or prefill_pool is not None or budget is not None):
        raise ValueError("speculative decoding (draft_model) is modelled without beam search, "
                         "a prefill pool or a token budget")
    formats = (weight, kv, compute)
    speculative = None
    draft_info = None
    if draft_model is not None:
        d = tensor_parallel.transformer(draft_model)
        if acceptance_rate is None:
            raise ValueError("draft_model needs acceptance_rate, the chance the target accepts "
                             "each drafted token, in [0, 1] (no published figure applies to "
                             "every pair: a named assumption)")
        alpha = _validate.real_in_range("acceptance_rate", acceptance_rate, low=0.0, high=1.0)
        k = _validate.positive_int("speculative_tokens", speculative_tokens, maximum=32)
        draft_group = _group(d, the_chip, n_chips, formats, split, per_op, ceil, overlap,
                             iteration)
        speculative = (draft_group, k, alpha)
        draft_info = (d, kv)
    group = _group(m, the_chip, n_chips, formats, split, per_op, ceil, overlap, iteration)
    blocks, per_token = _kv_blocks(m, the_chip, n_chips, weight, kv, split, fraction, block,
                                   draft_info)
    _check_fits(m, the_chip, n_chips, prompts, outputs, blocks, block, beams, per_token, budget,
                chunked, "replica")
    decode_stage = "decode" if prefill_pool is not None else "both"
    main = _Pool(group, _engine.Engine(scheduler, None if prefill_pool is not None else budget,
                                       chunked and prefill_pool is None, cap, block, blocks,
                                       policy, beams, hit, speculative, decode_stage),
                 replicas, n_chips)
    arrive = arrivals(rate, requests, seed)
    replica = np.zeros(requests, dtype=np.int64)
    first = np.empty(requests)
    finish = np.empty(requests)
    preempted = np.zeros(requests, dtype=np.int64)
    in_flight = 0.0          # request-seconds waiting or held, from the replicas' clocks
    held = 0.0               # request-seconds held by a replica (of the decode pool)
    iterations = peak = 0
    busy: list[float] = []
    prefill_chips = 0
    decode_arrive, decode_rows = arrive, np.arange(requests)
    if prefill_pool is not None:
        p_replicas, p_chips = _prefill_pool(prefill_pool)
        prefill_chips = p_replicas * p_chips
        p_group = _group(m, the_chip, p_chips, formats, split, per_op, ceil, overlap, iteration)
        p_blocks, _ = _kv_blocks(m, the_chip, p_chips, weight, kv, split, fraction, block, None)
        _check_fits(m, the_chip, p_chips, prompts, np.ones_like(outputs), p_blocks, block, 1,
                    per_token, budget, chunked, "prefill replica")
        pool = _Pool(p_group, _engine.Engine("continuous", budget, chunked, cap, block, p_blocks,
                                             "reserve", 1, hit, None, "prefill"),
                     p_replicas, p_chips)
        ends, traces = _serve(pool, arrive, prompts, np.ones_like(outputs), dispatch, seed, False)
        first[:] = ends[0]
        for trace in traces:
            iterations += trace.iterations
            peak = max(peak, trace.peak_sequences)
            in_flight += trace.queued_seconds + trace.held_seconds
            busy.append(trace.busy_seconds)
        # each chip of the prefill group sends its shard of the prompt's cache to a decode
        # chip, all in parallel, over the named link
        lanes = min(p_chips, n_chips)
        sent = np.array([collectives.point_to_point(
            the_chip, array_bytes=float(p) * m.kv_cache_bytes_per_token(kv) / lanes,
            network=link).seconds for p in prompts]) if requests else np.zeros(0)
        ready = first + sent
        single = outputs == 1
        finish[single] = first[single]
        decode_rows = np.flatnonzero(~single)
        in_flight += float(sent[decode_rows].sum())
        order = np.argsort(ready[decode_rows], kind="stable")
        decode_rows = decode_rows[order]
        decode_arrive = ready[decode_rows]
    if decode_rows.size:
        rows_replica = np.empty(decode_rows.size, dtype=np.int64)
        ends, traces = _serve(main, decode_arrive, prompts[decode_rows], outputs[decode_rows],
                              dispatch, seed + 1 if prefill_pool is not None else seed,
                              prefill_pool is not None, rows_replica)
        replica[decode_rows] = rows_replica
        if prefill_pool is None:
            first[decode_rows] = ends[0]
        finish[decode_rows] = ends[1]
        preempted[decode_rows] = ends[2]
        for trace in traces:
            iterations += trace.iterations
            peak = max(peak, trace.peak_sequences)
            in_flight += trace.queued_seconds + trace.held_seconds
            held += trace.held_seconds
            busy.append(trace.busy_seconds)
    duration = float(finish.max() - arrive.min())
    ttft = first - arrive
    latency = finish - arrive
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(outputs > 1, (latency - ttft) / (outputs - 1), np.nan)
    tokens = float(outputs.sum())
    throughput = tokens / duration if duration > 0 else math.inf
    fleet_chips = replicas * n_chips + prefill_chips
    fleet_usd = None if hourly is None else hourly * fleet_chips
    per_million = (None if fleet_usd is None or not math.isfinite(throughput) else
                   fleet_usd / (throughput * 3600.0) * 1e6)
    return ServingResult(
        model=m.name, chip=the_chip.name, n_chips=n_chips, replicas=replicas,
        prefill_chips=prefill_chips, scheduler=scheduler, arrival_rate=rate, requests=requests,
        ttft_p50=percentile(ttft, 50), ttft_p99=percentile(ttft, 99),
        tpot_p50=percentile(tpot, 50), tpot_p99=percentile(tpot, 99),
        mean_ttft_seconds=float(ttft.mean()), mean_tpot_seconds=float(np.nanmean(tpot))
        if np.isfinite(tpot).any() else math.nan,
        mean_latency_seconds=float(latency.mean()), latency_p99_seconds=percentile(latency, 99),
        throughput_tokens_per_second=throughput,
        completed_per_second=requests / duration if duration > 0 else math.inf,
        mean_in_flight=in_flight / duration if duration > 0 else 0.0,
        mean_batch=held / duration / replicas if duration > 0 else 0.0,
        duration_seconds=duration, kv_cache_tokens=blocks * block, peak_sequences=peak,
        iterations=iterations, preemptions=int(preempted.sum()),
        busy_fraction=float(np.mean(busy)) / duration if duration > 0 and busy else 0.0,
        usd_per_hour=fleet_usd, usd_per_million_tokens=per_million,
        arrival_seconds=frozen(arrive), first_token_seconds=frozen(first),
        finish_seconds=frozen(finish), ttft_seconds=frozen(ttft), tpot_seconds=frozen(tpot),
        latency_seconds=frozen(latency), prompt_tokens=frozen(prompts),
        output_tokens=frozen(outputs), replica=frozen(replica), preempted=frozen(preempted))


def _serve(pool: _Pool, arrive: np.ndarray, prompts: np.ndarray, outputs: np.ndarray,
           dispatch: str, seed: int, has_kv: bool, which: np.ndarray | None = None
           ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], list[_engine.Trace]]:
    """Dispatch requests (sorted by arrival) over the pool's replicas and run each."""
    n = arrive.size
    if dispatch == "least_loaded" and pool.replicas > 1:
        assigned, traces = _engine.fleet(pool.group, pool.engine, pool.replicas, arrive, prompts,
                                         outputs, has_kv=has_kv)
        if which is not None:
            which[:] = assigned
        first, done, preempted = np.empty(n), np.empty(n), np.zeros(n, dtype=np.int64)
        for r, trace in enumerate(traces):
            rows = np.flatnonzero(assigned == r)
            first[rows], done[rows] = trace.first_token, trace.done
            preempted[rows] = trace.preemptions
        return (first, done, preempted), [t for t in traces if t.first_token.size]
    if dispatch == "round_robin" or pool.replicas == 1:
        assigned = np.arange(n) % pool.replicas
    else:
        assigned = np.random.default_rng((seed, 1)).integers(0, pool.replicas, size=n)
    if which is not None:
        which[:] = assigned
    first, done, preempted = np.empty(n), np.empty(n), np.zeros(n, dtype=np.int64)
    traces = []
    for r in range(pool.replicas):
        rows = np.flatnonzero(assigned == r)
        if not rows.size:
            continue
        trace = _engine.run(pool.group, pool.engine, arrive[rows], prompts[rows], outputs[rows],
                            has_kv=has_kv, seed=seed * 100_003 + r)
        first[rows], done[rows], preempted[rows] = trace.first_token, trace.done, trace.preemptions
        traces.append(trace)
    return (first, done, preempted), traces


def _rate(value: object) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value == math.inf:
        return math.inf
    return _validate.positive_float("arrival_rate", value, maximum=1e9)


def _iteration(value: object) -> float:
    return _validate.real_in_range("iteration_overhead_seconds", value, low=0.0, high=1.0)


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def _policy(value: object, scheduler: str, beams: int, speculative: bool) -> str:
    """The KV policy: vLLM's preemption by default; reservation where the model needs it."""
    reserve_only = scheduler == "static" or beams > 1 or speculative
    if value is None:
        return "reserve" if reserve_only else "preempt"
    policy = _validate.choice("kv_policy", value, KV_POLICIES)
    if policy == "preempt" and reserve_only:
        raise ValueError("kv_policy='preempt' (recompute) is modelled for continuous batching "
                         "of single sequences; static batches, beam search and speculative "
                         "decoding reserve their cache (kv_policy='reserve')")
    return policy


def _prefill_pool(value: object) -> tuple[int, int]:
    if (not isinstance(value, (tuple, list)) or len(value) != 2):
        raise TypeError("prefill_pool must be (replicas, chips per replica), two whole numbers, "
                        f"got {value!r}")
    return (_validate.positive_int("prefill_pool[0] (replicas)", value[0], maximum=100_000),
            _validate.positive_int("prefill_pool[1] (chips per replica)", value[1],
                                   maximum=4096))


def _check_fits(m: models.Transformer, chip: chips.Chip, n_chips: int, prompts: np.ndarray,
                outputs: np.ndarray, blocks: int, block: int, beams: int, per_token: float,
                budget: int | None, chunked: bool, where: str) -> None:
    """Refuse a cache that cannot hold one request alone (it could never finish), and a prompt
    that no iteration could take whole."""
    life = prompts + outputs
    need = (np.ceil(life / block) if beams == 1 else
            np.ceil(prompts / block) + beams * np.ceil(outputs / block))
    worst = int(np.argmax(need))
    if need[worst] > blocks:
        raise ValueError(
            f"the KV cache of one {where} ({n_chips} x {chip.name}: {blocks * block:,} tokens, "
            f"{blocks * block * per_token / 1e9:,.1f} GB) cannot hold request {worst}'s "
            f"{int(prompts[worst]):,} prompt and {int(outputs[worst]):,} output tokens"
            f"{f' in {beams} beams' if beams > 1 else ''}: it could never finish; use more chips "
            "per replica, a narrower kv_dtype or shorter requests")
    if budget is not None and not chunked and int(prompts.max()) > budget:
        raise ValueError(f"a {int(prompts.max()):,}-token prompt is longer than "
                         f"token_budget={budget:,} and chunked_prefill is off, so no iteration "
                         "can take it: raise the budget or set chunked_prefill=True")


__all__ = ["BLOCK_TOKENS", "VLLM_ITERATION_SECONDS", "VLLM_ITERATION_SOURCE", "DISPATCH",
           "LEAST_LOADED_SOURCE", "KV_LINKS", "KV_POLICIES", "MAX_REQUESTS", "SCHEDULERS",
           "arrivals", "lengths", "replica_group", "simulate"]
