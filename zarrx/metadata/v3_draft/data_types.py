"""The draft's data types (seed 000's core identifiers, seed 001's complex types, extension
data types with a ``fallback``) and fill values."""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.errors import FillValueError, MetadataError, UnknownDataTypeError

# -- data types ------------------------------------------------------------------------------

#: Seed 000's core identifiers and seed 001's complex types, as NumPy dtypes.
CORE_DTYPES: dict[str, np.dtype] = {
    "bool": np.dtype("|b1"),
    "i1": np.dtype("|i1"),
    "u1": np.dtype("|u1"),
    **{f"{e}{k}{n}": np.dtype(f"{e}{k}{n}") for e in "<>" for k in "iuf" for n in (2, 4, 8)},
    **{f"{e}c{n}": np.dtype(f"{e}c{n}") for e in "<>" for n in (8, 16)},
}
_RAW = re.compile(r"^r([1-9][0-9]*)$")
#: Data type extensions zarrx understands natively (type = a NumPy type string).
COMPLEX_URIS = frozenset({
    "https://zarr-specs.readthedocs.io/en/core-protocol-v3.0-dev/protocol/extensions/"
    "complex-dtypes/v1.0.html",
})
DATETIME_URI = "https://purl.org/zarr/spec/protocol/extensions/datetime-dtypes/1.0"
DATETIME_URIS = frozenset({
    DATETIME_URI,
    "http://purl.org/zarr/spec/protocol/extensions/datetime-dtypes/1.0",
    "https://zarr-specs.readthedocs.io/en/latest/extensions/data-types/datetime/v1.0.html",
})
_DATETIME = re.compile(r"^[<>][mM]8\[(Y|M|W|D|h|m|s|ms|us|ns|ps|fs|as)\]$")
#: zarr-python 2.18's data type extensions for NumPy's fixed-size bytes (``|S5``), unicode
#: (``<U3``) and object (``|O``, with a ``vlen-utf8``/``vlen-bytes`` filter) dtypes: it
#: writes these placeholder URIs, ``type`` the NumPy type string and no ``fallback``.
PLACEHOLDER_TYPES = {
    "TODO: bytestring array protocol URL": re.compile(r"^\|S[1-9][0-9]*$"),
    "TODO: unicode array protocol URL": re.compile(r"^[<>]U[1-9][0-9]*$"),
    "TODO: object array protocol URL": re.compile(r"^\|O$"),
}


def native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=") if dtype.byteorder in "<>" else dtype


def core_dtype(identifier: Any, *, where: str) -> np.dtype:
    """The NumPy dtype of a core identifier (``bool``, ``<f8``, ``>c16``, ``r24`` …)."""
    if isinstance(identifier, str):
        if identifier in CORE_DTYPES:
            return CORE_DTYPES[identifier]
        raw = _RAW.match(identifier)
        if raw and int(raw.group(1)) % 8 == 0:
            return np.dtype(f"V{int(raw.group(1)) // 8}")
    raise UnknownDataTypeError(
        f"{where}: unknown data type {identifier!r}; the core identifiers are "
        f"{', '.join(CORE_DTYPES)} and raw bits r8, r16, … (a multiple of 8)"
    )


def parse_data_type(value: Any, *, where: str) -> np.dtype:
    """A ``data_type``: a core identifier, or an extension object (with its ``fallback``)."""
    if not isinstance(value, Mapping):
        return core_dtype(value, where=where)
    uri, kind = value.get("extension"), value.get("type")
    if not isinstance(uri, str) or "type" not in value:
        raise MetadataError(
            f"{where}: an extension data_type needs 'extension' (a URI) and 'type', got {value!r}"
        )
    if uri in COMPLEX_URIS and isinstance(kind, str) and kind in CORE_DTYPES and "c" in kind:
        return CORE_DTYPES[kind]
    if uri in DATETIME_URIS and isinstance(kind, str) and _DATETIME.match(kind):
        return np.dtype(kind)
    pattern = PLACEHOLDER_TYPES.get(uri)
    if pattern is not None and isinstance(kind, str) and pattern.match(kind):
        return np.dtype(kind)
    fallback = value.get("fallback")
    if fallback is None:
        raise UnknownDataTypeError(
            f"{where}: data type extension {uri!r} (type {kind!r}) is not supported and "
            "declares no fallback"
        )
    return core_dtype(fallback, where=f"{where} (fallback of extension {uri!r})")


