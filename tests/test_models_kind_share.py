"""models.kind_share: the share of a pass's FLOPs and bytes in chosen kinds of operation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import accelkit as ak
from accelkit.models import KINDS, MATRIX_KINDS, Operation, kind_share


def test_share_by_hand():
    ops = (Operation("a", "matmul", 90.0, 10.0), Operation("b", "elementwise", 10.0, 30.0),
           Operation("c", "conv", 0.0, 60.0))
    share = kind_share(ops, ("matmul", "conv"))
    assert share.flops_fraction == pytest.approx(0.9)
    assert share.bytes_fraction == pytest.approx(0.7)
    assert kind_share(ops, "elementwise").bytes_fraction == pytest.approx(0.3)
    assert "90.0% of FLOPs" in repr(share)


def test_default_is_the_matrix_kinds():
    ops = ak.models.get("resnet-50").operations(batch=4)
    assert kind_share(ops) == kind_share(ops, MATRIX_KINDS)
    assert set(MATRIX_KINDS) <= set(KINDS)


@given(st.sampled_from(ak.models.names()), st.integers(1, 64))
def test_all_kinds_add_up_to_one_and_fractions_are_fractions(name, batch):
    ops = ak.models.get(name).operations(batch=batch)
    every = kind_share(ops, KINDS)
    assert math.isclose(every.flops_fraction, 1.0) and math.isclose(every.bytes_fraction, 1.0)
    parts = [kind_share(ops, k) for k in KINDS]
    assert math.isclose(sum(p.flops_fraction for p in parts), 1.0)
    assert all(0.0 <= p.bytes_fraction <= 1.0 for p in parts)


@pytest.mark.parametrize("ops, kinds, error", [
    ((), MATRIX_KINDS, ValueError),
    ((Operation("a", "matmul", 1.0, 1.0),), ("tensor",), ValueError),
    ((Operation("a", "matmul", 1.0, 1.0),), (), TypeError),
    ((Operation("a", "matmul", 1.0, 1.0),), ["matmul"], TypeError),
    ((("a", "matmul", 1.0, 1.0),), MATRIX_KINDS, TypeError),
])
def test_bad_input_is_named(ops, kinds, error):
    with pytest.raises(error, match="kinds|operations"):
        kind_share(ops, kinds)
