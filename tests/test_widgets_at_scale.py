"""Lesson 11's widgets, driven without a kernel: every number they show is accelkit's."""

import pytest

import accelkit as ak
from accelkit import collectives, parallel, training
from accelkit.widgets import (all_to_all_explorer, at_scale_quiz, at_scale_worked_problem,
                              scaleup_domain_explorer)


def test_the_all_to_all_explorer_draws_the_librarys_times_for_every_array():
    w = all_to_all_explorer()
    for size in w.controls["array"].options:
        w.controls["array"].value = size[1]
        table = w.view.result.table
        axis = table["TPU v5p: one wrapped torus axis"]
        h100 = table["H100: NVLink node, then NICs"]
        assert axis[8] == collectives.all_to_all("v5p", array_bytes=size[1], over=8)
        assert h100[64] == collectives.all_to_all("H100", array_bytes=size[1], over=64)
        assert table["TPU v5p: a cube of 3 axes"][4096] == collectives.all_to_all(
            "v5p", array_bytes=size[1], over=(16, 16, 16))
        # the lesson's point, as drawn: flat on one wrapped axis, falling on the switch and the cube
        assert axis[16].bandwidth_seconds == pytest.approx(axis[4].bandwidth_seconds, rel=0.02)
        assert h100[8].seconds < h100[2].seconds and h100[4096].seconds < h100[16].seconds
        assert table["TPU v5p: a cube of 3 axes"][4096].seconds < \
            table["TPU v5p: a cube of 3 axes"][8].seconds
        for line, (label, results) in zip(w.view.figure.axes[0].lines, table.items()):
            assert list(line.get_xdata()) == list(results), label
            assert list(line.get_ydata()) == [r.seconds * 1e3 for r in results.values()], label
        assert f"{axis[16].seconds * 1e3:,.3g} ms over 16" in w.html.value


def test_the_domain_explorer_sets_each_models_state_against_each_domain():
    w = scaleup_domain_explorer()
    for model in ("deepseek-v3", "llama-3-8b", "llama-3.1-405b"):
        w.controls["model"].value = model
        needs, domains = w.view.result.needs, w.view.result.domains
        assert {"TPU v5p", "NVIDIA H100 (SXM)", ak.chips.get("GB200").name} <= set(needs)
        for chip, need in needs.items():
            assert need == training.estimate(model=model, tokens=1e12, chip=chip,
                                             n_chips=1).min_chips_to_fit
            assert domains[chip] == ak.chips.get(chip).scaleup_domain_chips
            verdict = "fits in one domain" if need <= domains[chip] else "spans domains"
            assert f"needs {need:,}; " in w.html.value and verdict in w.html.value
    w.controls["model"].value = "deepseek-v3"
    assert "spans domains" in w.html.value and "fits in one domain" in w.html.value
    gb200 = ak.chips.get("GB200").name  # 72 GPUs hold what an 8-GPU node cannot
    assert w.view.result.needs[gb200] <= 72 < w.view.result.needs["NVIDIA H100 (SXM)"]


def test_the_quiz_marks_the_flat_ring_right():
    q = at_scale_quiz()
    q.select(q.position(1))
    right, message = q.check()
    assert right and "V/8" in message
    q.select(q.position(0))
    assert q.check()[0] is False


def test_the_worked_problem_answers_from_the_library():
    text = at_scale_worked_problem().reveal()
    need = training.estimate(model="deepseek-v3", tokens=1e12, chip="GB200", n_chips=1).min_chips_to_fit
    assert need <= ak.chips.get("GB200").scaleup_domain_chips
    assert f"{need} GB200s (a rack holds 72: it fits)" in text
    moe = parallel.dp_critical_tokens_per_chip("deepseek-v3", "H100", 1024)
    dense = parallel.dp_critical_tokens_per_chip("llama-3-70b", "H100", 1024)
    assert f"{moe:,.0f} against {dense:,.0f}" in text and f"{moe / dense:.1f}×" in text
    rack = collectives.all_to_all("GB200", array_bytes=1e9, over=72)
    assert f"{rack.seconds * 1e6:.0f} µs inside one rack" in text


def test_the_goodput_explorer_draws_the_librarys_goodput_and_spares():
    from accelkit.widgets import goodput_explorer

    w = goodput_explorer()
    rate = ak.goodput.llama3_failures_per_chip_hour()
    for key in ("", "gpu_hot_spares", "tpu_ocs_reroute"):
        w.controls["recovery"].value = key
        spare = ak.goodput.RECOVERY[key].spare_fraction if key else 0.0
        results = w.view.result.results
        expected = ak.goodput.goodput(chips=16384, failures_per_chip_hour=rate, checkpoint_seconds=60,
                                      restart_seconds=600, spare_fraction=spare)
        assert results[16384] == expected
        line, spared = w.view.figure.axes[0].lines[:2]
        assert list(line.get_ydata()) == [r.goodput for r in results.values()]
        assert list(spared.get_ydata()) == [r.useful_fraction for r in results.values()]
        assert f"goodput {expected.goodput:.1%}; useful {expected.useful_fraction:.1%}" in w.html.value
    # an hour's restart at 131,072 chips (an interruption every 21 minutes) is refused by the
    # library: the widget says why instead of drawing a point
    w.controls["restart"].value = 3600
    refused = w.view.result.results[131072]
    assert isinstance(refused, str) and "too frequent" in refused and refused in w.html.value
    assert w.view.figure.axes[0].lines[0].get_ydata()[-1] != w.view.figure.axes[0].lines[0].get_ydata()[-1]
