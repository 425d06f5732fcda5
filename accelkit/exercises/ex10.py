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


def _fleet_replicas(users: int, interval_seconds: float, max_rate_per_replica: float) -> int:
    # the decision lab's sizing (accelkit.serving.LoadCurve.plan)
    return max(1, math.ceil(users / interval_seconds / max_rate_per_replica))


q3 = FunctionQuestion(
    "q3",
    "Write fleet_replicas(users, interval_seconds, max_rate_per_replica): the fewest replicas "
    "for `users` people who each send a request every `interval_seconds` on average, when one "
    "replica meets the latency limits at up to `max_rate_per_replica` requests per second.",
    reference=_fleet_replicas,
    cases=lambda rng: [{"users": int(rng.integers(1, 10**6)),
                        "interval_seconds": float(rng.uniform(1.0, 120.0)),
                        "max_rate_per_replica": float(rng.uniform(0.5, 50.0))}
                       for _ in range(6)],
    rel_tol=0.0,
    teaching_case={"users": 1000, "interval_seconds": 30.0, "max_rate_per_replica": 4.0},
    slips={"Round up: a fraction of a replica is a whole replica you must rent.":
           lambda users, interval_seconds, max_rate_per_replica:
           int(users / interval_seconds / max_rate_per_replica),
           "The users make users / interval_seconds requests a second, not users.":
           lambda users, interval_seconds, max_rate_per_replica:
           max(1, math.ceil(users / max_rate_per_replica))},
    hints=["Requests per second = users / interval_seconds.",
           "Divide by what one replica can take, and round up to whole replicas."],
    solution="import math\n"
             "def fleet_replicas(users, interval_seconds, max_rate_per_replica):\n"
             "    return max(1, math.ceil(users / interval_seconds / max_rate_per_replica))")


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
    "In the decision lab, raise the chatbot's users from 1,000 to 3,000: the fleet grows "
    "almost threefold while the cost per million tokens falls a little at most. Explain why, and "
    "say what would lower the cost per token instead.",
    statements=[
        ("Each replica is given the highest load at which its simulated 99th percentiles meet "
         "both limits, so three times the requests need about three times the replicas.", True,
         "the plan divides the arrival rate by what one replica can take"),
        ("More users put more sequences into each replica's batch, so the cost per token falls "
         "about threefold.", False, "each replica's load is capped by the limits, not by the "
                                    "users: the batch per replica stays where it was"),
        ("The cost per token is set by the chip, its price and the load one replica carries "
         "within the limits, not by how many replicas there are.", True,
         "dollars per hour per replica over tokens per hour per replica"),
        ("Renting the same chips at a lower price per chip-hour (the price menu) lowers the cost "
         "per token by the same factor.", True,
         "the fleet is the same; each of its hours costs less"),
        ("The TTFT column is the time to prefill every prompt of a replica's batch at once.",
         False, "it is the 99th percentile of a request's wait for its first token under "
                "arrivals, queueing included"),
    ],
    hints=["What does the plan hold fixed per replica when the users grow?",
           "Move the users, then the TPOT limit, and watch the USD/M column."],
    solution='q5_explanation = ("The plan gives each replica the most requests per second it can '
             'take while its 99th-percentile TTFT and TPOT stay within the limits, so tripling '
             'the users about triples the replicas, and the cost per token stays near where it '
             'was: it depends on the chip, its price and the load one replica carries (whole '
             'replicas leave a small fleet partly idle, so it falls a little). A cheaper '
             'chip-hour or a chip whose replica carries more per dollar lowers it.")')
