"""Training cost: 6·N·D FLOPs over chips × peak × MFU, plus communication and memory.

    >>> import accelkit as ak
    >>> t = ak.training.estimate(model="llama-3-70b", tokens=15e12, chip="TPU v5p",
    ...                          n_chips=8960, mfu=0.40)
    >>> f"{t.flops:.2e}", round(t.days)
    ('6.35e+24', 45)

That is the scaling book's LLaMA-3-70B example (applied-training.md: 6.3e24 FLOPs, about
44 days; it rounds the model to 70e9 parameters).

Conventions:

* **FLOPs** are 6 per parameter per token (2 forward, 4 backward): the parameter matmuls only.
  MFU's model FLOPs also include attention (PaLM, appendix B), which this closed form leaves out
  (a few percent at 8K tokens: ``Model.flops_per_token("train")`` counts it); recomputation adds
  hardware FLOPs (HFU), not model FLOPs (``accelkit.parallel.hardware_flops_utilization``).
* **Time** = FLOPs / (n_chips · peak · MFU), plus any data-parallel gradient all-reduce that does
  not hide behind the backward pass.
* **All-reduce** (ring): each chip sends and receives 2(n−1)/n of the gradient bytes, so it takes
  ``2(n-1)/n · params · grad_bytes / bandwidth``. The bandwidth defaults to the chip's catalog
  interconnect figure (bidirectional, all links of a chip), an optimistic ceiling; pass
  ``interconnect_bytes_per_second`` for one axis or a slower network. It overlaps with the
  backward pass (4·N FLOPs per token); with ``batch_tokens`` per step the per-chip batch below
  which it dominates is ``critical_tokens_per_chip``. With MFU 1, bf16 gradients and the scaling
  book's one-axis 1.8e11 B/s on TPU v5p this is its C / W_ici = 2550 tokens (training.md).
* **Memory per chip**: weights, gradients and optimizer state (default 2 + 2 + 12 = 16 bytes per
  parameter: bf16 weights and gradients, fp32 master weights and two Adam moments; Rajbhandari
  et al. 2020, ZeRO, section 3.1), sharded over all chips (FSDP / ZeRO-3) unless
  ``sharded=False``; plus activation checkpoints, bf16 d_model values per token per checkpoint.
* **Energy** uses the chip's published power (TDP) × chips × seconds: the accelerators alone, not
  an upper bound on the run (chips often draw less than TDP, but hosts, network, storage and
  cooling, none counted, add to the facility's meter). TPU v5e, v5p, v6e and TPU7x have no published power: ``joules`` is then
  None and ``notes`` says so. Dollars likewise (None without a list price).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from accelkit import _validate, chips, dtypes, energy, models, price
from accelkit.dtypes import DType

SECONDS_PER_DAY = 86_400.0

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
    tokens: float
    chip: str
    n_chips: int
    mfu: float
    flops: float
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
    # memory per chip
    weight_bytes_per_chip: float
    gradient_bytes_per_chip: float
    optimizer_bytes_per_chip: float
    activation_bytes_per_chip: float
    memory_bytes_per_chip: float
    total_memory_bytes: float
    hbm_bytes: float
    fits: bool
    min_chips_to_fit: int
    notes: tuple[Note, ...] = ()  # caveats, each a sentence with a ``kind`` (see Note)

    @property
    def days(self) -> float:
        return self.seconds / SECONDS_PER_DAY

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
                ("FLOPs (6·N·D)", f"{self.flops:.3g}"), ("days", f"{self.days:,.1f}"),
                ("chip-hours", f"{self.chip_hours:,.0f}"),
                ("USD", "n/a" if self.usd is None else f"{self.usd:,.0f}"),
                ("joules", "n/a" if self.joules is None else f"{self.joules:.3g}"),
                ("memory / chip", f"{self.memory_bytes_per_chip / 1e9:,.1f} GB"),
                ("fits", str(self.fits))]
        body = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
        return f"<table>{body}</table>"


def estimate(model: str | models.Model | None = None, *, params: float | None = None,
             tokens: float, chip: str | chips.Chip, n_chips: int = 1, mfu: float = 0.4,
             dtype: DType = "bf16", batch_tokens: float | None = None,
             interconnect_bytes_per_second: float | None = None, overlap: bool = True,
             weight_bytes_per_param: float = 2.0, grad_bytes_per_param: float = 2.0,
             optimizer_bytes_per_param: float = 12.0, sharded: bool = True,
             activation_checkpoints_per_layer: int = 1) -> TrainingEstimate:
    """Estimate a training run.

    Args:
        model: a catalog name or Model; or give ``params`` (a parameter count) instead.
        tokens: training tokens D.
        chip: a chip name or :class:`accelkit.chips.Chip`; ``n_chips`` of them.
        mfu: model FLOPs utilization in (0, 1].
        dtype: the precision whose peak the MFU applies to (and of gradient all-reduce).
        batch_tokens: tokens per optimizer step (global batch); enables the data-parallel
            all-reduce and activation-memory estimates.
        interconnect_bytes_per_second: per-chip all-reduce bandwidth; default the catalog's.
        overlap: hide the all-reduce behind the backward pass where it is shorter.
        weight/grad/optimizer_bytes_per_param: memory per parameter (default 2 + 2 + 12).
        sharded: shard weights, gradients and optimizer state over all chips (FSDP/ZeRO-3).
        activation_checkpoints_per_layer: saved d_model-wide activations per token per layer.
    Returns:
        A :class:`TrainingEstimate`.
    Raises:
        ValueError: unknown model or chip, sizes not positive, MFU outside (0, 1], both or
            neither of model and params, a precision the chip lacks.
    """
    notes: list[Note] = []
    if (model is None) == (params is None):
        raise ValueError("give exactly one of model= (a catalog name) or params= (a count)")
    the_model = models.get(model) if model is not None else None
    n_params = float(the_model.params) if the_model is not None else \
        _validate.positive_float("params", params)
    tokens = _validate.positive_float("tokens", tokens)
    the_chip = chips.get(chip)
    n_chips = _validate.positive_int("n_chips", n_chips, maximum=10**7)
    mfu = _validate.fraction("mfu", mfu)
    peak = the_chip.peak_flops(dtype)
    grad_comm_bytes = dtypes.nbytes(dtype)
    for name, value in (("weight_bytes_per_param", weight_bytes_per_param),
                        ("grad_bytes_per_param", grad_bytes_per_param),
                        ("optimizer_bytes_per_param", optimizer_bytes_per_param)):
        _validate.real_in_range(name, value, low=0.0, high=64.0)
    checkpoints = _validate.nonnegative_int("activation_checkpoints_per_layer",
                                            activation_checkpoints_per_layer, maximum=1000)

    flops = 6.0 * n_params * tokens
    compute_seconds = flops / (n_chips * peak * mfu)

    # Data-parallel gradient all-reduce, per optimizer step.
    allreduce = backward = critical = per_chip = None
    comm_bound = None
    exposed_total = 0.0
    if batch_tokens is not None:
        batch_tokens = _validate.positive_float("batch_tokens", batch_tokens)
        per_chip = batch_tokens / n_chips
        if n_chips > 1:
            bandwidth = interconnect_bytes_per_second
            if bandwidth is None:
                bandwidth = the_chip.interconnect_bytes_per_second
                if bandwidth is None:
                    raise chips.MissingFigureError(
                        the_chip.name, "interconnect_bytes_per_second",
                        f"{the_chip.name} has no published interconnect bandwidth; "
                        "pass interconnect_bytes_per_second")
            bandwidth = _validate.positive_float("interconnect_bytes_per_second", bandwidth)
            if the_chip.max_domain_chips is not None and n_chips > the_chip.max_domain_chips:
                notes.append(Note("beyond_domain", f"{n_chips:,} chips exceed {the_chip.name}'s "
                             f"{the_chip.max_domain_chips:,}-chip interconnect domain; beyond it "
                             "the all-reduce runs over a slower network (pass its bandwidth)"))
            ring = 2.0 * (n_chips - 1) / n_chips
            allreduce = ring * n_params * grad_comm_bytes / bandwidth
            backward = 4.0 * n_params * per_chip / (peak * mfu)
            critical = ring * grad_comm_bytes * peak * mfu / (4.0 * bandwidth)
            comm_bound = allreduce > backward
            exposed = max(0.0, allreduce - backward) if overlap else allreduce
            exposed_total = exposed * tokens / batch_tokens

    seconds = compute_seconds + exposed_total
    chip_hours = seconds * n_chips / 3600.0
    cost = price.usd_for(the_chip.usd_per_hour, seconds, n_chips)
    usd = None if cost is None else float(cost)
    if usd is None:
        notes.append(Note("no_price", f"{the_chip.name} has no published price; usd is None"))
    energy_at_tdp = energy.tdp_joules(the_chip.watts, seconds, n_chips)
    joules = None if energy_at_tdp is None else float(energy_at_tdp)
    if joules is None:
        notes.append(Note("no_power", f"{the_chip.name} has no published power; joules is None"))

    shards = n_chips if sharded else 1
    weight_b = n_params * weight_bytes_per_param / shards
    grad_b = n_params * grad_bytes_per_param / shards
    opt_b = n_params * optimizer_bytes_per_param / shards
    act_total = 0.0
    if batch_tokens is not None:
        if isinstance(the_model, models.Transformer):
            act_total = (2.0 * the_model.d_model * the_model.layers * checkpoints
                         * batch_tokens)
        else:
            notes.append(Note("activations_skipped",
                              "activation memory counted for catalog transformers only"))
    act_b = act_total / n_chips
    per_chip_bytes = weight_b + grad_b + opt_b + act_b
    total = n_params * (weight_bytes_per_param + grad_bytes_per_param
                        + optimizer_bytes_per_param) + act_total
    hbm = float(the_chip.hbm_bytes or 0)
    fits = per_chip_bytes <= hbm
    min_chips = max(1, math.ceil(total / hbm)) if hbm else 0
    if not fits:
        notes.append(Note("does_not_fit",
                          f"needs {per_chip_bytes / 1e9:,.1f} GB per chip but {the_chip.name} "
                          f"has {hbm / 1e9:,.1f} GB" + ("" if sharded else "; try sharded=True")))

    return TrainingEstimate(
        model=the_model.name if the_model else None, params=n_params, tokens=tokens,
        chip=the_chip.name, n_chips=n_chips, mfu=mfu, flops=flops, peak_flops_per_chip=peak,
        compute_seconds=compute_seconds, communication_seconds=exposed_total, seconds=seconds,
        chip_hours=chip_hours, usd=usd, joules=joules, batch_tokens=batch_tokens,
        tokens_per_chip=per_chip, allreduce_seconds_per_step=allreduce,
        backward_seconds_per_step=backward, critical_tokens_per_chip=critical,
        communication_bound=comm_bound, weight_bytes_per_chip=weight_b,
        gradient_bytes_per_chip=grad_b, optimizer_bytes_per_chip=opt_b,
        activation_bytes_per_chip=act_b, memory_bytes_per_chip=per_chip_bytes,
        total_memory_bytes=total, hbm_bytes=hbm, fits=fits, min_chips_to_fit=min_chips,
        notes=tuple(notes))


# --------------------------------------------------------------------------------------------
# Published runs, for checking the model against what teams reported (lesson 07)
# --------------------------------------------------------------------------------------------

#: Scale-out bandwidth per GPU beyond the NVLink domain: one 400 Gb/s NDR InfiniBand NIC per H100
#: (DGX H100: "Each H100 GPU in the system is connected to an NVIDIA CX-7 Infiniband 400 NDR NIC",
#: mlcommons/inference_results_v3.1 closed/NVIDIA/documentation/start_from_device/dgx-h100.md),
#: i.e. 50 GB/s each way, counted bidirectionally (100 GB/s) like the catalog's interconnect figures.
INFINIBAND_BYTES_PER_SECOND = 100e9


class PublishedRun(NamedTuple):
    """A training run's stated inputs and the figures its authors reported, with sources."""

    name: str
    model: str
    tokens: float
    chip: str
    n_chips: int
    mfu: float
    inputs_source: str
    reported_flops: float | None
    reported_days: float | None
    reported_chip_hours: float | None
    reported_source: str
    note: str


