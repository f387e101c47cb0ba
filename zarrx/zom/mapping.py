"""Between zarrx's metadata objects, ZOM nodes and ``create_array`` keywords, and between
the v2 and v3 models.

Every array is first read into a :class:`Recipe`: what any format needs to know to store
it (data type and byte order, chunk and shard shapes, the codecs before, at and after
serialisation, the fill value, the chunk key separator). A target format then turns the
recipe into :func:`zarrx.create_array` keywords, or refuses with a
:class:`~zarrx.errors.MetadataError` naming the node and what the target cannot hold.

Mapping rules (v2 → v3): ``dtype`` → ``data_type`` (byte order → the ``bytes`` codec's
``endian``), ``order: "F"`` → a leading ``transpose``, numcodecs ``filters`` →
``numcodecs.<id>`` array→array codecs, ``compressor`` → a bytes→bytes codec, ``null``
fill → the data type's zero, ``dimension_separator`` → the ``default`` chunk key encoding
with ``/`` (``chunk_key_encoding="v2"`` keeps the v2 keys), and xarray's
``_ARRAY_DIMENSIONS`` attribute → ``dimension_names``. v3 → v2 is the reverse (the
``default`` encoding becomes v2's conventional ``.`` separator, the ``v2`` encoding keeps
its own, ``dimension_names`` go to ``_ARRAY_DIMENSIONS``; bytes→bytes codecs before the
last become numcodecs filters after the array filters, as zarr-python writes numcodecs'
``shuffle``); v2 cannot hold sharding, transposes other than a full reversal, codecs
without a numcodecs form, unnamed dimensions, or v3 extension keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from zarrx import registry
from zarrx.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
from zarrx.data_types.core import endian_of
from zarrx.data_types.named import needs_naming
from zarrx.errors import MetadataError
from zarrx.metadata import v2, v3, v3_draft
from zarrx.zom.frozen import thaw
from zarrx.zom.model import ArraySpec, GroupSpec, display_path

DIMENSIONS_ATTRIBUTE = "_ARRAY_DIMENSIONS"  # xarray's convention for v2


# -- metadata objects → ZOM nodes ---------------------------------------------------------------

def node_spec(meta: Any) -> ArraySpec | GroupSpec:
    """The ZOM node of a parsed metadata object (a group without members). A draft node
    is its document as it is stored (``attributes["filters"]`` too): the draft model
    loses nothing."""
    fmt = meta.zarr_format
    if fmt == v3_draft.FORMAT:
        if meta.node_type == "group" and meta.implicit:
            return GroupSpec(zarr_format=fmt, implicit=True)
        doc = dict(meta.to_json())
        attributes = doc.pop("attributes", {})
        if meta.node_type == "group":
            return GroupSpec(attributes=attributes, properties=doc, zarr_format=fmt)
        return ArraySpec(properties=doc, attributes=attributes, zarr_format=fmt)
    doc = dict(meta.to_json())
    doc.pop("zarr_format", None)
    doc.pop("node_type", None)
    attributes = doc.pop("attributes", None)
    if fmt == 2:
        attributes = meta.attributes
    if meta.node_type == "group":
        doc.pop("consolidated_metadata", None)  # a flattening of the members, not structure
        return GroupSpec(attributes=attributes or {}, properties=doc, zarr_format=fmt)
    if fmt == 3:
        doc = seed_form(doc)
    return ArraySpec(properties=doc, attributes=attributes or {}, zarr_format=fmt)


def array_spec(*, zarr_format: Any = 3, **keywords: Any) -> ArraySpec:
    """The spec of the array :func:`zarrx.create_array` would make with these keywords."""
    from zarrx.creation import array_metadata

    meta = array_metadata(zarr_format=zarr_format, **keywords)
    return node_spec(meta)  # type: ignore[return-value]


def _with_configuration(value: Any) -> Any:
    if not isinstance(value, Mapping) or "name" not in value:
        return value
    out = dict(value)
    config = out.get("configuration")
    if config is None:
        config = {}
    if isinstance(config, Mapping):
        config = dict(config)
        for key in ("codecs", "index_codecs"):
            if isinstance(config.get(key), list):
                config[key] = [_with_configuration(c) for c in config[key]]
    out["configuration"] = config
    return out


def seed_form(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A v3 array document with every named configuration spelled out in full
    (``{"name": "bytes"}`` → ``{"name": "bytes", "configuration": {}}``), as seed 004's
    schema requires and the v3 spec allows."""
    out = dict(doc)
    for key in ("chunk_grid", "chunk_key_encoding"):
        if key in out:
            out[key] = _with_configuration(out[key])
    for key in ("codecs", "storage_transformers"):
        if isinstance(out.get(key), list):
            out[key] = [_with_configuration(c) for c in out[key]]
    return out


