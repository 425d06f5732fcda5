"""Lesson 01's widgets, driven without a kernel: move a control, check what is shown is the
library's own answer."""

from __future__ import annotations

import accelkit as ak
from accelkit.models import by_kind, kind_share
from accelkit.widgets import (all_models_share, where_flops_go, why_matmul_quiz,
                              why_matmul_worked_problem)
from accelkit.widgets._base import si


def test_where_flops_go_follows_model_phase_and_batch():
    w = where_flops_go()
    assert w.image.value and w.renders == 1
    start = w.view.result
    assert start == kind_share(ak.models.get("llama-3-8b").operations())
    w.controls["model"].value = "lstm-lm-large"
    ops = ak.models.get("lstm-lm-large").operations()
    assert w.view.result == kind_share(ops)
    assert w.view.extras["by_kind"] == by_kind(ops)
    recurrent = next(op for op in by_kind(ops) if op.kind == "recurrent-matmul")
    assert "recurrent-matmul" in w.html.value
    assert f"{recurrent.bytes / sum(o.bytes for o in ops):.1%}" in w.html.value
    w.controls["batch"].value = 256
    assert w.view.result == kind_share(ak.models.get("lstm-lm-large").operations(batch=256))


def test_decode_context_moves_work_into_attention():
    w = where_flops_go(model="llama-3-8b", phase="decode", batch=64)
    short = kind_share(w.view.extras["operations"], "attention")
    w.controls["context"].value = 32768
    ops = ak.models.get("llama-3-8b").operations(batch=64, phase="decode", context_tokens=32768)
    assert w.view.extras["operations"] == ops
    assert kind_share(ops, "attention").bytes_fraction > short.bytes_fraction


def test_context_is_ignored_outside_prefill_and_decode():
    w = where_flops_go()
    w.controls["context"].value = 2048  # forward has no KV cache: nothing to refuse
    assert w.view.result == kind_share(ak.models.get("llama-3-8b").operations())


def test_a_phase_the_model_lacks_is_explained_not_raised():
    w = where_flops_go(model="resnet-50")
    w.controls["phase"].value = "decode"
    assert w.view.result is None and "language models only" in w.html.value
    assert w.image.layout.display == "none"


def test_all_models_share_follows_batch():
    w = all_models_share()
    assert set(w.view.result) == set(ak.models.names())
    w.controls["batch"].value = 2048
    dlrm = kind_share(ak.models.get("dlrm-criteo-1tb").operations(batch=2048))
    assert w.view.result["dlrm-criteo-1tb"] == dlrm
    lowest = min(s.bytes_fraction for s in w.view.result.values())
    assert f"{lowest:.1%}" in w.html.value


def test_worked_problem_hides_then_shows_computed_answer():
    w = why_matmul_worked_problem()
    model = ak.models.get("llama-3-8b")
    library = model.flops(batch=1, seq_len=model.seq_len)
    assert si(library, "FLOP") not in w.question and not w.answer_html.value  # hidden until asked
    text = w.reveal()
    assert si(library, "FLOP") in text and w.answer_html.value == text
    assert si(2 * model.params * model.seq_len, "FLOP") in text


def test_quiz_right_answer_and_a_wrong_one():
    q = why_matmul_quiz()
    q.select(q.correct)
    assert q.check()[0]
    q.select(q.position(0))
    right, message = q.check()
    assert not right and "bytes" in message
    recurrent = kind_share(ak.models.get("lstm").operations(), "recurrent-matmul")
    assert f"{recurrent.bytes_fraction:.0%}" in q.options[q.correct]


def test_widget_default_draws_the_lessons_numbers():
    """Lesson 01: "the widget further down starts from this same case, so its bars draw these
    numbers". The lesson's numbers are claim-tested from the library in
    tests/test_lesson_01_claims.py; this checks the widget draws the same library values."""
    model = ak.models.get("llama-3-8b")
    ops = model.operations(batch=1, seq_len=model.seq_len, phase="forward")
    w = where_flops_go()
    assert w.view.result == kind_share(ops)
    drawn = {p.kind: p.flops for p in w.view.extras["by_kind"]}
    assert drawn == {p.kind: p.flops for p in ak.models.by_kind(ops)}
    assert "8,192 tokens" in w.html.value
