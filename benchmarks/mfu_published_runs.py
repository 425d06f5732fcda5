"""Predicted MFU (accelkit.mfu) against published runs: prints the table in docs/mfu.md.

Each run at its published degrees, batch and sequence; knobs a paper leaves out (micro-batch,
interleaving, recomputation) take the fastest choice that fits. MFU counts model FLOPs only;
Megatron's rows are its published TFLOP/s per GPU over the A100's 312 TFLOP/s bf16 peak (its
FLOP formula, not ours: see docs/mfu.md). tests/test_mfu.py asserts the bands.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/mfu_published_runs.py
"""

from __future__ import annotations

from accelkit import mfu, models
from accelkit.parallel import TrainStep
from accelkit.published import (MAXTEXT_V5P, MEGATRON_SC21, fastest_fitting_step, maxtext_model,
                                megatron_gpt)

M = 2**20
# The five Table 1 rows docs/mfu.md shows.
MEGATRON = [r for r in MEGATRON_SC21 if r.params_billion in (1.7, 18.4, 145.6, 529.6, 1008.0)]
MAXTEXT = MAXTEXT_V5P


def fastest(model: object, chip: str, degrees: dict, batch: int, mbs: tuple, vs: tuple,
            rcs: tuple, efficiency: float | str = "predicted") -> TrainStep:
    return fastest_fitting_step(model, chip, degrees, batch, mbs, vs, rcs,  # type: ignore[arg-type]
                                compute_efficiency=efficiency)


def runs() -> list[tuple[str, TrainStep, float, float]]:
    """(label, predicted step, published MFU, Megatron FLOPs/ours FLOPs or 1.0)."""
    out = []
    s = 2048
    for row in MEGATRON:
        p, l, h, tp, pp, g = row.params_billion, row.layers, row.hidden, row.tp, row.pp, row.gpus
        b, tf = row.batch_sequences, row.tflops_per_gpu
        model = megatron_gpt(row)
        step = fastest(model, "A100", dict(dp=g // (tp * pp), tp=tp, pp=pp), b * s,
                       (s, 2 * s, 4 * s, 8 * s), (1, 2, 4), ("full",))
        meg = 96 * b * s * l * h * h * (1 + s / (6 * h) + 51200 / (16 * l * h))
        out.append((f"Megatron-LM GPT {p}B, {g:,} A100", step, tf * 1e12 / 312e12,
                    meg / step.model_flops_per_step))
    step = fastest("palm-540b", "TPU v4", dict(dp=2, fsdp=256, tp=12), 2048 * 2048,
                   (2048, 4096, 8192), (1,), ("none", "selective", "full"))
    out.append(("PaLM 540B, 6,144 TPU v4", step, 0.462, 1.0))
    for g, dp, published in ((8192, 64, 0.43), (16384, 128, 0.41)):
        step = fastest("llama-3.1-405b", "H100", dict(dp=dp, tp=8, pp=16), 16 * M, (8192,),
                       (1, 2, 4), ("none", "selective", "full"))
        out.append((f"Llama 3 405B, {g:,} H100", step, published, 1.0))
    for scale, cores, tp, pdbs, published in MAXTEXT:
        chips_n = cores // 2
        model = maxtext_model(scale)
        batch = chips_n * pdbs * 2048
        step = fastest(model, "TPU v5p", dict(fsdp=chips_n // tp, tp=tp), batch,
                       (None,), (1,), ("none", "selective", "full"))
        out.append((f"MaxText {scale}B, v5p-{cores} ({chips_n} chips)", step, published, 1.0))
    return out


def main() -> None:
    print("| run | layout | published MFU | matmuls | compute | predicted MFU | "
          "published/predicted |")
    print("|---|---|---|---|---|---|---|")
    for label, step, published, flops_ratio in runs():
        lay = step.layout
        eff = mfu.step_efficiency(step.model if not step.model.startswith(("megatron", "maxtext"))
                                  else _model_of(label), step.chip, lay, step.batch_tokens)
        predicted = step.mfu * flops_ratio
        print(f"| {label} | {lay} | {published:.1%} | {eff.matmul_efficiency:.1%} | "
              f"{eff.efficiency:.1%} | {predicted:.1%} | {published / predicted:.2f} |")


def _model_of(label: str) -> models.Model:
    for row in MEGATRON:
        if label.startswith(f"Megatron-LM GPT {row.params_billion}B"):
            return megatron_gpt(row)
    for scale, *_ in MAXTEXT:
        if label.startswith(f"MaxText {scale}B"):
            return maxtext_model(scale)
    raise KeyError(label)


if __name__ == "__main__":
    main()
