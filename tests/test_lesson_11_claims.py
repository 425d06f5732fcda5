"""Every quantitative claim in lessons/11_at_scale.ipynb, recomputed with the library.

Published figures the lesson quotes: DeepSeek-AI 2024, 'DeepSeek-V3 Technical Report'
(arXiv:2412.19437) section 2.1.2 (each token to at most M = 4 nodes; 8 of 256 routed experts, as
the catalog's config); Llama Team 2024, 'The Llama 3 Herd of Models' (arXiv:2407.21783) Table 4
(the 131,072-token stage on 16,384 H100 with CP 16, BF16 MFU 38%) and section 3.3.4 (466 job
interruptions in 54 days) — read from the repository's records of them (validation/) where it
keeps one; the scaling book, gpus.md, "Data Parallelism" (an MoE's per-GPU critical batch
(E/k)·C/W_node, "32 * 2475 = 79,200" for gpt-oss across H100 nodes, from 990e12 FLOP/s and 400e9
B/s per node); OpenAI 2025, gpt-oss model card (arXiv:2508.10925) section 2.1 (4 of 128 experts).

The numbers the prose states are read out of its markdown (tests/prose.py) and compared with the
library at the precision shown.
"""

from __future__ import annotations

import pytest

import accelkit as ak
from accelkit import collectives, parallel, training
from accelkit.parallel import Layout
from tests import prose

H100, V5P, GB200 = "H100", "TPU v5p", "GB200"


def _moe(name):
    model = ak.models.get(name)
    assert isinstance(model, ak.models.MoETransformer)
    return model


# -- 1. mixtures of experts --------------------------------------------------------------------

def test_total_over_active_grows_the_critical_batch():
    """'DeepSeek-V3 needs about seventeen times the dense model's tokens per chip', on both
    fabrics, and the factor is close to (and below) total ÷ active, itself below experts ÷ k."""
    (times,) = prose.shown("11", "DeepSeek-V3 needs about {} times the dense model's tokens per chip")
    n = 1024
    prose.check("11", "On {} chips:", n)
    for chip in (H100, V5P):
        ratio = (parallel.dp_critical_tokens_per_chip("deepseek-v3", chip, n)
                 / parallel.dp_critical_tokens_per_chip("llama-3-70b", chip, n))
        assert times.agrees(ratio), (chip, ratio)
    for name in ("mixtral-8x7b", "deepseek-v3"):
        m = _moe(name)
        factor = (parallel.dp_critical_tokens_per_chip(name, H100, n)
                  / parallel.dp_critical_tokens_per_chip("llama-3-70b", H100, n))
        assert 0.75 * m.params / m.active_params < factor < m.params / m.active_params
        assert m.params / m.active_params < m.n_experts / m.experts_per_token


def test_expert_parallelism_lowers_the_critical_batch():
    """'shard the routed experts over an ep group of 64 chips, so each holds and reduces only its
    share of them'"""
    (ep,) = prose.shown("11", "shard the routed experts over an ep group of {}")
    one = parallel.dp_critical_tokens_per_chip("deepseek-v3", H100, 1024)
    wide = parallel.dp_critical_tokens_per_chip("deepseek-v3", H100, 1024, ep=int(ep.value))
    assert wide < one / 5


