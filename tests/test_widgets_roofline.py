"""Lesson 05's widgets, driven without a kernel: move a control, check that what is shown is the
library's own answer."""

from __future__ import annotations

import pytest

import accelkit as ak
from accelkit.widgets import (batch_intensity, ridge_points, roofline_explorer, roofline_quiz,
                              roofline_worked_problem)
from accelkit.widgets._base import si


def test_explorer_default_is_a_decode_step_matmul_on_two_chips():
    w = roofline_explorer()
    assert w.image.value
    v5e, h100 = w.view.result
    assert v5e == ak.roofline.matmul("TPU v5e", M=64, N=8192, K=8192)
    assert h100 == ak.roofline.matmul("H100", M=64, N=8192, K=8192)
    assert v5e.bound == "memory" and "<b>memory</b>" in w.html.value


def test_explorer_batch_moves_the_bound():
    w = roofline_explorer()
    w.controls["B"].value = 1024
    (v5e, _) = w.view.result
    assert v5e == ak.roofline.matmul("TPU v5e", M=1024, N=8192, K=8192)
    assert v5e.bound == "compute" and "<b>compute</b>" in w.html.value
    assert f"{v5e.arithmetic_intensity:,.1f} FLOPs/byte" in w.html.value


def test_explorer_each_operation_matches_the_library():
    w = roofline_explorer(chip_names=("TPU v5e",))
    w.controls["operation"].value = "matmul"
    w.controls["M"].value = 256
    assert w.view.result[0] == ak.roofline.matmul("TPU v5e", M=256, N=8192, K=8192)
    w.controls["operation"].value = "elementwise add"
    assert w.view.result[0] == ak.roofline.elementwise("TPU v5e", n_elements=256 * 8192)
    w.controls["operation"].value = "decode attention"
    w.controls["context"].value = 32768
    ops = ak.models.get("llama-3-8b").operations(batch=64, phase="decode", context_tokens=32768)
    attention = next(op for op in ops if op.kind == "attention")
    expected = ak.roofline.estimate("TPU v5e", flops=attention.flops_each,
                                    bytes=attention.bytes_each)
    assert w.view.result[0] == expected and expected.bound == "memory"


def test_explorer_chip_selection_and_missing_precision():
    w = roofline_explorer()
    w.controls["chips"].value = ("TPU v2", "NVIDIA H100 (SXM)", "TPU v6e (Trillium)")
    assert [r.chip for r in w.view.result] == ["TPU v2", "NVIDIA H100 (SXM)",
                                               "TPU v6e (Trillium)"]
    w.controls["dtype"].value = "fp8"
    assert [r.chip for r in w.view.result] == ["NVIDIA H100 (SXM)", "TPU v6e (Trillium)"]
    assert "not drawn: TPU v2" in w.html.value
    w.controls["chips"].value = ()
    assert w.view.result is None and "Pick one or more chips" in w.html.value


def test_batch_intensity_shows_critical_batch_and_intensity_near_batch():
    w = batch_intensity()
    assert w.view.result["critical_batch"] == pytest.approx(ak.roofline.critical_batch("v5e"))
    assert f"{ak.roofline.critical_batch('v5e'):,.0f}" in w.html.value
    crossing = ak.roofline.crossing_batch("v5e", N=8192, K=8192)  # every byte counted, not weights alone
    assert w.view.result["crossing_batch"] == crossing and f"B = {crossing:,.1f}" in w.html.value
    dashed = w.view.figure.axes[0].lines[-1]
    assert list(dashed.get_xdata()) == [crossing, crossing]  # drawn where the curve meets the ridge
    w.controls["chip"].value = "NVIDIA H100 (SXM)"
    assert w.view.result["critical_batch"] == pytest.approx(ak.roofline.critical_batch("H100"))
    w.controls["D"].value = 16384
    w.controls["F"].value = 16384
    shown = w.view.result["intensities"]
    assert shown[8] == ak.roofline.matmul("H100", M=8, N=16384, K=16384).arithmetic_intensity
    assert shown[8] == pytest.approx(8, rel=0.01)


def test_ridge_points_follow_precision():
    w = ridge_points()
    assert w.view.result == {c.name: c.ridge_flops_per_byte() for c in ak.chips.all()}
    w.controls["dtype"].value = "fp8"
    assert set(w.view.result) == {c.name for c in ak.chips.all() if "fp8" in c.dtypes}
    assert w.view.result["NVIDIA H100 (SXM)"] == ak.chips.get("H100").ridge_flops_per_byte("fp8")
    assert f"{ak.chips.get('H100').ridge_flops_per_byte('fp8'):,.0f}" in w.html.value
    assert "TPU v5e (2023)</td><td style='width:28em'><i style='color:#757575'>no published " \
        "dense fp8 peak" in w.html.value


