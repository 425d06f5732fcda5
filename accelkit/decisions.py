"""A learner's hardware choices, each defended by a figure of the lab's table, kept as JSON.

:class:`DecisionLab` records one choice per scenario (:mod:`accelkit.scenarios`): a chip and a
reason that must cite a figure of the table (:func:`cited_figure`, read from
:func:`table_figures`), with the chosen chip's outcome. It prints a summary, and saves and
loads the choices as JSON (never pickles).

    >>> from accelkit import decisions, scenarios
    >>> lab = decisions.DecisionLab()
    >>> o = scenarios.evaluate("chatbot", "H100")
    >>> lab.record("chatbot", "H100", f"{o.tpot_p99_seconds * 1e3:.1f} ms per token", o).cited_column
    'TPOT p99 (ms)'

**The file** (:data:`FILE_FORMAT`, version :data:`FILE_VERSION`) is one JSON object:
``{"format", "version", "decisions": [{"scenario", "chip", "reason", "outcome"}]}``, each
outcome an object of its type's fields (:mod:`accelkit.outcomes`) with a ``"kind"``
("train", "serve" or "recommender") and, for serving, a nested ``"plan"`` (or null). Files of
versions 1 and 2 still load their training and recommender choices (version 1: every
outcome one flat object of all kinds' fields; each becomes its scenario's kind, and a field of
another kind that is set is refused); a serving choice in them is refused with a clear
message, since its numbers came from the static-batch model version 3 replaced (record it
again). Every reason is checked again against its saved outcome when a file loads.
"""

from __future__ import annotations

import json
import math
import os
import re
import types
import typing
from dataclasses import asdict, dataclass, fields
from typing import Any

from accelkit import chips, scenarios
from accelkit.outcomes import (OUTCOME_TYPES, FleetPlan, Outcome, RecommenderOutcome,
                               ServingOutcome, TrainingOutcome)

#: What :meth:`DecisionLab.save` writes and :meth:`DecisionLab.load` accepts.
FILE_FORMAT = "accelkit.decision_lab"
#: The version written; :data:`READ_VERSIONS` are the versions read. Version 3 (issue 22):
#: serving outcomes are simulated (percentiles, the SLO fleet plan); a serving choice saved by
#: version 1 or 2 holds the older static-batch numbers, and is refused with a message saying
#: so (its training and recommender choices still load).
FILE_VERSION = 3
READ_VERSIONS = (1, 2, 3)
_MAX_FILE_BYTES = 1_000_000


# -- the table's figures, and a reason that cites one -------------------------------------------

def table_figures(outcome: Outcome) -> dict[str, float]:
    """The figures the decision lab's table shows for ``outcome``, in the units it shows them.

    Keys name the column (``"USD"``, ``"days"``, ``"TPOT p99 (ms)"``, ``"utilization %"``...); values are
    numbers as a reader would quote them (percentages as percent, latency in ms, GB per chip).
    A recorded reason must cite one of these (:func:`cited_figure`).
    """
    if not isinstance(outcome, Outcome):
        raise TypeError(f"outcome must be an Outcome, got {type(outcome).__name__}")
    train = outcome if isinstance(outcome, TrainingOutcome) else None
    serve = outcome if isinstance(outcome, ServingOutcome) else None
    figures: dict[str, float | None] = {
        "chips": outcome.n_chips, "days": None if serve is not None else outcome.days,
        "USD": outcome.usd,
        "USD / M": outcome.usd_per_million, "USD / h per chip": outcome.usd_per_hour,
        "kWh (TDP)": outcome.kilowatt_hours, "utilization %": 100 * outcome.utilization,
        "kernels %": (None if train is None or train.kernel_efficiency is None
                      else 100 * train.kernel_efficiency),
        "GB / chip": outcome.memory_bytes_per_chip / 1e9,
        "HBM GB / chip": outcome.hbm_bytes_per_chip / 1e9,
    }
    # The order is the search order of cited_figure: where two columns hold the same value,
    # the first names the citation.
    if outcome.batch and serve is None:
        figures["batch"] = outcome.batch
    if serve is not None:
        figures["in flight / replica"] = serve.batch
        figures["TTFT p99 (ms)"] = serve.ttft_p99_seconds * 1e3
        figures["TPOT p99 (ms)"] = serve.tpot_p99_seconds * 1e3
        figures["tokens/s / replica"] = serve.tokens_per_second_per_replica
        if serve.plan is not None:
            plan = serve.plan
            figures["plan replicas"] = plan.replicas
            figures["plan chips"] = plan.n_chips
            figures["fleet USD / h"] = plan.usd_per_hour
    if train is not None:
        figures["step (s)"] = train.step_seconds
    if isinstance(outcome, RecommenderOutcome):
        figures["gathers %"] = 100 * outcome.gather_share
        if outcome.sparsecores_per_chip:
            figures["SparseCores"] = outcome.sparsecores_per_chip
    if train is not None:
        for name, value in (("weights GB", train.weight_bytes_per_chip),
                            ("gradients GB", train.gradient_bytes_per_chip),
                            ("optimizer GB", train.optimizer_bytes_per_chip),
                            ("activations GB", train.activation_bytes_per_chip)):
            figures[name] = None if value is None else value / 1e9
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


