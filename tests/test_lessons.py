"""Every lesson passes nbval: ``pytest --nbval-lax`` runs it top to bottom in a fresh kernel and
no code cell raises (``pytest lessons/NN_x.ipynb`` runs the same check on one lesson by hand).

The nbval pass is conftest's ``lesson_runs``: each lesson once (tests/notebook_runner.py starts
``python -m pytest --nbval-lax --nbval-current-env -p tests.nbval_capture`` for it, and the plugin
records nbval's verdict on every code cell and the outputs it saw), so tests that check what a
lesson printed read the same run. This module asserts the verdicts nbval recorded: every code
cell passed. (The deploy tier runs every lesson twice more: offline, tests/test_offline.py, and
for tests/test_determinism.py.)
"""

from __future__ import annotations

import pytest

from tests.notebook_runner import LESSONS, Batch, nbval_failures


def assert_lesson_passed(runs: Batch, lesson: str) -> None:
    """``lesson`` ran in ``runs`` and nbval passed every one of its code cells."""
    notebook = runs.notebooks[lesson]
    assert any(cell.cell_type == "code" for cell in notebook.cells), f"{lesson} has no code cells"
    failed = nbval_failures(notebook)
    assert not failed, f"{lesson}: nbval did not pass {len(failed)} cell(s):\n" + "\n".join(failed)
    assert lesson not in runs.errors, f"{lesson} failed:\n{runs.errors[lesson]}"
    errors = [(i, o.ename, o.evalue) for i, cell in enumerate(notebook.cells)
              if cell.cell_type == "code" for o in cell.get("outputs", []) if o.output_type == "error"]
    assert not errors, f"{lesson}: error outputs {errors}"


@pytest.mark.parametrize("lesson", [p.stem for p in LESSONS])
def test_lesson_runs_without_error(lesson_runs, lesson):
    assert_lesson_passed(lesson_runs, lesson)
