"""The instructor's pages stay true: the answer key is regenerated from the notebooks' objects."""

from __future__ import annotations

import sys

from tests.notebook_runner import ROOT

sys.path.insert(0, str(ROOT / "docs"))


def test_answer_key_is_up_to_date():
    import make_answers

    committed = (ROOT / "docs" / "answers.md").read_text(encoding="utf-8")
    assert committed == make_answers.render(), "run: python docs/make_answers.py"


def test_instructors_guide_is_linked_and_links_the_answers():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/instructors.md" in readme
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    for needle in ("answers.md", "nbgitpuller", "repo2docker", "Binder"):
        assert needle in guide, needle
