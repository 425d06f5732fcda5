"""Predicted MFU (accelkit.mfu) against published runs: prints the table in docs/mfu.md.

Each run at its published degrees, batch and sequence (validation/published.py's published_steps);
knobs a paper leaves out (micro-batch, interleaving, recomputation) take the fastest choice that
fits. MFU counts model FLOPs only; Megatron's rows are its published TFLOP/s per GPU over the
A100's 312 TFLOP/s bf16 peak (its FLOP formula, not ours: see docs/mfu.md). tests/test_mfu.py
asserts the bands.

    python validation/mfu_published_runs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: validation/

from accelkit import mfu  # noqa: E402
from accelkit.parallel import TrainStep  # noqa: E402
from validation.published import published_steps  # noqa: E402


def runs() -> list[tuple[str, TrainStep, float, float]]:
    """(label, predicted step, published MFU, the run's FLOPs / ours, or 1.0)."""
    return [(r.label, r.step, r.published_mfu, r.flops_ratio)
            for r in published_steps(compute_efficiency="predicted")]


def main() -> None:
    print("| run | layout | published MFU | matmuls | compute | predicted MFU | "
          "published/predicted |")
    print("|---|---|---|---|---|---|---|")
    for r in published_steps(compute_efficiency="predicted"):
        step = r.step
        eff = mfu.step_efficiency(r.model, step.chip, step.layout, step.batch_tokens)
        predicted = step.mfu * r.flops_ratio
        print(f"| {r.label} | {step.layout} | {r.published_mfu:.1%} | {eff.matmul_efficiency:.1%} | "
              f"{eff.efficiency:.1%} | {predicted:.1%} | {r.published_mfu / predicted:.2f} |")


if __name__ == "__main__":
    main()
