"""Lesson 08's widgets, driven without a kernel: move a control, read what is shown."""

from __future__ import annotations

import numpy as np
import pytest

from accelkit import inference, scenarios
from accelkit.widgets._base import chip_label
from accelkit.widgets import (batch_latency_explorer, inference_quiz, kv_cache_explorer,
                              prefill_decode_explorer, serving_cost_explorer)


def test_prefill_decode_explorer_shows_the_library_results():
    w = prefill_decode_explorer()
    p, d = w.view.result
    n = w.view.extras["n_chips"]
    assert n == scenarios.replica_chips("llama-3-8b", "H100", headroom=1.5)
    assert p == inference.prefill("llama-3-8b", "H100", n, 1, 2048)
    assert d == inference.decode_step("llama-3-8b", "H100", n, 1, 2048)
    assert f"{p.seconds * 1e3:,.1f} ms" in w.html.value and p.bound == "compute"
    w.controls["batch"].value = 256
    p2, d2 = w.view.result
    assert d2.batch == 256 and d2.tokens_per_second > 40 * d.tokens_per_second
    assert w.image.value and w.renders == 2


def test_kv_cache_explorer_follows_context_and_format():
    w = kv_cache_explorer()
    d = w.view.result
    assert d == inference.decode_step("llama-3-70b", "H100", 8, 32, 8192)
    assert w.view.extras["max_batch"] == inference.max_batch("llama-3-70b", "H100", 8, 8192)
    assert "320 KiB" in w.html.value  # 2 x 80 layers x 8 KV heads x 128 x 2 bytes
    w.controls["kv_dtype"].value = "int8"
    assert w.view.result.kv_cache_bytes == pytest.approx(d.kv_cache_bytes / 2)
    w.controls["context"].value = 131072
    w.controls["batch"].value = 512
    assert not w.view.result.fits and "NOT fit" in str(w.view.figure.axes[0].get_title())


def test_batch_latency_explorer_marks_the_best_batch_and_turning_point():
    w = batch_latency_explorer()
    best = w.view.result
    assert best == inference.best_batch("llama-3-70b", "TPU v5e", 16, 2048, 0.030)
    assert f"batch {best.batch:,}" in w.html.value
    assert w.view.extras["matmul_compute_bound_batch"] == pytest.approx(
        inference.compute_bound_batch("llama-3-70b", "TPU v5e", 16, 2048, kinds=("matmul",)))
    sweep = w.view.extras["sweep"]
    ms = sweep.seconds[0] * 1e3
    assert np.all(np.diff(ms) >= 0) and np.all(np.diff(sweep.tokens_per_second[0]) > 0)
    w.controls["target_ms"].value = 100
    assert w.view.result.batch >= best.batch
    w.controls["target_ms"].value = 5  # below the weight-loading floor: explained, not raised
    assert w.view.result is None and "even batch 1" in w.html.value
    w.controls["weights"].value = "int8"
    assert w.view.extras["matmul_compute_bound_batch"] < 200  # half the bf16 batch


def test_batch_latency_explorer_at_5_ms_speaks_of_the_target_not_the_parameter():
    """Issue 24: at 5 ms the row showed the library's message for API users, naming the
    parameter max_seconds_per_token. The learner set a slider: the row names the target and
    batch 1's own time per token (decode_step's), and what would help."""
    w = batch_latency_explorer()
    w.controls["target_ms"].value = 5
    one = inference.decode_step("llama-3-70b", "TPU v5e", 16, 1, 2048)
    text = w.html.value
    assert w.view.result is None and "max_seconds_per_token" not in text
    assert (f"none: even batch 1 takes {one.seconds * 1e3:,.2f} ms per token, more than the 5 ms "
            "target (add chips or use int8 weights)") in text
    w.controls["weights"].value = "int8"  # still above 5 ms; int8 is no longer the way out
    one = inference.decode_step("llama-3-70b", "TPU v5e", 16, 1, 2048, weight_dtype="int8",
                                kv_dtype="int8")
    assert f"takes {one.seconds * 1e3:,.2f} ms per token" in w.html.value
    assert "int8 weights)" not in w.html.value and "max_seconds_per_token" not in w.html.value
    w.controls["n_chips"].value = 1  # 70B does not fit on one v5e: that is the reason given
    assert "none: the weights alone do not fit" in w.html.value
    assert "even batch 1" not in w.html.value


