"""What lower precision is known to cost in model quality, with sources (the course prices
precision's speed elsewhere: :meth:`accelkit.chips.Chip.peak_flops`, :mod:`accelkit.dtypes`).

    >>> import accelkit as ak
    >>> r = ak.quality.get("fp8-block")
    >>> r.formats, r.verdict
    ('fp8 (E4M3)', 'matches')
    >>> [x.name for x in ak.quality.recipes(verdict="hurts")]
    ['int8-activations-naive', 'kv-int4-per-token-keys']
    >>> [x.name for x in ak.quality.for_chip("TPU v5p")]
    ['int8-aqt']

Each :class:`Recipe` is a published way of computing or storing in fewer bits: which tensors it
quantizes (weights, activations, gradients, the KV cache), how it scales them (per tensor, per
block of values, per channel), what the source reports it costs in quality (``verdict``:
"matches" the 16-bit baseline within the source's noise, "small loss", or "hurts": a known
failure), and the condition that verdict rests on. These are reported results on the models
the sources tested, not guarantees for another model; the course does not model accuracy.
Nothing here is computed: it is a table to print, and a filter by what a chip's peaks support.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelkit import _validate, chips

__all__ = ["PHASES", "Recipe", "VERDICTS", "for_chip", "get", "names", "recipes"]

#: Training or inference.
PHASES = ("training", "inference")
#: What the source reports.
VERDICTS = ("matches", "small loss", "hurts")


@dataclass(frozen=True)
class Recipe:
    """One published low-precision recipe and what it is reported to cost in quality."""

    name: str
    phase: str            # "training" or "inference"
    formats: str          # the narrow format(s)
    peak_dtype: str       # the catalog precision whose peak it runs at ("" for storage only)
    tensors: str          # what is quantized
    scaling: str          # how scales are chosen
    verdict: str          # one of VERDICTS
    quality: str          # what the source reports
    condition: str        # what the verdict depends on
    hardware: str         # where it runs natively
    source: str
    vendors: tuple[str, ...] = ()  # vendors whose chips run it natively (() = any)
    needs: tuple[str, ...] = ()    # catalog precisions whose dense peak must beat bf16


_RECIPES = (
    Recipe("fp8-tensor-delayed", "training", "fp8 (E4M3 forward, E5M2 gradients)", "fp8",
           "weights, activations and gradients of the matmuls",
           "one scale per tensor, from the amax history of earlier steps (delayed scaling)",
           "matches", "FP8 training matched the 16-bit runs' quality for GPT models up to 175B "
           "parameters", "master weights, optimizer state and non-matmul ops stay in higher "
           "precision; a tensor whose range jumps between steps overflows its stale scale",
           "NVIDIA H100/H200 and later (Transformer Engine)",
           "Micikevicius et al. 2022, 'FP8 Formats for Deep Learning', arXiv:2209.05433",
           vendors=("NVIDIA",), needs=("fp8",)),
    Recipe("fp8-block", "training", "fp8 (E4M3)", "fp8",
           "activations per 1x128 tile, weights per 128x128 block; gradients too",
           "fine-grained: one scale per tile/block, computed online; higher-precision "
           "accumulation every 128 products", "matches",
           "DeepSeek-V3's FP8 training kept its loss within 0.25% (relative) of a BF16 baseline",
           "per-tensor scaling is what fails: activation outliers force a scale that crushes "
           "the other values, which is why the blocks are small",
           "NVIDIA H800 (DeepSeek-V3); Blackwell adds hardware block scaling",
           "DeepSeek-AI 2024, 'DeepSeek-V3 Technical Report', arXiv:2412.19437 §3.3",
           vendors=("NVIDIA",), needs=("fp8",)),
    Recipe("mxfp8", "training", "MXFP8 (E4M3/E5M2 elements)", "fp8",
           "weights, activations and gradients of the matmuls",
           "one shared power-of-two (E8M0) scale per block of 32 values, in hardware",
           "matches", "the MX formats' authors report MXFP8 training at the quality of the "
           "higher-precision baseline on the models they tested, with no recipe change",
           "32-value blocks follow outliers that a per-tensor scale cannot",
           "NVIDIA Blackwell (B200, GB200) tensor cores; the OCP Microscaling spec v1.0",
           "Rouhani et al. 2023, 'Microscaling Data Formats for Deep Learning', "
           "arXiv:2310.10537; OCP Microscaling Formats (MX) v1.0 specification",
           vendors=("NVIDIA", "AMD"), needs=("fp8", "fp4")),
    Recipe("nvfp4", "training", "NVFP4 (E2M1 elements)", "fp4",
           "weights, activations and gradients of most matmuls",
           "one E4M3 scale per block of 16 values plus one fp32 scale per tensor",
           "small loss", "a 12B model pre-trained on 10T tokens in NVFP4 reached loss and "
           "downstream accuracy close to its FP8 baseline",
           "needs its full recipe: a few layers kept in BF16, random Hadamard transforms on "
           "weight gradients, stochastic rounding of gradients; without them it degrades",
           "NVIDIA Blackwell (B200, GB200)",
           "NVIDIA 2025, 'Pretraining Large Language Models with NVFP4', arXiv:2509.25149",
           vendors=("NVIDIA",), needs=("fp4",)),
    Recipe("int8-aqt", "training", "int8", "int8",
           "weights and activations of the matmuls (forward and backward)",
           "per-channel / per-tensor int8 scales chosen in the training graph (Accurate "
           "Quantized Training)", "matches",
           "int8 training on TPU reached the same quality targets as bf16: Google's MLPerf "
           "Training v4.0 GPT-3 175B submissions on v5p ran in int8 and, like every MLPerf "
           "result, met the benchmark's quality target",
           "gradients' accumulation and the optimizer stay in higher precision",
           "Google TPU v5e, v5p (int8 MXU peaks)",
           "google/aqt (Accurate Quantized Training, JAX); mlcommons/training_results_v4.0 "
           "Google GPT-3 submissions (validation/mlperf.json: precision int8)",
           vendors=("Google",), needs=("int8",)),
    Recipe("int4-weights", "inference", "int4 weights, 16-bit activations", "",
           "weights only", "per-group scales (e.g. 128 weights), error-compensating rounding",
           "small loss", "GPTQ quantized 175B-parameter GPT models to 3-4 bits per weight "
           "with negligible accuracy loss; AWQ keeps the 1% salient channels' scale",
           "larger models lose less; small models and 3 bits lose more",
           "any GPU or TPU (weights are dequantized before the matmul)",
           "Frantar et al. 2022, GPTQ, arXiv:2210.17323; Lin et al. 2023, AWQ, "
           "arXiv:2306.00978"),
    Recipe("int8-activations-naive", "inference", "int8 weights and activations", "int8",
           "activations per tensor", "one scale per activation tensor", "hurts",
           "from about 6.7B parameters on, transformers grow outlier features in a few "
           "hidden dimensions; naive int8 activation quantization then collapses accuracy",
           "fixed by keeping the outlier dimensions in 16 bits (LLM.int8()) or moving the "
           "range into the weights (SmoothQuant's W8A8 matches FP16)",
           "any int8 matrix unit",
           "Dettmers et al. 2022, LLM.int8(), arXiv:2208.07339; Xiao et al. 2022, "
           "SmoothQuant, arXiv:2211.10438",
           vendors=(), needs=("int8",)),
    Recipe("kv-int4-per-token-keys", "inference", "int4 KV cache", "",
           "keys and values, one scale per token", "per-token scales for the keys", "hurts",
           "keys have outlier channels, so per-token key scales lose them: low-bit caches "
           "quantized this way degrade quality",
           "per-channel key scales (before RoPE) and per-token value scales fix it",
           "any (the cache is dequantized before attention)",
           "Hooper et al. 2024, KVQuant, arXiv:2401.18079; Liu et al. 2024, KIVI, "
           "arXiv:2402.02750"),
    Recipe("kv-low-bit-per-channel-keys", "inference", "2-4 bit KV cache", "",
           "keys per channel, values per token",
           "per-channel key scales (pre-RoPE in KVQuant), per-token value scales",
           "small loss", "KVQuant reports under 0.1 perplexity degradation at 3 bits on "
           "LLaMA models; KIVI keeps quality at 2 bits",
           "a few recent tokens (or outliers) kept in full precision",
           "any (the cache is dequantized before attention)",
           "Hooper et al. 2024, KVQuant, arXiv:2401.18079; Liu et al. 2024, KIVI, "
           "arXiv:2402.02750"),
)
_BY_NAME = {r.name: r for r in _RECIPES}


def names() -> tuple[str, ...]:
    """Every recipe's name, in table order (training first)."""
    return tuple(r.name for r in _RECIPES)


