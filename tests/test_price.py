"""Price: FLOPs per dollar against hand-worked figures, run and token costs in closed form.

Expected figures: dense bf16 TFLOP/s per $/chip-hour, worked by hand from the vendor peaks and the
catalog prices (each cited next to its number in ``accelkit/data/chips.json``), and the scaling
book's FLOPs-per-dollar figures (jax-ml/scaling-book applied-inference.md: H100 3.3e17, v5p 3.9e17
at its Feb-2025 Google Cloud prices).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import accelkit as ak
from accelkit import price

# Dense bf16 TFLOP/s per $/chip-hour: datasheet peak / catalog price, worked by hand and rounded.
TFLOPS_PER_USD_PER_HOUR = {
    "TPU v2": 41, "TPU v3": 62, "TPU v4": 85, "TPU v5e": 164, "TPU v5p": 109, "TPU v6e": 340,
    "V100": 50, "A100": 112, "H100": 92, "H200": 99, "B200": 336, "L4": 216, "T4": 186,
}


@pytest.mark.parametrize("name", list(TFLOPS_PER_USD_PER_HOUR))
def test_tflops_per_dollar_hour_matches_the_hand_worked_ratios(name: str) -> None:
    per_dollar_hour = price.flops_per_dollar(name) / 3600 / 1e12
    assert per_dollar_hour == pytest.approx(TFLOPS_PER_USD_PER_HOUR[name], rel=0.02)


def test_scaling_book_flops_per_dollar() -> None:
    # The scaling book's FLOPs per $ (Feb-2025 GCP prices), as its later versions correct them
    # (the Feb-2025 text printed FLOPs/s per $/h under that name).
    assert price.flops_per_dollar("H100") == pytest.approx(3.3e17, rel=0.02)
    assert price.flops_per_dollar("v5p") == pytest.approx(3.9e17, rel=0.02)


def test_mfu_and_override_scale_linearly() -> None:
    full = price.flops_per_dollar("H100")
    assert price.flops_per_dollar("H100", mfu=0.4) == pytest.approx(0.4 * full)
    assert price.flops_per_dollar("H100", usd_per_hour=3.99) == pytest.approx(full * 10.8 / 3.99)
    assert price.flops_per_dollar("H100", "fp8") == pytest.approx(2 * full, rel=0.01)


def test_usd_closed_form() -> None:
    assert price.usd("v5e", 3600) == pytest.approx(1.2)
    assert price.usd("v5p", seconds=86400, n_chips=8960) == pytest.approx(4.2 * 24 * 8960)
    assert price.usd("H100", 0) == 0.0


def test_usd_per_million_tokens_closed_form() -> None:
    # 8 H100s at $10.8/h producing 10,000 tokens/s: $86.4/h over 36e6 tokens/h = $2.40 per 1M.
    assert price.usd_per_million_tokens("H100", 10_000, n_chips=8) == pytest.approx(2.40)
    assert price.usd_per_million_tokens("v5e", 1e6 / 3600) == pytest.approx(1.2)


def test_price_source_changes_the_answer() -> None:
    # The same chip at two sourced prices: Google Cloud vs Lambda H100.
    points = price.price_points("H100")
    assert points[0].usd_per_hour == 10.8 and "Google Cloud" in points[0].provider
    lambda_h100 = [p for p in price.alternatives("H100") if "Lambda" in p.provider]
    assert lambda_h100 and lambda_h100[0].usd_per_hour == 3.99 and lambda_h100[0].date == "2026-09-20"
    cheap = price.flops_per_dollar("H100", usd_per_hour=lambda_h100[0].usd_per_hour)
    # At GCP prices a v5e buys more FLOPs per dollar than an H100; at Lambda's, the H100 wins.
    assert price.flops_per_dollar("v5e") > price.flops_per_dollar("H100")
    assert cheap > price.flops_per_dollar("v5e")


def test_alternative_prices_from_the_reference() -> None:
    def prices(name: str) -> set[float]:
        return {p.usd_per_hour for p in price.alternatives(name)}
    assert {10.9791, 3.99} <= prices("H100")
    assert 4.50 in prices("H200")
    assert 0.79 in prices("V100")
    assert price.price_points("A100")[0].usd_per_hour == 2.79
    assert price.price_points("B200")[0].usd_per_hour == 6.69
    # The reference marks the TPU7x point as a commitment model; the field says so, typed.
    assert price.alternatives("TPU7x")[0].list_price is False
    for chip in ak.chips.all():
        for point in price.price_points(chip):
            assert isinstance(point, price.PricePoint) and len(point) == 8
            assert point.usd_per_hour > 0 and point.source and isinstance(point.list_price, bool)
            assert point.basis in price.BASES and point.terms in price.TERMS


def test_every_catalog_price_says_what_it_covers() -> None:
    """GCP's L4, T4 and V100 prices are the GPU SKU alone (skypilot-org/skypilot-catalog's GCP
    GPU SKU rows; the host VM is billed on top), unlike a Lambda instance per GPU or a Cloud TPU
    slice."""
    for chip in ak.chips.all():
        if chip.usd_per_hour is None:
            assert chip.price_basis == ""
            continue
        assert chip.price_basis in price.BASES, chip.name
        assert chip.price_basis == "unstated" or chip.price_basis_source, chip.name
    for name in ("L4", "T4", "V100"):
        point = price.price_points(name)[0]
        assert point.basis == "gpu_only" and "host VM extra" in point.basis_note
    assert price.price_points("A100")[0].basis == "vm_inclusive"
    assert {ak.chips.get(c).price_basis for c in ("v2", "v3", "v4", "v5e", "v5p", "v6e")} == {"tpu_slice"}


def test_v100_price_is_marked_as_the_16gb_skus() -> None:
    """The V100 entry is the 32 GB SXM2 part; every sourced V100 price is the 16 GB SKU's."""
    v100 = ak.chips.get("V100")
    assert v100.hbm_bytes == 32 * 2**30
    for point in price.price_points(v100):
        assert "16 GB SKU" in point.caveat and "16 GB SKU" in point.basis_note


