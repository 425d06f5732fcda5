"""The chip catalog: every chip present, units right, every number sourced, ridge points as published.

Published figures checked here: ridge points computed by hand (dense peak over HBM bandwidth)
from the vendors' datasheet figures, each of which is cited next to its number in
``accelkit/data/chips.json``, and the scaling book,
jax-ml/scaling-book roofline.md@0819a7d8: "TPU v5e ... 1.97e14 / 8.2e11 = 240 FLOPs/byte" and
"H100 ... 9.89e14 / 3.35e12 = 295".
"""

from __future__ import annotations

import dataclasses
import math
import re

import pytest

import accelkit as ak
from accelkit import chips

ALL_NAMES = (
    "TPU v2", "TPU v3", "TPU v4", "TPU v5e", "TPU v5p", "TPU v6e (Trillium)", "TPU7x (Ironwood)",
    "NVIDIA V100 (SXM2)", "NVIDIA A100 (SXM 80GB)", "NVIDIA H100 (SXM)", "NVIDIA H800 (SXM)",
    "NVIDIA H200 (SXM)", "NVIDIA B200 (HGX)", "NVIDIA GB200 (NVL72)", "NVIDIA L4", "NVIDIA T4",
    "AMD MI300X", "AMD MI355X",
)

# Datasheet dense peak / datasheet HBM bandwidth, worked by hand and rounded: chip -> (bf16, fp8,
# int8) ridge in FLOPs/byte; None where the vendor publishes no dense peak in that precision.
RIDGES = {
    "TPU v2": (64, None, None),
    "TPU v3": (137, None, None),
    "TPU v4": (229, None, 229),
    "TPU v5e": (240, None, 480),
    "TPU v5p": (166, 166, 332),
    "TPU v6e": (560, 560, 1120),
    "TPU7x": (313, 625, None),
    "V100": (139, None, None),
    "A100": (153, None, 306),
    "H100": (295, 591, 591),
    "H200": (206, 412, 412),
    "B200": (281, 562, 562),
    "L4": (403, 808, 808),
    "T4": (203, None, 406),
    # H800: the H100's peaks and memory; MI300X 1307.4 / 2614.9 / 2600 over 5.3 TB/s; MI355X
    # 2500 / 5000 / 5000 over 8 TB/s (ml-engineering accelerator tables, AMD's specifications).
    "H800": (295, 591, 591),
    "MI300X": (247, 493, 491),
    "MI355X": (312.5, 625, 625),
}


def test_all_eighteen_chips_in_catalog_order() -> None:
    assert tuple(c.name for c in ak.chips.all()) == ALL_NAMES
    assert isinstance(ak.chips.all(), tuple)
    assert {c.kind for c in ak.chips.all()} == {"tpu", "gpu"}


def test_capacity_is_gib_and_bandwidth_is_gb() -> None:
    # Vendor "GB" of capacity is GiB (a 16 GB HBM stack is 16 * 2**30 bytes); bandwidth GB/s is
    # 10^9 bytes/s (the convention stated in accelkit/chips.py).
    assert ak.chips.get("TPU v5e").hbm_bytes == 16 * 2**30
    assert ak.chips.get("H100").hbm_bytes == 80 * 2**30
    assert ak.chips.get("H100").hbm_bytes_per_second == 3.35e12
    assert ak.chips.get("v5e").hbm_bytes_per_second == 819e9
    assert ak.chips.get("TPU7x").hbm_bytes == 192 * 2**30


def test_every_capacity_keeps_the_sources_number_and_unit() -> None:
    """Cloud TPU docs write "16 GB" (v5e), "32 GB" (v6e) but "95 GiB" (v5p), "192 GiB" (7x);
    NVIDIA writes "80 GB" (H100), "141 GB" (H200): the catalog keeps each as written, and
    hbm_bytes is that number times 2**30 (the GCP catalog lists the 80 GB H100 as 81920 MiB)."""
    written = {"v5e": "16 GB", "v6e": "32 GB", "v5p": "95 GiB", "TPU7x": "192 GiB",
               "H100": "80 GB", "H200": "141 GB", "B200": "180 GB", "H800": "80 GB",
               "MI300X": "192 GB", "MI355X": "288 GB"}
    for name, text in written.items():
        assert ak.chips.get(name).hbm_published == text
    for chip in ak.chips.all():
        number, unit = chip.hbm_published.split()
        assert unit in ("GB", "GiB") and chip.hbm_bytes == int(float(number) * 2**30), chip.name
    label = ak.chips.get("H100").hbm_label
    assert label.startswith("80 GiB = 85.9 GB") and "'80 GB', a binary size" in label
    assert "binary" not in ak.chips.get("v5p").hbm_label


