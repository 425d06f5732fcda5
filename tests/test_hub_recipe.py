"""docs/hub/config.yaml holds what the hub needs, sized from measured memory (fast: no hub runs here).

tests/test_hub.py runs the recipe on a real JupyterHub; this file checks what that test cannot: the
numbers, and the settings a local hub cannot exercise (HTTPS, the sign-in, the chart's version).
Memory is measured by ``python benchmarks/kernel_memory.py`` into docs/hub/measured_memory.json
(tests/test_hub_memory.py, in the deploy tier, measures again and fails when it is stale);
docs/make_plans.py states the per-learner rules and docs/hub/make_sizing.py the table for 30 and
100 learners. The course's address is said once (pyproject.toml, read by docs/hub/links.py): the
README's Binder badge and the guide's nbgitpuller link must be what it builds.
"""

from __future__ import annotations

import re
import sys

import pytest
import yaml

from tests.notebook_runner import ROOT

sys.path.insert(0, str(ROOT / "docs"))
sys.path.insert(0, str(ROOT / "docs" / "hub"))

import links  # noqa: E402
import make_plans  # noqa: E402
import make_sizing  # noqa: E402

GUIDE = ROOT / "docs" / "hub" / "README.md"

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


def test_the_sizing_table_is_what_make_sizing_writes():
    guide = GUIDE.read_text(encoding="utf-8")
    assert make_sizing.table() in guide, "run: python docs/hub/make_sizing.py"


def test_the_sizing_table_covers_30_and_100_learners_within_the_nodes():
    rows = {row["learners"]: row for row in make_sizing.rows()}
    assert set(rows) == {30, 100}
    node = make_sizing.NODE
    fits = make_sizing.learners_per_node()["fits"]
    for learners, row in rows.items():
        # Enough nodes for the learners and the headroom, none of them over its guarantee budget.
        assert row["user_nodes"] * fits >= learners * (1 + make_sizing.HEADROOM)
        assert row["on_busiest_node"] * make_sizing.per_learner()["memory_guarantee_mib"] \
            <= node.allocatable_memory_mib()
        assert row["on_busiest_node"] * make_sizing.per_learner()["cpu_guarantee"] <= node.allocatable_cpus()
    # A node keeps part of itself (the kubelet's reservation, the system daemons).
    assert 0 < node.allocatable_cpus() < node.cpus and 0 < node.allocatable_memory_mib() < node.memory_gib * 1024


def test_the_repository_address_is_said_once_and_both_links_use_it():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    guide = GUIDE.read_text(encoding="utf-8")
    assert links.repository().startswith("https://")
    assert links.binder_badge() in readme, "README's badge: run python docs/hub/links.py"
    assert links.gitpull_link() in guide, "the guide's link: run python docs/hub/links.py"
    # No other spelling of a repository address in either page (a stale fork's, a placeholder).
    for page in (readme, guide):
        assert "<repository-url>" not in page
        others = set(re.findall(r"mybinder\.org/v2/gh/([\w.-]+/[\w.-]+)/", page))
        assert others <= {links.repository().removeprefix("https://github.com/")}, others


def test_https_sign_in_and_the_chart_version_are_set():
    recipe = yaml.safe_load((ROOT / "docs" / "hub" / "config.yaml").read_text(encoding="utf-8"))
    https = recipe["proxy"]["https"]
    assert https["enabled"] is True and https["type"] == "letsencrypt"
    assert https["hosts"] and https["letsencrypt"]["contactEmail"]
    hub = recipe["hub"]["config"]
    # A real sign-in: the native authenticator with admin approval, an admin named (dummy is
    # for tests/test_hub.py on 127.0.0.1 only).
    assert hub["JupyterHub"]["authenticator_class"] == "native"
    assert hub["NativeAuthenticator"]["open_signup"] is False
    assert hub["Authenticator"]["admin_users"]
    assert "dummy" not in yaml.safe_dump(recipe["hub"])
    # The chart's version is pinned, the same in the guide's command and the recipe's header.
    guide = GUIDE.read_text(encoding="utf-8")
    pinned = set(re.findall(r"--version (\d+\.\d+\.\d+)", guide))
    header = (ROOT / "docs" / "hub" / "config.yaml").read_text(encoding="utf-8").split("\nsingleuser:", 1)[0]
    assert len(pinned) == 1 and set(re.findall(r"--version (\d+\.\d+\.\d+)", header)) == pinned, pinned
