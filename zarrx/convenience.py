"""zarr-python's array-making shortcuts: ``zeros``, ``ones``, ``empty``, ``full``, their
``*_like`` forms, ``array``, ``from_array`` and ``create`` — each a thin layer over
:func:`zarrx.hierarchy.create_array`, with zarr-python 3's keywords and defaults.

``create`` (and everything built on it) takes zarr-python's older keywords as well —
``compressor``, ``codecs``, ``chunk_shape``, ``dimension_separator``, ``path``, ``mode``,
``zarr_version`` — and translates them here, once (:func:`create_keywords`).

>>> import zarrx
>>> z = zarrx.zeros((4, 6), chunks=(2, 3), dtype="int16")
>>> z.fill_value, z.nchunks, int(z[...].sum())
(np.int16(0), 4, 0)
>>> zarrx.full_like(z, fill_value=7)[1, 2]
np.int16(7)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
from zarrx.arrays import Array
from zarrx.codecs.pipeline import coerce_codec
from zarrx.config import array_settings
from zarrx.errors import ArgumentError
from zarrx.hierarchy import create_array

#: zarr-python keywords that have no counterpart in zarrx (a clear error when set).
UNSUPPORTED = {
    "synchronizer": "zarrx needs no synchronizer: read-modify-writes are atomic",
    "chunk_store": "zarrx keeps chunks in the array's own store",
    "object_codec": "object arrays are not supported; use dtype=str or bytes",
    "meta_array": "zarrx returns NumPy arrays",
}
#: zarr-python keywords that are hints without effect in zarrx (accepted, ignored).
IGNORED = ("cache_metadata", "cache_attrs")


def zarr_format_of(zarr_format: Any, zarr_version: Any) -> Any:
    if zarr_version is not None and zarr_format is not None and zarr_version != zarr_format:
        raise ArgumentError(
            f"zarr_format {zarr_format!r} and zarr_version {zarr_version!r} differ; pass one"
        )
    return zarr_format if zarr_format is not None else zarr_version


def _split_codecs(codecs: Any, where: str) -> dict[str, Any]:
    """A full v3 codec list as ``filters`` / ``serializer`` / ``compressors``."""
    parsed = [coerce_codec(c, where=where) for c in codecs]
    serializers = [c for c in parsed if isinstance(c, ArrayBytesCodec)]
    if len(serializers) != 1:
        raise ArgumentError(f"{where}: codecs must hold exactly one array→bytes codec")
    return {
        "filters": [c for c in parsed if isinstance(c, ArrayArrayCodec)] or None,
        "serializer": serializers[0],
        "compressors": [c for c in parsed if isinstance(c, BytesBytesCodec)],
    }


def create_keywords(**kw: Any) -> dict[str, Any]:
    """zarr-python's ``create`` keywords (those given) as :func:`create_array` keywords."""
    for name, why in UNSUPPORTED.items():
        value = kw.pop(name, None)
        if value is not None:
            raise ArgumentError(f"{name}={value!r} is not supported: {why}")
    write_empty_chunks = kw.pop("write_empty_chunks", None)
    if write_empty_chunks is not None:  # zarr-python's older spelling of config=
        kw["config"] = array_settings(kw.get("config"), where="create",
                                      write_empty_chunks=write_empty_chunks)
    for name in IGNORED:
        kw.pop(name, None)
    if kw.pop("read_only", None):
        raise ArgumentError("read_only=True cannot create an array; open one with mode='r'")
    out: dict[str, Any] = {}
    fmt = zarr_format_of(kw.pop("zarr_format", None), kw.pop("zarr_version", None))
    if fmt is not None:
        out["zarr_format"] = fmt
    path, name = kw.pop("path", None), kw.pop("name", None)
    if path is not None and name is not None and path != name:
        raise ArgumentError(f"path {path!r} and name {name!r} differ; pass one")
    if path is not None or name is not None:
        out["name"] = path if path is not None else name
    mode = kw.pop("mode", None)
    if kw.pop("overwrite", False) or mode == "w":
        out["overwrite"] = True
    chunks, chunk_shape = kw.pop("chunks", None), kw.pop("chunk_shape", None)
    chunks = chunks if chunks is not None else chunk_shape
    if chunks is not None:
        out["chunks"] = "auto" if chunks is True else chunks
    where = f"array {'/' + str(out.get('name') or '')!r}"
    codecs = kw.pop("codecs", None)
    compressor = kw.pop("compressor", "auto")
    if codecs is not None:
        if any(k in kw for k in ("filters", "serializer", "compressors")) or (
            compressor != "auto"
        ):
            raise ArgumentError(f"{where}: pass codecs, or filters/serializer/compressors")
        out.update(_split_codecs(codecs, where))
    elif compressor != "auto":
        if "compressors" in kw:
            raise ArgumentError(f"{where}: pass compressor or compressors, not both")
        out["compressors"] = compressor
    separator = kw.pop("dimension_separator", None)
    if separator is not None:
        if kw.get("chunk_key_encoding") is not None:
            raise ArgumentError(f"{where}: pass dimension_separator or chunk_key_encoding")
        kw["chunk_key_encoding"] = ("v2" if fmt == 2 else "default", separator)
    encoding = kw.get("chunk_key_encoding")
    if isinstance(encoding, tuple):  # zarr-python's ("default", "/") form
        name, separator = encoding
        kw["chunk_key_encoding"] = {"name": name, "configuration": {"separator": separator}}
    out.update(kw)
    return out


def create(shape: Any, **kwargs: Any) -> Array:
    """Create an array (zarr-python's ``create``: ``store=None`` is a new MemoryStore)."""
    kw = create_keywords(shape=shape, **kwargs)
    return create_array(kw.pop("store", None), **kw)