@pytest.mark.parametrize(
    ("alias", "expected"),
    [
        ("TPU v5e", "TPU v5e"), ("v5e", "TPU v5e"), ("tpu-v5e", "TPU v5e"), ("TPU_V5E", "TPU v5e"),
        (" tpu v5e ", "TPU v5e"), ("A100", "NVIDIA A100 (SXM 80GB)"), ("h100", "NVIDIA H100 (SXM)"),
        ("H200", "NVIDIA H200 (SXM)"), ("B200", "NVIDIA B200 (HGX)"), ("L4", "NVIDIA L4"),
        ("T4", "NVIDIA T4"), ("V100", "NVIDIA V100 (SXM2)"), ("TPU7x", "TPU7x (Ironwood)"),
        ("Ironwood", "TPU7x (Ironwood)"), ("Trillium", "TPU v6e (Trillium)"),
        ("v6e", "TPU v6e (Trillium)"), ("v5p", "TPU v5p"), ("v4", "TPU v4"),
        ("NVIDIA H100 (SXM)", "NVIDIA H100 (SXM)"), ("H800", "NVIDIA H800 (SXM)"),
        ("MI300X", "AMD MI300X"), ("mi300x", "AMD MI300X"), ("AMD Instinct MI300X", "AMD MI300X"),
        ("MI355X", "AMD MI355X"), ("amd-mi355x", "AMD MI355X"),
    ],
)
def test_aliases(alias: str, expected: str) -> None:
    assert ak.chips.get(alias).name == expected


def test_every_canonical_name_finds_itself_and_chip_objects_pass_through() -> None:
    for chip in ak.chips.all():
        assert ak.chips.get(chip.name) is chip
        assert ak.chips.get(chip) is chip


def test_unknown_name_lists_close_matches() -> None:
    with pytest.raises(ValueError, match="unknown chip 'H1000'.*h100"):
        ak.chips.get("H1000")
    with pytest.raises(ValueError, match="Known chips: TPU v2"):
        ak.chips.get("quantum abacus")


@pytest.mark.parametrize("bad", [None, 5, 3.0, ["v5e"], b"v5e"])
def test_non_string_name_is_a_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match="chip must be"):
        ak.chips.get(bad)  # type: ignore[arg-type]


def test_missing_precision_is_an_error_not_zero() -> None:
    with pytest.raises(ValueError, match="TPU v5e has no published dense fp8 peak"):
        ak.chips.get("v5e").peak_flops("fp8")
    with pytest.raises(ValueError, match="no published dense int8 peak"):
        ak.chips.get("V100").peak_flops("int8")
    with pytest.raises(ValueError, match="no published dense fp32 peak"):
        ak.chips.get("v5p").peak_flops("fp32")
    with pytest.raises(ValueError, match="dtype must be one of"):
        ak.chips.get("H100").peak_flops("fp64")


def test_published_peaks() -> None:
    # Vendor datasheets' dense TFLOP/s, as the catalog's sources give them.
    assert ak.chips.get("v5e").peak_flops("bf16") == 197e12
    assert ak.chips.get("v5e").peak_flops("int8") == 393e12
    assert ak.chips.get("H100").peak_flops("fp8") == 1979e12
    assert ak.chips.get("H100").peak_flops() == 989e12
    assert ak.chips.get("TPU7x").peak_flops("fp8") == 4614e12
    # V100/T4 have no bf16: the 16-bit entry is their fp16 figure, and the source says so.
    assert ak.chips.get("V100").peak_flops("bf16") == ak.chips.get("V100").peak_flops("fp16") == 125e12
    assert "no bf16" in ak.chips.get("T4").source("peak_flops:bf16")


def test_dtypes_lists_exactly_the_available_precisions() -> None:
    for chip in ak.chips.all():
        assert chip.dtypes[0] == "bf16"
        for dtype in ak.dtypes.PEAK_DTYPES:
            if dtype in chip.dtypes:
                assert chip.peak_flops(dtype) > 0
            else:
                with pytest.raises(ValueError):
                    chip.peak_flops(dtype)


