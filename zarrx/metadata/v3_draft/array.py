"""The draft's array and group documents (``*.array.json``, ``*.group.json``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from zarrx import registry
from zarrx.abc.codec import ChunkSpec
from zarrx.chunk_grids.regular import RegularChunkGrid
from zarrx.chunk_key_encodings.default import check_separator
from zarrx.codecs.pipeline import CodecPipeline
from zarrx.data_types.core import endian_of
from zarrx.data_types.fill import native
from zarrx.data_types.variable import STRING
from zarrx.errors import MetadataError, UnknownDataTypeError, UnknownExtensionError
from zarrx.metadata.model import check_product, parse_attributes, parse_shape
from zarrx.metadata.v3_draft.codecs import _filters, compressor_from_json
from zarrx.metadata.v3_draft.data_types import parse_data_type, parse_fill
from zarrx.metadata.v3_draft.entry_point import (
    DEFAULT_ENTRY_POINT,
    FORMAT,
    SHARDING_URI,
    EntryPoint,
    extension_to_json,
    parse_node_extensions,
)

# -- arrays ----------------------------------------------------------------------------------

_REQUIRED = ("shape", "data_type", "chunk_grid", "chunk_memory_layout", "fill_value")


@dataclass(frozen=True, eq=False)
class ArrayMetadataDraft:
    """A parsed, validated ``*.array.json``: the document plus what the engine needs."""

    shape: tuple[int, ...]
    attributes: dict[str, Any]
    document: dict[str, Any]  # the other names, as read (written back unchanged)
    stored_dtype: np.dtype
    chunk_shape: tuple[int, ...]
    separator: str
    chunk_memory_layout: str
    compressor: Any
    filters: tuple[Any, ...]
    fill_value: Any
    chunks_per_shard: tuple[int, ...] | None
    entry_point: EntryPoint = DEFAULT_ENTRY_POINT
    #: The key of the chunk of a 0-d array: ``c0``, where zarr-python 2.18 keeps it and
    #: zarrx writes it; ``c`` (seed 000's text) for an array whose chunk is stored there.
    zero_d_key: str = "c0"
    #: ZEP 10 entries: plugin objects (their hooks apply) or unknown optional ones.
    extensions: tuple[Any, ...] = ()

    zarr_format = FORMAT
    node_type = "array"
    dimension_names = None

    @property
    def dtype(self) -> np.dtype:
        if self.stored_dtype.hasobject:  # text or bytes objects, by the vlen filter
            return STRING if self._vlen().name == "vlen-utf8" else self.stored_dtype
        return native(self.stored_dtype)

    def _vlen(self) -> Any:
        return next(f for f in self.filters if f.name in ("vlen-utf8", "vlen-bytes"))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def chunk_grid(self) -> RegularChunkGrid:
        """The grid of stored objects: chunks, or whole shards when sharded."""
        grid = self.__dict__.get("_grid")
        if grid is None:
            cps = self.chunks_per_shard or (1,) * len(self.chunk_shape)
            grid = RegularChunkGrid(tuple(max(c, 1) * n for c, n in zip(self.chunk_shape, cps)))
            object.__setattr__(self, "_grid", grid)
        return grid

    def chunk_key(self, coords: tuple[int, ...]) -> str:
        if not coords:
            return self.zero_d_key
        return "c" + self.separator.join(map(str, coords))

    @property
    def codecs(self) -> CodecPipeline:
        cached = self.__dict__.get("_codecs")
        if cached is None:
            cached = self._pipeline()
            object.__setattr__(self, "_codecs", cached)
        return cached

    def _pipeline(self) -> CodecPipeline:
        from zarrx.metadata.v2 import StoredOrder, split_filters

        ndim = len(self.shape)
        chain: list[Any] = []
        if self.chunk_memory_layout == "F" and ndim > 1:
            transpose = registry.codecs.get("transpose")
            chain.append(transpose.from_config({"order": list(range(ndim))[::-1]}))
        if self.stored_dtype.hasobject:
            chain.append(self._vlen())  # zarr-python 2.18's objects: one vlen filter
        else:
            array_filters, bytes_filters = split_filters(self.filters, where="draft array")
            if array_filters:
                chain.append(StoredOrder(self.stored_dtype))
                chain.extend(array_filters)
            chain.append(registry.codecs.get("bytes")(endian=endian_of(self.stored_dtype)))
            chain.extend(bytes_filters)
        if self.compressor is not None:
            chain.append(self.compressor)
        where = "draft array"
        inner_shape = tuple(max(c, 1) for c in self.chunk_shape)
        inner = CodecPipeline(chain, where=where).evolve(
            ChunkSpec(inner_shape, self.dtype, self.fill_value)
        )
        if self.chunks_per_shard is None:
            return inner
        from zarrx.codecs.sharding import ShardingCodec

        index = CodecPipeline([registry.codecs.get("bytes")(endian="little")], where=where)
        sharding = ShardingCodec(inner_shape, inner, index, "end")
        return CodecPipeline([sharding], where=where)

    # -- parsing -----------------------------------------------------------------------------
    @classmethod
    def from_json(
        cls, doc: Any, entry_point: EntryPoint = DEFAULT_ENTRY_POINT, *, where: str = "array"
    ) -> ArrayMetadataDraft:
        if not isinstance(doc, dict):
            raise MetadataError(f"{where}: array metadata must be a JSON object")
        missing = [k for k in _REQUIRED if k not in doc]
        if missing:
            raise MetadataError(f"{where}: missing required names {missing}")
        shape = parse_shape(doc["shape"], where=where)
        stored = parse_data_type(doc["data_type"], where=where)
        chunk_shape, separator = _parse_grid(doc["chunk_grid"], len(shape), where=where)
        check_product([max(c, 1) for c in chunk_shape], where=where, field="chunk_shape",
                      itemsize=stored.itemsize)
        layout = doc["chunk_memory_layout"]
        if layout not in ("C", "F"):
            if isinstance(layout, dict) and "extension" in layout:
                raise UnknownExtensionError(
                    f"{where}: chunk_memory_layout extension {layout['extension']!r} is not "
                    "supported"
                )
            raise MetadataError(
                f"{where}: chunk_memory_layout must be 'C' or 'F', got {layout!r}"
            )
        separator = check_separator(  # zarr-python 2.18 writes both
            doc.get("dimension_separator", separator), where=f"{where}: dimension_separator")
        fill = parse_fill(stored, doc["fill_value"], where=where)
        extensions = parse_node_extensions(doc.get("extensions"), where=where,
                                           node_type="array", shape=shape)
        compressor = (
            None if doc.get("compressor") is None
            else compressor_from_json(doc["compressor"], where=where)
        )
        attributes = dict(parse_attributes(doc.get("attributes"), where=where))
        filters = _filters(attributes, where=where)
        if filters is not None:
            del attributes["filters"]
        cps = _parse_transformers(doc.get("storage_transformers"), len(shape), where=where)
        if stored.hasobject:
            fill = _object_fill(filters, fill, where=where)
        meta = cls(
            shape=shape,
            attributes=attributes,
            document={k: v for k, v in doc.items() if k not in ("shape", "attributes")},
            stored_dtype=stored,
            chunk_shape=chunk_shape,
            separator=separator,
            chunk_memory_layout=layout,
            compressor=compressor,
            filters=filters or (),
            fill_value=fill,
            chunks_per_shard=cps,
            entry_point=entry_point,
            extensions=extensions,
        )
        try:
            meta.codecs  # noqa: B018 - validates the chain for the chunk shape now
        except MetadataError as e:
            raise type(e)(f"{where}: {e}") from None
        return meta

    def to_json(self) -> dict[str, Any]:
        attributes = dict(self.attributes)
        if self.filters:
            from zarrx.codecs.numcodecs_compat import to_numcodecs_config

            itemsize = self.stored_dtype.itemsize
            attributes["filters"] = [to_numcodecs_config(f, itemsize) for f in self.filters]
        doc: dict[str, Any] = {"shape": list(self.shape)}
        doc.update(self.document)
        if self.extensions or "extensions" in doc:
            doc["extensions"] = [extension_to_json(e) for e in self.extensions]
        doc["attributes"] = attributes
        return doc

    def with_attributes(self, attributes: dict[str, Any]) -> ArrayMetadataDraft:
        if self.filters and "filters" in attributes:
            raise MetadataError(
                "the attribute 'filters' holds this array's numcodecs filters in the Zarr v3.0 "
                "draft (zarr-python 2.18's convention); choose another name"
            )
        return replace(self, attributes=dict(attributes))

    def with_shape(self, shape: tuple[int, ...]) -> ArrayMetadataDraft:
        return replace(self, shape=tuple(shape))

    def with_entry_point(self, entry_point: EntryPoint) -> ArrayMetadataDraft:
        return replace(self, entry_point=entry_point)


def _object_fill(filters: tuple[Any, ...] | None, fill: Any, *, where: str) -> Any:
    """The element unwritten chunks read as, for zarr-python 2.18's object arrays: they
    need exactly one ``vlen-utf8`` or ``vlen-bytes`` filter (in ``attributes["filters"]``),
    and a fill of ``0``/``null`` is that codec's empty element."""
    names = [f.name for f in filters or ()]
    if names not in (["vlen-utf8"], ["vlen-bytes"]):
        raise UnknownDataTypeError(
            f"{where}: an object data type needs exactly one filter, 'vlen-utf8' or "
            f"'vlen-bytes', in attributes['filters'], got {names}"
        )
    text = names == ["vlen-utf8"]
    if fill is None:
        return "" if text else b""
    return fill if text else fill.encode("utf-8")


