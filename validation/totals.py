"""Whole training runs with a reported total (chip-hours, days or FLOPs), against the model.

Evidence, not model: this lives in the repository's ``validation/`` folder, outside the
``accelkit`` package. Lesson 07 (section 7) and its published-runs widget set each run's stated
inputs (model, tokens, chip, chip count, MFU) into :func:`accelkit.training.estimate` and put
the compute-only figure beside the one its authors reported (:func:`compare_published`):

    >>> from validation.totals import PUBLISHED_RUNS, compare_published
    >>> c = compare_published(PUBLISHED_RUNS[1])
    >>> c.unit, round(c.ratio, 2)
    ('million chip-hours', 1.16)

Each run's inputs and reported figures carry their sources. These are not the fully specified
runs the step model is validated on (``validation/published.py``, ``validation/run.py``): a
reported total includes failures, restarts and stages the inputs do not describe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from accelkit import training

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


@dataclass(frozen=True)
class PublishedComparison:
    """A published run's reported figure beside our compute-only estimate, in one unit.

    The unit is the most direct figure the authors reported: chip-hours if they gave them, else
    days, else total FLOPs. ``ours`` and ``reported`` are in ``unit`` (chip-hours in millions).

    Attributes:
        run: the :class:`PublishedRun`.
        estimate: :func:`accelkit.training.estimate` on the run's stated inputs (model,
            tokens, chip, chips, MFU).
        unit: ``"million chip-hours"``, ``"days"`` or ``"FLOPs"``.
        ours: our compute-only figure (no failures, restarts or communication).
        reported: the authors' figure.
        ratio: ``reported / ours``; above 1, the run cost more than compute alone.
    """

    run: PublishedRun
    estimate: training.TrainingEstimate
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
        if not 0 <= run < len(PUBLISHED_RUNS):
            raise ValueError(f"run must be an index into PUBLISHED_RUNS, 0 to "
                             f"{len(PUBLISHED_RUNS) - 1}, got {run}")
        the_run = PUBLISHED_RUNS[run]
    else:
        raise TypeError(f"run must be a PublishedRun or an index into PUBLISHED_RUNS, "
                        f"got {type(run).__name__}")
    est = training.estimate(model=the_run.model, tokens=the_run.tokens, chip=the_run.chip,
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


__all__ = ["PUBLISHED_RUNS", "PublishedComparison", "PublishedRun", "compare_published"]
