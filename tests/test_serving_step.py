"""serving_step.IterationGroup: one continuous-batching iteration priced by the library's one
rule, equal to inference.decode_step and inference.prefill where an iteration is one of them,
and its fast paths (seconds, closed-form runs) equal to timing() itself."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import accelkit as ak
from accelkit import calibration, inference, serving_kernels, serving_step

GROUPS = [("llama-3-8b", "H100", 1), ("llama-2-70b", "H100", 2), ("mixtral-8x7b", "H100", 2),
          ("llama-3-70b", "TPU v5e", 16), ("deepseek-v3", "H200", 8)]
CONVENTIONS = [("causal", True, True), ("full", False, False)]


def _group(model, chip, n, formats=("bf16", "bf16", "bf16"), conventions=CONVENTIONS[0],
           split="even", per_op=0.0):
    return serving_step.iteration_group(ak.models.get(model), ak.chips.get(chip), n, formats,
                                        conventions, split, per_op)


def _formats(chip):
    return ("int8",) * 3 if ak.chips.get(chip).kind == "tpu" else ("fp8",) * 3


@pytest.mark.parametrize("model, chip, n", GROUPS)
@pytest.mark.parametrize("conventions", CONVENTIONS)
def test_a_decode_iteration_is_decode_step(model, chip, n, conventions):
    for formats in (("bf16",) * 3, _formats(chip)):
        g = _group(model, chip, n, formats, conventions)
        for batch, context in ((1, 0), (7, 100), (64, 2048), (300, 511)):
            want = inference.decode_step(model, chip, n, batch, context, *formats,
                                         attention_mask=conventions[0],
                                         softmax_flops=conventions[1], kv_write=conventions[2])
            totals = (batch, batch, batch * g.pairs(1, context), batch * (context + 1))
            assert g.timing(*totals).seconds == pytest.approx(want.seconds, rel=1e-12)
            assert g.seconds(*totals) == pytest.approx(want.seconds, rel=1e-12)
            flops, moved = g.arrays(*totals)
            assert flops.sum() == pytest.approx(want.flops, rel=1e-12)
            assert moved.sum() == pytest.approx(want.bytes, rel=1e-12)


@pytest.mark.parametrize("model, chip, n", GROUPS)
@pytest.mark.parametrize("conventions", CONVENTIONS)
def test_a_prefill_iteration_is_prefill(model, chip, n, conventions):
    for formats in (("bf16",) * 3, _formats(chip)):
        g = _group(model, chip, n, formats, conventions)
        for batch, prompt in ((1, 1), (3, 100), (8, 2048)):
            want = inference.prefill(model, chip, n, batch, prompt, *formats,
                                     attention_mask=conventions[0], softmax_flops=conventions[1],
                                     kv_write=conventions[2])
            totals = (batch * prompt, batch, batch * g.pairs(prompt, 0), batch * prompt)
            assert g.timing(*totals).seconds == pytest.approx(want.seconds, rel=1e-12)
            assert g.seconds(*totals) == pytest.approx(want.seconds, rel=1e-12)
            flops, moved = g.arrays(*totals)
            assert flops.sum() == pytest.approx(want.flops, rel=1e-12)
            assert moved.sum() == pytest.approx(want.bytes, rel=1e-12)


def test_overhead_and_replicated_caches_follow_the_same_rule():
    g = _group("llama-3-70b", "TPU v5e", 16, split="heads", per_op=7e-6)
    for batch, context in ((1, 0), (64, 2048)):
        d = inference.decode_step("llama-3-70b", "TPU v5e", 16, batch, context, overhead=True,
                                  kv_cache_split="heads")
        assert g.seconds(batch, batch, batch * (context + 1),
                         batch * (context + 1)) == pytest.approx(d.seconds, rel=1e-12)
        p = inference.prefill("llama-3-70b", "TPU v5e", 16, batch, 300, overhead=True,
                              kv_cache_split="heads")
        assert g.seconds(batch * 300, batch, batch * g.pairs(300, 0),
                         batch * 300) == pytest.approx(p.seconds, rel=1e-12)


def test_a_mixture_of_experts_past_saturation_is_still_the_rule():
    """Past the token count where every expert is read, the per-token part is a line again."""
    g = _group("mixtral-8x7b", "H100", 2, ("fp8",) * 3)
    for batch, prompt in ((1, 100), (1, 146), (3, 2000), (50, 400)):
        want = inference.prefill("mixtral-8x7b", "H100", 2, batch, prompt, "fp8", "fp8", "fp8")
        assert g.seconds(batch * prompt, batch, batch * g.pairs(prompt, 0),
                         batch * prompt) == pytest.approx(want.seconds, rel=1e-12)
    for batch in (100, 145, 900, 5000):
        want = inference.decode_step("mixtral-8x7b", "H100", 2, batch, 300, "fp8", "fp8", "fp8")
        assert g.seconds(batch, batch, batch * 301, batch * 301) == pytest.approx(
            want.seconds, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(decodes=st.lists(st.integers(0, 5000), max_size=40),
       chunks=st.lists(st.tuples(st.integers(1, 3000), st.integers(0, 4000), st.booleans()),
                       max_size=6),
       which=st.sampled_from(GROUPS))
def test_a_mixed_iteration_is_the_sum_of_its_sequences(decodes, chunks, which):
    """Any mix of decode tokens and prompt chunks at their own contexts: the fast scalar path
    equals timing() on the full arrays."""
    if not decodes and not chunks:
        return
    g = _group(*which)
    tokens = len(decodes) + sum(t for t, _, _ in chunks)
    logits = len(decodes) + sum(1 for _, _, last in chunks if last)
    pairs = sum(c + 1 for c in decodes) + sum(g.pairs(t, c) for t, c, _ in chunks)
    reads = sum(c + 1 for c in decodes) + sum(c + t for t, c, _ in chunks)
    assert g.seconds(tokens, logits, pairs, reads) == pytest.approx(
        float(g.timing(tokens, logits, pairs, reads).seconds), rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(decodes=st.lists(st.integers(0, 3000), min_size=1, max_size=6),
       prompts=st.lists(st.integers(1, 2000), max_size=3), which=st.sampled_from(GROUPS[:3]))
def test_a_mixed_iterations_flops_are_its_sequences_flops(decodes, prompts, which):
    """Arithmetic has no per-iteration part (weights cost bytes, not FLOPs): an iteration's
    FLOPs are the FLOPs each of its sequences would take alone, decode_step's and prefill's."""
    model, chip, n = which
    g = _group(*which)
    tokens = len(decodes) + sum(prompts)
    logits = len(decodes) + len(prompts)
    pairs = sum(c + 1 for c in decodes) + sum(g.pairs(t, 0) for t in prompts)
    reads = sum(c + 1 for c in decodes) + sum(prompts)
    alone = (sum(inference.decode_step(model, chip, n, 1, c).flops for c in decodes)
             + sum(inference.prefill(model, chip, n, 1, t).flops for t in prompts))
    assert g.arrays(tokens, logits, pairs, reads)[0].sum() == pytest.approx(alone, rel=1e-9)


@pytest.mark.parametrize("model, chip, n", GROUPS[:4])
def test_runs_of_decode_iterations_sum_in_closed_form(model, chip, n):
    g = _group(model, chip, n, per_op=7e-6 if chip == "TPU v5e" else 0.0)
    batch, first = 37, 37 * 501
    steps = [g.seconds(batch, batch, first + batch * k, first + batch * k) for k in range(1200)]
    for start, stop in ((0, 1), (0, 5), (3, 100), (0, 1200)):
        assert g.decode_run_seconds(batch, first, first, start, stop) == pytest.approx(
            sum(steps[start:stop]), rel=1e-10)
    for wait in (1e-9, steps[0], 0.37 * sum(steps), 5 * sum(steps)):
        k, total = g.decode_run_steps(batch, first, first, wait, 1200)
        assert total == pytest.approx(sum(steps[:k]), rel=1e-10)
        assert total >= wait or k == 1200
        assert k == 1 or sum(steps[:k - 1]) < wait


def test_attention_pairs_follow_the_mask():
    causal, full = _group("llama-3-8b", "H100", 1), _group("llama-3-8b", "H100", 1,
                                                           conventions=CONVENTIONS[1])
    assert causal.pairs(4, 10) == 4 * 10 + 10 and full.pairs(4, 10) == 4 * 14
    assert causal.pairs(1, 99) == full.pairs(1, 99) == 100


def test_the_group_is_checked_as_decode_groups_are():
    with pytest.raises(ValueError, match="divide"):
        _group("llama-3-70b", "H100", 3)
    with pytest.raises(ak.chips.MissingFigureError):
        _group("llama-3-8b", "L4", 2)
    g = _group("llama-3-8b", "H100", 1)
    assert not g.per_pair[0].flags.writeable and np.isfinite(g.counts).all()


@pytest.mark.parametrize("model, chip, n", GROUPS)
def test_many_iterations_at_once_are_the_rule(model, chip, n):
    """seconds_many (the steady-state estimate's vectorised pricing) equals timing() on each
    iteration, decodes, prompts and mixes alike."""
    g = _group(model, chip, n)
    tokens = np.array([1, 9, 250, 1300, 4097])
    logits = np.array([1, 9, 3, 17, 100])
    pairs = tokens * 700.0 + 5
    reads = tokens * 650.0 + 3
    many = g.seconds_many(tokens, logits, pairs, reads)
    for i in range(tokens.size):
        one = g.timing(int(tokens[i]), logits[i], pairs[i], reads[i]).seconds
        assert many[i] == pytest.approx(float(one), rel=1e-12)


@pytest.mark.parametrize("model, chip, n", GROUPS)
def test_a_run_of_chunks_is_the_sum_of_its_iterations(model, chip, n):
    """run_seconds (the engine's closed-form run of a prompt's chunks beside fixed decodes)
    equals seconds() summed over the iterations, pairs and reads growing each step."""
    g = _group(model, chip, n)
    decodes, chunk, done, context = 37, 475, 1200, 900
    steps = 9
    pairs0 = decodes * (context + 1) + g.pairs(chunk, done)
    reads0 = decodes * (context + 1) + done + chunk
    pairs_step = decodes + g.pairs(chunk, done + chunk) - g.pairs(chunk, done)
    one_by_one = sum(g.seconds(decodes + chunk, decodes, pairs0 + j * pairs_step,
                               reads0 + j * (decodes + chunk)) for j in range(steps))
    assert g.run_seconds(decodes + chunk, decodes, pairs0, reads0, pairs_step, decodes + chunk,
                         steps) == pytest.approx(one_by_one, rel=1e-12)
    assert g.run_seconds(decodes + chunk, decodes, pairs0, reads0, pairs_step, 1.0, 0) == 0.0


def _overlapped(model, chip, n, formats=("bf16", "bf16", "bf16")):
    return serving_step.iteration_group(ak.models.get(model), ak.chips.get(chip), n, formats,
                                        CONVENTIONS[0], "even", 0.0, "datasheet", True)


@pytest.mark.parametrize("model, chip, n", GROUPS)
def test_overlapped_all_reduces_are_the_same_rule_in_every_path(model, chip, n):
    """tp_overlap=True: decode_step and prefill take the longer of the kernels and the
    collectives (roofline.times overlapped), never more than exposed, and every fast path of
    the iteration group (seconds, seconds_many) equals timing() under it."""
    g, exposed = _overlapped(model, chip, n), _group(model, chip, n)
    for batch, context in ((1, 0), (64, 2048), (300, 511)):
        want = inference.decode_step(model, chip, n, batch, context, tp_overlap=True)
        plain = inference.decode_step(model, chip, n, batch, context)
        assert want.seconds == pytest.approx(max(plain.seconds - plain.communication_seconds,
                                                 plain.communication_seconds), rel=1e-12)
        assert want.seconds <= plain.seconds
        totals = (batch, batch, batch * g.pairs(1, context), batch * (context + 1))
        assert g.seconds(*totals) == pytest.approx(want.seconds, rel=1e-12)
        assert float(g.timing(*totals).seconds) == pytest.approx(want.seconds, rel=1e-12)
        assert exposed.seconds(*totals) == pytest.approx(plain.seconds, rel=1e-12)
    p = inference.prefill(model, chip, n, 2, 700, tp_overlap=True)
    assert g.seconds(1400, 2, 2 * g.pairs(700, 0), 1400) == pytest.approx(p.seconds, rel=1e-12)
    tokens = np.array([1, 9, 250, 1300, 4097])
    many = g.seconds_many(tokens, np.minimum(tokens, 17), tokens * 700.0, tokens * 650.0)
    for i, t in enumerate(tokens.tolist()):
        assert many[i] == pytest.approx(g.seconds(t, min(t, 17), t * 700.0, t * 650.0),
                                        rel=1e-12)


@pytest.mark.parametrize("batch", [1, 256, 1024])
def test_overlapped_runs_sum_in_closed_form_across_the_crossing(batch):
    """Closed-form runs under tp_overlap=True equal the iterations summed one by one, also where
    the kernels (growing with the context) overtake the collectives mid-run: Llama-3-70B on 16
    v5e at batch 256, kernels 15 to 23 ms against 16 ms of all-reduces."""
    g = _overlapped("llama-3-70b", "TPU v5e", 16)
    first = batch * 501
    steps = [g.seconds(batch, batch, first + batch * k, first + batch * k) for k in range(1200)]
    comm = float(g.timing(batch, batch, first, first).communication_seconds)
    if batch == 256:   # the case this test is for: the collectives lead, then the kernels
        assert steps[0] == pytest.approx(comm) and steps[-1] > comm * 1.2
    for start, stop in ((0, 1), (0, 5), (3, 100), (0, 1200), (700, 1200)):
        assert g.decode_run_seconds(batch, first, first, start, stop) == pytest.approx(
            sum(steps[start:stop]), rel=1e-10)
    for wait in (1e-9, steps[0], 0.37 * sum(steps), 5 * sum(steps)):
        k, total = g.decode_run_steps(batch, first, first, wait, 1200)
        assert total == pytest.approx(sum(steps[:k]), rel=1e-10)
        assert total >= wait or k == 1200
        assert k == 1 or sum(steps[:k - 1]) < wait
    chunk, decodes = 475, batch
    pairs0, reads0 = decodes * 901 + g.pairs(chunk, 1200), decodes * 901 + 1675
    pairs_step = decodes + g.pairs(chunk, 1200 + chunk) - g.pairs(chunk, 1200)
    one_by_one = sum(g.seconds(decodes + chunk, decodes, pairs0 + j * pairs_step,
                               reads0 + j * (decodes + chunk)) for j in range(40))
    assert g.run_seconds(decodes + chunk, decodes, pairs0, reads0, pairs_step, decodes + chunk,
                         40) == pytest.approx(one_by_one, rel=1e-12)


def test_tp_overlap_is_checked():
    with pytest.raises(TypeError, match="tp_overlap"):
        inference.decode_step("llama-3-8b", "H100", tp_overlap="yes")
    with pytest.raises(TypeError, match="tp_overlap"):
        ak.serving.simulate("llama-3-8b", "H100", arrival_rate=1.0, requests=10,
                            prompt_tokens=10, output_tokens=10, tp_overlap=1)


@pytest.mark.parametrize("model, chip, n", [("llama-2-70b", "H100", 2), ("llama-3-70b", "TPU v5e", 16),
                                            ("mixtral-8x7b", "H100", 2)])
def test_the_kernels_ceiling_prices_skinny_matmuls_by_their_shape_in_every_path(model, chip, n):
    """ceilings="kernels": the dense matmuls run at the achievable ceiling times
    mfu.matmul_efficiency of their shape (tokens x N x K per shard) times the share library
    kernels sustain (calibration.matmul_sustained: training's figure), so an iteration never takes
    less than at the flat achievable ceiling, much more where its few tokens fill a tile badly,
    and seconds, seconds_many and the closed-form runs equal timing() under it."""
    m, c = ak.models.get(model), ak.chips.get(chip)
    formats = _formats(chip)
    g = serving_step.iteration_group(m, c, n, formats, CONVENTIONS[0], "even", 0.0, "kernels")
    flat = serving_step.iteration_group(m, c, n, formats, CONVENTIONS[0], "even", 0.0,
                                        "achievable")
    varies = np.any([*g.per_logit, *g.per_pair, *g.per_read], axis=0) != 0
    assert g.shaped and not any(varies[s[0]] for s in g.shaped)  # the token part alone
    shapes = {s.name: s for s in ak.mfu.layer_matmuls(m, 1, tp=n)}
    i, big_n, big_k, _, _ = g.shaped[0]
    assert (big_n, big_k) == (shapes["qkv_proj"].N, shapes["qkv_proj"].K)
    for tokens in (1, 150, 1000, 5000):
        totals = (tokens, tokens, tokens * 600.0, tokens * 600.0)
        peaks = g.peaks(tokens)
        assert peaks[i] == pytest.approx(flat.rates[0] * ak.mfu.matmul_efficiency(
            c, tokens, big_n, big_k, formats[2]) * calibration.matmul_sustained(c))
        assert g.seconds(*totals) == pytest.approx(float(g.timing(*totals).seconds), rel=1e-12)
        assert g.seconds(*totals) >= flat.seconds(*totals) * (1 - 1e-12)
    tokens = np.array([1, 9, 250, 1300, 4097])
    many = g.seconds_many(tokens, tokens, tokens * 700.0, tokens * 650.0)
    for j, t in enumerate(tokens.tolist()):
        assert many[j] == pytest.approx(g.seconds(t, t, t * 700.0, t * 650.0), rel=1e-12)
    batch, first = 150, 150 * 400
    steps = [g.seconds(batch, batch, first + batch * k, first + batch * k) for k in range(300)]
    assert g.decode_run_seconds(batch, first, first, 0, 300) == pytest.approx(sum(steps),
                                                                              rel=1e-10)
    if model == "llama-2-70b":   # 150 tokens fill two 128-row tiles: well below the ceiling
        assert g.seconds(150, 150, 150 * 600.0, 150 * 600.0) > 1.3 * flat.seconds(
            150, 150, 150 * 600.0, 150 * 600.0)


def test_the_kernels_ceiling_is_for_iterations_and_named():
    assert "kernels" in serving_step.CEILINGS
    with pytest.raises(ValueError, match="ceilings"):
        ak.serving.simulate("llama-3-8b", "H100", arrival_rate=1.0, requests=5, prompt_tokens=10,
                            output_tokens=5, ceilings="measured")


def test_the_kernels_ceiling_runs_matmuls_at_the_training_calibrations_sustained_share():
    """One figure per measured quantity: a shaped matmul runs at its tile/wave efficiency times
    calibration.matmul_sustained, the share training's kernels are priced by (0.949 on H100,
    from vidur's measured linear layers), at large shapes and small alike (Llama-2-70B's
    gate/up shard on one H100 at 4,096 tokens: the tile model alone about 0.97); on a TPU no
    share is measured, so the MXU model stands alone."""
    m, h100 = ak.models.get("llama-2-70b"), ak.chips.get("H100")
    assert calibration.matmul_sustained(h100) == 0.949
    g = serving_step.iteration_group(m, h100, 1, ("bf16",) * 3, CONVENTIONS[0], "even", 0.0,
                                     "kernels")
    i = next(s[0] for s in g.shaped if s[1] == 2 * 28672)       # mlp_gate_up: N = 2 x 28,672
    for tokens in (150, 4096):
        tile = ak.mfu.matmul_efficiency(h100, tokens, 2 * 28672, 8192, "bf16")
        assert g.peaks(tokens)[i] == pytest.approx(g.rates[0] * tile * 0.949, rel=1e-12)
    assert ak.mfu.matmul_efficiency(h100, 4096, 2 * 28672, 8192, "bf16") > 0.95
    assert g.peaks(150)[i] < 0.6 * g.peaks(4096)[i]     # 150 of a tile's 256 rows
    v5e = ak.chips.get("TPU v5e")
    assert calibration.matmul_sustained(v5e) == 1.0
    tpu = serving_step.iteration_group(ak.models.get("llama-3-8b"), v5e, 1, ("bf16",) * 3,
                                       CONVENTIONS[0], "even", 0.0, "kernels")
    j, n, k = tpu.shaped[0][:3]
    assert tpu.peaks(512)[j] == pytest.approx(
        tpu.rates[0] * ak.mfu.matmul_efficiency(v5e, 512, n, k, "bf16"), rel=1e-12)


def test_the_kernels_ceiling_has_a_kernel_floor_on_gpus_only():
    """Under "kernels" every GPU kernel costs at least KERNEL_FLOOR_SECONDS (a one-token decode
    of Llama-3-8B: its 32 layers' norms, rotary embedding, activation and residual adds are
    nanoseconds at the roofline), a larger per-operation cost wins, and a TPU has none."""
    m, h100 = ak.models.get("llama-3-8b"), ak.chips.get("H100")
    args = (m, h100, 1, ("bf16",) * 3, CONVENTIONS[0], "even")
    kernels = serving_step.iteration_group(*args, 0.0, "kernels")
    assert kernels.per_op_overhead == serving_kernels.KERNEL_FLOOR_SECONDS == 5e-6
    assert serving_step.iteration_group(*args, 7e-6, "kernels").per_op_overhead == 7e-6
    assert serving_step.iteration_group(*args, 0.0, "achievable").per_op_overhead == 0.0
    t = kernels.timing(1, 1, 1.0, 1.0)
    assert t.fixed_seconds == pytest.approx(t.n_operations * 5e-6)
    assert kernels.seconds(1, 1, 1.0, 1.0) == pytest.approx(float(t.seconds), rel=1e-12)
    flat = serving_step.iteration_group(*args, 0.0, "achievable").seconds(1, 1, 1.0, 1.0)
    # seven sub-microsecond kernels a layer now take 5 us each
    assert kernels.seconds(1, 1, 1.0, 1.0) > flat + 0.9 * 7 * 32 * 5e-6
    tpu = serving_step.iteration_group(m, ak.chips.get("TPU v5e"), 1, ("bf16",) * 3,
                                       CONVENTIONS[0], "even", 0.0, "kernels")
    assert tpu.per_op_overhead == 0.0


def test_the_kernels_ceiling_prices_all_reduces_at_the_measured_curve_training_uses():
    """On 2, 4 or 8 A100s, H100s or H200s an all-reduce costs calibration.all_reduce_seconds
    (NCCL's measured time for its size: the curve training's TP all-reduces are priced by), far
    above the alpha-beta model's few microseconds at decode's sizes; elsewhere (16 chips, a
    TPU) the model's own at the achievable bandwidth; and an iteration's collectives follow it
    on every path (Llama-2-70B on 2 H100s: 160 all-reduces of tokens x 8,192 x 2 bytes)."""
    h100, a100 = ak.chips.get("H100"), ak.chips.get("A100")
    links = ak.collectives.at_bandwidth(h100, "achievable")
    for chip in (h100, a100, ak.chips.get("H200")):
        for n in (2, 4, 8):
            for size in (2.0**14, 2.0**20, 2.0**24):
                ours = serving_kernels.all_reduce_seconds(chip, size, n)
                assert ours == float(calibration.all_reduce_seconds(chip, n, size))
                modelled = ak.collectives.all_reduce(ak.collectives.at_bandwidth(
                    chip, "achievable"), array_bytes=size, over=n).seconds
                if size <= 2**20:
                    assert ours > 2 * modelled
    # measured: 43 us at 1 MiB on 2 H100s (validation/kernel_measurements.py)
    assert serving_kernels.all_reduce_seconds(h100, 2**20, 2) == pytest.approx(43e-6, rel=1e-3)
    sizes = np.array([2.0**14, 2.0**22])
    assert serving_kernels.all_reduce_seconds(h100, sizes, 4) == pytest.approx(
        [serving_kernels.all_reduce_seconds(h100, float(b), 4) for b in sizes])
    b200 = ak.chips.get("B200")
    assert calibration.all_reduce_seconds(b200, 2, 2**20) is None
    assert serving_kernels.all_reduce_seconds(b200, 2**20, 2) == pytest.approx(
        ak.collectives.all_reduce(ak.collectives.at_bandwidth(b200, "achievable"),
                                  array_bytes=2**20, over=2).seconds)
    m = ak.models.get("llama-2-70b")
    args = (m, h100, 2, ("bf16",) * 3, CONVENTIONS[0], "even", 0.0)
    kernels = serving_step.iteration_group(*args, "kernels")
    flat = serving_step.iteration_group(*args, "achievable")
    assert kernels.measured_reduces == (2 * m.layers, 8192 * 2.0)
    assert kernels.communication == (0.0, 0.0) and flat.measured_reduces is None
    for tokens in (1, 64, 300, 2048):
        expected = 2 * m.layers * float(calibration.all_reduce_seconds(h100, 2, tokens * 16384))
        assert kernels.collectives_seconds(float(tokens)) == pytest.approx(expected)
        assert kernels.timing(tokens, tokens, tokens * 100.0, tokens * 100.0) \
            .communication_seconds == pytest.approx(expected)
        assert kernels.collectives_seconds(float(tokens)) > flat.collectives_seconds(
            float(tokens))
    assert links.collective_latency_seconds == h100.collective_latency_seconds


def test_the_kernel_figures_are_the_profiles_medians():
    """The kernel floor is what validation/vidur_h100.json's measurements give by the rule its
    docstring states (recomputed here, so a changed figure or file fails); the all-reduce's
    latency below 1 MiB (calibration.all_reduce_seconds, set by the 1 MiB point) agrees with
    the measured 64 and 256 KiB points: within 10% on 2 and 4 H100s, within 25% on 8 (24 and
    37 us measured, 29-30 predicted)."""
    import json
    import pathlib
    import statistics

    data = json.loads((pathlib.Path(__file__).parent.parent / "validation" /
                       "vidur_h100.json").read_text())
    mlp = data["mlp"]["us"]
    small = [mlp[tp]["1"][op] for tp in mlp for op in (
        "input_layernorm", "attn_rope", "post_attention_layernorm", "mlp_act", "add")]
    assert statistics.median(small) * 1e-6 == pytest.approx(serving_kernels.KERNEL_FLOOR_SECONDS)
    h100 = ak.chips.get("H100")
    for n, tolerance in ((2, 0.1), (4, 0.1), (8, 0.25)):
        for size in ("65536", "262144"):
            measured_us = data["all_reduce"]["us"][str(n)][size]
            ours = float(calibration.all_reduce_seconds(h100, n, float(size))) * 1e6
            assert ours == pytest.approx(measured_us, rel=tolerance)


@pytest.mark.parametrize("overlap", [False, True])
def test_a_per_iteration_runtime_cost_is_the_same_rule_in_every_path(overlap):
    """iteration_seconds adds to every iteration on the kernels' side of the overlap: seconds,
    seconds_many and the closed-form runs still equal timing(), and each iteration is that much
    longer where the collectives do not hide it."""
    m, c = ak.models.get("llama-2-70b"), ak.chips.get("H100")
    args = (m, c, 2, ("fp8",) * 3, CONVENTIONS[0], "even", 0.0, "kernels", overlap)
    g = serving_step.iteration_group(*args, iteration_seconds=1.2e-3)
    bare = serving_step.iteration_group(*args)
    for tokens in (1, 200, 3000):
        totals = (tokens, tokens, tokens * 500.0, tokens * 500.0)
        assert g.seconds(*totals) == pytest.approx(float(g.timing(*totals).seconds), rel=1e-12)
        if not overlap:
            assert g.seconds(*totals) == pytest.approx(bare.seconds(*totals) + 1.2e-3, rel=1e-12)
        assert g.seconds(*totals) >= bare.seconds(*totals)
    tokens = np.array([1, 40, 900])
    many = g.seconds_many(tokens, tokens, tokens * 300.0, tokens * 300.0)
    assert many == pytest.approx([g.seconds(t, t, t * 300.0, t * 300.0) for t in tokens.tolist()])
    batch, first = 300, 300 * 250
    steps = [g.seconds(batch, batch, first + batch * k, first + batch * k) for k in range(200)]
    assert g.decode_run_seconds(batch, first, first, 0, 200) == pytest.approx(sum(steps), rel=1e-10)
    chunks = [g.seconds(512, 9, 512 * 9 + k * 4000.0, 700.0 + k * 512) for k in range(30)]
    assert g.run_seconds(512, 9, 512 * 9, 700.0, 4000.0, 512.0, 30) == pytest.approx(
        sum(chunks), rel=1e-10)


@pytest.mark.parametrize("model", ["llama-2-70b", "mixtral-8x7b"])
def test_the_kernels_ceiling_runs_norms_and_residuals_on_every_rank(model):
    """Under "kernels" the norms and residual adds are counted whole on every chip of the group
    (REPLICATED: their FLOPs and bytes n_chips times the model's), every other operation once,
    and the norms' and activations' bytes (not their FLOPs) over their measured bandwidth share
    (calibration.bandwidth_share); on one chip no copies; the fast paths still equal timing()."""
    m, c = ak.models.get(model), ak.chips.get("H100")
    names = [op.name for op in m.operations(batch=1, phase="decode", context_tokens=0,
                                            dtype="fp8", kv_dtype="fp8")]
    kernels = serving_step.iteration_group(m, c, 2, ("fp8",) * 3, CONVENTIONS[0], "even", 0.0,
                                           "kernels")
    flat = serving_step.iteration_group(m, c, 2, ("fp8",) * 3, CONVENTIONS[0], "even", 0.0,
                                        "achievable")
    totals = (300, 300, 300 * 400.0, 300 * 400.0)
    f_k, b_k = kernels.arrays(*totals)
    f_a, b_a = flat.arrays(*totals)
    ops = m.operations(batch=1, phase="decode", context_tokens=0, dtype="fp8", kv_dtype="fp8")
    for i, (name, op) in enumerate(zip(names, ops)):
        factor = 2.0 if name in serving_kernels.REPLICATED else 1.0
        share = calibration.bandwidth_share(c, op)
        assert b_k[i] == pytest.approx(factor / share * b_a[i])
        assert f_k[i] == pytest.approx(factor * f_a[i])
    assert {"attn_norm", "mlp_residual"} <= set(names) & set(serving_kernels.REPLICATED)
    assert kernels.seconds(*totals) == pytest.approx(float(kernels.timing(*totals).seconds),
                                                     rel=1e-12)
    one = serving_kernels.replication(m, 1, "fp8", "fp8")
    assert (one == 1.0).all()
    assert sorted({float(w) for w in serving_kernels.byte_weights(m, c, 1, "fp8", "fp8")}) == \
        pytest.approx([1.0, 1 / 0.61, 1 / 0.43])     # residuals, activation, norms


def test_routed_experts_run_no_faster_than_a_measured_grouped_gemm():
    """On a GPU under "kernels" a mixture's routed experts reach at most EXPERT_GEMM_FRACTIONS
    of the ceiling at their tokens per expert (Mixtral on one H100: 2 of 8 experts a token, so
    1,024 tokens give each expert 256 and the cap 0.604; 16,384 give 4,096 and 0.765: below
    the tile model times the sustained share, so the measured fraction decides), the dense
    layers at most the sustained share, and the fraction grows with the tokens."""
    m, c = ak.models.get("mixtral-8x7b"), ak.chips.get("H100")
    g = serving_step.iteration_group(m, c, 1, ("fp8",) * 3, CONVENTIONS[0], "even", 0.0,
                                     "kernels")
    experts = [s[0] for s in g.shaped if s[3] < 1.0]
    dense = [s[0] for s in g.shaped if s[3] == 1.0]
    assert experts and dense
    for tokens, cap in ((1024, 0.604), (16384, 0.765)):
        peaks = g.peaks(tokens)
        assert max(peaks[i] for i in experts) == pytest.approx(cap * g.rates[0], rel=1e-9)
        assert max(peaks[i] for i in dense) <= calibration.matmul_sustained(c) * \
            g.rates[0] * (1 + 1e-12)
    fractions = serving_kernels.expert_fraction(np.array([1, 256, 362, 512, 100000]))
    assert fractions[0] == fractions[1] == 0.604 and fractions[-1] == 0.771
    assert 0.604 < fractions[2] < 0.618 and np.all(np.diff(fractions) >= 0)


def test_the_kernels_ceiling_agrees_with_measured_kernels_where_it_is_checked():
    """benchmarks/serving_ops_vs_vidur.py: one layer of Llama-2-70B at 1,024 tokens or more,
    priced under "kernels", within 12% of Vidur's measured H100 layer at every tensor-parallel
    degree (the flat achievable ceiling is 14-27% short of it); its matmuls there at the
    training calibration's sustained share, median within 5% of measured; its norms,
    activations, rotary and adds, median within 10% (0.55 before the measured norm and
    activation bandwidths: a consistency check, those shares are vidur's medians at 1,024 and
    4,096 tokens); the all-reduce's median within 10% at decode's sizes (the alpha-beta model
    alone is 60% short; from 1 MiB up it is the measured curve itself); dense fp8 GEMMs of 4,096 rows faster than CUTLASS 3.6's measured
    (median 0.82: the fp16-measured sustained share carried to fp8 is an assumption, and the
    small-K shapes run slower still)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import serving_ops_vs_vidur as check

    kernels, flat = check.headline("kernels"), check.headline("achievable")
    low, high = kernels["one layer, >= 1,024 tokens"][1:]
    assert 0.89 <= low and high <= 1.13
    assert flat["one layer, >= 1,024 tokens"][2] < 0.87
    assert kernels["matmuls, >= 1,024 tokens"][0] == pytest.approx(1.0, abs=0.05)
    assert kernels["other kernels, >= 1,024 tokens"][0] == pytest.approx(1.0, abs=0.1)
    assert flat["other kernels, >= 1,024 tokens"][0] < 0.6
    assert kernels["all-reduce, 64 KiB-8 MiB"][0] == pytest.approx(1.0, abs=0.1)
    assert flat["all-reduce, 64 KiB-8 MiB"][0] < 0.5
    assert 0.75 <= kernels["fp8 GEMM vs CUTLASS 3.6, M 4,096"][0] <= 0.9