def _parse_grid(value: Any, ndim: int, *, where: str) -> tuple[tuple[int, ...], str]:
    if isinstance(value, dict) and "extension" in value:
        raise UnknownExtensionError(
            f"{where}: chunk_grid extension {value['extension']!r} is not supported"
        )
    if not isinstance(value, dict) or value.get("type") != "regular":
        raise MetadataError(
            f"{where}: chunk_grid must be {{'type': 'regular', 'chunk_shape': [...]}}, "
            f"got {value!r}"
        )
    shape = value.get("chunk_shape")
    if not isinstance(shape, list) or not all(
        isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in shape
    ):
        raise MetadataError(
            f"{where}: chunk_grid chunk_shape must be a list of positive integers, "
            f"got {shape!r}"
        )
    if len(shape) != ndim:
        raise MetadataError(
            f"{where}: chunk_shape {shape} has rank {len(shape)} but the array has rank {ndim}"
        )
    separator = check_separator(value.get("separator", "/"), where=f"{where}: chunk_grid separator")
    return tuple(shape), separator


def _parse_transformers(value: Any, ndim: int, *, where: str) -> tuple[int, ...] | None:
    """zarr-python 2.18's sharding storage transformer, as ``chunks_per_shard``."""
    if not value:
        return None
    if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], dict):
        names = [t.get("extension") if isinstance(t, dict) else t for t in value] if isinstance(
            value, list) else value
        raise UnknownExtensionError(f"{where}: unsupported storage transformers {names}")
    transformer = value[0]
    if transformer.get("extension") != SHARDING_URI or transformer.get("type") != "indexed":
        raise UnknownExtensionError(
            f"{where}: unsupported storage transformer {transformer.get('extension')!r} "
            f"(type {transformer.get('type')!r}); zarrx reads {SHARDING_URI!r} type 'indexed'"
        )
    cps = (transformer.get("configuration") or {}).get("chunks_per_shard")
    if isinstance(cps, int) and not isinstance(cps, bool):
        cps = [cps]
    if not isinstance(cps, list) or not all(
        isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in cps
    ):
        raise MetadataError(
            f"{where}: sharding chunks_per_shard must be a list of positive integers, got {cps!r}"
        )
    if ndim == 0:
        return None
    if len(cps) != ndim:
        raise MetadataError(
            f"{where}: sharding chunks_per_shard {cps} has rank {len(cps)}, the array {ndim}"
        )
    return tuple(cps)


