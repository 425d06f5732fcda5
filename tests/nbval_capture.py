"""A pytest plugin that writes down what nbval saw, so the suite can reuse one nbval pass.

tests/notebook_runner.py runs each lesson with
``python -m pytest --nbval-lax --nbval-current-env -p tests.nbval_capture
--nbval-capture-to OUT.ipynb lessons/NN_x.ipynb``. nbval makes one test item per code cell and
runs them in order in one kernel; after each item this plugin keeps the outputs nbval collected
from the kernel (``item.test_outputs``, streams coalesced as nbval compares them) and nbval's
verdict on the cell (passed, failed, skipped, with pytest's report of a failure). When the
session ends it writes the notebook to ``OUT.ipynb`` with those outputs in its code cells and the
verdict in each code cell's ``metadata["nbval"]``::

    {"nodeid": "lessons/07_training.ipynb::Cell 3", "outcome": "failed", "report": "..."}

A code cell nbval never reached (a collection error, an interrupted session) has no ``"nbval"``
entry. ``execution_count`` is the order in which nbval ran the cells (1, 2, ...), not the
kernel's own counter, which nbval does not pass on. Files with a collection error are listed in
the notebook's ``metadata["nbval_collection_errors"]``.

The plugin observes; it changes nothing about how nbval runs or judges a cell.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def pytest_addoption(parser):
    parser.getgroup("nbval").addoption(
        "--nbval-capture-to", action="store", default=None, metavar="PATH",
        help="write the one collected notebook, with the outputs and verdict nbval gave each "
             "code cell, to PATH (tests/nbval_capture.py)")


class _Capture:
    def __init__(self, destination: Path):
        self.destination = destination
        self.notebook = None  # nbval's own copy of the notebook (IPyNbFile.nb)
        self.source = None
        self.verdicts: dict[int, dict] = {}  # by nbval's code-cell number
        self.outputs: dict[int, list] = {}
        self.order: list[int] = []
        self.collection_errors: list[str] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        cell_num = getattr(item, "cell_num", None)
        if cell_num is None or not hasattr(item.parent, "nb"):
            return
        if self.notebook is None:
            self.notebook, self.source = item.parent.nb, str(item.path)
        elif str(item.path) != self.source:
            raise pytest.UsageError("--nbval-capture-to takes one notebook per session; "
                                    f"got {self.source} and {item.path}")
        verdict = self.verdicts.setdefault(cell_num, {"nodeid": item.nodeid, "outcome": "passed"})
        if call.when == "call" and item.test_outputs is not None:
            self.outputs[cell_num] = item.test_outputs
            self.order.append(cell_num)
        # The first phase that did not pass decides (setup: e.g. the kernel did not start).
        if verdict["outcome"] == "passed" and not report.passed:
            verdict["outcome"] = "xfailed" if hasattr(report, "wasxfail") else report.outcome
            verdict["phase"] = call.when
            verdict["report"] = _ANSI.sub("", str(report.longrepr))[-4000:]

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(
                f"{report.nodeid}: " + _ANSI.sub("", str(report.longrepr))[-4000:])

    def pytest_sessionfinish(self, session):
        notebook = self.notebook
        if notebook is None:
            notebook = nbformat.v4.new_notebook()
        notebook.metadata["nbval_collection_errors"] = self.collection_errors
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        for cell_num, cell in enumerate(code):
            cell.outputs = [nbformat.from_dict(dict(o)) for o in self.outputs.get(cell_num, [])]
            cell.execution_count = (self.order.index(cell_num) + 1
                                    if cell_num in self.order else None)
            cell.metadata.pop("nbval", None)
            if cell_num in self.verdicts:
                cell.metadata["nbval"] = self.verdicts[cell_num]
        nbformat.write(notebook, self.destination)


def pytest_configure(config):
    destination = config.getoption("nbval_capture_to")
    if destination:
        config.pluginmanager.register(_Capture(Path(destination)), "nbval-capture")
