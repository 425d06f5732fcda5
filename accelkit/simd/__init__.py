"""A toy GPU: cores of SIMD lanes with warps, divergence, coalescing and an optional MMA unit.

The counterpart of :mod:`accelkit.systolic`. Both engines report the same result fields where
they apply (``output``, ``cycles``, ``utilization``, ``macs``, ``sram_reads``, ``sram_writes``)
so that :mod:`accelkit.workloads` can put them side by side.

Every operation is a *kernel*: a fixed program per warp, so instruction counts follow from the
shapes (and, for data-dependent branches and skips, from the data). Global-memory transactions
are counted from the lane addresses themselves (the distinct ``transaction_bytes`` segments one
warp instruction touches), so coalescing is not assumed, it is measured.

The parts, each its own module (everything public is importable from here):

* :mod:`~accelkit.simd.machine`: :class:`SIMDMachine`, its parameters and its cost model.
* :mod:`~accelkit.simd.matmul`: the naive and tiled (and tensor-core) matmul kernels.
* :mod:`~accelkit.simd.vector`: elementwise, reduction, gather and branch kernels.
* :mod:`~accelkit.simd.memory`: coalescing, counted from lane addresses; lesson 02's patterns.
* :mod:`~accelkit.simd.results`: a kernel's tally and the :class:`SIMDRun` it costs.
"""

from __future__ import annotations

from accelkit.simd.machine import SIMDMachine
from accelkit.simd.memory import MAX_DIMENSION, PATTERN_ELEMENTS, access_pattern_indices
from accelkit.simd.results import KernelCounts, SIMDRun
from accelkit.simd.vector import ELEMENTWISE_INSTRUCTIONS, REDUCTIONS

__all__ = ["ELEMENTWISE_INSTRUCTIONS", "MAX_DIMENSION", "PATTERN_ELEMENTS", "REDUCTIONS",
           "KernelCounts", "SIMDMachine", "SIMDRun", "access_pattern_indices"]
