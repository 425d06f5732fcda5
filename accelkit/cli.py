"""The ``accelkit`` command: a quick number from the terminal, as a plain-text table.

    accelkit chips
    accelkit roofline --chip v5e --m 4096 --n 4096 --k 4096
    accelkit train --model llama-3-70b --tokens 15e12 --chip v5p --chips 8960 --mfu 0.4
    accelkit serve --model llama-3-70b --chip v5e --chips 16 --batch 32 --context 8192

The command only parses arguments and prints; every number comes from the library. Bad
arguments give one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

DESCRIPTION = """\
Quick numbers for choosing GPUs or TPUs. Every figure comes from the accelkit library,
which keeps a source beside each hardware and model number."""

EPILOG = """\
examples:
  accelkit chips
      every chip: peak bf16 FLOP/s, HBM, bandwidth, ridge point, price
  accelkit models
      every model: parameters and shape
  accelkit roofline --chip v5e --m 4096 --n 4096 --k 4096
      is a 4096^3 matmul compute- or memory-bound? (compare intensity with the ridge)
  accelkit roofline --chip H100 --m 8 --n 8192 --k 8192
      a small batch: the same weights, far fewer FLOPs per byte
  accelkit train --model llama-3-70b --tokens 15e12 --chip v5p --chips 8960 --mfu 0.4
      the scaling book's example: 6*N*D FLOPs, ~44 days
  accelkit train --params 7e9 --tokens 2e12 --chip H100 --chips 512 --batch-tokens 4e6
      a parameter count instead of a named model, with gradient all-reduce
  accelkit serve --model llama-3-70b --chip v5e --chips 16 --batch 32 --context 8192
      prefill and one decode step: time, bound, tokens/s, $ per million tokens

