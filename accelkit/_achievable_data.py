"""The catalog's achievable figures, read from ``accelkit/data/chips.json`` (its ``achievable``
entries and ``achievable_defaults``) for :class:`accelkit.chips.Chip`: every figure a measured
value with its source, or a named assumption where no measurement was read."""

from __future__ import annotations

from typing import Any

from accelkit import dtypes


def achievable_from_json(entry: dict[str, Any], defaults: dict[str, Any]
                          ) -> tuple[tuple[str, float | None, str, bool], ...]:
    """Every achievable figure of a catalog entry: its measured value (a ``value``, or a
    ``fraction`` of the datasheet figure) with source, or where none is recorded a named
    assumption: the datasheet figure (or, for a precision without a measurement on a chip
    measured in bf16, the bf16 fraction applied to that precision's peak)."""
    got = entry.get("achievable", {})
    for key in got:  # a typo'd figure in the data file must not vanish silently
        if key not in ("flops", "hbm_bytes_per_second", "scaleup_bytes_per_second",
                       "scaleout_bytes_per_second", "usable_hbm_fraction"):
            raise ValueError(f"{entry['name']}: unknown achievable figure {key!r}")
    out: list[tuple[str, float | None, str, bool]] = []
    peaks = {d: float(v["value"]) for d, v in entry["peak_flops"].items()}
    flops = got.get("flops", {})
    bf16 = flops.get("bf16")
    for d in dtypes.PEAK_DTYPES:
        if d not in peaks:
            continue
        if d in flops:
            e = flops[d]
            value = float(e["value"]) if "value" in e else float(e["fraction"]) * peaks[d]
            out.append((f"achievable_flops:{d}", value, e["source"],
                        bool(e.get("assumption", False))))
        elif bf16 is not None and "bf16" in peaks:
            frac = (float(bf16["value"]) / peaks["bf16"] if "value" in bf16
                    else float(bf16["fraction"]))
            out.append((f"achievable_flops:{d}", frac * peaks[d],
                        f"ASSUMPTION: no {d} measurement read for {entry['name']}; its measured "
                        f"bf16 fraction ({frac:.1%}: {bf16['source']}) applied to the {d} peak",
                        True))
        else:
            out.append((f"achievable_flops:{d}", peaks[d],
                        f"ASSUMPTION: no matmul measurement read for {entry['name']}; the "
                        f"datasheet {d} peak stands in (an upper bound)", True))
    for name in ("hbm_bytes_per_second", "scaleup_bytes_per_second", "scaleout_bytes_per_second"):
        datasheet = entry[name]["value"]
        e = got.get(name)
        key = f"achievable_{name}"
        if datasheet is None:
            out.append((key, None, f"no datasheet {name} ({entry[name]['source']})", True))
        elif e is None:
            out.append((key, float(datasheet), f"ASSUMPTION: no measurement read for "
                        f"{entry['name']}; the datasheet {name} stands in (an upper bound)", True))
        else:
            value = e.get("value")
            value = float(value) if value is not None else float(e["fraction"]) * datasheet
            out.append((key, value, e["source"], bool(e.get("assumption", False))))
    usable = got.get("usable_hbm_fraction", defaults["usable_hbm_fraction"])
    capacity = entry["hbm_bytes"]["value"]
    out.append(("usable_hbm_bytes", None if capacity is None else float(usable["value"]) * capacity,
                usable["source"], bool(usable.get("assumption", False))))
    return tuple(out)
