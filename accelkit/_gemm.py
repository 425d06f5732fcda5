"""The GEMM operands both toy engines accept, and the exact product they both return.

Integers are accumulated exactly in int64 (refused up front when the sums could overflow), floats
in float64: the one rule :mod:`accelkit.systolic` and :mod:`accelkit.simd` share.

    >>> import numpy as np
    >>> A, B = operands([[1, 2], [3, 4]], np.eye(2, dtype=int))
    >>> exact_product(A, B).tolist(), accumulator(A, B).__name__
    ([[1, 2], [3, 4]], 'int64')
"""

from __future__ import annotations

import numpy as np

from accelkit import _validate as check


def operands(A: object, B: object) -> tuple[np.ndarray, np.ndarray]:
    """A (M×K) and B (K×N) as numeric numpy matrices whose inner dimensions agree.

    Raises:
        TypeError, ValueError: naming ``A`` or ``B`` (see :func:`accelkit._validate.matrix`).
    """
    A = check.matrix("A", A)
    B = check.matrix("B", B)
    check.chained("A", A, "B", B)
    return A, B


def accumulator(A: np.ndarray, B: np.ndarray) -> type:
    """int64 for integer operands (after checking the sums cannot overflow), else float64.

    Raises:
        ValueError: integers so large that ``|A|max · |B|max · K`` reaches 2**63.
    """
    if A.dtype.kind in "iu" and B.dtype.kind in "iu":
        bound = int(np.abs(A).max(initial=0)) * int(np.abs(B).max(initial=0)) * A.shape[1]
        if bound >= 2**63:
            raise ValueError(
                "A and B hold integers too large to accumulate exactly in 64 bits "
                f"(|A|max·|B|max·K = {bound:.3g} >= 2**63); scale them down or pass floats"
            )
        return np.int64
    return np.float64


def exact_product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B with integers accumulated exactly in int64 and floats in float64."""
    dtype = accumulator(A, B)
    return A.astype(dtype) @ B.astype(dtype)


__all__ = ["accumulator", "exact_product", "operands"]
