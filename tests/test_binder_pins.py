"""binder/requirements.txt agrees with repo2docker's base environment (pip resolution, no Docker).

repo2docker builds a conda "base environment" first (its own JupyterLab, notebook, JupyterHub
single-user server...), then ``pip install -r binder/requirements.txt`` on top. pip does not
re-check packages it was not asked about, so a pin that the base environment's ``notebook``
cannot live with (``jupyterlab==4.6.6`` against notebook 7.4.x's ``jupyterlab<4.5``) installs
with a warning and a broken ``notebook``. Here pip resolves our pins together with the base
environment's top-level packages at the versions repo2docker's lock file freezes, for the Python
of binder/runtime.txt on linux x86_64; the installed jupyter-repo2docker package supplies the
lock file (``buildpacks/conda/environment.py-3.11-linux-64.lock``). Registries only: PyPI is
asked for metadata (``pip install --dry-run``); nothing is built or installed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.notebook_runner import ROOT

pytestmark = pytest.mark.deploy

# conda-forge names of repo2docker's top-level base packages that are named differently on PyPI.
PYPI_NAME = {"jupyterhub-singleuser": "jupyterhub"}
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64", "linux_x86_64")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def base_environment() -> dict[str, str]:
    """repo2docker's top-level base packages (PyPI names) and the versions its lock freezes."""
    repo2docker = pytest.importorskip("repo2docker")
    python = (ROOT / "binder" / "runtime.txt").read_text().strip().removeprefix("python-")
    conda = Path(repo2docker.__file__).parent / "buildpacks" / "conda"
    wanted = re.findall(r"^- ([\w.-]+)==", (conda / f"environment.py-{python}.yml").read_text(), re.MULTILINE)
    lock = (conda / f"environment.py-{python}-linux-64.lock").read_text()
    pins = {}
    for name in wanted:
        found = re.search(rf"/{re.escape(name)}-(\d[\w.]*)-[^/-]+\.(?:conda|tar\.bz2)", lock)
        assert found, f"{name} not in repo2docker's lock file"
        pins[_normal(PYPI_NAME.get(name, name))] = found.group(1)
    return pins


def our_pins(text: str) -> dict[str, str]:
    return {_normal(name): version for name, version in
            re.findall(r"^([\w.-]+)==([\w.]+)", text, re.MULTILINE)}


def resolve(requirements: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """pip's resolution of ``requirements`` plus the base environment's other top-level pins."""
    ours = our_pins(requirements)
    base = {name: version for name, version in base_environment().items() if name not in ours}
    (tmp_path / "requirements.txt").write_text(
        requirements + "".join(f"\n{name}=={version}" for name, version in base.items()) + "\n")
    python = (ROOT / "binder" / "runtime.txt").read_text().strip().removeprefix("python-")
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--disable-pip-version-check", "--only-binary=:all:", "--python-version", python,
               "--implementation", "cp", "--target", str(tmp_path / "target"),
               "--report", str(tmp_path / "report.json"), "-r", str(tmp_path / "requirements.txt")]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_binder_pins_resolve_with_repo2dockers_base_environment(tmp_path):
    requirements = (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8")
    done = resolve(requirements, tmp_path)
    assert done.returncode == 0, f"pip cannot resolve binder/requirements.txt with the base env:\n{done.stderr[-3000:]}"
    report = json.loads((tmp_path / "report.json").read_text())
    resolved = {_normal(item["metadata"]["name"]): item["metadata"]["version"] for item in report["install"]}
    for name, version in {**base_environment(), **our_pins(requirements)}.items():
        assert resolved.get(name) == version, f"{name}: pinned {version}, resolved {resolved.get(name)}"
    assert "nbgitpuller" in resolved, "nbgitpuller must be in the image (the course's hub link)"


def test_the_check_catches_the_old_jupyterlab_pin(tmp_path):
    """The resolution really includes notebook's bound: the former pin, 4.6.6, is refused."""
    requirements = re.sub(r"^jupyterlab==.*$", "jupyterlab==4.6.6",
                          (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8"), flags=re.MULTILINE)
    requirements = re.sub(r"^notebook==.*\n", "", requirements, flags=re.MULTILINE)
    done = resolve(requirements, tmp_path)
    assert done.returncode != 0 and "jupyterlab" in done.stderr.lower(), done.stderr[-2000:]
