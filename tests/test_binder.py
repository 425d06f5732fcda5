"""The Binder environment, rebuilt from scratch: a pin that breaks Binder breaks CI first.

Two checks, on a temporary copy of the repository's files (what ``git ls-files`` lists, tracked or
new, never ignored build output or the developer's venv):

* ``test_fresh_binder_environment_runs_every_lesson`` does what repo2docker's plan does, in a new
  virtual environment: ``pip install -r binder/requirements.txt``, then ``binder/postBuild`` run
  from the copy's root with the venv's ``python`` first on ``PATH``; it then adds pytest and nbval
  and runs every lesson under ``nbval --nbval-lax``. Nothing is cached between runs except pip's
  own download cache. The lessons' kernels run in ``lessons/``, so they import the installed
  (non-editable) package, data files included, as on Binder.
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
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p.name for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))

pytestmark = pytest.mark.slow


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


def test_fresh_binder_environment_runs_every_lesson(tmp_path):
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

    _run([python, "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"], repo, env, 900)
    _run(["bash", "binder/postBuild"], repo, env, 600)
    _run([python, "-m", "pip", "install", "-q", "pytest>=8", "nbval>=0.11"], repo, env, 600)

    # The package came from postBuild, not from the copy: a wheel in site-packages with its data.
    where = _run([python, "-c", "import accelkit, accelkit.chips as c; print(accelkit.__file__);"
                  " print(len(c.names()))"], repo / "lessons", env, 60).split()
    assert str(env_dir) in where[0] and int(where[1]) > 0, where
    pins = dict(line.split("==") for line in (repo / "binder" / "requirements.txt").read_text()
                .splitlines() if "==" in line and not line.startswith("#"))
    frozen = _run([python, "-m", "pip", "freeze"], repo, env, 60).lower()
    for name, version in pins.items():
        assert f"{name.lower()}=={version}" in frozen, f"{name}=={version} is not what got installed"

    report = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
                   "--nbval-current-env", "-o", "addopts=", "-o", "testpaths=", "lessons"],
                  repo, env, 900)
    assert re.search(r"\b\d+ passed\b", report) and " failed" not in report, report[-2000:]
    print(report.strip().splitlines()[-1])


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
