"""What a scenario costs on one chip: one small result type per kind of job.

:func:`accelkit.scenarios.evaluate` returns a :class:`TrainingOutcome`, a
:class:`ServingOutcome` or a :class:`RecommenderOutcome`. Each is an :class:`Outcome`: the
fields every job reports (time, money, energy, utilization, the bound, whether it fits), so a
lab can compare chips side by side on them (``repr`` shows those), plus the fields only that kind of job has (a
training layout, a serving latency and fleet, where a recommender's lookups run).

    >>> from accelkit import scenarios
    >>> o = scenarios.evaluate("chatbot", "H100")
    >>> type(o).__name__, o.feasible, o.plan.n_chips == o.plan.replicas * o.n_chips
    ('ServingOutcome', True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from accelkit import _html


@dataclass(frozen=True)
class Outcome:
    """The fields every kind of job reports: one scenario on ``n_chips`` of one chip.

    ``batch`` counts the kind's own unit: tokens per optimizer step (training), sequences per
    batch (serving), samples per step (recommender). ``memory_bytes`` is what must sit in HBM
    over all the chips, ``hbm_bytes`` what they have.
    """

    KIND: ClassVar[str] = ""

    scenario: str
    chip: str
    n_chips: int
    batch: int
    precision: str
    seconds: float                 # wall-clock for the whole job
    usd: float | None              # the whole job; None without a price
    usd_per_hour: float | None     # per chip, the price used
    joules: float | None           # the whole job at TDP; None without published power
    utilization: float             # achieved FLOP/s over peak (MFU)
    bound: str                     # "compute", "memory" or "communication"
    fits: bool
    usd_per_million: float | None  # per million work units (tokens or samples)
    memory_bytes: float
    hbm_bytes: float
    note: str

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

    @property
    def feasible(self) -> bool:
        """It fits, and meets the job's latency target where it has one (serving)."""
        return self.fits

    def _repr_extra(self) -> str:
        return ""

    def _html_rows(self) -> list[tuple[str, str]]:
        return []

    def __repr__(self) -> str:
        usd = "n/a" if self.usd is None else f"${self.usd:,.0f}"
        return (f"{type(self).__name__}({self.scenario} on {self.n_chips} x {self.chip}: "
                f"{self.days:,.2f} days, {usd}, {self.utilization:.1%} of peak, "
                f"{self.bound}-bound{self._repr_extra()}{'' if self.fits else ', DOES NOT FIT'})")

    def _repr_html_(self) -> str:
        rows = [("chips", f"{self.n_chips} x {self.chip}"), ("days", f"{self.days:,.2f}"),
                ("USD", "n/a" if self.usd is None else f"{self.usd:,.0f}"),
                ("kWh (TDP)", "n/a" if self.joules is None else f"{self.joules / 3.6e6:,.0f}"),
                ("utilization", f"{self.utilization:.1%}"), ("bound", self.bound),
                ("fits", str(self.fits))]
        return _html.table(rows + self._html_rows())


@dataclass(frozen=True, repr=False)
class TrainingOutcome(Outcome):
    """A training job, priced from one layout's step (:mod:`accelkit.parallel`).

    ``layout`` is the layout chosen (the fastest that fits), ``mfu_basis`` says in words what
    the MFU rests on ("predicted from the engines (...)", "layout model, kernels at an assumed
    ...", or "assumed"), ``kernel_efficiency`` the fraction of peak the kernels reach (None
    with an assumed MFU). The step and its memory per chip by part are None where no layout
    divides the batch.
    """

    KIND: ClassVar[str] = "train"

    layout: str
    mfu_basis: str
    kernel_efficiency: float | None
    step_seconds: float | None
    weight_bytes_per_chip: float | None
    gradient_bytes_per_chip: float | None
    optimizer_bytes_per_chip: float | None
    activation_bytes_per_chip: float | None

    def _html_rows(self) -> list[tuple[str, str]]:
        return [("layout", self.layout), ("MFU basis", self.mfu_basis),
                ("GB per chip", f"{self.memory_bytes_per_chip / 1e9:,.1f} of "
                                f"{self.hbm_bytes_per_chip / 1e9:,.1f}")]


