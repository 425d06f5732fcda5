"""A pytest plugin that writes down what a run collected and selected (tests/test_tiers.py).

``python -m pytest --collect-only -p tests.selection_record -m EXPR`` with the environment
variable ``ACCELKIT_SELECTION_RECORD=PATH`` writes to PATH, as JSON, every collected test item
with its marker names and whether the run kept it::

    [{"nodeid": "tests/test_lessons.py::test_lesson_runs_without_error[05_roofline]",
      "markers": ["lesson05", "parametrize"], "selected": true}, ...]

It observes; it changes nothing about what is collected or selected.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

_deselected: list = []


def pytest_deselected(items) -> None:
    _deselected.extend(items)


def pytest_collection_finish(session) -> None:
    path = os.environ.get("ACCELKIT_SELECTION_RECORD")
    if not path:
        return

    def entry(item, selected: bool) -> dict:
        return {"nodeid": item.nodeid, "selected": selected,
                "markers": sorted({marker.name for marker in item.iter_markers()})}

    Path(path).write_text(json.dumps([entry(i, True) for i in session.items] +
                                     [entry(i, False) for i in _deselected]), encoding="utf-8")
