"""The matmuls of a serving iteration by their shape: what ``ceilings="kernels"``
(:data:`accelkit.serving_step.CEILINGS`) prices continuous batching's iterations with.

An iteration of ``tokens`` new tokens multiplies a ``tokens × K`` activation by each dense
layer's ``K × N`` weight shard (:func:`accelkit.mfu.layer_matmuls`, Megatron column and row
parallel over the tensor-parallel group); its arithmetic runs at the chip's achievable ceiling
times the tile/wave efficiency of that shape (:func:`accelkit.mfu.matmul_efficiency`: the
model :mod:`accelkit.kernels` prices training's kernels by, falling for few tokens). Only the
matmuls whose FLOPs depend on the token count alone are shaped (:data:`SHAPED_MATMULS`, routed
experts each at its share of the tokens); the language-model head (its rows are the sequences
sampling a token) and attention stay at the flat achievable ceiling.

    >>> import accelkit as ak
    >>> from accelkit import serving_kernels
    >>> m = ak.models.get("llama-2-70b")
    >>> shaped = serving_kernels.shaped_matmuls(m, 2, "fp8", "fp8", np.zeros(14, dtype=bool))
    >>> shaped[0], round(float(serving_kernels.efficiencies(ak.chips.get("H100"), "fp8",
    ...                                                    shaped, 14, 150)[2]), 2)
    ((2, 5120, 8192, 1.0, 1), 0.18)

Llama-2-70B's QKV projection on one of two H100s, at 150 tokens: its 150 × 5,120 output is 2 ×
20 tiles of 128 × 256 for 132 SMs (a third of one wave), each tile 150/256 full.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from accelkit import chips, mfu, models
from accelkit.dtypes import DType

#: The matmuls the ``"kernels"`` ceiling prices by their shape: the operation's name
#: (:meth:`accelkit.models.Model.operations`) and its shape's in :func:`accelkit.mfu.layer_matmuls`.
#: A mixture of experts's routed experts are spread over the group (expert parallelism, as
#: :mod:`accelkit.tensor_parallel` prices them), each receiving ``tokens · k / n_experts`` of
#: the iteration's tokens (balanced routing, as :func:`accelkit.mfu.layer_matmuls` assumes).
SHAPED_MATMULS = (("qkv_proj", "qkv_proj"), ("attn_out", "attn_out"), ("mlp_gate_up", "mlp_in"),
                  ("mlp_down", "mlp_down"), ("experts_gate_up", "experts_in"),
                  ("experts_down", "experts_down"))

#: One shaped matmul: (operation index, N, K, the share of the iteration's tokens it
#: multiplies (its M), the independent products it runs (experts on one chip)).
Shaped = tuple[int, int, int, float, int]


@lru_cache(maxsize=64)
def _shapes(m: models.Transformer, n_chips: int, weight: DType, kv: DType
            ) -> tuple[Shaped, ...]:
    """Every decode matmul's shape on a group of ``n_chips``. Cached for the reason
    :func:`accelkit.serving_step.iteration_shape` is: each simulation and each of the decision
    lab's group sizes builds its iteration group from the same model and formats, and would
    read the model's operations again each time."""
    names = [op.name for op in m.operations(batch=1, phase="decode", context_tokens=0,
                                            dtype=weight, kv_dtype=kv)]
    dense = {s.name: s for s in mfu.layer_matmuls(m, 1, tp=n_chips)}
    share = 1.0
    if isinstance(m, models.MoETransformer):   # experts whole, spread over the chips
        experts = {s.name: s for s in mfu.layer_matmuls(m, 1, tp=1, ep=n_chips)
                   if s.name.startswith("experts")}
        dense.update(experts)
        share = m.experts_per_token / m.n_experts
    return tuple((names.index(op), dense[shape].N, dense[shape].K,
                  share if shape.startswith("experts") else 1.0,
                  dense[shape].batch if shape.startswith("experts") else 1)
                 for op, shape in SHAPED_MATMULS if op in names and shape in dense)


def shaped_matmuls(m: models.Transformer, n_chips: int, weight: DType, kv: DType,
                   varies: np.ndarray) -> tuple[Shaped, ...]:
    """Each of :data:`SHAPED_MATMULS` the model has (:data:`Shaped`, per tensor-parallel
    shard or, for routed experts, per chip), whose FLOPs depend on the iteration's token
    count alone (``varies``: the operations that depend on more), for ``ceilings="kernels"``."""
    return tuple(s for s in _shapes(m, n_chips, weight, kv) if not varies[s[0]])


def efficiencies(chip: chips.Chip, dtype: DType, shaped: tuple[Shaped, ...],
                 n_operations: int, tokens: float | np.ndarray) -> np.ndarray:
    """Each of ``n_operations`` operations' fraction of the ceiling at ``tokens`` new tokens
    (an array of counts: one column each): the tile/wave efficiency of its shape for the
    ``shaped`` matmuls (:func:`shaped_matmuls`; M the tokens' share, rounded up), 1 for every
    other operation."""
    counts = np.maximum(np.atleast_1d(np.asarray(tokens, dtype=float)), 1.0)
    index, n, k, share, batch = (np.array(col) for col in zip(*shaped))
    rows = np.maximum(np.ceil(counts[None, :] * share[:, None]), 1).astype(np.int64)
    eff = np.ones((n_operations, counts.size))
    eff[index.astype(np.int64)] = mfu.matmul_efficiencies(
        chip, dtype, rows, n.astype(np.int64)[:, None], k.astype(np.int64)[:, None],
        batch.astype(np.int64)[:, None])
    return eff[:, 0] if np.ndim(tokens) == 0 else eff


__all__ = ["SHAPED_MATMULS", "Shaped", "efficiencies", "shaped_matmuls"]
