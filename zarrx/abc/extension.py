"""The contract of ZEP 10 ``extensions`` entries (seed 003) that plugins implement.

An entry in a node's ``extensions`` list is ``"name"`` or ``{"name": ..., "configuration":
{...}, "must_understand": bool}`` (``must_understand`` defaults to true). zarrx looks the
name up in the ``zarrx.extensions`` entry-point group; an unknown entry that must be
understood stops the open, one that need not is kept as it is and written back unchanged.
A known entry becomes an :class:`Extension` and is consulted at three points:

- **metadata** — :meth:`Extension.validate` when the node is opened;
- **reading and writing** — :meth:`Extension.index_domain` may present a different index
  space (e.g. an origin offset) than the stored array;
- **after a write** — :meth:`Extension.after_write` may return an updated entry (e.g. new
  statistics), which zarrx writes back to the node's metadata.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np


class Extension(ABC):
    """One ``extensions`` entry that an installed plugin understands."""

    #: The registered name (ZEP 9 style, e.g. ``"example.offset"``).
    name: ClassVar[str]

    def __init__(self, configuration: Mapping[str, Any], must_understand: bool = True) -> None:
        self.configuration = dict(configuration)
        self.must_understand = must_understand

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> Self:
        """Build from the metadata entry; raise :class:`zarrx.errors.MetadataError` if bad."""
        return cls(entry.get("configuration", {}), entry.get("must_understand", True))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.configuration:
            out["configuration"] = self.configuration
        if not self.must_understand:
            out["must_understand"] = False
        return out

    # -- hooks (defaults do nothing) --------------------------------------------------------
    def validate(self, node_type: str, shape: tuple[int, ...] | None) -> None:  # noqa: B027
        """Check the entry against the node it is on (``shape`` is ``None`` for groups)."""

    def index_domain(
        self, shape: tuple[int, ...]
    ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """``(origin, visible_shape)`` when this extension changes how the array is indexed:
        user index ``i`` reads stored element ``origin + i``. ``None`` leaves indexing alone."""
        return None

    def after_write(self, written: np.ndarray) -> Extension | None:
        """Called with the values just written; return an updated entry to store, or None."""
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Extension) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"
