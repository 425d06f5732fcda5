"""The toy GPU's matmul kernels, as programs: what each warp issues and which addresses its lanes
touch, for an M×K by K×N product.

* :func:`naive`: one thread per output element, both operands read from global memory every k
  step (``3K + 1`` instructions a warp).
* :func:`tiled`: a thread block stages ``T × T`` tiles of A and B in shared memory; each thread
  (or, with a tensor core, each warp) accumulates a block of outputs in registers.

Both return :class:`~accelkit.simd.results.KernelCounts`; the machine
(:class:`~accelkit.simd.SIMDMachine`) prices them in cycles, picks the tile, and runs the sparse
variants. ``traced=True`` counts transactions from every lane's address; ``traced=False`` uses
the closed form (:func:`accelkit.simd.memory.run_segments`) for shapes too large to trace, and
the tests check that the two agree.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from accelkit.simd.memory import ceil_div, distinct_segments, pitch, run_segments
from accelkit.simd.results import KernelCounts


class MatmulTarget(Protocol):
    """What a matmul kernel reads of its machine (a :class:`~accelkit.simd.SIMDMachine`)."""

    @property
    def cores(self) -> int: ...
    @property
    def lanes(self) -> int: ...
    @property
    def transaction_bytes(self) -> int: ...
    @property
    def element_bytes(self) -> int: ...
    @property
    def thread_tile(self) -> int: ...
    @property
    def tensor_core(self) -> tuple[int, int, int] | None: ...


def naive(machine: MatmulTarget, M: int, N: int, K: int, *, output: np.ndarray | None,
          traced: bool, a_nonzero: np.ndarray | None = None) -> KernelCounts:
    """One thread per output element: each k step loads A[i, k] (one address for the whole
    warp) and B[k, j:j+lanes], then one FMA; a final store. With ``a_nonzero`` (an M×K bool
    array) each step first tests A[i, k] and skips the B load and the FMA where it is zero."""
    L, S, eb = machine.lanes, machine.transaction_bytes, machine.element_bytes
    chunks = ceil_div(N, L)
    warps = M * chunks
    sparse = a_nonzero is not None
    if a_nonzero is not None:
        # per step: load A, branch on it; if nonzero: load B, FMA. Row i's warps share the count.
        nnz_row = a_nonzero.sum(axis=1).astype(np.int64)  # (M,)
        per_warp = np.repeat(2 * K + 2 * nnz_row + 1, chunks)
        mults = int(nnz_row.sum()) * chunks
        macs = int(nnz_row.sum()) * N
    else:
        per_warp = None
        mults = warps * K
        macs = M * N * K
    if traced:
        a_tx, b_tx, c_tx = _naive_trace(machine, M, N, K, a_nonzero)
    else:
        a_tx = warps * K
        b_tx = M * K * run_segments(N, L, eb, S)
        c_tx = M * run_segments(N, L, eb, S)
    if per_warp is None:
        instructions = warps * (3 * K + 1)
        issue = ceil_div(warps, machine.cores) * (3 * K + 1)
    else:
        instructions = int(per_warp.sum())
        issue = int(np.bincount(np.arange(warps) % machine.cores, weights=per_warp,
                                minlength=machine.cores).max())
    b_reads = (int(a_nonzero.sum()) * N) if a_nonzero is not None else M * N * K
    return KernelCounts(
        operation="sparse_matmul" if sparse else "matmul", kernel="naive",
        issue_instructions=issue, instructions=instructions, warps=warps, diverged_warps=0,
        global_transactions=a_tx + b_tx + c_tx, macs=macs, useful_ops=macs,
        peak_per_instruction=L, lane_slots=mults * L, active_slots=macs,
        dram_reads={"A": M * N * K, "B": b_reads}, dram_writes={"C": M * N},
        sram_reads={"A": 0, "B": 0}, sram_writes={"A": 0, "B": 0}, output=output)


def _naive_trace(machine: MatmulTarget, M: int, N: int, K: int,
                 a_nonzero: np.ndarray | None) -> tuple[int, int, int]:
    """Transactions of the naive kernel from its lanes' addresses (rows chunked for memory)."""
    L, S, eb = machine.lanes, machine.transaction_bytes, machine.element_bytes
    chunks = ceil_div(N, L)
    if M * K * chunks * L > 1 << 31:  # a minute or more of tracing: refuse up front
        raise ValueError(f"the naive kernel would trace {M * K * chunks * L:,} lane addresses "
                         f"for M={M}, N={N}, K={K}; use estimate() for shapes this large")
    cols = np.arange(chunks * L, dtype=np.int64).reshape(chunks, L)
    col_ok = cols < N
    pa, pb = pitch(K, eb, S), pitch(N, eb, S)
    # A[i, k]: every active lane of warp (i, chunk) reads the same address.
    k = np.arange(K, dtype=np.int64)
    a_tx = 0
    for i in range(M):
        addr = np.broadcast_to((i * pa + k * eb)[:, None, None], (K, chunks, L))
        a_tx += int(distinct_segments(addr, np.broadcast_to(col_ok, addr.shape), S).sum())
    # B[k, chunk]: the same for every row i, so trace one row of warps and weight it.
    addr_b = k[:, None, None] * pb + cols[None] * eb
    per_k = distinct_segments(addr_b, np.broadcast_to(col_ok, addr_b.shape), S).sum(axis=1)
    rows_using_k = M if a_nonzero is None else a_nonzero.sum(axis=0)
    b_tx = int((per_k * rows_using_k).sum())
    c_tx = M * int(distinct_segments(cols * eb, col_ok, S).sum())
    return a_tx, b_tx, c_tx


