"""Fixed-size strings and bytes as zarr-python 3 names them for Zarr v3.

- ``fixed_length_utf32`` (``{"length_bytes": 4n}``): NumPy ``<U{n}``; fill value a string.
- ``null_terminated_bytes`` (``{"length_bytes": n}``): NumPy ``S{n}``; fill value base64.
- ``raw_bytes`` (``{"length_bytes": n}``): NumPy ``V{n}``; fill value base64. (zarrx writes
  the core ``r{8n}`` for ``V`` dtypes, and reads both.)

>>> FixedDataType.from_json({"name": "fixed_length_utf32",
...                          "configuration": {"length_bytes": 12}}).dtype
dtype('<U3')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx.data_types import fill
from zarrx.errors import MetadataError

_KIND = {"fixed_length_utf32": "U", "null_terminated_bytes": "S", "raw_bytes": "V"}
_NAME = {v: k for k, v in _KIND.items()}


@dataclass(frozen=True)
class FixedDataType:
    name: str
    length_bytes: int

    @classmethod
    def from_json(cls, value: Any) -> FixedDataType:
        if not isinstance(value, Mapping) or value.get("name") not in _KIND:
            raise MetadataError(f"expected a fixed-size string or bytes type, got {value!r}")
        length = value.get("configuration", {}).get("length_bytes")
        unit = 4 if value["name"] == "fixed_length_utf32" else 1
        if not isinstance(length, int) or isinstance(length, bool) or length < 1 or length % unit:
            raise MetadataError(
                f"{value['name']}: length_bytes must be a positive multiple of {unit}, "
                f"got {length!r}"
            )
        return cls(value["name"], length)

    @classmethod
    def from_numpy(cls, dtype: np.dtype) -> FixedDataType:
        return cls(_NAME[dtype.kind], dtype.itemsize)

    @property
    def dtype(self) -> np.dtype:
        kind = _KIND[self.name]
        n = self.length_bytes // 4 if kind == "U" else self.length_bytes
        return np.dtype(f"<U{n}" if kind == "U" else f"{kind}{n}").newbyteorder("=")

    @property
    def kind(self) -> str:
        return _KIND[self.name]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {"length_bytes": self.length_bytes}}

    def default_fill(self) -> Any:
        return np.zeros((), dtype=self.dtype)[()]

    def fill_from_json(self, value: Any) -> Any:
        return fill.parse(fill.V3, self.dtype, value, where=self.name, kind=self._fill_kind)

    def fill_to_json(self, value: Any) -> Any:
        return fill.encode(fill.V3, self.dtype, value, kind=self._fill_kind)

    @property
    def _fill_kind(self) -> str:
        return "raw_bytes" if self.kind == "V" else self.kind

    def coerce_fill(self, value: Any) -> Any:
        if value is None:
            return self.default_fill()
        return np.asarray(value, dtype=self.dtype)[()]
