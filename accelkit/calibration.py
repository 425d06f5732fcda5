"""Kernel- and collective-level calibration figures: what the GPUs' library kernels measurably
sustain at the shapes and sizes a transformer's step runs them, beside the best-case ceilings
the catalog holds (issue 21: calibrate on kernels, validate on runs).

Each figure comes from a kernel or collective measurement with its source, or from a validated
model's system file named as such; none is read off an end-to-end run. A chip with no figure
here runs at the catalog's achievable ceilings unchanged (factor 1.0: no measurement).

    >>> from accelkit import calibration, chips
    >>> a100 = chips.get("A100")
    >>> calibration.matmul_sustained(a100), calibration.vector_efficiency(a100, "normalization")
    (0.894, 0.45)
    >>> from accelkit import models
    >>> ops = models.get("llama-2-7b").operations(batch=1, phase="decode", context_tokens=0)
    >>> {op.name: calibration.bandwidth_share(a100, op) for op in ops
    ...  if calibration.vector_kind(op)}
    {'attn_norm': 0.45, 'mlp_norm': 0.45, 'mlp_silu_gate': 0.6, 'final_norm': 0.45}
    >>> round(float(calibration.all_reduce_busbw(a100, 8, 2**26)) / 1e9)  # 64 MiB, 8 A100
    174
    >>> h100 = chips.get("H100")
    >>> [round(float(calibration.all_reduce_seconds(h100, 2, b)) * 1e6) for b in (2**16, 2**26)]
    [40, 245]
    >>> calibration.processor_usage(a100, "NVLink"), calibration.processor_usage(a100, "scale-out")
    (0.15, 0.02)

The figures:

* :func:`matmul_sustained`: the share of the catalog's achievable matmul ceiling (a best-shape
  search, mamf-finder) that cuBLAS sustains on a transformer's linear layers once the tile/wave
  model's own losses are taken out: the median, over microsoft/vidur's profiled linear layers
  with at least 2,048 tokens (Llama-2-7B and 70B, TP 1 and 8, QKV, output, MLP up and down),
  of the measured FLOP/s over the achievable ceiling times :func:`accelkit.mfu.matmul_efficiency`
  (validation/kernel_measurements.py holds the figures; validation/kernel_check.py recomputes
  the median). fp16 measurements, applied to bf16 and (an assumption) to fp8.
* :func:`vector_efficiency`: the memory-bound norms and activations as measured kernels run:
  vidur's RMSNorm (``normalization``) and SiLU-and-multiply (``activation``) at 1,024 and 4,096
  tokens, their bytes over their time, as a share of the catalog's achievable HBM bandwidth
  (a large copy). The residual adds measure at or above the achievable bandwidth (the L2 holds
  their inputs), so other elementwise kernels stay at 1.0. vLLM's kernels, carried to the
  training frameworks' fused norm and activation kernels (not measured).
  :func:`vector_kind` says which kind a model's operation is (:data:`ACTIVATION_WORDS` in its
  name, else its ``normalization`` kind) and :func:`bandwidth_share` its share: the one rule
  training's kernels (:mod:`accelkit.kernels`) and serving's ``"kernels"`` step
  (:mod:`accelkit.serving_kernels`) weight such an operation's bytes by.
* :func:`all_reduce_seconds` (and :func:`all_reduce_busbw`, the same curve as a bus
  bandwidth): an NCCL all-reduce's time inside one NVLink node by message size, for every
  size, training's tensor-parallel all-reduces (:mod:`accelkit.step_cost`) and serving's
  (:mod:`accelkit.serving_kernels`) alike: vidur's measured points from 1 to 64 MiB (2, 4 and 8
  GPUs), then a log-size interpolation of the bus bandwidth up to the catalog's achievable
  scale-up figure at 16 GiB (the nccl-tests plateau, stas00/ml-engineering), held there
  beyond; below 1 MiB a fixed latency plus each byte at that achievable figure, the latency
  set so the time meets the measured 1 MiB point (40, 37 and 29 us on 2, 4 and 8 H100: vidur's
  H100 points at 64 and 256 KiB measure 40-41, 40-41 and 24-37 us, validation/vidur_h100.json;
  A100's below 1 MiB are not held here, so there the same rule is an assumption).
* :func:`processor_usage`: the share of a GPU's compute an overlapped collective takes while it
  runs (its SMs copy and reduce): Calculon's system files (calculon-ai/calculon@caa4b11
  systems/a100_80g.json and h100_80g_nvl8.json, networks[].processor_usage: 0.15 on NVLink,
  0.02 on InfiniBand), a parameter of a validated model (Isaev et al., SC'23), not a
  measurement.
"""