# -- groups ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class GroupMetadataDraft:
    """A ``*.group.json`` (explicit group), or an implicit group (no document)."""

    attributes: dict[str, Any] = field(default_factory=dict)
    entry_point: EntryPoint = DEFAULT_ENTRY_POINT
    implicit: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    extensions: tuple[Any, ...] = ()

    zarr_format = FORMAT
    node_type = "group"

    @classmethod
    def from_json(
        cls, doc: Any, entry_point: EntryPoint = DEFAULT_ENTRY_POINT, *, where: str = "group"
    ) -> GroupMetadataDraft:
        if not isinstance(doc, dict):
            raise MetadataError(f"{where}: group metadata must be a JSON object")
        return cls(
            parse_attributes(doc.get("attributes"), where=where),
            entry_point,
            extra={k: v for k, v in doc.items() if k != "attributes"},
            extensions=parse_node_extensions(doc.get("extensions"), where=where,
                                             node_type="group", shape=None),
        )

    def to_json(self) -> dict[str, Any]:
        doc = {"attributes": self.attributes, **self.extra}
        if self.extensions or "extensions" in doc:
            doc["extensions"] = [extension_to_json(e) for e in self.extensions]
        return doc

    def with_attributes(self, attributes: dict[str, Any]) -> GroupMetadataDraft:
        """Written attributes make an implicit group explicit."""
        return replace(self, attributes=dict(attributes), implicit=False)

    def with_entry_point(self, entry_point: EntryPoint) -> GroupMetadataDraft:
        return replace(self, entry_point=entry_point)
