"""The matmuls of a serving iteration by their shape: what ``ceilings="kernels"``
(:data:`accelkit.serving_step.CEILINGS`) prices continuous batching's iterations with.

An iteration of ``tokens`` new tokens multiplies a ``tokens × K`` activation by each dense
layer's ``K × N`` weight shard (:func:`accelkit.mfu.layer_matmuls`, Megatron column and row
parallel over the tensor-parallel group); its arithmetic runs at the chip's achievable ceiling
times the tile/wave efficiency of that shape (:func:`accelkit.mfu.matmul_efficiency`: the
model :mod:`accelkit.kernels` prices training's kernels by, falling for few tokens). Only the
matmuls whose FLOPs depend on the token count alone are shaped (:data:`SHAPED_MATMULS`); the
language-model head (its rows are the sequences sampling a token), attention and routed
experts stay at the flat achievable ceiling.

    >>> import accelkit as ak
    >>> from accelkit import serving_kernels
    >>> m = ak.models.get("llama-2-70b")
    >>> shaped = serving_kernels.shaped_matmuls(m, 2, "fp8", "fp8", np.zeros(14, dtype=bool))
    >>> shaped[0], round(float(serving_kernels.efficiencies(ak.chips.get("H100"), "fp8",
    ...                                                    shaped, 14, 150)[2]), 2)
    ((2, 5120, 8192), 0.18)

Llama-2-70B's QKV projection on one of two H100s, at 150 tokens: its 150 × 5,120 output is 2 ×
20 tiles of 128 × 256 for 132 SMs (a third of one wave), each tile 150/256 full.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from accelkit import chips, mfu, models
from accelkit.dtypes import DType

#: The dense matmuls the ``"kernels"`` ceiling prices by their shape: the operation's name
#: (:meth:`accelkit.models.Model.operations`) and its shape's in :func:`accelkit.mfu.layer_matmuls`.
SHAPED_MATMULS = (("qkv_proj", "qkv_proj"), ("attn_out", "attn_out"), ("mlp_gate_up", "mlp_in"),
                  ("mlp_down", "mlp_down"))

#: ``tp_overlap``, the serving step's one overlap choice, named as the training step names it
#: (:attr:`accelkit.frameworks.Framework.tp_overlap`): ``False`` (the default), the group's
#: tensor-parallel all-reduces wait for each layer's result and add to the step (what
#: TensorRT-LLM's and vLLM's decode do: a layer's all-reduce needs its output); ``True``, they
#: run behind the step's kernels and only what is longer than them shows, as XLA's collective
#: matmul and async collectives (or Transformer Engine's userbuffers) overlap them, and as the
#: scaling book's serving derivations assume (applied-inference.md: the collectives "can be
#: overlapped"). Both through :func:`accelkit.roofline.times`.
TP_OVERLAP = (False, True)


@lru_cache(maxsize=64)
def _shapes(m: models.Transformer, n_chips: int, weight: DType, kv: DType
            ) -> tuple[tuple[int, int, int, str], ...]:
    names = [op.name for op in m.operations(batch=1, phase="decode", context_tokens=0,
                                            dtype=weight, kv_dtype=kv)]
    shapes = {s.name: s for s in mfu.layer_matmuls(m, 1, tp=n_chips)}
    return tuple((names.index(op), shapes[shape].N, shapes[shape].K, op)
                 for op, shape in SHAPED_MATMULS if op in names and shape in shapes)


def shaped_matmuls(m: models.Transformer, n_chips: int, weight: DType, kv: DType,
                   varies: np.ndarray) -> tuple[tuple[int, int, int], ...]:
    """(operation index, N, K) per tensor-parallel shard of each of :data:`SHAPED_MATMULS` the
    model has, whose FLOPs depend on the iteration's token count alone (``varies``: the
    operations that depend on more), for ``ceilings="kernels"``."""
    return tuple((i, n, k) for i, n, k, _ in _shapes(m, n_chips, weight, kv) if not varies[i])


def efficiencies(chip: chips.Chip, dtype: DType, shaped: tuple[tuple[int, int, int], ...],
                 n_operations: int, tokens: float | np.ndarray) -> np.ndarray:
    """Each of ``n_operations`` operations' fraction of the ceiling at ``tokens`` new tokens
    (an array of counts: one column each): the tile/wave efficiency of its shape for the
    ``shaped`` matmuls (:func:`shaped_matmuls`), 1 for every other operation."""
    counts = np.maximum(np.atleast_1d(np.asarray(tokens, dtype=np.int64)), 1)
    index, n, k = (np.array(col, dtype=np.int64) for col in zip(*shaped))
    eff = np.ones((n_operations, counts.size))
    eff[index] = mfu.matmul_efficiencies(chip, dtype, counts[None, :], n[:, None], k[:, None],
                                         np.ones(1, np.int64))
    return eff[:, 0] if np.ndim(tokens) == 0 else eff


__all__ = ["SHAPED_MATMULS", "efficiencies", "shaped_matmuls"]
