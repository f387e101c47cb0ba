"""What a rechunk writes: the target array's metadata, from the source's and the options.

Every option left unset (``None``) keeps the source's setting; ``"keep"`` says the same
explicitly. The source's description is taken apart into a format-neutral recipe
(:func:`zarrx.zom.mapping.recipe`), the options replace its parts, and the recipe is made
into keywords of the target format, then into validated metadata — so whatever the target
format cannot hold is refused here, before anything is written.

- ``chunks``: the chunk shape (the inner chunks when sharded); an int is every axis, ``-1``
  (or ``None`` on an axis) the whole axis. A sharded source keeps its shard shape unless
  ``shards=`` says otherwise; ``shards=False`` writes no shards.
- ``dtype``: values are cast with NumPy's ``"same_kind"`` rule (``np.can_cast``): int16 →
  int64, float64 → float32, int → float are allowed; float → int, complex → float are not.
  Variable-length strings and bytes keep their kind.
- Dimension names go to a v2 or 3.0-draft target as the ``_ARRAY_DIMENSIONS`` attribute
  (xarray's convention), as those formats have no field for them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrx.creation import array_metadata
from zarrx.errors import ArgumentError, MetadataError, RechunkError
from zarrx.metadata import v3_draft
from zarrx.zom.mapping import draft_keywords, recipe, v2_keywords, v3_keywords

FORMATS: dict[Any, Any] = {2: 2, 3: 3, "2": 2, "3": 3, "3-draft": v3_draft.FORMAT,
                           v3_draft.FORMAT: v3_draft.FORMAT}


def _kept(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value == "keep")


def check_format(zarr_format: Any, default: Any) -> Any:
    if zarr_format is None:
        return default
    if isinstance(zarr_format, bool) or zarr_format not in FORMATS:
        raise ArgumentError(f"zarr_format must be 2, 3 or '3-draft', got {zarr_format!r}")
    return FORMATS[zarr_format]


def check_chunks(value: Any, shape: tuple[int, ...], field: str, where: str) -> tuple[int, ...]:
    """Explicit chunks (or shards) for ``shape``: an int for every axis or one per axis;
    ``-1`` or ``None`` on an axis is the whole axis."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        value = (int(value),) * len(shape)
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ArgumentError(f"{where}: {field} must be an int or a sequence of ints, got {value!r}")
    if len(value) != len(shape):
        raise ArgumentError(
            f"{where}: {field} {tuple(value)} has {len(value)} axes, the array has "
            f"{len(shape)} (shape {shape})"
        )
    out = []
    for c, n in zip(value, shape):
        if c is None or c == -1:
            c = max(n, 1)
        if isinstance(c, bool) or not isinstance(c, int | np.integer) or c < 1:
            raise ArgumentError(
                f"{where}: {field} must be positive integers (or -1), got {tuple(value)}"
            )
        out.append(int(c))
    return tuple(out)


def check_dtype(source_dtype: Any, dtype: Any, where: str) -> Any:
    """The target's dtype: the source's, or ``dtype`` when NumPy casts to it under the
    ``"same_kind"`` rule."""
    if dtype is None:
        return None
    if isinstance(source_dtype, str):  # variable-length "str" / "bytes"
        text = dtype in (str, "str") or getattr(dtype, "kind", "") == "T"
        if (text and source_dtype == "str") or (dtype in (bytes, "bytes")
                                                and source_dtype == "bytes"):
            return None
        raise RechunkError(
            f"{where}: cannot cast variable-length {source_dtype} elements to {dtype!r}"
        )
    try:
        new = np.dtype(dtype)
    except TypeError:
        raise ArgumentError(f"{where}: dtype {dtype!r} is not a data type") from None
    src = np.dtype(source_dtype)
    if not np.can_cast(src, new, casting="same_kind"):
        raise RechunkError(
            f"{where}: cannot rechunk {src} into {new}: NumPy's 'same_kind' casting rule "
            "refuses it (e.g. float to int, complex to float); cast the source first"
        )
    return new


@dataclasses.dataclass(frozen=True)
class Options:
    """The options of :func:`zarrx.rechunk` that shape the target (``None``: keep)."""

    chunks: Any = None
    shards: Any = None
    compressors: Any = None
    filters: Any = None
    serializer: Any = None
    zarr_format: Any = None
    dtype: Any = None
    fill_value: Any = None
    attributes: Any = None


