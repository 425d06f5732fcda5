"""Lesson 07's layout explorer, driven without a kernel: every number it shows is accelkit.parallel's."""

import pytest

import accelkit as ak
from accelkit import parallel
from accelkit.parallel import Layout
from accelkit.widgets import layout_explorer


def test_default_is_pure_fsdp_70b_on_the_v5p_pod_and_shows_the_library_step():
    w = layout_explorer()
    step = w.view.result
    expected = parallel.train_step("llama-3-70b", "v5p", Layout(fsdp=8960), 8960 * 448)
    assert step == expected
    html = w.html.value
    assert f"{step.mfu:.1%}" in html and f"{parallel.hardware_flops_utilization(step):.1%}" in html
    assert f"{step.memory_bytes_per_chip / 1e9:,.1f} GB" in html
    crit = parallel.critical_tokens_per_chip("llama-3-70b", "v5p", step.layout)
    assert f"{crit:,.0f}" in html
    for c in step.collectives:           # per-collective breakdown with its network
        assert f"<td>{c.name}</td>" in html and f"<td>{c.network}</td>" in html
        assert f"{c.seconds:.3g}" in html


def test_every_degree_and_policy_reaches_the_layout():
    w = layout_explorer()
    w.controls["tp"].value = 2
    assert w.view.result.layout == Layout(fsdp=4480, tp=2)
    assert w.view.result.mfu > 0.8
    w.controls["rest"].value = "dp"
    w.controls["pp"].value = 8
    w.controls["recompute"].value = "full"
    w.controls["microbatch"].value = 256
    layout = Layout(dp=560, tp=2, pp=8, microbatch_tokens=256, recompute="full")
    assert w.view.result == parallel.train_step("llama-3-70b", "v5p", layout, 8960 * 448)
    hfu = parallel.hardware_flops_utilization(w.view.result)
    assert hfu == pytest.approx(w.view.result.mfu * 4 / 3)
    w.controls["per_chip"].value = 2048
    assert w.view.result.batch_tokens == 8960 * 2048


def test_best_mode_shows_best_layouts_first_choice():
    w = layout_explorer()
    w.controls["chip"].value = ak.chips.get("H100").name
    w.controls["n_chips"].value = 1024
    w.controls["per_chip"].value = 4096
    w.controls["mode"].value = "best"
    best = parallel.best_layouts("llama-3-70b", "H100", 1024, 1024 * 4096, top=1,
                                 whole_sequences=False)[0]
    assert w.view.result == best
    w.controls["split"].value = False
    assert w.view.result == parallel.best_layouts("llama-3-70b", "H100", 1024, 1024 * 4096,
                                                  top=1, whole_sequences=True)[0]


def test_moe_expert_parallelism_shows_its_all_to_all():
    w = layout_explorer()
    w.controls["model"].value = "mixtral-8x7b"
    w.controls["chip"].value = ak.chips.get("H100").name
    w.controls["n_chips"].value = 64
    w.controls["per_chip"].value = 4096
    w.controls["ep"].value = 8
    step = w.view.result
    assert step.layout == Layout(fsdp=8, ep=8)
    assert "ep" in step.collective_seconds and "<td>all_to_all</td>" in w.html.value


def test_bad_combinations_explain_themselves():
    w = layout_explorer()
    w.controls["tp"].value = 64
    w.controls["pp"].value = 16
    w.controls["ep"].value = 16            # 16,384 does not divide 8,960; ep on a dense model
    assert w.view.result is None and "must divide" in w.html.value
    w.controls["ep"].value = 1
    w.controls["pp"].value = 1
    w.controls["tp"].value = 1
    w.controls["ep"].value = 2             # expert parallelism on a dense model
    assert w.view.result is None and "ep must be 1" in w.html.value


def test_a_layout_that_does_not_fit_shows_the_memory_it_needs():
    w = layout_explorer()
    w.controls["model"].value = "llama-3.1-405b"
    w.controls["chip"].value = ak.chips.get("H100").name
    w.controls["n_chips"].value = 64
    w.controls["rest"].value = "dp"
    step = w.view.result
    assert not step.fits and "does NOT fit" in w.html.value
    assert f"{step.memory_bytes_per_chip / 1e9:,.1f} GB" in w.html.value
