"""Core data types of Zarr v3 and their fill-value encodings.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html#data-types
v3 names: ``bool``, ``int8`` … ``uint64``, ``float16/32/64``, ``complex64/128``, ``r8``,
``r16``, … (raw bits, any multiple of 8). A :class:`DataType` always holds a native-endian
NumPy dtype: byte order is the business of the ``bytes`` codec, not of the data type.

Fill values in JSON: integers; floats as numbers, ``"NaN"``, ``"Infinity"``,
``"-Infinity"`` or ``"0x…"`` (the value's bits as big-endian hex); complex as
``[re, im]``; booleans; raw bits as a list of byte values.

>>> DataType.from_json("float32").fill_from_json("0x7fc00000")
np.float32(nan)
>>> DataType.from_json("complex64").fill_to_json(np.complex64(1 - 2j))
[1.0, -2.0]
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx.errors import FillValueError, UnknownDataTypeError


def has_byte_order(dtype: np.dtype) -> bool:
    """Whether the byte order matters for ``dtype`` (any component wider than one byte)."""
    if dtype.fields is not None:
        return any(has_byte_order(field[0]) for field in dtype.fields.values())
    if dtype.subdtype is not None:
        return has_byte_order(dtype.subdtype[0])
    return dtype.byteorder != "|" and dtype.itemsize > 1  # one-byte ml_dtypes types say "="


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
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


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
        return parse_fill_value(self.dtype, value, where=f"data type {self.name}")

    def fill_to_json(self, value: Any) -> Any:
        """Encode a NumPy scalar of this type as JSON."""
        return encode_fill_value(self.dtype, value)

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


def float_json_grammar(value: Any, itemsize: int, where: str) -> float | bytes:
    """The v3 JSON grammar of a float fill value, shared by every float type: a number,
    ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (→ a Python float), or ``"0x"`` and
    ``2 * itemsize`` hex digits (→ the value's big-endian bytes). Range and rounding are
    the data type's business."""
    if isinstance(value, bool):
        raise FillValueError(f"fill value {value!r} is not a number for {where}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[value]
        if value.startswith("0x"):
            digits = value[2:]
            if len(digits) != 2 * itemsize or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise FillValueError(
                    f"fill value {value!r} for {where} must be '0x' and "
                    f"{2 * itemsize} hex digits"
                )
            return bytes.fromhex(digits)
    raise FillValueError(
        f"fill value {value!r} for {where}: expected a number, 'NaN', 'Infinity', "
        "'-Infinity' or a '0x' hex string"
    )


def _float_from_json(dtype: np.dtype, value: Any, where: str) -> Any:
    parsed = float_json_grammar(value, dtype.itemsize, where)
    if isinstance(parsed, bytes):
        return np.frombuffer(parsed, dtype=dtype.newbyteorder(">"))[0]
    if abs(parsed) > _largest(dtype) and math.isfinite(parsed) and not math.isfinite(
        _cast_float(dtype, parsed)
    ):  # past the largest value: out of range unless it rounds down to it
        raise FillValueError(f"fill value {value!r} is out of range for {where}")
    return parsed


@functools.cache
def _largest(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).max)


def _cast_float(dtype: np.dtype, value: float) -> Any:
    if abs(value) <= _largest(dtype) or not math.isfinite(value):
        return dtype.type(value)  # cannot overflow: no need for NumPy's error state
    with np.errstate(over="ignore"):
        return np.array(value, dtype=dtype)[()]


def parse_fill_value(dtype: np.dtype, value: Any, *, where: str) -> Any:
    """Decode a v3 JSON fill value for a native ``dtype``; :class:`FillValueError` if invalid."""
    kind = dtype.kind
    if kind == "b":
        if isinstance(value, bool):
            return np.bool_(value)
        if isinstance(value, int) and value in (0, 1):
            return np.bool_(value)
        raise FillValueError(f"fill value {value!r} for {where}: expected true or false")
    if kind in "iu":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise FillValueError(f"fill value {value!r} for {where}: expected an integer")
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise FillValueError(
                f"fill value {value} is out of range for {where} ([{info.min}, {info.max}])"
            )
        return dtype.type(value)
    if kind == "f":
        result = _float_from_json(dtype, value, where)
        if isinstance(result, np.generic):
            return result.astype(dtype)
        return _cast_float(dtype, result)
    if kind == "c":
        if not isinstance(value, list | tuple) or len(value) != 2:
            raise FillValueError(f"fill value {value!r} for {where}: expected [real, imag]")
        part = np.dtype(f"f{dtype.itemsize // 2}")
        re_, im = (_float_from_json(part, v, where) for v in value)
        out = np.zeros((), dtype=dtype)
        out.real, out.imag = re_, im
        return out[()]
    if kind == "V":
        if (
            not isinstance(value, list | tuple)
            or len(value) != dtype.itemsize
            or not all(
                isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in value
            )
        ):
            raise FillValueError(
                f"fill value {value!r} for {where}: expected a list of {dtype.itemsize} byte values"
            )
        return np.frombuffer(bytes(value), dtype=dtype)[0]
    raise FillValueError(f"no fill-value encoding for dtype {dtype} ({where})")


def float_fill_to_json(value: Any) -> Any:
    """A float scalar as v3 JSON: a number, a special name, or ``"0x…"`` for a NaN that
    is not the type's canonical one (payload or sign bits survive)."""
    if math.isnan(value):
        canonical = np.array(np.nan, dtype=value.dtype)
        if np.asarray(value).tobytes() != canonical.tobytes():
            return "0x" + np.asarray(value).astype(value.dtype.newbyteorder(">")).tobytes().hex()
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float(value)


def encode_fill_value(dtype: np.dtype, value: Any) -> Any:
    """The v3 JSON form of a fill value (bit-exact for NaN payloads)."""
    scalar = np.asarray(value, dtype=dtype)[()]
    kind = dtype.kind
    if kind == "b":
        return bool(scalar)
    if kind in "iu":
        return int(scalar)
    if kind == "f":
        return float_fill_to_json(scalar)
    if kind == "c":
        return [float_fill_to_json(scalar.real), float_fill_to_json(scalar.imag)]
    if kind == "V":
        return list(scalar.tobytes())
    raise FillValueError(f"no fill-value encoding for dtype {dtype}")


def fill_bytes(dtype: np.dtype, value: Any) -> bytes:
    """The native-endian bytes of one element equal to ``value`` (for the Cython kernels)."""
    return np.asarray(value, dtype=dtype).tobytes()
