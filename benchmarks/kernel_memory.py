"""Measure what a hub must reserve per learner: each notebook's kernel memory and a server's.

Run: ``python benchmarks/kernel_memory.py`` (about 40 s on 2 cores: two notebooks at a time).
It writes ``docs/hub/measured_memory.json``, which ``docs/make_plans.py``,
``docs/hub/make_sizing.py`` and ``tests/test_hub_recipe.py`` read (the hub's memory guarantee
and limit in ``docs/hub/config.yaml`` are checked against it). Options: ``--no-write`` (print
only), ``--out PATH`` (write there instead), ``--keep DIR`` (also keep every executed notebook,
outputs and widget state included, in DIR: ``publish/build.py`` builds the book and the slides
from them, so the course's published material comes from the very run that was measured),
``--workers N`` (notebooks run at once; default 2).

The deploy tier re-takes the measurement (tests/test_hub_memory.py, through ``publish/build.py``)
and fails when the recorded figures are stale: see :func:`stale` for the tolerance and why.

What is measured, and how:

* **kernel**: every lesson and exercise notebook is executed top to bottom in a fresh ipykernel
  (nbclient, this environment's ``python3`` kernel); a last cell appended to the copy reads the
  kernel's own peak resident set (``VmHWM`` in ``/proc/self/status``, the kernel process's
  high-water mark since it started) and current resident set (``VmRSS``). The current
  figure is what a kernel left running keeps holding; the peak is what it needed at worst.
  An idle kernel (nothing run) is measured the same way, as the floor. Kernels run two at a
  time by default: a process's own peak resident set does not depend on what else runs.
* **server**: a JupyterLab server (``python -m jupyterlab``, what the single-user image runs,
  with the server extensions the image has, nbgitpuller included, and no others:
  :data:`IMAGE_SERVER_EXTENSIONS`) is started on 127.0.0.1; the
  script loads ``/lab``, lists the lessons and reads the settings a browser reads, then takes
  the server process's ``VmHWM`` and ``VmRSS`` from ``/proc/<pid>/status``. Kernels are
  separate processes and are not included in the server's figure.

Resident set is the memory Kubernetes' limit is enforced against (cgroup memory counts resident
pages plus page cache); shared library pages are counted in every process, so the sum over
processes overstates the true total a little, which errs on the safe side for a limit.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

from tests.notebook_runner import load  # noqa: E402

OUTPUT = ROOT / "docs" / "hub" / "measured_memory.json"
COMMAND = "python benchmarks/kernel_memory.py"
#: Reads the kernel's own peak and current resident set from /proc/self/status (VmHWM, VmRSS).
#: Not ``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries that high-water mark across fork and
#: exec, so a kernel started by a large process (a pytest session, a Jupyter server) would report
#: its parent's size as its own peak (under pytest an idle kernel "peaked" at 131 MiB that way,
#: against 50 MiB of its own).
PROBE = ("_status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
         "print('MEMORY', _status['VmHWM'].split()[0], _status['VmRSS'].split()[0])")

#: How far a re-measured figure may be from the recorded one before the record counts as stale:
#: 10% of the recorded figure, and never less than 8 MiB. Why: on one machine two runs of a
#: notebook peak within 1-3 MiB of each other (allocator and import-order noise), so 8 MiB is
#: well clear of noise; 10% is the margin the hub's sizing can absorb (config.yaml's guarantee
#: and limit are allowed up to 1.5x what the figures need, and are checked to be at least that).
#: Today's drift (lesson 07 from 103 to 166 MiB, lesson 09 from 171 to 191 MiB) is beyond both.
#: Both directions count: a figure far above the truth wastes the cluster's memory, one below it
#: gets kernels killed.
STALE_FRACTION = 0.10
STALE_FLOOR_MB = 8


def notebooks() -> list[Path]:
    return sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")) + \
        sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))


def _kernel_memory(notebook: nbformat.NotebookNode, cwd: Path,
                   keep: Path | None = None) -> tuple[float, float, float]:
    """(peak MB, current MB, seconds) of a fresh kernel after running ``notebook``'s cells.

    With ``keep``, the executed notebook (without the probe cell, with the widget state that
    nbclient records) is written there."""
    notebook = copy.deepcopy(notebook)
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
    started = time.perf_counter()
    NotebookClient(notebook, timeout=300, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(cwd)}}).execute()
    seconds = time.perf_counter() - started
    probe = notebook.cells.pop()
    text = "".join(o.get("text", "") for o in probe.outputs if o.output_type == "stream")
    _, peak_kb, rss_kb = text.split()
    if keep is not None:
        keep.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, keep)
    return int(peak_kb) / 1024, int(rss_kb) / 1024, seconds


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status_mb(pid: int) -> tuple[float, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.split()
    return int(fields["VmHWM"][0]) / 1024, int(fields["VmRSS"][0]) / 1024


#: Server extensions the course's image has (binder/requirements.txt: JupyterLab, the notebook
#: interface and nbgitpuller, and what they bring). Others installed here (the deploy extra's
#: nbgrader) are switched off for the measurement: they are not on the hub.
IMAGE_SERVER_EXTENSIONS = {"jupyterlab", "jupyter_lsp", "jupyter_server_terminals", "nbgitpuller",
                           "notebook", "notebook_shim"}


def _installed_server_extensions() -> set[str]:
    """The server extensions this environment enables (its jupyter_server_config.d files)."""
    names: set[str] = set()
    for path in (Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d").glob("*.json"):
        config = json.loads(path.read_text(encoding="utf-8"))
        names |= set(config.get("ServerApp", {}).get("jpserver_extensions", {}))
    return names


def _server_memory(workdir: Path) -> tuple[float, float]:
    port, token = _free_port(), "measure"
    config = workdir / "config"
    config.mkdir(parents=True, exist_ok=True)
    off = {name: False for name in _installed_server_extensions() - IMAGE_SERVER_EXTENSIONS}
    (config / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": off}}), encoding="utf-8")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config),
           "JUPYTER_RUNTIME_DIR": str(workdir / "runtime")}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError("the JupyterLab server did not start in 60 s")
        for path in ("/lab", "/api/contents/lessons", "/lab/api/settings", "/api/kernelspecs",
                     "/lab/api/translations"):
            urllib.request.urlopen(f"{base}{path}?token={token}", timeout=30).read()
        time.sleep(1)
        return _status_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)


def measure(keep: Path | None = None, workers: int = 2, progress: bool = True) -> dict:
    """Every notebook's kernel peak and current memory, an idle kernel's, and a server's."""
    paths = notebooks()

    def one(path: Path) -> dict:
        relative = path.relative_to(ROOT)
        peak, rss, seconds = _kernel_memory(load(path), path.parent,
                                            keep / relative if keep is not None else None)
        row = {"notebook": str(relative), "kernel_peak_mb": round(peak), "kernel_rss_mb": round(rss)}
        if progress:
            print(f"{row['notebook']:<44}{row['kernel_peak_mb']:>8}{row['kernel_rss_mb']:>8}"
                  f"{seconds:>8.1f}", flush=True)
        return row

    with ThreadPoolExecutor(max(1, workers)) as pool:
        server = pool.submit(lambda: _server_memory(Path(tempfile.mkdtemp(prefix="accelkit-mem-"))))
        idle = pool.submit(_kernel_memory, nbformat.v4.new_notebook(), ROOT / "lessons")
        rows = list(pool.map(one, paths))
        server_peak, server_rss = server.result()
        idle_peak, idle_rss, _ = idle.result()
    return {
        "measured_on": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "command": COMMAND,
        "idle_kernel_peak_mb": round(idle_peak), "idle_kernel_rss_mb": round(idle_rss),
        "server_peak_mb": round(server_peak), "server_rss_mb": round(server_rss),
        "notebooks": rows,
    }