PUBLISHED_RUNS: tuple[PublishedRun, ...] = (
    PublishedRun(
        "Scaling book: LLaMA-3-70B on a TPU v5p pod", "llama-3-70b", 15e12, "TPU v5p", 8960, 0.40,
        "jax-ml/scaling-book applied-training.md: 15T tokens, 8960 TPU v5p chips, 40% MFU",
        6.3e24, 44.0, None,
        "jax-ml/scaling-book applied-training.md: 6.3e24 FLOPs, about 44 days",
        "a worked estimate, not a measured run: it shows the arithmetic agrees, not wall-clock"),
    PublishedRun(
        "Llama 3.1 405B on 16k H100", "llama-3.1-405b", 15.6e12, "H100", 16384, 0.40,
        "Llama Team 2024, 'The Llama 3 Herd of Models', arXiv:2407.21783: 15.6T tokens, 16,384 "
        "H100 GPUs, BF16 MFU 38-43% (Table 4); 40% used here",
        3.8e25, None, 30.84e6,
        "FLOPs: arXiv:2407.21783 (3.8e25); GPU-hours: meta-llama/llama-models "
        "models/llama3_1/MODEL_CARD.md (30.84M H100-80GB GPU hours, TDP 700 W)",
        "reported GPU-hours include failures and restarts (466 job interruptions in a 54-day "
        "snapshot, arXiv:2407.21783 §3.3.4), long-context and annealing stages, and checkpoints"),
    PublishedRun(
        "Llama 3.1 70B on H100", "llama-3-70b", 15e12, "H100", 16384, 0.40,
        "meta-llama/llama-models models/llama3_1/MODEL_CARD.md: ~15T tokens on H100-80GB; chip "
        "count and MFU for the 70B are not published (16,384 and 40% assumed, as for the 405B)",
        None, None, 7.0e6,
        "meta-llama/llama-models models/llama3_1/MODEL_CARD.md (7.0M H100-80GB GPU hours)",
        "the MFU of a 70B run on many GPUs is likely below the 405B's: less work per GPU per step"),
    PublishedRun(
        "GPT-3 175B", "gpt-3-175b", 300e9, "V100", 1024, 0.30,
        "Brown et al. 2020, arXiv:2005.14165, section 2.2: 300B training tokens; trained on V100s "
        "(chip count and MFU not published: 1024 and 30% are placeholders)",
        3.14e23, None, None,
        "Brown et al. 2020, arXiv:2005.14165, Table D.1 (3.14e23 total training FLOPs)",
        "only the FLOPs can be checked: no chip count or wall-clock was published"),
)


