"""Nodes in a store: open a store for a mode, make room for a new node (checks first, then
erase and write), write a node's documents, erase a node.

Making room is fenced: an existing node is refused unless ``overwrite``, and then it is
erased through the validated keys of that node only (:func:`erase_node`); a node of one
format is never created inside a hierarchy of another. Everything above (``create_array``,
``Group.create_group``, ``zarrx.copy``, ZOM's ``to_zarr``) writes nodes through
:func:`create_node`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrx.abc.store import Store
from zarrx.errors import (
    ArgumentError,
    FormatMismatchError,
    MetadataError,
    NodeExistsError,
    NodeTypeError,
)
from zarrx.metadata import v3_draft
from zarrx.metadata.io import (
    LAYOUTS,
    check_format,
    creates_parent_groups,
    ensure_document,
    ensure_node,
    erase_tree,
    erase_unreadable,
    find_node,
    find_nodes,
    layout_of,
    prepare_store,
    write_node,
)
from zarrx.stores.url import make_store

MODES = ("r", "r+", "a", "w", "w-")


def open_store(store: Any, mode: str, storage_options: Mapping[str, Any] | None = None) -> Store:
    """The Store for what a user passed as ``store``, opened for ``mode``."""
    if mode not in MODES:
        raise ArgumentError(f"mode must be one of {MODES}, got {mode!r}")
    if store is None:
        from zarrx.stores.memory import MemoryStore

        return MemoryStore()
    return make_store(store, mode=mode, storage_options=dict(storage_options or {}) or None)


def erase_node(store: Store, path: str, meta: Any = None) -> None:
    """Remove the node at ``path`` and everything below it (validated keys only)."""
    erase_tree(store, path, meta)


def _check_format(store: Store, where: str, found: Any, zarr_format: Any) -> None:
    """Refuse a node of ``zarr_format`` inside a hierarchy of another format (it would be
    invisible there, and its documents could overwrite the hierarchy's)."""
    if found is not None and found.zarr_format != zarr_format:
        raise FormatMismatchError(
            f"cannot create a zarr_format={zarr_format!r} node at {where!r} in {store!r}: "
            f"the {found.node_type} at {where!r} is zarr_format={found.zarr_format!r}, and a "
            "hierarchy holds nodes of one format"
        )


def prepare_path(
    store: Store, path: str, overwrite: bool, zarr_format: Any, group: bool = False
) -> None:
    """Make room for a new node at ``path``: check or clear it (one whose metadata does not
    parse too, when overwriting), and create parent groups. Everything is checked before
    anything is erased or written."""
    unreadable = False
    try:
        existing = find_node(store, path)
    except MetadataError:
        if not overwrite:
            raise
        existing, unreadable = None, True
    if group and not overwrite and existing is not None and layout_of(existing).is_implicit(
            existing):
        existing = None  # an implicit group (draft) becomes explicit; its members stay
    if existing is not None and not overwrite:
        raise NodeExistsError(
            f"{'an' if existing.node_type == 'array' else 'a'} {existing.node_type} already "
            f"exists at {path or '/'!r} in {store!r}; "
            "pass overwrite=True (or mode='w') to replace it"
        )
    parts = path.split("/") if path else []
    parents = ["/".join(parts[:i]) for i in range(len(parts))]
    found = dict(zip(parents, find_nodes(store, parents)))
    for parent, meta in found.items():
        if meta is not None and meta.node_type == "array":
            raise NodeTypeError(f"cannot create {path!r}: {parent or '/'!r} is an array")
        _check_format(store, parent or "/", meta, zarr_format)
    if zarr_format != v3_draft.FORMAT and not (overwrite and not path):
        entry = v3_draft.entry_point_from(store.get(v3_draft.ENTRY_POINT_KEY), required=False)
        if entry is not None:
            raise FormatMismatchError(
                f"cannot create a zarr_format={zarr_format!r} node at {path or '/'!r} in "
                f"{store!r}: the store holds a Zarr v3.0 draft hierarchy (its zarr.json is the "
                "draft's entry point), and a hierarchy holds nodes of one format"
            )
    if unreadable:
        erase_unreadable(store, path)
    if existing is not None:
        erase_node(store, path, existing)
    if creates_parent_groups(zarr_format):
        for parent, meta in found.items():
            if meta is None:  # unless another writer has made it meanwhile
                ensure_node(store, parent, LAYOUTS[zarr_format].new_group({}))


def create_node(store: Store, path: str, meta: Any, *, overwrite: bool = False) -> Any:
    """Write a new node of parsed metadata ``meta`` at ``path`` (what ``create_array`` and
    ``create_group`` do once they have built it): every check first — the keys the store
    can hold, an existing node, the parents, the hierarchy's format — then the writes.
    Returns the metadata written (a draft node adopts the store's entry point)."""
    meta, pending = prepare_store(store, path, meta)
    prepare_path(store, path, overwrite, meta.zarr_format, group=meta.node_type == "group")
    for key, value in pending.items():  # a new draft hierarchy's entry point...
        ensure_document(store, key, value)  # ...once
    write_node(store, path, meta)
    return meta


def write_group(
    store: Store, path: str, *, attributes: Mapping[str, Any] | None, zarr_format: Any,
    overwrite: bool,
) -> Any:
    """Write a new group at ``path`` (and missing parents); returns its metadata."""
    check_format(zarr_format)
    meta = LAYOUTS[zarr_format].new_group(dict(attributes or {}))
    return create_node(store, path, meta, overwrite=overwrite)


