"""The draft's data types (seed 000's core identifiers, seed 001's complex types, extension
data types with a ``fallback``) and fill values."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.data_types import fill
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

def parse_fill(stored: np.dtype, value: Any, *, where: str) -> Any:
    """A fill value as a NumPy scalar of the native dtype (``null`` reads as zero; an
    object array's ``null``/``0`` as ``None``, the vlen codec's empty element): the draft
    table of :mod:`zarrx.data_types.fill`."""
    try:
        return fill.parse(fill.DRAFT, stored, value, where=f"data type {stored}")
    except FillValueError as e:
        raise FillValueError(f"{where}: fill_value: {e}") from None


def fill_to_json(stored: np.dtype, value: Any) -> Any:
    """The JSON form zarrx writes (read back bit for bit; zarr-python 2.18 reads all but
    NaN payloads and raw bits)."""
    return fill.encode(fill.DRAFT, stored, value)