# -- what the lessons ask of a run: which network, and published figures against ours ------------

NETWORKS = ("catalog", "infiniband")


def network_bandwidth(chip: str | chips.Chip, n_chips: int, network: str = "catalog"
                      ) -> float | None:
    """The all-reduce bandwidth to pass as ``estimate(interconnect_bytes_per_second=...)``.

    Inside a chip's interconnect domain (a TPU's ICI pod, a GPU's NVLink node) the catalog's
    interconnect figure applies, so this returns None (``estimate``'s default). With
    ``network="infiniband"``, a GPU job larger than its NVLink domain runs its all-reduce over
    one 400 Gb/s NDR NIC per GPU instead: :data:`INFINIBAND_BYTES_PER_SECOND`. TPUs keep ICI.

    Args:
        chip: a chip name or :class:`~accelkit.chips.Chip`.
        n_chips: chips in the job, 1 to 10**6.
        network: ``"catalog"`` (always the catalog figure) or ``"infiniband"``.
    Returns:
        Bytes per second, or None for the catalog interconnect.
    Raises:
        TypeError, ValueError: an unknown chip or network, or a bad chip count.
    """
    the_chip = chips.get(chip)
    n = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    which = _validate.choice("network", network, NETWORKS)
    beyond = the_chip.max_domain_chips is not None and n > the_chip.max_domain_chips
    if which == "infiniband" and the_chip.kind == "gpu" and beyond:
        return INFINIBAND_BYTES_PER_SECOND
    return None


