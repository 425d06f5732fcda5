"""The language models: decoder-only transformers, dense (GPT-3, Llama) and mixtures of experts
(Mixtral, DeepSeek-V3 with multi-head latent attention), their shapes and operations.

    >>> import accelkit as ak
    >>> m = ak.models.get("llama-3-70b")
    >>> m.heads, m.kv_heads, m.qkv_width, m.kv_cache_width
    (64, 8, 10240, 2048)

The counting conventions (FLOPs per multiply-accumulate, bytes without fusion, causal attention)
are :mod:`accelkit.operations`'; the catalog that builds these from ``models.json`` is
:mod:`accelkit.models`. The widths other cost models need (attention's query, key and value
widths, the KV cache, the MLP's and the experts' input widths) are public properties here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accelkit import _validate, dtypes
from accelkit.dtypes import DType
from accelkit.operations import MAX_SIZE, PHASES, Model, Operation, elementwise, matmul


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
    def qkv_width(self) -> int:
        """Outputs of the fused query, key and value projection: (heads + 2·kv_heads)·head_dim."""
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    @property
    def mlp_in_width(self) -> int:
        """Outputs of the MLP's first projection: 2·d_ff gated (gate and up), else d_ff."""
        return (2 if self.gated_mlp else 1) * self.d_ff

    @property
    def latent_attention(self) -> bool:
        """Whether attention is multi-head latent attention (MLA, :class:`MoETransformer`)."""
        return False

    @property
    def qk_head_dim(self) -> int:
        """Width of each head's query and key vectors, the q·k dot product's length."""
        return self.head_dim

    @property
    def value_head_dim(self) -> int:
        """Width of each head's value vector (and of its attention output)."""
        return self.head_dim

    @property
    def attention_kv_heads(self) -> int:
        """Heads of the key and value tensors attention multiplies by: ``kv_heads`` (grouped-query
        attention shares each over heads / kv_heads query heads)."""
        return self.kv_heads

    @property
    def kv_cache_width(self) -> int:
        """Values one token leaves in the KV cache per layer: a key and a value per KV head."""
        return 2 * self.kv_heads * self.head_dim

    @property
    def attention_matmul_flops_per_pair(self) -> int:
        """QKᵀ and A·V FLOPs per (query, key) pair per head per layer: 2·qk + 2·value widths
        (4·head_dim for standard attention); the softmax adds 5 more (module docstring)."""
        return 2 * self.qk_head_dim + 2 * self.value_head_dim

    @property
    def layer_params(self) -> int:
        """Parameters of one transformer block."""
        d, attn_width = self.d_model, self.heads * self.head_dim
        weights = d * self.qkv_width + attn_width * d + d * self.mlp_in_width + self.d_ff * d
        biases = (self.qkv_width + d + self.mlp_in_width + d) if self.biases else 0
        norm = 2 * self._norm_params_each
        return weights + biases + norm

    @property
    def _norm_params_each(self) -> int:
        return self.d_model * (2 if self.norm == "layernorm" else 1)

    @property
    def params(self) -> int:
        embeddings = self.vocab * self.d_model * (1 if self.tied_embeddings else 2)
        positions = self.seq_len * self.d_model if self.position == "learned" else 0
        return self.layers * self.layer_params + embeddings + positions + self._norm_params_each

    @property
    def lookup_params(self) -> int:
        """Parameters a token only looks up and never multiplies: the input embedding table when
        it is not tied to the output projection, and learned position embeddings.

        ``params`` counts them, so 6·N·D prices them as if they were matmul weights; the
        operations (and so ``flops_per_token``) give them no FLOPs.

            >>> import accelkit as ak
            >>> m = ak.models.get("llama-3-8b")
            >>> m.lookup_params == m.vocab * m.d_model
            True
        """
        table = 0 if self.tied_embeddings else self.vocab * self.d_model
        positions = self.seq_len * self.d_model if self.position == "learned" else 0
        return table + positions

    def attention_flops_per_token(self, phase: str = "train", seq_len: int | None = None,
                                  context_tokens: int = 0) -> float:
        """FLOPs per token of attention itself (QKᵀ, softmax and A·V under the causal mask, the
        ``"attention"`` operations), the part of ``flops_per_token`` that has no parameters.

        Args mean what they mean for :meth:`flops_per_token`; the default is a training pass
        (forward and backward) over the model's training sequence length.

            >>> import accelkit as ak
            >>> m = ak.models.get("llama-3-8b")
            >>> f"{m.attention_flops_per_token() / (6 * m.params):.1%}"
            '13.5%'
        """
        phase = _validate.choice("phase", phase, PHASES)
        t = self._tokens(phase, seq_len)
        ops = self.operations(batch=1, seq_len=t, phase=phase, context_tokens=context_tokens)
        return sum(op.flops for op in ops if op.kind == "attention") / t

    def kv_cache_bytes_per_token(self, dtype: DType = "bf16") -> float:
        """Bytes one token leaves in the cache: layers · :attr:`kv_cache_width` values
        (2·layers·kv_heads·head_dim for standard attention)."""
        return float(self.layers * self.kv_cache_width) * dtypes.nbytes(dtype)

    def kv_cache_bytes(self, batch: int, context_tokens: int, dtype: DType = "bf16") -> float:
        """Bytes of the KV cache for ``batch`` sequences of ``context_tokens`` tokens each."""
        batch = _validate.positive_int("batch", batch, maximum=MAX_SIZE)
        context_tokens = _validate.nonnegative_int("context_tokens", context_tokens,
                                                   maximum=MAX_SIZE)
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

    def check_seq_len(self, seq_len: int | None = None) -> int:
        """The training sequence length to use: ``seq_len`` checked (a whole number from 1 to
        10^8), or the model's own ``seq_len`` when None.

        Raises:
            TypeError, ValueError: ``seq_len`` not a whole number in range.
        """
        if seq_len is None:
            return self.seq_len
        return _validate.positive_int("seq_len", seq_len, maximum=10**8)

    def _tokens(self, phase: str, seq_len: int | None) -> int:
        if seq_len is None:
            return 1 if phase == "decode" else self.seq_len
        return _validate.positive_int("seq_len", seq_len, maximum=MAX_SIZE)

    def _forward(self, phase: str, batch: int, seq_len: int | None, context: int, wb: float,
                 ab: float, kb: float) -> tuple[Operation, ...]:
        t, n, kb, pairs = self._sequence(phase, batch, seq_len, context, ab, kb)
        d, h, kv, dh, layers = self.d_model, self.heads, self.kv_heads, self.head_dim, self.layers
        norm_flops = 7 if self.norm == "layernorm" else 4
        norm_weights = self._norm_params_each * wb
        attn_flops = (self.attention_matmul_flops_per_pair + 5.0) * h * pairs
        attn_bytes = (2.0 * n * h * dh * ab                      # read Q, write output
                      + batch * (context + t) * 2 * kv * dh * kb)  # read every K and V once
        if phase in ("prefill", "decode"):
            attn_bytes += n * 2 * kv * dh * kb                   # write new K, V to the cache
        ops = [
            Operation("embed", "gather", n * d if self.position == "learned" else 0.0,
                      n * d * wb * (2 if self.position == "learned" else 1) + n * d * ab, 1),
            elementwise("attn_norm", n * d, norm_flops, 1, 1, ab, layers,
                         kind="normalization", extra_bytes=norm_weights),
            matmul("qkv_proj", n, d, self.qkv_width, wb, ab, layers, self.biases),
        ]
        if self.position == "rope":
            ops.append(elementwise("rope", n * (h + kv) * dh, 3, 1, 1, ab, layers))
        ops += [
            Operation("attention", "attention", layers * attn_flops, layers * attn_bytes, layers),
            matmul("attn_out", n, h * dh, d, wb, ab, layers, self.biases),
            elementwise("attn_residual", n * d, 1, 2, 1, ab, layers),
            elementwise("mlp_norm", n * d, norm_flops, 1, 1, ab, layers,
                         kind="normalization", extra_bytes=norm_weights),
            matmul("mlp_gate_up" if self.gated_mlp else "mlp_up", n, d, self.mlp_in_width, wb, ab,
                    layers, self.biases),
            (elementwise("mlp_silu_gate", n * self.d_ff, 5, 2, 1, ab, layers) if self.gated_mlp
             else elementwise("mlp_gelu", n * self.d_ff, 8, 1, 1, ab, layers)),
            matmul("mlp_down", n, self.d_ff, d, wb, ab, layers, self.biases),
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
        return [elementwise("mlp_residual", n * d, 1, 2, 1, ab, self.layers),
                elementwise("final_norm", n * d, norm_flops, 1, 1, ab, 1, kind="normalization",
                             extra_bytes=norm_weights),
                matmul("lm_head", logits_tokens, d, self.vocab, wb, ab, 1)]

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
    def latent_attention(self) -> bool:
        """Whether attention is multi-head latent attention (``kv_lora_rank`` > 0)."""
        return self.kv_lora_rank > 0

    @property
    def qk_head_dim(self) -> int:
        """Query and key width per head: ``head_dim``, plus the rotary part under MLA."""
        return self.head_dim + (self.qk_rope_head_dim if self.latent_attention else 0)

    @property
    def value_head_dim(self) -> int:
        """Value width per head: ``v_head_dim`` under MLA, else ``head_dim``."""
        return self.v_head_dim if self.latent_attention else self.head_dim

    @property
    def attention_kv_heads(self) -> int:
        """Heads of the key and value tensors attention multiplies by: MLA rebuilds a key and a
        value per head from the latent, so ``heads``; otherwise ``kv_heads``."""
        return self.heads if self.latent_attention else self.kv_heads

    @property
    def kv_cache_width(self) -> int:
        """Values one token leaves in the cache per layer: MLA keeps the latent and the shared
        rotary key (the absorbed form serving engines use), else a key and value per KV head."""
        if self.latent_attention:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return super().kv_cache_width

    @property
    def expert_in_width(self) -> int:
        """Outputs of an expert's first projection: 2·d_ff_expert gated (gate and up), else one."""
        return (2 if self.gated_mlp else 1) * self.d_ff_expert

    @property
    def attention_params_per_layer(self) -> int:
        """Attention weights of one layer (MLA: both low-rank paths and their norms)."""
        d, h = self.d_model, self.heads
        if not self.latent_attention:
            return d * self.qkv_width + h * self.head_dim * d
        q = (d * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * h * self.qk_head_dim
             if self.q_lora_rank else d * h * self.qk_head_dim)
        kv = (d * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
              + self.kv_lora_rank * h * (self.head_dim + self.v_head_dim))
        return q + kv + h * self.v_head_dim * d

    @property
    def expert_params(self) -> int:
        """Weights of one expert MLP (gate, up, down)."""
        return self.d_model * self.expert_in_width + self.d_ff_expert * self.d_model

    @property
    def router_params_per_layer(self) -> int:
        return self.d_model * self.n_experts

    @property
    def routed_expert_params(self) -> int:
        """All routed experts of all MoE layers: the parameters expert parallelism shards."""
        return self.moe_layers * self.n_experts * self.expert_params

    def _layer_total(self, experts: int) -> tuple[int, int]:
        d = self.d_model
        common = self.attention_params_per_layer + 2 * self._norm_params_each
        dense = common + d * self.mlp_in_width + self.d_ff * d
        moe = common + (experts + self.shared_experts) * self.expert_params \
            + self.router_params_per_layer
        return dense, moe

    def _count(self, experts: int) -> int:
        dense, moe = self._layer_total(experts)
        embeddings = self.vocab * self.d_model * (1 if self.tied_embeddings else 2)
        return (self.dense_layers * dense + self.moe_layers * moe + embeddings
                + self._norm_params_each)

    @property
    def layer_params(self) -> int:
        """Parameters of an average block (every expert counted)."""
        dense, moe = self._layer_total(self.n_experts)
        return (self.dense_layers * dense + self.moe_layers * moe) // self.layers

    @property
    def params(self) -> int:
        return self._count(self.n_experts)

    @property
    def active_params(self) -> int:
        return self._count(self.experts_per_token)

    def _forward(self, phase: str, batch: int, seq_len: int | None, context: int, wb: float,
                 ab: float, kb: float) -> tuple[Operation, ...]:
        t, n, kb, pairs = self._sequence(phase, batch, seq_len, context, ab, kb)
        d, h, layers = self.d_model, self.heads, self.layers
        qk, vd = self.qk_head_dim, self.value_head_dim
        norm_flops = 7 if self.norm == "layernorm" else 4
        norm_weights = self._norm_params_each * wb
        attn_flops = (self.attention_matmul_flops_per_pair + 5.0) * h * pairs
        cache_width = self.kv_cache_width
        attn_bytes = (n * h * (qk + vd) * ab + batch * (context + t) * cache_width * kb)
        if phase in ("prefill", "decode"):
            attn_bytes += n * cache_width * kb
        ops = [Operation("embed", "gather", 0.0, n * d * wb + n * d * ab, 1),
               elementwise("attn_norm", n * d, norm_flops, 1, 1, ab, layers,
                            kind="normalization", extra_bytes=norm_weights)]
        if self.latent_attention:
            if self.q_lora_rank:
                ops += [matmul("q_down", n, d, self.q_lora_rank, wb, ab, layers),
                        matmul("q_up", n, self.q_lora_rank, h * qk, wb, ab, layers)]
            else:
                ops.append(matmul("q_proj", n, d, h * qk, wb, ab, layers))
            ops += [matmul("kv_down", n, d, self.kv_lora_rank + self.qk_rope_head_dim, wb, ab,
                            layers),
                    matmul("kv_up", n, self.kv_lora_rank, h * (self.head_dim + vd), wb, ab,
                            layers)]
            rope_elements = n * (h + 1) * self.qk_rope_head_dim
        else:
            ops.append(matmul("qkv_proj", n, d, self.qkv_width, wb, ab, layers))
            rope_elements = n * (h + self.kv_heads) * self.head_dim
        ops += [elementwise("rope", rope_elements, 3, 1, 1, ab, layers),
                Operation("attention", "attention", layers * attn_flops, layers * attn_bytes,
                          layers),
                matmul("attn_out", n, h * vd, d, wb, ab, layers),
                elementwise("attn_residual", n * d, 1, 2, 1, ab, layers),
                elementwise("mlp_norm", n * d, norm_flops, 1, 1, ab, layers,
                             kind="normalization", extra_bytes=norm_weights)]
        if self.dense_layers:
            ops += [matmul("dense_mlp_gate_up", n, d, self.mlp_in_width, wb, ab, self.dense_layers),
                    elementwise("dense_mlp_silu_gate", n * self.d_ff, 5, 2, 1, ab,
                                 self.dense_layers),
                    matmul("dense_mlp_down", n, self.d_ff, d, wb, ab, self.dense_layers)]
        moe, k, e = self.moe_layers, self.experts_per_token, self.n_experts
        if moe:
            rows = n * (k + self.shared_experts)   # token-expert pairs per layer
            # Experts a layer's weights are read for: under balanced routing each expert is
            # missed by a token with probability 1 - k/e, so e·(1 - (1 - k/e)^n) are touched.
            touched = e * (1.0 - (1.0 - k / e) ** n) + self.shared_experts
            f_in, f = self.expert_in_width, self.d_ff_expert
            ops += [
                matmul("router", n, d, e, wb, ab, moe),
                Operation("experts_gate_up", "matmul", moe * 2.0 * rows * d * f_in,
                          moe * (touched * d * f_in * wb + rows * (d + f_in) * ab), moe),
                elementwise("experts_silu_gate", rows * f, 5, 2, 1, ab, moe),
                Operation("experts_down", "matmul", moe * 2.0 * rows * f * d,
                          moe * (touched * f * d * wb + rows * (f + d) * ab), moe),
                elementwise("experts_combine", rows * d, 2, 1, 0, ab, moe),
            ]
        return tuple(ops + self._tail(phase, batch, n, wb, ab, norm_flops, norm_weights))

    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "active_params": self.active_params,
                "published_active_params": self.published_active_params,
                "n_experts": self.n_experts, "experts_per_token": self.experts_per_token,
                "shared_experts": self.shared_experts, "d_ff_expert": self.d_ff_expert,
                "dense_layers": self.dense_layers}


__all__ = ["MoETransformer", "Transformer"]
