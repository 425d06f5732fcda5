"""accelkit.parallel's lesson-07 additions: hardware FLOPs and HFU, a layout's critical tokens per
chip, and pure-DP all-reduce ratios. Closed forms: PaLM (Chowdhery et al. 2022, appendix B)
for MFU vs HFU; the scaling book (jax-ml/scaling-book training.md) for FSDP's critical batch
equal to DP's and FSDP+TP's divided by the TP degree on a TPU."""

import pytest

import accelkit as ak
from accelkit import parallel
from accelkit.parallel import Layout


def test_hardware_flops_add_exactly_the_recomputed_work():
    m = ak.models.get("llama-3-8b")
    model = parallel.hardware_flops_per_token(m, "none")
    assert parallel.hardware_flops_per_token(m, "full") == pytest.approx(model * 4 / 3)
    ops = m.operations(batch=1, seq_len=m.seq_len, phase="forward")
    scores = sum(op.flops for op in ops if op.kind == "attention") / m.seq_len
    assert parallel.hardware_flops_per_token(m, "selective") == pytest.approx(model + scores)


def test_critical_tokens_scale_as_the_closed_form():
    # closed form: t* = T_collective / compute-seconds-per-token; check it against train_step:
    # at the critical micro-batch the FSDP collectives just equal the micro-batch's compute.
    m, chip = "llama-3-70b", "v5p"
    layout = Layout(fsdp=256)
    t = parallel.critical_tokens_per_chip(m, chip, layout)
    for factor, exposed in ((2.0, False), (0.5, True)):
        mb = int(round(t * factor))
        step = parallel.train_step(m, chip, Layout(fsdp=256, microbatch_tokens=mb), 256 * mb)
        assert (step.exposed_communication_seconds > 1e-9) is exposed
    assert parallel.critical_tokens_per_chip("llama-3-8b", "H100", Layout(tp=8)) == 0.0


def test_pipelining_divides_the_critical_tokens_per_chip():
    m, chip = "llama-3-70b", "v5p"
    flat = parallel.critical_tokens_per_chip(m, chip, Layout(dp=64))
    piped = parallel.critical_tokens_per_chip(m, chip, Layout(dp=64, pp=4))
    assert piped < flat


def test_dp_ratios_are_critical_over_tokens_per_chip():
    r = parallel.dp_communication_ratios("llama-3-70b", "H100", [1, 64], batch_tokens=1e6)
    assert r[1] == 0.0
    assert r[64] == pytest.approx(parallel.dp_critical_tokens_per_chip("llama-3-70b", "H100", 64)
                                  / (1e6 / 64))


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="layout"):
        parallel.critical_tokens_per_chip("llama-3-8b", "H100", {"dp": 8})
    with pytest.raises(ValueError, match="ep must be 1"):
        parallel.critical_tokens_per_chip("llama-3-8b", "H100", Layout(ep=2))
    with pytest.raises(ValueError, match="recompute"):
        parallel.hardware_flops_per_token("llama-3-8b", "some")
    with pytest.raises(TypeError, match="step"):
        parallel.hardware_flops_utilization(0.5)
    with pytest.raises(TypeError, match="n_chips"):
        parallel.dp_communication_ratios("llama-3-8b", "H100", 8, batch_tokens=1e6)
    with pytest.raises(ValueError, match="batch_tokens"):
        parallel.dp_communication_ratios("llama-3-8b", "H100", [8], batch_tokens=-1)


def test_moe_with_expert_parallelism_matches_dp_critical():
    # the DP critical batch of an MoE (all parameters reduced, active ones computed), with and
    # without expert parallelism, is the same through either function
    for chip, layout, kwargs in (("H100", Layout(dp=64), {}),
                                 ("v5p", Layout(dp=8, ep=8), {"ep": 8})):
        assert parallel.critical_tokens_per_chip("mixtral-8x7b", chip, layout) == pytest.approx(
            parallel.dp_critical_tokens_per_chip("mixtral-8x7b", chip, 64, **kwargs), rel=1e-9)
