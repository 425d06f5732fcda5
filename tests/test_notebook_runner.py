"""The notebook runner's nbval path reports a broken lesson: tests/test_lessons.py then fails,
naming the notebook and the failing cell, and the cells around it still ran under nbval.

One tiny notebook (a markdown cell and three code cells, the middle one raising), run through
:func:`tests.notebook_runner.run_batch` exactly as conftest runs a lesson, but outside the network
namespace (the namespace is tests/test_offline.py's concern), so this takes seconds.
"""

from __future__ import annotations

import nbformat
import pytest

from tests.notebook_runner import Job, nbval_failures, run_batch
from tests import test_lessons  # the module: imported, its test function would be collected here


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("broken-lesson")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# A lesson with a bug"),
                      nbformat.v4.new_code_cell("x = 6 * 7\nprint('x is', x)"),
                      nbformat.v4.new_code_cell("raise ValueError('the lesson is broken')"),
                      nbformat.v4.new_code_cell("print('after', x)")]
    path = folder / "99_broken.ipynb"
    nbformat.write(notebook, path)
    job = Job("99_broken", path, folder, runner="nbval")
    return run_batch([job], tmp_path_factory.mktemp("broken-run"), offline=False, timeout=600)


def test_a_failing_cell_fails_test_lessons_naming_notebook_and_cell(broken_run):
    with pytest.raises(AssertionError) as failure:
        test_lessons.test_lesson_runs_without_error(broken_run, "99_broken")
    message = str(failure.value)
    assert "99_broken" in message
    assert "99_broken.ipynb::Cell 1 (notebook cell 2) failed" in message, message
    assert "ValueError" in message and "the lesson is broken" in message, message
    assert "Cell 0" not in message and "Cell 2" not in message, message  # only the bad cell


def test_nbval_ran_every_cell_and_recorded_what_it_saw(broken_run):
    assert "99_broken" in broken_run.errors
    cells = [c for c in broken_run.notebooks["99_broken"].cells if c.cell_type == "code"]
    assert [c.metadata["nbval"]["outcome"] for c in cells] == ["passed", "failed", "passed"]
    assert [c.execution_count for c in cells] == [1, 2, 3]
    assert cells[0].outputs[0].text == "x is 42\n"
    assert cells[1].outputs[0].output_type == "error" and cells[1].outputs[0].ename == "ValueError"
    assert cells[2].outputs[0].text == "after 42\n"  # same kernel, run past the failure
    assert len(nbval_failures(broken_run.notebooks["99_broken"])) == 1


def test_an_nbval_job_must_run_in_its_notebooks_folder(tmp_path):
    with pytest.raises(ValueError, match="Job.cwd"):
        run_batch([Job("x", tmp_path / "x.ipynb", tmp_path.parent, runner="nbval")], tmp_path)
    with pytest.raises(ValueError, match="Job.runner"):
        run_batch([Job("x", tmp_path / "x.ipynb", tmp_path, runner="papermill")], tmp_path)
