"""A parallel layout: the degree of each kind of parallelism, what makes it valid for a model,
and which of its chips share a scale-up domain.

    >>> from accelkit.layout import Layout
    >>> layout = Layout(dp=128, tp=8, pp=16, microbatch_tokens=8192, recompute="full")
    >>> layout.chips, str(layout)
    (16384, 'dp128 tp8 pp16 mb=8,192 recompute=full')
    >>> long = Layout(dp=8, tp=8, cp=16, pp=16, microbatch_tokens=131072, recompute="full")
    >>> long.chips, str(long), long.data_parallel
    (16384, 'dp8 tp8 cp16 pp16 mb=131,072 recompute=full', 8)

:mod:`accelkit.parallel` prices a layout's training step (and searches them all); this module
holds what the step model and :mod:`accelkit.mfu` both need to know about one.

**Mapping of layout axes to the network.** Ranks are numbered with ``tp`` fastest, then ``cp``,
``ep``, ``pp``, ``fsdp``, ``dp`` (:data:`AXES`, the order of Llama 3, arXiv:2407.21783 §3.3.2:
[TP, CP, PP, DP]). So TP sits inside the scale-up domain (an NVLink node, an ICI slice) as long as it
fits; an axis whose stride (the product of the faster axes) fills the domain spans domains with
one chip per domain, and a group that starts inside a domain and continues beyond it is
hierarchical (k chips in each domain). Each collective is costed by :mod:`accelkit.collectives`
for that group (:func:`group_collective`).

**Context parallelism** (``cp``, ring attention: Liu et al. 2023, arXiv:2310.01889; Llama 3
§3.3.2): each sequence is split over ``cp`` chips, which share the weights (a data axis for the
gradients) but not the tokens, so ``cp`` is not a replica: ``data_parallel`` is dp·fsdp·ep.
Each chip holds two chunks of seq_len / (2·cp) tokens, one from each end of the sequence, so
causal attention's work is balanced (Llama 3 §3.3.2: "2 × CP chunks"); the sequence must split
that way, and a micro-batch must hold whole sequences (:func:`check_layout`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from accelkit import _validate, chips, collectives, models, topology
from accelkit.activations import RECOMPUTE

#: Rank order of the layout axes, fastest first.
AXES = ("tp", "cp", "ep", "pp", "fsdp", "dp")
#: The largest degree accepted.
MAX_DEGREE = 10**7


def _whole(name: str, value: object, maximum: int) -> int:
    """A whole number (an int, not a float that happens to be whole) in [1, maximum]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number (an int) >= 1, got "
                        f"{type(value).__name__} {value!r}")
    return _validate.positive_int(name, value, maximum=maximum)


@dataclass(frozen=True)
class Layout:
    """Degrees of parallelism; ``chips`` is their product.

    Args:
        dp, fsdp, tp, pp, ep: degrees, ints >= 1 (a float such as ``3.0`` is refused).
        microbatch_tokens: tokens per micro-batch per data-parallel replica, an int; None = one
            sequence (the model's training length; with ``cp`` > 1 the step's sequence length),
            or the replica's whole batch if smaller. With ``cp`` > 1 the micro-batch is split
            over the cp chips: each holds microbatch_tokens / cp of it.
        recompute: "none", "selective" (attention scores) or "full" (each layer's forward).
        interleave: virtual pipeline stages per chip (1 = plain 1F1B), an int.
        cp: context-parallel degree (ring attention; module docstring), an int >= 1; last so
            that positional arguments keep their meaning.

    Raises:
        TypeError: a degree, ``interleave`` or ``microbatch_tokens`` that is not an int.
        ValueError: one below 1 or above the limits, an unknown ``recompute``.
    """

    dp: int = 1
    fsdp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    microbatch_tokens: int | None = None
    recompute: str = "none"
    interleave: int = 1
    cp: int = 1

    def __post_init__(self) -> None:
        for name in ("dp", "fsdp", "tp", "pp", "ep", "interleave", "cp"):
            object.__setattr__(self, name, _whole(name, getattr(self, name), MAX_DEGREE))
        if self.microbatch_tokens is not None:
            object.__setattr__(self, "microbatch_tokens",
                               _whole("microbatch_tokens", self.microbatch_tokens, 10**12))
        object.__setattr__(self, "recompute",
                           _validate.choice("recompute", self.recompute, RECOMPUTE))

    @property
    def chips(self) -> int:
        return self.dp * self.fsdp * self.tp * self.pp * self.ep * self.cp

    @property
    def data_parallel(self) -> int:
        """Replicas that each see different sequences: dp · fsdp · ep (not cp: its chips share
        each sequence)."""
        return self.dp * self.fsdp * self.ep

    @property
    def strides(self) -> dict[str, int]:
        """Rank distance between neighbours of each axis's group (:data:`AXES` order)."""
        tc = self.tp * self.cp
        return {"tp": 1, "cp": self.tp, "ep": tc, "pp": tc * self.ep,
                "fsdp": tc * self.ep * self.pp,
                "dp": tc * self.ep * self.pp * self.fsdp}

    def __str__(self) -> str:
        parts = [f"{a}{getattr(self, a)}" for a in ("dp", "fsdp", "tp", "cp", "pp", "ep")
                 if getattr(self, a) > 1] or ["1 chip"]
        if self.interleave > 1:
            parts.append(f"interleave={self.interleave}")  # not "v4": that reads as TPU v4
        mb = "auto" if self.microbatch_tokens is None else f"{self.microbatch_tokens:,}"
        return " ".join(parts) + f" mb={mb} recompute={self.recompute}"


