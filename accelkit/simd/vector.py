"""The toy GPU's vector kernels, one thread per element: elementwise operations, row
reductions, a plain load in an access pattern, an embedding gather and a data-dependent branch.

Each is a fixed program per warp, so instruction counts follow from the shapes (and, for the
branch, from which lanes take which side); transactions are counted from the lanes' addresses.
Each returns :class:`~accelkit.simd.results.KernelCounts` and the data's real result; the
machine (:class:`~accelkit.simd.SIMDMachine`) prices it in cycles. The TPU-style machine's
vector unit (:class:`~accelkit.workloads.TPUStyleMachine`) runs the same kernels.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from accelkit import _validate as check
from accelkit.simd.memory import ceil_div, distinct_segments, index_vector, transactions
from accelkit.simd.results import KernelCounts

#: Unary/binary elementwise operations and the ALU instructions each costs per element. These are
#: assumptions of the toy, chosen as rough instruction counts of a polynomial/exponential
#: evaluation (GELU uses the tanh form: about ten multiplies, adds and a tanh).
ELEMENTWISE_INSTRUCTIONS: dict[str, int] = {
    "relu": 1, "add": 1, "mul": 1, "exp": 4, "tanh": 6, "sigmoid": 6, "gelu": 10,
}
_BINARY = ("add", "mul")
#: Row reductions :func:`reduction` runs.
REDUCTIONS = ("sum", "max", "softmax")


class VectorTarget(Protocol):
    """What a vector kernel reads of its machine (a :class:`~accelkit.simd.SIMDMachine`)."""

    @property
    def cores(self) -> int: ...
    @property
    def lanes(self) -> int: ...
    @property
    def transaction_bytes(self) -> int: ...
    @property
    def element_bytes(self) -> int: ...
    @property
    def skip_uniform_branches(self) -> bool: ...


def _uniform_issue(machine: VectorTarget, warps: int, per_warp: int) -> int:
    """Instructions the busiest core issues when every warp runs ``per_warp`` (round-robin)."""
    return ceil_div(warps, machine.cores) * per_warp


def _transactions(machine: VectorTarget, indices: np.ndarray) -> int:
    return transactions(indices, lanes=machine.lanes, element_bytes=machine.element_bytes,
                        transaction_bytes=machine.transaction_bytes)


def elementwise(machine: VectorTarget, x: object, op: str = "relu",
                y: object | None = None) -> KernelCounts:
    """Apply ``op`` to every element of x (one thread per element).

    Args:
        x: a 1-D or 2-D numeric array.
        op: one of ``ELEMENTWISE_INSTRUCTIONS`` ("relu", "gelu", "tanh", "sigmoid", "exp",
            and the binary "add", "mul", which need ``y`` of x's shape).
    Program per warp: load x (and y), ``ELEMENTWISE_INSTRUCTIONS[op]`` ALU instructions, store.
    """
    op = check.choice("op", op, ELEMENTWISE_INSTRUCTIONS)
    xv = _array("x", x)
    inputs = {"x": xv}
    if op in _BINARY:
        if y is None:
            raise ValueError(f"op {op!r} needs a second operand y of x's shape {xv.shape}")
        yv = _array("y", y)
        if yv.shape != xv.shape:
            raise ValueError(f"y must have x's shape {xv.shape}, got {yv.shape}")
        inputs["y"] = yv
    elif y is not None:
        raise ValueError(f"op {op!r} takes one operand; y must be None")
    out = _apply(op, xv, inputs.get("y"))
    n = xv.size
    warps = ceil_div(n, machine.lanes)
    alu = ELEMENTWISE_INSTRUCTIONS[op]
    per_warp = len(inputs) + alu + 1
    flat = np.arange(n, dtype=np.int64)
    tx = _transactions(machine, flat) * (len(inputs) + 1)
    active = n * (len(inputs) + alu + 1)
    return KernelCounts(
        operation=f"elementwise:{op}", kernel="simt",
        issue_instructions=_uniform_issue(machine, warps, per_warp),
        instructions=warps * per_warp, warps=warps, diverged_warps=0, global_transactions=tx,
        macs=0, useful_ops=active, peak_per_instruction=machine.lanes,
        lane_slots=warps * alu * machine.lanes, active_slots=n * alu,
        dram_reads={k: n for k in inputs}, dram_writes={"out": n},
        sram_reads={}, sram_writes={}, output=out)


def reduction(machine: VectorTarget, X: object, op: str = "sum") -> KernelCounts:
    """Reduce each row of X: ``"sum"``, ``"max"`` or ``"softmax"`` (its normaliser
    ``sum(exp(x - max(x)))``). One warp per row: each lane folds every ``lanes``-th element,
    then ``ceil(log2(lanes))`` shuffle-and-combine steps (half the lanes idle each step);
    softmax makes two passes (max, then exp-and-sum).
    """
    op = check.choice("op", op, REDUCTIONS)
    Xv = _array("X", X, ndim=2)
    rows, n = Xv.shape
    L = machine.lanes
    chunks = ceil_div(n, L)
    steps = max(0, math.ceil(math.log2(L))) if L > 1 else 0
    # per pass: (load + combine_cost) per chunk, 2 instructions per tree step
    passes = ([(1, 1)] if op in ("sum", "max")
              else [(1, 1), (1, 1 + ELEMENTWISE_INSTRUCTIONS["exp"] + 1)])
    per_warp = 1  # the final store by lane 0
    active = rows  # store
    alu_slots = alu_active = 0
    chunk_active = n  # active lanes summed over a row's chunks
    tree_active = sum(max(1, L >> (s + 1)) for s in range(steps))
    for loads, combine in passes:
        per_warp += chunks * (loads + combine) + 2 * steps
        active += rows * (chunk_active * (loads + combine) + 2 * tree_active)
        alu_slots += rows * (chunks * combine + steps) * L
        alu_active += rows * (chunk_active * combine + tree_active)
    if op == "sum":
        out = Xv.sum(axis=1)
    elif op == "max":
        out = Xv.max(axis=1)
    else:
        Xf = Xv.astype(np.float64)
        out = np.exp(Xf - Xf.max(axis=1, keepdims=True)).sum(axis=1)
    S, eb = machine.transaction_bytes, machine.element_bytes
    cols = np.arange(chunks * L, dtype=np.int64).reshape(chunks, L)
    per_row = int(distinct_segments(cols * eb, cols < n, S).sum())
    tx = rows * per_row * len(passes) + _transactions(machine, np.arange(rows))
    return KernelCounts(
        operation=f"reduction:{op}", kernel="simt",
        issue_instructions=_uniform_issue(machine, rows, per_warp),
        instructions=rows * per_warp, warps=rows, diverged_warps=0, global_transactions=tx, macs=0,
        useful_ops=active, peak_per_instruction=L, lane_slots=alu_slots, active_slots=alu_active,
        dram_reads={"X": rows * n * len(passes)}, dram_writes={"out": rows},
        sram_reads={}, sram_writes={}, output=out)


def gather(machine: VectorTarget, table: object, indices: object) -> KernelCounts:
    """Embedding lookup: ``out[q] = table[indices[q]]``, one thread per output element.

    Program per warp: load the row index, load the table element, store. A row of the table
    is contiguous, so a warp coalesces within a row but not across random rows.
    """
    tab = _array("table", table, ndim=2)
    idx = index_vector("indices", indices)
    vocab, dim = tab.shape
    if idx.size and (idx.min() < 0 or idx.max() >= vocab):
        raise ValueError(f"indices must lie in [0, {vocab - 1}] (table has {vocab} rows), "
                         f"got values from {idx.min()} to {idx.max()}")
    out = tab[idx]
    n = idx.size * dim
    L, S, eb = machine.lanes, machine.transaction_bytes, machine.element_bytes
    warps = ceil_div(n, L)
    flat = np.arange(warps * L, dtype=np.int64)
    ok = (flat < n).reshape(warps, L)
    q, d = np.divmod(np.minimum(flat, n - 1), dim)
    # The table and the output are packed row after row (no pitch): neighbouring rows
    # share segments when read in order, and random rows do not.
    idx_addr = (q * 4).reshape(warps, L)          # int32 index array, contiguous
    tab_addr = ((idx[q] * dim + d) * eb).reshape(warps, L)
    out_addr = ((q * dim + d) * eb).reshape(warps, L)
    tx = sum(int(distinct_segments(a, ok, S).sum()) for a in (idx_addr, tab_addr, out_addr))
    return KernelCounts(
        operation="gather", kernel="simt", issue_instructions=_uniform_issue(machine, warps, 3),
        instructions=3 * warps, warps=warps, diverged_warps=0, global_transactions=tx, macs=0,
        useful_ops=3 * n, peak_per_instruction=L, lane_slots=2 * warps * L, active_slots=2 * n,
        dram_reads={"indices": n, "table": n}, dram_writes={"out": n},
        sram_reads={}, sram_writes={}, output=out)


def load(machine: VectorTarget, x: object, indices: object) -> KernelCounts:
    """A plain load in an access pattern: thread t loads ``x[indices[t]]`` and stores it to
    ``out[t]``.

    Unlike :func:`gather`, no index array is read: each thread computes its address in a
    register (``s·t`` for a stride, a hash of t for a scattered pattern), so the load's
    transactions are exactly :func:`~accelkit.simd.memory.transactions` of ``indices`` (lesson
    02's count for the pattern) and the store adds a coalesced write. Program per warp: one
    address instruction, the load, the store: the memory program of :func:`elementwise` with
    one ALU instruction, so the two differ only in the pattern of the load.
    """
    xv = _array("x", x, ndim=1)
    idx = index_vector("indices", indices)
    if idx.max() >= xv.size:
        raise ValueError(f"indices must lie in [0, {xv.size - 1}] (x has {xv.size} elements), "
                         f"got values up to {idx.max()}")
    n = idx.size
    warps = ceil_div(n, machine.lanes)
    tx = _transactions(machine, idx) + _transactions(machine, np.arange(n, dtype=np.int64))
    return KernelCounts(
        operation="load", kernel="simt", issue_instructions=_uniform_issue(machine, warps, 3),
        instructions=3 * warps, warps=warps, diverged_warps=0, global_transactions=tx, macs=0,
        useful_ops=3 * n, peak_per_instruction=machine.lanes,
        lane_slots=warps * machine.lanes, active_slots=n,
        dram_reads={"x": n}, dram_writes={"out": n}, sram_reads={}, sram_writes={},
        output=xv[idx])


def branchy(machine: VectorTarget, x: object, *, threshold: float = 0.0,
            then_instructions: int = 64, else_instructions: int = 64) -> KernelCounts:
    """A data-dependent branch per element: ``x*x if x > threshold else -x``.

    The arithmetic is a stand-in; each side's length in instructions is a parameter (64 by
    default: a side with real work, such as a piecewise approximation). Program per warp:
    load, compare, the sides its lanes need (both if they disagree; both always without
    ``skip_uniform_branches``), store.
    """
    xv = _array("x", x)
    t = check.real_in_range("threshold", threshold)
    a = check.positive_int("then_instructions", then_instructions, maximum=1_000_000)
    b = check.positive_int("else_instructions", else_instructions, maximum=1_000_000)
    n = xv.size
    L = machine.lanes
    warps = ceil_div(n, L)
    taken = np.zeros(warps * L, dtype=bool)
    taken[:n] = xv.reshape(-1) > t
    ok = np.arange(warps * L) < n
    taken_w = (taken & ok).reshape(warps, L).sum(axis=1)
    live_w = ok.reshape(warps, L).sum(axis=1)
    run_then = taken_w > 0
    run_else = (live_w - taken_w) > 0
    if not machine.skip_uniform_branches:
        run_then = run_else = np.ones(warps, dtype=bool)
    per_warp = 3 + a * run_then + b * run_else
    diverged = int((run_then & run_else).sum())
    issue = int(np.bincount(np.arange(warps) % machine.cores, weights=per_warp,
                            minlength=machine.cores).max())
    side_slots = int((a * run_then + b * run_else).sum()) * L + warps * L
    side_active = int(a * taken_w.sum() + b * (live_w - taken_w).sum()) + n
    out = np.where(xv > t, xv * xv, -xv)
    tx = 2 * _transactions(machine, np.arange(n))
    return KernelCounts(
        operation="branchy", kernel="simt", issue_instructions=issue,
        instructions=int(per_warp.sum()),
        warps=warps, diverged_warps=diverged, global_transactions=tx, macs=0,
        useful_ops=side_active + 2 * n, peak_per_instruction=L, lane_slots=side_slots,
        active_slots=side_active, dram_reads={"x": n}, dram_writes={"out": n},
        sram_reads={}, sram_writes={}, output=out)


def _array(name: str, value: object, ndim: int | None = None) -> np.ndarray:
    """A 1-D or 2-D numeric array (or exactly ``ndim``-D), finite, not too large."""
    if isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value)
        except ValueError as exc:
            raise ValueError(f"{name} must be a rectangular array of numbers: {exc}") from None
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array of numbers, got {type(value).__name__}")
    if value.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integers or floats, got dtype {value.dtype}")
    allowed = (ndim,) if ndim else (1, 2)
    if value.ndim not in allowed:
        raise ValueError(f"{name} must be {' or '.join(f'{d}-D' for d in allowed)}, "
                         f"got shape {value.shape}")
    if value.size < 1:
        raise ValueError(f"{name} must not be empty")
    if value.size > check.MAX_ELEMENTS:
        raise ValueError(f"{name} has {value.size:,} elements, more than the "
                         f"{check.MAX_ELEMENTS:,} this toy engine will hold")
    if value.dtype.kind == "f" and not np.isfinite(value).all():
        raise ValueError(f"{name} must not contain NaN or inf")
    return value


def _apply(op: str, x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    if op == "relu":
        return np.maximum(x, 0)
    if op == "add":
        return x + y
    if op == "mul":
        return x * y
    xf = x.astype(np.float64)
    if op == "exp":
        return np.exp(np.minimum(xf, 700.0))
    if op == "tanh":
        return np.tanh(xf)
    if op == "sigmoid":
        return 0.5 * (1.0 + np.tanh(0.5 * xf))
    # gelu, tanh form (Hendrycks & Gimpel 2016, eq. after (1))
    return 0.5 * xf * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (xf + 0.044715 * xf**3)))


__all__ = ["ELEMENTWISE_INSTRUCTIONS", "REDUCTIONS", "VectorTarget", "branchy", "elementwise",
           "gather", "load", "reduction"]