def test_spot_price_is_an_alternative_not_the_lowest_on_demand() -> None:
    """SkyPilot GCP catalog 017e2502, row tpu-v6e-1 us-central1-b: Price 2.7, SpotPrice 0.64833."""
    spot = [p for p in price.alternatives("v6e") if p.terms == "spot"]
    assert [p.usd_per_hour for p in spot] == [0.64833]
    assert spot[0].list_price is False and spot[0].basis == "tpu_slice"
    assert price.lowest("v6e").usd_per_hour == 2.7
    assert price.lowest("v6e", include_spot=True).usd_per_hour == 0.64833
    assert price.lowest("H100").usd_per_hour == 3.99
    assert price.lowest("TPU7x").terms == "3yr_commitment_model"


def test_chip_without_a_list_price_is_a_clear_error() -> None:
    for call in (lambda: price.flops_per_dollar("TPU7x"), lambda: price.usd("Ironwood", 10),
                 lambda: price.usd_per_million_tokens("TPU7x", 100)):
        with pytest.raises(ak.chips.MissingFigureError, match=r"TPU7x \(Ironwood\) has no list price"):
            call()
    assert price.usd("TPU7x", 3600, usd_per_hour=2.0) == pytest.approx(2.0)


@pytest.mark.parametrize("mfu", [0, -0.1, 1.01, float("nan")])
def test_bad_mfu(mfu: float) -> None:
    with pytest.raises(ValueError, match="mfu must be"):
        price.flops_per_dollar("v5e", mfu=mfu)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown chip"):
        price.usd("TPU v99", 1)
    with pytest.raises(ValueError, match="seconds must be"):
        price.usd("v5e", -1)
    with pytest.raises(ValueError, match="n_chips must be"):
        price.usd("v5e", 1, n_chips=0)
    with pytest.raises(ValueError, match="tokens_per_second must be"):
        price.usd_per_million_tokens("v5e", 0)
    with pytest.raises(ValueError, match="usd_per_hour must be"):
        price.usd("v5e", 1, usd_per_hour=-2)
    with pytest.raises(ValueError, match="no published dense fp8 peak"):
        price.flops_per_dollar("v5e", "fp8")


@given(seconds=st.floats(0, 1e9), n=st.integers(1, 10**5))
def test_usd_is_linear(seconds: float, n: int) -> None:
    assert price.usd("H100", seconds, n) == pytest.approx(price.usd("H100", seconds) * n)