def metadata_of(spec: ArraySpec | GroupSpec, path: str = "") -> Any:
    """The zarrx metadata object a node's spec describes, parsed and validated as a
    document of its format (:class:`MetadataError` naming the node otherwise)."""
    where = display_path(path)
    try:
        return _parse(spec, where)
    except MetadataError as e:
        message = str(e)
        raise type(e)(message if message.startswith(where) else f"{where}: {message}") from None


def _parse(spec: ArraySpec | GroupSpec, where: str) -> Any:
    if spec.zarr_format == v3_draft.FORMAT:
        if isinstance(spec, GroupSpec) and spec.implicit:
            return v3_draft.GroupMetadataDraft(implicit=True)
        doc: dict[str, Any] = {**thaw(spec.properties), "attributes": thaw(spec.attributes)}
        if isinstance(spec, GroupSpec):
            return v3_draft.GroupMetadataDraft.from_json(doc, where=where)
        return v3_draft.ArrayMetadataDraft.from_json(doc, where=where)
    if spec.zarr_format == 3:
        doc = {"zarr_format": 3, "node_type": spec.node_type,
                               "attributes": thaw(spec.attributes), **thaw(spec.properties)}
        return v3.node_from_json(doc, where=where)
    attributes = thaw(spec.attributes)
    if isinstance(spec, GroupSpec):
        return v2.GroupMetadataV2.from_json({"zarr_format": 2}, attributes, where=where)
    doc = {**thaw(spec.properties), "zarr_format": 2}
    if isinstance(doc.get("filters"), Mapping) and not doc["filters"]:
        doc["filters"] = None  # the seed's example spells "no filters" as {}
    return v2.ArrayMetadataV2.from_json(doc, attributes, where=where)


# -- the format-neutral description of an array -------------------------------------------------

@dataclass(frozen=True)
class Recipe:
    """What it takes to store an array in any format."""

    shape: tuple[int, ...]
    dtype: Any  # a native NumPy dtype, or "str" / "bytes" for variable-length elements
    endian: str | None  # stored byte order of fixed-size elements ("little"/"big"/None)
    chunks: tuple[int, ...]  # the (inner, when sharded) chunk shape
    shards: tuple[int, ...] | None
    array_array: tuple[Any, ...]  # codecs before serialisation (transposes included)
    serializer: Any  # the (inner) array→bytes codec
    bytes_bytes: tuple[Any, ...]
    fill_value: Any  # a NumPy scalar; None for a v2 null fill value
    attributes: dict[str, Any]
    dimension_names: tuple[str | None, ...] | None
    separator: str
    key_encoding: str  # "default" or "v2" (v3), "v2" (v2), "draft"
    index_location: str = "end"
    #: v3 only: the whole codec list when sharding is combined with other codecs.
    unflattened: tuple[Any, ...] | None = None

    @property
    def variable(self) -> bool:
        return isinstance(self.dtype, str)


