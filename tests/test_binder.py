"""The Binder environment, rebuilt from scratch: a pin that breaks Binder breaks CI first.

Two checks, on a temporary copy of the repository's files (what ``git ls-files`` lists, tracked or
new, never ignored build output or the developer's venv):

* ``test_fresh_binder_environment_installs_and_runs`` does what repo2docker's plan does, in a new
  virtual environment: ``pip install -r binder/requirements.txt``, then ``binder/postBuild`` run
  from the copy's root with the venv's ``python`` first on ``PATH``. Nothing is cached between
  runs except pip's own download cache. It then proves the pins resolve to themselves, that every
  ``accelkit`` module imports from the installed (non-editable) package, data files included, and
  that the notebook the Binder badge opens (lessons/00_start_here.ipynb: a first widget, so
  ipywidgets and matplotlib under the pins) executes with the environment's own ``jupyter
  nbconvert``. It runs the other lessons only when they have not already run under exactly these
  versions: when every distribution a kernel imports (ipykernel, the widgets, numpy, matplotlib,
  accelkit's own imports) has the same version in the suite's own environment, the suite's one run of every lesson (tests/test_lessons.py) already ran them
  with the pinned set, and a second run here would prove nothing new; when any of those differs,
  every lesson runs here too. Server-side pins (JupyterLab, notebook, nbgitpuller) follow
  repo2docker's base environment and are checked by tests/test_binder_pins.py instead.
* ``test_repo2docker_picks_binder_and_runs_our_post_build`` asks repo2docker (PyPI's
  ``jupyter-repo2docker``, a test-only dependency) for its build plan without building.
  What was found about the flags: ``--no-build`` stops before anything talks to Docker, and with
  ``--debug`` the generated Dockerfile is printed to stdout (its log, "Building conda environment
  for python=3.11", goes to stderr); ``--no-run`` is implied but stated for clarity. No Docker
  engine is needed (this machine has none). ``--user-id 1000 --user-name jovyan`` is what Binder
  passes; without them, under root, repo2docker plans a root-owned image.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p.name for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))

pytestmark = pytest.mark.deploy


def repository_copy(destination: Path) -> Path:
    """Copy the repository's own files (tracked or new, not ignored) to ``destination``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if not source.is_file():  # deleted in the work tree but not yet in the index
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return destination


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: int) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-6000:]}\n{done.stderr[-4000:]}")
    return done.stdout


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_fresh_binder_environment_installs_and_runs(tmp_path):
    assert LESSONS, "no lessons to run"
    repo = repository_copy(tmp_path / "repo")
    env_dir = tmp_path / "binder-venv"
    venv.create(env_dir, with_pip=True, clear=True)
    bin_dir = env_dir / "bin"
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("VIRTUAL_ENV", "PYTHON", "PIP_", "JUPYTER"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", VIRTUAL_ENV=str(env_dir),
               MPLBACKEND="Agg", PIP_DISABLE_PIP_VERSION_CHECK="1")
    python = str(bin_dir / "python")

    # --no-compile skips writing .pyc files for the thousands of modules JupyterLab brings (the
    # longest step here); Python compiles what it imports anyway, so nothing checked is lost.
    _run([python, "-m", "pip", "install", "-q", "--no-compile", "-r", "binder/requirements.txt"],
         repo, env, 900)
    _run(["bash", "binder/postBuild"], repo, env, 600)

    # The package came from postBuild, not from the copy: a wheel in site-packages with its data,
    # and every module of it imports under the pins.
    where = _run([python, "-c", "import importlib, pkgutil, accelkit, accelkit.chips as c;"
                  " names = [m.name for m in pkgutil.walk_packages(accelkit.__path__, 'accelkit.')];"
                  " [importlib.import_module(n) for n in names];"
                  " print(accelkit.__file__, len(c.names()), len(names))"], repo / "lessons", env, 120).split()
    assert str(env_dir) in where[0] and int(where[1]) > 0 and int(where[2]) > 10, where
    pins = dict(line.split("==") for line in (repo / "binder" / "requirements.txt").read_text()
                .splitlines() if "==" in line and not line.startswith("#"))
    frozen = dict(line.split("==", 1) for line in
                  _run([python, "-m", "pip", "freeze"], repo, env, 60).splitlines() if "==" in line)
    frozen = {_normal(name): version for name, version in frozen.items()}
    for name, version in pins.items():
        assert frozen.get(_normal(name)) == version, f"{name}=={version} is not what got installed"

    # What a lesson runs against is what its kernel process imports: the distributions behind the
    # modules loaded once ipykernel, the widgets and every accelkit module are imported. Server-side
    # packages (JupyterLab, notebook, nbgitpuller) differ by design -- the pins follow repo2docker's
    # base environment -- and cannot change what a cell computes.
    loaded = _run([python, "-c", "import sys, importlib, pkgutil, importlib.metadata as m, ipykernel.kernelapp,"
                   " ipywidgets, matplotlib.pyplot, accelkit;"
                   " [importlib.import_module(n.name) for n in pkgutil.walk_packages(accelkit.__path__, 'accelkit.')];"
                   " d = m.packages_distributions();"
                   " print(' '.join(sorted({x for k in list(sys.modules) for x in d.get(k.split('.')[0], [])})))"],
                  repo / "lessons", env, 120).split()
    kernel_side = {_normal(name) for name in loaded}
    ours = {_normal(d.metadata["Name"]): d.version for d in metadata.distributions()}
    differ = sorted(f"{name} {version} (suite: {ours.get(name)})" for name, version in frozen.items()
                    if name != "accelkit" and name in kernel_side and ours.get(name) != version)
    lessons = LESSONS if differ else ["00_start_here.ipynb"]
    assert "00_start_here.ipynb" in LESSONS
    out = tmp_path / "executed"
    _run([python, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
          "--ExecutePreprocessor.timeout=600", f"--output-dir={out}", *lessons],
         repo / "lessons", env, 1800)
    assert sorted(p.name for p in out.glob("*.ipynb")) == sorted(lessons)
    print(f"Binder venv ran {len(lessons)} lesson(s);",
          f"versions that differ from the suite's: {differ}" if differ else
          "all its kernel-side versions equal the suite's, whose run of every lesson covers the rest")