def test_every_number_has_a_source_and_missing_values_are_none_not_zero() -> None:
    for chip in ak.chips.all():
        for name in chips.NUMERIC_FIELDS:
            value = getattr(chip, name)
            assert value is None or (math.isfinite(value) and value > 0), (chip.name, name, value)
            assert chip.source(name).strip(), (chip.name, name)
        for dtype in chip.dtypes:
            assert chip.source(f"peak_flops:{dtype}").strip()


def test_missing_values_where_no_source_gives_them() -> None:
    for name in ("v5e", "v5p", "v6e", "TPU7x"):
        chip = ak.chips.get(name)
        assert chip.watts is None
        assert "no TDP" in chip.source("watts")
        with pytest.raises(ValueError, match=re.escape(f"{chip.name} has no published watts")):
            chip.require("watts")
    assert ak.chips.get("TPU7x").usd_per_hour is None
    assert ak.chips.get("L4").interconnect_bytes_per_second is None
    assert ak.chips.get("H100").require("watts") == 700


def test_source_of_unknown_field_is_an_error() -> None:
    chip = ak.chips.get("H100")
    assert "C6: chose 819 GB/s" in ak.chips.get("v5e").source("hbm_bytes_per_second")
    assert chip.source("peak_flops") == chip.source("peak_flops:bf16")
    with pytest.raises(ValueError, match="field must be one of"):
        chip.source("colour")
    with pytest.raises(ValueError, match="no published dense fp8"):
        ak.chips.get("A100").source("peak_flops:fp8")


@pytest.mark.parametrize("name", list(RIDGES))
def test_ridge_points_match_the_hand_worked_ratios(name: str) -> None:
    chip = ak.chips.get(name)
    for dtype, published in zip(("bf16", "fp8", "int8"), RIDGES[name]):
        if published is None:
            assert dtype not in chip.dtypes
        else:
            assert chip.ridge_flops_per_byte(dtype) == pytest.approx(published, rel=0.01)


def test_scaling_book_critical_intensities() -> None:
    # jax-ml/scaling-book roofline.md: v5e 1.97e14 / 8.2e11 ≈ 240; H100 ≈ 295 FLOPs/byte.
    assert ak.chips.get("v5e").ridge_flops_per_byte() == pytest.approx(240, rel=0.01)
    assert ak.chips.get("H100").ridge_flops_per_byte("bf16") == pytest.approx(295, rel=0.01)


def test_chip_is_frozen_hashable_and_renders() -> None:
    chip = ak.chips.get("v5e")
    with pytest.raises(dataclasses.FrozenInstanceError):
        chip.watts = 1  # type: ignore[misc]
    assert {chip: 1}[ak.chips.get("tpu v5e")] == 1
    assert "TPU v5e" in repr(chip) and "819 GB/s" in repr(chip)
    page = chip._repr_html_()
    assert page.startswith("<table>") and "C6: chose 819" in page
    assert "no published figure" in page  # watts


def test_price_alternatives_are_sourced() -> None:
    h100 = ak.chips.get("H100")
    assert (3.99, "Lambda on-demand 8x H100 SXM, per GPU") == h100.price_alternatives[-1][:2]
    for chip in ak.chips.all():
        for usd, provider, date, source, list_price, basis, terms, caveat in chip.price_alternatives:
            assert usd > 0 and provider and date and source and isinstance(list_price, bool)
            assert basis in ak.price.BASES and terms in ak.price.TERMS and isinstance(caveat, str)
            # a point that is not on-demand is never counted as a list price
            assert list_price == (terms == "on_demand")
    # The one point the reference marks as a commitment model, not an on-demand list price.
    assert [a[4] for a in ak.chips.get("TPU7x").price_alternatives] == [False]


# ----------------------------------------------------------------------------- topology
# Figures checked against the sources named in chips.json: jax-ml/scaling-book tpus.md@0819a7d8
# (ICI per-link table, host sizes, wraparound rules), gpus.md@1a55377a (NVLink generations,
# 8 x 400 Gbps CX7 NICs per H100 node, node egress 400 GB/s), the Cloud TPU v5e/v5p/v6e/tpu7x
# pages (ICI ports, chips per host, NICs, SparseCores) and NVIDIA/nccl src/graph/tuning.cc.