def _bytes_codec(endian: str | None) -> Any:
    return registry.codecs.get("bytes")(endian=endian)


def _transpose_f(ndim: int) -> Any:
    return registry.codecs.get("transpose").from_config({"order": list(range(ndim))[::-1]})


def _split(codecs: Any) -> tuple[list[Any], Any, list[Any]]:
    aa = [c for c in codecs if isinstance(c, ArrayArrayCodec)]
    ab = next(c for c in codecs if isinstance(c, ArrayBytesCodec))
    bb = [c for c in codecs if isinstance(c, BytesBytesCodec)]
    return aa, ab, bb


def _variable_kind(serializer: Any) -> str | None:
    name = getattr(serializer, "name", "")
    return "str" if name == "vlen-utf8" else "bytes" if name == "vlen-bytes" else None


def recipe(meta: Any) -> Recipe:
    """The recipe of any zarrx array metadata object (v3, v2 or draft)."""
    ndim = len(meta.shape)
    if meta.zarr_format == 3:
        codecs = meta.codecs.codecs
        grid = tuple(meta.chunk_grid.chunk_shape)
        shards = None
        index_location = "end"
        unflattened = None
        inner = codecs
        chunks = grid
        if len(codecs) == 1 and codecs[0].name == "sharding_indexed":
            sharding = codecs[0]
            shards, chunks = grid, tuple(sharding.chunk_shape)
            inner, index_location = sharding.codecs.codecs, sharding.index_location
        elif any(c.name == "sharding_indexed" for c in codecs):
            unflattened = tuple(codecs)
        aa, ab, bb = _split(inner)
        kind = _variable_kind(ab)
        encoding = meta.chunk_key_encoding.to_dict()
        return Recipe(
            shape=tuple(meta.shape),
            dtype=kind or meta.dtype,
            endian=getattr(ab, "endian", None) if ab.name == "bytes" else None,
            chunks=chunks,
            shards=shards,
            array_array=tuple(aa),
            serializer=ab,
            bytes_bytes=tuple(bb),
            fill_value=meta.fill_value,
            attributes=dict(meta.attributes),
            dimension_names=meta.dimension_names,
            separator=(encoding.get("configuration") or {}).get("separator", "/"),
            key_encoding=encoding["name"],
            index_location=index_location,
            unflattened=unflattened,
        )
    if meta.zarr_format == 2:
        stored = meta.stored_dtype
        bytes_filters: list[Any] = []
        if stored.hasobject:
            vlen = next(f for f in meta.filters if f.name in v2.VLEN_IDS)
            dtype: Any = _variable_kind(vlen)
            serializer: Any = vlen
            aa = []
        else:
            dtype, serializer = v2.native(stored), _bytes_codec(endian_of(stored))
            aa, bytes_filters = v2.split_filters(meta.filters, where="v2 array")
        if meta.order == "F" and ndim > 1:
            aa.insert(0, _transpose_f(ndim))
        return Recipe(
            shape=tuple(meta.shape),
            dtype=dtype,
            endian=None if stored.hasobject else endian_of(stored),
            chunks=tuple(meta.chunks),
            shards=None,
            array_array=tuple(aa),
            serializer=serializer,
            bytes_bytes=(*bytes_filters,
                         *((meta.compressor,) if meta.compressor is not None else ())),
            fill_value=None if meta.fill_is_null else meta.fill_value,
            attributes=dict(meta.attributes),
            dimension_names=None,
            separator=meta.dimension_separator,
            key_encoding="v2",
        )
    # the 3.0 draft
    stored = meta.stored_dtype
    aa = list(meta.filters)
    if meta.chunk_memory_layout == "F" and ndim > 1:
        aa.insert(0, _transpose_f(ndim))
    chunks = tuple(max(c, 1) for c in meta.chunk_shape)
    shards = None
    if meta.chunks_per_shard is not None:
        shards = tuple(c * n for c, n in zip(chunks, meta.chunks_per_shard))
    return Recipe(
        shape=tuple(meta.shape),
        dtype=v3_draft.native(stored),
        endian=endian_of(stored),
        chunks=chunks,
        shards=shards,
        array_array=tuple(aa),
        serializer=_bytes_codec(endian_of(stored)),
        bytes_bytes=(meta.compressor,) if meta.compressor is not None else (),
        fill_value=meta.fill_value,
        attributes=dict(meta.attributes),
        dimension_names=None,
        separator=meta.separator,
        key_encoding="draft",
    )


