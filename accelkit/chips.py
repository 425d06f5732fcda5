"""The chip catalog: 14 TPUs and GPUs, every number with the source it was read from.

    >>> import accelkit as ak
    >>> chip = ak.chips.get("v5e")
    >>> chip.peak_flops("bf16"), chip.hbm_bytes_per_second
    (197000000000000.0, 819000000000.0)
    >>> chip.source("hbm_bytes_per_second")[:20]
    'C6: chose 819 GB/s ('

Data: ``accelkit/data/chips.json``, every number with the public source it was read from
(vendor datasheets and documentation, cloud price pages, the scaling book); "C6" and the like in
a source string label a choice between conflicting sources, and the string says which was chosen
and why. Values are in SI base units: bytes (vendors' "GB" of capacity
are GiB, so 16 GB = 16 * 2**30 bytes), bytes per second (GB/s * 1e9), FLOP/s, Hz, watts, USD per
chip-hour. A value no source gives is ``None`` (never 0), and its source string says why.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from accelkit import _validate, dtypes
from accelkit.dtypes import DType

class MissingFigureError(ValueError):
    """A chip has no published figure for what was asked: a dense peak in some precision, its
    power, its price, its interconnect bandwidth.

    A subclass of ValueError, so code that catches ValueError keeps working; code that must tell
    "this chip cannot be costed this way" from "a bad argument" catches this type (never the
    message's wording). ``chip`` and ``figure`` say which chip lacks which figure.
    """

    def __init__(self, chip: str, figure: str, message: str) -> None:
        super().__init__(message)
        self.chip = chip
        self.figure = figure


#: Numeric fields of a Chip that carry a source (``Chip.source`` accepts these and "peak_flops:<dtype>").
NUMERIC_FIELDS = (
    "hbm_bytes",
    "hbm_bytes_per_second",
    "interconnect_bytes_per_second",
    "watts",
    "usd_per_hour",
    "onchip_sram_bytes",
    "clock_hz",
    "max_domain_chips",
)


@dataclass(frozen=True)
class Chip:
    """One accelerator chip. Numbers are per chip, in the units their names say; None = no source.

    Use :meth:`peak_flops` for compute peaks and :meth:`source` for where any number comes from.
    """

    name: str
    vendor: str
    year: int
    kind: str  # "tpu" or "gpu"
    hbm_bytes: int | None             # bytes: the vendor's "GB" of capacity x 2**30 (hbm_published)
    hbm_bytes_per_second: float | None
    interconnect_bytes_per_second: float | None  # bidirectional, total per chip
    watts: float | None
    usd_per_hour: float | None
    onchip_sram_bytes: int | None  # TPU: VMEM per chip; GPU: L2
    clock_hz: float | None
    max_domain_chips: int | None  # TPU: largest ICI pod; GPU: NVLink domain (HGX node)
    matrix_units: str
    matrix_unit_shape: str
    interconnect_topology: str
    process: str
    memory_type: str
    price_source: str
    notes: str = ""
    price_date: str = ""  # when the usd_per_hour price was read ("" where there is none)
    # what the usd_per_hour price covers: "tpu_slice", "gpu_only" (host VM extra), "vm_inclusive"
    # or "unstated" ("" where there is no price); its source; and any caveat (the V100's SKU)
    price_basis: str = ""
    # HBM capacity as the source writes it ("80 GB", "95 GiB"); hbm_bytes is that number x 2**30
    hbm_published: str = field(default="", repr=False)
    price_basis_source: str = ""
    price_caveat: str = ""
    aliases: tuple[str, ...] = field(default=(), repr=False)
    # (dtype, FLOP/s) pairs and (field, source) pairs: tuples keep the dataclass hashable.
    _peaks: tuple[tuple[str, float], ...] = field(default=(), repr=False)
    _sources: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    # (usd_per_hour, provider, date, source, list_price, basis, terms, caveat) per other sourced price
    price_alternatives: tuple[tuple[float, str, str, str, bool, str, str, str], ...] = field(default=(),
                                                                            repr=False)
    sources: str = field(default="", repr=False)

    @property
    def dtypes(self) -> tuple[str, ...]:
        """Precisions with a published dense peak on this chip, in the order of
        :data:`accelkit.dtypes.PEAK_DTYPES`."""
        return tuple(d for d, _ in self._peaks)

    def peak_flops(self, dtype: DType = "bf16") -> float:
        """Dense peak FLOP/s (int8: OP/s) per chip for ``dtype``.

        V100 and T4 have no bf16; for them ``"bf16"`` gives their fp16 tensor-core figure,
        the usual 16-bit stand-in (the source string says so).

        Raises:
            ValueError: a format no chip publishes a peak for (one of
                :data:`accelkit.dtypes.PEAK_DTYPES` is needed).
            MissingFigureError: the chip has no published dense peak for it.
        """
        dtype = dtypes.check(dtype, allowed=dtypes.PEAK_DTYPES)
        for name, value in self._peaks:
            if name == dtype:
                return value
        raise MissingFigureError(
            self.name, f"peak_flops:{dtype}",
            f"{self.name} has no published dense {dtype} peak; it has {', '.join(self.dtypes)}"
        )

    def ridge_flops_per_byte(self, dtype: DType = "bf16") -> float:
        """Peak FLOP/s over memory bytes/s: the arithmetic intensity needed to be compute-bound."""
        if self.hbm_bytes_per_second is None:  # pragma: no cover - every catalog chip has one
            raise MissingFigureError(self.name, "hbm_bytes_per_second",
                                     f"{self.name} has no published memory bandwidth")
        return self.peak_flops(dtype) / self.hbm_bytes_per_second

    @property
    def hbm_label(self) -> str:
        """Capacity with its units spelled out, e.g. "80 GiB = 85.9 GB (source: '80 GB', a binary
        size)": vendors' "GB" of HBM are GiB, while bandwidths' "GB/s" are 10^9 bytes/s."""
        if self.hbm_bytes is None:  # pragma: no cover - every catalog chip has one
            return "no published capacity"
        binary = "" if "GiB" in self.hbm_published else ", a binary size"
        return (f"{self.hbm_bytes / 2**30:g} GiB = {self.hbm_bytes / 1e9:,.1f} GB "
                f"(source: '{self.hbm_published}'{binary})")

    def source(self, field_name: str) -> str:
        """Where the number in ``field_name`` comes from (or why it is None).

        ``field_name`` is a numeric field (``"hbm_bytes"``, ``"watts"``, ...), ``"peak_flops"``
        (the bf16 peak) or ``"peak_flops:<dtype>"``.

        Raises:
            ValueError: not a sourced field of a Chip, or a precision the chip lacks.
        """
        if not isinstance(field_name, str):
            raise TypeError(f"field must be a field name (str), got {type(field_name).__name__}")
        key = field_name.strip()
        if key == "peak_flops":
            key = "peak_flops:bf16"
        if key.startswith("peak_flops:"):
            self.peak_flops(dtypes.check(key.split(":", 1)[1]))  # raises a clear error for a missing precision
        for name, text in self._sources:
            if name == key:
                return text
        allowed = list(NUMERIC_FIELDS) + ["peak_flops", *(f"peak_flops:{d}" for d in self.dtypes)]
        raise ValueError(f"field must be one of {allowed}, got {field_name!r}")

    def require(self, field_name: str) -> float:
        """The value of a numeric field, or a ValueError saying this chip has no published one.

        For functions that need, say, ``watts``: TPU v5e/v5p/v6e/7x have no published power.
        """
        if field_name not in NUMERIC_FIELDS:
            raise ValueError(f"field must be one of {list(NUMERIC_FIELDS)}, got {field_name!r}")
        value = getattr(self, field_name)
        if value is None:
            raise MissingFigureError(
                self.name, field_name,
                f"{self.name} has no published {field_name} figure ({self.source(field_name)})"
            )
        return value

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        def show(value: float | None, scale: float, unit: str) -> str:
            return "None" if value is None else f"{value / scale:g} {unit}"
        return (
            f"Chip({self.name!r}, bf16={self.peak_flops('bf16') / 1e12:g} TFLOP/s, "
            f"memory={show(self.hbm_bytes, 2**30, 'GiB')} at "
            f"{show(self.hbm_bytes_per_second, 1e9, 'GB/s')}, "
            f"interconnect={show(self.interconnect_bytes_per_second, 1e9, 'GB/s')}, "
            f"watts={self.watts}, usd_per_hour={self.usd_per_hour})"
        )

    def _repr_html_(self) -> str:
        rows = [
            ("vendor / year", f"{self.vendor} {self.year}", ""),
            *[(f"peak {d}", f"{v / 1e12:,.1f} T{'OP' if d == 'int8' else 'FLOP'}/s",
               self.source(f"peak_flops:{d}")) for d, v in self._peaks],
            ("memory", self.hbm_label, self.source("hbm_bytes")),
            ("memory bandwidth", _fmt(self.hbm_bytes_per_second, 1e9, "GB/s"),
             self.source("hbm_bytes_per_second")),
            ("bf16 ridge", f"{self.ridge_flops_per_byte('bf16'):,.0f} FLOPs/byte", ""),
            ("interconnect", _fmt(self.interconnect_bytes_per_second, 1e9, "GB/s bidi"),
             self.source("interconnect_bytes_per_second")),
            ("power", _fmt(self.watts, 1, "W"), self.source("watts")),
            ("price", _fmt(self.usd_per_hour, 1, "$/chip-hour", digits=2), self.source("usd_per_hour")),
            ("matrix units", f"{self.matrix_units}; {self.matrix_unit_shape}".strip("; "), ""),
        ]
        body = "".join(
            f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td>"
            f"<td style='font-size:smaller'>{html.escape(c)}</td></tr>" for a, b, c in rows
        )
        return (f"<table><caption><b>{html.escape(self.name)}</b></caption>"
                f"<tr><th>what</th><th>value</th><th>source</th></tr>{body}</table>")