# chip -> (ICI/NVLink one link one way B/s, links per chip, per-chip scale-up one way B/s)
LINKS = {
    "TPU v3": (1e11, 4, 4e11), "TPU v4": (4.5e10, 6, 2.7e11), "TPU v5e": (4.5e10, 4, 1.8e11),
    "TPU v5p": (9e10, 6, 5.4e11), "TPU v6e": (9e10, 4, 3.6e11), "TPU7x": (1e11, 6, 6e11),
    "V100": (25e9, 6, 150e9), "A100": (25e9, 12, 300e9), "H100": (25e9, 18, 450e9),
    "H200": (25e9, 18, 450e9), "B200": (50e9, 18, 900e9),
    # H800: NVLink cut to 400 GB/s bidirectional = 8 NVLink-4 links x 25 GB/s each way (derived);
    # AMD: Infinity Fabric, 7 links to the 7 peers of an 8-GPU board (ml-engineering network/).
    "H800": (25e9, 8, 200e9), "MI300X": (64e9, 7, 448e9), "MI355X": (76.5e9, 7, 535.5e9),
}


@pytest.mark.parametrize("name", list(LINKS))
def test_link_bandwidths_are_one_direction_per_link(name: str) -> None:
    chip = ak.chips.get(name)
    link, links, total = LINKS[name]
    assert chip.link_bytes_per_second == link
    assert chip.links_per_chip == links
    assert chip.scaleup_bytes_per_second == pytest.approx(total)
    bidi = chip.interconnect_bytes_per_second  # the older field: both directions, all links
    if chip.kind == "gpu":  # NVLink per GPU: 900 GB/s bidirectional = 2 x 450 each way (H100)
        assert bidi == pytest.approx(2 * total)
    elif name in ("TPU v5e", "TPU v5p", "TPU v6e"):
        # Cloud's per-chip bidirectional figure implies ~11% more than the scaling book's links (C8)
        assert bidi / (2 * total) == pytest.approx(1 / 0.9, rel=0.01)
    elif name == "TPU7x":  # derived from Cloud's 1200 GB/s bidi per chip
        assert bidi == pytest.approx(2 * total)


def test_gpu_scale_up_and_scale_out() -> None:
    h100 = ak.chips.get("H100")
    # gpus.md: "each GPU ... 18 * 25 = 450GB/s"; node of 8; 8 x 400 Gbps NICs = 400 GB/s egress.
    assert h100.scaleup_domain_chips == 8 and h100.nics_per_host == 8 and h100.chips_per_host == 8
    assert h100.scaleout_bytes_per_second * h100.nics_per_host == pytest.approx(400e9)
    assert ak.chips.get("B200").scaleup_bytes_per_second == 900e9
    assert "72" in ak.chips.get("B200").source("scaleup_domain_chips")  # GB200 NVL72 recorded
    for name in ("L4", "T4"):
        chip = ak.chips.get(name)
        assert chip.scaleup_domain_chips == 1 and chip.link_bytes_per_second is None
        assert "no NVLink" in chip.source("link_bytes_per_second")


def test_tpu_slices_hosts_and_dcn() -> None:
    v5p, v5e = ak.chips.get("v5p"), ak.chips.get("v5e")
    assert v5p.pod_shape == (16, 20, 28) and math.prod(v5p.pod_shape) == v5p.max_domain_chips == 8960
    assert v5p.max_slice_shape == (16, 16, 24) and v5p.max_slice_chips == 6144
    assert v5e.pod_shape == v5e.max_slice_shape == (16, 16) and v5e.max_slice_chips == 256
    assert v5e.chips_per_host == 8 and v5e.nics_per_host == 2
    # Cloud v5e: 2 x 100 Gbps NICs per host of 8 chips = 3.125e9 B/s per chip.
    assert v5e.scaleout_bytes_per_second == pytest.approx(2 * 100e9 / 8 / 8)
    assert v5p.chips_per_host == 4 and v5p.scaleout_bytes_per_second == pytest.approx(2.5e10 / 4)
    assert ak.chips.get("TPU7x").scaleout_bytes_per_second == pytest.approx(100e9 / 8)
    assert ak.chips.get("v4").hop_latency_seconds == 1e-6


