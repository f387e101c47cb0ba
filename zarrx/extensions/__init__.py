"""ZEP 10 ``extensions`` lists: parsing them against the registry, writing them back.

>>> parse_extensions([{"name": "x.y", "must_understand": False}], where="a", node_type="group",
...                  shape=None)
(UnknownEntry({'name': 'x.y', 'must_understand': False}),)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrx import registry
from zarrx.abc.extension import Extension
from zarrx.errors import MetadataError, UnknownExtensionError


class UnknownEntry:
    """An entry no installed plugin knows, kept verbatim (it has ``must_understand: false``)."""

    def __init__(self, raw: Any, name: str | None = None) -> None:
        self.raw = raw
        self.name = name if name is not None else raw if isinstance(raw, str) else raw.get("name")

    def to_dict(self) -> Any:
        return self.raw

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnknownEntry) and self.raw == other.raw

    def __hash__(self) -> int:
        return hash(repr(self.raw))

    def __repr__(self) -> str:
        return f"UnknownEntry({self.raw!r})"


def resolve_entry(
    entry: Mapping[str, Any], raw: Any, *, where: str, node_type: str,
    shape: tuple[int, ...] | None,
) -> Extension | UnknownEntry:
    """One entry in ZEP 10 form (``name``, ``configuration``, ``must_understand``): the
    plugin object, validated against its node, or ``raw`` kept as it is when no plugin
    knows it and it need not be understood. Every format resolves its entries here."""
    name = entry["name"]
    must = entry.get("must_understand", True)
    if not isinstance(must, bool):
        raise MetadataError(f"{where}: must_understand of {name!r} must be true or false")
    impl = registry.extensions.find(name)
    if impl is None:
        if must:
            raise UnknownExtensionError(
                f"{where}: extension {name!r} must be understood, but no installed package "
                "provides it; install a plugin that registers it in the 'zarrx.extensions' "
                f"entry-point group under {name!r}"
            )
        return UnknownEntry(raw, name)
    try:
        ext = impl.from_dict(entry)
        ext.validate(node_type, shape)
    except MetadataError as e:
        raise type(e)(f"{where}: extension {name!r}: {e}") from None
    return ext


def parse_extensions(
    raw: Any, *, where: str, node_type: str, shape: tuple[int, ...] | None
) -> tuple[Extension | UnknownEntry, ...]:
    """Resolve each entry; refuse unknown ones that must be understood (the default)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise MetadataError(
            f"{where}: 'extensions' must be a non-empty list (or be left out), got {raw!r}"
        )
    out: list[Extension | UnknownEntry] = []
    for entry in raw:
        if isinstance(entry, str):
            entry_dict: Mapping[str, Any] = {"name": entry}
        elif isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            entry_dict = entry
        else:
            raise MetadataError(f"{where}: extension entries need a 'name', got {entry!r}")
        out.append(resolve_entry(entry_dict, entry, where=where, node_type=node_type,
                                 shape=shape))
    return tuple(out)


def extensions_to_json(entries: tuple[Any, ...]) -> list[Any] | None:
    return [e.to_dict() for e in entries] or None


def index_domain(
    entries: tuple[Any, ...], shape: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The combined ``(origin, visible_shape)`` of the entries that change indexing."""
    found = None
    for entry in entries:
        domain = entry.index_domain(shape) if isinstance(entry, Extension) else None
        if domain is not None:
            if found is not None:
                raise MetadataError("more than one extension changes the index domain")
            found = domain
    return found
