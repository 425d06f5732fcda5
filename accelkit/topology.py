"""Where a group of TPU chips sits on the torus: its ICI axes, their wraparound links, and the
slices a large group is split into (joined by DCN).

    >>> import accelkit as ak
    >>> from accelkit import topology
    >>> topology.slice_layout(ak.chips.get("TPU v5p"), 8960)[:2]  # 7 slices of 20x8x8, joined by DCN
    (7, (20, 8, 8))

:mod:`accelkit.collectives` costs a collective on the group this module places (and keeps the
derivations); :func:`accelkit.collectives.group_layout` is the checked public entry. A group that
cannot be placed raises :class:`GroupLayoutError`, a ValueError; a chip with no published link
bandwidth, :class:`accelkit.chips.MissingFigureError`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from functools import lru_cache

from accelkit import chips

#: Largest group the model accepts: a model limit, not a hardware one (the largest published runs
#: are ~16k chips, e.g. Llama 3 on 16,384 H100; beyond ~65k chips the full-bisection fat tree and
#: the flat DCN assumed here are untested).
MAX_GROUP_CHIPS = 65_536


class GroupLayoutError(ValueError):
    """A group of chips the model cannot place: it does not factor into torus axes that fit the
    largest slice (or equal slices of it), or its GPUs do not fill whole NVLink domains evenly.
    Callers that can suggest another way (a simple ring, other degrees) catch this type."""


def ici_link_bytes_per_second(chip: chips.Chip) -> float:
    """One ICI link's one-way bandwidth, which every TPU collective needs.

    Raises:
        MissingFigureError: the chip publishes none.
    """
    if chip.link_bytes_per_second is None:
        raise chips.MissingFigureError(
            chip.name, "link_bytes_per_second",
            f"{chip.name} has no published ICI link bandwidth "
            f"({chip.source('link_bytes_per_second')}); collectives need it")
    return chip.link_bytes_per_second


def axis_wraps(chip: chips.Chip, axes: tuple[int, ...], wraparound: bool | None) -> tuple[bool, ...]:
    """Wraparound of each axis of a group inside a slice (see Chip.axis_wraps for whole slices).

    full_cube (v4/v5p/7x): an axis that is a multiple of 4 sits in a slice of full 4x4x4 cubes and
    wraps; full_axis (v5e/v6e): an axis wraps only at the pod edge (16). ``wraparound`` overrides.
    """
    if wraparound is not None:
        return tuple(bool(wraparound) and a > 2 for a in axes)
    if chip.wrap_rule == "full_cube":
        if len(axes) == chip.torus_dims:
            return chip.axis_wraps(axes)
        return tuple(a % 4 == 0 and a > 2 for a in axes)
    edge = max(chip.pod_shape)
    return tuple(a == edge and a > 2 for a in axes)


def check_axes(chip: chips.Chip, axes: tuple[int, ...]) -> None:
    """Refuse torus axes a group cannot span: more axes than the torus has, or an axis longer
    than the largest slice's (:class:`GroupLayoutError`)."""
    dims = chip.torus_dims or 0
    if len(axes) > dims:
        raise GroupLayoutError(f"over has {len(axes)} axes but {chip.name} has a {dims}D torus; "
                         f"give at most {dims} axis sizes")
    limits = sorted(chip.max_slice_shape, reverse=True)
    for a, limit in zip(sorted(axes, reverse=True), limits):
        if a > limit:
            raise GroupLayoutError(f"over={axes} does not fit {chip.name}'s largest slice "
                             f"{'x'.join(map(str, chip.max_slice_shape))}; each axis must fit an "
                             f"axis of it (longest {limits[0]})")


