"""One training step of a transformer laid out over many chips: DP, FSDP, TP, PP and EP.

    >>> import accelkit as ak
    >>> from accelkit.parallel import Layout, train_step
    >>> step = train_step("llama-3.1-405b", "H100", Layout(dp=128, tp=8, pp=16,
    ...                   microbatch_tokens=8192, recompute="full", interleave=4),
    ...                   batch_tokens=16 * 2**20)
    >>> step.fits, step.layout.chips
    (True, 16384)

A :class:`Layout` gives the degree of each kind of parallelism; their product is the chip count.

* ``dp``: data parallel, weights and gradients replicated, optimizer state sharded over dp
  (ZeRO-1, Megatron's distributed optimizer): per step the gradients are reduce-scattered and
  the updated weights all-gathered, the same bytes as one all-reduce (costed as one).
* ``fsdp``: data parallel with weights, gradients and optimizer state sharded (ZeRO-3,
  Rajbhandari et al. 2020): each micro-batch all-gathers the weights twice (forward, and again
  for the backward pass, as they are freed in between) and reduce-scatters the gradients once.
* ``tp``: tensor (Megatron) parallel with sequence parallelism (Korthikanti et al. 2022): per
  layer and micro-batch, two all-gather/reduce-scatter pairs in the forward pass and two in the
  backward pass, each pair costed as one all-reduce of the micro-batch's d_model activations.
* ``pp``: pipeline stages, 1F1B schedule (Narayanan et al. 2021): with m micro-batches the bubble
  is (pp-1)/(m+pp-1) of the step; ``interleave`` = v virtual stages per chip shrinks it to
  (pp-1)/v / (m + (pp-1)/v) for v times the point-to-point sends. A stage holds
  ceil(layers / (pp·v))·v layers: the slowest stage sets the pace.
* ``ep``: expert parallel (MoE models only). Routed experts are sharded over ``ep`` chips, which
  are a data axis for everything else (attention, dense layers, shared experts). Per MoE layer and
  micro-batch, two all-to-alls (dispatch and combine) forward and two backward.

**What overlaps with what** (the model's assumptions):

* FSDP all-gathers and reduce-scatters run behind the micro-batch's compute (prefetching the
  next layer); only the part longer than the compute is exposed.
* The data-parallel gradient all-reduce runs behind the backward pass of the last micro-batch;
  only the part longer than that backward pass is exposed.
* Tensor-parallel collectives, expert all-to-alls and pipeline sends are on the critical path
  (no overlap modelled). Real systems hide some of them (DeepSeek's DualPipe overlaps the
  all-to-alls), so those layouts are pessimistic here.

**Mapping of layout axes to the network.** Ranks are numbered with ``tp`` fastest, then ``ep``,
``pp``, ``fsdp``, ``dp`` (the order of Llama 3, arXiv:2407.21783 §3.3.2: [TP, CP, PP, DP]).
So TP sits inside the scale-up domain (an NVLink node, an ICI slice) as long as it fits; an
axis whose stride (the product of the faster axes) fills the domain spans domains with one chip
per domain, and a group that starts inside a domain and continues beyond it is hierarchical
(k chips in each domain). Each collective is costed by :mod:`accelkit.collectives` for that group.

**Memory per chip** (bytes): weights, gradients and optimizer state at 2 + 2 + 12 bytes per
parameter (bf16 weights and gradients, fp32 master copy and two Adam moments), sharded over
tp·pp (routed experts also over ep) and over fsdp, the optimizer state also over dp; FSDP adds
two gathered layers in flight.
Activations follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models", arXiv:2205.05198, §4), generalised to the real tensor widths: per layer and
token, with sequence parallelism dividing everything by tp,

* ``"none"``: every tensor the backward pass reads: the two norm inputs (2·d each), the QKV input
  (2·d), Q, K and V (2 bytes × their widths: a·head_dim, kv_heads·head_dim ×2), the attention
  output (2·a·head_dim), the MLP input (2·d), its up-projection outputs (2·d_ff, twice for a gated
  MLP) and activation output (2·d_ff); plus the attention scores, 2·a·s (5·a·s with dropout:
  scores, mask and dropped scores). For GPT-3's shape with dropout this is Korthikanti's
  34·s·b·h + 5·a·s²·b (tested). An MoE layer stores its k (+ shared) experts' widths per token.
* ``"selective"``: the same without the attention scores (recomputed; FlashAttention does this).
* ``"full"``: only each layer's input (2·d), plus one layer's full set while it is recomputed.

A stage holds its layers' activations for the micro-batches in flight: min(m, pp) under 1F1B
(times 1 + (pp-1)/(pp·v) when interleaved; Korthikanti et al. §4.2, pipeline parallelism).
The last stage also holds the micro-batch's fp32 logits (4·vocab bytes per token, over tp).

**Compute**: the model's FLOPs per token (``Model.flops_per_token("train")``: matmuls and
causal attention) plus what recomputation adds (the forward pass for ``"full"``, the attention
scores for ``"selective"``), at ``compute_efficiency`` × peak (default 1.0, the peak: an upper
bound; small or skinny matmuls reach less, which this model does not capture). MFU counts model
FLOPs only (no recomputation), as PaLM defines it.

Not modelled: context parallelism, load imbalance between experts, optimizer-step time, stragglers,
failures, the embedding's uneven share of the first and last stages, kernel efficiency.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelkit import _validate, chips, collectives, dtypes, models

RECOMPUTE = ("none", "selective", "full")
_RECOMPUTE_CODE = {name: i for i, name in enumerate(RECOMPUTE)}
#: Bytes per parameter: bf16 weights, bf16 gradients, fp32 master weights + Adam m and v.
WEIGHT_BYTES, GRAD_BYTES, OPTIMIZER_BYTES = 2.0, 2.0, 12.0
ACT_BYTES = 2.0  # bf16 activations
_MAX_DEGREE = 10**7
_AXES = ("tp", "ep", "pp", "fsdp", "dp")  # rank order, fastest first


@dataclass(frozen=True)
class Layout:
    """Degrees of parallelism; ``chips`` is their product.

    Args:
        dp, fsdp, tp, pp, ep: degrees, whole numbers >= 1.
        microbatch_tokens: tokens per micro-batch per data-parallel replica; None = one sequence
            (the model's training length), or the replica's whole batch if that is smaller.
        recompute: "none", "selective" (attention scores) or "full" (each layer's forward).
        interleave: virtual pipeline stages per chip (1 = plain 1F1B).
    """

    dp: int = 1
    fsdp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    microbatch_tokens: int | None = None
    recompute: str = "none"
    interleave: int = 1

    def __post_init__(self) -> None:
        for name in ("dp", "fsdp", "tp", "pp", "ep", "interleave"):
            object.__setattr__(self, name, _validate.positive_int(
                name, getattr(self, name), maximum=_MAX_DEGREE))
        if self.microbatch_tokens is not None:
            object.__setattr__(self, "microbatch_tokens", _validate.positive_int(
                "microbatch_tokens", self.microbatch_tokens, maximum=10**12))
        object.__setattr__(self, "recompute",
                           _validate.choice("recompute", self.recompute, RECOMPUTE))

    @property
    def chips(self) -> int:
        return self.dp * self.fsdp * self.tp * self.pp * self.ep

    @property
    def data_parallel(self) -> int:
        """Replicas that each see different tokens: dp · fsdp · ep."""
        return self.dp * self.fsdp * self.ep

    def __str__(self) -> str:
        parts = [f"{a}{getattr(self, a)}" for a in ("dp", "fsdp", "tp", "pp", "ep")
                 if getattr(self, a) > 1] or ["1 chip"]
        if self.interleave > 1:
            parts.append(f"interleave={self.interleave}")  # not "v4": that reads as TPU v4
        mb = "auto" if self.microbatch_tokens is None else f"{self.microbatch_tokens:,}"
        return " ".join(parts) + f" mb={mb} recompute={self.recompute}"


@dataclass(frozen=True)
class CollectiveCost:
    """One kind of collective in a step: per call, calls per step, and what is exposed."""

    name: str            # "tp", "ep", "pp", "fsdp_gather", "fsdp_scatter", "dp_grads"
    kind: str            # all_reduce, all_gather, reduce_scatter, all_to_all, send
    group_chips: int
    chips_per_domain: int
    network: str
    array_bytes: float   # the whole array (contract of accelkit.collectives)
    calls_per_step: float
    seconds_each: float
    seconds: float       # calls_per_step × seconds_each
    exposed_seconds: float


@dataclass(frozen=True)
class TrainStep:
    """One optimizer step of ``layout``: time, where it goes, memory per chip, MFU."""

    model: str
    chip: str
    layout: Layout
    batch_tokens: int
    seq_len: int
    microbatch_tokens: int
    microbatches: int
    seconds: float
    compute_seconds: float
    communication_seconds: float          # every collective, hidden or not
    exposed_communication_seconds: float  # the part that lengthens the step
    bubble_seconds: float
    bubble_fraction: float
    memory_bytes_per_chip: float
    state_bytes_per_chip: float           # weights + gradients + optimizer state
    activation_bytes_per_chip: float
    hbm_bytes: float
    fits: bool
    model_flops_per_step: float
    mfu: float
    tokens_per_second_per_chip: float
    collectives: tuple[CollectiveCost, ...] = field(default=(), repr=False)
    # The state's parts: weight_bytes_per_chip + gradient_bytes_per_chip +
    # optimizer_bytes_per_chip == state_bytes_per_chip (weights include FSDP's gathered layers).
    weight_bytes_per_chip: float = field(default=0.0, repr=False)
    gradient_bytes_per_chip: float = field(default=0.0, repr=False)
    optimizer_bytes_per_chip: float = field(default=0.0, repr=False)

    @property
    def collective_seconds(self) -> dict[str, float]:
        """Seconds per step of each collective, by name."""
        return {c.name: c.seconds for c in self.collectives}

    def __repr__(self) -> str:
        return (f"TrainStep({self.model} on {self.layout.chips:,} x {self.chip}, {self.layout}: "
                f"{self.seconds:.3g} s/step, MFU {self.mfu:.1%}, bubble "
                f"{self.bubble_fraction:.1%}, exposed comm {self.exposed_communication_seconds:.3g}"
                f" s, {self.memory_bytes_per_chip / 1e9:,.1f} GB/chip "
                f"{'fits' if self.fits else 'does NOT fit'})")


# --------------------------------------------------------------------------------------------
# Model constants the vectorised evaluation needs
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Spec:
    name: str
    layers: int
    moe_layers: int
    d: int
    heads: int
    vocab: int
    seq_len: int
    params: float
    expert_params: float        # routed experts, all layers (sharded by ep)
    layer_params: float         # average block, every expert counted
    model_flops_token: float    # training FLOPs per token (MFU numerator)
    attn_fwd_flops_token: float  # attention scores forward (selective recompute redoes these)
    act_linear: float           # bytes per token per layer, "none" minus the score term
    act_score_coeff: float      # × heads × seq_len: bytes per token per layer of scores
    experts_per_token: int
    n_experts: int


def _spec(model: models.Model, seq_len: int, dropout: bool) -> _Spec:
    if not isinstance(model, models.Transformer):
        raise ValueError(f"model must be a catalog transformer (dense or MoE); {model.name} is "
                         f"a {model.family}")
    d, a = model.d_model, model.heads
    moe = model if isinstance(model, models.MoETransformer) else None
    if moe is not None:
        qk, vd = moe._qk_head_dim, moe._v_head_dim
        kv = moe.heads if moe._mla else moe.kv_heads
    else:
        qk = vd = model.head_dim
        kv = model.kv_heads
    drop = 1.0 if dropout else 0.0
    attn = (2 * d + 2 * d + 2 * a * qk + 2 * kv * qk + 2 * kv * vd + 2 * a * vd + drop * d)
    dense_mlp = 2 * d + 2 * d + 2 * model._mlp_in + 2 * model.d_ff + drop * d
    if moe is not None:
        rows = moe.experts_per_token + moe.shared_experts
        moe_mlp = (2 * d + rows * (2 * d + 2 * moe._expert_in + 2 * moe.d_ff_expert)
                   + 4 * moe.n_experts + drop * d)
        mlp_avg = (moe.dense_layers * dense_mlp + moe.moe_layers * moe_mlp) / moe.layers
        expert = float(moe.routed_expert_params)
    else:
        mlp_avg = dense_mlp
        expert = 0.0
    ops = model.operations(batch=1, seq_len=seq_len, phase="forward")
    attn_fwd = math.fsum(op.flops for op in ops if op.kind == "attention") / seq_len
    return _Spec(
        name=model.name, layers=model.layers,
        moe_layers=moe.moe_layers if moe is not None else 0, d=d, heads=a, vocab=model.vocab,
        seq_len=seq_len, params=float(model.params), expert_params=expert,
        layer_params=float(model.layer_params),
        model_flops_token=model.flops_per_token("train", seq_len=seq_len),
        attn_fwd_flops_token=attn_fwd, act_linear=attn + mlp_avg,
        act_score_coeff=(5.0 if dropout else 2.0),
        experts_per_token=moe.experts_per_token if moe is not None else 0,
        n_experts=moe.n_experts if moe is not None else 0)


def activation_bytes_per_token_per_layer(model: str | models.Model, recompute: str = "none",
                                         seq_len: int | None = None, tp: int = 1,
                                         dropout: bool = False) -> float:
    """Activation bytes one token leaves per layer for the backward pass (see module docstring).

    For GPT-3's shape with ``dropout=True`` and ``recompute="none"`` this is Korthikanti et
    al.'s (34·h + 5·a·s)/t per token; ``"selective"`` 34·h/t; ``"full"`` 2·h/t.
    """
    the_model = models.get(model)
    spec = _spec(the_model, _seq_len(the_model, seq_len), dropout)
    policy = _validate.choice("recompute", recompute, RECOMPUTE)
    tp = _validate.positive_int("tp", tp, maximum=_MAX_DEGREE)
    if policy == "full":
        return 2.0 * spec.d / tp
    score = spec.act_score_coeff * spec.heads * spec.seq_len if policy == "none" else 0.0
    return (spec.act_linear + score) / tp


def _seq_len(model: models.Model, seq_len: int | None) -> int:
    if seq_len is None:
        return int(model.seq_len)  # type: ignore[attr-defined]
    return _validate.positive_int("seq_len", seq_len, maximum=10**8)


# --------------------------------------------------------------------------------------------
# Network: which chips of a group share a scale-up domain, and what a collective costs
# --------------------------------------------------------------------------------------------

def _domain_chips(chip: chips.Chip, job_chips: int | None = None) -> int:
    """Chips in one scale-up domain: an NVLink domain (GPU); on a TPU the ICI slice, which for
    a job larger than the largest slice is the equal split accelkit.collectives picks."""
    largest = int(chip.scaleup_domain_chips or chip.max_domain_chips or 1)
    if chip.kind == "tpu" and job_chips is not None and job_chips > largest:
        slices = collectives.group_layout(chip, job_chips)[0]
        return job_chips // slices
    return largest


def _per_domain(n: np.ndarray, stride: np.ndarray, domain: int) -> np.ndarray:
    """Chips of a group of ``n`` (ranks ``stride`` apart) that share one domain.

    With ranks numbered fastest axis first, a group whose stride fills the domain has one member
    per domain; otherwise domain // stride members share one, rounded down to a whole divisor of
    the group (gcd), so the group splits into equal parts per domain.
    """
    n = np.asarray(n, dtype=np.int64)
    stride = np.maximum(np.asarray(stride, dtype=np.int64), 1)
    fit = np.maximum(domain // stride, 1)
    return np.where(stride * n <= domain, n, np.where(stride >= domain, 1, np.gcd(n, fit)))


_COST_CACHE: dict[tuple[str, str, int, int], tuple[float, float, str]] = {}
_REFERENCE_BYTES = float(2**30)


def _collective(chip: chips.Chip, kind: str, n: int, k: int, nbytes: float) -> Any:
    """Call accelkit.collectives for a group of ``n`` chips, ``k`` of them per domain."""
    if kind == "send":
        network = "scale-up" if k >= n else "scale-out"
        return collectives.point_to_point(chip, array_bytes=nbytes, network=network)
    if k >= n:
        return collectives.collective(kind, chip, array_bytes=nbytes, over=n)
    if chip.kind == "gpu":
        return collectives.collective(kind, chip, array_bytes=nbytes, over=n,
                                      inner=_domain_chips(chip) // k)
    axes = collectives.group_layout(chip, k)[1] if k > 1 else (1,)
    return collectives.collective(kind, chip, array_bytes=nbytes, over=axes, slices=n // k)


def _unit_cost(chip: chips.Chip, kind: str, n: int, k: int) -> tuple[float, float, str]:
    """(latency seconds, seconds per byte of the whole array, network) of one collective.

    Collectives are alpha-beta (seconds = latency + bytes × a constant, accelkit.collectives),
    so one call per group shape covers every array size.
    """
    key = (chip.name, kind, n, k)
    hit = _COST_CACHE.get(key)
    if hit is not None:
        return hit
    if n <= 1:
        result = (0.0, 0.0, "none")
    else:
        r = _collective(chip, kind, n, k, _REFERENCE_BYTES)
        result = (float(r.latency_seconds), float(r.bandwidth_seconds) / _REFERENCE_BYTES,
                  str(r.network))
    _COST_CACHE[key] = result
    return result


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


def _costs(chip: chips.Chip, kind: str, n: np.ndarray, k: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`_unit_cost`: one collectives call per distinct (n, k)."""
    keys = n.astype(np.int64) * (1 << 24) + k.astype(np.int64)
    unique, inverse = _factorize(keys)
    lat = np.empty(len(unique))
    per = np.empty(len(unique))
    for i, key in enumerate(unique.tolist()):
        lat[i], per[i], _ = _unit_cost(chip, kind, key >> 24, key & ((1 << 24) - 1))
    inverse = inverse.reshape(-1)
    return lat[inverse], per[inverse]


# --------------------------------------------------------------------------------------------
# The vectorised step model
# --------------------------------------------------------------------------------------------

def _evaluate(spec: _Spec, chip: chips.Chip, batch_tokens: int, c: dict[str, np.ndarray],
              efficiency: float | np.ndarray, dtype: str) -> dict[str, np.ndarray]:
    """Evaluate candidate layouts given as equal-length integer arrays in ``c``."""
    dp, fsdp, tp, pp, ep = (c[a].astype(float) for a in ("dp", "fsdp", "tp", "pp", "ep"))
    v, mb, rc = c["interleave"].astype(float), c["mb"].astype(float), c["recompute"]
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
    flops_mb = mb * hw_token / (tp * pp) * balance
    # -- parameters held per chip (before FSDP sharding) -----------------------------------
    dense_params = (spec.params - spec.expert_params) / (tp * pp)
    expert_params = spec.expert_params / (tp * pp * ep)
    stage_params = (dense_params + expert_params) * balance
    # Roofline per micro-batch: every micro-batch reads the stage's weights in the forward pass,
    # the backward pass (input and weight gradients) and any full recompute, and adds into the
    # gradient buffer (read + write). Small micro-batches become memory-bound.
    weight_traffic = stage_params * (WEIGHT_BYTES * (3.0 + (rc == 2)) + 2.0 * GRAD_BYTES)
    compute_mb = np.maximum(flops_mb / peak, weight_traffic / chip.hbm_bytes_per_second)

    # -- strides and domains -----------------------------------------------------------------
    domain = _domain_chips(chip, int(dp[0] * fsdp[0] * tp[0] * pp[0] * ep[0]))
    stride = {"tp": np.ones_like(tp)}
    stride["ep"] = tp
    stride["pp"] = tp * ep
    stride["fsdp"] = tp * ep * pp
    stride["dp"] = tp * ep * pp * fsdp
    size = {"tp": tp, "ep": ep, "pp": pp, "fsdp": fsdp, "dp": dp}
    per = {a: _per_domain(size[a].astype(np.int64), stride[a].astype(np.int64), domain)
           for a in _AXES}

    unit: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}

    def cost(kind: str, axis: str, nbytes: np.ndarray) -> np.ndarray:
        if (kind, axis) not in unit:
            unit[kind, axis] = _costs(chip, kind, size[axis], per[axis])
        lat, sec_per_byte = unit[kind, axis]
        return np.where(size[axis] > 1, lat + sec_per_byte * nbytes, 0.0)

    act_mb = mb * spec.d * ACT_BYTES                       # a micro-batch's d_model activations
    # -- tensor parallel: 2 all-reduce-equivalents per layer forward, 2 backward, 2 recompute
    tp_calls = stage_layers * (4.0 + 2.0 * (rc == 2))
    tp_each = cost("all_reduce", "tp", act_mb)
    tp_mb = tp_calls * tp_each
    # -- expert parallel: dispatch + combine all-to-all per MoE layer, forward and backward
    ep_calls = stage_moe * (4.0 + 2.0 * (rc == 2))
    ep_bytes = ep * act_mb / tp * spec.experts_per_token
    ep_each = cost("all_to_all", "ep", ep_bytes)
    ep_mb = ep_calls * ep_each
    # -- pipeline sends: one activation forward, one gradient backward, per virtual stage
    pp_calls = 2.0 * v * (pp > 1)
    pp_lat, pp_per = _costs(chip, "send", pp.astype(np.int64), per["pp"])
    pp_each = np.where(pp > 1, pp_lat + pp_per * act_mb / tp, 0.0)
    pp_mb = pp_calls * pp_each

    # -- FSDP: gather weights twice, reduce-scatter gradients once, per micro-batch ---------
    gather_each = cost("all_gather", "fsdp", stage_params * WEIGHT_BYTES)
    scatter_each = cost("reduce_scatter", "fsdp", stage_params * GRAD_BYTES)
    fsdp_mb = 2.0 * gather_each + scatter_each
    fsdp_exposed_mb = np.maximum(0.0, fsdp_mb - compute_mb)
    # -- DP: all-reduce the (FSDP-sharded) gradients once per step, over dp; dense gradients
    # also over ep (ep is a data axis for them): reduce-scatter over ep, all-reduce the shard
    # over dp, all-gather over ep.
    dense_grad = dense_params * balance * GRAD_BYTES / fsdp
    expert_grad = expert_params * balance * GRAD_BYTES / fsdp
    dp_time = (cost("all_reduce", "dp", dense_grad / ep + expert_grad)
               + cost("reduce_scatter", "ep", dense_grad) + cost("all_gather", "ep", dense_grad))
    backward_last = compute_mb * 2.0 / (3.0 + (rc == 2))
    dp_exposed = np.maximum(0.0, dp_time - backward_last)

    # -- the step --------------------------------------------------------------------------
    t_mb = compute_mb + tp_mb + ep_mb + pp_mb + fsdp_exposed_mb
    fill = (pp - 1.0) / v
    seconds = (m + fill) * t_mb + dp_exposed
    compute = m * compute_mb
    bubble = fill * t_mb
    comm_total = m * (tp_mb + ep_mb + pp_mb + fsdp_mb) + dp_time
    exposed = seconds - compute - bubble
    model_flops = spec.model_flops_token * batch_tokens
    chips_n = replicas * tp * pp

    # -- memory per chip -------------------------------------------------------------------
    weights_b = (stage_params * WEIGHT_BYTES / fsdp
                 + np.where(fsdp > 1, 2.0 * spec.layer_params / tp * WEIGHT_BYTES, 0.0))
    grads_b = stage_params * GRAD_BYTES / fsdp
    optimizer_b = stage_params * OPTIMIZER_BYTES / (fsdp * dp)
    state = weights_b + grads_b + optimizer_b
    linear = spec.act_linear
    score = spec.act_score_coeff * spec.heads * spec.seq_len
    per_token_layer = np.where(rc == 0, linear + score,
                               np.where(rc == 1, linear, 2.0 * spec.d)) / tp
    working = np.where(rc == 2, (linear + score) / tp,
                       np.where(rc == 1, score / tp, 0.0)) * mb
    in_flight = np.minimum(m, pp) * np.where(v > 1, 1.0 + (pp - 1.0) / (pp * v), 1.0)
    first = stage_layers * per_token_layer * mb * in_flight + working
    logits = 4.0 * spec.vocab * mb / tp
    last = stage_layers * per_token_layer * mb + working + logits
    activations = np.maximum(first, last)
    memory = state + activations
    return {
        "seconds": seconds, "compute": compute, "comm": comm_total, "exposed": exposed,
        "bubble": bubble, "bubble_fraction": fill / (m + fill), "memory": memory,
        "state": state, "activations": activations, "m": m,
        "weights_b": weights_b, "grads_b": grads_b, "optimizer_b": optimizer_b,
        "mfu": model_flops / (seconds * chips_n * chip.peak_flops(dtypes.check(dtype))),
        "tps": batch_tokens / seconds / chips_n, "model_flops": np.full_like(seconds, model_flops),
        # breakdown
        "tp_calls": m * tp_calls, "tp_each": tp_each, "ep_calls": m * ep_calls,
        "ep_each": ep_each, "pp_calls": m * pp_calls, "pp_each": pp_each,
        "gather_each": gather_each, "scatter_each": scatter_each, "m_fsdp": m,
        "fsdp_exposed": m * fsdp_exposed_mb, "dp_time": dp_time, "dp_exposed": dp_exposed,
        "act_mb": act_mb, "ep_bytes": ep_bytes, "stage_params": stage_params,
        "dense_grad": dense_grad, "expert_grad": expert_grad,
        "tp_exposed": m * tp_calls * tp_each, "ep_exposed": m * ep_calls * ep_each,
        "pp_exposed": m * pp_calls * pp_each,
    }


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

def _check_common(model: str | models.Model, chip: str | chips.Chip, batch_tokens: object,
                  seq_len: int | None, compute_efficiency: float | str, dtype: str
                  ) -> tuple[models.Model, chips.Chip, int, int, float]:
    the_model = models.get(model)
    the_chip = chips.get(chip)
    if not isinstance(the_model, models.Transformer):
        raise ValueError(f"model must be a catalog transformer (dense or MoE); {the_model.name} "
                         f"is a {the_model.family}")
    batch = _validate.positive_int("batch_tokens", batch_tokens, maximum=10**12)
    s = _seq_len(the_model, seq_len)
    if isinstance(compute_efficiency, str):
        if compute_efficiency != PREDICTED:
            raise ValueError(f"compute_efficiency must be a fraction in (0, 1] or "
                             f"{PREDICTED!r}, got {compute_efficiency!r}")
        eff = math.nan  # a marker: _compute_efficiency asks accelkit.mfu per candidate
        from accelkit import mfu
        mfu._resolve(the_model, the_chip, dtype)  # dtype's peak, and chips it cannot model
        return the_model, the_chip, batch, s, eff
    eff = _validate.fraction("compute_efficiency", compute_efficiency)
    the_chip.peak_flops(dtypes.check(dtype))
    return the_model, the_chip, batch, s, eff


#: ``compute_efficiency=PREDICTED``: each layout's compute efficiency from accelkit.mfu (its
#: matmuls' shapes per TP shard on the chip's matrix units, the non-matmul work at HBM speed).
PREDICTED = "predicted"


def _compute_efficiency(model: models.Model, chip: chips.Chip, eff: float, dtype: str,
                        c: dict[str, np.ndarray], s: int) -> float | np.ndarray:
    """``eff`` as given, or (NaN marker) accelkit.mfu's efficiency per candidate in ``c``."""
    if not math.isnan(eff):
        return eff
    from accelkit import mfu
    return mfu._efficiencies(model, chip, dtype, c["tp"], c["ep"], c["mb"], s)


def _largest_job(chip: chips.Chip) -> int:
    """The largest job modelled: accelkit.collectives' group limit (its fat tree and flat DCN
    are untested beyond it); a chip-specific limit where the catalog gives one."""
    value = getattr(chip, "max_job_chips", None)
    return int(value) if value else collectives.MAX_GROUP_CHIPS


def _check_layout(model: models.Model, chip: chips.Chip, layout: Layout, batch: int,
                  n_chips: int | None = None) -> int:
    """Validate ``layout`` for this model, chip and batch; return the micro-batch in tokens."""
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be an accelkit.parallel.Layout, got "
                        f"{type(layout).__name__}")
    if n_chips is not None and layout.chips != n_chips:
        raise ValueError(f"layout degrees multiply to {layout.chips:,} chips "
                         f"(dp·fsdp·tp·pp·ep), but n_chips is {n_chips:,}")
    limit = _largest_job(chip)
    if layout.chips > limit:
        raise ValueError(f"layout uses {layout.chips:,} chips; {chip.name}'s largest job is "
                         f"{limit:,} chips")
    moe = isinstance(model, models.MoETransformer)
    if layout.ep > 1 and not moe:
        raise ValueError(f"ep must be 1 for the dense model {model.name} (expert parallelism "
                         f"needs a mixture of experts), got ep={layout.ep}")
    experts = getattr(model, "n_experts", 0)
    if moe and experts % layout.ep:
        raise ValueError(f"ep must divide {model.name}'s {experts} experts, got ep={layout.ep}")
    heads = model.heads  # type: ignore[attr-defined]
    if heads % layout.tp:
        raise ValueError(f"tp must divide {model.name}'s {heads} attention heads, got "
                         f"tp={layout.tp}")
    layers = model.layers  # type: ignore[attr-defined]
    if layout.pp * layout.interleave > layers:
        raise ValueError(f"pp·interleave must be at most {model.name}'s {layers} layers, got "
                         f"pp={layout.pp}, interleave={layout.interleave}")
    if layout.interleave > 1 and layout.pp == 1:
        raise ValueError("interleave > 1 needs pp > 1 (virtual stages of a pipeline)")
    if batch % layout.data_parallel:
        raise ValueError(f"batch_tokens ({batch:,}) must divide evenly over the "
                         f"{layout.data_parallel:,} data-parallel replicas (dp·fsdp·ep)")
    replica = batch // layout.data_parallel
    mb = layout.microbatch_tokens
    if mb is None:
        seq = model.seq_len  # type: ignore[attr-defined]
        mb = seq if replica % seq == 0 else replica
    if replica % mb:
        raise ValueError(f"microbatch_tokens must divide the {replica:,} tokens each "
                         f"data-parallel replica gets per step, got {mb:,}")
    return mb


