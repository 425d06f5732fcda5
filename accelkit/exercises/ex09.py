"""Exercises for lesson 09, flexibility: the same work on a toy GPU and a toy TPU.

Expected values come from :func:`accelkit.workloads.compare` on the default machines, not from
the solutions.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from accelkit.exercises._core import (ChoiceQuestion, ExplainQuestion, FunctionQuestion,
                                      NumberQuestion)
from accelkit.workloads import compare


@lru_cache(maxsize=None)
def _compare(name: str):
    return compare(name)


def _dense_ratio() -> float:
    c = _compare("dense_matmul")
    return c.tpu_cell_cycles / c.gpu_cell_cycles


q1 = NumberQuestion(
    "q1",
    "Run c = compare('dense_matmul') (a 2048³ matmul on the default machines). From c.gpu_cycles, "
    "c.tpu_cycles, c.gpu_mac_cells and c.tpu_mac_cells, compute TPU cell-cycles ÷ GPU "
    "cell-cycles. (±1%)",
    expected=_dense_ratio, rel_tol=0.01,
    hints=["Cell-cycles = cycles × MAC cells: area × time.",
           "Divide the TPU's product by the GPU's; below 1 means the TPU wins per unit of area."],
    solution=("from accelkit.workloads import compare\n"
              "c = compare('dense_matmul')\n"
              "q1_answer = (c.tpu_cycles * c.tpu_mac_cells) / (c.gpu_cycles * c.gpu_mac_cells)"),
    slips={"That is GPU ÷ TPU: the question asks for TPU cell-cycles over GPU cell-cycles.":
           lambda: 1 / _dense_ratio(),
           "That compares cycles alone: multiply each machine's cycles by its own MAC cells.":
           lambda: _compare("dense_matmul").tpu_cycles / _compare("dense_matmul").gpu_cycles},
    too_high="Too high: is it TPU over GPU, each machine's cycles times its own MAC cells?",
    too_low="Too low: is it TPU over GPU, each machine's cycles times its own MAC cells?")


def _amdahl_transformer() -> float:
    return 1.0 / _compare("transformer_layer").tpu_outside_matrix_share


q2 = NumberQuestion(
    "q2",
    "In the lesson, the TPU spends a share s of the transformer layer's cycles outside its "
    "systolic array (print `compare('transformer_layer').tpu_outside_matrix_share`). With an "
    "infinitely fast array, at most how many times faster would the layer run? (±1%)",
    expected=_amdahl_transformer, rel_tol=0.01,
    hints=["With the matrix part taking no time, only the share s is left.",
           "Speed-up = 1 ÷ s."],
    solution=("from accelkit.workloads import compare\n"
              "q2_answer = 1 / compare('transformer_layer').tpu_outside_matrix_share"),
    slips={"That speeds up the part outside the array: with the array infinitely fast, the "
           "time left is only the share s outside it.":
           lambda: 1 / (1 - _compare("transformer_layer").tpu_outside_matrix_share)},
    too_low="Too low: what share of the time is left when the array takes none?")


def _amdahl(outside_share: float, matrix_speedup: float) -> float:
    return 1.0 / (outside_share + (1.0 - outside_share) / matrix_speedup)


def _cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"outside_share": 0.0, "matrix_speedup": 4.0},
             {"outside_share": 1.0, "matrix_speedup": 100.0}]
    for _ in range(6):
        cases.append({"outside_share": float(rng.uniform(0.01, 0.99)),
                      "matrix_speedup": float(rng.choice([1.5, 2.0, 10.0, 1e6]))})
    return cases


q3 = FunctionQuestion(
    "q3",
    "Write amdahl_speedup(outside_share, matrix_speedup): the whole workload's speed-up when "
    "only its matrix part (1 − outside_share of the time) runs matrix_speedup times faster.",
    reference=_amdahl, cases=_cases, rel_tol=1e-9,
    teaching_case={"outside_share": 0.2, "matrix_speedup": 10.0},
    slips={"You sped up the outside part: it is the matrix part, 1 − outside_share of the time, "
           "that runs matrix_speedup times faster.":
           lambda outside_share, matrix_speedup: _amdahl(1 - outside_share, matrix_speedup)},
    hints=["New time = outside_share + (1 − outside_share) ÷ matrix_speedup, old time = 1."],
    solution='''def amdahl_speedup(outside_share, matrix_speedup):
    return 1 / (outside_share + (1 - outside_share) / matrix_speedup)''')


def _rnn_winner() -> str:
    return _compare("rnn_small_batch").winner_per_area.lower()


q4 = ChoiceQuestion(
    "q4",
    "Per unit of area, which toy machine runs the small-batch LSTM step ('rnn_small_batch', "
    "batch 4) in fewer cell-cycles: 'gpu' or 'tpu'?",
    options=["gpu", "tpu"], expected=_rnn_winner,
    hints=["Pick rnn_small_batch in the flexibility lab and read the whole-workload ratio.",
           "A ratio above 1 means the GPU uses fewer cell-cycles. Look how close to 1 it is."],
    solution='q4_answer = "gpu"',
    nudges={"tpu": "Per unit of area means cell-cycles: multiply each machine's cycles by its "
                   "own MAC cells before you compare."})


q5 = ExplainQuestion(
    "q5",
    "In the flexibility lab pick 'branchy_elementwise' and change 'branch: instructions per side' "
    "from 64 to 4. The GPU's advantage per cell shrinks a lot. Explain what you see.",
    statements=[
        ("The TPU's vector unit has no per-warp branches: it always computes both sides under a "
         "mask (predication).", True, "so it pays for both sides at any branch share"),
        ("With 4-instruction sides the GPU's warps stop diverging, which is why its advantage "
         "shrinks.", False, "the share of lanes taking the branch is unchanged, so warps diverge "
                            "just as often; what changes is whether instructions set the pace"),
        ("The GPU skips a side when every lane of a warp agrees, though at this branch share most "
         "warps diverge anyway.", True, "divergence is decided per warp"),
        ("The TPU runs the branchy code on its systolic array, and short sides fit the array "
         "better.", False, "elementwise work runs on the vector unit; the array only multiplies "
                           "matrices"),
        ("With 4-instruction sides both machines mostly wait on memory transactions, so the "
         "difference in instructions matters much less.", True,
         "the pace moves from instructions to memory, where the two differ less per cell"),
    ],
    hints=["Which machine runs both sides of every branch, and which only when a warp disagrees?",
           "With 4-instruction sides, what sets the pace: instructions or memory?"],
    solution='q5_explanation = ("The TPU\'s vector unit has no per-warp branches: it always '
             'computes both sides under a mask (predication). The GPU skips a side when a '
             'warp\'s lanes agree, though at 50% most warps diverge anyway. With 64-instruction '
             'sides the work is instruction-bound, so the narrow vector unit pays heavily; with '
             '4-instruction sides both machines mostly wait on memory transactions, and the '
             'difference shrinks to their memory and area.")')
