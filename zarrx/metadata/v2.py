"""Zarr v2 metadata: ``.zarray``, ``.zgroup`` and ``.zattrs``.

Spec: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html
A v2 array maps onto the shared engine as a codec chain: ``transpose`` (for ``order: F``),
the numcodecs ``filters`` as array→array codecs, ``bytes`` in the dtype's byte order, and
the ``compressor`` as a bytes→bytes codec. Attributes live in ``.zattrs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from zarrx import registry
from zarrx.abc.codec import ArrayArrayCodec, ArrayBytesCodec, ChunkSpec
from zarrx.chunk_grids.regular import RegularChunkGrid
from zarrx.chunk_key_encodings.default import V2ChunkKeyEncoding, check_separator
from zarrx.codecs.pipeline import CodecPipeline
from zarrx.data_types import fill
from zarrx.data_types.core import endian_of
from zarrx.data_types.fill import native
from zarrx.data_types.ml import MLDataType, ml_name
from zarrx.data_types.variable import STRING
from zarrx.errors import FillValueError, MetadataError, UnknownDataTypeError
from zarrx.metadata.model import check_product, parse_attributes, parse_shape

ARRAY_KEY = ".zarray"
GROUP_KEY = ".zgroup"
ATTRS_KEY = ".zattrs"
_ARRAY_KEYS = {
    "zarr_format",
    "shape",
    "chunks",
    "dtype",
    "compressor",
    "fill_value",
    "order",
    "filters",
    "dimension_separator",
}
VLEN_IDS = ("vlen-utf8", "vlen-bytes")


def _descr(fields: list[Any]) -> list[tuple[Any, ...]]:
    """A JSON record description (nested lists) as NumPy's list of tuples."""
    return [
        (f[0], _descr(f[1]) if isinstance(f[1], list) else f[1], *(tuple(s) for s in f[2:]))
        for f in fields
    ]


def parse_dtype(value: Any, *, where: str) -> np.dtype:
    """A v2 ``dtype``: a NumPy type string, a structured list, or the name of a
    machine-learning type as tensorstore writes it (``"bfloat16"``, ``"int4"``, …). Those
    names are resolved by zarrx, never by NumPy: with ml_dtypes imported NumPy knows
    ``"int4"`` too, as a bare dtype whose fill value would be read as raw bytes."""
    if isinstance(value, str) and ml_name(value):
        try:
            return MLDataType.from_json(value).dtype
        except MetadataError as e:
            raise type(e)(f"{where}: {e}") from None
    try:
        if isinstance(value, str):
            dtype = np.dtype(value)
        elif isinstance(value, list):
            dtype = np.dtype(_descr(value))
        else:
            raise TypeError
    except (TypeError, ValueError, KeyError, IndexError):
        raise UnknownDataTypeError(f"{where}: unsupported dtype {value!r}") from None
    if dtype.itemsize == 0:
        raise UnknownDataTypeError(f"{where}: dtype {value!r} has no size")
    return dtype


def dtype_to_json(dtype: np.dtype) -> Any:
    name = ml_name(dtype)
    if name:
        return name
    if dtype.fields is not None:
        return [list(d) for d in dtype.descr]
    return dtype.str


def parse_fill(dtype: np.dtype, value: Any, *, where: str, text: bool = False) -> Any:
    """Decode a v2 ``fill_value`` (``None`` reads as zero, or empty for strings): the v2
    table of :mod:`zarrx.data_types.fill`, or the machine-learning types' own rule."""
    nat = native(dtype)
    try:
        if ml_name(nat):
            return MLDataType.from_numpy(nat).fill_from_v2(value)
        return fill.parse(fill.V2, dtype, value, where=f"dtype {dtype}",
                          kind="T" if text else None)
    except FillValueError as e:
        raise FillValueError(f"{where}: fill_value: {e}") from None


def fill_to_json(dtype: np.dtype, value: Any, *, text: bool = False) -> Any:
    """The v2 ``fill_value`` of ``value`` for an array stored as ``dtype``."""
    nat = native(dtype)
    if ml_name(nat):
        return MLDataType.from_numpy(nat).fill_to_v2(value)
    return fill.encode(fill.V2, dtype, value, kind="T" if text else None)


def _codec(value: Any, *, where: str) -> Any:
    if not isinstance(value, Mapping) or not isinstance(value.get("id"), str):
        raise MetadataError(f"{where}: a codec must be an object with an 'id', got {value!r}")
    from zarrx.codecs.numcodecs_compat import numcodecs_codec

    try:
        return numcodecs_codec(value["id"], value)
    except MetadataError as e:
        raise type(e)(f"{where}: {e}") from None


