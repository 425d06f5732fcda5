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

Absolute values shrink on newer process nodes; the ratios are the lesson.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from importlib import resources
from collections.abc import Mapping
from typing import Any

import numpy as np

from accelkit import _validate, dtypes
from accelkit.dtypes import DType

#: Memory levels with a per-access figure (``"register"`` is listed but has no cited figure).
LEVELS = ("register", "sram_8kb", "sram_32kb", "sram_1mb", "dram")

# (multiply, accumulate with a wide accumulator, accumulate at the same width) per precision.
# bf16 has no entry of its own in the 45 nm table; its multiplier is taken as a 16-bit FP one.
_MAC_PARTS = {
    "fp32": ("fp32_mult", "fp32_add", "fp32_add"),
    "fp16": ("fp16_mult", "fp32_add", "fp16_add"),
    "bf16": ("fp16_mult", "fp32_add", "fp16_add"),
    "int8": ("int8_mult", "int32_add", "int8_add"),
}

_DATA: dict[str, Any] | None = None


def _data() -> dict[str, Any]:
    global _DATA
    if _DATA is None:
        text = resources.files("accelkit").joinpath("data/energy_45nm.json").read_text(encoding="utf-8")
        _DATA = json.loads(text)
    return _DATA


def table() -> dict[str, float]:
    """Picojoules per operation (e.g. ``"fp16_mult": 1.1``) and per 64-bit access at each memory
    level (``"sram_32kb": 20.0``, ``"dram": 1950.0`` = midpoint of 1.3-2.6 nJ).

    ``"register"`` is absent: the source table has no register-file figure. Use
    :func:`sources` for where each number comes from. Returns a fresh dict.
    """
    data = _data()
    result = {name: float(entry["picojoules"]) for name, entry in data["operations"].items()}
    for level, entry in data["memory"].items():
        if entry["picojoules_per_64_bits"] is not None:
            result[level] = float(entry["picojoules_per_64_bits"])
    return result


def sources() -> dict[str, str]:
    """Where each figure in :func:`table` (and the missing ``"register"``) comes from."""
    data = _data()
    return {name: entry["source"]
            for group in ("operations", "memory") for name, entry in data[group].items()}


def mac_picojoules(dtype: DType = "bf16", *, wide_accumulator: bool = True) -> float:
    """Energy of one multiply-accumulate: a multiply at ``dtype`` plus an add.

    With ``wide_accumulator`` (the default, as in tensor cores and MXUs) the add is 32-bit:
    bf16/fp16 → 1.1 + 0.9 = 2.0 pJ, fp32 → 3.7 + 0.9 = 4.6 pJ, int8 → 0.2 + 0.1 = 0.3 pJ.
    Otherwise the add is at ``dtype`` width (fp16: 1.1 + 0.4 = 1.5 pJ).

    Raises:
        ValueError: a precision the 45 nm table has no figures for (fp8), or an unknown one.
    """
    dtype = dtypes.check(dtype)
    if dtype not in _MAC_PARTS:
        raise ValueError(f"the 45 nm energy table has no {dtype} multiplier figure; "
                         f"use one of {sorted(_MAC_PARTS)}")
    mult, wide_add, narrow_add = _MAC_PARTS[dtype]
    ops = table()
    return ops[mult] + ops[wide_add if wide_accumulator else narrow_add]


def access_picojoules(level: str, *, bytes: float = 8, estimate: str = "mid") -> float:  # noqa: A002
    """Energy to read or write ``bytes`` at a memory level (figures are per 64-bit = 8-byte access,
    scaled linearly with width).

    Args:
        level: "sram_8kb", "sram_32kb", "sram_1mb" or "dram" ("register" has no cited figure).
        bytes: bytes moved (> 0); default one 64-bit access.
        estimate: for DRAM's 1.3-2.6 nJ range, "low", "mid" (default) or "high".

    Raises:
        ValueError: unknown level, "register", or bad bytes/estimate.
    """
    level = _validate.choice("level", level, LEVELS)
    size = _validate.positive_float("bytes", bytes)
    estimate = _validate.choice("estimate", estimate, ("low", "mid", "high"))
    entry = _data()["memory"][level]
    if entry["picojoules_per_64_bits"] is None:
        raise ValueError(f"no cited energy figure for a {level} access: {entry['source']}")
    # Only DRAM has a range; for SRAM levels low = mid = high.
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
        body = "".join(
            f"<tr><td>{html.escape(name)}</td><td>{value * 1e9:,.3g} nJ</td>"
            f"<td>{value / total:.0%}</td></tr>" for name, value in rows
        )
        return f"<table><tr><th>where</th><th>energy</th><th>share</th></tr>{body}</table>"


def of_run(run: object, dtype: DType = "bf16", sram_level: str = "sram_32kb", *,
           dram_estimate: str = "mid") -> EnergyBreakdown:
    """Energy of an engine run from its counts, using the 45 nm table.

    Reads ``run.macs``, ``run.sram_reads`` and ``run.sram_writes`` (mappings of operand ->
    element count) and, if present, ``run.dram_reads`` / ``run.dram_writes`` (same form). Every element
    is ``dtype``-sized; each MAC costs :func:`mac_picojoules` (wide accumulator).

    Raises:
        TypeError: ``run`` lacks the fields, or they are not counts.
        ValueError: unknown dtype or level, negative counts.
    """
    dtype = dtypes.check(dtype)
    sram_level = _validate.choice("sram_level", sram_level, [lv for lv in LEVELS if lv != "dram"])
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
    per_mac = mac_picojoules(dtype)
    sram_bytes = float(sram_elements * element)
    dram_bytes = float(dram_elements * element)
    compute = macs * per_mac * 1e-12
    sram = access_picojoules(sram_level, bytes=sram_bytes) * 1e-12 if sram_bytes else 0.0
    dram = (access_picojoules("dram", bytes=dram_bytes, estimate=dram_estimate) * 1e-12
            if dram_bytes else 0.0)
    return EnergyBreakdown(
        compute_joules=compute, sram_joules=sram, dram_joules=dram,
        total_joules=compute + sram + dram, macs=macs, sram_bytes=sram_bytes,
        dram_bytes=dram_bytes, dtype=dtype, sram_level=sram_level, picojoules_per_mac=per_mac,
    )


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

    ``watts × n_chips × seconds``: an upper bound, as chips rarely sit at TDP. The one place the
    library turns power into energy (training runs, decision scenarios). ``seconds`` may be an
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


__all__ = ["EnergyBreakdown", "LEVELS", "RunWithDramFloor", "access_picojoules", "mac_picojoules",
           "of_run", "sources", "table", "tdp_joules", "with_dram_floor"]
