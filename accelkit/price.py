"""Price: what a chip-hour buys, and what a run or a million tokens costs.

Prices are on-demand list prices per chip-hour from the chip catalog, each with its provider and
date (``chip.source("usd_per_hour")``). A list price is the seller's business decision, not a
property of the silicon, and prices do not all cover the same thing: each carries a *basis*
(:data:`BASES`): a Cloud TPU slice as billed, a GPU alone (the host VM billed on top, as for
the GCP L4, T4 and V100 SKUs), or a whole instance per GPU. Compare like with like. Providers differ by 2-3x for the same chip (H100: $10.80
on Google Cloud, $3.99 on Lambda), which can flip a GPU-vs-TPU cost comparison; every function
takes ``usd_per_hour=`` to use another price, and :func:`alternatives` lists the other sourced ones.

    >>> import accelkit as ak
    >>> round(ak.price.flops_per_dollar("v5e") / 1e17, 2)    # bf16 FLOPs per dollar at 100% MFU
    5.91
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from accelkit import _validate, chips
from accelkit.dtypes import DType


#: What a price covers, with the words a display should show for it.
BASES = {
    "tpu_slice": "Cloud TPU slice, per chip, as billed (no separate host VM)",
    "gpu_only": "GPU only: the host VM is billed on top",
    "vm_inclusive": "whole instance (host CPUs, memory) per GPU",
    "unstated": "the source does not say what it covers",
}

#: The same, short enough for a widget's table row.
SHORT_BASES = {
    "tpu_slice": "TPU slice as billed",
    "gpu_only": "GPU only, host VM extra",
    "vm_inclusive": "incl. host VM",
    "unstated": "basis not stated",
}

#: Pricing terms a point can carry.
TERMS = ("on_demand", "spot", "3yr_commitment_model")


class PricePoint(NamedTuple):
    """One sourced price for a chip-hour.

    ``list_price`` is False for a point that is not a published on-demand list price (a spot
    price, the TPU7x 3-year-commitment model); ``basis`` is a key of :data:`BASES` (what the price
    covers), ``terms`` one of :data:`TERMS`, ``caveat`` a warning ("" if none: the V100 entry
    carries the 16 GB SKU's price). Compare like with like by filtering on them.
    """

    usd_per_hour: float
    provider: str
    date: str
    source: str
    list_price: bool = True
    basis: str = "unstated"
    terms: str = "on_demand"
    caveat: str = ""

    @property
    def basis_note(self) -> str:
        """Short basis for a display: "GPU only, host VM extra", plus terms and caveat if any."""
        note = SHORT_BASES.get(self.basis, self.basis)
        if self.terms != "on_demand":
            note += ", " + self.terms.replace("_", " ")
        return note + (f"; {self.caveat}" if self.caveat else "")

    @property
    def label(self) -> str:
        """Short on-screen description: provider, basis, terms and any caveat."""
        parts = [self.provider, BASES.get(self.basis, self.basis)]
        if self.terms != "on_demand":
            parts.append(self.terms.replace("_", " "))
        if self.caveat:
            parts.append(self.caveat)
        return "; ".join(parts)


def usd_for(usd_per_hour: float | np.ndarray | None, seconds: float | np.ndarray,
            n_chips: int = 1) -> float | np.ndarray | None:
    """Dollars for ``n_chips`` chips held for ``seconds`` at ``usd_per_hour`` per chip-hour.

    ``usd_per_hour × n_chips × seconds / 3600``: the one place the library turns time into
    money (serving, training, scenarios, :func:`usd`). Arrays broadcast (a price per chip against
    a time per batch); NaN in a price array means "no price" and gives NaN; ``usd_per_hour=None``
    gives None.

    Raises:
        TypeError / ValueError: a scalar price not > 0, seconds negative or non-finite,
            n_chips < 1, a negative or infinite entry in a price array.
    """
    count = _validate.positive_int("n_chips", n_chips)
    if usd_per_hour is None:
        return None
    scalar = (np.ndim(usd_per_hour) == 0 and not isinstance(usd_per_hour, np.ndarray)
              and np.ndim(seconds) == 0 and not isinstance(seconds, np.ndarray))
    if scalar:
        rate = _validate.positive_float("usd_per_hour", usd_per_hour)
        return rate * count * _validate.real_in_range("seconds", seconds, low=0.0) / 3600.0
    rates = np.asarray(usd_per_hour, dtype=float)
    duration = np.asarray(seconds, dtype=float)
    if np.isinf(rates).any() or (rates <= 0).any():
        raise ValueError("usd_per_hour must all be > 0 and finite (NaN for no price)")
    if not np.isfinite(duration).all() or (duration < 0).any():
        raise ValueError("seconds must all be finite and >= 0")
    return rates * count * duration / 3600.0


def _hourly(chip: chips.Chip, usd_per_hour: float | None) -> float:
    if usd_per_hour is not None:
        return _validate.positive_float("usd_per_hour", usd_per_hour)
    if chip.usd_per_hour is None:
        raise chips.MissingFigureError(
            chip.name, "usd_per_hour",
            f"{chip.name} has no list price ({chip.source('usd_per_hour')}); "
            "pass usd_per_hour= to use a price of your own"
        )
    return chip.usd_per_hour


def flops_per_dollar(chip: str | chips.Chip, dtype: DType = "bf16", mfu: float = 1.0, *,
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
    return float(usd_for(_hourly(the_chip, usd_per_hour), duration, count))  # type: ignore[arg-type]


def usd_per_million_tokens(chip: str | chips.Chip, tokens_per_second: float, n_chips: int = 1, *,
                           usd_per_hour: float | None = None) -> float:
    """Dollars per million tokens when ``n_chips`` chips together produce ``tokens_per_second``.

    Raises:
        ValueError: unknown chip, non-positive throughput or chip count, no list price.
    """
    the_chip = chips.get(chip)
    rate = _validate.positive_float("tokens_per_second", tokens_per_second)
    count = _validate.positive_int("n_chips", n_chips)
    usd_per_second = float(usd_for(_hourly(the_chip, usd_per_hour), 1.0, count))  # type: ignore[arg-type]
    return usd_per_second / rate * 1e6


def alternatives(chip: str | chips.Chip) -> list[PricePoint]:
    """Other sourced prices for this chip (other providers or dates), not the catalog's own.

    Empty where the reference lists none. A point may not be a list price (a spot price; the TPU7x
    point is a 3-year-commitment model): its ``list_price`` is False and its ``terms`` say which.
    """
    the_chip = chips.get(chip)
    return [PricePoint(*point) for point in the_chip.price_alternatives]


def price_points(chip: str | chips.Chip) -> list[PricePoint]:
    """The catalog price first (if the chip has one), then :func:`alternatives`."""
    the_chip = chips.get(chip)
    points = []
    if the_chip.usd_per_hour is not None:
        points.append(PricePoint(the_chip.usd_per_hour, the_chip.price_source, the_chip.price_date,
                                 the_chip.source("usd_per_hour"), True,
                                 the_chip.price_basis or "unstated", "on_demand",
                                 the_chip.price_caveat))
    return points + alternatives(the_chip)


def lowest(chip: str | chips.Chip, *, include_spot: bool = False) -> PricePoint | None:
    """The cheapest sourced price point for this chip (None if it has none).

    Spot prices are left out unless ``include_spot``: a spot chip-hour can be taken back at any
    moment, so it is not the same product as an on-demand one. (A commitment-model point such as
    TPU7x's still counts, as it did before spot prices were listed; its ``terms`` say what it is.)
    """
    points = [p for p in price_points(chip) if include_spot or p.terms != "spot"]
    return min(points, key=lambda p: p.usd_per_hour) if points else None