# -- recipes → create_array keywords ------------------------------------------------------------

def v3_keywords(r: Recipe, *, chunk_key_encoding: Any = None) -> dict[str, Any]:
    """Keywords making ``r`` a Zarr v3 array."""
    kw: dict[str, Any] = {
        "shape": r.shape,
        "dtype": r.dtype,
        "fill_value": r.fill_value,
        "order": "C",
        "attributes": r.attributes,
        "dimension_names": r.dimension_names,
        "chunk_key_encoding": chunk_key_encoding
        or {"name": "default", "configuration": {"separator": r.separator}},
    }
    if r.unflattened is not None:
        aa, ab, bb = _split(r.unflattened)
        kw.update(chunks=r.chunks, shards=None, filters=aa or None, serializer=ab,
                  compressors=bb)
        return kw
    kw.update(
        chunks=r.chunks,
        shards=None if r.shards is None else {"shape": r.shards,
                                              "index_location": r.index_location},
        filters=list(r.array_array) or None,
        serializer=r.serializer,
        compressors=list(r.bytes_bytes),
    )
    return kw


def _order_filters_compressor(
    r: Recipe, where: str, target: str
) -> tuple[str, list[Any], list[Any]]:
    """``order``, ``filters`` and ``compressors`` of a v2 or draft array: a leading
    full-reversal transpose is ``order="F"``; the other array→array codecs, then the
    bytes→bytes codecs before the last (numcodecs' ``shuffle`` …), are numcodecs filters;
    the last bytes→bytes codec is the compressor."""
    order, filters = _order_and_filters(r, where, target)
    *bytes_filters, compressor = r.bytes_bytes or (None,)
    for codec in bytes_filters:
        _numcodecs_form(codec, r, where, target)
    return order, [*filters, *bytes_filters], [] if compressor is None else [compressor]


def _order_and_filters(r: Recipe, where: str, target: str) -> tuple[str, list[Any]]:
    """A leading full-reversal transpose as ``order="F"``; the rest must be numcodecs
    filters (the v2 and draft chains have no other array→array codecs)."""
    order, rest = "C", list(r.array_array)
    ndim = len(r.shape)
    if rest and rest[0].name == "transpose" and ndim > 1:
        if tuple(rest[0].order) != tuple(range(ndim))[::-1]:
            raise MetadataError(
                f"{where}: {target} has no transpose {list(rest[0].order)} (only order 'F', "
                "the full reversal)"
            )
        order, rest = "F", rest[1:]
    for codec in rest:
        _numcodecs_form(codec, r, where, target)
    return order, rest


def _numcodecs_form(codec: Any, r: Recipe, where: str, target: str) -> None:
    from zarrx.codecs.numcodecs_compat import to_numcodecs_config

    itemsize = 1 if r.variable else np.dtype(r.dtype).itemsize
    try:
        to_numcodecs_config(codec, itemsize)
    except MetadataError:
        raise MetadataError(
            f"{where}: {target} filters are numcodecs codecs; codec {codec.name!r} has no "
            "numcodecs form"
        ) from None


def _stored_dtype(r: Recipe) -> Any:
    if r.variable:
        return r.dtype
    dtype = np.dtype(r.dtype)
    if r.endian == "big":
        return dtype.newbyteorder(">")
    if r.endian == "little":
        return dtype.newbyteorder("<")
    return dtype


