"""Training cost: model FLOPs over chips × peak × MFU, plus communication and memory.

    >>> import accelkit as ak
    >>> t = ak.training.estimate(model="llama-3-70b", tokens=15e12, chip="TPU v5p",
    ...                          n_chips=8960, mfu=0.40)
    >>> f"{t.flops:.2e}", round(t.days), t.flops_count
    ('6.35e+24', 45, '6nd')

That is the scaling book's LLaMA-3-70B example (applied-training.md: 6.3e24 FLOPs, about
44 days; it rounds the model to 70e9 parameters).

Conventions:

* **Model FLOPs** (``flops``) are what an MFU is a utilization *of*, so the count must match the
  MFU you pass. ``flops_count`` names it:

  - ``"6nd"`` (default): 6 per parameter per token (2 forward, 4 backward), 6·N·D. This is the
    count of the scaling book's worked examples, of GPT-3's 3.14e23 (Brown et al. 2020,
    Table D.1) and Llama 3.1 405B's 3.8e25 (Llama Team 2024, arXiv:2407.21783) totals, and of the
    course's default MFU 0.4, so it stays the default. Attention is not in it: an MFU measured
    against a count with attention is a little higher than this one for the same run.
  - ``"palm"``: 6·N + 12·L·H·Q·T per token (PaLM, Chowdhery et al. 2022, appendix B), which adds
    the attention score and value matmuls over all T² (query, key) pairs of a T-token sequence
    (L layers, H heads of width Q), ×3 for forward and backward. PaLM's 46.2% MFU counts this.
  - ``"causal"``: 6·N + 12·L·H·Q·(T+1)/2, only the T(T+1)/2 unmasked pairs of a causal mask;
    MaxText counts the same to within 1/T: since its PR 1988 it halves the forward's 4·T²·H·Q
    (AI-Hypercomputer/maxtext docs/explanations/performance_metrics.md, "Causal attention").

  ``attention_flops`` is the attention part of ``flops`` (0 for ``"6nd"``). T is ``seq_len``,
  default the model's training sequence length. Recomputation is *not* model FLOPs in any count:
  FLOPs a run spends recomputing activations raise hardware FLOPs utilization (HFU) above MFU
  (PaLM appendix B; MaxText's "Why not hardware flops?"; ``accelkit.parallel.hardware_flops_utilization``
  for a layout); ``recompute="full"`` adds one forward
  pass to ``hardware_flops``, so ``hfu`` = MFU × 4/3 at the same time. Megatron-LM (Narayanan
  et al., SC'21) reports achieved TFLOP/s from its own formula
  96·B·s·l·h²(1 + s/(6h) + V/(16·l·h)), which counts full (non-causal) attention, the logits
  and one extra forward pass for full recomputation: a hardware count, higher than this library's model FLOPs for the same run. The
  Llama 3 paper's BF16 MFU of 38-43% (Table 4) is quoted without a FLOP formula that we found.
* **Time** = FLOPs / (n_chips · peak · MFU), plus any data-parallel gradient reduction that does
  not hide behind the backward pass.
* **Mixtures of experts** (catalog models with ``active_params``): N in the FLOPs and the backward
  pass is the active parameters a token uses; memory and the gradient reduction hold every
  parameter, so an MoE's critical tokens per chip are params / active_params times a dense
  model's. ``params`` on the result is the total.
* **Gradient reduction** (``batch_tokens`` given, ``n_chips`` > 1), from
  :mod:`accelkit.collectives` over all ``n_chips``: an all-reduce of the gradients
  (``sharded=False``), or for FSDP (``sharded=True``, the default) a reduce-scatter of the
  gradients plus an all-gather of the weights, the same bytes. Rings run over each torus axis
  with wraparound on TPUs, groups beyond one slice are joined by DCN, and GPU groups are
  hierarchical beyond the NVLink node (reduce inside the node, every NIC of the node in parallel
  between nodes); ``gradient_network`` says which networks carried it. It overlaps with the
  backward pass of the parameter matmuls (4·N FLOPs per token). ``critical_tokens_per_chip``,
  the tokens per chip per step below which the reduction cannot hide, is
  :func:`accelkit.collectives.dp_critical_tokens_per_chip` × MFU (latency included). With MFU 1
  and bf16 gradients on one wrapped v5p axis of 16 it is the scaling book's C / W_ici = 2550
  tokens × (n-1)/n (training.md). ``interconnect_bytes_per_second`` overrides all of this with a
  simple ring at that per-chip one-way bandwidth: 2(n−1)/n · params · grad_bytes / bandwidth.
* **Memory per chip**: weights, gradients and optimizer state (default 2 + 2 + 12 = 16 bytes per
  parameter: bf16 weights and gradients, fp32 master weights and two Adam moments; Rajbhandari
  et al. 2020, ZeRO, section 3.1), sharded over all chips (FSDP / ZeRO-3) unless
  ``sharded=False``; plus activation checkpoints for the micro-batch in flight: with gradient
  accumulation a chip holds one micro-batch's activations at a time, not the global batch's.
  ``microbatch_tokens`` is the tokens per chip per micro-batch, default one sequence of the
  model's training length (``seq_len``: 8,192 for Llama 3) per chip: under data parallelism
  or FSDP, the smallest micro-batch that keeps each sequence on one chip (splitting a sequence
  needs sequence or tensor parallelism, see :mod:`accelkit.parallel`), capped at the global
  batch's share ``batch_tokens / n_chips``. It is a modelling choice, not a framework default. A checkpoint is one bf16 d_model-wide value
  per token per layer (``activation_checkpoints_per_layer``, default 1: the layer input, as with
  full recomputation); the working set of the layer being recomputed is not counted.
* **Energy** uses the chip's published power (TDP) × chips × seconds: the chips' draw at TDP,
  the accelerators alone, not an upper bound on the run (chips often draw less than TDP, but
  hosts, network, storage and cooling, none counted, add to the facility's meter). TPU v5e, v5p, v6e and TPU7x have no published power: ``joules`` is
  then None and ``notes`` says so. Dollars likewise (None without a list price).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

from accelkit import (_html, _validate, activations, chips, collectives, dtypes, energy, models,
                      price, roofline)
from accelkit.dtypes import DType

SECONDS_PER_DAY = 86_400.0

#: Model-FLOPs counts :func:`estimate` offers (see the module docstring).
FLOPS_COUNTS = ("6nd", "palm", "causal")
#: Activation-recomputation policies :func:`estimate` accounts for in ``hardware_flops``.
RECOMPUTE = ("none", "full")

#: What a :class:`Note` is about, so code tests the kind, never the sentence's wording.
NOTE_KINDS = ("no_price", "no_power", "beyond_domain", "does_not_fit", "activations_skipped")


class Note(str):
    """A caveat on an estimate: the sentence itself (a ``str``, so it prints and compares as one)
    with a ``kind`` from :data:`NOTE_KINDS` saying what it is about.

        >>> n = Note("no_power", "TPU v5e has no published power; joules is None")
        >>> n.kind, n.endswith("None")
        ('no_power', True)
    """

    kind: str

    def __new__(cls, kind: str, text: str) -> Note:
        note = super().__new__(cls, text)
        object.__setattr__(note, "kind", _validate.choice("kind", kind, NOTE_KINDS))
        return note

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Note is immutable; cannot set {name!r}")

    def __reduce__(self) -> tuple[object, ...]:
        return (Note, (self.kind, str(self)))


@dataclass(frozen=True)
class TrainingEstimate:
    """What a training run costs: FLOPs, time, chip-hours, dollars, energy, memory per chip."""

    model: str | None
    params: float
    active_params: float              # parameters a token uses (= params for a dense model)
    tokens: float
    chip: str
    n_chips: int
    mfu: float
    flops: float                      # model FLOPs under ``flops_count``
    flops_count: str                  # "6nd", "palm" or "causal" (module docstring)
    attention_flops: float            # the attention part of ``flops`` (0 for "6nd")
    hardware_flops: float             # FLOPs the chips execute: flops + any recomputation
    recompute: str                    # "none" or "full"
    seq_len: int | None               # T in the attention count (None: not a transformer)
    peak_flops_per_chip: float
    compute_seconds: float
    communication_seconds: float      # exposed (not hidden behind backward) all-reduce, total
    seconds: float
    chip_hours: float
    usd: float | None
    joules: float | None              # accelerators at TDP only: no hosts, network or cooling
    # data-parallel communication (None when batch_tokens is not given or n_chips == 1)
    batch_tokens: float | None
    tokens_per_chip: float | None
    allreduce_seconds_per_step: float | None
    backward_seconds_per_step: float | None
    critical_tokens_per_chip: float | None
    communication_bound: bool | None
    gradient_network: str | None      # networks that carried the reduction ("ICI+DCN", ...)
    # memory per chip
    weight_bytes_per_chip: float
    gradient_bytes_per_chip: float
    optimizer_bytes_per_chip: float
    activation_bytes_per_chip: float
    microbatch_tokens: float | None   # tokens per chip per micro-batch (activations in flight)
    memory_bytes_per_chip: float
    total_memory_bytes: float
    hbm_bytes: float
    fits: bool
    # fewest chips on which this per-chip micro-batch fits (states sharded over them when
    # ``sharded``); 0 when none does (activations alone exceed HBM, or unsharded states)
    min_chips_to_fit: int
    notes: tuple[Note, ...] = ()  # caveats, each a sentence with a ``kind`` (see Note)

    @property
    def days(self) -> float:
        return self.seconds / SECONDS_PER_DAY

    @property
    def hfu(self) -> float:
        """Hardware FLOPs utilization: MFU × hardware_flops / flops (PaLM, appendix B)."""
        return self.mfu * self.hardware_flops / self.flops

    @property
    def memory_breakdown_bytes(self) -> dict[str, float]:
        """Bytes per chip of weights, gradients, optimizer state and activations (in flight)."""
        return {"weights": self.weight_bytes_per_chip, "gradients": self.gradient_bytes_per_chip,
                "optimizer state": self.optimizer_bytes_per_chip,
                "activations": self.activation_bytes_per_chip}

    def __repr__(self) -> str:
        usd = "n/a" if self.usd is None else f"${self.usd:,.0f}"
        energy = "n/a" if self.joules is None else f"{self.joules / 3.6e12:,.2f} GWh"
        return (f"TrainingEstimate({self.model or f'{self.params:.3g} params'} on {self.n_chips:,}"
                f" x {self.chip} at MFU {self.mfu:.0%}: {self.flops:.3g} FLOPs, "
                f"{self.days:,.1f} days, {self.chip_hours:,.0f} chip-hours, {usd}, {energy}; "
                f"{self.memory_bytes_per_chip / 1e9:,.1f} GB/chip "
                f"{'fits' if self.fits else 'does NOT fit'})")

    def _repr_html_(self) -> str:
        rows = [("model", self.model or f"{self.params:.3g} params"),
                ("chips", f"{self.n_chips:,} x {self.chip}"), ("MFU", f"{self.mfu:.0%}"),
                (f"FLOPs ({self.flops_count})", f"{self.flops:.3g}"), ("days", f"{self.days:,.1f}"),
                ("chip-hours", f"{self.chip_hours:,.0f}"),
                ("USD", "n/a" if self.usd is None else f"{self.usd:,.0f}"),
                ("joules", "n/a" if self.joules is None else f"{self.joules:.3g}"),
                ("memory / chip", f"{self.memory_bytes_per_chip / 1e9:,.1f} GB"),
                ("fits", str(self.fits))]
        return _html.table(rows)


def _attention_flops_per_token(model: models.Transformer | None, seq_len: int | None,
                               count: str) -> float:
    """Training attention FLOPs per token (forward + backward) under a model-FLOPs ``count``.

    ``"palm"``: 12·L·H·Q·T, all T² (query, key) pairs (PaLM appendix B); ``"causal"``: the
    T(T+1)/2 unmasked pairs, 12·L·H·Q·(T+1)/2; ``"6nd"`` or a non-transformer: 0.
    """
    if count == "6nd" or seq_len is None or model is None:
        return 0.0
    # 4·Q per (query, key) pair per head forward (2·qk + 2·v for latent attention), x3 for
    # forward and backward: 12·L·H·Q per key.
    per_pair = 3.0 * model.layers * model.heads * model.attention_matmul_flops_per_pair
    if count == "palm":
        return per_pair * seq_len
    return per_pair * (seq_len + 1) / 2.0


def _gradient_reduction(chip: chips.Chip, n_chips: int, grad_bytes: float,
                        sharded: bool) -> list[collectives.Collective]:
    """The data-parallel gradient reduction of ``grad_bytes`` over all ``n_chips`` chips.

    DP: one all-reduce; FSDP (``sharded``): a reduce-scatter of the gradients plus an all-gather
    of the weights, the same bytes (as :func:`accelkit.collectives.dp_critical_tokens_per_chip`).
    A group the collectives cannot lay out is refused naming ``n_chips``.
    """
    try:
        if sharded:
            return [collectives.reduce_scatter(chip, array_bytes=grad_bytes, over=n_chips),
                    collectives.all_gather(chip, array_bytes=grad_bytes, over=n_chips)]
        return [collectives.all_reduce(chip, array_bytes=grad_bytes, over=n_chips)]
    except collectives.GroupLayoutError as err:
        raise ValueError(f"n_chips={n_chips:,} on {chip.name}: {err} (or pass "
                         "interconnect_bytes_per_second for a simple ring)") from None


class _Reduction(NamedTuple):
    """The data-parallel gradient reduction of one optimizer step (module docstring)."""

    allreduce_seconds: float
    backward_seconds: float
    critical_tokens_per_chip: float
    network: str
    exposed_seconds: float           # what it adds to the step, after hiding behind backward


def _reduction(chip: chips.Chip, n_chips: int, n_params: float, active: float,
               tokens_per_chip: float, peak: float, mfu: float, dtype: DType, sharded: bool,
               overlap: bool, bandwidth: float | None, notes: list[Note]) -> _Reduction:
    """Per step: the reduction (a simple ring at ``bandwidth``, or the collectives), the
    backward pass it hides behind (4 FLOPs per active parameter per token) and what shows."""
    grad_comm_bytes = dtypes.nbytes(dtype)
    grad_bytes = n_params * grad_comm_bytes
    backward = 4.0 * active * tokens_per_chip / (peak * mfu)
    if bandwidth is not None:
        ring = 2.0 * (n_chips - 1) / n_chips
        allreduce = ring * grad_bytes / bandwidth
        critical = ring * grad_comm_bytes * peak * mfu / (4.0 * bandwidth) * n_params / active
        network = "override"
    else:
        _check_links(chip, n_chips)
        parts = _gradient_reduction(chip, n_chips, grad_bytes, sharded)
        allreduce = sum(p.seconds for p in parts)
        network = "+".join(dict.fromkeys(net for p in parts for net in p.network.split("+")))
        # dp_critical_tokens_per_chip sets 4·P·t against the gradients of P: an MoE's
        # backward follows its active parameters, its gradients all of them.
        critical = mfu * collectives.dp_critical_tokens_per_chip(
            chip, over=n_chips, dtype=dtype, params=n_params,
            strategy="fsdp" if sharded else "dp") * n_params / active
        if "DCN" in network or "scale-out" in network:
            domain = chip.scaleup_domain_chips or chip.max_slice_chips
            notes.append(Note("beyond_domain",
                              f"{n_chips:,} chips exceed {chip.name}'s {domain:,}-chip scale-up "
                              f"domain: the gradient reduction runs over {network} "
                              "(hierarchical)"))
    # overlap=True: the reduction runs behind the backward pass; only the rest shows
    exposed = float(roofline.times(compute_seconds=backward, communication_seconds=allreduce,
                                   overlap=overlap).exposed_communication_seconds)
    return _Reduction(allreduce, backward, critical, network, exposed)


def _check_links(chip: chips.Chip, n_chips: int) -> None:
    """Refuse a reduction the collectives cannot cost: no published link, too many chips."""
    if chip.kind == "gpu" and chip.scaleup_bytes_per_second is None:
        raise chips.MissingFigureError(
            chip.name, "scaleup_bytes_per_second",
            f"{chip.name} has no NVLink or published multi-GPU bandwidth; "
            "pass interconnect_bytes_per_second")
    if chip.kind == "tpu" and chip.link_bytes_per_second is None:
        raise chips.MissingFigureError(
            chip.name, "link_bytes_per_second",
            f"{chip.name} has no published ICI link bandwidth; pass interconnect_bytes_per_second")
    if n_chips > collectives.MAX_GROUP_CHIPS:
        raise ValueError(f"n_chips={n_chips:,} exceeds the collectives' "
                         f"{collectives.MAX_GROUP_CHIPS:,}-chip limit (MAX_GROUP_CHIPS); pass "
                         "interconnect_bytes_per_second")


class _Memory(NamedTuple):
    """Bytes per chip, their total over the chips, and the fewest chips that fit."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    per_chip: float
    total: float
    hbm: float
    min_chips: int


