"""``numpy.datetime64`` and ``numpy.timedelta64``: time points and durations (v3 extensions).

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/data-types
- JSON: ``{"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}}``
  is NumPy's ``datetime64[10s]``. Stored as int64 (``bytes`` codec); the fill value is the
  int64 count (``-9223372036854775808`` is NaT), as zarr-python writes it.

>>> t = TimeDataType.from_json({"name": "numpy.timedelta64",
...                             "configuration": {"unit": "ms", "scale_factor": 1}})
>>> t.dtype, t.fill_from_json(-9223372036854775808)
(dtype('<m8[ms]'), np.timedelta64('NaT','ms'))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx.data_types import fill
from zarrx.errors import MetadataError

UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic")
_KIND = {"numpy.datetime64": "M", "numpy.timedelta64": "m"}


@dataclass(frozen=True)
class TimeDataType:
    """A datetime64 or timedelta64 of one unit and scale."""

    name: str
    unit: str
    scale_factor: int

    @classmethod
    def from_json(cls, value: Any) -> TimeDataType:
        if not isinstance(value, Mapping) or value.get("name") not in _KIND:
            raise MetadataError(f"expected a numpy.datetime64/timedelta64 object, got {value!r}")
        config = value.get("configuration", {})
        unit, scale = config.get("unit"), config.get("scale_factor", 1)
        if unit not in UNITS:
            raise MetadataError(f"{value['name']}: unknown unit {unit!r}; expected one of {UNITS}")
        if not isinstance(scale, int) or isinstance(scale, bool) or not 1 <= scale < 2**31:
            raise MetadataError(f"{value['name']}: scale_factor must be a positive int")
        return cls(value["name"], unit, scale)

    @classmethod
    def from_numpy(cls, dtype: np.dtype) -> TimeDataType:
        unit, scale = np.datetime_data(dtype)
        name = "numpy.datetime64" if dtype.kind == "M" else "numpy.timedelta64"
        return cls(name, unit, scale)

    @property
    def dtype(self) -> np.dtype:
        scale = "" if self.scale_factor == 1 else str(self.scale_factor)
        return np.dtype(f"{_KIND[self.name]}8[{scale}{self.unit}]")

    @property
    def kind(self) -> str:
        return _KIND[self.name]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name,
                "configuration": {"unit": self.unit, "scale_factor": self.scale_factor}}

    def default_fill(self) -> Any:
        """NaT: a time never written is "not a time" (zarr-python's default too)."""
        return np.array("NaT", dtype=self.dtype)[()]

    def fill_from_json(self, value: Any) -> Any:
        return fill.parse(fill.V3, self.dtype, value, where=self.name)

    def fill_to_json(self, value: Any) -> Any:
        return fill.encode(fill.V3, self.dtype, value)

    def coerce_fill(self, value: Any) -> Any:
        if value is None:
            return self.default_fill()
        if isinstance(value, int) and not isinstance(value, bool):
            return self.fill_from_json(value)
        return np.asarray(value).astype(self.dtype)[()]
