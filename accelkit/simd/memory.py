"""How a warp touches global memory: the segments its lanes' addresses fall in.

A warp's load or store costs one transaction per distinct ``transaction_bytes`` segment its
active lanes touch, so coalescing is counted from the addresses, not assumed. Rows of a global
matrix start on a segment boundary (a pitched allocation, as ``cudaMallocPitch`` does), so two
rows never share a segment. :func:`access_pattern_indices` builds lesson 02's access patterns.

    >>> import numpy as np
    >>> transactions(np.arange(64), lanes=32, element_bytes=4, transaction_bytes=32)
    8
    >>> transactions(np.arange(64) * 8, lanes=32, element_bytes=4, transaction_bytes=32)
    64
"""

from __future__ import annotations

import numpy as np

from accelkit import _validate as check

#: Largest M, N or K that ``SIMDMachine.estimate`` accepts, and the most threads an access
#: pattern holds. The closed form's cost grows with the number of tiles along each side, so
#: without a bound 1e9 took ~40 s and 1e300 failed inside numpy; 2**20 keeps every
#: configuration well under a second.
MAX_DIMENSION = 1 << 20

#: Elements per kernel launch in lesson 02's small experiments: 128 warps of 32 lanes.
PATTERN_ELEMENTS = 4096


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` in exact integer arithmetic."""
    return -(-a // b)


def pitch(cols: int, element_bytes: int, segment: int) -> int:
    """Bytes from one row of a pitched matrix to the next: a row rounded up to whole segments."""
    return ceil_div(cols * element_bytes, segment) * segment


def distinct_segments(addresses: np.ndarray, active: np.ndarray, segment: int) -> np.ndarray:
    """Per warp instruction (last axis = lanes): how many distinct segments its active lanes
    touch."""
    seg = np.where(active, addresses // segment, -1)
    seg.sort(axis=-1)
    new = np.ones(seg.shape, dtype=bool)
    new[..., 1:] = seg[..., 1:] != seg[..., :-1]
    return (new & (seg >= 0)).sum(axis=-1)


def run_segments(length: int, width: int, element_bytes: int, segment: int) -> int:
    """Segments touched when a pitched row of ``length`` elements is read in pieces of ``width``
    (the closed form of :func:`distinct_segments` for contiguous pieces)."""
    starts = np.arange(0, length, width, dtype=np.int64)
    lens = np.minimum(width, length - starts)
    first = starts * element_bytes // segment
    last = ((starts + lens) * element_bytes - 1) // segment
    return int((last - first + 1).sum())


def index_vector(name: str, value: object) -> np.ndarray:
    """A non-empty 1-D array of whole numbers >= 0 (element indices), as int64.

    Raises:
        TypeError, ValueError: naming ``name``.
    """
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a 1-D array of whole numbers, got {type(value).__name__}")
    if value.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold whole numbers, got dtype {value.dtype}")
    if value.ndim != 1 or value.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {value.shape}")
    if value.size > check.MAX_ELEMENTS:
        raise ValueError(f"{name} has {value.size:,} elements, more than {check.MAX_ELEMENTS:,}")
    if value.min() < 0:
        raise ValueError(f"{name} must be >= 0, got {value.min()}")
    return value.astype(np.int64)


def transactions(indices: object, *, lanes: int, element_bytes: int,
                 transaction_bytes: int) -> int:
    """Global-memory transactions for one load in which thread t reads element ``indices[t]``.

    Threads are grouped into warps of ``lanes``; each warp costs one transaction per distinct
    ``transaction_bytes`` segment it touches. ``np.arange(n)`` is perfectly coalesced.
    """
    idx = index_vector("indices", indices)
    warps = ceil_div(idx.size, lanes)
    padded = np.zeros(warps * lanes, dtype=np.int64)
    padded[:idx.size] = idx
    active = np.arange(padded.size) < idx.size
    counts = distinct_segments((padded * element_bytes).reshape(warps, lanes),
                               active.reshape(warps, lanes), transaction_bytes)
    return int(counts.sum())


def access_pattern_indices(pattern: str, n: int = PATTERN_ELEMENTS, seed: int = 0) -> np.ndarray:
    """Element indices thread t reads, for a named access pattern.

    ``"coalesced"``: thread t reads element t. ``"stride s"``: element s·t (s a whole number
    >= 1). ``"random"``: a seeded uniform draw over ``[0, 8·n)``, the span of stride 8, so the
    random and stride-8 kernels touch the same range of memory.

    Args:
        pattern: ``"coalesced"``, ``"stride <s>"`` or ``"random"``.
        n: threads (indices), 1 to 2**20.
        seed: the random pattern's seed, >= 0.
    Returns:
        An int64 array of ``n`` indices, for ``SIMDMachine.gather`` or
        ``SIMDMachine.transactions``.
    Raises:
        TypeError: ``pattern`` is not a str, or a number of the wrong type.
        ValueError: an unknown pattern or a stride, ``n`` or seed out of range.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be 'coalesced', 'stride <s>' or 'random', "
                        f"got {type(pattern).__name__} {pattern!r}")
    n = check.positive_int("n", n, maximum=MAX_DIMENSION)
    seed = check.nonnegative_int("seed", seed, maximum=2**63 - 1)
    words = pattern.split()
    if words == ["coalesced"]:
        return np.arange(n, dtype=np.int64)
    if len(words) == 2 and words[0] == "stride" and words[1].isdigit():
        stride = check.positive_int("stride", int(words[1]), maximum=MAX_DIMENSION)
        return np.arange(n, dtype=np.int64) * stride
    if words == ["random"]:
        return np.random.default_rng(seed).integers(0, 8 * n, n).astype(np.int64)
    raise ValueError(f"pattern must be 'coalesced', 'stride <s>' or 'random', got {pattern!r}")


__all__ = ["MAX_DIMENSION", "PATTERN_ELEMENTS", "access_pattern_indices", "ceil_div",
           "distinct_segments", "index_vector", "pitch", "run_segments", "transactions"]