from __future__ import annotations

import numpy as np

from accelkit import chips, models

__all__ = ["ACTIVATION_WORDS", "ALL_REDUCE_CURVES", "MATMUL_SUSTAINED", "NETWORKS", "PROCESSOR_USAGE",
           "SOURCES", "VECTOR_EFFICIENCY", "VECTOR_KINDS", "all_reduce_busbw",
           "all_reduce_seconds", "bandwidth_share", "matmul_sustained", "processor_usage",
           "vector_efficiency", "vector_kind"]

_VIDUR = "microsoft/vidur@7d47513 data/profiling/"
_A100, _H100, _H200 = "NVIDIA A100 (SXM 80GB)", "NVIDIA H100 (SXM)", "NVIDIA H200 (SXM)"

#: Share of the achievable matmul ceiling sustained at transformer linear-layer shapes (doc).
MATMUL_SUSTAINED: dict[str, float] = {_A100: 0.894, _H100: 0.949, _H200: 0.949}

#: The memory-bound kernel kinds :func:`vector_efficiency` knows.
VECTOR_KINDS = ("normalization", "activation")
#: Words that mark a non-matmul operation of :meth:`accelkit.models.Model.operations` an
#: activation (``mlp_silu_gate``, ``experts_silu_gate``, ``mlp_gelu``...): the kernel vidur's
#: ``mlp_act`` measures, acting on the tensor-parallel-split MLP width.
ACTIVATION_WORDS = ("gelu", "silu", "swiglu", "geglu", "relu", "act")
#: Measured bytes/s of the norm and activation kernels over the achievable HBM bandwidth (doc):
#: vidur's medians (732 and 963 GB/s on A100 over its measured 1,610 GB/s BabelStream copy;
#: 1,245 and 1,761 GB/s on H100 over its measured 2,900 GB/s), rounded. The product, the
#: kernels' measured bandwidth, is what prices them.
VECTOR_EFFICIENCY: dict[str, dict[str, float]] = {
    _A100: {"normalization": 0.45, "activation": 0.60},
    _H100: {"normalization": 0.43, "activation": 0.61},
    _H200: {"normalization": 0.43, "activation": 0.61},
}

#: Measured all-reduce bus bandwidth (bytes/s) inside one NVLink node, by GPUs and message
#: bytes: vidur's network/<chip>_dgx/all_reduce.csv medians (validation/kernel_measurements.py),
#: busbw = 2 (n - 1) / n x bytes / time.
ALL_REDUCE_CURVES: dict[str, dict[int, tuple[tuple[int, float], ...]]] = {
    _A100: {
        2: ((2**20, 22.3e9), (2**21, 38.8e9), (2**22, 66.6e9), (2**23, 88.3e9),
            (2**24, 120.7e9), (2**25, 135.8e9), (2**26, 156.1e9)),
        4: ((2**20, 24.6e9), (2**21, 59.4e9), (2**22, 74.0e9), (2**23, 102.3e9),
            (2**24, 125.5e9), (2**25, 157.8e9), (2**26, 166.9e9)),
        8: ((2**20, 28.7e9), (2**21, 52.4e9), (2**22, 74.1e9), (2**23, 94.7e9),
            (2**24, 107.0e9), (2**25, 142.9e9), (2**26, 174.0e9)),
    },
    _H100: {
        2: ((2**20, 24.4e9), (2**21, 53.8e9), (2**22, 97.5e9), (2**23, 182.4e9),
            (2**24, 228.3e9), (2**25, 246.7e9), (2**26, 273.9e9)),
        4: ((2**20, 38.4e9), (2**21, 92.5e9), (2**22, 133.9e9), (2**23, 203.0e9),
            (2**24, 269.2e9), (2**25, 301.4e9), (2**26, 316.6e9)),
        8: ((2**20, 54.0e9), (2**21, 94.1e9), (2**22, 143.9e9), (2**23, 198.4e9),
            (2**24, 255.3e9), (2**25, 299.6e9), (2**26, 364.7e9)),
    },
}
ALL_REDUCE_CURVES[_H200] = ALL_REDUCE_CURVES[_H100]
#: The size at which the curve reaches the catalog's achievable scale-up figure.
_PLATEAU_BYTES = 16 * 2**30

