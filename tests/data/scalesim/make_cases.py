"""Regenerate the SCALE-Sim 3.0.0 reference figures in this folder, and check them against the
closed-form formulas of DERIVATION.md.

Run with the SCALE-Sim venv's Python (see README.md), from anywhere:

    .scalesim-venv/bin/python tests/data/scalesim/make_cases.py            # cases.csv
    .scalesim-venv/bin/python tests/data/scalesim/make_cases.py --timings  # timings.csv

Writes cases.csv (150 small GEMMs) or timings.csv (the benchmark configurations) next to this
file. Every SCALE-Sim result is compared with `predict()` below; the script exits 1 if any figure
disagrees, so the CSVs and DERIVATION.md cannot drift apart silently. The set-up and running of a
case lives in benchmarks/scalesim_runner.py, shared with the benchmarks.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from scalesim_runner import DEFAULT_SRAM_KB, run_case_in_process  # noqa: E402

ARRAYS = [(4, 4), (8, 8), (4, 8), (8, 4), (3, 5)]
GEMMS = [(1, 1, 1), (4, 4, 4), (8, 8, 8), (5, 7, 3), (16, 16, 16), (13, 9, 11), (32, 8, 20),
         (8, 32, 5), (20, 3, 17), (64, 64, 64)]
BENCHMARKS = [("os", 32, 32, 256, 256, 256), ("ws", 32, 32, 256, 256, 256),
              ("is", 32, 32, 256, 256, 256), ("os", 128, 128, 1024, 1024, 1024)]

CASE_COLUMNS = ["dataflow", "rows", "cols", "M", "N", "K", "total_cycles_reported",
                "total_cycles_incl_prefetch", "overall_util_pct", "mapping_efficiency_pct",
                "compute_util_pct", "sram_reads_A", "sram_reads_B", "sram_writes_C"]
TIMING_COLUMNS = ["dataflow", "rows", "cols", "M", "N", "K", "total_cycles_reported", "seconds",
                  "date"]


def predict(dataflow: str, rows: int, cols: int, M: int, N: int, K: int,
            sram_kb: int = DEFAULT_SRAM_KB) -> dict:
    """SCALE-Sim 3.0.0's figures for a GEMM in CALC mode, from the formulas in DERIVATION.md.

    `total_cycles_incl_prefetch` is only predicted while A and B fit in the active half of their
    read buffers and C's words fit in half the output SRAM (see DERIVATION.md); otherwise None.
    """
    R, C = rows, cols
    # (array-row extent, array-column extent, streamed length T) and the per-fold length.
    if dataflow == "os":      # C tile stays; A rows -> array rows, B cols -> array cols; K streams
        S_r, S_c, T = M, N, K
        fold_cycles = T + R + C - 2
        util_fold_cycles = fold_cycles
    elif dataflow == "ws":    # B tile stays; K -> array rows, N -> array cols; M streams
        S_r, S_c, T = K, N, M
        fold_cycles = 2 * R + C + T - 2
        util_fold_cycles = 2 * R + 2 * C + T - 3
    elif dataflow == "is":    # A tile stays; K -> array rows, M -> array cols; N streams
        S_r, S_c, T = K, M, N
        fold_cycles = 2 * R + C + T - 2
        util_fold_cycles = 2 * R + 2 * C + T - 3
    else:
        raise ValueError(f"unknown dataflow {dataflow!r}")
    row_folds, col_folds = math.ceil(S_r / R), math.ceil(S_c / C)
    folds = row_folds * col_folds
    total = folds * fold_cycles - 1           # SCALE-Sim reports the index of the last cycle
    mapping = S_r * S_c / (folds * R * C)
    if dataflow == "os":
        reads_A, reads_B = col_folds * M * K, row_folds * K * N
        writes_C = M * N + folds * (R + C)    # includes SCALE-Sim's spurious R + C per fold
        c_words_to_buffer = M * N
    elif dataflow == "ws":
        reads_A, reads_B = col_folds * M * K, K * N
        writes_C = c_words_to_buffer = row_folds * M * N
    else:
        reads_A, reads_B = M * K, col_folds * K * N
        writes_C = c_words_to_buffer = row_folds * M * N

    # In CALC mode the read buffers group distinct words into "sets" of 1% of the SRAM and, when an
    # operand fits in the active half (< 50 sets), fetch it all up front at 10 words/cycle; the
    # output buffer drains at the end, C words a cycle, unless it filled its half mid-run.
    sram_words = 1024 * sram_kb
    set_words = sram_words // 100
    sets = math.ceil(max(M * K, K * N) / set_words) if set_words else 0
    incl_prefetch = None
    if 0 < sets < 50 and max(M * K, K * N) < 50 * set_words and \
            c_words_to_buffer <= sram_words - math.ceil(sram_words / 2):
        initial_fill = math.ceil(sets * set_words / 10)
        incl_prefetch = total + math.ceil(c_words_to_buffer / C) - 1 + initial_fill
    return {
        "total_cycles_reported": total,
        "total_cycles_incl_prefetch": incl_prefetch,
        "overall_util_pct": 100 * M * N * K / (total * R * C),
        "mapping_efficiency_pct": 100 * mapping,
        "compute_util_pct": 100 * mapping * T / util_fold_cycles,
        "sram_reads_A": reads_A,
        "sram_reads_B": reads_B,
        "sram_writes_C": writes_C,
    }


def mismatches(result: dict) -> list[str]:
    """The figures where SCALE-Sim's `result` differs from `predict()` (floats: rel. 1e-9)."""
    expected = predict(result["dataflow"], result["rows"], result["cols"], result["M"],
                       result["N"], result["K"])
    wrong = []
    for key, want in expected.items():
        got = result[key]
        if want is None:
            continue
        same = math.isclose(got, want, rel_tol=1e-9) if isinstance(want, float) else got == want
        if not same:
            wrong.append(f"{key}: SCALE-Sim {got!r}, formula {want!r}")
    return wrong


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _run_and_check(cases: list[tuple]) -> tuple[list[dict], int]:
    results, failures = [], 0
    for number, case in enumerate(cases, 1):
        result = run_case_in_process(*case)
        results.append(result)
        wrong = mismatches(result)
        failures += bool(wrong)
        status = "ok" if not wrong else "MISMATCH " + "; ".join(wrong)
        print(f"[{number}/{len(cases)}] {case} {result['seconds']:.2f} s {status}", flush=True)
    return results, failures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timings", action="store_true",
                        help="time the benchmark configurations into timings.csv instead")
    args = parser.parse_args(argv)

    if args.timings:
        results, failures = _run_and_check(BENCHMARKS)
        today = datetime.date.today().isoformat()
        for result in results:
            result["seconds"] = f"{result['seconds']:.2f}"
            result["date"] = today
        _write_csv(HERE / "timings.csv", TIMING_COLUMNS, results)
    else:
        cases = [(df, r, c, M, N, K) for df in ("os", "ws", "is") for r, c in ARRAYS
                 for M, N, K in GEMMS]
        results, failures = _run_and_check(cases)
        _write_csv(HERE / "cases.csv", CASE_COLUMNS, results)
    print(f"{len(results) - failures}/{len(results)} cases match the formulas of DERIVATION.md")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
