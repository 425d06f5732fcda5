"""A toy GPU: cores of SIMD lanes with warps, divergence, coalescing and an optional MMA unit.

The counterpart of :mod:`accelkit.systolic`. Both engines report the same result fields where
they apply (``output``, ``cycles``, ``utilization``, ``macs``, ``sram_reads``, ``sram_writes``)
so that :mod:`accelkit.workloads` can put them side by side.

Every operation is a *kernel*: a fixed program per warp, so instruction counts follow from the
shapes (and, for data-dependent branches and skips, from the data). Global-memory transactions
are counted from the lane addresses themselves (the distinct ``transaction_bytes`` segments one
warp instruction touches), so coalescing is not assumed, it is measured.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from accelkit import _html
from accelkit import _validate as check

#: Unary/binary elementwise operations and the ALU instructions each costs per element. These are
#: assumptions of the toy, chosen as rough instruction counts of a polynomial/exponential
#: evaluation (GELU uses the tanh form: about ten multiplies, adds and a tanh).
ELEMENTWISE_INSTRUCTIONS: dict[str, int] = {
    "relu": 1, "add": 1, "mul": 1, "exp": 4, "tanh": 6, "sigmoid": 6, "gelu": 10,
}
_BINARY = ("add", "mul")
REDUCTIONS = ("sum", "max", "softmax")

# Rows of a global array start on a transaction boundary (a pitched allocation, as
# cudaMallocPitch does), so two rows never share a segment.


#: Largest M, N or K that :meth:`SIMDMachine.estimate` accepts. The closed form's cost grows with
#: the number of tiles along each side, so without a bound 1e9 took ~40 s and 1e300 failed inside
#: numpy; 2**20 keeps every configuration well under a second.
MAX_DIMENSION = 1 << 20


def _pitch(cols: int, element_bytes: int, segment: int) -> int:
    return -(-cols * element_bytes // segment) * segment


def _distinct_segments(addresses: np.ndarray, active: np.ndarray, segment: int) -> np.ndarray:
    """Per warp instruction (last axis = lanes): how many distinct segments its active lanes touch."""
    seg = np.where(active, addresses // segment, -1)
    seg.sort(axis=-1)
    new = np.ones(seg.shape, dtype=bool)
    new[..., 1:] = seg[..., 1:] != seg[..., :-1]
    return (new & (seg >= 0)).sum(axis=-1)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _run_sums(length: int, width: int, element_bytes: int, segment: int) -> int:
    """Segments touched when a pitched row of ``length`` elements is read in pieces of ``width``."""
    starts = np.arange(0, length, width, dtype=np.int64)
    lens = np.minimum(width, length - starts)
    first = starts * element_bytes // segment
    last = ((starts + lens) * element_bytes - 1) // segment
    return int((last - first + 1).sum())


@dataclass(frozen=True)
class SIMDRun:
    """What one operation cost on a :class:`SIMDMachine`. ``output`` is None for an estimate.

    Attributes:
        operation: e.g. ``"matmul"``, ``"elementwise:gelu"``, ``"gather"``.
        kernel: ``"naive"``, ``"tiled T×T"``, ``"tensor_core T×T"`` (matmuls; T the thread
            block tile) or ``"simt"``.
        cores, lanes: the machine.
        cycles: ``max(issue_cycles, memory_cycles)`` plus one memory latency if memory was touched.
        issue_cycles: the busiest core's instruction-issue cycles.
        memory_cycles: cycles global memory needs for all transactions (Little's law, see
            :class:`SIMDMachine`).
        macs: useful multiply-accumulates (0 for non-matmul operations).
        useful_ops: the work counted by ``utilization``: MACs for matmuls, active lane-operations
            of every issued instruction otherwise.
        utilization: ``useful_ops / (peak ops per cycle · cycles)`` in (0, 1]; for a matmul the
            peak is ``cores · lanes`` MACs per cycle (``cores · m·n·k`` with the tensor core),
            as the systolic array's is ``rows · cols``.
        lane_utilization: share of the lane slots of the compute instructions (multiplies, ALU
            operations, the branch sides; the loads for a gather) whose lanes did useful work.
        instructions: warp instructions issued, machine-wide.
        warps: warps launched; diverged_warps: warps that ran both sides of a branch.
        global_transactions: global-memory transactions (reads and writes).
        dram_reads, dram_writes: elements requested from / written to global memory, per operand.
        sram_reads, sram_writes: elements read from / written to shared memory, per operand.
        output: the result (integers exact, floats to rounding), or None for an estimate.
    """

    operation: str
    kernel: str
    cores: int
    lanes: int
    cycles: int
    issue_cycles: int
    memory_cycles: int
    macs: int
    useful_ops: int
    utilization: float
    lane_utilization: float
    instructions: int
    warps: int
    diverged_warps: int
    global_transactions: int
    # Read-only mappings (compared, left out of the hash: a run stays hashable).
    dram_reads: Mapping[str, int] = field(hash=False)
    dram_writes: Mapping[str, int] = field(hash=False)
    sram_reads: Mapping[str, int] = field(hash=False)
    sram_writes: Mapping[str, int] = field(hash=False)
    output: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Frozen all the way down: the per-operand counts become read-only mappings, so no one
        # can edit a run's counts after the engine made it.
        for name in ("dram_reads", "dram_writes", "sram_reads", "sram_writes"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def __repr__(self) -> str:
        shown = "estimate" if self.output is None else "output=%s array" % "×".join(
            str(s) for s in self.output.shape)
        return (
            f"SIMDRun({self.operation}, {self.kernel}, {self.cores} cores × {self.lanes} lanes: "
            f"cycles={self.cycles:,} (issue {self.issue_cycles:,}, memory {self.memory_cycles:,}), "
            f"utilization={self.utilization:.1%}, lane_utilization={self.lane_utilization:.1%}, "
            f"instructions={self.instructions:,}, global_transactions={self.global_transactions:,}, "
            f"dram_reads={dict(self.dram_reads)}, {shown})"
        )

    def _repr_html_(self) -> str:
        rows = [
            ("operation", f"{self.operation} ({self.kernel})"),
            ("machine", f"{self.cores} cores × {self.lanes} lanes"),
            ("cycles", f"{self.cycles:,}"),
            ("issue / memory cycles", f"{self.issue_cycles:,} / {self.memory_cycles:,}"),
            ("utilization", f"{self.utilization:.1%}"),
            ("lane utilization", f"{self.lane_utilization:.1%}"),
            ("instructions", f"{self.instructions:,}"),
            ("global transactions", f"{self.global_transactions:,}"),
            ("DRAM reads", ", ".join(f"{k} {v:,}" for k, v in self.dram_reads.items())),
        ]
        return _html.table(rows, row_headers=True)

    def counts(self) -> dict[str, object]:
        """Every field except ``output``: what matmul() and estimate() must agree on."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "output"}


