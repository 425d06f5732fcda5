"""Argument checking shared by every public function.

Every check raises a ``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind, wrong
value) whose message names the parameter and the allowed range, so a learner never sees a
traceback from deep inside numpy.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable, Mapping
from typing import TypeVar

import numpy as np

T = TypeVar("T")

#: Largest number of elements an engine will materialise in one array. Above this a request is
#: refused up front rather than exhausting memory (64 Mi elements = 512 MiB of float64).
MAX_ELEMENTS = 1 << 26


def positive_int(name: str, value: object, *, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is a whole number >= 1 (and <= maximum).

    Accepts Python ints, numpy integers and floats that are exactly whole (``4.0``); rejects
    bools, fractions, NaN and inf.
    """
    return _int_in_range(name, value, minimum=1, maximum=maximum)


def nonnegative_int(name: str, value: object, *, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is a whole number >= 0 (and <= maximum)."""
    return _int_in_range(name, value, minimum=0, maximum=maximum)


def _int_in_range(name: str, value: object, *, minimum: int, maximum: int | None) -> int:
    allowed = f"a whole number >= {minimum}" + (f" and <= {maximum:,}" if maximum is not None else "")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {allowed}, got {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Integral):
        result = int(value)
    else:
        as_float = float(value)
        if not math.isfinite(as_float) or as_float != int(as_float):
            raise ValueError(f"{name} must be {allowed}, got {value!r}")
        result = int(as_float)
    if result < minimum or (maximum is not None and result > maximum):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return result


def positive_float(name: str, value: object, *, maximum: float | None = None,
                   inclusive_max: bool = True) -> float:
    """Return ``value`` as a finite ``float`` > 0 (and <= or < maximum)."""
    return real_in_range(name, value, low=0.0, low_inclusive=False, high=maximum,
                         high_inclusive=inclusive_max)


def real_in_range(name: str, value: object, *, low: float | None = None, high: float | None = None,
                  low_inclusive: bool = True, high_inclusive: bool = True) -> float:
    """Return ``value`` as a finite ``float`` within the stated interval."""
    left = "(-inf" if low is None else ("[" if low_inclusive else "(") + f"{low:g}"
    right = "inf)" if high is None else f"{high:g}" + ("]" if high_inclusive else ")")
    allowed = f"a finite number in {left}, {right}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {allowed}, got {type(value).__name__} {value!r}")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    too_low = low is not None and (result < low or (not low_inclusive and result == low))
    too_high = high is not None and (result > high or (not high_inclusive and result == high))
    if too_low or too_high:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return result


def fraction(name: str, value: object) -> float:
    """A share in (0, 1], such as MFU or utilization."""
    return real_in_range(name, value, low=0.0, high=1.0, low_inclusive=False)


def choice(name: str, value: object, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed`` (case-insensitive); else name the options."""
    options = list(allowed)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {options}, got {type(value).__name__} {value!r}")
    lowered = value.strip().lower()
    for option in options:
        if option.lower() == lowered:
            return option
    close = difflib.get_close_matches(lowered, [o.lower() for o in options], n=3, cutoff=0.5)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    raise ValueError(f"{name} must be one of {options}, got {value!r}{hint}")


def matrix(name: str, value: object) -> np.ndarray:
    """Return ``value`` as a 2-D numeric numpy array (ints, unsigned ints or floats).

    Rejects bools, complex, objects and strings, non-2-D shapes, empty dimensions and NaN/inf.
    """
    if isinstance(value, np.ndarray):
        array = value
    elif isinstance(value, (list, tuple)):
        try:
            array = np.asarray(value)
        except ValueError as exc:  # ragged nested lists
            raise ValueError(f"{name} must be a rectangular 2-D array of numbers: {exc}") from None
    else:
        raise TypeError(f"{name} must be a 2-D numpy array of numbers, got {type(value).__name__}")
    if array.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold integers or floats, got dtype {array.dtype} "
            "(bools, complex numbers, strings and objects are not supported)"
        )
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (a matrix), got {array.ndim}-D with shape {array.shape}")
    if array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got shape {array.shape}")
    if array.size > MAX_ELEMENTS:
        raise ValueError(
            f"{name} has {array.size:,} elements, more than the {MAX_ELEMENTS:,} this toy engine "
            "will hold in memory; use estimate() for large shapes"
        )
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise ValueError(f"{name} must not contain NaN or inf")
    return array


def chained(a_name: str, a: np.ndarray, b_name: str, b: np.ndarray) -> None:
    """Check that ``a @ b`` is defined: a is M×K and b is K×N."""
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"shapes do not chain: {a_name} is {a.shape[0]}×{a.shape[1]} (M×K) but {b_name} is "
            f"{b.shape[0]}×{b.shape[1]}; {b_name} must have K = {a.shape[1]} rows"
        )


def lookup(kind: str, name: object, table: Mapping[str, T]) -> T:
    """Find ``name`` in ``table`` (keys already normalised), or fail naming close matches."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} must be a name (str), got {type(name).__name__} {name!r}")
    key = normalise_name(name)
    if key in table:
        return table[key]
    close = difflib.get_close_matches(key, list(table), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ValueError(f"unknown {kind} {name!r}{hint}")


def normalise_name(name: str) -> str:
    """Lower-case a name and drop spaces, dashes, underscores and dots: 'TPU v5e' -> 'tpuv5e'."""
    return "".join(ch for ch in name.lower() if ch.isalnum())