def stale(recorded: dict, measured: dict) -> list[str]:
    """Why ``recorded`` (measured_memory.json) no longer describes ``measured``: each peak that
    moved past the tolerance (:data:`STALE_FRACTION`, :data:`STALE_FLOOR_MB`), and each notebook
    measured in one and not the other. Empty when the record is current."""
    def far(old: float, new: float) -> bool:
        return abs(new - old) > max(STALE_FRACTION * old, STALE_FLOOR_MB)

    problems = []
    for key in ("server_peak_mb", "idle_kernel_peak_mb"):
        if far(recorded[key], measured[key]):
            problems.append(f"{key}: recorded {recorded[key]} MiB, measured {measured[key]} MiB")
    old = {r["notebook"]: r["kernel_peak_mb"] for r in recorded["notebooks"]}
    new = {r["notebook"]: r["kernel_peak_mb"] for r in measured["notebooks"]}
    for name in sorted(old.keys() | new.keys()):
        if name not in old or name not in new:
            problems.append(f"{name}: measured in only one of the record and the new run")
        elif far(old[name], new[name]):
            problems.append(f"{name}: kernel peak recorded {old[name]} MiB, measured {new[name]} MiB")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-write", action="store_true", help="print the figures only")
    parser.add_argument("--out", type=Path, default=OUTPUT, help="where to write the JSON")
    parser.add_argument("--keep", type=Path, help="keep the executed notebooks in this folder")
    parser.add_argument("--workers", type=int, default=2, help="notebooks run at once")
    args = parser.parse_args()
    print(f"{'notebook':<44}{'peak MB':>8}{'RSS MB':>8}{'run s':>8}")
    result = measure(keep=args.keep, workers=args.workers)
    print(f"idle kernel: peak {result['idle_kernel_peak_mb']} MB, RSS {result['idle_kernel_rss_mb']} MB")
    print(f"JupyterLab server: peak {result['server_peak_mb']} MB, RSS {result['server_rss_mb']} MB")
    if not args.no_write:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