def test_the_books_gpt_oss_figure_and_the_librarys():
    """'For gpt-oss-120b (4 of 128 experts) that is 32 × 2,475 = 79,200 tokens per GPU, from 990
    TFLOP/s over 400 GB/s. The same rule with the catalog's H100 (989 TFLOP/s, 8 NICs of 50 GB/s),
    beside the library's critical batch on 1,024 of them'; 'The bandwidth factors agree to within
    1%'; 'Stored ÷ computed is then 20.3, and the critical batch 37% below the book's.'"""
    oss, h100 = _moe("gpt-oss-120b"), ak.chips.get(H100)
    k, e = prose.shown("11", "For gpt-oss-120b ({} of {} experts)")
    assert (k.value, e.value) == (oss.experts_per_token, oss.n_experts)
    ratio, per_gpu, tokens, peak, egress = prose.shown(
        "11", "that is {} × {} = {} tokens per GPU, from {} TFLOP/s over {} GB/s")
    # the book's own arithmetic, from its own inputs (gpus.md)
    assert ratio.value == e.value / k.value and per_gpu.value == round(peak.value * 1e12 / (egress.value * 1e9))
    assert tokens.value == ratio.value * per_gpu.value
    n = 1024
    prose.check("11", "beside the library's critical batch on {} of them", n)
    prose.check("11", "the catalog's H100 ({} TFLOP/s, {} NICs of {} GB/s)", h100.peak_flops("bf16") / 1e12,
                h100.scaleup_domain_chips, h100.scaleout_bytes_per_second / 1e9)
    c = ak.experts.critical_batch_against_book("gpt-oss-120b", H100, n)
    assert c.experts_ratio == ratio.value
    assert c.book_tokens_per_chip == pytest.approx(tokens.value, rel=2e-3)  # 989 against 990 TFLOP/s
    (agree,) = prose.shown("11", "The bandwidth factors agree to within {}%")
    assert abs(c.flops_per_byte / c.book_flops_per_byte - 1) < agree.value / 100
    prose.check("11", "Stored ÷ computed is then {}", c.params_ratio)
    prose.check("11", "and the critical batch {}% below the book's", 100 * (1 - c.tokens_per_chip / c.book_tokens_per_chip))
    assert c.tokens_per_chip == parallel.dp_critical_tokens_per_chip("gpt-oss-120b", H100, n)
    # 'the catalog prices every layer dense': the window is in the source string, not the FLOPs
    assert prose.says("11", "every other layer attends to only the last 128 tokens")
    assert "sliding_window 128" in oss.source and "banded window" in oss.source


def test_an_all_to_all_on_one_wrapped_axis_is_v_over_8_whatever_n():
    """'the busiest link carries about n²/8 pieces of size V/n², so V/8 whatever n is'"""
    v5p = ak.chips.get(V5P)
    (eight,) = prose.shown("11", "about n²/{} pieces of size V/n², so V/8 whatever n is")
    for n in (4, 8, 16):
        r = collectives.all_to_all(V5P, array_bytes=1e9, over=n)
        assert r.network == "ICI"
        assert r.bandwidth_seconds == pytest.approx(1e9 / (eight.value * v5p.link_bytes_per_second))
    # the book's quarter of an all-gather on the same ring
    gather = collectives.all_gather(V5P, array_bytes=1e9, over=16)
    assert collectives.all_to_all(V5P, array_bytes=1e9, over=16).bandwidth_seconds == \
        pytest.approx(gather.bandwidth_seconds / 4 * 16 / 15)


def test_on_a_switch_each_gpu_sends_its_share_and_the_nic_is_a_ninth():
    """'each GPU sends its (n−1)/n² share through its own port, so the time falls about as 1/n —
    until the group leaves the 8-GPU node and the pieces go through the NICs, each about a ninth
    of a GPU's NVLink; past that jump it falls as 1/n again.'"""
    h100 = ak.chips.get(H100)
    for n in (2, 4, 8):
        r = collectives.all_to_all(H100, array_bytes=1e9, over=n)
        assert r.network == "NVLink"
        assert r.bandwidth_seconds == pytest.approx((n - 1) * 1e9 / (n * n * h100.scaleup_bytes_per_second))
    prose.check("11", "leaves the {}-GPU node and the pieces go through the NICs", h100.scaleup_domain_chips)
    assert prose.says("11", "each about a ninth of a GPU's NVLink")
    assert round(h100.scaleup_bytes_per_second / h100.scaleout_bytes_per_second) == 9
    t = {n: collectives.all_to_all(H100, array_bytes=1e9, over=n).seconds for n in (8, 16, 64, 512)}
    assert t[16] > t[8] and t[512] < t[64] < t[16]