def test_wraparound_rules() -> None:
    v5p, v5e, v4 = ak.chips.get("v5p"), ak.chips.get("v5e"), ak.chips.get("v4")
    # tpus.md: "Any multiple of a full cube (e.g. 4x4x4 or 4x4x8) will have wraparounds";
    # "a 2x2x4 won't have any wraparounds"; "A TPU v5e 8x16 will have a wraparound on the longer axis".
    assert v4.axis_wraps((4, 4, 4)) == (True, True, True)
    assert v5p.axis_wraps((4, 4, 8)) == (True, True, True)
    assert v5p.axis_wraps((2, 2, 4)) == (False, False, False)
    assert v5p.axis_wraps((2, 2, 1)) == (False, False, False)
    assert v5e.axis_wraps((8, 16)) == (False, True)
    assert v5e.axis_wraps((4, 4)) == (False, False)
    assert v5e.axis_wraps((16, 16)) == (True, True)
    with pytest.raises(ValueError, match="no torus"):
        ak.chips.get("H100").axis_wraps((8,))
    with pytest.raises(ValueError, match="shape must be"):
        v5e.axis_wraps((4, 4, 4))


def test_cores_and_sparsecores() -> None:
    # Cloud TPU pages: v5e one TensorCore and no SparseCore; v5p and TPU7x four SparseCores, v6e
    # two; v4 has SparseCores (ISCA 2023) with no count in what was read.
    expected = {"v2": 0, "v3": 0, "v5e": 0, "v5p": 4, "v6e": 2, "TPU7x": 4, "H100": 0}
    for name, count in expected.items():
        assert ak.chips.get(name).sparsecores_per_chip == count, name
    v4 = ak.chips.get("v4")
    assert v4.sparsecores_per_chip is None and v4.has_sparsecores
    assert not ak.chips.get("v5e").has_sparsecores and ak.chips.get("v6e").has_sparsecores
    assert ak.chips.get("v5e").tensorcores_per_chip == 1 and ak.chips.get("v5p").cores_per_chip == 2
    assert ak.chips.get("H100").sms_per_chip == 132 and ak.chips.get("H100").tensorcores_per_chip is None
    assert ak.chips.get("B200").cores_per_chip == 148


def test_every_topology_figure_is_sourced_and_conflicts_keep_their_range() -> None:
    for chip in ak.chips.all():
        for name in chips.TOPOLOGY_FIELDS:
            value = getattr(chip, name)
            assert value is None or (math.isfinite(value) and value >= 0), (chip.name, name)
            assert chip.source(name).strip(), (chip.name, name)
        if chip.kind == "tpu":
            assert chip.source("torus").strip() and chip.wrap_rule in chips.WRAP_RULES
    for name in ("v5e", "v5p", "v6e"):  # scaling book vs Cloud-implied per-link bandwidth (C8)
        text = ak.chips.get(name).source("link_bytes_per_second")
        assert "CONFLICT, range" in text and "(used" in text


# ----------------------------------------------------------------------------- the GPUs a buyer also prices
def test_h800_is_an_h100_with_nvlink_cut_to_400_gb_per_s() -> None:
    h100, h800 = ak.chips.get("H100"), ak.chips.get("H800")
    for dtype in h100.dtypes:
        assert h800.peak_flops(dtype) == h100.peak_flops(dtype)
    assert h800.hbm_bytes == h100.hbm_bytes and h800.hbm_bytes_per_second == h100.hbm_bytes_per_second
    # 400 GB/s bidirectional (philisun / tumgag), against the H100's 900.
    assert h800.interconnect_bytes_per_second == 400e9 == 2 * h800.scaleup_bytes_per_second
    assert h800.scaleup_bytes_per_second / h100.scaleup_bytes_per_second == pytest.approx(4 / 9)
    assert h800.scaleup_domain_chips == 8 and h800.scaleout_bytes_per_second == 50e9
    assert "derived" in h800.source("links_per_chip")
    assert h800.usd_per_hour is None and "no on-demand list price" in h800.source("usd_per_hour")
    with pytest.raises(ak.chips.MissingFigureError, match="usd_per_hour"):
        h800.require("usd_per_hour")


