"""The functions users start from: open, open_array, open_group, create_array, create_group.

They mirror zarr-python 3 (names, keywords and modes ``r``, ``r+``, ``a``, ``w``, ``w-``)
so that switching is a change of import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrx.abc.store import Store
from zarrx.array import Array
from zarrx.creation import array_metadata
from zarrx.errors import ArgumentError, NodeExistsError, NodeNotFoundError, NodeTypeError
from zarrx.group import Group, node_for
from zarrx.metadata.io import (
    LAYOUTS,
    check_format,
    find_node,
    node_prefix,
    normalize_path,
    read_node,
    write_node,
)
from zarrx.stores.url import make_store

MODES = ("r", "r+", "a", "w", "w-")
StoreLike = Any


def _store(store: StoreLike, mode: str, storage_options: Mapping[str, Any] | None) -> Store:
    if mode not in MODES:
        raise ArgumentError(f"mode must be one of {MODES}, got {mode!r}")
    return make_store(store, mode=mode, storage_options=dict(storage_options or {}) or None)


def erase_node(store: Store, path: str) -> None:
    """Remove the node at ``path`` and everything below it (validated keys only)."""
    store.erase_prefix(node_prefix(path))


def _prepare_path(store: Store, path: str, overwrite: bool, zarr_format: Any) -> None:
    """Make room for a new node at ``path``: check or clear it, and create parent groups."""
    existing = find_node(store, path)
    if existing is not None:
        if not overwrite:
            raise NodeExistsError(
                f"a {existing.node_type} already exists at {path or '/'!r} in {store!r}; "
                "pass overwrite=True (or mode='w') to replace it"
            )
        erase_node(store, path)
    parts = path.split("/") if path else []
    for i in range(len(parts)):
        parent = "/".join(parts[:i])
        meta = find_node(store, parent)
        if meta is None:
            write_node(store, parent, LAYOUTS[zarr_format].new_group({}))
        elif meta.node_type == "array":
            raise NodeTypeError(f"cannot create {path!r}: {parent or '/'!r} is an array")


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
        where=f"array {'/' + path!r}",
    )
    _prepare_path(s, path, overwrite, zarr_format)
    write_node(s, path, meta)
    return Array(s, path, meta)


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
    _prepare_path(s, p, overwrite, zarr_format)
    write_node(s, p, meta)
    return Group(s, p, meta, read_only=False)


def open(
    store: StoreLike = None,
    *,
    mode: str = "r",
    path: str | None = None,
    zarr_format: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Open the array or group at ``path``. With ``shape=`` in a writing mode, create an
    array when none exists (as zarr-python does); otherwise a missing node becomes a group
    in modes ``a``, ``w`` and ``w-``."""
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
        meta = (
            find_node(s, p, zarr_format=zarr_format) if mode == "a" else _require(s, p, zarr_format)
        )
        if meta is not None:
            return node_for(s, p, meta, read_only=mode == "r")
    return open_group(s, mode=mode, path=p, zarr_format=zarr_format, **kwargs)


def _require(store: Store, path: str, zarr_format: Any) -> Any:
    return read_node(store, path, zarr_format=zarr_format)


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
    if mode in ("r", "r+") or (mode == "a" and "shape" not in kwargs):
        meta = _require(s, p, zarr_format)
        if meta.node_type != "array":
            raise NodeTypeError(f"the node at {p or '/'!r} is a group, not an array")
        return Array(s, p, meta, read_only=mode == "r")
    if mode == "a":
        meta = find_node(s, p, zarr_format=zarr_format)
        if meta is not None:
            if meta.node_type != "array":
                raise NodeTypeError(f"the node at {p or '/'!r} is a group, not an array")
            return Array(s, p, meta, read_only=False)
    return create_array(s, name=p, zarr_format=zarr_format or 3, overwrite=mode == "w", **kwargs)


def open_group(
    store: StoreLike = None,
    *,
    mode: str = "r",
    path: str | None = None,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: Any = None,
    storage_options: Mapping[str, Any] | None = None,
) -> Group:
    """Open an existing group, or create one (modes ``a``, ``w``, ``w-``)."""
    s = _store(store, mode, storage_options)
    p = normalize_path(path)
    if mode in ("r", "r+", "a"):
        meta = (
            find_node(s, p, zarr_format=zarr_format) if mode == "a" else _require(s, p, zarr_format)
        )
        if meta is not None:
            if meta.node_type != "group":
                raise NodeTypeError(f"the node at {p or '/'!r} is an array, not a group")
            return Group(s, p, meta, read_only=mode == "r")
        if mode != "a":
            raise NodeNotFoundError(f"no group at {p or '/'!r} in {s!r}")
    return create_group(
        s, path=p, attributes=attributes, zarr_format=zarr_format or 3, overwrite=mode == "w"
    )