def train_step(model: str | models.Model, chip: str | chips.Chip, layout: Layout,
               batch_tokens: int, *, n_chips: int | None = None, seq_len: int | None = None,
               dtype: str = "bf16", compute_efficiency: float | str = 1.0,
               dropout: bool = False) -> TrainStep:
    """Time, memory and MFU of one optimizer step of ``model`` on ``layout`` (see module doc).

    Args:
        model: a catalog transformer (dense or MoE) or its name.
        chip: chip name or :class:`accelkit.chips.Chip`; the job uses ``layout.chips`` of them.
        layout: a :class:`Layout`.
        batch_tokens: global batch, tokens per optimizer step.
        n_chips: if given, the layout's degrees must multiply to it.
        seq_len: sequence length (default the model's training length).
        dtype: precision of the matmuls (its peak sets compute time).
        compute_efficiency: fraction of peak the kernels reach, in (0, 1]; 1.0 = peak; or
            ``"predicted"``: per layout from :mod:`accelkit.mfu` (matmul shapes per TP shard on
            the chip's matrix units, non-matmul kernels at HBM bandwidth).
        dropout: count dropout masks in activation memory (Korthikanti et al.'s GPT setting).
    Returns:
        A :class:`TrainStep`; ``fits`` False (with the memory it would need) if it does not fit.
    Raises:
        ValueError: ep > 1 on a dense model, tp not dividing the heads, pp above the layers,
            batch or micro-batch not dividing, a job above the chip's largest, bad names.
    """
    the_model, the_chip, batch, s, eff = _check_common(model, chip, batch_tokens, seq_len,
                                                       compute_efficiency, dtype)
    if n_chips is not None:
        n_chips = _validate.positive_int("n_chips", n_chips, maximum=_MAX_DEGREE)
    mb = _check_layout(the_model, the_chip, layout, batch, n_chips)
    spec = _spec(the_model, s, dropout)
    cand = {a: np.array([getattr(layout, a)]) for a in ("dp", "fsdp", "tp", "pp", "ep",
                                                         "interleave")}
    cand["mb"] = np.array([mb])
    cand["recompute"] = np.array([_RECOMPUTE_CODE[layout.recompute]])
    kernel_eff = _compute_efficiency(the_model, the_chip, eff, dtype, cand, s)
    r = {k: float(v[0]) for k, v in
         _evaluate(spec, the_chip, batch, cand, kernel_eff, dtype).items()}
    return _result(the_model, the_chip, layout, batch, s, mb, r)


