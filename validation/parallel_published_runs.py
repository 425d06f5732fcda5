"""Published training runs against accelkit.parallel: prints the table in docs/parallel.md.

Each run is evaluated at its published degrees (validation/published.py's published_steps); knobs the
paper does not state (micro-batch, interleaving, recomputation) take the fastest choice that
fits. Ours runs at peak FLOP/s (compute_efficiency 1.0), so it is an upper bound; Megatron's rows
compare TFLOP/s per GPU by its own FLOP formula, the others MFU. tests/test_parallel.py asserts
the bands.

    python validation/parallel_published_runs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: validation/

from validation.published import published_steps  # noqa: E402


def main() -> None:
    print("| run | layout (ours: knobs not published) | published | ours | published/ours |")
    print("|---|---|---|---|---|")
    for r in published_steps(compute_efficiency=1.0):
        step = r.step
        if r.published_tflops_per_chip is not None:   # Megatron: TFLOP/s by its formula
            ours = r.flops_ratio * step.model_flops_per_step / step.seconds / step.layout.chips / 1e12
            print(f"| {r.label} | {step.layout} | {r.published_tflops_per_chip:.0f} TFLOP/s | "
                  f"{ours:.0f} TFLOP/s | {r.published_tflops_per_chip / ours:.2f} |")
        else:
            print(f"| {r.label} | {step.layout} | MFU {r.published_mfu:.1%} | MFU {step.mfu:.1%} | "
                  f"{r.published_mfu / step.mfu:.2f} |")


if __name__ == "__main__":
    main()
