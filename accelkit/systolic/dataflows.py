"""The three dataflows of a systolic array: which operand stays in the cells, which stream through.

====  ===========================  ================================  =================
name  stationary                   mapped on (rows × cols)           streamed
====  ===========================  ================================  =================
os    the output C (M×N)           M × N                             K (A and B both)
ws    the weights B (K×N)          K × N                             M (rows of A)
is    the input A (M×K)            K × M                             N (columns of B)
====  ===========================  ================================  =================

Each dataflow is one frozen record in :data:`DATAFLOW_SPECS` (:class:`DataflowSpec`); the timing
model, the simulator and the widgets read it rather than switching on the name.

    >>> DATAFLOW_SPECS["ws"].geometry(M=64, N=32, K=16)   # (on rows, on columns, streamed)
    (16, 32, 64)
    >>> MAPPING["is"], DATAFLOW_NAMES["os"]
    (('K', 'M', 'N'), 'output-stationary')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from accelkit import _validate as check

Dataflow = Literal["os", "ws", "is"]

#: The problem dimensions each GEMM operand spans: A is M×K, B is K×N, C is M×N.
OPERAND_DIMS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {"A": ("M", "K"), "B": ("K", "N"), "C": ("M", "N")})


@dataclass(frozen=True)
class DataflowSpec:
    """Everything the timing model, the simulator and the widgets need to know about one dataflow.

    Attributes:
        name, long_name: ``"ws"`` / ``"weight-stationary"`` and so on.
        stationary: the operand that stays in the cells: ``"A"``, ``"B"`` or ``"C"``.
        on_rows, on_cols, streamed: the problem dimension (``"M"``, ``"N"`` or ``"K"``) mapped on
            the array's rows, on its columns, and streamed through it (the stream never folds).
        load_phase: whether a stationary input tile is shifted into the cells (``rows`` cycles)
            before the stream starts; False for ``os``, whose stationary operand is the output.
        transposed: the array computes Cᵀ = Bᵀ·Aᵀ (``is``): B streams from the left in place of
            A, A's tile stays in place of B's, and the outputs leave transposed.
        story: what moves and what stays, in words, for a widget.
    """

    name: str
    long_name: str
    stationary: str
    on_rows: str
    on_cols: str
    streamed: str
    load_phase: bool
    transposed: bool
    story: str

    def geometry(self, M: int, N: int, K: int) -> tuple[int, int, int]:
        """(problem size on rows, problem size on columns, streamed length T)."""
        sizes = {"M": M, "N": N, "K": K}
        return sizes[self.on_rows], sizes[self.on_cols], sizes[self.streamed]

    def fold_words(self, used_rows: int, used_cols: int, T: int) -> dict[str, int]:
        """Elements each operand moves between the buffers and the array in one fold that maps
        ``used_rows × used_cols`` cells and streams ``T``: an operand's tile spans two of the
        three dimensions, each as long as its share of the fold."""
        extent = {self.on_rows: used_rows, self.on_cols: used_cols, self.streamed: T}
        return {op: extent[d1] * extent[d2] for op, (d1, d2) in OPERAND_DIMS.items()}

    @property
    def left_operand(self) -> str:
        """The operand that enters from the array's left edge (``A``, or ``B`` when transposed)."""
        return "B" if self.transposed else "A"

    @property
    def other_operand(self) -> str:
        """The operand that enters from the top (``os``) or is held stationary (``ws``/``is``)."""
        return "A" if self.transposed else "B"


DATAFLOW_SPECS: Mapping[str, DataflowSpec] = MappingProxyType({
    "os": DataflowSpec(
        "os", "output-stationary", stationary="C", on_rows="M", on_cols="N", streamed="K",
        load_phase=False, transposed=False,
        story="each cell owns one output C[m, n]; A streams in from the left, B from the top; "
              "the sums stay in the cells."),
    "ws": DataflowSpec(
        "ws", "weight-stationary", stationary="B", on_rows="K", on_cols="N", streamed="M",
        load_phase=True, transposed=False,
        story="B (the weights) is shifted into the cells and stays; rows of A stream in from the "
              "left; partial sums flow down and leave at the bottom."),
    "is": DataflowSpec(
        "is", "input-stationary", stationary="A", on_rows="K", on_cols="M", streamed="N",
        load_phase=True, transposed=True,
        story="A (the input) is shifted into the cells and stays; columns of B stream in from "
              "the left; partial sums flow down and leave at the bottom."),
})
DATAFLOWS: tuple[str, ...] = tuple(DATAFLOW_SPECS)
#: What each dataflow maps onto the array's rows and columns, and what it streams through
#: (derived from :data:`DATAFLOW_SPECS`).
MAPPING: Mapping[str, tuple[str, str, str]] = MappingProxyType(
    {name: (d.on_rows, d.on_cols, d.streamed) for name, d in DATAFLOW_SPECS.items()})
DATAFLOW_NAMES: Mapping[str, str] = MappingProxyType(
    {name: d.long_name for name, d in DATAFLOW_SPECS.items()})


def dataflow_spec(dataflow: str) -> DataflowSpec:
    """The :class:`DataflowSpec` for a dataflow name (any case)."""
    return DATAFLOW_SPECS[check.choice("dataflow", dataflow, DATAFLOWS)]


__all__ = ["DATAFLOWS", "DATAFLOW_NAMES", "DATAFLOW_SPECS", "Dataflow", "DataflowSpec", "MAPPING",
           "OPERAND_DIMS", "dataflow_spec"]
