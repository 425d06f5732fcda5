"""Every quantitative claim in lessons/01_why_matmul.ipynb, recomputed with the library.

The lesson's markdown states few numbers of its own: the shares it discusses are printed by its
code cells, and the prose points at them ("as printed above"). The numbers it does state (2 FLOPs a
multiply-accumulate, one FLOP for every three numbers an add moves) are read out of the markdown
(tests/prose.py) and compared with the library. The qualitative claims ("nearly all", "a much
smaller share") are checked against thresholds that say what those words mean.

If one of these fails, the lesson's prose no longer matches the code: fix the prose (or the
library), not the test's threshold.
"""

from __future__ import annotations

import pytest

import accelkit as ak
from tests import prose
from accelkit.models import kind_share
from accelkit.models import rule_of_thumb as worked_problem_numbers


def test_matmul_reuses_what_it_reads():
    """'FLOPs grow with the cube of the size, bytes only with the square: each number fetched
    is used in many multiplications. An elementwise add does one FLOP for every three numbers
    it moves.'"""
    small = ak.roofline.matmul("TPU v5e", M=512, N=512, K=512)
    big = ak.roofline.matmul("TPU v5e", M=4096, N=4096, K=4096)
    assert big.flops / small.flops == pytest.approx(8**3)
    assert big.bytes / small.bytes == pytest.approx(8**2)
    prose.check("01", "{}·M·N·K FLOPs", big.flops / 4096**3)
    prose.check("01", "({} FLOPs per multiply-accumulate", big.flops / 4096**3)
    add = ak.roofline.elementwise("TPU v5e", n_elements=4096 * 4096)
    numbers_moved = add.bytes / ak.dtypes.nbytes("bf16")
    prose.check("01", "one FLOP for every {} numbers it moves", numbers_moved / add.flops)
    assert big.arithmetic_intensity / add.arithmetic_intensity > 1000


def test_llama_is_nearly_all_matrix_flops_but_not_bytes():
    """'Nearly all the FLOPs, as printed above, but a much smaller share of the bytes. The rest
    of the bytes belong to elementwise operations and normalizations.'"""
    model = ak.models.get("llama-3-8b")
    ops = model.operations(batch=1, seq_len=model.seq_len, phase="forward")
    share = kind_share(ops)
    assert share.flops_fraction > 0.99
    assert share.bytes_fraction < 0.8
    rest = kind_share(ops, ("elementwise", "normalization")).bytes_fraction
    assert rest > 0.8 * (1 - share.bytes_fraction)


def test_matmul_dominates_flops_in_every_model_but_not_bytes():
    """'"matmul dominates" holds for FLOPs in every model ... It does not hold for bytes.'
    and the quiz: 'Matrix products are at least 99% of the FLOPs of every catalog model
    (forward pass, batch 1).'"""
    shares = [kind_share(m.operations()) for m in ak.models.all()]
    assert min(s.flops_fraction for s in shares) >= 0.99
    assert min(s.bytes_fraction for s in shares) < 0.6


def test_lstm_recurrent_matmul_is_few_flops_most_bytes():
    """'The LSTM's recurrent matmul is a minority of the FLOPs but nearly all of the bytes; it
    re-reads the whole weight matrix every step.'"""
    lstm = ak.models.get("lstm")
    share = kind_share(lstm.operations(), "recurrent-matmul")
    assert share.flops_fraction < 0.5
    assert share.bytes_fraction > 0.9
    step = next(op for op in lstm.operations() if op.kind == "recurrent-matmul")
    assert step.count == lstm.seq_len  # one weight read per time step


def test_recommender_is_embeddings_and_lookups():
    """'DLRM's embedding tables hold almost all its parameters ... At a serving batch the
    lookups and the elementwise work take a large share of the bytes.'"""
    dlrm = ak.models.get("dlrm")
    assert dlrm.embedding_params / dlrm.params > 0.999
    ops = dlrm.operations(batch=2048)
    assert kind_share(ops, "gather").bytes_fraction > 0.2
    assert kind_share(ops).bytes_fraction < 0.5
    assert kind_share(dlrm.operations(batch=1)).bytes_fraction > 0.9  # batch 1: MLP weights


def test_long_context_decode_attention_overtakes_weights():
    """'Long-context decode: attention overtakes the weights' (batch 64, 2,048 vs 32,768
    cached tokens)."""
    llama = ak.models.get("llama-3-8b")
    short = kind_share(llama.operations(batch=64, phase="decode", context_tokens=2048),
                       "attention")
    long = kind_share(llama.operations(batch=64, phase="decode", context_tokens=32768),
                      "attention")
    assert short.flops_fraction < 0.5 < long.flops_fraction
    assert long.bytes_fraction > 0.9 and long.bytes_fraction > short.bytes_fraction


def test_both_families_have_matrix_units_and_more():
    """'An H100's bf16 FLOPs come from its Tensor Cores ... the larger TPUs add SparseCores.'"""
    assert "Tensor Core" in ak.chips.get("H100").matrix_units
    assert "MXU" in ak.chips.get("TPU v5e").matrix_units
    assert "SparseCore" in ak.chips.get("TPU v5p").matrix_units


def test_worked_problem_two_corrections():
    """Worked problem: 2 x params x tokens misses attention (no weights) and over-counts the
    embedding lookup; the library's count is higher at Llama 3 8B's 8,192 tokens."""
    n = worked_problem_numbers("llama-3-8b")
    prose.check("01", "the rule of thumb is {} FLOPs per parameter per token",
                n["rule_of_thumb_flops"] / (n["params"] * n["tokens"]))
    assert n["library_flops"] > n["rule_of_thumb_flops"]
    attention = n["attention_fraction"] * n["library_flops"]
    corrected = n["rule_of_thumb_flops"] - n["embedding_flops_in_rule"] + attention
    assert corrected == pytest.approx(n["library_flops"], rel=0.01)
