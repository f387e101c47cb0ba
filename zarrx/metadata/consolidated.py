"""Consolidated metadata: a hierarchy's documents gathered in one place, read in one go.

- Zarr v2: ``.zmetadata`` beside the root ``.zgroup``: ``{"zarr_consolidated_format": 1,
  "metadata": {".zgroup": …, "a/.zarray": …, "a/.zattrs": …}}``.
- Zarr v3 (as zarr-python 3 writes it; not yet in the spec): inline in the group's
  ``zarr.json`` under ``"consolidated_metadata": {"kind": "inline", "must_understand":
  false, "metadata": {"a": <zarr.json of a>, "a/b": …}}``.

Parsed, it is a flat mapping from paths relative to the group to node metadata objects —
seed 004's flattening of a hierarchy's object model. An entry that is refused (e.g. an
unknown must-understand extension) is an :class:`~zarrx.metadata.model.Unreadable`: the
group opens, and the entry's error is raised when that member is accessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrx.errors import MetadataError
from zarrx.metadata import v2, v3
from zarrx.metadata.model import parse_tolerant

V2_KEY = ".zmetadata"
Consolidated = dict[str, Any]


def parse_v3(group: Any, *, where: str) -> Consolidated | None:
    """The consolidated entries inside a v3 group's ``zarr.json``, or ``None``."""
    raw = getattr(group, "extra", {}).get("consolidated_metadata")
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or raw.get("kind") != "inline" or not isinstance(
        raw.get("metadata"), Mapping
    ):
        raise MetadataError(
            f"{where}: consolidated_metadata must be an object with kind 'inline' and a "
            f"'metadata' object, got {raw!r}"
        )
    return {
        path: parse_tolerant(True, v3.node_from_document, doc,
                             where=f"{where} consolidated_metadata[{path!r}]")
        for path, doc in raw["metadata"].items()
    }


def parse_v2(doc: Any, *, where: str) -> Consolidated:
    """The entries of a ``.zmetadata`` document."""
    if (
        not isinstance(doc, Mapping)
        or doc.get("zarr_consolidated_format") != 1
        or not isinstance(doc.get("metadata"), Mapping)
    ):
        raise MetadataError(
            f"{where}: expected zarr_consolidated_format 1 and a 'metadata' object"
        )
    by_node: dict[str, dict[str, Any]] = {}
    for key, value in doc["metadata"].items():
        node, _, name = key.rpartition("/")
        if name in (v2.ARRAY_KEY, v2.GROUP_KEY, v2.ATTRS_KEY):
            by_node.setdefault(node, {})[name] = value
    out: Consolidated = {}
    for node, docs in by_node.items():
        attrs = docs.get(v2.ATTRS_KEY)
        where_node = f"{where}[{node!r}]"
        if v2.ARRAY_KEY in docs:
            out[node] = parse_tolerant(True, v2.ArrayMetadataV2.from_json, docs[v2.ARRAY_KEY],
                                       attrs, where=where_node)
        elif v2.GROUP_KEY in docs:
            out[node] = parse_tolerant(True, v2.GroupMetadataV2.from_json, docs[v2.GROUP_KEY],
                                       attrs, where=where_node)
    out.pop("", None)  # the group itself
    return out


def subtree(entries: Consolidated, name: str) -> Consolidated:
    """The entries below child ``name``, relative to it."""
    prefix = name + "/"
    return {k[len(prefix):]: v for k, v in entries.items() if k.startswith(prefix)}


def to_v3(entries: Mapping[str, Any]) -> dict[str, Any]:
    """The ``consolidated_metadata`` object for a v3 group's ``zarr.json``."""
    metadata = {}
    for path in sorted(entries):
        doc = entries[path].to_json()
        if doc.get("node_type") == "group":
            doc = {**doc, "consolidated_metadata": {
                "kind": "inline", "must_understand": False, "metadata": {}}}
        metadata[path] = doc
    return {"kind": "inline", "must_understand": False, "metadata": metadata}


def to_v2(group: Any, entries: Mapping[str, Any]) -> dict[str, Any]:
    """The ``.zmetadata`` document for a v2 hierarchy rooted at ``group``."""
    metadata: dict[str, Any] = {v2.GROUP_KEY: group.to_json(), v2.ATTRS_KEY: group.attributes}
    for path in sorted(entries):
        meta = entries[path]
        key = v2.ARRAY_KEY if meta.node_type == "array" else v2.GROUP_KEY
        metadata[f"{path}/{key}"] = meta.to_json()
        metadata[f"{path}/{v2.ATTRS_KEY}"] = meta.attributes
    return {"zarr_consolidated_format": 1, "metadata": metadata}
