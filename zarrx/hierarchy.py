"""Creating nodes: make room at a path, write parent groups, write the node's documents.

:func:`create_array` is the one place the keywords of array creation are listed (with
zarr-python 3's names and defaults); every other way to make an array — ``zarrx.zeros``,
``Group.create_array``, ``zarrx.copy`` … — ends here. Making room is fenced: an existing
node is refused unless ``overwrite``, and then it is erased through the validated keys of
that node only (:func:`erase_node`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.abc.store import Store
from zarrx.arrays import Array
from zarrx.creation import array_metadata
from zarrx.errors import ArgumentError, NodeExistsError, NodeTypeError
from zarrx.metadata.io import (
    LAYOUTS,
    check_format,
    creates_parent_groups,
    erase_tree,
    find_node,
    normalize_path,
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


def prepare_path(
    store: Store, path: str, overwrite: bool, zarr_format: Any, group: bool = False
) -> None:
    """Make room for a new node at ``path``: check or clear it, and create parent groups."""
    existing = find_node(store, path)
    if group and not overwrite and getattr(existing, "implicit", False):
        existing = None  # an implicit group (draft) becomes explicit; its members stay
    if existing is not None:
        if not overwrite:
            raise NodeExistsError(
                f"a {existing.node_type} already exists at {path or '/'!r} in {store!r}; "
                "pass overwrite=True (or mode='w') to replace it"
            )
        erase_node(store, path, existing)
    parts = path.split("/") if path else []
    for i in range(len(parts)):
        parent = "/".join(parts[:i])
        meta = find_node(store, parent)
        if meta is None:
            if creates_parent_groups(zarr_format):
                write_node(store, parent, LAYOUTS[zarr_format].new_group({}))
        elif meta.node_type == "array":
            raise NodeTypeError(f"cannot create {path!r}: {parent or '/'!r} is an array")


def write_group(
    store: Store, path: str, *, attributes: Mapping[str, Any] | None, zarr_format: Any,
    overwrite: bool,
) -> Any:
    """Write a new group at ``path`` (and missing parents); returns its metadata."""
    check_format(zarr_format)
    meta = LAYOUTS[zarr_format].new_group(dict(attributes or {}))
    prepare_path(store, path, overwrite, zarr_format, group=True)
    meta = prepare_store(store, path, meta)
    write_node(store, path, meta)
    return meta


def _data_shape_dtype(data: Any, shape: Any, dtype: Any, where: str) -> tuple[Any, Any, Any]:
    """``data`` as something with ``shape``/``dtype`` (a zarrx Array stays one, to be
    copied chunk by chunk), and the shape and dtype it gives."""
    if shape is not None:
        raise ArgumentError(f"{where}: pass shape or data, not both (data gives the shape)")
    if dtype is not None:
        raise ArgumentError(f"{where}: pass dtype or data, not both (data gives the dtype)")
    if not isinstance(data, Array | np.ndarray):
        data = np.asarray(data)
    return data, tuple(data.shape), data.dtype


def create_array(
    store: Any,
    name: str | None = None,
    *,
    shape: Any = None,
    dtype: Any = None,
    data: Any = None,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = "auto",
    compressors: Any = "auto",
    serializer: Any = "auto",
    fill_value: Any = None,
    order: str | None = None,
    zarr_format: Any = 3,
    attributes: Mapping[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    overwrite: bool = False,
    write_data: bool = True,
    extensions: Any = None,
) -> Array:
    """Create an array (and missing parent groups) and return it, open for writing.

    Keywords and defaults are zarr-python 3's. With ``data`` (a NumPy array, any
    array-like, or a zarrx Array, which is copied chunk by chunk), the shape and dtype
    come from it and, unless ``write_data=False``, it is written; if that write fails,
    the new array is erased again."""
    zarr_format = check_format(3 if zarr_format is None else zarr_format)
    path = normalize_path(name)
    where = f"array {'/' + path!r}"
    if data is not None:
        data, shape, dtype = _data_shape_dtype(data, shape, dtype, where)
    elif shape is None:
        raise ArgumentError(f"{where}: pass shape (and dtype), or data")
    s = open_store(store, "w" if overwrite else "a", storage_options)
    meta = array_metadata(
        zarr_format=zarr_format,
        shape=shape,
        dtype="float64" if dtype is None else dtype,
        chunks=chunks,
        shards=shards,
        compressors=compressors,
        filters=None if isinstance(filters, str) and filters == "auto" else filters,
        serializer=serializer,
        fill_value=fill_value,
        order="C" if order is None else order,
        attributes=attributes,
        dimension_names=dimension_names,
        chunk_key_encoding=chunk_key_encoding,
        extensions=extensions,
        where=where,
    )
    prepare_path(s, path, overwrite, zarr_format)
    meta = prepare_store(s, path, meta)
    write_node(s, path, meta)
    array = Array(s, path, meta)
    if data is not None and write_data:
        try:
            _write_data(array, data)
        except BaseException:
            erase_node(s, path, meta)  # nothing half-written
            raise
    return array


def _write_data(array: Array, data: Any) -> None:
    if isinstance(data, Array):
        from zarrx import config
        from zarrx.transfer import copy_data

        copy_data(data, array, threads=config.get("threads"))
    else:
        array[...] = data
