"""Exercises for lesson 07 · training. Expected values come from accelkit.training and
accelkit.parallel."""

from __future__ import annotations

from accelkit import chips, models, parallel, price, training
from accelkit.parallel import Layout
from accelkit.exercises._core import ChoiceQuestion, ExplainQuestion, FunctionQuestion, NumberQuestion

def _llama_2_7b() -> models.Transformer:
    model = models.get("llama-2-7b")
    if not isinstance(model, models.Transformer):
        raise TypeError(f"llama-2-7b is a {type(model).__name__}, not a Transformer")
    return model


q1 = NumberQuestion(
    "q1",
    "How many FLOPs does it take to train llama-2-7b (N from the catalog: "
    "ak.models.get('llama-2-7b').params) on 2 trillion tokens? (±1%)",
    expected=lambda: training.estimate(model="llama-2-7b", tokens=2e12, chip="H100").flops,
    rel_tol=0.01,
    # Lesson 07 teaches both counts: 6·N·D, and the catalog's with attention's matmuls added.
    accepted={"(You counted attention's FLOPs too, as the catalog does; 6·N·D alone is also "
              "accepted.)": lambda: _llama_2_7b().flops_per_token("train") * 2e12},
    hints=["6 FLOPs per parameter per token: 2 forward, 4 backward.",
           "6 × N × D with D = 2e12."],
    solution="import accelkit as ak\nq1_answer = 6 * ak.models.get('llama-2-7b').params * 2e12",
    slips={"That counts 8 FLOPs per parameter per token: training is 6 (2 forward, 4 backward).":
           lambda: 8 * _llama_2_7b().params * 2e12,
           "That is the forward pass only (2 FLOPs per parameter per token): the backward pass "
           "adds 4 more.": lambda: 2 * _llama_2_7b().params * 2e12},
    too_high="Too high: how many FLOPs per parameter per token does training take?",
    too_low="Too low: did you count the backward pass?")

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
    slips={"MFU is the share of the peak you get: multiply the peak by it, do not divide.":
           lambda: training.estimate(model="llama-2-7b", tokens=2e12, chip="A100", n_chips=512,
                                     mfu=0.45).days * 0.45 ** 2,
           "That leaves out the MFU: the chips reach 45% of their peak, so the run takes longer.":
           lambda: training.estimate(model="llama-2-7b", tokens=2e12, chip="A100", n_chips=512,
                                     mfu=0.45).days * 0.45},
    too_low="Too low: check the MFU, the peak (bf16) and the seconds in a day.")


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
    teaching_case={"params": 1e9, "tokens": 1e12, "n_chips": 1000, "peak_flops": 1e15, "mfu": 0.5},
    slips={"You counted 2 FLOPs per parameter per token (the forward pass only); training "
           "needs 6: 2 forward and 4 backward.":
           lambda params, tokens, n_chips, peak_flops, mfu:
           _training_days(params, tokens, n_chips, peak_flops, mfu) / 3,
           "MFU is the share of the peak you get: multiply the peak by it, do not divide.":
           lambda params, tokens, n_chips, peak_flops, mfu:
           _training_days(params, tokens, n_chips, peak_flops, mfu) * mfu ** 2},
    hints=["FLOPs = 6 × params × tokens.", "Divide by chips × peak × MFU, then by 86,400 s per day."],
    solution="def training_days(params, tokens, n_chips, peak_flops, mfu):\n"
             "    return 6 * params * tokens / (n_chips * peak_flops * mfu) / 86400")

def _dp_pace(n_chips: int) -> str:
    ratio = parallel.dp_communication_ratios("llama-3-70b", "H100", [n_chips],
                                             batch_tokens=4 * 2**20)[n_chips]
    return "communication" if ratio > 1 else "compute"


q4 = ChoiceQuestion(
    "q4",
    "Train llama-3-70b with pure data parallelism and a 4M-token (4 × 2**20) global batch on "
    "1,024 H100s: 128 nodes, the gradient all-reduce hierarchical (NVLink inside each node, all "
    "eight NICs between nodes), every FLOP and link at peak. Does the all-reduce hide behind the "
    "backward pass ('compute' sets the pace) or not ('communication')?",
    options=["compute", "communication"],
    expected=lambda: _dp_pace(1024),
    hints=["Compare the tokens each GPU gets per step (batch / chips) with "
           "ak.parallel.dp_critical_tokens_per_chip('llama-3-70b', 'H100', 1024).",
           "ak.parallel.dp_communication_ratios(..., [1024], batch_tokens=4 * 2**20) is the "
           "all-reduce time over the backward time."],
    solution="import accelkit as ak\n"
             "tokens = 4 * 2**20 / 1024\n"
             "critical = ak.parallel.dp_critical_tokens_per_chip('llama-3-70b', 'H100', 1024)\n"
             "q4_answer = 'compute' if tokens > critical else 'communication'",
    nudges={"communication": "How many tokens does each GPU get (4 × 2**20 / 1,024), and how many "
                             "does the hierarchical all-reduce need to hide?"})

