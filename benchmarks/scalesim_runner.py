"""Run one GEMM through SCALE-Sim 3.0.0, the reference systolic-array simulator, and read its reports.

SCALE-Sim is not a dependency of accelkit: it lives in its own virtual environment (it needs
``numpy<2.4``; see ``tests/data/scalesim/README.md``). This module works from either side:

* from any Python, ``run_scalesim(...)`` starts the SCALE-Sim venv's interpreter in a subprocess
  (path from ``ACCELKIT_SCALESIM_PYTHON``, default ``.scalesim-venv/bin/python`` in the repository
  root, where ``tests/data/scalesim/README.md`` makes it) and returns
  a dict, or ``None`` when that interpreter or its ``scalesim`` package is missing;
* inside the SCALE-Sim venv, ``run_case_in_process(...)`` runs the case directly, and this file is
  the subprocess entry point (``python scalesim_runner.py os 32 32 256 256 256`` prints JSON).

``tests/data/scalesim/make_cases.py`` imports this file, so the case set-up exists once.

Every run is a GEMM in ``InterfaceBandwidth: CALC`` mode (reads never stall) with SRAMs large
enough that the output buffer never stalls either: the cycles are pure compute cycles.
Names follow SCALE-Sim's roles: A (M x K) is its "ifmap", B (K x N) its "filter", C (M x N) its
"ofmap"; K is the reduction dimension.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCALESIM_VERSION = "3.0.0"
DEFAULT_SCALESIM_PYTHON = str(Path(__file__).resolve().parents[1] / ".scalesim-venv" / "bin"
                              / "python")
DATAFLOWS = ("os", "ws", "is")

# Each SRAM holds this many kB (1 word = 1 byte in SCALE-Sim). Larger than any operand we run
# (1024 x 1024 = 1 Mi words), so nothing is evicted and nothing stalls. "Total Cycles (incl.
# prefetch)" depends on this size (the initial fill is sized from the SRAM), "Total Cycles" not.
DEFAULT_SRAM_KB = 4096

_CONFIG_TEMPLATE = """\
[general]
run_name = run

[architecture_presets]
ArrayHeight : {rows}
ArrayWidth : {cols}
IfmapSramSzkB : {sram_kb}
FilterSramSzkB : {sram_kb}
OfmapSramSzkB : {sram_kb}
IfmapOffset : 0
FilterOffset : 10000000
OfmapOffset : 20000000
Bandwidth : 10
Dataflow : {dataflow}
ReadRequestBuffer : 32
WriteRequestBuffer : 32

[layout]
IfmapCustomLayout : False
IfmapSRAMBankBandwidth : 10
IfmapSRAMBankNum : 1
IfmapSRAMBankPort : 2
FilterCustomLayout : False
FilterSRAMBankBandwidth : 10
FilterSRAMBankNum : 1
FilterSRAMBankPort : 2

[sparsity]
SparsitySupport : false
SparseRep : ellpack_block
OptimizedMapping : false
BlockSize : 8
RandomNumberGeneratorSeed : 40