def communication_ratios(model: str | models.Model, chip: str | chips.Chip,
                         n_chips: tuple[int, ...] | list[int], *, batch_tokens: float,
                         mfu: float = 0.4, network: str = "catalog") -> dict[int, float]:
    """Per optimizer step, gradient all-reduce time ÷ backward-pass time, for each chip count.

    Data parallel at a fixed global batch of ``batch_tokens``: the backward pass shrinks with the
    tokens per chip while the ring all-reduce's per-chip traffic, 2(n−1)/n of the gradients,
    barely moves. Above 1 the all-reduce cannot hide behind the backward pass.

    Args:
        model: a catalog model name or Model.
        chip: a chip name or Chip.
        n_chips: the chip counts, each 1 to 10**6 (at most 64 of them).
        batch_tokens: tokens per optimizer step (the global batch), > 0.
        mfu: model FLOPs utilization, in (0, 1].
        network: ``"catalog"`` or ``"infiniband"`` (see :func:`network_bandwidth`).
    Returns:
        ``{n: allreduce_seconds_per_step / backward_seconds_per_step}`` (0.0 for one chip).
    Raises:
        TypeError, ValueError: a bad argument, named.
    """
    if not isinstance(n_chips, (tuple, list)) or not n_chips or len(n_chips) > 64:
        raise TypeError(f"n_chips must be a non-empty tuple or list of at most 64 chip counts, "
                        f"got {n_chips!r}")
    counts = [_validate.positive_int(f"n_chips[{i}]", n, maximum=10**6)
              for i, n in enumerate(n_chips)]
    the_chip = chips.get(chip)
    ratios = {}
    for n in counts:
        est = estimate(model=model, tokens=batch_tokens, chip=the_chip, n_chips=n, mfu=mfu,
                       batch_tokens=batch_tokens,
                       interconnect_bytes_per_second=network_bandwidth(the_chip, n, network))
        allreduce, backward = est.allreduce_seconds_per_step, est.backward_seconds_per_step
        # One chip has no gradient all-reduce (estimate reports None): nothing to hide.
        ratios[n] = 0.0 if allreduce is None or not backward else allreduce / backward
    return ratios