def split_filters(filters: tuple[Any, ...], *, where: str) -> tuple[list[Any], list[Any]]:
    """v2 ``filters`` as the codec chain places them: those that transform arrays (delta,
    fixedscaleoffset …) before serialisation, then those that transform bytes (numcodecs'
    ``shuffle``, which zarr-python 3 writes as a v2 filter) after it, before the
    compressor. An array filter after a bytes filter has no place in the chain."""
    array_filters = [f for f in filters if isinstance(f, ArrayArrayCodec)]
    bytes_filters = [f for f in filters if not isinstance(f, ArrayArrayCodec)]
    if list(filters) != array_filters + bytes_filters:
        raise MetadataError(
            f"{where}: filter {array_filters[-1].name!r} transforms arrays but comes after "
            f"{bytes_filters[0].name!r}, which transforms bytes; zarrx applies array filters "
            "first"
        )
    return array_filters, bytes_filters


@dataclass(frozen=True, eq=False)
class StoredOrder(ArrayArrayCodec):
    """Internal to v2 chains with filters: numcodecs filters see chunks in the stored
    dtype (e.g. ``>f8``), exactly as zarr-python 2 hands them over."""

    stored: np.dtype
    name: ClassVar[str] = "zarrx.v2-stored-order"

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> StoredOrder:
        return cls(np.dtype(configuration["dtype"]))

    def to_config(self) -> dict[str, Any]:
        return {"dtype": self.stored.str}

    def resolve_spec(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(spec.shape, self.stored, spec.fill_value)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return chunk.astype(self.stored, copy=False)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return chunk  # already the right values; the engine swaps bytes while copying


@dataclass(frozen=True)
class ArrayMetadataV2:
    """A parsed, validated ``.zarray`` (with its ``.zattrs``)."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    stored_dtype: np.dtype
    compressor: Any
    filters: tuple[Any, ...]
    fill_value: Any
    fill_is_null: bool = False
    order: str = "C"
    dimension_separator: str = "."
    attributes: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    zarr_format = 2
    node_type = "array"
    dimension_names = None

    @property
    def dtype(self) -> np.dtype:
        if self.stored_dtype.hasobject:  # text or bytes, by the variable-length filter
            return STRING if self._vlen().name == "vlen-utf8" else self.stored_dtype
        return native(self.stored_dtype)

    def _vlen(self) -> Any:
        return next(f for f in self.filters if f.name in ("vlen-utf8", "vlen-bytes"))

    @property
    def chunk_grid(self) -> RegularChunkGrid:
        return RegularChunkGrid(self.chunks)

    @property
    def chunk_key_encoding(self) -> V2ChunkKeyEncoding:
        return V2ChunkKeyEncoding(self.dimension_separator)

    def chunk_key(self, coords: tuple[int, ...]) -> str:
        return self.chunk_key_encoding.encode(coords)

    @property
    def codecs(self) -> CodecPipeline:
        cached = self.__dict__.get("_codecs")
        if cached is None:
            chain: list[Any] = []
            if self.order == "F" and len(self.shape) > 1:
                transpose = registry.codecs.get("transpose")
                chain.append(transpose.from_config({"order": list(range(len(self.shape)))[::-1]}))
            # A compressor of typed arrays (numcodecs' pcodec, zfpy) serialises the chunk
            # itself: it takes the place of ``bytes``.
            compressor = self.compressor
            if self.stored_dtype.hasobject:
                chain.append(self._vlen())
            else:
                serializer = compressor
                if isinstance(compressor, ArrayBytesCodec):
                    compressor = None
                else:
                    serializer = registry.codecs.get("bytes")(endian=endian_of(self.stored_dtype))
                array_filters, bytes_filters = split_filters(self.filters, where="v2 array")
                if array_filters or self.stored_dtype.fields is not None:
                    chain.append(StoredOrder(self.stored_dtype))
                chain.extend(array_filters)
                chain.append(serializer)
                chain.extend(bytes_filters)
            if compressor is not None:
                chain.append(compressor)
            cached = CodecPipeline(chain, where="v2 array").evolve(
                ChunkSpec(self.chunks, self.dtype, self.fill_value)
            )
            object.__setattr__(self, "_codecs", cached)
        return cached

    @classmethod
    def from_json(
        cls, doc: Any, attributes: Any = None, *, where: str = ARRAY_KEY
    ) -> ArrayMetadataV2:
        if not isinstance(doc, dict):
            raise MetadataError(f"{where}: metadata must be a JSON object")
        if doc.get("zarr_format") != 2:
            raise MetadataError(f"{where}: zarr_format must be 2, got {doc.get('zarr_format')!r}")
        missing = {"shape", "chunks", "dtype", "compressor", "fill_value", "order"} - doc.keys()
        if missing:
            raise MetadataError(f"{where}: missing required keys {sorted(missing)}")
        shape = parse_shape(doc["shape"], where=where)
        grid = RegularChunkGrid.from_config({"chunk_shape": doc["chunks"]})
        grid.validate(shape, where)
        dtype = parse_dtype(doc["dtype"], where=where)
        check_product(grid.chunk_shape, where=where, field="chunks", itemsize=dtype.itemsize)
        if doc["order"] not in ("C", "F"):
            raise MetadataError(f"{where}: order must be 'C' or 'F', got {doc['order']!r}")
        separator = check_separator(doc.get("dimension_separator", "."),
                                    where=f"{where}: dimension_separator")
        filters = doc.get("filters") or []
        if not isinstance(filters, list):
            raise MetadataError(f"{where}: filters must be a list or null")
        compressor = doc["compressor"]
        vlen = [f for f in filters if isinstance(f, Mapping) and f.get("id") in VLEN_IDS]
        if dtype.hasobject and (len(vlen) != 1 or len(filters) != 1):
            raise UnknownDataTypeError(
                f"{where}: object dtype {doc['dtype']!r} needs exactly one filter, 'vlen-utf8' "
                f"or 'vlen-bytes', got {filters!r}"
            )
        meta = cls(
            shape=shape,
            chunks=grid.chunk_shape,
            stored_dtype=dtype,
            compressor=None if compressor is None else _codec(compressor, where=where),
            filters=tuple(_codec(f, where=where) for f in filters),
            fill_value=parse_fill(
                dtype,
                doc["fill_value"],
                where=where,
                text=bool(vlen) and vlen[0]["id"] == "vlen-utf8",
            ),
            fill_is_null=doc["fill_value"] is None or (
                dtype.hasobject and fill.no_fill(doc["fill_value"])),
            order=doc["order"],
            dimension_separator=separator,
            attributes=parse_attributes(attributes, where=where),
            extra={k: v for k, v in doc.items() if k not in _ARRAY_KEYS},
        )
        try:
            meta.codecs.prepare(ChunkSpec(meta.chunks, meta.dtype, meta.fill_value))
        except MetadataError as e:
            raise type(e)(f"{where}: {e}") from None
        return meta

    def to_json(self) -> dict[str, Any]:
        from zarrx.codecs.numcodecs_compat import to_numcodecs_config

        itemsize = self.dtype.itemsize
        doc: dict[str, Any] = {
            "zarr_format": 2,
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": dtype_to_json(self.stored_dtype),
            "compressor": None
            if self.compressor is None
            else to_numcodecs_config(self.compressor, itemsize),
            "fill_value": None
            if self.fill_is_null
            else fill_to_json(self.stored_dtype, self.fill_value, text=self.dtype.kind == "T"),
            "order": self.order,
            "filters": [to_numcodecs_config(f, itemsize) for f in self.filters] or None,
            "dimension_separator": self.dimension_separator,
        }
        doc.update(self.extra)
        return doc

    def with_attributes(self, attributes: dict[str, Any]) -> ArrayMetadataV2:
        return replace(self, attributes=attributes)

    def with_shape(self, shape: tuple[int, ...]) -> ArrayMetadataV2:
        return replace(self, shape=tuple(shape))


@dataclass(frozen=True)
class GroupMetadataV2:
    """A parsed ``.zgroup`` (with its ``.zattrs``)."""

    attributes: dict[str, Any] = field(default_factory=dict)

    zarr_format = 2
    node_type = "group"

    @classmethod
    def from_json(
        cls, doc: Any, attributes: Any = None, *, where: str = GROUP_KEY
    ) -> GroupMetadataV2:
        if not isinstance(doc, dict) or doc.get("zarr_format") != 2:
            raise MetadataError(f'{where}: expected {{"zarr_format": 2}}, got {doc!r}')
        return cls(parse_attributes(attributes, where=where))

    def to_json(self) -> dict[str, Any]:
        return {"zarr_format": 2}

    def with_attributes(self, attributes: dict[str, Any]) -> GroupMetadataV2:
        return replace(self, attributes=attributes)
