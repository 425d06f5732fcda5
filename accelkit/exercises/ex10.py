"""Exercises for lesson 10 · decision lab. Expected values come from the library."""

from __future__ import annotations

import math

from accelkit import scenarios, training
from accelkit.exercises._core import (ChoiceQuestion, ExplainQuestion, FunctionQuestion,
                                      NumberQuestion, chip_resolver)


def _pretrain_usd() -> float:
    usd = scenarios.evaluate("pretrain", "TPU v5p", n_chips=4096, mfu=0.4).usd
    if usd is None:
        raise ValueError("the TPU v5p has no list price in the catalog: q1 has no expected USD")
    return usd


q1 = NumberQuestion(
    "q1",
    "What does the pre-training scenario cost on 4,096 TPU v5p at 40% MFU and the catalog list "
    "price (Llama-3-70B, 15e12 tokens)? Answer in USD. (±3%)",
    expected=_pretrain_usd,
    rel_tol=0.03,
    hints=["FLOPs = 6 × params × tokens; seconds = FLOPs / (chips × peak × MFU).",
           "Dollars = chips × seconds / 3600 × price per chip-hour "
           "(ak.chips.get('v5p').usd_per_hour)."],
    solution="import accelkit as ak\n"
             "t = ak.training.estimate(model='llama-3-70b', tokens=15e12, chip='TPU v5p', "
             "n_chips=4096, mfu=0.4)\n"
             "q1_answer = t.usd",
    slips={"That leaves out the MFU: at 40% MFU the run takes longer than at peak.":
           lambda: _pretrain_usd() * 0.4,
           "MFU is the share of the peak you get: multiply the peak by it, do not divide.":
           lambda: _pretrain_usd() * 0.4 ** 2,
           "That is the forward pass only: training is 6 FLOPs per parameter per token, 2 forward "
           "and 4 backward.": lambda: _pretrain_usd() / 3},
    too_high="Too high: MFU multiplies the peak (the chips do more per second, not less).",
    too_low="Too low: 6 FLOPs per parameter per token, at 40% of the peak, priced per "
            "chip-hour?")

q2 = NumberQuestion(
    "q2",
    "Full fine-tuning keeps 16 bytes per parameter (bf16 weights and gradients, fp32 Adam "
    "state). Ignoring activations, at least how many H100s must pool their HBM to fine-tune "
    "Llama-3-8B? (a whole number)",
    expected=lambda: training.estimate(model="llama-3-8b", tokens=1e9, chip="H100", n_chips=1,
                                       activation_checkpoints_per_layer=0).min_chips_to_fit,
    rel_tol=0.0,
    hints=["Bytes needed = params × 16; ak.models.get('llama-3-8b').params.",
           "Divide by one H100's HBM (ak.chips.get('H100').hbm_bytes) and round up."],
    solution="import math\nimport accelkit as ak\n"
             "q2_answer = math.ceil(ak.models.get('llama-3-8b').params * 16 / "
             "ak.chips.get('H100').hbm_bytes)",
    too_high="Too high: how many bytes of HBM does one H100 have (ak.chips.get('H100').hbm_bytes)?",
    too_low="Too low: round up, and count 16 bytes per parameter.")


def _serving_seconds(work_tokens: float, batch: int, output_tokens: int,
                     prefill_seconds: float, decode_seconds: float) -> float:
    # the serving-job convention of accelkit.scenarios
    return work_tokens / (batch * output_tokens) * (prefill_seconds + output_tokens
                                                    * decode_seconds)


