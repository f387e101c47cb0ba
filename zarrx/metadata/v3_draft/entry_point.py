"""The draft's entry point (the root ``zarr.json``), its constants and ``extensions`` lists."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zarrx import registry
from zarrx.errors import MetadataError, UnknownExtensionError
from zarrx.extensions import UnknownEntry, resolve_entry
from zarrx.metadata.json import load_json

#: The ``zarr_format`` (and ``LAYOUTS`` key) of the draft in zarrx's API.
FORMAT = "3-draft"
CORE_URI = "https://purl.org/zarr/spec/protocol/core/3.0"
ENTRY_POINT_KEY = "zarr.json"
META_ROOT = "meta/root"
DATA_ROOT = "data/root"
CODEC_URI_PREFIX = "https://purl.org/zarr/spec/codec/"
SHARDING_URI = "https://purl.org/zarr/spec/storage_transformers/sharding/1.0"
#: Both spellings of the core protocol URI (seed 002 wrote ``http``); major version 3.
_CORE = re.compile(r"^https?://purl\.org/zarr/spec/protocol/core/(\d+)\.(\d+)$")
#: Encodings of group and array documents understood here: JSON, as the seeds define it.
_JSON_ENCODINGS = {CORE_URI, "http://purl.org/zarr/spec/protocol/core/3.0", "application/json"}
_CODEC_URI = re.compile(r"^https?://purl\.org/zarr/spec/codec/([A-Za-z0-9_.-]+?)(?:/[0-9.]+)?/?$")
_SUFFIX = re.compile(r"^[A-Za-z0-9_.-]*$")

# -- extensions ------------------------------------------------------------------------------

def check_extensions(value: Any, *, where: str) -> tuple[dict[str, Any], ...]:
    """The entry point's ``extensions``: unknown ones that must be understood stop the open
    of the hierarchy (they apply to all of it, so no node is spared)."""
    value = _entries(value, where=where)
    for ext in value:
        must = ext.get("must_understand", True)
        if not isinstance(must, bool):
            raise MetadataError(
                f"{where}: extension {ext['extension']!r}: must_understand must be true or false"
            )
        if must and registry.extensions.find(ext["extension"]) is None:
            raise UnknownExtensionError(
                f"{where}: extension {ext['extension']!r} must be understood, and no installed "
                "zarrx package provides it (entry-point group 'zarrx.extensions'); install one, "
                "or open the data with an implementation that supports it"
            )
    return tuple(value)


def _entries(value: Any, *, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise MetadataError(f"{where}: extensions must be a list, got {value!r}")
    for ext in value:
        if not isinstance(ext, dict) or not isinstance(ext.get("extension"), str):
            raise MetadataError(
                f"{where}: each extension must be an object with an 'extension' URI, got {ext!r}"
            )
    return value


def parse_node_extensions(
    value: Any, *, where: str, node_type: str, shape: tuple[int, ...] | None
) -> tuple[Any, ...]:
    """An array's (or group's) ``extensions``, resolved as ZEP 10 entries are in every
    format: the seed's ``extension`` URI is the name looked up in the registry, and known
    entries become plugin objects whose hooks apply; unknown optional ones are kept as
    they are; unknown ones that must be understood stop the open of this node."""
    out = []
    for ext in _entries(value, where=where):
        entry = {"name": ext["extension"], **{k: v for k, v in ext.items() if k != "extension"}}
        out.append(resolve_entry(entry, ext, where=where, node_type=node_type, shape=shape))
    return tuple(out)


def extension_to_json(entry: Any) -> dict[str, Any]:
    """One entry in the seed's form: ``extension``, ``must_understand`` (required by the
    seed), then the rest (``configuration``)."""
    if isinstance(entry, Mapping) and "extension" in entry:
        return dict(entry)
    doc = dict(entry.to_dict() if hasattr(entry, "to_dict") else entry)
    if isinstance(entry, UnknownEntry):
        return doc
    name = doc.pop("name")
    return {"extension": name, "must_understand": doc.pop("must_understand", True), **doc}


# -- the entry point -------------------------------------------------------------------------

@dataclass(frozen=True)
class EntryPoint:
    """The ``zarr.json`` of a draft hierarchy."""

    zarr_format: str = CORE_URI
    metadata_encoding: str = CORE_URI
    metadata_key_suffix: str = ".json"
    extensions: tuple[dict[str, Any], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Any, *, where: str = ENTRY_POINT_KEY) -> EntryPoint:
        if not isinstance(doc, dict):
            raise MetadataError(f"{where}: the entry point must be a JSON object")
        fmt = doc.get("zarr_format")
        match = _CORE.match(fmt) if isinstance(fmt, str) else None
        if match is None:
            raise MetadataError(
                f"{where}: zarr_format must be the core protocol URI {CORE_URI!r}, got {fmt!r}"
            )
        if match.group(1) != "3":
            raise MetadataError(
                f"{where}: core protocol version {match.group(1)}.{match.group(2)} is not "
                "supported; zarrx reads version 3 of the draft"
            )
        encoding = doc.get("metadata_encoding", CORE_URI)
        if encoding not in _JSON_ENCODINGS:
            raise UnknownExtensionError(
                f"{where}: metadata_encoding {encoding!r} is not supported; zarrx reads the "
                f"JSON encoding {CORE_URI!r}"
            )
        suffix = doc.get("metadata_key_suffix", ".json")
        if not isinstance(suffix, str) or not _SUFFIX.match(suffix):
            raise MetadataError(
                f"{where}: metadata_key_suffix must be a string of the characters a-z A-Z "
                f"0-9 - _ . (no '/'), got {suffix!r}"
            )
        extensions = check_extensions(doc.get("extensions", []), where=where)
        known = {"zarr_format", "metadata_encoding", "metadata_key_suffix", "extensions"}
        return cls(fmt, encoding, suffix, extensions,
                   {k: v for k, v in doc.items() if k not in known})

    def to_json(self) -> dict[str, Any]:
        # Exactly these four keys: zarr-python 2.18 refuses an entry point with others.
        return {
            "zarr_format": self.zarr_format,
            "metadata_encoding": self.metadata_encoding,
            "metadata_key_suffix": self.metadata_key_suffix,
            "extensions": list(self.extensions),
            **self.extra,
        }


DEFAULT_ENTRY_POINT = EntryPoint()


def is_draft_entry_point(doc: Any) -> bool:
    """Whether a parsed root ``zarr.json`` names the draft's core protocol (any version)."""
    fmt = doc.get("zarr_format") if isinstance(doc, dict) else None
    return isinstance(fmt, str) and _CORE.match(fmt) is not None


def entry_point_from(raw: bytes | None, *, required: bool) -> EntryPoint | None:
    """The entry point of a store from its ``zarr.json`` bytes; ``None`` when the store is
    not a draft hierarchy (an error instead when ``required``)."""
    if raw is None:
        return None
    if not required and b"protocol" not in bytes(raw):
        return None  # a v3 root document (maybe large): leave its parsing to the v3 layout
    try:
        doc = load_json(raw, where=ENTRY_POINT_KEY)
    except MetadataError:
        if required:
            raise
        return None
    if not is_draft_entry_point(doc):
        if required:
            raise MetadataError(
                f"{ENTRY_POINT_KEY}: not a Zarr v3.0 draft entry point (zarr_format "
                f"{doc.get('zarr_format') if isinstance(doc, dict) else doc!r}); expected "
                f"{CORE_URI!r}"
            )
        return None
    return EntryPoint.from_json(doc)
