"""accelkit.kernels and accelkit.frameworks (issue 21, items 2-3): kernels as they run, and
each framework's choices as named options of the step.

Independent references: the tile/wave model (tests/test_mfu.py) and the measured ceilings
(tests/test_achievable.py); here, that each kernel is priced as its module doc says, and that
each framework choice moves the step the way it should, by the amount the formula gives.
"""

from __future__ import annotations

import dataclasses

import pytest

import accelkit as ak
from accelkit import calibration, collectives, frameworks, kernels
from accelkit.parallel import Layout, best_layouts, predicted_mfu, train_step

M = 2**20


def test_matmuls_run_under_the_measured_ceiling_not_the_datasheet() -> None:
    achievable = kernels.microbatch("llama-3-70b", "H100", tp=8, microbatch_tokens=8192)
    datasheet = kernels.microbatch("llama-3-70b", "H100", tp=8, microbatch_tokens=8192,
                                   ceilings="datasheet")
    h100 = ak.chips.get("H100")
    ratio = datasheet.matmul_seconds / achievable.matmul_seconds
    # compute-bound matmuls: their time scales by the ceiling's fraction of the peak, times the
    # share library kernels sustain at model shapes (accelkit.calibration, vidur's profiles)
    assert ratio == pytest.approx(h100.achievable_fraction("achievable_flops:bf16")
                                  * calibration.matmul_sustained(h100), rel=0.02)
    assert achievable.efficiency < datasheet.efficiency < 1


def test_small_skinny_matmuls_fall_below_the_ceiling() -> None:
    big = kernels.microbatch("llama-3-70b", "H100", tp=1, microbatch_tokens=8192)
    small = kernels.microbatch("llama-3-70b", "H100", tp=8, microbatch_tokens=8192 // 8,
                               seq_len=1024)
    assert small.matmul_efficiency < big.matmul_efficiency


