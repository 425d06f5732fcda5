"""Repository-level promises: stripped notebooks, the README's two commands, the Binder files,
and what each install brings (the library, the `lab`, `test` and `deploy` extras)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for folder in ("lessons", "exercises") for p in (ROOT / folder).rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_committed_without_outputs(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        assert cell.get("outputs", []) == [], f"{path.name} cell {index} has outputs: strip them"
        assert cell.get("execution_count") is None, f"{path.name} cell {index} has an execution count"
    assert "widgets" not in notebook.get("metadata", {}), f"{path.name} carries stale widget state"


def test_there_are_lessons() -> None:
    assert (ROOT / "lessons" / "00_start_here.ipynb").exists()


def _quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(?:bash|sh)?\n(.+?)\n```", section)


def test_readme_has_exactly_two_quick_start_commands() -> None:
    commands = _quick_start_commands()
    assert len(commands) == 2, commands
    assert "jupyter lab lessons/00_start_here.ipynb" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readmes_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _quick_start_commands()[1] in ci


def test_binder_badge_opens_the_first_lesson() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "urlpath=lab%2Ftree%2Flessons%2F00_start_here.ipynb" in readme or \
        "urlpath=lab/tree/lessons/00_start_here.ipynb" in readme


def test_binder_files_pin_exactly_and_install_the_package() -> None:
    requirements = (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").split("\n")
    pins = [line for line in requirements if line.strip() and not line.startswith("#")]
    assert pins, "binder/requirements.txt is empty"
    for line in pins:
        assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][0-9A-Za-z.\-+]*", line.strip()), line
    names = {line.split("==")[0].lower() for line in pins}
    assert {"numpy", "matplotlib", "ipywidgets", "jupyterlab"} <= names
    assert re.fullmatch(r"python-3\.1[1-9]\s*", (ROOT / "binder" / "runtime.txt").read_text())
    post_build = (ROOT / "binder" / "postBuild").read_text(encoding="utf-8")
    assert re.search(r"pip install[^\n]*(--no-deps)?[^\n]* \.", post_build)


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _names(requirements: list[str]) -> set[str]:
    return {Requirement(line).name.lower() for line in requirements}


def test_the_library_needs_numpy_matplotlib_and_ipywidgets_only() -> None:
    # No notebook server: the package installs where none can run (a plain script, Pyodide).
    assert _names(_project()["dependencies"]) == {"numpy", "matplotlib", "ipywidgets"}


def test_the_lab_extra_and_the_readmes_first_command_bring_jupyterlab() -> None:
    assert "jupyterlab" in _names(_project()["optional-dependencies"]["lab"])
    assert '.venv/bin/pip install -e ".[lab]"' in _quick_start_commands()[0]


def test_the_test_extra_runs_notebooks_and_leaves_deployment_to_the_deploy_extra() -> None:
    extras = _project()["optional-dependencies"]
    test, deploy = _names(extras["test"]), _names(extras["deploy"])
    assert {"pytest", "nbval", "nbclient", "nbformat", "ipykernel"} <= test
    deployment = {"playwright", "jupyter-repo2docker", "jupyterhub", "nbgitpuller", "jupyterlab",
                  "websocket-client", "requests"}
    assert not test & deployment, test & deployment
    assert deployment - {"jupyterlab"} <= deploy
    assert any(Requirement(line).name == "accelkit" and {"test", "lab"} <= Requirement(line).extras
               for line in extras["deploy"]), "the deploy extra brings the test and lab extras"
