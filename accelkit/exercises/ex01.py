"""Exercises for lesson 01 (why matmul): count a matmul, read the catalog, write a share
function, and explain what the LSTM shows.

Every expected value is computed from :mod:`accelkit.models`, independently of the solution
strings (which CI runs in place of the learner's answers).
"""

from __future__ import annotations

import accelkit.models as models
from accelkit.exercises._core import ExplainQuestion, FunctionQuestion, NumberQuestion


def _mlp_down_flops_each() -> float:
    ops = models.get("llama-2-7b").operations(batch=1, seq_len=2048, phase="forward")
    return next(op for op in ops if op.name == "mlp_down").flops_each


q1 = NumberQuestion(
    "q1",
    "Llama 2 7B's MLP ends with a 'down' projection from d_ff = 11,008 back to d_model = 4,096. "
    "How many FLOPs does ONE layer's down projection do over one sequence of 2,048 tokens? "
    "(Within 1%.)",
    expected=_mlp_down_flops_each, rel_tol=0.01,
    hints=["A matmul of an M×K matrix by a K×N matrix is 2·M·N·K FLOPs.",
           "Here M is the number of tokens, K = d_ff and N = d_model."],
    solution="q1_answer = 2 * 2048 * 11008 * 4096",
    slips={"That is all 32 layers: the question asks for ONE layer's down projection.":
           lambda: 32 * _mlp_down_flops_each(),
           "That counts 1 FLOP per multiply-accumulate: a MAC is 2 FLOPs (a multiply and an add).":
           lambda: _mlp_down_flops_each() / 2},
    too_high="Too high: is it one layer's down projection, over one sequence of 2,048 tokens?",
    too_low="Too low: did you count 2 FLOPs per multiply-accumulate, for every one of the "
            "2,048 tokens?")


def _embedding_fraction() -> float:
    dlrm = models.get("dlrm")
    if not isinstance(dlrm, models.Recommender):
        raise TypeError(f"the catalog's dlrm is a {type(dlrm).__name__}, not a Recommender")
    return dlrm.embedding_params / dlrm.params


q2 = NumberQuestion(
    "q2",
    "What fraction (between 0 and 1) of DLRM's parameters are embedding-table rows? Use the "
    "catalog: ak.models.get('dlrm'). (Within 0.01%.)",
    expected=_embedding_fraction, rel_tol=1e-4,
    hints=["The recommender model has .embedding_params and .params.",
           "A fraction is a part over the whole: give a number like 0.5, not 50."],
    solution='dlrm = ak.models.get("dlrm")\nq2_answer = dlrm.embedding_params / dlrm.params',
    slips={"That is a percentage: give the fraction, between 0 and 1.":
           lambda: 100 * _embedding_fraction()},
    too_high="Too high: a fraction is at most 1.",
    too_low="Too low: do the embedding rows include every table's rows × dimension?")


def _flops_share_reference(operations: tuple, kind: str) -> float:
    return models.kind_share(operations, kind).flops_fraction


def _flops_share_cases(rng) -> list[dict]:
    cases = []
    names = models.names()
    for _ in range(6):
        model = models.get(names[int(rng.integers(len(names)))])
        ops = model.operations(batch=int(rng.integers(1, 65)))
        kinds = sorted({op.kind for op in ops})
        cases.append({"operations": ops, "kind": kinds[int(rng.integers(len(kinds)))]})
    return cases


q3 = FunctionQuestion(
    "q3",
    "Write flops_share(operations, kind): the fraction of the total FLOPs of `operations` (a "
    "tuple of Operation, as model.operations() returns) that belongs to operations of that "
    "`kind` (e.g. 'matmul').",
    reference=_flops_share_reference, cases=_flops_share_cases, rel_tol=1e-9,
    teaching_case={"operations": models.get("llama-2-7b").operations(batch=1), "kind": "matmul"},
    teaching_label="operations=ak.models.get('llama-2-7b').operations(batch=1), kind='matmul'",
    slips={"You returned the share of the bytes; the question asks for the FLOPs.":
           lambda operations, kind: models.kind_share(operations, kind).bytes_fraction,
           "You returned the FLOPs of that kind, not their fraction of the total: divide by the "
           "sum over all operations.":
           lambda operations, kind: sum(op.flops for op in operations if op.kind == kind)},
    hints=["Each Operation has .kind and .flops.",
           "Sum the FLOPs of the operations whose kind matches, and divide by the sum of all."],
    solution='''def flops_share(operations, kind):
    total = sum(op.flops for op in operations)
    return sum(op.flops for op in operations if op.kind == kind) / total''')

q4 = ExplainQuestion(
    "q4",
    "In the lesson's widget, pick the 2-layer LSTM. Its recurrent matmul is about a third of "
    "the FLOPs but nearly all the bytes. Explain why, in two or three sentences.",
    statements=[
        ("The input projection can multiply every time step's inputs at once, so it reads its "
         "weights once for many rows.", True,
         "it has the same FLOPs as the recurrent matmul but a few percent of its bytes"),
        ("The recurrent matmul does more FLOPs per weight byte than the input projection, which "
         "is why it dominates the bytes.", False,
         "the reverse: about 1 FLOP per byte against about 34 for the input projection"),
        ("Each time step needs the previous step's hidden state, so the recurrent matmul "
         "multiplies only the batch's few rows at a time.", True,
         "step t + 1 cannot start before step t, so the rows cannot be gathered into one big matmul"),
        ("Its bytes are mostly activations: the hidden state written at each step is much larger "
         "than the weight matrix W_hh.", False,
         "the hidden state is batch × hidden, tiny beside the hidden × 4·hidden weights"),
        ("The recurrent weight matrix W_hh is read from memory again at every time step.", True,
         "so its bytes are counted once per step, and there are as many steps as tokens"),
        ("The LSTM's gates are elementwise operations, and they are what makes the bytes large.",
         False, "the elementwise cells are about 0.1% of the bytes in the widget"),
    ],
    hints=["What must an LSTM finish before it can start time step t + 1?",
           "How many rows does the recurrent matmul multiply at once, and how often does it "
           "read W_hh?"],
    solution='q4_explanation = ("Each time step depends on the previous one, so the recurrent '
             'matmul multiplies only batch rows at a time and must re-read the whole weight '
             'matrix W_hh at every step. Few FLOPs per weight byte: the bytes dominate.")')
