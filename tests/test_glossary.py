"""The glossary defines every term the lessons use, lessons link each term at its first use, and every
lesson header states the minutes the workshop plans give it.

The headers and the course map state exactly the minutes in docs/timings.json (both are written from
it by docs/regenerate.py, and neither changes a word count); docs/timings.json itself may lag the
notebooks' text by make_plans.MINUTES_TOLERANCE, so a one-word prose edit does not fail the suite."""

from __future__ import annotations

import json
import re
import sys

import pytest

from tests import prose
from tests.notebook_runner import ROOT

sys.path.insert(0, str(ROOT / "docs"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import link_glossary  # noqa: E402
import make_plans  # noqa: E402

GLOSSARY = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))


def _entry(anchor: str) -> str:
    """The text of one glossary entry: from its anchor to the next anchor or section."""
    start = GLOSSARY.index(f'<a id="{anchor}"></a>')
    rest = GLOSSARY[start + 1:]
    ends = [i for i in (rest.find('<a id="'), rest.find("\n## ")) if i >= 0]
    return rest[:min(ends)] if ends else rest


def test_every_term_has_an_entry_with_a_heading_and_a_definition():
    anchors = link_glossary.anchors()
    assert set(link_glossary.TERMS) <= anchors, set(link_glossary.TERMS) - anchors
    for anchor in anchors:
        entry = _entry(anchor)
        heading = re.search(r"^### (.+)$", entry, re.M)
        assert heading, f"#{anchor} has no ### heading"
        body = entry[heading.end():].strip()
        assert len(body.split()) >= 12, f"#{anchor} has no definition: {body!r}"


@pytest.mark.parametrize("anchor", sorted(link_glossary.TERMS))
def test_each_entry_names_its_term(anchor):
    # The pattern that finds the term in lessons also finds it in its own heading or definition,
    # so a lesson's link goes to the entry that explains the word it links.
    assert link_glossary.PATTERNS[anchor].search(_entry(anchor)), anchor


def test_the_core_terms_are_defined():
    # The words every lesson leans on; each must have its own entry.
    named = {"hbm", "bf16", "mxu", "sm", "kv-cache", "prefill", "decode", "mfu", "xla", "ici", "fsdp",
             "littles-law", "scaling-book"}
    assert named <= link_glossary.anchors()
    # Issue 24 item 3: words lessons 07 and 10 used without teaching them.
    assert {"annealing", "lora", "offloading", "mlperf", "maxtext", "nemo"} <= set(link_glossary.TERMS)


def test_the_scaling_book_is_said_once_in_the_glossary_and_lesson_00():
    entry = _entry("scaling-book")
    for needed in ("How to Scale Your Model", "Jacob Austin", "Google DeepMind", "jax-ml/scaling-book"):
        assert needed in entry, needed
    cells = link_glossary.markdown_cells(ROOT / "lessons" / "00_start_here.ipynb")
    text = "\n".join(source for _, source in cells)
    assert "How to Scale Your Model" in text and "jax-ml/scaling-book" in text
    assert "](../docs/glossary.md)" in text and re.search(r"^## Glossary$", text, re.M)


