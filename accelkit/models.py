"""The model catalog: published shapes, parameter counts, and FLOPs and bytes per operation.

    >>> import accelkit as ak
    >>> m = ak.models.get("llama-3-70b")
    >>> round(m.params / 1e9, 1)
    70.6
    >>> ops = m.operations(batch=1, seq_len=2048, phase="forward")
    >>> sorted({op.kind for op in ops})
    ['attention', 'elementwise', 'gather', 'matmul', 'normalization']

Shapes live in ``accelkit/data/models.json``, each with its source. ``params`` is computed from
the shape, never copied, and the tests check it against the published count (within 2%).

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

import builtins
import json
import math
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Any

from accelkit import _html, _validate, dtypes
from accelkit.dtypes import DType

PHASES = ("forward", "backward", "train", "prefill", "decode")
KINDS = ("matmul", "attention", "conv", "recurrent-matmul", "elementwise", "normalization",
         "gather", "pooling")
# Largest batch or sequence we accept: far beyond any real run, small enough that float
# arithmetic stays exact to the digits we report.
_MAX_SIZE = 10**9


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
    if not builtins.all(isinstance(op, Operation) for op in operations):
        raise TypeError("operations must be Operation objects (from Model.operations)")
    flops = math.fsum(op.flops for op in operations)
    moved = math.fsum(op.bytes for op in operations)
    in_flops = math.fsum(op.flops for op in operations if op.kind in chosen)
    in_bytes = math.fsum(op.bytes for op in operations if op.kind in chosen)
    return KindShare(chosen, in_flops / flops if flops else 0.0, in_bytes / moved if moved else 0.0)


def _matmul(name: str, tokens: float, d_in: int, d_out: int, wb: float, ab: float, count: int,
            bias: bool = False, kind: str = "matmul") -> Operation:
    """``count`` matmuls of (tokens × d_in) by (d_in × d_out), weights read once each."""
    flops = 2.0 * tokens * d_in * d_out + (tokens * d_out if bias else 0.0)
    weight_bytes = (d_in * d_out + (d_out if bias else 0)) * wb
    traffic = weight_bytes + tokens * (d_in + d_out) * ab
    return Operation(name, kind, count * flops, count * traffic, count)


def _elementwise(name: str, elements: float, flops_per: float, reads: float, writes: float,
                 ab: float, count: int, kind: str = "elementwise",
                 extra_bytes: float = 0.0) -> Operation:
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
        batch = _validate.positive_int("batch", batch, maximum=_MAX_SIZE)
        context_tokens = _validate.nonnegative_int("context_tokens", context_tokens,
                                                   maximum=_MAX_SIZE)
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


@dataclass(frozen=True, repr=False)
class Transformer(Model):
    """A decoder-only transformer (pre-norm): GPT-3 and the Llama family.

    ``kv_heads`` < ``heads`` is grouped-query attention: keys and values have ``kv_heads``
    heads, shared by groups of query heads, which shrinks the KV cache by heads / kv_heads.
    """

    layers: int = 0
    d_model: int = 0
    heads: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    d_ff: int = 0
    vocab: int = 0
    gated_mlp: bool = False
    tied_embeddings: bool = False
    norm: str = "rmsnorm"
    biases: bool = False
    position: str = "rope"
    seq_len: int = 0

    @property
    def _qkv_width(self) -> int:
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    @property
    def _mlp_in(self) -> int:
        return (2 if self.gated_mlp else 1) * self.d_ff

    @cached_property
    def layer_params(self) -> int:
        """Parameters of one transformer block."""
        d, attn_width = self.d_model, self.heads * self.head_dim
        weights = d * self._qkv_width + attn_width * d + d * self._mlp_in + self.d_ff * d
        biases = (self._qkv_width + d + self._mlp_in + d) if self.biases else 0
        norm = 2 * self._norm_params_each
        return weights + biases + norm

    @property
    def _norm_params_each(self) -> int:
        return self.d_model * (2 if self.norm == "layernorm" else 1)

    @cached_property
    def params(self) -> int:
        embeddings = self.vocab * self.d_model * (1 if self.tied_embeddings else 2)
        positions = self.seq_len * self.d_model if self.position == "learned" else 0
        return self.layers * self.layer_params + embeddings + positions + self._norm_params_each

    def kv_cache_bytes_per_token(self, dtype: DType = "bf16") -> float:
        """Bytes of keys and values one token leaves in the cache: 2·layers·kv_heads·head_dim."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * dtypes.nbytes(dtype)

    def kv_cache_bytes(self, batch: int, context_tokens: int, dtype: DType = "bf16") -> float:
        """Bytes of the KV cache for ``batch`` sequences of ``context_tokens`` tokens each."""
        batch = _validate.positive_int("batch", batch, maximum=_MAX_SIZE)
        context_tokens = _validate.nonnegative_int("context_tokens", context_tokens,
                                                   maximum=_MAX_SIZE)
        return batch * context_tokens * self.kv_cache_bytes_per_token(dtype)

    def flops_per_token(self, phase: str = "forward", seq_len: int | None = None,
                        context_tokens: int = 0, dtype: DType = "bf16") -> float:
        """FLOPs per processed token (per new token in prefill and decode).

        ``forward`` is about 2·params plus attention; ``train`` about 6·params plus attention.
        """
        phase = _validate.choice("phase", phase, PHASES)
        t = self._tokens(phase, seq_len)
        return self.flops(batch=1, seq_len=t, phase=phase, context_tokens=context_tokens,
                          dtype=dtype) / t

    def _tokens(self, phase: str, seq_len: int | None) -> int:
        if seq_len is None:
            return 1 if phase == "decode" else self.seq_len
        return _validate.positive_int("seq_len", seq_len, maximum=_MAX_SIZE)

    def _forward(self, phase: str, batch: int, seq_len: int | None, context: int, wb: float,
                 ab: float, kb: float) -> tuple[Operation, ...]:
        t, n, kb, pairs = self._sequence(phase, batch, seq_len, context, ab, kb)
        d, h, kv, dh, layers = self.d_model, self.heads, self.kv_heads, self.head_dim, self.layers
        norm_flops = 7 if self.norm == "layernorm" else 4
        norm_weights = self._norm_params_each * wb
        attn_flops = (4.0 * dh + 5.0) * h * pairs
        attn_bytes = (2.0 * n * h * dh * ab                      # read Q, write output
                      + batch * (context + t) * 2 * kv * dh * kb)  # read every K and V once
        if phase in ("prefill", "decode"):
            attn_bytes += n * 2 * kv * dh * kb                   # write new K, V to the cache
        ops = [
            Operation("embed", "gather", n * d if self.position == "learned" else 0.0,
                      n * d * wb * (2 if self.position == "learned" else 1) + n * d * ab, 1),
            _elementwise("attn_norm", n * d, norm_flops, 1, 1, ab, layers,
                         kind="normalization", extra_bytes=norm_weights),
            _matmul("qkv_proj", n, d, self._qkv_width, wb, ab, layers, self.biases),
        ]
        if self.position == "rope":
            ops.append(_elementwise("rope", n * (h + kv) * dh, 3, 1, 1, ab, layers))
        ops += [
            Operation("attention", "attention", layers * attn_flops, layers * attn_bytes, layers),
            _matmul("attn_out", n, h * dh, d, wb, ab, layers, self.biases),
            _elementwise("attn_residual", n * d, 1, 2, 1, ab, layers),
            _elementwise("mlp_norm", n * d, norm_flops, 1, 1, ab, layers,
                         kind="normalization", extra_bytes=norm_weights),
            _matmul("mlp_gate_up" if self.gated_mlp else "mlp_up", n, d, self._mlp_in, wb, ab,
                    layers, self.biases),
            (_elementwise("mlp_silu_gate", n * self.d_ff, 5, 2, 1, ab, layers) if self.gated_mlp
             else _elementwise("mlp_gelu", n * self.d_ff, 8, 1, 1, ab, layers)),
            _matmul("mlp_down", n, self.d_ff, d, wb, ab, layers, self.biases),
        ]
        return tuple(ops + self._tail(phase, batch, n, wb, ab, norm_flops, norm_weights))

    def _sequence(self, phase: str, batch: int, seq_len: int | None, context: int, ab: float,
                  kb: float) -> tuple[int, float, float, float]:
        """Tokens per sequence, tokens in all, the K/V element size, and the unmasked
        (query, key) pairs per step under a causal mask after ``context`` tokens."""
        t = self._tokens(phase, seq_len)
        if phase == "forward" and context:
            raise ValueError("context_tokens must be 0 for phase 'forward' (no KV cache); "
                             "use phase='prefill' or 'decode'")
        if phase == "forward":
            kb = ab  # keys and values are activations, not a stored cache
        return t, float(batch * t), kb, batch * (t * context + t * (t + 1) / 2.0)

    def _tail(self, phase: str, batch: int, n: float, wb: float, ab: float, norm_flops: int,
              norm_weights: float) -> list[Operation]:
        """The MLP residual, the final norm and the logits (prefill scores the last token)."""
        d = self.d_model
        logits_tokens = float(batch) if phase == "prefill" else n
        return [_elementwise("mlp_residual", n * d, 1, 2, 1, ab, self.layers),
                _elementwise("final_norm", n * d, norm_flops, 1, 1, ab, 1, kind="normalization",
                             extra_bytes=norm_weights),
                _matmul("lm_head", logits_tokens, d, self.vocab, wb, ab, 1)]

    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "layers": self.layers, "d_model": self.d_model,
                "heads": self.heads, "kv_heads": self.kv_heads, "head_dim": self.head_dim,
                "d_ff": self.d_ff, "vocab": self.vocab, "gated_mlp": self.gated_mlp,
                "tied_embeddings": self.tied_embeddings, "seq_len": self.seq_len}


