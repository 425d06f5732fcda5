"""A tensor-parallel serving group: the group sizes a model and chip allow, how the group
splits the KV cache, and what its collectives cost per step (:mod:`accelkit.inference` prices
the steps, :mod:`accelkit.capacity` the fleets; training layouts are :mod:`accelkit.parallel`'s).

    >>> from accelkit import tensor_parallel
    >>> tensor_parallel.tensor_parallel_sizes("llama-3-70b", "H100")
    (1, 2, 4, 8)
    >>> tensor_parallel.kv_cache_copies("llama-3-70b", 16, "heads")
    2

* **The group.** ``n_chips`` > 1 are one tensor-parallel group (Megatron-style: attention heads
  and the MLP's hidden units split across chips), inside one scale-up domain: an HGX node's
  NVLink (8 GPUs) or one TPU slice's ICI (256 chips on v5e and v6e); a larger group is refused
  (beyond the domain, serve replicas). GPUs without NVLink (L4, T4) have no modelled multi-GPU
  link: ``n_chips`` > 1 raises :class:`accelkit.chips.MissingFigureError`. The group must divide
  the attention heads evenly (7 H100s cannot split Llama 3 70B's 64 heads).
* **The KV cache** (``kv_cache_split``), two conventions, both in use:

  - ``"even"`` (default): the cache is split evenly over every chip: over the KV heads, and
    beyond them over the context, as MaxText's context-autoregressive sharding does and the
    scaling book assumes ("our model and caches are fully sharded", applied-inference.md). The
    combine of the partial attention results that a context-split cache needs is not costed.
  - ``"heads"``: the cache splits over the KV heads only, as vLLM's and Megatron's tensor
    parallelism do: a group wider than the KV heads replicates each head over
    ``n_chips / kv_heads`` chips (a group that neither divides them nor is a multiple of them
    is refused), and every copy is held in HBM and read each step. Multi-head latent attention
    keeps one latent shared by every head, so each chip holds all of it.

* **Collectives**: each layer pays two all-reduces of the activations (after attention, after
  the MLP), ``tokens · d_model`` values in the activation format; a mixture of experts spreads
  its routed experts over the group (expert parallelism) and pays two all-to-alls per MoE layer
  instead of the MLP's all-reduce. Each is costed by :mod:`accelkit.collectives` over the group.
"""

from __future__ import annotations

from accelkit import _validate, chips, collectives, dtypes, models
from accelkit.dtypes import DType


def transformer(model: object) -> models.Transformer:
    """The catalog transformer ``model`` names (the inference cost models cover no other).

    Raises:
        ValueError: an unknown model, or one that is not a transformer language model.
    """
    m = models.get(model)  # type: ignore[arg-type]
    if not isinstance(m, models.Transformer):
        raise ValueError(f"inference cost models cover transformer language models; {m.name} is "
                         f"a {m.family}")
    return m


#: How a tensor-parallel group splits the KV cache (see the module docstring).
KV_CACHE_SPLITS = ("even", "heads")


def check_split(kv_cache_split: object) -> str:
    """``kv_cache_split`` checked: one of :data:`KV_CACHE_SPLITS`."""
    return _validate.choice("kv_cache_split", kv_cache_split, KV_CACHE_SPLITS)


def kv_cache_copies(model: str | models.Model, n_chips: int,
                    kv_cache_split: str = "even") -> int:
    """How many copies of the KV cache a tensor-parallel group of ``n_chips`` holds.

    ``"even"``: 1, the cache split evenly over the chips (over the KV heads, then the context).
    ``"heads"``: the cache splits over the KV heads only (the MLA latent, shared by every head,
    is one), so a group wider than them holds ``n_chips / kv heads`` copies of each.

    Raises:
        ValueError: an unknown model or split, a group the split cannot divide the cache over.
    """
    m = transformer(model)
    n = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    problem = kv_problem(m, n, check_split(kv_cache_split))
    if problem is not None:
        raise problem
    return copies(m, n, kv_cache_split)


def kv_cache_heads(m: models.Transformer) -> int:
    """The KV cache's shards by head: the KV heads, or 1 for MLA's latent (shared by all)."""
    return 1 if m.latent_attention else m.kv_heads