def _memory(chip: chips.Chip, n_chips: int, n_params: float, per_param: tuple[float, ...],
            sharded: bool, activation_bytes: float) -> _Memory:
    """Weights, gradients and optimizer state (sharded over every chip when ``sharded``) plus
    the activations in flight, per chip; the fewest chips at which this micro-batch fits (the
    states shard, the activations do not; 0 when none does)."""
    shards = n_chips if sharded else 1
    weights, grads, optimizer = (n_params * b / shards for b in per_param)
    states = n_params * sum(per_param)
    per_chip = weights + grads + optimizer + activation_bytes
    hbm = float(chip.hbm_bytes or 0)
    if not hbm or activation_bytes >= hbm:
        min_chips = 0
    elif sharded:
        min_chips = max(1, math.ceil(states / (hbm - activation_bytes)))
    else:
        min_chips = 1 if states + activation_bytes <= hbm else 0
    return _Memory(weights, grads, optimizer, activation_bytes, per_chip,
                   states + activation_bytes * n_chips, hbm, min_chips)


def _microbatch(transformer: models.Transformer | None, seq_len: int | None,
                microbatch_tokens: float | None, batch_tokens: float | None,
                n_chips: int) -> float | None:
    """Tokens per chip per micro-batch: as given (at most the batch's share per chip), or one
    sequence capped at that share; None for a model with no sequence."""
    if microbatch_tokens is not None:
        mb = _validate.positive_float("microbatch_tokens", microbatch_tokens)
        if batch_tokens is not None and mb > batch_tokens / n_chips * (1 + 1e-12):
            raise ValueError(f"microbatch_tokens={mb:,.0f} per chip exceeds the global "
                             f"batch's share batch_tokens / n_chips = "
                             f"{batch_tokens / n_chips:,.0f}")
        return mb
    if transformer is None or seq_len is None:
        return None
    mb = float(seq_len)
    return mb if batch_tokens is None else min(mb, batch_tokens / n_chips)


