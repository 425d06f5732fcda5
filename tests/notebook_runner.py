"""Run notebooks in fresh kernels, two or more at a time, inside a network namespace on request.

Every end-to-end notebook execution of the suite goes through :func:`run_batch`, so each notebook
runs as few times as the checks need (tests/conftest.py says which batches there are):

* ``run_batch(jobs, workdir)`` writes the jobs to ``workdir/jobs.json`` and runs this module as a
  script (``python -m tests.notebook_runner workdir/jobs.json``). The script executes every job,
  as many at a time as the machine has cores (at least two, at most four: :data:`WORKERS`), and
  writes each executed notebook, outputs included, next to the job file. A job runs one of two
  ways (``Job.runner``):

  - ``"nbval"`` (the lessons): the script starts ``python -m pytest --nbval-lax
    --nbval-current-env -p tests.nbval_capture NOTEBOOK``, a real nbval pass over that notebook:
    one pytest item per code cell, run in order in one kernel, each failing if its cell raises.
    The plugin tests/nbval_capture.py writes the outputs nbval collected and its verdict on each
    code cell (``cell.metadata["nbval"]``) into the executed notebook. nbval goes on past a
    failing cell, so every failing cell is reported, not only the first.
  - ``"nbclient"`` (the exercise notebooks, whose checks read what the cells print): nbclient
    executes the notebook and stops at its first failing cell.

* ``run_batch(jobs, workdir, offline=True)`` (the deploy tier's tests/test_offline.py) runs the
  same script in a new network namespace made with ``unshare --net`` (see
  :func:`namespace_command`), where it first checks the premise (an outbound TCP connection and a
  DNS lookup fail, a loopback connection works). The kernels are descendants of the script, so
  they are in the namespace too: a lesson that reached the network would fail there. Where a
  namespace cannot be made (not root, no ``ip``), the script runs without one and :class:`Batch`
  records why; tests/test_offline.py then skips (outside CI) or fails (under CI).

A job that fails has its error recorded in ``Batch.errors``, not raised, so one broken notebook
does not hide the others; :func:`nbval_failures` lists the cells nbval failed.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
EXERCISES = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))

PREMISE = textwrap.dedent("""
    import socket
    # An outbound connection (a public address: a well-known resolver) must fail.
    s = socket.socket(); s.settimeout(5)
    try:
        s.connect(("1.1.1.1", 443))
    except OSError as error:
        print("outbound refused:", error)
    else:
        raise SystemExit("outbound connection succeeded: the namespace has a network")
    try:
        socket.getaddrinfo("pypi.org", 443)
    except OSError as error:
        print("DNS refused:", error)
    else:
        raise SystemExit("DNS lookup succeeded: the namespace has a network")
    # Loopback, which kernels need, works.
    server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
    client = socket.create_connection(server.getsockname(), timeout=5)
    print("loopback ok")
""")

# Things that legitimately differ between two runs of the same notebook.
_MASKS = [
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0x…"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<model id>"),  # ipywidgets model ids
    (re.compile(r"(Wall time|CPU times): [^\n]*"), r"\1: …"),
]


def load(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def execute(notebook: nbformat.NotebookNode, cwd: Path, timeout: int = 300,
            env: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """Execute a copy of ``notebook`` with the current environment's kernel; return it.

    Raises nbclient's ``CellExecutionError`` at the first failing cell."""
    notebook = copy.deepcopy(notebook)
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}})
    # jupyter_client's local provisioner reads env as a mapping: pass it only when given.
    client.execute(**({} if env is None else {"env": env}))
    return notebook