def test_amd_entries_carry_their_published_figures() -> None:
    mi300x, mi355x = ak.chips.get("MI300X"), ak.chips.get("MI355X")
    # ml-engineering 'For AMD @ BF16': 2100 MHz x 256 FMAs x 2 x 1216 Matrix Cores = 1307.4 TFLOPS.
    assert mi300x.peak_flops("bf16") == pytest.approx(2.1e9 * 256 * 2 * 1216, rel=1e-4)
    assert mi300x.clock_hz == 2.1e9 and mi300x.sms_per_chip * 4 == 1216
    assert mi300x.hbm_bytes_per_second == 5.3e12 and mi300x.watts == 750
    assert mi355x.peak_flops("bf16") == 2.5e15 and mi355x.watts == 1400
    assert mi355x.hbm_bytes_per_second == 8e12 and mi355x.sms_per_chip * 4 == 1024
    # AMD's formula gives 2516.6 for the published 2.5 PFLOPS: within AMD's own rounding.
    assert 2.4e9 * 512 * 2 * 1024 == pytest.approx(mi355x.peak_flops("bf16"), rel=0.01)
    # Infinity Fabric all-to-all: 7 links x 64 (76.5) GB/s each way; the duplex total twice that.
    assert mi300x.interconnect_bytes_per_second == 896e9 and mi355x.interconnect_bytes_per_second == 1071e9
    assert mi300x.scaleup_domain_chips == mi355x.scaleup_domain_chips == 8
    assert mi300x.usd_per_hour == 1.85 and mi300x.price_basis == "unstated"
    assert mi355x.usd_per_hour is None
    for chip in (mi300x, mi355x):  # no RCCL latency was read: NCCL's stands in, and says so
        assert "stand-in" in chip.source("collective_latency_seconds")
        assert chip.vendor == "AMD" and chip.kind == "gpu" and chip.sparsecores_per_chip == 0


def test_fp4_fp6_and_int4_peaks_where_published() -> None:
    b200, mi355x = ak.chips.get("B200"), ak.chips.get("MI355X")
    assert b200.peak_flops("fp4") == 9000e12 and b200.peak_flops("fp6") == 4500e12
    assert mi355x.peak_flops("fp4") == mi355x.peak_flops("fp6") == 10.1e15
    # MI355X: fp4 is 4x bf16, fp8 2x (dense): the doubling per halving of width.
    assert mi355x.peak_flops("fp4") / mi355x.peak_flops("bf16") == pytest.approx(4.04)
    assert ak.chips.get("v5e").peak_flops("int4") == 788e12  # JAX tpu_info: 197 / 394 / 788
    assert ak.chips.get("T4").peak_flops("int4") == 260e12
    with pytest.raises(ak.chips.MissingFigureError, match=r"H100 .*no published dense fp4 peak \(dtype='fp4'\)"):
        ak.chips.get("H100").peak_flops("fp4")
    with pytest.raises(ak.chips.MissingFigureError, match="no published dense int4"):
        ak.chips.get("MI300X").peak_flops("int4")
    with pytest.raises(ValueError, match=r"dtype must be one of .*'fp4'.*got 'fp3'"):
        ak.chips.get("B200").peak_flops("fp3")
    with pytest.raises(ValueError, match="dtype must be one of"):
        ak.chips.get("B200").peak_flops("tf32")  # a format no catalog chip has a peak for


def test_sparse_peaks_are_kept_apart_from_dense_ones() -> None:
    # Vendors' 2:4 structured-sparsity figures are twice the dense ones: H100 1978.9 bf16 and
    # 3958 fp8 (glennklockwood, lzwjava); A100 624 bf16 / 1248 int8 (NVIDIA's A100 table via
    # ml-engineering); MI355X 10.1 PF fp8, 20.1 PF fp4 (ml-engineering note 22, tomshardware).
    expected = {"H100": {"bf16": 1978.9e12, "fp16": 1978.9e12, "fp8": 3958e12},
                "A100": {"bf16": 624e12, "fp16": 624e12, "int8": 1248e12},
                "MI355X": {"fp16": 5e15, "fp8": 10.1e15, "fp4": 20.1e15},
                "L4": {"bf16": 242e12, "fp16": 242e12, "fp8": 485e12, "int8": 485e12},
                "B200": {"fp8": 9000e12}}
    for name, peaks in expected.items():
        chip = ak.chips.get(name)
        assert chip.sparse_dtypes == tuple(d for d in ak.dtypes.PEAK_DTYPES if d in peaks)
        for dtype, value in peaks.items():
            assert chip.peak_flops(dtype, sparse=True) == value
            assert chip.peak_flops(dtype, sparse=False) != value  # never the dense figure
            assert chip.peak_flops(dtype, sparse=True) / chip.peak_flops(dtype) == pytest.approx(2, rel=0.02)
            assert chip.source(f"sparse_peak_flops:{dtype}").strip()
            assert chip.is_sparse_peak(dtype, value) and not chip.is_sparse_peak(dtype, chip.peak_flops(dtype))
    for chip in ak.chips.all():
        if chip.kind == "tpu":
            assert chip.sparse_dtypes == ()


