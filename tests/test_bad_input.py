"""A corpus of bad input across the public API: every case is refused clearly, quickly, cheaply.

Each case calls one public function with one bad argument (negative, zero, fractional or
enormous sizes; NaN and inf; wrong shapes and dtypes; unknown chip, model, dataflow and dtype
names; MFU outside (0, 1]) and must raise ``ValueError`` or ``TypeError`` whose message names the
argument (the house rule in accelkit/_validate.py), with a tracemalloc peak under 100 MB (numpy
reports its buffers to tracemalloc), so an enormous size is refused up front, not after an
allocation. How long a refusal takes is measured, not asserted: benchmarks/bench_bad_input.py
prints it for every case.
Enormous matrices are passed as zero-stride broadcast views: they claim billions of elements
while costing no memory, so the test itself allocates nothing big.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import accelkit as ak
import accelkit.widgets.start  # noqa: F401 - imported here so a case's memory peak is the refusal's, not matplotlib's import
from accelkit import SIMDMachine, SystolicArray
from accelkit.workloads import Branchy, Elementwise, Gather, Matmul, Reduction, SparseMatmul

NAN, INF = float("nan"), float("inf")
PEAK_BYTES = 100 * 2**20


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[], object]
    names: str  # the argument the message must name
    errors: tuple[type[Exception], ...] = (ValueError, TypeError)


def _huge(rows: int, cols: int) -> np.ndarray:
    """A rows × cols float matrix that costs no memory (every element is the same one)."""
    return np.broadcast_to(np.float64(1.0), (rows, cols))


def _ones(rows: int, cols: int) -> np.ndarray:
    return np.ones((rows, cols))


def _with(value: float, row: int = 0) -> np.ndarray:
    a = np.ones((4, 4))
    a[row, 1] = value
    return a


SA = SystolicArray(8, 8, "ws")
GPU = SIMDMachine()
LLAMA = "llama-3-8b"

CASES = [
    # -- SystolicArray ---------------------------------------------------------------------------
    Case("systolic rows zero", lambda: SystolicArray(rows=0, cols=8), "rows"),
    Case("systolic rows negative", lambda: SystolicArray(rows=-4, cols=8), "rows"),
    Case("systolic cols fractional", lambda: SystolicArray(rows=8, cols=2.5), "cols"),
    Case("systolic rows enormous", lambda: SystolicArray(rows=10**9, cols=8), "rows"),
    Case("systolic rows bool", lambda: SystolicArray(rows=True, cols=8), "rows"),
    Case("systolic rows string", lambda: SystolicArray(rows="8", cols=8), "rows"),
    Case("systolic unknown dataflow", lambda: SystolicArray(8, 8, dataflow="xs"), "dataflow"),
    Case("systolic dataflow None", lambda: SystolicArray(8, 8, dataflow=None), "dataflow"),
    Case("systolic double_buffer not bool", lambda: SystolicArray(8, 8, double_buffer="yes"),
         "double_buffer"),
    Case("systolic bandwidth zero", lambda: SystolicArray(8, 8, bandwidth_words_per_cycle=0),
         "bandwidth_words_per_cycle"),
    Case("systolic bandwidth NaN", lambda: SystolicArray(8, 8, bandwidth_words_per_cycle=NAN),
         "bandwidth_words_per_cycle"),
    Case("systolic estimate M zero", lambda: SA.estimate(M=0, N=8, K=8), "M"),
    Case("systolic estimate N negative", lambda: SA.estimate(M=8, N=-1, K=8), "N"),
    Case("systolic estimate K NaN", lambda: SA.estimate(M=8, N=8, K=NAN), "K"),
    Case("systolic estimate M inf", lambda: SA.estimate(M=INF, N=8, K=8), "M"),
    Case("systolic estimate M fractional", lambda: SA.estimate(M=1.5, N=8, K=8), "M"),
    Case("systolic estimate M string", lambda: SA.estimate(M="64", N=8, K=8), "M"),
    Case("systolic matmul shapes do not chain", lambda: SA.matmul(_ones(3, 4), _ones(5, 2)), "B"),
    Case("systolic matmul 1-D operand", lambda: SA.matmul(np.ones(4), _ones(4, 4)), "A"),
    Case("systolic matmul 3-D operand", lambda: SA.matmul(_ones(4, 4), np.ones((4, 4, 4))), "B"),
    Case("systolic matmul NaN", lambda: SA.matmul(_with(NAN), _ones(4, 4)), "A"),
    Case("systolic matmul inf", lambda: SA.matmul(_ones(4, 4), _with(-INF)), "B"),
    Case("systolic matmul complex dtype", lambda: SA.matmul(_ones(4, 4) * 1j, _ones(4, 4)), "A"),
    Case("systolic matmul string dtype", lambda: SA.matmul(np.full((2, 2), "x"), _ones(2, 2)), "A"),
    Case("systolic matmul bool dtype", lambda: SA.matmul(_ones(2, 2), np.ones((2, 2), bool)), "B"),
    Case("systolic matmul empty", lambda: SA.matmul(np.ones((0, 4)), _ones(4, 4)), "A"),
    Case("systolic matmul ragged list", lambda: SA.matmul([[1, 2], [3]], _ones(2, 2)), "A"),
    Case("systolic matmul not an array", lambda: SA.matmul("A", _ones(2, 2)), "A"),
    Case("systolic matmul enormous operand", lambda: SA.matmul(_huge(100_000, 100_000),
                                                               _huge(100_000, 4)), "A"),
    Case("systolic simulate enormous operand", lambda: SA.simulate(_ones(4, 4),
                                                                   _huge(4, 10**9)), "B"),
    # -- SIMDMachine -----------------------------------------------------------------------------
    Case("simd cores zero", lambda: SIMDMachine(cores=0), "cores"),
    Case("simd lanes negative", lambda: SIMDMachine(lanes=-32), "lanes"),
    Case("simd lanes enormous", lambda: SIMDMachine(lanes=10**12), "lanes"),
    Case("simd warps fractional", lambda: SIMDMachine(warps_per_core=2.5), "warps_per_core"),
    Case("simd latency inf", lambda: SIMDMachine(memory_latency_cycles=INF),
         "memory_latency_cycles"),
    Case("simd tensor core wrong shape", lambda: SIMDMachine(tensor_core=(4, 4)), "tensor_core"),
    Case("simd tile not a multiple", lambda: SIMDMachine(tile=3), "tile"),
    Case("simd estimate M zero", lambda: GPU.estimate(M=0, N=8, K=8), "M"),
    Case("simd estimate K enormous float", lambda: GPU.estimate(M=8, N=8, K=1e300), "K"),
    Case("simd estimate N a billion", lambda: GPU.estimate(M=8, N=10**9, K=8), "N"),
    Case("simd matmul shapes do not chain", lambda: GPU.matmul(_ones(3, 4), _ones(5, 2)), "B"),
    Case("simd matmul enormous operand", lambda: GPU.matmul(_huge(100_000, 100_000),
                                                            _huge(100_000, 4)), "A"),
    Case("simd elementwise unknown op", lambda: GPU.elementwise(np.ones(8), "tanhh"), "op"),
    Case("simd elementwise NaN", lambda: GPU.elementwise(np.array([1.0, NAN]), "relu"), "x"),
    Case("simd elementwise enormous", lambda: GPU.elementwise(_huge(1, 10**10)[0], "relu"), "x"),
    Case("simd reduction 1-D", lambda: GPU.reduction(np.ones(8), "sum"), "X"),
    Case("simd reduction unknown op", lambda: GPU.reduction(_ones(4, 4), "median"), "op"),
    Case("simd gather index out of range", lambda: GPU.gather(_ones(4, 4), np.array([0, 9])),
         "indices"),
    Case("simd gather fractional index", lambda: GPU.gather(_ones(4, 4), np.array([0.5])),
         "indices"),
    Case("simd transactions 2-D indices", lambda: GPU.transactions(np.ones((2, 2), int)),
         "indices"),
    Case("simd branchy negative instructions", lambda: GPU.branchy(np.ones(8), then_instructions=-1),
         "then_instructions"),
    # -- workloads -------------------------------------------------------------------------------
    Case("workload unknown name", lambda: ak.workloads.workload("mystery"), "workload"),
    Case("workload name not a string", lambda: ak.workloads.workload(3), "workload"),
    Case("compare empty workload", lambda: ak.workloads.compare([]), "workload"),
    Case("compare non-operation", lambda: ak.workloads.compare([object()]), "workload[0]"),
    Case("compare matmul size zero", lambda: ak.workloads.compare([Matmul(0, 4, 4)]), "Matmul.M"),
    Case("compare elementwise unknown op", lambda: ak.workloads.compare([Elementwise(8, "tanhh")]),
         "Elementwise.op"),
    Case("compare reduction fractional", lambda: ak.workloads.compare([Reduction(4, 2.5)]),
         "Reduction.cols"),
    Case("compare branchy fraction above one", lambda: ak.workloads.compare([Branchy(64, 1.5)]),
         "Branchy.taken_fraction"),
    Case("compare sparse density NaN",
         lambda: ak.workloads.compare([SparseMatmul(8, 8, 8, density=NAN)]), "SparseMatmul.density"),
    Case("compare gather enormous table",
         lambda: ak.workloads.compare([Gather(vocab=10**9, dim=10**6, lookups=4)]), "Gather"),
    Case("compare enormous elementwise", lambda: ak.workloads.compare([Elementwise(10**12)]),
         "Elementwise"),
    Case("compare sparse matmul too big to generate",
         lambda: ak.workloads.compare([SparseMatmul(10**5, 8, 10**5)]), "SparseMatmul"),
    Case("compare reduction too big to generate",
         lambda: ak.workloads.compare([Reduction(10**5, 10**5)]), "Reduction"),
    Case("compare gpu wrong type", lambda: ak.workloads.compare("dense_matmul", gpu="H100"), "gpu"),
    Case("tpu-style machine lanes zero", lambda: ak.workloads.TPUStyleMachine(vector_lanes=0),
         "vector_lanes"),
    # -- chips -----------------------------------------------------------------------------------
    Case("chips unknown name", lambda: ak.chips.get("H1000"), "chip"),
    Case("chips empty name", lambda: ak.chips.get(""), "chip"),
    Case("chips name None", lambda: ak.chips.get(None), "chip"),
    Case("chip unknown dtype", lambda: ak.chips.get("H100").peak_flops("fp128"), "dtype"),
    # -- models ----------------------------------------------------------------------------------
    Case("models unknown name", lambda: ak.models.get("gpt-17"), "model"),
    Case("models name not a string", lambda: ak.models.get(42), "model"),
    Case("model operations batch zero", lambda: ak.models.get(LLAMA).operations(batch=0), "batch"),
    Case("model operations unknown phase",
         lambda: ak.models.get(LLAMA).operations(phase="inference"), "phase"),
    Case("model operations unknown dtype", lambda: ak.models.get(LLAMA).operations(dtype="fp5"),
         "dtype"),
    Case("model operations enormous batch",
         lambda: ak.models.get(LLAMA).operations(batch=10**30), "batch"),
    # -- roofline --------------------------------------------------------------------------------
    Case("roofline matmul M zero", lambda: ak.roofline.matmul("H100", M=0, N=8, K=8), "M"),
    Case("roofline matmul N negative", lambda: ak.roofline.matmul("H100", M=8, N=-8, K=8), "N"),
    Case("roofline matmul K fractional", lambda: ak.roofline.matmul("H100", M=8, N=8, K=8.5), "K"),
    Case("roofline matmul M NaN", lambda: ak.roofline.matmul("H100", M=NAN, N=8, K=8), "M"),
    Case("roofline matmul unknown dtype",
         lambda: ak.roofline.matmul("H100", M=8, N=8, K=8, dtype="fp7"), "dtype"),
    Case("roofline matmul unknown chip", lambda: ak.roofline.matmul("Z80", M=8, N=8, K=8), "chip"),
    Case("roofline matmul two element sizes",
         lambda: ak.roofline.matmul("H100", M=8, N=8, K=8, bytes_per_element=(1, 2)),
         "bytes_per_element"),
    Case("roofline estimate flops NaN", lambda: ak.roofline.estimate("H100", flops=NAN, bytes=1),
         "flops"),
    Case("roofline estimate flops inf", lambda: ak.roofline.estimate("H100", flops=INF, bytes=1),
         "flops"),
    Case("roofline estimate bytes negative",
         lambda: ak.roofline.estimate("H100", flops=1, bytes=-1), "bytes"),
    Case("roofline estimate bytes zero", lambda: ak.roofline.estimate("TPU v5e", flops=1, bytes=0),
         "bytes"),
    Case("roofline curve negative intensity",
         lambda: ak.roofline.curve("H100", intensities=[1.0, -1.0]), "intensities"),
    Case("roofline curve enormous", lambda: ak.roofline.curve("H100",
                                                              intensities=_huge(10**5, 10**5)),
         "intensities"),
    # -- energy ----------------------------------------------------------------------------------
    Case("energy unknown dtype", lambda: ak.energy.mac_picojoules("fp9"), "dtype"),
    Case("energy unknown level", lambda: ak.energy.access_picojoules("l7"), "level"),
    Case("energy bytes zero", lambda: ak.energy.access_picojoules("dram", bytes=0), "bytes"),
    Case("energy bytes NaN", lambda: ak.energy.access_picojoules("dram", bytes=NAN), "bytes"),
    Case("energy unknown estimate", lambda: ak.energy.access_picojoules("dram", estimate="max"),
         "estimate"),
    Case("energy of a non-run", lambda: ak.energy.of_run(object()), "run"),
    # -- price -----------------------------------------------------------------------------------
    Case("price mfu zero", lambda: ak.price.flops_per_dollar("H100", mfu=0), "mfu"),
    Case("price mfu above one", lambda: ak.price.flops_per_dollar("H100", mfu=1.5), "mfu"),
    Case("price mfu NaN", lambda: ak.price.flops_per_dollar("H100", mfu=NAN), "mfu"),
    Case("price negative hourly rate",
         lambda: ak.price.flops_per_dollar("H100", usd_per_hour=-2.0), "usd_per_hour"),
    Case("price negative seconds", lambda: ak.price.usd("H100", seconds=-1), "seconds"),
    Case("price chips zero", lambda: ak.price.usd("H100", 10, n_chips=0), "n_chips"),
    Case("price tokens per second zero", lambda: ak.price.usd_per_million_tokens("H100", 0),
         "tokens_per_second"),
    # -- training --------------------------------------------------------------------------------
    Case("training mfu zero", lambda: ak.training.estimate(params=1e9, tokens=1e12, chip="H100",
                                                           mfu=0), "mfu"),
    Case("training mfu above one", lambda: ak.training.estimate(params=1e9, tokens=1e12,
                                                                chip="H100", mfu=1.01), "mfu"),
    Case("training mfu negative", lambda: ak.training.estimate(params=1e9, tokens=1e12,
                                                               chip="H100", mfu=-0.5), "mfu"),
    Case("training mfu inf", lambda: ak.training.estimate(params=1e9, tokens=1e12, chip="H100",
                                                          mfu=INF), "mfu"),
    Case("training tokens zero", lambda: ak.training.estimate(params=1e9, tokens=0, chip="H100"),
         "tokens"),
    Case("training tokens NaN", lambda: ak.training.estimate(params=1e9, tokens=NAN, chip="H100"),
         "tokens"),
    Case("training params negative", lambda: ak.training.estimate(params=-1, tokens=1e12,
                                                                  chip="H100"), "params"),
    Case("training chips zero", lambda: ak.training.estimate(params=1e9, tokens=1e12, chip="H100",
                                                             n_chips=0), "n_chips"),
    Case("training chips enormous", lambda: ak.training.estimate(params=1e9, tokens=1e12,
                                                                 chip="H100", n_chips=10**12),
         "n_chips"),
    Case("training unknown model", lambda: ak.training.estimate("gpt-17", tokens=1e12,
                                                                chip="H100"), "model"),
    Case("training unknown chip", lambda: ak.training.estimate(params=1e9, tokens=1e12,
                                                               chip="TPU v99"), "chip"),
    Case("training model and params", lambda: ak.training.estimate(LLAMA, params=1e9, tokens=1e12,
                                                                   chip="H100"), "params"),
    Case("training batch tokens zero", lambda: ak.training.estimate(params=1e9, tokens=1e12,
                                                                    chip="H100", batch_tokens=0),
         "batch_tokens"),
    Case("training micro-batch zero", lambda: ak.training.estimate(LLAMA, tokens=1e12,
                                                                   chip="H100",
                                                                   microbatch_tokens=0),
         "microbatch_tokens"),
    Case("training micro-batch over the batch", lambda: ak.training.estimate(
        LLAMA, tokens=1e12, chip="H100", n_chips=8, batch_tokens=8192,
        microbatch_tokens=2048), "microbatch_tokens"),
    Case("training unknown flops count", lambda: ak.training.estimate(
        LLAMA, tokens=1e12, chip="H100", flops_count="6ND+"), "flops_count"),
    Case("training unknown recompute", lambda: ak.training.estimate(
        LLAMA, tokens=1e12, chip="H100", recompute="some"), "recompute"),
    Case("training GPUs not in whole nodes", lambda: ak.training.estimate(
        LLAMA, tokens=1e12, chip="H100", n_chips=12, batch_tokens=1e6), "n_chips"),
    # -- inference -------------------------------------------------------------------------------
    Case("decode tensor parallel beyond the node", lambda: ak.inference.decode_step(
        LLAMA, "H100", n_chips=16), "n_chips"),
    Case("prefill unknown attention mask", lambda: ak.inference.prefill(
        LLAMA, "H100", attention_mask="sparse"), "attention_mask"),
    Case("prefill batch zero", lambda: ak.inference.prefill(LLAMA, "H100", batch=0), "batch"),
    Case("prefill prompt enormous", lambda: ak.inference.prefill(LLAMA, "H100",
                                                                 prompt_tokens=10**12),
         "prompt_tokens"),
    Case("prefill unknown model", lambda: ak.inference.prefill("gpt-17", "H100"), "model"),
    Case("prefill unknown chip", lambda: ak.inference.prefill(LLAMA, "H1000"), "chip"),
    Case("decode context negative", lambda: ak.inference.decode_step(LLAMA, "H100",
                                                                     context_tokens=-1),
         "context_tokens"),
    Case("decode unknown kv dtype", lambda: ak.inference.decode_step(LLAMA, "H100", kv_dtype="fp3"),
         "kv_dtype"),
    Case("decode chips fractional", lambda: ak.inference.decode_step(LLAMA, "H100", n_chips=2.5),
         "n_chips"),
    Case("decode batch NaN", lambda: ak.inference.decode_step(LLAMA, "H100", batch=NAN), "batch"),
    Case("decode non-transformer", lambda: ak.inference.decode_step("resnet-50", "H100"), "model"),
    Case("capacity users zero", lambda: ak.capacity.plan(
        LLAMA, "H100", concurrent_users=0, max_seconds_per_token=0.05), "concurrent_users"),
    Case("capacity latency negative", lambda: ak.capacity.plan(
        LLAMA, "H100", concurrent_users=10, max_seconds_per_token=-0.05), "max_seconds_per_token"),
    Case("capacity users enormous", lambda: ak.capacity.plan(
        LLAMA, "H100", concurrent_users=10**12, max_seconds_per_token=0.05), "concurrent_users"),
    Case("decode overhead not a bool", lambda: ak.inference.decode_step(
        LLAMA, "H100", overhead=1), "overhead"),
    Case("decode group not splitting the heads", lambda: ak.inference.decode_step(
        "llama-3-70b", "H100", n_chips=7), "n_chips"),
    Case("prefill group not splitting the heads", lambda: ak.inference.prefill(
        "llama-3-70b", "H100", n_chips=6), "n_chips"),
    Case("capacity unknown kv cache split", lambda: ak.capacity.plan(
        LLAMA, "H100", concurrent_users=10, max_seconds_per_token=0.05, kv_cache_split="rows"),
         "kv_cache_split"),
    # -- the serving simulation --------------------------------------------------------------------
    Case("serving requests enormous", lambda: ak.serving.simulate(
        LLAMA, "H100", arrival_rate=1.0, requests=10**12, prompt_tokens=10, output_tokens=10),
         "requests"),
    Case("serving rate NaN", lambda: ak.serving.simulate(
        LLAMA, "H100", arrival_rate=NAN, requests=10, prompt_tokens=10, output_tokens=10),
         "arrival_rate"),
    Case("serving prompt enormous", lambda: ak.serving.simulate(
        LLAMA, "H100", arrival_rate=1.0, requests=10, prompt_tokens=10**12, output_tokens=10),
         "prompt_tokens"),
    Case("serving outputs wrong length", lambda: ak.serving.simulate(
        LLAMA, "H100", arrival_rate=1.0, requests=10, prompt_tokens=10, output_tokens=[5, 6]),
         "output_tokens"),
    Case("serving group not splitting the heads", lambda: ak.serving.simulate(
        "llama-3-70b", "H100", n_chips=3, arrival_rate=1.0, requests=10, prompt_tokens=10,
        output_tokens=10), "n_chips"),
    Case("serving cache too small for one request", lambda: ak.serving.simulate(
        LLAMA, "H100", arrival_rate=1.0, requests=10, prompt_tokens=10**7, output_tokens=10),
         "prompt"),
    Case("serving capacity limit zero", lambda: ak.serving.capacity(
        LLAMA, "H100", arrival_rate=1.0, prompt_tokens=10, output_tokens=10,
        ttft_p99_seconds=0.0, tpot_p99_seconds=0.1), "ttft_p99_seconds"),
    # -- parallel layouts and the rule that combines times ---------------------------------------
    Case("layout tp a float", lambda: ak.parallel.Layout(tp=3.0), "tp"),
    Case("layout interleave a bool", lambda: ak.parallel.Layout(pp=2, interleave=True),
         "interleave"),
    Case("times overlap not a bool", lambda: ak.roofline.times(compute_seconds=1.0, overlap=1),
         "overlap"),
    Case("times memory negative", lambda: ak.roofline.times(memory_seconds=-1.0, overlap=True),
         "memory_seconds"),
    # -- at scale: context parallelism, experts, in-network reduction, goodput, quality ---------
    Case("layout cp a float", lambda: ak.parallel.Layout(cp=2.0), "cp"),
    Case("layout cp not splitting the sequence", lambda: ak.parallel.train_step(
        "llama-3-8b", "H100", ak.parallel.Layout(tp=8, cp=3, microbatch_tokens=8192), 8192),
         "cp=3"),
    Case("best_layouts max_cp zero", lambda: ak.parallel.best_layouts(
        "llama-3-8b", "H100", 8, 8 * 8192, max_cp=0), "max_cp"),
    Case("experts counts enormous", lambda: ak.experts.all_to_all_scaling(
        "H100", array_bytes=1e9, counts=(10**12,)), "counts[0]"),
    Case("experts dispatch tokens NaN", lambda: ak.experts.dispatch(
        "deepseek-v3", "H100", tokens_per_chip=NAN, ep=64), "tokens_per_chip"),
    Case("experts book critical batch chips a float", lambda: ak.experts.critical_batch_against_book(
        "gpt-oss-120b", "H100", 1024.5), "n_chips"),
    Case("in_network array infinite", lambda: ak.in_network.all_reduce(
        "H100", array_bytes=INF, over=8), "array_bytes"),
    Case("goodput chips enormous", lambda: ak.goodput.goodput(
        chips=10**12, failures_per_chip_hour=1e-6, checkpoint_seconds=60, restart_seconds=60),
         "chips"),
    Case("goodput restart NaN", lambda: ak.goodput.goodput(
        chips=1024, failures_per_chip_hour=1e-6, checkpoint_seconds=60, restart_seconds=NAN),
         "restart_seconds"),
    Case("quality unknown phase", lambda: ak.quality.recipes(phase="serving"), "phase"),
    # -- widgets (their factories pass arguments on to the library) ------------------------------
    Case("widget first_widget rows zero", lambda: ak.widgets.first_widget(rows=0), "rows"),
    Case("widget first_widget cols fractional", lambda: ak.widgets.first_widget(cols=1.5), "cols"),
]


def test_case_ids_are_unique():
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_refused_clearly_and_cheaply(case: Case):
    tracemalloc.start()
    try:
        with pytest.raises(case.errors) as raised:
            case.call()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    message = str(raised.value)
    assert case.names in message, f"{type(raised.value).__name__} does not name {case.names!r}: {message}"
    assert peak < PEAK_BYTES, f"allocated {peak / 2**20:,.0f} MB before refusing"