def test_worked_problem_hidden_until_asked():
    w = roofline_worked_problem()
    ridge = ak.chips.get("v5e").ridge_flops_per_byte()
    assert f"{ridge:,.0f} FLOPs/byte" not in w.question and not w.answer_html.value
    text = w.reveal()
    assert f"{ridge:,.0f} FLOPs/byte" in text
    at_8 = ak.roofline.matmul("v5e", M=8, N=14336, K=4096)
    at_512 = ak.roofline.matmul("v5e", M=512, N=14336, K=4096)
    assert si(at_8.seconds, "s") in text and "memory-bound" in text
    assert at_8.bound == "memory" and at_512.bound == "compute" and "compute-bound" in text


def test_quiz():
    q = roofline_quiz()
    q.select(q.correct)
    assert q.check()[0]
    q.select(q.position(0))
    assert not q.check()[0]


def test_crowded_roofline_labels_are_nudged_apart_in_order():
    from accelkit.widgets.roofline import _spread_labels

    ys = [100.0, 101.0, 5.0, 100.5, 1000.0]
    placed = _spread_labels(ys)
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    assert [placed[i] for i in order] == sorted(placed)  # the order of the peaks is kept
    for low, high in zip(order, order[1:]):
        assert placed[high] >= 2.0 * placed[low] - 1e-9  # no two labels overlap on the log axis
    assert placed[2] == 5.0  # the lowest stays at its line


def test_roofline_with_every_chip_labels_each_line_once_in_its_kinds_colour():
    from matplotlib.colors import to_hex

    from accelkit import chips
    from accelkit.widgets import roofline_explorer
    from accelkit.widgets._base import _SHADES

    w = roofline_explorer()
    w.controls["chips"].value = tuple(c.name for c in chips.all())
    shown = [t for t in w.view.figure.axes[0].texts if t.get_visible()]
    names = {c.name.replace("NVIDIA ", "").split(" (")[0]: c for c in chips.all()
             if "bf16" in c.dtypes}
    assert sorted(t.get_text() for t in shown) == sorted(names)
    for text in shown:
        assert to_hex(text.get_color()) in _SHADES[names[text.get_text()].kind]


def test_explorer_draws_and_tabulates_the_best_measured_beside_the_datasheet():
    """Issue 21 item 1: both figures wherever a peak is shown. Each chip's roof has a dotted twin
    at the catalog's achievable matmul FLOP/s and HBM bandwidth, and the table gives both peaks,
    marking an assumed one (no published measurement) with *."""
    from matplotlib.collections import LineCollection

    import accelkit as ak

    w = roofline_explorer(chip_names=("TPU v5e", "H100"))
    tops = set()
    for collection in w.view.figure.axes[0].collections:
        if isinstance(collection, LineCollection):
            tops |= {round(float(seg[:, 1].max()), 3) for seg in collection.get_segments()}
    for name in ("TPU v5e", "H100"):
        chip = ak.chips.get(name)
        assert round(chip.peak_flops("bf16") / 1e12, 3) in tops
        assert round(chip.achievable_flops("bf16") / 1e12, 3) in tops
    h100 = ak.chips.get("H100")
    assert (f"{h100.peak_flops('bf16') / 1e12:,.0f} / {h100.achievable_flops('bf16') / 1e12:,.0f} T/s"
            in w.view.text)
    v5e = ak.chips.get("TPU v5e")
    assert v5e.achievable_is_assumption("achievable_flops:bf16")
    assert f"{v5e.achievable_flops('bf16') / 1e12:,.0f}* T/s" in w.view.text


def test_ridge_points_show_the_measured_ridge_beside_the_datasheet_one():
    """Issue 21 item 1: each bar's datasheet ridge has the achievable one beside it (best measured
    matmul FLOP/s over best measured HBM bandwidth), starred where either figure is assumed."""
    w = ridge_points()
    h100 = ak.chips.get("H100")
    measured = h100.achievable_flops("bf16") / h100.achievable_hbm_bytes_per_second
    assert f"{h100.ridge_flops_per_byte('bf16'):,.0f} " in w.view.text
    assert f"(best measured {measured:,.0f})" in w.view.text  # both H100 figures measured
    v5p = ak.chips.get("TPU v5p")
    assumed = v5p.achievable_flops("bf16") / v5p.achievable_hbm_bytes_per_second
    assert f"(best measured {assumed:,.0f}*)" in w.view.text