def test_materialized_attention_pays_for_its_scores_in_hbm() -> None:
    fw = frameworks.get("megatron-2021")
    mat = kernels.microbatch("gpt-3-175b", "A100", tp=8, microbatch_tokens=2048, framework=fw)
    fused = kernels.microbatch("gpt-3-175b", "A100", tp=8, microbatch_tokens=2048,
                               framework=frameworks.Framework("fused", sequence_parallel=False,
                                                              dropout=True, grad_bytes=4.0))
    assert mat.attention_seconds > 3 * fused.attention_seconds
    # the scores' traffic alone: s^2 per local head per layer, bf16, several passes
    m = ak.models.get("gpt-3-175b")
    scores = 2048 * 2048 * (m.heads // 8) * m.layers * 2.0
    a100 = ak.chips.get("A100")
    assert mat.attention_seconds > 4 * scores / a100.achievable_hbm_bytes_per_second


def test_recomputation_and_sequence_parallelism_move_the_non_matmul_kernels() -> None:
    def vec(**kw) -> float:
        return kernels.microbatch("gpt-3-175b", "H100", tp=8, microbatch_tokens=2048,
                                  **kw).vector_seconds
    assert vec(recompute="full") > vec(recompute="selective") == vec(recompute="none")
    no_sp = frameworks.Framework("no-sp", sequence_parallel=False)
    assert vec(framework=no_sp) > 2 * vec()


def test_tp_overlap_hides_the_tensor_parallel_collectives() -> None:
    layout = Layout(dp=8, tp=8, microbatch_tokens=8192, recompute="selective")
    exposed = train_step("llama-3-70b", "H100", layout, 64 * 8192,
                         compute_efficiency="predicted")
    hidden = train_step("llama-3-70b", "H100", layout, 64 * 8192,
                        compute_efficiency="predicted",
                        framework=frameworks.Framework("tp-overlap", tp_overlap=True))
    tp_exposed = next(c for c in exposed.collectives if c.name == "tp")
    tp_hidden = next(c for c in hidden.collectives if c.name == "tp")
    assert tp_exposed.exposed_seconds == pytest.approx(tp_exposed.seconds)
    assert tp_hidden.exposed_seconds == 0.0 and tp_hidden.seconds == tp_exposed.seconds
    # hidden, the all-reduces still take their share of the GPU while they run (Calculon's
    # processor_usage on NVLink), so overlap saves the rest of their time, not all of it
    usage = calibration.processor_usage(ak.chips.get("H100"), "NVLink")
    assert usage == 0.15
    assert exposed.seconds - hidden.seconds == pytest.approx(tp_exposed.seconds * (1 - usage),
                                                             rel=1e-6)


@pytest.mark.parametrize("recompute, share", [("full", 1 / 3), ("selective", 1 / 4)])
def test_overlap_scoped_to_the_all_gathers_leaves_the_forward_reduce_scatters_exposed(
        recompute: str, share: float) -> None:
    """XLA told to decompose all-gather+einsum but not einsum+reduce-scatter: each forward
    reduce-scatter (half of a forward all-reduce-equivalent, again under full recomputation)
    is on the critical path; the rest hides. 2 forward + 2 backward (+ 2 recomputed) all-reduce-
    equivalents a layer, so a quarter of the TP traffic (a third under full recomputation)."""
    layout = Layout(fsdp=8, tp=8, microbatch_tokens=8 * 2048, recompute=recompute)
    all_hidden = frameworks.Framework("all", tp_overlap=True)
    gathers = frameworks.Framework("gathers", tp_overlap=True, tp_overlap_scope="all-gathers")
    none = frameworks.Framework("none", tp_overlap=False)
    steps = {fw.name: train_step("gpt-3-175b", "TPU v5p", layout, 64 * 2048,
                                 compute_efficiency="predicted", framework=fw)
             for fw in (all_hidden, gathers, none)}
    tp = {name: next(c for c in st.collectives if c.name == "tp") for name, st in steps.items()}
    assert tp["all"].seconds == tp["gathers"].seconds == tp["none"].seconds > 0
    assert tp["all"].exposed_seconds == 0.0
    assert tp["gathers"].exposed_seconds == pytest.approx(share * tp["gathers"].seconds, rel=1e-9)
    assert tp["none"].exposed_seconds == pytest.approx(tp["none"].seconds)
    assert steps["all"].seconds < steps["gathers"].seconds < steps["none"].seconds
    # a TPU's collectives take no compute share (no processor_usage figure for ICI), so the
    # scoped step costs exactly the exposed reduce-scatters more than the fully hidden one
    assert steps["gathers"].seconds - steps["all"].seconds == pytest.approx(
        tp["gathers"].exposed_seconds, rel=1e-6)
    with pytest.raises(ValueError, match="tp_overlap_scope"):
        frameworks.Framework("bad", tp_overlap=True, tp_overlap_scope="reduce-scatters")


def test_balanced_end_stages_hold_one_layer_fewer_in_memory_too() -> None:
    """Llama 3's first and last pipeline stages hold one layer fewer (its memory balancing): the
    first stage's activations, which 1F1B keeps for every micro-batch in flight, are those of
    its 7 layers, not the 8 of a 126-layer model's middle stages. At pp 16 that no longer makes
    the first stage the busiest: the second holds 8 layers for 15 micro-batches (Megatron-core's
    warm-up, pp - r), 120 layer-micro-batches against the first's 7 x 16 = 112, so the balanced
    pipeline's busiest chip holds 15/16 of the even one's 8 x 16."""
    layout = Layout(dp=64, tp=8, pp=16, microbatch_tokens=8192, recompute="none")
    balanced = frameworks.get("meta-llama3")
    even = frameworks.Framework("even", **{k: getattr(balanced, k) for k in frameworks.CHOICES
                                           if k != "balanced_end_stages"})
    steps = {fw.name: train_step("llama-3.1-405b", "H100", layout, 16 * 2**20,
                                 compute_efficiency="predicted", framework=fw)
             for fw in (balanced, even)}
    b, e = steps["meta-llama3"], steps["even"]
    assert b.state_bytes_per_chip == e.state_bytes_per_chip
    assert b.activation_bytes_per_chip < e.activation_bytes_per_chip
    # no recomputation, so no working set: only the layer-micro-batches held move
    assert b.activation_bytes_per_chip / e.activation_bytes_per_chip == pytest.approx(15 / 16,
                                                                                     rel=0.01)
    # with the gradients sharded as Llama 3's FSDP shards them (grad_reduce "microbatch") the
    # balanced pipeline fits without recomputation; holding whole gradients it does not
    assert b.fits
    whole = train_step("llama-3.1-405b", "H100", layout, 16 * 2**20, compute_efficiency="predicted",
                       framework=dataclasses.replace(balanced, name="whole", grad_reduce="step"))
    assert not whole.fits and whole.activation_bytes_per_chip == b.activation_bytes_per_chip
    # where pp is below the layers a stage the first stage still binds: 31 x 4 > 32 x 3, so the
    # balanced pipeline holds 31/32 of the even one
    shallow = Layout(dp=256, tp=8, pp=4, microbatch_tokens=8192, recompute="none")
    b, e = (train_step("llama-3.1-405b", "H100", shallow, 16 * 2**20, framework=fw)
            for fw in (balanced, even))
    assert b.activation_bytes_per_chip / e.activation_bytes_per_chip == pytest.approx(
        31 / 32, rel=0.01)


def test_maxtext_presets_read_their_scripts_xla_flags() -> None:
    """Google's MLPerf v4.0 scripts decompose the all-gathers only; the README's v5p configs set
    neither decomposition flag, so their TP collectives wait on the critical path."""
    mlperf, readme = frameworks.get("maxtext"), frameworks.get("maxtext-readme")
    assert (mlperf.tp_overlap, mlperf.tp_overlap_scope) == (True, "all-gathers")
    assert "decompose_einsum_reduce_scatter" in mlperf.source("tp_overlap_scope")
    assert "ASSUMPTION" in mlperf.source("tp_overlap_scope")
    assert readme.tp_overlap is False and "configs/v5p/32b.sh" in readme.source("tp_overlap")


def test_dp_without_overlap_and_fp32_gradients_cost_what_they_say() -> None:
    layout = Layout(dp=64, microbatch_tokens=8192)
    base = train_step("llama-3-8b", "H100", layout, 64 * 8 * 8192, compute_efficiency="predicted")
    fp32 = frameworks.Framework("fp32-after", dp_overlap=False, grad_bytes=4.0)
    after = train_step("llama-3-8b", "H100", layout, 64 * 8 * 8192,
                       compute_efficiency="predicted", framework=fp32)
    g0 = next(c for c in base.collectives if c.name == "dp_grads")
    g1 = next(c for c in after.collectives if c.name == "dp_grads")
    assert g1.array_bytes == pytest.approx(2 * g0.array_bytes)
    assert g1.exposed_seconds == pytest.approx(g1.seconds)
    assert after.gradient_bytes_per_chip == pytest.approx(2 * base.gradient_bytes_per_chip)


def test_the_optimizer_step_is_a_memory_bound_kernel() -> None:
    layout = Layout(dp=8, microbatch_tokens=8192)
    step = train_step("llama-3-8b", "H100", layout, 8 * 8192, compute_efficiency="predicted")
    params = ak.models.get("llama-3-8b").params
    expected = params / 8 * (ak.step_cost.ADAM_STEP_BYTES + 2 * 2.0) / ak.chips.get(
        "H100").achievable_hbm_bytes_per_second
    assert step.optimizer_seconds == pytest.approx(expected, rel=1e-6)
    replicated = train_step("llama-3-8b", "H100", layout, 8 * 8192,
                            compute_efficiency="predicted",
                            framework=frameworks.Framework("zero0", distributed_optimizer=False))
    assert replicated.optimizer_seconds == pytest.approx(8 * step.optimizer_seconds)
    assert replicated.optimizer_bytes_per_chip == pytest.approx(8 * step.optimizer_bytes_per_chip)


def test_collectives_at_achievable_bandwidth() -> None:
    data = collectives.all_reduce("A100", array_bytes=1e9, over=8)
    real = collectives.all_reduce("A100", array_bytes=1e9, over=8, bandwidth="achievable")
    a100 = ak.chips.get("A100")
    assert real.bandwidth_seconds / data.bandwidth_seconds == pytest.approx(
        a100.scaleup_bytes_per_second / a100.achievable_scaleup_bytes_per_second)
    v5p = collectives.all_gather("v5p", array_bytes=1e9, over=16, bandwidth="achievable")
    assert v5p.bandwidth_seconds > collectives.all_gather("v5p", array_bytes=1e9,
                                                          over=16).bandwidth_seconds
    with pytest.raises(ValueError, match="bandwidth"):
        collectives.all_reduce("A100", array_bytes=1e9, over=8, bandwidth="peak")


def test_a_tpu_slice_is_the_shape_it_is_bought_as() -> None:
    assert collectives.slice_shape("v5e", 8) == (4, 2)
    assert collectives.slice_shape("H100", 8) == 8
    line = collectives.all_reduce("v5e", array_bytes=1e9, over=8)
    sliced = collectives.all_reduce("v5e", array_bytes=1e9, over=collectives.slice_shape("v5e", 8))
    assert sliced.seconds < line.seconds  # two axes' links, not one line's
    # a training group that is the whole job takes the slice shape too
    step = train_step("llama-3-8b", "v5e", Layout(tp=8, microbatch_tokens=8192), 8192)
    tp = next(c for c in step.collectives if c.name == "tp")
    assert tp.network == "ICI"


def test_fits_uses_usable_hbm() -> None:
    h100 = ak.chips.get("H100")
    step = train_step("llama-3-8b", "H100", Layout(dp=8, microbatch_tokens=8192), 8 * 8192)
    assert step.usable_hbm_bytes == pytest.approx(h100.usable_hbm_bytes)
    assert step.fits == (step.memory_bytes_per_chip <= h100.usable_hbm_bytes)


def test_frameworks_are_named_with_sources_and_refuse_bad_input() -> None:
    for name in frameworks.names():
        fw = frameworks.get(name)
        for choice in frameworks.CHOICES:
            assert fw.source(choice).strip()
    assert "overlap_param_sync" in frameworks.get("nemo-2024").source("param_sync_overlap")
    assert frameworks.get(None).name == "default"
    with pytest.raises(ValueError, match="framework"):
        frameworks.get("megatron")
    with pytest.raises(TypeError, match="framework"):
        frameworks.get(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="attention"):
        frameworks.Framework("x", attention="flash")
    with pytest.raises(ValueError, match="grad_bytes"):
        frameworks.Framework("x", grad_bytes=3.0)
    with pytest.raises(TypeError, match="tp_overlap"):
        frameworks.Framework("x", tp_overlap="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ceilings"):
        kernels.microbatch("llama-3-8b", "H100", microbatch_tokens=8192, ceilings="peak")


def test_best_layouts_and_predicted_mfu_take_the_framework() -> None:
    fw = "nemo-2024"
    best = best_layouts("llama-3-8b", "H100", 64, 4 * M, top=2, compute_efficiency="predicted",
                        framework=fw)
    assert best and all(b.framework == fw for b in best)
    again = train_step("llama-3-8b", "H100", best[0].layout, 4 * M,
                       compute_efficiency="predicted", framework=fw)
    assert again.seconds == pytest.approx(best[0].seconds)
    pred = predicted_mfu("llama-3-8b", "H100", best[0].layout, 4 * M, framework=fw)
    assert pred.step.seconds == pytest.approx(best[0].seconds)


def test_forward_only_is_the_forward_pass() -> None:
    """An evaluation's forward pass: about a third of a training micro-batch's kernel time
    (no backward matmuls, no weight-gradient traffic), the forward FLOPs as its model FLOPs."""
    for chip, dtype, framework in (("H100", "fp8", "nemo-2024"), ("A100", "bf16",
                                                                   "megatron-2021")):
        train = kernels.microbatch("gpt-3-175b", chip, tp=4, microbatch_tokens=4096,
                                   dtype=dtype, framework=framework)
        fwd = kernels.microbatch("gpt-3-175b", chip, tp=4, microbatch_tokens=4096,
                                 dtype=dtype, framework=framework, forward_only=True)
        assert 0.28 < fwd.seconds / train.seconds < 0.38
        assert fwd.model_flops == pytest.approx(train.model_flops / 3, rel=0.02)
        assert 0 < fwd.efficiency < 1
    with pytest.raises(TypeError, match="forward_only"):
        kernels.microbatch("gpt-3-175b", "H100", microbatch_tokens=2048, forward_only=1)


# -- Transformer Engine's TP overlap as NeMo's MLPerf config sets it --------------------------

def _without_te(name: str) -> frameworks.Framework:
    import dataclasses
    return dataclasses.replace(frameworks.get(name), name=f"{name}-generic", te_overlap=())


def test_nemo_names_each_gemm_overlap_as_the_submission_configures_it() -> None:
    fw = frameworks.get("nemo-2024")
    assert {g.gemm for g in fw.te_overlap} == set(frameworks.TE_GEMMS)
    proj = fw.gemm_overlap("proj_fprop")
    assert proj is not None and (proj.method, proj.num_splits, proj.num_sm,
                                 proj.set_sm_margin) == ("pipeline", 4, 24, True)
    assert proj.pieces(4) == 4 and proj.gemm_sms(132) == 108
    ring = fw.gemm_overlap("qkv_fprop")
    assert ring is not None and ring.pieces(4) == 4 and ring.gemm_sms(132) == 132
    bulk = fw.gemm_overlap("fc1_wgrad")
    assert bulk is not None and bulk.pieces(8) == 1 and bulk.gemm_sms(132) == 132
    assert "h100tp4mbs2.yaml" in fw.source("te_overlap")
    assert "comm_gemm_overlap.h" in fw.source("te_overlap")
    assert frameworks.get("maxtext").te_overlap == ()
    with pytest.raises(ValueError, match="method"):
        frameworks.GemmOverlap("qkv_fprop", "ring", num_sm=1, set_sm_margin=False)
    with pytest.raises(ValueError, match="pipeline"):
        frameworks.GemmOverlap("qkv_fprop", "pipeline", num_sm=1, set_sm_margin=False)
    with pytest.raises(ValueError, match="gemm"):
        frameworks.GemmOverlap("fc3_fprop", "bulk", num_sm=1, set_sm_margin=False)
    with pytest.raises(ValueError, match="tp_overlap"):
        frameworks.Framework("x", tp_overlap=False, te_overlap=fw.te_overlap)
    with pytest.raises(ValueError, match="twice"):
        frameworks.Framework("x", tp_overlap=True, te_overlap=(proj, proj))
    with pytest.raises(TypeError, match="te_overlap"):
        frameworks.Framework("x", tp_overlap=True, te_overlap=[proj])  # type: ignore[arg-type]


def test_a_gemm_on_fewer_sms_runs_their_waves_at_their_share() -> None:
    import numpy as np
    h100 = ak.chips.get("H100")
    one = [np.array([v]) for v in (4096, 12288, 3072, 1)]
    whole = ak.mfu.matmul_efficiencies(h100, "fp8", *one)[0]
    assert ak.mfu.matmul_efficiencies(h100, "fp8", *one, sms=np.array([132]))[0] == \
        pytest.approx(whole)
    # 32 x 48 = 1,536 tiles of 128 x 256: 12 waves on 132 SMs, 15 on the 108 that a 24-SM
    # margin leaves, which reach at most 108 / 132 of the chip
    fewer = ak.mfu.matmul_efficiencies(h100, "fp8", *one, sms=np.array([108]))[0]
    assert whole == pytest.approx(1536 / (12 * 132))
    assert fewer == pytest.approx(1536 / (15 * 108) * 108 / 132)


def test_te_pieces_and_margins_lengthen_the_matmuls_only_where_they_apply() -> None:
    kw = dict(tp=4, microbatch_tokens=2048, dtype="fp8")
    te = kernels.microbatch("gpt-3-175b", "H100", framework="nemo-2024", **kw)
    generic = kernels.microbatch("gpt-3-175b", "H100", framework=_without_te("nemo-2024"), **kw)
    assert te.matmul_seconds > generic.matmul_seconds
    assert te.attention_seconds == generic.attention_seconds
    assert te.vector_seconds == generic.vector_seconds
    assert te.model_flops == generic.model_flops and te.matmul_efficiency < generic.matmul_efficiency
    # no TP group, or a TPU: no userbuffers, the same kernels
    for chip, tp in (("H100", 1), ("TPU v5p", 4)):
        a = kernels.microbatch("gpt-3-175b", chip, tp=tp, microbatch_tokens=2048,
                               framework="nemo-2024")
        b = kernels.microbatch("gpt-3-175b", chip, tp=tp, microbatch_tokens=2048,
                               framework=_without_te("nemo-2024"))
        assert a.seconds == b.seconds


@pytest.mark.parametrize("recompute, share", [("selective", (0.5 / 4 + 0.5 / 4) / 4),
                                              ("full", 2 * (0.5 / 4 + 0.5 / 4) / 6)])
def test_te_exposes_each_forward_reduce_scatters_last_piece(recompute: str, share: float) -> None:
    """proj_fprop (pipeline, 4 pieces) and fc2_fprop (ring exchange, tp = 4 pieces) each leave
    1/4 of a reduce-scatter (half an all-reduce-equivalent) after their GEMM; the step counts
    4 all-reduce-equivalents a layer (6 under full recomputation, which reruns the forward)."""
    layout = Layout(dp=8, tp=4, microbatch_tokens=2048, recompute=recompute)
    step = train_step("gpt-3-175b", "H100", layout, 64 * 2048, dtype="fp8",
                      compute_efficiency="predicted", framework="nemo-2024")
    tp = next(c for c in step.collectives if c.name == "tp")
    assert tp.seconds > 0
    assert tp.exposed_seconds == pytest.approx(share * tp.seconds, rel=1e-9)


def test_te_replaces_calculons_share_for_the_tp_traffic_with_its_bulk_sms() -> None:
    """A bulk collective's SMs run beside a GEMM on all of them: each SM more it takes costs
    the hidden TP traffic 1/132 of the chip, over the mean of the 10 named collectives (4 of
    them bulk). Calculon's generic 0.15 is not added on top."""
    import dataclasses
    layout = Layout(dp=8, tp=4, microbatch_tokens=2048, recompute="selective")
    te = frameworks.get("nemo-2024")
    wider = dataclasses.replace(te, name="bulk-8", te_overlap=tuple(
        dataclasses.replace(g, num_sm=8) if g.method == "bulk" else g for g in te.te_overlap))
    steps = [train_step("gpt-3-175b", "H100", layout, 64 * 2048, dtype="fp8",
                        compute_efficiency="predicted", framework=fw) for fw in (te, wider)]
    tp = next(c for c in steps[0].collectives if c.name == "tp")
    hidden = tp.seconds - tp.exposed_seconds
    assert hidden > 0
    assert steps[1].seconds - steps[0].seconds == pytest.approx(
        hidden * 4 * (8 - 4) / 132 / 10, rel=1e-6)
    assert 4 * 4 / 132 / 10 < calibration.processor_usage(ak.chips.get("H100"), "NVLink") / 10