def _codecs(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        return tuple(value)
    return (value,)


def target_keywords(source_meta: Any, opts: Options, where: str) -> tuple[Any, dict[str, Any]]:
    """``(zarr_format, create_array keywords)`` of the target of rechunking the array
    ``source_meta`` with ``opts``; validated (a :class:`MetadataError` or
    :class:`ArgumentError` naming ``where`` when the target cannot be made)."""
    fmt = check_format(opts.zarr_format, source_meta.zarr_format)
    r = recipe(source_meta)
    shape = tuple(r.shape)
    changes: dict[str, Any] = {}
    if not _kept(opts.chunks):
        changes["chunks"] = check_chunks(opts.chunks, shape, "chunks", where)
    if opts.shards is False:
        changes["shards"] = None
    elif not _kept(opts.shards):
        shards = opts.shards.get("shape") if isinstance(opts.shards, dict) else opts.shards
        changes["shards"] = check_chunks(shards, shape, "shards", where)
        if isinstance(opts.shards, dict) and "index_location" in opts.shards:
            changes["index_location"] = opts.shards["index_location"]
    if not shape and (changes.get("shards") or r.shards):
        changes["shards"] = None  # a 0-d array has one chunk: nothing to shard
    if not _kept(opts.compressors):
        changes["bytes_bytes"] = _codecs(opts.compressors)
    if not _kept(opts.filters):
        changes["array_array"] = _codecs(opts.filters)
    if not _kept(opts.serializer):
        changes["serializer"] = opts.serializer
    new_dtype = check_dtype(r.dtype, opts.dtype, where)
    if new_dtype is not None:
        changes["dtype"] = new_dtype
        changes["endian"] = None if r.endian is None else (
            "big" if new_dtype.byteorder == ">" else "little")
        changes["fill_value"] = _cast_fill(r.fill_value, new_dtype, where)
    if opts.fill_value is not None:
        changes["fill_value"] = opts.fill_value
    if opts.attributes is not None:
        changes["attributes"] = dict(opts.attributes)
    if changes and r.unflattened is not None:
        touched = {"chunks", "shards", "bytes_bytes", "array_array", "serializer"} & set(changes)
        if touched:
            raise ArgumentError(
                f"{where}: the source combines sharding with other codecs; give chunks, "
                "shards, filters, serializer and compressors all explicitly to change them"
            )
    if r.shards is not None and "chunks" in changes and "shards" not in changes:
        chunks = changes["chunks"]
        if any(s % c for s, c in zip(r.shards, chunks)):
            raise MetadataError(
                f"{where}: chunks {chunks} do not divide the source's shards {r.shards}; "
                "give shards= too (or shards=False)"
            )
    r = dataclasses.replace(r, **changes)
    if fmt != 3 and r.dimension_names is not None:
        attributes = dict(r.attributes)
        attributes.setdefault("_ARRAY_DIMENSIONS", list(r.dimension_names))
        r = dataclasses.replace(r, dimension_names=None, attributes=attributes)
    if fmt == 3:
        kw = v3_keywords(r)
    elif fmt == 2:
        kw = v2_keywords(r, where=where)
    else:
        kw = draft_keywords(r, where=where)
    try:
        array_metadata(zarr_format=fmt, where=where, **kw)
    except MetadataError as e:
        message = str(e)
        raise type(e)(message if message.startswith(where) else f"{where}: {message}") from None
    return fmt, kw


def _cast_fill(fill: Any, dtype: np.dtype, where: str) -> Any:
    if fill is None:
        return None
    with np.errstate(all="ignore"):
        value = np.asarray(fill).astype(dtype)
    if value.dtype.kind in "iu" and np.asarray(fill).dtype.kind in "iu" and value != fill:
        raise RechunkError(f"{where}: the fill value {fill!r} does not fit in {dtype}")
    return value[()]


def intermediate_keywords(target_meta: Any, chunks: tuple[int, ...]) -> dict[str, Any]:
    """Keywords of the scratch v3 array a two-stage plan writes: the target's data type and
    fill value, the plan's chunks, no shards, the fastest codec (blosc lz4 at level 1,
    shuffled by the item size when it has one: written once and read once)."""
    r = recipe(target_meta)
    kw = v3_keywords(r)
    dtype = kw.get("dtype")
    if isinstance(dtype, np.dtype) and dtype.byteorder == ">":  # (scratch: native order)
        kw["dtype"] = dtype = dtype.newbyteorder("<")
    fixed = isinstance(dtype, np.dtype) and not dtype.hasobject and dtype.kind != "T"
    size = dtype.itemsize if fixed and dtype.itemsize <= 255 else 1  # type: ignore[union-attr]
    blosc = {"cname": "lz4", "clevel": 1, "shuffle": "shuffle" if size > 1 else "noshuffle",
             "typesize": size, "blocksize": 0}
    kw.update(
        chunks=chunks, shards=None, filters=None, serializer="auto",
        compressors=[{"name": "blosc", "configuration": blosc}],
        attributes={}, dimension_names=None, chunk_key_encoding=None,
    )
    return kw
