"""Activation memory: what a transformer keeps from its forward pass for the backward pass.

    >>> from accelkit import activations
    >>> h, a, s = 12288, 96, 2048  # GPT-3 175B: d_model, heads, sequence
    >>> activations.activation_bytes_per_token_per_layer("gpt-3-175b", "none", dropout=True) == (
    ...     34 * h + 5 * a * s)
    True

The model follows Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models", arXiv:2205.05198, §4), generalised to the real tensor widths: per layer and
token, in bf16 (2 bytes a value), with sequence parallelism dividing everything by tp,

* ``"none"``: every tensor the backward pass reads: the two norm inputs (2·d each), the QKV input
  (2·d), Q, K and V (2 bytes × their widths: a·head_dim, kv_heads·head_dim ×2), the attention
  output (2·a·head_dim), the MLP input (2·d), its up-projection outputs (2·d_ff, twice for a gated
  MLP) and activation output (2·d_ff); plus the attention scores, 2·a·s (5·a·s with dropout:
  scores, mask and dropped scores). For GPT-3's shape with dropout this is Korthikanti's
  34·s·b·h + 5·a·s²·b (tested). With a fused (FlashAttention-style) attention kernel the
  scores never reach HBM, so "none" keeps what "selective" keeps (``of(fused_attention=True)``). An MoE layer stores its k (+ shared) experts' widths per token.
* ``"selective"``: the same without the attention scores (recomputed; FlashAttention does this).
* ``"full"``: only each layer's input (2·d, the checkpoint), plus one layer's full set while it
  is recomputed (the working set).

A pipeline stage holds its layers' activations for the micro-batches in flight
(:func:`stage_bytes`): under 1F1B, pipeline rank r holds min(pp - r, m) micro-batches; under the
interleaved schedule (v chunks a chip) min(2·(pp-r-1) + (v-1)·pp + 1, m·v) chunk passes, each a
1/v of the stage, as Megatron-core's warm-up counts them (NVIDIA/Megatron-LM@d98e8a64
megatron/core/pipeline_parallel/schedules.py, ``get_pp_rank_microbatches``). The busiest chip
is the first stage, the second where balanced end stages leave the first a layer short, or the
last, which also holds the micro-batch's fp32 logits (4·vocab bytes per token, over tp).

:mod:`accelkit.parallel` prices every layout with this model; :func:`accelkit.training.estimate`
counts the checkpoints alone (:func:`checkpoint_bytes`: ``checkpoints_per_layer`` layer inputs
per token, no working set, no pipeline), its simpler view of a data-parallel run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelkit import _validate, models

#: Activation-recomputation policies, in the order of their codes (0, 1, 2) in layout arrays.
RECOMPUTE = ("none", "selective", "full")
#: Bytes per stored activation value: bf16.
BYTES_PER_VALUE = 2.0
#: Bytes per logit the last pipeline stage holds: fp32.
LOGIT_BYTES = 4.0

_Numbers = float | np.ndarray


@dataclass(frozen=True)
class LayerActivations:
    """What one transformer layer keeps per token for its backward pass, by part, in bytes.

    ``stored_bytes``: every tensor the backward pass reads except the attention scores (an
    average layer for a mixture of experts with dense layers); ``score_bytes_per_key``: the
    scores' bytes per head per key (2, or 5 with dropout); ``input_bytes``: the layer's input,
    what full recomputation keeps.
    """

    model: str
    heads: int
    vocab: int
    stored_bytes: float
    score_bytes_per_key: float
    input_bytes: float

    def score_bytes(self, seq_len: int) -> float:
        """The attention scores per token per layer: heads × keys (``seq_len``) × bytes each."""
        return self.score_bytes_per_key * self.heads * seq_len

    def kept_bytes(self, recompute: int | np.ndarray, seq_len: int,
                   tp: _Numbers = 1.0) -> _Numbers:
        """Bytes per token per layer kept between the passes under a recompute policy code
        (0 none, 1 selective, 2 full; arrays broadcast), split over ``tp`` chips."""
        linear, score = self.stored_bytes, self.score_bytes(seq_len)
        return np.where(recompute == 0, linear + score,
                        np.where(recompute == 1, linear, self.input_bytes)) / tp

    def working_bytes(self, recompute: int | np.ndarray, seq_len: int,
                      tp: _Numbers = 1.0) -> _Numbers:
        """Bytes per token of the one layer being recomputed in the backward pass: its full set
        under ``"full"``, its attention scores under ``"selective"``, nothing otherwise."""
        linear, score = self.stored_bytes, self.score_bytes(seq_len)
        return np.where(recompute == 2, (linear + score) / tp,
                        np.where(recompute == 1, score / tp, 0.0))


def of(model: str | models.Model, dropout: bool = False,
       fused_attention: bool = False) -> LayerActivations:
    """The :class:`LayerActivations` of a catalog transformer (``dropout``: count its masks, as
    Korthikanti et al.'s GPT setting does; ``fused_attention``: the scores stay on chip, as
    FlashAttention keeps them (Dao et al. 2022, arXiv:2205.14135: the backward pass recomputes
    them from Q, K, V and the softmax statistics), so none are kept under any policy).

    Raises:
        ValueError: an unknown model or one that is not a transformer.
    """
    m = _transformer(model)
    d, a = m.d_model, m.heads
    qk, vd, kv = m.qk_head_dim, m.value_head_dim, m.attention_kv_heads
    drop = 1.0 if dropout else 0.0
    attn = (2 * d + 2 * d + 2 * a * qk + 2 * kv * qk + 2 * kv * vd + 2 * a * vd + drop * d)
    dense_mlp = 2 * d + 2 * d + 2 * m.mlp_in_width + 2 * m.d_ff + drop * d
    if isinstance(m, models.MoETransformer):
        rows = m.experts_per_token + m.shared_experts
        moe_mlp = (2 * d + rows * (2 * d + 2 * m.expert_in_width + 2 * m.d_ff_expert)
                   + 4 * m.n_experts + drop * d)
        mlp = (m.dense_layers * dense_mlp + m.moe_layers * moe_mlp) / m.layers
    else:
        mlp = dense_mlp
    return LayerActivations(model=m.name, heads=a, vocab=m.vocab, stored_bytes=attn + mlp,
                            score_bytes_per_key=(0.0 if fused_attention
                                                 else 5.0 if dropout else 2.0),
                            input_bytes=BYTES_PER_VALUE * d)


def activation_bytes_per_token_per_layer(model: str | models.Model, recompute: str = "none",
                                         seq_len: int | None = None, tp: int = 1,
                                         dropout: bool = False,
                                         fused_attention: bool = False) -> float:
    """Activation bytes one token leaves per layer for the backward pass (module docstring).

    For GPT-3's shape with ``dropout=True`` and ``recompute="none"`` this is Korthikanti et
    al.'s (34·h + 5·a·s)/t per token; ``"selective"`` 34·h/t; ``"full"`` 2·h/t. With
    ``fused_attention`` (a FlashAttention-style kernel, as the default framework's step
    assumes: :mod:`accelkit.frameworks`) no policy keeps the scores, so ``"none"`` keeps what
    ``"selective"`` keeps.

    Raises:
        ValueError: an unknown model or policy, a model that is not a transformer, a bad
            ``seq_len`` or ``tp``.
    """
    m = _transformer(model)
    s = m.check_seq_len(seq_len)
    policy = RECOMPUTE.index(_validate.choice("recompute", recompute, RECOMPUTE))
    tp = _validate.positive_int("tp", tp, maximum=10**7)
    return float(of(m, dropout, bool(fused_attention)).kept_bytes(policy, s, tp))


def _in_flight(rank: _Numbers, *, microbatches: _Numbers, pp: _Numbers,
               interleave: _Numbers) -> _Numbers:
    """Micro-batches whose activations pipeline ``rank`` holds at its peak, in whole-stage
    units (arrays broadcast over layouts).

    Megatron-core's schedules (NVIDIA/Megatron-LM@d98e8a64
    megatron/core/pipeline_parallel/schedules.py, ``get_pp_rank_microbatches``; the same
    counts at @4dabc623) run W warm-up forward passes before the first backward pass: pp-r-1
    under 1F1B, 2·(pp-r-1) + (v-1)·N interleaved (N, ``microbatch_group_size_per_vp_stage``,
    defaults to pp: ``model_parallel_config.py``), never more than the m·v passes that exist.
    The steady state's forward pass comes before its backward pass, so a rank holds W + 1
    (Megatron's own ``max_outstanding_backprops = num_warmup_microbatches + 1``), at most
    m·v; each interleaved pass covers one chunk, 1/v of the stage. So min(pp - r, m) under 1F1B
    and min(2·(pp-r-1) + (v-1)·pp + 1, m·v) / v interleaved.

        >>> float(_in_flight(0, microbatches=64, pp=16, interleave=4))
        19.75
        >>> float(_in_flight(0, microbatches=16, pp=16, interleave=4))  # all exist
        16.0
        >>> float(_in_flight(15, microbatches=64, pp=16, interleave=1))
        1.0
    """
    v = np.asarray(interleave, dtype=float)
    warmup = np.where(v > 1, 2.0 * (pp - rank - 1.0) + (v - 1.0) * pp, pp - rank - 1.0)
    return np.minimum(warmup + 1.0, microbatches * v) / v


def stage_bytes(layer: LayerActivations, *, recompute: int | np.ndarray, seq_len: int,
                microbatch_tokens: _Numbers, microbatches: _Numbers, stage_layers: _Numbers,
                tp: _Numbers, pp: _Numbers, interleave: _Numbers,
                end_stage_layers: _Numbers | None = None) -> _Numbers:
    """Activation bytes on the busiest pipeline stage's chip (arrays broadcast over layouts).

    Each rank r holds its layers' activations for the micro-batches in flight
    (Megatron-core's schedule: min(pp - r, m) under 1F1B, min(2·(pp-r-1) + (v-1)·pp + 1, m·v)
    chunk passes of 1/v stage interleaved), plus the working set of the layer being
    recomputed. ``end_stage_layers``: the layers the first and last stages hold where a
    framework gives them fewer than the others (Llama 3's balanced end stages, one layer fewer
    each); by default ``stage_layers``. The busiest of: the first rank (``end_stage_layers``),
    the second (``stage_layers``, one micro-batch fewer in flight; it binds only with shorter
    end stages and pp > 2, e.g. 8 layers a stage at pp 16: 8·15 > 7·16), and the last
    (``end_stage_layers``, its in-flight count, and one micro-batch's fp32 logits).

        >>> lay = of("llama-3-405b", fused_attention=True)  # selective: no working set
        >>> one = float(lay.kept_bytes(1, 8192, 8)) * 8192    # a layer's micro-batch
        >>> args = dict(recompute=1, seq_len=8192, microbatch_tokens=8192, microbatches=64,
        ...             tp=8, pp=16, interleave=1, stage_layers=8)
        >>> [round(float(stage_bytes(lay, end_stage_layers=e, **args)) / one) for e in (8, 7)]
        [128, 120]
    """
    mb = microbatch_tokens
    kept = layer.kept_bytes(recompute, seq_len, tp)
    working = layer.working_bytes(recompute, seq_len, tp) * mb
    ends = stage_layers if end_stage_layers is None else end_stage_layers
    flight = dict(microbatches=microbatches, pp=pp, interleave=interleave)
    per_layer = kept * mb
    first = ends * per_layer * _in_flight(0, **flight)
    # rank 1 is a middle stage only where pp > 2 (at pp 2 it is the last)
    second = np.where(pp > 2, stage_layers * per_layer * _in_flight(1, **flight), 0.0)
    logits = LOGIT_BYTES * layer.vocab * mb / tp
    last = ends * per_layer * _in_flight(pp - 1, **flight) + logits
    return np.maximum(np.maximum(first, second), last) + working


def checkpoint_bytes(model: str | models.Model, tokens: float,
                     checkpoints_per_layer: int = 1) -> float:
    """Bytes of ``checkpoints_per_layer`` saved d_model-wide values per token per layer for
    ``tokens`` tokens: the layer inputs full recomputation keeps (no working set, one chip).

    Raises:
        ValueError: an unknown model or one that is not a transformer.
    """
    m = _transformer(model)
    return of(m).input_bytes * m.layers * checkpoints_per_layer * tokens


def _transformer(model: str | models.Model) -> models.Transformer:
    m = models.get(model)
    if not isinstance(m, models.Transformer):
        raise ValueError(f"model must be a catalog transformer (dense or MoE); {m.name} is "
                         f"a {m.family}")
    return m


__all__ = ["BYTES_PER_VALUE", "LOGIT_BYTES", "LayerActivations", "RECOMPUTE",
           "activation_bytes_per_token_per_layer", "checkpoint_bytes", "of", "stage_bytes"]