def v2_keywords(r: Recipe, *, where: str) -> dict[str, Any]:
    """Keywords making ``r`` a Zarr v2 array, or :class:`MetadataError` saying why not."""
    target = "Zarr v2"
    if r.unflattened is not None or r.shards is not None:
        raise MetadataError(f"{where}: {target} has no sharding (shards {r.shards})")
    if r.dimension_names is not None:
        raise MetadataError(f"{where}: {target} has no dimension_names")
    if not r.variable and r.serializer.name != "bytes":
        raise MetadataError(f"{where}: {target} has no serializer {r.serializer.name!r}")
    order, filters, compressors = _order_filters_compressor(r, where, target)
    # v2 keys keep their separator; other layouts take v2's conventional "."
    separator = r.separator if r.key_encoding == "v2" else "."
    return {
        "shape": r.shape,
        "dtype": _stored_dtype(r),
        "chunks": r.chunks,
        "compressors": compressors,
        "filters": filters or None,
        "fill_value": r.fill_value,
        "order": order,
        "attributes": r.attributes,
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": separator}},
    }


def draft_keywords(r: Recipe, *, where: str) -> dict[str, Any]:
    """Keywords making ``r`` a Zarr v3.0 draft array, or :class:`MetadataError`."""
    target = "the Zarr v3.0 draft"
    if r.variable:
        raise MetadataError(f"{where}: {target} has no variable-length data type {r.dtype!r}")
    if r.unflattened is not None:
        raise MetadataError(f"{where}: {target} shards only with one sharding codec")
    if r.dimension_names is not None:
        raise MetadataError(f"{where}: {target} has no dimension_names")
    if r.serializer.name != "bytes":
        raise MetadataError(f"{where}: {target} has no serializer {r.serializer.name!r}")
    order, filters, compressors = _order_filters_compressor(r, where, target)
    return {
        "shape": r.shape,
        "dtype": _stored_dtype(r),
        "chunks": r.chunks,
        "shards": r.shards,
        "compressors": compressors,
        "filters": filters or None,
        "fill_value": r.fill_value,
        "order": order,
        "attributes": r.attributes,
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": r.separator}},
    }


def keywords(meta: Any, zarr_format: Any, *, where: str) -> dict[str, Any]:
    """:func:`zarrx.create_array` keywords (without ``zarr_format``) that make the array
    ``meta`` describes in ``zarr_format``."""
    if zarr_format == 3 and meta.zarr_format == 3:
        aa, ab, bb = _split(meta.codecs.codecs)
        return {
            "shape": meta.shape,
            "dtype": _variable_kind(ab) or (
                meta.data_type if needs_naming(meta.data_type) else meta.dtype),
            "chunks": tuple(meta.chunk_grid.chunk_shape),
            "filters": aa or None,
            "serializer": ab,
            "compressors": bb,
            "fill_value": meta.fill_value,
            "order": "C",
            "attributes": dict(meta.attributes),
            "dimension_names": meta.dimension_names,
            "chunk_key_encoding": meta.chunk_key_encoding.to_dict(),
        }
    r = recipe(meta)
    if zarr_format == 3:
        return v3_keywords(r)
    if zarr_format == 2:
        return v2_keywords(r, where=where)
    if zarr_format == v3_draft.FORMAT:
        return draft_keywords(r, where=where)
    raise MetadataError(f"{where}: unsupported zarr_format {zarr_format!r}")


def _create(zarr_format: Any, kw: Mapping[str, Any], where: str) -> Any:
    from zarrx.creation import array_metadata

    try:
        return array_metadata(zarr_format=zarr_format, where=where, **kw)
    except MetadataError as e:
        message = str(e)
        raise type(e)(message if message.startswith(where) else f"{where}: {message}") from None