@dataclass(frozen=True, repr=False)
class MoETransformer(Transformer):
    """A decoder-only mixture-of-experts transformer: Mixtral, DeepSeek-V3.

    Each MoE layer replaces the MLP by ``n_experts`` routed experts (gated MLPs of width
    ``d_ff_expert``) of which a router picks ``experts_per_token`` per token, plus
    ``shared_experts`` every token uses; the first ``dense_layers`` layers keep a dense MLP of
    width ``d_ff``. ``params`` counts every expert (what memory holds); ``active_params`` counts
    the experts one token uses (what its FLOPs follow).

    With ``kv_lora_rank`` > 0 attention is DeepSeek's multi-head latent attention (MLA,
    DeepSeek-AI 2024, arXiv:2405.04434 §2.1): queries pass through a rank-``q_lora_rank``
    bottleneck, keys and values are rebuilt per head from a rank-``kv_lora_rank`` latent plus a
    shared ``qk_rope_head_dim``-wide rotary key; heads use ``head_dim`` (no-rope part) +
    ``qk_rope_head_dim`` for q·k and ``v_head_dim`` for values. The KV cache holds only the
    latent and the rotary key per token per layer (the "absorbed" form serving engines use).

    Simplifications: routing is assumed balanced (every expert gets tokens·k/n_experts); the
    router's FLOPs are counted, its load-balancing bias and DeepSeek-V3's multi-token-prediction
    module (14e9 parameters, not part of the published 671e9) are not.
    """

    n_experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    d_ff_expert: int = 0
    dense_layers: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    published_active_params: float = 0.0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers

    @property
    def _mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def _qk_head_dim(self) -> int:
        return self.head_dim + (self.qk_rope_head_dim if self._mla else 0)

    @property
    def _v_head_dim(self) -> int:
        return self.v_head_dim if self._mla else self.head_dim

    @property
    def _expert_in(self) -> int:
        return (2 if self.gated_mlp else 1) * self.d_ff_expert

    @cached_property
    def attention_params_per_layer(self) -> int:
        """Attention weights of one layer (MLA: both low-rank paths and their norms)."""
        d, h = self.d_model, self.heads
        if not self._mla:
            return d * self._qkv_width + h * self.head_dim * d
        q = (d * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * h * self._qk_head_dim
             if self.q_lora_rank else d * h * self._qk_head_dim)
        kv = (d * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
              + self.kv_lora_rank * h * (self.head_dim + self.v_head_dim))
        return q + kv + h * self.v_head_dim * d

    @property
    def expert_params(self) -> int:
        """Weights of one expert MLP (gate, up, down)."""
        return self.d_model * self._expert_in + self.d_ff_expert * self.d_model

    @property
    def router_params_per_layer(self) -> int:
        return self.d_model * self.n_experts

    @cached_property
    def routed_expert_params(self) -> int:
        """All routed experts of all MoE layers: the parameters expert parallelism shards."""
        return self.moe_layers * self.n_experts * self.expert_params

    def _layer_total(self, experts: int) -> tuple[int, int]:
        d = self.d_model
        common = self.attention_params_per_layer + 2 * self._norm_params_each
        dense = common + d * self._mlp_in + self.d_ff * d
        moe = common + (experts + self.shared_experts) * self.expert_params \
            + self.router_params_per_layer
        return dense, moe

    def _count(self, experts: int) -> int:
        dense, moe = self._layer_total(experts)
        embeddings = self.vocab * self.d_model * (1 if self.tied_embeddings else 2)
        return (self.dense_layers * dense + self.moe_layers * moe + embeddings
                + self._norm_params_each)

    @cached_property
    def layer_params(self) -> int:
        """Parameters of an average block (every expert counted)."""
        dense, moe = self._layer_total(self.n_experts)
        return (self.dense_layers * dense + self.moe_layers * moe) // self.layers

    @cached_property
    def params(self) -> int:
        return self._count(self.n_experts)

    @cached_property
    def active_params(self) -> int:
        return self._count(self.experts_per_token)

    def kv_cache_bytes_per_token(self, dtype: DType = "bf16") -> float:
        """Cache bytes per token: MLA keeps the latent and rotary key, else 2·kv·head_dim."""
        if not self._mla:
            return super().kv_cache_bytes_per_token(dtype)
        return float(self.layers * (self.kv_lora_rank + self.qk_rope_head_dim)
                     * dtypes.nbytes(dtype))

    def _forward(self, phase: str, batch: int, seq_len: int | None, context: int, wb: float,
                 ab: float, kb: float) -> tuple[Operation, ...]:
        t, n, kb, pairs = self._sequence(phase, batch, seq_len, context, ab, kb)
        d, h, layers = self.d_model, self.heads, self.layers
        qk, vd = self._qk_head_dim, self._v_head_dim
        norm_flops = 7 if self.norm == "layernorm" else 4
        norm_weights = self._norm_params_each * wb
        attn_flops = (2.0 * qk + 2.0 * vd + 5.0) * h * pairs
        cache_width = (self.kv_lora_rank + self.qk_rope_head_dim if self._mla
                       else 2 * self.kv_heads * self.head_dim)
        attn_bytes = (n * h * (qk + vd) * ab + batch * (context + t) * cache_width * kb)
        if phase in ("prefill", "decode"):
            attn_bytes += n * cache_width * kb
        ops = [Operation("embed", "gather", 0.0, n * d * wb + n * d * ab, 1),
               _elementwise("attn_norm", n * d, norm_flops, 1, 1, ab, layers,
                            kind="normalization", extra_bytes=norm_weights)]
        if self._mla:
            if self.q_lora_rank:
                ops += [_matmul("q_down", n, d, self.q_lora_rank, wb, ab, layers),
                        _matmul("q_up", n, self.q_lora_rank, h * qk, wb, ab, layers)]
            else:
                ops.append(_matmul("q_proj", n, d, h * qk, wb, ab, layers))
            ops += [_matmul("kv_down", n, d, self.kv_lora_rank + self.qk_rope_head_dim, wb, ab,
                            layers),
                    _matmul("kv_up", n, self.kv_lora_rank, h * (self.head_dim + vd), wb, ab,
                            layers)]
            rope_elements = n * (h + 1) * self.qk_rope_head_dim
        else:
            ops.append(_matmul("qkv_proj", n, d, self._qkv_width, wb, ab, layers))
            rope_elements = n * (h + self.kv_heads) * self.head_dim
        ops += [_elementwise("rope", rope_elements, 3, 1, 1, ab, layers),
                Operation("attention", "attention", layers * attn_flops, layers * attn_bytes,
                          layers),
                _matmul("attn_out", n, h * vd, d, wb, ab, layers),
                _elementwise("attn_residual", n * d, 1, 2, 1, ab, layers),
                _elementwise("mlp_norm", n * d, norm_flops, 1, 1, ab, layers,
                             kind="normalization", extra_bytes=norm_weights)]
        if self.dense_layers:
            ops += [_matmul("dense_mlp_gate_up", n, d, self._mlp_in, wb, ab, self.dense_layers),
                    _elementwise("dense_mlp_silu_gate", n * self.d_ff, 5, 2, 1, ab,
                                 self.dense_layers),
                    _matmul("dense_mlp_down", n, self.d_ff, d, wb, ab, self.dense_layers)]
        moe, k, e = self.moe_layers, self.experts_per_token, self.n_experts
        if moe:
            rows = n * (k + self.shared_experts)   # token-expert pairs per layer
            # Experts a layer's weights are read for: under balanced routing each expert is
            # missed by a token with probability 1 - k/e, so e·(1 - (1 - k/e)^n) are touched.
            touched = e * (1.0 - (1.0 - k / e) ** n) + self.shared_experts
            f_in, f = self._expert_in, self.d_ff_expert
            ops += [
                _matmul("router", n, d, e, wb, ab, moe),
                Operation("experts_gate_up", "matmul", moe * 2.0 * rows * d * f_in,
                          moe * (touched * d * f_in * wb + rows * (d + f_in) * ab), moe),
                _elementwise("experts_silu_gate", rows * f, 5, 2, 1, ab, moe),
                Operation("experts_down", "matmul", moe * 2.0 * rows * f * d,
                          moe * (touched * f * d * wb + rows * (f + d) * ab), moe),
                _elementwise("experts_combine", rows * d, 2, 1, 0, ab, moe),
            ]
        return tuple(ops + self._tail(phase, batch, n, wb, ab, norm_flops, norm_weights))

    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "active_params": self.active_params,
                "published_active_params": self.published_active_params,
                "n_experts": self.n_experts, "experts_per_token": self.experts_per_token,
                "shared_experts": self.shared_experts, "d_ff_expert": self.d_ff_expert,
                "dense_layers": self.dense_layers}