# Every hardware figure the glossary quotes, against the catalog it says it comes from: the number is
# read from the glossary's text at the anchor (tests/prose.py) and compared at the precision shown.
FIGURES = [
    ("TPU v5e", lambda c: (c.hbm_bytes / 2**30, c.hbm_bytes_per_second / 1e9), "TPU v5e: {} GiB at {} GB/s"),
    ("H100", lambda c: (c.hbm_bytes / 2**30, c.hbm_bytes_per_second / 1e9), "H100: {} GiB at {} GB/s"),
    ("H100", lambda c: (c.peak_flops("bf16") / 1e12,), "dense (no sparsity): {} TFLOP/s"),
    ("TPU v5e", lambda c: (c.peak_flops("bf16") / 1e12,), "in bf16 for an H100, {} TFLOP/s for a TPU v5e"),
    ("H100", lambda c: (100 * c.achievable_fraction("achievable_flops:bf16"),),
     "{}% of the datasheet for an H100 in bf16"),
    ("TPU v5e", lambda c: (c.peak_flops("bf16") / 1e12, c.hbm_bytes_per_second / 1e9, c.ridge_flops_per_byte()),
     "TPU v5e in bf16: {} TFLOP/s ÷ {} GB/s ≈ {} FLOPs/byte"),
    ("H100", lambda c: (c.peak_flops("bf16") / 1e12, c.hbm_bytes_per_second / 1e9, c.ridge_flops_per_byte()),
     "H100: {} TFLOP/s ÷ {} GB/s ≈ {}."),
    ("H100", lambda c: (c.sms_per_chip,), "An H100 has {} SMs"),
    ("H100", lambda c: (c.watts,), "(H100: {} W)"),
    ("H100", lambda c: (c.onchip_sram_bytes / 2**20,), "({} MiB on an H100)"),
    ("TPU v5e", lambda c: (c.onchip_sram_bytes / 2**20,), "{} MiB on a v5e"),
    ("TPU v5e", lambda c: (c.tensorcores_per_chip, mfu_count(c) / c.tensorcores_per_chip),
     "A TPU v5e chip has {} TensorCore with {} MXUs"),
    ("TPU v5p", lambda c: (c.tensorcores_per_chip,), "with 4 MXUs; a v5p has {}."),
    ("TPU v5p", lambda c: (c.sparsecores_per_chip,), "A TPU v5p chip has {}."),
    ("TPU v5e", lambda c: (c.link_bytes_per_second / 1e9, c.links_per_chip), "{} GB/s per link each way on a v5e ({} links)"),
    ("TPU v5p", lambda c: (c.link_bytes_per_second / 1e9, c.links_per_chip), "{} GB/s on a v5p ({} links)"),
    ("H100", lambda c: (c.links_per_chip, c.link_bytes_per_second / 1e9, c.scaleup_bytes_per_second / 1e9,
                        c.scaleup_domain_chips),
     "on an H100, {} links × {} GB/s = {} GB/s each way per GPU, among the {} GPUs"),
    ("H100", lambda c: (8 * c.scaleout_bytes_per_second / 1e9, c.scaleout_bytes_per_second / 1e9),
     "one {} Gb/s NIC per GPU, {} GB/s each way"),
    ("TPU v5e", lambda c: (c.scaleout_bytes_per_second / 1e9,), "about {} GB/s per v5e chip each way"),
    ("TPU v5e", lambda c: (c.max_domain_chips,), "({} chips for a v5e"),
    ("TPU v5p", lambda c: (c.max_domain_chips,), "{} for a v5p)"),
]


def mfu_count(chip):
    from accelkit import mfu

    return mfu.mxu_count(chip)


@pytest.mark.parametrize("chip, read, anchor", FIGURES, ids=lambda x: x if isinstance(x, str) else None)
def test_glossary_figures_are_the_catalogs(chip, read, anchor):
    import accelkit as ak

    prose.check(ROOT / "docs" / "glossary.md", anchor, *read(ak.chips.get(chip)))


def test_sparsecores_are_on_the_tpus_the_glossary_names():
    import accelkit as ak

    assert prose.says(ROOT / "docs" / "glossary.md", "(v4, v5p, v6e, TPU7x; not the v5e)")
    named = {ak.chips.get(n).name for n in ("v4", "v5p", "v6e", "TPU7x")}
    assert {c.name for c in ak.chips.all() if c.kind == "tpu" and c.has_sparsecores} == named
    assert ak.chips.get("TPU v5e").sparsecores_per_chip == 0


def test_infiniband_is_a_ninth_of_nvlink():
    import accelkit as ak

    h100 = ak.chips.get("H100")
    assert round(h100.scaleup_bytes_per_second / h100.scaleout_bytes_per_second) == 9
    assert "a ninth of its NVLink bandwidth" in GLOSSARY


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_links_each_term_at_its_first_use(path):
    assert link_glossary.problems(path) == []


def test_the_first_use_check_can_fail():
    # A use before the link is caught; a link before the use is accepted; link text must be the term;
    # a term inside another link's text or in a heading is not a use.
    cells = [(0, "# HBM heading\nThe HBM is fast. [HBM](../docs/glossary.md#hbm)")]
    assert [a for a, *_ in link_glossary.first_unlinked_uses(cells)] == ["hbm"]
    cells = [(0, "# HBM\n[lesson 05 · HBM](05_roofline.ipynb)"), (1, "[HBM](../docs/glossary.md#hbm), then HBM")]
    assert link_glossary.first_unlinked_uses(cells) == []
    assert link_glossary.glossary_links('<a href="../docs/glossary.md#mxu">MXU</a>') == [(0, "mxu", "MXU")]