#: Share of a GPU's compute an overlapped collective takes, by network (Calculon, doc).
PROCESSOR_USAGE: dict[str, dict[str, float]] = {
    _A100: {"NVLink": 0.15, "scale-out": 0.02},
    _H100: {"NVLink": 0.15, "scale-out": 0.02},
    _H200: {"NVLink": 0.15, "scale-out": 0.02},
}

#: Where each table's figures come from, by table and chip.
SOURCES: dict[str, dict[str, str]] = {
    "matmul_sustained": {
        _A100: f"{_VIDUR}compute/a100/meta-llama/Llama-2-{{7b,70b}}-hf/mlp.csv: median of 32 "
               "linear layers (>= 2,048 tokens, TP 1 and 8) measured over 271.2 TFLOP/s times "
               "the tile/wave efficiency",
        _H100: f"{_VIDUR}compute/h100/meta-llama/Llama-2-{{7b,70b}}-hf/mlp.csv: median of 32 "
               "linear layers (>= 2,048 tokens, TP 1 and 8) measured over 794.5 TFLOP/s times "
               "the tile/wave efficiency; fp8: ASSUMPTION, the fp16 share carried",
        _H200: "ASSUMPTION: H100's measured share carried (the same GH100 die and clocks); "
               "no H200 linear-layer profile read",
    },
    "vector_efficiency": {
        _A100: f"{_VIDUR}compute/a100/meta-llama/Llama-2-{{7b,70b}}-hf/mlp.csv "
               "input_layernorm and mlp_act (vLLM's RMSNorm and SiLU-and-multiply kernels), "
               "carried to the training framework's norm and activation kernels",
        _H100: f"{_VIDUR}compute/h100/meta-llama/Llama-2-{{7b,70b}}-hf/mlp.csv "
               "input_layernorm and mlp_act (vLLM's RMSNorm and SiLU-and-multiply kernels), "
               "carried to the training framework's norm and activation kernels",
        _H200: "ASSUMPTION: H100's measured shares carried to H200 (its kernels not profiled)",
    },
    "all_reduce_busbw": {
        _A100: f"{_VIDUR}network/a100_dgx/all_reduce.csv (NCCL, 1-64 MiB), then to the "
               "catalog's achievable NVLink figure at 16 GiB (stas00/ml-engineering); below "
               "1 MiB the 1 MiB time less the unsent bytes at that figure (ASSUMPTION: A100's "
               "smaller sizes not read)",
        _H100: f"{_VIDUR}network/h100_dgx/all_reduce.csv (NCCL, 1-64 MiB), then to the "
               "catalog's achievable NVLink figure at 16 GiB (stas00/ml-engineering); below "
               "1 MiB the 1 MiB time less the unsent bytes at that figure (the 64 and 256 KiB "
               "points agree)",
        _H200: "ASSUMPTION: H100's measured curve carried (the same NVLink 4 and NVSwitch)",
    },
    "processor_usage": {
        name: "calculon-ai/calculon@caa4b11 systems/a100_80g.json and h100_80g_nvl8.json "
              "networks[].processor_usage (a validated model's parameter, not a measurement"
              + ("; H200 carried from H100" if name == _H200 else "") + ")"
        for name in (_A100, _H100, _H200)},
}


def matmul_sustained(chip: chips.Chip) -> float:
    """Share of ``chip``'s achievable matmul ceiling its library kernels sustain at transformer
    linear-layer shapes beyond the tile/wave model's losses (1.0 where none is measured)."""
    return MATMUL_SUSTAINED.get(chip.name, 1.0)


def vector_efficiency(chip: chips.Chip, kind: str) -> float:
    """Measured bandwidth of ``chip``'s memory-bound ``kind`` kernels (one of
    :data:`VECTOR_KINDS`) over its achievable HBM bandwidth (1.0 where none is measured).

    Raises:
        ValueError: ``kind`` not one of :data:`VECTOR_KINDS`.
    """
    if kind not in VECTOR_KINDS:
        raise ValueError(f"kind must be one of {VECTOR_KINDS}, got {kind!r}")
    return VECTOR_EFFICIENCY.get(chip.name, {}).get(kind, 1.0)