@dataclass(frozen=True, repr=False)
class ConvNet(Model):
    """A bottleneck ResNet (ResNet-50): convolutions, batch norm, ReLU, pooling, one fc."""

    image_size: int = 224
    in_channels: int = 3
    stem_channels: int = 64
    stem_kernel: int = 7
    stages: tuple[tuple[int, int], ...] = ()
    expansion: int = 4
    classes: int = 1000
    published_macs: float = 0.0

    @cached_property
    def _convs(self) -> tuple[tuple[str, int, int, int, int, int, int], ...]:
        """(name, c_in, c_out, kernel, stride, size_in, size_out) for every convolution."""
        convs = []
        size = (self.image_size + 1) // 2  # 7x7 stride-2 stem, padding 3
        convs.append(("stem.conv", self.in_channels, self.stem_channels, self.stem_kernel, 2,
                      self.image_size, size))
        size = (size + 1) // 2  # 3x3 stride-2 max pool
        c_in = self.stem_channels
        for s, (blocks, width) in enumerate(self.stages, start=1):
            out = width * self.expansion
            for b in range(blocks):
                stride = 2 if (b == 0 and s > 1) else 1
                size_out = size // stride
                p = f"stage{s}.block{b + 1}"
                convs += [(f"{p}.conv1x1a", c_in, width, 1, 1, size, size),
                          # stride on the 3x3 conv ("ResNet v1.5", torchvision)
                          (f"{p}.conv3x3", width, width, 3, stride, size, size_out),
                          (f"{p}.conv1x1b", width, out, 1, 1, size_out, size_out)]
                if b == 0:
                    convs.append((f"{p}.downsample", c_in, out, 1, stride, size, size_out))
                c_in, size = out, size_out
        return tuple(convs)

    @property
    def _features(self) -> int:
        return self.stages[-1][1] * self.expansion

    @cached_property
    def params(self) -> int:
        conv = sum(ci * co * k * k for _, ci, co, k, _, _, _ in self._convs)
        batchnorm = sum(2 * co for _, _, co, _, _, _, _ in self._convs)
        return conv + batchnorm + self._features * self.classes + self.classes

    @property
    def macs_per_image(self) -> float:
        """Multiply-accumulates of one forward pass over one image (convs and fc)."""
        return float(sum(ci * co * k * k * so * so for _, ci, co, k, _, _, so in self._convs)
                     + self._features * self.classes)

    def _forward(self, phase: str, batch: int, seq_len: int | None, context: int, wb: float,
                 ab: float, kb: float) -> tuple[Operation, ...]:
        self._no_sequence(phase, seq_len, context)
        ops = []
        for name, ci, co, k, _, si, so in self._convs:
            out_elems = batch * so * so * co
            ops.append(Operation(name, "conv", 2.0 * out_elems * ci * k * k,
                                 ci * co * k * k * wb + (batch * si * si * ci + out_elems) * ab))
            ops.append(_elementwise(name.replace("conv", "bn").replace("downsample", "bn_down"),
                                    out_elems, 4, 1, 1, ab, 1, kind="normalization",
                                    extra_bytes=2 * co * wb))
            if name == "stem.conv":
                ops.append(_elementwise("stem.relu", out_elems, 1, 1, 1, ab, 1))
                pooled = batch * (so // 2 + so % 2) ** 2 * co
                ops.append(Operation("stem.maxpool", "pooling", 9.0 * pooled,
                                     (out_elems + pooled) * ab))
            elif name.endswith("conv1x1b"):
                ops.append(_elementwise(name.replace("conv1x1b", "residual_relu"), out_elems, 2,
                                        2, 1, ab, 1))
            elif not name.endswith("downsample"):
                ops.append(_elementwise(name.replace("conv", "relu"), out_elems, 1, 1, 1, ab, 1))
        last = self._convs[-1][6]
        f = self._features
        ops.append(Operation("avgpool", "pooling", float(batch * last * last * f),
                             (batch * last * last * f + batch * f) * ab))
        ops.append(_matmul("fc", batch, f, self.classes, wb, ab, 1, bias=True))
        return tuple(ops)


@dataclass(frozen=True, repr=False)
class LSTMLanguageModel(Model):
    """A stacked-LSTM word language model: embedding, LSTM layers, softmax projection.

    Each layer's input projection (x·W_ih) is one large matmul over all time steps; the
    recurrent projection (h·W_hh) must run step by step, on only ``batch`` rows at a time,
    re-reading W_hh every step. That is kind ``"recurrent-matmul"``, and why small-batch RNNs
    are memory-bound.
    """

    layers: int = 2
    hidden: int = 0
    vocab: int = 0
    seq_len: int = 35
    batch: int = 20
    tied_embeddings: bool = False

    @cached_property
    def params(self) -> int:
        h = self.hidden
        # W_ih and W_hh with a bias each (the original Torch implementation), per layer.
        lstm = self.layers * (4 * h * (h + h) + 2 * 4 * h)
        embed = self.vocab * h
        softmax = (0 if self.tied_embeddings else self.vocab * h) + self.vocab
        return lstm + embed + softmax

    def flops_per_token(self, phase: str = "forward", seq_len: int | None = None,
                        dtype: DType = "bf16") -> float:
        """FLOPs per token of the unrolled sequence."""
        t = self.seq_len if seq_len is None else seq_len
        return self.flops(batch=1, seq_len=t, phase=phase, dtype=dtype) / t

    def _forward(self, phase: str, batch: int, seq_len: int | None, context: int, wb: float,
                 ab: float, kb: float) -> tuple[Operation, ...]:
        if phase in ("prefill", "decode") or context:
            raise ValueError(f"{self.name} supports phases 'forward', 'backward' and 'train' "
                             "with context_tokens=0")
        t = self.seq_len if seq_len is None else _validate.positive_int("seq_len", seq_len,
                                                                        maximum=_MAX_SIZE)
        h, n = self.hidden, float(batch * t)
        ops = [Operation("embed", "gather", 0.0, n * h * (wb + ab), 1)]
        for layer in range(1, self.layers + 1):
            ops.append(_matmul(f"layer{layer}.input_matmul", n, h, 4 * h, wb, ab, 1, bias=True))
            ops.append(_matmul(f"layer{layer}.recurrent_matmul", batch, h, 4 * h, wb, ab, t,
                               bias=True, kind="recurrent-matmul"))
            # reads the 4 gate pre-activations and c, writes h and c
            ops.append(_elementwise(f"layer{layer}.cell", batch * h, 26, 5, 2, ab, t))
        ops.append(_matmul("softmax_proj", n, h, self.vocab, wb, ab, 1, bias=True))
        return tuple(ops)


@dataclass(frozen=True, repr=False)
class Recommender(Model):
    """DLRM: embedding tables (one lookup per sparse feature), bottom MLP over dense
    features, pairwise dot-product interaction, top MLP. Almost all parameters are embedding
    rows, and each sample touches only 26 of them: the gathers dominate the bytes."""

    dense_features: int = 13
    embedding_dim: int = 128
    table_rows: tuple[int, ...] = ()
    bottom_mlp: tuple[int, ...] = ()
    top_mlp: tuple[int, ...] = ()
    published_embedding_bytes: float = 0.0

    @property
    def _interaction_width(self) -> int:
        vectors = len(self.table_rows) + 1
        return self.embedding_dim + vectors * (vectors - 1) // 2

    def _mlp_shapes(self) -> list[tuple[str, int, int]]:
        shapes, width = [], self.dense_features
        for i, out in enumerate(self.bottom_mlp, start=1):
            shapes.append((f"bottom_mlp{i}", width, out))
            width = out
        width = self._interaction_width
        for i, out in enumerate(self.top_mlp, start=1):
            shapes.append((f"top_mlp{i}", width, out))
            width = out
        return shapes

    @property
    def embedding_params(self) -> int:
        return sum(self.table_rows) * self.embedding_dim

    @cached_property
    def params(self) -> int:
        return self.embedding_params + sum(i * o + o for _, i, o in self._mlp_shapes())

    def _forward(self, phase: str, batch: int, seq_len: int | None, context: int, wb: float,
                 ab: float, kb: float) -> tuple[Operation, ...]:
        self._no_sequence(phase, seq_len, context)
        tables, dim = len(self.table_rows), self.embedding_dim
        lookups = float(batch * tables)
        ops = [Operation("embedding_lookups", "gather", 0.0,
                         lookups * dim * wb + lookups * dim * ab + lookups * 4, tables)]
        shapes = self._mlp_shapes()
        for name, d_in, d_out in shapes[:len(self.bottom_mlp)]:
            ops.append(_matmul(name, batch, d_in, d_out, wb, ab, 1, bias=True))
            ops.append(_elementwise(name + "_relu", batch * d_out, 1, 1, 1, ab, 1))
        vectors = tables + 1
        ops.append(Operation("interaction", "matmul", 2.0 * batch * vectors * vectors * dim,
                             (batch * vectors * dim + batch * self._interaction_width) * ab))
        top = shapes[len(self.bottom_mlp):]
        for name, d_in, d_out in top:
            ops.append(_matmul(name, batch, d_in, d_out, wb, ab, 1, bias=True))
            if name != top[-1][0]:
                ops.append(_elementwise(name + "_relu", batch * d_out, 1, 1, 1, ab, 1))
        ops.append(_elementwise("sigmoid", batch, 4, 1, 1, ab, 1))
        return tuple(ops)


_FAMILIES: dict[str, type[Model]] = {
    "transformer": Transformer, "moe": MoETransformer, "cnn": ConvNet,
    "lstm": LSTMLanguageModel,
    "recommender": Recommender,
}


def _build(entry: dict[str, Any]) -> Model:
    fields = dict(entry)
    cls = _FAMILIES[fields["family"]]
    fields["aliases"] = tuple(fields.get("aliases", ()))
    for key in ("stages", "table_rows", "bottom_mlp", "top_mlp"):
        if key in fields:
            fields[key] = tuple(tuple(v) if isinstance(v, list) else v for v in fields[key])
    fields.pop("stride_on", None)  # documented in the source string; the code implements it
    return cls(**fields)


def _load() -> tuple[tuple[Model, ...], dict[str, Model]]:
    text = resources.files("accelkit").joinpath("data/models.json").read_text(encoding="utf-8")
    models = tuple(_build(entry) for entry in json.loads(text)["models"])
    table: dict[str, Model] = {}
    for model in models:
        for key in (model.name, model.display_name, *model.aliases):
            table[_validate.normalise_name(key)] = model
    return models, table


_CATALOG: tuple[tuple[Model, ...], dict[str, Model]] | None = None


def _catalog() -> tuple[tuple[Model, ...], dict[str, Model]]:
    global _CATALOG
    if _CATALOG is None:
        _CATALOG = _load()
    return _CATALOG


def get(name: str | Model) -> Model:
    """The catalogued model called ``name`` (any case; dashes, spaces and dots ignored).

    Raises:
        ValueError: unknown name, naming the close matches.
        TypeError: ``name`` is neither a string nor a :class:`Model`.
    """
    if isinstance(name, Model):
        return name
    return _validate.lookup("model", name, _catalog()[1])


def all() -> tuple[Model, ...]:  # noqa: A001 - the catalog's natural name, as ak.chips.all()
    """Every catalogued model, in catalog order."""
    return _catalog()[0]


def names() -> tuple[str, ...]:
    """The canonical name of every model."""
    return tuple(m.name for m in all())


# -- the "2 × parameters × tokens" rule against the full count -------------------------------------

def rule_of_thumb(name: str | Model = "llama-3-8b") -> dict[str, float]:
    """One forward pass over one full-length sequence: the 2·N·D rule against the library's count.

    The rule counts 2 FLOPs per parameter per token. It misses attention's QKᵀ and A·V (no
    weights) and over-counts the input embedding (a table lookup, not a matmul); the returned
    figures quantify both corrections.

    Args:
        name: a catalog model name or Model with ``seq_len``, ``vocab`` and ``d_model``
            (a :class:`Transformer`).
    Returns:
        ``tokens`` (the model's seq_len), ``params``, ``rule_of_thumb_flops`` (2·params·tokens),
        ``library_flops`` (:meth:`Model.flops`, forward, batch 1), ``attention_fraction`` (share
        of those FLOPs in attention), ``embedding_params`` (vocab · d_model) and
        ``embedding_flops_in_rule`` (2 · embedding_params · tokens).
    Raises:
        TypeError: a model that is not a transformer.
        ValueError: an unknown model name.
    """
    model = get(name)
    if not isinstance(model, Transformer):
        raise TypeError(f"name must be a transformer (it needs seq_len, vocab and d_model), "
                        f"got {type(model).__name__} {model.name!r}")
    tokens = model.seq_len
    ops = model.operations(batch=1, seq_len=tokens, phase="forward")
    embedding_params = model.vocab * model.d_model  # looked up, not multiplied
    return {
        "tokens": tokens,
        "params": model.params,
        "rule_of_thumb_flops": 2.0 * model.params * tokens,
        "library_flops": model.flops(batch=1, seq_len=tokens, phase="forward"),
        "attention_fraction": kind_share(ops, "attention").flops_fraction,
        "embedding_params": embedding_params,
        "embedding_flops_in_rule": 2.0 * embedding_params * tokens,
    }


__all__ = ["ConvNet", "KINDS", "KindShare", "LSTMLanguageModel", "MATRIX_KINDS", "Model",
           "MoETransformer", "Operation", "PHASES", "Recommender", "Transformer", "all", "by_kind", "get",
           "kind_share", "names", "rule_of_thumb"]