def _result(model: models.Model, chip: chips.Chip, layout: Layout, batch: int, s: int, mb: int,
            r: dict[str, float]) -> TrainStep:
    domain = _domain_chips(chip, layout.chips)
    strides = {"tp": 1, "ep": layout.tp, "pp": layout.tp * layout.ep,
               "fsdp": layout.tp * layout.ep * layout.pp,
               "dp": layout.tp * layout.ep * layout.pp * layout.fsdp}

    def group(axis: str, kind: str) -> tuple[int, int, str]:
        n = getattr(layout, axis)
        k = int(_per_domain(np.array([n]), np.array([strides[axis]]), domain)[0])
        return n, k, _unit_cost(chip, kind, n, k)[2]

    rows: list[CollectiveCost] = []

    def add(name: str, axis: str, kind: str, nbytes: float, calls: float, each: float,
            exposed: float) -> None:
        n, k, net = group(axis, kind)
        if n > 1 and calls > 0:
            rows.append(CollectiveCost(name, kind, n, k, net, nbytes, calls, each, calls * each,
                                       exposed))

    add("tp", "tp", "all_reduce", r["act_mb"], r["tp_calls"], r["tp_each"], r["tp_exposed"])
    add("ep", "ep", "all_to_all", r["ep_bytes"], r["ep_calls"], r["ep_each"], r["ep_exposed"])
    add("pp", "pp", "send", r["act_mb"] / layout.tp, r["pp_calls"], r["pp_each"],
        r["pp_exposed"])
    fsdp_total = r["m"] * (2 * r["gather_each"] + r["scatter_each"])
    share = r["fsdp_exposed"] / fsdp_total if fsdp_total else 0.0
    add("fsdp_gather", "fsdp", "all_gather", r["stage_params"] * WEIGHT_BYTES, 2 * r["m"],
        r["gather_each"], share * 2 * r["m"] * r["gather_each"])
    add("fsdp_scatter", "fsdp", "reduce_scatter", r["stage_params"] * GRAD_BYTES, r["m"],
        r["scatter_each"], share * r["m"] * r["scatter_each"])
    if layout.dp > 1 or layout.ep > 1:
        n = layout.dp * layout.ep
        rows.append(CollectiveCost("dp_grads", "all_reduce", n,
                                   int(_per_domain(np.array([layout.dp]),
                                                   np.array([strides["dp"]]), domain)[0]),
                                   group("dp" if layout.dp > 1 else "ep", "all_reduce")[2],
                                   r["dense_grad"] + r["expert_grad"], 1.0, r["dp_time"],
                                   r["dp_time"], r["dp_exposed"]))
    hbm = float(chip.hbm_bytes or 0)
    return TrainStep(
        model=model.name, chip=chip.name, layout=layout, batch_tokens=batch, seq_len=s,
        microbatch_tokens=mb, microbatches=int(round(r["m"])), seconds=r["seconds"],
        compute_seconds=r["compute"], communication_seconds=r["comm"],
        exposed_communication_seconds=r["exposed"], bubble_seconds=r["bubble"],
        bubble_fraction=r["bubble_fraction"], memory_bytes_per_chip=r["memory"],
        state_bytes_per_chip=r["state"], activation_bytes_per_chip=r["activations"],
        hbm_bytes=hbm, fits=r["memory"] <= hbm, model_flops_per_step=r["model_flops"],
        mfu=r["mfu"], tokens_per_second_per_chip=r["tps"], collectives=tuple(rows),
        weight_bytes_per_chip=r["weights_b"], gradient_bytes_per_chip=r["grads_b"],
        optimizer_bytes_per_chip=r["optimizer_b"])


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def candidate_layouts(model: str | models.Model, n_chips: int, batch_tokens: int,
                      seq_len: int | None = None, *, whole_sequences: bool = True
                      ) -> dict[str, np.ndarray]:
    """Every layout :func:`best_layouts` searches, as arrays (one entry per candidate).

    Degrees: every factorisation of ``n_chips`` into dp·fsdp·tp·pp·ep with tp dividing the
    heads, pp ≤ layers, ep dividing the experts (1 for dense models) and the batch dividing over
    the replicas; micro-batches: the replica's batch halved repeatedly while it stays a whole
    number of sequences (``whole_sequences=False``: down to 1/64 of a sequence, as if a sequence
    could be split over micro-batches, which needs context parallelism this model does not cost);
    interleave 1, 2, 4, 8 where pp > 1 and pp·v ≤ layers; all three recompute policies.
    """
    the_model = models.get(model)
    n = _validate.positive_int("n_chips", n_chips, maximum=_MAX_DEGREE)
    batch = _validate.positive_int("batch_tokens", batch_tokens, maximum=10**12)
    s = _seq_len(the_model, seq_len)
    return {name: array.copy() for name, array in
            _candidates(the_model, n, batch, s, bool(whole_sequences)).items()}