@lru_cache(maxsize=4096)
def slice_layout(chip: chips.Chip, n: int) -> tuple[int, tuple[int, ...], tuple[bool, ...]]:
    """The slice count and per-slice torus shape (and its wraparounds) for n chips.

    Cached: the search over slice counts and axis factorisations takes milliseconds for a large
    job (about 10 ms for 8,960 v5p chips), and every collective over that job asks for it:
    ``benchmarks/bench_training_inference.py`` (a training estimate with a gradient reduction
    over 8,960 v5p chips, about 0.2 ms cached) and ``bench_collectives.py`` show it.

    Each candidate is a whole slice, so its wraparounds follow ``Chip.axis_wraps`` on the full
    shape (a 4x4x1 v5p slice has none). The candidate with the fastest bandwidth-bound all-reduce
    wins: max(ICI, DCN) with ICI = 2 (S-1)/S / ingress and DCN = 2 (k-1)/k / (S * dcn) for k slices
    of S chips. More slices must be at least 2% faster to win; within a slice count, ties go to
    the more compact shape.
    """
    w = ici_link_bytes_per_second(chip)
    dcn = chip.scaleout_bytes_per_second
    limit = sorted(chip.max_slice_shape, reverse=True)
    dims = chip.torus_dims or 0
    slice_chips = chip.max_slice_chips or 1
    if n > slice_chips and dcn is None:
        raise chips.MissingFigureError(
            chip.name, "scaleout_bytes_per_second",
            f"{chip.name} has no published DCN bandwidth "
            f"({chip.source('scaleout_bytes_per_second')}); a group must fit one slice "
            f"of at most {slice_chips:,} chips")
    best: tuple | None = None  # (cost, slices, shape, wraps)
    for slices in divisors(n):
        if n // slices > slice_chips:
            continue
        if slices > 1 and (dcn is None or n <= slice_chips):
            break  # no DCN, or a group that fits one slice is not split to dodge its shape
        per = n // slices
        here: tuple | None = None
        for axes in factorisations(per, dims):
            if any(a > lim for a, lim in zip(axes, limit)):
                continue
            wraps_full = chip.axis_wraps(axes)
            shape = tuple(a for a in axes if a > 1) or (1,)
            wraps = tuple(wr for a, wr in zip(axes, wraps_full) if a > 1) or (False,)
            ingress = torus_terms(w, shape, wraps)[0]
            ici = 2 * (per - 1) / per / ingress if per > 1 else 0.0
            out = 2 * (slices - 1) / slices / (per * dcn) if slices > 1 and dcn else 0.0
            key = (max(ici, out), max(shape), shape)
            if here is None or key < here[0]:
                here = (key, shape, wraps)
        # More slices must be clearly faster (by 2%) to win: (S-1)/S alone should not decide.
        if here is not None and (best is None or here[0][0] < 0.98 * best[0]):
            best = (here[0][0], slices, here[1], here[2])
    if best is None:
        raise GroupLayoutError(f"over={n} chips cannot be laid out on {chip.name}: up to {slice_chips:,} "
                         f"chips it must factor into axes that fit its largest slice "
                         f"{'x'.join(map(str, chip.max_slice_shape))}; beyond, into equal such "
                         f"slices joined by DCN")
    return best[1], best[2], best[3]


def whole_axes(shape: tuple[int, ...], n: int) -> tuple[int, ...] | None:
    """The whole axes of a slice of ``shape`` that a group of ``n`` chips takes, or None.

    This is how JAX lays a logical mesh axis onto a TPU slice (jax-ml/jax:
    jax/_src/mesh_utils.py@01a64421, ``_create_device_mesh_for_nd_torus``, which MaxText's
    ``create_device_mesh`` calls for one slice): each logical axis, the most network-intensive
    first, takes the largest set of whole physical axes (three, then two, then one) whose sizes
    multiply to its size, and a physical axis is never split. So on the 8x16x48 slice of
    Google's 6,144-chip MLPerf v4.0 run the 8-way tensor, 48-way FSDP and 16-way data axes are
    one ring each, and on an 8x8x8 the 64-way FSDP axis is an 8x8 plane:

        >>> whole_axes((8, 16, 48), 48), whole_axes((8, 8, 8), 64), whole_axes((24, 16, 16), 48)
        ((48,), (8, 8), None)

    A group is placed on its own here (the first such set, in the order mesh_utils tries
    them), not jointly with the layout's other axes; where two axes of a layout could take the
    same sizes the joint assignment may differ. None: no set of whole axes multiplies to ``n``
    (mesh_utils then refuses the mesh unless told to split axes; callers fall back to
    :func:`slice_layout`'s compact shape).
    """
    sizes = tuple(int(a) for a in shape)
    if n <= 1:
        return None
    for count in range(len(sizes), 0, -1):
        for combo in itertools.combinations(sizes, count):
            if math.prod(combo) == n and all(a > 1 for a in combo):
                return tuple(combo)
    return None