# -- the lab --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    """A learner's recorded choice for one scenario, and the table figure its reason cites."""

    scenario: str
    chip: str
    reason: str
    outcome: Outcome | None = None
    cited: str = ""          # the number as the reason writes it
    cited_column: str = ""   # the table column it matches


class DecisionLab:
    """Keeps a learner's choices, checks each reason cites the table, saves them as JSON.

        >>> lab = DecisionLab()
        >>> o = scenarios.evaluate("chatbot", "H100")
        >>> _ = lab.record("chatbot", "H100", f"{o.tpot_p99_seconds * 1e3:.1f} ms per token", o)
        >>> len(lab.decisions)
        1
    """

    def __init__(self) -> None:
        self._decisions: dict[str, Decision] = {}

    def record(self, scenario: str | scenarios.Scenario, chip: str | chips.Chip, reason: str,
               outcome: Outcome | None = None, *,
               table: (tuple[Outcome | scenarios.Unavailable, ...]
                       | list[Outcome | scenarios.Unavailable] | None) = None) -> Decision:
        """Record (or replace) the choice for a scenario.

        Args:
            outcome: the chosen chip's row (default :func:`accelkit.scenarios.evaluate` with
                the scenario's defaults).
            table: the other rows the reason may cite (the lab's whole table).
        Raises:
            ValueError: unknown scenario or chip, an empty reason, a reason that cites no
                number of the table (:func:`cited_figure`), an outcome of another scenario,
                chip or kind of job.
            TypeError: reason is not a string, outcome not an Outcome.
        """
        s = scenarios.get(scenario)
        the_chip = chips.get(chip)
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a str, got {type(reason).__name__}")
        if not reason.strip():
            raise ValueError("reason must say why (a non-empty sentence citing a number from "
                             "the table)")
        if outcome is None:
            outcome = scenarios.evaluate(s, the_chip)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"outcome must be an Outcome, got {type(outcome).__name__}")
        if outcome.scenario != s.key or outcome.chip != the_chip.name:
            raise ValueError(f"outcome is for {outcome.scenario} on {outcome.chip}, not "
                             f"{s.key} on {the_chip.name}")
        kind = OUTCOME_TYPES[s.kind]
        if not isinstance(outcome, kind):
            raise ValueError(f"outcome must be a {kind.__name__} for the {s.kind} scenario "
                             f"{s.key!r}, got a {type(outcome).__name__}")
        rows = [outcome] + [r for r in (table or ()) if isinstance(r, Outcome)]
        cited = cited_figure(reason, rows)
        if cited is None:
            example = (f"{outcome.usd_per_million:,.2f} USD per million tokens"
                       if isinstance(outcome, ServingOutcome) and outcome.usd_per_million
                       else f"{outcome.days:,.2f} days")
            raise ValueError("reason must cite a number from the table (for example "
                             f"{example} or the USD column, written as shown)")
        decision = Decision(s.key, the_chip.name, reason.strip(), outcome, cited[0], cited[1])
        self._decisions[s.key] = decision
        return decision

    @property
    def decisions(self) -> tuple[Decision, ...]:
        """Recorded choices in scenario order."""
        return tuple(self._decisions[k] for k in scenarios.SCENARIOS if k in self._decisions)

    def summary(self) -> str:
        """One line per scenario: the chip chosen and why (or that none is recorded yet)."""
        lines = []
        for key, s in scenarios.SCENARIOS.items():
            d = self._decisions.get(key)
            if d is None:
                lines.append(f"{s.title}: (no choice yet)")
            else:
                extra = ""
                o = d.outcome
                if isinstance(o, ServingOutcome):
                    if o.plan is not None and o.usd_per_million is not None:
                        hourly = ("" if o.plan.usd_per_hour is None
                                  else f", ${o.plan.usd_per_hour:,.0f}/h")
                        extra = (f" [{o.plan.replicas:,} x {o.plan.chips_per_replica} chips"
                                 f"{hourly}, ${o.usd_per_million:,.2f}/M tokens]")
                elif o is not None and o.usd is not None:
                    extra = f" [{o.days:,.1f} days, ${o.usd:,.0f}]"
                lines.append(f"{s.title}: {d.chip}{extra} because {d.reason}")
        return "\n".join(lines)

    # -- files: JSON only ------------------------------------------------------------------

    def to_json(self) -> str:
        """The recorded choices as JSON text (what :meth:`save` writes)."""
        return json.dumps({"format": FILE_FORMAT, "version": FILE_VERSION, "decisions": [
            {"scenario": d.scenario, "chip": d.chip, "reason": d.reason,
             "outcome": None if d.outcome is None else
             {"kind": type(d.outcome).KIND, **asdict(d.outcome)}}
            for d in self.decisions]}, indent=1, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> DecisionLab:
        """A lab holding the choices in ``text`` (written by :meth:`to_json`, this version or
        version 1). Each reason is checked again against its saved outcome.

        Raises:
            TypeError: text is not a str.
            ValueError: not JSON, another format or version, unknown scenarios or chips,
                fields missing, unknown or of the wrong type, or a reason citing no number.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if len(text) > _MAX_FILE_BYTES:
            raise ValueError(f"a decision file must be under {_MAX_FILE_BYTES:,} characters")
        try:
            data = json.loads(text, parse_constant=_refuse_constant)
        except (json.JSONDecodeError, _NotFinite) as error:
            raise ValueError(f"not a decision file: {error}") from None
        if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
            raise ValueError(f"not a decision file: format must be {FILE_FORMAT!r}")
        version = data.get("version")
        if isinstance(version, bool) or version not in READ_VERSIONS:
            raise ValueError(f"decision file version must be one of {list(READ_VERSIONS)}, "
                             f"got {version!r}")
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
            if version in (1, 2) and _is_serving(item):
                raise ValueError(
                    f"{where} is a serving choice ({item['scenario']!r}) saved by decision file "
                    f"version {version}, whose serving numbers came from the static-batch model "
                    f"that version {FILE_VERSION} replaced with a simulation of requests: "
                    "record that choice again (the file's other choices are fine)")
            read = _outcome_v1 if version == 1 else _outcome_v2
            lab.record(item["scenario"], item["chip"], item["reason"],
                       read(item["outcome"], f"{where}.outcome"))
        return lab

    def save(self, path: str | os.PathLike[str]) -> str:
        """Write the choices to ``path`` as JSON (no pickles); returns the path written."""
        target = os.fspath(path)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(self.to_json())
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> DecisionLab:
        """Read choices written by :meth:`save` (or by version 1); refuses malformed files
        (ValueError)."""
        target = os.fspath(path)
        size = os.path.getsize(target)
        if size > _MAX_FILE_BYTES:
            raise ValueError(f"{target} is {size:,} bytes; a decision file is under "
                             f"{_MAX_FILE_BYTES:,}")
        with open(target, encoding="utf-8") as handle:
            return cls.from_json(handle.read())

    def __repr__(self) -> str:
        return (f"DecisionLab({len(self._decisions)} of {len(scenarios.SCENARIOS)} scenarios "
                "decided)")


# -- reading outcomes back --------------------------------------------------------------------

def _is_serving(item: dict[str, Any]) -> bool:
    """Whether a saved decision is a serving scenario's (an unknown scenario is refused later)."""
    try:
        return scenarios.get(item["scenario"]).kind == "serve"
    except ValueError:
        return False


class _NotFinite(ValueError):
    """NaN or Infinity in a decision file: JSON has no such numbers."""


def _refuse_constant(name: str) -> None:
    raise _NotFinite(f"{name} is not allowed")


def _checked(where: str, value: object, hint: object) -> object:
    """``value`` checked against a field's type (bool, int, float, str, a FleetPlan, or one of
    these or None); whole numbers are accepted for floats."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None:
            if type(None) not in options:
                raise ValueError(f"{where} must not be null")
            return None
        (hint,) = [t for t in options if t is not type(None)]
    if value is None:
        raise ValueError(f"{where} must not be null")
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{where} must be true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where} must be a whole number")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise ValueError(f"{where} must be a finite number")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{where} must be a string")
        return value
    if hint is FleetPlan:
        return FleetPlan(**_fields(FleetPlan, value, where))
    raise TypeError(f"{where}: no reader for fields of type {hint!r}")  # a library bug


def _fields(cls: type, data: object, where: str) -> dict[str, Any]:
    """``data`` (a JSON object) as ``cls``'s fields, each checked; exactly those fields."""
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be an object of {cls.__name__} fields")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ValueError(f"{where} has unknown fields {unknown}")
    missing = [k for k in names if k not in data]
    if missing:
        raise ValueError(f"{where} lacks fields {missing}")
    return {k: _checked(f"{where}.{k}", data[k], hints[k]) for k in names}


def _outcome_of(cls: type[Outcome], data: dict[str, Any], where: str) -> Outcome:
    clean = _fields(cls, data, where)
    if clean["n_chips"] < 1:
        raise ValueError(f"{where}.n_chips must be at least 1")
    return cls(**clean)


def _outcome_v2(data: object, where: str) -> Outcome:
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be an object of Outcome fields")
    kind = data.get("kind")
    if kind not in OUTCOME_TYPES:
        raise ValueError(f"{where}.kind must be one of {sorted(OUTCOME_TYPES)}, got {kind!r}")
    return _outcome_of(OUTCOME_TYPES[kind], {k: v for k, v in data.items() if k != "kind"},
                       where)


#: Version 1's flat outcome: its fields of every kind, with the defaults it allowed to be left
#: out (the fields every kind shares had none but these three).
_V1_DEFAULTS: dict[str, object] = {
    "memory_bytes": 0.0, "hbm_bytes": 0.0, "note": "",
    "latency_seconds": None, "first_token_seconds": None, "meets_latency": None,
    "layout": "", "mfu_basis": "", "kernel_efficiency": None, "step_seconds": None,
    "weight_bytes_per_chip": None, "gradient_bytes_per_chip": None,
    "optimizer_bytes_per_chip": None, "activation_bytes_per_chip": None,
    "replicas": None, "fleet_usd_per_hour": None, "communication_seconds": None,
    "plan_replicas": None, "plan_chips_per_replica": None, "plan_batch_per_replica": None,
    "plan_n_chips": None, "plan_seconds_per_token": None, "plan_usd_per_hour": None,
    "plan_usd_per_million": None, "plan_bound": "",
    "sparsecores_per_chip": None, "gather_unit": "", "gather_share": None}


def _outcome_v1(data: object, where: str) -> Outcome:
    """A version-1 flat outcome as its scenario's kind of outcome (training or recommender)."""
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be an object of Outcome fields")
    shared = [f.name for f in fields(Outcome)]
    unknown = sorted(set(data) - set(shared) - set(_V1_DEFAULTS))
    if unknown:
        raise ValueError(f"{where} has unknown fields {unknown}")
    missing = [k for k in shared if k not in data and k not in _V1_DEFAULTS]
    if missing:
        raise ValueError(f"{where} lacks fields {missing}")
    full = {**_V1_DEFAULTS, **data}
    key = full["scenario"]
    if not isinstance(key, str):
        raise ValueError(f"{where}.scenario must be a string")
    cls = OUTCOME_TYPES[scenarios.get(key).kind]
    own = {f.name for f in fields(cls)}
    # (a version-1 serving choice is refused before this: its kind's fields changed)
    foreign = sorted(k for k in set(full) - own if full[k] is not None and full[k] != "")
    if foreign:
        raise ValueError(f"{where} is a {cls.KIND} outcome but sets {foreign}, fields of "
                         "another kind of job")
    return _outcome_of(cls, {k: v for k, v in full.items() if k in own}, where)


__all__ = ["Decision", "DecisionLab", "FILE_FORMAT", "FILE_VERSION", "READ_VERSIONS",
           "cited_figure", "table_figures"]
