"""Energy: what an arithmetic operation costs against what moving its operands costs.

Figures are Horowitz's 45 nm table (ISSCC 2014), kept with their sources in
``accelkit/data/energy_45nm.json``. A 64-bit DRAM access (1.3-2.6 nJ) costs over a thousand
16-bit floating-point multiplies (1.1 pJ); even a 32 KB SRAM read (20 pJ per 64 bits) costs ten
16-bit MACs. So an accelerator that re-reads operands less -- a systolic array passing each one
from cell to cell -- spends less energy on the same arithmetic.

    >>> import accelkit as ak
    >>> ak.energy.mac_picojoules("bf16")     # 16-bit multiply + 32-bit accumulate
    2.0
    >>> int(ak.energy.access_picojoules("dram", bytes=8) / ak.energy.table()["fp16_mult"])
    1772

Absolute values shrink on newer process nodes, and not all by the same factor: logic shrinks,
off-chip DRAM much less, and the DRAM kind matters (DDR against HBM). Every function takes
``node=``: ``"45nm"`` (the default, Horowitz) or ``"7nm"`` (Jouppi et al.'s 7 nm update, ISCA 2021,
Table 2, which also separates off-chip DDR from HBM2 and GDDR6). A figure a table lacks (the
register file in both; HBM2 at 45 nm; the 32-bit integer multiply at 7 nm) raises
:class:`MissingEnergyFigureError` instead of being guessed. :func:`break_even_flops_per_byte`
shows how much the "DRAM energy equals arithmetic energy" intensity moves with precision, the
DRAM kind and the node, which is why it is not a fixed property of hardware.

    >>> round(ak.energy.mac_picojoules("bf16", node="7nm"), 2)   # 0.21 bf16 multiply + 0.38 fp32 add
    0.59
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from collections.abc import Mapping
from typing import Any

import numpy as np

from accelkit import _html, _validate, dtypes
from accelkit.dtypes import DType

#: Process-node tables: ``"45nm"`` (Horowitz, ISSCC 2014) and ``"7nm"`` (Jouppi et al., ISCA 2021).
NODES = ("45nm", "7nm")

#: Memory levels with a per-access figure (``"register"`` is listed but has no cited figure).
#: ``"dram"`` is off-chip DDR (Horowitz's DRAM; Jouppi et al.'s DDR3/4); ``"hbm2"`` and
#: ``"gddr6"`` are in the 7 nm table only.
LEVELS = ("register", "sram_8kb", "sram_32kb", "sram_1mb", "dram", "hbm2", "gddr6")
#: The off-chip DRAM kinds among :data:`LEVELS`.
DRAM_LEVELS = ("dram", "hbm2", "gddr6")

# (multiply, accumulate with a wide accumulator, accumulate at the same width) per precision.
# bf16 has no entry of its own in the 45 nm table; its multiplier is taken as a 16-bit FP one there.
# A table with its own bf16 entries (the 7 nm one) uses them: see _mac_parts.
_MAC_PARTS = {
    "fp32": ("fp32_mult", "fp32_add", "fp32_add"),
    "fp16": ("fp16_mult", "fp32_add", "fp16_add"),
    "bf16": ("fp16_mult", "fp32_add", "fp16_add"),
    "int8": ("int8_mult", "int32_add", "int8_add"),
}


class MissingEnergyFigureError(ValueError):
    """A figure the chosen node's table does not have (no cited value). A ValueError subclass."""

    def __init__(self, node: str, figure: str, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.figure = figure


# Each node's table, read from its JSON file on first use: every figure and every source goes
# through _data, and re-reading and re-parsing the file on each call (the energy widget asks for
# several figures a move) would be file I/O for numbers that never change.
_DATA: dict[str, dict[str, Any]] = {}


def _node(node: str) -> str:
    return _validate.choice("node", node, NODES)


def _data(node: str = "45nm") -> dict[str, Any]:
    node = _node(node)
    if node not in _DATA:
        text = resources.files("accelkit").joinpath(f"data/energy_{node}.json").read_text(encoding="utf-8")
        _DATA[node] = json.loads(text)
    return _DATA[node]


def table(node: str = "45nm") -> dict[str, float]:
    """Picojoules per operation (e.g. ``"fp16_mult": 1.1``) and per 64-bit access at each memory
    level (``"sram_32kb": 20.0``, ``"dram": 1950.0`` = midpoint of 1.3-2.6 nJ) in ``node``'s table.

    Figures with no cited value are absent (``"register"`` in both tables, ``"hbm2"`` and
    ``"gddr6"`` at 45 nm, ``"int32_mult"`` at 7 nm). Use :func:`sources` for where each number
    comes from, and :func:`missing` for what is absent. Returns a fresh dict.
    """
    data = _data(node)
    result = {name: float(entry["picojoules"]) for name, entry in data["operations"].items()
              if entry["picojoules"] is not None}
    for level, entry in data["memory"].items():
        if entry["picojoules_per_64_bits"] is not None:
            result[level] = float(entry["picojoules_per_64_bits"])
    return result


def sources(node: str = "45nm") -> dict[str, str]:
    """Where each figure in :func:`table` (and each missing one) comes from."""
    data = _data(node)
    return {name: entry["source"]
            for group in ("operations", "memory") for name, entry in data[group].items()}


def missing(node: str = "45nm") -> tuple[str, ...]:
    """Names of the figures ``node``'s table lists without a cited value."""
    present = table(node)
    return tuple(name for name in sources(node) if name not in present)


def _figure(node: str, name: str) -> float:
    ops = table(node)
    if name not in ops:
        raise MissingEnergyFigureError(
            node, name, f"the {node} energy table has no cited {name} figure "
            f"({sources(node).get(name, 'not listed')}); use node='45nm' or add the figure with its source")
    return ops[name]


def _mac_parts(dtype: str, node: str) -> tuple[str, str, str]:
    mult, wide_add, narrow_add = _MAC_PARTS[dtype]
    if dtype == "bf16" and "bf16_mult" in sources(node):   # the table has bf16 entries of its own
        mult, narrow_add = "bf16_mult", "bf16_add"
    return mult, wide_add, narrow_add


def mac_picojoules(dtype: DType = "bf16", *, wide_accumulator: bool = True,
                   node: str = "45nm") -> float:
    """Energy of one multiply-accumulate: a multiply at ``dtype`` plus an add.

    With ``wide_accumulator`` (the default, as in tensor cores and MXUs) the add is 32-bit:
    bf16/fp16 → 1.1 + 0.9 = 2.0 pJ, fp32 → 3.7 + 0.9 = 4.6 pJ, int8 → 0.2 + 0.1 = 0.3 pJ.
    Otherwise the add is at ``dtype`` width (fp16: 1.1 + 0.4 = 1.5 pJ). These are the 45 nm
    figures; ``node="7nm"`` uses that table (its own bf16 entries where it has them).

    Raises:
        ValueError: a precision the tables have no figures for (fp8), or an unknown one or node.
        MissingEnergyFigureError: the node's table lacks a cited figure this MAC needs.
    """
    dtype = dtypes.check(dtype)
    node = _node(node)
    if dtype not in _MAC_PARTS:
        raise ValueError(f"the {node} energy table has no {dtype} multiplier figure; "
                         f"use one of {sorted(_MAC_PARTS)}")
    mult, wide_add, narrow_add = _mac_parts(dtype, node)
    return _figure(node, mult) + _figure(node, wide_add if wide_accumulator else narrow_add)


def access_picojoules(level: str, *, bytes: float = 8, estimate: str = "mid",  # noqa: A002
                      node: str = "45nm") -> float:
    """Energy to read or write ``bytes`` at a memory level (figures are per 64-bit = 8-byte access,
    scaled linearly with width).

    Args:
        level: "sram_8kb", "sram_32kb", "sram_1mb", "dram" (off-chip DDR), or at 7 nm also
            "hbm2" or "gddr6" ("register" has no cited figure).
        bytes: bytes moved (> 0); default one 64-bit access.
        estimate: for a DRAM range (45 nm DDR 1.3-2.6 nJ; 7 nm HBM2 250-450 pJ, GDDR6
            350-480 pJ), "low", "mid" (default) or "high"; a single figure is all three.
        node: "45nm" (default) or "7nm".

    Raises:
        ValueError: unknown level or node, or bad bytes/estimate.
        MissingEnergyFigureError: no cited figure for this level in the node's table
            ("register"; "hbm2" at 45 nm), a ValueError subclass.
    """
    level = _validate.choice("level", level, LEVELS)
    size = _validate.positive_float("bytes", bytes)
    estimate = _validate.choice("estimate", estimate, ("low", "mid", "high"))
    node = _node(node)
    entry = _data(node)["memory"][level]
    if entry["picojoules_per_64_bits"] is None:
        raise MissingEnergyFigureError(
            node, level, f"no cited energy figure for a {level} access: {entry['source']}")
    # Only some DRAM figures are ranges; for the others low = mid = high.
    key = f"picojoules_per_64_bits_{estimate}"
    per_64_bits = float(entry[key] if key in entry else entry["picojoules_per_64_bits"])
    return per_64_bits * size / 8.0


@dataclass(frozen=True)
class EnergyBreakdown:
    """Where an engine run's energy goes: arithmetic, on-chip SRAM traffic, off-chip DRAM traffic."""

    compute_joules: float
    sram_joules: float
    dram_joules: float
    total_joules: float
    macs: int
    sram_bytes: float
    dram_bytes: float
    dtype: str
    sram_level: str
    picojoules_per_mac: float

    @property
    def data_movement_fraction(self) -> float:
        """Share of the total spent moving data (SRAM + DRAM) rather than computing."""
        return (self.sram_joules + self.dram_joules) / self.total_joules if self.total_joules else 0.0

    @property
    def picojoules_per_useful_mac(self) -> float:
        """Total energy over useful MACs, in pJ: the figure to compare designs by."""
        return self.total_joules * 1e12 / self.macs if self.macs else float("nan")

    def __repr__(self) -> str:
        return (
            f"EnergyBreakdown({self.total_joules * 1e9:,.3g} nJ total: compute "
            f"{self.compute_joules * 1e9:,.3g} nJ, SRAM ({self.sram_level}) "
            f"{self.sram_joules * 1e9:,.3g} nJ, DRAM {self.dram_joules * 1e9:,.3g} nJ; "
            f"{self.data_movement_fraction:.0%} moving data; {self.macs:,} {self.dtype} MACs)"
        )

    def _repr_html_(self) -> str:
        total = self.total_joules or 1.0
        rows = [(name, value) for name, value in (
            ("compute (MACs)", self.compute_joules), (f"SRAM ({self.sram_level})", self.sram_joules),
            ("DRAM", self.dram_joules), ("total", self.total_joules))]
        return _html.table([(name, f"{value * 1e9:,.3g} nJ", f"{value / total:.0%}")
                            for name, value in rows], header=("where", "energy", "share"))


def of_run(run: object, dtype: DType = "bf16", sram_level: str = "sram_32kb", *,
           dram_estimate: str = "mid", node: str = "45nm") -> EnergyBreakdown:
    """Energy of an engine run from its counts, using ``node``'s table (45 nm by default).

    Reads ``run.macs``, ``run.sram_reads`` and ``run.sram_writes`` (mappings of operand ->
    element count) and, if present, ``run.dram_reads`` / ``run.dram_writes`` (same form). Every element
    is ``dtype``-sized; each MAC costs :func:`mac_picojoules` (wide accumulator).

    Raises:
        TypeError: ``run`` lacks the fields, or they are not counts.
        ValueError: unknown dtype or level, negative counts.
    """
    dtype = dtypes.check(dtype)
    sram_level = _validate.choice("sram_level", sram_level,
                                  [lv for lv in LEVELS if lv not in DRAM_LEVELS])
    for name in ("macs", "sram_reads", "sram_writes"):
        if not hasattr(run, name):
            raise TypeError(f"run must have macs, sram_reads and sram_writes (an engine run); "
                            f"{type(run).__name__} has no {name!r}")
    macs = _validate.nonnegative_int("run.macs", run.macs)  # type: ignore[attr-defined]
    element = dtypes.BYTES[dtype]
    sram_elements = (_total("run.sram_reads", run.sram_reads)  # type: ignore[attr-defined]
                     + _total("run.sram_writes", run.sram_writes))  # type: ignore[attr-defined]
    dram_elements = (_total("run.dram_reads", getattr(run, "dram_reads", None))
                     + _total("run.dram_writes", getattr(run, "dram_writes", None)))
    per_mac = mac_picojoules(dtype, node=node)
    sram_bytes = float(sram_elements * element)
    dram_bytes = float(dram_elements * element)
    compute = macs * per_mac * 1e-12
    sram = access_picojoules(sram_level, bytes=sram_bytes, node=node) * 1e-12 if sram_bytes else 0.0
    dram = (access_picojoules("dram", bytes=dram_bytes, estimate=dram_estimate, node=node) * 1e-12
            if dram_bytes else 0.0)
    return EnergyBreakdown(
        compute_joules=compute, sram_joules=sram, dram_joules=dram,
        total_joules=compute + sram + dram, macs=macs, sram_bytes=sram_bytes,
        dram_bytes=dram_bytes, dtype=dtype, sram_level=sram_level, picojoules_per_mac=per_mac,
    )


def break_even_flops_per_byte(dtype: DType = "bf16", *, estimate: str = "mid",
                              node: str = "45nm", dram: str = "dram") -> float:
    """Arithmetic intensity (FLOPs per DRAM byte, 2 FLOPs per MAC) at which DRAM energy equals
    arithmetic energy: ``2 × (DRAM pJ per byte) / (pJ per MAC)``.

    Above it a kernel's energy is mostly arithmetic; below it, mostly DRAM traffic. It depends on
    the precision (an int8 MAC is cheaper, so its break-even is higher), on the DRAM figure
    (Horowitz's 1.3-2.6 nJ range is DDR-era off-chip DRAM; ``dram="hbm2"`` or ``"gddr6"`` picks
    the 7 nm table's stacked or graphics DRAM) and on the process node: it is not a property of a
    chip, and it is not the roofline ridge (a ratio of speeds, not of energies).

    Raises:
        ValueError: ``dram`` not one of "dram", "hbm2", "gddr6"; otherwise as
            :func:`mac_picojoules` and :func:`access_picojoules` (MissingEnergyFigureError for a
            figure the node's table lacks, such as HBM2 at 45 nm).
    """
    dram = _validate.choice("dram", dram, DRAM_LEVELS)
    per_byte = access_picojoules(dram, bytes=1, estimate=estimate, node=node)
    return 2.0 * per_byte / mac_picojoules(dtype, node=node)


def _total(name: str, counts: object) -> int:
    if counts is None:
        return 0
    if not isinstance(counts, Mapping):
        raise TypeError(f"{name} must be a mapping of operand -> element count, "
                        f"got {type(counts).__name__}")
    return sum(_validate.nonnegative_int(f"{name}[{key!r}]", value) for key, value in counts.items())


def tdp_joules(watts: float | None, seconds: float | np.ndarray,
               n_chips: int = 1) -> float | np.ndarray | None:
    """Energy of ``n_chips`` chips drawing their published power (TDP) for ``seconds``.

    ``watts × n_chips × seconds``: the accelerators alone at their rated power. It is *not* an
    upper bound on a job's energy: chips often draw less than TDP, but the job also powers host
    CPUs and memory, the network, storage and cooling (a data centre's PUE), none of which is
    counted here, so the facility's meter reads more. The one place the library turns power
    into energy (training runs, decision scenarios). ``seconds`` may be an
    array (a sweep); ``watts=None`` (a chip with no published power, such as TPU v5e) gives None.

    Raises:
        TypeError / ValueError: watts not > 0, seconds negative or non-finite, n_chips < 1.
    """
    count = _validate.positive_int("n_chips", n_chips)
    if watts is None:
        return None
    power = _validate.positive_float("watts", watts)
    if np.ndim(seconds) == 0 and not isinstance(seconds, np.ndarray):
        return power * count * _validate.real_in_range("seconds", seconds, low=0.0)
    duration = np.asarray(seconds, dtype=float)
    if not np.isfinite(duration).all() or (duration < 0).any():
        raise ValueError("seconds must all be finite and >= 0")
    return power * count * duration


# -- the least DRAM traffic a GEMM can pay ---------------------------------------------------------

@dataclass(frozen=True)
class RunWithDramFloor:
    """An engine run's counts plus the least DRAM traffic any machine pays for its GEMM.

    The form :func:`of_run` reads: ``macs`` and element counts per operand. ``dram_reads`` is
    ``{"A": M·K, "B": K·N}`` (each input read once) and ``dram_writes`` is ``{"C": M·N}``.
    """

    macs: int
    sram_reads: dict[str, int]
    sram_writes: dict[str, int]
    dram_reads: dict[str, int]
    dram_writes: dict[str, int]


def with_dram_floor(run: object) -> RunWithDramFloor:
    """Give a systolic run the DRAM traffic it leaves out: A and B read once, C written once.

    The systolic engine models the array and its on-chip buffers, not HBM, so its runs carry no
    DRAM counts; the SIMD engine counts its global-memory traffic. Costing the systolic run with
    this floor keeps a comparison between them from being tilted. It is an assumption, a lower
    bound: a real accelerator whose buffers cannot hold an operand re-reads it from DRAM.

    Args:
        run: a GEMM run with ``M``, ``N``, ``K``, ``macs``, ``sram_reads`` and ``sram_writes``
            (a :class:`~accelkit.systolic.SystolicRun`).
    Returns:
        A :class:`RunWithDramFloor` to pass to :func:`of_run`.
    Raises:
        TypeError: ``run`` lacks those fields.
        ValueError: a size or count that is not a whole number >= 0.
    """
    for name in ("M", "N", "K", "macs", "sram_reads", "sram_writes"):
        if not hasattr(run, name):
            raise TypeError(f"run must be a GEMM run with M, N, K, macs, sram_reads and "
                            f"sram_writes; {type(run).__name__} has no {name!r}")
    M = _validate.positive_int("run.M", run.M)  # type: ignore[attr-defined]
    N = _validate.positive_int("run.N", run.N)  # type: ignore[attr-defined]
    K = _validate.positive_int("run.K", run.K)  # type: ignore[attr-defined]
    return RunWithDramFloor(
        macs=_validate.nonnegative_int("run.macs", run.macs),  # type: ignore[attr-defined]
        sram_reads=dict(run.sram_reads),  # type: ignore[attr-defined]
        sram_writes=dict(run.sram_writes),  # type: ignore[attr-defined]
        dram_reads={"A": M * K, "B": K * N}, dram_writes={"C": M * N})


__all__ = ["DRAM_LEVELS", "EnergyBreakdown", "LEVELS", "MissingEnergyFigureError", "NODES", "RunWithDramFloor",
           "access_picojoules", "break_even_flops_per_byte", "mac_picojoules", "missing", "of_run",
           "sources", "table", "tdp_joules", "with_dram_floor"]
