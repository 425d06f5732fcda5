"""Measure what a hub must reserve per learner: each notebook's kernel memory and a server's.

Run: ``python benchmarks/kernel_memory.py`` (about a minute on 2 cores). It writes
``docs/hub/measured_memory.json``, which ``docs/make_plans.py`` and ``tests/test_hub_recipe.py``
read (the hub's memory guarantee and limit in ``docs/hub/config.yaml`` are checked against it).

What is measured, and how:

* **kernel**: every lesson and exercise notebook is executed top to bottom in a fresh ipykernel
  (nbclient, this environment's ``python3`` kernel); a last cell appended to the copy reads the
  kernel's own peak resident set (``getrusage(RUSAGE_SELF).ru_maxrss``, the kernel process's
  high-water mark) and current resident set (``VmRSS`` in ``/proc/self/status``). The current
  figure is what a kernel left running keeps holding; the peak is what it needed at worst.
  An idle kernel (nothing run) is measured the same way, as the floor.
* **server**: a JupyterLab server (``python -m jupyterlab``, what the single-user image runs,
  with every installed server extension, nbgitpuller included) is started on 127.0.0.1; the
  script loads ``/lab``, lists the lessons and reads the settings a browser reads, then takes
  the server process's ``VmHWM`` and ``VmRSS`` from ``/proc/<pid>/status``. Kernels are
  separate processes and are not included in the server's figure.

Resident set is the memory Kubernetes' limit is enforced against (cgroup memory counts resident
pages plus page cache); shared library pages are counted in every process, so the sum over
processes overstates the true total a little, which errs on the safe side for a limit.
"""

from __future__ import annotations

import copy
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from tests.notebook_runner import execute, load  # noqa: E402

OUTPUT = ROOT / "docs" / "hub" / "measured_memory.json"
PROBE = ("import resource as _r\n"
         "_rss = [l for l in open('/proc/self/status') if l.startswith('VmRSS:')][0].split()[1]\n"
         "print('MEMORY', _r.getrusage(_r.RUSAGE_SELF).ru_maxrss, _rss)")


def _kernel_memory(notebook: nbformat.NotebookNode, cwd: Path) -> tuple[float, float]:
    """(peak MB, current MB) of a fresh kernel after running ``notebook``'s cells."""
    notebook = copy.deepcopy(notebook)
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
    done = execute(notebook, cwd, timeout=300)
    text = "".join(o.get("text", "") for o in done.cells[-1].outputs if o.output_type == "stream")
    _, peak_kb, rss_kb = text.split()
    return int(peak_kb) / 1024, int(rss_kb) / 1024


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


def _server_memory(workdir: Path) -> tuple[float, float]:
    port, token = _free_port(), "measure"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(workdir / "config"),
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


def measure() -> dict:
    import tempfile

    rows = []
    paths = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")) + \
        sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))
    idle_peak, idle_rss = _kernel_memory(nbformat.v4.new_notebook(), ROOT / "lessons")
    for path in paths:
        peak, rss = _kernel_memory(load(path), path.parent)
        rows.append({"notebook": str(path.relative_to(ROOT)), "kernel_peak_mb": round(peak),
                     "kernel_rss_mb": round(rss)})
        print(f"{rows[-1]['notebook']:<44}{rows[-1]['kernel_peak_mb']:>8}{rows[-1]['kernel_rss_mb']:>8}",
              flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        server_peak, server_rss = _server_memory(Path(tmp))
    return {
        "measured_on": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "command": "python benchmarks/kernel_memory.py",
        "idle_kernel_peak_mb": round(idle_peak), "idle_kernel_rss_mb": round(idle_rss),
        "server_peak_mb": round(server_peak), "server_rss_mb": round(server_rss),
        "notebooks": rows,
    }


def main() -> None:
    print(f"{'notebook':<44}{'peak MB':>8}{'RSS MB':>8}")
    result = measure()
    print(f"idle kernel: peak {result['idle_kernel_peak_mb']} MB, RSS {result['idle_kernel_rss_mb']} MB")
    print(f"JupyterLab server: peak {result['server_peak_mb']} MB, RSS {result['server_rss_mb']} MB")
    if "--no-write" not in sys.argv:
        OUTPUT.parent.mkdir(parents=True, exist_ok=True)
        OUTPUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