@dataclass(frozen=True)
class FleetPlan:
    """The fleet a serving scenario needs, as the lab shows it: ``replicas`` tensor-parallel
    groups of ``chips_per_replica`` chips (``n_chips`` in all), each seeing
    ``rate_per_replica`` requests per second, rented for ``usd_per_hour`` (the whole fleet,
    None without a price) and costing ``usd_per_million_tokens`` of output
    (:mod:`accelkit.serving.lab`)."""

    replicas: int
    chips_per_replica: int
    n_chips: int
    rate_per_replica: float
    usd_per_hour: float | None
    usd_per_million_tokens: float | None


@dataclass(frozen=True, repr=False)
class ServingOutcome(Outcome):
    """A serving job, simulated request by request (:mod:`accelkit.serving`).

    A service (users and latency limits) is sized by the SLO capacity plan: ``plan`` is the
    cheapest fleet whose replicas meet ``ttft_limit_seconds`` and ``tpot_limit_seconds`` at
    the 99th percentile under ``arrival_rate`` requests per second (None, with a note, where no
    fleet can); ``ttft_p99_seconds`` and the rest are one replica's at the plan's rate,
    interpolated between the loads its simulated load curve ran at. A bulk job (no users, no limits: every request queued at once) is one replica at full
    load. ``n_chips`` is the chips of one replica, ``batch`` the sequences it holds on average
    (Little's law's in flight), ``usd_per_million`` the fleet's cost per million output
    tokens. ``seconds`` is the time the plan takes to generate the scenario's ``work`` tokens
    (for a service, set by demand: the same on every chip); the lab shows a service's $/h and
    $/M tokens, never its days.
    """

    KIND: ClassVar[str] = "serve"

    arrival_rate: float | None         # requests/s offered to the fleet; None: all at once
    prompt_tokens: int
    output_tokens: int
    ttft_limit_seconds: float | None
    tpot_limit_seconds: float | None
    ttft_p99_seconds: float
    tpot_p99_seconds: float
    tokens_per_second_per_replica: float
    meets_latency: bool | None         # None: the job sets no limits
    communication_seconds: float       # a decode step's tensor-parallel collectives
    plan: FleetPlan | None

    @property
    def feasible(self) -> bool:
        return self.fits and self.meets_latency is not False

    @property
    def fleet_usd_per_hour(self) -> float | None:
        return None if self.plan is None else self.plan.usd_per_hour

    def __repr__(self) -> str:
        usd = ("n/a" if self.usd_per_million is None else f"${self.usd_per_million:,.2f}/M tokens")
        fleet = ("no plan" if self.plan is None else
                 f"{self.plan.replicas:,} x {self.plan.chips_per_replica} {self.chip}"
                 + ("" if self.plan.usd_per_hour is None else
                    f" at ${self.plan.usd_per_hour:,.0f}/h"))
        return (f"ServingOutcome({self.scenario}: {fleet}, {usd}, TTFT p99 "
                f"{self.ttft_p99_seconds * 1e3:,.0f} ms, TPOT p99 "
                f"{self.tpot_p99_seconds * 1e3:,.1f} ms, {self.batch:,} in flight per replica, "
                f"{self.bound}-bound{'' if self.fits else ', DOES NOT FIT'})")

    def _html_rows(self) -> list[tuple[str, str]]:
        rows = [("TTFT p99", f"{self.ttft_p99_seconds * 1e3:,.0f} ms"),
                ("TPOT p99", f"{self.tpot_p99_seconds * 1e3:,.1f} ms")]
        if self.plan is not None:
            rows += [("replicas", f"{self.plan.replicas:,} x {self.plan.chips_per_replica}"),
                     ("fleet USD/h", "n/a" if self.plan.usd_per_hour is None
                      else f"{self.plan.usd_per_hour:,.0f}")]
        return rows


@dataclass(frozen=True, repr=False)
class RecommenderOutcome(Outcome):
    """A recommender's training (:mod:`accelkit.recommender`): where its lookups run
    (``gather_unit``) and their share of a step's time."""

    KIND: ClassVar[str] = "recommender"

    gather_unit: str
    gather_share: float
    sparsecores_per_chip: int | None

    def _html_rows(self) -> list[tuple[str, str]]:
        return [("lookups on", self.gather_unit)]


#: The result type of each kind of job (:data:`accelkit.scenarios.KINDS`).
OUTCOME_TYPES: dict[str, type[Outcome]] = {
    cls.KIND: cls for cls in (TrainingOutcome, ServingOutcome, RecommenderOutcome)}

__all__ = ["FleetPlan", "OUTCOME_TYPES", "Outcome", "RecommenderOutcome", "ServingOutcome",
           "TrainingOutcome"]
