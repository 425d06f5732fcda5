"""The chip catalog's data file, read: which of a chip's fields carry a source, and one
``accelkit/data/chips.json`` entry as the fields of an :class:`accelkit.chips.Chip` (the
class, its methods and the look-ups are :mod:`accelkit.chips`'; the achievable figures are
:mod:`accelkit._achievable_data`'s)."""

from __future__ import annotations

from typing import Any

from accelkit import dtypes
from accelkit._achievable_data import achievable_from_json

__all__ = ["NUMERIC_FIELDS", "TOPOLOGY_FIELDS", "chip_fields"]

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

#: Sourced topology fields: per chip, in the units their names say; None = no source.
#: ``sparsecores_per_chip`` may be 0 (a real count: the chip has none), unlike NUMERIC_FIELDS.
TOPOLOGY_FIELDS = (
    "tensorcores_per_chip",  # TPU TensorCores (None on GPUs)
    "sms_per_chip",  # GPU streaming multiprocessors (None on TPUs)
    "sparsecores_per_chip",  # TPU SparseCores; 0 where the chip has none
    "link_bytes_per_second",  # one scale-up link (ICI link or NVLink link), ONE direction
    "links_per_chip",  # ICI ports / NVLink links
    "scaleup_bytes_per_second",  # per chip, one direction, all scale-up links (NVLink per GPU)
    "scaleup_domain_chips",  # GPU: NVLink domain; TPU: largest ICI slice
    "scaleout_bytes_per_second",  # per chip, one direction, beyond the domain (NIC share / DCN)
    "chips_per_host",
    "nics_per_host",
    "hop_latency_seconds",  # per ICI hop / per NVLink ring step
    "scaleout_hop_latency_seconds",  # per inter-node (IB) or DCN ring step
    "collective_latency_seconds",  # fixed cost per collective (NCCL base latency)
)


def chip_fields(entry: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """One ``chips.json`` entry as the keyword arguments of :class:`accelkit.chips.Chip`."""
    peaks = entry["peak_flops"]
    values = {name: entry[name]["value"] for name in NUMERIC_FIELDS}
    sources = [(name, entry[name]["source"]) for name in NUMERIC_FIELDS + TOPOLOGY_FIELDS]
    torus = entry.get("torus")
    if torus is not None:
        sources.append(("torus", torus["source"]))
    topology = {name: entry[name]["value"] for name in TOPOLOGY_FIELDS}
    sources += [(f"peak_flops:{d}", peaks[d]["source"]) for d in dtypes.PEAK_DTYPES if d in peaks]
    sparse = entry.get("sparse_peak_flops", {})
    for d in sparse:  # a typo'd format in the data file must not vanish silently
        dtypes.check(d, "sparse_peak_flops", allowed=dtypes.PEAK_DTYPES)
    sources += [(f"sparse_peak_flops:{d}", sparse[d]["source"]) for d in dtypes.PEAK_DTYPES
                if d in sparse]
    tdp_range = entry["watts"].get("range")
    text = entry["text"]
    return dict(
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
        _sparse_peaks=tuple((d, float(sparse[d]["value"])) for d in dtypes.PEAK_DTYPES if d in sparse),
        tdp_range_watts=None if tdp_range is None else (float(tdp_range[0]), float(tdp_range[1])),
        _sources=tuple(sources),
        price_alternatives=tuple(
            (float(a["usd_per_hour"]), a["provider"], a["date"], a["source"],
             bool(a["list_price"]), a.get("basis", "unstated"), a.get("terms", "on_demand"),
             a.get("caveat", ""))
            for a in entry.get("price_alternatives", [])
        ),
        sources=text["sources"],
        **topology,
        torus_dims=None if torus is None else int(torus["dims"]),
        pod_shape=() if torus is None else tuple(int(a) for a in torus["pod_shape"]),
        max_slice_shape=() if torus is None else tuple(int(a) for a in torus["max_slice_shape"]),
        wrap_rule=None if torus is None else torus["wrap"],
        _achievable=achievable_from_json(entry, defaults),
    )
