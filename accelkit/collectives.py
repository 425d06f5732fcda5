"""Collectives across chips: all-gather, reduce-scatter, all-reduce, all-to-all, point-to-point.

    >>> import accelkit as ak
    >>> r = ak.collectives.all_reduce("v5p", array_bytes=2e9, over=16)
    >>> r.network, round(r.seconds * 1e3, 2)
    ('ICI', 20.85)
    >>> h = ak.collectives.all_reduce("H100", array_bytes=2e9, over=64)
    >>> h.network, [lvl.network for lvl in h.levels]
    ('NVLink+scale-out', ['NVLink', 'scale-out', 'NVLink'])

Every function takes ``(chip, array_bytes=..., over=...)`` and returns a frozen :class:`Collective`
with ``seconds = bandwidth_seconds + latency_seconds`` (an alpha-beta model), the ``network`` that
carried it and the per-phase breakdown in ``levels``. Derivations with sources:
``docs/collectives.md``. Hardware figures come from the chip catalog (``accelkit/data/chips.json``),
each with its source: ``chip.source("link_bytes_per_second")`` and so on.

Arguments
---------
``array_bytes``: the size of the WHOLE array: the gathered result of an all-gather; the array being
reduced in a reduce-scatter or all-reduce (each chip holds a full-size partial sum); the whole
array exchanged in an all-to-all (each chip holds ``array_bytes / n``).

``over``: the group.
  * TPU, an int ``n``: ``n`` chips along ONE torus axis, if ``n`` fits on an axis of the largest
    slice (the axis is taken to sit in a slice whose shape gives it wraparound where the chip's
    rule allows); a larger ``n`` is taken to be whole slices, laid out by :func:`group_layout`
    (one slice if it fits, else equal slices joined by DCN; the fastest such layout).
  * TPU, a tuple of axis sizes: the collective spans those torus axes at once, inside one slice;
    ``slices=k`` adds a DCN level across ``k`` such slices. A tuple with as many axes as the torus
    is a whole slice (``Chip.axis_wraps``); a shorter one sits inside a larger slice.
  * Wraparound (scaling-book tpus.md): v4/v5p/7x axes wrap in slices made of whole 4x4x4 cubes;
    v5e/v6e axes wrap only at the full 16; ``wraparound=True/False`` overrides.
  * GPU, an int (or a tuple, whose product is used): ``n`` GPUs. Up to the NVLink domain (8 on
    HGX) it is one NVLink ring; beyond, ``n`` must be a multiple of the domain and the collective
    is hierarchical (below). ``inner=t`` says the group's members are ``t`` ranks apart (for
    example the data-parallel group when tensor parallelism of degree ``t`` fills the node), so
    only ``max(1, domain // t)`` of them share a node.

Model (formulas derived in docs/collectives.md)
-----------------------------------------------
Let V = array_bytes, w = one ICI link's one-way bandwidth, N = group size.

* TPU ring over one torus axis of n chips (jax-ml/scaling-book sharding.md): each chip must
  receive (n-1)/n * V. With a wraparound link the ring runs both directions, so each chip takes
  data in on 2 links: T_AG = (n-1)/n * V / (2w) (the book's V / W_ici with W_ici = 2w
  bidirectional). Without wraparound (a line) the end chip receives everything on one link:
  T_AG = (n-1)/n * V / w, twice as slow, as the book's v5e example (an axis of 4) shows. Hops (latency steps):
  floor(n/2) with wraparound, n-1 without.
* Several axes at once: axes run in parallel on disjoint links, each chip's ingress is the sum of
  its axes' bandwidths b_a (2w if the axis wraps, w if not), so T_AG = (N-1)/N * V / sum(b_a). This
  is the lower bound a chip's ingress sets, reached by splitting the array across axis orders; it
  is exact for one axis and is the book's ``V / (W_ici * n_axes)`` for equal wrapped axes. Hops add
  over axes (the book: T_min * sum |X_i| / 2).
* Reduce-scatter costs what an all-gather costs (the reverse schedule); all-reduce = reduce-scatter
  + all-gather = twice (no in-network reduction: SHARP is not modelled).
* All-to-all on a torus: with shortest-path routing each ordered pair exchanges V/N^2; the busiest
  link of axis a carries L_a * V / (n_a * N) per direction, L_a = n^2/8 (even wrapped ring),
  (n^2-1)/8 (odd wrapped), floor(n/2)*ceil(n/2) (line). One wrapped axis gives V/(8w) = T_AG/4,
  the book's "AllToAll is 1/4 of an AllGather on a bidirectional ring".
* GPU inside the NVLink domain (switched, all-to-all): a ring at the GPU's NVLink egress W_nvl
  (450 GB/s each way on H100): T_AG = (n-1)/n * V / W_nvl (scaling-book gpus.md); all-to-all
  T = (n-1) V / (n^2 W_nvl).
* GPU across nodes, hierarchical: reduce-scatter inside the node (L GPUs of the group per node),
  all-reduce across the M nodes on V/L per GPU through each GPU's own NIC (all the node's NICs in
  parallel), all-gather inside the node. The scale-out phase costs 2 (M-1)/M * (V/L) / W_nic, the
  book's ``bytes / W_node_egress`` for L = 8. Phases on different networks pipeline (chunks flow
  from one level to the next), so bandwidth_seconds = the max over networks of that network's
  phases (the book's ``max(T_node, T_scale-out)``); ``pipelined=False`` adds them instead.
  ``algorithm="flat_ring"`` is the naive model the issue criticises: one ring through every GPU,
  each pushing 2 (N-1)/N * V through its own NIC alone. All-to-all across nodes: each GPU sends
  (N-L) V / N^2 through its NIC (the book's B (M-1) / (M^2 W_node) for L = 8).
* TPU slices beyond one ICI slice are joined by DCN with the same hierarchical schedule: ICI
  reduce-scatter, DCN all-reduce on V/S per chip at each chip's DCN share, ICI all-gather.
* Latency: NCCL's model for GPUs (NVIDIA/nccl src/graph/tuning.cc): a base cost per collective
  plus a per-step cost per ring step, NVLink steps and network steps counted separately; ~1 us per
  ICI hop on TPUs (scaling-book sharding.md). Bandwidth and latency add.

Simplifications (said where they matter): peak link bandwidth is assumed reachable (the book
measures ~370 of 450 GB/s on H100 NVLink at 10 GB messages, and much less at small sizes); no
in-network reduction (SHARP); no contention with other traffic; the fat tree beyond the node has
full bisection bandwidth; DCN per chip is the host NIC bandwidth shared by the host's chips.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

from accelkit import _validate, chips, dtypes, topology
from accelkit.topology import MAX_GROUP_CHIPS, GroupLayoutError

__all__ = [
    "Collective", "GroupLayoutError", "Level", "KINDS", "NETWORKS", "MAX_GROUP_CHIPS",
    "MAX_ARRAY_BYTES", "all_gather", "reduce_scatter", "all_reduce", "all_to_all",
    "point_to_point", "collective", "group_layout", "dp_critical_tokens_per_chip", "BANDWIDTHS",
    "at_bandwidth", "slice_shape",
]

#: The link figures a collective runs at: the datasheet's, or what collectives measurably reach
#: (:attr:`accelkit.chips.Chip.achievable_scaleup_bytes_per_second`: nccl-tests bus bandwidth
#: on NVLink, a measured share of the ICI links; and the scale-out share).
BANDWIDTHS = ("datasheet", "achievable")


def at_bandwidth(chip: chips.Chip, bandwidth: str) -> chips.Chip:
    """``chip`` itself for "datasheet"; for "achievable", the same chip with its scale-up
    (per-link ICI on TPUs, NVLink per GPU) and scale-out figures replaced by the achievable ones
    (each with its source in the catalog), so every formula below runs on measured bandwidth.

    Raises:
        ValueError: ``bandwidth`` not one of :data:`BANDWIDTHS`.
    """
    which = _validate.choice("bandwidth", bandwidth, BANDWIDTHS)
    if which == "datasheet":
        return chip
    up, out, link = (chip.scaleup_bytes_per_second, chip.scaleout_bytes_per_second,
                     chip.link_bytes_per_second)
    new_up = None if up is None else chip.achievable_scaleup_bytes_per_second
    new_link = None if link is None or up is None or new_up is None else link * new_up / up
    new_out = None if out is None else chip.achievable_scaleout_bytes_per_second
    return dataclasses.replace(chip, scaleup_bytes_per_second=new_up,
                               link_bytes_per_second=new_link, scaleout_bytes_per_second=new_out)

#: The collectives this module models.
KINDS = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all")
#: Names used in ``Collective.network`` and ``Level.network``.
NETWORKS = ("ICI", "NVLink", "scale-out", "DCN")
#: Largest array accepted (1 PB): far above any real collective, refuses typos like 1e30.
MAX_ARRAY_BYTES = 1e15

_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "fp32": 4}


@dataclass(frozen=True)
class Level:
    """One phase of a collective on one network.

    ``chips``: ring length at this level; ``axes``/``wraps``: the torus axes (TPU ICI) or
    ``(chips,)``; ``array_bytes``: the array this phase works on (for the scale-out phase of a
    hierarchical all-reduce, the 1/L shard each GPU owns); ``bytes_sent_per_chip``: bytes each chip
    sends in this phase (all its links together).
    """

    network: str
    phase: str  # all_gather / reduce_scatter / all_reduce / all_to_all / send
    chips: int
    axes: tuple[int, ...]
    wraps: tuple[bool, ...]
    array_bytes: float
    bytes_sent_per_chip: float
    bytes_per_second: float  # the per-chip bandwidth the phase runs at (sum over links used)
    steps: int  # latency steps (ring steps / hops)
    bandwidth_seconds: float
    latency_seconds: float

    @property
    def seconds(self) -> float:
        return self.bandwidth_seconds + self.latency_seconds


@dataclass(frozen=True)
class Collective:
    """A collective's cost. ``seconds = bandwidth_seconds + latency_seconds``.

    ``network``: the networks that carried it, joined by "+" in level order ("ICI", "NVLink",
    "NVLink+scale-out", "ICI+DCN", "scale-out"; "none" for a group of one). ``levels``: the
    per-phase breakdown. ``domains``: scale-up domains spanned (GPU nodes / TPU slices);
    ``chips_per_domain``: members of the group in each.
    """

    kind: str
    chip: str
    array_bytes: float
    group_chips: int
    over: tuple[int, ...]  # TPU: the ICI axes per slice; GPU: (group_chips,)
    domains: int
    chips_per_domain: int
    algorithm: str
    network: str
    levels: tuple[Level, ...]
    bandwidth_seconds: float
    latency_seconds: float
    seconds: float

    @property
    def bytes_sent_per_chip(self) -> float:
        return sum(level.bytes_sent_per_chip for level in self.levels)

    def seconds_on(self, network: str) -> float:
        """Seconds spent on one network (bandwidth + latency of its phases)."""
        network = _validate.choice("network", network, NETWORKS)
        return sum(level.seconds for level in self.levels if level.network == network)


# ----------------------------------------------------------------------------- validation

# The common cases (a plain float, a plain int) take a fast path so that one collective costs
# tens of microseconds; anything else goes through _validate, whose messages name the argument
# and its allowed range.


def _array_bytes(value: object) -> float:
    if (type(value) is float or type(value) is int) and 0 < value <= MAX_ARRAY_BYTES:
        return float(value)
    return _validate.positive_float("array_bytes", value, maximum=MAX_ARRAY_BYTES)


def _whole(name: str, value: object, maximum: int = MAX_GROUP_CHIPS) -> int:
    if type(value) is int and 1 <= value <= maximum:
        return value
    return _validate.positive_int(name, value, maximum=maximum)


def _pick(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if isinstance(value, str) and value in allowed:
        return value
    return _validate.choice(name, value, allowed)


def _over(value: object) -> tuple[int, ...] | int:
    if type(value) is int and 1 <= value <= MAX_GROUP_CHIPS:
        return value
    if type(value) is tuple and 1 <= len(value) <= 3 and all(
            type(a) is int and 1 <= a <= MAX_GROUP_CHIPS for a in value
    ) and math.prod(value) <= MAX_GROUP_CHIPS:
        return value
    if isinstance(value, (tuple, list)):
        if not 1 <= len(value) <= 3:
            raise ValueError(f"over must be an int or a tuple of 1 to 3 mesh-axis sizes, got {value!r}")
        axes = tuple(_whole(f"over[{i}]", a) for i, a in enumerate(value))
        if math.prod(axes) > MAX_GROUP_CHIPS:
            raise ValueError(f"over spans {math.prod(axes):,} chips; the model accepts at most "
                             f"{MAX_GROUP_CHIPS:,} (MAX_GROUP_CHIPS)")
        return axes
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return _whole("over", value)
    raise TypeError(f"over must be an int (group size) or a tuple of mesh-axis sizes, "
                    f"got {type(value).__name__} {value!r}")


# ----------------------------------------------------------------------------- TPU topology

def slice_shape(chip: str | chips.Chip, n: int) -> int | tuple[int, ...]:
    """The group ``over`` that ``n`` chips bought as one slice really are: on a TPU the slice's
    torus shape (8 v5e are a 2x4, not a 1x8 line: :func:`accelkit.topology.slice_layout`, the
    fastest whole-slice shape for n chips), so a collective over a bought slice runs on every
    axis it has; on a GPU (switched) or beyond one slice, ``n`` itself.

        >>> slice_shape("v5e", 8), slice_shape("H100", 8)
        ((4, 2), 8)
    """
    the_chip = chips.get(chip)
    n = _whole("n", n)
    if the_chip.kind != "tpu" or n == 1 or n > (the_chip.max_slice_chips or 1):
        return n
    slices, axes, _ = topology.slice_layout(the_chip, n)
    return axes if slices == 1 else n


def group_layout(chip: str | chips.Chip, over: int | tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """How a TPU group is placed: ``(slices, ici_axes)``.

    An int that fits one axis of the largest slice stays one axis; a larger int becomes the compact
    sub-torus with the most ingress bandwidth (wrapped axes count double), split into the fewest
    equal slices (joined by DCN) when it exceeds the largest slice. A tuple is returned as is.

    Raises:
        ValueError: not a TPU, or a group that cannot be laid out (see the message).
    """
    the_chip = chips.get(chip)
    if the_chip.kind != "tpu":
        raise ValueError(f"group_layout is for TPUs; {the_chip.name} is a GPU (its groups are rings "
                         "inside NVLink domains)")
    topology.ici_link_bytes_per_second(the_chip)
    spec = _over(over)
    if isinstance(spec, tuple):
        topology.check_axes(the_chip, spec)
        return 1, spec
    if spec <= max(the_chip.max_slice_shape):
        return 1, (spec,)
    slices, axes, _ = topology.slice_layout(the_chip, spec)
    return slices, axes


# ----------------------------------------------------------------------------- ring formulas

def _level(network: str, phase: str, chips_: int, axes: tuple[int, ...], wraps: tuple[bool, ...],
           array_bytes: float, sent: float, bandwidth: float, steps: int, seconds: float,
           step_latency: float) -> Level:
    return Level(network=network, phase=phase, chips=chips_, axes=axes, wraps=wraps,
                 array_bytes=array_bytes, bytes_sent_per_chip=sent, bytes_per_second=bandwidth,
                 steps=steps, bandwidth_seconds=seconds, latency_seconds=steps * step_latency)


def _ring(network: str, phase: str, n: int, array_bytes: float, bandwidth: float,
          step_latency: float) -> Level:
    """A one-direction ring of n members, each sending at ``bandwidth`` (switched networks)."""
    factor = 2 if phase == "all_reduce" else 1
    sent = factor * (n - 1) / n * array_bytes
    return _level(network, phase, n, (n,), (False,), array_bytes, sent, bandwidth,
                  factor * (n - 1), sent / bandwidth, step_latency)


def _tpu_phase(chip: chips.Chip, phase: str, axes: tuple[int, ...], wraps: tuple[bool, ...],
               terms: tuple[float, int, float, int], array_bytes: float) -> Level:
    """One ICI phase over torus axes: T_AG = (N-1)/N * V / ingress (see topology.torus_terms)."""
    n = math.prod(axes)
    hop = chip.hop_latency_seconds or 0.0
    ingress, hops, a2a, diameter = terms
    if phase == "all_to_all":
        seconds = a2a * array_bytes
        sent = (n - 1) / n * array_bytes / n
        return _level("ICI", phase, n, axes, wraps, array_bytes, sent,
                      sent / seconds if seconds else 0.0, diameter, seconds, hop)
    factor = 2 if phase == "all_reduce" else 1
    sent = factor * (n - 1) / n * array_bytes
    return _level("ICI", phase, n, axes, wraps, array_bytes, sent, ingress, factor * hops,
                  sent / ingress, hop)


# ----------------------------------------------------------------------------- assembly

def _combine(kind: str, chip: chips.Chip, array_bytes: float, group: int, over: tuple[int, ...],
             domains: int, per_domain: int, algorithm: str, levels: list[Level], base: float,
             pipelined: bool) -> Collective:
    """Phases on one network add; different networks overlap (max) when pipelined, else add."""
    per_network: dict[str, float] = {}
    latency = base if levels else 0.0
    for level in levels:
        per_network[level.network] = per_network.get(level.network, 0.0) + level.bandwidth_seconds
        latency += level.latency_seconds
    times = per_network.values()
    bandwidth = (max(times) if pipelined else sum(times)) if levels else 0.0
    return Collective(kind=kind, chip=chip.name, array_bytes=array_bytes, group_chips=group,
                      over=over, domains=domains, chips_per_domain=per_domain, algorithm=algorithm,
                      network="+".join(per_network) if levels else "none", levels=tuple(levels),
                      bandwidth_seconds=bandwidth, latency_seconds=latency,
                      seconds=bandwidth + latency)


def _hierarchy(kind: str, scaleup: str, scaleout: str, inside: list, outside: Level | None) -> list[Level]:
    """Order the phases of a hierarchical collective (inside = [phase builders])."""
    if outside is None:
        return inside
    if kind == "all_reduce":
        return [inside[0], outside, inside[1]]
    if kind == "reduce_scatter":
        return [inside[0], outside]
    if kind == "all_gather":
        return [outside, inside[0]]
    return [inside[0], outside]  # all_to_all: concurrent in reality; pipelined combine takes max


def collective(kind: str, chip: str | chips.Chip, *, array_bytes: float,
               over: int | tuple[int, ...], slices: int = 1, inner: int = 1,
               algorithm: str = "auto", pipelined: bool = True,
               wraparound: bool | None = None, scaleup_domain: int | None = None,
               bandwidth: str = "datasheet") -> Collective:
    """Cost of collective ``kind`` (one of KINDS); the four named functions call this.

    Args:
        kind: "all_gather", "reduce_scatter", "all_reduce" or "all_to_all".
        chip: a catalog name or a Chip.
        array_bytes: size of the whole array (see the module docstring), in (0, 1e15].
        over: the group: an int or a tuple of mesh-axis sizes (module docstring).
        slices: TPU only: the group also spans this many ICI slices over DCN (with a tuple over).
        inner: GPU only: the group's members are ``inner`` ranks apart (e.g. the TP degree inside
            each node when this is the data-parallel group); must divide the domain or be a
            multiple of it. On TPUs give the group's axes in ``over`` instead.
        algorithm: "auto" (hierarchical beyond the scale-up domain) or, on GPUs, "flat_ring" (one
            ring through every GPU, each crossing nodes through its own NIC alone).
        pipelined: overlap phases on different networks (default) or run them back to back.
        wraparound: TPU only: force the group's axes to have (True) or lack (False) wraparound
            links; None applies the chip's rule (``Chip.wrap_rule``).
        scaleup_domain: GPU only: override the NVLink domain size (the catalog's is the HGX node,
            8). For example 72 models a GB200 NVL72 rack with B200-class GPUs: the per-GPU NVLink
            and NIC bandwidths stay the chip's (gpus.md: 900 GB/s NVLink per GPU; the rack's
            node egress 4 * 18 * 400 Gb/s / 8 = 3.6 TB/s is 50 GB/s per GPU, as on HGX).
        bandwidth: "datasheet" (the links' figures) or "achievable" (what collectives
            measurably reach: :func:`at_bandwidth`).

    Raises:
        ValueError / TypeError: naming the argument and the allowed range.
    """
    kind = _pick("kind", kind, KINDS)
    the_chip = at_bandwidth(chips.get(chip), bandwidth)
    size = _array_bytes(array_bytes)
    spec = _over(over)
    slices = _whole("slices", slices)
    inner = _whole("inner", inner)
    algorithm = _pick("algorithm", algorithm, ("auto", "flat_ring"))
    if wraparound is not None and not isinstance(wraparound, bool):
        raise TypeError(f"wraparound must be True, False or None, got {wraparound!r}")
    if the_chip.kind == "tpu":
        if inner != 1:
            raise ValueError("inner is for GPU groups; on a TPU name the torus axes the group spans "
                             "in over (a tuple), since that says which chips it holds")
        if algorithm != "auto":
            raise ValueError("algorithm='flat_ring' models GPUs crossing nodes; TPUs use 'auto'")
        if scaleup_domain is not None:
            raise ValueError("scaleup_domain is for GPUs; a TPU's ICI slice comes from its torus")
        if slices == 1 and (spec == 1 or (isinstance(spec, tuple) and math.prod(spec) == 1)):
            return _combine(kind, the_chip, size, 1, (1,), 1, 1, "none", [], 0.0, pipelined)
        return _tpu(kind, the_chip, size, spec, slices, pipelined, wraparound)
    if slices != 1:
        raise ValueError("slices is for TPUs (ICI slices joined by DCN); give a GPU group as over")
    if wraparound is not None:
        raise ValueError("wraparound is for TPU tori; GPUs are switched")
    domain = the_chip.scaleup_domain_chips or 1
    if scaleup_domain is not None:
        domain = _whole("scaleup_domain", scaleup_domain, maximum=1024)
    return _gpu(kind, the_chip, size, spec, inner, algorithm, pipelined, domain)


def _tpu(kind: str, chip: chips.Chip, size: float, spec: int | tuple[int, ...], slices: int,
         pipelined: bool, wraparound: bool | None) -> Collective:
    slices, axes, wraps, terms = topology.tpu_group(chip, spec, slices, wraparound)
    ici_n = math.prod(axes)
    group = ici_n * slices
    if group == 1:
        return _combine(kind, chip, size, 1, axes, 1, 1, "none", [], 0.0, pipelined)
    inside: list[Level] = []
    outside: Level | None = None
    if slices > 1:
        if chip.scaleout_bytes_per_second is None:
            raise chips.MissingFigureError(
                chip.name, "scaleout_bytes_per_second",
                f"{chip.name} has no published DCN bandwidth "
                f"({chip.source('scaleout_bytes_per_second')}); a group must fit one "
                f"slice of at most {chip.max_slice_chips:,} chips")
        dcn_hop = chip.scaleout_hop_latency_seconds or 0.0
        if kind == "all_to_all":
            # Pairs in different slices: each chip sends (N - S) chunks of V/N^2 over DCN.
            sent = (group - ici_n) * size / group ** 2
            outside = _level("DCN", "all_to_all", slices, (slices,), (False,), size, sent,
                             chip.scaleout_bytes_per_second, 1,
                             sent / chip.scaleout_bytes_per_second, dcn_hop)
        else:
            outside = _ring("DCN", kind, slices, size / ici_n, chip.scaleout_bytes_per_second, dcn_hop)
    if ici_n > 1:
        if kind == "all_reduce" and outside is not None:
            inside = [_tpu_phase(chip, "reduce_scatter", axes, wraps, terms, size),
                      _tpu_phase(chip, "all_gather", axes, wraps, terms, size)]
        elif kind == "all_to_all" and outside is not None:
            inside = [_tpu_phase(chip, kind, axes, wraps, terms, size * ici_n ** 2 / group ** 2)]
        else:
            inside = [_tpu_phase(chip, kind, axes, wraps, terms, size)]
    if not inside:
        levels = [outside] if outside is not None else []
    else:
        levels = _hierarchy(kind, "ICI", "DCN", inside, outside)
    return _combine(kind, chip, size, group, axes, slices, ici_n, "torus rings" if slices == 1
                    else "hierarchical (ICI, DCN)", levels, 0.0, pipelined)


def _gpu(kind: str, chip: chips.Chip, size: float, spec: int | tuple[int, ...], inner: int,
         algorithm: str, pipelined: bool, domain: int) -> Collective:
    n = math.prod(spec) if isinstance(spec, tuple) else spec
    over_t = (n,)
    if n == 1:
        return _combine(kind, chip, size, 1, over_t, 1, 1, "none", [], 0.0, pipelined)
    nv, nic = chip.scaleup_bytes_per_second, chip.scaleout_bytes_per_second
    if nv is None or nic is None:
        figure = "scaleup_bytes_per_second" if nv is None else "scaleout_bytes_per_second"
        raise chips.MissingFigureError(
            chip.name, figure, f"{chip.name} has no NVLink or published scale-out bandwidth "
                               f"({chip.source(figure)}); over must be 1")
    if inner > 1 and domain % inner and inner % domain:
        raise GroupLayoutError(f"inner must divide the {domain}-GPU NVLink domain of {chip.name} or be a "
                         f"multiple of it, got {inner}")
    local = max(1, domain // inner)
    if n <= local:
        local = n
    elif n % local:
        raise GroupLayoutError(f"over={n} GPUs with inner={inner} does not divide into whole nodes: "
                         f"{chip.name} puts {local} of the group in each {domain}-GPU NVLink domain, "
                         f"so over must be <= {local} or a multiple of {local}")
    nodes = n // local
    nv_hop = chip.hop_latency_seconds or 0.0
    net_hop = chip.scaleout_hop_latency_seconds or 0.0
    base = chip.collective_latency_seconds or 0.0
    if kind == "all_to_all":
        levels = []
        if local > 1:
            sent = (local - 1) * size / n ** 2
            levels.append(_level("NVLink", kind, local, (local,), (False,), size, sent, nv, 1,
                                 sent / nv, nv_hop))
        if nodes > 1:
            sent = (n - local) * size / n ** 2
            levels.append(_level("scale-out", kind, nodes, (nodes,), (False,), size, sent, nic, 1,
                                 sent / nic, net_hop))
        return _combine(kind, chip, size, n, over_t, nodes, local,
                        "direct" if nodes == 1 else "direct (NVLink, scale-out)", levels, base, True)
    if nodes == 1:
        return _combine(kind, chip, size, n, over_t, 1, n, "ring",
                        [_ring("NVLink", kind, n, size, nv, nv_hop)], base, pipelined)
    if algorithm == "flat_ring":
        factor = 2 if kind == "all_reduce" else 1
        sent = factor * (n - 1) / n * size
        steps = factor * (n - 1)
        inter = factor * (nodes - 1)
        level = Level(network="scale-out", phase=kind, chips=n, axes=(n,), wraps=(False,),
                      array_bytes=size, bytes_sent_per_chip=sent, bytes_per_second=nic, steps=steps,
                      bandwidth_seconds=sent / nic,
                      latency_seconds=(steps - inter) * nv_hop + inter * net_hop)
        return _combine(kind, chip, size, n, over_t, nodes, local, "flat ring", [level], base,
                        pipelined)
    outside = _ring("scale-out", kind, nodes, size / local, nic, net_hop)
    inside: list[Level] = []
    if local > 1:
        if kind == "all_reduce":
            inside = [_ring("NVLink", "reduce_scatter", local, size, nv, nv_hop),
                      _ring("NVLink", "all_gather", local, size, nv, nv_hop)]
        else:
            inside = [_ring("NVLink", kind, local, size, nv, nv_hop)]
    levels = _hierarchy(kind, "NVLink", "scale-out", inside, outside) if inside else [outside]
    return _combine(kind, chip, size, n, over_t, nodes, local, "hierarchical (NVLink, scale-out)"
                    if local > 1 else "ring (scale-out)", levels, base, pipelined)


def all_gather(chip: str | chips.Chip, *, array_bytes: float, over: int | tuple[int, ...],
               **options: object) -> Collective:
    """All-gather: every chip ends with the whole array of ``array_bytes`` (each starts with 1/n).

    Options as for :func:`collective` (slices, inner, algorithm, pipelined, wraparound).
    """
    return collective("all_gather", chip, array_bytes=array_bytes, over=over, **options)  # type: ignore[arg-type]


def reduce_scatter(chip: str | chips.Chip, *, array_bytes: float, over: int | tuple[int, ...],
                   **options: object) -> Collective:
    """Reduce-scatter: each chip holds a full ``array_bytes`` partial sum, ends with 1/n of the sum."""
    return collective("reduce_scatter", chip, array_bytes=array_bytes, over=over, **options)  # type: ignore[arg-type]


def all_reduce(chip: str | chips.Chip, *, array_bytes: float, over: int | tuple[int, ...],
               **options: object) -> Collective:
    """All-reduce of an ``array_bytes`` array: reduce-scatter then all-gather (twice their cost)."""
    return collective("all_reduce", chip, array_bytes=array_bytes, over=over, **options)  # type: ignore[arg-type]


def all_to_all(chip: str | chips.Chip, *, array_bytes: float, over: int | tuple[int, ...],
               **options: object) -> Collective:
    """All-to-all of an ``array_bytes`` array: each chip holds 1/n and sends 1/n of that to each."""
    return collective("all_to_all", chip, array_bytes=array_bytes, over=over, **options)  # type: ignore[arg-type]


def point_to_point(chip: str | chips.Chip, *, array_bytes: float, hops: int = 1,
                   network: str = "scale-up", routes: int | None = None) -> Collective:
    """One chip sends ``array_bytes`` to another (pipeline-parallel activations, for example).

    TPU: ``hops`` ICI hops away, one direction. A torus offers as many link-disjoint routes
    between two chips as each has ICI ports (every route leaves by its own port; the direct one
    is ``hops`` long, each detour ``hops + 2``), so by default (``routes=None``) the transfer is
    split evenly over all ``links_per_chip`` of them: bandwidth ``routes`` x one link's, latency
    the longest route's hops x hop latency. ``routes=1`` is one dimension-ordered path, the book's
    tpus.md example (one link, ``hops`` x hop latency). Which one XLA's sends use is not
    published: both are offered, the split a named assumption. ``network="scale-out"`` sends over
    DCN. GPU: one NVLink hop at the GPU's NVLink egress, or one NIC for ``network="scale-out"``
    (``hops`` must be 1 and ``routes`` None or 1: the networks are switched).

        >>> import accelkit as ak
        >>> one = ak.collectives.point_to_point("v5p", array_bytes=2**30, routes=1)
        >>> split = ak.collectives.point_to_point("v5p", array_bytes=2**30)
        >>> round(one.seconds / split.seconds, 1)  # six ports, six routes
        6.0
    """
    the_chip = chips.get(chip)
    size = _array_bytes(array_bytes)
    hops = _whole("hops", hops, maximum=64)
    network = _validate.choice("network", network, ("scale-up", "scale-out"))
    base = the_chip.collective_latency_seconds or 0.0
    if routes is not None and (network == "scale-out" or the_chip.kind != "tpu"):
        if _whole("routes", routes) != 1:
            raise ValueError("routes must be 1 (or None) over a switched network: one NVLink or "
                             "NIC path; disjoint routes are a torus's")
    if network == "scale-out":
        bandwidth = the_chip.scaleout_bytes_per_second
        if bandwidth is None:
            raise chips.MissingFigureError(
                the_chip.name, "scaleout_bytes_per_second",
                f"{the_chip.name} has no published scale-out bandwidth "
                f"({the_chip.source('scaleout_bytes_per_second')})")
        name = "DCN" if the_chip.kind == "tpu" else "scale-out"
        hop = the_chip.scaleout_hop_latency_seconds or 0.0
        if hops != 1:
            raise ValueError("hops must be 1 over the scale-out network (it is switched)")
    elif the_chip.kind == "tpu":
        ports = the_chip.links_per_chip or 1
        paths = ports if routes is None else _whole("routes", routes, maximum=ports)
        bandwidth = topology.ici_link_bytes_per_second(the_chip) * paths
        name, hop = "ICI", the_chip.hop_latency_seconds or 0.0
        hops += 2 if paths > 1 else 0  # the longest route is a detour
    else:
        bandwidth = the_chip.scaleup_bytes_per_second
        if bandwidth is None:
            raise chips.MissingFigureError(
                the_chip.name, "scaleup_bytes_per_second",
                f"{the_chip.name} has no NVLink ({the_chip.source('scaleup_bytes_per_second')})")
        if hops != 1:
            raise ValueError("hops must be 1 inside an NVLink domain (it is switched)")
        name, hop = "NVLink", the_chip.hop_latency_seconds or 0.0
    level = _level(name, "send", 2, (2,), (False,), size, size, bandwidth, hops, size / bandwidth, hop)
    return _combine("point_to_point", the_chip, size, 2, (2,), 1, 2, "send", [level], base, True)


def dp_critical_tokens_per_chip(chip: str | chips.Chip, *, over: int | tuple[int, ...],
                                dtype: str = "bf16", strategy: str = "dp",
                                params: float | None = None, grad_dtype: str | None = None,
                                **options: object) -> float:
    """Tokens per chip at which the data-parallel gradient collective takes as long as the backward pass.

    Backward FLOPs per chip = 4 * params * tokens (twice the forward's 2 * params * tokens); the
    gradient collective moves ``params * bytes(grad_dtype)``: an all-reduce for ``strategy="dp"``,
    a reduce-scatter of the gradients plus an all-gather of the weights for ``"fsdp"`` (the same
    bytes). Setting 4 * P * t / peak = T_collective gives
    ``t = peak_flops(dtype) * T_collective / (4 * P)``. With ``params=None`` only the bandwidth
    term is used, which makes ``t`` independent of the model size (the scaling book's C / W_ici);
    with ``params`` the latency term is included too.

    Scaling book (training.md, v5p): C / W_ici = 4.59e14 / (2 * 9e10) = 2,550 tokens per chip over
    one wrapped axis (ours includes the ring's (n-1)/n: 2,391 for n = 16), 850 over three axes.

    Raises:
        ValueError: as for the collectives, or an unknown dtype / strategy.
    """
    the_chip = chips.get(chip)
    dtype = dtypes.check(dtype, "dtype", allowed=tuple(_BYTES))
    grad_dtype = dtype if grad_dtype is None else dtypes.check(grad_dtype, "grad_dtype", allowed=tuple(_BYTES))
    strategy = _validate.choice("strategy", strategy, ("dp", "fsdp"))
    p = 1e9 if params is None else _validate.positive_float("params", params, maximum=1e14)
    size = p * _BYTES[grad_dtype]
    if strategy == "dp":
        results = [all_reduce(the_chip, array_bytes=size, over=over, **options)]
    else:
        results = [reduce_scatter(the_chip, array_bytes=size, over=over, **options),
                   all_gather(the_chip, array_bytes=size, over=over, **options)]
    seconds = sum(r.bandwidth_seconds if params is None else r.seconds for r in results)
    return the_chip.peak_flops(dtype) * seconds / (4.0 * p)