def test_batch_latency_explorer_shows_the_exact_largest_fitting_batch_on_its_curve():
    """The table once said 'under the target: 199' beside 'fits: 181' (a
    sampled grid) and drew the best point past the end of the solid curve. Every number shown is
    now the library's exact value, and the solid curve ends at that exact batch."""
    w = batch_latency_explorer()
    limit = inference.max_batch("llama-3-70b", "TPU v5e", 16, 2048)
    best = w.view.result
    assert w.view.extras["max_batch"] == limit and best.batch <= limit
    assert f"largest batch that fits</td><td style='text-align:right'><b>{limit:,}</b>" in w.html.value
    assert inference.decode_step("llama-3-70b", "TPU v5e", 16, limit, 2048).fits
    assert not inference.decode_step("llama-3-70b", "TPU v5e", 16, limit + 1, 2048).fits
    ax = w.view.figure.axes[0]
    lat, lat_no = ax.lines[0], ax.lines[1]
    assert lat.get_xdata()[-1] == limit and lat_no.get_xdata()[0] == limit  # the parts join
    x, y = ax.lines[3].get_data()  # the best-batch dot (lines[2] is the target), on the curve
    drawn = dict(zip(lat.get_xdata(), lat.get_ydata()))
    assert x[0] == best.batch and y[0] == pytest.approx(drawn[best.batch])
    for context in (0, 32768):  # context 0 (one token of cache) and a cache-bound case
        w.controls["context"].value = context
        limit = inference.max_batch("llama-3-70b", "TPU v5e", 16, context)
        assert w.view.extras["max_batch"] == limit
        assert w.view.result is None or w.view.result.batch <= limit


def test_serving_cost_explorer_prices_each_chip_and_price_source():
    w = serving_cost_explorer()
    curve = w.view.result["NVIDIA H100 (SXM)"]
    n = scenarios.replica_chips("llama-3-70b", "H100", headroom=1.5)
    sweep = inference.decode_sweep("llama-3-70b", ["H100"], curve.batches, n, 2048)
    assert curve.n_chips == n and curve.usd_per_hour == 10.8
    assert curve.usd_per_million_tokens == pytest.approx(sweep.usd_per_million_tokens[0])
    w.controls["price"].value = "lowest"
    cheaper = w.view.result["NVIDIA H100 (SXM)"]
    assert cheaper.usd_per_hour == 3.99
    assert cheaper.usd_per_million_tokens[0] == pytest.approx(
        curve.usd_per_million_tokens[0] * 3.99 / 10.8)
    assert "$3.99/h" in w.html.value


# The chips of lesson 08 cell 19, whose lines print "batch 199 $0.940/M" for 16 v5e.
CELL_19_CHIPS = ("TPU v5e", "TPU v6e", "H100", "B200")


def test_serving_cost_explorer_ends_each_curve_at_the_lessons_largest_batch():
    """Issue 24: the widget said "batch 181: $0.975/M" for 16 v5e (the last batch of its
    sampling grid that fit) where cell 19 prints the exact "batch 199, $0.940/M". Each curve
    now ends at inference.max_batch, and its row and its last point are decode_step's there."""
    from accelkit import chips

    w = serving_cost_explorer()
    ax = w.view.figure.axes[0]
    for chip in CELL_19_CHIPS:
        name = chips.get(chip).name
        n = scenarios.replica_chips("llama-3-70b", chip, headroom=1.5)
        limit = inference.max_batch("llama-3-70b", chip, n, 2048)
        full = inference.decode_step("llama-3-70b", chip, n, context_tokens=2048, batch=limit)
        curve = w.view.result[name]
        assert curve.max_batch == curve.batches[-1] == limit
        assert curve.usd_per_million_tokens_at_max_batch == pytest.approx(
            full.usd_per_million_tokens, rel=1e-12)
        # the row, as cell 19 rounds it (its f-string: batch {full.batch} ${...:5.3f}/M)
        assert (f"batch {full.batch:,}: ${full.usd_per_million_tokens:,.3f}</b>"
                in w.html.value), name
        (line,) = [ln for ln in ax.lines if ln.get_label() == chip_label(name, family=False)]
        assert line.get_xdata()[-1] == limit
        assert line.get_ydata()[-1] == curve.usd_per_million_tokens_at_max_batch
    # 16 v5e (issue 24 quoted $0.940; since issue 21 the 16 chips are the 4x4 slice they are
    # bought as, whose all-reduces take fewer hops than a 16-chip line: $0.923)
    assert "batch 199: $0.923" in w.html.value
    # and the x axis ends past the longest line, not at a grid's last batch
    longest = max(c.max_batch for c in w.view.result.values())
    assert longest < ax.get_xlim()[1] < 2 * longest


def _label_boxes(w):
    """(label box, the display point of its line's end) per chip shown, in points."""
    ax = w.view.figure.axes[0]
    w.view.figure.draw_without_rendering()
    shown = {}
    for text in ax.texts:
        if text.get_visible():
            (name,) = [k for k in w.view.result if chip_label(k, family=False) == text.get_text()]
            curve = w.view.result[name]
            end = ax.transData.transform((curve.max_batch,
                                          curve.usd_per_million_tokens_at_max_batch))
            shown[name] = (text.get_window_extent(), end)
    assert set(shown) == set(w.view.result)  # a label for every line, none for a line not shown
    return ax.get_window_extent(), shown


