"""accelkit: a runnable course on why GPUs and TPUs are built the way they are.

The library computes; widgets render; notebooks narrate.

Engines (toy, but honest):
    SystolicArray  -- a cycle-level systolic array (TPU-style matrix unit)
    SIMDMachine    -- cores of SIMD lanes with warps, divergence and coalescing (GPU-style)

Cost models, reached as submodules (``import accelkit as ak; ak.chips.get("v5e")``):
    chips, achievable (datasheet beside achievable), dtypes, models, roofline, energy, price, training, inference, recommender,
    capacity, serving (requests, continuous batching, latency percentiles, SLO fleets),
    collectives, parallel, mfu, workloads; experts (all-to-all scaling, node-limited routing);
    in_network (NVLink / InfiniBand SHARP all-reduce); goodput (failures and restarts);
    quality (what lower precision is known to cost in accuracy);
    and the rules those are built from:
    operations and transformer (a model's operations), activations, layout and step_cost (a
    training layout), serving_step, serving_decode and tensor_parallel (a serving step),
    topology (where a TPU group sits), calibration (what library kernels measurably sustain)
Decisions: scenarios (five deployments priced per chip), outcomes (one result type per kind
    of job), decisions (a learner's choices and their file)
Lesson labs: accelkit.labs (what the lessons' labs compute: lesson 04's shape sweeps, lesson 09's
    comparisons, and mlperf: a published GPU-vs-TPU gap walked from peak to measured, on
    submissions kept in the repository's validation/ folder)

Submodules are imported lazily so that ``import accelkit`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> (module, attribute or None for the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "SystolicArray": ("accelkit.systolic", "SystolicArray"),
    "SystolicRun": ("accelkit.systolic", "SystolicRun"),
    "SIMDMachine": ("accelkit.simd", "SIMDMachine"),
    "SIMDRun": ("accelkit.simd", "SIMDRun"),
}
_SUBMODULES = (
    "systolic",
    "simd",
    "workloads",
    "scenarios",
    "chips",
    "achievable",
    "dtypes",
    "models",
    "roofline",
    "energy",
    "price",
    "training",
    "inference",
    "labs",
    "capacity",
    "operations",
    "transformer",
    "activations",
    "layout",
    "step_cost",
    "serving_step",
    "serving_decode",
    "calibration",
    "serving",
    "tensor_parallel",
    "topology",
    "collectives",
    "parallel",
    "mfu",
    "experts",
    "in_network",
    "goodput",
    "quality",
    "recommender",
    "outcomes",
    "decisions",
    "widgets",
    "exercises",
    "cli",
)
for _name in _SUBMODULES:
    _LAZY[_name] = (f"accelkit.{_name}", None)

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'accelkit' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    # Every name in _SUBMODULES, so that ``ak.energy.mac_picojoules`` is typed, not Any.
    from accelkit import (  # noqa: F401
        achievable,
        chips,
        cli,
        collectives,
        decisions,
        dtypes,
        energy,
        exercises,
        experts,
        goodput,
        in_network,
        quality,
        activations,
        capacity,
        inference,
        labs,
        layout,
        operations,
        serving,
        serving_step,
        serving_decode,
        calibration,
        step_cost,
        tensor_parallel,
        topology,
        transformer,
        mfu,
        models,
        outcomes,
        parallel,
        price,
        recommender,
        roofline,
        scenarios,
        simd,
        systolic,
        training,
        widgets,
        workloads,
    )
    from accelkit.simd import SIMDMachine, SIMDRun  # noqa: F401
    from accelkit.systolic import SystolicArray, SystolicRun  # noqa: F401
