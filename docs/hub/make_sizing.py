"""The hub's sizing table for 30 and 100 learners, from measured memory and config.yaml's requests.

Run: ``python docs/hub/make_sizing.py`` rewrites the table between the ``sizing`` markers of
docs/hub/README.md; tests/test_hub_recipe.py fails when the table is not what this writes.

Inputs: each learner's guarantee and limit (CPU and memory) are config.yaml's ``singleuser``
settings, which tests/test_hub_recipe.py checks against the measured kernels
(docs/hub/measured_memory.json, ``python benchmarks/kernel_memory.py``). Kubernetes places a
learner's pod on a node by its *guarantee* (request); the limit is where the pod is throttled
(CPU) or its kernel killed (memory). The node shape and what a node keeps for itself are named
assumptions, below.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "config.yaml"
MEASURED = HERE / "measured_memory.json"
GUIDE = HERE / "README.md"
START, END = "<!-- sizing:start (python docs/hub/make_sizing.py) -->", "<!-- sizing:end -->"
LEARNERS = (30, 100)
#: Room planned beyond the learners: instructors and helpers log in too, and a learner whose
#: server is restarting briefly holds two pods' worth. An assumption: 10%.
HEADROOM = 0.10


@dataclass(frozen=True)
class Node:
    """A node shape and what Kubernetes leaves of it for pods (assumptions, named)."""
    label: str
    cpus: float
    memory_gib: float
    #: Kept by kube-system daemons (kube-proxy, logging, the CNI, the image pre-puller): an
    #: assumption, 0.4 CPU and 1 GiB; measure yours with ``kubectl describe node``.
    daemons_cpus: float = 0.4
    daemons_memory_gib: float = 1.0

    def allocatable_cpus(self) -> float:
        """CPUs left after the kubelet's reservation: GKE's published rule (6% of the first
        core, 1% of the second, 0.5% of cores 3-4, 0.25% above), then the daemons."""
        tiers = ((1, 0.06), (1, 0.01), (2, 0.005), (math.inf, 0.0025))
        return self.cpus - _tiered(self.cpus, tiers) - self.daemons_cpus

    def allocatable_memory_mib(self) -> float:
        """Memory left after the kubelet's reservation: GKE's published rule (25% of the first
        4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2% above; plus a 100 MiB
        eviction threshold), then the daemons."""
        tiers = ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (math.inf, 0.02))
        reserved_gib = _tiered(self.memory_gib, tiers)
        return (self.memory_gib - reserved_gib - self.daemons_memory_gib) * 1024 - 100


def _tiered(amount: float, tiers) -> float:
    total, left = 0.0, amount
    for size, share in tiers:
        used = min(left, size)
        total, left = total + used * share, left - used
        if left <= 0:
            break
    return total


#: The user nodes this table plans for: a general-purpose 8-vCPU, 32-GiB machine (GKE
#: e2-standard-8, EKS m6i.2xlarge, AKS Standard_D8s_v5). One more, smaller node (2 vCPU, 8 GiB)
#: holds the hub, the proxy and the user scheduler (the chart's "core" pods).
NODE = Node("8 vCPU, 32 GiB", cpus=8, memory_gib=32)


def _mib(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "K": 1e3 / 2**20, "M": 1e6 / 2**20, "G": 1e9 / 2**20}
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)", str(quantity))
    if not match:
        raise ValueError(f"not a Kubernetes memory quantity: {quantity!r}")
    return float(match.group(1)) * units[match.group(2)]


def per_learner() -> dict:
    single = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["singleuser"]
    return {"cpu_guarantee": float(single["cpu"]["guarantee"]), "cpu_limit": float(single["cpu"]["limit"]),
            "memory_guarantee_mib": _mib(single["memory"]["guarantee"]),
            "memory_limit_mib": _mib(single["memory"]["limit"])}


def learners_per_node(node: Node = NODE) -> dict:
    need = per_learner()
    by_cpu = math.floor(node.allocatable_cpus() / need["cpu_guarantee"])
    by_memory = math.floor(node.allocatable_memory_mib() / need["memory_guarantee_mib"])
    return {"by_cpu": by_cpu, "by_memory": by_memory, "fits": min(by_cpu, by_memory)}


def rows(node: Node = NODE) -> list[dict]:
    need, fit = per_learner(), learners_per_node(node)
    found = []
    for learners in LEARNERS:
        nodes = math.ceil(learners * (1 + HEADROOM) / fit["fits"])
        on_busiest = math.ceil(learners / nodes)
        found.append({
            "learners": learners, "user_nodes": nodes, "on_busiest_node": on_busiest,
            "cpu_requested": learners * need["cpu_guarantee"], "cpu_limit": learners * need["cpu_limit"],
            "memory_requested_gib": learners * need["memory_guarantee_mib"] / 1024,
            "memory_limit_gib": learners * need["memory_limit_mib"] / 1024,
            # If every learner on the busiest node reached the limit at once (they do not: the
            # limit is every kernel of the 3-hour plan left running, each at its peak).
            "busiest_at_limit_share": on_busiest * need["memory_limit_mib"] / node.allocatable_memory_mib(),
        })
    return found


def table(node: Node = NODE) -> str:
    need, fit, data = per_learner(), learners_per_node(node), json.loads(MEASURED.read_text(encoding="utf-8"))
    lessons = [r for r in data["notebooks"] if r["notebook"].startswith("lessons/")]
    largest = max(lessons, key=lambda r: r["kernel_peak_mb"])
    exercise = max(r["kernel_peak_mb"] for r in data["notebooks"] if r["notebook"].startswith("exercises/"))
    lines = [START, "",
             f"Per learner (config.yaml): CPU {need['cpu_guarantee']:g} guaranteed, {need['cpu_limit']:g} limit; "
             f"memory {need['memory_guarantee_mib']:.0f} MiB guaranteed, {need['memory_limit_mib']:.0f} MiB limit. "
             f"Measured ({data['measured_on']}, `{data['command']}`): a JupyterLab server peaks at "
             f"{data['server_peak_mb']} MiB, the largest lesson kernel at {largest['kernel_peak_mb']} MiB "
             f"({largest['notebook']}), an exercise kernel at {exercise} MiB.", "",
             f"User nodes of {node.label}: {node.allocatable_cpus():.2f} CPUs and "
             f"{node.allocatable_memory_mib() / 1024:.1f} GiB left for learners after the kubelet's "
             f"reservation and the system daemons, so {fit['by_cpu']} learners fit by CPU and "
             f"{fit['by_memory']} by memory: **{fit['fits']} per node**. Nodes are counted for the "
             f"learners plus {HEADROOM:.0%} (instructors, helpers, a server restarting), and one core "
             "node (2 vCPU, 8 GiB) holds the hub, the proxy and the user scheduler.", "",
             "| learners | user nodes | learners on the busiest node | CPU requested / limit, all learners | "
             "memory requested / limit, all learners | busiest node's memory if every learner there hit the limit |",
             "|---:|---:|---:|---:|---:|---:|"]
    for row in rows(node):
        lines.append(f"| {row['learners']} | {row['user_nodes']} (+1 core) | {row['on_busiest_node']} | "
                     f"{row['cpu_requested']:g} / {row['cpu_limit']:g} CPUs | "
                     f"{row['memory_requested_gib']:.1f} / {row['memory_limit_gib']:.1f} GiB | "
                     f"{row['busiest_at_limit_share']:.0%} of its allocatable memory |")
    lines += ["", END]
    return "\n".join(lines)


def updated_guide(text: str) -> str:
    if START not in text or END not in text:
        raise ValueError(f"{GUIDE.name} has no sizing markers")
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    return before + table() + after


def main() -> None:
    GUIDE.write_text(updated_guide(GUIDE.read_text(encoding="utf-8")), encoding="utf-8")
    print(table())
    print(f"wrote the table in {GUIDE.relative_to(HERE.parents[1])}", file=sys.stderr)


if __name__ == "__main__":
    main()