def vector_kind(op: models.Operation) -> str | None:
    """Which of :data:`VECTOR_KINDS` a model's operation is: ``"activation"`` for a non-matmul
    operation with one of :data:`ACTIVATION_WORDS` in its name, ``"normalization"`` for the
    rest of that kind, None for every other (matmuls, attention, residual adds, rotary...)."""
    if op.kind in models.MATRIX_KINDS:
        return None
    if any(word in op.name for word in ACTIVATION_WORDS):
        return "activation"
    return "normalization" if op.kind == "normalization" else None


def bandwidth_share(chip: chips.Chip, op: models.Operation) -> float:
    """The share of ``chip``'s achievable HBM bandwidth ``op``'s kernel measurably reaches:
    :func:`vector_efficiency` of its :func:`vector_kind`, 1.0 where it has none. A priced
    operation's bytes are weighted by its inverse, so that at the achievable bandwidth it takes
    its measured time."""
    kind = vector_kind(op)
    return 1.0 if kind is None else vector_efficiency(chip, kind)


def _curve_busbw(chip: chips.Chip, curve: tuple[tuple[int, float], ...],
                 nbytes: np.ndarray) -> np.ndarray:
    """The measured curve's bus bandwidth at ``nbytes`` (1 MiB and up; below, the 1 MiB one)."""
    sizes = [float(s) for s, _ in curve] + [float(_PLATEAU_BYTES)]
    bws = [b for _, b in curve] + [chip.achievable_scaleup_bytes_per_second]
    return np.asarray(np.interp(np.log2(np.maximum(nbytes, 1.0)), np.log2(sizes), bws))


def all_reduce_seconds(chip: chips.Chip, n: int, nbytes: float | np.ndarray
                       ) -> np.ndarray | None:
    """Measured NCCL all-reduce time (seconds) of ``n`` GPUs of one NVLink node for messages
    of ``nbytes`` (any size, an array or a number), or None where no curve is measured (other
    chips, other group sizes): from 1 MiB ``2 (n - 1) / n x nbytes`` over the measured bus
    bandwidth (:func:`all_reduce_busbw`); below 1 MiB the measured 1 MiB time less the bytes
    not sent at the catalog's achievable bus bandwidth (a fixed latency plus a bandwidth term,
    meeting the curve at 1 MiB: module doc). The one all-reduce model for training's and
    serving's tensor-parallel groups inside a node."""
    curve = ALL_REDUCE_CURVES.get(chip.name, {}).get(int(n))
    if curve is None:
        return None
    size = np.asarray(nbytes, dtype=float)
    factor = 2.0 * (n - 1.0) / n
    first = float(curve[0][0])
    at_first = factor * first / curve[0][1]
    bw = chip.achievable_scaleup_bytes_per_second
    small = at_first - factor * (first - np.maximum(size, 0.0)) / bw
    large = factor * size / _curve_busbw(chip, curve, size)
    return np.asarray(np.where(size < first, small, large))


def all_reduce_busbw(chip: chips.Chip, n: int, nbytes: float | np.ndarray
                     ) -> np.ndarray | None:
    """Measured NCCL all-reduce bus bandwidth (bytes/s) of ``n`` GPUs of one NVLink node for
    messages of ``nbytes``, or None where no curve is measured (other chips, other group
    sizes): :func:`all_reduce_seconds` as a bus bandwidth, ``2 (n - 1) / n x nbytes`` over the
    time (for an empty message, a byte's). From 64 MiB to 16 GiB interpolated in log size up
    to the catalog's achievable scale-up figure, held there beyond; below 1 MiB it falls with
    the size (the fixed latency dominates)."""
    seconds = all_reduce_seconds(chip, n, nbytes)
    if seconds is None:
        return None
    size = np.maximum(np.asarray(nbytes, dtype=float), 1.0)
    return np.asarray(2.0 * (n - 1.0) / n * size / seconds)


#: The networks :func:`processor_usage` knows.
NETWORKS = ("NVLink", "scale-out")


def processor_usage(chip: chips.Chip, network: str) -> float:
    """Share of ``chip``'s compute an overlapped collective on ``network`` (one of
    :data:`NETWORKS`) takes while it runs; 0.0 where no figure is held (TPUs, other GPUs).

    Raises:
        ValueError: ``network`` not one of :data:`NETWORKS`.
    """
    if network not in NETWORKS:
        raise ValueError(f"network must be one of {NETWORKS}, got {network!r}")
    return PROCESSOR_USAGE.get(chip.name, {}).get(network, 0.0)
