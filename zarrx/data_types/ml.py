"""Machine-learning data types: bfloat16, the float8/6/4 formats, int2/int4/uint2/uint4.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/data-types (a folder per
  name). ``float8_e4m3fn`` is not registered there: its name is tensorstore's and ml_dtypes'.
- v3 names: ``bfloat16``, ``float8_e3m4``, ``float8_e4m3``, ``float8_e4m3fn``,
  ``float8_e4m3fnuz``, ``float8_e4m3b11fnuz``, ``float8_e5m2``, ``float8_e5m2fnuz``,
  ``float8_e8m0fnu``, ``float6_e2m3fn``, ``float6_e3m2fn``, ``float4_e2m1fn``, ``int2``,
  ``int4``, ``uint2``, ``uint4`` (a string, or ``{"name": ...}`` without configuration).
- v2 dtype: the same names, as tensorstore's ``zarr`` driver writes them (it knows all but
  ``float8_e4m3``, ``float6_*``, ``uint2`` and ``uint4``); bfloat16 is little endian there.
- Draft URI: none (the 2020 draft has no such types).
- In memory: ml_dtypes' NumPy dtypes, an optional extra (``pip install 'zarrx[ml]'``), imported
  on first use of one of these names; without it, such an array raises
  :class:`~zarrx.errors.MissingDataTypeError`, which names the extra.
- Stored one element per byte by the ``bytes`` codec (bfloat16: two bytes, in its
  ``endian``); a sub-byte type holds its value in the low bits of its byte (ml_dtypes'
  layout, which tensorstore stores as it is). The ``packbits`` codec packs them to k bits.
- Fill values, v3: floats as the core floats (a number, ``"NaN"``, ``"Infinity"``,
  ``"-Infinity"``, or ``"0x"`` and the bits in hex), refusing NaN or ±inf where the type has
  none and numbers past its largest finite value; integers as JSON integers in range. A
  signed sub-byte fill value is sign-extended through its byte (``-1`` is ``0xff``), as
  tensorstore makes it. v2 (tensorstore's encoding): the same without hex, and
  ``float4_e2m1fn`` as the base64 of its byte.
- Known incompatibilities: tensorstore 0.1.86 converts *numeric* fill values of
  ``float8_e8m0fnu`` with an exponent bias of 63 instead of 127 (``1.0`` becomes 2**-64), so
  zarrx writes that type's v3 fill value in hex, which both read alike. A JSON ``0`` for it
  (the type has no zero) means its smallest value, bits ``0x00``: tensorstore's default.

>>> t = MLDataType.from_json("bfloat16")
>>> t.dtype, t.fill_from_json(1.5), t.fill_to_json(t.fill_from_json("0x7fc1"))
(dtype(bfloat16), 1.5, '0x7fc1')
>>> MLDataType.from_json("int4").fill_from_json(-1).tobytes()
b'\\xff'
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from zarrx.data_types import fill
from zarrx.errors import FillValueError, MetadataError, MissingDataTypeError, UnknownDataTypeError

FLOATS = (
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
)
INTEGERS = ("int2", "int4", "uint2", "uint4")
NAMES = FLOATS + INTEGERS
INSTALL = "pip install 'zarrx[ml]'"
#: float8_e8m0fnu: only exponent bits, no zero; JSON 0 means its smallest value (bits 0x00).
_NO_ZERO = "float8_e8m0fnu"
#: Fill values tensorstore writes in v2 as the base64 of the element's byte.
_V2_BASE64 = ("float4_e2m1fn",)
_V2_BYTE = fill.Base64Rule(exact=True)


def numpy_dtype(name: str) -> np.dtype:
    """ml_dtypes' NumPy dtype for ``name``, importing ml_dtypes now (it is optional)."""
    try:
        import ml_dtypes
    except ImportError:
        raise MissingDataTypeError(
            f"data type {name!r} needs the optional package ml_dtypes: {INSTALL}"
        ) from None
    return np.dtype(getattr(ml_dtypes, name))


def ml_name(dtype: Any) -> str | None:
    """The name when ``dtype`` (a name, an ml_dtypes type or dtype) is one of these types,
    else ``None``; never imports ml_dtypes."""
    if isinstance(dtype, str):
        return dtype if dtype in NAMES else None
    scalar_type = dtype.type if isinstance(dtype, np.dtype) else dtype
    name = getattr(scalar_type, "__name__", None)
    if getattr(scalar_type, "__module__", None) == "ml_dtypes" and name in NAMES:
        return name
    return None


class _Traits(NamedTuple):
    bits: int  # k: the bits that carry a value
    low: float  # smallest value (integers) / negative of the largest finite value (floats)
    high: float  # largest value
    nan: bool
    inf: bool


@functools.cache
def traits(name: str) -> _Traits:
    """What ml_dtypes says of a type: its bit width, range, and whether it has NaN and ±inf."""
    import ml_dtypes

    dtype = numpy_dtype(name)
    if name in INTEGERS:
        info = ml_dtypes.iinfo(dtype)
        return _Traits(info.bits, int(info.min), int(info.max), False, False)
    finfo = ml_dtypes.finfo(dtype)
    probe = np.array([np.nan, np.inf], dtype=np.float64).astype(dtype).astype(np.float64)
    return _Traits(finfo.bits, -float(finfo.max), float(finfo.max),
                   bool(np.isnan(probe[0])), bool(np.isinf(probe[1])))


