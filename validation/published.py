"""Fully specified published training runs, as the library is checked against them.

Evidence, not model: this lives in the repository's ``validation/`` folder, outside the
``accelkit`` package (the package ships the model, the repository ships the runs it is checked
against). One place for the figures that validation/run.py (the validation table,
docs/validation.md), tests/test_parallel.py, tests/test_mfu.py and the scripts
validation/parallel_published_runs.py and validation/mfu_published_runs.py all read:

* ``MEGATRON_SC21``: Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
  Clusters Using Megatron-LM", SC'21 (arXiv:2104.04473), Table 1: each GPT's size, heads, hidden
  size, layers, tensor- and pipeline-parallel degrees, GPU count (A100), global batch in
  sequences of 2,048 tokens, and the achieved TFLOP/s per GPU.
* ``MAXTEXT_V5P``: MaxText's README table for TPU v5p (AI-Hypercomputer/maxtext,
  MaxText/configs/v5p/{32b,128b}.sh): parameter scale, the TensorCore count in the slice name
  (v5p-128 is 64 chips: two TensorCores per chip), ICI tensor parallelism, per-device batch and
  the reported MFU.

and the things every comparison needs: the paper's model built from its shape
(:func:`megatron_gpt`, :func:`maxtext_model`), the fastest fitting step over the knobs a paper
leaves unstated (:func:`fastest_fitting_step`), Megatron's own FLOP count
(:func:`megatron_paper_flops`), each Table 1 row's step (:func:`megatron_step`), and the one
set of runs both scripts tabulate (:func:`published_steps`).
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
    # the run's own launch configuration (MEGATRON_SC21_SCRIPT): micro-batch in sequences,
    # layers per virtual pipeline stage (0: no interleaving), DDP implementation
    microbatch_sequences: int = 1
    layers_per_virtual_stage: int = 0
    ddp: str = "local"

    @property
    def interleave(self) -> int:
        """Virtual stages per pipeline rank: layers / (pp x layers per virtual stage)."""
        if not self.layers_per_virtual_stage:
            return 1
        return self.layers // (self.pp * self.layers_per_virtual_stage)


#: Where each Table 1 row's micro-batch, interleaving and DDP implementation come from: the
#: paper's reproduction scripts in Megatron-LM, with --fp16 --checkpoint-activations for all.
MEGATRON_SC21_SCRIPT = ("NVIDIA/Megatron-LM@de7dc40f (2021-08-10, 'scripts for sc21') "
                        "examples/sc21/run_table_1.sh (MBS, --num-layers-per-virtual-pipeline-"
                        "stage, DDP) and examples/sc21/CONFIG.sh (--fp16 --loss-scale 8192, no "
                        "--accumulate-allreduce-grads-in-fp32)")

MEGATRON_SC21: tuple[MegatronRun, ...] = tuple(MegatronRun(*row) for row in (
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137, 16, 0, "torch"),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138, 16, 0, "torch"),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142, 16, 0, "torch"),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135, 8, 0, "torch"),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138, 4, 0, "local"),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140, 2, 5, "local"),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148, 2, 5, "local"),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155, 1, 3, "local"),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163, 1, 1, "local"),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163, 1, 0, "local"),
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


def megatron_paper_flops(run: MegatronRun, seq: int = MEGATRON_SEQ_LEN) -> float:
    """FLOPs per step as Megatron-LM SC'21 counts them (its eq. 3, with activation
    recomputation): ``96 B s l h² (1 + s/(6h) + V/(16 l h))`` for batch ``B`` sequences of ``s``
    tokens, ``l`` layers, hidden size ``h`` and vocabulary ``V`` = 51,200. Its TFLOP/s per GPU
    are this over the step time; it differs from accelkit's model-FLOPs count (see docs/mfu.md)."""
    b, l, h = run.batch_sequences, run.layers, run.hidden
    return 96.0 * b * seq * l * h * h * (1 + seq / (6 * h) + 51200 / (16 * l * h))


#: The Megatron Table 1 rows docs/parallel.md and docs/mfu.md tabulate (the tests and the
#: validation table have all ten).
MEGATRON_SHOWN = (1.7, 18.4, 145.6, 529.6, 1008.0)
#: Sources of the published figures, by run family.
SOURCES = {
    "Megatron": "Narayanan et al., SC'21 (arXiv:2104.04473) Table 1: TFLOP/s per A100 by its "
                "FLOP formula (eq. 3, with recomputation)",
    "PaLM": "Chowdhery et al. 2022 (arXiv:2204.02311) Table 3 and section 4: MFU 46.2% on 6,144 "
            "TPU v4, 12-way model parallel, 256-way FSDP, 2 pods",
    "Llama 3": "Llama Team 2024, 'The Llama 3 Herd of Models' (arXiv:2407.21783) Table 4: BF16 "
               "MFU 43% (8,192 GPUs) and 41% (16,384), TP 8, PP 16; the long-context stage 38% "
               "(16,384 GPUs, TP 8, CP 16, PP 16, sequences of 131,072, 16M tokens per batch; "
               "the table's DP 4 does not multiply to 16,384 GPUs nor give 16M tokens, DP 8 "
               "does both and is used)",
    "MaxText": "AI-Hypercomputer/maxtext README (Runtime Performance Results) and "
               "MaxText/configs/v5p/{32b,128b}.sh: reported MFU on TPU v5p",
}


