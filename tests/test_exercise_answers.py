"""Every exercise check, question by question (issue 24, item 4): the right answer written each
reasonable way is marked correct, and every slip a check names is named when that slip is made.

A table per kind of question, keyed "exNN.qN". A question missing from its table fails
``test_every_question_is_in_a_table``, and a nudge a check can print (a named slip, a too-high or
too-low message, a choice's nudge, a function's slip) that no row provokes fails
``test_every_named_slip_is_provoked``: a new check cannot ship without both.

Right answers are written here from the lesson's formulas or read from the catalog, not from the
checker's reference, so a checker that drifted from what the lesson teaches fails.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import accelkit as ak
from accelkit import inference, parallel, price
from accelkit.exercises import (CORRECT, INCORRECT, ChoiceQuestion, ExplainQuestion,
                                FunctionQuestion, NumberQuestion, questions)
from accelkit.parallel import Layout
from accelkit.workloads import compare

MODULES = {f"ex{n:02d}": importlib.import_module(f"accelkit.exercises.ex{n:02d}")
           for n in range(1, 12)}
ALL = {f"{mod}.{name}": q for mod, module in MODULES.items()
       for name, q in sorted(questions(module).items())}


def _of(kind):
    return sorted(key for key, q in ALL.items() if isinstance(q, kind))


# --- right answers, written the ways a learner writes them ------------------------------------

L27 = ak.models.get("llama-2-7b")
L70 = ak.models.get("llama-3-70b")
H100 = ak.chips.get("H100")
DLRM = ak.models.get("dlrm")
_step405 = parallel.train_step("llama-3.1-405b", "H100",
                               Layout(dp=128, tp=8, pp=16, microbatch_tokens=8192,
                                      recompute="full", interleave=4), batch_tokens=16 * 2**20)
_s = compare("transformer_layer").tpu_outside_matrix_share
_dense = compare("dense_matmul")
_v5p = ak.chips.get("TPU v5p")
_DSV3 = ak.models.get("deepseek-v3")
_pretrain_seconds = 6 * L70.params * 15e12 / (4096 * _v5p.peak_flops("bf16") * 0.4)

RIGHT_NUMBERS: dict[str, list] = {
    "ex01.q1": [2 * 2048 * 11008 * 4096, float(2 * 2048 * 11008 * 4096), 1.847e11,
                np.float64(2 * 2048 * 11008 * 4096)],
    "ex01.q2": [DLRM.embedding_params / DLRM.params, round(DLRM.embedding_params / DLRM.params, 5)],
    "ex02.q1": [384, 384.0, (4096 // 32 // 4) * 12, np.int64(384)],
    "ex02.q2": [1024, 1024.0, 4096 * 2 * 4 // 32],
    "ex03.q1": [10, 10.0, 4 + 4 + 4 - 2],
    "ex03.q2": [4, 4.0, math.ceil(512 / 128)],
    "ex03.q4": [130944, 1023 * 128, 130944.0],
    "ex04.q1": [1 * 4096 * 4096 / (128 * 128 * 1024 * (2 * 128 + 128 + 1 - 2)), 0.00261, 2.61e-3],
    "ex04.q2": [129 * 129 / (4 * 128 * 128), 0.2539, 16641 / 65536],
    "ex05.q1": [H100.peak_flops("bf16") / H100.hbm_bytes_per_second, 295.2, 295],
    "ex05.q2": [32 * 28672 * 8192 / (32 * 8192 + 8192 * 28672 + 32 * 28672), 31.84, 31.8],
    "ex06.q1": [1950 / 2.0, 975, 975.0],
    "ex06.q2": [H100.peak_flops("bf16") * 0.4 * 3600 / 3.99, 3.57e17],
    "ex07.q1": [6 * L27.params * 2e12, 8.09e22,
                # lesson 07's own count, attention's matmuls included
                L27.flops_per_token("train") * 2e12],
    "ex07.q2": [6 * L27.params * 2e12 / (512 * ak.chips.get("A100").peak_flops("bf16") * 0.45)
                / 86400, 13.0],
    "ex07.q7": [H100.usd_per_hour * 16384 * _step405.seconds / 3600,
                price.usd_for(H100.usd_per_hour, _step405.seconds, 16384)],
    "ex07.q8": [0.4 * 4 / 3, 0.5333, 0.533],
    "ex08.q1": [2 * 80 * 8 * 128 * 2, 327680.0, 320 * 1024, 2 * L70.layers * L70.kv_heads * L70.head_dim * 2],
    "ex08.q2": [H100.ridge_flops_per_byte("bf16") * 2 / 2,  # the closed form of section 2
                inference.compute_bound_batch("llama-3-70b", "H100", kinds=("matmul",)), 300, 310],
    "ex09.q1": [(_dense.tpu_cycles * _dense.tpu_mac_cells) / (_dense.gpu_cycles * _dense.gpu_mac_cells)],
    "ex09.q2": [1 / _s, round(1 / _s, 2)],
    "ex10.q1": [_pretrain_seconds / 3600 * 4096 * _v5p.usd_per_hour, 4.03e7, 40_349_342],
    "ex10.q2": [2, 2.0, np.int64(2), math.ceil(ak.models.get("llama-3-8b").params * 16
                                               / H100.hbm_bytes)],
    # lesson 11: the catalog's counts; the ring's V/8 per link (docs/collectives.md) plus the
    # ring's hops at the catalog's hop latency
    "ex11.q1": [_DSV3.params / _DSV3.active_params, 17.87, 17.9, 18],
    "ex11.q2": [1e9 / (8 * _v5p.link_bytes_per_second) * 1e3,
                (1e9 / (8 * _v5p.link_bytes_per_second) + 4 * _v5p.hop_latency_seconds) * 1e3, 1.39],
}

RIGHT_CHOICES: dict[str, list] = {
    "ex02.q4": ["memory", "Memory", " memory "],
    "ex05.q3": ["memory", "MEMORY"],
    "ex06.q4": ["H100", "h100", "NVIDIA H100 (SXM)", "nvidia h100"],
    "ex07.q4": ["compute", "Compute"],
    "ex07.q6": ["2", 2, 2.0, np.int64(2), " 2 "],
    "ex08.q4": ["memory", "Memory"],
    "ex09.q4": ["gpu", "GPU"],
    "ex10.q4": ["H100", "h100", "NVIDIA H100 (SXM)", H100.name],
    "ex11.q4": ["H100", "h100", "NVIDIA H100 (SXM)", " H100 "],
}


def _issue_cycles_alt(issue_cycles, transactions, latency, in_flight):
    return max(issue_cycles, math.ceil(transactions * latency / in_flight)) + \
        (latency if transactions > 0 else 0)


RIGHT_FUNCTIONS: dict[str, list] = {
    "ex01.q3": [lambda operations, kind: sum(o.flops for o in operations if o.kind == kind)
                / sum(o.flops for o in operations),
                lambda ops, k: float(np.sum([o.flops for o in ops if o.kind == k])
                                     / np.sum([o.flops for o in ops]))],
    "ex02.q3": [_issue_cycles_alt,
                lambda a, b, c, d: max(a, -(-b * c // d)) + (c if b else 0)],
    "ex03.q3": [lambda rows, cols, M, N, K: math.ceil(K / rows) * math.ceil(N / cols)
                * (2 * rows + cols + M - 2),
                lambda r, c, m, n, k: -(-k // r) * -(-n // c) * (2 * r + c + m - 2)],
    "ex04.q3": [lambda rows, cols, M, N, K, dataflow: {
                    "os": math.ceil(M / rows) * math.ceil(N / cols),
                    "ws": math.ceil(K / rows) * math.ceil(N / cols),
                    "is": math.ceil(K / rows) * math.ceil(M / cols)}[dataflow]],
    "ex04.q4": [lambda tile_m, tile_n, M, N: 1 - M * N / (math.ceil(M / tile_m) * tile_m
                                                          * math.ceil(N / tile_n) * tile_n),
                lambda tm, tn, m, n: (math.ceil(m / tm) * tm * math.ceil(n / tn) * tn - m * n)
                / (math.ceil(m / tm) * tm * math.ceil(n / tn) * tn)],
    "ex05.q4": [lambda flops, bytes_moved, peak_flops_per_second, bytes_per_second:
                max(flops / peak_flops_per_second, bytes_moved / bytes_per_second),
                lambda f, b, p, w: np.maximum(f / p, b / w)],
    "ex06.q3": [lambda M, N, K: (M * N * K * 2.0 + 1950 / 8 * 2 * (M * K + K * N + M * N)) * 1e-12],
    "ex07.q3": [lambda params, tokens, n_chips, peak_flops, mfu:
                6 * params * tokens / (n_chips * peak_flops * mfu) / 86400,
                lambda p, t, n, f, m: 6 * p * t / (n * f * m) / 3600 / 24],
    "ex08.q3": [lambda usd_per_hour, n_chips, step_seconds, batch:
                n_chips * usd_per_hour / 3600 / (batch / step_seconds) * 1e6,
                lambda u, n, s, b: u * n * s / b / 3600 * 1e6],
    "ex09.q3": [lambda outside_share, matrix_speedup:
                1 / (outside_share + (1 - outside_share) / matrix_speedup)],
    "ex10.q3": [lambda users, interval_seconds, max_rate_per_replica:
                max(1, math.ceil(users / interval_seconds / max_rate_per_replica)),
                lambda users, interval_seconds, max_rate_per_replica:
                max(1, -(-users // (interval_seconds * max_rate_per_replica))),
                lambda u, i, r: max(1, int(np.ceil(u / i / r)))],
    "ex11.q3": [lambda array_bytes, n, link_bytes_per_second:
                (n * n / 8 if n % 2 == 0 else (n * n - 1) / 8) * array_bytes / n ** 2 / link_bytes_per_second,
                lambda v, n, w: (n ** 2 - n % 2) / 8 * v / n ** 2 / w],
}


# --- slips: (wrong answer, words of the nudge it must get) ------------------------------------

def _n(key):
    return ALL[key].expected


NUMBER_SLIPS: dict[str, list[tuple[object, str]]] = {
    "ex01.q1": [(32 * 2 * 2048 * 11008 * 4096, "all 32 layers"),
                (2048 * 11008 * 4096, "1 FLOP per multiply-accumulate"),
                (1.3 * _n("ex01.q1"), "Too high: is it one layer"),
                (0.77 * _n("ex01.q1"), "Too low: did you count 2 FLOPs")],
    "ex01.q2": [(100 * _n("ex01.q2"), "That is a percentage"), (1.5, "at most 1"),
                (0.5, "Too low: do the embedding rows")],
    "ex02.q1": [(1536, "every warp on one core"), (320, "the 10 ALU instructions only"),
                (500, "shared among the 4 cores"), (300, "all its instructions")],
    "ex02.q2": [(512, "coalesced load's count"), (700, "how many bytes"),
                (1300, "Your number is too high")],
    "ex03.q1": [(14, "weight-stationary count"), (4, "the K multiply-accumulate steps alone"),
                (12, "shift a stationary tile"), (7, "how late do the last operands")],
    "ex03.q2": [(512, "once per column of B"), (1, "Once is too few"),
                (8, "re-read by every cell"), (3, "how many column folds")],
    "ex03.q4": [(1024 * 128, "hides the first fold's load too"), (200_000, "first fold's load be"),
                (1023, "how many cycles of load")],
    "ex04.q1": [(1 / 255, "leaves out the weight load"), (100 * _n("ex04.q1"), "That is a percentage"),
                (0.003, "does every fold pay"), (0.001, "not a percentage divided")],
    "ex04.q2": [(129 * 129 / (2 * 128 * 128), "two folds in all"),
                (129 * 129 / 128 ** 2, "That counts one fold"),
                (0.3, "how many folds does 129 need"), (0.2, "add up to M·N")],
    "ex05.q1": [(_n("ex05.q1") * 1e9, "power of ten"), (_n("ex05.q1") * 1.3, "not by GB/s"),
                (_n("ex05.q1") * 0.7, "both in base units")],
    "ex05.q2": [(32, "weights-only count"), (32.0, "weights-only count"),
                (40, "all three matrices"), (25, "2 bytes per bf16 element")],
    "ex06.q1": [(1300, "'high' DRAM estimate"), (650, "'low' DRAM estimate"),
                (1100, "which DRAM estimate"), (900, "the mid DRAM estimate, and")],
    "ex06.q2": [(_n("ex06.q2") / 0.4, "leaves out the MFU"),
                (_n("ex06.q2") / 3600, "an hour is 3,600 s"),
                (_n("ex06.q2") * 1.3, "multiply the peak by the MFU"),
                (_n("ex06.q2") * 0.8, "seconds of peak")],
    "ex07.q1": [(8 * L27.params * 2e12, "8 FLOPs per parameter"),
                (2 * L27.params * 2e12, "forward pass only"),
                (1.5 * _n("ex07.q1"), "how many FLOPs per parameter"),
                (0.8 * _n("ex07.q1"), "did you count the backward pass"),
                # a 5% slip in a FLOP count is not a binary prefix
                (1.05 * _n("ex07.q1"), "how many FLOPs per parameter")],
    "ex07.q2": [(_n("ex07.q2") * 0.45, "leaves out the MFU"),
                (_n("ex07.q2") * 0.45 ** 2, "multiply the peak by it"),
                (_n("ex07.q2") * 86400, "seconds where days"),
                (_n("ex07.q2") * 24, "hours where days"),
                (_n("ex07.q2") * 1.3, "check the MFU and the chip count"),
                (_n("ex07.q2") * 0.7, "the peak (bf16) and the seconds in a day")],
    "ex07.q7": [(_n("ex07.q7") / 16384, "prices one GPU"),
                (_n("ex07.q7") * 1.3, "price per GPU-hour × GPUs"),
                (_n("ex07.q7") * 0.7, "for the whole step")],
    "ex07.q8": [(0.3, "upside down"), (0.8, "one forward pass to three"),
                (0.45, "how many passes' worth")],
    "ex08.q1": [(320, "KiB where bytes"), (8 * 327680, "all 64 query heads"),
                (327680 / 80, "That is one layer"), (163840, "factor of 2"),
                (500_000, "how many KV heads"), (250_000, "keys and values, in every layer")],
    "ex08.q2": [(_n("ex08.q2") / 8, "bits per second"), (_n("ex08.q2") * 2, "factor of 2"),
                (_n("ex08.q2") * 1.5, "halve the ridge"), (_n("ex08.q2") * 0.6, "times 2 bytes")],
    "ex09.q1": [(1 / _n("ex09.q1"), "GPU ÷ TPU"),
                (_dense.tpu_cycles / _dense.gpu_cycles, "compares cycles alone"),
                (_n("ex09.q1") * 1.3, "Too high: is it TPU over GPU"),
                (_n("ex09.q1") * 0.8, "Too low: is it TPU over GPU")],
    "ex09.q2": [(1 / (1 - _s), "speeds up the part outside"), (_n("ex09.q2") * 0.8, "share of the time is left"),
                (_n("ex09.q2") * 1.3, "Your number is too high")],
    "ex10.q1": [(_n("ex10.q1") * 0.4, "leaves out the MFU"), (_n("ex10.q1") * 0.16, "multiply the peak by it"),
                (_n("ex10.q1") / 3, "forward pass only"), (_n("ex10.q1") * 3600, "an hour is 3,600 s"),
                (_n("ex10.q1") * 1.3, "MFU multiplies the peak"),
                (_n("ex10.q1") * 0.8, "at 40% of the peak")],
    "ex10.q2": [(3, "how many bytes of HBM"), (1, "round up")],
    "ex11.q1": [(256 / 8, "experts ÷ experts-per-token"), (1 / _n("ex11.q1"), "upside down"),
                (_n("ex11.q1") * 1.3, "do the active parameters include"),
                (_n("ex11.q1") * 0.8, "the total counts every expert")],
    "ex11.q2": [(4 * _n("ex11.q2"), "an all-gather's time"), (2 * _n("ex11.q2"), "one direction only"),
                (_n("ex11.q2") / 1e3, "power of ten"),
                (_n("ex11.q2") * 1.3, "the shorter way round"), (_n("ex11.q2") * 0.7, "cross several links")],
}

CHOICE_SLIPS: dict[str, list[tuple[object, str]]] = {
    "ex02.q4": [("issue", "which one is larger")],
    "ex05.q3": [("compute", "above or below the v5e's ridge")],
    "ex06.q4": [("TPU v5p", "cheapest sourced price point"), ("v5p", "cheapest sourced price point"),
                ("A100", "not one of the options")],
    "ex07.q4": [("communication", "how many does the hierarchical all-reduce need")],
    "ex07.q6": [("1", "Pure FSDP's critical batch"), (1, "Pure FSDP's critical batch"),
                ("8", "wider TP only adds"), (8, "wider TP only adds"),
                ("4", "Look at the numbers again"), ("none of them", "Look at the numbers again"),
                (3, "not one of the options"), (2.5, "not one of the options")],
    "ex08.q4": [("compute", "The matmuls alone are not the whole step")],
    "ex09.q4": [("tpu", "multiply each machine's cycles by its own MAC cells")],
    "ex10.q4": [("TPU v6e", "lowest sourced price"), ("TPU v6e (Trillium)", "lowest sourced price"),
                ("v6e", "lowest sourced price"), ("B200", "not one of the options")],
    "ex11.q4": [("TPU v5p", "whatever the group"), ("v5p", "whatever the group"),
                ("B200", "not one of the options")],
}


FUNCTION_SLIPS: dict[str, list[tuple[object, str]]] = {
    key: [(slip, message) for message, slip in ALL[key].slips.items()]
    for key in _of(FunctionQuestion)
}


# --- the tests ---------------------------------------------------------------------------------

def test_every_question_is_in_a_table():
    assert set(RIGHT_NUMBERS) == set(NUMBER_SLIPS) == set(_of(NumberQuestion))
    assert set(RIGHT_CHOICES) == set(CHOICE_SLIPS) == set(_of(ChoiceQuestion))
    assert set(RIGHT_FUNCTIONS) == set(_of(FunctionQuestion))


@pytest.mark.parametrize("key", sorted(RIGHT_NUMBERS))
def test_number_right_answers_in_every_form(key, capsys):
    q = ALL[key]
    for answer in RIGHT_NUMBERS[key]:
        assert q.check(answer) == CORRECT, (key, answer, capsys.readouterr().out)


@pytest.mark.parametrize("key", sorted(RIGHT_CHOICES))
def test_choice_right_answers_in_every_form(key, capsys):
    q = ALL[key]
    for answer in RIGHT_CHOICES[key]:
        assert q.check(answer) == CORRECT, (key, answer, capsys.readouterr().out)
    namespace: dict = {}
    exec(q.solution_code, namespace)  # noqa: S102 - the shipped solution string, not user input
    assert q.check(namespace[f"{q.name}_answer"]) == CORRECT


@pytest.mark.parametrize("key", sorted(RIGHT_FUNCTIONS))
def test_function_right_answers_in_every_form(key, capsys):
    q = ALL[key]
    namespace: dict = {}
    exec(q.solution_code, namespace)  # noqa: S102 - the shipped solution string, not user input
    shipped = [v for k, v in namespace.items() if callable(v) and not k.startswith("_")
               and getattr(v, "__module__", None) is None]
    for answer in RIGHT_FUNCTIONS[key] + shipped:
        assert q.check(answer) == CORRECT, (key, capsys.readouterr().out)


@pytest.mark.parametrize("key", sorted(NUMBER_SLIPS))
def test_number_slips_get_their_nudge(key, capsys):
    q = ALL[key]
    for answer, words in NUMBER_SLIPS[key]:
        outcome = q.check(answer)
        out = capsys.readouterr().out
        assert outcome == INCORRECT and words in out, (key, answer, words, out)


@pytest.mark.parametrize("key", sorted(CHOICE_SLIPS))
def test_choice_slips_get_their_nudge(key, capsys):
    q = ALL[key]
    for answer, words in CHOICE_SLIPS[key]:
        outcome = q.check(answer)
        out = capsys.readouterr().out
        assert outcome == INCORRECT and words in out, (key, answer, words, out)


@pytest.mark.parametrize("key", sorted(FUNCTION_SLIPS))
def test_function_slips_get_their_nudge(key, capsys):
    q = ALL[key]
    for wrong, words in FUNCTION_SLIPS[key]:
        outcome = q.check(wrong)
        out = capsys.readouterr().out
        assert outcome == INCORRECT and words in out, (key, words, out)


def test_every_named_slip_is_provoked():
    """Each nudge a check can print is provoked by a row above (so each is tested as made)."""
    missing = []
    for key in _of(NumberQuestion):
        q, said = ALL[key], " | ".join(words for _, words in NUMBER_SLIPS[key])
        for text in [*q.slips, q.too_high, q.too_low]:
            if not any(words in text for _, words in NUMBER_SLIPS[key]):
                missing.append((key, text[:60], said[:80]))
    for key in _of(ChoiceQuestion):
        q = ALL[key]
        for text in q.nudges.values():
            if not any(words in text for _, words in CHOICE_SLIPS[key]):
                missing.append((key, text[:60]))
    assert not missing, missing


def test_explain_questions_are_checked_elsewhere():
    # Explain-questions have no slips to name: test_exercise_teaching.py checks every pick and
    # every plain form of the right letters for each of them.
    assert _of(ExplainQuestion)


# --- the notebook says what the checker does ---------------------------------------------------

def _question_markdown(key: str) -> str:
    from tests.notebook_runner import ROOT, load

    module, name = key.split(".")
    path = next((ROOT / "exercises").glob(f"{module[2:]}_*.ipynb"))
    cells = [c.source for c in load(path).cells
             if c.cell_type == "markdown" and c.source.startswith(f"**{name}")]
    assert len(cells) == 1, (key, len(cells))
    return cells[0]


@pytest.mark.parametrize("key", _of(NumberQuestion))
def test_the_notebook_states_the_tolerance_the_checker_applies(key):
    """A learner reads the tolerance in the notebook: it must be the one the check applies."""
    import re

    text = _question_markdown(key)
    q = ALL[key]
    stated = re.findall(r"(?:[Ww]ithin |±)(\d+(?:\.\d+)?)%", text)
    if q.rel_tol == 0:
        assert not stated and re.search(r"[Ee]xact|a whole number", text), (key, text)
    else:
        assert [float(x) / 100 for x in stated] == [pytest.approx(q.rel_tol)], (key, stated)


@pytest.mark.parametrize("key", _of(ExplainQuestion))
def test_the_notebook_lists_the_statements_under_the_checkers_letters(key):
    import re

    listed = re.findall(r"^- \(([a-j])\) (.+)$", _question_markdown(key), re.MULTILINE)
    q = ALL[key]

    def plain(text):
        return re.sub(r"[`*]", "", text).strip()

    assert [(letter, plain(text)) for letter, text in listed] == \
        [(letter, plain(text)) for letter, (text, _, _) in zip(q.letters, q.statements)], key
