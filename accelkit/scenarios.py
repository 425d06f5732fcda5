"""Decision scenarios: five real deployments, the knobs a learner sets, and what each chip costs.

Each :class:`Scenario` is a job with a size (tokens to train on, tokens to generate, samples
to learn from) and default knobs. :func:`evaluate` prices one scenario on one chip by calling
the cost models (:mod:`accelkit.training`, :mod:`accelkit.inference`, :mod:`accelkit.models`,
:mod:`accelkit.price`) and returns an :class:`Outcome` with the same fields for every kind of
job, so a lab can compare chips side by side; :func:`compare` does it for several chips.
:class:`DecisionLab` keeps a learner's choices (each reason must cite a figure of the table,
:func:`cited_figure`), prints a summary, and saves and loads them as JSON.

    >>> import accelkit.scenarios as sc
    >>> o = sc.evaluate("chatbot", "H100")
    >>> o.bound, o.fits, o.meets_latency
    ('memory', True, True)

Conventions (on top of those of the cost models):

* **Chips per job** (``n_chips=None``): training scenarios use the scenario's count;
  serving and the recommender use :func:`replica_chips`, the smallest power of two whose HBM
  holds the weights (or embedding tables) with room to spare (``headroom``, default 2×:
  half for the KV cache or optimizer state). Give ``n_chips`` to use one count for all chips.
* **Training** is priced from :func:`accelkit.parallel.best_layouts`: the fastest layout of
  the job's chips that fits (degrees of data, FSDP, tensor and pipeline parallelism, the
  micro-batch and the recomputation policy), its step time, its MFU and its memory per chip,
  broken into weights, gradients, optimizer state and the activations of the micro-batches in
  flight. By default (``compute_efficiency="predicted"``) each layout's kernels run at the
  efficiency the engines predict for that chip (:mod:`accelkit.mfu`: every matmul's shape per
  tensor-parallel shard on the TPU's systolic MXUs or the GPU's tensor-core tiles and waves,
  the non-matmul work at HBM bandwidth), and the step adds the layout's pipeline bubbles and
  exposed communication: the MFU is *predicted*, per chip. It is an upper bound of a kind:
  memory stalls, kernel prologues and epilogues and framework overheads are not counted, and
  fully specified published runs reach 0.48-0.84 of it (docs/mfu.md), so predicted days and
  dollars are optimistic by about that factor, on every chip. Two overrides: a number
  ``compute_efficiency=`` in (0, 1] runs every matmul at that assumed fraction of peak inside
  the same layout model (:data:`COMPUTE_EFFICIENCY`, 0.6, was the lab's default before the
  prediction: fully specified published runs reach 0.42-0.95 of what the layout model
  predicts at peak, docs/parallel.md); ``mfu=`` assumes the MFU itself, the same on every
  chip: the time is then :func:`accelkit.training.estimate`'s (6·N·D FLOPs at that MFU, the
  scaling book's convention, plus any exposed data-parallel all-reduce); layout and memory
  stay the best layout's. ``Outcome.mfu_basis`` says in words which basis a number has
  ("predicted from the engines (...)", "layout model, kernels at an assumed ...", "assumed")
  and ``Outcome.kernel_efficiency`` the fraction of peak the kernels reach. A chip whose
  matrix units the engines cannot model (AMD GPUs, TPU7x: no published MXU count) is
  refused with :class:`NotPredicted` (:func:`compare` lists it as :class:`Unavailable`);
  price it with ``compute_efficiency=`` or ``mfu=``. Where no layout fits, the outcome is
  the fully sharded layout with full recomputation and one-sequence micro-batches
  (``fits=False``, with the memory it would need).
* **Serving jobs** are batches of requests: each batch prefills ``prompt_tokens`` per request,
  then generates ``output_tokens`` decode steps at the mean context (prompt + output / 2).
  ``batch=0`` means the largest batch that fits and (with a latency target) meets it, from
  :func:`accelkit.inference.best_batch`. Latency is one decode step (seconds per generated
  token of one user); time to first token is the batch's prefill. A scenario with
  ``concurrent_users`` sizes a fleet: ``replicas`` = users / batch, rounded up, each of
  ``n_chips``; ``fleet_usd_per_hour`` is what that fleet rents for. A replica of more than one
  chip is tensor-parallel: :mod:`accelkit.inference` charges its all-reduces per layer
  (``communication_seconds`` of a decode step, and in prefill), and a replica cannot be larger
  than the chip's scale-up domain (:class:`ReplicaTooLarge`). With ``concurrent_users`` and
  a latency target, the ``plan_*`` fields are the cheapest plan that serves them,
  :func:`accelkit.capacity.plan` at the last step's context (prompt + output - 1, the
  longest cache): its replicas, chips per replica, batch (backed off until the target is met),
  $/h and $ per million tokens; ``None``, with a note, where none meets the target.
* **Recommender** training: every operation of a training step (forward and backward) on the
  roofline, the step's FLOPs and bytes shared perfectly by the chips; gathers (embedding
  lookups) move bytes without FLOPs, so they run at memory bandwidth. Tables must fit in the
  chips' pooled HBM (weights plus ``optimizer_bytes_per_param``). On a chip with SparseCores
  (``Chip.has_sparsecores``: TPU v4, v5p, v6e, TPU7x) the gathers run on them; on one without
  (TPU v5e, every GPU) on the TensorCore's vector unit or the SMs. Both are charged at full
  HBM bandwidth, which flatters scattered rows of a few hundred bytes most on the chips
  without SparseCores: Jouppi et al. (ISCA 2023, arXiv:2304.01433) report that SparseCores
  speed up embedding-heavy models 5-7× on TPU v4, but no source gives a lookup rate per unit
  we could apply, so the difference is named in ``gather_unit`` and the note, not priced.
* **Utilization** is achieved FLOP/s over the chips' peak in the chosen precision (MFU).
* **Energy** is published power (TDP) × chips × seconds: the chips alone (no hosts, network
  or cooling); None for chips with no published power (TPU v5e, v5p, v6e, 7x). **Dollars**
  use the catalog list price, or the lowest sourced price with ``price="lowest"`` (see
  :mod:`accelkit.price`); None with no price.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from dataclasses import MISSING, asdict, dataclass, fields, replace
from typing import Any, TypedDict, Unpack

import numpy as np

from accelkit import (_html, _validate, capacity, chips, dtypes, energy, inference, mfu, models,
                      parallel, price, roofline, training)

#: Chips the lab compares by default: current TPUs and GPUs with a list price.
DEFAULT_CHIPS = ("TPU v5e", "TPU v6e", "TPU v5p", "NVIDIA A100 (SXM 80GB)", "NVIDIA H100 (SXM)",
                 "NVIDIA H200 (SXM)", "NVIDIA B200 (HGX)")
KINDS = ("train", "serve", "recommender")
PRICES = ("list", "lowest")
_MAX_WORK = 1e16
#: ``compute_efficiency=PREDICTED`` (the default): each chip's kernel efficiency from the
#: engines (:mod:`accelkit.mfu`), per layout.
PREDICTED = parallel.PREDICTED
#: An assumed fraction of peak for the layout model's matmuls, for ``compute_efficiency=``: the
#: lab's default before the engines' prediction, now only an override (module docstring).
COMPUTE_EFFICIENCY = 0.6


@dataclass(frozen=True)
class Scenario:
    """A job to place on hardware, with the knobs a learner starts from.

    ``work`` counts ``work_unit``s: training tokens per run (train), generated tokens
    (serve) or training samples (recommender). ``runs`` independent runs (fine-tuning sweeps)
    execute one after another on the same chips.
    """

    key: str
    title: str
    kind: str
    description: str
    model: str
    work: float
    work_unit: str
    runs: int = 1
    n_chips: int | None = None       # None: replica_chips() per chip
    batch: int = 1                   # serve: sequences; recommender: samples per step; 0 = max
    batch_tokens: int | None = None  # train: tokens per optimizer step
    precision: dtypes.DType = "bf16"  # weights and arithmetic (serve: weights; math in bf16)
    mfu: float | None = None         # train: None = from the layout model; else assumed
    # train: fraction of peak the matmuls reach, or PREDICTED (the engines', per chip)
    compute_efficiency: float | str = PREDICTED
    latency_ms: float | None = None  # serve: target per generated token
    prompt_tokens: int = 0
    output_tokens: int = 0
    concurrent_users: int | None = None  # serve: users generating at once (sizes the fleet)
    question: str = ""

    def __post_init__(self) -> None:
        # Checked when built: an unknown kind would otherwise be priced as some other job.
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {list(KINDS)}, got {self.kind!r}")
        dtypes.check(self.precision, "precision")

    def __repr__(self) -> str:
        return f"Scenario({self.key!r}: {self.title})"


SCENARIOS: dict[str, Scenario] = {s.key: s for s in (
    Scenario(
        key="pretrain", title="Pre-train a large dense transformer", kind="train",
        description="Llama-3-70B on 15 trillion tokens, the published recipe's budget "
                    "(Meta, Llama 3 model card). One run, thousands of chips, weeks of time: "
                    "the bill is dominated by matmul FLOPs.",
        model="llama-3-70b", work=15e12, work_unit="tokens", n_chips=4096,
        batch_tokens=2**24,
        question="Which chip trains it for the least money, with which layout and MFU?"),
    Scenario(
        key="finetune", title="Fine-tune many small research models", kind="train",
        description="A research group fine-tunes Llama-3-8B 50 times (ablations), 1 billion "
                    "tokens each, on 8 chips at a time, 1M-token batches of 8K sequences. "
                    "Research code changes daily: custom ops and new architectures lower the "
                    "kernels' efficiency and make flexibility valuable.",
        model="llama-3-8b", work=1e9, work_unit="tokens", runs=50, n_chips=8,
        batch_tokens=2**20,
        question="Which chip, given that the numbers do not price engineering time?"),
    Scenario(
        key="chatbot", title="Low-latency chatbot, batch 1-4", kind="serve",
        description="Llama-3-70B answering 1,000 users at once, four per replica: "
                    "1,000-token prompts, 250-token answers, and every token within 50 ms "
                    "(20 tokens/s per user). Latency is bought with memory bandwidth, not FLOPs.",
        model="llama-3-70b", work=1e9, work_unit="generated tokens", batch=4,
        latency_ms=50.0, prompt_tokens=1000, output_tokens=250, concurrent_users=1000,
        question="How many replicas, what do they rent for per hour, and what does a million "
                 "tokens cost?"),
    Scenario(
        key="offline", title="Bulk offline batch inference", kind="serve",
        description="Summarise a corpus with Llama-3-70B: 10 billion generated tokens, "
                    "2,000-token inputs, 500-token outputs, no latency target: batch as large "
                    "as memory allows and buy the cheapest throughput.",
        model="llama-3-70b", work=10e9, work_unit="generated tokens", batch=0,
        prompt_tokens=2000, output_tokens=500,
        question="Which chip gives the lowest cost per million tokens at full batch?"),
    Scenario(
        key="recommender", title="Recommender with huge embedding tables", kind="recommender",
        description="Retrain DLRM on Criteo 1TB (4 billion samples) daily for a month: 30 "
                    "epochs. Over 99.9% of its 22.8 billion parameters are embedding rows and each "
                    "sample gathers 26 of them: the tables set the chip count, not the FLOPs.",
        model="dlrm-criteo-1tb", work=1.2e11, work_unit="samples", batch=65_536,
        precision="fp32",
        question="Which chip holds the tables cheaply, what bounds a step, and which chips "
                 "have SparseCores for the lookups?"),
)}


@dataclass(frozen=True)
class Outcome:
    """One scenario on one kind of chip: time, money, energy, utilization and the bound."""

    scenario: str
    chip: str
    n_chips: int
    batch: int
    precision: str
    seconds: float                       # wall-clock for the whole job
    usd: float | None                    # the whole job
    usd_per_hour: float | None           # per chip, the price used
    joules: float | None                 # the whole job, at TDP
    utilization: float                   # achieved FLOP/s over peak (MFU)
    bound: str                           # "compute", "memory" or "communication"
    fits: bool
    usd_per_million: float | None        # per million work units (tokens or samples)
    latency_seconds: float | None = None       # serve: one decode step
    first_token_seconds: float | None = None   # serve: prefill of one batch
    meets_latency: bool | None = None
    memory_bytes: float = 0.0            # what must sit in HBM
    hbm_bytes: float = 0.0               # n_chips x HBM
    note: str = ""
    # train: the layout chosen, what the MFU rests on, the step, memory per chip by part
    layout: str = ""
    mfu_basis: str = ""                  # "predicted from the engines (...)", "layout model,
    #                                      kernels at an assumed ..." or "assumed"
    kernel_efficiency: float | None = None  # train: fraction of peak the kernels reach
    step_seconds: float | None = None
    weight_bytes_per_chip: float | None = None
    gradient_bytes_per_chip: float | None = None
    optimizer_bytes_per_chip: float | None = None
    activation_bytes_per_chip: float | None = None
    # serve: the fleet for the scenario's concurrent users
    replicas: int | None = None
    fleet_usd_per_hour: float | None = None
    communication_seconds: float | None = None  # serve: TP all-reduces per decode step
    # serve with users and a latency target: the cheapest plan, :func:`accelkit.capacity.plan`
    # (flat fields, so a saved lab reloads them; None where there is no plan)
    plan_replicas: int | None = None
    plan_chips_per_replica: int | None = None
    plan_batch_per_replica: int | None = None
    plan_n_chips: int | None = None
    plan_seconds_per_token: float | None = None
    plan_usd_per_hour: float | None = None      # the whole plan's chips
    plan_usd_per_million: float | None = None   # per million generated tokens
    plan_bound: str = ""                        # "latency", "memory" or "users"
    # recommender: where the lookups run
    sparsecores_per_chip: int | None = None
    gather_unit: str = ""
    gather_share: float | None = None    # share of a step's time in gathers

    @property
    def memory_bytes_per_chip(self) -> float:
        return self.memory_bytes / self.n_chips

    @property
    def hbm_bytes_per_chip(self) -> float:
        return self.hbm_bytes / self.n_chips

    @property
    def days(self) -> float:
        return self.seconds / 86_400.0

    @property
    def kilowatt_hours(self) -> float | None:
        return None if self.joules is None else self.joules / 3.6e6

    def __repr__(self) -> str:
        usd = "n/a" if self.usd is None else f"${self.usd:,.0f}"
        lat = "" if self.latency_seconds is None else \
            f", {self.latency_seconds * 1e3:.1f} ms/token"
        return (f"Outcome({self.scenario} on {self.n_chips} x {self.chip}: "
                f"{self.days:,.2f} days, {usd}, {self.utilization:.1%} of peak, "
                f"{self.bound}-bound{lat}{'' if self.fits else ', DOES NOT FIT'})")

    def _repr_html_(self) -> str:
        rows = [("chips", f"{self.n_chips} x {self.chip}"), ("days", f"{self.days:,.2f}"),
                ("USD", "n/a" if self.usd is None else f"{self.usd:,.0f}"),
                ("kWh (TDP)", "n/a" if self.joules is None else f"{self.joules / 3.6e6:,.0f}"),
                ("utilization", f"{self.utilization:.1%}"), ("bound", self.bound),
                ("fits", str(self.fits))]
        if self.layout:
            rows += [("layout", self.layout), ("MFU basis", self.mfu_basis),
                     ("GB per chip", f"{self.memory_bytes_per_chip / 1e9:,.1f} of "
                                     f"{self.hbm_bytes_per_chip / 1e9:,.1f}")]
        if self.replicas is not None:
            rows += [("replicas", f"{self.replicas:,}"),
                     ("fleet USD/h", "n/a" if self.fleet_usd_per_hour is None
                      else f"{self.fleet_usd_per_hour:,.0f}")]
        if self.gather_unit:
            rows.append(("lookups on", self.gather_unit))
        return _html.table(rows)


def get(name: str | Scenario) -> Scenario:
    """A scenario by key ("pretrain", "finetune", "chatbot", "offline", "recommender")."""
    if isinstance(name, Scenario):
        return name
    return _validate.lookup("scenario", name, {_validate.normalise_name(k): v
                                               for k, v in SCENARIOS.items()})


def replica_chips(model: str | models.Model, chip: str | chips.Chip, dtype: dtypes.DType = "bf16",
                  headroom: float = 2.0) -> int:
    """The smallest power-of-two chip count whose pooled HBM holds ``headroom`` × the weights.

    Args:
        headroom: HBM wanted per byte of weights (2.0 leaves half for KV cache or optimizer).
    Raises:
        ValueError: unknown model, chip or dtype; headroom outside [1, 64].
    """
    m = models.get(model)
    the_chip = chips.get(chip)
    factor = _validate.real_in_range("headroom", headroom, low=1.0, high=64.0)
    need = m.weight_bytes(dtype) * factor / float(the_chip.require("hbm_bytes"))
    return 1 if need <= 1 else 2 ** math.ceil(math.log2(need))


def _price(the_chip: chips.Chip, which: str) -> float | None:
    points = price.price_points(the_chip)
    if not points:
        return None
    if which == "list":
        return the_chip.usd_per_hour
    cheapest = price.lowest(the_chip)          # on-demand (and commitment) points; spot left out
    return None if cheapest is None else cheapest.usd_per_hour


def _watts_seconds(the_chip: chips.Chip, n: int, seconds: float) -> float | None:
    joules = energy.tdp_joules(the_chip.watts, seconds, n)
    return None if joules is None else float(joules)


def evaluate(scenario: str | Scenario, chip: str | chips.Chip, *, n_chips: int | None = None,
             batch: int | None = None, precision: str | None = None, mfu: float | None = None,
             compute_efficiency: float | str | None = None, latency_ms: float | None = None,
             price_source: str = "list") -> Outcome:
    """Price one scenario on ``n_chips`` of one chip; knobs left as None take its defaults.

    Args:
        scenario: a key of :data:`SCENARIOS` or a :class:`Scenario`.
        chip: a chip name or Chip.
        n_chips: chips per job (None: the scenario's count, or :func:`replica_chips`).
        batch: serve: sequences per batch (0: largest that fits and meets the latency
            target); recommender: samples/step.
        precision: train: the arithmetic's dtype; serve: the weights' (the KV cache follows
            :func:`accelkit.dtypes.activation_dtype`, as in :mod:`accelkit.inference`: bf16
            for 8-bit weights; math in bf16); recommender: embedding tables'.
        mfu: train only, in (0, 1]: an assumed MFU that overrides the layout model's.
        compute_efficiency: train only: :data:`PREDICTED` (the default of every training
            scenario: each chip's kernel efficiency from the engines, :mod:`accelkit.mfu`), or
            an assumed fraction of peak in (0, 1] for the layout model's matmuls (for example
            :data:`COMPUTE_EFFICIENCY`).
        latency_ms: serve only, target milliseconds per generated token.
        price_source: "list" (catalog) or "lowest" (cheapest sourced price).
        (:func:`knobs_for` names the knobs a scenario uses; the others are ignored.)
    Returns:
        An :class:`Outcome`.
    Raises:
        ValueError: unknown scenario or chip, bad knobs, a precision the chip lacks;
            :class:`NotPredicted` for a training scenario at the predicted efficiency on a chip
            the engines cannot model.
    """
    s = get(scenario)
    the_chip = chips.get(chip)
    which = _validate.choice("price_source", price_source, PRICES)
    knobs: dict[str, Any] = {}
    if n_chips is not None:
        knobs["n_chips"] = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    if batch is not None:
        knobs["batch"] = _validate.nonnegative_int("batch", batch, maximum=10**7)
    if precision is not None:
        knobs["precision"] = dtypes.check(precision, "precision")
    if mfu is not None:
        knobs["mfu"] = _validate.fraction("mfu", mfu)
    if compute_efficiency is not None:
        knobs["compute_efficiency"] = _efficiency(compute_efficiency)
    if latency_ms is not None:
        knobs["latency_ms"] = _validate.positive_float("latency_ms", latency_ms, maximum=1e6)
    return _outcome(replace(s, **knobs), the_chip, which)


@functools.lru_cache(maxsize=2048)
def _outcome(s: Scenario, the_chip: chips.Chip, which: str) -> Outcome:
    """:func:`evaluate` once its knobs are checked. Cached on the (frozen, hashable) scenario
    with its knobs applied, the chip and the price source: a lab re-renders the same table
    whenever a control that does not change it moves (the chart's metric), and an Outcome is
    frozen, so sharing one is safe. Errors are not cached."""
    usd_per_hour = _price(the_chip, which)
    if s.kind == "train":
        return _train(s, the_chip, usd_per_hour)
    if s.kind == "serve":
        return _serve(s, the_chip, usd_per_hour)
    return _recommender(s, the_chip, usd_per_hour)


def _efficiency(value: object) -> float | str:
    """``compute_efficiency`` checked: :data:`PREDICTED` or a fraction in (0, 1]."""
    if isinstance(value, str):
        if value != PREDICTED:
            raise ValueError(f"compute_efficiency must be {PREDICTED!r} or a fraction in (0, 1], "
                             f"got {value!r}")
        return value
    return _validate.fraction("compute_efficiency", value)


class NotPredicted(ValueError):
    """A training scenario at the predicted efficiency on a chip whose matrix units the engines
    cannot model (AMD GPUs; TPU7x, whose MXU count is unpublished): pass
    ``compute_efficiency=`` (an assumed fraction of peak) or ``mfu=`` to price it."""


def _money(the_chip: chips.Chip, seconds: float, n: int, usd_per_hour: float | None,
           work: float) -> tuple[float | None, float | None]:
    if usd_per_hour is None:
        return None, None
    usd = price.usd(the_chip, seconds, n, usd_per_hour=usd_per_hour)
    return usd, usd / work * 1e6


@functools.lru_cache(maxsize=512)
def _layout_step(model: str, chip_name: str, n: int, batch_tokens: int, dtype: str,
                 efficiency: float | str) -> parallel.TrainStep | None:
    """The fastest fitting layout's step; else the leanest plain layout's (fits=False).

    Cached: a lesson compares the same jobs many times (each search takes 10-150 ms with the
    predicted efficiency, on the course's 2-core machine).
    """
    found = parallel.best_layouts(model, chip_name, n, batch_tokens, top=1, dtype=dtype,
                                  compute_efficiency=efficiency)
    if found:
        return found[0]
    the_model = models.get(model)
    seq = int(the_model.seq_len)  # type: ignore[attr-defined]
    replica = batch_tokens // n
    try:
        return parallel.train_step(the_model, chip_name, parallel.Layout(
            fsdp=n, microbatch_tokens=min(seq, replica) or None, recompute="full"),
            batch_tokens, dtype=dtype, compute_efficiency=efficiency)
    except ValueError:
        return None


def layout_step(scenario: str | Scenario, chip: str | chips.Chip, *, n_chips: int | None = None,
                precision: str | None = None, compute_efficiency: float | str | None = None
                ) -> parallel.TrainStep | None:
    """The :class:`accelkit.parallel.TrainStep` a training scenario is priced from.

    The fastest layout of ``n_chips`` (default the scenario's) that fits
    (:func:`accelkit.parallel.best_layouts`); where none fits, the fully sharded layout with
    full recomputation (``fits=False``, and the memory it would need); None when not even that
    divides the batch. Its kernels run at ``compute_efficiency`` (default the scenario's,
    :data:`PREDICTED`: the engines' prediction for the chip; or an assumed fraction of peak).

    Raises:
        ValueError: not a training scenario, or bad knobs; :class:`NotPredicted` at the
            predicted efficiency on a chip the engines cannot model.
    """
    s = get(scenario)
    if s.kind != "train":
        raise ValueError(f"scenario must be a training scenario, got {s.key!r} ({s.kind})")
    the_chip = chips.get(chip)
    n = s.n_chips if n_chips is None else _validate.positive_int("n_chips", n_chips,
                                                                 maximum=10**6)
    dtype = s.precision if precision is None else dtypes.check(precision, "precision")
    eff = _efficiency(s.compute_efficiency if compute_efficiency is None else compute_efficiency)
    if n is None:
        n = replica_chips(s.model, the_chip, headroom=8.0)
    the_chip.peak_flops(dtype)  # a precision the chip lacks: MissingFigureError
    if eff == PREDICTED:
        _check_predictable(the_chip, dtype)
    return _layout_step(s.model, the_chip.name, int(n), int(s.batch_tokens or 0), str(dtype),
                        eff if isinstance(eff, str) else float(eff))


@functools.lru_cache(maxsize=64)
def _predictable(chip_name: str, dtype: str) -> str:
    """Why the engines cannot predict ``chip_name``'s kernel efficiency ("" if they can)."""
    try:
        mfu.matmul_efficiency(chip_name, 128, 128, 128, dtype)
    except chips.MissingFigureError:
        raise
    except ValueError as error:
        return str(error)
    return ""


def _check_predictable(the_chip: chips.Chip, dtype: str) -> None:
    why = _predictable(the_chip.name, dtype)
    if why:
        raise NotPredicted(f"compute_efficiency={PREDICTED!r}: {why}; pass compute_efficiency= "
                           "(an assumed fraction of peak) or mfu= to price this chip")


def fitting_chips(scenario: str | Scenario, chip: str | chips.Chip, *,
                  largest: int = 4096) -> int | None:
    """The smallest power-of-two chip count on which a training scenario's job fits.

    Searches 1, 2, 4, ... up to ``largest`` with :func:`layout_step`; None if none fits.
    """
    s = get(scenario)
    limit = _validate.positive_int("largest", largest, maximum=65_536)
    n = 1
    while n <= limit:
        step = layout_step(s, chip, n_chips=n)
        if step is not None and step.fits:
            return n
        n *= 2
    return None


def _train(s: Scenario, the_chip: chips.Chip, usd_per_hour: float | None) -> Outcome:
    n = s.n_chips or replica_chips(s.model, the_chip, headroom=8.0)
    batch_tokens = int(s.batch_tokens or 0)
    step = layout_step(s, the_chip, n_chips=n)
    steps_per_run = s.work / batch_tokens
    notes: list[str] = []
    if s.mfu is None:
        if step is None:
            raise ValueError(f"n_chips={n:,} does not divide {s.key}'s batch of "
                             f"{batch_tokens:,} tokens into whole replicas")
        seconds = step.seconds * steps_per_run * s.runs
        utilization = step.mfu
        kernels, basis = _basis(s, the_chip, step)
        exposed = step.exposed_communication_seconds + step.bubble_seconds
        bound = "communication" if exposed > 0.5 * step.seconds else "compute"
    else:
        t = training.estimate(model=s.model, tokens=s.work, chip=the_chip, n_chips=n,
                              mfu=s.mfu, dtype=s.precision, batch_tokens=batch_tokens)
        seconds = t.seconds * s.runs
        utilization = s.mfu * t.compute_seconds / t.seconds
        kernels, basis = None, "assumed"
        bound = "communication" if t.communication_bound else "compute"
        # The outcome reports price and power in its own fields (None where unpublished).
        notes += [n_ for n_ in t.notes if n_.kind not in ("no_price", "no_power",
                                                           "does_not_fit")]
    usd, per_million = _money(the_chip, seconds, n, usd_per_hour, s.work * s.runs)
    hbm = float(the_chip.require("hbm_bytes"))
    parts: tuple[float | None, float | None, float | None, float | None]
    if step is None:
        fits, per_chip, parts = False, 0.0, (None, None, None, None)
        layout = "no layout divides the batch"
    else:
        fits, per_chip = step.fits, step.memory_bytes_per_chip
        parts = (step.weight_bytes_per_chip, step.gradient_bytes_per_chip,
                 step.optimizer_bytes_per_chip, step.activation_bytes_per_chip)
        layout = str(step.layout)
        if not fits:
            notes.insert(0, f"does not fit: even {layout} needs {per_chip / 1e9:,.1f} GB per "
                            f"chip, {the_chip.name} has {hbm / 1e9:,.1f} GB")
    return Outcome(
        scenario=s.key, chip=the_chip.name, n_chips=n, batch=batch_tokens,
        precision=s.precision, seconds=seconds, usd=usd, usd_per_hour=usd_per_hour,
        joules=_watts_seconds(the_chip, n, seconds), utilization=utilization,
        bound=bound, fits=fits, usd_per_million=per_million, memory_bytes=per_chip * n,
        hbm_bytes=hbm * n, note="; ".join(str(x) for x in notes), layout=layout,
        mfu_basis=basis, kernel_efficiency=kernels,
        step_seconds=None if step is None else step.seconds,
        weight_bytes_per_chip=parts[0], gradient_bytes_per_chip=parts[1],
        optimizer_bytes_per_chip=parts[2], activation_bytes_per_chip=parts[3])


def _basis(s: Scenario, the_chip: chips.Chip, step: parallel.TrainStep
           ) -> tuple[float, str]:
    """(fraction of peak the kernels reach, the MFU's basis in words) for a layout-model step."""
    if s.compute_efficiency != PREDICTED:
        eff = float(s.compute_efficiency)
        return eff, (f"layout model, kernels at an assumed {eff:.0%} of peak; bubbles and "
                     "exposed communication from the layout")
    pred = mfu.step_efficiency(s.model, the_chip, step.layout, step.batch_tokens,
                               dtype=s.precision)
    if the_chip.kind == "tpu":
        rows, cols = mfu.mxu_shape(the_chip)
        engine = f"{rows}x{cols} systolic MXUs"
    else:
        engine = f"{mfu.GPU_TILE[0]}x{mfu.GPU_TILE[1]} tensor-core tiles in waves"
    return pred.efficiency, (
        f"predicted from the engines ({engine}: matmuls at {pred.matmul_efficiency:.0%} of "
        f"peak, {pred.efficiency:.0%} with the non-matmul work; then the layout's bubbles and "
        "exposed communication)")


class ReplicaTooLarge(ValueError):
    """A serving replica larger than the chip's scale-up domain (an NVLink node, an ICI slice):
    tensor parallelism stops there (:mod:`accelkit.inference`); serve more replicas instead."""


def _serve(s: Scenario, the_chip: chips.Chip, usd_per_hour: float | None) -> Outcome:
    weights = s.precision
    kv = dtypes.activation_dtype(weights)  # the serving model's rule for the cache's format
    n = s.n_chips or replica_chips(s.model, the_chip, dtype=weights, headroom=1.5)
    domain = (the_chip.scaleup_domain_chips if the_chip.kind == "gpu"
              else the_chip.max_slice_chips) or 1
    if n > 1 and n > domain:
        raise ReplicaTooLarge(
            f"n_chips={n} exceeds {the_chip.name}'s {domain}-chip scale-up domain: tensor "
            "parallelism stops there; serve more replicas of at most that size instead")
    context = s.prompt_tokens + s.output_tokens // 2
    batch = s.batch
    notes = []
    if batch == 0:
        batch = inference.max_batch(s.model, the_chip, n, s.prompt_tokens + s.output_tokens,
                                    weight_dtype=weights, kv_dtype=kv)
        if batch >= 1 and s.latency_ms is not None:
            try:
                batch = inference.best_batch(s.model, the_chip, n, context,
                                             s.latency_ms / 1e3, weight_dtype=weights,
                                             kv_dtype=kv).batch
            except ValueError:
                batch = 1  # even batch 1 misses the target: price it and say so
        if batch < 1:
            batch = 1  # does not fit at all: price batch 1 and say so
    pre, dec, end = _serve_steps(s.model, the_chip, n, batch, s.prompt_tokens, context,
                                 s.prompt_tokens + s.output_tokens - 1, weights, kv)
    batch_seconds = pre.seconds + s.output_tokens * dec.seconds
    seconds = s.work / (batch * s.output_tokens) * batch_seconds
    flops = pre.flops + s.output_tokens * dec.flops
    peak = n * the_chip.peak_flops("bf16")
    usd, per_million = _money(the_chip, seconds, n, usd_per_hour, s.work)
    meets = None if s.latency_ms is None else dec.seconds * 1e3 <= s.latency_ms
    compute_s = pre.compute_seconds + s.output_tokens * dec.compute_seconds
    memory_s = pre.memory_seconds + s.output_tokens * dec.memory_seconds
    notes.append(f"prefill is {pre.seconds / batch_seconds:.0%} of the time")
    comm = float(dec.communication_seconds)
    if n > 1:
        notes.append(f"tensor-parallel all-reduces over {n} chips are "
                     f"{comm / dec.seconds:.0%} of a decode step")
    if not end.fits:
        notes.insert(0, end.message)
    replicas = fleet = None
    if s.concurrent_users is not None:
        replicas = -(-s.concurrent_users // batch)
        fleet = None if usd_per_hour is None else replicas * n * usd_per_hour
    plan = None
    if s.concurrent_users is not None and s.latency_ms is not None:
        try:
            plan = _capacity(s.model, the_chip, s.concurrent_users, s.latency_ms / 1e3,
                             s.prompt_tokens + s.output_tokens - 1, s.prompt_tokens, weights,
                             kv, usd_per_hour)
            notes.append(f"cheapest plan for {s.concurrent_users:,} users: {plan.replicas:,} x "
                         f"{plan.chips_per_replica} chips, batch {plan.batch_per_replica} "
                         f"({plan.bound}-bound)")
        except (ValueError, chips.MissingFigureError) as error:
            notes.append(f"no capacity plan: {error}")
    return Outcome(
        scenario=s.key, chip=the_chip.name, n_chips=n, batch=batch, precision=weights,
        seconds=seconds, usd=usd, usd_per_hour=usd_per_hour,
        joules=_watts_seconds(the_chip, n, seconds), utilization=flops / (batch_seconds * peak),
        bound="compute" if compute_s >= memory_s else "memory", fits=end.fits,
        usd_per_million=per_million,
        latency_seconds=dec.seconds, first_token_seconds=pre.seconds, meets_latency=meets,
        memory_bytes=end.memory_bytes, hbm_bytes=end.hbm_bytes, note="; ".join(notes),
        replicas=replicas, fleet_usd_per_hour=fleet,
        communication_seconds=comm, **_plan_fields(plan))


@functools.lru_cache(maxsize=256)
def _serve_steps(model: str, the_chip: chips.Chip, n: int, batch: int, prompt: int,
                 context: int, last: int, weights: dtypes.DType, kv: dtypes.DType
                 ) -> tuple[inference.InferenceResult, inference.InferenceResult,
                            inference.InferenceResult]:
    """A serving row's prefill, its mid-answer decode step (at ``context``) and its last one
    (at ``last``), cached: they depend on neither the latency target nor the price, so a lab
    moving those reuses them (the results are frozen)."""
    pre = inference.prefill(model, the_chip, n, batch, prompt, weight_dtype=weights,
                            kv_dtype=kv, compute_dtype="bf16")
    dec = inference.decode_step(model, the_chip, n, batch, context, weight_dtype=weights,
                                kv_dtype=kv)
    end = inference.decode_step(model, the_chip, n, batch, last, weight_dtype=weights,
                                kv_dtype=kv)
    return pre, dec, end


@functools.lru_cache(maxsize=256)
def _capacity(model: str, the_chip: chips.Chip, users: int, seconds_per_token: float,
              context: int, prompt: int, weights: dtypes.DType, kv: dtypes.DType,
              usd_per_hour: float | None) -> capacity.CapacityPlan:
    """:func:`accelkit.capacity.plan` for a serving scenario, cached: the plan does not
    depend on the knobs' batch or chips per replica, so a lab moving those reuses it (it is
    about nine tenths of a chatbot row's time). Errors are not cached."""
    return capacity.plan(model, the_chip, concurrent_users=users,
                              max_seconds_per_token=seconds_per_token, context_tokens=context,
                              prompt_tokens=prompt, weight_dtype=weights, kv_dtype=kv,
                              usd_per_hour=usd_per_hour)


def _plan_fields(plan: capacity.CapacityPlan | None) -> dict[str, Any]:
    """An :class:`accelkit.capacity.CapacityPlan` as the Outcome's ``plan_*`` fields."""
    if plan is None:
        return {}
    return {"plan_replicas": plan.replicas, "plan_chips_per_replica": plan.chips_per_replica,
            "plan_batch_per_replica": plan.batch_per_replica, "plan_n_chips": plan.n_chips,
            "plan_seconds_per_token": plan.seconds_per_token,
            "plan_usd_per_hour": plan.usd_per_hour,
            "plan_usd_per_million": plan.usd_per_million_tokens, "plan_bound": plan.bound}


def _recommender(s: Scenario, the_chip: chips.Chip, usd_per_hour: float | None,
                 optimizer_bytes_per_param: float = 4.0) -> Outcome:
    # Row-wise optimizer state (e.g. Adagrad) is about one more value per parameter: 4 bytes.
    m = models.get(s.model)
    headroom = 1.0 + optimizer_bytes_per_param / dtypes.nbytes(s.precision)
    n = s.n_chips or replica_chips(m, the_chip, dtype=s.precision, headroom=headroom + 0.25)
    batch = s.batch or 65_536
    ops = m.operations(batch=batch, phase="train", dtype=s.precision)
    # Mixed precision: the MLPs run in bf16 on the matrix units whatever the tables' format
    # (TPUs have no fp32 matrix peak), so chips are compared on the same arithmetic.
    compute: dtypes.DType = "bf16"
    peak = n * the_chip.peak_flops(compute)
    bandwidth = n * float(the_chip.require("hbm_bytes_per_second"))
    per_op = roofline.times_from_counts([op.flops for op in ops], [op.bytes for op in ops],
                                        peak, bandwidth)
    compute_s = float(np.sum(per_op.compute_seconds))
    memory_s = float(np.sum(per_op.memory_seconds))
    step = float(np.sum(per_op.seconds))
    gather = float(sum(t for op, t in zip(ops, np.asarray(per_op.memory_seconds))
                       if op.kind == "gather"))
    steps = s.work / batch
    seconds = steps * step
    usd, per_million = _money(the_chip, seconds, n, usd_per_hour, s.work)
    need = m.params * (dtypes.nbytes(s.precision) + optimizer_bytes_per_param)
    hbm = n * float(the_chip.require("hbm_bytes"))
    fits = need <= hbm
    if the_chip.has_sparsecores:
        count = the_chip.sparsecores_per_chip
        unit = "SparseCores" + ("" if count is None else f" ({count} per chip)")
    elif the_chip.kind == "tpu":
        unit = "TensorCore vector unit (no SparseCores)"
    else:
        unit = "SMs (no SparseCores)"
    note = (f"gathers take {gather / step:.0%} of a step's time, on the {unit}, charged at "
            f"full HBM bandwidth (an upper bound); math in {compute}")
    if not fits:
        note = (f"does not fit: tables + optimizer state need {need / 1e9:,.0f} GB, "
                f"{n} x {the_chip.name} hold {hbm / 1e9:,.0f} GB; " + note)
    return Outcome(
        scenario=s.key, chip=the_chip.name, n_chips=n, batch=batch, precision=s.precision,
        seconds=seconds, usd=usd, usd_per_hour=usd_per_hour,
        joules=_watts_seconds(the_chip, n, seconds),
        utilization=sum(op.flops for op in ops) / (step * peak),
        bound="compute" if compute_s >= memory_s else "memory", fits=fits,
        usd_per_million=per_million, memory_bytes=need, hbm_bytes=hbm, note=note,
        sparsecores_per_chip=the_chip.sparsecores_per_chip, gather_unit=unit,
        gather_share=gather / step)


@dataclass(frozen=True)
class Unavailable:
    """A chip that cannot run the scenario with these knobs, and why."""

    scenario: str
    chip: str
    reason: str


class Knobs(TypedDict, total=False):
    """The keyword arguments :func:`compare` passes on to :func:`evaluate` (names: :data:`KNOBS`)."""

    n_chips: int | None
    batch: int | None
    precision: str | None
    mfu: float | None
    compute_efficiency: float | str | None
    latency_ms: float | None
    price_source: str


def compare(scenario: str | Scenario, chip_names: tuple[str, ...] | list[str] | None = None,
            **knobs: Unpack[Knobs]) -> tuple[Outcome | Unavailable, ...]:
    """:func:`evaluate` on each chip (default :data:`DEFAULT_CHIPS`), same knobs.

    A chip that cannot take the knobs (a precision it lacks: a
    :class:`accelkit.chips.MissingFigureError`; a serving replica beyond its scale-up domain:
    :class:`ReplicaTooLarge`; a training job at the predicted efficiency on a chip the engines
    cannot model: :class:`NotPredicted`) gives an :class:`Unavailable` saying why
    instead of stopping the comparison; bad knobs still raise ValueError.
    """
    s = get(scenario)
    names = DEFAULT_CHIPS if chip_names is None else tuple(chip_names)
    if not names:
        raise ValueError("chip_names must name at least one chip")
    rows: list[Outcome | Unavailable] = []
    for name in names:
        the_chip = chips.get(name)
        try:
            rows.append(evaluate(s, the_chip, **knobs))
        except (chips.MissingFigureError, ReplicaTooLarge, NotPredicted) as error:
            rows.append(Unavailable(s.key, the_chip.name, str(error)))
    return tuple(rows)


def table_figures(outcome: Outcome) -> dict[str, float]:
    """The figures the decision lab's table shows for ``outcome``, in the units it shows them.

    Keys name the column (``"USD"``, ``"days"``, ``"ms / token"``, ``"MFU %"``...); values are
    numbers as a reader would quote them (percentages as percent, latency in ms, GB per chip).
    A recorded reason must cite one of these (:func:`cited_figure`).
    """
    if not isinstance(outcome, Outcome):
        raise TypeError(f"outcome must be an Outcome, got {type(outcome).__name__}")
    figures: dict[str, float | None] = {
        "chips": outcome.n_chips, "days": outcome.days, "USD": outcome.usd,
        "USD / M": outcome.usd_per_million, "USD / h per chip": outcome.usd_per_hour,
        "kWh (TDP)": outcome.kilowatt_hours, "utilization %": 100 * outcome.utilization,
        "kernels %": (None if outcome.kernel_efficiency is None
                      else 100 * outcome.kernel_efficiency),
        "GB / chip": outcome.memory_bytes_per_chip / 1e9,
        "HBM GB / chip": outcome.hbm_bytes_per_chip / 1e9,
    }
    if outcome.batch:
        figures["batch"] = outcome.batch
    if outcome.latency_seconds is not None:
        figures["ms / token"] = outcome.latency_seconds * 1e3
    if outcome.first_token_seconds is not None:
        figures["first token (s)"] = outcome.first_token_seconds
    if outcome.replicas is not None:
        figures["replicas"] = outcome.replicas
    if outcome.fleet_usd_per_hour is not None:
        figures["fleet USD / h"] = outcome.fleet_usd_per_hour
    if outcome.plan_replicas is not None:
        figures["plan replicas"] = outcome.plan_replicas
        figures["plan chips"] = outcome.plan_n_chips
        figures["plan batch"] = outcome.plan_batch_per_replica
        figures["plan ms / token"] = (None if outcome.plan_seconds_per_token is None
                                      else outcome.plan_seconds_per_token * 1e3)
        figures["plan USD / h"] = outcome.plan_usd_per_hour
        figures["plan USD / M"] = outcome.plan_usd_per_million
    if outcome.step_seconds is not None:
        figures["step (s)"] = outcome.step_seconds
    if outcome.gather_share is not None:
        figures["gathers %"] = 100 * outcome.gather_share
    if outcome.sparsecores_per_chip:
        figures["SparseCores"] = outcome.sparsecores_per_chip
    for name, value in (("weights GB", outcome.weight_bytes_per_chip),
                        ("gradients GB", outcome.gradient_bytes_per_chip),
                        ("optimizer GB", outcome.optimizer_bytes_per_chip),
                        ("activations GB", outcome.activation_bytes_per_chip)):
        if value is not None:
            figures[name] = value / 1e9
    return {k: float(v) for k, v in figures.items() if v is not None and math.isfinite(v)}


_NUMBER = re.compile(r"(?<![\w.])\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")


def cited_figure(reason: str, outcomes: tuple[Outcome, ...] | list[Outcome]
                 ) -> tuple[str, str, float] | None:
    """The first number in ``reason`` that matches a figure of the table (the closest), or None.

    A number matches a figure when it agrees to the precision it is written with, or within
    1% ("42%" matches a utilization of 42.3%; "$1.2M" is not read: write "1,200,000"). A
    figure under 10 that is not whole needs its decimals ("2.70", not "3"). Returns (the
    number as written, the column, the figure).
    """
    if not isinstance(reason, str):
        raise TypeError(f"reason must be a str, got {type(reason).__name__}")
    for match in _NUMBER.finditer(reason):
        whole, frac = match.group(1), match.group(2) or ""
        x = float(whole.replace(",", "") + frac)
        places = len(frac) - 1 if frac else 0
        slack = 0.5 * 10.0 ** (-places)
        best: tuple[float, str, float] | None = None
        for outcome in outcomes:
            for column, y in table_figures(outcome).items():
                if not frac and abs(y) < 10 and y != round(y):
                    continue  # a bare small integer ("3 times") is not a figure like 2.7
                if abs(x - y) <= max(slack, 0.01 * abs(y)) and (x != 0 or y == 0):
                    error = abs(x - y) / max(abs(y), 1e-300)
                    if best is None or error < best[0]:  # the closest figure wins
                        best = (error, column, y)
        if best is not None:
            return match.group(0), best[1], best[2]
    return None


@dataclass(frozen=True)
class Decision:
    """A learner's recorded choice for one scenario, and the table figure its reason cites."""

    scenario: str
    chip: str
    reason: str
    outcome: Outcome | None = None
    cited: str = ""          # the number as the reason writes it
    cited_column: str = ""   # the table column it matches


#: What :meth:`DecisionLab.save` writes and :meth:`DecisionLab.load` accepts.
FILE_FORMAT = "accelkit.decision_lab"
FILE_VERSION = 1
_MAX_FILE_BYTES = 1_000_000
_OUTCOME_FIELDS = {f.name: f for f in fields(Outcome)}


def _outcome_from(data: object, where: str) -> Outcome:
    if not isinstance(data, dict):
        raise ValueError(f"{where}.outcome must be an object of Outcome fields")
    unknown = sorted(set(data) - set(_OUTCOME_FIELDS))
    if unknown:
        raise ValueError(f"{where}.outcome has unknown fields {unknown}")
    missing = sorted(k for k, f in _OUTCOME_FIELDS.items()
                     if k not in data and f.default is MISSING)
    if missing:
        raise ValueError(f"{where}.outcome lacks fields {missing}")
    clean: dict[str, Any] = {}
    for key, value in data.items():
        kind = str(_OUTCOME_FIELDS[key].type)
        if value is None:
            if "None" not in kind:
                raise ValueError(f"{where}.outcome.{key} must not be null")
        elif "bool" in kind:
            if not isinstance(value, bool):
                raise ValueError(f"{where}.outcome.{key} must be true or false")
        elif kind.startswith("int"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{where}.outcome.{key} must be a whole number")
        elif kind.startswith("float"):
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise ValueError(f"{where}.outcome.{key} must be a finite number")
            value = float(value)
        elif kind.startswith("str") and not isinstance(value, str):
            raise ValueError(f"{where}.outcome.{key} must be a string")
        clean[key] = value
    if clean.get("n_chips", 0) < 1:
        raise ValueError(f"{where}.outcome.n_chips must be at least 1")
    return Outcome(**clean)


class DecisionLab:
    """Keeps a learner's choices, checks each reason cites the table, saves them as JSON.

        >>> lab = DecisionLab()
        >>> o = evaluate("chatbot", "H100")
        >>> _ = lab.record("chatbot", "H100", f"{o.latency_seconds * 1e3:.1f} ms per token", o)
        >>> len(lab.decisions)
        1
    """

    def __init__(self) -> None:
        self._decisions: dict[str, Decision] = {}

    def record(self, scenario: str | Scenario, chip: str | chips.Chip, reason: str,
               outcome: Outcome | None = None, *,
               table: tuple[Outcome | Unavailable, ...] | list[Outcome | Unavailable] | None = None
               ) -> Decision:
        """Record (or replace) the choice for a scenario.

        Args:
            outcome: the chosen chip's row (default :func:`evaluate` with the scenario's
                defaults).
            table: the other rows the reason may cite (the lab's whole table).
        Raises:
            ValueError: unknown scenario or chip, an empty reason, a reason that cites no
                number of the table (:func:`cited_figure`), an outcome of another scenario or
                chip.
            TypeError: reason is not a string.
        """
        s = get(scenario)
        the_chip = chips.get(chip)
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a str, got {type(reason).__name__}")
        if not reason.strip():
            raise ValueError("reason must say why (a non-empty sentence citing a number from "
                             "the table)")
        if outcome is None:
            outcome = evaluate(s, the_chip)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"outcome must be an Outcome, got {type(outcome).__name__}")
        if outcome.scenario != s.key or outcome.chip != the_chip.name:
            raise ValueError(f"outcome is for {outcome.scenario} on {outcome.chip}, not "
                             f"{s.key} on {the_chip.name}")
        rows = [outcome] + [r for r in (table or ()) if isinstance(r, Outcome)]
        cited = cited_figure(reason, rows)
        if cited is None:
            raise ValueError("reason must cite a number from the table (for example "
                             f"{outcome.days:,.2f} days or the USD column, written as shown)")
        decision = Decision(s.key, the_chip.name, reason.strip(), outcome, cited[0], cited[1])
        self._decisions[s.key] = decision
        return decision

    @property
    def decisions(self) -> tuple[Decision, ...]:
        """Recorded choices in scenario order."""
        return tuple(self._decisions[k] for k in SCENARIOS if k in self._decisions)

    def summary(self) -> str:
        """One line per scenario: the chip chosen and why (or that none is recorded yet)."""
        lines = []
        for key, s in SCENARIOS.items():
            d = self._decisions.get(key)
            if d is None:
                lines.append(f"{s.title}: (no choice yet)")
            else:
                extra = ""
                if d.outcome is not None and d.outcome.usd is not None:
                    extra = f" [{d.outcome.days:,.1f} days, ${d.outcome.usd:,.0f}]"
                lines.append(f"{s.title}: {d.chip}{extra} because {d.reason}")
        return "\n".join(lines)

    # -- files: JSON only ------------------------------------------------------------------

    def to_json(self) -> str:
        """The recorded choices as JSON text (what :meth:`save` writes)."""
        return json.dumps({"format": FILE_FORMAT, "version": FILE_VERSION, "decisions": [
            {"scenario": d.scenario, "chip": d.chip, "reason": d.reason,
             "outcome": None if d.outcome is None else asdict(d.outcome)}
            for d in self.decisions]}, indent=1, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> DecisionLab:
        """A lab holding the choices in ``text`` (written by :meth:`to_json`).

        Each reason is checked again against its saved outcome.

        Raises:
            TypeError: text is not a str.
            ValueError: not JSON, another format or version, unknown scenarios or chips,
                fields missing or of the wrong type, or a reason citing no number.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if len(text) > _MAX_FILE_BYTES:
            raise ValueError(f"a decision file must be under {_MAX_FILE_BYTES:,} characters")
        try:
            data = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(
                ValueError(f"{c} is not allowed")))
        except ValueError as error:
            raise ValueError(f"not a decision file: {error}") from None
        if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
            raise ValueError(f"not a decision file: format must be {FILE_FORMAT!r}")
        if data.get("version") != FILE_VERSION:
            raise ValueError(f"decision file version must be {FILE_VERSION}, got "
                             f"{data.get('version')!r}")
        items = data.get("decisions")
        if not isinstance(items, list):
            raise ValueError("decisions must be a list")
        lab = cls()
        for i, item in enumerate(items):
            where = f"decisions[{i}]"
            if not isinstance(item, dict) or set(item) != {"scenario", "chip", "reason",
                                                           "outcome"}:
                raise ValueError(f"{where} must have exactly scenario, chip, reason, outcome")
            for key in ("scenario", "chip", "reason"):
                if not isinstance(item[key], str):
                    raise ValueError(f"{where}.{key} must be a string")
            outcome = _outcome_from(item["outcome"], where)
            lab.record(item["scenario"], item["chip"], item["reason"], outcome)
        return lab

    def save(self, path: str | os.PathLike[str]) -> str:
        """Write the choices to ``path`` as JSON (no pickles); returns the path written."""
        target = os.fspath(path)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(self.to_json())
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> DecisionLab:
        """Read choices written by :meth:`save`; refuses malformed files (ValueError)."""
        target = os.fspath(path)
        size = os.path.getsize(target)
        if size > _MAX_FILE_BYTES:
            raise ValueError(f"{target} is {size:,} bytes; a decision file is under "
                             f"{_MAX_FILE_BYTES:,}")
        with open(target, encoding="utf-8") as handle:
            return cls.from_json(handle.read())

    def __repr__(self) -> str:
        return f"DecisionLab({len(self._decisions)} of {len(SCENARIOS)} scenarios decided)"


# -- which knobs a scenario uses ------------------------------------------------------------------

#: The knobs of :func:`evaluate` each kind of job uses; the others are accepted and ignored
#: (``mfu`` and ``compute_efficiency`` only set a training run's speed, ``batch`` only a serving or recommender step's,
#: ``latency_ms`` only a serving job's target). A serving scenario that sets no latency target
#: (bulk offline inference) would gain one if ``latency_ms`` were passed, so :func:`knobs_for`
#: leaves it out there.
KNOBS_BY_KIND: dict[str, tuple[str, ...]] = {
    "train": ("n_chips", "precision", "mfu", "compute_efficiency", "price_source"),
    "serve": ("n_chips", "batch", "precision", "latency_ms", "price_source"),
    "recommender": ("n_chips", "batch", "precision", "price_source"),
}
#: Every knob :func:`evaluate` and :func:`compare` accept.
KNOBS = ("n_chips", "batch", "precision", "mfu", "compute_efficiency", "latency_ms",
         "price_source")


def knobs_for(scenario: str | Scenario) -> tuple[str, ...]:
    """The knobs of :func:`evaluate` that change this scenario's outcome.

    Args:
        scenario: a key of :data:`SCENARIOS` or a :class:`Scenario`.
    Returns:
        Names from :data:`KNOBS`, in that order: ``KNOBS_BY_KIND[kind]``, less ``latency_ms``
        for a serving scenario that sets no latency target.
    Raises:
        TypeError, ValueError: an unknown scenario or kind.
    """
    s = get(scenario)
    kind = _validate.choice("scenario.kind", s.kind, KINDS)
    used = KNOBS_BY_KIND[kind]
    if kind == "serve" and s.latency_ms is None:
        used = tuple(k for k in used if k != "latency_ms")
    return used


def select_knobs(scenario: str | Scenario, values: dict[str, object]) -> dict[str, object]:
    """Keep only the knobs ``scenario`` uses, ready for ``evaluate(scenario, chip, **knobs)``.

    Args:
        scenario: a key of :data:`SCENARIOS` or a :class:`Scenario`.
        values: knob name -> value (names from :data:`KNOBS`; absent ones keep their defaults).
    Returns:
        A new dict of the used knobs present in ``values``.
    Raises:
        TypeError: ``values`` is not a dict.
        ValueError: an unknown scenario or knob name.
    """
    if not isinstance(values, dict):
        raise TypeError(f"values must be a dict of knob -> value, got {type(values).__name__}")
    for name in values:
        _validate.choice("knob", name, KNOBS)
    used = knobs_for(scenario)
    return {name: values[name] for name in used if name in values}


__all__ = ["COMPUTE_EFFICIENCY", "DEFAULT_CHIPS", "Decision", "DecisionLab", "FILE_FORMAT",
           "FILE_VERSION", "KNOBS", "KNOBS_BY_KIND", "Knobs", "NotPredicted", "Outcome",
           "PREDICTED", "ReplicaTooLarge", "SCENARIOS", "Scenario",
           "Unavailable", "cited_figure", "compare", "evaluate", "fitting_chips", "get",
           "knobs_for", "layout_step", "replica_chips", "select_knobs", "table_figures"]