def test_peaks_lists_each_kind_apart_and_agrees_with_peak_flops() -> None:
    for chip in ak.chips.all():
        dense, sparse = chip.peaks(), chip.peaks(sparse=True)
        assert tuple(dense) == chip.dtypes and tuple(sparse) == chip.sparse_dtypes
        assert all(chip.peak_flops(d) == v for d, v in dense.items())
        assert all(chip.peak_flops(d, sparse=True) == v for d, v in sparse.items())
        dense.clear()  # a new dict: the chip keeps its figures
        assert chip.peaks() and chip.peaks() != dense
    with pytest.raises(TypeError, match="sparse must be True or False"):
        ak.chips.get("H100").peaks(sparse=1)  # type: ignore[arg-type]


def test_sparse_errors_name_the_argument() -> None:
    with pytest.raises(ak.chips.MissingFigureError, match=r"MI300X has no published 2:4 .*fp8 peak \(dtype='fp8', sparse=True\)"):
        ak.chips.get("MI300X").peak_flops("fp8", sparse=True)
    with pytest.raises(ak.chips.MissingFigureError, match="sparse=True") as info:
        ak.chips.get("v5e").peak_flops("bf16", sparse=True)
    assert info.value.figure == "sparse_peak_flops:bf16" and info.value.chip == "TPU v5e"
    with pytest.raises(TypeError, match="sparse must be True or False"):
        ak.chips.get("H100").peak_flops("bf16", sparse="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sparse=True"):
        ak.chips.get("H100").source("sparse_peak_flops:int8")
    assert "2:4 sparse peak fp8" in ak.chips.get("H100")._repr_html_()


def test_power_ranges_where_sources_disagree() -> None:
    v3 = ak.chips.get("v3")
    # Google's measured maximum 262 W against the 450 W TDP a secondary source gives: 1.7x.
    assert v3.tdp_range_watts == (262.0, 450.0) and v3.watts == 450
    assert v3.tdp_range_watts[1] / v3.tdp_range_watts[0] == pytest.approx(1.72, rel=0.01)
    assert ak.chips.get("T4").tdp_range_watts == (70.0, 75.0)
    assert ak.chips.get("H800").tdp_range_watts == (550.0, 700.0)
    assert ak.chips.get("H100").tdp_range_watts is None
    for chip in ak.chips.all():
        if chip.tdp_range_watts is not None:
            low, high = chip.tdp_range_watts
            assert low < high and low <= chip.watts <= high
            assert "CONFLICT, range" in chip.source("watts") and "used" in chip.source("watts")
    assert "sources range 262-450 W" in v3._repr_html_()


def test_gb200_nvl72_is_a_72_gpu_domain_of_b200s() -> None:
    # gpus.md: "GB200NVL72 support larger NVLink domains of 72 GPUs"; the catalog's B200 is the
    # 8-GPU HGX part and collectives model the rack with scaleup_domain=72 at 900 GB/s per GPU.
    b200 = ak.chips.get("B200")
    assert b200.scaleup_domain_chips == 8 and "72" in b200.source("scaleup_domain_chips")
    rack = ak.collectives.all_reduce("B200", array_bytes=1e9, over=72, scaleup_domain=72)
    node = ak.collectives.all_reduce("B200", array_bytes=1e9, over=72)
    assert rack.domains == 1 and rack.network == "NVLink" and node.domains == 9
    assert rack.seconds < node.seconds


