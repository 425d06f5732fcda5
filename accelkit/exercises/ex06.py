"""Exercises for lesson 06 · energy, power and price. Expected values come from the library."""

from __future__ import annotations

from accelkit import energy, price
from accelkit.exercises._core import (ChoiceQuestion, ExplainQuestion, FunctionQuestion,
                                      NumberQuestion, chip_resolver)

q1 = NumberQuestion(
    "q1",
    "How many bf16 multiply-accumulates (wide accumulator) cost as much energy as one 64-bit DRAM "
    "read (mid estimate) in the 45 nm table? (±2%)",
    expected=lambda: energy.access_picojoules("dram") / energy.mac_picojoules("bf16"),
    rel_tol=0.02,
    hints=["Divide the DRAM read's picojoules by the MAC's.",
           "ak.energy.access_picojoules('dram') and ak.energy.mac_picojoules('bf16')."],
    solution="import accelkit as ak\n"
             "q1_answer = ak.energy.access_picojoules('dram') / ak.energy.mac_picojoules('bf16')",
    slips={"That is the 'high' DRAM estimate, or a narrow (fp16) accumulator: the question asks "
           "for the mid estimate and a wide accumulator.":
           lambda: energy.access_picojoules("dram", estimate="high") / energy.mac_picojoules("bf16"),
           "That is the 'low' DRAM estimate: the question asks for the mid one.":
           lambda: energy.access_picojoules("dram", estimate="low") / energy.mac_picojoules("bf16")},
    too_high="Too high: which DRAM estimate, and which accumulator, did you use?",
    too_low="Too low: the mid DRAM estimate, and a 16-bit multiply plus a 32-bit add?")

q2 = NumberQuestion(
    "q2",
    "How many bf16 FLOPs does one dollar buy on an H100 rented at $3.99 per GPU-hour (Lambda), at "
    "40% MFU? (±2%)",
    expected=lambda: price.flops_per_dollar("H100", "bf16", 0.4, usd_per_hour=3.99),
    rel_tol=0.02,
    hints=["FLOPs per dollar = peak FLOP/s × MFU × 3600 s / price per hour.",
           "The peak is ak.chips.get('H100').peak_flops('bf16')."],
    solution="import accelkit as ak\n"
             "q2_answer = ak.chips.get('H100').peak_flops('bf16') * 0.4 * 3600 / 3.99",
    slips={"That leaves out the MFU: at 40% MFU the chip does 40% of its peak.":
           lambda: price.flops_per_dollar("H100", "bf16", 1.0, usd_per_hour=3.99)},
    too_high="Too high: did you multiply the peak by the MFU?",
    too_low="Too low: how many seconds of peak does one GPU-hour buy?")


def _gemm_energy_joules(M: int, N: int, K: int) -> float:
    macs = M * N * K
    moved = (M * K + K * N + M * N) * 2
    return (macs * energy.mac_picojoules("bf16") + energy.access_picojoules("dram", bytes=moved)) * 1e-12


q3 = FunctionQuestion(
    "q3",
    "Write gemm_energy_joules(M, N, K): the energy of a bf16 GEMM (A is M×K, B is K×N) whose "
    "operands A and B are read from DRAM once and whose result C is written once, plus its MACs "
    "(wide accumulator, mid DRAM estimate). Return joules.",
    reference=_gemm_energy_joules,
    cases=lambda rng: [{"M": int(m), "N": int(n), "K": int(k)}
                       for m, n, k in rng.integers(1, 4097, size=(6, 3))],
    rel_tol=1e-6,
    teaching_case={"M": 1000, "N": 1000, "K": 1000},
    slips={"Close: count the bytes of C too (written once), not only A and B.":
           lambda M, N, K: (M * N * K * energy.mac_picojoules("bf16") + energy.access_picojoules(
               "dram", bytes=(M * K + K * N) * 2)) * 1e-12,
           "You left out the DRAM traffic: the operands and result cross DRAM once.":
           lambda M, N, K: M * N * K * energy.mac_picojoules("bf16") * 1e-12},
    hints=["MACs = M·N·K; bytes moved = (M·K + K·N + M·N) × 2.",
           "ak.energy.access_picojoules('dram', bytes=...) scales with bytes; 1 pJ = 1e-12 J."],
    solution="import accelkit as ak\n\n"
             "def gemm_energy_joules(M, N, K):\n"
             "    macs = M * N * K * ak.energy.mac_picojoules('bf16')\n"
             "    moved = ak.energy.access_picojoules('dram', bytes=(M * K + K * N + M * N) * 2)\n"
             "    return (macs + moved) * 1e-12")

q4 = ChoiceQuestion(
    "q4",
    "At the cheapest sourced list prices (ak.price.price_points) and equal MFU, which buys more "
    "bf16 FLOPs per dollar: 'H100' or 'TPU v5p'?",
    options=["H100", "TPU v5p"],
    resolve=chip_resolver(["H100", "TPU v5p"]),
    expected=lambda: max(
        ("H100", "TPU v5p"),
        key=lambda chip: price.flops_per_dollar(chip, usd_per_hour=min(
            p.usd_per_hour for p in price.price_points(chip)))),
    hints=["Compute flops_per_dollar for each chip at its lowest price point.",
           "The flops_per_dollar_explorer widget with 'cheapest sourced price' shows both."],
    solution="import accelkit as ak\n"
             "cheap = {c: ak.price.flops_per_dollar(c, usd_per_hour=min(p.usd_per_hour for p in "
             "ak.price.price_points(c))) for c in ('H100', 'TPU v5p')}\n"
             "q4_answer = max(cheap, key=cheap.get)",
    nudges={"tpu v5p": "Check that you priced each chip at its cheapest sourced price point "
                       "(min over ak.price.price_points(chip)), not at the catalog price."})

q5 = ExplainQuestion(
    "q5",
    "In the reuse_energy widget, turn the DRAM floor on and slide M = N = K from 32 to 512. "
    "Explain why the systolic array's picojoules per MAC fall, and what that has to do with the "
    "roofline of lesson 05.",
    statements=[
        ("The MACs grow as n³ while the elements that must cross DRAM grow as 3n², so each byte "
         "fetched is reused by more MACs.", True, "n³ / 3n² = n / 3 MACs per element"),
        ("A larger matrix makes each multiply-accumulate itself cheaper in the 45 nm table.",
         False, "the MAC costs the same at every size; what falls is the DRAM energy per MAC"),
        ("The fixed DRAM energy is spread over more arithmetic, so picojoules per MAC fall toward "
         "the cost of the MAC itself.", True, "the arithmetic part of each bar stays the same"),
        ("The bytes read from DRAM grow faster than the MACs, which is why the DRAM floor rises "
         "with n.", False, "the reverse: bytes grow as n², MACs as n³"),
        ("MACs per byte moved is the arithmetic intensity of lesson 05: the same reuse moves a "
         "large GEMM to the compute-bound side of the roofline.", True,
         "high intensity means arithmetic, not memory, dominates both time and energy"),
    ],
    hints=["Count the MACs (n³) and the elements that must cross DRAM (3n²).",
           "What is MACs per byte called in lesson 05?"],
    solution='q5_explanation = ("The MACs grow as n cubed but the DRAM floor as 3 n squared, so '
             'each byte read from memory is reused by more MACs: the arithmetic intensity rises '
             'and the fixed DRAM energy is spread over more work, until the arithmetic dominates '
             '— the same reason a large GEMM moves to the compute-bound side of the roofline.")')
