"""Serving as it runs: requests arriving, continuous batching, latency percentiles, and the
cheapest fleet that meets its latency limits.

    >>> from accelkit import serving
    >>> r = serving.simulate("llama-3-8b", "H100", arrival_rate=4.0, requests=400,
    ...                      prompt_tokens=1000, output_tokens=250)
    >>> r.ttft_p99 >= r.ttft_p50, round(r.mean_in_flight / (r.completed_per_second
    ...                                                    * r.mean_latency_seconds), 6)
    (True, 1.0)

:func:`simulate` plays seeded Poisson arrivals through ``replicas`` replicas, each a
tensor-parallel group of ``n_chips`` chips, iteration by iteration; every iteration costs what
the library's one serving rule says it costs (:class:`accelkit.serving_step.IterationGroup`,
exactly :func:`accelkit.inference.prefill` and :func:`accelkit.inference.decode_step` where an
iteration is one of those), so the simulator adds queueing and scheduling, not a second cost
model. :func:`capacity` searches for the cheapest fleet whose simulation meets a TTFT and a
TPOT limit at their 99th percentiles; :func:`load_curve` simulates one replica at a ladder
of loads (lesson 08's widget); :func:`steady_state` is one replica's closed-form estimate under
Poisson load (the decision lab starts its search from it); :func:`accelkit.capacity.plan`
remains the fleet's steady-state estimate with no arrivals.

**Metrics** are vLLM's and MLPerf's (:mod:`accelkit.serving.result`): TTFT from arrival to the
first token, queueing included; TPOT per request ``(latency - TTFT) / (output tokens - 1)``;
percentiles over requests; goodput the requests per second meeting every limit.

**Schedulers** (``scheduler``):

* ``"continuous"`` (default): iteration-level batching (Orca, Yu et al., OSDI 2022): every
  iteration each running sequence decodes one token and waiting requests are admitted, first
  come first served, while the batch (``max_batch`` sequences), the KV cache and the token
  budget allow; their prompts join the same iteration (mixed prefill and decode, as
  TensorRT-LLM's in-flight batching and vLLM run them).
* ``"static"``: request-level batching, the course's older model as a scheduler: an idle
  replica takes up to ``max_batch`` waiting requests (as many as fit in the cache at their full
  length), prefills them together and decodes until the last is done; nothing joins a running
  batch (a sequence that finishes early leaves the computation, the generous reading).

**Options**, each named where it comes from:

* ``token_budget`` / ``chunked_prefill``: at most ``token_budget`` tokens an iteration, decode
  tokens first, then prompts; with ``chunked_prefill`` a long prompt is split across
  iterations in chunks of what the budget leaves (Sarathi-Serve, Agrawal et al., OSDI 2024,
  evaluated budgets of 512 and 2,048; Vidur's default chunk is 512, LLMServingSim's budget
  2,048; NVIDIA's MLPerf v4.1 TensorRT-LLM engines allow 4,096 tokens a step for Llama-2-70B,
  8,192 or 16,384 for Mixtral-8x7B, without chunked context). Without chunking a prompt joins
  only whole, and one longer than the budget is refused.
* **The KV cache in pages** at its real occupancy: ``block_tokens`` per block (16, vLLM's and
  Vidur's default); the cache holds what the pooled HBM leaves beside the weights, times
  ``kv_memory_fraction`` (1.0 is :func:`accelkit.inference.max_batch`'s rule; vLLM's
  ``gpu_memory_utilization`` defaults to 0.9 of all memory, NVIDIA's MLPerf configs give 0.9
  of what is free); ``kv_dtype`` ``"fp8"`` or ``"int8"`` halves it per token against bf16.
  ``kv_policy="preempt"`` (default): a sequence holds the blocks its tokens fill and takes one
  more as it grows; when none is free the most recently admitted sequence is preempted and
  later recomputed (vLLM's default, ``PreemptionMode.RECOMPUTE``, docs "Optimization and
  Tuning"). ``"reserve"``: a request is admitted only when its whole prompt and output fit, so
  nothing is ever preempted (TensorRT-LLM's default ``GUARANTEED_NO_EVICT`` policy, which
  reserves the maximum output; here the request's own output length). A cache that cannot hold
  one request alone is refused.
* ``prefill_pool=(replicas, chips)``: prefill and decode on separate pools (DistServe, Zhong
  et al., OSDI 2024; Splitwise, Patel et al., ISCA 2024): prompts are prefilled on the prefill
  pool (its first token comes from there), then the prompt's KV cache crosses ``kv_link``
  (``"scale-up"``: NVLink or ICI, the pools sharing a node or slice; ``"scale-out"``: the
  network between nodes), every chip sending its shard at once
  (:func:`accelkit.collectives.point_to_point`), and decode runs on the ``replicas`` ×
  ``n_chips`` of the decode pool. The pools do not block each other (the transferred cache is
  assumed to wait where it is).
* ``beam_width``: beam search keeps ``beam_width`` sequences per request, sharing the prompt's
  blocks (vLLM shares them copy-on-write, Kwon et al., SOSP 2023); each beam decodes and reads
  its own context; the output is one beam. Its cache is reserved at admission.
* ``draft_model``, ``speculative_tokens``, ``acceptance_rate``: speculative decoding (Leviathan
  et al., ICML 2023): a draft model proposes ``speculative_tokens`` tokens a sequence, the
  target checks them in one pass and accepts each with probability ``acceptance_rate`` until
  the first rejection, ``(1 - α^(k+1)) / (1 - α)`` tokens per pass on average. The acceptance
  rate has no figure that fits every pair of models: it is the caller's named assumption.
* ``prefix_hit_rate``: prefix caching (vLLM's automatic prefix caching, whole blocks): that
  fraction of each prompt, rounded down to whole blocks, is already cached, so its prefill
  computes only the rest (attending to the cached part). Its blocks are still counted per
  request (an upper bound: a shared prefix is stored once). No measured hit rate was found to
  default to: 0.
* **Mixtures of experts** decode expert-parallel: on a group the routed experts are spread over
  the chips with two all-to-alls per MoE layer (:mod:`accelkit.tensor_parallel`), and each
  iteration reads the experts its tokens are routed to.
* ``ceilings``: ``"datasheet"`` (default: every kernel at the datasheet peak and full HBM
  bandwidth, as :func:`accelkit.inference.decode_step` prices it) or ``"achievable"``: matmuls
  at the catalog's measured ceiling for the arithmetic format
  (:meth:`accelkit.chips.Chip.achievable_flops`, mamf-finder's brute-force search), bytes at
  its achievable HBM bandwidth and the tensor-parallel collectives at the measured bus
  bandwidth (:func:`accelkit.collectives.at_bandwidth`), each sourced in the catalog; the
  validation rows run at these (``validation/serving.py``); or ``"kernels"``: those ceilings
  with each layer's matmuls at the tile/wave efficiency of their shape, which falls for the
  few-token iterations of a lightly loaded replica, times the share of the ceiling library
  kernels sustain at model shapes, the norms and activations at their measured bandwidths, and
  on an A100, H100 or H200 node the all-reduces at NCCL's measured time for their size (the
  figures training's kernels and collectives are priced by, :mod:`accelkit.calibration`), and
  on a GPU what Vidur's measured H100 profiles add: no kernel under the measured 5 us floor
  (:data:`accelkit.serving_step.CEILINGS`, :mod:`accelkit.serving_kernels`; the validation
  rows run at these).
* ``tp_overlap``: ``False`` (default) puts every tensor-parallel all-reduce on the critical
  path of its iteration; ``True`` runs them behind the iteration's kernels, as XLA's collective
  matmul does and the scaling book's serving derivations assume
  (:data:`accelkit.serving_step.TP_OVERLAP`; the training step's choice of the same name).
* ``iteration_overhead_seconds``: a runtime's fixed host time per iteration (scheduling,
  preparing inputs, sampling, processing outputs), added to every iteration (on the kernels'
  side of ``tp_overlap``; a draft model's passes pay it too). Default 0; vLLM's measured figure
  is :data:`accelkit.serving.simulation.VLLM_ITERATION_SECONDS` (1.2 ms, Vidur's profile),
  which the validation rows charge, a named assumption for TensorRT-LLM.
* ``dispatch``: ``"round_robin"`` (default), ``"random"``, or ``"least_loaded"`` over the
  replicas: each request, at its arrival, to the replica with the fewest requests given and not
  finished (ties to the lowest), NVIDIA's MLPerf LLM harness's default (``loadBalancing``,
  :data:`accelkit.serving.simulation.LEAST_LOADED_SOURCE`), the replicas then run side by side;
  ``max_batch``: sequences per replica (beams count one each; NVIDIA's MLPerf configs call it
  ``gpu_batch_size``); ``weight_dtype``, ``kv_dtype``, ``compute_dtype``, ``kv_cache_split``,
  ``overhead``, ``overhead_seconds``: as :func:`accelkit.inference.decode_step`.

Simplifications, said here once: the attention mask is causal and the softmax's FLOPs and the
cache writes are counted (the library's defaults); an iteration's time is the library's, with
no CPU scheduling, sampling or detokenising time unless ``iteration_overhead_seconds`` charges
it; arrivals are Poisson; replicas never share
work after dispatch (``least_loaded`` only counts each one's requests in flight).
"""

from accelkit.serving.curve import (FRACTIONS, SCHEDULE_LOADS, SCHEDULES, CurvePlan, LoadCurve,
                                    load_curve, scheduler_curves)
from accelkit.serving.plan import NoServingPlan, ServingPlan, capacity
from accelkit.serving.result import ServingResult
from accelkit.serving.simulation import (BLOCK_TOKENS, DISPATCH, KV_LINKS, KV_POLICIES,
                                         MAX_REQUESTS, SCHEDULERS, VLLM_ITERATION_SECONDS,
                                         arrivals, lengths, simulate)
from accelkit.serving.steady import SteadyState, steady_state

__all__ = ["BLOCK_TOKENS", "CurvePlan", "DISPATCH", "FRACTIONS", "KV_LINKS", "KV_POLICIES",
           "LoadCurve", "MAX_REQUESTS", "NoServingPlan", "SCHEDULERS", "SCHEDULES", "SCHEDULE_LOADS",
           "ServingPlan", "ServingResult", "SteadyState", "VLLM_ITERATION_SECONDS",
           "arrivals", "capacity", "lengths", "load_curve", "scheduler_curves", "simulate",
           "steady_state"]
