"""accelkit.published: the shared published-run figures and the knob search (the comparisons
themselves are in tests/test_parallel.py and tests/test_mfu.py)."""

from __future__ import annotations

import pytest

from accelkit import published
from accelkit.parallel import train_step, Layout


def test_megatron_rows_build_models_of_the_published_size() -> None:
    # arXiv:2104.04473 Table 1 rounds the parameter counts; our count from the shape is within 4%.
    assert len(published.MEGATRON_SC21) == 10
    for row in published.MEGATRON_SC21:
        assert published.megatron_gpt(row).params == pytest.approx(row.params_billion * 1e9, rel=0.04)
        assert row.gpus % (row.tp * row.pp) == 0


def test_maxtext_scales_match_their_names() -> None:
    for scale, cores, tp, _, mfu in published.MAXTEXT_V5P:
        assert published.maxtext_model(scale).params == pytest.approx(scale * 1e9, rel=0.05)
        assert (cores // 2) % tp == 0 and 0 < mfu < 1


def test_fastest_fitting_step_is_the_fastest_of_the_fitting_choices() -> None:
    degrees = {"dp": 2, "tp": 4}
    best = published.fastest_fitting_step("llama-3-8b", "H100", degrees, 16 * 8192,
                                          (8192, 16384), (1,), ("none", "full"))
    for mb in (8192, 16384):
        for rc in ("none", "full"):
            step = train_step("llama-3-8b", "H100",
                              Layout(dp=2, tp=4, microbatch_tokens=mb, recompute=rc), 16 * 8192)
            if step.fits:
                assert best.seconds <= step.seconds


def test_no_fitting_choice_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="fits"):
        published.fastest_fitting_step("llama-3.1-405b", "H100", {"dp": 1}, 8192, (8192,), (1,),
                                       ("none",))
