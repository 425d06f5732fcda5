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

The counting conventions and the :class:`Operation` and :class:`Model` types are
:mod:`accelkit.operations`'; the language models' shapes :mod:`accelkit.transformer`; this
module holds the catalog and the other families (a CNN, an LSTM, a recommender). Every name
is importable from here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from accelkit import _validate
from accelkit.dtypes import DType
from accelkit.operations import (KINDS, MATRIX_KINDS, MAX_SIZE, PHASES, KindShare, Model, Operation,
                                 by_kind, elementwise, kind_share, matmul)
from accelkit.transformer import MoETransformer, Transformer


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

    @property
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

    @property
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
            ops.append(elementwise(name.replace("conv", "bn").replace("downsample", "bn_down"),
                                    out_elems, 4, 1, 1, ab, 1, kind="normalization",
                                    extra_bytes=2 * co * wb))
            if name == "stem.conv":
                ops.append(elementwise("stem.relu", out_elems, 1, 1, 1, ab, 1))
                pooled = batch * (so // 2 + so % 2) ** 2 * co
                ops.append(Operation("stem.maxpool", "pooling", 9.0 * pooled,
                                     (out_elems + pooled) * ab))
            elif name.endswith("conv1x1b"):
                ops.append(elementwise(name.replace("conv1x1b", "residual_relu"), out_elems, 2,
                                        2, 1, ab, 1))
            elif not name.endswith("downsample"):
                ops.append(elementwise(name.replace("conv", "relu"), out_elems, 1, 1, 1, ab, 1))
        last = self._convs[-1][6]
        f = self._features
        ops.append(Operation("avgpool", "pooling", float(batch * last * last * f),
                             (batch * last * last * f + batch * f) * ab))
        ops.append(matmul("fc", batch, f, self.classes, wb, ab, 1, bias=True))
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

    @property
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
                                                                        maximum=MAX_SIZE)
        h, n = self.hidden, float(batch * t)
        ops = [Operation("embed", "gather", 0.0, n * h * (wb + ab), 1)]
        for layer in range(1, self.layers + 1):
            ops.append(matmul(f"layer{layer}.input_matmul", n, h, 4 * h, wb, ab, 1, bias=True))
            ops.append(matmul(f"layer{layer}.recurrent_matmul", batch, h, 4 * h, wb, ab, t,
                               bias=True, kind="recurrent-matmul"))
            # reads the 4 gate pre-activations and c, writes h and c
            ops.append(elementwise(f"layer{layer}.cell", batch * h, 26, 5, 2, ab, t))
        ops.append(matmul("softmax_proj", n, h, self.vocab, wb, ab, 1, bias=True))
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

    @property
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
            ops.append(matmul(name, batch, d_in, d_out, wb, ab, 1, bias=True))
            ops.append(elementwise(name + "_relu", batch * d_out, 1, 1, 1, ab, 1))
        vectors = tables + 1
        ops.append(Operation("interaction", "matmul", 2.0 * batch * vectors * vectors * dim,
                             (batch * vectors * dim + batch * self._interaction_width) * ab))
        top = shapes[len(self.bottom_mlp):]
        for name, d_in, d_out in top:
            ops.append(matmul(name, batch, d_in, d_out, wb, ab, 1, bias=True))
            if name != top[-1][0]:
                ops.append(elementwise(name + "_relu", batch * d_out, 1, 1, 1, ab, 1))
        ops.append(elementwise("sigmoid", batch, 4, 1, 1, ab, 1))
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


#: The catalog, read from models.json on first use and kept: every model lookup needs it, and
#: reading it at import would slow ``import accelkit`` (``benchmarks/bench_import.py``); the
#: models are frozen, so one copy serves every caller.
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
           "MoETransformer", "Operation", "PHASES", "Recommender", "Transformer", "all", "by_kind",
           "get", "kind_share", "names", "rule_of_thumb"]
