"""The training kernel model against kernel-level measurements at matching shapes (issue 21).

    python validation/kernel_check.py          # every shape, then the headline medians
    python validation/kernel_check.py --brief  # the headline medians only

Evidence, not model: for each measured kernel of validation/kernel_measurements.py (vidur's
A100 and H100 profiles) it prints accelkit's predicted time, the measured one and their ratio
(predicted / measured: below 1 the model is too fast), three ways:

* ``tile``: the roofline of the kernel at the catalog's achievable ceilings with the tile/wave
  efficiency alone (:func:`accelkit.mfu.matmul_efficiency`): the model before the calibration;
* ``model``: as :mod:`accelkit.kernels` prices it now (the matmul ceiling times
  :func:`accelkit.calibration.matmul_sustained`; norms and activations at
  :func:`accelkit.calibration.vector_efficiency`);
* for the all-reduces, :func:`accelkit.collectives.all_reduce` at the achievable NVLink figure
  (``alpha-beta``) and the measured-curve price the step model uses now (``model``, which reads
  the same measurements: it shows the curve is carried over faithfully, not an independent check).

The sustained-matmul share is recomputed here from the figures (the median over linear layers
of at least 2,048 tokens) and must equal :data:`accelkit.calibration.MATMUL_SUSTAINED`
(tests/test_calibration.py checks it).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from accelkit import calibration, chips, collectives, mfu  # noqa: E402
from validation import kernel_measurements as measured  # noqa: E402

#: Linear layers with at least this many tokens set the sustained share (full waves).
FULL_WAVE_TOKENS = 2048
_BYTES = 2  # fp16 operands and outputs


def _matmul_roof(chip: chips.Chip, M: int, N: int, K: int, sustained: float) -> float:
    flops = 2.0 * M * N * K
    eff = mfu.matmul_efficiency(chip, M, N, K)
    moved = _BYTES * (M * K + K * N + M * N)
    return max(flops / (chip.achievable_flops("bf16") * eff * sustained),
               moved / chip.achievable_hbm_bytes_per_second)


def linear_rows() -> list[dict[str, object]]:
    """One row per measured linear layer: shape, measured and predicted ms, their ratios."""
    out = []
    for name, profile, tokens, tp, op, M, N, K, ms in measured.LINEAR:
        chip = chips.get(name)
        tile = _matmul_roof(chip, M, N, K, 1.0) * 1e3
        model = _matmul_roof(chip, M, N, K, calibration.matmul_sustained(chip)) * 1e3
        out.append(dict(chip=name, profile=profile, tokens=tokens, tp=tp, op=op, M=M, N=N, K=K,
                        measured_ms=ms, tile_ms=tile, model_ms=model, tile_ratio=tile / ms,
                        model_ratio=model / ms,
                        sustained=2.0 * M * N * K / (ms * 1e-3) / (
                            chip.achievable_flops("bf16") * mfu.matmul_efficiency(chip, M, N, K))))
    return out


def sustained_share(chip_name: str) -> float:
    """The median, over the chip's measured linear layers of at least
    :data:`FULL_WAVE_TOKENS` tokens, of measured FLOP/s over the achievable ceiling times the
    tile/wave efficiency."""
    return statistics.median(float(r["sustained"]) for r in linear_rows()  # type: ignore[arg-type]
                             if r["chip"] == chip_name and int(r["tokens"]) >= FULL_WAVE_TOKENS)  # type: ignore[call-overload]


def vector_rows() -> list[dict[str, object]]:
    """One row per measured memory-bound kernel: bytes, measured and predicted ms."""
    kinds = {"input_layernorm": "normalization", "mlp_act": "activation", "add": None}
    out = []
    for name, profile, tokens, tp, op, nbytes, ms in measured.VECTOR:
        chip = chips.get(name)
        hbm = chip.achievable_hbm_bytes_per_second
        kind = kinds[op]
        eff = calibration.vector_efficiency(chip, kind) if kind else 1.0
        before, after = nbytes / hbm * 1e3, nbytes / (hbm * eff) * 1e3
        out.append(dict(chip=name, profile=profile, tokens=tokens, tp=tp, op=op, bytes=nbytes,
                        measured_ms=ms, tile_ms=before, model_ms=after, tile_ratio=before / ms,
                        model_ratio=after / ms))
    return out


def all_reduce_rows() -> list[dict[str, object]]:
    """One row per measured all-reduce: GPUs, bytes, measured and predicted ms."""
    out = []
    for name, n, nbytes, ms in measured.ALL_REDUCE:
        chip = chips.get(name)
        alpha_beta = collectives.all_reduce(chip, array_bytes=nbytes, over=n,
                                            bandwidth="achievable").seconds * 1e3
        busbw = calibration.all_reduce_busbw(chip, n, nbytes)
        model = (2.0 * (n - 1) / n * nbytes / float(busbw) * 1e3 if busbw is not None
                 else alpha_beta)
        out.append(dict(chip=name, gpus=n, bytes=nbytes, measured_ms=ms, tile_ms=alpha_beta,
                        model_ms=model, tile_ratio=alpha_beta / ms, model_ratio=model / ms))
    return out


def headline() -> list[tuple[str, str, float, float, int]]:
    """(what, chip, median ratio before, median ratio now, rows) per kernel family and chip."""
    out = []
    families = (("linear layers, >= 2,048 tokens", linear_rows(),
                 lambda r: int(r["tokens"]) >= FULL_WAVE_TOKENS),
                ("linear layers, 512-1,024 tokens", linear_rows(),
                 lambda r: int(r["tokens"]) < FULL_WAVE_TOKENS),
                ("norm kernels", vector_rows(), lambda r: r["op"] == "input_layernorm"),
                ("activation kernels", vector_rows(), lambda r: r["op"] == "mlp_act"),
                ("residual adds", vector_rows(), lambda r: r["op"] == "add"),
                ("NVLink all-reduce 1-4 MiB", all_reduce_rows(),
                 lambda r: int(r["bytes"]) <= 4 * 2**20),
                ("NVLink all-reduce 8-64 MiB", all_reduce_rows(),
                 lambda r: int(r["bytes"]) >= 8 * 2**20))
    for what, rows, keep in families:
        for chip in ("NVIDIA A100 (SXM 80GB)", "NVIDIA H100 (SXM)"):
            picked = [r for r in rows if chips.get(str(r["chip"])).name == chip and keep(r)]
            out.append((what, chip, statistics.median(float(r["tile_ratio"]) for r in picked),  # type: ignore[arg-type]
                        statistics.median(float(r["model_ratio"]) for r in picked), len(picked)))  # type: ignore[arg-type]
    return out


def main(argv: list[str]) -> int:
    if "--brief" not in argv:
        print(f"{'chip':5} {'profile':26} {'tok':>5} {'tp':>2} {'op':15} {'M x N x K':>20} "
              f"{'meas ms':>8} {'tile ms':>8} {'ratio':>6} {'model ms':>8} {'ratio':>6}")
        for r in linear_rows():
            shape = f"{r['M']}x{r['N']}x{r['K']}"
            print(f"{r['chip']:5} {r['profile']:26} {r['tokens']:>5} {r['tp']:>2} {r['op']:15} "
                  f"{shape:>20} {r['measured_ms']:8.3f} {r['tile_ms']:8.3f} "
                  f"{r['tile_ratio']:6.2f} {r['model_ms']:8.3f} {r['model_ratio']:6.2f}")
        print(f"\n{'chip':5} {'profile':26} {'tok':>5} {'tp':>2} {'op':15} {'MB':>8} "
              f"{'meas ms':>8} {'before':>8} {'ratio':>6} {'model ms':>8} {'ratio':>6}")
        for r in vector_rows():
            print(f"{r['chip']:5} {r['profile']:26} {r['tokens']:>5} {r['tp']:>2} {r['op']:15} "
                  f"{int(r['bytes']) / 1e6:8.1f} {r['measured_ms']:8.3f} {r['tile_ms']:8.3f} "  # type: ignore[call-overload]
                  f"{r['tile_ratio']:6.2f} {r['model_ms']:8.3f} {r['model_ratio']:6.2f}")
        print(f"\n{'chip':5} {'GPUs':>4} {'MiB':>5} {'meas ms':>8} {'alpha-beta':>10} {'ratio':>6} "
              f"{'model ms':>8} {'ratio':>6}")
        for r in all_reduce_rows():
            print(f"{r['chip']:5} {r['gpus']:>4} {int(r['bytes']) / 2**20:5.0f} "  # type: ignore[call-overload]
                  f"{r['measured_ms']:8.3f} {r['tile_ms']:10.3f} {r['tile_ratio']:6.2f} "
                  f"{r['model_ms']:8.3f} {r['model_ratio']:6.2f}")
        print()
    print("median predicted / measured (below 1: the model is too fast), before -> now:")
    for what, chip, before, now, n in headline():
        print(f"  {what:34} {chip:24} {before:5.2f} -> {now:5.2f}  ({n} kernels)")
    for name in ("NVIDIA A100 (SXM 80GB)", "NVIDIA H100 (SXM)"):
        short = "A100" if "A100" in name else "H100"
        print(f"  sustained matmul share, {short}: {sustained_share(short):.3f} "
              f"(accelkit.calibration: {calibration.MATMUL_SUSTAINED[name]})")
    print(f"source: {measured.SOURCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
