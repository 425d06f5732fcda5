"""Link each glossary term at its first use in a lesson to its entry in docs/glossary.md.

Run: ``python docs/link_glossary.py`` lists, per lesson, the terms used before they are linked;
``python docs/link_glossary.py --write lessons/05_roofline.ipynb ...`` links them in those notebooks
(markdown cells only, in place: the term's first use becomes ``[term](../docs/glossary.md#anchor)``,
or an ``<a href>`` inside an HTML block such as a takeaway box). tests/test_glossary.py fails when a
lesson uses a term before linking it, links an anchor the glossary lacks, puts a markdown link
inside an HTML block (it shows as raw text there), or when a term below has no entry.

A *use* is a match of the term's pattern in a markdown cell outside headings, code, maths, HTML tags
and the text of other links (a term inside "[lesson 05 · roofline](05_roofline.ipynb)" cannot carry a
second link, so it does not count).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "glossary.md"
TARGET = "../docs/glossary.md"

# anchor in docs/glossary.md -> the pattern of the term's uses in lesson prose (case-sensitive).
TERMS: dict[str, str] = {
    "scaling-book": r"\b[Tt]he scaling book\b",
    "flop": r"\bFLOPs?\b",
    "mac": r"\bMACs?\b|\b[Mm]ultiply-accumulates?\b",
    "bf16": r"\bbf16\b|\bbfloat16\b",
    "fp32": r"\b[Ff][Pp]32\b",
    "fp8": r"\b[Ff][Pp]8\b",
    "int8": r"\b[Ii][Nn][Tt]8\b",
    "gemm": r"\bGEMMs?\b|\bmatmuls?\b",
    "arithmetic-intensity": r"\b[Aa]rithmetic intensity\b",
    "roofline": r"\b[Rr]ooflines?\b",
    "ridge-point": r"\b[Rr]idges?(?: points?)?\b",
    "utilization": r"\b[Uu]tili[sz]ation\b",
    "simd": r"\bSIMD\b",
    "simt": r"\bSIMT\b",
    "warp": r"\b[Ww]arps?\b",
    "lane": r"\b[Ll]anes?\b",
    "sm": r"\bSMs?\b",
    "tensor-core": r"\b[Tt]ensor[- ][Cc]ores?\b",
    "shared-memory": r"\b[Ss]hared memory\b|\bL2\b",
    "coalescing": r"\b[Cc]oalesc\w*",
    "divergence": r"\b[Dd]ivergen(?:ce|t)\b",
    "cuda": r"\bCUDA\b",
    "tpu": r"\bTPUs?\b",
    "tensorcore": r"\bTensorCores?\b",
    "mxu": r"\bMXUs?\b",
    "systolic-array": r"\b[Ss]ystolic\b",
    "dataflow": r"\b[Dd]ataflows?\b|\b(?:weight|output|input)-stationary\b",
    "fold": r"\b[Ff]olds?\b",
    "vector-unit": r"\b[Vv]ector units?\b|\bVPU\b",
    "sparsecore": r"\bSparseCores?\b",
    "vmem": r"\bVMEM\b",
    "hbm": r"\bHBM\d*e?\b",
    "sram": r"\bSRAM\b",
    "tdp": r"\bTDPs?\b",
    "chip-hour": r"\b(?:chip|GPU)-hours?\b",
    "ici": r"\bICI\b",
    "nvlink": r"\bNVLink\b",
    "infiniband": r"\bInfiniBand\b",
    "dcn": r"\bDCN\b",
    "torus": r"\btor(?:us|i)\b",
    "ocs": r"\b[Oo]ptical circuit switch(?:es|ing)?\b|\bOCS\b",
    "sharp": r"\bSHARP\b",
    "pod": r"\bpods?\b",
    "data-parallel": r"\b[Dd]ata[- ]parallel\w*|\bDP\b",
    "fsdp": r"\bFSDP\b",
    "tensor-parallel": r"\b[Tt]ensor[- ]parallel\w*|\bTP\b",
    "pipeline-parallel": r"\b[Pp]ipeline[- ]parallel\w*|\bPP\b",
    "expert-parallel": r"\b[Ee]xpert[- ]parallel\w*|\bEP\b",
    "mixture-of-experts": r"\b[Mm]ixtures? of experts\b|\bMoE\b",
    "all-reduce": r"\b[Aa]ll-reduces?\b|\ballreduce\b",
    "all-gather": r"\b[Aa]ll-gather\w*",
    "reduce-scatter": r"\b[Rr]educe-scatter\w*",
    "mfu": r"\bMFU\b",
    "hfu": r"\bHFU\b",
    "token": r"\b[Tt]okens?\b",
    "prefill": r"\b[Pp]refill\b",
    "decode": r"\b[Dd]ecode\b",
    "kv-cache": r"\bKV[- ]cache\b",
    "gqa": r"\b[Gg]rouped-query attention\b|\bGQA\b",
    "embedding": r"\b[Ee]mbeddings?\b",
    "xla": r"\bXLA\b",
    "pallas": r"\bPallas\b|\bTriton\b",
    "scale-sim": r"\bSCALE-Sim\b",
    "annealing": r"\b[Aa]nnealing(?: stages?)?\b",
    "lora": r"\bLoRA\b",
    "offloading": r"\b[Oo]ffload(?:s|ing|ed)?\b",
    "maxtext": r"\bMaxText\b",
    "nemo": r"\bNeMo\b",
    "mlperf": r"\bMLPerf\b",
    "littles-law": r"\bLittle[’']s law\b",
    "amdahls-law": r"\bAmdahl[’']s law\b",
}
PATTERNS = {anchor: re.compile(pattern) for anchor, pattern in TERMS.items()}

MD_LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]*)\)")
HTML_LINK = re.compile(r"<a\s+href=\"([^\"]*)\"[^>]*>(.*?)</a>", re.S)
GLOSSARY_HREF = re.compile(re.escape(TARGET) + r"#([A-Za-z0-9_-]+)$")
# Spans that are not prose a learner reads as a term's use.
_MASKED = (
    re.compile(r"```.*?```", re.S),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\$[^$\n]*\$"),
    HTML_LINK,
    MD_LINK,
    re.compile(r"<[^>\n]*>"),
    re.compile(r"https?://\S+"),
    re.compile(r"^#{1,6} .*$", re.M),
)


def anchors() -> set[str]:
    """The HTML anchors (``<a id="...">``) of docs/glossary.md."""
    return set(re.findall(r"<a id=\"([^\"]+)\"></a>", GLOSSARY.read_text(encoding="utf-8")))


def masked(text: str) -> str:
    """``text`` with code, maths, headings, tags and link texts blanked (same length)."""
    out = list(text)
    for pattern in _MASKED:
        for match in pattern.finditer(text):
            out[match.start():match.end()] = " " * (match.end() - match.start())
    return "".join(out)


def glossary_links(text: str) -> list[tuple[int, str, str]]:
    """(position, anchor, link text) of every link into the glossary, in order."""
    found = []
    for match in MD_LINK.finditer(text):
        href = GLOSSARY_HREF.search(match.group(2))
        if href and match.group(2).startswith(TARGET):
            found.append((match.start(), href.group(1), match.group(1)))
    for match in HTML_LINK.finditer(text):
        href = GLOSSARY_HREF.search(match.group(1))
        if href and match.group(1).startswith(TARGET):
            found.append((match.start(), href.group(1), match.group(2)))
    return sorted(found)


def markdown_cells(path: Path) -> list[tuple[int, str]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [(i, "".join(c["source"])) for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "markdown"]


def first_unlinked_uses(cells: list[tuple[int, str]]) -> list[tuple[str, int, int, int]]:
    """(anchor, cell index, start, end) of each term used before any link to its entry."""
    problems = []
    for anchor, pattern in PATTERNS.items():
        for index, source in cells:
            linked = [pos for pos, target, _ in glossary_links(source) if target == anchor]
            use = pattern.search(masked(source))
            if linked and (use is None or linked[0] < use.start()):
                break  # linked first: later uses are fine
            if use is not None:
                problems.append((anchor, index, use.start(), use.end()))
                break
    return problems


def problems(path: Path) -> list[str]:
    """What tests/test_glossary.py reports for one lesson: unlinked first uses and bad links."""
    cells = markdown_cells(path)
    known = anchors()
    found = []
    for anchor, index, start, end in first_unlinked_uses(cells):
        source = dict(cells)[index]
        found.append(f"{path.name} cell {index}: {source[start:end]!r} is used before it links #{anchor}")
    for index, source in cells:
        for match in MD_LINK.finditer(source):
            if _in_html_block(source, match.start()):
                found.append(f"{path.name} cell {index}: {match.group(0)!r} is a markdown link "
                             "inside an HTML block, where it shows as raw text: use <a href>")
        for _, anchor, text in glossary_links(source):
            if anchor not in known:
                found.append(f"{path.name} cell {index}: link to #{anchor}, which docs/glossary.md lacks")
            elif anchor in PATTERNS and not PATTERNS[anchor].search(text):
                found.append(f"{path.name} cell {index}: link text {text!r} is not the term #{anchor}")
    return found


def _in_html_block(source: str, position: int) -> bool:
    """Whether ``position`` lies in an HTML block: a paragraph (text between blank lines) whose
    first line starts with a tag, such as a takeaway box. Markdown is not rendered there, so a
    ``[term](link)`` would show as raw text: a term inside one is linked with ``<a href>``."""
    start = max(source.rfind("\n\n", 0, position), source.rfind("\n \n", 0, position))
    return source[start + 1 if start >= 0 else 0:].lstrip().startswith("<")


def link(path: Path) -> list[str]:
    """Link every term's first unlinked use in ``path``'s markdown cells; returns what it linked."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    done = []
    while True:
        cells = [(i, "".join(c["source"])) for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "markdown"]
        todo = first_unlinked_uses(cells)
        if not todo:
            break
        anchor, index, start, end = todo[0]
        source = dict(cells)[index]
        term = source[start:end]
        if _in_html_block(source, start):
            linked = f'<a href="{TARGET}#{anchor}">{term}</a>'
        else:
            linked = f"[{term}]({TARGET}#{anchor})"
        source = source[:start] + linked + source[end:]
        notebook["cells"][index]["source"] = source.splitlines(keepends=True)
        done.append(f"cell {index}: {term} -> #{anchor}")
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return done


def main(argv: list[str]) -> int:
    if argv[:1] == ["--write"]:
        for name in argv[1:]:
            for line in link(Path(name).resolve()):
                print(f"{name}: {line}")
        return 0
    failed = 0
    for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")):
        for line in problems(path):
            print(line)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