def _shown(cell: nbformat.NotebookNode, mimetypes: tuple[str, ...]) -> str:
    """All one code cell showed as text: streams, errors, and results in ``mimetypes``, joined
    (the kernel may deliver one cell's printing as one stream message or several, depending on
    when stdout was flushed)."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type == "error":
            parts.append(f"ERROR {output.ename}: {output.evalue}\n")
        else:
            data = output.get("data", {})
            parts.extend(str(data[k]) + "\n" for k in mimetypes if k in data)
    return "".join(parts)


def outputs_text(notebook: nbformat.NotebookNode) -> list[str]:
    """Per code cell, everything it printed or returned as plain text, joined."""
    return [_shown(cell, ("text/plain",)) for cell in notebook.cells if cell.cell_type == "code"]


def comparable_texts(notebook: nbformat.NotebookNode) -> list[str]:
    """Per code cell, all it showed as text (streams, errors, plain-text, HTML and markdown
    results), with what legitimately differs between runs masked, labelled with the cell's
    index. Pictures are left out: the numbers they show are in the text beside them."""
    texts = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        text = _shown(cell, ("text/plain", "text/html", "text/markdown"))
        for pattern, replacement in _MASKS:
            text = pattern.sub(replacement, text)
        texts.append(f"[cell {index}] {text}")
    return texts


def tags(cell: nbformat.NotebookNode) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


# -- running a batch, in a network namespace when possible ---------------------------------------

def namespace_command(*command: str) -> list[str]:
    """``command`` in a new network namespace whose only interface is loopback, brought up
    because Jupyter kernels talk to their client over 127.0.0.1. No route leads anywhere else, so
    reaching the internet fails at once ("Network is unreachable"): the kernel's guarantee, not a
    monkey-patched socket module that a subprocess or C extension could bypass."""
    inner = "ip link set lo up && exec " + " ".join(f"'{part}'" for part in command)
    return ["unshare", "--net", "sh", "-c", inner]


def why_no_namespace() -> str | None:
    """None when a network namespace can be made here, else the reason (it needs root)."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare or ip is not installed"
    probe = subprocess.run(namespace_command("true"), capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot make a network namespace here: {probe.stderr.strip()}"
    return None


@dataclass(frozen=True)
class Job:
    name: str  # unique in its batch; names the output file
    notebook: Path  # the notebook file to execute
    cwd: Path  # the kernel's working directory
    hash_seed: str = "1"  # PYTHONHASHSEED of the kernel
    runner: str = "nbclient"  # or "nbval": a pytest --nbval-lax pass (see the module docstring)


@dataclass
class Batch:
    """What one :func:`run_batch` call did."""
    notebooks: dict[str, nbformat.NotebookNode]  # by job name, executed (up to a failing cell)
    errors: dict[str, str]  # by job name, for the jobs that raised
    offline: bool  # ran inside a network namespace whose premise held
    not_offline_because: str | None = None
    premise: str = ""
    log: str = field(default="", repr=False)


def run_batch(jobs: list[Job], workdir: Path, offline: bool = False, timeout: int = 1800) -> Batch:
    """Execute ``jobs`` in one subprocess (in a network namespace when ``offline`` and possible)."""
    workdir.mkdir(parents=True, exist_ok=True)
    assert len({job.name for job in jobs}) == len(jobs), "job names must be unique"
    for job in jobs:
        if job.runner not in ("nbclient", "nbval"):
            raise ValueError(f"Job.runner must be 'nbclient' or 'nbval', got {job.runner!r}")
        if job.runner == "nbval" and Path(job.cwd).resolve() != Path(job.notebook).resolve().parent:
            raise ValueError(f"{job.name}: nbval runs a kernel in its notebook's folder, so "
                             f"Job.cwd must be {Path(job.notebook).parent}, got {job.cwd}")
    job_file = workdir / "jobs.json"
    job_file.write_text(json.dumps([{"name": j.name, "notebook": str(j.notebook), "cwd": str(j.cwd),
                                     "hash_seed": j.hash_seed, "runner": j.runner} for j in jobs]))
    script = [sys.executable, "-m", "tests.notebook_runner", str(job_file)]
    reason = why_no_namespace() if offline else "not asked to run offline"
    command = script if reason else namespace_command(*script, "--premise")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    log = done.stdout[-6000:] + done.stderr[-6000:]
    result_file = workdir / "results.json"
    if not result_file.exists():
        raise RuntimeError(f"the notebook runner wrote no results ({done.returncode}):\n{log}")
    results = json.loads(result_file.read_text())
    premise_held = results["premise_ok"] is True
    if not reason and not premise_held:
        reason = "the namespace's premise failed: " + results["premise"]
    notebooks = {job.name: load(workdir / f"{job.name}.ipynb") for job in jobs}
    return Batch(notebooks=notebooks, errors=results["errors"], offline=reason is None,
                 not_offline_because=reason, premise=results["premise"], log=log)


CELL_TIMEOUT = 300  # seconds one cell may run, under either runner
#: Notebooks run at once: one per core (each is a kernel busy computing), at least two (a kernel
#: waits on its client now and then), and at most four (each holds a kernel's memory).
WORKERS = max(2, min(4, os.cpu_count() or 2))
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def nbval_command(notebook: Path, destination: Path) -> list[str]:
    """The nbval pass over one notebook that writes what it saw to ``destination``. Run it with
    ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` (as :func:`_run_nbval` does): it names the two plugins it
    needs, nbval's and the capture, and skips the installed ones it does not (hypothesis,
    anyio, playwright), which cost about 2 s of CPU per start."""
    return [sys.executable, "-m", "pytest", "-q", "--color=no", "-p", "no:cacheprovider",
            "-p", "nbval.plugin", "-p", "tests.nbval_capture",
            "--nbval-lax", "--nbval-current-env", f"--nbval-cell-timeout={CELL_TIMEOUT}",
            "--nbval-capture-to", str(destination), str(notebook)]


def _run_nbval(notebook: Path, destination: Path, env: dict[str, str]) -> str | None:
    """Run :func:`nbval_command` (from the repository root, so ``tests.nbval_capture`` imports);
    return None when nbval passed every cell, else what failed."""
    try:
        done = subprocess.run(nbval_command(notebook, destination), cwd=ROOT,
                              env={**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
                              capture_output=True, text=True, timeout=3 * CELL_TIMEOUT + 600)
        tail = _ANSI.sub("", done.stdout + done.stderr)[-3000:]
        code = done.returncode
    except subprocess.TimeoutExpired as expired:
        tail, code = f"the nbval pass ran past {expired.timeout} s", None
    if not destination.exists():  # pytest never got to write it: keep the notebook, unrun
        nbformat.write(load(notebook), destination)
        return f"nbval wrote no notebook (pytest exit {code}):\n{tail}"
    failed = nbval_failures(load(destination))
    if code == 0 and not failed:
        return None
    return (f"nbval (pytest exit {code}) failed:\n" + "\n".join(failed))[-6000:] + \
        f"\n--- pytest said:\n{tail}"


def nbval_failures(notebook: nbformat.NotebookNode) -> list[str]:
    """What nbval did not pass in an executed notebook written by tests/nbval_capture.py: each
    code cell it failed, skipped or never reached, named by nbval's test id and the cell's index
    in the notebook, with pytest's report; and each collection error. Empty when every code cell
    passed."""
    problems = list(notebook.metadata.get("nbval_collection_errors", []))
    code_num = 0
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        verdict = cell.metadata.get("nbval")
        if verdict is None:
            problems.append(f"code cell {code_num} (notebook cell {index}): nbval did not run it")
        elif verdict["outcome"] != "passed":
            problems.append(f"{verdict['nodeid']} (notebook cell {index}) {verdict['outcome']} "
                            f"in {verdict['phase']}:\n{verdict.get('report', '')}")
        code_num += 1
    return problems


def _run_jobs(job_file: Path, check_premise: bool) -> None:
    """The script side of :func:`run_batch`."""
    premise, premise_ok = "", None
    if check_premise:
        done = subprocess.run([sys.executable, "-c", PREMISE], capture_output=True, text=True,
                              timeout=60)
        premise, premise_ok = done.stdout + done.stderr, done.returncode == 0
    jobs = json.loads(job_file.read_text())
    errors: dict[str, str] = {}

    def one(job: dict) -> None:
        env = {**os.environ, "PYTHONHASHSEED": job["hash_seed"], "MPLBACKEND": "Agg"}
        destination = job_file.parent / f"{job['name']}.ipynb"
        if job["runner"] == "nbval":
            error = _run_nbval(Path(job["notebook"]), destination, env)
            if error:
                errors[job["name"]] = error
            return
        notebook = load(Path(job["notebook"]))
        try:
            NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name="python3",
                           resources={"metadata": {"path": job["cwd"]}}).execute(env=env)
        except Exception as error:  # recorded for the test to report, with the failing cell
            text = _ANSI.sub("", str(error))  # no terminal colours
            errors[job["name"]] = f"{type(error).__name__}: {text[-3000:]}"
        nbformat.write(notebook, destination)

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        list(pool.map(one, jobs))
    (job_file.parent / "results.json").write_text(json.dumps(
        {"premise": premise, "premise_ok": premise_ok, "errors": errors}))


if __name__ == "__main__":
    _run_jobs(Path(sys.argv[1]), check_premise="--premise" in sys.argv[2:])
