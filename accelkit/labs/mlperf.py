"""Lessons 05 and 07's lab: a published GPU-versus-TPU gap, walked from peak to measured.

:func:`explain_gap` takes two :class:`Submission` s to the same benchmark, a GPU system's and a
TPU system's, and walks the ratio of their per-chip throughputs from the chips' peaks to what
they measured. The submissions are evidence and live outside the package: the repository's
``validation/mlperf.json`` holds MLPerf Training v4.0's GPT-3 175B submissions as published
(the system JSON: nodes, accelerators per node; the launch script: precision, layout; the
result logs: global batch, run clock, tokens trained; each figure with its file and commit),
and ``validation/mlperf.py`` reads them into Submissions::

    import sys; sys.path.insert(0, "..")   # from lessons/: the repository's validation/ folder
    from accelkit.labs import mlperf
    from validation.mlperf import submission
    gap = mlperf.explain_gap(submission("nvidia-eos-n64"), submission("google-tpu-v5p-1024"))
    gap.gpu.n_chips, gap.tpu.n_chips   # (512, 512): "tpu-v5p-1024" counts TensorCores

The naming trap in one line (128 hosts of 4 chips, an 8x8x8 torus):

    >>> from accelkit.labs import mlperf
    >>> mlperf.chips_in_system("tpu-v5p-1024", "TPU v5p", 128, 4, "8x8x8")
    512

**The chain** (every step is a ratio GPU / TPU of tokens per second per chip):

1. ``peak_bf16``: the chips' bf16 dense peaks.
2. ``precision``: each side's actual training precision (fp8 on H100, int8 AQT on v5p) over its
   bf16 peak. A result at fp8 or int8 compared against a bf16 peak looks like MFU above 1.
3. ``recompute``: model FLOPs over executed FLOPs (recomputed forward passes cost time, not MFU).
4. ``pipeline_bubble``: compute over compute + the 1F1B bubble.
5. ``exposed_communication``: the part of the step that is communication the model cannot hide.
6. ``kernel_efficiency``: datasheet against achievable: every kernel as it runs
   (:mod:`accelkit.kernels`: each matmul's shape per tensor-parallel shard under the chip's
   measured matmul ceiling, the non-matmul work at measured HBM bandwidth) and the
   collectives at measured bandwidth, inside ``train_step`` (``compute_efficiency=
   "predicted"``). The factor is that step's MFU over the datasheet step's MFU, so it also
   carries the communication that longer compute hides. Pass ``kernel_efficiency="peak"``
   for datasheet kernels (factor 1.0), or ``(gpu, tpu)`` fractions of the datasheet peak.
7. ``evaluation``: the training share of the run clock. MLPerf's clock runs the evaluations
   too: every ``eval_interval_sequences`` trained, a forward pass over the validation set
   (``eval_sequences``) in batches of ``eval_batch_sequences``, each a pipeline of
   micro-batches of ``eval_microbatch_sequences`` (the submission's published configuration,
   :func:`evaluation_seconds`: the forward kernels, :func:`accelkit.kernels.microbatch` with
   ``forward_only``, and the forward collectives at the training step's costs). The factor
   is training time over training plus evaluation time, with the kernels of step 6.

Each side runs with its submission's framework (:mod:`accelkit.frameworks`: NeMo overlaps the
tensor-parallel collectives with Transformer Engine's userbuffers, MaxText with XLA's
collective matmul), recorded with its source in ``validation/mlperf.json``.

Steps 3-5 come from :func:`accelkit.parallel.train_step` at each side's *published* layout (or
:func:`accelkit.parallel.best_layouts` where a submission publishes none). The product of all
seven is the predicted per-chip throughput ratio on the run clock. The **measured** ratio is tokens trained over the MLPerf
run clock (``run_start`` to ``run_stop``, the clock time-to-train is scored on), per chip, with
the chip count from the system JSON: ``measured_system_ratio / chip_count_ratio``. What the chain
does not explain is the ``residual_ratio`` = measured / predicted, reported as it is, not tuned.

**Simplifications, said where they bite.** The run clock includes the first step's warm-up,
compilation and any stall between blocks (the prediction does not: it prices training and the
evaluations only); an evaluation's collectives are the training step's scaled to the
evaluation micro-batch's bytes (latency ignored). The int8/fp8 matmuls run at the
precision's achievable ceiling (fp8 measured on H100; int8 on v5p a named assumption) with
the activations' casts priced (not the weights'); gradients are reduced in bf16 and NeMo's
weights all-gathered in fp8 (its FP8_PARAMS, :mod:`accelkit.frameworks`).
MaxText's ``save_dot_except_logits`` keeps every weight matmul's output and recomputes the rest,
which no accelkit policy is exactly: "selective" (used) recomputes no matmul, as it does not;
"full" (the other mapping, recorded in ``validation/mlperf.json`` and shown beside the
validation table's row, never used) recomputes them all. Neither prices the norms, GELU and
tensor-parallel all-gathers its backward pass redoes. A TPU submission's groups sit on its
published ICI slice (:meth:`Submission.job_chip`: the 6,144-chip system is one 8x16x48 slice,
whose tensor, FSDP and data axes are one ring each, as JAX's mesh_utils lays them out).
:attr:`Submission.steady_tokens_per_second_per_chip` reads the logs' steady blocks beside the
run clock: what the clock holds beyond them (warm-up, stalls) is measured, not predicted.

**The naming trap.** Cloud TPU v5p names count TensorCores (``v5p-32`` is 32 TensorCores, 16
chips: cloud.google.com/tpu/docs/v5p-training), so "tpu-v5p-1024" is 512 chips.
:func:`chips_in_system` takes the count from nodes x accelerators per node and refuses a system
whose name, topology and host count disagree.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from accelkit import (_validate, chips, dtypes, frameworks, kernels, models, parallel,
                      topology)

#: Steps of the chain, in order.
STEPS = ("peak_bf16", "precision", "recompute", "pipeline_bubble", "exposed_communication",
         "kernel_efficiency", "evaluation")
KERNEL_NOTES = {
    "predicted": "kernels as they run (accelkit.kernels: matmul shapes under each chip's "
                 "measured matmul ceiling, the non-matmul kernels at measured HBM bandwidth) "
                 "and collectives at measured bandwidth, in train_step: its MFU over the "
                 "datasheet step's MFU",
    "peak": "kernels at peak on both sides (kernel_efficiency='peak')",
    "given": "fraction of peak the kernels reach, as given by the caller, applied in train_step",
}


@dataclass(frozen=True)
class Run:
    """One result log: the MLPerf clock and the tokens trained."""

    log: str
    run_start_ms: int
    run_stop_ms: int
    train_tokens: int
    source: str

    @property
    def seconds(self) -> float:
        return (self.run_stop_ms - self.run_start_ms) / 1000.0

    @property
    def tokens_per_second(self) -> float:
        return self.train_tokens / self.seconds


@dataclass(frozen=True)
class Submission:
    """One MLPerf system on one benchmark, as published (see :func:`submission`)."""

    key: str
    benchmark: str
    model: str                     # the benchmark's model, a catalog name
    submitter: str
    system_name: str
    chip: str                      # catalog name
    n_chips: int                   # from nodes × accelerators per node, checked (chips_in_system)
    name_count: int | None         # the number in the system name (TensorCores on v5p)
    number_of_nodes: int
    accelerators_per_node: int
    precision: dtypes.DType
    layout: parallel.Layout
    layout_published: bool
    global_batch_sequences: int
    seq_len: int
    runs: tuple[Run, ...]
    sources: tuple[tuple[str, str], ...]
    # the framework the submission ran (accelkit.frameworks: "nemo-2024", "maxtext"); its
    # source is in ``sources`` under "framework"
    framework: str = "default"
    # the evaluations on the run clock (0: none priced): every eval_interval_sequences
    # trained, eval_sequences forward in batches of eval_batch_sequences, as micro-batches of
    # eval_microbatch_sequences; sources under "evaluation"
    eval_interval_sequences: int = 0
    eval_sequences: int = 0
    eval_batch_sequences: int = 0
    eval_microbatch_sequences: int = 0
    # a TPU system's published ICI slice (None: the compact shape accelkit.topology picks);
    # its source is in ``sources`` under "topology"
    topology: tuple[int, ...] | None = None
    # the result log's median block (its source under "log_timing"): seconds from block_start
    # to block_stop, and the median evaluation where the log times it apart (NeMo; 0.0 where the
    # block holds it, as MaxText's does); 0.0 where none was read
    block_seconds: float = 0.0
    logged_eval_seconds: float = 0.0

    @property
    def eval_steps(self) -> int:
        """Evaluation batches per evaluation (the last one padded to a whole batch)."""
        if not self.eval_sequences:
            return 0
        return -(-self.eval_sequences // self.eval_batch_sequences)

    @property
    def steps_per_evaluation(self) -> float:
        """Training steps between two evaluations."""
        return self.eval_interval_sequences / self.global_batch_sequences

    @property
    def batch_tokens(self) -> int:
        return self.global_batch_sequences * self.seq_len

    @property
    def time_to_train_minutes(self) -> float:
        """Mean of the runs' MLPerf clocks, minutes."""
        return sum(r.seconds for r in self.runs) / len(self.runs) / 60.0

    @property
    def measured_tokens_per_second(self) -> float:
        """Whole system: mean over the runs of tokens trained / run clock."""
        return sum(r.tokens_per_second for r in self.runs) / len(self.runs)

    @property
    def measured_tokens_per_second_per_chip(self) -> float:
        return self.measured_tokens_per_second / self.n_chips

    @property
    def steady_tokens_per_second_per_chip(self) -> float:
        """Tokens per second per chip between two evaluations in the steady state: one
        evaluation interval's tokens over the log's median block (plus its median evaluation
        where the log times that apart); 0.0 where no block time was read. Against
        :attr:`measured_tokens_per_second_per_chip` (the run clock) it shows what the run
        clock holds beyond the blocks: the first block's warm-up and any stalls."""
        if not self.block_seconds or not self.eval_interval_sequences:
            return 0.0
        tokens = self.eval_interval_sequences * self.seq_len
        return tokens / (self.block_seconds + self.logged_eval_seconds) / self.n_chips

    @property
    def run_clock_overhead(self) -> float:
        """The steady rate over the run-clock rate (1.0: the clock holds nothing beyond its
        blocks; 1.09: 9% more time than steady blocks would take); 0.0 where no block time
        was read."""
        steady = self.steady_tokens_per_second_per_chip
        return steady / self.measured_tokens_per_second_per_chip if steady else 0.0

    def job_chip(self) -> chips.Chip:
        """The chip as this job bought it: on a TPU with a published topology, the catalog
        chip with its largest slice set to that topology (:func:`accelkit.topology.on_slice`),
        so its groups sit on that slice's axes; otherwise the catalog chip."""
        chip = chips.get(self.chip)
        if chip.kind == "tpu" and self.topology is not None:
            return topology.on_slice(chip, self.topology)
        return chip

    def source(self, figure: str) -> str:
        for name, text in self.sources:
            if name == figure:
                return text
        raise KeyError(f"figure must be one of {[n for n, _ in self.sources]}, got {figure!r}")