@dataclass(frozen=True)
class PublishedStep:
    """One published run and accelkit's step at its published degrees.

    ``published_mfu`` is the run's reported MFU, or for Megatron its TFLOP/s per GPU over the
    A100's 312 TFLOP/s bf16 peak (its FLOP formula). ``flops_ratio`` is the run's FLOPs per step
    over accelkit's model FLOPs (1.0 where the run reports MFU itself), so ``step.mfu *
    flops_ratio`` is comparable with ``published_mfu``."""
    label: str
    model: models.Model | str
    step: TrainStep
    published_mfu: float
    flops_ratio: float
    published_tflops_per_chip: float | None = None


#: The framework each run family ran (accelkit.frameworks; a property of the published run).
FRAMEWORKS = {"Megatron": "megatron-2021", "PaLM": "pax-2022", "Llama 3": "meta-llama3",
              "MaxText": "maxtext-readme"}


def megatron_step(row: MegatronRun, compute_efficiency: float | str = 1.0) -> PublishedStep:
    """A Megatron-LM SC'21 Table 1 row at its published degrees on A100s: full recomputation
    (section 3.5), and the micro-batch, interleaving and DDP implementation its reproduction
    script launches it with (:data:`MEGATRON_SC21_SCRIPT`): torch DDP overlaps the gradient
    all-reduce with the last micro-batch's backward pass, Megatron's local DDP runs it after."""
    s = MEGATRON_SEQ_LEN
    model = megatron_gpt(row)
    framework = FRAMEWORKS["Megatron"] + ("-torch-ddp" if row.ddp == "torch" else "")
    step = fastest_fitting_step(
        model, "A100", dict(dp=row.gpus // (row.tp * row.pp), tp=row.tp, pp=row.pp),
        row.batch_sequences * s, (row.microbatch_sequences * s,), (row.interleave,), ("full",),
        compute_efficiency=compute_efficiency, framework=framework)
    return PublishedStep(
        f"Megatron-LM GPT {row.params_billion}B, {row.gpus:,} A100", model, step,
        row.tflops_per_gpu * 1e12 / 312e12, megatron_paper_flops(row) / step.model_flops_per_step,
        float(row.tflops_per_gpu))


def published_steps(compute_efficiency: float | str = 1.0) -> list[PublishedStep]:
    """Megatron-LM SC'21 (the :data:`MEGATRON_SHOWN` rows, A100), PaLM 540B (6,144 TPU v4,
    MFU 46.2%, PaLM Table 3), Llama 3 405B (8,192 and 16,384 H100, MFU 43% and 41%, Llama 3
    paper Table 4) and MaxText's v5p runs, each at its published degrees and batch, the
    unstated knobs taking the fastest choice that fits, at ``compute_efficiency``."""
    out = [megatron_step(row, compute_efficiency)
           for row in MEGATRON_SC21 if row.params_billion in MEGATRON_SHOWN]
    # PaLM rematerialised: its HFU (57.8%) over its MFU (46.2%) is 1.25, so the run executed
    # about a quarter more FLOPs than the model's: full recomputation (4/3) is the nearest
    step = fastest_fitting_step("palm-540b", "TPU v4", dict(dp=2, fsdp=256, tp=12), 2048 * 2048,
                                (2048, 4096, 8192), (1,), ("full",),
                                compute_efficiency=compute_efficiency,
                                framework=FRAMEWORKS["PaLM"])
    out.append(PublishedStep("PaLM 540B, 6,144 TPU v4", "palm-540b", step, 0.462, 1.0))
    for gpus, dp, published in ((8192, 64, 0.43), (16384, 128, 0.41)):
        step = fastest_fitting_step("llama-3.1-405b", "H100", dict(dp=dp, tp=8, pp=16), 16 * 2**20,
                                    (8192,), (1, 2, 4), ("none", "selective", "full"),
                                    compute_efficiency=compute_efficiency,
                                    framework=FRAMEWORKS["Llama 3"])
        out.append(PublishedStep(f"Llama 3 405B, {gpus:,} H100", "llama-3.1-405b", step, published, 1.0))
    out.append(llama3_long_context_step(compute_efficiency))
    for scale, cores, tp, per_device_batch, published in MAXTEXT_V5P:
        chips_n = cores // 2
        model = maxtext_model(scale)
        step = fastest_fitting_step(model, "TPU v5p", dict(fsdp=chips_n // tp, tp=tp),
                                    chips_n * per_device_batch * 2048, (None,), (1,),
                                    ("none", "selective", "full"),
                                    compute_efficiency=compute_efficiency,
                                    framework=FRAMEWORKS["MaxText"])
        out.append(PublishedStep(f"MaxText {scale}B, v5p-{cores} ({chips_n} chips)", model, step,
                                 published, 1.0))
    return out


#: Llama 3's long-context stage (arXiv:2407.21783 Table 4, third row; §3.3.2 for CP).
LLAMA3_LONG_SEQ_LEN = 131072


def llama3_long_context_step(compute_efficiency: float | str = 1.0) -> PublishedStep:
    """Llama 3 405B's 131,072-token stage on 16,384 H100: TP 8, CP 16, PP 16 and DP 8 (see
    SOURCES["Llama 3"] for why 8, not the table's 4), 16M tokens per step, published MFU 38%;
    micro-batch one sequence (whatever else could not fit a pipeline of 16 stages), the
    interleaving and recomputation unpublished, so the fastest that fits."""
    s = LLAMA3_LONG_SEQ_LEN
    step = fastest_fitting_step("llama-3.1-405b", "H100", dict(dp=8, tp=8, cp=16, pp=16),
                                16 * 2**20, (s,), (1, 2, 4), ("none", "selective", "full"),
                                compute_efficiency=compute_efficiency, seq_len=s,
                                framework=FRAMEWORKS["Llama 3"])
    return PublishedStep("Llama 3 405B long context (131,072 tokens, CP 16), 16,384 H100",
                         "llama-3.1-405b", step, 0.38, 1.0)


def fastest_fitting_step(model: str | models.Model, chip: str, degrees: dict[str, int],
                         batch_tokens: int, microbatches: tuple[int | None, ...],
                         interleaves: tuple[int, ...], recomputes: tuple[str, ...],
                         compute_efficiency: float | str = 1.0,
                         seq_len: int | None = None,
                         framework: str | None = None) -> TrainStep:
    """The fastest step that fits at the published ``degrees``, over the knobs the paper does
    not state (micro-batch tokens, interleaving, recomputation). Choices that cannot apply are
    skipped: a micro-batch that does not divide a replica's share of the batch, interleaving
    without a pipeline or beyond the layers. Any other refusal of the layout is an error in the
    run's figures and is raised, not skipped.

    Raises:
        ValueError: when no combination fits (or the published degrees are refused).
    """
    the_model = models.get(model)
    layers = int(the_model.layers)  # type: ignore[attr-defined]
    pp = degrees.get("pp", 1)
    replica = batch_tokens // (degrees.get("dp", 1) * degrees.get("fsdp", 1)
                               * degrees.get("ep", 1))
    best: TrainStep | None = None
    for mb, v, rc in itertools.product(microbatches, interleaves, recomputes):
        if mb is not None and replica % mb:
            continue  # the micro-batch does not divide the replica's batch
        if v > 1 and (pp == 1 or pp * v > layers):
            continue  # interleaving needs a pipeline, at most one layer per virtual stage
        layout = Layout(dp=degrees.get("dp", 1), fsdp=degrees.get("fsdp", 1),
                        tp=degrees.get("tp", 1), pp=pp, ep=degrees.get("ep", 1),
                        microbatch_tokens=mb, interleave=v, recompute=rc,
                        cp=degrees.get("cp", 1))
        step = train_step(the_model, chip, layout, batch_tokens, seq_len=seq_len,
                          compute_efficiency=compute_efficiency, framework=framework)
        if step.fits and (best is None or step.seconds < best.seconds):
            best = step
    if best is None:
        raise ValueError(f"no layout with degrees {degrees} fits {chip} for this model")
    return best


__all__ = ["FRAMEWORKS", "LLAMA3_LONG_SEQ_LEN", "MAXTEXT_V5P", "MEGATRON_SC21", "MEGATRON_SC21_SCRIPT",
           "MEGATRON_SEQ_LEN", "MEGATRON_SHOWN", "MegatronRun",
           "llama3_long_context_step",
           "PublishedStep", "SOURCES", "fastest_fitting_step", "maxtext_model", "megatron_gpt",
           "megatron_paper_flops", "megatron_step", "published_steps"]