class _Run(NamedTuple):
    """:func:`estimate`'s arguments, checked, and what follows from them directly."""

    model: models.Model | None
    transformer: models.Transformer | None
    params: float
    active: float            # a mixture of experts: FLOPs follow these, memory all params
    tokens: float
    chip: chips.Chip
    n_chips: int
    mfu: float
    dtype: DType
    peak: float
    batch_tokens: float | None
    per_param: tuple[float, float, float]   # weight, gradient, optimizer bytes per parameter
    checkpoints: int
    microbatch: float | None
    flops_count: str
    seq_len: int | None
    recompute: str
    overlap: bool
    sharded: bool


def _run(model: str | models.Model | None, params: float | None, tokens: float,
         chip: str | chips.Chip, n_chips: int, mfu: float, dtype: DType,
         batch_tokens: float | None, per_param: tuple[float, float, float],
         activation_checkpoints_per_layer: int, microbatch_tokens: float | None,
         flops_count: str, seq_len: int | None, recompute: str, overlap: object,
         sharded: object) -> _Run:
    """Check :func:`estimate`'s arguments (each error names its parameter)."""
    if (model is None) == (params is None):
        raise ValueError("give exactly one of model= (a catalog name) or params= (a count)")
    the_model = models.get(model) if model is not None else None
    n_params = (float(the_model.params) if the_model is not None else
                _validate.positive_float("params", params))
    # A mixture of experts: FLOPs follow the parameters a token uses, memory and gradients all.
    active = float(the_model.active_params) if the_model is not None else n_params
    tokens = _validate.positive_float("tokens", tokens)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**7)
    mfu = _validate.fraction("mfu", mfu)
    peak = the_chip.peak_flops(dtype)
    weight, grad, optimizer = (_validate.real_in_range(name, value, low=0.0, high=64.0)
                               for name, value in zip(("weight_bytes_per_param",
                                                       "grad_bytes_per_param",
                                                       "optimizer_bytes_per_param"), per_param))
    checkpoints = _validate.nonnegative_int("activation_checkpoints_per_layer",
                                            activation_checkpoints_per_layer, maximum=1000)
    count = _validate.choice("flops_count", flops_count, FLOPS_COUNTS)
    recompute = _validate.choice("recompute", recompute, RECOMPUTE)
    transformer = the_model if isinstance(the_model, models.Transformer) else None
    if seq_len is not None:
        seq_len = _validate.positive_int("seq_len", seq_len, maximum=10**8)
    elif transformer is not None:
        seq_len = transformer.seq_len
    if count != "6nd" and transformer is None:
        raise ValueError(f"flops_count={count!r} adds attention and needs a catalog transformer "
                         "(its layers, heads and head_dim); use flops_count='6nd' with params=")
    if batch_tokens is not None:
        batch_tokens = _validate.positive_float("batch_tokens", batch_tokens)
    microbatch = _microbatch(transformer, seq_len, microbatch_tokens, batch_tokens, n_chips)
    return _Run(the_model, transformer, n_params, active, tokens, the_chip, n_chips, mfu, dtype,
                peak, batch_tokens, (weight, grad, optimizer), checkpoints, microbatch, count,
                seq_len, recompute, _bool("overlap", overlap), _bool("sharded", sharded))


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def estimate(model: str | models.Model | None = None, *, params: float | None = None,
             tokens: float, chip: str | chips.Chip, n_chips: int = 1, mfu: float = 0.4,
             dtype: DType = "bf16", batch_tokens: float | None = None,
             interconnect_bytes_per_second: float | None = None, overlap: bool = True,
             weight_bytes_per_param: float = 2.0, grad_bytes_per_param: float = 2.0,
             optimizer_bytes_per_param: float = 12.0, sharded: bool = True,
             activation_checkpoints_per_layer: int = 1, microbatch_tokens: float | None = None,
             flops_count: str = "6nd", seq_len: int | None = None,
             recompute: str = "none") -> TrainingEstimate:
    """Estimate a training run.

    Args:
        model: a catalog name or Model; or give ``params`` (a parameter count) instead.
        tokens: training tokens D.
        chip: a chip name or :class:`accelkit.chips.Chip`; ``n_chips`` of them.
        mfu: model FLOPs utilization in (0, 1], of the ``flops_count`` count.
        dtype: the precision whose peak the MFU applies to (and of the gradient reduction).
        batch_tokens: tokens per optimizer step (global batch); enables the data-parallel
            gradient-reduction estimate and caps the micro-batch at ``batch_tokens / n_chips``.
        interconnect_bytes_per_second: override the collectives with a simple ring at this
            per-chip one-way bandwidth (bytes/s).
        overlap: hide the gradient reduction behind the backward pass where it is shorter.
        weight/grad/optimizer_bytes_per_param: memory per parameter (default 2 + 2 + 12).
        sharded: FSDP/ZeRO-3: shard weights, gradients and optimizer state over all chips (and
            reduce gradients by reduce-scatter + all-gather); False: plain data parallelism.
        activation_checkpoints_per_layer: saved d_model-wide activations per token per layer.
        microbatch_tokens: tokens per chip per micro-batch, whose activations are in flight
            (gradient accumulation runs the global batch as several micro-batches); default one
            sequence of ``seq_len`` per chip, at most ``batch_tokens / n_chips``.
        flops_count: ``"6nd"`` (default), ``"palm"`` or ``"causal"`` (module docstring).
        seq_len: tokens per training sequence T (attention count and default micro-batch);
            default the catalog model's ``seq_len``.
        recompute: ``"none"`` or ``"full"`` (activation recomputation: one extra forward pass,
            a third of the model FLOPs). It changes ``hardware_flops`` and ``hfu``, not the time:
            MFU is defined on model FLOPs, so the time is still flops / (chips · peak · MFU).
    Returns:
        A :class:`TrainingEstimate`.
    Raises:
        TypeError: ``overlap`` or ``sharded`` not a bool.
        ValueError: unknown model or chip, sizes not positive, MFU outside (0, 1], both or
            neither of model and params, a precision the chip lacks, an unknown flops_count, a
            chip count the collectives cannot lay out (named ``n_chips``).
        MissingFigureError: a gradient reduction on a chip with no published link bandwidth.
    """
    notes: list[Note] = []
    run = _run(model, params, tokens, chip, n_chips, mfu, dtype, batch_tokens,
               (weight_bytes_per_param, grad_bytes_per_param, optimizer_bytes_per_param),
               activation_checkpoints_per_layer, microbatch_tokens, flops_count, seq_len,
               recompute, overlap, sharded)
    the_model, transformer, the_chip, n_chips = run.model, run.transformer, run.chip, run.n_chips
    tokens, mfu, peak, active = run.tokens, run.mfu, run.peak, run.active
    batch_tokens = run.batch_tokens
    attention_flops = tokens * _attention_flops_per_token(transformer, run.seq_len,
                                                          run.flops_count)
    flops = 6.0 * active * tokens + attention_flops
    # Full recomputation re-runs the forward pass (2 of the 6, and a third of attention's 3x).
    hardware_flops = flops * (4.0 / 3.0 if run.recompute == "full" else 1.0)
    compute_seconds = flops / (n_chips * peak * mfu)

    reduction: _Reduction | None = None
    exposed_total = 0.0  # the reduction's exposed time over the whole run
    if batch_tokens is not None and n_chips > 1:
        bandwidth = (None if interconnect_bytes_per_second is None else _validate.positive_float(
            "interconnect_bytes_per_second", interconnect_bytes_per_second))
        reduction = _reduction(the_chip, n_chips, run.params, active, batch_tokens / n_chips,
                               peak, mfu, run.dtype, run.sharded, run.overlap, bandwidth, notes)
        exposed_total = reduction.exposed_seconds * tokens / batch_tokens
    seconds = compute_seconds + exposed_total
    usd, joules = _price_and_energy(the_chip, seconds, n_chips, notes)

    activation_bytes = 0.0
    if transformer is not None and run.microbatch is not None:
        activation_bytes = activations.checkpoint_bytes(transformer, run.microbatch,
                                                        run.checkpoints)
    elif the_model is not None:
        notes.append(Note("activations_skipped",
                          "activation memory counted for catalog transformers only"))
    mem = _memory(the_chip, n_chips, run.params, run.per_param, run.sharded, activation_bytes)
    if mem.per_chip > mem.hbm:
        notes.append(Note("does_not_fit", f"needs {mem.per_chip / 1e9:,.1f} GB per chip but "
                          f"{the_chip.name} has {mem.hbm / 1e9:,.1f} GB"
                          + ("" if run.sharded else "; try sharded=True")))
    return TrainingEstimate(
        model=the_model.name if the_model else None, params=run.params, active_params=active,
        tokens=tokens, chip=the_chip.name, n_chips=n_chips, mfu=mfu, flops=flops,
        flops_count=run.flops_count, hardware_flops=hardware_flops, recompute=run.recompute,
        attention_flops=attention_flops,
        seq_len=run.seq_len if transformer is not None else None,
        peak_flops_per_chip=peak, compute_seconds=compute_seconds,
        communication_seconds=exposed_total, seconds=seconds,
        chip_hours=seconds * n_chips / 3600.0, usd=usd, joules=joules, batch_tokens=batch_tokens,
        tokens_per_chip=None if batch_tokens is None else batch_tokens / n_chips,
        **_reduction_fields(reduction), weight_bytes_per_chip=mem.weights,
        gradient_bytes_per_chip=mem.gradients, optimizer_bytes_per_chip=mem.optimizer,
        activation_bytes_per_chip=mem.activations, microbatch_tokens=run.microbatch,
        memory_bytes_per_chip=mem.per_chip, total_memory_bytes=mem.total, hbm_bytes=mem.hbm,
        fits=mem.per_chip <= mem.hbm, min_chips_to_fit=mem.min_chips, notes=tuple(notes))


