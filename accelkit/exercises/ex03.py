"""Exercises for lesson 03 (the TPU: systolic arrays): count a fold's cycles, count buffer reads,
write the weight-stationary cycle formula, price double buffering, and explain the animation.

Every expected value comes from :class:`accelkit.systolic.SystolicArray`, independently of the
solution strings (which CI runs in place of the learner's answers).
"""

from __future__ import annotations

from accelkit.exercises._core import ExplainQuestion, FunctionQuestion, NumberQuestion
from accelkit.systolic import SystolicArray

q1 = NumberQuestion(
    "q1",
    "A 4×4 output-stationary (os) array multiplies a 4×4 matrix A by a 4×4 matrix B. How many "
    "cycles does it take, fill and drain included? (Exact.)",
    expected=lambda: SystolicArray(4, 4, "os").estimate(M=4, N=4, K=4).cycles, rel_tol=0.0,
    hints=["os has no load phase: A and B enter skewed from the left and the top.",
           "One fold of os takes T + R + C − 2 cycles, with T = K streamed."],
    solution="q1_answer = 4 + 4 + 4 - 2",
    slips={"That is the weight-stationary count: os has no stationary tile to shift in first.":
           lambda: SystolicArray(4, 4, "ws").estimate(M=4, N=4, K=4).cycles,
           "That is the K multiply-accumulate steps alone: the skewed operands also take cycles "
           "to fill the array and drain out of it.": lambda: 4.0},
    too_high="Too high: does os shift a stationary tile in before it starts?",
    too_low="Too low: how late do the last operands reach the far corner?")

q2 = NumberQuestion(
    "q2",
    "A 128×128 weight-stationary (ws) array multiplies A (M = 2048, K = 1024) by weights B "
    "(K = 1024, N = 512). How many times, on average, is each value of A read from the "
    "array's buffer? (Exact.)",
    expected=lambda: SystolicArray(128, 128, "ws").estimate(M=2048, N=512, K=1024)
    .sram_reads["A"] / (2048 * 1024), rel_tol=0.0,
    hints=["ws maps K × N on the array; each fold streams all M rows of A past its weights.",
           "A value of A is read once per column fold: ⌈N / 128⌉."],
    solution="import math\nq2_answer = math.ceil(512 / 128)",
    slips={"That is once per column of B: inside the array a value passes from cell to cell, "
           "so it is read once per column fold, not once per column.": lambda: 512.0,
           "Once is too few: each column fold streams A through the array again.": lambda: 1.0},
    too_high="Too high: is a value re-read by every cell, or passed from cell to cell?",
    too_low="Too low: how many column folds stream A through the array?")


def _ws_cycles_reference(rows: int, cols: int, M: int, N: int, K: int) -> int:
    return SystolicArray(rows, cols, "ws").estimate(M=M, N=N, K=K).cycles


def _ws_cases(rng) -> list[dict]:
    cases = [dict(rows=4, cols=4, M=4, N=4, K=4), dict(rows=128, cols=128, M=1, N=4096, K=4096)]
    for _ in range(8):
        cases.append(dict(rows=int(rng.integers(1, 33)), cols=int(rng.integers(1, 33)),
                          M=int(rng.integers(1, 300)), N=int(rng.integers(1, 300)),
                          K=int(rng.integers(1, 300))))
    return cases


q3 = FunctionQuestion(
    "q3",
    "Write ws_cycles(rows, cols, M, N, K): the total cycles a rows×cols weight-stationary array "
    "takes for an M×K by K×N product (no double buffering), fill, drain and every fold included.",
    reference=_ws_cycles_reference, cases=_ws_cases, rel_tol=0.0,
    teaching_case={"rows": 4, "cols": 4, "M": 8, "N": 8, "K": 8},
    slips={"That is one fold's cycles: count the folds, ⌈K/rows⌉ × ⌈N/cols⌉, and multiply.":
           lambda rows, cols, M, N, K: 2 * rows + cols + M - 2,
           "That is the output-stationary count (no load phase): ws first shifts its weights in, "
           "rows cycles per fold.":
           lambda rows, cols, M, N, K: -(-K // rows) * -(-N // cols) * (rows + cols + M - 2)},
    hints=["ws maps K on the array's rows and N on its columns: ⌈K/rows⌉ × ⌈N/cols⌉ folds.",
           "Every fold lasts the same, even a partly filled one: 2·rows + cols + M − 2 cycles."],
    solution='''import math

def ws_cycles(rows, cols, M, N, K):
    folds = math.ceil(K / rows) * math.ceil(N / cols)
    return folds * (2 * rows + cols + M - 2)''')

q4 = NumberQuestion(
    "q4",
    "The same 128×128 ws array runs a decode step: M = 16 tokens against a 4096×4096 weight "
    "matrix (K = N = 4096). How many cycles does double buffering save? (Exact.)",
    expected=lambda: (SystolicArray(128, 128, "ws").estimate(M=16, N=4096, K=4096).cycles
                      - SystolicArray(128, 128, "ws", double_buffer=True)
                      .estimate(M=16, N=4096, K=4096).cycles), rel_tol=0.0,
    hints=["Double buffering hides the load (R cycles) of every fold but the first.",
           "Count the folds: ⌈4096/128⌉ × ⌈4096/128⌉."],
    solution="folds = (4096 // 128) * (4096 // 128)\nq4_answer = (folds - 1) * 128",
    slips={"That hides the first fold's load too: the first fold still pays its load.":
           lambda: (4096 // 128) ** 2 * 128},
    too_high="Too high: can the first fold's load be hidden?",
    too_low="Too low: how many cycles of load does each hidden fold save?")

q5 = ExplainQuestion(
    "q5",
    "In the lesson's animation, step through one 4×4×4 product in ws and then in os. os "
    "finishes in fewer cycles. Explain what ws does in its first cycles that os does not, and "
    "why the orange (useful) cells form a diagonal that grows and then shrinks.",
    statements=[
        ("ws takes longer because its cells do more multiply-accumulates than os's for the same "
         "product.", False, "both do M·N·K = 64 MACs; ws spends extra cycles loading, not computing"),
        ("In ws the weights are first shifted into the cells, one row per cycle, before any "
         "multiply can start; os has no stationary tile to load.", True,
         "those are the cycles in which no cell is orange in ws"),
        ("The diagonal grows and shrinks because the cells near the far corner run at a slower "
         "clock.", False, "every cell runs on the same clock; the operands simply arrive later"),
        ("Each row of the stream enters one cycle after the row above it (the skew), so useful "
         "work moves through the array as a diagonal wavefront.", True,
         "this is the fill: the wavefront reaches the far corner after R − 1 + C − 1 cycles"),
        ("os is faster because it reads each value of A from the buffer only once, while ws reads "
         "A once per cell.", False, "in both dataflows operands pass from cell to cell, read once per fold"),
        ("The diagonal shrinks at the end because the last operands are still travelling to the "
         "far cells while the first cells have nothing left to do.", True, "this is the drain"),
    ],
    hints=["Watch which cells hold a b-value before any cell turns orange.",
           "Row k of the stream enters one cycle after row k − 1: what shape does that make?"],
    solution='q5_explanation = ("In ws the weights must first be shifted into the cells, one row '
             'per cycle, before any multiply can start; os has no stationary tile to load. The '
             'operands enter skewed, each row one cycle after the previous, so the useful work '
             'is a diagonal wavefront that fills the array and then drains out of it.")')
