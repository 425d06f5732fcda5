"""Datasheet beside achievable: what a chip's datasheet promises and what its kernels and
collectives measurably reach, one row per figure, each with its source.

    >>> from accelkit import achievable
    >>> row = next(r for r in achievable.table(("H100",)) if r.figure == "matmul fp8")
    >>> round(row.datasheet / 1e12), round(row.achievable / 1e12, 1), round(row.fraction, 3)
    (1979, 1402.6, 0.709)
    >>> row.assumption, row.source[:21]
    (False, 'stas00/ml-engineering')

The figures live in the chip catalog (:meth:`accelkit.chips.Chip.achievable_flops` and the
``achievable_*`` properties); a figure no measurement gives is a named assumption
(``assumption`` True: the datasheet figure, or a measured fraction carried from a sibling chip,
stands in, and the source says which).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from accelkit import chips, dtypes

__all__ = ["FIGURES", "Row", "table"]

#: The figures a row can be, besides "matmul <dtype>": (label, achievable field, datasheet field).
FIGURES = (
    ("HBM bandwidth", "achievable_hbm_bytes_per_second", "hbm_bytes_per_second"),
    ("scale-up collective bandwidth", "achievable_scaleup_bytes_per_second",
     "scaleup_bytes_per_second"),
    ("scale-out collective bandwidth", "achievable_scaleout_bytes_per_second",
     "scaleout_bytes_per_second"),
    ("usable HBM", "usable_hbm_bytes", "hbm_bytes"),
)


@dataclass(frozen=True)
class Row:
    """One figure of one chip: the datasheet value, the achievable one, their ratio, whether the
    achievable one is a named assumption, and its source (units: FLOP/s, bytes/s or bytes)."""

    chip: str
    figure: str
    field: str
    datasheet: float
    achievable: float
    fraction: float
    assumption: bool
    source: str


def table(chip_names: Iterable[str | chips.Chip] | None = None) -> tuple[Row, ...]:
    """Every datasheet figure of the chips (all catalog chips by default) beside its achievable
    figure: each dense matmul peak, HBM bandwidth, scale-up and scale-out collective bandwidth
    (skipped where the chip has no such datasheet figure) and usable HBM.

    Raises:
        TypeError, ValueError: a chip that is not a catalog name or Chip.
    """
    if isinstance(chip_names, (str, chips.Chip)):
        raise TypeError("chip_names must be an iterable of chip names, not one name")
    the_chips = chips.all() if chip_names is None else tuple(chips.get(c) for c in chip_names)
    rows: list[Row] = []
    for c in the_chips:
        for name in c.dtypes:
            d = dtypes.check(name)
            key = f"achievable_flops:{d}"
            rows.append(Row(c.name, f"matmul {d}", key, c.peak_flops(d), c.achievable_flops(d),
                            c.achievable_fraction(key), c.achievable_is_assumption(key),
                            c.source(key)))
        for label, key, datasheet in FIGURES:
            base = getattr(c, datasheet)
            if base is None:
                continue
            value = float(getattr(c, key))
            rows.append(Row(c.name, label, key, float(base), value, value / float(base),
                            c.achievable_is_assumption(key), c.source(key)))
    return tuple(rows)