def data_type_to_json(dtype: np.dtype) -> Any:
    """The ``data_type`` zarrx writes for a NumPy dtype (byte order included)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "V" and dtype.fields is None and dtype.subdtype is None:
        return f"r{dtype.itemsize * 8}"
    if dtype.kind in "mM" and _DATETIME.match(dtype.str):
        return {"extension": DATETIME_URI, "type": dtype.str, "fallback": f"{dtype.str[0]}i8"}
    for name, core in CORE_DTYPES.items():
        if core.str == dtype.str:
            return name
    raise UnknownDataTypeError(
        f"NumPy dtype {dtype} has no Zarr v3.0 draft data type; supported: "
        f"{', '.join(CORE_DTYPES)}, raw bits (void), datetime64 and timedelta64"
    )


# -- fill values -----------------------------------------------------------------------------

_SPECIAL = {"NaN": math.nan, "+Infinity": math.inf, "Infinity": math.inf, "-Infinity": -math.inf}


def _bits(value: str, nat: np.dtype, where: str) -> Any | None:
    """A ``0x…``/``0b…`` string: the element's bits, most significant first."""
    if value.startswith("0x"):
        digits, base, width = value[2:], 16, 2 * nat.itemsize
    elif value.startswith("0b"):
        digits, base, width = value[2:], 2, 8 * nat.itemsize
    else:
        return None
    if len(digits) != width or not re.fullmatch(r"[0-9a-fA-F]+" if base == 16 else "[01]+",
                                                digits):
        raise FillValueError(
            f"{where}: fill_value {value!r} must have exactly {width} "
            f"{'hex' if base == 16 else 'binary'} digits for {nat.itemsize}-byte elements"
        )
    raw = int(digits, base).to_bytes(nat.itemsize, "big")
    big = nat.newbyteorder(">") if nat.byteorder != "|" else nat
    return np.frombuffer(raw, dtype=big)[0].astype(nat) if nat.kind != "V" else (
        np.frombuffer(raw, dtype=nat)[0])


def _float(value: Any, nat: np.dtype, where: str) -> Any:
    if isinstance(value, str):
        if value in _SPECIAL:
            return nat.type(_SPECIAL[value])
        bits = _bits(value, nat, where)
        if bits is not None:
            return bits
    elif isinstance(value, int | float) and not isinstance(value, bool):
        with np.errstate(over="ignore"):
            out = nat.type(value)
        if math.isfinite(value) and not np.isfinite(out):
            raise FillValueError(f"{where}: fill_value {value!r} is out of range for {nat}")
        return out
    raise FillValueError(
        f"{where}: fill_value {value!r} for {nat}: expected a number, 'NaN', '+Infinity', "
        "'-Infinity' or a '0x'/'0b' string"
    )


