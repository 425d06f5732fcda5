"""The lower bounds pyproject.toml declares for the library's dependencies are true (a deploy check).

``pip install accelkit`` promises that numpy, matplotlib and ipywidgets at their declared ``>=``
bounds are enough. Here a fresh virtual environment gets exactly those versions (a pip
constraints file pins each dependency to its bound; everything else resolves as pip would), the
package and its ``test`` extra are installed from a copy of the repository, and the widget tests
(tests/test_widgets_*.py: every widget built and driven without a kernel, drawing with that
matplotlib on that numpy) run there once. When a bound is not installable on Python 3.11, or the
widget tests fail at it, the bound is false: raise it to the lowest version that passes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import venv

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests.notebook_runner import ROOT
from tests.test_binder import repository_copy

pytestmark = pytest.mark.deploy


def declared_lower_bounds() -> dict[str, str]:
    """Each library dependency and the version its ``>=`` bound names."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    bounds = {}
    for line in project["dependencies"]:
        requirement = Requirement(line)
        lower = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        assert len(lower) == 1, f"{line}: a dependency declares exactly one >= lower bound"
        bounds[requirement.name.lower()] = lower[0]
    return bounds


def _run(command: list[str], cwd, env: dict[str, str], timeout: int) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def test_widget_tests_pass_at_the_declared_lower_bounds(tmp_path):
    bounds = declared_lower_bounds()
    repo = repository_copy(tmp_path / "repo")
    widget_tests = sorted(p.relative_to(repo).as_posix() for p in (repo / "tests").glob("test_widgets_*.py"))
    assert widget_tests, "no widget tests to run"
    env_dir = tmp_path / "lowest-venv"
    venv.create(env_dir, with_pip=True, clear=True)
    python = str(env_dir / "bin" / "python")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("VIRTUAL_ENV", "PYTHON", "PIP_CONSTRAINT"))}
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
               VIRTUAL_ENV=str(env_dir), MPLBACKEND="Agg", PIP_DISABLE_PIP_VERSION_CHECK="1")
    constraints = tmp_path / "lowest.txt"
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in bounds.items()))

    _run([python, "-m", "pip", "install", "-q", "--no-compile", "-c", str(constraints),
          f"{repo}[test]"], tmp_path, env, 900)
    frozen = dict(line.split("==", 1) for line in
                  _run([python, "-m", "pip", "freeze"], tmp_path, env, 60).splitlines() if "==" in line)
    frozen = {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in frozen.items()}
    for name, version in bounds.items():
        assert Version(frozen[name]) == Version(version), f"{name}: wanted {version}, got {frozen[name]}"
    _run([python, "-m", "pip", "check"], tmp_path, env, 60)

    # The copy's own tests, from the copy's root: what they import is the environment's.
    report = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *widget_tests],
                  repo, env, 900)
    versions = _run([python, "-c", "import numpy, matplotlib, ipywidgets, accelkit, sys;"
                     " print(numpy.__version__, matplotlib.__version__, ipywidgets.__version__,"
                     " sys.version.split()[0], accelkit.__file__)"], repo, env, 60).split()
    assert [Version(v) for v in versions[:3]] == [Version(bounds[n]) for n in
                                                  ("numpy", "matplotlib", "ipywidgets")], versions
    print(f"numpy {versions[0]}, matplotlib {versions[1]}, ipywidgets {versions[2]} on Python "
          f"{versions[3]}: {report.strip().splitlines()[-1]}")
