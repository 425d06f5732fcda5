"""Each lesson executed twice gives identical numbers (a deploy check: two more runs of each lesson).

The first run is the deploy tier's offline run of every lesson (conftest's
``offline_lesson_runs``: an nbval pass in the network namespace, ``PYTHONHASHSEED=1``, which
tests/test_offline.py checks); this module adds exactly one more run of each lesson
(``second_lesson_runs``: the same nbval way, outside the namespace, ``PYTHONHASHSEED=2``), so an
answer that depends on set or dict-of-str ordering, or on the network, would show. The text a
learner reads (streams, plain-text and HTML results, error outputs) must be identical once things
that legitimately differ between runs are masked: memory addresses (``0x7f…``) and ipywidgets'
model ids. Pictures are left out: the numbers they show are in the summaries beside them.
"""

from __future__ import annotations

import pytest

from tests.notebook_runner import LESSONS, comparable_texts

pytestmark = pytest.mark.deploy


@pytest.mark.parametrize("lesson", [p.stem for p in LESSONS])
def test_lesson_gives_identical_numbers_twice(offline_lesson_runs, second_lesson_runs, lesson):
    for runs in (offline_lesson_runs, second_lesson_runs):
        assert lesson not in runs.errors, f"{lesson} failed:\n{runs.errors[lesson]}"
    first = comparable_texts(offline_lesson_runs.notebooks[lesson])
    second = comparable_texts(second_lesson_runs.notebooks[lesson])
    assert any(text.split("] ", 1)[1] for text in first), f"{lesson} printed nothing to compare"
    assert len(first) == len(second), f"{lesson}: {len(first)} code cells, then {len(second)}"
    for a, b in zip(first, second):
        assert a == b, f"{lesson} differs between two runs:\n{a[:1500]}\n---\n{b[:1500]}"