@pytest.mark.parametrize("model", ["llama-3-8b", "llama-2-13b", "llama-3-70b"])
def test_serving_cost_labels_sit_at_their_lines_ends_apart_and_inside_the_axes(model):
    """Issue 24: the labels sat at the axes' right edge (the lines end at different batches)
    and were pushed up 1.5x each, so they floated off their lines and out of the axes. Now
    each sits just right of its own line's end, in the axes, clear of every other label; a
    label is moved up or down (in log-y display space) only as far as a crowd of labels
    around one end needs (three at one end: about a label's height each way), and a label
    with no neighbour sits at its line's height."""
    w = serving_cost_explorer(model)
    for context in w.controls["context"].options:
        for basis in ("list", "lowest"):
            with w.holding():
                w.controls["context"].value = context
            w.controls["price"].value = basis
            axes, shown = _label_boxes(w)
            boxes = [box for box, _ in shown.values()]
            for name, (box, (x, y)) in shown.items():
                where = (model, context, basis, name)
                assert axes.x0 <= box.x0 and box.x1 <= axes.x1, where
                assert axes.y0 <= box.y0 and box.y1 <= axes.y1, where
                assert 0 < box.x0 - x < 6, where  # a few points right of the end
                assert abs((box.y0 + box.y1) / 2 - y) <= 1.5 * box.height, where
                alone = not any(box.x0 < other.x1 + 3 and other.x0 < box.x1 + 3
                                for other in boxes if other is not box)
                if alone and axes.y0 + box.height < y < axes.y1 - box.height:
                    assert (box.y0 + box.y1) / 2 == pytest.approx(y, abs=0.05), where
            for i, a in enumerate(boxes):
                for b in boxes[i + 1:]:
                    assert not a.overlaps(b), (model, context, basis)


def test_inference_quiz_feedback():
    q = inference_quiz()
    q.select(q.position(0))  # written first: cheaper FLOPs
    right, message = q.check()
    assert not right and "memory" in message
    q.select(q.correct)
    assert q.check()[0]


@pytest.mark.parametrize("factory", [prefill_decode_explorer, kv_cache_explorer,
                                     batch_latency_explorer, serving_cost_explorer])
def test_every_widget_has_a_picture_and_no_error_at_defaults(factory):
    w = factory()
    assert w.image.value and "⚠" not in w.html.value


def test_worked_problem_hides_then_computes_its_answer():
    from accelkit.widgets import inference_worked_problem

    w = inference_worked_problem()
    assert not w.revealed and w.answer_html.value == ""
    text = w.reveal()
    limit = inference.max_batch("llama-3-70b", "H100", 8, 4096)
    full = inference.decode_step("llama-3-70b", "H100", 8, limit, 4096)
    assert f"<b>{limit}</b>" in text and f"${full.usd_per_million_tokens:.2f}" in text
    assert w.revealed and w.answer_html.value == text


def test_serving_cost_explorer_shows_each_prices_basis_and_leaves_spot_out():
    w = serving_cost_explorer()
    # 16 L4s would need tensor parallelism over PCIe, which is not modelled: the row says why
    assert "16 x NVIDIA L4" in w.html.value and "no NVLink" in w.html.value
    # each shown price says what it covers
    assert "(TPU slice as billed)" in w.html.value and "(incl. host VM)" in w.html.value
    assert "(TPU slice as billed)" in w.html.value
    w.controls["price"].value = "lowest"
    # a spot chip-hour is not an on-demand one: "lowest" keeps v6e at its on-demand $2.70
    assert w.view.result["TPU v6e (Trillium)"].usd_per_hour == 2.7
    assert "H100 (SXM) at $3.99/h (incl. host VM)" in w.html.value


def test_kv_cache_explorer_labels_capacity_units():
    w = kv_cache_explorer()
    assert "80 GiB = 85.9 GB (source: '80 GB', a binary size)" in w.html.value


def test_serving_load_explorer_draws_the_librarys_load_curves():
    """Every curve is accelkit.serving.load_curve's, at the loads the slider offers; the table
    is the chosen point's; moving a control only chooses what to draw."""
    from accelkit import serving
    from accelkit.widgets import serving_load_explorer

    w = serving_load_explorer()
    curves = w.view.extras["curves"]
    assert len(curves) == 9
    w.controls["prompt"].value = 4000
    w.controls["schedule"].value = "static batching"
    w.controls["load"].value = 7
    curve = w.view.result
    assert curve is curves[("static batching", 4000)]
    top = serving.simulate("llama-3-8b", "H100", arrival_rate=float("inf"), requests=1000,
                           prompt_tokens=4000, output_tokens=250).completed_per_second
    again = serving.load_curve("llama-3-8b", "H100", prompt_tokens=4000, output_tokens=250,
                               requests=1000, rates=list(curve.rates), scheduler="static")
    assert np.allclose(again.ttft_p99, curve.ttft_p99) and curve.rates[-1] == pytest.approx(1.5 * top)
    assert f"{curve.ttft_p99[7] * 1e3:,.0f} ms" in w.view.text
    assert f"{curve.rates[7]:,.2f} requests/s" in w.view.text
    renders = w.renders
    w.controls["load"].value = 2
    assert w.renders == renders + 1 and w.view.result is curve
