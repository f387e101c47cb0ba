"""Complex numbers with parts of a floating-point type: the ``complex_*`` data types.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/data-types (one folder
  per name, e.g. ``complex_float4_e2m1fn``).
- v3 names: ``complex_float32``, ``complex_float64`` (the layouts of ``complex64`` /
  ``complex128``), ``complex_float16``, ``complex_bfloat16``, ``complex_float8_e3m4``,
  ``complex_float8_e4m3``, ``complex_float8_e4m3b11fnuz``, ``complex_float8_e4m3fnuz``,
  ``complex_float8_e5m2``, ``complex_float8_e5m2fnuz``, ``complex_float8_e8m0fnu``,
  ``complex_float6_e2m3fn``, ``complex_float6_e3m2fn``, ``complex_float4_e2m1fn`` (a string,
  or ``{"name": ...}`` without configuration). Written by zarrs.
- v2 dtype, draft URI: none.
- An element is its real part then its imaginary part, each stored as its own data type
  stores it: by the ``bytes`` codec (two-byte parts in its ``endian``, smaller ones one
  byte each, the value in the low bits) or by ``packbits`` (two ``k``-bit fields).
- In memory: ``complex_float32`` / ``complex_float64`` are NumPy's ``complex64`` /
  ``complex128``. NumPy has no complex type with smaller parts, so the others are records
  ``[("real", T), ("imag", T)]`` of the part's NumPy type (``float16``, or ml_dtypes' for
  the rest, the ``zarrx[ml]`` extra): exact to the bit, NaN payloads included.
  :func:`to_complex` turns such a record array into ``complex64`` (every value of these
  parts is exact in ``float32``), and writes take complex numbers, whose parts are cast to
  ``T`` as NumPy casts floats.
- Fill values: ``[real, imag]``, each part in its type's JSON (a number, ``"NaN"``,
  ``"Infinity"``, ``"-Infinity"``, or ``"0x"`` and the part's bits in hex).

>>> t = ComplexDataType.from_json("complex_float4_e2m1fn")
>>> t.dtype.names, t.fill_to_json(t.fill_from_json([1.5, "0x0c"]))
(('real', 'imag'), [1.5, -2.0])
>>> to_complex(t.absorb(np.array([0.5 - 6j])))
array([0.5-6.j], dtype=complex64)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrx.data_types.core import DataType
from zarrx.data_types.ml import MLDataType
from zarrx.errors import FillValueError, MetadataError, UnknownDataTypeError

#: name → the data type of each part.
PARTS = {
    "complex_float32": "float32", "complex_float64": "float64", "complex_float16": "float16",
    "complex_bfloat16": "bfloat16",
    **{f"complex_{p}": p for p in (
        "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2",
        "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
    )},
}
NAMES = tuple(PARTS)
#: Parts NumPy has a complex type for.
_NATIVE: dict[str, np.dtype] = {"float32": np.dtype("complex64"), "float64": np.dtype("complex128")}


def _part(name: str) -> Any:
    part = PARTS[name]
    return DataType.from_json(part) if part in ("float16", "float32", "float64") else (
        MLDataType.from_json(part))


@dataclass(frozen=True)
class ComplexDataType:
    """A complex type whose parts are ``part``'s; ``dtype`` is NumPy's complex type or a
    ``(real, imag)`` record."""

    name: str
    part: Any = field(compare=False, repr=False)
    dtype: np.dtype = field(compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Any) -> ComplexDataType:
        name = value
        if isinstance(value, Mapping):
            name = value.get("name")
            if set(value) - {"name", "configuration"} or value.get("configuration", {}) != {}:
                raise MetadataError(f"data type {name!r} takes no configuration, got {value!r}")
        if name not in PARTS:
            raise UnknownDataTypeError(f"unknown complex data type {value!r}")
        part = _part(name)
        native = _NATIVE.get(PARTS[name])
        dtype: np.dtype = native if native is not None else np.dtype(
            [("real", part.dtype), ("imag", part.dtype)])
        return cls(name, part, dtype)

    from_numpy = from_json  # a user names these types: dtype="complex_float16"

    def to_json(self) -> str:
        return self.name

    @property
    def kind(self) -> str:
        return "c"

    # -- values ------------------------------------------------------------------------------
    def absorb(self, value: Any) -> Any:
        """A value to assign, with complex numbers turned into ``(real, imag)`` records
        (anything else as it is, for NumPy to cast or refuse)."""
        exact = isinstance(value, np.ndarray | np.void) and value.dtype == self.dtype
        if self.dtype.fields is None or exact:
            return value
        array = np.asarray(value)
        if array.dtype.fields is not None or array.dtype.kind not in "biufc":
            return value
        out = np.empty(array.shape, self.dtype)
        out["real"] = array.real
        out["imag"] = array.imag if array.dtype.kind == "c" else 0
        return out

    # -- fill values ---------------------------------------------------------------------------
    def default_fill(self) -> Any:
        return np.zeros((), dtype=self.dtype)[()]

    def fill_from_json(self, value: Any) -> Any:
        if not isinstance(value, list | tuple) or len(value) != 2:
            raise FillValueError(
                f"fill value {value!r} for data type {self.name}: expected [real, imag]"
            )
        out = np.zeros((), dtype=self.dtype)
        re_, im = (self.part.fill_from_json(v) for v in value)
        if self.dtype.fields is None:
            out.real, out.imag = re_, im
        else:
            out["real"], out["imag"] = re_, im
        return out[()]

    def fill_to_json(self, value: Any) -> list[Any]:
        element = np.asarray(value, dtype=self.dtype)
        if self.dtype.fields is None:
            return [self.part.fill_to_json(element.real[()]),
                    self.part.fill_to_json(element.imag[()])]
        return [self.part.fill_to_json(element["real"][()]),
                self.part.fill_to_json(element["imag"][()])]

    def coerce_fill(self, value: Any) -> Any:
        """A user-given fill value (a number, ``[real, imag]``, or an element) as a scalar."""
        if value is None:
            return self.default_fill()
        if isinstance(value, np.ndarray | np.generic) and np.asarray(value).dtype == self.dtype:
            return np.asarray(value).reshape(())[()]
        if isinstance(value, list | tuple):
            return self.fill_from_json(list(value))
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, int | float | complex) and not isinstance(value, bool):
            number = complex(value)
            return self.fill_from_json([number.real, number.imag])
        raise FillValueError(
            f"fill value {value!r} for data type {self.name}: expected a number or [real, imag]"
        )


def to_complex(values: Any) -> np.ndarray:
    """``complex64`` values of an array of ``(real, imag)`` records (or of a complex array)."""
    values = np.asarray(values)
    if values.dtype.fields is None:
        return values.astype(np.complex64, copy=False)
    out = np.empty(values.shape, np.complex64)
    out.real = values["real"].astype(np.float32)
    out.imag = values["imag"].astype(np.float32)
    return out
