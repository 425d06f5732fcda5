"""Training frameworks as named choices: how a published run's software ran its kernels and
collectives. The framework is a property of the run (what its paper or configuration states),
never a knob turned to match a measurement.

    >>> from accelkit import frameworks
    >>> fw = frameworks.get("megatron-2021")
    >>> fw.attention, fw.sequence_parallel, fw.tp_overlap, fw.grad_bytes
    ('materialized', False, False, 2.0)
    >>> frameworks.get("nemo-2024").tp_overlap, frameworks.get("maxtext").tp_overlap
    (True, True)
    >>> frameworks.get("nemo-2024").gemm_overlap("proj_fprop")
    proj_fprop: pipeline x4 (24 SM, margin 24)

Each preset names, per choice:

* ``attention``: ``"fused"`` (FlashAttention-style: the s×s scores never reach HBM; the backward
  pass recomputes them inside the kernel) or ``"materialized"`` (scores written to HBM, then the
  softmax, dropout and the value product read them: Megatron-LM before FlashAttention).
* ``sequence_parallel``: the norms, dropouts and residual adds outside the tensor-parallel
  matmuls are split over the TP group (Korthikanti et al. 2022); without it every TP rank runs
  them on the whole micro-batch.
* ``tp_overlap``: tensor-parallel collectives run behind the layer's matmuls (Transformer
  Engine's userbuffers in NeMo; XLA's collective matmul / async collective fusion on TPU) or on
  the critical path.
* ``tp_overlap_scope`` (with ``tp_overlap``, :data:`TP_OVERLAP_SCOPES`): ``"all"`` (every
  tensor-parallel collective runs behind a matmul) or ``"all-gathers"`` (XLA told to decompose
  all-gather+einsum pairs, ``--xla_tpu_decompose_all_gather_einsum``, but not
  einsum+reduce-scatter pairs: the backward pass's reduce-scatters still hide, behind the
  weight-gradient matmuls that do not need them, but each forward reduce-scatter, half of a
  forward all-reduce-equivalent and again under full recomputation, waits for its matmul and
  holds up the next: on the critical path).
* ``dp_overlap`` / ``fsdp_overlap``: data-parallel gradient reduction behind the backward pass;
  FSDP gathers and scatters prefetched behind compute.
* ``param_sync_overlap``: with a sharded optimizer, the all-gather of the updated weights (half
  of the data-parallel traffic) runs behind the next step's first forward pass instead of
  after the reduce-scatter.
* ``grad_bytes``: bytes per parameter of the gradient buffer that is accumulated and reduced
  (4: fp32 main gradients, as Megatron-core with bf16 and Llama 3 do; 2: bf16, or fp16 as
  Megatron-LM's 2021 fp16 runs all-reduced them).
* ``param_bytes``: bytes per parameter of the weights a sharded optimizer all-gathers after its
  step (2: bf16; 1: fp8 parameters, as NVIDIA's MLPerf v4.0 GPT-3 runs keep them), so the
  data-parallel traffic is a reduce-scatter at ``grad_bytes`` and an all-gather at
  ``param_bytes``.
* ``distributed_optimizer``: optimizer state (fp32 master weights, Adam m and v: 12 bytes per
  parameter) sharded over data parallelism (ZeRO-1) or replicated on every data-parallel rank.
* ``cp_overlap``: context parallelism's K/V traffic passed around the ring behind the block of
  attention in hand (ring attention, Liu et al. 2023: only the part longer than the attention
  is exposed) or all-gathered before the attention (Llama 3: on the critical path).
* ``grad_reduce`` (:data:`GRAD_REDUCES`): ``"step"`` (each chip accumulates its stage's whole
  gradient over the step's micro-batches and the data-parallel reduction runs once, after the
  last) or ``"microbatch"`` (FSDP sharding the gradients, as Llama 3 states, without
  ``no_sync``: each micro-batch's gradients are reduce-scattered as its backward pass makes
  them, into an accumulator sharded over the data-parallel ranks, so the gradient memory is
  divided by them and the reduce-scatter traffic is the micro-batches' count times a step's).
* ``dropout``: dropout on the hidden states (and, with materialized attention, on the scores).
* ``balanced_end_stages``: the first and last pipeline stages hold one layer fewer, to make room
  for the embedding and the LM head (Llama 3); otherwise the last stage runs the LM head and
  the cross-entropy on top of its share of the layers.
* ``te_overlap`` (with ``tp_overlap``, GPUs only): how Transformer Engine's userbuffers overlap
  each tensor-parallel GEMM with its collective, as the run's configuration sets it, one
  :class:`GemmOverlap` per GEMM (:data:`TE_GEMMS`; empty: the library's generic overlap, the
  collectives behind the layer's compute at Calculon's processor share). Transformer Engine
  v1.6 (``transformer_engine/pytorch/csrc/comm_gemm_overlap.h`` and ``module/base.py``
  ``initialize_ub``) runs a ``ring_exchange`` GEMM as ``tp`` pieces along the tokens, the
  point-to-point sends on the copy engine (``use_ce = 1``: no SMs); a ``pipeline`` GEMM as
  ``num_splits`` pieces along its output features, each piece's reduce-scatter launched on
  ``num_sm`` SMs behind the next piece and the last piece's reduce-scatter after it (exposed);
  a ``bulk`` GEMM whole, its collective beside it on ``num_sm`` SMs. With ``set_sm_margin``
  the GEMM is launched on the SMs the collective leaves (``_math_sms = multiProcessorCount -
  num_comm_sm``); without it, on all of them, beside the collective's kernels.

``"default"`` is the library's step model before frameworks were named (fused attention,
sequence parallelism, TP collectives exposed, DP and FSDP overlapped, bf16 gradients, sharded
optimizer), used when a caller names none. ``sources[choice]`` says where each preset's
choice comes from; a choice no source states is marked ASSUMPTION there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from accelkit import _validate

__all__ = ["ATTENTION", "CHOICES", "Framework", "GRAD_REDUCES", "GemmOverlap", "TE_GEMMS",
           "TE_METHODS",
           "TE_GEMM_STREAMS", "TE_REDUCE_SCATTERS",
           "TP_OVERLAP_SCOPES", "get", "names"]

#: Attention implementations.
ATTENTION = ("fused", "materialized")
#: How much of the tensor-parallel traffic ``tp_overlap`` hides (module doc).
TP_OVERLAP_SCOPES = ("all", "all-gathers")
#: When the data-parallel gradient reduction runs (module doc, ``grad_reduce``).
GRAD_REDUCES = ("step", "microbatch")
#: The choices a framework makes, in :class:`Framework` order.
CHOICES = ("attention", "sequence_parallel", "tp_overlap", "tp_overlap_scope", "dp_overlap",
           "fsdp_overlap",
           "param_sync_overlap", "grad_bytes", "param_bytes", "distributed_optimizer", "dropout",
           "balanced_end_stages", "te_overlap", "grad_reduce", "cp_overlap")
#: Transformer Engine's overlap methods (TE v1.6 module/base.py initialize_ub).
TE_METHODS = ("ring_exchange", "pipeline", "bulk")
#: The tensor-parallel GEMMs Transformer Engine overlaps, by its names: the QKV projection
#: (``qkv``), the attention output projection (``proj``), the MLP's first (``fc1``) and second
#: (``fc2``) matmuls; ``fprop`` the forward GEMM, ``dgrad`` the input gradient's, ``wgrad`` the
#: weight gradient's (TE v1.6 module/base.py initialize_ub).
TE_GEMMS = ("qkv_fprop", "proj_fprop", "fc1_fprop", "fc2_fprop", "qkv_dgrad", "proj_dgrad",
            "fc1_dgrad", "fc2_dgrad", "qkv_wgrad", "fc1_wgrad")
#: A group size, or an array of them (one per layout of a search).
_Count = TypeVar("_Count")
#: Compute streams Transformer Engine runs a split GEMM's pieces on (``_NUM_MAX_UB_STREAMS``,
#: "Max concurrent GEMM streams", TE v1.6 module/base.py): up to this many pieces run at once.
TE_GEMM_STREAMS = 3
#: The GEMMs whose collective is a reduce-scatter (the rest all-gather), TE v1.6's
#: layers_reduce_scatter_overlap.
TE_REDUCE_SCATTERS = ("proj_fprop", "fc2_fprop", "qkv_wgrad", "fc1_wgrad")


@dataclass(frozen=True, repr=False)
class GemmOverlap:
    """How Transformer Engine overlaps one TP GEMM with its collective (module doc,
    ``te_overlap``): ``method`` (:data:`TE_METHODS`), ``num_splits`` (the pieces of a
    ``pipeline`` GEMM; a ``ring_exchange`` GEMM runs as ``tp`` pieces, a ``bulk`` one whole),
    ``num_sm`` (SMs the collective's kernels take: ring exchange sends on the copy engine, so
    its ``num_sm`` only narrows the GEMM where ``set_sm_margin``) and ``set_sm_margin``."""

    gemm: str
    method: str
    num_sm: int
    set_sm_margin: bool
    num_splits: int = 1

    def __post_init__(self) -> None:
        _validate.choice("gemm", self.gemm, TE_GEMMS)
        _validate.choice("method", self.method, TE_METHODS)
        _validate.positive_int("num_sm", self.num_sm, maximum=1024)
        _validate.positive_int("num_splits", self.num_splits, maximum=1024)
        if not isinstance(self.set_sm_margin, bool):
            raise TypeError(f"set_sm_margin must be True or False, got {self.set_sm_margin!r}")
        if self.method == "pipeline" and self.gemm not in TE_REDUCE_SCATTERS:
            raise ValueError(f"method 'pipeline' overlaps a reduce-scatter {TE_REDUCE_SCATTERS}"
                             f"; {self.gemm} overlaps an all-gather (TE refuses it too)")

    def pieces(self, tp: _Count) -> _Count | int:
        """How many pieces the GEMM runs as on a ``tp``-way group (``tp`` a count, or an array
        of counts, one per layout: the answer likewise where it depends on ``tp``)."""
        if self.method == "ring_exchange":
            return tp
        return self.num_splits if self.method == "pipeline" else 1

    def gemm_sms(self, sms: int) -> int:
        """SMs the GEMM is launched on, of a chip's ``sms``."""
        return sms - self.num_sm if self.set_sm_margin else sms

    def __repr__(self) -> str:
        margin = f", margin {self.num_sm}" if self.set_sm_margin else ""
        splits = f" x{self.num_splits}" if self.method == "pipeline" else ""
        return f"{self.gemm}: {self.method}{splits} ({self.num_sm} SM{margin})"


