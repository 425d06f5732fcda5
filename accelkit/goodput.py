"""Goodput: the share of a training job's wall-clock time that advances the model.

    >>> import accelkit as ak
    >>> rate = ak.goodput.llama3_failures_per_chip_hour()
    >>> round(1 / (rate * 16384), 2)                     # Llama 3's job: an interruption every
    2.78
    >>> g = ak.goodput.goodput(chips=16384, failures_per_chip_hour=rate,
    ...                        checkpoint_seconds=60, restart_seconds=600)
    >>> round(g.checkpoint_interval_seconds / 60), round(g.goodput, 3)
    (18, 0.848)

(2.78 hours.) **Failures at scale** (Llama 3, arXiv:2407.21783 §3.3.4): "during a 54-day
snapshot period of pre-training, we experienced a total of 466 job interruptions", 47 planned
and 419 unexpected, on up to 16,384 H100 GPUs, 78% of the unexpected ones confirmed hardware
issues; "we achieved higher than 90% effective training time". A job's mean time between
interruptions is one chip's divided by the chip count, so it shrinks as jobs grow.

**The model** (first order, Young 1974; Daly 2006): the job saves a checkpoint every
``checkpoint_interval_seconds`` of work, each save stalling it ``checkpoint_seconds``; a failure
loses, on average, half an interval of work plus ``restart_seconds`` (detect, replace or
reroute, reload). With M the job's mean time between failures, an interval τ and a save c::

    goodput = 1 / ((1 + c/τ) · (1 + ((τ + c)/2 + R) / M))

and the interval that maximises it is about Young's sqrt(2 c M), used when none is given. It is
valid while τ + c + R is well below M (refused otherwise).

**Spares** (:data:`RECOVERY`): a failed GPU is replaced from hot spares, chips provisioned but
idle; a TPU slice is rerouted by optical circuit switches onto healthy 4x4x4 cubes, spare cubes
again. ``spare_fraction`` counts those idle chips against the job:
``useful_fraction = goodput x (1 - spare_fraction)`` of the chips paid for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accelkit import _validate

__all__ = ["Goodput", "LLAMA3", "RECOVERY", "Recovery", "goodput",
           "llama3_failures_per_chip_hour"]

#: Llama 3's interruption record (arXiv:2407.21783 §3.3.4 and Table 5).
LLAMA3: dict[str, int | float | str] = {"interruptions": 466, "unexpected": 419, "planned": 47, "days": 54, "gpus": 16384,
          "effective_training_time": 0.90,
          "source": "Llama Team 2024, arXiv:2407.21783 §3.3.4: 466 job interruptions in a "
                    "54-day snapshot (47 planned, 419 unexpected) on up to 16,384 H100; "
                    "'higher than 90% effective training time'"}


def llama3_failures_per_chip_hour(unexpected_only: bool = False) -> float:
    """Interruptions per GPU-hour in Llama 3's snapshot: 466 (or the 419 unexpected ones)
    over 54 days x 24 h x 16,384 GPUs (taking all 16,384 in use throughout, an upper bound on
    the GPU-hours, so a lower bound on the rate).

    Raises:
        TypeError: ``unexpected_only`` not a bool.
    """
    if not isinstance(unexpected_only, bool):
        raise TypeError(f"unexpected_only must be True or False, got {unexpected_only!r}")
    events = LLAMA3["unexpected" if unexpected_only else "interruptions"]
    return float(events) / (float(LLAMA3["days"]) * 24.0 * float(LLAMA3["gpus"]))


@dataclass(frozen=True)
class Recovery:
    """How a fabric recovers from a failed chip, and the spare share it provisions for it."""

    name: str
    kind: str             # "gpu" or "tpu"
    spare_fraction: float  # chips provisioned but idle, as a share of all provisioned
    how: str
    source: str


#: Sourced recovery strategies (module docstring).
RECOVERY = {
    "gpu_hot_spares": Recovery(
        "GPU hot spares (GB200 NVL72 rack)", "gpu", 2 / 18,
        "jobs run on 16 of a rack's 18 compute trays, so a failed tray is swapped for a spare "
        "in the same NVLink domain and the job restarts from its checkpoint",
        "docs.coreweave.com/docs/platform/instances/gb200: 'workloads should tolerate up to "
        "two unavailable Nodes per rack'; NVL72 nodes 'must be physically exchanged in the "
        "same rack'"),
    "tpu_ocs_reroute": Recovery(
        "TPU slice rerouting (optical circuit switches)", "tpu", 14 / 144,
        "the OCS rewires a slice onto healthy 4x4x4 cubes around failed chips, links or "
        "hosts; a TPU7x superpod keeps 130 of its 144 cubes for the job",
        "Zu et al., 'Resiliency at Scale: Managing Google's TPUv4 Machine Learning "
        "Supercomputer', NSDI 2024 (OCS reconfiguration around machine, chip and link "
        "failures; 99.98% system availability); Google Cloud blog 'cluster reliability for "
        "trillion-parameter models on TPUs' (130 of 144 cubes for 95% confidence of "
        "progress)"),
}


@dataclass(frozen=True)
class Goodput:
    """The goodput of a job (module docstring): fractions of wall-clock time, times in seconds."""

    chips: int
    job_mtbf_seconds: float
    checkpoint_interval_seconds: float
    checkpoint_seconds: float
    restart_seconds: float
    failures_per_day: float
    checkpoint_overhead: float   # c / τ
    failure_overhead: float      # ((τ + c)/2 + R) / M
    goodput: float
    spare_fraction: float
    useful_fraction: float       # goodput × (1 - spare_fraction)


def goodput(*, chips: int, failures_per_chip_hour: float, checkpoint_seconds: float,
            restart_seconds: float, checkpoint_interval_seconds: float | None = None,
            spare_fraction: float = 0.0) -> Goodput:
    """The goodput of a job of ``chips`` chips (module docstring).

    Args:
        chips: chips in the job, 1 to 10^7.
        failures_per_chip_hour: interruptions per chip-hour, in (0, 1) (Llama 3:
            :func:`llama3_failures_per_chip_hour`).
        checkpoint_seconds: time the job stalls per checkpoint save, >= 0 (0: asynchronous).
        restart_seconds: time from a failure to training again, >= 0.
        checkpoint_interval_seconds: work between checkpoints; None = Young's optimum
            sqrt(2 c M) (needs ``checkpoint_seconds`` > 0).
        spare_fraction: share of provisioned chips held idle as spares, in [0, 1)
            (:data:`RECOVERY`).

    Raises:
        TypeError / ValueError: a value out of its range (the message names it), or failures
            so frequent that τ + c + R is not below the job's mean time between failures.
    """
    n = _validate.positive_int("chips", chips, maximum=10**7)
    rate = _validate.positive_float("failures_per_chip_hour", failures_per_chip_hour,
                                    maximum=1.0)
    c = _nonnegative("checkpoint_seconds", checkpoint_seconds)
    r = _nonnegative("restart_seconds", restart_seconds)
    spare = _nonnegative("spare_fraction", spare_fraction)
    if spare >= 1.0:
        raise ValueError(f"spare_fraction must be in [0, 1), got {spare}")
    mtbf = 3600.0 / (rate * n)
    if checkpoint_interval_seconds is None:
        if c == 0.0:
            raise ValueError("checkpoint_interval_seconds is needed when checkpoint_seconds "
                             "is 0 (Young's optimum sqrt(2 c M) would be 0)")
        tau = math.sqrt(2.0 * c * mtbf)
    else:
        tau = _validate.positive_float("checkpoint_interval_seconds",
                                       checkpoint_interval_seconds, maximum=1e9)
    if tau + c + r >= mtbf:
        raise ValueError(f"failures every {mtbf / 3600:.3g} h on average are too frequent for "
                         f"a checkpoint interval of {tau:.3g} s, a save of {c:.3g} s and a "
                         f"restart of {r:.3g} s (their sum must be below the job's mean time "
                         "between failures)")
    ckpt = c / tau
    fail = ((tau + c) / 2.0 + r) / mtbf
    g = 1.0 / ((1.0 + ckpt) * (1.0 + fail))
    return Goodput(chips=n, job_mtbf_seconds=mtbf, checkpoint_interval_seconds=tau,
                   checkpoint_seconds=c, restart_seconds=r,
                   failures_per_day=86400.0 / mtbf, checkpoint_overhead=ckpt,
                   failure_overhead=fail, goodput=g, spare_fraction=spare,
                   useful_fraction=g * (1.0 - spare))


def _nonnegative(name: str, value: object) -> float:
    return _validate.real_in_range(name, value, low=0.0, high=1e9)