@dataclass(frozen=True)
class Step:
    """One link of the chain: each side's factor and their ratio (GPU / TPU)."""

    name: str
    gpu_factor: float
    tpu_factor: float
    ratio: float
    explanation: str


@dataclass(frozen=True)
class GapChain:
    """Peak ratio → predicted per-chip throughput ratio → measured ratio, and the residual."""

    benchmark: str
    model: str
    gpu: Submission
    tpu: Submission
    steps: tuple[Step, ...]
    predicted_ratio: float                  # product of the steps
    gpu_predicted_tokens_per_second_per_chip: float
    tpu_predicted_tokens_per_second_per_chip: float
    gpu_measured_tokens_per_second_per_chip: float
    tpu_measured_tokens_per_second_per_chip: float
    measured_system_ratio: float            # whole systems, tokens/s
    chip_count_ratio: float                 # gpu chips / tpu chips
    measured_ratio: float                   # per chip = system ratio / chip-count ratio
    naive_measured_ratio: float             # per chip if the TPU name's count were taken as chips
    residual_ratio: float                   # measured / predicted: what the chain leaves unexplained
    gpu_residual: float                     # measured / predicted throughput, GPU side
    tpu_residual: float                     # measured / predicted throughput, TPU side
    gpu_measured_mfu: float                 # at the training precision's peak
    tpu_measured_mfu: float
    gpu_step: parallel.TrainStep            # the training step: kernels at kernel_efficiency
    tpu_step: parallel.TrainStep
    gpu_peak_step: parallel.TrainStep       # kernels at peak (steps 3-5 come from these)
    tpu_peak_step: parallel.TrainStep

    def cumulative(self) -> tuple[tuple[str, float], ...]:
        """(step, ratio after it) from the bf16 peak ratio to the predicted ratio."""
        out, acc = [], 1.0
        for s in self.steps:
            acc *= s.ratio
            out.append((s.name, acc))
        return tuple(out)