def largest_job(chip: chips.Chip) -> int:
    """The largest job modelled: accelkit.collectives' group limit (its fat tree and flat DCN
    are untested beyond it); a chip-specific limit where the catalog gives one."""
    value = getattr(chip, "max_job_chips", None)
    return int(value) if value else collectives.MAX_GROUP_CHIPS


def check_layout(model: models.Transformer, chip: chips.Chip, layout: Layout, batch_tokens: int,
                 n_chips: int | None = None, seq_len: int | None = None) -> int:
    """Refuse a layout this model, chip and batch cannot run; return its micro-batch in tokens.

    ``seq_len`` is the step's sequence length (None: the model's); context parallelism
    (``cp`` > 1) is checked against it.

    Raises:
        TypeError: ``layout`` is not a :class:`Layout`.
        ValueError: degrees that do not multiply to ``n_chips``, a job above the chip's
            largest, ep > 1 on a dense model or not dividing the experts, tp not dividing the
            heads, pp·interleave above the layers, interleave without a pipeline, a batch or
            micro-batch that does not divide; with cp > 1, a sequence that does not split into
            2·cp equal chunks or a micro-batch that is not whole sequences.
    """
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be an accelkit.parallel.Layout, got "
                        f"{type(layout).__name__}")
    if n_chips is not None and layout.chips != n_chips:
        raise ValueError(f"layout degrees multiply to {layout.chips:,} chips "
                         f"(dp·fsdp·tp·cp·pp·ep), but n_chips is {n_chips:,}")
    limit = largest_job(chip)
    if layout.chips > limit:
        raise ValueError(f"layout uses {layout.chips:,} chips; {chip.name}'s largest job is "
                         f"{limit:,} chips")
    moe = isinstance(model, models.MoETransformer)
    if layout.ep > 1 and not moe:
        raise ValueError(f"ep must be 1 for the dense model {model.name} (expert parallelism "
                         f"needs a mixture of experts), got ep={layout.ep}")
    if isinstance(model, models.MoETransformer) and model.n_experts % layout.ep:
        raise ValueError(f"ep must divide {model.name}'s {model.n_experts} experts, got "
                         f"ep={layout.ep}")
    if model.heads % layout.tp:
        raise ValueError(f"tp must divide {model.name}'s {model.heads} attention heads, got "
                         f"tp={layout.tp}")
    if layout.pp * layout.interleave > model.layers:
        raise ValueError(f"pp·interleave must be at most {model.name}'s {model.layers} layers, "
                         f"got pp={layout.pp}, interleave={layout.interleave}")
    if layout.interleave > 1 and layout.pp == 1:
        raise ValueError("interleave > 1 needs pp > 1 (virtual stages of a pipeline)")
    if batch_tokens % layout.data_parallel:
        raise ValueError(f"batch_tokens ({batch_tokens:,}) must divide evenly over the "
                         f"{layout.data_parallel:,} data-parallel replicas (dp·fsdp·ep)")
    replica = batch_tokens // layout.data_parallel
    mb = layout.microbatch_tokens
    seq = model.seq_len if seq_len is None else int(seq_len)
    if layout.cp > 1:
        _check_cp(model, layout.cp, seq, replica, mb)
    default = seq if layout.cp > 1 else model.seq_len
    if mb is None:
        mb = default if replica % default == 0 else replica
    if replica % mb:
        raise ValueError(f"microbatch_tokens must divide the {replica:,} tokens each "
                         f"data-parallel replica gets per step, got {mb:,}")
    return mb


def _check_cp(model: models.Transformer, cp: int, seq: int, replica: int,
              mb: int | None) -> None:
    """Refuse a context-parallel degree the sequence or the micro-batch cannot take."""
    if seq % (2 * cp):
        raise ValueError(f"cp={cp} needs a sequence that splits into 2·cp = {2 * cp} equal "
                         f"chunks (two per context-parallel chip, for causal load balance); "
                         f"seq_len {seq:,} does not: use a cp dividing seq_len / 2")
    if replica % seq:
        raise ValueError(f"cp={cp} splits whole sequences: each data-parallel replica's "
                         f"{replica:,} tokens must be whole sequences of {seq:,}")
    if mb is not None and mb % seq:
        raise ValueError(f"microbatch_tokens must be whole sequences of {seq:,} tokens with "
                         f"cp={cp} (context parallelism already splits each sequence), "
                         f"got {mb:,}")


# --------------------------------------------------------------------------------------------
# Which chips of a group share a scale-up domain, and what the group's collectives cost
# --------------------------------------------------------------------------------------------