[run_presets]
InterfaceBandwidth : CALC
UseRamulatorTrace : False
"""


def _check_case(dataflow: str, rows: int, cols: int, M: int, N: int, K: int) -> None:
    if dataflow not in DATAFLOWS:
        raise ValueError(f"dataflow must be one of {DATAFLOWS}, got {dataflow!r}")
    for name, value in (("rows", rows), ("cols", cols), ("M", M), ("N", N), ("K", K)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def _write_inputs(folder: Path, dataflow: str, rows: int, cols: int, M: int, N: int, K: int,
                  sram_kb: int) -> tuple[Path, Path, Path]:
    """Write the config, GEMM topology and (ignored but required) layout files into `folder`."""
    config = folder / "scalesim.cfg"
    config.write_text(_CONFIG_TEMPLATE.format(rows=rows, cols=cols, sram_kb=sram_kb,
                                              dataflow=dataflow))
    topology = folder / "gemm.csv"
    # SCALE-Sim drops the last comma-separated field, hence the trailing comma on every row.
    topology.write_text(f"Layer Name, M, N, K,\nL0, {M}, {N}, {K},\n")
    layout = folder / "layout.csv"
    layout.write_text("Layer name, unused,\n")
    return config, topology, layout


def _read_report(path: Path) -> dict[str, str]:
    """The single data row of a SCALE-Sim report, keyed by its stripped header names."""
    with path.open(newline="") as handle:
        header, row = list(csv.reader(handle))[:2]
    return {key.strip(): value.strip() for key, value in zip(header, row) if key.strip()}


def run_case_in_process(dataflow: str, rows: int, cols: int, M: int, N: int, K: int,
                        sram_kb: int = DEFAULT_SRAM_KB) -> dict:
    """Run one GEMM in this interpreter, which must have scalesim 3.0.0 installed.

    Returns a dict with the case, SCALE-Sim's compute-report and SRAM-access figures, and
    ``seconds``: wall time of SCALE-Sim's set-up and run (its reports included, imports not).
    Raises RuntimeError if SCALE-Sim reports stall cycles (the case set-up should prevent them).
    """
    _check_case(dataflow, rows, cols, M, N, K)
    from scalesim.scale_sim import scalesim  # only importable inside the SCALE-Sim venv

    with tempfile.TemporaryDirectory(prefix="accelkit-scalesim-") as tmp:
        folder = Path(tmp)
        config, topology, layout = _write_inputs(folder, dataflow, rows, cols, M, N, K, sram_kb)
        chatter = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            sim = scalesim(save_disk_space=True, verbose=False, config=str(config),
                           topology=str(topology), layout=str(layout), input_type_gemm=True)
            sim.run_scale(top_path=str(folder / "out"))
        seconds = time.perf_counter() - started
        reports = folder / "out" / "run"
        compute = _read_report(reports / "COMPUTE_REPORT.csv")
        access = _read_report(reports / "DETAILED_ACCESS_REPORT.csv")

    stall_cycles = int(float(compute["Stall Cycles"]))
    if stall_cycles != 0:
        raise RuntimeError(f"SCALE-Sim stalled {stall_cycles} cycles on {dataflow} {rows}x{cols} "
                           f"M={M} N={N} K={K}; raise sram_kb")
    return {
        "dataflow": dataflow, "rows": rows, "cols": cols, "M": M, "N": N, "K": K,
        "total_cycles_reported": int(float(compute["Total Cycles"])),
        "total_cycles_incl_prefetch": int(float(compute["Total Cycles (incl. prefetch)"])),
        "overall_util_pct": float(compute["Overall Util %"]),
        "mapping_efficiency_pct": float(compute["Mapping Efficiency %"]),
        "compute_util_pct": float(compute["Compute Util %"]),
        "sram_reads_A": int(float(access["SRAM IFMAP Reads"])),
        "sram_reads_B": int(float(access["SRAM Filter Reads"])),
        "sram_writes_C": int(float(access["SRAM OFMAP Writes"])),
        "seconds": seconds,
    }


def scalesim_python() -> str:
    """Path of the interpreter that has SCALE-Sim installed."""
    return os.environ.get("ACCELKIT_SCALESIM_PYTHON", DEFAULT_SCALESIM_PYTHON)


def run_scalesim(dataflow: str, rows: int, cols: int, M: int, N: int, K: int,
                 sram_kb: int = DEFAULT_SRAM_KB, timeout_seconds: float = 600.0) -> dict | None:
    """Run one GEMM through SCALE-Sim in a subprocess of the SCALE-Sim venv's Python.

    Args:
        dataflow: "os", "ws" or "is". rows, cols: array size. M, N, K: A is MxK, B is KxN.
        sram_kb: size of each of the three SRAMs. timeout_seconds: limit for the subprocess.
    Returns:
        The dict of ``run_case_in_process`` (cycles, utilisations, SRAM reads/writes and
        ``seconds``, SCALE-Sim's own run time) plus ``subprocess_seconds`` (wall time including
        interpreter start and imports); or None when the SCALE-Sim Python or its scalesim
        package is not available.
    Raises:
        ValueError for a malformed case; RuntimeError if SCALE-Sim itself fails on it.
    """
    _check_case(dataflow, rows, cols, M, N, K)
    python = scalesim_python()
    if not Path(python).exists():
        return None
    command = [python, str(Path(__file__).resolve()), dataflow, str(rows), str(cols),
               str(M), str(N), str(K), "--sram-kb", str(sram_kb)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_seconds)
    subprocess_seconds = time.perf_counter() - started
    if done.returncode == _NO_SCALESIM_EXIT:
        return None
    if done.returncode != 0:
        raise RuntimeError(f"SCALE-Sim failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["subprocess_seconds"] = subprocess_seconds
    return result


# The subprocess exits with this code when it cannot import scalesim, so the caller returns None.
_NO_SCALESIM_EXIT = 3


def _main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Run one GEMM through SCALE-Sim; print JSON.")
    parser.add_argument("dataflow", choices=DATAFLOWS)
    for name in ("rows", "cols", "M", "N", "K"):
        parser.add_argument(name, type=int)
    parser.add_argument("--sram-kb", type=int, default=DEFAULT_SRAM_KB)
    args = parser.parse_args(argv)
    try:
        import scalesim  # noqa: F401  (presence check only)
    except ImportError:
        print("scalesim is not installed in this Python", file=sys.stderr)
        return _NO_SCALESIM_EXIT
    result = run_case_in_process(args.dataflow, args.rows, args.cols, args.M, args.N, args.K,
                                 sram_kb=args.sram_kb)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
