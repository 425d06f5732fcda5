"""Decision scenarios: five real deployments, the knobs a learner sets, and what each chip costs.

Each :class:`Scenario` is a job with a size (tokens to train on, tokens to generate, samples
to learn from) and default knobs. :func:`evaluate` prices one scenario on one chip by calling
the cost models (:mod:`accelkit.training`, :mod:`accelkit.inference`, :mod:`accelkit.models`,
:mod:`accelkit.price`) and returns an :class:`Outcome` with the same fields for every kind of
job, so a lab can compare chips side by side; :func:`compare` does it for several chips.
:class:`DecisionLab` keeps a learner's choices in memory and prints a summary.

    >>> import accelkit.scenarios as sc
    >>> o = sc.evaluate("chatbot", "H100")
    >>> o.bound, o.fits, o.meets_latency
    ('memory', True, True)

Conventions (on top of those of the cost models):

* **Chips per job** (``n_chips=None``): training scenarios use the scenario's count;
  serving and the recommender use :func:`replica_chips`, the smallest power of two whose HBM
  holds the weights (or embedding tables) with room to spare (``headroom``, default 2×:
  half for the KV cache or optimizer state). Give ``n_chips`` to use one count for all chips.
* **Serving jobs** are batches of requests: each batch prefills ``prompt_tokens`` per request,
  then generates ``output_tokens`` decode steps at the mean context (prompt + output / 2).
  ``batch=0`` means the largest batch that fits. Latency is one decode step (seconds per
  generated token of one user); time to first token is the batch's prefill.
* **Recommender** training: every operation of a training step (forward and backward) on the
  roofline, the step's FLOPs and bytes shared perfectly by the chips; gathers (embedding
  lookups) move bytes without FLOPs, so they run at memory bandwidth. Tables must fit in the
  chips' pooled HBM (weights plus ``optimizer_bytes_per_param``).
* **Utilization** is achieved FLOP/s over the chips' peak in the chosen precision (MFU).
* **Energy** is published power (TDP) × chips × seconds, the accelerators alone (not an upper
  bound: hosts, network and cooling are not counted); None for chips with
  no published power (TPU v5e, v5p, v6e, 7x). **Dollars** use the catalog list price, or the
  lowest sourced price with ``price="lowest"`` (see :mod:`accelkit.price`); None with no price.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from accelkit import _validate, chips, dtypes, energy, inference, models, price, roofline, training

#: Chips the lab compares by default: current TPUs and GPUs with a list price.
DEFAULT_CHIPS = ("TPU v5e", "TPU v6e", "TPU v5p", "NVIDIA A100 (SXM 80GB)", "NVIDIA H100 (SXM)",
                 "NVIDIA H200 (SXM)", "NVIDIA B200 (HGX)")
KINDS = ("train", "serve", "recommender")
PRICES = ("list", "lowest")
_MAX_WORK = 1e16


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
    batch_tokens: float | None = None  # train: tokens per optimizer step
    precision: dtypes.DType = "bf16"  # weights and arithmetic (serve: weights; math in bf16)
    mfu: float = 0.4                 # train only
    latency_ms: float | None = None  # serve: target per generated token
    prompt_tokens: int = 0
    output_tokens: int = 0
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
        batch_tokens=16e6, mfu=0.4,
        question="Which chip trains it for the least money, and is it communication-bound?"),
    Scenario(
        key="finetune", title="Fine-tune many small research models", kind="train",
        description="A research group fine-tunes Llama-3-8B 50 times (ablations), 1 billion "
                    "tokens each, on 8 chips at a time. Research code changes daily: custom "
                    "ops and new architectures make MFU lower and flexibility valuable.",
        model="llama-3-8b", work=1e9, work_unit="tokens", runs=50, n_chips=8,
        batch_tokens=1e6, mfu=0.3,
        question="Which chip, given that the numbers do not price engineering time?"),
    Scenario(
        key="chatbot", title="Low-latency chatbot, batch 1-4", kind="serve",
        description="Llama-3-70B answering users one to four at a time: 1,000-token prompts, "
                    "250-token answers, and every token within 50 ms (20 tokens/s per user). "
                    "Latency is bought with memory bandwidth, not FLOPs.",
        model="llama-3-70b", work=1e9, work_unit="generated tokens", batch=4,
        latency_ms=50.0, prompt_tokens=1000, output_tokens=250,
        question="Which chip meets 50 ms per token, and what does a million tokens cost?"),
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
        question="Which chip holds the tables cheaply, and what bounds a training step?"),
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
        body = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
        return f"<table>{body}</table>"


def get(name: str | Scenario) -> Scenario:
    """A scenario by key ("pretrain", "finetune", "chatbot", "offline", "recommender")."""
    if isinstance(name, Scenario):
        return name
    return _validate.lookup("scenario", name, {_validate.normalise_name(k): v
                                               for k, v in SCENARIOS.items()})  # type: ignore


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
             latency_ms: float | None = None, price_source: str = "list") -> Outcome:
    """Price one scenario on ``n_chips`` of one chip; knobs left as None take its defaults.

    Args:
        scenario: a key of :data:`SCENARIOS` or a :class:`Scenario`.
        chip: a chip name or Chip.
        n_chips: chips per job (None: the scenario's count, or :func:`replica_chips`).
        batch: serve: sequences per batch (0: largest that fits); recommender: samples/step.
        precision: train: the arithmetic's dtype; serve: the weights' (the KV cache follows
            :func:`accelkit.dtypes.activation_dtype`, as in :mod:`accelkit.inference`: bf16
            for 8-bit weights; math in bf16); recommender: embedding tables'.
        mfu: train only, in (0, 1].
        latency_ms: serve only, target milliseconds per generated token.
        price_source: "list" (catalog) or "lowest" (cheapest sourced price).
        (:func:`knobs_for` names the knobs a scenario uses; the others are ignored.)
    Returns:
        An :class:`Outcome`.
    Raises:
        ValueError: unknown scenario or chip, bad knobs, a precision the chip lacks.
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
    if latency_ms is not None:
        knobs["latency_ms"] = _validate.positive_float("latency_ms", latency_ms, maximum=1e6)
    s = replace(s, **knobs)
    usd_per_hour = _price(the_chip, which)
    if s.kind == "train":
        return _train(s, the_chip, usd_per_hour)
    if s.kind == "serve":
        return _serve(s, the_chip, usd_per_hour)
    return _recommender(s, the_chip, usd_per_hour)


def _money(the_chip: chips.Chip, seconds: float, n: int, usd_per_hour: float | None,
           work: float) -> tuple[float | None, float | None]:
    if usd_per_hour is None:
        return None, None
    usd = price.usd(the_chip, seconds, n, usd_per_hour=usd_per_hour)
    return usd, usd / work * 1e6


def _train(s: Scenario, the_chip: chips.Chip, usd_per_hour: float | None) -> Outcome:
    n = s.n_chips or replica_chips(s.model, the_chip, headroom=8.0)
    t = training.estimate(model=s.model, tokens=s.work, chip=the_chip, n_chips=n, mfu=s.mfu,
                          dtype=s.precision, batch_tokens=s.batch_tokens)
    seconds = t.seconds * s.runs
    usd, per_million = _money(the_chip, seconds, n, usd_per_hour, s.work * s.runs)
    # The outcome reports price and power in its own fields (None where unpublished).
    note = "; ".join(n_ for n_ in t.notes if n_.kind not in ("no_price", "no_power"))
    return Outcome(
        scenario=s.key, chip=the_chip.name, n_chips=n, batch=int(s.batch_tokens or 0),
        precision=s.precision, seconds=seconds, usd=usd, usd_per_hour=usd_per_hour,
        joules=_watts_seconds(the_chip, n, seconds),
        utilization=s.mfu * t.compute_seconds / t.seconds,
        bound="communication" if t.communication_bound else "compute", fits=t.fits,
        usd_per_million=per_million, memory_bytes=t.memory_bytes_per_chip * n,
        hbm_bytes=t.hbm_bytes * n, note=note)


def _serve(s: Scenario, the_chip: chips.Chip, usd_per_hour: float | None) -> Outcome:
    weights = s.precision
    kv = dtypes.activation_dtype(weights)  # the serving model's rule for the cache's format
    n = s.n_chips or replica_chips(s.model, the_chip, dtype=weights, headroom=1.5)
    context = s.prompt_tokens + s.output_tokens // 2
    batch = s.batch
    if batch == 0:
        batch = inference.max_batch(s.model, the_chip, n, s.prompt_tokens + s.output_tokens,
                                    weight_dtype=weights, kv_dtype=kv)
        if batch < 1:
            batch = 1  # does not fit at all: price batch 1 and say so
    pre = inference.prefill(s.model, the_chip, n, batch, s.prompt_tokens, weight_dtype=weights,
                            kv_dtype=kv, compute_dtype="bf16")
    dec = inference.decode_step(s.model, the_chip, n, batch, context, weight_dtype=weights,
                                kv_dtype=kv)
    end = inference.decode_step(s.model, the_chip, n, batch,
                                s.prompt_tokens + s.output_tokens - 1, weight_dtype=weights,
                                kv_dtype=kv)
    batch_seconds = pre.seconds + s.output_tokens * dec.seconds
    seconds = s.work / (batch * s.output_tokens) * batch_seconds
    flops = pre.flops + s.output_tokens * dec.flops
    peak = n * the_chip.peak_flops("bf16")
    usd, per_million = _money(the_chip, seconds, n, usd_per_hour, s.work)
    meets = None if s.latency_ms is None else dec.seconds * 1e3 <= s.latency_ms
    compute_s = pre.compute_seconds + s.output_tokens * dec.compute_seconds
    memory_s = pre.memory_seconds + s.output_tokens * dec.memory_seconds
    notes = [f"prefill is {pre.seconds / batch_seconds:.0%} of the time"]
    if n > 1:
        notes.append(f"tensor-parallel all-reduces over {n} chips are "
                     f"{dec.communication_seconds / dec.seconds:.0%} of a decode step")
    if not end.fits:
        notes.insert(0, end.message)
    return Outcome(
        scenario=s.key, chip=the_chip.name, n_chips=n, batch=batch, precision=weights,
        seconds=seconds, usd=usd, usd_per_hour=usd_per_hour,
        joules=_watts_seconds(the_chip, n, seconds), utilization=flops / (batch_seconds * peak),
        bound="compute" if compute_s >= memory_s else "memory", fits=end.fits,
        usd_per_million=per_million,
        latency_seconds=dec.seconds, first_token_seconds=pre.seconds, meets_latency=meets,
        memory_bytes=end.memory_bytes, hbm_bytes=end.hbm_bytes, note="; ".join(notes))


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
    per_op = roofline.times([op.flops for op in ops], [op.bytes for op in ops], peak, bandwidth)
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
    note = f"gathers take {gather / step:.0%} of a step's time; math in {compute}"
    if not fits:
        note = (f"does not fit: tables + optimizer state need {need / 1e9:,.0f} GB, "
                f"{n} x {the_chip.name} hold {hbm / 1e9:,.0f} GB; " + note)
    return Outcome(
        scenario=s.key, chip=the_chip.name, n_chips=n, batch=batch, precision=s.precision,
        seconds=seconds, usd=usd, usd_per_hour=usd_per_hour,
        joules=_watts_seconds(the_chip, n, seconds),
        utilization=sum(op.flops for op in ops) / (step * peak),
        bound="compute" if compute_s >= memory_s else "memory", fits=fits,
        usd_per_million=per_million, memory_bytes=need, hbm_bytes=hbm, note=note)


@dataclass(frozen=True)
class Unavailable:
    """A chip that cannot run the scenario with these knobs, and why."""

    scenario: str
    chip: str
    reason: str


def compare(scenario: str | Scenario, chip_names: tuple[str, ...] | list[str] | None = None,
            **knobs: object) -> tuple[Outcome | Unavailable, ...]:
    """:func:`evaluate` on each chip (default :data:`DEFAULT_CHIPS`), same knobs.

    A chip that cannot take the knobs (a precision it lacks: a
    :class:`accelkit.chips.MissingFigureError`) gives an :class:`Unavailable` saying why
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
            rows.append(evaluate(s, the_chip, **knobs))  # type: ignore[arg-type]
        except chips.MissingFigureError as error:
            rows.append(Unavailable(s.key, the_chip.name, str(error)))
    return tuple(rows)


@dataclass(frozen=True)
class Decision:
    """A learner's recorded choice for one scenario."""

    scenario: str
    chip: str
    reason: str
    outcome: Outcome | None = None


class DecisionLab:
    """Keeps a learner's choices in memory (no files) and summarises them.

        >>> lab = DecisionLab()
        >>> _ = lab.record("chatbot", "H100", "lowest latency per replica")
        >>> len(lab.decisions)
        1
    """

    def __init__(self) -> None:
        self._decisions: dict[str, Decision] = {}

    def record(self, scenario: str | Scenario, chip: str | chips.Chip, reason: str,
               outcome: Outcome | None = None) -> Decision:
        """Record (or replace) the choice for a scenario.

        Raises:
            ValueError: unknown scenario or chip, or an empty reason.
            TypeError: reason is not a string.
        """
        s = get(scenario)
        the_chip = chips.get(chip)
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a str, got {type(reason).__name__}")
        if not reason.strip():
            raise ValueError("reason must say why (a non-empty sentence)")
        decision = Decision(s.key, the_chip.name, reason.strip(), outcome)
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

    def __repr__(self) -> str:
        return f"DecisionLab({len(self._decisions)} of {len(SCENARIOS)} scenarios decided)"


# -- which knobs a scenario uses ------------------------------------------------------------------

#: The knobs of :func:`evaluate` each kind of job uses; the others are accepted and ignored
#: (``mfu`` only sets a training run's speed, ``batch`` only a serving or recommender step's,
#: ``latency_ms`` only a serving job's target). A serving scenario that sets no latency target
#: (bulk offline inference) would gain one if ``latency_ms`` were passed, so :func:`knobs_for`
#: leaves it out there.
KNOBS_BY_KIND: dict[str, tuple[str, ...]] = {
    "train": ("n_chips", "precision", "mfu", "price_source"),
    "serve": ("n_chips", "batch", "precision", "latency_ms", "price_source"),
    "recommender": ("n_chips", "batch", "precision", "price_source"),
}
#: Every knob :func:`evaluate` and :func:`compare` accept.
KNOBS = ("n_chips", "batch", "precision", "mfu", "latency_ms", "price_source")


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


__all__ = ["DEFAULT_CHIPS", "Decision", "DecisionLab", "KNOBS", "KNOBS_BY_KIND", "Outcome",
           "SCENARIOS", "Scenario", "Unavailable", "compare", "evaluate", "get", "knobs_for",
           "replica_chips", "select_knobs"]
