"""Achievable beside datasheet (issue 21, item 1): the catalog's measured kernel and collective
figures, each with a source, and the named assumptions where no measurement is published."""

from __future__ import annotations

import pytest

import accelkit as ak
from accelkit import achievable, chips


def test_measured_matmul_ceilings_are_the_published_mamf_figures() -> None:
    a100, h100 = chips.get("A100"), chips.get("H100")
    assert a100.achievable_flops("bf16") == pytest.approx(271.2e12)
    assert h100.achievable_flops("bf16") == pytest.approx(794.5e12)
    assert h100.achievable_flops("fp8") == pytest.approx(1402.6e12)
    assert a100.achievable_fraction("achievable_flops:bf16") == pytest.approx(0.869, abs=1e-3)
    assert h100.achievable_fraction("achievable_flops:fp8") == pytest.approx(0.709, abs=1e-3)
    for c, d in ((a100, "bf16"), (h100, "bf16"), (h100, "fp8")):
        assert not c.achievable_is_assumption(f"achievable_flops:{d}")
        assert "mamf" in c.source(f"achievable_flops:{d}").lower()


def test_every_achievable_figure_is_at_most_its_datasheet_figure_and_sourced() -> None:
    rows = achievable.table()
    assert rows
    for r in rows:
        assert 0 < r.achievable <= r.datasheet * (1 + 1e-12), r
        assert r.source.strip(), r
        # a named assumption says so in its source; a measurement never does
        assert r.assumption == r.source.startswith("ASSUMPTION"), r


def test_unmeasured_figures_are_named_assumptions() -> None:
    # TPU matmuls: measured (trace-timed GEMMs) on v6e and TPU7x, carried to v5p and v4
    v5p, v6e = chips.get("v5p"), chips.get("v6e")
    assert not v6e.achievable_is_assumption("achievable_flops:bf16")
    assert v5p.achievable_is_assumption("achievable_flops:bf16")
    assert v5p.achievable_flops("bf16") == pytest.approx(0.90 * v5p.peak_flops("bf16"))
    assert "ASSUMPTION" in v5p.source("achievable_flops:bf16")
    # a chip with no measurement at all: the datasheet stands in, said so
    l4 = chips.get("L4")
    assert l4.achievable_flops("bf16") == l4.peak_flops("bf16")
    assert l4.achievable_is_assumption("achievable_flops:bf16")
    # H100 int8: the measured bf16 fraction carried to int8, and said so
    h100 = chips.get("H100")
    assert h100.achievable_is_assumption("achievable_flops:int8")
    assert h100.achievable_fraction("achievable_flops:int8") == pytest.approx(
        h100.achievable_fraction("achievable_flops:bf16"))
    assert chips.get("H100").achievable_is_assumption("usable_hbm_bytes")


def test_collective_bus_bandwidth_is_the_nccl_tests_figure() -> None:
    a100, h100 = chips.get("A100"), chips.get("H100")
    assert a100.achievable_scaleup_bytes_per_second == pytest.approx(234.89e9)
    assert h100.achievable_scaleup_bytes_per_second == pytest.approx(367.61e9)
    assert "busbw" in h100.source("achievable_scaleup_bytes_per_second")
    # the v5e ICI fraction is measured; other TPU generations carry it as an assumption
    v5e, v5p = chips.get("v5e"), chips.get("v5p")
    assert v5e.achievable_fraction("achievable_scaleup_bytes_per_second") == pytest.approx(560 / 680)
    assert not v5e.achievable_is_assumption("achievable_scaleup_bytes_per_second")
    assert v5p.achievable_is_assumption("achievable_scaleup_bytes_per_second")


def test_usable_hbm_is_below_capacity() -> None:
    for c in chips.all():
        if c.hbm_bytes is not None:
            assert 0 < c.usable_hbm_bytes < c.hbm_bytes


def test_bad_figures_are_refused() -> None:
    h100 = chips.get("H100")
    with pytest.raises(ValueError, match="figure must be one of"):
        h100.achievable_fraction("achievable_watts")
    with pytest.raises(chips.MissingFigureError):
        chips.get("v5e").achievable_flops("fp8")
    with pytest.raises(chips.MissingFigureError):
        chips.get("L4").achievable_scaleup_bytes_per_second
    with pytest.raises(TypeError):
        achievable.table("H100")
    with pytest.raises(TypeError):
        h100.achievable_is_assumption(3)  # type: ignore[arg-type]


def test_the_chip_card_shows_both_figures() -> None:
    html = ak.chips.get("H100")._repr_html_()
    assert "achievable fp8" in html and "peak fp8" in html and "achievable memory" in html
