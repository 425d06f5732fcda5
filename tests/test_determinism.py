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
    texts = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                text = output.text
            elif output.output_type == "error":
                text = f"ERROR {output.ename}: {output.evalue}"
            else:
                data = output.get("data", {})
                text = "\n".join(str(data[k]) for k in ("text/plain", "text/html", "text/markdown")
                                 if k in data)
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
    assert first, f"{lesson} printed nothing to compare"
    assert len(first) == len(second), f"{lesson}: {len(first)} outputs, then {len(second)}"
    for a, b in zip(first, second):
        assert a == b, f"{lesson} differs between two runs:\n{a[:1500]}\n---\n{b[:1500]}"