q5 = ExplainQuestion(
    "q5",
    "In the published_runs widget, pick 'Llama 3.1 405B on 16k H100'. Our compute-only GPU-hours "
    "are below the reported ones. Which reasons make a real run take longer than "
    "6·N·D / (chips × peak × MFU)?",
    statements=[
        ("Our estimate counts the forward pass only.", False,
         "6 FLOPs per parameter per token are 2 forward and 4 backward"),
        ("Hardware failures and job interruptions force restarts from the last checkpoint, "
         "redoing work.", True, "over two months, 16,384 GPUs see many interruptions"),
        ("6·N·D overstates the FLOPs, so real runs do less work than we count.", False,
         "that would make the real run shorter than our estimate, not longer"),
        ("Stages such as long-context training can run at a lower MFU than the headline figure.",
         True, "one MFU for the whole run is a simplification"),
        ("Checkpointing and evaluation take time but do no model FLOPs.", True,
         "time that 6·N·D does not count"),
    ],
    hints=["What happens to 16,384 GPUs over two months?", "Is MFU the same in every stage of training?"],
    solution='q5_explanation = ("Real runs lose time to hardware failures and job interruptions, '
             'restarting from the last checkpoint and redoing work; they also have stages such as '
             'long-context training that can run at a lower MFU than the headline figure, plus '
             'checkpointing and evaluation time that does no model FLOPs.")')


def _smallest_hiding_tp() -> str:
    for tp in (1, 2, 4, 8):
        layout = Layout(fsdp=8960 // tp, tp=tp)
        if parallel.critical_tokens_per_chip("llama-3-70b", "TPU v5p", layout) < 448:
            return str(tp)
    return "none of them"


q6 = ChoiceQuestion(
    "q6",
    "llama-3-70b on 8,960 TPU v5p with a batch of 448 tokens per chip, FSDP over the chips TP "
    "leaves (Layout(fsdp=8960 // tp, tp=tp)). What is the smallest TP degree at which FSDP's "
    "weight gathers and gradient reduce-scatters hide behind compute?",
    options=["1", "2", "4", "8", "none of them"],
    expected=_smallest_hiding_tp,
    hints=["FSDP hides while each chip has more tokens than its critical batch: "
           "ak.parallel.critical_tokens_per_chip(model, chip, layout).",
           "TP splits each micro-batch's work over tp chips, so the critical tokens per chip "
           "fall about as 1/tp on the pod."],
    solution="import accelkit as ak\nfrom accelkit.parallel import Layout\n"
             "q6_answer = next(str(tp) for tp in (1, 2, 4, 8) if ak.parallel.critical_tokens_per_chip(\n"
             "    'llama-3-70b', 'TPU v5p', Layout(fsdp=8960 // tp, tp=tp)) < 448)",
    nudges={"1": "Pure FSDP's critical batch on the pod is above 448 tokens per chip: compute it.",
            "8": "A smaller degree already brings the critical batch under 448; wider TP only adds "
                 "all-reduces on the critical path."})


def _step405_usd() -> float:
    layout = Layout(dp=128, tp=8, pp=16, microbatch_tokens=8192, recompute="full", interleave=4)
    step = parallel.train_step("llama-3.1-405b", "H100", layout, batch_tokens=16 * 2**20)
    usd = price.usd_for(chips.get("H100").require("usd_per_hour"), step.seconds, 16384)
    if usd is None:  # unreachable: require() refuses a chip without a price
        raise ValueError("H100 has no catalog price")
    return float(usd)


q7 = NumberQuestion(
    "q7",
    "One optimizer step of llama-3.1-405b on 16,384 H100s with Llama 3's layout, "
    "Layout(dp=128, tp=8, pp=16, microbatch_tokens=8192, recompute='full', interleave=4), and a "
    "16M-token (16 × 2**20) batch: what does the step cost in dollars at the catalog's H100 price? "
    "(±2%)",
    expected=_step405_usd,
    rel_tol=0.02,
    hints=["ak.parallel.train_step(model, chip, layout, batch_tokens=...).seconds is the step time.",
           "ak.price.usd_for(ak.chips.get('H100').usd_per_hour, seconds, 16384)."],
    solution="import accelkit as ak\nfrom accelkit.parallel import Layout\n"
             "layout = Layout(dp=128, tp=8, pp=16, microbatch_tokens=8192, recompute='full', interleave=4)\n"
             "step = ak.parallel.train_step('llama-3.1-405b', 'H100', layout, batch_tokens=16 * 2**20)\n"
             "q7_answer = ak.price.usd_for(ak.chips.get('H100').usd_per_hour, step.seconds, 16384)",
    slips={"That prices one GPU: every one of the 16,384 GPUs is paid for during the step.":
           lambda: _step405_usd() / 16384},
    too_high="Too high: dollars = price per GPU-hour × GPUs × seconds / 3,600.",
    too_low="Too low: are all 16,384 GPUs paid for, for the whole step?")


q8 = NumberQuestion(
    "q8",
    "A llama-3-70b run reports MFU 40% with full activation recomputation (each layer's forward "
    "pass run again in the backward pass). What is its HFU, as a fraction? (±1%)",
    expected=lambda: 0.40 * (parallel.hardware_flops_per_token("llama-3-70b", "full")
                             / parallel.hardware_flops_per_token("llama-3-70b", "none")),
    rel_tol=0.01,
    hints=["MFU counts the model's FLOPs; HFU counts what the chips execute, recomputation "
           "included. The step's time is the same.",
           "Training is 3 forward passes' worth (1 forward + 2 backward); full recomputation adds "
           "one more."],
    solution="q8_answer = 0.40 * 4 / 3",
    slips={"That is the ratio upside down: HFU counts more FLOPs than MFU in the same time, so "
           "it is the larger.": lambda: 0.40 * 3 / 4},
    too_high="Too high: recomputation adds one forward pass to three passes' worth, not more.",
    too_low="Too low: how many passes' worth does a step execute with full recomputation?")
