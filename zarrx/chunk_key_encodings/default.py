"""Chunk key encodings: ``default`` (``c/1/2``) and ``v2`` (``1.2``).

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/chunk-key-encodings/
The 0-d chunk is ``c`` under ``default`` and ``0`` under ``v2``.

>>> DefaultChunkKeyEncoding.from_config({"separator": "."}).encode((1, 2))
'c.1.2'
>>> V2ChunkKeyEncoding.from_config({}).encode(())
'0'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from zarrx.errors import MetadataError


def check_separator(value: Any, *, where: str) -> str:
    """A chunk key separator, ``/`` or ``.``, in any format (``where``: the field)."""
    if not isinstance(value, str) or value not in ("/", "."):
        raise MetadataError(f"{where} must be '/' or '.', got {value!r}")
    return value


@dataclass(frozen=True)
class _SeparatedEncoding:
    separator: str
    name: ClassVar[str]
    default_separator: ClassVar[str]

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> _SeparatedEncoding:
        if not isinstance(config, Mapping) or set(config) - {"separator"}:
            raise MetadataError(
                f"chunk key encoding {cls.name!r}: configuration may hold only 'separator', "
                f"got {config!r}"
            )
        return cls(check_separator(config.get("separator", cls.default_separator),
                                   where=f"chunk key encoding {cls.name!r}: separator"))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {"separator": self.separator}}


class DefaultChunkKeyEncoding(_SeparatedEncoding):
    name = "default"
    default_separator = "/"

    def encode(self, coords: tuple[int, ...]) -> str:
        return "c" + "".join(self.separator + str(i) for i in coords)


class V2ChunkKeyEncoding(_SeparatedEncoding):
    name = "v2"
    default_separator = "."

    def encode(self, coords: tuple[int, ...]) -> str:
        return self.separator.join(map(str, coords)) if coords else "0"
