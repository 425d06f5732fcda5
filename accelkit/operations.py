"""What a model pass is made of: operations with their FLOPs and bytes, and the model API.

Every catalogued model (:mod:`accelkit.models`) is a :class:`Model` whose
:meth:`~Model.operations` lists the operations of one pass, each an :class:`Operation` with
its FLOPs and bytes; :func:`kind_share` and :func:`by_kind` summarise them. The families'
shapes live in :mod:`accelkit.transformer` (the language models) and :mod:`accelkit.models`
(the catalog, and the convolutional, recurrent and recommender models).

Counting conventions (the same for every model):

* **2 FLOPs per multiply-accumulate.** A matmul of an M×K by a K×N matrix is 2·M·K·N FLOPs.
  A bias add costs 1 FLOP per output element.
* **Bytes assume no fusion between operations:** every operation reads its inputs and weights
  from HBM once and writes its outputs once. This overstates the bytes of small elementwise
  operations (real compilers fuse them), which is the honest upper bound a roofline wants.
* **Attention** (kind ``"attention"``) is the fused QKᵀ, softmax and A·V of one layer, as in
  FlashAttention: scores never leave on-chip memory. FLOPs are 4·head_dim per (query, key) pair
  per head (QKᵀ and A·V) plus 5 per pair per head for softmax (max, subtract, exp, sum, divide).
  The mask is causal and only unmasked pairs are counted: query i of a sequence of T new tokens
  after c cached tokens sees c + i keys. Bytes: read Q, write the output, read every key and value
  of the sequence once, and (prefill, decode) write the new keys and values to the KV cache.
* **Normalization**: RMSNorm 4 FLOPs per element, LayerNorm 7, batch norm 4.
  **Elementwise**: residual add 1, SiLU-gate 5 (sigmoid·x times the up projection), GELU 8,
  ReLU 1, rotary embedding 3 per element of q and k. LSTM cell: 26 FLOPs per hidden unit per
  step (three sigmoids at 4, two tanh at 5, four products and sums).
* **Phases.** ``forward``: a training forward pass, logits for every token, no KV cache.
  ``backward``: every operation costs 2× its forward FLOPs and bytes; exact for matmuls (one
  matmul for the input gradient, one for the weight gradient), an approximation for the rest.
  ``train``: forward then backward, about 6·params FLOPs per token. ``prefill``: a forward pass
  over the prompt that writes the KV cache and computes logits only for each sequence's last
  token (what serving engines do). ``decode``: ``seq_len`` new tokens per sequence (default 1)
  attending to ``context_tokens`` already in the cache.
* Not counted: the loss and its softmax, dropout, optimizer updates, communication.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from accelkit import _html, _validate, dtypes
from accelkit.dtypes import DType

PHASES = ("forward", "backward", "train", "prefill", "decode")
KINDS = ("matmul", "attention", "conv", "recurrent-matmul", "elementwise", "normalization",
         "gather", "pooling")
#: Largest batch or sequence accepted: far beyond any real run, small enough that float
#: arithmetic stays exact to the digits reported.
MAX_SIZE = 10**9


@dataclass(frozen=True)
class Operation:
    """One operation of a model pass, summed over its ``count`` occurrences.

    ``flops`` and ``bytes`` are totals over all occurrences (so summing over a pass's operations
    gives the pass's totals); ``count`` says how many occurrences they cover, e.g. 80 for an
    operation repeated in each of 80 layers, or 35 × 2 for an LSTM's recurrent step.
    """

    name: str
    kind: str
    flops: float
    bytes: float
    count: int = 1

    @property
    def flops_each(self) -> float:
        return self.flops / self.count

    @property
    def bytes_each(self) -> float:
        return self.bytes / self.count

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOPs per byte (0 for pure data movement)."""
        return self.flops / self.bytes if self.bytes else math.inf

    def __repr__(self) -> str:
        return (f"Operation({self.name!r}, {self.kind}, flops={self.flops:.3g}, "
                f"bytes={self.bytes:.3g}, count={self.count})")


def by_kind(operations: tuple[Operation, ...]) -> tuple[Operation, ...]:
    """Merge operations of the same kind, largest FLOPs first (for a 'where do FLOPs go' chart)."""
    totals: dict[str, list[float]] = {}
    for op in operations:
        entry = totals.setdefault(op.kind, [0.0, 0.0, 0])
        entry[0] += op.flops
        entry[1] += op.bytes
        entry[2] += op.count
    merged = (Operation(kind, kind, f, b, int(c)) for kind, (f, b, c) in totals.items())
    return tuple(sorted(merged, key=lambda op: (-op.flops, -op.bytes)))


#: Kinds that are matrix products, the work a matrix unit (TPU MXU, GPU tensor cores) runs: a
#: convolution is a matmul over image patches (im2col), attention's FLOPs are QKᵀ and A·V (its
#: softmax adds 5 FLOPs per 4·head_dim, about 1% at head_dim 128), and a recurrent step is a
#: matmul with only ``batch`` rows.
MATRIX_KINDS = ("matmul", "conv", "recurrent-matmul", "attention")


@dataclass(frozen=True)
class KindShare:
    """What fraction of a pass's FLOPs and of its bytes belongs to operations of ``kinds``."""

    kinds: tuple[str, ...]
    flops_fraction: float
    bytes_fraction: float

    def __repr__(self) -> str:
        return (f"KindShare({'+'.join(self.kinds)}: {self.flops_fraction:.1%} of FLOPs, "
                f"{self.bytes_fraction:.1%} of bytes)")


def kind_share(operations: tuple[Operation, ...],
               kinds: tuple[str, ...] | str = MATRIX_KINDS) -> KindShare:
    """The share of FLOPs and bytes in operations whose kind is in ``kinds``.

    Args:
        operations: what :meth:`Model.operations` returned (at least one operation).
        kinds: one kind or a tuple of kinds from :data:`KINDS`; default the matrix products.
    Returns:
        A :class:`KindShare`; a fraction is 0.0 when the pass has no FLOPs (or no bytes) at all.
    Raises:
        ValueError/TypeError: no operations, something that is not an Operation, unknown kind.
    """
    if isinstance(kinds, str):
        kinds = (kinds,)
    if not isinstance(kinds, tuple) or not kinds:
        raise TypeError(f"kinds must be a kind or a non-empty tuple of kinds from {KINDS}, "
                        f"got {kinds!r}")
    chosen = tuple(_validate.choice("kinds", k, KINDS) for k in kinds)
    operations = tuple(operations)
    if not operations:
        raise ValueError("operations must hold at least one Operation, got none")
    if not all(isinstance(op, Operation) for op in operations):
        raise TypeError("operations must be Operation objects (from Model.operations)")
    flops = math.fsum(op.flops for op in operations)
    moved = math.fsum(op.bytes for op in operations)
    in_flops = math.fsum(op.flops for op in operations if op.kind in chosen)
    in_bytes = math.fsum(op.bytes for op in operations if op.kind in chosen)
    return KindShare(chosen, in_flops / flops if flops else 0.0, in_bytes / moved if moved else 0.0)


def matmul(name: str, tokens: float, d_in: int, d_out: int, wb: float, ab: float, count: int,
           bias: bool = False, kind: str = "matmul") -> Operation:
    """``count`` matmuls of (tokens × d_in) by (d_in × d_out), weights read once each: 2 FLOPs
    per multiply-accumulate (plus 1 per output for a bias); bytes are the weights (``wb`` per
    element) and the activations in and out (``ab`` per element), no fusion."""
    flops = 2.0 * tokens * d_in * d_out + (tokens * d_out if bias else 0.0)
    weight_bytes = (d_in * d_out + (d_out if bias else 0)) * wb
    traffic = weight_bytes + tokens * (d_in + d_out) * ab
    return Operation(name, kind, count * flops, count * traffic, count)


def elementwise(name: str, elements: float, flops_per: float, reads: float, writes: float,
                ab: float, count: int, kind: str = "elementwise",
                extra_bytes: float = 0.0) -> Operation:
    """``count`` elementwise operations over ``elements`` values: ``flops_per`` each, every
    element read ``reads`` and written ``writes`` times at ``ab`` bytes (plus ``extra_bytes``,
    a norm's weights, say), no fusion."""
    return Operation(name, kind, count * elements * flops_per,
                     count * (elements * (reads + writes) * ab + extra_bytes), count)


@dataclass(frozen=True)
class Model:
    """A catalogued model. Use :func:`get`; see the subclasses for each family's shape."""

    name: str
    display_name: str
    family: str
    aliases: tuple[str, ...]
    published_params: float
    source: str

    # -- shared API ------------------------------------------------------------------------
    @property
    def params(self) -> int:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def operations(self, batch: int = 1, seq_len: int | None = None, phase: str = "forward",
                   context_tokens: int = 0, dtype: DType = "bf16",
                   kv_dtype: DType | None = None) -> tuple[Operation, ...]:
        """The operations of one pass, with FLOPs and bytes (see the module docstring).

        Args:
            batch: sequences (or images, or samples) processed together, >= 1.
            seq_len: tokens per sequence; transformers default to the model's training
                sequence length (1 for decode), the LSTM to its unroll length; CNN and
                recommender take none.
            phase: "forward", "backward", "train"; transformers also "prefill" and "decode".
            context_tokens: tokens already in the KV cache (prefill and decode only).
            dtype: format of the weights; activations follow
                :func:`accelkit.dtypes.activation_dtype` (bf16 for 8- and 4-bit weights).
            kv_dtype: format of the KV cache (default: the activation format).
        Returns:
            A tuple of :class:`Operation`; sum ``flops`` or ``bytes`` for the pass totals.
        Raises:
            ValueError: sizes not whole numbers >= 1, unknown dtype or phase, a phase the
                model family does not have.
        """
        phase = _validate.choice("phase", phase, PHASES)
        batch = _validate.positive_int("batch", batch, maximum=MAX_SIZE)
        context_tokens = _validate.nonnegative_int("context_tokens", context_tokens,
                                                   maximum=MAX_SIZE)
        wb = dtypes.nbytes(dtype)
        act = dtypes.activation_dtype(dtype, "dtype")
        kb = dtypes.nbytes(kv_dtype if kv_dtype is not None else act, "kv_dtype")
        base = "forward" if phase in ("backward", "train") else phase
        forward = self._forward(base, batch, seq_len, context_tokens, wb, dtypes.BYTES[act], kb)
        if phase == "forward" or phase in ("prefill", "decode"):
            return forward
        backward = tuple(Operation(f"backward.{op.name}", op.kind, 2.0 * op.flops,
                                   2.0 * op.bytes, op.count) for op in forward)
        return backward if phase == "backward" else forward + backward

    def flops(self, **kwargs: Any) -> float:
        """Total FLOPs of :meth:`operations` with the same arguments."""
        return math.fsum(op.flops for op in self.operations(**kwargs))

    def bytes(self, **kwargs: Any) -> float:
        """Total bytes moved by :meth:`operations` with the same arguments."""
        return math.fsum(op.bytes for op in self.operations(**kwargs))

    def flops_per_example(self, phase: str = "forward", **kwargs: Any) -> float:
        """FLOPs per sequence, image or sample (batch 1 unless given)."""
        batch = kwargs.pop("batch", 1)
        return self.flops(batch=batch, phase=phase, **kwargs) / batch

    @property
    def active_params(self) -> int:
        """Parameters one token's forward pass uses: all of them for a dense model.

        A mixture of experts (:class:`MoETransformer`) overrides this with the experts a token
        is routed to; FLOPs per token follow ``active_params``, memory follows ``params``.
        """
        return self.params

    def weight_bytes(self, dtype: DType = "bf16") -> float:
        """Bytes to hold every parameter in ``dtype``."""
        return self.params * dtypes.nbytes(dtype)

    def summary(self) -> dict[str, Any]:
        """Shape, computed and published parameter counts, and source, as a plain dict."""
        return {"name": self.name, "family": self.family, "params": self.params,
                "published_params": self.published_params, "source": self.source}

    def _forward(self, phase: str, batch: int, seq_len: int | None, context: int, wb: float,
                 ab: float, kb: float) -> tuple[Operation, ...]:  # pragma: no cover
        raise NotImplementedError

    def _no_sequence(self, phase: str, seq_len: int | None, context: int) -> None:
        if phase in ("prefill", "decode"):
            raise ValueError(f"phase {phase!r} applies to language models only; {self.name} "
                             "supports 'forward', 'backward' and 'train'")
        if seq_len is not None:
            raise ValueError(f"{self.name} takes no seq_len (got {seq_len!r}); use batch")
        if context:
            raise ValueError(f"{self.name} has no KV cache; context_tokens must be 0")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.name!r}, params={self.params / 1e9:.3g}e9, "
                f"published={self.published_params / 1e9:.3g}e9)")

    def _repr_html_(self) -> str:
        return _html.table(self.summary().items())


__all__ = ["KINDS", "KindShare", "MATRIX_KINDS", "MAX_SIZE", "Model", "Operation", "PHASES",
           "by_kind", "elementwise", "kind_share", "matmul"]