_REDUCTION_FIELDS = ("allreduce_seconds_per_step", "backward_seconds_per_step",
                     "critical_tokens_per_chip", "communication_bound", "gradient_network")


def _reduction_fields(r: _Reduction | None) -> dict[str, Any]:
    """A :class:`TrainingEstimate`'s gradient-reduction fields (None without a reduction)."""
    if r is None:
        return dict.fromkeys(_REDUCTION_FIELDS, None)
    values = (r.allreduce_seconds, r.backward_seconds, r.critical_tokens_per_chip,
              r.allreduce_seconds > r.backward_seconds, r.network)
    return dict(zip(_REDUCTION_FIELDS, values))


def _price_and_energy(chip: chips.Chip, seconds: float, n_chips: int,
                      notes: list[Note]) -> tuple[float | None, float | None]:
    """Dollars at the chip's list price and joules at its TDP; a note for each it lacks."""
    cost = price.usd_for(chip.usd_per_hour, seconds, n_chips)
    if cost is None:
        notes.append(Note("no_price", f"{chip.name} has no published price; usd is None"))
    at_tdp = energy.tdp_joules(chip.watts, seconds, n_chips)
    if at_tdp is None:
        notes.append(Note("no_power", f"{chip.name} has no published power; joules is None"))
    return (None if cost is None else float(cost)), (None if at_tdp is None else float(at_tdp))


__all__ = ["FLOPS_COUNTS", "NOTE_KINDS", "Note", "RECOMPUTE", "TrainingEstimate", "estimate"]