def empty(shape: Any, **kwargs: Any) -> Array:
    """An array with nothing written: it reads as its fill value."""
    return create(shape=shape, **kwargs)


def zeros(shape: Any, **kwargs: Any) -> Array:
    """An array reading as zero (its fill value) until written."""
    return create(shape=shape, fill_value=0, **kwargs)


def ones(shape: Any, **kwargs: Any) -> Array:
    """An array reading as one (its fill value) until written."""
    return create(shape=shape, fill_value=1, **kwargs)


def full(shape: Any, fill_value: Any, **kwargs: Any) -> Array:
    """An array reading as ``fill_value`` until written."""
    return create(shape=shape, fill_value=fill_value, **kwargs)


def like_keywords(a: Any, *, with_fill: bool = False) -> dict[str, Any]:
    """The creation keywords an array ``a`` implies: its shape, dtype and chunks, and for
    a zarrx Array also its format and codecs (and, ``with_fill``, its fill value)."""
    out: dict[str, Any] = {}
    if isinstance(a, Array):
        from zarrx.zom.mapping import keywords

        kw = keywords(a.metadata, a.zarr_format, where=f"array {a.name!r}")
        for key in ("attributes", "dimension_names", "chunk_key_encoding", "fill_value"):
            kw.pop(key, None)
        out.update(kw, zarr_format=a.zarr_format)
        if with_fill:
            out["fill_value"] = a.fill_value
        return out
    shape = getattr(a, "shape", None)
    if not isinstance(shape, tuple):
        a = np.asanyarray(a)
        shape = a.shape
    out["shape"] = shape
    chunks = getattr(a, "chunks", None)
    if isinstance(chunks, tuple) and len(chunks) == len(shape):
        out["chunks"] = chunks
    if hasattr(a, "dtype"):
        out["dtype"] = a.dtype
    return out


def _like(a: Any, kwargs: Mapping[str, Any], with_fill: bool = False) -> dict[str, Any]:
    like = like_keywords(a, with_fill=with_fill)
    if any(k in kwargs for k in ("compressor", "codecs")):  # the caller's codecs win
        for key in ("filters", "serializer", "compressors", "shards"):
            like.pop(key, None)
    return {**like, **kwargs}


def empty_like(a: Any, **kwargs: Any) -> Array:
    return empty(**_like(a, kwargs, with_fill=True))


def zeros_like(a: Any, **kwargs: Any) -> Array:
    return zeros(**_like(a, kwargs))


def ones_like(a: Any, **kwargs: Any) -> Array:
    return ones(**_like(a, kwargs))


def full_like(a: Any, **kwargs: Any) -> Array:
    kw = _like(a, kwargs, with_fill=True)
    if "fill_value" not in kw:
        raise ArgumentError("full_like needs fill_value= when the model is not a zarr array")
    return full(**kw)


def array(data: Any, **kwargs: Any) -> Array:
    """A new array holding ``data`` (zarr-python's ``array``: keywords as ``create``);
    a zarrx Array is copied chunk by chunk."""
    if isinstance(data, Array):
        store = kwargs.pop("store", None)
        return from_array(store, data=data, **kwargs)
    if not (hasattr(data, "shape") and hasattr(data, "dtype")):
        data = np.asanyarray(data)
    kwargs.setdefault("dtype", data.dtype)
    if kwargs.get("chunks") is None:
        chunks = getattr(data, "chunks", None)
        kwargs["chunks"] = chunks if isinstance(chunks, tuple) else None
    z = create(shape=tuple(data.shape), **kwargs)
    z[...] = data
    return z


def from_array(
    store: Any,
    *,
    data: Any,
    write_data: bool = True,
    name: str | None = None,
    chunks: Any = "keep",
    shards: Any = "keep",
    filters: Any = "keep",
    compressors: Any = "keep",
    serializer: Any = "keep",
    fill_value: Any = None,
    order: str | None = None,
    zarr_format: Any = None,
    attributes: Mapping[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    overwrite: bool = False,
    config: Any = None,
) -> Array:
    """A new array in ``store`` holding ``data`` (a zarrx Array — copied chunk by chunk,
    its chunks, shards, codecs, fill value, attributes and dimension names kept where a
    keyword says ``"keep"`` or is left out — or any array-like)."""
    given = {
        "chunks": chunks, "shards": shards, "filters": filters, "compressors": compressors,
        "serializer": serializer,
    }
    kw: dict[str, Any] = {}
    if isinstance(data, Array):
        fmt = data.zarr_format if zarr_format is None else zarr_format
        from zarrx.zom.mapping import keywords

        source = keywords(data.metadata, fmt, where=f"array {data.name!r}")
        for key in ("shape", "dtype"):
            source.pop(key, None)
        kw.update(source)
        for key, value in given.items():
            if not (isinstance(value, str) and value == "keep"):
                kw[key] = value
        zarr_format = fmt
    else:
        for key, value in given.items():
            if not (isinstance(value, str) and value == "keep"):
                kw[key] = value
            elif key == "chunks":
                kw[key] = "auto"
    for key, value in (("fill_value", fill_value), ("order", order), ("attributes", attributes),
                       ("chunk_key_encoding", chunk_key_encoding),
                       ("dimension_names", dimension_names)):
        if value is not None:
            kw[key] = value
    return create_array(
        store, name=name, data=data, write_data=write_data,
        zarr_format=3 if zarr_format is None else zarr_format,
        storage_options=storage_options, overwrite=overwrite, config=config, **kw,
    )