the ideas in one line each:
  ridge point    peak FLOP/s / memory bytes/s; above it an operation is compute-bound
  MFU            the share of peak FLOP/s a training run turns into model FLOPs (6 per param
                 per token)
  decode         reads every weight and the whole KV cache for one token per sequence, so
                 it is memory-bound until the batch is large
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line on stderr and exit code 2 (argparse's own code)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"accelkit: error: {message}\n")


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """Columns before ``left`` and the last text column are left-aligned, numbers right."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in
                         enumerate(zip(cells, widths))).rstrip()
    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def _pairs(rows: Sequence[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def _num(value: float | None, scale: float = 1.0, fmt: str = ",.0f", unit: str = "") -> str:
    return "n/a" if value is None else f"{value / scale:{fmt}}{unit}"


def _seconds(value: float) -> str:
    if value >= 86_400:
        return f"{value / 86_400:,.1f} days"
    if value >= 1:
        return f"{value:,.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:,.2f} ms"
    return f"{value * 1e6:,.2f} us"


def _chips(args: argparse.Namespace) -> str:
    from accelkit import chips
    rows = []
    for c in chips.all():
        rows.append([c.name, _num(c.peak_flops("bf16"), 1e12), _num(c.hbm_bytes, 2**30, ",.0f"),
                     _num(c.hbm_bytes_per_second, 1e9),
                     _num(c.ridge_flops_per_byte("bf16"), 1, ",.1f"),
                     _num(c.interconnect_bytes_per_second, 1e9), _num(c.watts),
                     _num(c.usd_per_hour, 1, ",.2f")])
    return _table(["chip", "bf16 TFLOP/s", "HBM GiB", "HBM GB/s", "ridge FLOP/B",
                   "link GB/s", "watts", "$/chip-h"], rows)


def _models(args: argparse.Namespace) -> str:
    from accelkit import models
    rows = []
    for m in models.all():
        shape = ""
        if isinstance(m, models.Transformer):
            shape = (f"L={m.layers} d={m.d_model} heads={m.heads}/{m.kv_heads}kv "
                     f"d_ff={m.d_ff}{' gated' if m.gated_mlp else ''}")
        rows.append([m.name, m.family, f"{m.params / 1e9:,.3f}",
                     f"{m.published_params / 1e9:,.3f}", shape])
    return _table(["model", "family", "shape", "params (B)", "published (B)"],
                  [[r[0], r[1], r[4], r[2], r[3]] for r in rows], left=3)


def _roofline(args: argparse.Namespace) -> str:
    from accelkit import roofline
    r = roofline.matmul(args.chip, M=args.m, N=args.n, K=args.k, dtype=args.dtype)
    return _pairs([
        ("chip", f"{r.chip} ({r.dtype})"),
        ("matmul", f"[{args.m} x {args.k}] @ [{args.k} x {args.n}]"),
        ("FLOPs", f"{r.flops:.4g}"), ("bytes moved", f"{r.bytes:.4g}"),
        ("arithmetic intensity", f"{r.arithmetic_intensity:,.1f} FLOPs/byte"),
        ("ridge point", f"{r.ridge_flops_per_byte:,.1f} FLOPs/byte"),
        ("compute time", _seconds(r.compute_seconds)),
        ("memory time", _seconds(r.memory_seconds)),
        ("roofline time", _seconds(r.seconds)), ("bound", r.bound),
        ("fraction of peak", f"{r.fraction_of_peak:.0%}"),
    ])


def _train(args: argparse.Namespace) -> str:
    from accelkit import training
    t = training.estimate(model=args.model, params=args.params, tokens=args.tokens,
                          chip=args.chip, n_chips=args.chips, mfu=args.mfu, dtype=args.dtype,
                          batch_tokens=args.batch_tokens)
    rows = [("model", t.model or f"{t.params:.4g} params"),
            ("hardware", f"{t.n_chips:,} x {t.chip} at MFU {t.mfu:.0%}"),
            ("FLOPs (6*N*D)", f"{t.flops:.3g}"), ("time", _seconds(t.seconds)),
            ("days", f"{t.days:,.1f}"), ("chip-hours", f"{t.chip_hours:,.0f}"),
            ("cost", _num(t.usd, 1, ",.0f", " USD") if t.usd is not None else "n/a"),
            ("energy", "n/a" if t.joules is None else f"{t.joules / 3.6e9:,.1f} MWh (at TDP)"),
            ("memory per chip", f"{t.memory_bytes_per_chip / 1e9:,.1f} GB of "
                                f"{t.hbm_bytes / 1e9:,.1f} GB ({'fits' if t.fits else 'does NOT fit'})")]
    if t.critical_tokens_per_chip is not None:
        rows += [("tokens per chip per step", f"{t.tokens_per_chip:,.0f}"),
                 ("all-reduce dominates below", f"{t.critical_tokens_per_chip:,.0f} tokens/chip"),
                 ("exposed communication", _seconds(t.communication_seconds))]
    rows += [("note", n) for n in t.notes]
    return _pairs(rows)


def _serve(args: argparse.Namespace) -> str:
    from accelkit import inference
    p = inference.prefill(args.model, args.chip, n_chips=args.chips, batch=args.batch,
                          prompt_tokens=args.context, weight_dtype=args.weight_dtype,
                          kv_dtype=args.kv_dtype)
    d = inference.decode_step(args.model, args.chip, n_chips=args.chips, batch=args.batch,
                              context_tokens=args.context, weight_dtype=args.weight_dtype,
                              kv_dtype=args.kv_dtype)
    critical = inference.compute_bound_batch(args.model, args.chip, n_chips=args.chips,
                                             context_tokens=args.context,
                                             weight_dtype=args.weight_dtype,
                                             kv_dtype=args.kv_dtype)
    rows = []
    for r in (p, d):
        rows.append([r.phase, _seconds(r.seconds), r.bound, f"{r.tokens_per_second:,.0f}",
                     _num(r.usd_per_million_tokens, 1, ",.3f"),
                     f"{r.arithmetic_intensity:,.1f}"])
    table = _table(["step", "time", "bound", "tokens/s", "$/M tokens", "FLOPs/byte"], rows)
    extra = _pairs([
        ("model / hardware", f"{d.model} on {d.n_chips} x {d.chip}, batch {d.batch}, "
                             f"context {args.context:,}"),
        ("weights", f"{d.weight_bytes / 1e9:,.1f} GB ({d.weight_dtype})"),
        ("KV cache", f"{d.kv_cache_bytes / 1e9:,.1f} GB ({d.kv_dtype})"),
        ("memory", d.message),
        ("decode turns compute-bound at",
         "never (KV cache grows as fast)" if critical == float("inf")
         else f"batch {critical:,.0f}"),
    ])
    return f"{table}\n\n{extra}"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="accelkit", description=DESCRIPTION, epilog=EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    sub.add_parser("chips", help="the chip catalog as a table").set_defaults(run=_chips)
    sub.add_parser("models", help="the model catalog as a table").set_defaults(run=_models)

    roof = sub.add_parser("roofline", help="roofline time of one matmul on one chip",
                          description="C[M,N] = A[M,K] @ B[K,N] on one chip: compute- or "
                                      "memory-bound?")
    roof.add_argument("--chip", required=True, help="chip name, e.g. v5e, H100")
    for dim in ("m", "n", "k"):
        roof.add_argument(f"--{dim}", type=int, required=True, help=f"matrix size {dim.upper()}")
    roof.add_argument("--dtype", default="bf16", help="precision (default bf16)")
    roof.set_defaults(run=_roofline)

    train = sub.add_parser("train", help="days, chip-hours, dollars for a training run",
                           description="Training time from 6*N*D model FLOPs over chips x peak "
                                       "x MFU, with memory per chip.")
    which = train.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", help="catalog model name (see 'accelkit models')")
    which.add_argument("--params", type=float, help="parameter count instead, e.g. 7e9")
    train.add_argument("--tokens", type=float, required=True, help="training tokens, e.g. 15e12")
    train.add_argument("--chip", required=True, help="chip name")
    train.add_argument("--chips", type=int, default=1, help="number of chips (default 1)")
    train.add_argument("--mfu", type=float, default=0.4, help="model FLOPs utilization in "
                                                              "(0, 1] (default 0.4)")
    train.add_argument("--dtype", default="bf16", help="precision of the peak (default bf16)")
    train.add_argument("--batch-tokens", type=float, default=None,
                       help="global batch in tokens: adds data-parallel all-reduce")
    train.set_defaults(run=_train)

    serve = sub.add_parser("serve", help="prefill and decode time, throughput, cost",
                           description="Serve a language model: prefill the prompt, then one "
                                       "decode step with the KV cache.")
    serve.add_argument("--model", required=True, help="catalog transformer name")
    serve.add_argument("--chip", required=True, help="chip name")
    serve.add_argument("--chips", type=int, default=1, help="chips sharing the model (default 1)")
    serve.add_argument("--batch", type=int, default=1, help="sequences decoded together")
    serve.add_argument("--context", type=int, default=2048, help="prompt/context tokens")
    serve.add_argument("--weight-dtype", default="bf16", help="weight format (default bf16)")
    serve.add_argument("--kv-dtype", default=None,
                       help="KV cache format (default: the weight format, bf16 for 8-bit weights)")
    serve.set_defaults(run=_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 2 bad arguments)."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return int(exc.code or 0)
    try:
        text = args.run(args)
    except (ValueError, TypeError) as exc:
        print(f"accelkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `accelkit chips | head`: the reader left; not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps interpreter exit quiet
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
