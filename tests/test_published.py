"""validation/: the shared published-run figures, the knob search and the runs' reported totals
(the step-level comparisons themselves are in tests/test_parallel.py, tests/test_mfu.py and the
validation table, tests/test_validation.py)."""

from __future__ import annotations

import pytest

import accelkit as ak
from accelkit.parallel import Layout, train_step
from validation import published, totals


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


def test_choices_that_cannot_apply_are_skipped_and_bad_degrees_are_not() -> None:
    """A micro-batch that does not divide the replica and interleaving without a pipeline are
    skipped by name; a published degree the model refuses (tp not dividing the heads) is an
    error in the run's figures, raised rather than skipped."""
    step = published.fastest_fitting_step("llama-3-8b", "H100", {"dp": 2, "tp": 4}, 16 * 8192,
                                          (8192, 3 * 8192), (1, 2), ("full",))
    assert step.layout.microbatch_tokens == 8192 and step.layout.interleave == 1
    with pytest.raises(ValueError, match="tp must divide"):
        published.fastest_fitting_step("llama-3-8b", "H100", {"dp": 1, "tp": 3}, 8192, (8192,),
                                       (1,), ("full",))


def test_no_fitting_choice_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="fits"):
        published.fastest_fitting_step("llama-3.1-405b", "H100", {"dp": 1}, 8192, (8192,), (1,),
                                       ("none",))


def test_a_megatron_step_is_the_row_at_its_published_degrees() -> None:
    row = published.MEGATRON_SC21[3]  # 18.4B: tp 8, 256 GPUs
    r = published.megatron_step(row)
    lay = r.step.layout
    assert (lay.dp, lay.tp, lay.pp, lay.recompute) == (32, 8, 1, "full")
    assert r.published_tflops_per_chip == 135 and r.published_mfu == pytest.approx(135 / 312)
    assert r.flops_ratio == pytest.approx(published.megatron_paper_flops(row)
                                          / r.step.model_flops_per_step)
    assert set(published.SOURCES) == {"Megatron", "PaLM", "Llama 3", "MaxText"}


# -- whole runs' reported totals (lesson 07 section 7) ----------------------------------------------

def test_compare_published_uses_the_most_direct_reported_unit() -> None:
    by_name = {r.name: totals.compare_published(r) for r in totals.PUBLISHED_RUNS}
    llama = by_name["Llama 3.1 405B on 16k H100"]
    params = ak.models.get("llama-3.1-405b").params
    hours = 6 * params * 15.6e12 / (989e12 * 0.40) / 3600  # chip-hours, compute only
    assert llama.unit == "million chip-hours"
    assert llama.ours == pytest.approx(hours / 1e6) and llama.reported == pytest.approx(30.84)
    assert llama.ratio == pytest.approx(30.84e6 / hours)
    gpt3 = by_name["GPT-3 175B"]
    assert gpt3.unit == "FLOPs" and gpt3.reported == 3.14e23
    assert gpt3.ours == pytest.approx(6 * ak.models.get("gpt-3-175b").params * 300e9)
    book = totals.compare_published(0)
    assert book.unit == "days" and book.reported == 44.0 and book.ours == pytest.approx(45, abs=1)
    assert book == by_name[totals.PUBLISHED_RUNS[0].name]
    for run in totals.PUBLISHED_RUNS:
        assert run.inputs_source and run.reported_source and run.note


@pytest.mark.parametrize("run, error", [(99, ValueError), (-1, ValueError),
                                        ("GPT-3 175B", TypeError), (True, TypeError)])
def test_bad_runs_are_refused_by_name(run, error) -> None:
    with pytest.raises(error, match="run"):
        totals.compare_published(run)


def test_the_package_keeps_no_published_runs() -> None:
    """The evidence left the package: no accelkit.published, no runs in accelkit.training."""
    import importlib.util

    assert importlib.util.find_spec("accelkit.published") is None
    for name in ("PUBLISHED_RUNS", "compare_published", "PublishedRun", "INFINIBAND_BYTES_PER_SECOND"):
        assert not hasattr(ak.training, name)