def v3_metadata(r: Recipe, *, where: str, chunk_key_encoding: Any = None) -> Any:
    return _create(3, v3_keywords(r, chunk_key_encoding=chunk_key_encoding), where)


# -- v2 ↔ v3 ----------------------------------------------------------------------------------

def _dimension_names_from_attributes(r: Recipe) -> Recipe:
    names = r.attributes.get(DIMENSIONS_ATTRIBUTE)
    if (
        isinstance(names, list | tuple)
        and len(names) == len(r.shape)
        and all(isinstance(n, str) for n in names)
    ):
        attributes = {k: v for k, v in r.attributes.items() if k != DIMENSIONS_ATTRIBUTE}
        return replace(r, attributes=attributes, dimension_names=tuple(names))
    return r


def _dimension_names_to_attributes(r: Recipe, where: str) -> Recipe:
    if r.dimension_names is None:
        return r
    if any(n is None for n in r.dimension_names):
        raise MetadataError(
            f"{where}: Zarr v2 has no dimension_names, and {list(r.dimension_names)} cannot "
            f"go to the {DIMENSIONS_ATTRIBUTE!r} attribute (unnamed dimensions)"
        )
    existing = r.attributes.get(DIMENSIONS_ATTRIBUTE)
    if existing is not None and list(existing) != list(r.dimension_names):
        raise MetadataError(
            f"{where}: attribute {DIMENSIONS_ATTRIBUTE!r} {existing!r} contradicts "
            f"dimension_names {list(r.dimension_names)}"
        )
    attributes = {**r.attributes, DIMENSIONS_ATTRIBUTE: list(r.dimension_names)}
    return replace(r, attributes=attributes, dimension_names=None)


def to_v3(spec: Any, *, chunk_key_encoding: str = "default", path: str = "") -> Any:
    """The v3 model of a v2 or draft spec (a v3 spec is returned as it is)."""
    if chunk_key_encoding not in ("default", "v2"):
        raise MetadataError(
            f"chunk_key_encoding must be 'default' or 'v2', got {chunk_key_encoding!r}"
        )
    if spec.zarr_format == 3:
        return spec
    where = display_path(path)
    if isinstance(spec, GroupSpec):
        members = {
            name: to_v3(m, chunk_key_encoding=chunk_key_encoding,
                        path=f"{path}/{name}" if path else name)
            for name, m in spec.members.items()
        }
        return GroupSpec(attributes=spec.attributes, members=members, zarr_format=3)
    r = recipe(metadata_of(spec, path))
    if spec.zarr_format == 2:
        r = _dimension_names_from_attributes(r)
    encoding = (
        {"name": "default", "configuration": {"separator": "/"}}
        if chunk_key_encoding == "default"
        else {"name": "v2", "configuration": {"separator": r.separator}}
    )
    return node_spec(v3_metadata(r, where=where, chunk_key_encoding=encoding))


def to_v2(spec: Any, *, path: str = "") -> Any:
    """The v2 model of a v3 or draft spec, or :class:`MetadataError` where v2 cannot
    hold it."""
    if spec.zarr_format == 2:
        return spec
    where = display_path(path)
    if isinstance(spec, GroupSpec):
        if spec.properties and spec.zarr_format == 3:
            raise MetadataError(
                f"{where}: Zarr v2 groups have no properties {sorted(spec.properties)}"
            )
        members = {
            name: to_v2(m, path=f"{path}/{name}" if path else name)
            for name, m in spec.members.items()
        }
        return GroupSpec(attributes=spec.attributes, members=members, zarr_format=2)
    meta = metadata_of(spec, path)
    if getattr(meta, "extra", None) or getattr(meta, "extensions", None):
        extra = sorted(getattr(meta, "extra", {})) or ["extensions"]
        raise MetadataError(f"{where}: Zarr v2 has no place for {extra}")
    r = _dimension_names_to_attributes(recipe(meta), where)
    return node_spec(_create(2, v2_keywords(r, where=where), where))
