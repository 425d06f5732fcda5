"""Exercises for lesson 04 (shapes and utilization): utilization at batch 1, padding at 129,
count folds, write a padding-waste function, and explain the utilization map.

Every expected value comes from :class:`accelkit.systolic.SystolicArray`, independently of the
solution strings (which CI runs in place of the learner's answers).
"""

from __future__ import annotations

from accelkit.exercises._core import ExplainQuestion, FunctionQuestion, NumberQuestion
from accelkit.systolic import DATAFLOWS, SystolicArray

q1 = NumberQuestion(
    "q1",
    "Batch-1 decode: a 128×128 weight-stationary array multiplies one token (M = 1) by a "
    "4096×4096 weight matrix. What is its utilization, as a fraction between 0 and 1? "
    "(Within 1%.)",
    expected=lambda: SystolicArray(128, 128, "ws").estimate(M=1, N=4096, K=4096).utilization,
    rel_tol=0.01,
    hints=["Every fold maps a full 128×128 weight tile but streams only one row of A.",
           "Utilization = M·N·K / (rows · cols · cycles); one fold takes 2·128 + 128 + M − 2 cycles."],
    solution="folds = (4096 // 128) ** 2\n"
             "q1_answer = 1 * 4096 * 4096 / (128 * 128 * folds * (2 * 128 + 128 + 1 - 2))",
    slips={"That leaves out the weight load: a ws fold first shifts its 128 weight rows in "
           "(R cycles), then fills and drains.":
           lambda: 1 / (128 + 128 + 1 - 2),
           "That is a percentage: give the fraction, between 0 and 1.":
           lambda: 100 * SystolicArray(128, 128, "ws").estimate(M=1, N=4096, K=4096).utilization},
    too_high="Too high: does every fold pay its load, fill and drain, for one useful row?",
    too_low="Too low: is it a fraction (not a percentage divided by 100 again)?")

q2 = NumberQuestion(
    "q2",
    "An output-stationary 128×128 array computes a 129×129 output C (M = N = 129, K = 1024). "
    "What share of the array's cells, averaged over folds, is mapped to real outputs (its "
    "mapping efficiency, a fraction)? (Within 0.1%.)",
    expected=lambda: SystolicArray(128, 128, "os").estimate(M=129, N=129, K=1024)
    .mapping_efficiency, rel_tol=1e-3,
    hints=["os maps M × N on the array: ⌈129/128⌉ × ⌈129/128⌉ folds.",
           "Mapped cells summed over folds are M·N; offered cells are 128·128 per fold."],
    solution="q2_answer = 129 * 129 / (4 * 128 * 128)",
    slips={"That counts two folds in all: 129 needs two folds in EACH mapped dimension.":
           lambda: 129 * 129 / (2 * 128 * 128),
           "That counts one fold: 129 is one more than the array's 128.":
           lambda: 129 * 129 / (128 * 128)},
    too_high="Too high: how many folds does 129 need in each mapped dimension?",
    too_low="Too low: do the mapped cells add up to M·N over all folds?")


def _folds_reference(rows: int, cols: int, M: int, N: int, K: int, dataflow: str) -> int:
    return SystolicArray(rows, cols, dataflow).estimate(M=M, N=N, K=K).folds


def _folds_cases(rng) -> list[dict]:
    cases = [dict(rows=128, cols=128, M=129, N=128, K=128, dataflow=f) for f in DATAFLOWS]
    for _ in range(9):
        cases.append(dict(rows=int(rng.integers(1, 65)), cols=int(rng.integers(1, 65)),
                          M=int(rng.integers(1, 500)), N=int(rng.integers(1, 500)),
                          K=int(rng.integers(1, 500)),
                          dataflow=DATAFLOWS[int(rng.integers(len(DATAFLOWS)))]))
    return cases


