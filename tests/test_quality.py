"""accelkit.quality: the sourced table of what low precision costs in model quality."""

from __future__ import annotations

import dataclasses

import pytest

import accelkit as ak
from accelkit import quality


def test_every_recipe_is_sourced_and_well_formed() -> None:
    rows = quality.recipes()
    assert len(rows) == len(quality.names()) == len(set(quality.names()))
    for r in rows:
        assert r.phase in quality.PHASES and r.verdict in quality.VERDICTS
        assert "arXiv:" in r.source or "mlcommons" in r.source, r.name
        assert r.quality and r.condition and r.tensors and r.scaling, r.name
        for d in r.needs:
            assert d in ak.dtypes.PEAK_DTYPES
        assert (r.peak_dtype == "") == (not r.needs) or r.peak_dtype in r.needs
    with pytest.raises(dataclasses.FrozenInstanceError):
        rows[0].verdict = "matches"  # type: ignore[misc]


def test_the_issue_s_recipes_and_known_failures_are_there() -> None:
    for name in ("fp8-tensor-delayed", "mxfp8", "nvfp4", "int8-aqt", "fp8-block"):
        assert quality.get(name).phase == "training"
    hurts = {r.name for r in quality.recipes(verdict="hurts")}
    # quantizing activations naively and the KV cache's keys per token are known to hurt
    assert hurts == {"int8-activations-naive", "kv-int4-per-token-keys"}
    assert "0.25%" in quality.get("fp8-block").quality  # DeepSeek-V3's reported gap
    assert "6.7B" in quality.get("int8-activations-naive").quality  # LLM.int8()'s threshold
    inference = quality.recipes(phase="inference")
    assert {r.tensors.split()[0] for r in inference} >= {"weights", "activations", "keys"}


def test_for_chip_follows_the_catalog_peaks() -> None:
    assert [r.name for r in quality.for_chip("H100")] == ["fp8-tensor-delayed", "fp8-block"]
    blackwell = {r.name for r in quality.for_chip("GB200")}
    assert {"mxfp8", "nvfp4"} <= blackwell
    assert [r.name for r in quality.for_chip("v5e")] == ["int8-aqt"]
    assert quality.for_chip("V100") == ()  # no fp8 / int8 peak above its 16-bit one
    assert "nvfp4" not in {r.name for r in quality.for_chip("MI355X")}  # NVIDIA's format


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="name must be one of"):
        quality.get("fp3")
    with pytest.raises(ValueError, match="phase must be one of"):
        quality.recipes(phase="serving")
    with pytest.raises(ValueError, match="verdict must be one of"):
        quality.recipes(verdict="great")
    with pytest.raises(ValueError):
        quality.for_chip("H1000")