def _expand_microbatches(combos: np.ndarray, layers: int, s: int, min_mb: int,
                         whole_sequences: bool) -> np.ndarray:
    """Rows (dp, fsdp, tp, pp, ep, mb, interleave) for degree combinations (dp, fsdp, tp, pp,
    ep, replica tokens): each replica's batch, then halved while it stays even, at least
    ``min_mb`` and (``whole_sequences``) a whole number of sequences; each with interleave 1,
    2, 4, 8 where pp > 1 and pp·v ≤ layers. Same rows, in the same order, as nested loops."""
    if len(combos) == 0:
        return np.zeros((0, 7), dtype=np.int64)
    mb = combos[:, 5].copy()
    halvings = np.zeros(len(combos), dtype=np.int64)
    alive = np.ones(len(combos), dtype=bool)
    while alive.any():
        half = mb // 2
        ok = alive & (mb % 2 == 0) & (half >= min_mb)
        if whole_sequences:
            ok &= half % s == 0
        halvings += ok
        mb = np.where(ok, half, mb)
        alive = ok
    # one row per (combo, micro-batch), micro-batches largest first
    per_combo = halvings + 1
    index = np.repeat(np.arange(len(combos)), per_combo)
    step = np.arange(len(index)) - np.repeat(np.cumsum(per_combo) - per_combo, per_combo)
    mbs = combos[index, 5] >> step
    pp = combos[index, 3]
    # then one row per allowed interleave, smallest first
    options = np.array([1, 2, 4, 8], dtype=np.int64)
    allowed = (options[None, :] * pp[:, None] <= layers) & ((pp[:, None] > 1) | (options[None, :] == 1))
    row, option = np.nonzero(allowed)
    picked = index[row]
    return np.column_stack([combos[picked, :5], mbs[row], options[option]])


