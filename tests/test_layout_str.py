"""A layout's printed form cannot be misread (issue 24: "dp128 tp8 pp16 v4" read as "TPU v4")."""

from __future__ import annotations

import re

from accelkit.parallel import Layout


def test_the_interleave_is_written_out_not_as_a_chip_name():
    text = str(Layout(dp=128, tp=8, pp=16, microbatch_tokens=8192, recompute="full", interleave=4))
    assert text == "dp128 tp8 pp16 interleave=4 mb=8,192 recompute=full"
    assert not re.search(r"\bv\d", text)  # no token a reader takes for a TPU generation
    assert "interleave" not in str(Layout(dp=8, pp=4))  # 1 (no interleaving) is not shown
