"""Exercises for lesson 02, the GPU as a SIMD machine: warps, memory, divergence, tensor cores.

Expected values come from :class:`accelkit.simd.SIMDMachine` itself, not from the solutions.
"""

from __future__ import annotations


import numpy as np

from accelkit.exercises._core import (ChoiceQuestion, ExplainQuestion, FunctionQuestion,
                                      NumberQuestion)
from accelkit.simd import SIMDMachine


def _gelu_issue() -> float:
    x = np.random.default_rng(0).standard_normal(4096)
    return SIMDMachine().elementwise(x, "gelu").issue_cycles


q1 = NumberQuestion(
    "q1",
    "GELU over 4,096 elements on the default toy GPU (4 cores × 32 lanes). Each warp issues "
    "1 load, 10 ALU instructions and 1 store; warps are dealt to cores round-robin. How many "
    "issue cycles does the busiest core spend? (±1%)",
    expected=_gelu_issue, rel_tol=0.01,
    hints=["Warps = elements ÷ lanes. Each core gets warps ÷ cores of them.",
           "Issue cycles = (warps per core) × (instructions per warp)."],
    solution="q1_answer = (4096 // 32 // 4) * (1 + 10 + 1)",
    slips={"That puts every warp on one core: the warps are dealt round-robin to the 4 cores.":
           lambda: 4 * _gelu_issue(),
           "That counts the 10 ALU instructions only: the load and the store are instructions too.":
           lambda: _gelu_issue() * 10 / 12},
    too_high="Too high: are the warps shared among the 4 cores?",
    too_low="Too low: does each warp's program count all its instructions?")


def _stride2() -> float:
    return SIMDMachine().transactions(np.arange(4096) * 2)


q2 = NumberQuestion(
    "q2",
    "Thread t loads element 2·t (stride 2) for t = 0 … 4,095. Elements are 4 bytes, transactions "
    "32 bytes, warps 32 lanes. How many global-memory transactions does the load take? (±1%)",
    expected=_stride2, rel_tol=0.01,
    hints=["One warp's 32 lanes span 32 × 2 × 4 = 256 bytes.",
           "Each warp touches 256 ÷ 32 = 8 segments; there are 4,096 ÷ 32 warps."],
    solution="q2_answer = (4096 // 32) * (32 * 2 * 4 // 32)",
    slips={"That is the coalesced load's count: with stride 2 the lanes skip every other "
           "element, so each warp's span doubles.": lambda: _stride2() / 2},
    too_low="Too low: how many bytes does one warp's load span?")


def _reference_cycles(issue_cycles: int, transactions: int, latency: int, in_flight: int) -> int:
    memory = -(-transactions * latency // in_flight)
    return max(issue_cycles, memory) + (latency if transactions else 0)


def _cases(rng: np.random.Generator) -> list[dict]:
    """Inputs taken from real engine runs (so the formula is checked against the machine)."""
    cases = []
    for _ in range(6):
        cores = int(rng.choice([1, 2, 4, 8]))
        warps = int(rng.choice([1, 2, 4, 8, 16]))
        latency = int(rng.choice([16, 64, 200]))
        machine = SIMDMachine(cores=cores, warps_per_core=warps, memory_latency_cycles=latency)
        op = str(rng.choice(["relu", "gelu", "exp"]))
        run = machine.elementwise(rng.standard_normal(32 * cores * warps * 4), op)
        cases.append({"issue_cycles": run.issue_cycles, "transactions": run.global_transactions,
                      "latency": latency, "in_flight": cores * warps})
    return cases


q3 = FunctionQuestion(
    "q3",
    "Write cycles(issue_cycles, transactions, latency, in_flight): the toy GPU's time for an "
    "operation. Memory needs ceil(transactions × latency ÷ in_flight) cycles (Little's law); "
    "issue and memory overlap; the first access's latency cannot be hidden.",
    reference=_reference_cycles, cases=_cases, rel_tol=0.0,
    teaching_case={"issue_cycles": 1000, "transactions": 400, "latency": 100, "in_flight": 20},
    slips={"You added issue and memory cycles: they overlap, so the larger one sets the pace "
           "(a max, not a sum).":
           lambda issue_cycles, transactions, latency, in_flight:
           issue_cycles + -(-transactions * latency // in_flight) + latency,
           "Close: the first access's latency cannot be hidden; add it once on top.":
           lambda issue_cycles, transactions, latency, in_flight:
           max(issue_cycles, -(-transactions * latency // in_flight))},
    hints=["The larger of issue and memory sets the pace.",
           "Add one latency on top, when there was any transaction. Use -(-a // b) for ceil."],
    solution='''def cycles(issue_cycles, transactions, latency, in_flight):
    memory = -(-transactions * latency // in_flight)
    return max(issue_cycles, memory) + (latency if transactions else 0)''')


def _tc_bound() -> str:
    run = SIMDMachine(tensor_core=(16, 8, 16)).estimate(M=1024, N=1024, K=1024)
    return "memory" if run.memory_cycles > run.issue_cycles else "issue"


q4 = ChoiceQuestion(
    "q4",
    "With a 16×8×16 tensor core, a 1024³ matmul on the default toy GPU is bound by what: "
    "'memory' or 'issue'?",
    options=["memory", "issue"], expected=_tc_bound,
    hints=["Open the tensor-core lab at 1024 and compare issue cycles with memory cycles."],
    solution='q4_answer = "memory"',
    nudges={"issue": "Compare the two cycle counts in the tensor-core lab at 1024, with the "
                     "16×8×16 MMA selected: which one is larger?"})


q5 = ExplainQuestion(
    "q5",
    "In the divergence lab, set 'instructions per side' to 4 and move the share of lanes taking "
    "the branch from 0 to 0.5. The slowdown stays at 1.00×. With 64 per side it nearly doubles. "
    "Explain what you see.",
    statements=[
        ("With 4 instructions per side no warp diverges, so there is nothing extra to run.", False,
         "at a share of 0.5 nearly every warp diverges, with 4 or 64 per side; only the cost differs"),
        ("A diverged warp runs both sides of the branch, one after the other, with the lanes of "
         "the side not taken masked off.", True, "that is what divergence costs: extra issue cycles"),
        ("Divergence makes the loads uncoalesced, which is what doubles the time at 64 per side.",
         False, "the addresses are the same with or without the branch; the issue cycles grow"),
        ("With 4 instructions per side the kernel is memory-bound: the extra issue cycles overlap "
         "with waiting for transactions, so the time does not change.", True,
         "compare the issue and memory cycles in the table under the plot"),
        ("With 64 instructions per side issue becomes the bound, and running both sides nearly "
         "doubles the issue cycles.", True, "once issue sets the pace, every extra instruction shows"),
    ],
    hints=["Look at the issue and memory cycles in the table under the plot.",
           "Divergence adds instructions. When do extra instructions not add time?"],
    solution='q5_explanation = ("Divergence makes a warp run both sides under a mask, which adds '
             'issue cycles. With 4-instruction sides the kernel is bound by memory: the extra '
             'instructions overlap with waiting for transactions, so they are hidden. With 64 per '
             'side, issue becomes the bound and doubles.")')