def _block_geometry(machine: MatmulTarget, T: int) -> tuple[int, int, int, int, int]:
    """(warps per block, multiply instructions per warp per k-unit, loads per k-unit,
    k per unit, MACs per multiply instruction)."""
    r, L = machine.thread_tile, machine.lanes
    if machine.tensor_core is None:
        return ceil_div((T // r) ** 2, L), r * r, 2 * r, 1, L
    m, n, k = machine.tensor_core
    return (T // (r * m)) * (T // (r * n)), r * r, 2 * r, k, m * n * k


def tiled(machine: MatmulTarget, M: int, N: int, K: int, *, output: np.ndarray | None,
          traced: bool, a_nonzero: np.ndarray | None, T: int) -> KernelCounts:
    """A thread block computes a ``T × T`` tile of C: per K-tile it loads a T×T tile of A and of
    B cooperatively into shared memory (two barriers), then each warp runs its k-units (per
    unit ``2·thread_tile`` shared loads and ``thread_tile²`` FMAs or MMAs); at the end it stores
    its C tile. With ``a_nonzero`` (a blocks-of-M × K-tiles bool array) each warp loads a flag
    per K-tile and the block skips the K-tiles whose A tile is all zero."""
    L, S, eb = machine.lanes, machine.transaction_bytes, machine.element_bytes
    wpb, mult_per_unit, loads_per_unit, k_unit, macs_per_mult = _block_geometry(machine, T)
    nbm, nbn, nk = ceil_div(M, T), ceil_div(N, T), ceil_div(K, T)
    blocks = nbm * nbn
    widths = np.full(nk, T, dtype=np.int64)
    widths[-1] = K - (nk - 1) * T
    units = -(-widths // k_unit)                       # k-units in each K-tile
    slot_instr = ceil_div(T * T, L)                  # one cooperative tile load / store
    # Per K-tile, per block: global loads + shared stores of both tiles, two barriers per
    # warp, and the compute loop.
    step_cost = 4 * slot_instr + 2 * wpb + wpb * units * (loads_per_unit + mult_per_unit)
    check_cost = wpb if a_nonzero is not None else 0  # the skip flag, loaded by each warp
    tail_cost = slot_instr                             # store the C tile
    if a_nonzero is None:
        block_cost = int(step_cost.sum()) + tail_cost
        instructions = blocks * block_cost
        issue = ceil_div(blocks, machine.cores) * block_cost
        # Dense: every block row runs every K-tile; closed forms, no (nbm × nk) arrays.
        units_total = nbm * int(units.sum())
        macs = M * N * K
        dram_a, dram_b = nbn * M * K, nbm * K * N
        active = None
    if a_nonzero is not None:
        active = a_nonzero
        per_row = (active * step_cost[None, :]).sum(axis=1) + nk * check_cost + tail_cost
        per_block = np.repeat(per_row, nbn)            # block id = bi·nbn + bj
        instructions = int(per_block.sum())
        issue = int(np.bincount(np.arange(blocks) % machine.cores, weights=per_block,
                                minlength=machine.cores).max())
        units_total = int((active * units[None, :]).sum())
        rows_per_bi = np.minimum(T, M - np.arange(nbm) * T)
        k_per_bi = (active * widths[None, :]).sum(axis=1)
        macs = int(N * (rows_per_bi * k_per_bi).sum())
        dram_a = int(nbn * (rows_per_bi * k_per_bi).sum())
        dram_b = int(N * (active.sum(axis=0) * widths).sum())  # block rows loading K-tile t
    mults = nbn * wpb * mult_per_unit * units_total
    if traced:
        if active is None:
            active = np.ones((nbm, nk), dtype=bool)
        a_tx, b_tx, c_tx = _tiled_trace(machine, M, N, K, active, T)
    else:
        w = min(T, L)
        a_tx = nbn * M * run_segments(K, w, eb, S)
        b_tx = nbm * K * run_segments(N, w, eb, S)
        c_tx = M * run_segments(N, w, eb, S)
    flag_tx = blocks * nk * wpb if a_nonzero is not None else 0
    if machine.tensor_core is None:
        a_elems = b_elems = L
    else:
        m, n, k = machine.tensor_core
        a_elems, b_elems = m * k, k * n
    per_unit_reads = wpb * (loads_per_unit // 2)
    sram_units = nbn * per_unit_reads * units_total
    return KernelCounts(
        operation="matmul",
        kernel=("tensor_core" if machine.tensor_core else "tiled") + f" {T}×{T}",
        issue_instructions=issue, instructions=instructions, warps=blocks * wpb, diverged_warps=0,
        global_transactions=a_tx + b_tx + c_tx + flag_tx, macs=macs, useful_ops=macs,
        peak_per_instruction=macs_per_mult, lane_slots=mults * macs_per_mult,
        active_slots=macs,
        dram_reads={"A": dram_a, "B": dram_b}, dram_writes={"C": M * N},
        sram_reads={"A": sram_units * a_elems, "B": sram_units * b_elems},
        sram_writes={"A": dram_a, "B": dram_b}, output=output)


def _tiled_trace(machine: MatmulTarget, M: int, N: int, K: int, active: np.ndarray,
                 T: int) -> tuple[int, int, int]:
    """Transactions of the cooperative tile loads and C stores, from every lane's address.

    Each distinct tile is traced once and weighted by how many blocks load it.
    """
    S, eb = machine.transaction_bytes, machine.element_bytes
    nbm, nbn, nk = ceil_div(M, T), ceil_div(N, T), ceil_div(K, T)
    a_tiles = _tile_load_counts(machine, M, K, nbm, nk, pitch(K, eb, S), T)   # (nbm, nk)
    b_tiles = _tile_load_counts(machine, K, N, nk, nbn, pitch(N, eb, S), T)   # (nk, nbn)
    c_tiles = _tile_load_counts(machine, M, N, nbm, nbn, pitch(N, eb, S), T)  # (nbm, nbn)
    a_tx = int(nbn * (a_tiles * active).sum())
    b_tx = int((b_tiles.sum(axis=1) * active.sum(axis=0)).sum())
    return a_tx, b_tx, int(c_tiles.sum())


def _tile_load_counts(machine: MatmulTarget, R: int, C: int, nr: int, nc: int, row_pitch: int,
                      T: int) -> np.ndarray:
    """Transactions to load each T×T tile of an R×C pitched matrix, lanes consecutive slots
    (row-major) per warp instruction."""
    L, S, eb = machine.lanes, machine.transaction_bytes, machine.element_bytes
    slots = np.arange(ceil_div(T * T, L) * L, dtype=np.int64).reshape(-1, L)
    in_tile = slots < T * T
    out = np.empty((nr, nc), dtype=np.int64)
    c0 = (np.arange(nc, dtype=np.int64) * T)[:, None, None]
    for i in range(nr):   # one row of tiles at a time keeps memory bounded
        rows = i * T + slots // T
        cols = c0 + slots % T
        ok = in_tile & (rows < R) & (cols < C)
        out[i] = distinct_segments(rows * row_pitch + cols * eb, ok, S).sum(axis=1)
    return out


__all__ = ["MatmulTarget", "naive", "tiled"]
