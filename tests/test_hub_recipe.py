"""docs/hub/config.yaml holds what the hub needs, sized from measured memory (fast: no hub runs here).

tests/test_hub.py runs the recipe on a real JupyterHub; this file checks what that test cannot: the
numbers. Memory is measured by ``python benchmarks/kernel_memory.py`` into
docs/hub/measured_memory.json; docs/make_plans.py states the sizing rules.
"""

from __future__ import annotations

import re
import sys

import pytest
import yaml

from tests.notebook_runner import ROOT

sys.path.insert(0, str(ROOT / "docs"))

import make_plans  # noqa: E402

UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def _bytes(quantity: str) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?", str(quantity))
    assert match, f"not a Kubernetes memory quantity: {quantity}"
    return float(match.group(1)) * UNITS[match.group(2) or ""]


@pytest.fixture(scope="module")
def singleuser():
    return yaml.safe_load((ROOT / "docs" / "hub" / "config.yaml").read_text(encoding="utf-8"))["singleuser"]


def test_memory_is_sized_from_the_measurements(singleuser):
    guarantee, limit = (_bytes(singleuser["memory"][k]) for k in ("guarantee", "limit"))
    need_guarantee = make_plans.memory_guarantee_mib() * 2**20
    need_limit = make_plans.memory_limit_mib() * 2**20
    assert need_guarantee <= guarantee <= 1.5 * need_guarantee, (guarantee, need_guarantee)
    assert need_limit <= limit <= 1.5 * need_limit, (limit, need_limit)
    assert guarantee < limit


def test_measurements_cover_every_notebook():
    measured = {row["notebook"] for row in make_plans.memory()["notebooks"]}
    on_disk = {f"{p.parent.name}/{p.name}" for folder in ("lessons", "exercises")
               for p in (ROOT / folder).glob("[0-9][0-9]_*.ipynb")}
    assert measured == on_disk, "run: python benchmarks/kernel_memory.py"


def test_cpu_image_culling_and_lab_settings(singleuser):
    assert 0 < float(singleuser["cpu"]["guarantee"]) <= float(singleuser["cpu"]["limit"])
    assert singleuser["image"]["name"] and singleuser["image"]["tag"]
    files = {spec["mountPath"]: spec["data"] for spec in singleuser["extraFiles"].values()}
    cull = files["/etc/jupyter/jupyter_server_config.json"]["MappingKernelManager"]
    assert cull["cull_idle_timeout"] > 0 and cull["cull_interval"] > 0 and cull["cull_connected"] is False
    lab = files["/srv/conda/envs/notebook/share/jupyter/lab/settings/overrides.json"]
    assert lab["@jupyterlab/notebook-extension:tracker"]["kernelShutdown"] is True
    assert lab["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    hub = yaml.safe_load((ROOT / "docs" / "hub" / "config.yaml").read_text(encoding="utf-8"))
    assert hub["cull"]["enabled"] is True and hub["cull"]["timeout"] > 0


def test_the_link_target_is_what_python_path_points_at(singleuser):
    guide = (ROOT / "docs" / "hub" / "README.md").read_text(encoding="utf-8")
    target = re.search(r"git-pull\?[^\s`]*targetpath=([\w.-]+)", guide).group(1)
    assert singleuser["extraEnv"]["PYTHONPATH"] == f"/home/jovyan/{target}"
    assert f"urlpath=lab/tree/{target}/lessons/00_start_here.ipynb" in guide


def test_the_image_can_answer_the_link():
    pins = (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8")
    assert re.search(r"^nbgitpuller==\d", pins, re.MULTILINE), "nbgitpuller must be in the user image"
    guide = (ROOT / "docs" / "hub" / "README.md").read_text(encoding="utf-8")
    assert "docker push" in guide and "repo2docker" in guide
