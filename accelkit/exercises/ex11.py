"""Exercises for lesson 11 · at scale. Expected values come from accelkit.models and
accelkit.collectives."""

from __future__ import annotations

from accelkit import collectives, models
from accelkit.exercises._core import (ChoiceQuestion, ExplainQuestion, FunctionQuestion,
                                      NumberQuestion, chip_resolver)


def _deepseek() -> models.MoETransformer:
    model = models.get("deepseek-v3")
    if not isinstance(model, models.MoETransformer):
        raise TypeError(f"deepseek-v3 is a {type(model).__name__}, not a MoETransformer")
    return model


def _total_over_active() -> float:
    m = _deepseek()
    return m.params / m.active_params


q1 = NumberQuestion(
    "q1",
    "DeepSeek-V3 stores every expert but runs each token through a few. From the catalog, what "
    "is its total ÷ active parameters (about the factor its data-parallel critical batch grows "
    "by)? (±2%)",
    expected=_total_over_active,
    rel_tol=0.02,
    hints=["m = ak.models.get('deepseek-v3'); it has m.params and m.active_params.",
           "Divide the total by the active count."],
    solution="import accelkit as ak\nm = ak.models.get('deepseek-v3')\n"
             "q1_answer = m.params / m.active_params",
    slips={"That is experts ÷ experts-per-token (256 ÷ 8): attention, the shared expert, the "
           "dense layers and the embeddings run for every token, so the ratio is smaller.":
           lambda: _deepseek().n_experts / _deepseek().experts_per_token,
           "That is active ÷ total, upside down: the critical batch grows, so the factor is above 1.":
           lambda: 1 / _total_over_active()},
    too_high="Too high: do the active parameters include attention and the shared expert?",
    too_low="Too low: the total counts every expert of every MoE layer.")


def _axis_milliseconds() -> float:
    return collectives.all_to_all("TPU v5p", array_bytes=1e9, over=8).seconds * 1e3


q2 = NumberQuestion(
    "q2",
    "An expert layer's all-to-all exchanges a 1 GB array (the whole array: each chip holds an "
    "eighth) over 8 TPU v5p chips on one wrapped torus axis. How long does it take, in "
    "milliseconds? (±3%)",
    expected=_axis_milliseconds,
    rel_tol=0.03,
    hints=["On a wrapped ring of n chips the busiest link carries about n²/8 pieces of V/n² bytes "
           "each way.",
           "So about V / (8 × w), with w one ICI link's one-way bandwidth: "
           "ak.chips.get('v5p').link_bytes_per_second."],
    solution="import accelkit as ak\n"
             "q2_answer = ak.collectives.all_to_all('TPU v5p', array_bytes=1e9, over=8).seconds * 1e3",
    slips={"That is an all-gather's time on the ring: an all-to-all sends each chip's piece only "
           "to the chip that needs it, a quarter of that.": lambda: 4 * _axis_milliseconds(),
           "That runs the ring in one direction only: a wrapped axis sends both ways at once.":
           lambda: 2 * _axis_milliseconds()},
    too_high="Too high: do pieces take the shorter way round the ring, in both directions?",
    too_low="Too low: on a ring most pieces cross several links; is that counted?")


def _ring_all_to_all_seconds(array_bytes: float, n: int, link_bytes_per_second: float) -> float:
    # docs/collectives.md: shortest-path routing on a wrapped ring, both directions
    pairs_per_link = n * n / 8 if n % 2 == 0 else (n * n - 1) / 8
    return pairs_per_link * array_bytes / (n * n) / link_bytes_per_second