def _fmt(value: float | None, scale: float, unit: str, digits: int = 0) -> str:
    return "no published figure" if value is None else f"{value / scale:,.{digits}f} {unit}"


# Built once on first use, so `import accelkit.chips` costs no file I/O and `get` is a dict lookup.
_CATALOG: tuple[Chip, ...] | None = None
_BY_ALIAS: dict[str, Chip] = {}


def _load() -> tuple[Chip, ...]:
    global _CATALOG
    if _CATALOG is None:
        text = resources.files("accelkit").joinpath("data/chips.json").read_text(encoding="utf-8")
        chips = tuple(_chip_from_json(entry) for entry in json.loads(text)["chips"])
        table: dict[str, Chip] = {}
        for chip in chips:
            for alias in (chip.name, *chip.aliases):
                key = _validate.normalise_name(alias)
                if table.get(key, chip) is not chip:  # pragma: no cover - guards the data file
                    raise RuntimeError(f"alias {alias!r} names both {table[key].name} and {chip.name}")
                table[key] = chip
        _BY_ALIAS.update(table)
        _CATALOG = chips
    return _CATALOG


def _chip_from_json(entry: dict[str, Any]) -> Chip:
    peaks = entry["peak_flops"]
    values = {name: entry[name]["value"] for name in NUMERIC_FIELDS}
    sources = [(name, entry[name]["source"]) for name in NUMERIC_FIELDS]
    sources += [(f"peak_flops:{d}", peaks[d]["source"]) for d in dtypes.PEAK_DTYPES if d in peaks]
    text = entry["text"]
    return Chip(
        name=entry["name"], vendor=entry["vendor"], year=entry["year"], kind=entry["kind"],
        **values,
        matrix_units=text["matrix_units"], matrix_unit_shape=text["matrix_unit_shape"],
        interconnect_topology=text["interconnect_topology"], process=text["process"],
        memory_type=text["memory_type"], price_source=text["price_source"],
        notes=entry.get("notes", ""),
        price_date=text.get("price_date", ""),
        price_basis=entry["usd_per_hour"].get("basis", ""),
        hbm_published=entry["hbm_bytes"].get("published", ""),
        price_basis_source=entry["usd_per_hour"].get("basis_source", ""),
        price_caveat=entry["usd_per_hour"].get("caveat", ""),
        aliases=tuple(entry["aliases"]),
        _peaks=tuple((d, float(peaks[d]["value"])) for d in dtypes.PEAK_DTYPES if d in peaks),
        _sources=tuple(sources),
        price_alternatives=tuple(
            (float(a["usd_per_hour"]), a["provider"], a["date"], a["source"],
             bool(a["list_price"]), a.get("basis", "unstated"), a.get("terms", "on_demand"),
             a.get("caveat", ""))
            for a in entry.get("price_alternatives", [])
        ),
        sources=text["sources"],
    )


def get(name: str | Chip) -> Chip:
    """Find a chip by name or alias, in any case: "TPU v5e", "v5e", "tpu-v5e", "H100", "Ironwood".

    "A100" and "H100" are the SXM parts. A Chip is returned as is.

    Raises:
        TypeError: ``name`` is neither a str nor a Chip.
        ValueError: no such chip (the message lists close matches).
    """
    if isinstance(name, Chip):
        return name
    _load()
    if not isinstance(name, str):
        raise TypeError(f"chip must be a chip name (str) or a Chip, got {type(name).__name__} {name!r}")
    chip = _BY_ALIAS.get(_validate.normalise_name(name))
    if chip is not None:
        return chip
    try:
        _validate.lookup("chip", name, _BY_ALIAS)
    except ValueError as exc:
        message = str(exc) if str(exc).endswith("?") else f"{exc}."
        raise ValueError(f"{message} Known chips: {', '.join(c.name for c in all())}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def all() -> tuple[Chip, ...]:  # noqa: A001 - the contract name is ak.chips.all()
    """Every chip in the catalog, TPUs first (by generation), then GPUs."""
    return _load()


def names() -> tuple[str, ...]:
    """The canonical name of every chip, in catalog order."""
    return tuple(chip.name for chip in _load())
