"""Training a recommender (DLRM): one step on the roofline, and where its embedding lookups run.

A recommender's parameters are almost all embedding rows; a step gathers a few rows per sample
and runs small MLPs over them. :func:`train_step` prices one optimizer step of ``batch``
samples on ``n_chips`` chips:

* every operation of the step (forward and backward, :meth:`accelkit.models.Model.operations`)
  on the roofline (:func:`accelkit.roofline.times_from_counts`, compute and memory overlapped), the step's
  FLOPs and bytes shared perfectly by the chips;
* gathers (embedding lookups) move bytes without FLOPs, so they run at memory bandwidth;
* mixed precision: the MLPs run in bf16 on the matrix units whatever the tables' format (TPUs
  have no fp32 matrix peak), so chips are compared on the same arithmetic;
* the tables must fit in the chips' pooled HBM: weights plus ``optimizer_bytes_per_param``
  (row-wise optimizer state such as Adagrad's is about one more fp32 value per parameter: 4).

**Where the lookups run.** On a chip with SparseCores (``Chip.has_sparsecores``: TPU v4, v5p,
v6e, TPU7x) the gathers run on them; on one without (TPU v5e, every GPU) on the TensorCore's
vector unit or the SMs. Both are charged at full HBM bandwidth, which flatters scattered rows
of a few hundred bytes most on the chips without SparseCores: Jouppi et al. (ISCA 2023,
arXiv:2304.01433) report that SparseCores speed up embedding-heavy models 5-7x on TPU v4, but
no source gives a lookup rate per unit we could apply, so the difference is named
(:attr:`RecommenderStep.gather_unit`), not priced.

    >>> from accelkit import recommender
    >>> step = recommender.train_step("dlrm", "TPU v6e", 8, batch=65_536, dtype="fp32")
    >>> step.gather_unit, step.fits, f"{step.memory_bytes / 1e9:.0f} GB"
    ('SparseCores (2 per chip)', True, '182 GB')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accelkit import _validate, chips, dtypes, models, roofline

#: Row-wise optimizer state per parameter (Adagrad-style, one fp32 value): the default.
OPTIMIZER_BYTES_PER_PARAM = 4.0
#: The matrix units' arithmetic: bf16 on every chip (TPUs have no fp32 matrix peak).
COMPUTE_DTYPE: dtypes.DType = "bf16"


@dataclass(frozen=True)
class RecommenderStep:
    """One optimizer step of a recommender on ``n_chips`` chips, and whether its tables fit."""

    model: str
    chip: str
    n_chips: int
    batch: int                     # samples per step
    dtype: str                     # the embedding tables' format
    seconds: float                 # one step: the sum of its operations' roofline times
    compute_seconds: float         # the operations' compute times, summed
    memory_seconds: float          # the operations' memory times, summed
    gather_seconds: float          # the lookups' share of ``seconds`` (memory-bound)
    flops: float                   # the step's FLOPs
    memory_bytes: float            # tables + optimizer state, over all chips
    hbm_bytes: float               # n_chips x HBM
    fits: bool
    gather_unit: str               # where the lookups run (SparseCores, vector unit, SMs)
    sparsecores_per_chip: int | None

    @property
    def gather_share(self) -> float:
        """The lookups' share of the step's time."""
        return self.gather_seconds / self.seconds

    @property
    def utilization(self) -> float:
        """Achieved FLOP/s over the chips' bf16 peak."""
        peak = self.n_chips * chips.get(self.chip).peak_flops(COMPUTE_DTYPE)
        return self.flops / (self.seconds * peak)

    @property
    def bound(self) -> str:
        """"compute" or "memory": which of the summed times is the larger."""
        return "compute" if self.compute_seconds >= self.memory_seconds else "memory"


def gather_unit(chip: str | chips.Chip) -> str:
    """Where ``chip`` runs embedding lookups: its SparseCores, or the unit that stands in."""
    the_chip = chips.get(chip)
    if the_chip.has_sparsecores:
        count = the_chip.sparsecores_per_chip
        return "SparseCores" + ("" if count is None else f" ({count} per chip)")
    if the_chip.kind == "tpu":
        return "TensorCore vector unit (no SparseCores)"
    return "SMs (no SparseCores)"


def table_bytes(model: str | models.Model, dtype: dtypes.DType = "fp32",
                optimizer_bytes_per_param: float = OPTIMIZER_BYTES_PER_PARAM) -> float:
    """Bytes the whole model needs in HBM to train: every parameter in ``dtype`` plus its
    optimizer state."""
    m = models.get(model)
    extra = _validate.real_in_range("optimizer_bytes_per_param", optimizer_bytes_per_param,
                                    low=0.0, high=64.0)
    return m.params * (dtypes.nbytes(dtypes.check(dtype, "dtype")) + extra)


def train_step(model: str | models.Model, chip: str | chips.Chip, n_chips: int, *,
               batch: int = 65_536, dtype: dtypes.DType = "fp32",
               optimizer_bytes_per_param: float = OPTIMIZER_BYTES_PER_PARAM) -> RecommenderStep:
    """One training step of ``batch`` samples on ``n_chips`` chips (see the module docstring).

    Args:
        model: a catalog model (a recommender such as ``"dlrm"``) or Model.
        chip: a chip name or Chip.
        n_chips: chips sharing the step, 1 to 10**6.
        batch: samples per step, 1 to 10**7.
        dtype: the embedding tables' format.
        optimizer_bytes_per_param: optimizer state per parameter, in [0, 64].
    Returns:
        A :class:`RecommenderStep`; ``fits`` is False (with the memory it needs) when the
        tables and optimizer state exceed the chips' pooled HBM.
    Raises:
        TypeError, ValueError: a bad argument, named; MissingFigureError for a chip without
            HBM figures.
    """
    m = models.get(model)
    the_chip = chips.get(chip)
    n = _validate.positive_int("n_chips", n_chips, maximum=10**6)
    b = _validate.positive_int("batch", batch, maximum=10**7)
    need = table_bytes(m, dtype, optimizer_bytes_per_param)
    ops = m.operations(batch=b, phase="train", dtype=dtype)
    peak = n * the_chip.peak_flops(COMPUTE_DTYPE)
    bandwidth = n * float(the_chip.require("hbm_bytes_per_second"))
    per_op = roofline.times_from_counts([op.flops for op in ops], [op.bytes for op in ops],
                                        peak, bandwidth)
    memory = np.asarray(per_op.memory_seconds)
    gather = float(sum(t for op, t in zip(ops, memory) if op.kind == "gather"))
    hbm = n * float(the_chip.require("hbm_bytes"))
    return RecommenderStep(
        model=m.name, chip=the_chip.name, n_chips=n, batch=b, dtype=str(dtype),
        seconds=float(np.sum(per_op.seconds)),
        compute_seconds=float(np.sum(per_op.compute_seconds)),
        memory_seconds=float(np.sum(memory)), gather_seconds=gather,
        flops=float(sum(op.flops for op in ops)), memory_bytes=need, hbm_bytes=hbm,
        fits=need <= hbm, gather_unit=gather_unit(the_chip),
        sparsecores_per_chip=the_chip.sparsecores_per_chip)


__all__ = ["COMPUTE_DTYPE", "OPTIMIZER_BYTES_PER_PARAM", "RecommenderStep", "gather_unit",
           "table_bytes", "train_step"]
