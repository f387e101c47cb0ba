"""Creating arrays: :func:`create_array` is the one place the keywords of array creation
are listed (with zarr-python 3's names and defaults); every other way to make an array —
``zarrx.zeros``, ``Group.create_array``, ``zarrx.copy`` … — ends here, and writes the node
through :func:`zarrx.metadata.nodes.create_node`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.arrays import Array
from zarrx.config import array_settings
from zarrx.creation import array_metadata
from zarrx.errors import ArgumentError
from zarrx.metadata.io import check_format, normalize_path
from zarrx.metadata.nodes import create_node, erase_node, open_store


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
    config: Any = None,
) -> Array:
    """Create an array (and missing parent groups) and return it, open for writing.

    Keywords and defaults are zarr-python 3's. With ``data`` (a NumPy array, any
    array-like, or a zarrx Array, which is copied chunk by chunk), the shape and dtype
    come from it and, unless ``write_data=False``, it is written; if that write fails,
    the new array is erased again. ``config`` holds zarr-python's per-array settings
    (``{"write_empty_chunks": True}``) for the Array returned."""
    zarr_format = check_format(3 if zarr_format is None else zarr_format)
    path = normalize_path(name)
    where = f"array {'/' + path!r}"
    if data is not None:
        data, shape, dtype = _data_shape_dtype(data, shape, dtype, where)
    elif shape is None:
        raise ArgumentError(f"{where}: pass shape (and dtype), or data")
    settings = array_settings(config, where=where)  # (refused before anything is written)
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
    meta = create_node(s, path, meta, overwrite=overwrite)
    array = Array(s, path, meta, config=settings)
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
