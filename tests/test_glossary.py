"""The glossary defines every term the lessons use, lessons link each term at its first use, and every
lesson header states the minutes the workshop plans give it."""

from __future__ import annotations

import json
import re
import sys

import pytest

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


def test_the_scaling_book_is_said_once_in_the_glossary_and_lesson_00():
    entry = _entry("scaling-book")
    for needed in ("How to Scale Your Model", "Jacob Austin", "Google DeepMind", "jax-ml/scaling-book"):
        assert needed in entry, needed
    cells = link_glossary.markdown_cells(ROOT / "lessons" / "00_start_here.ipynb")
    text = "\n".join(source for _, source in cells)
    assert "How to Scale Your Model" in text and "jax-ml/scaling-book" in text
    assert "](../docs/glossary.md)" in text and re.search(r"^## Glossary$", text, re.M)


# Every hardware figure the glossary quotes, against the catalog it says it comes from.
FIGURES = [
    ("TPU v5e", lambda c: c.hbm_bytes / 2**30, 16, "16 GiB at 819 GB/s"),
    ("TPU v5e", lambda c: c.hbm_bytes_per_second / 1e9, 819, "16 GiB at 819 GB/s"),
    ("H100", lambda c: c.hbm_bytes / 2**30, 80, "80 GB at 3,350 GB/s"),
    ("H100", lambda c: c.hbm_bytes_per_second / 1e9, 3350, "80 GB at 3,350 GB/s"),
    ("H100", lambda c: c.peak_flops("bf16") / 1e12, 989, "989 TFLOP/s"),
    ("TPU v5e", lambda c: c.peak_flops("bf16") / 1e12, 197, "197 TFLOP/s"),
    ("TPU v5e", lambda c: round(c.ridge_flops_per_byte(), 1), 240.5, "≈ 240.5"),
    ("H100", lambda c: round(c.ridge_flops_per_byte()), 295, "≈\n295"),
    ("H100", lambda c: c.sms_per_chip, 132, "132 SMs"),
    ("H100", lambda c: c.watts, 700, "700 W"),
    ("H100", lambda c: c.onchip_sram_bytes / 2**20, 50, "50 MiB"),
    ("TPU v5e", lambda c: c.onchip_sram_bytes / 2**20, 128, "128 MiB on a v5e"),
    ("TPU v5e", lambda c: c.tensorcores_per_chip, 1, "one\nTensorCore with 4 MXUs"),
    ("TPU v5p", lambda c: c.tensorcores_per_chip, 2, "a v5p has two"),
    ("TPU v5p", lambda c: c.sparsecores_per_chip, 4, "v5p chip has four"),
    ("TPU v5e", lambda c: c.sparsecores_per_chip, 0, "not the v5e"),
    ("TPU v5e", lambda c: c.link_bytes_per_second / 1e9, 45, "45 GB/s per link"),
    ("TPU v5e", lambda c: c.links_per_chip, 4, "(4 links)"),
    ("TPU v5p", lambda c: c.link_bytes_per_second / 1e9, 90, "90 GB/s on a v5p"),
    ("TPU v5p", lambda c: c.links_per_chip, 6, "(6 links)"),
    ("H100", lambda c: c.links_per_chip, 18, "18 links"),
    ("H100", lambda c: c.link_bytes_per_second / 1e9, 25, "25 GB/s"),
    ("H100", lambda c: c.scaleup_bytes_per_second / 1e9, 450, "450 GB/s each way"),
    ("H100", lambda c: c.scaleup_domain_chips, 8, "the 8 GPUs"),
    ("H100", lambda c: c.scaleout_bytes_per_second / 1e9, 50, "50 GB/s each way"),
    ("TPU v5e", lambda c: c.scaleout_bytes_per_second / 1e9, 3.125, "3.125 GB/s"),
    ("TPU v5e", lambda c: c.max_domain_chips, 256, "256 chips for a v5e"),
    ("TPU v5p", lambda c: c.max_domain_chips, 8960, "8,960 for a v5p"),
]


@pytest.mark.parametrize("chip, read, value, quoted", FIGURES, ids=lambda x: x if isinstance(x, str) else None)
def test_glossary_figures_are_the_catalogs(chip, read, value, quoted):
    import accelkit as ak

    assert quoted in GLOSSARY, f"the glossary no longer says {quoted!r}: update this test's figure"
    assert read(ak.chips.get(chip)) == pytest.approx(value), (chip, quoted)


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


def test_every_linked_anchor_exists():
    known = link_glossary.anchors()
    for path in LESSONS:
        for index, source in link_glossary.markdown_cells(path):
            for _, anchor, _ in link_glossary.glossary_links(source):
                assert anchor in known, f"{path.name} cell {index} links #{anchor}"


# --- honest times --------------------------------------------------------------------------------

HEADER_MINUTES = re.compile(r"About (\d+) minutes\.")


def _header(path) -> str:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    first = notebook["cells"][0]
    assert first["cell_type"] == "markdown"
    return "".join(first["source"])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_each_lesson_header_states_the_minutes_the_plans_use(path):
    found = HEADER_MINUTES.findall(_header(path))
    assert len(found) == 1, f"{path.name}: the header should say 'About N minutes.' once, found {found}"
    planned = make_plans.item_minutes(make_plans.lesson(path.name[:2]), make_plans.timings())
    assert int(found[0]) == planned, f"{path.name}: header says {found[0]}, plans use {planned}"


def test_the_course_map_minutes_are_the_plans():
    rows = make_plans.timings()
    cells = link_glossary.markdown_cells(ROOT / "lessons" / "00_start_here.ipynb")
    table = next(source for _, source in cells if "| minutes | needs |" in source)
    seen = {}
    for row in table.splitlines():
        match = re.match(r"\| \[(\d\d) ·.*\| (\d+) \| [^|]+ \|$", row)
        if match:
            seen[match.group(1)] = int(match.group(2))
    expected = {p.name[:2]: make_plans.item_minutes(make_plans.lesson(p.name[:2]), rows)
                for p in LESSONS if p.name[:2] != "00"}
    assert seen == expected


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_the_timings_were_measured_on_this_text(path):
    # docs/timings.json derives minutes from each notebook's word count; if the prose changed since it
    # was measured, the minutes in the header and the plans are stale.
    import lesson_timings

    row = make_plans.timings()[f"lessons/{path.name}"]
    words = sum(len(source.split()) for _, source in link_glossary.markdown_cells(path))
    assert words == row["words"], (f"{path.name} has {words} words, docs/timings.json {row['words']}: run "
                                   "python benchmarks/lesson_timings.py --write && python docs/make_plans.py")
    assert lesson_timings.WORDS_PER_MINUTE == make_plans.json.loads(
        make_plans.TIMINGS.read_text(encoding="utf-8"))["rates"]["words_per_minute"]
