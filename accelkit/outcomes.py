"""What a scenario costs on one chip: one small result type per kind of job.

:func:`accelkit.scenarios.evaluate` returns a :class:`TrainingOutcome`, a
:class:`ServingOutcome` or a :class:`RecommenderOutcome`. Each is an :class:`Outcome`: the
fields every job reports (time, money, energy, utilization, the bound, whether it fits), so a
lab can compare chips side by side on them (``repr`` shows those), plus the fields only that kind of job has (a
training layout, a serving latency and fleet, where a recommender's lookups run).

    >>> from accelkit import scenarios
    >>> o = scenarios.evaluate("chatbot", "H100")
    >>> type(o).__name__, o.feasible, o.plan.bound
    ('ServingOutcome', True, 'users')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from accelkit import _html, capacity


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
    """The cheapest plan that serves a scenario's users under its latency target, as the lab
    shows it: :func:`accelkit.capacity.plan`'s answer (:meth:`of` keeps these fields)."""

    replicas: int
    chips_per_replica: int
    batch_per_replica: int
    n_chips: int
    seconds_per_token: float
    usd_per_hour: float | None          # the whole plan's chips
    usd_per_million_tokens: float | None
    bound: str                          # "latency", "memory" or "users"

    @classmethod
    def of(cls, plan: capacity.CapacityPlan) -> FleetPlan:
        return cls(replicas=plan.replicas, chips_per_replica=plan.chips_per_replica,
                   batch_per_replica=plan.batch_per_replica, n_chips=plan.n_chips,
                   seconds_per_token=plan.seconds_per_token, usd_per_hour=plan.usd_per_hour,
                   usd_per_million_tokens=plan.usd_per_million_tokens, bound=plan.bound)


@dataclass(frozen=True, repr=False)
class ServingOutcome(Outcome):
    """A serving job: batches of requests, each a prefill then one decode step per token.

    ``latency_seconds`` is one decode step (a user's time per generated token),
    ``first_token_seconds`` the batch's prefill, ``communication_seconds`` a decode step's
    tensor-parallel all-reduces. With ``concurrent_users``, ``replicas`` of ``n_chips`` rent
    for ``fleet_usd_per_hour``; with users and a latency target, ``plan`` is the cheapest
    plan that serves them (None, with a note, where none meets the target).
    """

    KIND: ClassVar[str] = "serve"

    latency_seconds: float
    first_token_seconds: float
    meets_latency: bool | None          # None: the job sets no latency target
    communication_seconds: float
    replicas: int | None
    fleet_usd_per_hour: float | None
    plan: FleetPlan | None

    @property
    def feasible(self) -> bool:
        return self.fits and self.meets_latency is not False

    def _repr_extra(self) -> str:
        return f", {self.latency_seconds * 1e3:.1f} ms/token"

    def _html_rows(self) -> list[tuple[str, str]]:
        if self.replicas is None:
            return []
        return [("replicas", f"{self.replicas:,}"),
                ("fleet USD/h", "n/a" if self.fleet_usd_per_hour is None
                 else f"{self.fleet_usd_per_hour:,.0f}")]


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
