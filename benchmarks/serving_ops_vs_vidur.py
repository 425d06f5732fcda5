"""The serving step checked op by op against measured kernels: Llama-2-70B's per-layer
operations on H100 at each token count and tensor-parallel degree, and NCCL's all-reduce at
decode's message sizes, our predicted time against Vidur's measured one; and fp8 GEMMs at 64,
128 and 4,096 rows against DeepGEMM's and CUTLASS 3.6's measured ones on H800 (a kernel-level
check, nothing fitted to a serving run: ``validation/vidur_h100.json`` holds the measurements
and their sources).

Run: ``python benchmarks/serving_ops_vs_vidur.py`` (``--ceilings achievable`` or
``datasheet`` to price at those; ``--all`` prints every op row). The measurements are
bf16/fp16 PyTorch kernels (Vidur profiles vLLM's model code), so this checks the kernel model
at bf16; what the MLPerf runs use (fp8 TensorRT-LLM kernels) has no such profile here.

Our time of one operation, per layer and per tensor-parallel shard, is what the serving step
charges it (:class:`accelkit.serving_step.IterationGroup` at ``ceilings``): the roofline of its
FLOPs at the (shape-scaled) matmul ceiling and its bytes at the HBM ceiling (under
``"kernels"`` the norms' and activations' bytes weighted by their measured bandwidth shares,
:func:`accelkit.calibration.bandwidth_share`), and at least the group's per-kernel cost (under
``"kernels"``, :data:`accelkit.serving_kernels.KERNEL_FLOOR_SECONDS`); an all-reduce as the
step prices it (under ``"kernels"``, :func:`accelkit.serving_kernels.all_reduce_seconds`:
NCCL's measured curve, :func:`accelkit.calibration.all_reduce_seconds`).

Some figures are taken from these same or overlapping measurements: the kernel floor and the
grouped GEMMs' fractions (:mod:`accelkit.serving_kernels`), and the training calibration's
sustained matmul share (vidur's Llama-2-7B and 70B linear layers at 2,048 tokens or more, A100
and H100, TP 1 and 8), norm and activation bandwidths (vidur's 7B and 70B at 1,024 and 4,096
tokens) and all-reduce curve (this same CSV from 1 MiB) (:mod:`accelkit.calibration`): for
those the check shows how well one figure per kind describes every shape, not an independent
test; the tile model, the replicated norms, the all-reduce below 1 MiB and the fp8 dense GEMMs
are checked against figures they were not taken from.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accelkit import chips, collectives, models, serving_kernels, serving_step  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "validation" / "vidur_h100.json"
#: Vidur's op -> ours (accelkit.models' operation names; "add" is one of the two residuals).
OPS = {"input_layernorm": "attn_norm", "attn_pre_proj": "qkv_proj", "attn_rope": "rope",
       "attn_post_proj": "attn_out", "post_attention_layernorm": "mlp_norm",
       "mlp_up_proj": "mlp_gate_up", "mlp_act": "mlp_silu_gate", "mlp_down_proj": "mlp_down",
       "add": "attn_residual"}
MATMULS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")


def data() -> dict:
    loaded: dict = json.loads(DATA.read_text(encoding="utf-8"))
    return loaded


def predicted_ops(n_chips: int, tokens: int, ceilings: str = "kernels") -> dict[str, float]:
    """Our seconds of each of :data:`OPS`, per layer and shard, in a decode iteration of
    ``tokens`` sequences at context 0 (Vidur's MLP profile has no attention), bf16."""
    m = models.get("llama-2-70b")
    chip = chips.get("H100")
    group = serving_step.iteration_group(m, chip, n_chips, ("bf16", "bf16", "bf16"),
                                         ("causal", True, True), "even", 0.0, ceilings)
    flops, moved = group.arrays(tokens, tokens, float(tokens), float(tokens))
    peaks = np.broadcast_to(group.peaks(tokens), flops.shape)
    _, bandwidth, _ = group.rates
    names = [op.name for op in m.operations(batch=1, phase="decode", context_tokens=0,
                                            dtype="bf16", kv_dtype="bf16")]
    out = {}
    for theirs, ours in OPS.items():
        i = names.index(ours)
        # pooled rates over the group: FLOPs / (n x peak) is one shard's FLOPs at one peak
        seconds = max(flops[i] / peaks[i], moved[i] / bandwidth) / group.counts[i]
        out[theirs] = float(max(seconds, group.per_op_overhead))
    return out


def predicted_all_reduce(n_chips: int, array_bytes: float, ceilings: str = "kernels") -> float:
    """Our seconds of one tensor-parallel all-reduce of ``array_bytes`` on ``n_chips`` H100s."""
    if ceilings == "kernels":
        return serving_kernels.all_reduce_seconds(chips.get("H100"), array_bytes, n_chips)
    chip = collectives.at_bandwidth(chips.get("H100"), ceilings)
    return float(collectives.all_reduce(chip, array_bytes=array_bytes, over=n_chips).seconds)


def op_rows(ceilings: str = "kernels") -> list[tuple]:
    """(tensor-parallel degree, tokens, op, measured us, predicted us, predicted/measured)."""
    rows = []
    for tp, table in data()["mlp"]["us"].items():
        for tokens, ops in table.items():
            ours = predicted_ops(int(tp), int(tokens), ceilings)
            for op in OPS:
                rows.append((int(tp), int(tokens), op, ops[op], ours[op] * 1e6,
                             ours[op] * 1e6 / ops[op]))
    return rows


def all_reduce_rows(ceilings: str = "kernels") -> list[tuple]:
    """(group size, bytes, measured us, predicted us, predicted/measured)."""
    rows = []
    for n, table in data()["all_reduce"]["us"].items():
        for size, us in table.items():
            ours = predicted_all_reduce(int(n), float(size), ceilings) * 1e6
            rows.append((int(n), int(size), us, ours, ours / us))
    return rows


def fp8_rows() -> list[tuple]:
    """(M, N, K, ours us, DeepGEMM us, CUTLASS 3.6 us) for DeepGEMM's fp8 GEMMs, ours one
    shaped matmul under ``"kernels"`` on an H100 (fp8 operands, bf16 output)."""
    chip = chips.get("H100")
    peak = chip.achievable_flops("fp8")
    bandwidth = chip.achievable_hbm_bytes_per_second
    out = []
    for r in data()["fp8_gemm"]["rows"]:
        m, n, k = r["M"], r["N"], r["K"]
        eff = float(serving_kernels.efficiencies(chip, "fp8", ((0, n, k, 1.0, 1),), 1, m)[0])
        ours = max(2.0 * m * n * k / (peak * eff), (m * k + n * k + 2 * m * n) / bandwidth)
        deep = 2.0 * m * n * k / (r["tflops"] * 1e12)
        out.append((m, n, k, ours * 1e6, deep * 1e6, deep * r["speedup_over_cutlass"] * 1e6))
    return out


def grouped_rows() -> list[tuple]:
    """(experts, M per expert, N, K, ours us, DeepGEMM us, CUTLASS 3.6 us) for DeepGEMM's fp8
    grouped GEMMs, ours as a mixture's routed experts are shaped (each expert its share of the
    tokens, the experts as independent products: serving_kernels.Shaped) on an H100."""
    chip = chips.get("H100")
    peak = chip.achievable_flops("fp8")
    bandwidth = chip.achievable_hbm_bytes_per_second
    out = []
    for r in data()["fp8_grouped_gemm"]["rows"]:
        g, m, n, k = r["groups"], r["M"], r["N"], r["K"]
        eff = float(serving_kernels.efficiencies(chip, "fp8", ((0, n, k, 1.0 / g, g),), 1,
                                                 g * m)[0])
        flops = 2.0 * g * m * n * k
        ours = max(flops / (peak * eff), g * (m * k + n * k + 2 * m * n) / bandwidth)
        deep = flops / (r["tflops"] * 1e12)
        out.append((g, m, n, k, ours * 1e6, deep * 1e6, deep * r["speedup_over_cutlass"] * 1e6))
    return out


def layer_rows(ceilings: str = "kernels") -> list[tuple]:
    """Per tensor-parallel degree and tokens: one layer's measured and predicted time, the
    nine ops plus the second residual add and the two all-reduces of ``tokens x 8,192`` bf16
    (the measured all-reduce at the nearest profiled size; none at TP1)."""
    ar = data()["all_reduce"]["us"]
    out = []
    by: dict[tuple[int, int], list[tuple]] = {}
    for row in op_rows(ceilings):
        by.setdefault(row[:2], []).append(row)
    for (tp, tokens), rows in by.items():
        measured = sum(r[3] for r in rows) + next(r[3] for r in rows if r[2] == "add")
        predicted = sum(r[4] for r in rows) + next(r[4] for r in rows if r[2] == "add")
        if tp > 1:
            size = tokens * 8192 * 2
            sizes = [int(s) for s in ar[str(tp)]]
            nearest = min(sizes, key=lambda s: abs(math.log(s / size)))
            measured += 2 * ar[str(tp)][str(nearest)]
            predicted += 2 * predicted_all_reduce(tp, size, ceilings) * 1e6
        out.append((tp, tokens, measured, predicted, predicted / measured))
    return out


def headline(ceilings: str = "kernels") -> dict[str, tuple[float, float, float]]:
    """Median, lowest and highest predicted/measured ratio of each kind of check."""
    ops, ar, layers = op_rows(ceilings), all_reduce_rows(ceilings), layer_rows(ceilings)
    fp8 = fp8_rows()
    groups = {
        "matmuls, <= 128 tokens": [r[5] for r in ops if r[2] in MATMULS and r[1] <= 128],
        "matmuls, >= 1,024 tokens": [r[5] for r in ops if r[2] in MATMULS and r[1] >= 1024],
        "other kernels, <= 128 tokens": [r[5] for r in ops if r[2] not in MATMULS and r[1] <= 128],
        "other kernels, >= 1,024 tokens": [r[5] for r in ops
                                           if r[2] not in MATMULS and r[1] >= 1024],
        "all-reduce, 64 KiB-8 MiB": [r[4] for r in ar if 65536 <= r[1] <= 8388608],
        "all-reduce, 16-64 MiB": [r[4] for r in ar if r[1] > 8388608],
        "one layer, <= 128 tokens": [r[4] for r in layers if r[1] <= 128],
        "one layer, >= 1,024 tokens": [r[4] for r in layers if r[1] >= 1024],
        "fp8 GEMM vs DeepGEMM, M 64-128": [r[3] / r[4] for r in fp8 if r[0] <= 128],
        "fp8 GEMM vs CUTLASS 3.6, M 64-128": [r[3] / r[5] for r in fp8 if r[0] <= 128],
        "fp8 GEMM vs CUTLASS 3.6, M 4,096": [r[3] / r[5] for r in fp8 if r[0] == 4096],
        "fp8 grouped (experts) vs CUTLASS 3.6": [r[4] / r[6] for r in grouped_rows()]}
    return {k: (statistics.median(v), min(v), max(v)) for k, v in groups.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ceilings", default="kernels", choices=serving_step.CEILINGS)
    parser.add_argument("--all", action="store_true", help="print every op row")
    args = parser.parse_args()
    print(f"ceilings={args.ceilings}")
    print(f"source: {data()['mlp']['source']}")
    print("\nheadline, predicted / measured: median (lowest..highest)")
    for kind, (mid, low, high) in headline(args.ceilings).items():
        print(f"  {kind:36s} {mid:5.2f} ({low:.2f}..{high:.2f})")
    rows = op_rows(args.ceilings)
    print("\nper op, predicted / measured (median over token counts 1..4,096; min..max):")
    print(f"{'op':26s} {'TP':>3s} {'tokens<=128':>12s} {'256..4096':>10s}")
    for op in OPS:
        for tp in (1, 2, 4, 8):
            small = [r[5] for r in rows if r[2] == op and r[0] == tp and r[1] <= 128]
            large = [r[5] for r in rows if r[2] == op and r[0] == tp and r[1] >= 256]
            print(f"{op:26s} {tp:3d} {statistics.median(small):12.2f} "
                  f"{statistics.median(large):10.2f}")
    if args.all:
        print(f"\n{'TP':>3s} {'tokens':>6s} {'op':26s} {'measured us':>12s} {'ours us':>9s} "
              f"{'ratio':>6s}")
        for r in rows:
            print(f"{r[0]:3d} {r[1]:6d} {r[2]:26s} {r[3]:12.1f} {r[4]:9.1f} {r[5]:6.2f}")
    print(f"\nall-reduce ({data()['all_reduce']['source'][:60]}...):")
    print(f"{'n':>3s} {'bytes':>10s} {'measured us':>12s} {'ours us':>9s} {'ratio':>6s}")
    for r in all_reduce_rows(args.ceilings):
        print(f"{r[0]:3d} {r[1]:10,d} {r[2]:12.1f} {r[3]:9.1f} {r[4]:6.2f}")
    print(f"\nfp8 GEMMs ({data()['fp8_gemm']['source'][:52]}...), ours on an H100:")
    print(f"{'M':>5s} {'N':>6s} {'K':>6s} {'ours us':>8s} {'DeepGEMM':>9s} {'ratio':>6s} "
          f"{'CUTLASS':>8s} {'ratio':>6s}")
    for m, n, k, ours, deep, cutlass in fp8_rows():
        print(f"{m:5d} {n:6d} {k:6d} {ours:8.1f} {deep:9.1f} {ours / deep:6.2f} {cutlass:8.1f} "
              f"{ours / cutlass:6.2f}")
    print("\nfp8 grouped GEMMs (DeepGEMM's MoE tables), ours as routed experts on an H100:")
    print(f"{'groups':>6s} {'M':>5s} {'N':>5s} {'K':>5s} {'ours us':>8s} {'DeepGEMM':>9s} "
          f"{'ratio':>6s} {'CUTLASS':>8s} {'ratio':>6s}")
    for g, m, n, k, ours, deep, cutlass in grouped_rows():
        print(f"{g:6d} {m:5d} {n:5d} {k:5d} {ours:8.1f} {deep:9.1f} {ours / deep:6.2f} "
              f"{cutlass:8.1f} {ours / cutlass:6.2f}")
    print("\none layer (nine ops, two residual adds, two all-reduces), per shard:")
    print(f"{'TP':>3s} {'tokens':>6s} {'measured us':>12s} {'ours us':>9s} {'ratio':>6s}")
    for r in layer_rows(args.ceilings):
        print(f"{r[0]:3d} {r[1]:6d} {r[2]:12.1f} {r[3]:9.1f} {r[4]:6.2f}")


if __name__ == "__main__":
    main()