q3 = FunctionQuestion(
    "q3",
    "Write folds(rows, cols, M, N, K, dataflow): how many folds (tiles) a rows×cols array cuts an "
    "M×K by K×N product into, for dataflow 'os', 'ws' or 'is'.",
    reference=_folds_reference, cases=_folds_cases, rel_tol=0.0,
    teaching_case={"rows": 128, "cols": 128, "M": 256, "N": 512, "K": 1024, "dataflow": "ws"},
    slips={"That is the os mapping (M × N on the array); ws maps K × N.":
           lambda rows, cols, M, N, K, dataflow: -(-M // rows) * -(-N // cols)},
    hints=["What is mapped on (rows × cols): os M × N, ws K × N, is K × M. The third dimension "
           "streams and never folds.",
           "folds = ⌈first mapped dim / rows⌉ × ⌈second mapped dim / cols⌉."],
    solution='''import math

from accelkit.systolic import MAPPING  # each dataflow's (rows, columns, streamed) dimensions

def folds(rows, cols, M, N, K, dataflow):
    size = {"M": M, "N": N, "K": K}
    on_rows, on_cols, _streamed = MAPPING[dataflow]
    return math.ceil(size[on_rows] / rows) * math.ceil(size[on_cols] / cols)''')


def _waste_reference(tile_m: int, tile_n: int, M: int, N: int) -> float:
    # Padding is what an output-stationary tile of tile_m × tile_n leaves unmapped.
    return 1 - SystolicArray(tile_m, tile_n, "os").estimate(M=M, N=N, K=1).mapping_efficiency


def _waste_cases(rng) -> list[dict]:
    cases = [dict(tile_m=128, tile_n=128, M=1, N=4096), dict(tile_m=16, tile_n=8, M=1, N=4096),
             dict(tile_m=128, tile_n=128, M=256, N=256)]
    for _ in range(7):
        cases.append(dict(tile_m=int(rng.choice([8, 16, 64, 128])),
                          tile_n=int(rng.choice([8, 16, 128])),
                          M=int(rng.integers(1, 600)), N=int(rng.integers(1, 600))))
    return cases


q4 = FunctionQuestion(
    "q4",
    "Write padding_waste(tile_m, tile_n, M, N): the fraction of a tile grid's slots that hold "
    "padding when an M×N output is covered by tile_m × tile_n tiles (0 when the tiles fit "
    "exactly). Try it on a 128×128 tile and on a GPU-like 16×8 tile with M = 1.",
    reference=_waste_reference, cases=_waste_cases, rel_tol=1e-9,
    teaching_case={"tile_m": 128, "tile_n": 128, "M": 1, "N": 4096},
    slips={"That is the share of slots holding real outputs; the waste is the rest (1 minus it).":
           lambda tile_m, tile_n, M, N: 1 - _waste_reference(tile_m, tile_n, M, N)},
    hints=["Round each dimension up to a whole number of tiles.",
           "waste = 1 − (M·N) / (padded M · padded N)."],
    solution='''import math

def padding_waste(tile_m, tile_n, M, N):
    padded = math.ceil(M / tile_m) * tile_m * math.ceil(N / tile_n) * tile_n
    return 1 - M * N / padded''')

q5 = ExplainQuestion(
    "q5",
    "In the lesson's utilization map (128×128 array, ws), move N from 128 to 129, then put it "
    "back and move M from 128 to 129. One change costs a lot of utilization, the other almost "
    "nothing. Explain why.",
    statements=[
        ("M = 129 also needs a second fold, but ws hides it with double buffering.", False,
         "M is never folded in ws: it streams; and double buffering hides loads, not folds"),
        ("In ws, N is mapped on the array's columns, so N = 129 needs a second column fold that "
         "is almost all padding.", True, "the second fold maps 1 column out of 128"),
        ("N = 129 costs more because 129 is odd and the array needs even sizes.", False,
         "N = 130 or 250 would cost the same extra fold; 128 + 1 is the problem, not oddness"),
        ("Utilization nearly halves because the extra fold pays its load, fill and drain again, "
         "so an MXU that pipelines its folds would not lose it.", False,
         "the halving is padding: the extra fold maps 1 column of 128, so it lasts as long as a "
         "full fold and does almost no work; lesson 04's pipelined MXU, which pays fill and drain "
         "once, falls off the same cliff"),
        ("In ws, M streams through the array, so M = 129 only makes each fold's stream one row "
         "(one cycle) longer.", True, "that is why the M change costs almost nothing"),
    ],
    hints=["Which dimensions does ws put on the array's rows and columns?",
           "What happens to a dimension of 129 on a 128-wide array, and to a stream one row longer?"],
    solution='q5_explanation = ("In ws the weights (K × N) are mapped on the array and M streams '
             'through it. N = 129 needs a second column fold that is almost all padding: it lasts as long '
             'as a full fold and does almost no work, so utilization nearly halves, pipelined or '
             'not; M = 129 only makes the stream one row longer, which costs one cycle per fold.")')