def name_count(system_name: str) -> int | None:
    """The trailing number of a system name ("tpu-v5p-1024" → 1024), None if it has none."""
    if not isinstance(system_name, str):
        raise TypeError(f"system_name must be a string, got {type(system_name).__name__}")
    m = re.search(r"-(\d+)$", system_name)
    return int(m.group(1)) if m else None


def chips_in_system(system_name: str, chip: str | chips.Chip, number_of_nodes: int,
                    accelerators_per_node: int, topology: str | None = None) -> int:
    """Chips in an MLPerf system: nodes × accelerators per node, cross-checked.

    On a TPU whose Cloud names count TensorCores (v2-v4, v5p: ``tensorcores_per_chip`` 2), the
    name's number must equal chips × TensorCores per chip; elsewhere it must equal the chips.
    A topology such as "8x8x8" must multiply to the chips.

    Raises:
        ValueError: the name, topology and host count disagree (the naming trap, or a typo).
    """
    the_chip = chips.get(chip)
    nodes = _validate.positive_int("number_of_nodes", number_of_nodes, maximum=10**6)
    per = _validate.positive_int("accelerators_per_node", accelerators_per_node, maximum=64)
    n = nodes * per
    count = name_count(system_name)
    if the_chip.kind == "tpu" and count is not None:
        cores = the_chip.tensorcores_per_chip or 1
        if count != n * cores:
            raise ValueError(
                f"system_name {system_name!r}: its {count} should be {n} chips x {cores} "
                f"TensorCores = {n * cores} ({nodes} nodes x {per} chips per node)")
    if topology:
        dims = [int(x) for x in topology.lower().split("x")]
        if math.prod(dims) != n:
            raise ValueError(f"topology {topology!r} has {math.prod(dims)} chips, but "
                             f"{nodes} nodes x {per} per node = {n}")
    return n


