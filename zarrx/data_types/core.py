"""Core data types of Zarr v3 and their fill-value encodings.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html#data-types
v3 names: ``bool``, ``int8`` … ``uint64``, ``float16/32/64``, ``complex64/128``, ``r8``,
``r16``, … (raw bits, any multiple of 8). A :class:`DataType` always holds a native-endian
NumPy dtype: byte order is the business of the ``bytes`` codec, not of the data type.

Fill values in JSON (the v3 table of :mod:`zarrx.data_types.fill`): integers; floats as
numbers, ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` or ``"0x…"`` (the value's bits as
big-endian hex); complex as ``[re, im]``; booleans; raw bits as a list of byte values.

>>> DataType.from_json("float32").fill_from_json("0x7fc00000")
np.float32(nan)
>>> DataType.from_json("complex64").fill_to_json(np.complex64(1 - 2j))
[1.0, -2.0]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx.data_types import fill
from zarrx.errors import UnknownDataTypeError


def has_byte_order(dtype: np.dtype) -> bool:
    """Whether the byte order matters for ``dtype`` (any component wider than one byte)."""
    if dtype.fields is not None:
        return any(has_byte_order(field[0]) for field in dtype.fields.values())
    if dtype.subdtype is not None:
        return has_byte_order(dtype.subdtype[0])
    return dtype.byteorder != "|" and dtype.itemsize > 1  # one-byte ml_dtypes types say "="


def endian_of(dtype: np.dtype) -> str | None:
    """The ``bytes`` codec's ``endian`` for elements stored as ``dtype`` (a record: its
    fields' order), or ``None`` when the order does not matter."""
    if not has_byte_order(dtype):
        return None
    order = (
        dtype.byteorder
        if dtype.fields is None
        else next((f[0].byteorder for f in dtype.fields.values() if f[0].byteorder in "<>="), "<")
    )
    if order == "=":
        order = "<" if np.little_endian else ">"
    return "little" if order == "<" else "big"


_NUMPY_BY_NAME = {
    "bool": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
}
_RAW = re.compile(r"^r([1-9][0-9]*)$")


@dataclass(frozen=True)
class DataType:
    """A fixed-size data type: its v3 name and native NumPy dtype."""

    name: str
    dtype: np.dtype

    # -- construction ---------------------------------------------------------------
    @classmethod
    def from_json(cls, value: Any) -> DataType:
        """Parse a v3 ``data_type`` value naming a core type."""
        if isinstance(value, str):
            if value in _NUMPY_BY_NAME:
                return cls(value, np.dtype(_NUMPY_BY_NAME[value]))
            match = _RAW.match(value)
            if match and int(match.group(1)) % 8 == 0:
                return cls(value, np.dtype(f"V{int(match.group(1)) // 8}"))
        raise UnknownDataTypeError(f"unknown core data type {value!r}")

    @classmethod
    def from_numpy(cls, dtype: Any) -> DataType:
        """The core data type of a NumPy dtype (any byte order)."""
        dt = np.dtype(dtype)
        if dt.kind == "V" and dt.fields is None and dt.subdtype is None:
            return cls(f"r{dt.itemsize * 8}", np.dtype(f"V{dt.itemsize}"))
        native = dt.newbyteorder("=")
        if native.kind in "biufc" and native.name in _NUMPY_BY_NAME:
            return cls(native.name, np.dtype(native.name))
        raise UnknownDataTypeError(
            f"NumPy dtype {dt} has no Zarr v3 core data type; "
            f"supported: {', '.join(_NUMPY_BY_NAME)}, and raw bits r8, r16, …"
        )

    def to_json(self) -> str:
        return self.name

    @property
    def kind(self) -> str:
        return self.dtype.kind

    # -- fill values --------------------------------------------------------------------
    def default_fill(self) -> Any:
        """The fill value used when metadata gives none: zero (or all-zero bytes)."""
        return np.zeros((), dtype=self.dtype)[()]

    def fill_from_json(self, value: Any) -> Any:
        """Decode a JSON fill value into a NumPy scalar of this type."""
        return fill.parse(fill.V3, self.dtype, value, where=f"data type {self.name}")

    def fill_to_json(self, value: Any) -> Any:
        """Encode a NumPy scalar of this type as JSON."""
        return fill.encode(fill.V3, self.dtype, value)

    def coerce_fill(self, value: Any) -> Any:
        """A user-given fill value (Python or NumPy scalar, JSON form) as a NumPy scalar."""
        if value is None:
            return self.default_fill()
        if isinstance(value, np.generic | np.ndarray) and np.asarray(value).dtype == self.dtype:
            return np.asarray(value).reshape(())[()]
        if isinstance(value, bytes) and self.kind == "V":
            return self.fill_from_json(list(value))
        if isinstance(value, np.generic):
            value = value.item()
        if self.kind == "c" and isinstance(value, int | float | complex) and not isinstance(
            value, bool
        ):
            value = complex(value)
            return self.fill_from_json([value.real, value.imag])
        return self.fill_from_json(value)


def fill_bytes(dtype: np.dtype, value: Any) -> bytes:
    """The native-endian bytes of one element equal to ``value`` (for the Cython kernels)."""
    return np.asarray(value, dtype=dtype).tobytes()