def on_slice(chip: chips.Chip, shape: tuple[int, ...]) -> chips.Chip:
    """The TPU as one job bought it: ``chip`` with its largest slice set to that job's ICI
    slice ``shape`` (a system's published topology, e.g. MLPerf's ``8x16x48``), so that the
    job's groups are placed on that slice's axes (:func:`whole_axes`) and not on the compact
    shape :func:`slice_layout` would pick (24x16x16 for 6,144 v5p chips).

        >>> import accelkit as ak
        >>> on_slice(ak.chips.get("TPU v5p"), (8, 16, 48)).max_slice_shape
        (8, 16, 48)

    The Cloud table's largest v5p slice is 16x16x24, but the optical circuit switches join the
    pod's 4x4x4 cubes into other cuboids as well (jax-ml/scaling-book:tpus.md@0819a7d8: a pod of
    4x4x4 cubes): Google's 6,144-chip MLPerf v4.0 system is one 8x16x48 slice
    (mlcommons/training_results_v4.0:Google/systems/cloud-tpu-v5p-12288-maxtext.json@6fe95437
    accelerator_interconnect_topology; v5p-12288.sh puts all 6,144 chips on ICI axes and no
    DCN axis). So a shape is checked against the pod, not the Cloud table: as many axes as
    the torus, at most the pod's chips, and on a full-cube torus (v4, v5p) whole 4x4x4 cubes
    once it is larger than one.

    Raises:
        ValueError: not a TPU, or a shape the pod cannot hold (see the message).
    """
    if chip.kind != "tpu" or not chip.torus_dims:
        raise ValueError(f"on_slice is for TPUs; {chip.name} has no torus")
    if (not isinstance(shape, tuple) or len(shape) != chip.torus_dims
            or any(isinstance(a, bool) or not isinstance(a, int) or a < 1 for a in shape)):
        raise ValueError(f"shape must be a tuple of {chip.torus_dims} positive ints (the "
                         f"slice's axes, e.g. (8, 16, 48)), got {shape!r}")
    n = math.prod(shape)
    pod = chip.max_domain_chips or math.prod(chip.pod_shape)
    if n > pod:
        raise ValueError(f"shape {'x'.join(map(str, shape))} has {n:,} chips; a {chip.name} pod "
                         f"has {pod:,}")
    if chip.wrap_rule == "full_cube" and n > 64 and any(a % 4 for a in shape):
        raise ValueError(f"shape {'x'.join(map(str, shape))}: a {chip.name} slice larger than one "
                         "4x4x4 cube is made of whole cubes, so every axis is a multiple of 4")
    if chip.wrap_rule != "full_cube":
        for a, limit in zip(sorted(shape, reverse=True), sorted(chip.pod_shape, reverse=True)):
            if a > limit:
                raise ValueError(f"shape {'x'.join(map(str, shape))} does not fit {chip.name}'s "
                                 f"pod {'x'.join(map(str, chip.pod_shape))}")
    return dataclasses.replace(chip, max_slice_shape=shape, scaleup_domain_chips=n)


def divisors(n: int) -> tuple[int, ...]:
    """The divisors of n, ascending."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


def factorisations(n: int, dims: int) -> tuple[tuple[int, ...], ...]:
    """Every non-increasing tuple of ``dims`` factors whose product is n."""
    if dims == 1:
        return ((n,),)
    out = []
    for a in reversed(divisors(n)):
        for rest in factorisations(n // a, dims - 1):
            if rest[0] <= a:
                out.append((a, *rest))
    return tuple(out)


def tpu_group(chip: chips.Chip, spec: int | tuple[int, ...], slices: int, wraparound: bool | None
              ) -> tuple[int, tuple[int, ...], tuple[bool, ...], tuple[float, int, float, int]]:
    """Where a TPU group sits: (slices, ICI axes per slice, wraparound per axis, and
    :func:`torus_terms` of those axes), for a checked ``spec`` (an int or axis sizes)."""
    ici_link_bytes_per_second(chip)
    if isinstance(spec, tuple):
        check_axes(chip, spec)
        axes = spec
    else:
        if slices != 1:
            raise ValueError("slices goes with a tuple over (the ICI axes of each slice); an int over "
                             "larger than a slice is split into slices automatically")
        if spec <= max(chip.max_slice_shape):
            slices, axes = 1, (spec,)
        else:
            slices, axes, wraps = slice_layout(chip, spec)
            if wraparound is not None:
                wraps = axis_wraps(chip, axes, wraparound)
            return slices, axes, wraps, torus_terms(ici_link_bytes_per_second(chip), axes, wraps)
    if slices * math.prod(axes) > MAX_GROUP_CHIPS:
        raise GroupLayoutError(f"the group spans {slices * math.prod(axes):,} chips; the model accepts at "
                         f"most {MAX_GROUP_CHIPS:,} (MAX_GROUP_CHIPS)")
    wraps = axis_wraps(chip, axes, wraparound)
    return slices, axes, wraps, torus_terms(ici_link_bytes_per_second(chip), axes, wraps)


def torus_terms(w: float, axes: tuple[int, ...], wraps: tuple[bool, ...]) -> tuple[float, int, float, int]:
    """(ingress bytes/s, all-gather hops, all-to-all seconds per array byte, diameter) of a torus group.

    Ingress: each axis adds 2w if it wraps (a bidirectional ring) and w if not (a line: the end
    chip receives over one link). All-to-all: the busiest link of axis a carries L_a * V / (n_a * N)
    per direction with L_a = n^2/8 (even ring), (n^2-1)/8 (odd ring), floor(n/2)*ceil(n/2) (line).
    """
    n = math.prod(axes)
    ingress = 0.0
    hops = 0
    a2a = 0.0
    for a, wr in zip(axes, wraps):
        if a < 2:
            continue
        ingress += 2 * w if wr else w
        hops += a // 2 if wr else a - 1
        if wr:
            load = a * a / 8 if a % 2 == 0 else (a * a - 1) / 8
        else:
            load = (a // 2) * ((a + 1) // 2)
        a2a = max(a2a, load / (a * n) / w)
    return ingress, hops, a2a, hops


__all__ = ["GroupLayoutError", "MAX_GROUP_CHIPS", "axis_wraps", "check_axes", "divisors",
           "factorisations", "ici_link_bytes_per_second", "on_slice", "slice_layout",
           "torus_terms", "tpu_group", "whole_axes"]
