"""What one training step of a layout costs, vectorised over candidate layouts: the rules
:func:`accelkit.parallel.train_step` and :func:`accelkit.parallel.best_layouts` price layouts
with (the layout axes themselves are :mod:`accelkit.parallel`'s docstring).

**What overlaps with what** (each a named choice of the run's framework,
:mod:`accelkit.frameworks`; ``"default"`` is the model before frameworks were named):

* FSDP all-gathers and reduce-scatters run behind the micro-batch's compute (prefetching the
  next layer) where ``fsdp_overlap``; only the part longer than the compute is exposed.
* The data-parallel gradient reduction runs behind the backward pass of the last micro-batch
  where ``dp_overlap`` (else after it); on an interleaved pipeline (``interleave`` v > 1) each
  model chunk's reduction starts when its last micro-batch has gone back, as Megatron-core
  launches it, so it hides behind the last round of micro-batches' backward passes; with
  ``param_sync_overlap`` and a sharded optimizer its all-gather part (the weights, at the
  framework's ``param_bytes``) runs behind the next step's forward passes instead, likewise.
  Where the framework reduces the gradients per micro-batch (``grad_reduce`` "microbatch",
  FSDP sharding them: Llama 3), each micro-batch's reduce-scatter runs behind the rest of the
  step, m of them, and the last one's last model chunk is exposed; the gradients are then
  sharded over the data-parallel ranks in memory.
* Tensor-parallel collectives run behind the layers' matmuls where ``tp_overlap`` (Transformer
  Engine userbuffers, XLA collective matmul), else on the critical path; expert all-to-alls
  and pipeline sends are on the critical path (no overlap modelled: DeepSeek's DualPipe hides
  the all-to-alls, so those layouts are pessimistic here).
* The optimizer step (Adam over the parameters this chip updates, memory-bound:
  :data:`ADAM_STEP_BYTES` plus the gradient read and written) runs after the step.
* Context parallelism (``cp``, ring attention, Liu et al. 2023 arXiv:2310.01889): per attention
  layer each chip passes its K/V block around the cp ring (cp - 1 steps: a ring all-gather of
  the micro-batch's K/V, costed as one), once forward and twice backward (K/V again and their
  gradients; once more under full recompute). Where the framework rings it (``cp_overlap``,
  the default) **the ring's transfers overlap with the attention compute** of the block in
  hand, so only the part longer than the attention's FLOPs is exposed; Llama 3
  (arXiv:2407.21783 §3.3.2, the ``meta-llama3`` preset) all-gathers K/V before the attention
  instead: the same bytes, exposed (small under GQA).

* An overlapped collective is not free: while it runs, its kernels take a share of the GPU's
  compute (:func:`accelkit.calibration.processor_usage`, Calculon's A100/H100 figures: 0.15 on
  NVLink, 0.02 on InfiniBand; 0 where none is held, TPUs included), added to the step for the
  hidden part of the TP, FSDP and data-parallel traffic.
* Where the framework names Transformer Engine's overlap per GEMM
  (:attr:`accelkit.frameworks.Framework.te_overlap`, NeMo's MLPerf runs), its own figures
  replace Calculon's share for the TP traffic: the GEMMs run in pieces on the SMs the
  collectives leave (:mod:`accelkit.kernels`, where the kernels are priced as they run; at a
  fraction of peak they have no pieces); a ``bulk``
  collective's ``num_sm`` SMs run beside a GEMM on all of them, so it takes ``num_sm`` / SMs of
  the chip while it runs (the share of the TP traffic's hidden part is the mean over the named
  collectives, each a layer's activations: 4 of 10 bulk at 4 of 132 SMs, 0.012); ring-exchange
  sends run on the copy engine (no SMs). A forward GEMM's reduce-scatter, sent piece by piece
  behind the next piece, leaves its last piece's share (1 / pieces of a reduce-scatter, half an
  all-reduce-equivalent) after the GEMM: exposed. Each collective is hidden behind the layer's
  compute as a whole, not against its own GEMM (at the measured all-reduce bandwidth each of
  GPT-3's TP-4 collectives is shorter than its GEMM on H100, so pairing them exposes nothing
  more); not priced: the ring reduce-scatter's closing sum of the received pieces, the copy
  engine's HBM traffic beside the GEMMs, a userbuffers collective's own bandwidth on its few
  SMs (NCCL's measured curve is used), cga_size, atomic GEMMs and fp8 buffers.

**Collectives**: each group's cost is a line in the array size (latency + bytes × a constant,
:func:`accelkit.layout.cost_line`), read once per distinct group of the candidates, so thousands
of layouts cost a few dozen calls to :mod:`accelkit.collectives`. At achievable bandwidth, a
TP all-reduce inside one NVLink node is priced instead at the bus bandwidth NCCL measurably
reaches for its message size (:func:`accelkit.calibration.all_reduce_busbw`, vidur's A100 and
H100 curves: 174 GB/s at 64 MiB on 8 A100, against the 16 GiB plateau's 235).

**Memory per chip** (bytes): weights, gradients and optimizer state at 2 + g + 12 bytes per
parameter (bf16 weights, gradients in the framework's precision g = 2 or 4, fp32 master copy
and two Adam moments), sharded over tp·pp (routed experts also over ep) and over fsdp, the
optimizer state also over dp·cp where the framework shards it (Megatron-LM's 2021 runs: not;
the distributed optimizer spans the data and context-parallel chips, which hold the same
weights); FSDP adds two gathered layers in flight. Context parallelism divides the activations
per chip by cp (each chip holds 1/cp of every sequence).
Activations follow :mod:`accelkit.activations` (Korthikanti et al. 2022, generalised to the
real tensor widths; recompute "none", "selective" or "full"; the micro-batches in flight on a
pipeline stage; the last stage's logits).

**Compute**: with ``kernel_seconds`` (``compute_efficiency="predicted"`` in
:mod:`accelkit.parallel`), every kernel as it runs (:mod:`accelkit.kernels`: recomputation,
attention implementation and sequence parallelism included) and collectives at achievable
bandwidth; otherwise the model's FLOPs per token (``Model.flops_per_token("train")``) plus what
recomputation adds, at ``compute_efficiency`` × the datasheet peak (1.0: an upper bound), with
datasheet bandwidths. MFU counts model FLOPs only (no recomputation), as PaLM defines it.

Every combination of times goes through :func:`accelkit.roofline.times`, which names where
the model overlaps and where it adds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accelkit import (activations, calibration, chips, dtypes, frameworks, kernels, models,
                      roofline)
from accelkit.layout import AXES, chips_per_domain, cost_line, domain_chips

#: Bytes per parameter: bf16 weights, bf16 gradients, fp32 master weights + Adam m and v.
WEIGHT_BYTES, GRAD_BYTES, OPTIMIZER_BYTES = 2.0, 2.0, 12.0
#: HBM bytes per parameter of one Adam step beyond the gradient's: read and write the fp32
#: master weight, m and v (24), write the bf16 weight (2). The step is memory-bound.
ADAM_STEP_BYTES = 26.0
ACT_BYTES = activations.BYTES_PER_VALUE  # bf16 activations


@dataclass(frozen=True)
class ModelSpec:
    """The constants of a model and sequence length that the step model needs (:func:`spec`)."""

    name: str
    layers: int
    moe_layers: int
    d: int
    vocab: int
    seq_len: int
    params: float
    expert_params: float        # routed experts, all layers (sharded by ep)
    layer_params: float         # average block, every expert counted
    model_flops_token: float    # training FLOPs per token (MFU numerator)
    attn_fwd_flops_token: float  # attention scores forward (selective recompute redoes these)
    activations: activations.LayerActivations
    experts_per_token: int
    n_experts: int
    kv_bytes_per_token: float = 0.0  # K and V of one token, one layer, bf16 (ring attention)
    kv_heads: int = 1                # K/V heads (split over tp while tp <= kv_heads)


def spec(model: models.Transformer, seq_len: int, dropout: bool = False,
         fused_attention: bool = False) -> ModelSpec:
    """The :class:`ModelSpec` of a catalog transformer at ``seq_len`` (``dropout``: count its
    masks in activation memory, Korthikanti et al.'s GPT setting; ``fused_attention``: a
    FlashAttention-style kernel, whose s x s scores never reach HBM, so no recompute policy
    keeps them and none has them in its working set)."""
    moe = model if isinstance(model, models.MoETransformer) else None
    ops = model.operations(batch=1, seq_len=seq_len, phase="forward")
    attn_fwd = math.fsum(op.flops for op in ops if op.kind == "attention") / seq_len
    return ModelSpec(
        name=model.name, layers=model.layers,
        moe_layers=moe.moe_layers if moe is not None else 0, d=model.d_model, vocab=model.vocab,
        seq_len=seq_len, params=float(model.params),
        expert_params=float(moe.routed_expert_params) if moe is not None else 0.0,
        layer_params=float(model.layer_params),
        model_flops_token=model.flops_per_token("train", seq_len=seq_len),
        attn_fwd_flops_token=attn_fwd, activations=activations.of(model, dropout,
                                                                    fused_attention),
        experts_per_token=moe.experts_per_token if moe is not None else 0,
        n_experts=moe.n_experts if moe is not None else 0,
        kv_bytes_per_token=ACT_BYTES * model.attention_kv_heads * (model.qk_head_dim
                                                                  + model.value_head_dim),
        kv_heads=model.attention_kv_heads)


def _factorize(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for arrays with few distinct values, without
    sorting the whole array: runs of equal keys (candidates come in blocks) are collapsed
    first, and only the distinct values are sorted."""
    keys = keys.reshape(-1)
    if len(keys) == 0:
        return keys.copy(), np.zeros(0, dtype=np.intp)
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    unique, run_index = np.unique(keys[starts], return_inverse=True)
    lengths = np.diff(np.append(starts, len(keys)))
    return unique, np.repeat(run_index.reshape(-1), lengths)


