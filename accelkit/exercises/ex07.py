"""Exercises for lesson 07 · training. Expected values come from accelkit.training."""

from __future__ import annotations

from accelkit import training
from accelkit.exercises._core import ChoiceQuestion, ExplainQuestion, FunctionQuestion, NumberQuestion

q1 = NumberQuestion(
    "q1",
    "How many FLOPs does it take to train llama-2-7b (N from the catalog: "
    "ak.models.get('llama-2-7b').params) on 2 trillion tokens? (±1%)",
    expected=lambda: training.estimate(model="llama-2-7b", tokens=2e12, chip="H100").flops,
    rel_tol=0.01,
    hints=["6 FLOPs per parameter per token: 2 forward, 4 backward.",
           "6 × N × D with D = 2e12."],
    solution="import accelkit as ak\nq1_answer = 6 * ak.models.get('llama-2-7b').params * 2e12",
    too_high="Too high: 6 FLOPs per parameter per token, not 8.",
    too_low="Too low: did you count the backward pass (4 of the 6)?")

q2 = NumberQuestion(
    "q2",
    "That run on 512 A100s at 45% MFU: how many days, compute only? (±2%)",
    expected=lambda: training.estimate(model="llama-2-7b", tokens=2e12, chip="A100", n_chips=512,
                                       mfu=0.45).days,
    rel_tol=0.02,
    hints=["days = FLOPs / (chips × peak × MFU) / 86,400.",
           "The A100's bf16 peak is ak.chips.get('A100').peak_flops('bf16')."],
    solution="import accelkit as ak\n"
             "flops = 6 * ak.models.get('llama-2-7b').params * 2e12\n"
             "q2_answer = flops / (512 * ak.chips.get('A100').peak_flops('bf16') * 0.45) / 86400",
    too_high="Too high: check the MFU and the chip count.",
    too_low="Too low: a day is 86,400 seconds.")


def _training_days(params: float, tokens: float, n_chips: int, peak_flops: float, mfu: float) -> float:
    return training.estimate(params=params, tokens=tokens, chip="H100", n_chips=n_chips,
                             mfu=mfu).flops / (n_chips * peak_flops * mfu) / training.SECONDS_PER_DAY


q3 = FunctionQuestion(
    "q3",
    "Write training_days(params, tokens, n_chips, peak_flops, mfu): compute-only days for a dense "
    "transformer with 6·N·D FLOPs on n_chips chips of peak_flops FLOP/s each at the given MFU.",
    reference=_training_days,
    cases=lambda rng: [{"params": float(rng.uniform(1e8, 1e12)), "tokens": float(rng.uniform(1e9, 3e13)),
                        "n_chips": int(rng.integers(1, 20000)),
                        "peak_flops": float(rng.uniform(1e14, 3e15)), "mfu": float(rng.uniform(0.1, 0.7))}
                       for _ in range(6)],
    rel_tol=1e-6,
    hints=["FLOPs = 6 × params × tokens.", "Divide by chips × peak × MFU, then by 86,400 s per day."],
    solution="def training_days(params, tokens, n_chips, peak_flops, mfu):\n"
             "    return 6 * params * tokens / (n_chips * peak_flops * mfu) / 86400")

q4 = ChoiceQuestion(
    "q4",
    "Train llama-3-70b with a 4M-token global batch on 16,384 H100s at 40% MFU, gradients reduced "
    "hierarchically: NVLink inside each node, InfiniBand between nodes (estimate's default). Does the "
    "reduction hide behind the backward pass ('compute' sets the pace) or not ('communication')?",
    options=["compute", "communication"],
    expected=lambda: ("communication" if training.estimate(
        model="llama-3-70b", tokens=4e6, chip="H100", n_chips=16384, mfu=0.4,
        batch_tokens=4e6).communication_bound else "compute"),
    hints=["Compare tokens per chip per step (batch / chips) with critical_tokens_per_chip.",
           "ak.training.estimate(..., batch_tokens=4e6) and its critical_tokens_per_chip"],
    solution="import accelkit as ak\n"
             "est = ak.training.estimate(model='llama-3-70b', tokens=4e6, chip='H100', n_chips=16384,\n"
             "                           mfu=0.4, batch_tokens=4e6)\n"
             "q4_answer = 'communication' if est.communication_bound else 'compute'",
    nudges={"compute": "How many tokens does each chip get per step, and how many would it need?"})

q5 = ExplainQuestion(
    "q5",
    "In the published_runs widget, pick 'Llama 3.1 405B on 16k H100'. Our compute-only GPU-hours are "
    "below the reported ones. Name the reasons a real run takes longer than 6·N·D / (chips × peak × MFU).",
    concepts={"failures and restarts": ("fail", "restart", "interrupt", "crash", "checkpoint"),
              "MFU or phases that run slower": ("mfu", "utilization", "long-context", "long context",
                                               "anneal", "phase", "stage", "slower")},
    hints=["What happens to 16,384 GPUs over two months?", "Is MFU the same in every stage of training?"],
    solution='q5_answer = ("Real runs lose time to hardware failures and job interruptions, restarting '
             'from the last checkpoint and redoing work; they also have stages such as long-context '
             'training and annealing that run at a lower MFU than the headline figure, plus '
             'checkpointing and evaluation time that does no model FLOPs.")')
