"""The functions users start from: open, open_array, open_group, create_array, create_group.

They mirror zarr-python 3 (names, keywords and modes ``r``, ``r+``, ``a``, ``w``, ``w-``)
so that switching is a change of import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from zarrx.abc.store import Store
from zarrx.array import Array
from zarrx.creation import array_metadata
from zarrx.errors import (
    ArgumentError,
    FormatMismatchError,
    NodeExistsError,
    NodeNotFoundError,
    NodeTypeError,
)
from zarrx.group import Group, node_for
from zarrx.metadata import consolidated, v3_draft
from zarrx.metadata.io import (
    LAYOUTS,
    check_format,
    creates_parent_groups,
    ensure_node,
    erase_tree,
    find_node,
    find_nodes,
    list_members,
    normalize_path,
    prepare_store,
    read_node,
    read_node_consolidated,
    update_node,
    write_node,
)
from zarrx.metadata.json import dump_json
from zarrx.metadata.model import Unreadable
from zarrx.stores.url import make_store

MODES = ("r", "r+", "a", "w", "w-")
StoreLike = Any


def _store(store: StoreLike, mode: str, storage_options: Mapping[str, Any] | None) -> Store:
    if mode not in MODES:
        raise ArgumentError(f"mode must be one of {MODES}, got {mode!r}")
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


def _prepare_path(
    store: Store, path: str, overwrite: bool, zarr_format: Any, group: bool = False
) -> None:
    """Make room for a new node at ``path``: check or clear it, and create parent groups.
    Everything is checked before anything is erased or written."""
    existing = find_node(store, path)
    if group and not overwrite and getattr(existing, "implicit", False):
        existing = None  # an implicit group (draft) becomes explicit; its members stay
    if existing is not None and not overwrite:
        raise NodeExistsError(
            f"a {existing.node_type} already exists at {path or '/'!r} in {store!r}; "
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
    _prepare_path(store, path, overwrite, meta.zarr_format, group=meta.node_type == "group")
    for key, value in pending.items():  # a new draft hierarchy's entry point...
        store.atomic_update(key, lambda old, new=value: new if old is None else old)  # ...once
    write_node(store, path, meta)
    return meta


def create_array(
    store: StoreLike,
    name: str | None = None,
    *,
    shape: Any,
    dtype: Any = "float64",
    chunks: Any = None,
    shards: Any = None,
    compressors: Any = "auto",
    filters: Any = None,
    serializer: Any = "auto",
    fill_value: Any = None,
    order: str = "C",
    attributes: Mapping[str, Any] | None = None,
    dimension_names: Any = None,
    chunk_key_encoding: Any = None,
    extensions: Any = None,
    zarr_format: Any = 3,
    overwrite: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> Array:
    """Create an array (and missing parent groups) and return it, open for writing."""
    check_format(zarr_format)
    s = _store(store, "w" if overwrite else "a", storage_options)
    path = normalize_path(name)
    meta = array_metadata(
        zarr_format=zarr_format,
        shape=shape,
        dtype=dtype,
        chunks=chunks,
        shards=shards,
        compressors=compressors,
        filters=filters,
        serializer=serializer,
        fill_value=fill_value,
        order=order,
        attributes=attributes,
        dimension_names=dimension_names,
        chunk_key_encoding=chunk_key_encoding,
        extensions=extensions,
        where=f"array {'/' + path!r}",
    )
    return Array(s, path, create_node(s, path, meta, overwrite=overwrite))


def create_group(
    store: StoreLike,
    path: str | None = None,
    *,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = 3,
    overwrite: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> Group:
    """Create a group (and missing parents) and return it."""
    check_format(zarr_format)
    s = _store(store, "w" if overwrite else "a", storage_options)
    p = normalize_path(path)
    meta = LAYOUTS[zarr_format].new_group(dict(attributes or {}))
    return Group(s, p, create_node(s, p, meta, overwrite=overwrite), read_only=False)


def _existing(
    store: Store, path: str, mode: str, zarr_format: Any, use_consolidated: bool | None
) -> tuple[Any, Any]:
    """The node at ``path`` (with consolidated entries) for modes that open existing nodes;
    ``(None, None)`` where mode ``a`` finds nothing."""
    try:
        return read_node_consolidated(
            store, path, zarr_format=zarr_format, use_consolidated=use_consolidated
        )
    except NodeNotFoundError:
        if mode != "a":
            raise
        return None, None


def open(
    store: StoreLike = None,
    *,
    mode: str = "r",
    path: str | None = None,
    zarr_format: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    use_consolidated: bool | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Open the array or group at ``path``. With ``shape=`` in a writing mode, create an
    array when none exists (as zarr-python does); otherwise a missing node becomes a group
    in modes ``a``, ``w`` and ``w-``. Consolidated metadata is used when present unless
    ``use_consolidated=False``."""
    if "shape" in kwargs:
        return open_array(
            store,
            mode=mode,
            path=path,
            zarr_format=zarr_format,
            storage_options=storage_options,
            **kwargs,
        )
    s = _store(store, mode, storage_options)
    p = normalize_path(path)
    if mode in ("r", "r+", "a"):
        meta, entries = _existing(s, p, mode, zarr_format, use_consolidated)
        if meta is not None:
            return node_for(s, p, meta, read_only=mode == "r", consolidated=entries)
    return open_group(s, mode=mode, path=p, zarr_format=zarr_format, **kwargs)


