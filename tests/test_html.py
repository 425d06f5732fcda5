"""accelkit._html: the one table builder every result's _repr_html_ uses escapes every cell."""

import accelkit as ak
from accelkit import _html


def test_cells_captions_and_headers_are_escaped():
    out = _html.table([("a<b", "x & y")], header=("<h>",), caption="<c>")
    assert "a&lt;b" in out and "x &amp; y" in out and "&lt;h&gt;" in out and "&lt;c&gt;" in out
    assert "<b>" in out and "<th>" in out  # the table's own markup stays markup


def test_row_headers_and_small_last_column():
    out = _html.table([("name", "value", "source")], row_headers=True, small_last=True)
    assert out.startswith("<table><tr><th style='text-align:left'>name</th><td>value</td>")
    assert "<td style='font-size:smaller'>source</td>" in out


def test_results_use_it():
    chip_html = ak.chips.get("TPU v5e")._repr_html_()
    assert chip_html.startswith("<table><caption><b>TPU v5e</b></caption>")
    assert "<tr><th>what</th><th>value</th><th>source</th></tr>" in chip_html
    r = ak.roofline.matmul("H100", M=8, N=8, K=8)._repr_html_()
    assert "<td>bound</td><td>memory</td>" in r