def domain_chips(chip: chips.Chip, job_chips: int | None = None) -> int:
    """Chips in one scale-up domain: an NVLink domain (GPU); on a TPU the ICI slice, which for
    a job larger than the largest slice is the equal split accelkit.collectives picks."""
    largest = int(chip.scaleup_domain_chips or chip.max_domain_chips or 1)
    if chip.kind == "tpu" and job_chips is not None and job_chips > largest:
        slices = collectives.group_layout(chip, job_chips)[0]
        return job_chips // slices
    return largest


def chips_per_domain(n: np.ndarray | int, stride: np.ndarray | int, domain: int) -> np.ndarray:
    """Chips of a group of ``n`` (ranks ``stride`` apart) that share one domain (arrays
    broadcast, one entry per layout).

    With ranks numbered fastest axis first, a group whose stride fills the domain has one member
    per domain; otherwise domain // stride members share one, rounded down to a whole divisor of
    the group (gcd), so the group splits into equal parts per domain.
    """
    n = np.asarray(n, dtype=np.int64)
    stride = np.maximum(np.asarray(stride, dtype=np.int64), 1)
    fit = np.maximum(domain // stride, 1)
    return np.where(stride * n <= domain, n, np.where(stride >= domain, 1, np.gcd(n, fit)))


def group_collective(chip: chips.Chip, kind: str, n: int, per_domain: int,
                     array_bytes: float, bandwidth: str = "datasheet",
                     job_chips: int | None = None) -> collectives.Collective:
    """One collective (``kind`` from :data:`accelkit.collectives.KINDS`, or ``"send"``: a
    pipeline's point-to-point transfer) over a group of ``n`` chips, ``per_domain`` of them in
    each scale-up domain; ``bandwidth``: "datasheet" or "achievable" (see
    :func:`accelkit.collectives.collective`); ``job_chips``: the job's size (a TPU group that
    spans the whole job takes the job's slice shape, :func:`accelkit.collectives.slice_shape`)."""
    if kind == "send":
        network = "scale-up" if per_domain >= n else "scale-out"
        return collectives.point_to_point(collectives.at_bandwidth(chip, bandwidth),
                                          array_bytes=array_bytes, network=network)
    if per_domain >= n:
        return collectives.collective(kind, chip, array_bytes=array_bytes,
                                      over=placed(chip, n, job_chips), bandwidth=bandwidth)
    if chip.kind == "gpu":
        return collectives.collective(kind, chip, array_bytes=array_bytes, over=n,
                                      inner=domain_chips(chip) // per_domain,
                                      bandwidth=bandwidth)
    axes = collectives.group_layout(chip, per_domain)[1] if per_domain > 1 else (1,)
    return collectives.collective(kind, chip, array_bytes=array_bytes, over=axes,
                                  slices=n // per_domain, bandwidth=bandwidth)


def placed(chip: chips.Chip, n: int, job_chips: int | None = None) -> int | tuple[int, ...]:
    """The ``over`` of a group of ``n`` chips inside one scale-up domain of a job of
    ``job_chips``: on a TPU, a group that is the whole job is the slice the job was bought as
    (2x4 for 8 v5e, not a line of 8); a smaller one takes whole axes of the job's slice where
    some multiply to n, as JAX lays a mesh axis out (:func:`accelkit.topology.whole_axes`:
    the 64-way FSDP axis of an 8x8x8 job is an 8x8 plane, not a 4x4x4 cube); otherwise (a GPU,
    no job size, or no such axes) n itself, which :mod:`accelkit.collectives` lays out.

        >>> from accelkit import chips
        >>> v5p = chips.get("TPU v5p")
        >>> placed(v5p, 64, 512), placed(v5p, 8, 512), placed(v5p, 48, 6144)
        ((8, 8), (8,), 48)
    """
    if chip.kind != "tpu" or job_chips is None or n <= 1:
        return n
    if job_chips == n:
        return collectives.slice_shape(chip, n)
    try:
        shape = topology.slice_layout(chip, job_chips)[1]
    except (ValueError, chips.MissingFigureError):
        return n
    return topology.whole_axes(shape, n) or n


#: The array size at which a group's cost line is read (any size gives the same line).
_REFERENCE_BYTES = float(2**30)


def cost_line(chip: chips.Chip, kind: str, n: int, per_domain: int,
              bandwidth: str = "datasheet", job_chips: int | None = None
              ) -> tuple[float, float, str]:
    """(latency seconds, seconds per byte of the whole array, network) of a group's collective.

    Collectives are alpha-beta (seconds = latency + bytes × a constant, accelkit.collectives),
    so one call per group shape gives the cost of every array size: how the step model prices
    thousands of layouts with one collectives call per distinct group. A group of one: free.
    """
    if n <= 1:
        return 0.0, 0.0, "none"
    r = group_collective(chip, kind, n, per_domain, _REFERENCE_BYTES, bandwidth, job_chips)
    return (float(r.latency_seconds), float(r.bandwidth_seconds) / _REFERENCE_BYTES,
            str(r.network))


__all__ = ["AXES", "Layout", "MAX_DEGREE", "RECOMPUTE", "check_layout", "chips_per_domain",
           "cost_line", "domain_chips", "group_collective", "largest_job", "placed"]