class SIMDMachine:
    """A GPU-like machine: ``cores`` cores, each issuing one warp instruction per cycle.

    A toy core stands for one *SM sub-partition*, not a whole SM: an NVIDIA SM has four, each
    with its own warp scheduler issuing one warp instruction per cycle, 32 FP32 lanes and one
    tensor core (jax-ml/scaling-book gpus.md, "SM subpartitions"). The default four cores are
    about one SM's worth. Unlike a real SM, each toy core has its own shared memory, and there
    is no L2 cache between the cores and global memory.

    Cost model (the whole of it):

    - **Instructions.** A warp is ``lanes`` threads. One warp instruction (a load, a store, an
      ALU op, an FMA over the lanes, or one MMA on the tensor core) occupies its core for
      ``cycles_per_instruction`` cycles, whatever its lanes do; masked-off lanes are wasted.
      Warps are dealt to cores round-robin (a thread block's warps stay together);
      ``issue_cycles`` is the busiest core's total.
    - **Memory.** A warp's global load or store costs one *transaction* per distinct
      ``transaction_bytes`` segment its active lanes touch: consecutive addresses coalesce,
      strided or random ones do not. Each transaction takes ``memory_latency_cycles``; each core
      keeps one transaction in flight per resident warp (``warps_per_core``, or fewer when the
      operation has fewer warps), so by Little's law memory needs
      ``memory_cycles = ceil(transactions · latency / (cores · in_flight))``.
    - **Overlap.** Resident warps hide memory behind issue: an operation takes
      ``max(issue_cycles, memory_cycles) + memory_latency_cycles`` (the first access cannot be
      hidden); shared memory and registers cost only the instructions that touch them.
    - **Branches.** A data-dependent branch runs the taken side only in a warp whose lanes agree;
      when they disagree, both sides run under a mask. With ``skip_uniform_branches=False`` both
      sides always run (predication, as a vector unit without branches does).

    Defaults: 4 cores × 32 lanes, 8 resident warps, 64-cycle latency, 32-byte transactions and
    4-byte elements give 4 bytes per cycle per core against 32 FMAs per cycle, about 8 FMAs per
    byte: the H100's balance is about 10 (67 FP32 TFLOP/s over 3.35 TB/s, the NVIDIA H100 Tensor
    Core GPU datasheet; its figures and sources are in ``accelkit/data/chips.json``).

    Matmul kernels: ``shared_memory=False`` is the naive kernel (one thread per output element,
    both operands read from global memory every step); ``shared_memory=True`` (default) stages
    ``tile × tile`` tiles of A and B in shared memory and lets each thread accumulate a
    ``thread_tile × thread_tile`` block of outputs in registers (per k step: ``2·thread_tile``
    shared loads feed ``thread_tile²`` FMAs). ``tensor_core=(m, n, k)`` adds an MMA unit per
    core: one warp instruction computes an m×n×k tile product; each warp holds
    ``thread_tile × thread_tile`` MMA tiles and loads one fragment per instruction, so the
    instruction mix is the same and throughput rises by ``m·n·k / lanes``.

    Args:
        cores, lanes: the machine's size; a warp is ``lanes`` threads.
        warps_per_core: resident warps per core, the memory-level parallelism.
        memory_latency_cycles: cycles one global-memory transaction takes.
        transaction_bytes: size (and alignment) of one global-memory segment.
        element_bytes: bytes per matrix element in global memory.
        shared_memory: use the shared-memory tiled matmul kernel.
        tile: the thread block's output tile side; None picks, per matmul shape, the multiple of
            ``thread_tile`` (or of the MMA tile) up to 128 with the fewest cycles, as cuBLAS
            picks a kernel per shape.
        thread_tile: register blocking side, per thread (or per warp with the tensor core).
        tensor_core: None, or an (m, n, k) MMA tile such as (4, 4, 4) or (16, 8, 16).
        cycles_per_instruction: cycles a core spends per warp instruction.
        skip_uniform_branches: let warps whose lanes agree skip the untaken side.

    Raises:
        ValueError / TypeError naming the argument.
    """

    def __init__(self, cores: int = 4, lanes: int = 32, *, warps_per_core: int = 8,
                 memory_latency_cycles: int = 64, transaction_bytes: int = 32,
                 element_bytes: int = 4, shared_memory: bool = True, tile: int | None = None,
                 thread_tile: int = 4, tensor_core: tuple[int, int, int] | None = None,
                 cycles_per_instruction: int = 1, skip_uniform_branches: bool = True):
        self.cores = check.positive_int("cores", cores, maximum=4096)
        self.lanes = check.positive_int("lanes", lanes, maximum=4096)
        self.warps_per_core = check.positive_int("warps_per_core", warps_per_core, maximum=4096)
        self.memory_latency_cycles = check.positive_int(
            "memory_latency_cycles", memory_latency_cycles, maximum=1_000_000)
        self.transaction_bytes = check.positive_int("transaction_bytes", transaction_bytes,
                                                    maximum=1 << 20)
        self.element_bytes = check.positive_int("element_bytes", element_bytes, maximum=64)
        self.shared_memory = _flag("shared_memory", shared_memory)
        self.skip_uniform_branches = _flag("skip_uniform_branches", skip_uniform_branches)
        self.thread_tile = check.positive_int("thread_tile", thread_tile, maximum=64)
        self.cycles_per_instruction = check.positive_int(
            "cycles_per_instruction", cycles_per_instruction, maximum=1024)
        self.tensor_core = _mma_tile(tensor_core)
        r = self.thread_tile
        if self.tensor_core is None:
            need = r
        else:
            m, n, _ = self.tensor_core
            need = math.lcm(r * m, r * n)
        self._need = need
        if tile is None:
            self.tile = None
            self._candidates = [t for t in (need * 2**j for j in range(8))
                                if t <= max(128, need) and (t % self.lanes == 0 or self.lanes % t == 0)]
            if not self._candidates:
                raise ValueError(f"no thread-block tile up to 128 fits lanes={self.lanes} and "
                                 f"thread_tile={r}; pass tile= explicitly")
        else:
            self.tile = check.positive_int("tile", tile, maximum=1024)
            if self.tile % need:
                what = ("thread_tile" if self.tensor_core is None
                        else "thread_tile × the MMA tile's m and n")
                raise ValueError(f"tile must be a multiple of {need} ({what}), got {self.tile}")
            if self.tile % self.lanes and self.lanes % self.tile:
                raise ValueError(f"tile must divide lanes or be a multiple of it "
                                 f"(lanes={self.lanes}), got {self.tile}")
            self._candidates = [self.tile]

    def _pick_tile(self, M: int, N: int, K: int) -> int:
        """The thread-block tile for this shape: fixed, or (tile=None) the candidate with the
        fewest cycles, as cuBLAS picks a kernel per shape. Ties go to the smaller tile."""
        if len(self._candidates) == 1:
            return self._candidates[0]
        costs = [(self._tiled(M, N, K, output=None, traced=False, a_nonzero=None, T=t).cycles, t)
                 for t in self._candidates]
        return min(costs)[1]

    def __repr__(self) -> str:
        extra = f", tensor_core={self.tensor_core}" if self.tensor_core else ""
        kernel = (("tile=auto" if self.tile is None else f"tile={self.tile}") if self.shared_memory
                  else "shared_memory=False")
        return (f"SIMDMachine(cores={self.cores}, lanes={self.lanes}, "
                f"warps_per_core={self.warps_per_core}, "
                f"memory_latency_cycles={self.memory_latency_cycles}, "
                f"transaction_bytes={self.transaction_bytes}, {kernel}{extra})")

    # -- size ----------------------------------------------------------------------------------

    @property
    def mac_cells(self) -> int:
        """Multiply-accumulate units, the area measure: every lane, plus the MMA units' MACs."""
        per_core = self.lanes + (math.prod(self.tensor_core) if self.tensor_core else 0)
        return self.cores * per_core

    @property
    def peak_macs_per_cycle(self) -> float:
        """MACs per cycle the matmul kernel can reach at best."""
        per_instr = math.prod(self.tensor_core) if self.tensor_core else self.lanes
        return self.cores * per_instr / self.cycles_per_instruction

    # -- memory --------------------------------------------------------------------------------

    def transactions(self, indices: object) -> int:
        """Global-memory transactions for one load in which thread t reads element indices[t].

        Threads are grouped into warps of ``lanes``; each warp costs one transaction per distinct
        ``transaction_bytes`` segment it touches. ``np.arange(n)`` is perfectly coalesced.
        """
        idx = _index_vector("indices", indices)
        warps = _ceil_div(idx.size, self.lanes)
        padded = np.zeros(warps * self.lanes, dtype=np.int64)
        padded[:idx.size] = idx
        active = np.arange(padded.size) < idx.size
        counts = _distinct_segments((padded * self.element_bytes).reshape(warps, self.lanes),
                                    active.reshape(warps, self.lanes), self.transaction_bytes)
        return int(counts.sum())

    # -- matmul --------------------------------------------------------------------------------

    def matmul(self, A: object, B: object) -> SIMDRun:
        """Multiply A (M×K) by B (K×N) with this machine's matmul kernel.

        Transactions are counted from every lane's address; instruction counts follow the kernel.
        """
        A, B = _operands(A, B)
        M, K = A.shape
        N = B.shape[1]
        output = _exact_product(A, B)
        if not self.shared_memory and self.tensor_core is None:
            return self._naive(M, N, K, output=output, traced=True)
        return self._tiled(M, N, K, output=output, traced=True, a_nonzero=None,
                           T=self._pick_tile(M, N, K))

    def estimate(self, *, M: int, N: int, K: int) -> SIMDRun:
        """Closed-form counts of :meth:`matmul` for an M×K by K×N product, without data."""
        M = check.positive_int("M", M, maximum=MAX_DIMENSION)
        N = check.positive_int("N", N, maximum=MAX_DIMENSION)
        K = check.positive_int("K", K, maximum=MAX_DIMENSION)
        if not self.shared_memory and self.tensor_core is None:
            return self._naive(M, N, K, output=None, traced=False)
        return self._tiled(M, N, K, output=None, traced=False, a_nonzero=None,
                           T=self._pick_tile(M, N, K))

    def sparse_matmul(self, A: object, B: object) -> SIMDRun:
        """A @ B, skipping work where A is zero, at the kernel's granularity.

        The tiled kernel skips a (block, K-tile) step whose A tile is all zero (one flag load per
        warp decides, a warp-uniform branch): it pays off for block-sparse A, hardly at all for
        scattered zeros. The naive kernel tests A[i, k] (uniform across the warp) each step and
        skips the B load and FMA when it is zero: element granularity, but no data reuse.
        """
        A, B = _operands(A, B)
        M, K = A.shape
        N = B.shape[1]
        output = _exact_product(A, B)
        nonzero = np.asarray(A != 0)  # an (M, K) bool array
        if not self.shared_memory and self.tensor_core is None:
            return self._naive(M, N, K, output=output, traced=True, a_nonzero=nonzero)
        # A sparse library picks the block size for the sparsity at hand: try every candidate
        # (the first of equally fast ones wins).
        runs = []
        for T in self._candidates:
            nbm, nk = _ceil_div(M, T), _ceil_div(K, T)
            padded = np.zeros((nbm * T, nk * T), dtype=bool)
            padded[:M, :K] = nonzero
            tiles = np.asarray(padded.reshape(nbm, T, nk, T).any(axis=(1, 3)))
            runs.append(self._tiled(M, N, K, output=output, traced=True, a_nonzero=tiles, T=T))
        best = min(runs, key=lambda run: run.cycles)
        return _replace(best, operation="sparse_matmul")

    def _naive(self, M: int, N: int, K: int, *, output, traced: bool,
               a_nonzero: np.ndarray | None = None) -> SIMDRun:
        L, S, eb = self.lanes, self.transaction_bytes, self.element_bytes
        chunks = _ceil_div(N, L)
        warps = M * chunks
        sparse = a_nonzero is not None
        if a_nonzero is not None:
            # per step: load A, branch on it; if nonzero: load B, FMA. Row i's warps share the count.
            nnz_row = a_nonzero.sum(axis=1).astype(np.int64)  # (M,)
            per_warp = np.repeat(2 * K + 2 * nnz_row + 1, chunks)
            steps_with_b = int(nnz_row.sum()) * chunks
            mults = steps_with_b
            macs = int(nnz_row.sum()) * N
        else:
            per_warp = None
            steps_with_b = warps * K
            mults = warps * K
            macs = M * N * K
        if traced:
            a_tx, b_tx, c_tx = self._naive_trace(M, N, K, a_nonzero)
        else:
            a_tx = warps * K
            b_tx = M * K * _run_sums(N, L, eb, S)
            c_tx = M * _run_sums(N, L, eb, S)
        if per_warp is None:
            instructions = warps * (3 * K + 1)
            issue = _ceil_div(warps, self.cores) * (3 * K + 1)
        else:
            instructions = int(per_warp.sum())
            issue = int(np.bincount(np.arange(warps) % self.cores, weights=per_warp,
                                    minlength=self.cores).max())
        b_reads = (int(a_nonzero.sum()) * N) if a_nonzero is not None else M * N * K
        return self._finish(
            operation="sparse_matmul" if sparse else "matmul", kernel="naive",
            issue=issue, instructions=instructions, warps=warps, diverged=0,
            transactions=a_tx + b_tx + c_tx, macs=macs, useful=macs,
            peak_per_instruction=L, lane_slots=mults * L, active_slots=macs,
            dram_reads={"A": M * N * K, "B": b_reads}, dram_writes={"C": M * N},
            sram_reads={"A": 0, "B": 0}, sram_writes={"A": 0, "B": 0}, output=output)

    def _naive_trace(self, M, N, K, a_nonzero):
        """Transactions of the naive kernel from its lanes' addresses (rows chunked for memory)."""
        L, S, eb = self.lanes, self.transaction_bytes, self.element_bytes
        chunks = _ceil_div(N, L)
        if M * K * chunks * L > 1 << 31:  # a minute or more of tracing: refuse up front
            raise ValueError(f"the naive kernel would trace {M * K * chunks * L:,} lane addresses "
                             f"for M={M}, N={N}, K={K}; use estimate() for shapes this large")
        cols = np.arange(chunks * L, dtype=np.int64).reshape(chunks, L)
        col_ok = cols < N
        pa, pb = _pitch(K, eb, S), _pitch(N, eb, S)
        # A[i, k]: every active lane of warp (i, chunk) reads the same address.
        k = np.arange(K, dtype=np.int64)
        a_tx = 0
        for i in range(M):
            addr = np.broadcast_to((i * pa + k * eb)[:, None, None], (K, chunks, L))
            a_tx += int(_distinct_segments(addr, np.broadcast_to(col_ok, addr.shape), S).sum())
        # B[k, chunk]: the same for every row i, so trace one row of warps and weight it.
        addr_b = k[:, None, None] * pb + cols[None] * eb
        per_k = _distinct_segments(addr_b, np.broadcast_to(col_ok, addr_b.shape), S).sum(axis=1)
        rows_using_k = M if a_nonzero is None else a_nonzero.sum(axis=0)
        b_tx = int((per_k * rows_using_k).sum())
        c_tx = M * int(_distinct_segments(cols * eb, col_ok, S).sum())
        return a_tx, b_tx, c_tx

    def _block_geometry(self, T: int) -> tuple[int, int, int, int, int]:
        """(warps per block, multiply instructions per warp per k-unit, loads per k-unit,
        k per unit, MACs per multiply instruction)."""
        r, L = self.thread_tile, self.lanes
        if self.tensor_core is None:
            return _ceil_div((T // r) ** 2, L), r * r, 2 * r, 1, L
        m, n, k = self.tensor_core
        return (T // (r * m)) * (T // (r * n)), r * r, 2 * r, k, m * n * k

    def _tiled(self, M: int, N: int, K: int, *, output, traced: bool,
               a_nonzero: np.ndarray | None, T: int) -> SIMDRun:
        L, S, eb = self.lanes, self.transaction_bytes, self.element_bytes
        wpb, mult_per_unit, loads_per_unit, k_unit, macs_per_mult = self._block_geometry(T)
        nbm, nbn, nk = _ceil_div(M, T), _ceil_div(N, T), _ceil_div(K, T)
        blocks = nbm * nbn
        widths = np.full(nk, T, dtype=np.int64)
        widths[-1] = K - (nk - 1) * T
        units = -(-widths // k_unit)                       # k-units in each K-tile
        slot_instr = _ceil_div(T * T, L)                  # one cooperative tile load / store
        # Per K-tile, per block: global loads + shared stores of both tiles, two barriers per
        # warp, and the compute loop.
        step_cost = 4 * slot_instr + 2 * wpb + wpb * units * (loads_per_unit + mult_per_unit)
        check_cost = wpb if a_nonzero is not None else 0  # the skip flag, loaded by each warp
        tail_cost = slot_instr                             # store the C tile
        if a_nonzero is None:
            block_cost = int(step_cost.sum()) + tail_cost
            instructions = blocks * block_cost
            issue = _ceil_div(blocks, self.cores) * block_cost
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
            issue = int(np.bincount(np.arange(blocks) % self.cores, weights=per_block,
                                    minlength=self.cores).max())
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
            a_tx, b_tx, c_tx = self._tiled_trace(M, N, K, active, T)
        else:
            w = min(T, L)
            a_tx = nbn * M * _run_sums(K, w, eb, S)
            b_tx = nbm * K * _run_sums(N, w, eb, S)
            c_tx = M * _run_sums(N, w, eb, S)
        flag_tx = blocks * nk * wpb if a_nonzero is not None else 0
        if self.tensor_core is None:
            a_elems = b_elems = L
        else:
            m, n, k = self.tensor_core
            a_elems, b_elems = m * k, k * n
        per_unit_reads = wpb * (loads_per_unit // 2)
        sram_units = nbn * per_unit_reads * units_total
        return self._finish(
            operation="matmul", kernel=("tensor_core" if self.tensor_core else "tiled") + f" {T}×{T}",
            issue=issue, instructions=instructions, warps=blocks * wpb, diverged=0,
            transactions=a_tx + b_tx + c_tx + flag_tx, macs=macs, useful=macs,
            peak_per_instruction=macs_per_mult, lane_slots=mults * macs_per_mult,
            active_slots=macs,
            dram_reads={"A": dram_a, "B": dram_b}, dram_writes={"C": M * N},
            sram_reads={"A": sram_units * a_elems, "B": sram_units * b_elems},
            sram_writes={"A": dram_a, "B": dram_b}, output=output)

    def _tiled_trace(self, M, N, K, active, T):
        """Transactions of the cooperative tile loads and C stores, from every lane's address.

        Each distinct tile is traced once and weighted by how many blocks load it.
        """
        S, eb = self.transaction_bytes, self.element_bytes
        nbm, nbn, nk = _ceil_div(M, T), _ceil_div(N, T), _ceil_div(K, T)
        a_tiles = self._tile_load_counts(M, K, nbm, nk, _pitch(K, eb, S), T)   # (nbm, nk)
        b_tiles = self._tile_load_counts(K, N, nk, nbn, _pitch(N, eb, S), T)   # (nk, nbn)
        c_tiles = self._tile_load_counts(M, N, nbm, nbn, _pitch(N, eb, S), T)  # (nbm, nbn)
        a_tx = int(nbn * (a_tiles * active).sum())
        b_tx = int((b_tiles.sum(axis=1) * active.sum(axis=0)).sum())
        return a_tx, b_tx, int(c_tiles.sum())

    def _tile_load_counts(self, R: int, C: int, nr: int, nc: int, pitch: int,
                          T: int) -> np.ndarray:
        """Transactions to load each T×T tile of an R×C pitched matrix, lanes consecutive slots
        (row-major) per warp instruction."""
        L, S, eb = self.lanes, self.transaction_bytes, self.element_bytes
        slots = np.arange(_ceil_div(T * T, L) * L, dtype=np.int64).reshape(-1, L)
        in_tile = slots < T * T
        out = np.empty((nr, nc), dtype=np.int64)
        c0 = (np.arange(nc, dtype=np.int64) * T)[:, None, None]
        for i in range(nr):   # one row of tiles at a time keeps memory bounded
            rows = i * T + slots // T
            cols = c0 + slots % T
            ok = in_tile & (rows < R) & (cols < C)
            out[i] = _distinct_segments(rows * pitch + cols * eb, ok, S).sum(axis=1)
        return out

    # -- vector operations ---------------------------------------------------------------------

    def elementwise(self, x: object, op: str = "relu", y: object | None = None) -> SIMDRun:
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
        warps = _ceil_div(n, self.lanes)
        alu = ELEMENTWISE_INSTRUCTIONS[op]
        per_warp = len(inputs) + alu + 1
        flat = np.arange(n, dtype=np.int64)
        tx = self.transactions(flat) * (len(inputs) + 1)
        active = n * (len(inputs) + alu + 1)
        return self._finish(
            operation=f"elementwise:{op}", kernel="simt", issue=self._uniform_issue(warps, per_warp),
            instructions=warps * per_warp, warps=warps, diverged=0, transactions=tx, macs=0,
            useful=active, peak_per_instruction=self.lanes, lane_slots=warps * alu * self.lanes,
            active_slots=n * alu, dram_reads={k: n for k in inputs}, dram_writes={"out": n},
            sram_reads={}, sram_writes={}, output=out)

    def reduction(self, X: object, op: str = "sum") -> SIMDRun:
        """Reduce each row of X: ``"sum"``, ``"max"`` or ``"softmax"`` (its normaliser
        ``sum(exp(x - max(x)))``). One warp per row: each lane folds every ``lanes``-th element,
        then ``ceil(log2(lanes))`` shuffle-and-combine steps (half the lanes idle each step);
        softmax makes two passes (max, then exp-and-sum).
        """
        op = check.choice("op", op, REDUCTIONS)
        Xv = _array("X", X, ndim=2)
        rows, n = Xv.shape
        L = self.lanes
        chunks = _ceil_div(n, L)
        steps = max(0, math.ceil(math.log2(L))) if L > 1 else 0
        # per pass: (load + combine_cost) per chunk, 2 instructions per tree step
        passes = [(1, 1)] if op in ("sum", "max") else [(1, 1), (1, 1 + ELEMENTWISE_INSTRUCTIONS["exp"] + 1)]
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
        S, eb = self.transaction_bytes, self.element_bytes
        cols = np.arange(chunks * L, dtype=np.int64).reshape(chunks, L)
        per_row = int(_distinct_segments(cols * eb, cols < n, S).sum())
        tx = rows * per_row * len(passes) + self.transactions(np.arange(rows))
        return self._finish(
            operation=f"reduction:{op}", kernel="simt", issue=self._uniform_issue(rows, per_warp),
            instructions=rows * per_warp, warps=rows, diverged=0, transactions=tx, macs=0,
            useful=active, peak_per_instruction=L, lane_slots=alu_slots, active_slots=alu_active,
            dram_reads={"X": rows * n * len(passes)}, dram_writes={"out": rows},
            sram_reads={}, sram_writes={}, output=out)

    def gather(self, table: object, indices: object) -> SIMDRun:
        """Embedding lookup: ``out[q] = table[indices[q]]``, one thread per output element.

        Program per warp: load the row index, load the table element, store. A row of the table
        is contiguous, so a warp coalesces within a row but not across random rows.
        """
        tab = _array("table", table, ndim=2)
        idx = _index_vector("indices", indices)
        vocab, dim = tab.shape
        if idx.size and (idx.min() < 0 or idx.max() >= vocab):
            raise ValueError(f"indices must lie in [0, {vocab - 1}] (table has {vocab} rows), "
                             f"got values from {idx.min()} to {idx.max()}")
        out = tab[idx]
        n = idx.size * dim
        L, S, eb = self.lanes, self.transaction_bytes, self.element_bytes
        warps = _ceil_div(n, L)
        flat = np.arange(warps * L, dtype=np.int64)
        ok = (flat < n).reshape(warps, L)
        q, d = np.divmod(np.minimum(flat, n - 1), dim)
        # The table and the output are packed row after row (no pitch): neighbouring rows
        # share segments when read in order, and random rows do not.
        idx_addr = (q * 4).reshape(warps, L)          # int32 index array, contiguous
        tab_addr = ((idx[q] * dim + d) * eb).reshape(warps, L)
        out_addr = ((q * dim + d) * eb).reshape(warps, L)
        tx = sum(int(_distinct_segments(a, ok, S).sum()) for a in (idx_addr, tab_addr, out_addr))
        return self._finish(
            operation="gather", kernel="simt", issue=self._uniform_issue(warps, 3),
            instructions=3 * warps, warps=warps, diverged=0, transactions=tx, macs=0,
            useful=3 * n, peak_per_instruction=L, lane_slots=2 * warps * L, active_slots=2 * n,
            dram_reads={"indices": n, "table": n}, dram_writes={"out": n},
            sram_reads={}, sram_writes={}, output=out)

    def branchy(self, x: object, *, threshold: float = 0.0, then_instructions: int = 64,
                else_instructions: int = 64) -> SIMDRun:
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
        L = self.lanes
        warps = _ceil_div(n, L)
        taken = np.zeros(warps * L, dtype=bool)
        taken[:n] = xv.reshape(-1) > t
        ok = np.arange(warps * L) < n
        taken_w = (taken & ok).reshape(warps, L).sum(axis=1)
        live_w = ok.reshape(warps, L).sum(axis=1)
        run_then = taken_w > 0
        run_else = (live_w - taken_w) > 0
        if not self.skip_uniform_branches:
            run_then = run_else = np.ones(warps, dtype=bool)
        per_warp = 3 + a * run_then + b * run_else
        diverged = int((run_then & run_else).sum())
        issue = int(np.bincount(np.arange(warps) % self.cores, weights=per_warp,
                                minlength=self.cores).max())
        side_slots = int((a * run_then + b * run_else).sum()) * L + warps * L
        side_active = int(a * taken_w.sum() + b * (live_w - taken_w).sum()) + n
        out = np.where(xv > t, xv * xv, -xv)
        tx = 2 * self.transactions(np.arange(n))
        return self._finish(
            operation="branchy", kernel="simt", issue=issue, instructions=int(per_warp.sum()),
            warps=warps, diverged=diverged, transactions=tx, macs=0,
            useful=side_active + 2 * n, peak_per_instruction=L, lane_slots=side_slots,
            active_slots=side_active, dram_reads={"x": n}, dram_writes={"out": n},
            sram_reads={}, sram_writes={}, output=out)

    # -- shared bookkeeping --------------------------------------------------------------------

    def _uniform_issue(self, warps: int, per_warp: int) -> int:
        return _ceil_div(warps, self.cores) * per_warp

    def _finish(self, *, operation, kernel, issue, instructions, warps, diverged, transactions,
                macs, useful, peak_per_instruction, lane_slots, active_slots, dram_reads,
                dram_writes, sram_reads, sram_writes, output) -> SIMDRun:
        cpi = self.cycles_per_instruction
        issue_cycles = int(issue) * cpi
        in_flight = self.cores * min(self.warps_per_core, _ceil_div(warps, self.cores))
        memory_cycles = _ceil_div(int(transactions) * self.memory_latency_cycles, in_flight)
        cycles = max(issue_cycles, memory_cycles) + (self.memory_latency_cycles if transactions else 0)
        peak = self.cores * peak_per_instruction / cpi
        utilization = useful / (peak * cycles) if useful else 0.0
        return SIMDRun(
            operation=operation, kernel=kernel, cores=self.cores, lanes=self.lanes, cycles=cycles,
            issue_cycles=issue_cycles, memory_cycles=memory_cycles, macs=int(macs),
            useful_ops=int(useful), utilization=utilization,
            lane_utilization=(active_slots / lane_slots) if lane_slots else 0.0,
            instructions=int(instructions), warps=int(warps), diverged_warps=int(diverged),
            global_transactions=int(transactions), dram_reads=dram_reads, dram_writes=dram_writes,
            sram_reads=sram_reads, sram_writes=sram_writes, output=output)


# -- helpers -------------------------------------------------------------------------------------


def _replace(run: SIMDRun, **changes) -> SIMDRun:
    from dataclasses import replace
    return replace(run, **changes)


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def _mma_tile(value: object) -> tuple[int, int, int] | None:
    if value is None:
        return None
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise TypeError(f"tensor_core must be None or an (m, n, k) tile such as (4, 4, 4), "
                        f"got {value!r}")
    return tuple(check.positive_int(f"tensor_core[{i}]", v, maximum=256)
                 for i, v in enumerate(value))  # type: ignore[return-value]


def _operands(A: object, B: object) -> tuple[np.ndarray, np.ndarray]:
    A = check.matrix("A", A)
    B = check.matrix("B", B)
    check.chained("A", A, "B", B)
    return A, B


def _exact_product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B: integers accumulated exactly in int64 (refused if they could overflow), floats in
    float64."""
    if A.dtype.kind in "iu" and B.dtype.kind in "iu":
        bound = int(np.abs(A).max()) * int(np.abs(B).max()) * A.shape[1]
        if bound >= 2**63:
            raise ValueError("A and B hold integers too large to accumulate exactly in 64 bits; "
                             "scale them down or pass floats")
        return A.astype(np.int64) @ B.astype(np.int64)
    return A.astype(np.float64) @ B.astype(np.float64)


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


def _index_vector(name: str, value: object) -> np.ndarray:
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a 1-D array of whole numbers, got {type(value).__name__}")
    if value.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold whole numbers, got dtype {value.dtype}")
    if value.ndim != 1 or value.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {value.shape}")
    if value.size > check.MAX_ELEMENTS:
        raise ValueError(f"{name} has {value.size:,} elements, more than {check.MAX_ELEMENTS:,}")
    if value.min() < 0:
        raise ValueError(f"{name} must be >= 0, got {value.min()}")
    return value.astype(np.int64)


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



# -- access patterns for the coalescing experiments -----------------------------------------------

#: Elements per kernel launch in lesson 02's small experiments: 128 warps of 32 lanes.
PATTERN_ELEMENTS = 4096


def access_pattern_indices(pattern: str, n: int = PATTERN_ELEMENTS, seed: int = 0) -> np.ndarray:
    """Element indices thread t reads, for a named access pattern.

    ``"coalesced"``: thread t reads element t. ``"stride s"``: element s·t (s a whole number
    >= 1). ``"random"``: a seeded uniform draw over ``[0, 8·n)``, the span of stride 8, so the
    random and stride-8 kernels touch the same range of memory.

    Args:
        pattern: ``"coalesced"``, ``"stride <s>"`` or ``"random"``.
        n: threads (indices), 1 to 2**20.
        seed: the random pattern's seed, >= 0.
    Returns:
        An int64 array of ``n`` indices, for :meth:`SIMDMachine.gather` or
        :meth:`SIMDMachine.transactions`.
    Raises:
        TypeError: ``pattern`` is not a str, or a number of the wrong type.
        ValueError: an unknown pattern or a stride, ``n`` or seed out of range.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be 'coalesced', 'stride <s>' or 'random', "
                        f"got {type(pattern).__name__} {pattern!r}")
    n = check.positive_int("n", n, maximum=MAX_DIMENSION)
    seed = check.nonnegative_int("seed", seed, maximum=2**63 - 1)
    words = pattern.split()
    if words == ["coalesced"]:
        return np.arange(n, dtype=np.int64)
    if len(words) == 2 and words[0] == "stride" and words[1].isdigit():
        stride = check.positive_int("stride", int(words[1]), maximum=MAX_DIMENSION)
        return np.arange(n, dtype=np.int64) * stride
    if words == ["random"]:
        return np.random.default_rng(seed).integers(0, 8 * n, n).astype(np.int64)
    raise ValueError(f"pattern must be 'coalesced', 'stride <s>' or 'random', got {pattern!r}")
