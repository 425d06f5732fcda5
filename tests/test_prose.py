"""tests/prose.py reads the numbers prose shows and fails where it should (it is what every claim test
leans on, so its own failures must be real)."""

from __future__ import annotations

import json

import pytest

from tests import prose


def _markdown(tmp_path, text: str, name: str = "page.md"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_numbers_as_prose_writes_them(tmp_path):
    page = _markdown(tmp_path, "A [TPU v5e](x.md#tpu) has a **ridge** of 240.5 FLOPs per byte;\n"
                               "8,960 chips for 35 days, about 15× the\u00a0lanes, −3% and eight times.")
    (ridge,) = prose.shown(page, "ridge of {} FLOPs")
    assert (ridge.value, ridge.decimals, ridge.text) == (240.5, 1, "240.5")
    chips, days = prose.shown(page, "{} chips for {} days")
    assert (chips.value, days.value) == (8960, 35)
    assert prose.shown(page, "about {}× the lanes")[0].value == 15  # non-breaking space folded
    assert prose.shown(page, "{}% and")[0].value == -3
    assert prose.shown(page, "{} times")[0].value == 8
    assert prose.shown(_markdown(tmp_path, "not twenty-six times", "words.md"), "not {} times")[0].value == 26
    assert prose.says(page, "TPU v5e has a ridge")  # links and emphasis read as text


def test_digits_inside_names_are_not_numbers(tmp_path):
    page = _markdown(tmp_path, "Llama-3-70B on a v5e and an H100: 70B parameters, 15T tokens.")
    with pytest.raises(AssertionError, match="no longer says"):
        prose.shown(page, "on a v{}e")
    with pytest.raises(AssertionError, match="no longer says"):
        prose.shown(page, "{} parameters")  # "70B" is a name's tail unless the anchor says B
    assert prose.shown(page, "{}B parameters")[0].value == 70
    assert prose.shown(page, "{}T tokens")[0].value == 15


def test_check_compares_at_the_precision_shown(tmp_path):
    page = _markdown(tmp_path, "It delivers 2.89× of a 64× promise, about 1,000 times more, 6% of it.")
    prose.check(page, "delivers {}×", 2.8851)
    with pytest.raises(AssertionError, match="says 2.89 where the library now gives 2.9"):
        prose.check(page, "delivers {}×", 2.9)
    prose.check(page, "of a {}× promise", 64.4)
    with pytest.raises(AssertionError):
        prose.check(page, "of a {}× promise", 64.6)
    with pytest.raises(AssertionError):
        prose.check(page, "about {} times", 1024)
    prose.check(page, "about {} times", 1024, significant=1)
    prose.check(page, "{}% of it", 100 * 0.0649)
    with pytest.raises(AssertionError):
        prose.check(page, "{}% of it", float("nan"))


def test_an_anchor_must_be_unique_and_present(tmp_path):
    page = _markdown(tmp_path, "It takes 3 days. Then it takes 4 days.")
    with pytest.raises(AssertionError, match="2 times"):
        prose.shown(page, "{} days")
    with pytest.raises(AssertionError, match="no longer says"):
        prose.shown(page, "{} weeks")
    with pytest.raises(ValueError, match="slot"):
        prose.shown(page, "days")


def test_lessons_are_read_from_their_markdown_cells_only(tmp_path):
    notebook = {"cells": [{"cell_type": "markdown", "source": ["The ridge is 241 FLOPs per byte."]},
                          {"cell_type": "code", "source": ["print('The ridge is 999 FLOPs per byte.')"]},
                          {"cell_type": "markdown", "source": ["## Worked problem\n", "B = 8 is slow."]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert prose.shown(path, "ridge is {} FLOPs")[0].value == 241
    assert prose.shown(path, "B = {}", cell="Worked problem")[0].value == 8
    with pytest.raises(AssertionError, match="cell= phrase"):
        prose.shown(path, "B = {}", cell="nothing like this")
    assert prose.cells("05")[0].startswith("# 05 ")  # a lesson by number: lessons/05_*.ipynb