def test_a_gb200_rack_runs_the_switch_to_72():
    """'A GB200 NVL72 rack puts 72 GPUs on one NVLink switch fabric, so the same fall runs to 72
    before the jump.'"""
    gb200 = ak.chips.get(GB200)
    prose.check("11", "A GB200 NVL72 rack puts {} GPUs on one NVLink switch fabric", gb200.scaleup_domain_chips)
    t = {n: collectives.all_to_all(GB200, array_bytes=1e9, over=n) for n in (8, 72, 144)}
    assert t[72].network == "NVLink" and t[72].seconds < t[8].seconds
    assert t[144].network != "NVLink" and t[144].seconds > t[72].seconds


def test_a_cube_of_axes_falls_as_n_to_the_two_thirds():
    """'spread the experts over a cube of three axes and the links that cross the middle grow as
    the cube's face, so the time falls about as n^(2/3)'"""
    times = {n: collectives.all_to_all(V5P, array_bytes=1e9, over=(n, n, n)).bandwidth_seconds
             for n in (4, 8, 16)}
    assert times[4] / times[16] == pytest.approx((16 ** 3 / 4 ** 3) ** (2 / 3), rel=0.01)
    assert times[4] / times[8] == pytest.approx((8 ** 3 / 4 ** 3) ** (2 / 3), rel=0.01)
    assert prose.says("11", "so the time falls about as n^(2/3)")


def test_node_limited_routing_figures():
    """'DeepSeek-V3 routes each token to 8 of its 256 experts but to at most 4 nodes'; 'Sent
    straight to each of its experts, a token crosses InfiniBand 7 times ...; one copy per node it
    needs cuts that to 4.59, and the 4-node limit to 3.5, half the first.'"""
    m = _moe("deepseek-v3")
    k, experts, nodes = prose.shown("11", "routes each token to {} of its {} experts but to at most {} nodes")
    assert (k.value, experts.value) == (m.experts_per_token, m.n_experts)
    assert nodes.value == 4  # DeepSeek-V3 report section 2.1.2: M = 4
    ep, n_nodes = prose.shown("11", "with the experts spread over {} H100s ({} nodes)")
    copies = {}
    for scheme, limit in (("per_expert", None), ("per_node", None), ("per_node", int(nodes.value))):
        d = ak.experts.dispatch("deepseek-v3", H100, tokens_per_chip=4096, ep=int(ep.value),
                                scheme=scheme, max_nodes=limit)
        assert d.nodes == n_nodes.value
        copies[scheme, limit] = d
    prose.check("11", "a token crosses InfiniBand {} times (its {} experts, {} in {} of them on another",
                copies["per_expert", None].remote_copies_per_token, m.experts_per_token,
                n_nodes.value - 1, n_nodes.value)
    prose.check("11", "one copy per node it needs cuts that to {}", copies["per_node", None].remote_copies_per_token)
    limited = copies["per_node", 4]
    prose.check("11", "and the {}-node limit to {}, half the first", nodes.value, limited.remote_copies_per_token)
    assert limited.remote_copies_per_token == copies["per_expert", None].remote_copies_per_token / 2
    assert limited.scaleout_seconds < copies["per_node", None].scaleout_seconds < \
        copies["per_expert", None].scaleout_seconds


def test_the_search_keeps_expert_groups_small():
    """'Mixtral's 8 experts fit on every chip once FSDP and tensor parallelism have sharded them,
    and DeepSeek-V3's expert group stays inside one NVLink node on the H100s.'"""
    prose.check("11", "Mixtral's {} experts fit on every chip", _moe("mixtral-8x7b").n_experts)
    for chip in (H100, V5P):
        best = parallel.best_layouts("mixtral-8x7b", chip, 2048, 4 * 2**20, top=1)[0]
        assert best.layout.ep == 1 and best.layout.fsdp * best.layout.tp > 1
    best = parallel.best_layouts("deepseek-v3", H100, 2048, 16 * 2**20, top=1)[0]
    ep = next(c for c in best.collectives if c.name == "ep")
    assert best.layout.ep > 1 and ep.network == "NVLink"


