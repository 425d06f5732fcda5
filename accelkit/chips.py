"""The chip catalog: 18 TPUs and GPUs, every number with the source it was read from.

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

Topology (``TOPOLOGY_FIELDS``): per-link ICI/NVLink bandwidth ONE direction
(``link_bytes_per_second``) and links per chip; per-chip scale-up and scale-out bandwidth, one
direction; the scale-up domain (GPU NVLink domain, TPU largest ICI slice); chips and NICs per host;
per-hop and per-collective latencies; TensorCores / SMs and SparseCores per chip; and for TPUs the
torus (``pod_shape``, ``max_slice_shape``, ``wrap_rule``, :meth:`Chip.axis_wraps`). The older
``interconnect_bytes_per_second`` counts both directions of every link and is kept for existing
callers; collectives (``accelkit.collectives``) use the one-direction fields.

    >>> ak.chips.get("H100").scaleup_bytes_per_second, ak.chips.get("v5p").link_bytes_per_second
    (450000000000.0, 90000000000.0)
    >>> ak.chips.get("v5e").sparsecores_per_chip, ak.chips.get("v5e").axis_wraps((8, 16))
    (0, (False, True))

Precision: :meth:`Chip.peak_flops` gives DENSE peaks per format (bf16 ... fp4, int4; see
:data:`accelkit.dtypes.PEAK_DTYPES`). Vendors also publish 2:4 structured-sparsity peaks, twice
the dense figure, that only a matrix with two zeros in every four weights reaches; those are kept
apart and asked for explicitly, ``peak_flops(dtype, sparse=True)``, and never stand in for a dense
peak.

    >>> ak.chips.get("H100").peak_flops("fp8"), ak.chips.get("H100").peak_flops("fp8", sparse=True)
    (1979000000000000.0, 3958000000000000.0)
    >>> ak.chips.get("MI355X").peak_flops("fp4") / 1e15
    10.1

Power: ``watts`` is one figure; where sources disagree the catalog keeps the range
(``Chip.tdp_range_watts``, e.g. TPU v3: Google's measured 262 W maximum against the 450 W TDP a
secondary source gives) and the ``watts`` source names the figure used.

Achievable beside datasheet: a datasheet peak is what no kernel reaches. Beside each peak the
catalog keeps what a kernel or collective measurably reaches, with its source
(:meth:`Chip.achievable_flops`, ``achievable_hbm_bytes_per_second``,
``achievable_scaleup_bytes_per_second`` / ``achievable_scaleout_bytes_per_second``: a ring
collective's bus bandwidth per chip, ``usable_hbm_bytes``); a figure no measurement gives is a
named assumption (:meth:`Chip.achievable_is_assumption`), and :mod:`accelkit.achievable` tabulates
both. Per-collective latencies are the catalog's NCCL and ICI figures above.

    >>> ak.chips.get("A100").achievable_flops("bf16") / 1e12, ak.chips.get("A100").peak_flops() / 1e12
    (271.2, 312.0)

Scale-up domains: most GPU entries model the 8-GPU node (HGX / the AMD OAM platform). "GB200" is
one GPU of a GB200 NVL72 rack: the Blackwell GPU of "B200" at 1,200 W (not 1,000 W) with 186 GB
of HBM3e, in one 72-GPU NVLink domain at the same 900 GB/s per GPU each way.
``Chip.scaleup_domain`` reads ``scaleup_domain_chips``:

    >>> ak.chips.get("GB200").scaleup_domain, ak.chips.get("B200").scaleup_domain
    (72, 8)
    >>> ak.chips.get("GB200").peak_flops("bf16") / 1e15, ak.chips.get("GB200").usd_per_hour
    (2.5, None)

(``accelkit.collectives``' ``scaleup_domain=72`` on "B200" still models the same domain with the
HGX part's figures.) GB200 has no per-GPU list price: it is rented as whole racks (its source says so).
"""

from __future__ import annotations

import builtins
import json
from dataclasses import dataclass, field
from importlib import resources

from accelkit import _html, _validate, dtypes
from accelkit._catalog_data import NUMERIC_FIELDS, TOPOLOGY_FIELDS, chip_fields
from accelkit import dtypes as _dtypes
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


