"""How a result shows itself in a notebook: one HTML table, every cell escaped.

Every result type's ``_repr_html_`` builds its table here, so a chip or model name with a ``<``
or ``&`` in it shows as text and never as markup, and all tables look alike.

    >>> from accelkit import _html
    >>> _html.table([("chip", "A<B"), ("time", "1 ms")])
    '<table><tr><td>chip</td><td>A&lt;B</td></tr><tr><td>time</td><td>1 ms</td></tr></table>'
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence


def table(rows: Iterable[Sequence[object]], *, header: Sequence[str] | None = None,
          caption: str | None = None, row_headers: bool = False,
          small_last: bool = False) -> str:
    """An HTML table of ``rows`` (each a sequence of cells, shown with ``str``), all escaped.

    Args:
        rows: the body's rows.
        header: column titles, shown as a first row of ``<th>``.
        caption: a bold caption above the table.
        row_headers: the first cell of each row is a left-aligned ``<th>`` (a name column).
        small_last: the last column in a smaller font (a source note).
    """
    def cells(row: Sequence[object]) -> str:
        out = []
        last = len(row) - 1
        for i, cell in enumerate(row):
            text = html.escape(str(cell))
            if i == 0 and row_headers:
                out.append(f"<th style='text-align:left'>{text}</th>")
            elif i == last and small_last and i > 0:
                out.append(f"<td style='font-size:smaller'>{text}</td>")
            else:
                out.append(f"<td>{text}</td>")
        return "<tr>" + "".join(out) + "</tr>"

    parts = ["<table>"]
    if caption is not None:
        parts.append(f"<caption><b>{html.escape(caption)}</b></caption>")
    if header is not None:
        parts.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
    parts.extend(cells(row) for row in rows)
    parts.append("</table>")
    return "".join(parts)


__all__ = ["table"]