def copies(m: models.Transformer, n_chips: int, split: str) -> int:
    """:func:`kv_cache_copies` on checked arguments."""
    return max(1, n_chips // kv_cache_heads(m)) if split == "heads" else 1


def kv_problem(m: models.Transformer, n_chips: int, split: str) -> ValueError | None:
    """Why ``n_chips`` cannot split this model's attention (None if it can): the query heads
    must divide evenly; under ``"heads"`` the KV heads must divide over the group or the group
    over them."""
    if m.heads % n_chips:
        return ValueError(
            f"n_chips={n_chips} does not divide {m.name}'s {m.heads} attention heads: a "
            f"tensor-parallel group splits the heads evenly; use a divisor of {m.heads}")
    kv = kv_cache_heads(m)
    if split == "heads" and kv % n_chips and n_chips % kv:
        return ValueError(
            f"n_chips={n_chips} can neither split {m.name}'s {kv} KV heads evenly nor "
            f"replicate each of them over the same number of chips; use a divisor or a "
            f"multiple of {kv}, or kv_cache_split='even'")
    return None


def group_problem(m: models.Transformer, chip: chips.Chip, n_chips: int,
                   split: str) -> ValueError | None:
    """Why ``n_chips`` cannot be one tensor-parallel group of ``m`` on ``chip`` (None if it can):
    no modelled link between the chips, a group beyond the scale-up domain, or attention the
    group cannot split (:func:`kv_problem`)."""
    if n_chips == 1:
        return None
    if chip.kind == "gpu":
        if chip.scaleup_bytes_per_second is None:
            return chips.MissingFigureError(
                chip.name, "scaleup_bytes_per_second",
                f"{chip.name} has no NVLink: tensor parallelism over PCIe is not modelled, so "
                f"n_chips={n_chips} cannot be costed; serve replicas of one chip instead")
        domain = chip.scaleup_domain_chips or 1
    else:
        if chip.link_bytes_per_second is None:
            return chips.MissingFigureError(
                chip.name, "link_bytes_per_second",
                f"{chip.name} has no published ICI link bandwidth, so the tensor-parallel "
                f"all-reduces of n_chips={n_chips} cannot be costed")
        domain = chip.max_slice_chips or 1
    if n_chips > domain:
        where = "NVLink node" if chip.kind == "gpu" else "ICI slice"
        return ValueError(f"n_chips={n_chips} exceeds {chip.name}'s {domain}-chip {where}: "
                          f"tensor parallelism stops at the scale-up domain; beyond it serve "
                          f"replicas (each a group of at most {domain} chips; throughput adds)")
    return kv_problem(m, n_chips, split)


def check_group(m: models.Transformer, chip: chips.Chip, n_chips: int,
                           split: str) -> None:
    """Refuse a group :func:`group_problem` finds a problem with (raises what it returns)."""
    problem = group_problem(m, chip, n_chips, split)
    if problem is not None:
        raise problem


def communication_plan(m: models.Transformer, act_bytes: float
                        ) -> tuple[tuple[str, int, float], ...]:
    """The collectives of one step across the group: ``(kind, how many, bytes per new token)``.

    Dense: two all-reduces of the activations per layer (after attention, after the MLP).
    Mixture of experts: the routed experts are spread over the chips (expert parallelism), so
    each MoE layer sends every token to its ``experts_per_token`` experts and back, two
    all-to-alls of ``tokens · k · d_model`` values, while attention, shared experts and dense
    layers stay tensor-parallel (one all-reduce each per layer).
    """
    width = m.d_model * act_bytes
    if not isinstance(m, models.MoETransformer) or not m.moe_layers:
        return (("all_reduce", 2 * m.layers, width),)
    moe_layers, k = m.moe_layers, m.experts_per_token
    shared = moe_layers if m.shared_experts else 0
    reduces = m.layers + (m.layers - moe_layers) + shared
    return (("all_reduce", reduces, width), ("all_to_all", 2 * moe_layers, k * width))


def communication_seconds(m: models.Transformer, chip: chips.Chip, n_chips: int, tokens: float,
                   weight_dtype: DType) -> tuple[float, str]:
    """Seconds of a step's collectives for ``tokens`` new tokens, and their networks."""
    if n_chips == 1:
        return 0.0, "none"
    act = dtypes.nbytes(dtypes.activation_dtype(weight_dtype))
    seconds = 0.0
    networks: list[str] = []
    for kind, count, per_token in communication_plan(m, act):
        # a TPU serving replica is a bought slice: its collectives run on every axis it has
        c = collectives.collective(kind, chip, array_bytes=tokens * per_token,
                                   over=collectives.slice_shape(chip, n_chips))
        seconds += count * c.seconds
        networks += [net for net in c.network.split("+") if net not in networks]
    return seconds, "+".join(networks)


def tensor_parallel_sizes(model: str | models.Model, chip: str | chips.Chip,
                          kv_cache_split: str = "even") -> tuple[int, ...]:
    """The tensor-parallel group sizes :func:`accelkit.capacity.plan` considers: powers of two
    that divide the attention heads (and, with ``kv_cache_split="heads"``, divide the KV heads
    or are multiples of them), up to the chip's scale-up domain (1 alone where the chip has no
    modelled link between chips, as L4 and T4)."""
    m = transformer(model)
    the_chip = chips.get(chip)
    split = check_split(kv_cache_split)
    sizes = [1]
    n = 2
    while group_problem(m, the_chip, n, split) is None:
        sizes.append(n)
        n *= 2
    return tuple(sizes)


__all__ = ["KV_CACHE_SPLITS", "check_group", "check_split", "communication_plan",
           "communication_seconds", "copies",
           "group_problem", "kv_cache_copies", "kv_cache_heads", "kv_problem",
           "tensor_parallel_sizes", "transformer"]