def parse_fill(stored: np.dtype, value: Any, *, where: str) -> Any:
    """A fill value as a NumPy scalar of the native dtype (``null`` reads as zero)."""
    nat = native(stored)
    if nat.kind in "SUO":
        return _text_fill(nat, value, where)
    if value is None:
        return np.zeros((), dtype=nat)[()]
    kind = nat.kind
    if isinstance(value, str) and kind not in "fc":
        bits = _bits(value, nat, where)
        if bits is not None:
            return bits
    if kind == "b":
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return np.bool_(value)
        raise FillValueError(f"{where}: fill_value {value!r} for bool: expected true or false")
    if kind in "iumM":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise FillValueError(
                f"{where}: fill_value {value!r} for {stored}: expected an integer without "
                "fraction or exponent, or a '0x'/'0b' string"
            )
        info = np.iinfo(nat if kind in "iu" else np.dtype("i8"))
        if not info.min <= value <= info.max:
            raise FillValueError(
                f"{where}: fill_value {value} is out of range for {stored} "
                f"([{info.min}, {info.max}])"
            )
        return nat.type(value) if kind in "iu" else np.array(value, "i8").view(nat)[()]
    if kind == "f":
        return _float(value, nat, where)
    if kind == "c":
        if isinstance(value, str):
            bits = _bits(value, nat, where)
            if bits is not None:
                return bits
        part = np.dtype(f"f{nat.itemsize // 2}")
        if isinstance(value, list | tuple) and len(value) == 2:
            re_, im = (_float(v, part, where) for v in value)
        else:
            re_, im = _float(value, part, where), part.type(0)
        out = np.zeros((), dtype=nat)
        out.real, out.imag = re_, im
        return out[()]
    if kind == "V":
        if isinstance(value, list) and len(value) == nat.itemsize and all(
            isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in value
        ):
            return np.frombuffer(bytes(value), dtype=nat)[0]
        raise FillValueError(
            f"{where}: fill_value {value!r} for raw {nat.itemsize * 8}-bit data: expected a "
            f"'0x' string of {2 * nat.itemsize} hex digits"
        )
    raise FillValueError(f"{where}: no fill-value encoding for {stored}")


def _text_fill(nat: np.dtype, value: Any, where: str) -> Any:
    """zarr-python 2.18's fill values of its placeholder types, encoded as in Zarr v2:
    ``|S``: base64 of the bytes; ``<U``: the string; ``|O``: ``0`` or ``null``, which
    mean "no fill" (numcodecs' vlen codecs store 0 and None as empty), read as empty."""
    if nat.kind == "O":
        if value is None or (type(value) is int and value == 0):
            return None  # the vlen codec's empty element (decided by the pipeline)
        if isinstance(value, str):
            return value
    elif value is None:
        return np.zeros((), dtype=nat)[()]
    elif nat.kind == "U" and isinstance(value, str):
        return np.array(value, dtype=nat)[()]
    elif nat.kind == "S" and isinstance(value, str):
        try:
            return np.array(base64.b64decode(value.encode("ascii"), validate=True),
                            dtype=nat)[()]
        except ValueError:
            pass
    raise FillValueError(
        f"{where}: fill_value {value!r} for {nat}: expected zarr-python 2.18's encoding "
        "(base64 for bytes, a string for unicode, 0 or null for objects)"
    )


def _float_to_json(value: Any) -> Any:
    if math.isnan(value):
        canonical = np.array(np.nan, dtype=value.dtype).tobytes()
        if np.asarray(value).tobytes() == canonical:
            return "NaN"
        return "0x" + np.asarray(value).astype(value.dtype.newbyteorder(">")).tobytes().hex()
    if math.isinf(value):
        return "+Infinity" if value > 0 else "-Infinity"
    return float(value)


def fill_to_json(stored: np.dtype, value: Any) -> Any:
    """The JSON form zarrx writes (read back bit for bit; zarr-python 2.18 reads all but
    NaN payloads and raw bits)."""
    nat = native(stored)
    scalar = np.asarray(value, dtype=nat)[()]
    if nat.kind == "b":
        return bool(scalar)
    if nat.kind in "iu":
        return int(scalar)
    if nat.kind in "mM":
        return int(np.asarray(scalar).view("i8"))
    if nat.kind == "f":
        return _float_to_json(scalar)
    if nat.kind == "c":
        return [_float_to_json(scalar.real), _float_to_json(scalar.imag)]
    return "0x" + np.asarray(scalar).tobytes().hex()
