"""Read the numbers a lesson's prose states, so claim tests compare the prose itself with the library.

A claim test must not type a number into itself that the lesson also types: the two copies drift
apart silently (the prose is edited, the test still checks its own copy). Instead the test names the
words next to the number, this module finds them in the lesson's markdown and reads the number
there, with the precision the prose shows, and the test compares it with the library's value:

    prose.check("05", "ridge of {} FLOPs per byte", v5e.ridge_flops_per_byte("bf16"))

* ``source``: a lesson number (``"05"``: lessons/05_*.ipynb, its markdown cells), or a path to a
  notebook (its markdown cells) or to a markdown file (docs/glossary.md).
* ``anchor``: a phrase with one ``{}`` slot per number. It is matched against the markdown as a
  reader sees it: links reduced to their text, HTML tags, emphasis and backticks dropped, entities
  and runs of white space (non-breaking spaces included) folded to one space. It must occur exactly
  once in the lesson (or in the cell picked by ``cell=``, a phrase that occurs in one markdown cell
  only); otherwise the test fails and says where it looked. Keep anchors to the few words that carry
  the number's meaning (usually its unit), so rewording the rest of the sentence does not matter.
* A slot matches a number as written in prose: ``8,960``, ``2.89``, ``−3``, or a number word from
  zero to ninety-nine (``eight``, ``twenty-six``). It does not match digits inside a name
  (``v5e``, ``H100``, ``70B``).
* ``check`` passes when the library's value, rounded to the decimals the prose shows, prints as the
  prose's number: "2.89" accepts 2.885 to 2.895, "15" accepts 14.5 to 15.5. Where the prose rounds
  a whole number further (it writes "1,000" for 1,024), say so with ``significant=`` (the figures
  the prose means), never with a tolerance of the test's own. A percentage in the prose ("6%")
  is compared with the value the caller passes in percent (``100 * fraction``).

When a check fails, the message shows the sentence, what the prose says and what the library says:
update the prose (or find why the library changed), not the test.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
WORDS = {**{w: i for i, w in enumerate(_UNITS)},
         **{t: 20 + 10 * i for i, t in enumerate(_TENS)},
         **{f"{t}-{u}": 20 + 10 * i + j for i, t in enumerate(_TENS) for j, u in enumerate(_UNITS[1:10], 1)}}
# A number as prose writes it; not preceded by a letter, digit or point (v5e, H100, 1.5.2), not
# followed by more digits, and not the tail of a name such as 70B (a letter right after a digit).
_DIGITS = r"[−-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_WORD = r"(?i:" + "|".join(sorted(WORDS, key=len, reverse=True)) + r")"


def _slot(letter_follows: bool) -> str:
    """The regex of one slot; a letter may follow the digits only where the anchor puts one there
    ("{}T tokens" for "15T tokens")."""
    after = r"(?![\d]|[.,]\d)" if letter_follows else r"(?![\d]|[.,]\d|[A-Za-z])"
    return rf"(?<![\w.,−-])((?:{_DIGITS}){after}|\b{_WORD}\b)"


@dataclass(frozen=True)
class Shown:
    """One number as a lesson's prose shows it."""

    source: str
    text: str  # as written: "8,960", "2.89", "eight"
    value: float
    decimals: int  # digits after the point, as shown
    context: str  # the sentence around it, for messages

    def agrees(self, value: float, significant: int | None = None) -> bool:
        """Whether ``value``, rounded as the prose rounds, is the number the prose shows."""
        return math.isfinite(value) and _fmt(_round(value, significant), self.decimals) == _fmt(
            self.value, self.decimals)


def _round(value: float, significant: int | None) -> float:
    if significant is None or value == 0 or not math.isfinite(value):
        return value
    return round(value, significant - 1 - math.floor(math.log10(abs(value))))


def _fmt(value: float, decimals: int) -> str:
    text = f"{value:,.{decimals}f}"
    return text.lstrip("-") if float(text.replace(",", "")) == 0 else text


