"""Immutable JSON values: the building blocks of frozen object models.

A ZOM holds JSON (attributes, codec configurations, fill values). :func:`freeze` turns a
JSON value into a deeply immutable, hashable one (objects become :class:`FrozenDict`,
arrays become tuples) and :func:`thaw` turns it back. :func:`json_equal` compares JSON
values as JSON does: ``true`` is not ``1``, ``1`` equals ``1.0``, and NaN equals NaN.

>>> value = freeze({"a": [1, {"b": None}]})
>>> value["a"][1]["b"] is None, hash(value) == hash(freeze({"a": [1, {"b": None}]}))
(True, True)
>>> thaw(value)
{'a': [1, {'b': None}]}
>>> json_equal(1, 1.0), json_equal(True, 1)
(True, False)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

from zarrx.errors import MetadataError


class FrozenDict(Mapping[str, Any]):
    """A read-only, hashable mapping that keeps insertion order."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(data or {})
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(canonical(self))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return json_equal(self, other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


def freeze(value: Any, *, where: str = "value") -> Any:
    """A deeply immutable copy of a JSON value; :class:`MetadataError` if it is not JSON."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise MetadataError(f"{where}: object keys must be strings, got {key!r}")
            out[key] = freeze(item, where=f"{where}.{key}")
        return FrozenDict(out)
    if isinstance(value, list | tuple):
        return tuple(freeze(item, where=f"{where}[{i}]") for i, item in enumerate(value))
    if hasattr(value, "item") and hasattr(value, "dtype"):  # a NumPy scalar
        return freeze(value.item(), where=where)
    raise MetadataError(f"{where}: {type(value).__name__} {value!r} is not a JSON value")


def thaw(value: Any) -> Any:
    """Plain ``dict`` / ``list`` JSON from a frozen (or plain) value."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values (booleans are not numbers; NaN equals NaN)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping | list | tuple) or isinstance(b, Mapping | list | tuple):
        return False
    return type(a) is type(b) and a == b


def _canon(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, Mapping):
        return {k: _canon(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """A string that is equal for :func:`json_equal` values (sorted keys, 1.0 as 1)."""
    return json.dumps(_canon(value), sort_keys=True, separators=(",", ":"))
