"""Each lesson executed twice gives identical numbers.

Every lesson (found by file name) is executed twice with nbclient in fresh kernels, the two runs
side by side (two cores), each kernel with a different ``PYTHONHASHSEED`` so that an answer that
depends on set or dict-of-str ordering would show. The text a learner reads (streams, plain-text
and HTML results, error outputs) must be identical once things that legitimately differ between
runs are masked: memory addresses (``0x7f…``) and ipywidgets' model ids. Pictures are left out:
the numbers they show are in the summaries beside them.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))

pytestmark = pytest.mark.slow

_MASKS = [
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0x…"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<model id>"),  # ipywidgets model ids
    (re.compile(r"(Wall time|CPU times): [^\n]*"), r"\1: …"),
]


def _execute(path: Path, hash_seed: str) -> nbformat.NotebookNode:
    notebook = nbformat.read(path, as_version=4)
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "MPLBACKEND": "Agg"}
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute(env=env)
    return notebook


def _texts(notebook: nbformat.NotebookNode) -> list[str]:
    """Per code cell, all it showed as text, joined. Joined because the kernel may deliver one
    cell's printing as one stream message or several, depending on when stdout was flushed."""
    texts = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        parts = []
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                parts.append(output.text)
            elif output.output_type == "error":
                parts.append(f"ERROR {output.ename}: {output.evalue}\n")
            else:
                data = output.get("data", {})
                parts.extend(str(data[k]) + "\n" for k in ("text/plain", "text/html", "text/markdown")
                             if k in data)
        text = "".join(parts)
        for pattern, replacement in _MASKS:
            text = pattern.sub(replacement, text)
        texts.append(f"[cell {index}] {text}")
    return texts


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[list[str], list[str]]]:
    jobs = [(path, seed) for path in LESSONS for seed in ("1", "2")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(lambda job: _texts(_execute(*job)), jobs))
    return {path.name: (done[2 * i], done[2 * i + 1]) for i, path in enumerate(LESSONS)}


@pytest.mark.parametrize("lesson", [p.name for p in LESSONS])
def test_lesson_gives_identical_numbers_twice(runs, lesson):
    first, second = runs[lesson]
    assert any(text.split("] ", 1)[1] for text in first), f"{lesson} printed nothing to compare"
    assert len(first) == len(second), f"{lesson}: {len(first)} code cells, then {len(second)}"
    for a, b in zip(first, second):
        assert a == b, f"{lesson} differs between two runs:\n{a[:1500]}\n---\n{b[:1500]}"