@dataclass(frozen=True)
class Framework:
    """A training framework's choices (module doc) and where each comes from."""

    name: str
    attention: str = "fused"
    sequence_parallel: bool = True
    tp_overlap: bool = False
    tp_overlap_scope: str = "all"
    dp_overlap: bool = True
    fsdp_overlap: bool = True
    param_sync_overlap: bool = False
    grad_bytes: float = 2.0
    param_bytes: float = 2.0
    distributed_optimizer: bool = True
    dropout: bool = False
    balanced_end_stages: bool = False
    te_overlap: tuple[GemmOverlap, ...] = ()
    grad_reduce: str = "step"
    cp_overlap: bool = True
    description: str = ""
    sources: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        _validate.choice("attention", self.attention, ATTENTION)
        _validate.choice("tp_overlap_scope", self.tp_overlap_scope, TP_OVERLAP_SCOPES)
        _validate.choice("grad_reduce", self.grad_reduce, GRAD_REDUCES)
        for name in ("sequence_parallel", "tp_overlap", "dp_overlap", "fsdp_overlap",
                     "param_sync_overlap", "distributed_optimizer", "dropout",
                     "balanced_end_stages", "cp_overlap"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.grad_bytes not in (2.0, 4.0):
            raise ValueError(f"grad_bytes must be 2 (bf16) or 4 (fp32), got {self.grad_bytes!r}")
        if self.param_bytes not in (1.0, 2.0):
            raise ValueError(f"param_bytes must be 1 (fp8) or 2 (bf16), got {self.param_bytes!r}")
        if not isinstance(self.te_overlap, tuple) or not all(
                isinstance(g, GemmOverlap) for g in self.te_overlap):
            raise TypeError("te_overlap must be a tuple of GemmOverlap")
        if self.te_overlap and not self.tp_overlap:
            raise ValueError("te_overlap needs tp_overlap=True (it says how the TP collectives "
                             "are overlapped)")
        if len({g.gemm for g in self.te_overlap}) != len(self.te_overlap):
            raise ValueError("te_overlap names a GEMM twice")

    def gemm_overlap(self, gemm: str) -> GemmOverlap | None:
        """The :class:`GemmOverlap` of ``gemm`` (one of :data:`TE_GEMMS`), None if not named."""
        return next((g for g in self.te_overlap if g.gemm == gemm), None)

    def source(self, choice: str) -> str:
        """Where this preset's ``choice`` (one of :data:`CHOICES`) comes from."""
        key = _validate.choice("choice", choice, CHOICES)
        return dict(self.sources).get(key, "the library's default step model (no source: "
                                           "the choice a caller gets when naming no framework)")


_MEGATRON = "Narayanan et al., SC'21 (arXiv:2104.04473)"
_NEMO = "mlcommons/training_results_v4.0:NVIDIA/benchmarks/gpt3/implementations/nemo@6fe95437"
_ADAM = f"{_NEMO} conf/optim/distributed_fused_adam.yaml"
_TE = "NVIDIA/TransformerEngine@9e4091e7 (v1.6rc1, the submission's Dockerfile TE_REVISION)"
#: The submission's conf/tp_overlap/h100tp4mbs{1,2}.yaml (the same figures in both; custom.yaml
#: picks h100tp<TP>mbs<MICRO_BATCH_SIZE>: mbs2 for config_DGXH100_64x8x128x4x8_mbs2.sh, mbs1
#: for config_DGXH100_1344x8x6x4x6_mbs1_cg.sh), its environment defaults taken for fc2_fprop.
_NEMO_TE = (
    GemmOverlap("qkv_fprop", "ring_exchange", num_sm=1, set_sm_margin=False),
    GemmOverlap("fc1_fprop", "ring_exchange", num_sm=1, set_sm_margin=False),
    GemmOverlap("proj_dgrad", "ring_exchange", num_sm=1, set_sm_margin=False),
    GemmOverlap("fc2_dgrad", "ring_exchange", num_sm=1, set_sm_margin=False),
    GemmOverlap("proj_fprop", "pipeline", num_sm=24, set_sm_margin=True, num_splits=4),
    GemmOverlap("fc2_fprop", "ring_exchange", num_sm=1, set_sm_margin=True),
    GemmOverlap("qkv_dgrad", "bulk", num_sm=4, set_sm_margin=False),
    GemmOverlap("qkv_wgrad", "bulk", num_sm=4, set_sm_margin=False),
    GemmOverlap("fc1_dgrad", "bulk", num_sm=4, set_sm_margin=False),
    GemmOverlap("fc1_wgrad", "bulk", num_sm=4, set_sm_margin=False))
_MAXTEXT = ("mlcommons/training_results_v4.0:Google/benchmarks/gpt3/implementations/maxtext@6fe95437"
            " and AI-Hypercomputer/maxtext MaxText/configs/base.yml")
_MAXTEXT_V5P = ("AI-Hypercomputer/maxtext MaxText/configs/v5p/32b.sh@0d9779a5 and "
                "128b.sh@07775101")
_SC21 = ("NVIDIA/Megatron-LM@de7dc40f (2021-08-10, 'scripts for sc21') examples/sc21/"
         "run_table_1.sh and CONFIG.sh")
_MEGATRON_2021 = (
    ("attention", f"{_MEGATRON}: no fused attention kernel in 2021 (FlashAttention is "
                  "2022); scores go through Megatron's fused scale-mask-softmax kernel"),
    ("sequence_parallel", "sequence parallelism is Korthikanti et al. 2022 "
                          "(arXiv:2205.05198), after these runs"),
    ("tp_overlap", f"{_MEGATRON} section 3.3: the TP all-reduces sit between the layers"),
    ("dp_overlap", f"{_SC21}: --DDP-impl local for the 39B-1T rows; megatron/training.py "
                   "calls allreduce_gradients() after the backward pass (Megatron's local DDP)"),
    ("fsdp_overlap", "no FSDP in these runs"),
    ("grad_bytes", f"{_SC21}: --fp16 without --accumulate-allreduce-grads-in-fp32 (which "
                   "megatron/arguments.py forces only for bf16), so the gradients are "
                   "accumulated and all-reduced in fp16"),
    ("distributed_optimizer", "the distributed optimizer came to Megatron-LM in 2022; "
                              "in 2021 each DP rank keeps the whole fp32 optimizer state"),
    ("dropout", f"{_MEGATRON}: GPT models with hidden and attention dropout 0.1 "
                "(Megatron-LM's GPT defaults)"))
#: What XLA does for every MaxText run (both MaxText presets): GSPMD's sharding of the
#: non-matmul work and its async collectives.
_XLA_SP = (("sequence_parallel", "XLA shards the activations outside the matmuls over the "
                                 "tensor axis (GSPMD); ASSUMPTION that it does so fully"),)
_XLA_ASYNC = (
    ("param_sync_overlap", "as dp_overlap: async all-gathers (--xla_enable_async_all_gather=true)"),
    ("dp_overlap", "XLA's async collectives run the gradient reduction behind the backward pass "
                   "(the scaling book's training chapter)"),
    ("fsdp_overlap", "as dp_overlap: FSDP gathers are async collectives"))
#: Where MaxText keeps its optimizer state: sharded as the parameters are, which no logical
#: axis rule maps to the ``data`` mesh axis, so over fsdp (accelkit's ``fsdp``) and replicated
#: over data parallelism (``dp``).
_MAXTEXT_OPT = ("AI-Hypercomputer/maxtext MaxText/configs/base.yml@000e9355 logical_axis_rules: "
                "the parameter axes 'embed', 'mlp', 'heads', 'vocab' map to fsdp, fsdp_transpose, "
                "sequence, tensor and autoregressive, none to 'data'; the optimizer state is "
                "sharded as the parameters, so over fsdp and replicated over data parallelism")
_LLAMA3 = "Llama Team 2024, 'The Llama 3 Herd of Models' (arXiv:2407.21783) section 3.3"

_PRESETS: dict[str, Framework] = {f.name: f for f in (
    Framework("default", description="the library's step model when no framework is named"),
    Framework(
        "megatron-2021", attention="materialized", sequence_parallel=False, tp_overlap=False,
        dp_overlap=False, grad_bytes=2.0, distributed_optimizer=False, dropout=True,
        description="Megatron-LM as run for SC'21 Table 1 (A100, 2021), local DDP",
        sources=_MEGATRON_2021),
    Framework(
        "megatron-2021-torch-ddp", attention="materialized", sequence_parallel=False,
        tp_overlap=False, dp_overlap=True, grad_bytes=2.0, distributed_optimizer=False,
        dropout=True,
        description="Megatron-LM as run for SC'21 Table 1 (A100, 2021), PyTorch DDP",
        sources=tuple((k, v) for k, v in _MEGATRON_2021 if k != "dp_overlap") + (
            ("dp_overlap", f"{_SC21}: --DDP-impl torch for the 1.7B-18B rows; "
                           "megatron/schedules.py runs all but the last micro-batch under "
                           "no_sync, so PyTorch DDP's bucketed all-reduce overlaps the last "
                           "micro-batch's backward pass"),)),
    Framework(
        "nemo-2024", attention="fused", sequence_parallel=True, tp_overlap=True,
        dp_overlap=True, param_sync_overlap=True, grad_bytes=2.0, param_bytes=1.0,
        distributed_optimizer=True, dropout=False, te_overlap=_NEMO_TE,
        description="NeMo / Megatron-core with Transformer Engine, as NVIDIA ran MLPerf v4.0",
        sources=(
            ("attention", f"{_NEMO}: fused (flash) attention through Transformer Engine "
                          "(the submission's layout record: fused attention)"),
            ("sequence_parallel", f"{_NEMO}: Megatron-core sequence parallelism with TP "
                                  "(ASSUMPTION: not read from the config)"),
            ("tp_overlap", f"{_NEMO} conf/tp_overlap/h100tp4mbs2.yaml: Transformer Engine "
                           "userbuffer TP communication overlap (all-gathers and "
                           "reduce-scatters pipelined with the GEMMs)"),
            ("dp_overlap", f"{_ADAM}: overlap_grad_sync True"),
            ("param_sync_overlap", f"{_ADAM}: overlap_param_sync True"),
            ("grad_bytes", f"{_ADAM}: grad_sync_dtype bf16"),
            ("param_bytes", f"{_NEMO} config_common.sh: FP8_PARAMS=True (conf/custom.yaml "
                            "fp8_params: the weights are kept, and all-gathered by the "
                            "distributed optimizer, in fp8)"),
            ("distributed_optimizer", f"{_ADAM}: distributed_fused_adam"),
            ("dropout", "ASSUMPTION: the MLPerf GPT-3 reference trains without dropout"),
            ("te_overlap", f"{_NEMO} conf/tp_overlap/h100tp4mbs1.yaml and h100tp4mbs2.yaml "
                           "(identical): ring_exchange for qkv_fprop, fc1_fprop, proj_dgrad, "
                           "fc2_dgrad (num_sm 1, no margin) and fc2_fprop (num_sm 1, "
                           "set_sm_margin 1: the FC2_FPROP_METHOD/FC2_FPROP_SM defaults; "
                           "config_DGXH100_1344x8x6x4x6_mbs1_cg.sh sets pipeline on 4 SMs "
                           "there instead, not modelled: one preset per framework), pipeline "
                           "for proj_fprop (num_splits 4, num_sm 24, set_sm_margin 1), bulk for "
                           "qkv/fc1 dgrad and wgrad (num_sm 4, no margin); what each means: "
                           f"{_TE} transformer_engine/pytorch/csrc/comm_gemm_overlap.h "
                           "(UbufCommOverlap, UbufP2PCommOverlap) and module/base.py "
                           "initialize_ub. Left out: cga_size, atomic_gemm, fp8_buf (no "
                           "figure to price them with)"))),
    Framework(
        "maxtext", attention="fused", sequence_parallel=True, tp_overlap=True,
        tp_overlap_scope="all-gathers", dp_overlap=True,
        param_sync_overlap=True, grad_bytes=2.0, distributed_optimizer=False, dropout=False,
        description="MaxText on TPU (JAX/XLA), as Google ran MLPerf Training v4.0",
        sources=(
            ("attention", f"{_MAXTEXT}: v5p-1024.sh and v5p-12288.sh pass attention=flash"),
            *_XLA_SP,
            ("tp_overlap", f"{_MAXTEXT}: v5p-*.sh LIBTPU_INIT_ARGS "
                           "--xla_tpu_enable_async_collective_fusion=true "
                           "--xla_tpu_decompose_all_gather_einsum=true "
                           "--xla_tpu_overlap_compute_collective_tc=true"),
            ("tp_overlap_scope", f"{_MAXTEXT}: v5p-*.sh set --xla_tpu_decompose_all_gather_einsum"
                                 "=true and nothing for --xla_tpu_decompose_einsum_reduce_scatter, "
                                 "which collective-matmul set-ups pass explicitly beside it (e.g. "
                                 "torch_xla's ENABLE_COLLECTIVE_MATMUL_IN_MP sets both); "
                                 "ASSUMPTION: off by default, so only the all-gather+einsum pairs "
                                 "are decomposed"),
            *_XLA_ASYNC,
            ("grad_bytes", "ASSUMPTION: bf16 gradients (MaxText's default weight dtype float32 "
                           "would make them 4; not read per run)"),
            ("distributed_optimizer", _MAXTEXT_OPT),
            ("dropout", f"{_MAXTEXT}: dropout_rate 0"))),
    Framework(
        "maxtext-readme", attention="fused", sequence_parallel=True, tp_overlap=False,
        dp_overlap=True, param_sync_overlap=True, grad_bytes=2.0, distributed_optimizer=False,
        dropout=False,
        description="MaxText on TPU v5p as its README's performance table ran (configs/v5p/*.sh)",
        sources=(
            ("attention", f"{_MAXTEXT_V5P}: attention='flash'"),
            *_XLA_SP,
            ("tp_overlap", f"{_MAXTEXT_V5P}: LIBTPU_INIT_ARGS turn on async collectives and "
                           "collective fusion but neither --xla_tpu_decompose_all_gather_einsum "
                           "nor --xla_tpu_decompose_einsum_reduce_scatter; ASSUMPTION: without "
                           "the decomposition a tensor-parallel collective waits for the matmul "
                           "it feeds or follows (async collectives overlap independent work, and "
                           "one micro-batch's layer has none)"),
            *_XLA_ASYNC,
            ("grad_bytes", "ASSUMPTION: bf16 gradients (not read per run)"),
            ("distributed_optimizer", _MAXTEXT_OPT),
            ("dropout", "AI-Hypercomputer/maxtext MaxText/configs/base.yml: dropout_rate 0"))),
    Framework(
        "meta-llama3", attention="fused", sequence_parallel=True, tp_overlap=False,
        dp_overlap=True, grad_bytes=4.0, distributed_optimizer=True, dropout=False,
        balanced_end_stages=True, grad_reduce="microbatch", cp_overlap=False,
        description="Meta's 4D-parallel training of Llama 3 405B",
        sources=(
            ("attention", f"{_LLAMA3}: FlashAttention-style fused kernels (ASSUMPTION: the "
                          "paper does not name the kernel)"),
            ("sequence_parallel", f"{_LLAMA3}: TP with sequence parallelism"),
            ("tp_overlap", "ASSUMPTION: the paper does not say the TP collectives are overlapped"),
            ("dp_overlap", f"{_LLAMA3}: FSDP/DP communication overlapped with compute"),
            ("grad_bytes", f"{_LLAMA3}: 'FP32 gradient accumulation ... and reduce-scatter "
                           "gradients in FP32 across data parallel workers'"),
            ("distributed_optimizer", f"{_LLAMA3}: optimizer state sharded (FSDP, ZeRO-1 style)"),
            ("dropout", "no dropout in Llama 3 pre-training (ASSUMPTION: not stated)"),
            ("balanced_end_stages", f"{_LLAMA3}.2: 'we reduce one Transformer layer each from "
                                    "the first and the last stages'"),
            ("grad_reduce", f"{_LLAMA3}.2: 'Our use of FSDP for Llama 3 shards optimizer "
                            "states and gradients', with 'FP32 gradient accumulation during "
                            "backward computation over multiple micro-batches' and gradients "
                            "'reduce-scatter[ed] in FP32 across data parallel workers in FSDP': "
                            "sharded gradients accumulated over micro-batches means each "
                            "micro-batch's gradients are reduce-scattered into the shard "
                            "(PyTorch FSDP without no_sync; the paper names neither its "
                            "accumulation code nor no_sync: the reading is ours)"),
            ("cp_overlap", f"{_LLAMA3}.2: 'our CP implementation adopts an all-gather based "
                           "method where we first all-gather the key (K) and value (V) tensors"
                           "' ... 'the all-gather communication latency is exposed in the "
                           "critical path'"))),
    Framework(
        "pax-2022", attention="materialized", sequence_parallel=True, tp_overlap=False,
        dp_overlap=True, grad_bytes=4.0, distributed_optimizer=True, dropout=False,
        description="PaLM's JAX/T5X-Pathways training on TPU v4 (2022)",
        sources=(
            ("attention", "ASSUMPTION: no flash-attention kernel on TPU in 2022, so XLA writes "
                          "the scores to HBM"),
            ("sequence_parallel", "ASSUMPTION: GSPMD shards the non-matmul work over the model "
                                  "axis"),
            ("tp_overlap", "ASSUMPTION: Chowdhery et al. 2022 do not say the 12-way model-"
                           "parallel collectives overlap the matmuls; the library's default "
                           "(exposed) stands"),
            ("grad_bytes", "ASSUMPTION: fp32 parameters and gradients (PaLM's optimizer state "
                           "is fp32; Chowdhery et al. 2022 section 5)"),
            ("dropout", "Chowdhery et al. 2022 (arXiv:2204.02311) section 5: no dropout"))),
)}


def names() -> tuple[str, ...]:
    """Every preset's name."""
    return tuple(_PRESETS)


def get(framework: str | Framework | None) -> Framework:
    """A preset by name (a Framework is returned as is; None gives ``"default"``).

    Raises:
        TypeError: not a str, Framework or None.
        ValueError: no such preset (the message lists them).
    """
    if framework is None:
        return _PRESETS["default"]
    if isinstance(framework, Framework):
        return framework
    if not isinstance(framework, str):
        raise TypeError(f"framework must be a preset name or a Framework, got "
                        f"{type(framework).__name__} {framework!r}")
    return _PRESETS[_validate.choice("framework", framework, names())]