@dataclass(frozen=True)
class PublishedComparison:
    """A published run's reported figure beside our compute-only estimate, in one unit.

    The unit is the most direct figure the authors reported: chip-hours if they gave them, else
    days, else total FLOPs. ``ours`` and ``reported`` are in ``unit`` (chip-hours in millions).

    Attributes:
        run: the :class:`PublishedRun`.
        estimate: ``estimate(model, tokens, chip, n_chips, mfu)`` on the run's stated inputs.
        unit: ``"million chip-hours"``, ``"days"`` or ``"FLOPs"``.
        ours: our compute-only figure (no failures, restarts or communication).
        reported: the authors' figure.
        ratio: ``reported / ours``; above 1, the run cost more than compute alone.
    """

    run: PublishedRun
    estimate: TrainingEstimate
    unit: str
    ours: float
    reported: float
    ratio: float


def compare_published(run: PublishedRun | int) -> PublishedComparison:
    """Estimate a published run from its stated inputs and set it beside the reported figure.

    Args:
        run: a :class:`PublishedRun`, or an index into :data:`PUBLISHED_RUNS`.
    Returns:
        A :class:`PublishedComparison`.
    Raises:
        TypeError: ``run`` is neither a PublishedRun nor an int.
        ValueError: an index out of range, or a run that reports no figure.
    """
    if isinstance(run, PublishedRun):
        the_run = run
    elif isinstance(run, int) and not isinstance(run, bool):
        index = _validate.nonnegative_int("run", run, maximum=len(PUBLISHED_RUNS) - 1)
        the_run = PUBLISHED_RUNS[index]
    else:
        raise TypeError(f"run must be a PublishedRun or an index into PUBLISHED_RUNS, "
                        f"got {type(run).__name__}")
    est = estimate(model=the_run.model, tokens=the_run.tokens, chip=the_run.chip,
                   n_chips=the_run.n_chips, mfu=the_run.mfu)
    if the_run.reported_chip_hours is not None:
        ours, theirs, unit = est.chip_hours / 1e6, the_run.reported_chip_hours / 1e6, \
            "million chip-hours"
    elif the_run.reported_days is not None:
        ours, theirs, unit = est.days, the_run.reported_days, "days"
    elif the_run.reported_flops is not None:
        ours, theirs, unit = est.flops, the_run.reported_flops, "FLOPs"
    else:
        raise ValueError(f"run {the_run.name!r} reports no chip-hours, days or FLOPs to compare")
    return PublishedComparison(run=the_run, estimate=est, unit=unit, ours=ours, reported=theirs,
                               ratio=theirs / ours)


__all__ = ["INFINIBAND_BYTES_PER_SECOND", "NETWORKS", "NOTE_KINDS", "Note", "PUBLISHED_RUNS",
           "PublishedComparison", "PublishedRun", "TrainingEstimate", "communication_ratios",
           "compare_published", "estimate", "network_bandwidth"]
