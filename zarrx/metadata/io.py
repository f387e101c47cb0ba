"""Where each format keeps a node's documents and chunks, and reading/writing them.

This is the only module that turns node paths into metadata keys. Only Zarr v3 is wired
here so far; v2 and the v3.0 draft add their layouts beside it.
"""

from __future__ import annotations

from typing import Any

from zarrx.abc.store import Store
from zarrx.errors import MetadataError, NodeNotFoundError
from zarrx.metadata import v3
from zarrx.metadata.json import dump_json, load_json
from zarrx.stores.keys import validate_key

FORMATS = (3,)


def normalize_path(path: str | None) -> str:
    """A node path without leading or trailing ``/``; ``""`` is the root."""
    if path is None:
        return ""
    path = str(path).strip("/")
    if path:
        validate_key(path)
    return path


def join_path(parent: str, name: str) -> str:
    return normalize_path(f"{parent}/{name}" if parent else name)


def check_format(zarr_format: Any) -> int:
    if zarr_format not in FORMATS:
        raise MetadataError(
            f"unsupported zarr_format {zarr_format!r}; this zarrx reads and writes {FORMATS}"
        )
    return zarr_format


def metadata_key(path: str) -> str:
    return f"{path}/{v3.METADATA_KEY}" if path else v3.METADATA_KEY


def data_prefix(path: str) -> str:
    return f"{path}/" if path else ""


def node_prefix(path: str) -> str:
    """The prefix under which everything of the node at ``path`` lives."""
    return f"{path}/" if path else ""


def read_node(store: Store, path: str, *, zarr_format: Any = None) -> Any:
    """The parsed metadata of the node at ``path``; :class:`NodeNotFoundError` if none."""
    if zarr_format is not None:
        check_format(zarr_format)
    key = metadata_key(path)
    raw = store.get(key)
    if raw is None:
        raise NodeNotFoundError(
            f"no array or group at path {path or '/'!r} (no {key!r} in {store!r})"
        )
    return v3.node_from_json(load_json(raw, where=key), where=key)


def find_node(store: Store, path: str) -> Any | None:
    """Like :func:`read_node` but ``None`` when nothing is there."""
    try:
        return read_node(store, path)
    except NodeNotFoundError:
        return None


def write_node(store: Store, path: str, meta: Any) -> None:
    store.set(metadata_key(path), dump_json(meta.to_json()))