@dataclass(frozen=True)
class MLDataType:
    """One of the machine-learning types, with ml_dtypes' NumPy dtype."""

    name: str
    dtype: np.dtype = field(compare=False, repr=False)

    # -- construction ---------------------------------------------------------------
    @classmethod
    def from_json(cls, value: Any) -> MLDataType:
        """Parse a v3 ``data_type`` (``"bfloat16"`` or ``{"name": "bfloat16"}``)."""
        name = value
        if isinstance(value, Mapping):
            name = value.get("name")
            if set(value) - {"name", "configuration"} or value.get("configuration", {}) != {}:
                raise MetadataError(f"data type {name!r} takes no configuration, got {value!r}")
        if name not in NAMES:
            raise UnknownDataTypeError(f"unknown machine-learning data type {value!r}")
        return cls(name, numpy_dtype(name))

    @classmethod
    def from_numpy(cls, dtype: Any) -> MLDataType:
        """The data type of a user-given dtype: a name, an ml_dtypes type or dtype."""
        name = ml_name(dtype)
        if name is None:
            raise UnknownDataTypeError(f"{dtype!r} is not a machine-learning data type")
        return cls(name, numpy_dtype(name))

    def to_json(self) -> str:
        return self.name

    @property
    def kind(self) -> str:
        """``"f"``, ``"i"`` or ``"u"``: what the values are (ml_dtypes' dtypes say ``"V"``)."""
        return "f" if self.name in FLOATS else self.name[0]

    @property
    def bits(self) -> int:
        return traits(self.name).bits

    # -- fill values (v3) ---------------------------------------------------------------
    def default_fill(self) -> Any:
        return np.zeros((), dtype=self.dtype)[()]

    def fill_from_json(self, value: Any) -> Any:
        """Decode a v3 JSON fill value into a scalar of this type (bits preserved)."""
        return self._parse(value, fill.V3_FLOAT)

    def fill_to_json(self, value: Any) -> Any:
        scalar = np.asarray(value, dtype=self.dtype)[()]
        if self.kind != "f":
            return int(scalar)
        if self.name == _NO_ZERO and not math.isnan(scalar):
            return fill.to_bits(scalar)
        return fill.V3_FLOAT.encode(self.dtype, scalar)

    def coerce_fill(self, value: Any) -> Any:
        """A user-given fill value (Python or NumPy scalar, JSON form) as a scalar."""
        if value is None:
            return self.default_fill()
        if isinstance(value, np.generic | np.ndarray):
            array = np.asarray(value)
            if array.dtype == self.dtype and array.shape == ():
                return array[()]
            value = array.item() if array.shape == () else value
        return self.fill_from_json(value)

    # -- fill values (v2, tensorstore's encoding) ---------------------------------------
    def fill_from_v2(self, value: Any) -> Any:
        if value is None:
            return self.default_fill()
        if self.name in _V2_BASE64:
            return _V2_BYTE.parse(self.dtype, value, f"data type {self.name}")
        return self._parse(value, fill.V2_FLOAT)

    def fill_to_v2(self, value: Any) -> Any:
        scalar = np.asarray(value, dtype=self.dtype)[()]
        if self.name in _V2_BASE64:
            return _V2_BYTE.encode(self.dtype, scalar)
        if self.kind != "f":
            return int(scalar)
        return fill.V2_FLOAT.encode(self.dtype, scalar)  # v2 cannot keep a NaN's payload

    # -- helpers -------------------------------------------------------------------------
    def _from_bits(self, bits: int) -> Any:
        return np.array([bits], dtype=f"u{self.dtype.itemsize}").view(self.dtype)[0]

    def _parse(self, value: Any, grammar: fill.FloatRule) -> Any:
        """A fill value in a format's float ``grammar`` (integers as JSON integers)."""
        where = f"data type {self.name}"
        t = traits(self.name)
        if self.kind != "f":  # sign-extended through the byte
            return self._from_bits(fill.integer(value, int(t.low), int(t.high), where) & 0xFF)
        parsed = grammar.number(value, self.dtype.itemsize, where)
        if isinstance(parsed, bytes):
            return self._from_bits(int.from_bytes(parsed, "big"))
        return self._float(parsed, value, where)

    def _float(self, number: float, value: Any, where: str) -> Any:
        t = traits(self.name)
        if math.isnan(number) and not t.nan:
            raise FillValueError(f"fill value {value!r} for {where}: the type has no NaN")
        if math.isinf(number) and not t.inf:
            raise FillValueError(f"fill value {value!r} for {where}: the type has no infinity")
        if math.isfinite(number) and not t.low <= number <= t.high:
            raise FillValueError(
                f"fill value {value!r} is out of range for {where} ([{t.low}, {t.high}])"
            )
        if self.name == _NO_ZERO:
            if number < 0:
                raise FillValueError(f"fill value {value!r} for {where}: the type is unsigned")
            if number == 0:
                return self._from_bits(0)
        return np.array(number, dtype=np.float64).astype(self.dtype)[()]
