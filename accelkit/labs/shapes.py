"""Where a matrix unit's time goes, and how utilization moves with a GEMM's shape (lesson 04).

Every figure here is read off :meth:`accelkit.systolic.SystolicArray.estimate` and
:meth:`accelkit.simd.SIMDMachine.estimate`; this module chooses which shapes to ask for and
splits the result into shares. The widgets in :mod:`accelkit.widgets.shapes` draw these.

Simplification, stated where used: the systolic engine counts compute cycles with fill and drain
but no memory stalls (no bandwidth is set here), so these are the array's best case for a shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from accelkit import _validate as check
from accelkit.simd import SIMDMachine
from accelkit.systolic import SystolicArray, SystolicRun

__all__ = ["LINE_SIZES", "MAP_SIZES", "TENSOR_CORE", "TOKENS", "cell_cycles",
           "smallest_M_reaching", "tile_curves", "utilization_grid", "utilization_line"]

#: The map's grid: M and N every 16 up to 384 (three 128-wide arrays), 24 × 24 estimates.
MAP_SIZES = np.arange(16, 385, 16)
#: Every N from 1 to 384, so the drop just past each multiple of an array side shows.
LINE_SIZES = np.arange(1, 385)
#: Token counts (M) of the small-tiles comparison: powers of two from 1 to 2,048.
TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
#: A tensor-core-like tile for :class:`~accelkit.simd.SIMDMachine`: a 16×8×16 MMA, one MMA per
#: warp per 16×16 thread-block tile, so the padding granularity is 16 (thread_tile=1, tile=16).
TENSOR_CORE = dict(tensor_core=(16, 8, 16), thread_tile=1, tile=16)

#: Largest grid of estimates one sweep will run (each is a closed-form estimate, but a learner's
#: huge list would still hang a kernel).
_MAX_POINTS = 1 << 16


def cell_cycles(run: SystolicRun) -> dict[str, float]:
    """Where an array's cell-cycles (rows · cols · cycles) went, as shares that sum to 1.

    ``useful`` is ``macs / (rows · cols · cycles)`` (the run's utilization); ``padding`` is the
    share of cells a fold leaves unmapped (``1 − mapping_efficiency``); ``load, fill and drain``
    is the rest: mapped cells waiting for data. Exact without double buffering; with it, padding
    is weighted by the average fold rather than by each fold's length.

    Args:
        run: a :class:`~accelkit.systolic.SystolicRun` (from ``estimate``, ``matmul`` or
            ``simulate``).
    Returns:
        ``{"useful": ..., "padding": ..., "load, fill and drain": ...}``, each in [0, 1].
    Raises:
        TypeError: ``run`` is not a SystolicRun.
    """
    if not isinstance(run, SystolicRun):
        raise TypeError(f"run must be a SystolicRun, got {type(run).__name__}")
    total = run.rows * run.cols * run.cycles
    useful = run.macs / total
    padding = 1.0 - run.mapping_efficiency
    return {"useful": useful, "padding": padding, "load, fill and drain": 1.0 - useful - padding}


def _sizes(name: str, values: object) -> np.ndarray:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of whole numbers >= 1, "
                        f"got {type(values).__name__}")
    sizes = [check.positive_int(f"{name}[{i}]", v, maximum=1 << 20) for i, v in enumerate(values)]
    if not sizes:
        raise ValueError(f"{name} must hold at least one size")
    return np.array(sizes, dtype=np.int64)


def _square(side: object, dataflow: object, double_buffer: bool = False) -> SystolicArray:
    return SystolicArray(side, side, dataflow, double_buffer=double_buffer)  # type: ignore[arg-type]


def utilization_grid(side: int, K: int, dataflow: str,
                     sizes: Sequence[int] | np.ndarray = MAP_SIZES) -> np.ndarray:
    """Utilization of a ``side × side`` array over a grid of GEMM shapes at fixed K.

    Args:
        side: the square array's side (rows = cols), 1 to the engine's maximum.
        K: the shared (reduction) dimension, >= 1.
        dataflow: ``"ws"``, ``"os"`` or ``"is"``.
        sizes: the M values (rows of the result) and N values (columns), the same list for both;
            default :data:`MAP_SIZES`.
    Returns:
        A float array of shape ``(len(sizes), len(sizes))``: entry ``[i, j]`` is the utilization
        at ``M = sizes[i]``, ``N = sizes[j]``.
    Raises:
        TypeError, ValueError: a bad side, K, dataflow or size, or more than 65,536 points.
    """
    array = _square(side, dataflow)
    K = check.positive_int("K", K, maximum=1 << 20)
    grid = _sizes("sizes", sizes)
    if grid.size ** 2 > _MAX_POINTS:
        raise ValueError(f"sizes gives {grid.size ** 2:,} grid points, more than {_MAX_POINTS:,}")
    return array.utilizations(M=grid[:, None], N=grid[None, :], K=K)


def utilization_line(side: int, K: int, dataflow: str, M: int,
                     sizes: Sequence[int] | np.ndarray = LINE_SIZES) -> np.ndarray:
    """Utilization of a ``side × side`` array for each N in ``sizes`` at fixed M and K.

    Args:
        side: the square array's side.
        K: the shared dimension, >= 1.
        dataflow: ``"ws"``, ``"os"`` or ``"is"``.
        M: rows of the result, >= 1.
        sizes: the N values; default :data:`LINE_SIZES` (every N from 1 to 384).
    Returns:
        A float array with one utilization per N.
    Raises:
        TypeError, ValueError: a bad argument, or more than 65,536 sizes.
    """
    array = _square(side, dataflow)
    K = check.positive_int("K", K, maximum=1 << 20)
    M = check.positive_int("M", M, maximum=1 << 20)
    line = _sizes("sizes", sizes)
    if line.size > _MAX_POINTS:
        raise ValueError(f"sizes holds {line.size:,} values, more than {_MAX_POINTS:,}")
    return array.utilizations(M=M, N=line, K=K)


def tile_curves(width: int, tokens: Sequence[int] = TOKENS) -> dict[str, list[float]]:
    """Useful share of five matrix units multiplying ``M × width`` by ``width × width``.

    The five: 16×16 tensor-core tiles on the toy GPU (:data:`TENSOR_CORE`; lane utilization,
    padding only), one 128×128 output-stationary tile (mapping efficiency: padding only), a
    128×128 weight-stationary MXU (utilization: padding plus load, fill and drain), the same
    MXU double-buffering its weights, and the same MXU pipelined as a real one runs
    (``double_buffer=True, overlap_folds=True``: lesson 04's "pipelined MXU", fill and drain
    paid once per matmul).

    Args:
        width: the layer's width, N = K, >= 1.
        tokens: the M values; default :data:`TOKENS`.
    Returns:
        ``{label: [share for each M in tokens]}``, in the order above.
    Raises:
        TypeError, ValueError: a bad width or token count.
    """
    width = check.positive_int("width", width, maximum=1 << 16)
    ms = [int(m) for m in _sizes("tokens", tokens)]
    if len(ms) > 64:
        raise ValueError(f"tokens holds {len(ms)} values, more than 64")
    gpu = SIMDMachine(**TENSOR_CORE)  # type: ignore[arg-type]
    mxu = SystolicArray(128, 128, "ws")
    mxu_db = SystolicArray(128, 128, "ws", double_buffer=True)
    mxu_piped = SystolicArray(128, 128, "ws", double_buffer=True, overlap_folds=True)
    tile = SystolicArray(128, 128, "os")
    return {
        "16×16 tensor-core tiles (padding only)":
            [gpu.estimate(M=m, N=width, K=width).lane_utilization for m in ms],
        "128×128 tile (padding only)":
            [tile.estimate(M=m, N=width, K=width).mapping_efficiency for m in ms],
        "128×128 ws MXU (load, fill, drain too)":
            [mxu.estimate(M=m, N=width, K=width).utilization for m in ms],
        "128×128 ws MXU, double-buffered":
            [mxu_db.estimate(M=m, N=width, K=width).utilization for m in ms],
        "128×128 ws MXU, pipelined (as a real one)":
            [mxu_piped.estimate(M=m, N=width, K=width).utilization for m in ms],
    }


def smallest_M_reaching(target: float, array: SystolicArray, width: int, limit: int = 4096) -> int:
    """The smallest batch M at which ``array`` reaches ``target`` utilization on an
    ``M × width`` by ``width × width`` GEMM.

    A binary search, valid because in a weight-stationary array M is the streamed dimension and
    each fold's utilization ``M / (M + fixed overhead)`` grows with M; other dataflows map M onto
    the array (utilization then jumps at multiples of the side) and are refused.

    Args:
        target: the utilization to reach, in (0, 1].
        array: a weight-stationary :class:`~accelkit.systolic.SystolicArray`.
        width: the layer's width, N = K, >= 1.
        limit: the largest M searched, >= 1.
    Returns:
        The smallest M in ``[1, limit]`` whose utilization is >= ``target``.
    Raises:
        TypeError: ``array`` is not a SystolicArray, or a number of the wrong type.
        ValueError: a dataflow other than ``"ws"``, a target out of range, or a target not
            reached by ``M = limit``.
    """
    target = check.fraction("target", target)
    if not isinstance(array, SystolicArray):
        raise TypeError(f"array must be a SystolicArray, got {type(array).__name__}")
    if array.dataflow != "ws":
        raise ValueError(f"array must be weight-stationary ('ws'), got {array.dataflow!r}: "
                         "utilization grows with M only when M is streamed")
    width = check.positive_int("width", width, maximum=1 << 20)
    limit = check.positive_int("limit", limit, maximum=1 << 24)

    def reached(m: int) -> bool:
        return array.estimate(M=m, N=width, K=width).utilization >= target

    if not reached(limit):
        raise ValueError(f"utilization {target:g} is not reached by M = limit = {limit:,}; "
                         "raise limit")
    low, high = 1, limit
    while low < high:
        mid = (low + high) // 2
        if reached(mid):
            high = mid
        else:
            low = mid + 1
    return low
