"""Structured (record) data types for Zarr v3: ``struct`` and zarr-python's ``structured``.

Spec: zarr-extensions ``data-types/struct`` (https://github.com/zarr-developers/zarr-extensions).
v3 names: ``struct`` (fields ``{"name": …, "data_type": …}``, fill value an object with
one value per field) and the legacy ``structured`` that zarr-python 3.1 writes (fields
``[name, data_type]``, fill value the base64 of the packed element). Both are read; an
array is written back in the spelling it was read in, and zarrx creates ``structured``
arrays, the form zarr-python 3.1.6 reads (the struct spec asks readers to accept it).

Elements are the fields packed in declaration order, without padding (NumPy's default
layout, not ``align=True``); every multi-byte field is stored in the ``bytes`` codec's
byte order. zarr-python 3.1.6 writes ``{"name": "bytes"}`` without ``endian`` for these
arrays (its machine's order, little endian in practice): zarrx reads that as little.
Field types are any fixed-size v3 data type, nested records included.

>>> t = StructDataType.from_json({"name": "struct", "configuration": {"fields": [
...     {"name": "x", "data_type": "float32"}, {"name": "n", "data_type": "uint8"}]}})
>>> t.dtype.descr, t.fill_to_json(t.fill_from_json({"x": 1.5, "n": 3}))
([('x', '<f4'), ('n', '|u1')], {'x': 1.5, 'n': 3})
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx import registry
from zarrx.data_types import fill
from zarrx.errors import FillValueError, MetadataError, UnknownDataTypeError

NAMES = ("struct", "structured")
_RAW_BITS = re.compile(r"^r[0-9]+$")


def resolve(value: Any) -> Any:
    """The data type object of a v3 ``data_type`` (a name, or an object with ``name``),
    through the registry (``r8``, ``r16`` … share ``r*``)."""
    if isinstance(value, str):
        name = "r*" if _RAW_BITS.match(value) else value
    elif isinstance(value, Mapping) and isinstance(value.get("name"), str):
        name = value["name"]
    else:
        raise MetadataError(f"data_type must be a string or an object, got {value!r}")
    return registry.data_types.get(name).from_json(value)


def _little(dtype: np.dtype) -> np.dtype:
    """``dtype`` with every multi-byte field little endian (the packed element's bytes)."""
    if dtype.fields is not None:
        return np.dtype([(n, _little(dtype.fields[n][0])) for n in dtype.names or ()])
    return dtype.newbyteorder("<") if dtype.byteorder in "<>=" else dtype


@dataclass(frozen=True)
class StructDataType:
    name: str  # "struct" or "structured": the spelling written back
    fields: tuple[tuple[str, Any], ...]  # (field name, data type object), in order

    @classmethod
    def from_json(cls, value: Any) -> StructDataType:
        name = value.get("name") if isinstance(value, Mapping) else None
        config = value.get("configuration") if isinstance(value, Mapping) else None
        raw = config.get("fields") if isinstance(config, Mapping) else None
        if name not in NAMES or not isinstance(raw, list) or not raw:
            raise MetadataError(
                f"a struct data type is {{'name': 'struct', 'configuration': {{'fields': "
                f"[...]}}}} with at least one field, got {value!r}"
            )
        fields = []
        for field in raw:
            if isinstance(field, Mapping) and set(field) == {"name", "data_type"}:
                field_name, field_type = field["name"], field["data_type"]
            elif isinstance(field, list) and len(field) == 2:  # "structured" (zarr-python)
                field_name, field_type = field
            else:
                raise MetadataError(
                    f"{name}: a field is {{'name': …, 'data_type': …}} (or [name, data_type] "
                    f"in 'structured'), got {field!r}"
                )
            if not isinstance(field_name, str) or not field_name:
                raise MetadataError(f"{name}: field names are non-empty strings, got {field!r}")
            try:
                resolved = resolve(field_type)
            except MetadataError as e:
                raise type(e)(f"{name}: field {field_name!r}: {e}") from None
            fields.append((field_name, resolved))
        return cls(name, cls._checked(tuple(fields)))

    @staticmethod
    def _checked(fields: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
        names = [n for n, _ in fields]
        if len(set(names)) != len(names):
            raise MetadataError(f"struct: field names must be unique, got {names}")
        for field_name, data_type in fields:
            dtype = data_type.dtype
            if dtype.hasobject or dtype.kind == "T" or dtype.itemsize == 0:
                raise UnknownDataTypeError(
                    f"struct: field {field_name!r} has the variable-length data type "
                    f"{data_type.to_json()!r}; struct fields have a fixed size"
                )
        return fields

    @classmethod
    def from_numpy(cls, dtype: np.dtype) -> StructDataType:
        """The type of a NumPy structured dtype (packed: no padding, no offsets)."""
        from zarrx.data_types.core import DataType
        from zarrx.data_types.fixed import FixedDataType
        from zarrx.data_types.time import TimeDataType

        dtype = np.dtype(dtype)
        if dtype.fields is None or not dtype.names:
            raise UnknownDataTypeError(f"{dtype} is not a structured dtype")
        if dtype.itemsize != sum(dtype.fields[n][0].itemsize for n in dtype.names) or any(
            dtype.fields[n][1] != sum(dtype.fields[m][0].itemsize for m in dtype.names[:i])
            for i, n in enumerate(dtype.names)
        ):
            raise UnknownDataTypeError(
                f"structured dtype {dtype} has padding or reordered offsets; struct fields "
                "are packed in order (NumPy's default, not align=True)"
            )
        fields: list[tuple[str, Any]] = []
        for n in dtype.names or ():
            field = dtype.fields[n][0]
            if field.subdtype is not None:
                raise UnknownDataTypeError(
                    f"structured dtype field {n!r} is a subarray {field}; struct has none"
                )
            if field.fields is not None:
                fields.append((n, cls.from_numpy(field)))
            elif field.kind in "mM":
                fields.append((n, TimeDataType.from_numpy(field)))
            elif field.kind in "US" or (field.kind == "V" and field.itemsize):
                fields.append((n, FixedDataType.from_numpy(field) if field.kind != "V"
                               else DataType.from_numpy(field)))
            else:
                fields.append((n, DataType.from_numpy(field)))
        return cls("structured", cls._checked(tuple(fields)))

    @property
    def dtype(self) -> np.dtype:
        return np.dtype([(n, t.dtype) for n, t in self.fields])

    @property
    def kind(self) -> str:
        return "V"

    def to_json(self) -> dict[str, Any]:
        if self.name == "structured":
            fields: list[Any] = [[n, t.to_json()] for n, t in self.fields]
        else:
            fields = [{"name": n, "data_type": t.to_json()} for n, t in self.fields]
        return {"name": self.name, "configuration": {"fields": fields}}

    # -- fill values ------------------------------------------------------------------------
    def default_fill(self) -> Any:
        return np.zeros((), dtype=self.dtype)[()]

    def coerce_fill(self, value: Any) -> Any:
        if value is None:
            return self.default_fill()
        try:
            return np.asarray(value, dtype=self.dtype)[()]
        except (TypeError, ValueError) as e:
            raise FillValueError(f"fill value {value!r} for {self.dtype}: {e}") from None

    def fill_from_json(self, value: Any) -> Any:
        """An object of field values (``struct``), or the base64 of the packed
        little-endian element (``structured``, as zarr-python writes it)."""
        out = np.zeros((), dtype=self.dtype)
        if isinstance(value, Mapping):
            if set(value) != {n for n, _ in self.fields}:
                raise FillValueError(
                    f"struct fill value {value!r}: needs exactly the fields "
                    f"{[n for n, _ in self.fields]}"
                )
            for n, t in self.fields:
                out[n] = t.fill_from_json(value[n])
            return out[()]
        if isinstance(value, str):
            packed = fill.parse(fill.V3, _little(self.dtype), value,
                                where=f"{self.name} {self.dtype}", kind="struct")
            return np.asarray(packed).astype(self.dtype)[()]
        raise FillValueError(
            f"struct fill value {value!r}: expected an object of field values (or base64)"
        )

    def fill_to_json(self, value: Any) -> Any:
        scalar = np.asarray(value, dtype=self.dtype)
        if self.name == "structured":
            return fill.encode(fill.V3, _little(self.dtype), scalar, kind="struct")
        return {n: t.fill_to_json(scalar[n][()]) for n, t in self.fields}
