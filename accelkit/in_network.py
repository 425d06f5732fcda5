"""In-network reduction: an all-reduce whose sums are done by the switches (GPU fabrics only).

    >>> import accelkit as ak
    >>> r = ak.in_network.all_reduce("H100", array_bytes=1e9, over=8)
    >>> r.scheme, round(r.nvlink_speedup, 3), round(r.speedup, 3)
    ('nvls', 1.297, 1.296)

NVLink SHARP (NVLS, NVSwitch gen 3 on H100/H200 nodes, and the NVLink Switch of GB200 NVL72)
and InfiniBand SHARP (Quantum switches) add the partial sums inside the switch, so a GPU sends
its data up once and reads the sum back once, instead of passing partial sums round a ring.
A TPU has no switch between chips (ICI links join neighbours in a torus), so there is nothing
to reduce in: :func:`all_reduce` refuses TPUs.

**Measured benefit** (what this module applies to :func:`accelkit.collectives.all_reduce`'s
NVLink phases): nccl-tests ``all_reduce_perf`` bus bandwidth on 8 H100 SXM, 2-4 GB messages
(NVIDIA/nccl issue #1455): ``NCCL_ALGO=RING`` 365-370 GB/s for 2 to 8 GPUs; ``NCCL_ALGO=NVLS``
370 GB/s for 2-4 GPUs, then 420, 440, 460 and 480 GB/s for 5, 6, 7 and 8. NCCL's maintainer
gives the same pair for 8 GPUs (NVIDIA/nccl-tests issue #212: ring ~370 GB/s, NVLS peak busBw
~480 GB/s, algbw ~275 GB/s). So NVLS is 480/370 = 1.30x the ring on 8 GPUs and no faster on 4
or fewer. (The ideal, half the bytes on the wire, would be 2(n-1)/n = 1.75x on 8.)

**Named assumptions** (no measurement read): beyond 8 GPUs in one NVLink domain (GB200 NVL72)
the 8-GPU ratio is used; InfiniBand SHARP (``scheme="nvls+ib_sharp"``) is taken at its ideal,
the scale-out phase's 2(M-1)/M bytes per GPU cut to 1; the latency terms are left as the ring's.
Each result says which applied in ``assumptions``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from accelkit import _validate, chips, collectives

__all__ = ["InNetworkAllReduce", "NVLS_BUSBW_GB_S", "RING_BUSBW_GB_S", "SCHEMES", "SOURCE",
           "all_reduce", "nvls_speedup"]

#: ``"nvls"``: NVLink SHARP inside the NVLink domain; ``"nvls+ib_sharp"``: and InfiniBand
#: SHARP across domains.
SCHEMES = ("nvls", "nvls+ib_sharp")
#: Measured all-reduce bus bandwidth with NVLS on H100, GB/s, by GPUs in the node.
NVLS_BUSBW_GB_S = {2: 370.0, 3: 370.0, 4: 370.0, 5: 420.0, 6: 440.0, 7: 460.0, 8: 480.0}
#: The same measurement with the ring algorithm (365-370 GB/s for 2 to 8 GPUs; the top used).
RING_BUSBW_GB_S = 370.0
SOURCE = ("NVIDIA/nccl issue #1455 (8x H100 SXM, all_reduce_perf 2-4 GB: RING busbw 365-370 "
          "GB/s for 2-8 GPUs; NVLS 370 for 2-4, 420/440/460/480 for 5/6/7/8); NVIDIA/nccl-tests "
          "issue #212 (NCCL maintainer: ring ~370 GB/s, NVLS peak busBw ~480 GB/s on 8 GPUs)")


def nvls_speedup(gpus: int) -> float:
    """NVLS all-reduce over ring all-reduce, measured (module docstring): 1.0 up to 4 GPUs,
    480/370 on 8; above 8 (no measurement) the 8-GPU ratio.

        >>> [round(nvls_speedup(n), 2) for n in (2, 4, 5, 8, 72)]
        [1.0, 1.0, 1.14, 1.3, 1.3]

    Raises:
        ValueError: fewer than 2 GPUs or more than a domain can hold (1,024).
    """
    n = _validate.positive_int("gpus", gpus, maximum=1024)
    if n < 2:
        raise ValueError(f"gpus must be at least 2 (one GPU reduces nothing), got {n}")
    return NVLS_BUSBW_GB_S[min(n, 8)] / RING_BUSBW_GB_S


@dataclass(frozen=True)
class InNetworkAllReduce:
    """An all-reduce with in-network reduction, next to the same all-reduce without it.

    ``collective``: the all-reduce's :class:`accelkit.collectives.Collective` with the
    in-network phases sped up; ``baseline_seconds``: the same without; ``speedup``: their
    ratio; ``nvlink_speedup``/``scaleout_speedup``: what each network's bandwidth time was
    divided by (1.0 where nothing applied); ``assumptions``: the named assumptions used.
    """

    chip: str
    array_bytes: float
    group_chips: int
    scheme: str
    seconds: float
    baseline_seconds: float
    speedup: float
    nvlink_speedup: float
    scaleout_speedup: float
    collective: collectives.Collective
    source: str
    assumptions: tuple[str, ...]


def all_reduce(chip: str | chips.Chip, *, array_bytes: float, over: int,
               scheme: str = "nvls", **options: object) -> InNetworkAllReduce:
    """:func:`accelkit.collectives.all_reduce` with the switches doing the sums (GPUs only).

    ``options`` are passed to :func:`accelkit.collectives.all_reduce` (``inner``,
    ``pipelined``, ``scaleup_domain``...).

    Raises:
        ValueError: a TPU (its torus has no switches to reduce in), an unknown ``scheme``, or
            as :func:`accelkit.collectives.all_reduce`.
    """
    the_chip = chips.get(chip)
    if the_chip.kind != "gpu":
        raise ValueError(f"in-network reduction needs switches (NVSwitch, InfiniBand); "
                         f"{the_chip.name} is a TPU, whose ICI torus links chips directly, "
                         "so there is no switch to add the sums in")
    scheme = _validate.choice("scheme", scheme, SCHEMES)
    base = collectives.all_reduce(the_chip, array_bytes=array_bytes, over=over, **options)
    assumptions: list[str] = []
    nv_levels = [lv for lv in base.levels if lv.network == "NVLink"]
    out_levels = [lv for lv in base.levels if lv.network == "scale-out"]
    nv_factor = nvls_speedup(nv_levels[0].chips) if nv_levels else 1.0
    if nv_levels and nv_levels[0].chips > 8:
        assumptions.append(f"NVLS on {nv_levels[0].chips} GPUs taken at the 8-GPU ratio "
                           "(no measurement read beyond 8)")
    out_factor = 1.0
    if scheme == "nvls+ib_sharp" and out_levels:
        m = out_levels[0].chips
        out_factor = 2.0 * (m - 1) / m
        assumptions.append(f"InfiniBand SHARP at its ideal: {out_factor:.3g}x on the "
                           f"{m}-node phase (no measurement read)")
    factor = {"NVLink": nv_factor, "scale-out": out_factor}
    levels = tuple(dataclasses.replace(
        lv, bandwidth_seconds=lv.bandwidth_seconds / factor.get(lv.network, 1.0))
        for lv in base.levels)
    per_network: dict[str, float] = {}
    for lv in levels:
        per_network[lv.network] = per_network.get(lv.network, 0.0) + lv.bandwidth_seconds
    pipelined = options.get("pipelined", True)
    bandwidth = (max(per_network.values()) if pipelined else sum(per_network.values())
                 ) if levels else 0.0
    result = dataclasses.replace(base, levels=levels, bandwidth_seconds=bandwidth,
                                 seconds=bandwidth + base.latency_seconds,
                                 algorithm=f"{base.algorithm} + {scheme}")
    return InNetworkAllReduce(
        chip=the_chip.name, array_bytes=base.array_bytes, group_chips=base.group_chips,
        scheme=scheme, seconds=result.seconds, baseline_seconds=base.seconds,
        speedup=base.seconds / result.seconds if result.seconds else 1.0,
        nvlink_speedup=nv_factor, scaleout_speedup=out_factor, collective=result,
        source=SOURCE, assumptions=tuple(assumptions))