def test_repo2docker_picks_binder_and_runs_our_post_build(tmp_path):
    repo = repository_copy(tmp_path / "repo")
    done = subprocess.run(
        [sys.executable, "-m", "repo2docker", "--no-build", "--no-run", "--debug",
         "--user-id", "1000", "--user-name", "jovyan", str(repo)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, done.stderr[-4000:]
    plan, log = done.stdout, done.stderr
    assert "FROM " in plan, f"no Dockerfile in repo2docker's output:\n{log[-2000:]}"

    # binder/runtime.txt chose the Python; binder/requirements.txt the pins.
    wanted = (repo / "binder" / "runtime.txt").read_text().strip().removeprefix("python-")
    assert f"python={wanted}" in log, log[-2000:]
    assert re.search(r'pip install [^\n]*-r "?binder/requirements\.txt', plan), plan
    # With binder/ present the repository root's pyproject is ignored: no `pip install .` of its
    # own. Our postBuild is what installs the package, and it runs after the sources are copied.
    assert not re.search(r"pip install[^\n]* \.\s*$", plan, re.MULTILINE), plan
    lines = plan.splitlines()
    post_build = [i for i, line in enumerate(lines) if re.fullmatch(r"RUN \./binder/postBuild", line)]
    copy_sources = [i for i, line in enumerate(lines) if re.match(r"COPY .*src/ \$\{REPO_DIR\}/$", line)]
    assert post_build and copy_sources and copy_sources[0] < post_build[0], plan
    assert re.search(r"pip install[^\n]* \.\s*$", (repo / "binder" / "postBuild").read_text(),
                     re.MULTILINE), "binder/postBuild does not install the package"
