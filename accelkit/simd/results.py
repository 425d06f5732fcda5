"""What an operation did on the toy GPU (:class:`KernelCounts`, a kernel's own tally) and what it
cost (:class:`SIMDRun`, the tally priced in cycles by the machine's cost model,
:meth:`SIMDMachine.cost <accelkit.simd.SIMDMachine.cost>`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from accelkit import _html


@dataclass(frozen=True)
class KernelCounts:
    """What one kernel did, in instructions and memory transactions, before any cycle is counted.

    Attributes:
        operation, kernel: as in :class:`SIMDRun`.
        issue_instructions: warp instructions the busiest core issues.
        instructions: warp instructions issued, machine-wide.
        warps, diverged_warps: warps launched, and those that ran both sides of a branch.
        global_transactions: global-memory transactions (reads and writes).
        macs: useful multiply-accumulates (0 for non-matmul operations).
        useful_ops: the work ``utilization`` counts (MACs, or active lane-operations).
        peak_per_instruction: useful operations one instruction can do at best (``lanes``, or
            an MMA's ``m·n·k``).
        lane_slots, active_slots: lane slots of the compute instructions, and those doing work.
        dram_reads, dram_writes, sram_reads, sram_writes, output: as in :class:`SIMDRun`.
    """

    operation: str
    kernel: str
    issue_instructions: int
    instructions: int
    warps: int
    diverged_warps: int
    global_transactions: int
    macs: int
    useful_ops: int
    peak_per_instruction: int
    lane_slots: int
    active_slots: int
    dram_reads: Mapping[str, int]
    dram_writes: Mapping[str, int]
    sram_reads: Mapping[str, int]
    sram_writes: Mapping[str, int]
    output: np.ndarray | None = field(default=None, repr=False, compare=False)


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



__all__ = ["KernelCounts", "SIMDRun"]