def test_peak_table_matches_peak_flops_and_keeps_sparse_apart() -> None:
    """peak_table is peak_flops laid out per chip: dense and sparse never share a table."""
    dense = ak.chips.peak_table(("bf16", "fp8", "int8", "fp4"))
    sparse = ak.chips.peak_table(("bf16", "fp8", "int8", "fp4"), sparse=True)
    assert [r.chip for r in dense] == [c.name for c in ak.chips.all()] == [r.chip for r in sparse]
    for row, srow in zip(dense, sparse):
        chip = ak.chips.get(row.chip)
        assert not row.sparse and srow.sparse
        for d in row.dtypes:
            want = chip.peak_flops(d) if d in chip.dtypes else None
            assert row.peak(d) == want, (row.chip, d)
            swant = chip.peak_flops(d, sparse=True) if d in chip.sparse_dtypes else None
            assert srow.peak(d) == swant, (row.chip, d)
            if swant is not None:
                assert chip.is_sparse_peak(d, swant) and swant != row.peak(d)
    h100 = next(r for r in dense if r.chip == "NVIDIA H100 (SXM)")
    assert h100.peak("fp8") == 1979e12 and h100.peak("fp4") is None  # NVIDIA H100 datasheet
    assert all(r.peak(d) is None for r in sparse if r.kind == "tpu" for d in r.dtypes)


def test_peak_table_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="dtypes"):
        ak.chips.peak_table(("bf16", "fp64"))
    with pytest.raises(ValueError, match="dtypes"):
        ak.chips.peak_table(())
    with pytest.raises(ValueError, match="distinct"):
        ak.chips.peak_table(("bf16", "bf16"))
    with pytest.raises(TypeError, match="dtypes"):
        ak.chips.peak_table("bf16")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sparse"):
        ak.chips.peak_table(sparse=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dtype"):
        ak.chips.peak_table(("bf16",))[0].peak("fp8")


def test_gb200_nvl72_is_a_catalog_chip_with_a_72_gpu_domain() -> None:
    # Issue 25's contract: chips.get("GB200") and its scale-up domain of 72. Figures per GPU:
    # NVIDIA's GB200 NVL72 rack table (13.4 TB HBM3e and 576 TB/s over 72 GPUs; 360 / 720 /
    # 1,440 PFLOPS bf16 / fp8 / fp4 with sparsity, halved for dense) and glennklockwood's
    # GB200-at-1,200 W table (2,500 / 5,000 / 10,000 TFLOPS dense).
    gb = ak.chips.get("GB200")
    assert gb is ak.chips.get("GB200 NVL72") is ak.chips.get("nvl72")
    assert gb.kind == "gpu" and gb.scaleup_domain_chips == 72 and gb.scaleup_domain == 72
    assert ak.chips.get("B200").scaleup_domain == 8  # the HGX part stays the 8-GPU node
    assert gb.hbm_bytes == 186 * 2**30 and gb.hbm_bytes_per_second == 8e12
    assert (gb.peak_flops("bf16"), gb.peak_flops("fp8"), gb.peak_flops("fp4")) == (2.5e15, 5e15, 1e16)
    for d in ("bf16", "fp8", "fp4"):
        assert gb.peak_flops(d, sparse=True) == 2 * gb.peak_flops(d)  # 2:4 sparse is twice dense
        assert not gb.is_sparse_peak(d, gb.peak_flops(d))
    assert gb.scaleup_bytes_per_second == 900e9 and gb.interconnect_bytes_per_second == 1.8e12
    assert gb.watts == 1200 and gb.ridge_flops_per_byte("bf16") == pytest.approx(312.5)
    assert gb.usd_per_hour is None and "whole racks" in gb.source("usd_per_hour")
    with pytest.raises(chips.MissingFigureError, match="usd_per_hour"):
        gb.require("usd_per_hour")
    with pytest.raises(dataclasses.FrozenInstanceError):
        gb.scaleup_domain = 8  # type: ignore[misc]
    for name in (*chips.NUMERIC_FIELDS, *chips.TOPOLOGY_FIELDS, "peak_flops:fp4"):
        assert gb.source(name).strip(), name


def test_gb200_collectives_stay_on_nvlink_up_to_72() -> None:
    # One 72-GPU NVLink domain: an all-reduce over 72 GB200 is one NVLink ring, the same time
    # as the B200 with its domain overridden to 72; over 144 it crosses two racks' NICs.
    rack = ak.collectives.all_reduce("GB200", array_bytes=1e9, over=72)
    assert rack.network == "NVLink" and rack.domains == 1
    same = ak.collectives.all_reduce("B200", array_bytes=1e9, over=72, scaleup_domain=72)
    assert rack.bandwidth_seconds == pytest.approx(same.bandwidth_seconds)
    two = ak.collectives.all_reduce("GB200", array_bytes=1e9, over=144)
    assert two.domains == 2 and "scale-out" in two.network