def _efficiency(x: object, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 < float(x) <= 1:
        raise ValueError(f"{name} must be a number in (0, 1], got {x!r}")
    return float(x)


def evaluation_seconds(submission: Submission, step: parallel.TrainStep,
                       kernel_efficiency: float | str = parallel.PREDICTED) -> float:
    """Seconds of one evaluation of ``submission`` on the run clock: ``eval_steps`` batches,
    each a pipeline of forward-only micro-batches (fill included: (m + (pp - 1)/v) of them),
    a micro-batch the forward kernels on this chip's stage (:func:`accelkit.kernels.microbatch`
    with ``forward_only``; at ``kernel_efficiency`` x the datasheet peak when that is a
    fraction) with the forward collectives of ``step`` (the training step at the same
    layout): two tensor-parallel all-reduce-equivalents per layer, one FSDP gather, one send
    per virtual stage, each scaled to the evaluation micro-batch's bytes and overlapped as the
    framework overlaps them in training. 0.0 where the submission records no evaluation."""
    if not isinstance(submission, Submission):
        raise TypeError(f"submission must be an accelkit.labs.mlperf.Submission, got "
                        f"{type(submission).__name__}")
    if not isinstance(step, parallel.TrainStep):
        raise TypeError(f"step must be an accelkit.parallel.TrainStep, got {type(step).__name__}")
    if not submission.eval_steps:
        return 0.0
    s, lay = submission, submission.layout
    model = models.get(s.model)
    if not isinstance(model, models.Transformer):
        raise ValueError(f"{s.key}: {model.name} is not a transformer")
    chip = chips.get(s.chip)
    fw = frameworks.get(s.framework)
    mb = s.eval_microbatch_sequences * s.seq_len
    fwd = kernels.microbatch(model, chip, tp=lay.tp, ep=lay.ep, microbatch_tokens=mb,
                             seq_len=s.seq_len, dtype=s.precision, framework=fw,
                             forward_only=True)
    if isinstance(kernel_efficiency, str):
        kernel = fwd.seconds
    else:
        kernel = fwd.model_flops / (chip.peak_flops(s.precision)
                                    * _efficiency(kernel_efficiency, "kernel_efficiency"))
    v = lay.interleave
    stage_layers = math.ceil(model.layers / (lay.pp * v)) * v
    compute = kernel * stage_layers / model.layers  # this chip's stage
    scale = mb / step.microbatch_tokens
    each = {c.name: c.seconds_each for c in step.collectives}
    tp = 2.0 * stage_layers * each.get("tp", 0.0) * scale
    gather = each.get("fsdp_gather", 0.0)
    sends = v * each.get("pp", 0.0) * scale
    with_fsdp = max(compute, gather) if fw.fsdp_overlap else compute + gather
    t_mb = (max(with_fsdp, tp) if fw.tp_overlap else with_fsdp + tp) + sends
    replicas = lay.dp * lay.fsdp * lay.ep * lay.cp
    m = s.eval_batch_sequences / (replicas * s.eval_microbatch_sequences)
    return s.eval_steps * (m + (lay.pp - 1) / v) * t_mb


def _training_share(s: Submission, step: parallel.TrainStep, eff: float | str) -> float:
    """Training time over the run clock's training and evaluation time (1.0 with none)."""
    if not s.eval_steps:
        return 1.0
    train = s.steps_per_evaluation * step.seconds
    return train / (train + evaluation_seconds(s, step, eff))


def explain_gap(gpu_submission: Submission, tpu_submission: Submission, *,
                kernel_efficiency: str | tuple[float, float] = "predicted") -> GapChain:
    """Walk the chain of ratios from the peak ratio to the measured per-chip ratio.

    Args:
        gpu_submission, tpu_submission: a GPU system's and a TPU system's :class:`Submission`
            to the same benchmark (``validation/mlperf.py`` reads the published ones).
        kernel_efficiency: "predicted" (accelkit.mfu, the default), "peak" (kernels at peak),
            or a (gpu, tpu) tuple of fractions of peak, each in (0, 1] (see module doc).
    Returns:
        A :class:`GapChain`; ``residual_ratio`` is what the chain does not explain.
    Raises:
        TypeError: a submission that is not a :class:`Submission`, or a bad kernel_efficiency.
        ValueError: submissions to different benchmarks, the wrong kind of chip on a side, a
            published layout that does not fit the model's memory accounting.
    """
    for name, sub in (("gpu_submission", gpu_submission), ("tpu_submission", tpu_submission)):
        if not isinstance(sub, Submission):
            raise TypeError(f"{name} must be an accelkit.labs.mlperf.Submission, got "
                            f"{type(sub).__name__}")
    g, t = gpu_submission, tpu_submission
    if (g.benchmark, g.model, g.seq_len) != (t.benchmark, t.model, t.seq_len):
        raise ValueError(f"gpu_submission {g.key!r} ({g.benchmark}: {g.model}, {g.seq_len} "
                         f"tokens) and tpu_submission {t.key!r} ({t.benchmark}: {t.model}, "
                         f"{t.seq_len} tokens) must be on the same benchmark")
    gc, tc = chips.get(g.chip), chips.get(t.chip)
    if gc.kind != "gpu":
        raise ValueError(f"gpu_submission {g.key!r} runs on {gc.name}, not a GPU")
    if tc.kind != "tpu":
        raise ValueError(f"tpu_submission {t.key!r} runs on {tc.name}, not a TPU")
    bench_name = g.benchmark
    kg: float | str
    kt: float | str
    if isinstance(kernel_efficiency, str):
        mode = _validate.choice("kernel_efficiency", kernel_efficiency, ("predicted", "peak"))
        kg = kt = parallel.PREDICTED if mode == "predicted" else 1.0
        kernel_note = KERNEL_NOTES[mode]
    elif isinstance(kernel_efficiency, tuple) and len(kernel_efficiency) == 2:
        kg = _efficiency(kernel_efficiency[0], "kernel_efficiency[0] (gpu)")
        kt = _efficiency(kernel_efficiency[1], "kernel_efficiency[1] (tpu)")
        kernel_note = KERNEL_NOTES["given"]
    else:
        raise TypeError("kernel_efficiency must be 'predicted', 'peak' or a (gpu, tpu) tuple of "
                        f"two fractions, got {kernel_efficiency!r}")
    model = models.get(g.model)

    def predict(s: Submission, eff: float | str) -> parallel.TrainStep:
        return parallel.train_step(model, s.job_chip(), s.layout, s.batch_tokens,
                                   seq_len=s.seq_len,
                                   dtype=s.precision, compute_efficiency=eff,
                                   framework=s.framework)

    gs, ts = predict(g, 1.0), predict(t, 1.0)
    gk, tk = predict(g, kg), predict(t, kt)
    for s, st in ((g, gs), (t, ts), (g, gk), (t, tk)):
        if not st.fits:
            raise ValueError(f"{s.key}: the published layout does not fit in the model's memory "
                             f"accounting ({st.memory_bytes_per_chip / 2**30:.1f} GiB per chip)")

    def factors(s: Submission, st: parallel.TrainStep) -> dict[str, float]:
        chip = chips.get(s.chip)
        ideal = st.model_flops_per_step / (s.n_chips * chip.peak_flops(s.precision))
        return {"peak_bf16": chip.peak_flops("bf16"),
                "precision": chip.peak_flops(s.precision) / chip.peak_flops("bf16"),
                "recompute": ideal / st.compute_seconds,
                "pipeline_bubble": st.compute_seconds / (st.compute_seconds + st.bubble_seconds),
                "exposed_communication": (st.compute_seconds + st.bubble_seconds) / st.seconds}

    fg, ft = factors(g, gs), factors(t, ts)
    fg["kernel_efficiency"], ft["kernel_efficiency"] = gk.mfu / gs.mfu, tk.mfu / ts.mfu
    fg["evaluation"], ft["evaluation"] = _training_share(g, gk, kg), _training_share(t, tk, kt)
    why = {
        "peak_bf16": "bf16 dense peak per chip (FLOP/s)",
        "precision": f"training precision's peak over bf16: {g.precision} on {gc.name}, "
                     f"{t.precision} on {tc.name}",
        "recompute": f"model FLOPs over executed FLOPs: recompute {g.layout.recompute!r} vs "
                     f"{t.layout.recompute!r}",
        "pipeline_bubble": f"1F1B bubble: pp {g.layout.pp} (interleave {g.layout.interleave}) vs "
                           f"pp {t.layout.pp}",
        "exposed_communication": "step time not hidden behind compute (train_step's overlap "
                                 f"rules for each side's framework: {g.framework} vs "
                                 f"{t.framework}), and the optimizer step",
        "kernel_efficiency": kernel_note,
        "evaluation": "training time over the run clock's training and evaluation time: "
                      f"{g.eval_steps} evaluation batch(es) of {g.eval_batch_sequences:,} "
                      f"sequences every {g.steps_per_evaluation:g} steps vs "
                      f"{t.eval_steps} of {t.eval_batch_sequences:,} every "
                      f"{t.steps_per_evaluation:g} (forward-only kernels, accelkit.kernels)",
    }
    steps = tuple(Step(n, fg[n], ft[n], fg[n] / ft[n], why[n]) for n in STEPS)
    predicted = math.prod(s.ratio for s in steps)
    # on the run clock: training tokens over training and evaluation time
    pg = gk.tokens_per_second_per_chip * fg["evaluation"]
    pt = tk.tokens_per_second_per_chip * ft["evaluation"]
    mg, mt = g.measured_tokens_per_second_per_chip, t.measured_tokens_per_second_per_chip
    system_ratio = g.measured_tokens_per_second / t.measured_tokens_per_second
    chip_ratio = g.n_chips / t.n_chips
    measured = system_ratio / chip_ratio
    naive_tpu_chips = t.name_count or t.n_chips
    naive = system_ratio / (g.n_chips / naive_tpu_chips)
    flops_token = gs.model_flops_per_step / g.batch_tokens
    return GapChain(
        benchmark=bench_name, model=model.name, gpu=g, tpu=t, steps=steps,
        predicted_ratio=predicted,
        gpu_predicted_tokens_per_second_per_chip=pg, tpu_predicted_tokens_per_second_per_chip=pt,
        gpu_measured_tokens_per_second_per_chip=mg, tpu_measured_tokens_per_second_per_chip=mt,
        measured_system_ratio=system_ratio, chip_count_ratio=chip_ratio, measured_ratio=measured,
        naive_measured_ratio=naive, residual_ratio=measured / predicted,
        gpu_residual=mg / pg, tpu_residual=mt / pt,
        gpu_measured_mfu=mg * flops_token / gc.peak_flops(g.precision),
        tpu_measured_mfu=mt * flops_token / tc.peak_flops(t.precision),
        gpu_step=gk, tpu_step=tk, gpu_peak_step=gs, tpu_peak_step=ts)


__all__ = ["GapChain", "KERNEL_NOTES", "Run", "STEPS", "Step", "Submission", "chips_in_system",
           "evaluation_seconds", "explain_gap", "name_count"]
