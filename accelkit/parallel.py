"""One training step of a transformer laid out over many chips: DP, FSDP, TP, PP, EP and CP.

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
* ``cp``: context parallel (ring attention, Liu et al. 2023, arXiv:2310.01889; Llama 3's
  long-context stage, arXiv:2407.21783 §3.3.2). Each sequence is split over ``cp`` chips, so
  the activations per chip are divided by cp; per attention layer the K/V blocks travel round
  the cp ring, overlapped with the attention compute (:mod:`accelkit.step_cost` names the
  choice); the gradients are reduced over cp as over a data axis.

    >>> long = train_step("llama-3.1-405b", "H100", Layout(dp=8, tp=8, cp=16, pp=16,
    ...                   microbatch_tokens=131072, recompute="full"), 16 * 2**20,
    ...                   seq_len=131072)
    >>> long.fits, [c.name for c in long.collectives][:3]
    (True, ['tp', 'pp', 'cp'])

**Mapping of layout axes to the network**: ranks are numbered ``tp`` fastest, then ``ep``,
``pp``, ``fsdp``, ``dp`` (``cp`` right after ``tp``), so TP sits inside the scale-up domain while it fits
(:mod:`accelkit.layout`, which also says when a layout is valid).

**The step model** (what overlaps with what, memory per chip, compute):
:mod:`accelkit.step_cost`, which evaluates every candidate layout at once; memory per chip
follows :mod:`accelkit.activations` for the activations.

**Frameworks**: ``framework=`` names the software the run used (:mod:`accelkit.frameworks`:
attention kernel, sequence parallelism, which collectives overlap, gradient precision,
optimizer sharding); a property of the run, never a knob. **Fits** compares memory with the
chip's usable HBM (:attr:`accelkit.chips.Chip.usable_hbm_bytes`, a named assumption).

The LM head and the cross-entropy run on the last pipeline stage only, which the slowest stage's
time counts (one layer fewer there where the framework balances its end stages, as Llama 3 does).
Not modelled: load imbalance between experts, stragglers, failures, the embedding's gradient
all-reduce between the first and last stages; kernels as they run only with
``compute_efficiency="predicted"`` (:mod:`accelkit.kernels`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from accelkit import _validate, chips, dtypes, frameworks, kernels, mfu, models, step_cost
from accelkit.activations import RECOMPUTE, activation_bytes_per_token_per_layer
from accelkit.layout import (MAX_DEGREE, Layout, check_layout, chips_per_domain, cost_line,
                             domain_chips, largest_job)
from accelkit.step_cost import GRAD_BYTES, WEIGHT_BYTES

_RECOMPUTE_CODE = {name: i for i, name in enumerate(RECOMPUTE)}


@dataclass(frozen=True)
class CollectiveCost:
    """One kind of collective in a step: per call, calls per step, and what is exposed."""

    name: str            # "tp", "ep", "pp", "cp", "fsdp_gather", "fsdp_scatter", "dp_grads"
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
    # the optimizer step (memory-bound, once per step); HBM the tensors may use (``fits``
    # compares memory with it: Chip.usable_hbm_bytes); the framework the step was priced for
    optimizer_seconds: float = field(default=0.0, repr=False)
    usable_hbm_bytes: float = field(default=0.0, repr=False)
    framework: str = field(default="default", repr=False)

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


def _transformer(model: str | models.Model) -> models.Transformer:
    m = models.get(model)
    if not isinstance(m, models.Transformer):
        raise ValueError(f"model must be a catalog transformer (dense or MoE); {m.name} is "
                         f"a {m.family}")
    return m


# --------------------------------------------------------------------------------------------
# The public API: a model name and a chip name are resolved here, once
# --------------------------------------------------------------------------------------------

#: ``compute_efficiency=PREDICTED`` (the string ``"predicted"``): each layout's compute
#: efficiency from :func:`accelkit.mfu.compute_efficiencies` (its matmuls' shapes per TP shard
#: on the chip's matrix units, the non-matmul work at HBM speed) instead of a fixed fraction.
PREDICTED = "predicted"


def _efficiency_choice(compute_efficiency: object, chip: chips.Chip, dtype: str) -> float | str:
    """``compute_efficiency`` checked: :data:`PREDICTED` (for a chip and precision accelkit.mfu
    can predict) or a fraction of peak in (0, 1] (for a precision the chip has a peak for)."""
    if isinstance(compute_efficiency, str):
        if compute_efficiency != PREDICTED:
            raise ValueError(f"compute_efficiency must be a fraction in (0, 1] or "
                             f"{PREDICTED!r}, got {compute_efficiency!r}")
        mfu.check_chip(chip, dtype)
        return PREDICTED
    fraction = _validate.fraction("compute_efficiency", compute_efficiency)
    chip.peak_flops(dtypes.check(dtype))
    return fraction


def _evaluate(model: models.Transformer, chip: chips.Chip, batch: int, s: int,
              c: dict[str, np.ndarray], choice: float | str, dtype: str, dropout: bool,
              fw: frameworks.Framework) -> dict[str, np.ndarray]:
    """The step model on candidates ``c``: with :data:`PREDICTED`, every kernel as it runs
    (:func:`accelkit.kernels.microbatch_seconds`, recomputation included) and collectives and
    the optimizer step at the achievable bandwidths; with a fraction, FLOPs at that fraction of
    the datasheet peak and datasheet bandwidths (an upper bound)."""
    spec = step_cost.spec(model, s, dropout or fw.dropout, fw.attention == "fused")
    if choice == PREDICTED:
        # a context-parallel chip computes 1/cp of each micro-batch's tokens
        tokens = c["mb"] // c["cp"] if "cp" in c else c["mb"]
        seconds = kernels.microbatch_seconds(model, chip, dtypes.check(dtype), c["tp"], c["ep"],
                                             tokens, c["recompute"], s, fw)
        head = kernels.head_seconds(model, chip, dtypes.check(dtype), c["tp"], tokens,
                                    c["recompute"], s, fw)
        return step_cost.evaluate(spec, chip, batch, c, 1.0, dtype, framework=fw,
                                  kernel_seconds=seconds, bandwidth="achievable",
                                  head_seconds=head)
    return step_cost.evaluate(spec, chip, batch, c, float(choice), dtype, framework=fw)


def _arrays(layout: Layout, mb: int) -> dict[str, np.ndarray]:
    """One layout as the one-entry candidate arrays the step model evaluates."""
    cand = {a: np.array([getattr(layout, a)]) for a in ("dp", "fsdp", "tp", "pp", "ep",
                                                         "interleave", "cp")}
    cand["mb"] = np.array([mb])
    cand["recompute"] = np.array([_RECOMPUTE_CODE[layout.recompute]])
    return cand


def _step(model: models.Transformer, chip: chips.Chip, layout: Layout, batch: int, s: int,
          choice: float | str, dtype: str, dropout: bool, fw: frameworks.Framework,
          n_chips: int | None = None) -> TrainStep:
    """:func:`train_step` on checked arguments."""
    mb = check_layout(model, chip, layout, batch, n_chips, seq_len=s)
    cand = _arrays(layout, mb)
    r = {k: float(v[0]) for k, v in _evaluate(model, chip, batch, s, cand, choice, dtype,
                                               dropout, fw).items()}
    bandwidth = "achievable" if choice == PREDICTED else "datasheet"
    return _result(model, chip, layout, batch, s, mb, r, bandwidth, fw.name)


def train_step(model: str | models.Model, chip: str | chips.Chip, layout: Layout,
               batch_tokens: int, *, n_chips: int | None = None, seq_len: int | None = None,
               dtype: str = "bf16", compute_efficiency: float | str = 1.0,
               dropout: bool = False,
               framework: str | frameworks.Framework | None = None) -> TrainStep:
    """Time, memory and MFU of one optimizer step of ``model`` on ``layout`` (see module doc).

    Args:
        model: a catalog transformer (dense or MoE) or its name.
        chip: chip name or :class:`accelkit.chips.Chip`; the job uses ``layout.chips`` of them.
        layout: a :class:`Layout`.
        batch_tokens: global batch, tokens per optimizer step.
        n_chips: if given, the layout's degrees must multiply to it.
        seq_len: sequence length (default the model's training length).
        dtype: precision of the matmuls (its peak sets compute time).
        compute_efficiency: fraction of the datasheet peak the kernels reach, in (0, 1]; 1.0 =
            peak, with collectives at datasheet bandwidth (an upper bound); or
            ``"predicted"``: every kernel as it runs (:mod:`accelkit.kernels`: matmul shapes
            per TP shard under the chip's achievable ceiling, inputs, weights and outputs in
            memory time, the non-matmul kernels at achievable HBM bandwidth) and collectives
            and the optimizer step at achievable bandwidths.
        dropout: count dropout masks in activation memory (Korthikanti et al.'s GPT setting).
        framework: the framework the run used (:mod:`accelkit.frameworks`: a preset name or a
            Framework; default ``"default"``): attention kernel, sequence parallelism, which
            collectives overlap, gradient precision, optimizer sharding.
    Returns:
        A :class:`TrainStep`; ``fits`` False (with the memory it would need) if it does not fit.
    Raises:
        ValueError: ep > 1 on a dense model, tp not dividing the heads, pp above the layers,
            batch or micro-batch not dividing, a job above the chip's largest, bad names; a
            cp the sequence does not split into 2·cp chunks for, or a micro-batch that is not
            whole sequences with cp > 1.
    """
    the_model, the_chip = _transformer(model), chips.get(chip)
    batch = _validate.positive_int("batch_tokens", batch_tokens, maximum=10**12)
    s = the_model.check_seq_len(seq_len)
    choice = _efficiency_choice(compute_efficiency, the_chip, dtype)
    fw = frameworks.get(framework)
    if n_chips is not None:
        n_chips = _validate.positive_int("n_chips", n_chips, maximum=MAX_DEGREE)
    return _step(the_model, the_chip, layout, batch, s, choice, dtype, dropout, fw, n_chips)


def _result(model: models.Model, chip: chips.Chip, layout: Layout, batch: int, s: int, mb: int,
            r: dict[str, float], bandwidth: str = "datasheet", framework: str = "default"
            ) -> TrainStep:
    domain = domain_chips(chip, layout.chips)
    strides = layout.strides

    def group(axis: str, kind: str) -> tuple[int, int, str]:
        n = getattr(layout, axis)
        k = int(chips_per_domain(n, strides[axis], domain))
        return n, k, cost_line(chip, kind, n, k, bandwidth, layout.chips)[2]

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
    add("cp", "cp", "all_gather", r["cp_bytes"], r["cp_calls"], r["cp_each"], r["cp_exposed"])
    fsdp_total = r["m"] * (2 * r["gather_each"] + r["scatter_each"])
    share = r["fsdp_exposed"] / fsdp_total if fsdp_total else 0.0
    add("fsdp_gather", "fsdp", "all_gather", r["stage_params"] * WEIGHT_BYTES, 2 * r["m"],
        r["gather_each"], share * 2 * r["m"] * r["gather_each"])
    add("fsdp_scatter", "fsdp", "reduce_scatter", r["stage_params"] * GRAD_BYTES, r["m"],
        r["scatter_each"], share * r["m"] * r["scatter_each"])
    if layout.dp > 1 or layout.ep > 1 or layout.cp > 1:
        n = layout.dp * layout.ep * layout.cp
        first = next(a for a in ("dp", "ep", "cp") if getattr(layout, a) > 1)
        rows.append(CollectiveCost("dp_grads", "all_reduce", n,
                                   int(chips_per_domain(layout.dp, strides["dp"], domain)),
                                   group(first, "all_reduce")[2],
                                   r["dense_grad"] + r["expert_grad"],
                                   r["dp_total"] / r["dp_time"] if r["dp_time"] else 1.0,
                                   r["dp_time"], r["dp_total"], r["dp_exposed"]))
    hbm = float(chip.hbm_bytes or 0)
    usable = chip.usable_hbm_bytes if chip.hbm_bytes else 0.0
    return TrainStep(
        model=model.name, chip=chip.name, layout=layout, batch_tokens=batch, seq_len=s,
        microbatch_tokens=mb, microbatches=int(round(r["m"])), seconds=r["seconds"],
        compute_seconds=r["compute"], communication_seconds=r["comm"],
        exposed_communication_seconds=r["exposed"], bubble_seconds=r["bubble"],
        bubble_fraction=r["bubble_fraction"], memory_bytes_per_chip=r["memory"],
        state_bytes_per_chip=r["state"], activation_bytes_per_chip=r["activations"],
        hbm_bytes=hbm, fits=r["memory"] <= usable, model_flops_per_step=r["model_flops"],
        mfu=r["mfu"], tokens_per_second_per_chip=r["tps"], collectives=tuple(rows),
        weight_bytes_per_chip=r["weights_b"], gradient_bytes_per_chip=r["grads_b"],
        optimizer_bytes_per_chip=r["optimizer_b"], optimizer_seconds=r["optimizer"],
        usable_hbm_bytes=usable, framework=framework)


@dataclass(frozen=True)
class PredictedMFU:
    """A predicted MFU and the chain of factors behind it."""

    mfu: float
    compute_efficiency: float   # accelkit.kernels.KernelTimes.efficiency (the layout's micro-batch)
    matmul_efficiency: float    # ... .matmul_efficiency: the linear matmuls' fraction of peak
    step: TrainStep

    def __repr__(self) -> str:
        return (f"PredictedMFU({self.mfu:.1%}: matmuls {self.matmul_efficiency:.1%}, compute "
                f"{self.compute_efficiency:.1%}, then bubbles and exposed communication)")


def predicted_mfu(model: str | models.Model, chip: str | chips.Chip, layout: Layout,
                  batch_tokens: int, *, seq_len: int | None = None, dtype: str = "bf16",
                  dropout: bool = False,
                  framework: str | frameworks.Framework | None = None) -> PredictedMFU:
    """MFU of ``layout`` with every kernel as it runs (:func:`accelkit.kernels.microbatch`: the
    matmuls under the achievable ceiling, the non-matmul work at achievable HBM bandwidth), and
    :func:`train_step`'s bubbles, exposed communication and optimizer step
    (``compute_efficiency="predicted"``) for the run's ``framework``.

    Raises:
        ValueError: as :func:`train_step` and :func:`accelkit.kernels.microbatch`.
    """
    the_model, the_chip = _transformer(model), chips.get(chip)
    step = train_step(the_model, the_chip, layout, batch_tokens, seq_len=seq_len, dtype=dtype,
                      compute_efficiency=PREDICTED, dropout=dropout, framework=framework)
    eff = kernels.microbatch(the_model, the_chip, tp=layout.tp, ep=layout.ep,
                             microbatch_tokens=step.microbatch_tokens, seq_len=step.seq_len,
                             dtype=dtype, recompute=layout.recompute, framework=framework)
    return PredictedMFU(mfu=step.mfu, compute_efficiency=eff.efficiency,
                        matmul_efficiency=eff.matmul_efficiency, step=step)


# --------------------------------------------------------------------------------------------
# The exhaustive layout search
# --------------------------------------------------------------------------------------------

def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def candidate_layouts(model: str | models.Model, n_chips: int, batch_tokens: int,
                      seq_len: int | None = None, *, whole_sequences: bool = True,
                      max_cp: int = 1) -> dict[str, np.ndarray]:
    """Every layout :func:`best_layouts` searches, as arrays (one entry per candidate).

    Degrees: every factorisation of ``n_chips`` into dp·fsdp·tp·cp·pp·ep with tp dividing the
    heads, pp ≤ layers, ep dividing the experts (1 for dense models), cp splitting the sequence
    into 2·cp equal chunks and at most ``max_cp`` (default 1: no context parallelism, the search
    lessons 07 and 10 show; cp > 1 only with ``whole_sequences``, as it splits whole sequences)
    and the batch dividing over the replicas; micro-batches: the replica's batch halved repeatedly while it stays a whole
    number of sequences (``whole_sequences=False``: down to 1/64 of a sequence, as if a sequence
    could be split over micro-batches, which needs context parallelism this model does not cost);
    interleave 1, 2, 4, 8 where pp > 1 and pp·v ≤ layers; all three recompute policies.
    """
    the_model = _transformer(model)
    n = _validate.positive_int("n_chips", n_chips, maximum=MAX_DEGREE)
    batch = _validate.positive_int("batch_tokens", batch_tokens, maximum=10**12)
    s = the_model.check_seq_len(seq_len)
    max_cp = _validate.positive_int("max_cp", max_cp, maximum=MAX_DEGREE)
    return _candidates(the_model, n, batch, s, bool(whole_sequences), max_cp)


def _expand_microbatches(combos: np.ndarray, layers: int, s: int, min_mb: int,
                         whole_sequences: bool) -> np.ndarray:
    """Rows (dp, fsdp, tp, pp, ep, mb, interleave, cp) for degree combinations (dp, fsdp, tp,
    pp, ep, replica tokens, cp): each replica's batch, then halved while it stays even, at least
    ``min_mb`` and (``whole_sequences``) a whole number of sequences; each with interleave 1,
    2, 4, 8 where pp > 1 and pp·v ≤ layers. Same rows, in the same order, as nested loops."""
    if len(combos) == 0:
        return np.zeros((0, 8), dtype=np.int64)
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
    return np.column_stack([combos[picked, :5], mbs[row], options[option], combos[picked, 6]])


def _candidates(the_model: models.Transformer, n: int, batch: int, s: int,
                whole_sequences: bool, max_cp: int = 1) -> dict[str, np.ndarray]:
    """:func:`candidate_layouts` for checked arguments."""
    heads, layers = the_model.heads, the_model.layers
    experts = the_model.n_experts if isinstance(the_model, models.MoETransformer) else 1
    divs = _divisors(n)
    # dp, fsdp, tp, pp, ep, replica, cp
    combos: list[tuple[int, int, int, int, int, int, int]] = []
    min_mb = s if whole_sequences else max(1, s // 64)
    for tp in divs:
        if heads % tp:
            continue
        for cp in _divisors(n // tp):
            if cp > max_cp:
                break
            if cp > 1 and (not whole_sequences or s % (2 * cp)):
                continue
            for ep in _divisors(n // (tp * cp)):
                if experts % ep:
                    continue
                for pp in _divisors(n // (tp * cp * ep)):
                    if pp > layers:
                        continue
                    rest = n // (tp * cp * ep * pp)
                    for fsdp in _divisors(rest):
                        dp = rest // fsdp
                        replicas = dp * fsdp * ep
                        if batch % replicas:
                            continue
                        replica = batch // replicas
                        if whole_sequences and replica % s:
                            continue
                        combos.append((dp, fsdp, tp, pp, ep, replica, cp))
    rows = _expand_microbatches(np.array(combos, dtype=np.int64).reshape(-1, 7), layers, s,
                                min_mb, whole_sequences)
    if not len(rows):
        return {k: np.zeros(0, dtype=np.int64) for k in
                ("dp", "fsdp", "tp", "pp", "ep", "mb", "interleave", "cp", "recompute")}
    base = rows
    table = np.repeat(base, len(RECOMPUTE), axis=0)
    codes = np.tile(np.arange(len(RECOMPUTE)), len(base))
    names = ("dp", "fsdp", "tp", "pp", "ep", "mb", "interleave", "cp")
    out = {name: np.ascontiguousarray(table[:, i]) for i, name in enumerate(names)}
    out["recompute"] = codes
    return out


def best_layouts(model: str | models.Model, chip: str | chips.Chip, n_chips: int,
                 batch_tokens: int, top: int = 5, *, seq_len: int | None = None,
                 dtype: str = "bf16", compute_efficiency: float | str = 1.0,
                 dropout: bool = False, whole_sequences: bool = True, max_cp: int = 1,
                 framework: str | frameworks.Framework | None = None
                 ) -> tuple[TrainStep, ...]:
    """The ``top`` fastest layouts that fit in memory, fastest first (exhaustive search).

    Context parallelism is searched up to ``max_cp`` (default 1: none, so the layouts lessons
    07 and 10 show stay the search they teach); a long-context job passes e.g. ``max_cp=64``:

        >>> best = best_layouts("llama-3-8b", "H100", 64, 32 * 65536, top=1,
        ...                     seq_len=65536, max_cp=16)
        >>> best[0].layout.cp > 1
        True

    Searches :func:`candidate_layouts` with the step model of :func:`train_step`, vectorised
    over candidates (ties broken by less memory). Micro-batches are whole sequences unless
    ``whole_sequences=False``. Returns an empty tuple if no layout fits.

    ``compute_efficiency="predicted"`` prices each candidate's kernels with
    :mod:`accelkit.kernels` and its collectives at achievable bandwidth; ``framework`` as
    :func:`train_step`.

    Raises:
        ValueError: as :func:`train_step`, and ``n_chips`` above the chip's largest job.
    """
    the_model, the_chip = _transformer(model), chips.get(chip)
    batch = _validate.positive_int("batch_tokens", batch_tokens, maximum=10**12)
    s = the_model.check_seq_len(seq_len)
    choice = _efficiency_choice(compute_efficiency, the_chip, dtype)
    fw = frameworks.get(framework)
    n = _validate.positive_int("n_chips", n_chips, maximum=MAX_DEGREE)
    top = _validate.positive_int("top", top, maximum=10_000)
    limit = largest_job(the_chip)
    if n > limit:
        raise ValueError(f"n_chips is {n:,}; {the_chip.name}'s largest job is {limit:,} chips")
    max_cp = _validate.positive_int("max_cp", max_cp, maximum=MAX_DEGREE)
    cand = _candidates(the_model, n, batch, s, bool(whole_sequences), max_cp)
    if len(cand["dp"]) == 0:
        return ()
    r = _evaluate(the_model, the_chip, batch, s, cand, choice, dtype, dropout, fw)
    ok = np.flatnonzero(r["memory"] <= (the_chip.usable_hbm_bytes if the_chip.hbm_bytes else 0.0))
    if len(ok) == 0:
        return ()
    order = ok[np.lexsort((r["memory"][ok], r["seconds"][ok]))][:top]
    out = []
    for i in order:
        layout = Layout(dp=int(cand["dp"][i]), fsdp=int(cand["fsdp"][i]), tp=int(cand["tp"][i]),
                        pp=int(cand["pp"][i]), ep=int(cand["ep"][i]),
                        microbatch_tokens=int(cand["mb"][i]),
                        recompute=RECOMPUTE[int(cand["recompute"][i])],
                        interleave=int(cand["interleave"][i]), cp=int(cand["cp"][i]))
        out.append(_step(the_model, the_chip, layout, batch, s, choice, dtype, dropout, fw))
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
    the_model, the_chip = _transformer(model), chips.get(chip)
    n = _validate.positive_int("n_chips", n_chips, maximum=MAX_DEGREE)
    ep = _validate.positive_int("ep", ep, maximum=MAX_DEGREE)
    if n % ep:
        raise ValueError(f"ep must divide n_chips ({n:,}), got {ep}")
    if ep > 1 and not isinstance(the_model, models.MoETransformer):
        raise ValueError(f"ep must be 1 for the dense model {the_model.name}, got ep={ep}")
    return _dp_critical(the_model, the_chip, n, ep, the_model.check_seq_len(seq_len),
                        dtypes.check(dtype))


def _dp_critical(the_model: models.Transformer, the_chip: chips.Chip, n: int, ep: int, s: int,
                 dtype: str) -> float:
    """:func:`dp_critical_tokens_per_chip` on checked arguments."""
    spec = step_cost.spec(the_model, s, False)
    dense = (spec.params - spec.expert_params) * GRAD_BYTES
    expert = spec.expert_params / ep * GRAD_BYTES
    domain = domain_chips(the_chip, n)
    dp = n // ep
    k_dp = int(chips_per_domain(dp, ep, domain))
    k_ep = int(chips_per_domain(ep, 1, domain))
    seconds = 0.0
    lat, per, _ = cost_line(the_chip, "all_reduce", dp, k_dp)
    if dp > 1:
        seconds += lat + per * (dense / ep + expert)
    if ep > 1:
        for kind in ("reduce_scatter", "all_gather"):
            lat, per, _ = cost_line(the_chip, kind, ep, k_ep)
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
    the_model = _transformer(model)
    spec = step_cost.spec(the_model, the_model.check_seq_len(seq_len), False)
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
    model = _transformer(step.model)
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
    the_model, the_chip = _transformer(model), chips.get(chip)
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be an accelkit.parallel.Layout, got "
                        f"{type(layout).__name__}")
    s = the_model.check_seq_len(seq_len)
    the_chip.peak_flops(dtypes.check(dtype))
    # A reference micro-batch large enough to be FLOP-bound (the roofline's other branch
    # reads the weights per micro-batch); comm does not depend on it, compute is linear in it.
    ref = 2**20
    probe = Layout(dp=layout.dp, fsdp=layout.fsdp, tp=layout.tp, pp=layout.pp, ep=layout.ep,
                   microbatch_tokens=ref, recompute=layout.recompute,
                   interleave=layout.interleave, cp=layout.cp)
    batch = probe.data_parallel * ref
    check_layout(the_model, the_chip, probe, batch, seq_len=s)
    if probe.data_parallel == 1:
        return 0.0
    spec = step_cost.spec(the_model, s, False)
    arrays = step_cost.evaluate(spec, the_chip, batch, _arrays(probe, ref), 1.0, dtype)
    r = {k: float(v[0]) for k, v in arrays.items()}
    compute_per_token = r["compute"] / r["m"] / ref          # seconds per micro-batch token
    backward_share = 2.0 / (3.0 + (probe.recompute == "full"))
    fsdp = (2.0 * r["gather_each"] + r["scatter_each"]) / compute_per_token
    dp = r["dp_time"] / (backward_share * compute_per_token)
    return max(fsdp, dp) / (probe.tp * probe.pp * probe.cp)


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
    counts = [_validate.positive_int(f"n_chips[{i}]", n, maximum=MAX_DEGREE)
              for i, n in enumerate(n_chips)]
    batch = _validate.positive_float("batch_tokens", batch_tokens, maximum=1e13)
    the_model, the_chip = _transformer(model), chips.get(chip)
    s = the_model.check_seq_len(seq_len)
    dt = dtypes.check(dtype)
    return {n: 0.0 if n == 1 else _dp_critical(the_model, the_chip, n, 1, s, dt) / (batch / n)
            for n in counts}


__all__ = ["PREDICTED", "RECOMPUTE", "CollectiveCost", "Layout", "PredictedMFU", "TrainStep",
           "activation_bytes_per_token_per_layer", "best_layouts", "candidate_layouts",
           "critical_tokens_per_chip", "dp_communication_ratios", "dp_critical_tokens_per_chip",
           "hardware_flops_per_token", "hardware_flops_utilization", "predicted_mfu",
           "train_step"]