#: Achievable figures beside the datasheet ones (``Chip.source`` accepts these and
#: "achievable_flops:<dtype>"): what a kernel or collective measurably reaches, with its source.
ACHIEVABLE_FIELDS = (
    "achievable_hbm_bytes_per_second",      # a large HBM copy
    "achievable_scaleup_bytes_per_second",  # a ring collective's bus bandwidth inside the domain
    "achievable_scaleout_bytes_per_second",  # ... per chip beyond it (NIC share / DCN)
    "usable_hbm_bytes",                     # HBM the model's tensors can hold
)

#: How a TPU slice's torus axes get wraparound links (``Chip.wrap_rule``):
#: "full_cube": every axis wraps when every axis is a multiple of 4 (4x4x4 cubes joined by optical
#: switches: v4, v5p, TPU7x); "full_axis": an axis wraps only when it spans the pod's full edge
#: (v5e/v6e: 16; a 8x16 v5e wraps on its 16 axis only).
WRAP_RULES = ("full_cube", "full_axis")


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
    # Topology; every number's source is in _sources, read with ``source(name)``.
    tensorcores_per_chip: int | None = field(default=None, repr=False)
    sms_per_chip: int | None = field(default=None, repr=False)
    sparsecores_per_chip: int | None = field(default=None, repr=False)
    link_bytes_per_second: float | None = field(default=None, repr=False)
    links_per_chip: int | None = field(default=None, repr=False)
    scaleup_bytes_per_second: float | None = field(default=None, repr=False)
    scaleup_domain_chips: int | None = field(default=None, repr=False)
    scaleout_bytes_per_second: float | None = field(default=None, repr=False)
    chips_per_host: int | None = field(default=None, repr=False)
    nics_per_host: int | None = field(default=None, repr=False)
    hop_latency_seconds: float | None = field(default=None, repr=False)
    scaleout_hop_latency_seconds: float | None = field(default=None, repr=False)
    collective_latency_seconds: float | None = field(default=None, repr=False)
    # 2:4 structured-sparsity peaks (dtype, FLOP/s), only where a source publishes one as sparse.
    _sparse_peaks: tuple[tuple[str, float], ...] = field(default=(), repr=False)
    # (low, high) watts where sources disagree on the power figure; None where they agree or
    # there is one source. ``watts`` is the figure used, and its source says which and why.
    tdp_range_watts: tuple[float, float] | None = field(default=None, repr=False)
    # TPU torus (None / () on GPUs): number of axes, pod and largest-slice shapes, wrap rule.
    torus_dims: int | None = field(default=None, repr=False)
    pod_shape: tuple[int, ...] = field(default=(), repr=False)
    max_slice_shape: tuple[int, ...] = field(default=(), repr=False)
    wrap_rule: str | None = field(default=None, repr=False)
    # Achievable figures: (name, value, source, assumption) per ACHIEVABLE_FIELDS entry and per
    # "achievable_flops:<dtype>" (every dtype with a peak); built by the loader, never missing.
    _achievable: tuple[tuple[str, float | None, str, bool], ...] = field(default=(), repr=False)

    @property
    def cores_per_chip(self) -> int | None:
        """TensorCores on a TPU, SMs on a GPU."""
        return self.tensorcores_per_chip if self.kind == "tpu" else self.sms_per_chip

    @property
    def has_sparsecores(self) -> bool:
        """True where the chip has SparseCores (TPU v4, whose count is unpublished here, included)."""
        if self.sparsecores_per_chip is not None:
            return self.sparsecores_per_chip > 0
        return "includes SparseCores" in self.source("sparsecores_per_chip")

    @property
    def scaleup_domain(self) -> int | None:
        """Chips in one scale-up domain: ``scaleup_domain_chips`` (a GPU's NVLink domain, 72 on
        GB200 NVL72 and 8 on HGX; a TPU's largest ICI slice), read-only."""
        return self.scaleup_domain_chips

    @property
    def max_slice_chips(self) -> int | None:
        """TPU: chips in the largest ICI-connected slice (beyond it, slices talk over DCN)."""
        return self.scaleup_domain_chips if self.kind == "tpu" else None

    def axis_wraps(self, shape: tuple[int, ...]) -> tuple[bool, ...]:
        """Which axes of a TPU slice of this ``shape`` have wraparound links (see WRAP_RULES).

        An axis of 1 or 2 chips never counts as wrapping: a 2-chip ring is one link.

        Raises:
            ValueError: not a TPU, or a shape with more axes than the torus or longer than the pod.
        """
        if self.kind != "tpu" or self.torus_dims is None:
            raise ValueError(f"{self.name} has no torus (GPUs are switched); axis_wraps is for TPUs")
        shape = tuple(int(a) for a in shape)
        if not 1 <= len(shape) <= self.torus_dims or any(a < 1 for a in shape):
            raise ValueError(f"shape must be 1 to {self.torus_dims} positive axis sizes for "
                             f"{self.name}, got {shape}")
        if self.wrap_rule == "full_cube":
            full = len(shape) == self.torus_dims and builtins.all(a % 4 == 0 for a in shape)
            return tuple(full and a > 2 for a in shape)
        edge = max(self.pod_shape)
        return tuple(a == edge for a in shape)

    @property
    def dtypes(self) -> tuple[str, ...]:
        """Precisions with a published dense peak on this chip, in the order of
        :data:`accelkit.dtypes.PEAK_DTYPES`."""
        return tuple(d for d, _ in self._peaks)

    @property
    def sparse_dtypes(self) -> tuple[str, ...]:
        """Precisions with a published 2:4 structured-sparsity peak (GPUs only; () on TPUs)."""
        return tuple(d for d, _ in self._sparse_peaks)

    def peaks(self, sparse: bool = False) -> dict[str, float]:
        """Every published peak FLOP/s (int8, int4: OP/s) by format: the dense ones, or with
        ``sparse=True`` the 2:4 structured-sparsity ones, never both; a new dict, in the order of
        :data:`accelkit.dtypes.PEAK_DTYPES`.

            >>> get("v5e").peaks()["int8"] / 1e12, get("v5e").peaks(sparse=True)
            (393.0, {})

        Raises:
            TypeError: ``sparse`` is not a bool.
        """
        if not isinstance(sparse, bool):
            raise TypeError(f"sparse must be True or False, got {type(sparse).__name__} {sparse!r}")
        return dict(self._sparse_peaks if sparse else self._peaks)

    def peak_flops(self, dtype: DType = "bf16", sparse: bool = False) -> float:
        """Peak FLOP/s (int8, int4: OP/s) per chip for ``dtype``: dense unless ``sparse=True``.

        V100 and T4 have no bf16; for them ``"bf16"`` gives their fp16 tensor-core figure,
        the usual 16-bit stand-in (the source string says so).

        ``sparse=True`` gives the vendor's 2:4 structured-sparsity peak: dense-equivalent FLOP/s
        that only a matrix with two zeros in every four weights can reach (twice the dense
        figure on every chip that publishes one). It is never used as a dense peak.

        Raises:
            TypeError: ``sparse`` is not a bool.
            ValueError: a format no chip publishes a peak for (one of
                :data:`accelkit.dtypes.PEAK_DTYPES` is needed).
            MissingFigureError: the chip has no published dense (or, with ``sparse=True``, no
                published sparse) peak for it.
        """
        dtype = dtypes.check(dtype, allowed=dtypes.PEAK_DTYPES)
        if not isinstance(sparse, bool):
            raise TypeError(f"sparse must be True or False, got {type(sparse).__name__} {sparse!r}")
        if sparse:
            for name, value in self._sparse_peaks:
                if name == dtype:
                    return value
            have = ", ".join(self.sparse_dtypes) or "none"
            raise MissingFigureError(
                self.name, f"sparse_peak_flops:{dtype}",
                f"{self.name} has no published 2:4 structured-sparsity {dtype} peak "
                f"(dtype={dtype!r}, sparse=True); "
                f"sparse peaks it has: {have}. Use sparse=False for the dense peak")
        for name, value in self._peaks:
            if name == dtype:
                return value
        raise MissingFigureError(
            self.name, f"peak_flops:{dtype}",
            f"{self.name} has no published dense {dtype} peak (dtype={dtype!r}); it has "
            f"{', '.join(self.dtypes)}"
        )

    def is_sparse_peak(self, dtype: DType, flops_per_second: float) -> bool:
        """True when ``flops_per_second`` is this chip's published 2:4 sparse ``dtype`` peak and
        not its dense one: the check that keeps a sparse figure from being passed as dense."""
        dtype = dtypes.check(dtype, allowed=dtypes.PEAK_DTYPES)
        for name, value in self._sparse_peaks:
            if name == dtype and abs(flops_per_second - value) <= 1e-9 * value:
                dense = dict(self._peaks).get(dtype)
                return dense is None or abs(flops_per_second - dense) > 1e-9 * dense
        return False

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

    # -- achievable beside datasheet -------------------------------------------------------

    def _achieved(self, key: str) -> tuple[float | None, str, bool]:
        for name, value, text, assumed in self._achievable:
            if name == key:
                return value, text, assumed
        raise ValueError(f"figure must be one of {list(ACHIEVABLE_FIELDS)} or "
                         f"'achievable_flops:<dtype>' for {', '.join(self.dtypes)}, got {key!r}")

    def achievable_flops(self, dtype: DType = "bf16") -> float:
        """The matmul FLOP/s a kernel measurably reaches on this chip in ``dtype``: the maximum
        achievable matmul FLOPS (a brute-force search over shapes, mamf-finder), not the
        datasheet's :meth:`peak_flops`. Where no measurement is published it is a named
        assumption (:meth:`achievable_is_assumption`; :meth:`source` says which).

            >>> h100 = get("H100")
            >>> round(h100.achievable_flops("bf16") / h100.peak_flops("bf16"), 3)
            0.803

        Raises:
            ValueError, MissingFigureError: as :meth:`peak_flops`.
        """
        self.peak_flops(dtype)
        value = self._achieved(f"achievable_flops:{dtypes.check(dtype)}")[0]
        assert value is not None  # the loader fills every dtype with a peak
        return value

    def _figure(self, key: str) -> float:
        value = self._achieved(key)[0]
        if value is None:
            datasheet = key.replace("achievable_", "")
            raise MissingFigureError(self.name, key, f"{self.name} has no {datasheet} figure, so "
                                     f"none achievable either ({self.source(datasheet)})")
        return value

    @property
    def achievable_hbm_bytes_per_second(self) -> float:
        """HBM bytes/s a large copy measurably reaches (datasheet: ``hbm_bytes_per_second``)."""
        return self._figure("achievable_hbm_bytes_per_second")

    @property
    def achievable_scaleup_bytes_per_second(self) -> float:
        """Per chip, one direction: the bus bandwidth a ring collective reaches inside the
        scale-up domain (nccl-tests ``busbw`` on NVLink; a measured share of the ICI links on
        TPUs), beside the datasheet ``scaleup_bytes_per_second``.

        Raises:
            MissingFigureError: the chip has no scale-up figure at all."""
        return self._figure("achievable_scaleup_bytes_per_second")

    @property
    def achievable_scaleout_bytes_per_second(self) -> float:
        """Per chip, one direction: what a collective across domains reaches through the
        chip's NIC share (GPU) or DCN share (TPU), beside ``scaleout_bytes_per_second``.

        Raises:
            MissingFigureError: the chip has no scale-out figure at all."""
        return self._figure("achievable_scaleout_bytes_per_second")

    @property
    def usable_hbm_bytes(self) -> float:
        """HBM the model's tensors can hold: the capacity less what the runtime, collective
        buffers and fragmentation take (a named assumption, see ``source``)."""
        return self._figure("usable_hbm_bytes")

    def achievable_fraction(self, figure: str) -> float:
        """Achievable over datasheet for ``figure``: ``"achievable_flops:<dtype>"`` or one of
        :data:`ACHIEVABLE_FIELDS` (for ``usable_hbm_bytes``: over ``hbm_bytes``).

            >>> round(get("A100").achievable_fraction("achievable_flops:bf16"), 3)
            0.869
        """
        if not isinstance(figure, str):
            raise TypeError(f"figure must be a str, got {type(figure).__name__}")
        key = figure.strip()
        if key.startswith("achievable_flops:"):
            dt = dtypes.check(key.split(":", 1)[1])
            return self.achievable_flops(dt) / self.peak_flops(dt)
        value = self._figure(key)
        datasheet = {"usable_hbm_bytes": "hbm_bytes"}.get(key, key.replace("achievable_", ""))
        base = getattr(self, datasheet)
        return float(value) / float(base)

    def achievable_is_assumption(self, figure: str) -> bool:
        """True where ``figure`` (as :meth:`achievable_fraction` takes it) has no published
        measurement behind it for this chip and is a named assumption (its source says which)."""
        if not isinstance(figure, str):
            raise TypeError(f"figure must be a str, got {type(figure).__name__}")
        key = figure.strip()
        if key.startswith("achievable_flops:"):
            self.peak_flops(dtypes.check(key.split(":", 1)[1]))
        return self._achieved(key)[2]

    def source(self, field_name: str) -> str:
        """Where the number in ``field_name`` comes from (or why it is None).

        ``field_name`` is a numeric field (``"hbm_bytes"``, ``"watts"``, ...), ``"peak_flops"``
        (the bf16 peak), ``"peak_flops:<dtype>"`` or ``"sparse_peak_flops:<dtype>"``.

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
        if key.startswith("sparse_peak_flops:"):
            self.peak_flops(dtypes.check(key.split(":", 1)[1]), sparse=True)
        if key.startswith("achievable_flops:"):
            self.peak_flops(dtypes.check(key.split(":", 1)[1]))
        for name, _, text, _ in self._achievable:
            if name == key:
                return text
        for name, text in self._sources:
            if name == key:
                return text
        allowed = list(NUMERIC_FIELDS) + list(TOPOLOGY_FIELDS) + list(ACHIEVABLE_FIELDS) + [
            "torus", "peak_flops", *(f"peak_flops:{d}" for d in self.dtypes),
            *(f"sparse_peak_flops:{d}" for d in self.sparse_dtypes),
            *(f"achievable_flops:{d}" for d in self.dtypes)]
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
            *[(f"peak {d}", f"{v / 1e12:,.1f} T{'OP' if d.startswith('int') else 'FLOP'}/s",
               self.source(f"peak_flops:{d}")) for d, v in self._peaks],
            *[(f"achievable {d}", f"{self.achievable_flops(dtypes.check(d)) / 1e12:,.1f} T"
               f"{'OP' if d.startswith('int') else 'FLOP'}/s "
               f"({self.achievable_fraction('achievable_flops:' + d):.0%} of peak)",
               self.source(f"achievable_flops:{d}")) for d, _ in self._peaks],
            *[(f"2:4 sparse peak {d}", f"{v / 1e12:,.1f} T{'OP' if d.startswith('int') else 'FLOP'}/s"
               " (sparse, not dense)", self.source(f"sparse_peak_flops:{d}"))
              for d, v in self._sparse_peaks],
            ("memory", self.hbm_label, self.source("hbm_bytes")),
            ("memory bandwidth", _fmt(self.hbm_bytes_per_second, 1e9, "GB/s"),
             self.source("hbm_bytes_per_second")),
            ("achievable memory bandwidth", _fmt(self.achievable_hbm_bytes_per_second, 1e9, "GB/s"),
             self.source("achievable_hbm_bytes_per_second")),
            ("bf16 ridge", f"{self.ridge_flops_per_byte('bf16'):,.0f} FLOPs/byte", ""),
            ("interconnect", _fmt(self.interconnect_bytes_per_second, 1e9, "GB/s bidi"),
             self.source("interconnect_bytes_per_second")),
            ("power", _fmt(self.watts, 1, "W") + ("" if self.tdp_range_watts is None else
             f" (sources range {self.tdp_range_watts[0]:g}-{self.tdp_range_watts[1]:g} W)"),
             self.source("watts")),
            ("price", _fmt(self.usd_per_hour, 1, "$/chip-hour", digits=2), self.source("usd_per_hour")),
            ("matrix units", f"{self.matrix_units}; {self.matrix_unit_shape}".strip("; "), ""),
            ("scale-up link", _fmt(self.link_bytes_per_second, 1e9, "GB/s one way")
             + ("" if self.links_per_chip is None else f" x {self.links_per_chip}"),
             self.source("link_bytes_per_second")),
            ("scale-up domain", _fmt(self.scaleup_domain_chips, 1, "chips"),
             self.source("scaleup_domain_chips")),
            ("scale-out per chip", _fmt(self.scaleout_bytes_per_second, 1e9, "GB/s one way", digits=2),
             self.source("scaleout_bytes_per_second")),
            ("SparseCores", "present, count unpublished" if self.sparsecores_per_chip is None
             and self.has_sparsecores else _fmt(self.sparsecores_per_chip, 1, "per chip"),
             self.source("sparsecores_per_chip")),
        ]
        return _html.table(rows, header=("what", "value", "source"), caption=self.name,
                           small_last=True)


def _fmt(value: float | None, scale: float, unit: str, digits: int = 0) -> str:
    return "no published figure" if value is None else f"{value / scale:,.{digits}f} {unit}"


# Built once on first use, so `import accelkit.chips` costs no file I/O and `get` is a dict lookup.
_CATALOG: tuple[Chip, ...] | None = None
_BY_ALIAS: dict[str, Chip] = {}


def _load() -> tuple[Chip, ...]:
    global _CATALOG
    if _CATALOG is None:
        text = resources.files("accelkit").joinpath("data/chips.json").read_text(encoding="utf-8")
        data = json.loads(text)
        chips = tuple(Chip(**chip_fields(entry, data["achievable_defaults"]))
                      for entry in data["chips"])
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


@dataclass(frozen=True)
class PeakRow:
    """One chip's published peaks for the formats of a :func:`peak_table`.

    ``flops_per_second[i]`` is the peak for ``dtypes[i]`` (int8 and int4: OP/s), or ``None``
    where the chip publishes none. ``sparse`` says whether they are 2:4 structured-sparsity
    peaks (only a matrix with two zeros in every four weights reaches them) or dense ones; a
    table holds one kind only, never both.
    """

    chip: str
    kind: str
    dtypes: tuple[str, ...]
    flops_per_second: tuple[float | None, ...]
    sparse: bool

    def peak(self, dtype: str) -> float | None:
        """The peak for ``dtype`` (``None`` if unpublished). ValueError for a format not in
        the table's ``dtypes``."""
        name = _validate.choice("dtype", dtype, self.dtypes)
        return self.flops_per_second[self.dtypes.index(name)]


