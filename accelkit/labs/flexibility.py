"""Lesson 09's comparisons: the same work on the toy GPU and the toy TPU, and on real rooflines.

The machines are :class:`~accelkit.simd.SIMDMachine` and
:class:`~accelkit.workloads.TPUStyleMachine` with a few of the toy's assumptions exposed as knobs
(a GPU tensor core, TPU weight double-buffering, memory requests in flight). Runs are memoised
per (operation, the machine knobs that operation uses), so flipping the tensor core re-runs only
the matrix operations; :func:`lab_compare` then assembles the table with
:func:`accelkit.workloads.compare_runs`, exactly as :func:`accelkit.workloads.compare` does (a
test checks they are equal). The widgets in :mod:`accelkit.widgets.flexibility` draw these.

    >>> from accelkit import workloads
    >>> lab_compare(workloads.WORKLOADS["dense_matmul"]).winner_per_area
    'TPU'
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from accelkit import _validate as check
from accelkit import chips, roofline
from accelkit.roofline import RooflineResult
from accelkit.simd import SIMDMachine, SIMDRun
from accelkit.systolic import SystolicArray, SystolicRun
from accelkit.workloads import (OPERATIONS, WORKLOADS, Branchy, Comparison, Gather, Matmul,
                                Operation, SparseMatmul, TPUStyleMachine, compare_runs)

__all__ = ["DEFAULT_WARPS", "DENSE_LAYER_BATCH", "TENSOR_CORES", "amdahl_numbers", "gpu_machine", "lab_compare",
           "mix_ops", "recurrent_batch_sweep", "roofline_pair", "tpu_machine",
           "with_side_instructions"]

#: GPU tensor-core choices: label -> MMA tile (M, N, K), or None for plain SIMD FMAs.
TENSOR_CORES: dict[str, tuple[int, int, int] | None] = {
    "none (toy default)": None, "4×4×4": (4, 4, 4), "16×8×16": (16, 8, 16)}
#: Toy default memory parallelism: 4 cores × 8 warps on the GPU, so 32 transactions in flight,
#: and the TPU gets the same 32 (``4 × warps_per_core``) so both have one memory bandwidth.
DEFAULT_WARPS = 8
_MATRIX_KINDS = ("matmul", "sparse_matmul")
_NO_TENSOR_CORE = "none (toy default)"


def _tensor_core(value: object) -> str:
    return check.choice("tensor_core", value, TENSOR_CORES)


def _warps(value: object) -> int:
    return check.positive_int("warps_per_core", value, maximum=1024)


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def gpu_machine(tensor_core: str = _NO_TENSOR_CORE, warps_per_core: int = DEFAULT_WARPS
                ) -> SIMDMachine:
    """The default toy GPU (4 cores × 32 lanes) with a named tensor core and memory parallelism.

    Args:
        tensor_core: a key of :data:`TENSOR_CORES`.
        warps_per_core: warps (memory requests) in flight per core, 1 to 1,024.
    Returns:
        A new :class:`~accelkit.simd.SIMDMachine`.
    Raises:
        TypeError, ValueError: an unknown tensor core or a bad warp count.
    """
    return SIMDMachine(tensor_core=TENSOR_CORES[_tensor_core(tensor_core)],
                       warps_per_core=_warps(warps_per_core))


def tpu_machine(double_buffer: bool = False, memory_in_flight: int = 4 * DEFAULT_WARPS
                ) -> TPUStyleMachine:
    """The default toy TPU (a 16×16 weight-stationary array and 16 vector lanes).

    Args:
        double_buffer: whether the array hides weight loads behind the previous fold.
        memory_in_flight: memory transactions the vector unit keeps in flight, 1 to 4,096.
    Returns:
        A new :class:`~accelkit.workloads.TPUStyleMachine`.
    Raises:
        TypeError, ValueError: a non-bool ``double_buffer`` or a bad ``memory_in_flight``.
    """
    array = SystolicArray(rows=16, cols=16, dataflow="ws",
                          double_buffer=_flag("double_buffer", double_buffer))
    return TPUStyleMachine(array, memory_in_flight=check.positive_int(
        "memory_in_flight", memory_in_flight, maximum=4096))


# The lab's one cache. A learner's knob changes only a few of a workload's runs, but run afresh
# the whole workload costs 100-180 ms a widget move (the mix builder's and the lab's controls,
# bench_widgets' timing with this cache off, on the course's 2-core machine: over the 50 ms
# budget); memoised per run, a move pays for the runs it changes, 4-15 ms. The key names only
# the knobs the operation's unit reads: vector kernels never touch the tensor core, and weight
# double-buffering only changes the systolic array's matrix operations.
@lru_cache(maxsize=1024)
def _run(op: Operation, side: str, knob: str | bool, memory: int) -> SIMDRun | SystolicRun:
    machine = gpu_machine(str(knob), memory) if side == "gpu" else tpu_machine(bool(knob), memory)
    return op.run(machine)


def _gpu_run(op: Operation, tensor_core: str, warps: int) -> SIMDRun | SystolicRun:
    return _run(op, "gpu", tensor_core if op.kind in _MATRIX_KINDS else _NO_TENSOR_CORE, warps)


def _tpu_run(op: Operation, double_buffer: bool, in_flight: int) -> SIMDRun | SystolicRun:
    return _run(op, "tpu", double_buffer if op.kind in _MATRIX_KINDS else False, in_flight)


def _operations(ops: object) -> tuple:
    if not isinstance(ops, (tuple, list)):
        raise TypeError(f"ops must be a tuple or list of operations, got {type(ops).__name__}")
    ops = tuple(ops)
    if not ops:
        raise ValueError("ops must hold at least one operation")
    for i, op in enumerate(ops):
        if not isinstance(op, OPERATIONS):
            raise TypeError(f"ops[{i}] must be an operation "
                            f"({', '.join(c.__name__ for c in OPERATIONS)}), "
                            f"got {type(op).__name__}")
        # Operations check their own sizes when constructed (workloads.py's __post_init__).
    return ops


def lab_compare(ops: tuple, name: str = "custom", tensor_core: str = _NO_TENSOR_CORE,
                double_buffer: bool = False, warps_per_core: int = DEFAULT_WARPS) -> Comparison:
    """Run ``ops`` on :func:`gpu_machine` and :func:`tpu_machine`, memoising each run.

    The result equals ``workloads.compare(ops, gpu_machine(tensor_core, warps_per_core),
    tpu_machine(double_buffer, 4 * warps_per_core))``; the TPU keeps as many memory requests in
    flight as the GPU's 4 cores, so both machines share one memory bandwidth.

    Args:
        ops: a tuple (or list) of :mod:`accelkit.workloads` operations.
        name: the workload's name in the result.
        tensor_core: a key of :data:`TENSOR_CORES` (the GPU's matrix unit).
        double_buffer: whether the TPU double-buffers weights.
        warps_per_core: the GPU's warps in flight per core, 1 to 1,024.
    Returns:
        A :class:`~accelkit.workloads.Comparison`.
    Raises:
        TypeError, ValueError: a bad operation or knob, named.
    """
    ops = _operations(ops)
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    tensor_core = _tensor_core(tensor_core)
    double_buffer = _flag("double_buffer", double_buffer)
    warps = _warps(warps_per_core)
    gpu = gpu_machine(tensor_core, warps)
    tpu = tpu_machine(double_buffer, 4 * warps)
    runs_gpu = [_gpu_run(op, tensor_core, warps) for op in ops]
    runs_tpu = [_tpu_run(op, double_buffer, 4 * warps) for op in ops]
    return compare_runs(name, ops, gpu, tpu, runs_gpu, runs_tpu)


def with_side_instructions(ops: tuple, side: int) -> tuple:
    """The workload with every branchy operation's two sides ``side`` instructions long.

    Args:
        ops: a tuple (or list) of operations; non-branchy ones are kept as they are.
        side: instructions per side of each branch, 1 to 65,536.
    Returns:
        A new tuple of operations.
    Raises:
        TypeError, ValueError: a bad operation or side length.
    """
    ops = _operations(ops)
    side = check.positive_int("side", side, maximum=1 << 16)
    return tuple(replace(op, side_instructions=side) if isinstance(op, Branchy) else op
                 for op in ops)


def mix_ops(batch: int = 4, taken_fraction: float = 0.5, side_instructions: int = 64,
            density: float = 0.1, embedding_dim: int = 16) -> tuple:
    """The mix builder's five operations, each small enough to run in a widget.

    A dense 1024³ matmul, a recurrent step (``batch × 1024`` by ``1024 × 256``), an embedding
    gather (256 lookups into a 20,000-row table), a branchy elementwise op over 8,192 elements and
    a 256³ block-sparse matmul (32×32 blocks).

    Args:
        batch: the recurrent step's batch, 1 to 65,536.
        taken_fraction: share of the branchy op's elements taking the then-side, in [0, 1].
        side_instructions: instructions per side of the branch, 1 to 65,536.
        density: share of the sparse matmul's blocks kept, in [0, 1].
        embedding_dim: the gathered rows' width, 1 to 4,096.
    Returns:
        A tuple of five operations.
    Raises:
        TypeError, ValueError: a knob out of range, named.
    """
    batch = check.positive_int("batch", batch, maximum=1 << 16)
    taken_fraction = check.real_in_range("taken_fraction", taken_fraction, low=0.0, high=1.0)
    side_instructions = check.positive_int("side_instructions", side_instructions, maximum=1 << 16)
    density = check.real_in_range("density", density, low=0.0, high=1.0)
    embedding_dim = check.positive_int("embedding_dim", embedding_dim, maximum=4096)
    return (
        Matmul(1024, 1024, 1024, label="dense matmul 1024³"),
        Matmul(batch, 1024, 256, label=f"recurrent step (batch {batch})"),
        Gather(20_000, embedding_dim, 256, label=f"embedding gather (dim {embedding_dim})"),
        Branchy(8192, taken_fraction, side_instructions, label="branchy custom op"),
        SparseMatmul(256, 256, 256, density=density, block=32,
                     label=f"sparse matmul ({density:.0%} kept)"),
    )


def recurrent_batch_sweep(batches: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
                          tensor_core: str = _NO_TENSOR_CORE,
                          warps_per_core: int = DEFAULT_WARPS) -> dict[int, float]:
    """TPU ÷ GPU cell-cycles of the recurrent step (``batch × 1024`` by ``1024 × 256``) per batch.

    Args:
        batches: the batch sizes, each 1 to 65,536 (at most 64 of them).
        tensor_core: a key of :data:`TENSOR_CORES`.
        warps_per_core: the GPU's warps in flight per core (the TPU gets 4× as many requests).
    Returns:
        ``{batch: tpu_cell_cycles / gpu_cell_cycles}``; below 1 the TPU wins per unit of area.
    Raises:
        TypeError, ValueError: a bad batch list or knob.
    """
    if not isinstance(batches, (tuple, list)) or not batches or len(batches) > 64:
        raise TypeError(f"batches must be a non-empty tuple or list of at most 64 batch sizes, "
                        f"got {batches!r}")
    sizes = [check.positive_int(f"batches[{i}]", b, maximum=1 << 16) for i, b in enumerate(batches)]
    return {b: lab_compare((Matmul(b, 1024, 256),), "custom", tensor_core, False, warps_per_core
                           ).operations[0].tpu_over_gpu_per_area for b in sizes}


#: The dense layer's batch in lesson 09's gather-vs-dense comparison: large enough that a
#: 4096-wide layer is compute-bound on every chip the lesson shows (at 256 it is still
#: memory-bound on a TPU v5e and an H100, so the contrast with the gather would not show).
DENSE_LAYER_BATCH = 1024


def roofline_pair(chip: str | chips.Chip, batch: int = DENSE_LAYER_BATCH, lookups: int = 4096,
                  dim: int = 128, d_model: int = 4096) -> tuple[RooflineResult, RooflineResult]:
    """An embedding-bag gather and a dense layer on one real chip's roofline, in bf16.

    The gather reads ``lookups × dim`` elements once and adds each into a pooled sum (one FLOP
    per element, no reuse, so intensity 0.5 FLOP/byte in bf16); the dense layer is a
    ``batch × d_model`` by ``d_model × d_model`` matmul. Both are roofline estimates: peak
    compute or peak HBM bandwidth, whichever binds, with no kernel overheads.

    Args:
        chip: a chip name (see ``accelkit.chips.names()``) or a Chip.
        batch: the dense layer's batch (rows of its input), >= 1; default
            :data:`DENSE_LAYER_BATCH`.
        lookups: embedding rows gathered, >= 1.
        dim: elements per embedding row, >= 1.
        d_model: the dense layer's width, >= 1.
    Returns:
        ``(gather, dense)``, two :class:`~accelkit.roofline.RooflineResult`.
    Raises:
        TypeError, ValueError: an unknown chip or a bad size.
    """
    the_chip = chips.get(chip)
    lookups = check.positive_int("lookups", lookups, maximum=1 << 30)
    dim = check.positive_int("dim", dim, maximum=1 << 20)
    gather = roofline.elementwise(the_chip, n_elements=lookups * dim, flops_per_element=1.0,
                                  reads_per_element=1, writes_per_element=0)
    dense = roofline.matmul(the_chip, M=batch, N=d_model, K=d_model)
    return gather, dense


def amdahl_numbers() -> dict[str, Comparison]:
    """The recommender step and the transformer layer on the default machines.

    Returns:
        ``{"recommender_step": Comparison, "transformer_layer": Comparison}``, what
        :func:`accelkit.workloads.compare` gives on the default machines (:func:`lab_compare`'s
        default knobs, so the runs are memoised with the lab's); a new dict each call.
    """
    return {name: lab_compare(WORKLOADS[name], name)
            for name in ("recommender_step", "transformer_layer")}