def open_array(
    store: StoreLike = None,
    *,
    mode: str = "r",
    path: str | None = None,
    zarr_format: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Array:
    """Open an existing array, or create one (modes ``a`` with ``shape=``, ``w``, ``w-``)."""
    s = _store(store, mode, storage_options)
    p = normalize_path(path)
    if mode in ("r", "r+", "a"):
        meta = (
            read_node(s, p, zarr_format=zarr_format)
            if mode != "a" or "shape" not in kwargs
            else find_node(s, p, zarr_format=zarr_format)
        )
        if meta is not None:
            if meta.node_type != "array":
                raise NodeTypeError(f"the node at {p or '/'!r} is a group, not an array")
            return Array(s, p, meta, read_only=mode == "r")
    return create_array(s, name=p, zarr_format=zarr_format or 3, overwrite=mode == "w", **kwargs)


def open_group(
    store: StoreLike = None,
    *,
    mode: str = "r",
    path: str | None = None,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    use_consolidated: bool | None = None,
) -> Group:
    """Open an existing group, or create one (modes ``a``, ``w``, ``w-``)."""
    s = _store(store, mode, storage_options)
    p = normalize_path(path)
    if mode in ("r", "r+", "a"):
        meta, entries = _existing(s, p, mode, zarr_format, use_consolidated)
        if meta is not None:
            if meta.node_type != "group":
                raise NodeTypeError(f"the node at {p or '/'!r} is an array, not a group")
            return Group(s, p, meta, read_only=mode == "r", consolidated=entries)
    return create_group(
        s, path=p, attributes=attributes, zarr_format=zarr_format or 3, overwrite=mode == "w"
    )


def open_consolidated(store: StoreLike = None, **kwargs: Any) -> Group:
    """Open a group through its consolidated metadata (an error if it has none)."""
    return open_group(store, use_consolidated=True, **kwargs)


def consolidate_metadata(
    store: StoreLike, path: str | None = None, *, storage_options: Mapping[str, Any] | None = None
) -> Group:
    """Gather the metadata of every node below the group at ``path`` into the group's own
    documents (``.zmetadata`` for v2, inline ``consolidated_metadata`` for v3), so opening
    the hierarchy later costs one read. Returns the group, opened consolidated."""
    s = _store(store, "r+", storage_options)
    p = normalize_path(path)
    group = open_group(s, mode="r+", path=p, use_consolidated=False)
    entries = dict(list_members(s, p, group.metadata, max_depth=None))
    for rel, meta in entries.items():
        if isinstance(meta, Unreadable):  # consolidating would hide it from every reader
            raise type(meta.error)(
                f"cannot consolidate the metadata of {p or '/'!r}: member {rel!r} cannot be "
                f"opened: {meta.error}"
            )
    meta = group.metadata
    if meta.zarr_format == 2:
        key = f"{p}/{consolidated.V2_KEY}" if p else consolidated.V2_KEY
        s.set(key, dump_json(consolidated.to_v2(meta, entries)))  # a whole new snapshot
    elif meta.zarr_format == 3:
        inline = consolidated.to_v3(entries)
        # Into the group's document as it is now: attributes set meanwhile are kept.
        update_node(s, p, meta, lambda now: replace(
            now, extra={**now.extra, "consolidated_metadata": inline}))
    else:
        raise ArgumentError(f"zarr_format {meta.zarr_format!r} has no consolidated metadata")
    return open_group(s, mode="r", path=p)
