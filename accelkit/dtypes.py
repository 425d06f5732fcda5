"""Number formats: the one table of bytes per element, and the rule for mixed-precision defaults.

Every cost model sizes its data from :data:`BYTES` and checks a format name with :func:`check`,
so a format means the same thing in the roofline, the energy model, the model catalog and the
serving model.

    >>> import accelkit as ak
    >>> ak.dtypes.nbytes("bf16"), ak.dtypes.nbytes("int4"), ak.dtypes.nbytes("fp4")
    (2.0, 0.5, 0.5)
    >>> ak.dtypes.activation_dtype("int8")     # 8-bit weights are dequantised to bf16
    'bf16'

Formats: ``fp32`` and ``tf32`` (tf32 is stored as 32 bits; only its multiplier inputs are
narrower), ``bf16``, ``fp16``, ``fp8``, ``int8``, ``fp6`` (6 bits: 0.75 bytes), ``fp4`` and
``int4`` (4 bits: 0.5 bytes). ``fp8``, ``fp6`` and ``fp4`` name the width only: the OCP
microscaling variants (MXFP8/6/4, the E4M3/E5M2 encodings, NVIDIA's NVFP4) differ in exponent
bits and in the per-block scale they store next to the elements, which this table does not count
(an MXFP4 block of 32 elements adds one 8-bit scale, 0.53 bytes per element rather than 0.5:
OCP Microscaling Formats (MX) Specification v1.0). Chips
publish dense peaks for :data:`PEAK_DTYPES` only (``tf32`` has none in the catalog); asking a
chip for another format's peak, or for one it has no published figure for, is refused by the chip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Literal, cast, get_args

from accelkit import _validate

#: A number format's name, as every signature in the library spells it.
DType = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp6", "fp4", "int4"]

#: Bytes of one element of each format (read-only).
BYTES: Mapping[str, float] = MappingProxyType({
    "fp32": 4.0, "tf32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "fp6": 0.75,
    "fp4": 0.5, "int4": 0.5,
})

#: Formats a chip in the catalog can publish a dense peak for, in the catalog's order. int8 and
#: int4 peaks are integer OP/s, counted like FLOP/s. fp6 and fp4 are the Blackwell / CDNA 4
#: (MI355X) formats; int4 is published for TPU v5e and NVIDIA T4.
PEAK_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "int8", "fp32", "fp6", "fp4", "int4")

#: Floating-point formats of 16 bits or more: activations computed from weights in one of these
#: stay in it. Narrower weights (fp8, int8, fp6, fp4, int4) are dequantised, so their activations
#: are bf16.
_WIDE = ("fp32", "tf32", "bf16", "fp16")

assert set(get_args(DType)) == set(BYTES)  # the literal type and the table name the same formats


def check(dtype: object, name: str = "dtype", allowed: Iterable[str] | None = None) -> DType:
    """``dtype`` if it names a known format (and one of ``allowed``, if given).

    Raises:
        TypeError: not a string.
        ValueError: an unknown format; the message names ``name`` and lists the allowed ones.
    """
    return cast(DType, _validate.choice(name, dtype, BYTES if allowed is None else allowed))


def nbytes(dtype: object, name: str = "dtype") -> float:
    """Bytes per element of ``dtype`` (2.0 for bf16, 0.5 for int4).

    Raises:
        TypeError / ValueError: as :func:`check`.
    """
    return BYTES[check(dtype, name)]


def activation_dtype(weight_dtype: object, name: str = "weight_dtype") -> DType:
    """The default format of activations and of the KV cache for weights in ``weight_dtype``.

    The one rule every cost model uses (``models.*.operations``, ``inference.prefill``,
    ``inference.decode_step`` and the other serving functions, ``scenarios``): weights in a
    floating-point format of 16 bits or more (fp32, tf32, bf16, fp16) keep their activations and
    KV cache in that format; 8-, 6- and 4-bit weights (fp8, int8, fp6, fp4, int4) are dequantised before the
    arithmetic, so their activations and KV cache are bf16. A quantised KV cache is a separate
    choice: pass ``kv_dtype`` explicitly (the scaling book's int8 cache is one).
    """
    weight = check(weight_dtype, name)
    return weight if weight in _WIDE else "bf16"


__all__ = ["BYTES", "DType", "PEAK_DTYPES", "activation_dtype", "check", "nbytes"]
