"""The same work on a toy GPU and a toy TPU: named operations, preset workloads, a comparison.

Operations (frozen dataclasses, each makes its own seeded data): :class:`Matmul`,
:class:`Elementwise`, :class:`Reduction`, :class:`Gather`, :class:`Branchy`,
:class:`SparseMatmul`. A workload is a tuple of them; :data:`WORKLOADS` holds presets (one
transformer layer, an embedding-heavy recommender step, a small-batch LSTM step, a large dense
matmul, a branchy elementwise op, a block-sparse matmul). :func:`compare` runs one on both
machines and returns a :class:`Comparison`.

Area. Machines are compared per MAC cell: the GPU counts every SIMD lane (plus tensor-core
MACs), the TPU counts its systolic cells plus its vector lanes. Counting a programmable lane as
one cell flatters the GPU (a lane carries a register file and its share of instruction issue), so
a TPU win per cell is conservative. ``cell_cycles = cycles × mac_cells`` is area × time; lower is
better.

Operations run one after another (no fusion, no overlap of vector and matrix work). The systolic
array's matmul assumes its operands sit in on-chip buffers (no memory stalls, the
:class:`~accelkit.systolic.SystolicArray` default), while the GPU's matmul pays for global memory:
an asymmetry in the TPU's favour, kept because that is the systolic engine's model.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from accelkit import _html
from accelkit import _validate as check
from accelkit.simd import ELEMENTWISE_INSTRUCTIONS, REDUCTIONS, SIMDMachine, SIMDRun
from accelkit.systolic import SystolicArray, SystolicRun

#: A TPU TensorCore has one vector unit (VPU) of 8 sublanes × 128 lanes = 1,024 lanes
#: (jax-ml/scaling-book tpus.md), shared by all its MXUs: one VPU per TensorCore, not per MXU.
#: The default 16×16 array gets 16 lanes, 1/16 of its 256 cells: the proportion of one VPU to
#: one 128×128 MXU (16,384 cells). A v4, v5e or v5p TensorCore has four such MXUs (Cloud TPU
#: pages), so its VPU is 1/64 of its MXU cells: the toy's vector unit is 4× wider, relatively,
#: than a real one, which flatters the toy TPU on non-matmul work.
DEFAULT_VECTOR_LANES = 16


class TPUStyleMachine:
    """A systolic array for matmuls beside a narrow vector unit for everything else.

    The vector unit is modelled with the SIMD engine's cost model (one model, two machines): one
    core of ``vector_lanes`` lanes, ``vector_cycles_per_op`` cycles per vector instruction, and
    branches always computed on both sides under a mask (``skip_uniform_branches=False``: a VPU
    selects, it does not branch per lane group). Its memory keeps ``memory_in_flight``
    transactions in flight; the default, 32, equals the default GPU's (4 cores × 8 warps), so both
    machines have the same memory bandwidth and differences come from compute structure.

    Args:
        array: the matrix unit (default ``SystolicArray(16, 16, "ws")``, 256 cells).
        vector_lanes, vector_cycles_per_op: width and speed of the vector unit.
        memory_in_flight, memory_latency_cycles, transaction_bytes: its memory, as in
            :class:`~accelkit.simd.SIMDMachine`.
    """

    def __init__(self, array: SystolicArray | None = None, *,
                 vector_lanes: int = DEFAULT_VECTOR_LANES, vector_cycles_per_op: int = 1,
                 memory_in_flight: int = 32, memory_latency_cycles: int = 64,
                 transaction_bytes: int = 32):
        if array is None:
            array = SystolicArray(rows=16, cols=16, dataflow="ws")
        if not isinstance(array, SystolicArray):
            raise TypeError(f"array must be a SystolicArray, got {type(array).__name__}")
        self.array = array
        self.vector_lanes = check.positive_int("vector_lanes", vector_lanes, maximum=4096)
        self.vector_cycles_per_op = check.positive_int("vector_cycles_per_op",
                                                       vector_cycles_per_op, maximum=1024)
        self.vector = SIMDMachine(
            cores=1, lanes=self.vector_lanes,
            warps_per_core=check.positive_int("memory_in_flight", memory_in_flight, maximum=4096),
            memory_latency_cycles=memory_latency_cycles, transaction_bytes=transaction_bytes,
            cycles_per_instruction=self.vector_cycles_per_op, skip_uniform_branches=False)

    def __repr__(self) -> str:
        return (f"TPUStyleMachine(array={self.array!r}, vector_lanes={self.vector_lanes}, "
                f"vector_cycles_per_op={self.vector_cycles_per_op})")

    @property
    def mac_cells(self) -> int:
        """Area measure: systolic cells plus vector lanes."""
        return self.array.rows * self.array.cols + self.vector_lanes

    @property
    def peak_macs_per_cycle(self) -> int:
        return self.array.rows * self.array.cols

    def matmul(self, A: object, B: object) -> SystolicRun:
        return self.array.matmul(A, B)

    def estimate(self, *, M: int, N: int, K: int) -> SystolicRun:
        return self.array.estimate(M=M, N=N, K=K)

    def sparse_matmul(self, A: object, B: object) -> SystolicRun:
        """Dense: every cell multiplies whatever arrives, zero or not."""
        return self.array.matmul(A, B)

    def elementwise(self, x: object, op: str = "relu", y: object | None = None) -> SIMDRun:
        return self.vector.elementwise(x, op, y)

    def reduction(self, X: object, op: str = "sum") -> SIMDRun:
        return self.vector.reduction(X, op)

    def gather(self, table: object, indices: object) -> SIMDRun:
        return self.vector.gather(table, indices)

    def branchy(self, x: object, **kwargs) -> SIMDRun:
        return self.vector.branchy(x, **kwargs)


# -- operations ----------------------------------------------------------------------------------

Machine = SIMDMachine | TPUStyleMachine


def _whole(op: object, *names: str) -> None:
    """Check ``names`` of a just-built operation are whole numbers >= 1 and store them as ints."""
    for name in names:
        value = check.positive_int(f"{type(op).__name__}.{name}", getattr(op, name))
        object.__setattr__(op, name, value)


def _generated_size(op: object, *sizes: int) -> None:
    # Operations other than Matmul generate their operands, which the engines then refuse if one
    # holds more than MAX_ELEMENTS: check the same limit when the operation is built, so a huge
    # size is refused by name instead of failing in (or exhausting) numpy's allocator.
    largest = max(sizes)
    if largest > check.MAX_ELEMENTS:
        raise ValueError(f"{type(op).__name__} would generate an operand of {largest:,} elements, "
                         f"more than the {check.MAX_ELEMENTS:,} this toy engine holds in memory: "
                         f"{op}")


@dataclass(frozen=True)
class Matmul:
    """C = A @ B with A M×K, B K×N, ``count`` times (e.g. once per attention head).

    Runs through ``estimate()`` on both machines: the closed forms agree with the simulations."""
    M: int
    N: int
    K: int
    count: int = 1
    label: str = "matmul"
    kind = "matmul"

    def __post_init__(self) -> None:
        _whole(self, "M", "N", "K", "count")

    def run(self, machine: Machine):
        return machine.estimate(M=self.M, N=self.N, K=self.K)


@dataclass(frozen=True)
class Elementwise:
    """``op`` over ``n`` elements (binary ops get a second operand)."""
    n: int
    op: str = "gelu"
    count: int = 1
    label: str = "elementwise"
    seed: int = 0
    kind = "elementwise"

    def __post_init__(self) -> None:
        _whole(self, "n", "count")
        object.__setattr__(self, "op", check.choice("Elementwise.op", self.op,
                                                    ELEMENTWISE_INSTRUCTIONS))
        _generated_size(self, self.n)

    def run(self, machine: Machine):
        rng = np.random.default_rng(self.seed)
        x = rng.standard_normal(self.n)
        y = rng.standard_normal(self.n) if self.op in ("add", "mul") else None
        return machine.elementwise(x, self.op, y)


@dataclass(frozen=True)
class Reduction:
    """Row-wise ``op`` ("sum", "max", "softmax" normaliser) of a rows × cols matrix."""
    rows: int
    cols: int
    op: str = "softmax"
    count: int = 1
    label: str = "reduction"
    seed: int = 0
    kind = "reduction"

    def __post_init__(self) -> None:
        _whole(self, "rows", "cols", "count")
        object.__setattr__(self, "op", check.choice("Reduction.op", self.op, REDUCTIONS))
        _generated_size(self, self.rows * self.cols)

    def run(self, machine: Machine):
        X = np.random.default_rng(self.seed).standard_normal((self.rows, self.cols))
        return machine.reduction(X, self.op)


@dataclass(frozen=True)
class Gather:
    """Embedding lookup: ``lookups`` random rows (seeded) of a vocab × dim table."""
    vocab: int
    dim: int
    lookups: int
    count: int = 1
    label: str = "gather"
    seed: int = 0
    kind = "gather"

    def __post_init__(self) -> None:
        _whole(self, "vocab", "dim", "lookups", "count")
        _generated_size(self, self.vocab * self.dim, self.lookups)

    def run(self, machine: Machine):
        rng = np.random.default_rng(self.seed)
        table = rng.standard_normal((self.vocab, self.dim)).astype(np.float32)
        return machine.gather(table, rng.integers(0, self.vocab, self.lookups))


@dataclass(frozen=True)
class Branchy:
    """A data-dependent branch over ``n`` elements; ``taken_fraction`` of them (at random,
    seeded) take the then-side. 0.5 makes almost every warp diverge."""
    n: int
    taken_fraction: float = 0.5
    side_instructions: int = 64
    count: int = 1
    label: str = "branchy"
    seed: int = 0
    kind = "branchy"

    def __post_init__(self) -> None:
        _whole(self, "n", "count")
        check.real_in_range("Branchy.taken_fraction", self.taken_fraction, low=0.0, high=1.0)
        _generated_size(self, self.n)

    def run(self, machine: Machine):
        rng = np.random.default_rng(self.seed)
        magnitude = np.abs(rng.standard_normal(self.n)) + 0.5
        sign = np.where(rng.random(self.n) < self.taken_fraction, 1.0, -1.0)
        return machine.branchy(magnitude * sign, then_instructions=self.side_instructions,
                               else_instructions=self.side_instructions)


@dataclass(frozen=True)
class SparseMatmul:
    """A @ B with A mostly zero: ``density`` of its ``block``×``block`` blocks are nonzero
    (``block=1``: scattered zeros)."""
    M: int
    N: int
    K: int
    density: float = 0.1
    block: int = 32
    count: int = 1
    label: str = "sparse matmul"
    seed: int = 0
    kind = "sparse_matmul"

    def __post_init__(self) -> None:
        _whole(self, "M", "N", "K", "block", "count")
        check.real_in_range("SparseMatmul.density", self.density, low=0.0, high=1.0)
        _generated_size(self, self.M * self.K, self.K * self.N)

    def run(self, machine: Machine):
        rng = np.random.default_rng(self.seed)
        b = self.block
        keep = rng.random((-(-self.M // b), -(-self.K // b))) < self.density
        mask = np.kron(keep, np.ones((b, b), dtype=bool))[:self.M, :self.K]
        A = rng.standard_normal((self.M, self.K)) * mask
        B = rng.standard_normal((self.K, self.N))
        return machine.sparse_matmul(A, B)


Operation = Matmul | Elementwise | Reduction | Gather | Branchy | SparseMatmul
#: Every operation type a workload may hold (what :func:`compare` accepts).
OPERATIONS = (Matmul, Elementwise, Reduction, Gather, Branchy, SparseMatmul)


def _transformer_layer(tokens: int = 256, seq: int = 128, d: int = 512, heads: int = 8,
                       ffn: int = 2048) -> tuple[Operation, ...]:
    dh, seqs = d // heads, tokens // seq
    return (
        Reduction(tokens, d, "sum", count=2, label="layernorm 1 (mean, var)"),
        Matmul(tokens, 3 * d, d, label="QKV projection"),
        Matmul(seq, seq, dh, count=heads * seqs, label="attention scores"),
        Reduction(heads * tokens, seq, "softmax", label="softmax normaliser"),
        Matmul(seq, dh, seq, count=heads * seqs, label="attention × V"),
        Matmul(tokens, d, d, label="output projection"),
        Elementwise(tokens * d, "add", label="residual add"),
        Reduction(tokens, d, "sum", count=2, label="layernorm 2 (mean, var)"),
        Matmul(tokens, ffn, d, label="FFN up"),
        Elementwise(tokens * ffn, "gelu", label="GELU"),
        Matmul(tokens, d, ffn, label="FFN down"),
        Elementwise(tokens * d, "add", label="residual add"),
    )


def _recommender_step(batch: int = 256, tables: int = 8, vocab: int = 20_000, dim: int = 64,
                      hot: int = 20) -> tuple[Operation, ...]:
    # DLRM-shaped (Naumov et al. 2019, arXiv:1906.00091): multi-hot lookups pooled per table,
    # small bottom/top MLPs, pairwise dot-product interaction.
    feats = tables + 1
    return (
        Gather(vocab, dim, batch * hot, count=tables, label="embedding lookups"),
        Reduction(batch * tables * dim, hot, "sum", label="pool lookups"),
        Matmul(batch, dim, 16, label="bottom MLP 1"),
        Elementwise(batch * dim, "relu", label="ReLU"),
        Matmul(batch, dim, dim, label="bottom MLP 2"),
        Matmul(feats, feats, dim, count=batch, label="interaction dots"),
        Matmul(batch, 256, dim + feats * (feats - 1) // 2, label="top MLP 1"),
        Elementwise(batch * 256, "relu", label="ReLU"),
        Matmul(batch, 1, 256, label="top MLP 2"),
        Elementwise(batch, "sigmoid", label="sigmoid"),
    )


def _rnn_step(batch: int = 4, hidden: int = 512) -> tuple[Operation, ...]:
    gates = 4 * hidden
    return (
        Matmul(batch, gates, hidden, label="input × W"),
        Matmul(batch, gates, hidden, label="h × U"),
        Elementwise(batch * gates, "add", label="gate pre-activations"),
        Elementwise(batch * 3 * hidden, "sigmoid", label="i, f, o gates"),
        Elementwise(batch * hidden, "tanh", label="candidate"),
        Elementwise(batch * hidden, "mul", count=3, label="cell/hidden products"),
        Elementwise(batch * hidden, "add", label="cell update"),
        Elementwise(batch * hidden, "tanh", label="tanh(c)"),
    )


#: Preset workloads by name.
WORKLOADS: dict[str, tuple[Operation, ...]] = {
    "transformer_layer": _transformer_layer(),
    "recommender_step": _recommender_step(),
    "rnn_small_batch": _rnn_step(),
    "dense_matmul": (Matmul(2048, 2048, 2048, label="dense 2048³"),),
    "branchy_elementwise": (Branchy(1 << 16, 0.5, label="branchy (50% taken)"),),
    "block_sparse_matmul": (SparseMatmul(512, 512, 512, density=0.1, block=32,
                                         label="90% block-sparse"),),
}


def workload(name: str) -> tuple[Operation, ...]:
    """A preset by name (spaces, dashes and case ignored)."""
    if not isinstance(name, str):
        raise TypeError(f"workload must be a name (str), got {type(name).__name__} {name!r}")
    table = {check.normalise_name(k): v for k, v in WORKLOADS.items()}
    key = check.normalise_name(name)
    if key not in table:
        raise ValueError(f"unknown workload {name!r}; the presets are {sorted(WORKLOADS)}")
    return table[key]


_preset = workload

# -- comparison ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class OperationComparison:
    """One operation on both machines (cycles already multiplied by ``count``)."""
    label: str
    kind: str
    count: int
    gpu_cycles: int
    tpu_cycles: int
    gpu_utilization: float
    tpu_utilization: float
    tpu_unit: str          # "matrix" (systolic array) or "vector"
    gpu_cell_cycles: int
    tpu_cell_cycles: int
    macs: int

    @property
    def winner_per_area(self) -> str:
        return "GPU" if self.gpu_cell_cycles < self.tpu_cell_cycles else "TPU"

    @property
    def tpu_over_gpu_per_area(self) -> float:
        """TPU cell-cycles / GPU cell-cycles: above 1 the GPU does this work in less area×time."""
        return self.tpu_cell_cycles / self.gpu_cell_cycles


@dataclass(frozen=True)
class Comparison:
    """A workload on both machines: per operation and in total.

    ``*_mac_utilization`` is total MACs over (peak MACs per cycle × total cycles), the
    workload's MFU; ``*_outside_matrix_share`` is the share of cycles spent on non-matmul
    operations (Amdahl: a faster matrix unit cannot shrink that part)."""
    workload: str
    operations: tuple[OperationComparison, ...]
    gpu_mac_cells: int
    tpu_mac_cells: int
    gpu_cycles: int
    tpu_cycles: int
    gpu_cell_cycles: int
    tpu_cell_cycles: int
    gpu_mac_utilization: float
    tpu_mac_utilization: float
    gpu_outside_matrix_share: float
    tpu_outside_matrix_share: float

    @property
    def winner_per_area(self) -> str:
        return "GPU" if self.gpu_cell_cycles < self.tpu_cell_cycles else "TPU"

    def _rows(self) -> list[tuple[str, ...]]:
        rows: list[tuple[str, ...]] = []
        for op in self.operations:
            rows.append((f"{op.label}" + (f" ×{op.count}" if op.count > 1 else ""),
                         f"{op.gpu_cycles:,}", f"{op.gpu_utilization:.1%}",
                         f"{op.tpu_cycles:,}", f"{op.tpu_utilization:.1%}", op.tpu_unit,
                         f"{op.tpu_over_gpu_per_area:.2f}", op.winner_per_area))
        rows.append(("TOTAL", f"{self.gpu_cycles:,}", f"{self.gpu_mac_utilization:.1%}",
                     f"{self.tpu_cycles:,}", f"{self.tpu_mac_utilization:.1%}", "",
                     f"{self.tpu_cell_cycles / self.gpu_cell_cycles:.2f}", self.winner_per_area))
        return rows

    _HEAD = ("operation", "GPU cycles", "GPU util", "TPU cycles", "TPU util", "TPU unit",
             "TPU/GPU per cell", "wins per cell")

    def __repr__(self) -> str:
        rows = [self._HEAD, *self._rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self._HEAD))]
        lines = [f"Comparison({self.workload}: GPU {self.gpu_mac_cells} MAC cells, "
                 f"TPU {self.tpu_mac_cells} MAC cells)"]
        for i, r in enumerate(rows):
            lines.append("  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                                   for j, (c, w) in enumerate(zip(r, widths))))
            if i == 0 or i == len(rows) - 2:
                lines.append("  ".join("-" * w for w in widths))
        lines.append(f"time outside matrix work: GPU {self.gpu_outside_matrix_share:.1%}, "
                     f"TPU {self.tpu_outside_matrix_share:.1%}  (util: MACs over peak for "
                     f"matmuls, busy lanes for vector ops; TOTAL util is the workload's MFU)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return (f"<p>{html.escape(self.workload)}: GPU {self.gpu_mac_cells} MAC cells, TPU "
                f"{self.tpu_mac_cells} MAC cells; outside matrix work GPU "
                f"{self.gpu_outside_matrix_share:.1%}, TPU {self.tpu_outside_matrix_share:.1%}</p>"
                + _html.table(self._rows(), header=self._HEAD))


def compare(workload: str | tuple | list, gpu: SIMDMachine | None = None,
            tpu: TPUStyleMachine | None = None) -> Comparison:
    """Run a workload (a preset name or a sequence of operations) on both machines.

    Args:
        workload: a key of :data:`WORKLOADS`, or a list/tuple of operations.
        gpu: default ``SIMDMachine()`` (4 cores × 32 lanes = 128 MAC cells).
        tpu: default ``TPUStyleMachine()`` (16×16 array + 16 vector lanes = 272 MAC cells).
    Returns:
        A :class:`Comparison`.
    Raises:
        ValueError / TypeError naming the argument.
    """
    if isinstance(workload, str):
        name, ops = workload, tuple(_preset(workload))
    elif isinstance(workload, (list, tuple)):
        name, ops = "custom", tuple(workload)
        if not ops:
            raise ValueError("workload must hold at least one operation")
        for i, op in enumerate(ops):
            if not isinstance(op, OPERATIONS):
                raise TypeError(f"workload[{i}] must be an operation "
                                f"({', '.join(c.__name__ for c in OPERATIONS)}), "
                                f"got {type(op).__name__}")
    else:
        raise TypeError(f"workload must be a preset name or a list of operations, "
                        f"got {type(workload).__name__}")
    gpu = SIMDMachine() if gpu is None else gpu
    tpu = TPUStyleMachine() if tpu is None else tpu
    if not isinstance(gpu, SIMDMachine):
        raise TypeError(f"gpu must be a SIMDMachine, got {type(gpu).__name__}")
    if not isinstance(tpu, TPUStyleMachine):
        raise TypeError(f"tpu must be a TPUStyleMachine, got {type(tpu).__name__}")
    # Each operation checked its sizes when it was built (see its __post_init__).
    return compare_runs(name, ops, gpu, tpu, [op.run(gpu) for op in ops], [op.run(tpu) for op in ops])


def compare_runs(name: str, ops: tuple | list, gpu: SIMDMachine, tpu: TPUStyleMachine,
                 gpu_runs: list, tpu_runs: list) -> Comparison:
    """Assemble a :class:`Comparison` from runs already made (``gpu_runs[i]`` is ``ops[i]`` on
    ``gpu``). :func:`compare` calls this; a widget that memoises runs calls it too, so both
    build the table the same way."""
    if not (len(ops) == len(gpu_runs) == len(tpu_runs)):
        raise ValueError(f"ops, gpu_runs and tpu_runs must have the same length, got "
                         f"{len(ops)}, {len(gpu_runs)} and {len(tpu_runs)}")
    rows = []
    for op, g, t in zip(ops, gpu_runs, tpu_runs):
        c = op.count
        is_matrix = op.kind in ("matmul", "sparse_matmul")
        rows.append(OperationComparison(
            label=op.label, kind=op.kind, count=c, gpu_cycles=g.cycles * c, tpu_cycles=t.cycles * c,
            gpu_utilization=g.utilization, tpu_utilization=t.utilization,
            tpu_unit="matrix" if is_matrix else "vector",
            gpu_cell_cycles=g.cycles * c * gpu.mac_cells, tpu_cell_cycles=t.cycles * c * tpu.mac_cells,
            macs=g.macs * c))
    gcy = sum(r.gpu_cycles for r in rows)
    tcy = sum(r.tpu_cycles for r in rows)
    macs = sum(r.macs for r in rows)
    g_out = sum(r.gpu_cycles for r in rows if r.tpu_unit == "vector")
    t_out = sum(r.tpu_cycles for r in rows if r.tpu_unit == "vector")
    return Comparison(
        workload=name, operations=tuple(rows), gpu_mac_cells=gpu.mac_cells,
        tpu_mac_cells=tpu.mac_cells, gpu_cycles=gcy, tpu_cycles=tcy,
        gpu_cell_cycles=gcy * gpu.mac_cells, tpu_cell_cycles=tcy * tpu.mac_cells,
        gpu_mac_utilization=macs / (gpu.peak_macs_per_cycle * gcy),
        tpu_mac_utilization=macs / (tpu.peak_macs_per_cycle * tcy),
        gpu_outside_matrix_share=g_out / gcy, tpu_outside_matrix_share=t_out / tcy)
