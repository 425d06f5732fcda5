"""Exercises for lesson 05 (the roofline): a ridge point, an intensity, a bound, a roofline-time
function, and an explanation of decode attention.

Every expected value is computed from :mod:`accelkit.chips` and :mod:`accelkit.roofline`,
independently of the solution strings (which CI runs in place of the learner's answers).
"""

from __future__ import annotations

from accelkit import chips, roofline
from accelkit.exercises._core import (ChoiceQuestion, ExplainQuestion, FunctionQuestion,
                                      NumberQuestion)

q1 = NumberQuestion(
    "q1",
    "What is the bf16 ridge point of an NVIDIA H100 (SXM), in FLOPs per byte? Use its peak and "
    "its HBM bandwidth from ak.chips.get('H100'). (Within 1%.)",
    expected=lambda: chips.get("H100").ridge_flops_per_byte("bf16"), rel_tol=0.01,
    hints=["The ridge is peak FLOP/s divided by memory bytes/s.",
           "chip.peak_flops('bf16') / chip.hbm_bytes_per_second"],
    solution='h100 = ak.chips.get("H100")\nq1_answer = h100.peak_flops("bf16") / h100.hbm_bytes_per_second',
    too_high="Too high: check that you divide FLOP/s by bytes/s (not by GB/s).",
    too_low="Too low: the ridge is FLOP/s over bytes/s, both in base units.")

q2 = NumberQuestion(
    "q2",
    "A decode step multiplies [B, 8192] activations by an [8192, 28672] weight in bf16, with "
    "B = 32. What is its arithmetic intensity in FLOPs per byte (each matrix read or written "
    "once)? (Within 0.2%.)",
    expected=lambda: roofline.matmul("H100", M=32, N=28672, K=8192).arithmetic_intensity,
    # 0.2%: 31.8 and the exact 31.84 pass; B itself (32, the weights-only count) is 0.5% off.
    rel_tol=0.002,
    hints=["FLOPs = 2·M·N·K; bytes = 2·(M·K + K·N + M·N) in bf16.",
           "For B much smaller than D and F the answer is close to B, a little below it."],
    solution="M, N, K = 32, 28672, 8192\nq2_answer = 2 * M * N * K / (2 * (M * K + K * N + M * N))",
    slips={"That is B itself, the weights-only count: the activations read and the output "
           "written are bytes too (each matrix read or written once).": lambda: 32.0},
    too_high="Too high: did you count the bytes of all three matrices?",
    too_low="Too low: 2 bytes per bf16 element, and 2 FLOPs per multiply-accumulate?")

q3 = ChoiceQuestion(
    "q3",
    "On a TPU v5e in bf16, is that same decode step ([32, 8192] × [8192, 28672]) 'compute'- or "
    "'memory'-bound?",
    options=["compute", "memory"],
    expected=lambda: roofline.matmul("TPU v5e", M=32, N=28672, K=8192).bound,
    hints=["Compare your intensity from q2 with the v5e's ridge point from the lesson."],
    solution='q3_answer = "memory"',
    nudges={"compute": "Its intensity is about its batch, 32. Is that above or below the "
                       "v5e's ridge?"})


def _roofline_seconds(flops: float, bytes_moved: float, peak_flops_per_second: float,
                      bytes_per_second: float) -> float:
    return roofline.estimate("TPU v5e", flops=flops, bytes=bytes_moved,
                             peak_flops_per_second=peak_flops_per_second,
                             bytes_per_second=bytes_per_second).seconds


def _roofline_cases(rng) -> list[dict]:
    return [{"flops": float(10 ** rng.uniform(6, 15)),
             "bytes_moved": float(10 ** rng.uniform(5, 12)),
             "peak_flops_per_second": float(10 ** rng.uniform(13, 15.5)),
             "bytes_per_second": float(10 ** rng.uniform(11, 13))} for _ in range(8)]


q4 = FunctionQuestion(
    "q4",
    "Write roofline_seconds(flops, bytes_moved, peak_flops_per_second, bytes_per_second): the "
    "roofline time of an operation, assuming compute and memory traffic overlap perfectly.",
    reference=_roofline_seconds, cases=_roofline_cases, rel_tol=1e-9,
    teaching_case={"flops": 1e12, "bytes_moved": 2e9, "peak_flops_per_second": 1e15,
                   "bytes_per_second": 1e12},
    slips={"You added compute and memory time: with perfect overlap the slower of the two sets "
           "the pace (a max, not a sum).":
           lambda flops, bytes_moved, peak_flops_per_second, bytes_per_second:
           flops / peak_flops_per_second + bytes_moved / bytes_per_second,
           "You took the faster of the two: the slower one sets the pace.":
           lambda flops, bytes_moved, peak_flops_per_second, bytes_per_second:
           min(flops / peak_flops_per_second, bytes_moved / bytes_per_second)},
    hints=["Compute time is flops / peak; memory time is bytes / bandwidth.",
           "With perfect overlap the slower of the two sets the pace: take the max."],
    solution='''def roofline_seconds(flops, bytes_moved, peak_flops_per_second, bytes_per_second):
    return max(flops / peak_flops_per_second, bytes_moved / bytes_per_second)''')

q5 = ExplainQuestion(
    "q5",
    "In the roofline explorer, pick 'decode attention' and move the batch B from 1 to 4096. "
    "The star does not move along the x axis, while a decode-step matmul's star does. Explain "
    "why, in two or three sentences.",
    statements=[
        ("Attention's star stays put because its FLOPs do not grow with B.", False,
         "its FLOPs grow with B; so do its bytes, in the same proportion"),
        ("In a matmul the B rows share one weight matrix, so FLOPs grow with B while bytes "
         "barely do.", True, "that is why the matmul's star moves right"),
        ("The star stays put because the KV cache is shared by every sequence in the batch.",
         False, "the opposite: each sequence has its own keys and values"),
        ("In decode attention each sequence reads its own keys and values from the KV cache, so "
         "bytes grow with B as fast as FLOPs.", True, "nothing is shared for the batch to reuse"),
        ("A large enough batch makes decode attention compute-bound, once B passes the ridge "
         "point.", False, "its intensity does not depend on B, so no batch gets it past the ridge"),
        ("Because FLOPs and bytes grow in the same proportion, their ratio, the arithmetic "
         "intensity, stays the same at any batch.", True, "the x axis is that ratio"),
    ],
    hints=["What does a batch of sequences share in a matmul, and what in attention?",
           "If both FLOPs and bytes double, what happens to FLOPs per byte?"],
    solution='q5_explanation = ("In a matmul the B rows share one weight matrix, so FLOPs grow '
             'with B but bytes barely do. In attention each sequence reads its own keys and '
             'values from the KV cache, so bytes grow with B exactly as FLOPs do and the '
             'intensity stays the same: memory-bound at any batch.")')
