"""Fully specified published training runs, as the library checks itself against them.

One place for the figures that tests/test_parallel.py, tests/test_mfu.py and the benchmarks
benchmarks/parallel_published_runs.py and benchmarks/mfu_published_runs.py all read:

* ``MEGATRON_SC21``: Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
  Clusters Using Megatron-LM", SC'21 (arXiv:2104.04473), Table 1: each GPT's size, heads, hidden
  size, layers, tensor- and pipeline-parallel degrees, GPU count (A100), global batch in
  sequences of 2,048 tokens, and the achieved TFLOP/s per GPU.
* ``MAXTEXT_V5P``: MaxText's README table for TPU v5p (AI-Hypercomputer/maxtext,
  MaxText/configs/v5p/{32b,128b}.sh): parameter scale, the TensorCore count in the slice name
  (v5p-128 is 64 chips: two TensorCores per chip), ICI tensor parallelism, per-device batch and
  the reported MFU.

and the two things every comparison needs: the paper's model built from its shape
(:func:`megatron_gpt`, :func:`maxtext_model`) and the fastest fitting step over the knobs a paper
leaves unstated (:func:`fastest_fitting_step`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from accelkit import models
from accelkit.parallel import Layout, TrainStep, train_step


@dataclass(frozen=True)
class MegatronRun:
    """One row of Megatron-LM SC'21 Table 1 (A100 GPUs, sequences of 2,048 tokens)."""
    params_billion: float
    heads: int
    hidden: int
    layers: int
    tp: int
    pp: int
    gpus: int
    batch_sequences: int
    tflops_per_gpu: float


MEGATRON_SC21: tuple[MegatronRun, ...] = tuple(MegatronRun(*row) for row in (
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137), (3.6, 32, 3072, 30, 2, 1, 64, 512, 138),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142), (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138), (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148), (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163),
))

#: MaxText v5p runs: (parameter scale in billions, TensorCores in the slice name, ICI tensor
#: parallelism, per-device batch, reported MFU).
MAXTEXT_V5P: tuple[tuple[int, int, int, int, float], ...] = (
    (32, 128, 4, 7, 0.7147), (128, 256, 8, 1, 0.6868))

#: Megatron's sequence length (SC'21 §5.1).
MEGATRON_SEQ_LEN = 2048


def megatron_gpt(run: MegatronRun) -> models.Transformer:
    """The paper's GPT for one Table 1 row: d_ff = 4h, vocabulary 51,200, sequence 2,048,
    learned positions, biases, tied embeddings."""
    return models.Transformer(
        name=f"megatron-gpt-{run.params_billion}b", display_name="", family="transformer",
        aliases=(), published_params=run.params_billion * 1e9,
        source="arXiv:2104.04473 Table 1", layers=run.layers, d_model=run.hidden,
        heads=run.heads, kv_heads=run.heads, head_dim=run.hidden // run.heads,
        d_ff=4 * run.hidden, vocab=51200, gated_mlp=False, tied_embeddings=True,
        norm="layernorm", biases=True, position="learned", seq_len=MEGATRON_SEQ_LEN)


def maxtext_model(scale: int) -> models.Transformer:
    """MaxText's ``global_parameter_scale`` model (base.yml: embedding 2048, 16 heads of 128,
    MLP 7168, 16 layers, vocabulary 32,000, SwiGLU; pyconfig.get_individual_scales doubles heads
    and MLP, then embedding, then layers, per factor of two)."""
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


def fastest_fitting_step(model: str | models.Model, chip: str, degrees: dict[str, int],
                         batch_tokens: int, microbatches: tuple[int | None, ...],
                         interleaves: tuple[int, ...], recomputes: tuple[str, ...],
                         compute_efficiency: float | str = 1.0) -> TrainStep:
    """The fastest step that fits at the published ``degrees``, over the knobs the paper does
    not state (micro-batch tokens, interleaving, recomputation). Combinations the layout rules
    refuse are skipped.

    Raises:
        ValueError: when no combination fits.
    """
    best: TrainStep | None = None
    for mb, v, rc in itertools.product(microbatches, interleaves, recomputes):
        try:
            layout = Layout(dp=degrees.get("dp", 1), fsdp=degrees.get("fsdp", 1),
                            tp=degrees.get("tp", 1), pp=degrees.get("pp", 1),
                            ep=degrees.get("ep", 1), microbatch_tokens=mb, interleave=v,
                            recompute=rc)
            step = train_step(model, chip, layout, batch_tokens,
                              compute_efficiency=compute_efficiency)
        except ValueError:
            continue
        if step.fits and (best is None or step.seconds < best.seconds):
            best = step
    if best is None:
        raise ValueError(f"no layout with degrees {degrees} fits {chip} for this model")
    return best


__all__ = ["MAXTEXT_V5P", "MEGATRON_SC21", "MEGATRON_SEQ_LEN", "MegatronRun", "fastest_fitting_step",
           "maxtext_model", "megatron_gpt"]