# -- 2. scale-up domains -----------------------------------------------------------------------

def test_the_domains_are_the_catalogs():
    """'8 GPUs on an HGX board, 72 in a GB200 NVL72 rack'; 'for a 16×16×24 slice, two faces of
    16×16 links'; 'a v5p pod is built of 4×4×4 cubes'"""
    prose.check("11", "({} GPUs on an HGX board, {} in a GB200 NVL72 rack)",
                ak.chips.get(H100).scaleup_domain_chips, ak.chips.get(GB200).scaleup_domain_chips)
    v5p = ak.chips.get(V5P)
    a, b, c, d, e = prose.shown("11", "for a {}×{}×{} slice, two faces of {}×{} links")
    assert (a.value, b.value, c.value) == v5p.max_slice_shape and (d.value, e.value) == v5p.max_slice_shape[:2]
    assert prose.says("11", "4×4×4 cubes joined by optical circuit switches")
    assert "4x4x4 cubes + OCS" in v5p.interconnect_topology


def test_what_fits_in_one_domain():
    """'A v5p slice holds DeepSeek-V3's whole state many times over; an 8-GPU node does not ... A
    GB200 NVL72 rack holds it in one domain (55 of its 72 GPUs)'"""
    need = {c: training.estimate(model="deepseek-v3", tokens=1e12, chip=c, n_chips=1).min_chips_to_fit
            for c in (V5P, H100, "B200", GB200)}
    assert ak.chips.get(V5P).scaleup_domain_chips > 10 * need[V5P]
    # 'bf16 weights and gradients, fp32 master weights and Adam moments: 16 bytes a parameter'
    (per_param,) = prose.shown("11", "Adam moments: {} bytes a parameter")
    for chip in (V5P, GB200):
        stated = training.estimate(model="deepseek-v3", tokens=1e12, chip=chip, n_chips=1,
                                   weight_bytes_per_param=2.0, grad_bytes_per_param=2.0,
                                   optimizer_bytes_per_param=per_param.value - 4.0)
        assert stated.min_chips_to_fit == need[chip]
    assert need[H100] > 8 and need["B200"] > 8
    prose.check("11", "({} of its {} GPUs)", need[GB200], ak.chips.get(GB200).scaleup_domain_chips)


def test_multislice_is_whole_slices_over_dcn():
    slices, shape = collectives.group_layout(V5P, 18432)
    assert slices * ak.chips.get(V5P).scaleup_domain_chips == 18432 and slices == 3
    r = collectives.all_reduce(V5P, array_bytes=2e9, over=18432)
    assert "DCN" in r.network


# -- 3. long context ---------------------------------------------------------------------------

def _no_cp():
    return parallel.train_step("llama-3.1-405b", H100,
                               Layout(dp=16, tp=8, pp=16, microbatch_tokens=131072, recompute="full",
                                      interleave=4), batch_tokens=16 * 131072, seq_len=131072)