def _costs(chip: chips.Chip, kind: str, n: np.ndarray, k: np.ndarray, bandwidth: str = "datasheet",
           job_chips: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(latency, seconds per byte) per candidate: :func:`accelkit.layout.cost_line` of each
    distinct group (``n`` chips, ``k`` per domain), one collectives call each."""
    keys = n.astype(np.int64) * (1 << 24) + k.astype(np.int64)
    unique, inverse = _factorize(keys)
    lat = np.empty(len(unique))
    per = np.empty(len(unique))
    for i, key in enumerate(unique.tolist()):
        lat[i], per[i], _ = cost_line(chip, kind, key >> 24, key & ((1 << 24) - 1), bandwidth,
                                      job_chips)
    inverse = inverse.reshape(-1)
    return lat[inverse], per[inverse]


def _measured_tp(chip: chips.Chip, tp: np.ndarray, tp_per_domain: np.ndarray,
                 nbytes: np.ndarray, modelled: np.ndarray) -> np.ndarray:
    """Each candidate's TP all-reduce at the measured bus bandwidth for its message size
    (:func:`accelkit.calibration.all_reduce_busbw`: NCCL inside one NVLink node) where the
    group sits in one node and a curve is measured for its size; ``modelled`` elsewhere."""
    out = np.array(modelled, dtype=float, copy=True)
    nbytes = np.broadcast_to(np.asarray(nbytes, dtype=float), out.shape)
    for n in np.unique(tp).tolist():
        mask = (tp == n) & (tp_per_domain >= n)
        if n <= 1 or not mask.any():
            continue
        busbw = calibration.all_reduce_busbw(chip, int(n), nbytes[mask])
        if busbw is not None:
            out[mask] = 2.0 * (n - 1.0) / n * nbytes[mask] / busbw
    return out


def evaluate(spec: ModelSpec, chip: chips.Chip, batch_tokens: int, c: dict[str, np.ndarray],
             efficiency: float | np.ndarray, dtype: str, *,
             framework: frameworks.Framework | None = None,
             kernel_seconds: np.ndarray | None = None,
             bandwidth: str = "datasheet",
             head_seconds: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Time, memory and collectives of one step of each candidate layout, as arrays.

    ``c`` holds equal-length integer arrays ``dp``, ``fsdp``, ``tp``, ``pp``, ``ep``,
    ``interleave``, ``mb`` (micro-batch tokens), optionally ``cp`` (context parallel, 1 when
    absent) and ``recompute`` (codes: the index in
    :data:`accelkit.activations.RECOMPUTE`), one entry per candidate; ``efficiency`` is the
    fraction of peak the kernels reach (a float, or one per candidate). Returns arrays the
    candidates' length, by name: ``seconds``, ``compute``, ``comm``, ``exposed``, ``bubble``,
    ``bubble_fraction``, ``memory``, ``state``, ``activations``, ``mfu``, ``tps`` and the
    per-collective breakdown :mod:`accelkit.parallel` builds a TrainStep from.

    ``framework`` (:mod:`accelkit.frameworks`, default ``"default"``) says which collectives
    overlap, the gradient precision and whether the optimizer state is sharded over dp.
    ``kernel_seconds`` (one per candidate: :func:`accelkit.kernels.microbatch_seconds`, a
    micro-batch through every layer on one TP shard, recomputation included) replaces the
    FLOPs-at-``efficiency`` roofline, ``head_seconds`` (:func:`accelkit.kernels.head_seconds`)
    its LM-head part, which the last pipeline stage runs alone; ``bandwidth`` ("datasheet" or "achievable") is the
    bandwidth collectives and the optimizer step run at.
    """
    fw = frameworks.get(framework)
    grad_bytes = fw.grad_bytes
    dp, fsdp, tp, pp, ep = (c[a].astype(float) for a in ("dp", "fsdp", "tp", "pp", "ep"))
    v, mb, rc = c["interleave"].astype(float), c["mb"].astype(float), c["recompute"]
    cp = c["cp"].astype(float) if "cp" in c else np.ones_like(tp)
    peak = chip.peak_flops(dtypes.check(dtype)) * efficiency
    replicas = dp * fsdp * ep
    m = batch_tokens / replicas / mb                       # micro-batches per step
    chunk_layers = np.ceil(spec.layers / (pp * v))          # layers per virtual stage
    stage_layers = chunk_layers * v                         # layers on the slowest chip
    balance = stage_layers * pp / spec.layers               # ≥ 1: uneven stages
    moe_frac = spec.moe_layers / spec.layers
    stage_moe = stage_layers * moe_frac

    # -- compute ---------------------------------------------------------------------------
    hw_token = spec.model_flops_token + np.where(
        rc == 2, spec.model_flops_token / 3.0, np.where(rc == 1, spec.attn_fwd_flops_token, 0.0))
    flops_mb = mb * hw_token / (tp * pp * cp) * balance
    # -- parameters held per chip (before FSDP sharding) -----------------------------------
    dense_params = (spec.params - spec.expert_params) / (tp * pp)
    expert_params = spec.expert_params / (tp * pp * ep)
    stage_params = (dense_params + expert_params) * balance
    # Roofline per micro-batch: every micro-batch reads the stage's weights in the forward pass,
    # the backward pass (input and weight gradients) and any full recompute, and adds into the
    # gradient buffer (read + write). Small micro-batches become memory-bound.
    weight_traffic = stage_params * (WEIGHT_BYTES * (3.0 + (rc == 2)) + 2.0 * GRAD_BYTES)
    # the arithmetic and the weight reads overlap: the micro-batch's roofline
    compute_mb = roofline.times(compute_seconds=flops_mb / peak,
                                memory_seconds=weight_traffic / chip.hbm_bytes_per_second,
                                overlap=True).seconds
    # the whole model's micro-batch on one TP shard; the LM head and cross-entropy part of it
    head_flops = 6.0 * spec.d * spec.vocab * (1.0 + (rc == 2) / 3.0)
    if kernel_seconds is not None:  # kernels as they run (accelkit.kernels)
        total_mb = np.asarray(kernel_seconds, dtype=float)
        head_mb = (np.asarray(head_seconds, dtype=float) if head_seconds is not None
                   else np.zeros_like(total_mb))
    else:
        total_mb = compute_mb * pp / balance
        head_mb = mb * head_flops / (tp * cp) / peak
    # a stage's layers take their share; the last stage also runs the LM head and the
    # cross-entropy (Narayanan et al. 2021: the output layer sits on the last stage), with one
    # layer fewer where the framework balances the end stages (Llama 3, arXiv:2407.21783
    # section 3.3.2); the slowest stage sets the pace (at pp = 1 the two are the same)
    layers_mb = (total_mb - head_mb) * stage_layers / spec.layers
    trim = np.where((pp > 1) & fw.balanced_end_stages, 1.0, 0.0)
    last_mb = layers_mb * (stage_layers - trim) / stage_layers + head_mb
    compute_mb = np.maximum(layers_mb, last_mb)

    # -- strides and domains -----------------------------------------------------------------
    job = int(dp[0] * fsdp[0] * tp[0] * pp[0] * ep[0] * cp[0])
    domain = domain_chips(chip, job)
    stride = {"tp": np.ones_like(tp)}
    stride["cp"] = tp
    stride["ep"] = tp * cp
    stride["pp"] = tp * cp * ep
    stride["fsdp"] = tp * cp * ep * pp
    stride["dp"] = tp * cp * ep * pp * fsdp
    size = {"tp": tp, "cp": cp, "ep": ep, "pp": pp, "fsdp": fsdp, "dp": dp}
    with_cp = bool((cp > 1).any())  # most searches have none: skip their arithmetic
    per = {a: chips_per_domain(size[a].astype(np.int64), stride[a].astype(np.int64), domain)
           for a in AXES if a != "cp" or with_cp}
    if not with_cp:
        per["cp"] = np.ones(len(cp), dtype=np.int64)

    unit: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}

    def cost(kind: str, axis: str, nbytes: np.ndarray) -> np.ndarray:
        if (kind, axis) not in unit:
            unit[kind, axis] = _costs(chip, kind, size[axis], per[axis], bandwidth, job)
        lat, sec_per_byte = unit[kind, axis]
        return np.where(size[axis] > 1, lat + sec_per_byte * nbytes, 0.0)

    act_mb = mb / cp * spec.d * ACT_BYTES                  # a chip's d_model activations
    # -- tensor parallel: 2 all-reduce-equivalents per layer forward, 2 backward, 2 recompute
    tp_calls = stage_layers * (4.0 + 2.0 * (rc == 2))
    tp_each = cost("all_reduce", "tp", act_mb)
    if bandwidth == "achievable":
        tp_each = _measured_tp(chip, tp, per["tp"], act_mb, tp_each)
    tp_mb = tp_calls * tp_each
    # -- expert parallel: dispatch + combine all-to-all per MoE layer, forward and backward
    ep_calls = stage_moe * (4.0 + 2.0 * (rc == 2))
    ep_bytes = ep * act_mb / tp * spec.experts_per_token
    ep_each = cost("all_to_all", "ep", ep_bytes)
    ep_mb = ep_calls * ep_each
    # -- pipeline sends: one activation forward, one gradient backward, per virtual stage
    pp_calls = 2.0 * v * (pp > 1)
    pp_lat, pp_per = _costs(chip, "send", pp.astype(np.int64), per["pp"], bandwidth, job)
    pp_each = np.where(pp > 1, pp_lat + pp_per * act_mb / tp, 0.0)
    pp_mb = pp_calls * pp_each
    # -- context parallel: the ring passes K/V blocks (an all-gather of the micro-batch's K/V on
    # this TP shard) once forward, twice backward, once more under full recompute; it runs
    # behind the attention's own FLOPs (forward, 2x backward, a recompute of the scores) where
    # the framework rings it (cp_overlap), else it is all-gathered first: exposed (Llama 3)
    cp_calls = stage_layers * (3.0 + (rc == 2))
    kv_share = np.maximum(spec.kv_heads / tp, 1.0) / spec.kv_heads
    cp_bytes = mb * spec.kv_bytes_per_token * kv_share
    zero = np.zeros_like(mb)
    cp_each = cost("all_gather", "cp", cp_bytes) if with_cp else zero
    if with_cp:
        attention_mb = (spec.attn_fwd_flops_token * (3.0 + (rc >= 1)) * mb / (tp * pp * cp)
                        * balance / peak)
        cp_mb = roofline.times(compute_seconds=attention_mb,
                               communication_seconds=cp_calls * cp_each,
                               overlap=fw.cp_overlap).exposed_communication_seconds
    else:
        cp_mb = zero

    # -- FSDP: gather weights twice, reduce-scatter gradients once, per micro-batch ---------
    gather_each = cost("all_gather", "fsdp", stage_params * WEIGHT_BYTES)
    scatter_each = cost("reduce_scatter", "fsdp", stage_params * grad_bytes)
    fsdp_mb = 2.0 * gather_each + scatter_each
    # FSDP's gathers and scatter prefetch behind the micro-batch's compute: overlapped (where
    # the framework prefetches; else one after the other)
    prefetched = roofline.times(compute_seconds=compute_mb, communication_seconds=fsdp_mb,
                                overlap=fw.fsdp_overlap)
    fsdp_exposed_mb = prefetched.exposed_communication_seconds
    # -- DP: all-reduce the (FSDP-sharded) gradients once per step, over dp; dense gradients
    # also over ep (ep is a data axis for them): reduce-scatter over ep, all-reduce the shard
    # over dp, all-gather over ep. A sharded optimizer's all-reduce is a reduce-scatter of the
    # gradients (grad_bytes) and an all-gather of the updated weights (param_bytes), so the
    # bytes are their mean; without one it is the gradients' all-reduce.
    dense_grad = dense_params * balance * grad_bytes / fsdp
    expert_grad = expert_params * balance * grad_bytes / fsdp
    sync = ((grad_bytes + fw.param_bytes) / (2.0 * grad_bytes) if fw.distributed_optimizer
            else 1.0)
    # cp is a data axis for every gradient: reduce-scatter over cp first, all-gather last
    dp_time = (cost("all_reduce", "dp", (dense_grad / ep + expert_grad) / cp * sync)
               + cost("reduce_scatter", "ep", dense_grad / cp * sync)
               + cost("all_gather", "ep", dense_grad / cp * sync)
               + (cost("reduce_scatter", "cp", (dense_grad + expert_grad) * sync)
                  + cost("all_gather", "cp", (dense_grad + expert_grad) * sync) if with_cp
                  else 0.0))
    # the reduce-scatter's share of it (the gradients' bytes), the rest the weights' all-gather
    scatter_share = (grad_bytes / (grad_bytes + fw.param_bytes) if fw.distributed_optimizer
                     else 0.5)
    backward_last = compute_mb * 2.0 / (3.0 + (rc == 2))
    forward_first = compute_mb / (3.0 + (rc == 2))
    # ... which hides behind the backward pass: on a 1F1B pipeline behind the last
    # micro-batch's (a stage's gradients are complete only after it); on an interleaved one
    # (v > 1) each model chunk's reduction starts when that chunk's last micro-batch has gone
    # back (Megatron-core launches the grad sync per model chunk: NVIDIA/Megatron-LM@4dabc623
    # megatron/core/pipeline_parallel/schedules.py, is_last_microbatch_for_model_chunk), so
    # the window runs from the first chunk to finish through the last round of micro-batches:
    # ((v - 1) * min(m, pp) + 1) / v micro-batch backward passes (1 at v = 1). Overlapped
    # where the framework overlaps it; else it runs after the backward pass.
    rounds = ((v - 1.0) * np.minimum(m, pp) + 1.0) / v
    backward_window = backward_last * rounds
    dp_total = dp_time
    if fw.grad_reduce == "microbatch":
        # FSDP sharding the gradients without no_sync (frameworks.Framework.grad_reduce, Llama
        # 3): each micro-batch's gradients are reduce-scattered as its backward pass makes them
        # (the step's scatter bytes, m times), the weights all-gathered once (kept through the
        # step: Llama 3 does not reshard after forward). The traffic runs behind everything
        # after the first micro-batch's backward pass, except the last micro-batch's last model
        # chunk's reduce-scatter, which follows the step's last backward pass: exposed
        scatter_mb = dp_time * scatter_share
        dp_total = m * scatter_mb + dp_time * (1.0 - scatter_share)
        tail = scatter_mb / v
        window = (m - 1.0) * compute_mb + backward_last
        dp_exposed = roofline.times(compute_seconds=window,
                                    communication_seconds=dp_total - tail,
                                    overlap=fw.dp_overlap).exposed_communication_seconds + tail
    elif fw.param_sync_overlap and fw.distributed_optimizer:
        # the weights' all-gather runs behind the next step's forward passes, chunk by chunk
        # likewise (is_first_microbatch_for_model_chunk: param sync per model chunk)
        dp_exposed = (roofline.times(compute_seconds=backward_window,
                                     communication_seconds=dp_time * scatter_share,
                                     overlap=fw.dp_overlap).exposed_communication_seconds
                      + roofline.times(compute_seconds=forward_first * rounds,
                                       communication_seconds=dp_time * (1.0 - scatter_share),
                                       overlap=True).exposed_communication_seconds)
    else:
        dp_exposed = roofline.times(compute_seconds=backward_window,
                                    communication_seconds=dp_time,
                                    overlap=fw.dp_overlap).exposed_communication_seconds
    # -- the optimizer step: memory-bound over the parameters this chip updates -------------
    local = stage_params / fsdp / (dp if fw.distributed_optimizer else 1.0)
    hbm_rate = (chip.achievable_hbm_bytes_per_second if bandwidth == "achievable"
                else float(chip.require("hbm_bytes_per_second")))
    optimizer_s = local * (ADAM_STEP_BYTES + 2.0 * grad_bytes) / hbm_rate

    # -- the step --------------------------------------------------------------------------
    # TP collectives: behind the layers' matmuls where the framework overlaps them (TE
    # userbuffers, XLA collective matmul), else on the critical path; EP and pipeline
    # transfers wait for the layers and the layers for them: not overlapped (the context-parallel
    # ring's exposed part, cp_mb, likewise)
    # with overlap scoped to the all-gathers (frameworks.TP_OVERLAP_SCOPES, XLA decomposing
    # all-gather+einsum but not einsum+reduce-scatter), the forward passes' reduce-scatters
    # (half of each forward all-reduce-equivalent; the recomputed forward's too) wait for
    # their matmul and hold up the next one: on the critical path
    tp_fixed = (stage_layers * (1.0 + (rc == 2)) * tp_each
                if fw.tp_overlap and fw.tp_overlap_scope == "all-gathers" else 0.0 * tp_mb)
    # Transformer Engine's overlaps as the framework configures them (frameworks.GemmOverlap):
    # a forward GEMM's reduce-scatter (half an all-reduce-equivalent) is sent piece by piece
    # behind the GEMM's next piece, so its last piece's share waits after the GEMM (exposed,
    # again under full recomputation); the SMs the pieces leave are in the kernels' time
    # (where it applies at all, tp > 1: no TP traffic else). The pieces and margins are the
    # kernels' (kernel_seconds, as they run); kernels at a fraction of peak have none
    te = kernels.te_gemms(fw, chip)
    if te:
        tail_share = np.zeros_like(tp)  # of a TP all-reduce-equivalent, per layer forward
        for g in te.values():
            if g.gemm.endswith("_fprop") and g.gemm in frameworks.TE_REDUCE_SCATTERS:
                tail_share = tail_share + 0.5 / g.pieces(tp)
        tp_fixed = tp_fixed + stage_layers * (1.0 + (rc == 2)) * tail_share * tp_each
    with_tp = roofline.times(compute_seconds=prefetched.seconds,
                             communication_seconds=tp_mb - tp_fixed, overlap=fw.tp_overlap)
    # an overlapped collective takes a share of the GPU's compute while it runs (its SMs copy
    # and reduce: calibration.processor_usage, Calculon's figure), paid on its hidden part
    usage = {net: calibration.processor_usage(chip, net) for net in calibration.NETWORKS}

    def stolen(axis: str, hidden: np.ndarray) -> np.ndarray:
        inside = (per[axis] >= size[axis]) & (domain > 1)
        return np.where(inside, usage["NVLink"], usage["scale-out"]) * np.maximum(hidden, 0.0)

    tp_hidden = tp_mb - tp_fixed - with_tp.exposed_communication_seconds
    if te:
        # TE's own figures replace Calculon's generic share for the TP traffic: a bulk
        # overlap's collective runs on num_sm SMs beside a GEMM launched on all of them (no
        # margin), so it takes num_sm / SMs of the chip while it runs; ring-exchange sends run
        # on the copy engine (no SMs) and a margin's SMs are already kept from the GEMM
        # (kernels); the share is the mean over the named collectives, each moving a layer's
        # activations (the step counts TP traffic in all-reduce-equivalents)
        sms = float(chip.sms_per_chip or 1)  # te_gemms: the catalog has it
        te_share = sum(g.num_sm / sms for g in te.values()
                       if g.method == "bulk") / len(te)
        tp_steal = te_share * np.maximum(tp_hidden, 0.0)
    else:
        tp_steal = stolen("tp", tp_hidden)
    steal_mb = tp_steal + stolen("fsdp", fsdp_mb - fsdp_exposed_mb)
    t_mb = roofline.times(compute_seconds=with_tp.seconds + steal_mb,
                          communication_seconds=ep_mb + pp_mb + cp_mb + tp_fixed,
                          overlap=False).seconds
    fill = (pp - 1.0) / v
    dp_steal = stolen("dp", dp_total - dp_exposed)
    seconds = (m + fill) * t_mb + dp_exposed + dp_steal + optimizer_s
    compute = m * compute_mb
    bubble = fill * t_mb
    comm_total = m * (tp_mb + ep_mb + pp_mb + fsdp_mb + cp_calls * cp_each) + dp_total
    exposed = seconds - compute - bubble - optimizer_s
    model_flops = spec.model_flops_token * batch_tokens
    chips_n = replicas * tp * pp * cp

    # -- memory per chip -------------------------------------------------------------------
    weights_b = (stage_params * WEIGHT_BYTES / fsdp
                 + np.where(fsdp > 1, 2.0 * spec.layer_params / tp * WEIGHT_BYTES, 0.0))
    # gradients sharded over the data-parallel ranks where each micro-batch reduce-scatters
    # them into the shard (grad_reduce "microbatch"); else each chip holds its stage's whole
    grads_b = stage_params * grad_bytes / fsdp / (dp * cp if fw.grad_reduce == "microbatch"
                                                   else 1.0)
    optimizer_b = stage_params * OPTIMIZER_BYTES / (fsdp * (dp * cp if fw.distributed_optimizer else 1.0))
    state = weights_b + grads_b + optimizer_b
    held = activations.stage_bytes(spec.activations, recompute=rc, seq_len=spec.seq_len,
                                   microbatch_tokens=mb / cp, microbatches=m,
                                   stage_layers=stage_layers, tp=tp, pp=pp, interleave=v,
                                   end_stage_layers=stage_layers - trim)
    memory = state + held
    return {
        "seconds": seconds, "compute": compute, "comm": comm_total, "exposed": exposed,
        "bubble": bubble, "bubble_fraction": fill / (m + fill), "memory": memory,
        "state": state, "activations": held, "m": m,
        "weights_b": weights_b, "grads_b": grads_b, "optimizer_b": optimizer_b,
        "mfu": model_flops / (seconds * chips_n * chip.peak_flops(dtypes.check(dtype))),
        "tps": batch_tokens / seconds / chips_n, "model_flops": np.full_like(seconds, model_flops),
        # breakdown
        "tp_calls": m * tp_calls, "tp_each": tp_each, "ep_calls": m * ep_calls,
        "ep_each": ep_each, "pp_calls": m * pp_calls, "pp_each": pp_each,
        "gather_each": gather_each, "scatter_each": scatter_each, "m_fsdp": m,
        "fsdp_exposed": m * fsdp_exposed_mb, "dp_time": dp_time, "dp_exposed": dp_exposed,
        "dp_total": dp_total,
        "act_mb": act_mb, "ep_bytes": ep_bytes, "stage_params": stage_params,
        "dense_grad": dense_grad, "expert_grad": expert_grad,
        "tp_exposed": m * (with_tp.exposed_communication_seconds + tp_fixed), "ep_exposed": m * ep_calls * ep_each,
        "pp_exposed": m * pp_calls * pp_each, "optimizer": optimizer_s,
        "cp_calls": m * cp_calls, "cp_each": cp_each, "cp_bytes": cp_bytes,
        "cp_exposed": m * cp_mb,
    }


__all__ = ["ACT_BYTES", "ADAM_STEP_BYTES", "GRAD_BYTES", "ModelSpec", "OPTIMIZER_BYTES", "WEIGHT_BYTES", "evaluate",
           "spec"]