def peak_table(dtypes: tuple[str, ...] = ("bf16", "fp8", "int8", "fp4"), *,
               sparse: bool = False) -> tuple[PeakRow, ...]:
    """Every catalog chip's peak per format, dense by default, in catalog order.

    With ``sparse=True`` the rows hold 2:4 structured-sparsity peaks instead, ``None`` on
    chips that publish none (every TPU): a sparse and a dense peak never share a table.

        >>> rows = peak_table(("bf16", "fp8"))
        >>> h100 = next(r for r in rows if r.chip == "NVIDIA H100 (SXM)")
        >>> h100.peak("fp8") / 1e12, next(r for r in peak_table(("fp8",), sparse=True)
        ...                               if r.chip == h100.chip).peak("fp8") / 1e12
        (1979.0, 3958.0)

    Raises:
        TypeError: ``dtypes`` is not a tuple or list of str; ``sparse`` is not a bool.
        ValueError: an empty or repeated format, or one no chip publishes a peak for
            (one of :data:`accelkit.dtypes.PEAK_DTYPES` is needed).
    """
    if isinstance(dtypes, str) or not isinstance(dtypes, (tuple, list)):
        raise TypeError(f"dtypes must be a tuple of format names, got "
                        f"{type(dtypes).__name__} {dtypes!r}")
    names_ = tuple(_dtypes.check(d, "dtypes", allowed=_dtypes.PEAK_DTYPES) for d in dtypes)
    if not names_ or len(set(names_)) != len(names_):
        raise ValueError(f"dtypes must name one or more distinct formats, got {dtypes!r}")
    if not isinstance(sparse, bool):
        raise TypeError(f"sparse must be True or False, got {type(sparse).__name__} {sparse!r}")
    rows = []
    for chip in all():
        have = chip.peaks(sparse)
        rows.append(PeakRow(chip=chip.name, kind=chip.kind, dtypes=names_,
                            flops_per_second=tuple(have.get(d) for d in names_), sparse=sparse))
    return tuple(rows)