def test_the_scores_grow_with_the_square_and_one_sequence_fits_with_fused_attention():
    """'the scores of one 131,072-token sequence are 256 times an 8K one's'; written to memory they
    would not fit, with a fused kernel the step keeps none; 'Laid out as its 8K stage was, TP 8 and
    PP 16 with one sequence per micro-batch (on 2,048 of the GPUs, for 16 sequences a step)': it
    fits, but one micro-batch for 16 stages leaves 'the bubble takes 78.9% of the step (MFU
    12.9%)', on DP 16 as on DP 128."""
    import dataclasses

    base = ak.models.get("llama-3.1-405b").seq_len
    seq, times = prose.shown("11", "the scores of one {}-token sequence are {} times an 8K one's")
    assert base == 8192 and times.value == (seq.value / base) ** 2
    step = _no_cp()
    prose.check("11", "(on {} of the GPUs, for {} sequences a step)", step.layout.chips,
                step.batch_tokens / step.seq_len)
    assert (step.layout.tp, step.layout.pp) == (8, 16) and step.fits
    assert ak.frameworks.get("default").attention == "fused"
    materialized = dataclasses.replace(ak.frameworks.get("default"), attention="materialized")
    written = parallel.train_step("llama-3.1-405b", H100, step.layout, batch_tokens=step.batch_tokens,
                                  seq_len=131072, framework=materialized)
    assert not written.fits and written.activation_bytes_per_chip > 10 * step.activation_bytes_per_chip
    # what forces CP is time: one micro-batch per replica for 16 stages
    assert step.microbatches == 1
    prose.check("11", "the bubble takes {}% of the step (MFU {}%)", 100 * step.bubble_fraction, 100 * step.mfu)
    wide = parallel.train_step("llama-3.1-405b", H100, dataclasses.replace(step.layout, dp=128),
                               batch_tokens=16 * 2**20, seq_len=131072)
    assert wide.layout.chips == 16384 and wide.microbatches == 1 and wide.fits
    assert round(100 * wide.bubble_fraction, 1) == round(100 * step.bubble_fraction, 1)
    from validation.published import llama3_long_context_step

    batch = llama3_long_context_step("predicted").step.batch_tokens  # Llama 3's, as recorded
    prose.check("11", "batch at this stage is {}M tokens, {} sequences", batch / 2**20, batch / 131072)
    assert wide.batch_tokens == batch


def test_cp16_fills_the_pipeline_and_hides_its_ring():
    """'Sixteen-way CP gives each replica 16 sequences for its 16 stages, so the bubble falls from
    78.9% to 19.0% and the MFU rises from 12.9% to 49.7% (the activations per GPU fall too, from 21
    to 4.8 GB), and the ring's traffic hides behind attention's FLOPs'; '(16 sequences per replica
    for 16 stages)'"""
    layout = Layout(dp=8, tp=8, cp=16, pp=16, microbatch_tokens=131072, recompute="full", interleave=4)
    step = parallel.train_step("llama-3.1-405b", H100, layout, batch_tokens=16 * 2**20, seq_len=131072)
    assert step.fits and step.layout.chips == 16384
    ring = next(c for c in step.collectives if c.name == "cp")
    assert ring.group_chips == 16 and ring.exposed_seconds == 0.0
    prose.check("11", "({} sequences per replica for {} stages)", step.microbatches, step.layout.pp)
    prose.check("11", "gives each replica {} sequences for its {} stages", step.microbatches, step.layout.pp)
    flat = _no_cp()
    prose.check("11", "the bubble falls from {}% to {}% and the MFU rises from {}% to {}%",
                100 * flat.bubble_fraction, 100 * step.bubble_fraction, 100 * flat.mfu, 100 * step.mfu)
    prose.check("11", "the activations per GPU fall too, from {} to {} GB",
                flat.activation_bytes_per_chip / 1e9, step.activation_bytes_per_chip / 1e9)
    assert step.bubble_fraction < flat.bubble_fraction and step.mfu > flat.mfu


# -- 4. goodput --------------------------------------------------------------------------------

def _goodput(n):
    return ak.goodput.goodput(chips=n, failures_per_chip_hour=ak.goodput.llama3_failures_per_chip_hour(),
                              checkpoint_seconds=60, restart_seconds=600)