def get(name: str) -> Recipe:
    """One recipe by name.

    Raises:
        ValueError: an unknown name (the message lists them).
    """
    return _BY_NAME[_validate.choice("name", name, names())]


def recipes(*, phase: str | None = None, verdict: str | None = None) -> tuple[Recipe, ...]:
    """The recipes, optionally only one ``phase`` (:data:`PHASES`) or ``verdict``
    (:data:`VERDICTS`).

    Raises:
        ValueError: an unknown phase or verdict.
    """
    if phase is not None:
        phase = _validate.choice("phase", phase, PHASES)
    if verdict is not None:
        verdict = _validate.choice("verdict", verdict, VERDICTS)
    return tuple(r for r in _RECIPES if (phase is None or r.phase == phase)
                 and (verdict is None or r.verdict == verdict))


def for_chip(chip: str | chips.Chip, phase: str = "training") -> tuple[Recipe, ...]:
    """The ``phase`` recipes ``chip`` runs natively: its vendor is one the recipe was published
    on, and each precision the recipe computes in has a dense peak above the chip's bf16 peak
    (a chip with an fp4 peak stands for the generation whose tensor cores apply MX block
    scales: Blackwell, CDNA 4). Storage-only recipes (int4 weights, low-bit KV caches) need no
    peak and are not listed: they run anywhere.

    Raises:
        ValueError: an unknown chip or phase.
    """
    the_chip = chips.get(chip)
    phase = _validate.choice("phase", phase, PHASES)
    bf16 = the_chip.peak_flops("bf16")
    fast = {d for d, v in the_chip.peaks().items() if v > bf16}
    return tuple(r for r in recipes(phase=phase)
                 if r.needs and set(r.needs) <= fast
                 and (not r.vendors or the_chip.vendor in r.vendors))
