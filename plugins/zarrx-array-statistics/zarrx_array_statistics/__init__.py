"""``example.array-statistics`` (ZEP 10, seed 003): ``min`` and ``max`` of the stored values.

``{"name": "example.array-statistics", "must_understand": false, "configuration": {"min": 5,
"max": 1023}}``. With this plugin, every write widens the range to include the values
written, so ``array.extensions["example.array-statistics"].range`` answers without reading
data. The range always contains every stored value; after overwrites it may be wider than
the exact range. Without the plugin the entry is ignored and kept as it is (it need not be
understood), and may then fall behind the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.abc.extension import Extension
from zarrx.errors import MetadataError


def _json_number(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


class ArrayStatistics(Extension):
    name = "example.array-statistics"

    def __init__(self, configuration: Mapping[str, Any], must_understand: bool = False) -> None:
        super().__init__(configuration, must_understand)
        for key in ("min", "max"):
            value = self.configuration.get(key)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if value is not None and not number:
                raise MetadataError(f"array-statistics {key} must be a number, got {value!r}")

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> ArrayStatistics:
        return cls(entry.get("configuration", {}), entry.get("must_understand", False))

    @property
    def range(self) -> tuple[Any, Any]:
        return self.configuration.get("min"), self.configuration.get("max")

    def validate(self, node_type: str, shape: tuple[int, ...] | None) -> None:
        if node_type != "array":
            raise MetadataError("example.array-statistics applies to arrays only")

    def after_write(self, written: np.ndarray) -> ArrayStatistics | None:
        if written.dtype.kind not in "biuf":
            return None
        values = written[~np.isnan(written)] if written.dtype.kind == "f" else written
        if not values.size:
            return None
        low, high = _json_number(values.min()), _json_number(values.max())
        old_low, old_high = self.range
        new_low = low if old_low is None else min(old_low, low)
        new_high = high if old_high is None else max(old_high, high)
        if (new_low, new_high) == (old_low, old_high):
            return None
        return ArrayStatistics(
            {**self.configuration, "min": new_low, "max": new_high}, self.must_understand
        )
