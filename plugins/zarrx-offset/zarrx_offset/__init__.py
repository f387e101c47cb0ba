"""``example.offset`` (ZEP 10, seed 003): the element at ``offset`` is the array's origin.

``{"name": "example.offset", "configuration": {"offset": [12, 24]}}`` presents the stored
array from element ``(12, 24)`` on: ``a[0, 0]`` reads stored element ``(12, 24)`` and the
visible shape is the stored shape minus the offset. It must be understood (the default):
a reader without this plugin would index the wrong elements, so zarrx refuses to open the
array until the plugin is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrx.abc.extension import Extension
from zarrx.errors import MetadataError


class OffsetExtension(Extension):
    name = "example.offset"

    def __init__(self, configuration: Mapping[str, Any], must_understand: bool = True) -> None:
        super().__init__(configuration, must_understand)
        offset = self.configuration.get("offset")
        if not isinstance(offset, list) or not all(
            isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offset
        ):
            raise MetadataError(f"offset must be a list of non-negative integers, got {offset!r}")
        self.offset = tuple(offset)

    def validate(self, node_type: str, shape: tuple[int, ...] | None) -> None:
        if node_type != "array" or shape is None:
            raise MetadataError("example.offset applies to arrays only")
        if len(self.offset) != len(shape) or any(o > s for o, s in zip(self.offset, shape)):
            raise MetadataError(
                f"offset {list(self.offset)} does not fit an array of shape {list(shape)}"
            )

    def index_domain(
        self, shape: tuple[int, ...]
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return self.offset, tuple(s - o for s, o in zip(shape, self.offset))
