"""Predicted MFU (accelkit.mfu) against published runs: prints the table in docs/mfu.md.

Each run at its published degrees, batch and sequence; knobs a paper leaves out (micro-batch,
interleaving, recomputation) take the fastest choice that fits. MFU counts model FLOPs only;
Megatron's rows are its published TFLOP/s per GPU over the A100's 312 TFLOP/s bf16 peak (its
FLOP formula, not ours: see docs/mfu.md). tests/test_mfu.py asserts the bands.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/mfu_published_runs.py
"""

from __future__ import annotations

import itertools

from accelkit import mfu, models
from accelkit.parallel import Layout, TrainStep, train_step

M = 2**20
# arXiv:2104.04473 Table 1: params (B), heads, hidden, layers, TP, PP, GPUs, batch, TFLOP/s
MEGATRON = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137), (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148), (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163),
]


def megatron_gpt(params: float, heads: int, hidden: int, layers: int) -> models.Transformer:
    return models.Transformer(
        name=f"megatron-gpt-{params}b", display_name="", family="transformer", aliases=(),
        published_params=params * 1e9, source="arXiv:2104.04473 Table 1", layers=layers,
        d_model=hidden, heads=heads, kv_heads=heads, head_dim=hidden // heads, d_ff=4 * hidden,
        vocab=51200, gated_mlp=False, tied_embeddings=True, norm="layernorm", biases=True,
        position="learned", seq_len=2048)


def maxtext_model(scale: int) -> models.Transformer:
    """MaxText's global_parameter_scale models (base.yml: emb 2048, 16 heads of 128, MLP 7168,
    16 layers, vocab 32,000, SwiGLU; pyconfig.get_individual_scales doubles heads and MLP,
    then embedding, then layers)."""
    log2 = scale.bit_length() - 1
    base, rem = divmod(log2, 3)
    heads_s, emb_s, layer_s = base + (rem > 0), base + (rem > 1), base
    heads = 16 * 2**heads_s
    return models.Transformer(
        name=f"maxtext-{scale}b", display_name="", family="transformer", aliases=(),
        published_params=scale * 1e9, source="AI-Hypercomputer/maxtext", layers=16 * 2**layer_s,
        d_model=2048 * 2**emb_s, heads=heads, kv_heads=heads, head_dim=128,
        d_ff=7168 * 2**heads_s, vocab=32000, gated_mlp=True, tied_embeddings=False,
        norm="rmsnorm", biases=False, position="rope", seq_len=2048)


# MaxText README, TPU v5p table; MaxText/configs/v5p/{32b,128b}.sh: scale, TensorCores in the
# name (v5p-128 = 64 chips), ici_tensor_parallelism, per_device_batch_size, MFU.
MAXTEXT = [(32, 128, 4, 7, 0.7147), (128, 256, 8, 1, 0.6868)]


def fastest(model: object, chip: str, degrees: dict, batch: int, mbs: tuple, vs: tuple,
            rcs: tuple, efficiency: object = "predicted") -> TrainStep:
    best = None
    for mb, v, rc in itertools.product(mbs, vs, rcs):
        try:
            layout = Layout(**degrees, microbatch_tokens=mb, interleave=v, recompute=rc)
            step = train_step(model, chip, layout, batch,  # type: ignore[arg-type]
                              compute_efficiency=efficiency)  # type: ignore[arg-type]
        except ValueError:
            continue
        if step.fits and (best is None or step.seconds < best.seconds):
            best = step
    assert best is not None
    return best


def runs() -> list[tuple[str, TrainStep, float, float]]:
    """(label, predicted step, published MFU, Megatron FLOPs/ours FLOPs or 1.0)."""
    out = []
    s = 2048
    for p, a, h, l, tp, pp, g, b, tf in MEGATRON:
        model = megatron_gpt(p, a, h, l)
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
    for p, a, h, l, *_ in MEGATRON:
        if label.startswith(f"Megatron-LM GPT {p}B"):
            return megatron_gpt(p, a, h, l)
    for scale, *_ in MAXTEXT:
        if label.startswith(f"MaxText {scale}B"):
            return maxtext_model(scale)
    raise KeyError(label)


if __name__ == "__main__":
    main()
