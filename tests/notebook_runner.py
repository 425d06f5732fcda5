"""Run a notebook in a fresh kernel and collect what it printed (shared by notebook tests)."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def load(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def execute(notebook: nbformat.NotebookNode, cwd: Path, timeout: int = 120) -> nbformat.NotebookNode:
    """Execute a copy of ``notebook`` with the current environment's kernel; return it."""
    notebook = copy.deepcopy(notebook)
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return notebook


def outputs_text(notebook: nbformat.NotebookNode) -> list[str]:
    """Per code cell, everything it printed or returned as text, joined."""
    texts = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        parts = []
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                parts.append(output.text)
            elif output.output_type in ("execute_result", "display_data"):
                parts.append(output.get("data", {}).get("text/plain", ""))
            elif output.output_type == "error":
                parts.append(f"ERROR {output.ename}: {output.evalue}")
        texts.append("".join(parts))
    return texts


def tags(cell: nbformat.NotebookNode) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))