@functools.lru_cache(maxsize=64)
def _candidates(the_model: models.Model, n: int, batch: int, s: int, whole_sequences: bool
                ) -> dict[str, np.ndarray]:
    """:func:`candidate_layouts` for checked arguments, cached (the search's candidates do not
    depend on the chip, so a widget that switches chips reuses them); arrays read-only."""
    heads, layers = the_model.heads, the_model.layers  # type: ignore[attr-defined]
    experts = getattr(the_model, "n_experts", 0) or 1
    divs = _divisors(n)
    combos: list[tuple[int, int, int, int, int, int]] = []   # dp, fsdp, tp, pp, ep, replica
    min_mb = s if whole_sequences else max(1, s // 64)
    for tp in divs:
        if heads % tp:
            continue
        for ep in _divisors(n // tp):
            if experts % ep:
                continue
            for pp in _divisors(n // (tp * ep)):
                if pp > layers:
                    continue
                rest = n // (tp * ep * pp)
                for fsdp in _divisors(rest):
                    dp = rest // fsdp
                    replicas = dp * fsdp * ep
                    if batch % replicas:
                        continue
                    replica = batch // replicas
                    if whole_sequences and replica % s:
                        continue
                    combos.append((dp, fsdp, tp, pp, ep, replica))
    rows = _expand_microbatches(np.array(combos, dtype=np.int64).reshape(-1, 6), layers, s,
                                min_mb, whole_sequences)
    if not len(rows):
        empty = {k: np.zeros(0, dtype=np.int64) for k in
                 ("dp", "fsdp", "tp", "pp", "ep", "mb", "interleave", "recompute")}
        for array in empty.values():
            array.flags.writeable = False
        return empty
    base = rows
    table = np.repeat(base, len(RECOMPUTE), axis=0)
    codes = np.tile(np.arange(len(RECOMPUTE)), len(base))
    names = ("dp", "fsdp", "tp", "pp", "ep", "mb", "interleave")
    out = {name: np.ascontiguousarray(table[:, i]) for i, name in enumerate(names)}
    out["recompute"] = codes
    for array in out.values():
        array.flags.writeable = False
    return out


def best_layouts(model: str | models.Model, chip: str | chips.Chip, n_chips: int,
                 batch_tokens: int, top: int = 5, *, seq_len: int | None = None,
                 dtype: str = "bf16", compute_efficiency: float | str = 1.0,
                 dropout: bool = False, whole_sequences: bool = True
                 ) -> tuple[TrainStep, ...]:
    """The ``top`` fastest layouts that fit in memory, fastest first (exhaustive search).

    Searches :func:`candidate_layouts` with the step model of :func:`train_step`, vectorised
    over candidates (ties broken by less memory). Micro-batches are whole sequences unless
    ``whole_sequences=False``. Returns an empty tuple if no layout fits.

    ``compute_efficiency="predicted"`` prices each candidate's compute with :mod:`accelkit.mfu`.

    Raises:
        ValueError: as :func:`train_step`, and ``n_chips`` above the chip's largest job.
    """
    the_model, the_chip, batch, s, eff = _check_common(model, chip, batch_tokens, seq_len,
                                                       compute_efficiency, dtype)
    n = _validate.positive_int("n_chips", n_chips, maximum=_MAX_DEGREE)
    top = _validate.positive_int("top", top, maximum=10_000)
    limit = _largest_job(the_chip)
    if n > limit:
        raise ValueError(f"n_chips is {n:,}; {the_chip.name}'s largest job is {limit:,} chips")
    cand = _candidates(the_model, n, batch, s, bool(whole_sequences))
    if len(cand["dp"]) == 0:
        return ()
    spec = _spec(the_model, s, dropout)
    r = _evaluate(spec, the_chip, batch, cand,
                  _compute_efficiency(the_model, the_chip, eff, dtype, cand, s), dtype)
    ok = np.flatnonzero(r["memory"] <= float(the_chip.hbm_bytes or 0))
    if len(ok) == 0:
        return ()
    order = ok[np.lexsort((r["memory"][ok], r["seconds"][ok]))][:top]
    out = []
    for i in order:
        layout = Layout(dp=int(cand["dp"][i]), fsdp=int(cand["fsdp"][i]), tp=int(cand["tp"][i]),
                        pp=int(cand["pp"][i]), ep=int(cand["ep"][i]),
                        microbatch_tokens=int(cand["mb"][i]),
                        recompute=RECOMPUTE[int(cand["recompute"][i])],
                        interleave=int(cand["interleave"][i]))
        out.append(train_step(the_model, the_chip, layout, batch, seq_len=s, dtype=dtype,
                              compute_efficiency=PREDICTED if math.isnan(eff) else eff,
                              dropout=dropout))
    return tuple(out)


def dp_critical_tokens_per_chip(model: str | models.Model, chip: str | chips.Chip,
                                n_chips: int, *, ep: int = 1, seq_len: int | None = None,
                                dtype: str = "bf16") -> float:
    """Tokens per chip below which pure data parallelism's gradient all-reduce outlasts the
    backward pass it hides behind (the DP critical batch).

    Backward FLOPs per token are 2/3 of the model's training FLOPs (about 4 × active params);
    the all-reduce moves every gradient the chip holds (bf16). For a mixture of experts the
    all-reduce carries all parameters while compute follows the active ones, so the critical
    batch is about params/active_params times a dense model's; with ``ep`` > 1 the routed
    experts are split over ep chips and reduced over n/ep only.
    """
    the_model = models.get(model)
    the_chip = chips.get(chip)
    n = _validate.positive_int("n_chips", n_chips, maximum=_MAX_DEGREE)
    ep = _validate.positive_int("ep", ep, maximum=_MAX_DEGREE)
    if n % ep:
        raise ValueError(f"ep must divide n_chips ({n:,}), got {ep}")
    if ep > 1 and not isinstance(the_model, models.MoETransformer):
        raise ValueError(f"ep must be 1 for the dense model {the_model.name}, got ep={ep}")
    s = _seq_len(the_model, seq_len)
    spec = _spec(the_model, s, False)
    dense = (spec.params - spec.expert_params) * GRAD_BYTES
    expert = spec.expert_params / ep * GRAD_BYTES
    domain = _domain_chips(the_chip, n)
    dp = n // ep
    k_dp = int(_per_domain(np.array([dp]), np.array([ep]), domain)[0])
    k_ep = int(_per_domain(np.array([ep]), np.array([1]), domain)[0])
    seconds = 0.0
    lat, per, _ = _unit_cost(the_chip, "all_reduce", dp, k_dp)
    if dp > 1:
        seconds += lat + per * (dense / ep + expert)
    if ep > 1:
        for kind in ("reduce_scatter", "all_gather"):
            lat, per, _ = _unit_cost(the_chip, kind, ep, k_ep)
            seconds += lat + per * dense
    backward_per_token = spec.model_flops_token * 2.0 / 3.0 / the_chip.peak_flops(dtypes.check(dtype))
    return seconds / backward_per_token


# --------------------------------------------------------------------------------------------
# What lesson 07 asks of a layout: hardware FLOPs, critical batches, DP ratios (additive)
# --------------------------------------------------------------------------------------------

def hardware_flops_per_token(model: str | models.Model, recompute: str = "none",
                             seq_len: int | None = None) -> float:
    """Training FLOPs the chips execute per token: the model's (matmuls and causal attention)
    plus what ``recompute`` redoes (the forward pass for ``"full"``, the attention scores for
    ``"selective"``). Model FLOPs (MFU's numerator) are the ``"none"`` value.

    Raises:
        ValueError: an unknown recompute policy or a model that is not a catalog transformer.
    """
    the_model = models.get(model)
    spec = _spec(the_model, _seq_len(the_model, seq_len), False)
    policy = _validate.choice("recompute", recompute, RECOMPUTE)
    extra = {"none": 0.0, "selective": spec.attn_fwd_flops_token,
             "full": spec.model_flops_token / 3.0}[policy]
    return spec.model_flops_token + extra


def hardware_flops_utilization(step: TrainStep) -> float:
    """HFU of a :class:`TrainStep`: the FLOPs executed, recomputation included, over peak.

    PaLM (Chowdhery et al. 2022, appendix B) separates the two: MFU counts the model's FLOPs
    (attention included) whatever the implementation does; HFU also counts rematerialisation.
    HFU = MFU × hardware FLOPs / model FLOPs.
    """
    if not isinstance(step, TrainStep):
        raise TypeError(f"step must be an accelkit.parallel.TrainStep, got {type(step).__name__}")
    model = models.get(step.model)
    ratio = (hardware_flops_per_token(model, step.layout.recompute, step.seq_len)
             / hardware_flops_per_token(model, "none", step.seq_len))
    return step.mfu * ratio


def critical_tokens_per_chip(model: str | models.Model, chip: str | chips.Chip, layout: Layout,
                             *, seq_len: int | None = None, dtype: str = "bf16") -> float:
    """Tokens per chip per micro-batch (micro-batch tokens ÷ tp·pp) below which ``layout``'s
    hidden collectives outlast the compute they hide behind (the train_step overlap rules).

    FSDP's two weight all-gathers and gradient reduce-scatter hide behind each micro-batch's
    forward and backward passes; the data-parallel gradient all-reduce behind the last
    micro-batch's backward pass. Both move bytes that do not depend on the micro-batch while
    compute grows with it, so each has a critical micro-batch; this returns the larger,
    per chip. For pure DP it equals :func:`dp_critical_tokens_per_chip`; FSDP moves 1.5× the
    bytes behind 1.5× the FLOPs, so its critical batch is the same; tensor and pipeline
    parallelism split each micro-batch's work over tp·pp chips, dividing the critical tokens
    per chip by about tp·pp. TP, EP and PP collectives are on the critical path and grow with the
    micro-batch: they have no critical batch (their cost is a fraction of compute, not hidden).
    ``layout.microbatch_tokens`` is ignored (the answer is a micro-batch size). Bandwidth and
    latency both count; the compute is FLOPs at peak (``dtype``), recomputation included.
    Returns 0.0 for a layout with no data-parallel axis (dp = fsdp = ep = 1).

    Raises:
        ValueError: as :func:`train_step` (ep on a dense model, tp not dividing the heads...).
    """
    the_model = models.get(model)
    the_chip = chips.get(chip)
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be an accelkit.parallel.Layout, got "
                        f"{type(layout).__name__}")
    s = _seq_len(the_model, seq_len)
    # A reference micro-batch large enough to be FLOP-bound (the roofline's other branch
    # reads the weights per micro-batch); comm does not depend on it, compute is linear in it.
    ref = 2**20
    probe = Layout(dp=layout.dp, fsdp=layout.fsdp, tp=layout.tp, pp=layout.pp, ep=layout.ep,
                   microbatch_tokens=ref, recompute=layout.recompute,
                   interleave=layout.interleave)
    the_model, the_chip, batch, s, _ = _check_common(the_model, the_chip,
                                                      probe.data_parallel * ref, s, 1.0, dtype)
    _check_layout(the_model, the_chip, probe, batch)
    if probe.data_parallel == 1:
        return 0.0
    spec = _spec(the_model, s, False)
    cand = {a: np.array([getattr(probe, a)]) for a in ("dp", "fsdp", "tp", "pp", "ep",
                                                        "interleave")}
    cand["mb"] = np.array([ref])
    cand["recompute"] = np.array([_RECOMPUTE_CODE[probe.recompute]])
    r = {k: float(v[0]) for k, v in _evaluate(spec, the_chip, batch, cand, 1.0, dtype).items()}
    compute_per_token = r["compute"] / r["m"] / ref          # seconds per micro-batch token
    backward_share = 2.0 / (3.0 + (probe.recompute == "full"))
    fsdp = (2.0 * r["gather_each"] + r["scatter_each"]) / compute_per_token
    dp = r["dp_time"] / (backward_share * compute_per_token)
    return max(fsdp, dp) / (probe.tp * probe.pp)


def dp_communication_ratios(model: str | models.Model, chip: str | chips.Chip,
                            n_chips: tuple[int, ...] | list[int], *, batch_tokens: float,
                            seq_len: int | None = None, dtype: str = "bf16"
                            ) -> dict[int, float]:
    """Pure data parallelism at a fixed global batch: for each chip count, the gradient
    all-reduce's time over the backward pass's (collectives at peak, FLOPs at peak).

    That is :func:`dp_critical_tokens_per_chip` ÷ the tokens each chip gets (batch / n); above
    1 the all-reduce cannot hide. One chip has nothing to reduce: 0.0. (Pure DP of a large model
    does not fit in memory: this isolates the gradient collective, as the scaling book does.)

    Raises:
        TypeError, ValueError: a bad list of chip counts or batch, or as the collectives do.
    """
    if not isinstance(n_chips, (tuple, list)) or not n_chips or len(n_chips) > 64:
        raise TypeError(f"n_chips must be a non-empty tuple or list of at most 64 chip counts, "
                        f"got {n_chips!r}")
    counts = [_validate.positive_int(f"n_chips[{i}]", n, maximum=_MAX_DEGREE)
              for i, n in enumerate(n_chips)]
    batch = _validate.positive_float("batch_tokens", batch_tokens, maximum=1e13)
    the_model, the_chip = models.get(model), chips.get(chip)
    s = _seq_len(the_model, seq_len)
    return {n: 0.0 if n == 1 else _dp_critical(the_model.name, the_chip.name, n, s, dtype)
            / (batch / n) for n in counts}


@functools.lru_cache(maxsize=1024)
def _dp_critical(model: str, chip: str, n: int, seq_len: int, dtype: str) -> float:
    """:func:`dp_critical_tokens_per_chip` memoised by name (it does not depend on the batch)."""
    return dp_critical_tokens_per_chip(model, chip, n, seq_len=seq_len, dtype=dtype)


__all__ = ["PREDICTED", "RECOMPUTE", "CollectiveCost", "Layout", "TrainStep",
           "activation_bytes_per_token_per_layer", "best_layouts", "candidate_layouts",
           "critical_tokens_per_chip", "dp_communication_ratios", "dp_critical_tokens_per_chip",
           "hardware_flops_per_token", "hardware_flops_utilization", "train_step"]