q3 = FunctionQuestion(
    "q3",
    "Write serving_seconds(work_tokens, batch, output_tokens, prefill_seconds, decode_seconds): "
    "how long one replica takes to generate work_tokens, serving batches of `batch` requests "
    "that each prefill once (prefill_seconds per batch) and then take output_tokens decode "
    "steps of decode_seconds each.",
    reference=_serving_seconds,
    cases=lambda rng: [{"work_tokens": float(rng.integers(1, 10**6)) * 1e4,
                        "batch": int(rng.integers(1, 513)),
                        "output_tokens": int(rng.integers(1, 2001)),
                        "prefill_seconds": float(rng.uniform(0.01, 5.0)),
                        "decode_seconds": float(rng.uniform(0.002, 0.1))} for _ in range(6)],
    rel_tol=1e-9,
    teaching_case={"work_tokens": 1e6, "batch": 10, "output_tokens": 100, "prefill_seconds": 1.0,
                   "decode_seconds": 0.02},
    # The scenarios count a partly filled last batch as a fraction of one; a server would run it
    # whole. The question rules neither out, so both are right.
    accepted={"(You rounded the batches up: a partly filled last batch takes a whole batch's time. "
              "Counting it as a fraction of a batch, as accelkit.scenarios does, is also "
              "accepted.)":
              lambda work_tokens, batch, output_tokens, prefill_seconds, decode_seconds:
              math.ceil(work_tokens / (batch * output_tokens))
              * (prefill_seconds + output_tokens * decode_seconds)},
    slips={"You left out the prefill: each batch prefills once before decoding.":
           lambda work_tokens, batch, output_tokens, prefill_seconds, decode_seconds:
           work_tokens / (batch * output_tokens) * output_tokens * decode_seconds,
           "prefill_seconds is per batch, not per request: a batch prefills its requests together.":
           lambda work_tokens, batch, output_tokens, prefill_seconds, decode_seconds:
           work_tokens / (batch * output_tokens) * (batch * prefill_seconds
                                                    + output_tokens * decode_seconds)},
    hints=["One batch produces batch × output_tokens tokens.",
           "One batch takes prefill_seconds + output_tokens × decode_seconds; count the batches."],
    solution="def serving_seconds(work_tokens, batch, output_tokens, prefill_seconds, "
             "decode_seconds):\n"
             "    batches = work_tokens / (batch * output_tokens)\n"
             "    return batches * (prefill_seconds + output_tokens * decode_seconds)")


def _cheaper_offline() -> str:
    rows = {o.chip: o for o in scenarios.compare("offline", ["TPU v6e", "H100"],
                                                 price_source="lowest")}
    usd: dict[str, float] = {}
    for name in ("TPU v6e (Trillium)", "NVIDIA H100 (SXM)"):
        row = rows[name]
        if not isinstance(row, scenarios.Outcome):
            raise ValueError(f"offline scenario unavailable on {name}: {row.reason}")
        if row.usd is None:
            raise ValueError(f"offline scenario on {name} has no USD (no sourced price)")
        usd[name] = row.usd
    return "TPU v6e" if usd["TPU v6e (Trillium)"] < usd["NVIDIA H100 (SXM)"] else "H100"


q4 = ChoiceQuestion(
    "q4",
    "Bulk offline inference (the lab's defaults) at each chip's lowest sourced price: which is "
    "cheaper, 'TPU v6e' or 'H100'?",
    options=["TPU v6e", "H100"],
    resolve=chip_resolver(["TPU v6e", "H100"]),
    expected=_cheaper_offline,
    hints=["scenarios.compare('offline', [...], price_source='lowest') gives both.",
           "In the lab: bulk offline inference, price = lowest sourced price."],
    solution="import accelkit.scenarios as sc\n"
             "rows = sc.compare('offline', ['TPU v6e', 'H100'], price_source='lowest')\n"
             "q4_answer = 'TPU v6e' if rows[0].usd < rows[1].usd else 'H100'",
    nudges={"tpu v6e": "Check that you compared each chip at its lowest sourced price "
                       "(price_source='lowest'), not at the catalog list price."})

q5 = ExplainQuestion(
    "q5",
    "In the decision lab, the chatbot at batch 4 uses a small share of every chip's peak "
    "(the utilization column). Explain why, and name the knob that lowers its cost per token "
    "the most while keeping the latency target.",
    statements=[
        ("The chips are underused because the latency target forces them to run at a lower "
         "clock.", False, "the model has no clock scaling; the matrix units wait on memory"),
        ("At batch 4 each decode step reads every weight from memory to produce only 4 tokens, so "
         "the step is memory-bound and the matrix units sit mostly idle.", True,
         "a few FLOPs per weight byte, far below any chip's ridge"),
        ("A chip with a higher peak FLOP/s is what lowers the cost per token most at batch 4.",
         False, "at batch 4 the peak is mostly idle; bandwidth and price matter far more"),
        ("Raising the batch shares each step's weight read among more sequences, so the cost per "
         "token falls while the time per token stays under the target, up to a point.", True,
         "the batch is the knob; the latency target sets how far it can go"),
        ("Adding chips per replica lowers the cost per token most, because each step gets "
         "faster.", False, "you pay for every chip: the step gets faster, but the bill per step "
                           "grows about as fast"),
    ],
    hints=["What does each decode step read, and how many tokens does it produce at batch 4?",
           "Move the batch knob and watch the ms/token column and the cost."],
    solution='q5_explanation = ("At batch 4 each decode step reads every weight (and the KV '
             'cache) from memory to produce only 4 tokens, so the step is memory-bound and the '
             'matrix units sit idle. Raising the batch shares that weight read among more '
             'sequences: the cost per token falls almost in proportion while the latency per '
             'token stays under the 50 ms target.")')