def test_a_term_inside_an_html_block_is_linked_with_a_tag(tmp_path):
    """Markdown is not rendered inside an HTML block (a takeaway box), so a term there, even on
    the block's second line, is linked with <a href> (issue 24: lesson 03's takeaway showed
    "[matmul](../docs/glossary.md#gemm)" as raw text); a markdown link there is refused."""
    box = '<div class="alert">A first line,\nthen a matmul on the next.</div>'
    notebook = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": [box]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "box.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    link_glossary.link(path)
    linked = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    assert '<a href="../docs/glossary.md#gemm">matmul</a>' in linked and "](" not in linked
    notebook["cells"][0]["source"] = [box.replace("matmul", "[matmul](../docs/glossary.md#gemm)")]
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert any("inside an HTML block" in line for line in link_glossary.problems(path))
    # after a blank line the HTML block has ended: markdown again
    assert not link_glossary._in_html_block("<div>box</div>\n\nplain matmul", 20)


def test_every_linked_anchor_exists():
    known = link_glossary.anchors()
    for path in LESSONS:
        for index, source in link_glossary.markdown_cells(path):
            for _, anchor, _ in link_glossary.glossary_links(source):
                assert anchor in known, f"{path.name} cell {index} links #{anchor}"


# --- honest times --------------------------------------------------------------------------------

HEADER_MINUTES = re.compile(r"About (\d+)–(\d+) minutes\.")


def _header(path) -> str:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    first = notebook["cells"][0]
    assert first["cell_type"] == "markdown"
    return "".join(first["source"])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_each_lesson_header_states_the_range_the_plans_take_the_middle_of(path):
    found = HEADER_MINUTES.findall(_header(path))
    assert len(found) == 1, f"{path.name}: the header should say 'About N–M minutes.' once, found {found}"
    row = make_plans.timings()[f"lessons/{path.name}"]
    low, high = (int(x) for x in found[0])
    assert (low, high) == (row["minutes_low"], row["minutes_high"]), (path.name, found, row)
    planned = make_plans.item_minutes(make_plans.lesson(path.name[:2]), make_plans.timings())
    assert low < planned < high and abs(planned - (low + high) / 2) <= 1


def test_the_course_map_minutes_are_the_headers_ranges():
    rows = make_plans.timings()
    cells = link_glossary.markdown_cells(ROOT / "lessons" / "00_start_here.ipynb")
    table = next(source for _, source in cells if "| minutes | needs |" in source)
    seen = {}
    for row in table.splitlines():
        match = re.match(r"\| \[(\d\d) ·.*\| (\d+)–(\d+) \| [^|]+ \|$", row)
        if match:
            seen[match.group(1)] = (int(match.group(2)), int(match.group(3)))
    expected = {p.name[:2]: (rows[f"lessons/{p.name}"]["minutes_low"], rows[f"lessons/{p.name}"]["minutes_high"])
                for p in LESSONS if p.name[:2] != "00"}
    assert seen == expected


NOTEBOOKS = LESSONS + sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_timings_are_within_a_minute_of_this_text(path):
    # docs/timings.json derives minutes from each notebook's content (words, code cells, widgets,
    # questions); the headers, the course map and the plans are written from it. It may lag the
    # text by make_plans.MINUTES_TOLERANCE (one minute: its comment says why), so rewording a
    # sentence does not fail here; a new section or widget does, until the timings are regenerated.
    import lesson_timings

    notebook = str(path.relative_to(ROOT))
    drift = make_plans.drift(notebook)
    assert abs(drift) <= make_plans.MINUTES_TOLERANCE, (
        f"{notebook}: its text now plans {drift:+d} minutes against docs/timings.json "
        f"(tolerance ±{make_plans.MINUTES_TOLERANCE}): run python docs/regenerate.py")
    assert list(lesson_timings.WORDS_PER_MINUTE) == make_plans.json.loads(
        make_plans.TIMINGS.read_text(encoding="utf-8"))["rates"]["words_per_minute"]


def test_the_timing_tolerance_passes_a_reworded_sentence_and_fails_a_new_section(tmp_path):
    import lesson_timings

    path = ROOT / "lessons" / "05_roofline.ipynb"
    row = make_plans.timings()["lessons/05_roofline.ipynb"]
    notebook = json.loads(path.read_text(encoding="utf-8"))
    markdown = next(c for c in notebook["cells"] if c["cell_type"] == "markdown")

    def planned_with(extra_words: int) -> int:
        markdown["source"] = ["".join(markdown["source"]) + " word" * extra_words]
        copy = tmp_path / f"{extra_words}.ipynb"
        copy.write_text(json.dumps(notebook), encoding="utf-8")
        return lesson_timings.count(copy)["planned_minutes"] - row["planned_minutes"]

    assert abs(planned_with(1)) <= make_plans.MINUTES_TOLERANCE
    assert planned_with(int(3 * max(lesson_timings.WORDS_PER_MINUTE))) > make_plans.MINUTES_TOLERANCE