def test_the_interruptions_are_the_records():
    """'Llama 3 counts 466 job interruptions in a 54-day snapshot of pre-training on 16,384 GPUs'"""
    from validation.totals import PUBLISHED_RUNS

    run = next(r for r in PUBLISHED_RUNS if r.model == "llama-3.1-405b")
    count, days, gpus = prose.shown("11", "Llama 3 counts {} job interruptions in a {}-day snapshot of "
                                          "pre-training on {} GPUs")
    assert f"{count.text} job interruptions in a {days.text}-day" in run.note
    record = ak.goodput.LLAMA3
    assert (count.value, days.value, gpus.value) == (record["interruptions"], record["days"], record["gpus"])
    assert gpus.value == run.n_chips


def test_goodput_at_the_assumed_save_and_restart():
    """'The save (60 s) and the restart (10 minutes) are assumptions ... At them the model keeps
    84.8% of 16,384 GPUs' time, below the "higher than 90%" effective training time Llama 3
    reports'; 'an interruption every 2.78 hours on 16,384 GPUs is one every 0.348 hours on 131,072'"""
    save, restart = prose.shown("11", "The save ({} s) and the restart ({} minutes) are assumptions")
    g = _goodput(16384)
    assert (g.checkpoint_seconds, g.restart_seconds) == (save.value, restart.value * 60)
    prose.check("11", "the model keeps {}% of {} GPUs' time", 100 * g.goodput, g.chips)
    prose.check("11", 'below the "higher than {}%" effective training time', 100 * ak.goodput.LLAMA3["effective_training_time"])
    assert g.goodput < ak.goodput.LLAMA3["effective_training_time"]
    big = _goodput(131072)
    prose.check("11", "an interruption every {} hours on {} GPUs is one every {} hours on {}",
                g.job_mtbf_seconds / 3600, g.chips, big.job_mtbf_seconds / 3600, big.chips)
    assert big.goodput < g.goodput < _goodput(1024).goodput


def test_the_spares_are_the_recovery_records():
    """'A GB200 NVL72 rack runs its job on 16 of its 18 compute trays'; 'a TPU7x superpod keeps 130
    of its 144 cubes for the job'"""
    used, trays = prose.shown("11", "runs its job on {} of its {} compute trays")
    assert ak.goodput.RECOVERY["gpu_hot_spares"].spare_fraction == pytest.approx(1 - used.value / trays.value)
    kept, cubes = prose.shown("11", "keeps {} of its {} cubes for the job")
    assert ak.goodput.RECOVERY["tpu_ocs_reroute"].spare_fraction == pytest.approx(1 - kept.value / cubes.value)


# -- 5. precision ------------------------------------------------------------------------------

def test_the_formats_gain_only_where_the_hardware_has_them():
    """'the v5p's datasheet gives fp8 its bf16 rate, and the catalog has no int8 peak for TPU7x'"""
    v5p, tpu7x = ak.chips.get(V5P), ak.chips.get("TPU7x")
    assert v5p.peak_flops("fp8") == v5p.peak_flops("bf16") < v5p.peak_flops("int8")
    assert "int8" not in tpu7x.dtypes and "fp8" in tpu7x.dtypes


def test_the_recipes_say_what_the_lesson_says():
    """Each figure of section 5's bullets is in the recipe the library keeps for it."""
    q = ak.quality
    (size,) = prose.shown("11", "matched 16-bit quality on GPT models up to {}B parameters")
    assert f"{size.text}B" in q.get("fp8-tensor-delayed").quality and q.get("fp8-tensor-delayed").verdict == "matches"
    tile, block, gap = prose.shown("11", "per 1×{} tile of activations and per 128×{} block of weights and kept "
                                         "its loss within {}% of BF16")
    block_recipe = q.get("fp8-block")
    assert f"1x{tile.text} tile" in block_recipe.tensors and f"128x{block.text} block" in block_recipe.tensors
    assert f"{gap.text}%" in block_recipe.quality
    mx, nv = prose.shown("11", "one per block of {} values (MX) or of {} (NVFP4")
    assert f"block of {mx.text} values" in q.get("mxfp8").scaling
    assert f"block of {nv.text} values" in q.get("nvfp4").scaling
    assert (q.get("mxfp8").verdict, q.get("nvfp4").verdict) == ("matches", "small loss")
    assert q.get("int8-aqt").verdict == "matches" and "v5p" in q.get("int8-aqt").quality
    (params,) = prose.shown("11", "collapse from about {}B parameters on")
    assert f"{params.text}B" in q.get("int8-activations-naive").quality
    assert q.get("int8-activations-naive").verdict == "hurts"
    assert q.get("kv-int4-per-token-keys").verdict == "hurts"
    (bits,) = prose.shown("11", "Weights tolerate {} bits with per-group scales")
    assert f"int{bits.text}" in q.get("int4-weights").formats and q.get("int4-weights").verdict == "small loss"


