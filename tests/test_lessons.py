"""Every lesson runs top to bottom in a fresh kernel without an error (what nbval --nbval-lax
checked before; ``pytest lessons/NN_x.ipynb`` still runs one lesson under nbval by hand).

The run is conftest's ``lesson_runs``: each lesson once, inside a network namespace where the
machine allows it, so the same execution also proves the lesson works offline
(tests/test_offline.py) and is the first of the two runs tests/test_determinism.py compares.
"""

from __future__ import annotations

import pytest

from tests.notebook_runner import LESSONS


@pytest.mark.parametrize("lesson", [p.stem for p in LESSONS])
def test_lesson_runs_without_error(lesson_runs, lesson):
    assert lesson not in lesson_runs.errors, f"{lesson} failed:\n{lesson_runs.errors[lesson]}"
    notebook = lesson_runs.notebooks[lesson]
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code, f"{lesson} has no code cells"
    not_run = [i for i, cell in enumerate(notebook.cells)
               if cell.cell_type == "code" and cell.source.strip() and cell.execution_count is None]
    assert not not_run, f"{lesson}: cells {not_run} did not run"
    errors = [(i, o.ename, o.evalue) for i, cell in enumerate(notebook.cells)
              if cell.cell_type == "code" for o in cell.get("outputs", []) if o.output_type == "error"]
    assert not errors, f"{lesson}: error outputs {errors}"
