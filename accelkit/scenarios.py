"""Decision scenarios: five real deployments, the knobs a learner sets, and what each chip costs.

Each :class:`Scenario` is a job with a size (tokens to train on, tokens to generate, samples
to learn from) and default knobs. :func:`evaluate` prices one scenario on one chip by calling
the cost models (:mod:`accelkit.parallel` and :mod:`accelkit.training`,
:mod:`accelkit.inference`, :mod:`accelkit.recommender`, :mod:`accelkit.price`) and returns the
result type of its kind of job (:mod:`accelkit.outcomes`): a :class:`TrainingOutcome`, a
:class:`ServingOutcome` or a :class:`RecommenderOutcome`, each an :class:`Outcome` with the
fields every job shares, so a lab can compare chips side by side; :func:`compare` does it for
several chips. A learner's recorded choices and their file are :mod:`accelkit.decisions`.

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
  stay the best layout's. ``TrainingOutcome.mfu_basis`` says in words which basis a number has
  ("predicted from the engines (...)", "layout model, kernels at an assumed ...", "assumed")
  and ``kernel_efficiency`` the fraction of peak the kernels reach. A chip whose
  matrix units the engines cannot model (AMD GPUs, TPU7x: no published MXU count) is
  refused with :class:`NotPredicted` (:func:`compare` lists it as :class:`Unavailable`);
  price it with ``compute_efficiency=`` or ``mfu=``. Where no layout fits, the outcome is
  the fully sharded layout with full recomputation and one-sequence micro-batches
  (``fits=False``, with the memory it would need).
* **Serving jobs** are simulated request by request (:mod:`accelkit.serving`): every
  iteration of continuous batching priced by the library's prefill and decode rule. A service
  (``users`` and latency limits) is sized by the SLO capacity plan: ``users`` people each
  sending a request every ``interval_seconds`` on average (an assumption the scenario names)
  make ``users / interval_seconds`` Poisson arrivals a second, and ``plan`` is the cheapest
  fleet of replicas whose 99th-percentile time to first token and time per output token stay
  within ``ttft_ms`` and ``latency_ms`` (:mod:`accelkit.serving.lab`: one replica's load
  curve, the fleet it sizes). Its $/h and $ per million output tokens are the fleet's. A bulk
  job (no users, no limits) is one replica with every request queued at once, at the group
  size with the lowest cost per token. ``n_chips`` fixes the chips of one replica (one
  tensor-parallel group, at most the chip's scale-up domain: :class:`ReplicaTooLarge`);
  ``None`` tries the two smallest groups that hold the weights and one request.
* **Recommender** training is :func:`accelkit.recommender.train_step` (every operation on the
  roofline, lookups at memory bandwidth, tables in pooled HBM; where the lookups run is named
  in ``gather_unit`` and the note, not priced: see that module).
* **Utilization** is achieved FLOP/s over the chips' peak in the chosen precision (MFU).
* **Energy** is published power (TDP) × chips × seconds: the chips alone (no hosts, network
  or cooling); None for chips with no published power (TPU v5e, v5p, v6e, 7x). **Dollars**
  use the catalog list price, or the lowest sourced price with ``price="lowest"`` (see
  :mod:`accelkit.price`); None with no price.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any, TypedDict, Unpack

from accelkit import (_validate, chips, dtypes, energy, kernels, mfu, models, parallel, price,
                      recommender, tensor_parallel, training)
from accelkit.serving import lab as serving_lab
from accelkit.outcomes import (OUTCOME_TYPES, FleetPlan, Outcome, RecommenderOutcome,
                               ServingOutcome, TrainingOutcome)

#: Chips the lab compares by default: current TPUs and GPUs with a list price.
DEFAULT_CHIPS = ("TPU v5e", "TPU v6e", "TPU v5p", "NVIDIA A100 (SXM 80GB)", "NVIDIA H100 (SXM)",
                 "NVIDIA H200 (SXM)", "NVIDIA B200 (HGX)")
KINDS = ("train", "serve", "recommender")
PRICES = ("list", "lowest")
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
    latency_ms: float | None = None  # serve: the TPOT limit at the 99th percentile
    prompt_tokens: int = 0
    output_tokens: int = 0
    users: int | None = None         # serve: people using the service (sizes the fleet)
    interval_seconds: float | None = None  # serve: mean seconds between one user's requests
    ttft_ms: float | None = None     # serve: the TTFT limit at the 99th percentile
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
        key="chatbot", title="Interactive chatbot under latency limits", kind="serve",
        description="Llama-3-70B for 1,000 users, each sending a message every 30 s on "
                    "average (reading the answer, typing the next: an assumption), so about 33 "
                    "requests a second: 1,000-token prompts, 250-token answers, the first token "
                    "within 2 s and every later one within 50 ms (20 tokens/s) for 99% of "
                    "requests. The fleet is simulated request by request.",
        model="llama-3-70b", work=1e9, work_unit="generated tokens", batch=0,
        latency_ms=50.0, ttft_ms=2000.0, prompt_tokens=1000, output_tokens=250, users=1000,
        interval_seconds=30.0,
        question="How many replicas meet the limits, what do they rent for per hour, and what "
                 "does a million tokens cost?"),
    Scenario(
        key="offline", title="Bulk offline batch inference", kind="serve",
        description="Summarise a corpus with Llama-3-70B: 10 billion generated tokens, "
                    "2,000-token inputs, 500-token outputs, no latency limits: every request "
                    "queued at once, as many in flight as memory allows, and buy the cheapest "
                    "throughput.",
        model="llama-3-70b", work=10e9, work_unit="generated tokens", batch=0,
        prompt_tokens=2000, output_tokens=500,
        question="Which chip gives the lowest cost per million tokens at full load?"),
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


def _money(the_chip: chips.Chip, seconds: float, n: int, usd_per_hour: float | None,
           work: float) -> tuple[float | None, float | None]:
    if usd_per_hour is None:
        return None, None
    usd = price.usd(the_chip, seconds, n, usd_per_hour=usd_per_hour)
    return usd, usd / work * 1e6


def evaluate(scenario: str | Scenario, chip: str | chips.Chip, *, n_chips: int | None = None,
             batch: int | None = None, precision: str | None = None, mfu: float | None = None,
             compute_efficiency: float | str | None = None, latency_ms: float | None = None,
             users: int | None = None, prompt_tokens: int | None = None,
             output_tokens: int | None = None, price_source: str = "list") -> Outcome:
    """Price one scenario on ``n_chips`` of one chip; knobs left as None take its defaults.

    Args:
        scenario: a key of :data:`SCENARIOS` or a :class:`Scenario`.
        chip: a chip name or Chip.
        n_chips: chips per job (None: the scenario's count, or :func:`replica_chips`); serve:
            chips per replica (None: the two smallest groups that fit, module docstring).
        batch: recommender: samples/step (serving batches itself: continuous batching).
        precision: train: the arithmetic's dtype; serve: the weights' (the KV cache follows
            :func:`accelkit.dtypes.activation_dtype`, as in :mod:`accelkit.inference`: bf16
            for 8-bit weights; math in bf16); recommender: embedding tables'.
        mfu: train only, in (0, 1]: an assumed MFU that overrides the layout model's.
        compute_efficiency: train only: :data:`PREDICTED` (the default of every training
            scenario: each chip's kernel efficiency from the engines, :mod:`accelkit.mfu`), or
            an assumed fraction of peak in (0, 1] for the layout model's matmuls (for example
            :data:`COMPUTE_EFFICIENCY`).
        latency_ms: serve only, the limit on the 99th percentile of time per output token.
        users: serve only, people using the service (arrivals: users / the scenario's
            ``interval_seconds``).
        prompt_tokens, output_tokens: serve only, every request's lengths.
        price_source: "list" (catalog) or "lowest" (cheapest sourced price).
        (:func:`knobs_for` names the knobs a scenario uses; the others are ignored.)
    Returns:
        The :class:`Outcome` of the scenario's kind: :class:`TrainingOutcome`,
        :class:`ServingOutcome` or :class:`RecommenderOutcome`.
    Raises:
        ValueError: unknown scenario or chip, bad knobs, a precision the chip lacks;
            :class:`NotPredicted` for a training scenario at the predicted efficiency on a chip
            the engines cannot model; :class:`ReplicaTooLarge` for a serving replica beyond
            the chip's scale-up domain.
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
    if users is not None:
        knobs["users"] = _validate.positive_int("users", users, maximum=10**8)
    for name, value in (("prompt_tokens", prompt_tokens), ("output_tokens", output_tokens)):
        if value is not None:
            knobs[name] = _validate.positive_int(name, value, maximum=100_000)
    s = replace(s, **knobs)
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


# -- training -------------------------------------------------------------------------------------

class NotPredicted(ValueError):
    """A training scenario at the predicted efficiency on a chip whose matrix units the engines
    cannot model (AMD GPUs; TPU7x, whose MXU count is unpublished): pass
    ``compute_efficiency=`` (an assumed fraction of peak) or ``mfu=`` to price it."""


@functools.lru_cache(maxsize=512)
def _layout_step(model: str, chip_name: str, n: int, batch_tokens: int, dtype: str,
                 efficiency: float | str) -> parallel.TrainStep | None:
    """The fastest fitting layout's step; else the leanest plain layout's (fits=False); None
    when not even that divides the batch.

    The one cache of this module, kept because a learner would feel its absence: the layout
    search takes about 110 ms of CPU for the pre-training table's seven chips (15-25 ms a chip
    on the course's 2-core machine), and the decision lab re-prices the table on every move of
    a control that does not change the search (the chart's metric, the price, the MFU), where
    the widget budget is 50 ms (benchmarks/bench_widgets.py). Steps are frozen; errors are not
    cached.
    """
    found = parallel.best_layouts(model, chip_name, n, batch_tokens, top=1, dtype=dtype,
                                  compute_efficiency=efficiency)
    if found:
        return found[0]
    the_model = models.get(model)
    seq = int(the_model.seq_len)  # type: ignore[attr-defined]
    replica, left = divmod(batch_tokens, n)
    microbatch = min(seq, replica)
    if left or not microbatch or replica % microbatch:
        return None  # the batch does not split into whole replicas and micro-batches
    return parallel.train_step(the_model, chip_name, parallel.Layout(
        fsdp=n, microbatch_tokens=microbatch, recompute="full"),
        batch_tokens, dtype=dtype, compute_efficiency=efficiency)


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


def _check_predictable(the_chip: chips.Chip, dtype: str) -> None:
    """:class:`NotPredicted` where the engines cannot model the chip's matrix units (the
    library says so with :class:`accelkit.mfu.NotModelled`)."""
    try:
        mfu.matmul_efficiency(the_chip, 128, 128, 128, dtype)
    except mfu.NotModelled as why:
        raise NotPredicted(f"compute_efficiency={PREDICTED!r}: {why}; pass compute_efficiency= "
                           "(an assumed fraction of peak) or mfu= to price this chip") from None


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


def _train(s: Scenario, the_chip: chips.Chip, usd_per_hour: float | None) -> TrainingOutcome:
    n = s.n_chips or replica_chips(s.model, the_chip, headroom=8.0)
    batch_tokens = int(s.batch_tokens or 0)
    step = layout_step(s, the_chip, n_chips=n)
    steps_per_run = s.work / batch_tokens
    notes: list[str] = []
    kernels: float | None
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
        notes += [str(n_) for n_ in t.notes if n_.kind not in ("no_price", "no_power",
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
    return TrainingOutcome(
        scenario=s.key, chip=the_chip.name, n_chips=n, batch=batch_tokens,
        precision=s.precision, seconds=seconds, usd=usd, usd_per_hour=usd_per_hour,
        joules=_watts_seconds(the_chip, n, seconds), utilization=utilization,
        bound=bound, fits=fits, usd_per_million=per_million, memory_bytes=per_chip * n,
        hbm_bytes=hbm * n, note="; ".join(notes), layout=layout,
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
    # What the step's compute was priced with (train_step's "predicted"): every kernel of one
    # micro-batch as it runs, under the chip's achievable matmul ceiling (accelkit.kernels).
    # Its efficiencies count model FLOPs; scaled by executed over model FLOPs (HFU / MFU) they
    # are fractions of peak for the work the chip runs, like an assumed compute_efficiency.
    layout = step.layout
    pred = kernels.microbatch(s.model, the_chip, tp=layout.tp, ep=layout.ep,
                              microbatch_tokens=step.microbatch_tokens, seq_len=step.seq_len,
                              dtype=s.precision, recompute=layout.recompute)
    executed = parallel.hardware_flops_utilization(step) / step.mfu
    linear = 4 / 3 if layout.recompute == "full" else 1.0  # only full recomputation reruns them
    if the_chip.kind == "tpu":
        rows, cols = mfu.mxu_shape(the_chip)
        engine = f"{rows}x{cols} systolic MXUs"
    else:
        engine = f"{mfu.GPU_TILE[0]}x{mfu.GPU_TILE[1]} tensor-core tiles in waves"
    key = f"achievable_flops:{dtypes.check(s.precision)}"
    ceiling = (f"under the {'published' if not the_chip.achievable_is_assumption(key) else 'carried'} "
               f"{the_chip.achievable_fraction(key):.0%} matmul ceiling")
    return pred.efficiency * executed, (
        f"predicted from the engines ({engine} {ceiling}: matmuls at "
        f"{pred.matmul_efficiency * linear:.0%} of peak, {pred.efficiency * executed:.0%} with "
        "the non-matmul work; then the layout's bubbles and exposed communication)")


# -- serving --------------------------------------------------------------------------------------

class ReplicaTooLarge(ValueError):
    """A serving replica larger than the chip's scale-up domain (an NVLink node, an ICI slice):
    tensor parallelism stops there (:mod:`accelkit.inference`); serve more replicas instead."""


def _serve(s: Scenario, the_chip: chips.Chip, usd_per_hour: float | None) -> ServingOutcome:
    n = s.n_chips
    domain = (the_chip.scaleup_domain_chips if the_chip.kind == "gpu"
              else the_chip.max_slice_chips) or 1
    if n is not None and n > 1 and n > domain:
        raise ReplicaTooLarge(
            f"n_chips={n} exceeds {the_chip.name}'s {domain}-chip scale-up domain: tensor "
            "parallelism stops there; serve more replicas of at most that size instead")
    if n is not None:
        tensor_parallel.check_group(tensor_parallel.transformer(s.model), the_chip, n, "even")
    service = s.users is not None and s.latency_ms is not None and s.ttft_ms is not None
    return serving_lab.outcome(
        s.key, s.model, the_chip, n_chips=n, weights=s.precision,
        users=s.users if service else None, interval_seconds=s.interval_seconds,
        prompt=s.prompt_tokens, output=s.output_tokens,
        ttft_limit=None if not service or s.ttft_ms is None else s.ttft_ms / 1e3,
        tpot_limit=None if not service or s.latency_ms is None else s.latency_ms / 1e3,
        work=s.work, usd_per_hour=usd_per_hour)


# -- recommender ----------------------------------------------------------------------------------

def _recommender(s: Scenario, the_chip: chips.Chip, usd_per_hour: float | None
                 ) -> RecommenderOutcome:
    m = models.get(s.model)
    optimizer = recommender.OPTIMIZER_BYTES_PER_PARAM
    # Room for the tables, their optimizer state and a quarter more (activations, buffers).
    headroom = 1.0 + optimizer / dtypes.nbytes(s.precision) + 0.25
    n = s.n_chips or replica_chips(m, the_chip, dtype=s.precision, headroom=headroom)
    step = recommender.train_step(m, the_chip, n, batch=s.batch or 65_536, dtype=s.precision,
                                  optimizer_bytes_per_param=optimizer)
    seconds = s.work / step.batch * step.seconds
    usd, per_million = _money(the_chip, seconds, n, usd_per_hour, s.work)
    note = (f"gathers take {step.gather_share:.0%} of a step's time, on the {step.gather_unit}, "
            f"charged at full HBM bandwidth (an upper bound); math in "
            f"{recommender.COMPUTE_DTYPE}")
    if not step.fits:
        note = (f"does not fit: tables + optimizer state need {step.memory_bytes / 1e9:,.0f} GB, "
                f"{n} x {the_chip.name} hold {step.hbm_bytes / 1e9:,.0f} GB; " + note)
    return RecommenderOutcome(
        scenario=s.key, chip=the_chip.name, n_chips=n, batch=step.batch, precision=s.precision,
        seconds=seconds, usd=usd, usd_per_hour=usd_per_hour,
        joules=_watts_seconds(the_chip, n, seconds), utilization=step.utilization,
        bound=step.bound, fits=step.fits, usd_per_million=per_million,
        memory_bytes=step.memory_bytes, hbm_bytes=step.hbm_bytes, note=note,
        gather_unit=step.gather_unit, gather_share=step.gather_share,
        sparsecores_per_chip=step.sparsecores_per_chip)


# -- several chips --------------------------------------------------------------------------------

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
    users: int | None
    prompt_tokens: int | None
    output_tokens: int | None
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


# -- which knobs a scenario uses ------------------------------------------------------------------

#: The knobs of :func:`evaluate` each kind of job uses; the others are accepted and ignored
#: (``mfu`` and ``compute_efficiency`` only set a training run's speed, ``batch`` only a serving or recommender step's,
#: ``latency_ms`` only a serving job's target). A serving scenario that sets no latency target
#: (bulk offline inference) has no users and no limits: :func:`knobs_for` leaves ``latency_ms``
#: and ``users`` out there (a bulk job stays one, whatever they are).
KNOBS_BY_KIND: dict[str, tuple[str, ...]] = {
    "train": ("n_chips", "precision", "mfu", "compute_efficiency", "price_source"),
    "serve": ("n_chips", "precision", "latency_ms", "users", "prompt_tokens", "output_tokens",
              "price_source"),
    "recommender": ("n_chips", "batch", "precision", "price_source"),
}
#: Every knob :func:`evaluate` and :func:`compare` accept.
KNOBS = ("n_chips", "batch", "precision", "mfu", "compute_efficiency", "latency_ms", "users",
         "prompt_tokens", "output_tokens", "price_source")


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
    if kind == "serve" and (s.latency_ms is None or s.users is None or s.ttft_ms is None):
        used = tuple(k for k in used if k not in ("latency_ms", "users"))
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



__all__ = ["COMPUTE_EFFICIENCY", "DEFAULT_CHIPS", "FleetPlan", "KINDS", "KNOBS", "KNOBS_BY_KIND",
           "Knobs", "NotPredicted", "OUTCOME_TYPES", "Outcome", "PREDICTED", "PRICES",
           "RecommenderOutcome", "ReplicaTooLarge", "SCENARIOS", "Scenario", "ServingOutcome",
           "TrainingOutcome", "Unavailable", "compare", "evaluate", "fitting_chips", "get",
           "knobs_for", "layout_step", "replica_chips", "select_knobs"]