def test_the_validation_row_for_the_131k_stage():
    """'reports a BF16 MFU of 38% for it'; 'The model predicts the stage faster than it ran: 44.5%
    against Llama 3's 38%, +17.1%', priced as the paper states the run (K/V all-gathered, exposed;
    gradients sharded) with no recomputation, the fastest that fits — the repository's validation
    row (validation/published.py), its kernels as the engines predict."""
    from accelkit import frameworks
    from validation.published import LLAMA3_LONG_SEQ_LEN, llama3_long_context_step

    row = llama3_long_context_step("predicted")
    predicted = row.step.mfu * row.flops_ratio
    prose.check("11", "reports a BF16 MFU of {}% for it", 100 * row.published_mfu)
    assert predicted > row.published_mfu  # "faster than it ran"
    prose.check("11", "faster than it ran: {}% against Llama 3's {}%, +{}%",
                100 * predicted, 100 * row.published_mfu, 100 * (predicted / row.published_mfu - 1))
    meta = frameworks.get("meta-llama3")
    assert not meta.cp_overlap and meta.grad_reduce == "microbatch"
    cp = next(c for c in row.step.collectives if c.name == "cp")
    assert cp.exposed_seconds == pytest.approx(cp.seconds) and cp.seconds > 0  # all-gathered
    assert row.step.layout.recompute == "none" and row.step.fits
    assert row.step.layout.cp == 16 and row.step.seq_len == LLAMA3_LONG_SEQ_LEN
    prose.check("11", "at {} tokens on {} H100", LLAMA3_LONG_SEQ_LEN, row.step.layout.chips)
    assert prose.says("11", "Llama 3's layout for this stage, CP 16")


def test_in_network_reduction_is_the_measured_benefit():
    """'(nccl-tests on 8 H100: about 370 GB/s of bus bandwidth for the ring, 480 with NVLS, none on
    4 GPUs or fewer)'; 'On one 8-GPU node NVLS makes a 1 GB all-reduce 1.30 times faster (the
    ideal, each GPU sending the array once instead of 2(n−1)/n times, would be 1.75)'; refused on
    a TPU."""
    from accelkit import in_network

    gpus, ring, nvls, few = prose.shown("11", "(nccl-tests on {} H100: about {} GB/s of bus bandwidth for the "
                                              "ring, {} with NVLS, none on {} GPUs or fewer)")
    assert ring.value == in_network.RING_BUSBW_GB_S and nvls.value == in_network.NVLS_BUSBW_GB_S[int(gpus.value)]
    assert in_network.nvls_speedup(int(few.value)) == 1.0 < in_network.nvls_speedup(int(few.value) + 1)
    r = in_network.all_reduce(H100, array_bytes=1e9, over=8)
    n = 8
    prose.check("11", "NVLS makes a 1 GB all-reduce {} times faster (the ideal, each GPU sending the array once "
                      "instead of 2(n−1)/n times, would be {})", r.speedup, 2 * (n - 1) / n)
    assert not in_network.all_reduce(H100, array_bytes=1e9, over=64, scheme="nvls+ib_sharp").assumptions == ()
    with pytest.raises(ValueError, match="no switch"):
        in_network.all_reduce(V5P, array_bytes=1e9, over=8)