def normalise(markdown: str) -> str:
    """The text a reader sees: link text without targets, no tags or emphasis, one space between words."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", markdown)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = html.unescape(text)
    text = text.replace("**", "").replace("__", "").replace("`", "").replace("*", "")
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ").replace("\u202f", " ").replace("\u2009", " ")).strip()


def _path(source: str | Path) -> Path:
    if isinstance(source, Path):
        return source
    found = sorted((ROOT / "lessons").glob(f"{source}_*.ipynb"))
    if len(found) != 1:
        raise ValueError(f"no single lessons/{source}_*.ipynb")
    return found[0]


@lru_cache(maxsize=None)
def _cells(path: Path, stamp: tuple[int, int]) -> tuple[str, ...]:
    if path.suffix == ".md":
        return (normalise(path.read_text(encoding="utf-8")),)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return tuple(normalise("".join(c["source"])) for c in notebook["cells"] if c["cell_type"] == "markdown")


def cells(source: str | Path) -> tuple[str, ...]:
    """The markdown cells of a lesson (or the one text of a markdown file), normalised."""
    path = _path(source)
    stat = path.stat()
    return _cells(path, (stat.st_mtime_ns, stat.st_size))  # re-read when the file changes


def _name(source: str | Path) -> str:
    if isinstance(source, str):
        return f"lesson {source}"
    return str(source.relative_to(ROOT)) if source.is_relative_to(ROOT) else str(source)


def _scope(source: str | Path, cell: str | None) -> list[str]:
    texts = list(cells(source))
    if cell is None:
        return texts
    key = normalise(cell)
    chosen = [t for t in texts if key in t]
    assert len(chosen) == 1, (f"{_name(source)}: {len(chosen)} markdown cells say {cell!r}, "
                              "the cell= phrase must pick exactly one")
    return chosen


def _pattern(anchor: str) -> re.Pattern:
    parts = normalise(anchor.replace("{}", "\x00")).split("\x00")
    if len(parts) < 2:
        raise ValueError(f"anchor {anchor!r} has no {{}} slot for the number")
    pieces = [re.sub(r"\\ ", r"\\s+", re.escape(p)) for p in parts]
    regex = pieces[0]
    for piece, following in zip(pieces[1:], parts[1:]):
        regex += _slot(following[:1].isalpha()) + piece
    return re.compile(regex)


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around ``text[start:end]`` (at most 160 characters either side), for messages."""
    left = max([text.rfind(mark, 0, start) + len(mark) for mark in (". ", ": ")] + [start - 160, 0])
    ends = [i + 1 for i in (text.find(". ", end),) if i >= 0] + [end + 160, len(text)]
    return "…" + text[left:min(ends)].strip() + "…"


def _number(text: str) -> tuple[float, int]:
    if text.lower() in WORDS:
        return float(WORDS[text.lower()]), 0
    digits = text.replace(",", "").replace("−", "-")
    return float(digits), len(digits.split(".")[1]) if "." in digits else 0


def shown(source: str | Path, anchor: str, *, cell: str | None = None) -> tuple[Shown, ...]:
    """The numbers in the ``{}`` slots of the one place the prose says ``anchor``."""
    pattern = _pattern(anchor)
    hits = [(text, m) for text in _scope(source, cell) for m in pattern.finditer(text)]
    where = f"{_name(source)}" + (f" (the cell that says {cell!r})" if cell else "")
    assert hits, (f"{where}: the prose no longer says {anchor!r}. If it was reworded, point this "
                  "test at the words now next to the number; if the number went, drop its check.")
    assert len(hits) == 1, (f"{where} says {anchor!r} {len(hits)} times: "
                            + " | ".join(_sentence(t, m.start(), m.end()) for t, m in hits)
                            + " — lengthen the anchor or pass cell=")
    text, match = hits[0]
    context = _sentence(text, match.start(), match.end())
    return tuple(Shown(_name(source), match.group(i), *_number(match.group(i)), context)
                 for i in range(1, pattern.groups + 1))


def check(source: str | Path, anchor: str, *values: float, cell: str | None = None,
          significant: int | None = None) -> tuple[Shown, ...]:
    """Assert the prose's numbers at ``anchor`` are ``values`` as the prose rounds them."""
    found = shown(source, anchor, cell=cell)
    assert len(found) == len(values), f"{anchor!r} has {len(found)} slots, {len(values)} values given"
    for number, value in zip(found, values):
        assert number.agrees(value, significant), (
            f"{number.source} says {number.text} where the library now gives {value!r} "
            f"({_rounded(value, number, significant)} as the prose rounds): {number.context}")
    return found


def says(source: str | Path, phrase: str, *, cell: str | None = None) -> bool:
    """Whether the prose (or the cell picked by ``cell=``) says ``phrase``, as a reader sees it."""
    key = normalise(phrase)
    return any(key in text for text in _scope(source, cell))


def _rounded(value: float, number: Shown, significant: int | None) -> str:
    return _fmt(_round(value, significant), number.decimals) if math.isfinite(value) else str(value)
