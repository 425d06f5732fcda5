"""Price: what a chip-hour buys, and what a run or a million tokens costs.

Prices are on-demand list prices per chip-hour from the chip catalog, each with its provider and
date (``chip.source("usd_per_hour")``). Providers differ by 2-3x for the same chip (H100: $10.80
on Google Cloud, $3.99 on Lambda), which can flip a GPU-vs-TPU cost comparison; every function
takes ``usd_per_hour=`` to use another price, and :func:`alternatives` lists the other sourced ones.

    >>> import accelkit as ak
    >>> round(ak.price.flops_per_dollar("v5e") / 1e17, 2)    # bf16 FLOPs per dollar at 100% MFU
    5.91
"""

from __future__ import annotations

from typing import NamedTuple

from accelkit import _validate, chips


class PricePoint(NamedTuple):
    """One sourced price for a chip-hour."""

    usd_per_hour: float
    provider: str
    date: str
    source: str


def _hourly(chip: chips.Chip, usd_per_hour: float | None) -> float:
    if usd_per_hour is not None:
        return _validate.positive_float("usd_per_hour", usd_per_hour)
    if chip.usd_per_hour is None:
        raise ValueError(
            f"{chip.name} has no list price ({chip.source('usd_per_hour')}); "
            "pass usd_per_hour= to use a price of your own"
        )
    return chip.usd_per_hour


def flops_per_dollar(chip: str | chips.Chip, dtype: str = "bf16", mfu: float = 1.0, *,
                     usd_per_hour: float | None = None) -> float:
    """FLOPs one dollar buys: peak FLOP/s × MFU × 3600 s / price per chip-hour.

    Args:
        chip: a chip name or a Chip.
        dtype: precision whose dense peak counts.
        mfu: fraction of peak achieved, in (0, 1].
        usd_per_hour: override the catalog price.

    Raises:
        ValueError: unknown chip or dtype, a precision the chip lacks, MFU outside (0, 1],
            or a chip with no list price (and no override).
    """
    the_chip = chips.get(chip)
    share = _validate.fraction("mfu", mfu)
    peak = the_chip.peak_flops(dtype)
    return peak * share * 3600.0 / _hourly(the_chip, usd_per_hour)


def usd(chip: str | chips.Chip, seconds: float, n_chips: int = 1, *,
        usd_per_hour: float | None = None) -> float:
    """Dollars for ``n_chips`` chips held for ``seconds`` (>= 0) at the per-chip-hour price."""
    the_chip = chips.get(chip)
    duration = _validate.real_in_range("seconds", seconds, low=0.0)
    count = _validate.positive_int("n_chips", n_chips)
    return _hourly(the_chip, usd_per_hour) * count * duration / 3600.0


def usd_per_million_tokens(chip: str | chips.Chip, tokens_per_second: float, n_chips: int = 1, *,
                           usd_per_hour: float | None = None) -> float:
    """Dollars per million tokens when ``n_chips`` chips together produce ``tokens_per_second``.

    Raises:
        ValueError: unknown chip, non-positive throughput or chip count, no list price.
    """
    the_chip = chips.get(chip)
    rate = _validate.positive_float("tokens_per_second", tokens_per_second)
    count = _validate.positive_int("n_chips", n_chips)
    usd_per_second = _hourly(the_chip, usd_per_hour) * count / 3600.0
    return usd_per_second / rate * 1e6


def alternatives(chip: str | chips.Chip) -> list[PricePoint]:
    """Other sourced prices for this chip (other providers or dates), not the catalog's own.

    Empty where the reference lists none. A point may not be a list price (the TPU7x point is a
    3-year-commitment model); its ``provider`` says so.
    """
    the_chip = chips.get(chip)
    return [PricePoint(*point) for point in the_chip.price_alternatives]


def price_points(chip: str | chips.Chip) -> list[PricePoint]:
    """The catalog price first (if the chip has one), then :func:`alternatives`."""
    the_chip = chips.get(chip)
    points = []
    if the_chip.usd_per_hour is not None:
        points.append(PricePoint(the_chip.usd_per_hour, the_chip.price_source, the_chip.price_date,
                                 the_chip.source("usd_per_hour")))
    return points + alternatives(the_chip)
