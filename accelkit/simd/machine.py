"""The toy GPU itself: its size, its memory system and its cost model.

:class:`SIMDMachine` holds the machine's parameters and prices what a kernel did
(:class:`~accelkit.simd.results.KernelCounts`) in cycles with :meth:`SIMDMachine.cost`, the
whole cost model in one method. Its operations (``matmul``, ``elementwise``, ``gather`` and the
rest) run the kernels in :mod:`accelkit.simd.matmul` and :mod:`accelkit.simd.vector` and cost
them.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from accelkit import _gemm
from accelkit import _validate as check
from accelkit.simd import matmul as matmul_kernels
from accelkit.simd import vector as vector_kernels
from accelkit.simd.memory import MAX_DIMENSION, ceil_div, transactions
from accelkit.simd.results import KernelCounts, SIMDRun


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

    The kernels' programs live in :mod:`accelkit.simd.matmul` and :mod:`accelkit.simd.vector`;
    each returns its instruction and transaction tally, which :meth:`cost` prices.

    Example:
        >>> SIMDMachine().estimate(M=256, N=256, K=256).cycles
        201408
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
        if tile is None:
            self.tile = None
            self._candidates = [t for t in (need * 2**j for j in range(8))
                                if t <= max(128, need)
                                and (t % self.lanes == 0 or self.lanes % t == 0)]
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
        costs = [(self.cost(matmul_kernels.tiled(self, M, N, K, output=None, traced=False,
                                                 a_nonzero=None, T=t)).cycles, t)
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
        return transactions(indices, lanes=self.lanes, element_bytes=self.element_bytes,
                            transaction_bytes=self.transaction_bytes)

    # -- matmul --------------------------------------------------------------------------------

    def matmul(self, A: object, B: object) -> SIMDRun:
        """Multiply A (M×K) by B (K×N) with this machine's matmul kernel.

        Transactions are counted from every lane's address; instruction counts follow the kernel.
        """
        A, B = _gemm.operands(A, B)
        M, K = A.shape
        N = B.shape[1]
        output = _gemm.exact_product(A, B)
        if not self.shared_memory and self.tensor_core is None:
            return self.cost(matmul_kernels.naive(self, M, N, K, output=output, traced=True))
        return self.cost(matmul_kernels.tiled(self, M, N, K, output=output, traced=True,
                                              a_nonzero=None, T=self._pick_tile(M, N, K)))

    def estimate(self, *, M: int, N: int, K: int) -> SIMDRun:
        """Closed-form counts of :meth:`matmul` for an M×K by K×N product, without data."""
        M = check.positive_int("M", M, maximum=MAX_DIMENSION)
        N = check.positive_int("N", N, maximum=MAX_DIMENSION)
        K = check.positive_int("K", K, maximum=MAX_DIMENSION)
        if not self.shared_memory and self.tensor_core is None:
            return self.cost(matmul_kernels.naive(self, M, N, K, output=None, traced=False))
        return self.cost(matmul_kernels.tiled(self, M, N, K, output=None, traced=False,
                                              a_nonzero=None, T=self._pick_tile(M, N, K)))

    def sparse_matmul(self, A: object, B: object) -> SIMDRun:
        """A @ B, skipping work where A is zero, at the kernel's granularity.

        The tiled kernel skips a (block, K-tile) step whose A tile is all zero (one flag load per
        warp decides, a warp-uniform branch): it pays off for block-sparse A, hardly at all for
        scattered zeros. The naive kernel tests A[i, k] (uniform across the warp) each step and
        skips the B load and FMA when it is zero: element granularity, but no data reuse.
        """
        A, B = _gemm.operands(A, B)
        M, K = A.shape
        N = B.shape[1]
        output = _gemm.exact_product(A, B)
        nonzero = np.asarray(A != 0)  # an (M, K) bool array
        if not self.shared_memory and self.tensor_core is None:
            return self.cost(matmul_kernels.naive(self, M, N, K, output=output, traced=True,
                                                  a_nonzero=nonzero))
        # A sparse library picks the block size for the sparsity at hand: try every candidate
        # (the first of equally fast ones wins).
        runs = []
        for T in self._candidates:
            nbm, nk = ceil_div(M, T), ceil_div(K, T)
            padded = np.zeros((nbm * T, nk * T), dtype=bool)
            padded[:M, :K] = nonzero
            tiles = np.asarray(padded.reshape(nbm, T, nk, T).any(axis=(1, 3)))
            runs.append(self.cost(matmul_kernels.tiled(self, M, N, K, output=output,
                                                       traced=True, a_nonzero=tiles, T=T)))
        best = min(runs, key=lambda run: run.cycles)
        return replace(best, operation="sparse_matmul")

    # -- vector operations ---------------------------------------------------------------------

    def elementwise(self, x: object, op: str = "relu", y: object | None = None) -> SIMDRun:
        """Apply ``op`` to every element of x (one thread per element).

        Args:
            x: a 1-D or 2-D numeric array.
            op: one of ``ELEMENTWISE_INSTRUCTIONS`` ("relu", "gelu", "tanh", "sigmoid", "exp",
                and the binary "add", "mul", which need ``y`` of x's shape).
        Program per warp: load x (and y), ``ELEMENTWISE_INSTRUCTIONS[op]`` ALU instructions, store.
        """
        return self.cost(vector_kernels.elementwise(self, x, op, y))

    def reduction(self, X: object, op: str = "sum") -> SIMDRun:
        """Reduce each row of X: ``"sum"``, ``"max"`` or ``"softmax"`` (its normaliser
        ``sum(exp(x - max(x)))``); see :func:`accelkit.simd.vector.reduction` for the program."""
        return self.cost(vector_kernels.reduction(self, X, op))

    def gather(self, table: object, indices: object) -> SIMDRun:
        """Embedding lookup: ``out[q] = table[indices[q]]``, one thread per output element
        (see :func:`accelkit.simd.vector.gather`)."""
        return self.cost(vector_kernels.gather(self, table, indices))

    def load(self, x: object, indices: object) -> SIMDRun:
        """A plain load in an access pattern: thread t loads ``x[indices[t]]`` (its address
        computed in a register, no index array read) and stores it to ``out[t]``. The load's
        transactions are :meth:`transactions` of ``indices``; the store adds a coalesced write
        (see :func:`accelkit.simd.vector.load`)."""
        return self.cost(vector_kernels.load(self, x, indices))

    def branchy(self, x: object, *, threshold: float = 0.0, then_instructions: int = 64,
                else_instructions: int = 64) -> SIMDRun:
        """A data-dependent branch per element: ``x*x if x > threshold else -x``, each side
        ``then_instructions`` / ``else_instructions`` long (see
        :func:`accelkit.simd.vector.branchy`)."""
        return self.cost(vector_kernels.branchy(self, x, threshold=threshold,
                                                then_instructions=then_instructions,
                                                else_instructions=else_instructions))

    # -- the cost model ------------------------------------------------------------------------

    def cost(self, work: KernelCounts) -> SIMDRun:
        """What a kernel's tally costs on this machine, in cycles (the class docstring's model).

        Issue: the busiest core's instructions × ``cycles_per_instruction``. Memory: every
        transaction takes ``memory_latency_cycles``, with one in flight per resident warp
        (Little's law). The two overlap; the first access's latency does not.
        """
        cpi = self.cycles_per_instruction
        issue_cycles = int(work.issue_instructions) * cpi
        tx = int(work.global_transactions)
        in_flight = self.cores * min(self.warps_per_core, ceil_div(work.warps, self.cores))
        memory_cycles = ceil_div(tx * self.memory_latency_cycles, in_flight)
        cycles = max(issue_cycles, memory_cycles) + (self.memory_latency_cycles if tx else 0)
        peak = self.cores * work.peak_per_instruction / cpi
        useful = work.useful_ops
        utilization = useful / (peak * cycles) if useful else 0.0
        return SIMDRun(
            operation=work.operation, kernel=work.kernel, cores=self.cores, lanes=self.lanes,
            cycles=cycles, issue_cycles=issue_cycles, memory_cycles=memory_cycles,
            macs=int(work.macs), useful_ops=int(useful), utilization=utilization,
            lane_utilization=(work.active_slots / work.lane_slots) if work.lane_slots else 0.0,
            instructions=int(work.instructions), warps=int(work.warps),
            diverged_warps=int(work.diverged_warps), global_transactions=tx,
            dram_reads=work.dram_reads, dram_writes=work.dram_writes,
            sram_reads=work.sram_reads, sram_writes=work.sram_writes, output=work.output)


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


__all__ = ["SIMDMachine"]