q3 = FunctionQuestion(
    "q3",
    "Write ring_all_to_all_seconds(array_bytes, n, link_bytes_per_second): the bandwidth time of "
    "an all-to-all of a whole array of array_bytes over a wrapped ring of n chips (shortest "
    "paths, both directions), whose links carry link_bytes_per_second each way. Each ordered pair "
    "of chips exchanges array_bytes / n² bytes; the busiest link carries n²/8 such pieces per "
    "direction for an even n, (n² − 1)/8 for an odd one.",
    reference=_ring_all_to_all_seconds,
    cases=lambda rng: [{"array_bytes": float(rng.uniform(1e6, 1e10)),
                        "n": int(rng.integers(2, 33)),
                        "link_bytes_per_second": float(rng.uniform(1e10, 2e11))}
                       for _ in range(8)],
    rel_tol=1e-6,
    teaching_case={"array_bytes": 1e9, "n": 8, "link_bytes_per_second": 1e11},
    slips={"That is a switch's time, (n − 1)/n² of the array through each chip's own port: on a "
           "ring the pieces share the links between chips.":
           lambda array_bytes, n, link_bytes_per_second:
           (n - 1) * array_bytes / (n * n) / link_bytes_per_second,
           "That is an all-gather's time on the ring, (n − 1)/n of the array over two links: an "
           "all-to-all moves each piece only to the chip that needs it.":
           lambda array_bytes, n, link_bytes_per_second:
           (n - 1) / n * array_bytes / (2 * link_bytes_per_second)},
    hints=["Pieces are array_bytes / n² each; count the pieces on the busiest link.",
           "n²/8 for even n, (n² − 1)/8 for odd n; divide by the link's bandwidth."],
    solution="def ring_all_to_all_seconds(array_bytes, n, link_bytes_per_second):\n"
             "    pieces = n * n / 8 if n % 2 == 0 else (n * n - 1) / 8\n"
             "    return pieces * array_bytes / (n * n) / link_bytes_per_second")


def _slower_at_sixteen() -> str:
    slower = {}
    for chip in ("TPU v5p", "H100"):
        eight = collectives.all_to_all(chip, array_bytes=1e9, over=8).seconds
        sixteen = collectives.all_to_all(chip, array_bytes=1e9, over=16).seconds
        slower[chip] = sixteen / eight
    return max(slower, key=lambda chip: slower[chip])


q4 = ChoiceQuestion(
    "q4",
    "The same 1 GB all-to-all goes from 8 chips to 16: on TPU v5p (one wrapped torus axis) or on "
    "H100 (NVLink, then the nodes' NICs). On which, 'TPU v5p' or 'H100', does it get markedly "
    "slower?",
    options=["TPU v5p", "H100"],
    resolve=chip_resolver(["TPU v5p", "H100"]),
    expected=_slower_at_sixteen,
    hints=["ak.collectives.all_to_all(chip, array_bytes=1e9, over=n) for n = 8 and 16, on both.",
           "Where do 16 H100s sit: in one NVLink node?"],
    solution="import accelkit as ak\n"
             "t = {c: [ak.collectives.all_to_all(c, array_bytes=1e9, over=n).seconds for n in (8, 16)]\n"
             "     for c in ('TPU v5p', 'H100')}\n"
             "q4_answer = max(t, key=lambda c: t[c][1] / t[c][0])",
    nudges={"tpu v5p": "On one wrapped axis the busiest link carries about V/8 whatever the group: "
                       "check the other chip's network at 16."})

q5 = ExplainQuestion(
    "q5",
    "On 1,024 H100s, DeepSeek-V3's data-parallel critical batch is about seventeen times a dense "
    "70B model's, and expert parallelism of degree 64 brings it down severalfold. Explain both.",
    statements=[
        ("The gradient all-reduce carries every expert's gradients, while the backward pass does "
         "only the active parameters' work.", True,
         "all 671B gradients against about 37B parameters' FLOPs per token"),
        ("With expert parallelism each chip holds and reduces only its share of the routed "
         "experts, so the all-reduce carries fewer bytes.", True,
         "the routed experts are split over the ep group and reduced over n/ep chips"),
        ("A mixture of experts does more FLOPs per token than a dense model of the same total "
         "size, so it needs more tokens per chip.", False,
         "it does fewer: only the routed experts run for each token"),
        ("Expert parallelism makes the all-to-all free, because the experts then sit on one chip.",
         False, "it adds all-to-alls: tokens travel to the chips holding their experts"),
        ("The ratio is smaller than experts ÷ experts-per-token because attention, the shared "
         "expert and the dense layers run for every token.", True,
         "256 ÷ 8 = 32 would hold if every parameter were a routed expert"),
    ],
    hints=["What does the all-reduce move, and what does the backward pass compute?",
           "parallel.dp_critical_tokens_per_chip('deepseek-v3', 'H100', 1024, ep=64)"],
    solution='q5_explanation = ("The data-parallel all-reduce moves the gradients of all 671B '
             'parameters, every expert included, while the backward pass it hides behind does '
             'the work of the ~37B active ones, so the tokens per chip that hide it grow by about '
             'total ÷ active (less than 256 ÷ 8, since attention, the shared expert and the dense '
             'layers are active for every token). Expert parallelism shards the routed experts '
             'over the ep group, so each chip reduces only its share, and the critical batch '
             'falls; the price is the all-to-alls that carry tokens to their experts.")')
