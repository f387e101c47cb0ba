"""From the keywords of ``create_array`` to validated array metadata.

Defaults follow zarr-python 3 so that arrays look the same whichever library made them:
``zstd`` (level 0) as the compressor, ``bytes`` (little endian) as the serializer, the
``default`` chunk key encoding with ``/``, and a zero fill value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx import registry
from zarrx.abc.codec import ArrayArrayCodec, ArrayBytesCodec, ChunkSpec, Codec
from zarrx.chunk_grids.rectilinear import RectilinearChunkGrid
from zarrx.chunking import auto_partition
from zarrx.codecs.pipeline import CodecPipeline, coerce_codec
from zarrx.data_types.core import DataType
from zarrx.data_types.fixed import FixedDataType
from zarrx.data_types.ml import MLDataType, ml_name
from zarrx.data_types.named import named_data_type
from zarrx.data_types.struct import StructDataType
from zarrx.data_types.time import TimeDataType
from zarrx.data_types.variable import OBJECT, BytesDataType, StringDataType, variable_kind
from zarrx.errors import FillValueError, MetadataError, UnknownDataTypeError
from zarrx.extensions import parse_extensions
from zarrx.metadata.model import check_product, parse_dimension_names, parse_shape
from zarrx.metadata.v2 import ArrayMetadataV2
from zarrx.metadata.v2 import native as native_dtype
from zarrx.metadata.v3 import ArrayMetadataV3
from zarrx.metadata.v3_draft import (
    SHARDING_URI,
    ArrayMetadataDraft,
    compressor_to_json,
    data_type_to_json,
    extension_to_json,
    fill_to_json,
)
from zarrx.metadata.v3_draft import native as draft_native

DEFAULT_COMPRESSORS = ({"name": "zstd", "configuration": {"level": 0, "checksum": False}},)
DEFAULT_SERIALIZER = {"name": "bytes", "configuration": {"endian": "little"}}


def _is_auto(value: Any) -> bool:
    return value is None or value is True or (isinstance(value, str) and value == "auto")


def normalize_chunks(
    chunks: Any, shape: tuple[int, ...], *, where: str = "array", field: str = "chunks"
) -> tuple[int, ...]:
    """Explicit ``chunks`` (or shards) as a tuple of positive ints: an int is the same size
    on every axis; ``None`` or ``-1`` on an axis is the whole axis."""
    if isinstance(chunks, int | np.integer) and not isinstance(chunks, bool):
        chunks = (int(chunks),) * len(shape)
    if isinstance(chunks, str) or not isinstance(chunks, Sequence) or len(chunks) != len(shape):
        raise MetadataError(
            f"{where}: {field} {chunks!r} must be an int or a sequence of {len(shape)} ints "
            f"for shape {shape}"
        )
    out = []
    for c, s in zip(chunks, shape):
        if c is None or c == -1:
            c = max(s, 1)
        if not isinstance(c, int | np.integer) or isinstance(c, bool) or c < 1:
            raise MetadataError(f"{where}: {field} must be positive integers, got {chunks!r}")
        out.append(int(c))
    return tuple(out)


def partition(
    request: ArrayRequest, itemsize: int
) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """``(chunk shape, shard shape or None)`` of a new array: ``"auto"`` (or ``None``)
    chunks and ``"auto"`` shards as zarr-python 3 chooses them (:mod:`zarrx.chunking`,
    ``itemsize``: the element size zarr-python uses, 1 for variable-length types), a
    shard shape checked to be a multiple of the chunk shape."""
    r, where = request, request.where
    chunks, shards = r.chunks, r.shard_shape
    chunks = "auto" if _is_auto(chunks) else normalize_chunks(chunks, r.shape, where=where)
    if shards is not None and not (isinstance(shards, str) and shards == "auto"):
        shards = normalize_chunks(shards, r.shape, where=where, field="shards")
    shard_shape, chunk_shape = auto_partition(r.shape, chunks=chunks, shards=shards,
                                              itemsize=itemsize)
    if shard_shape is not None and any(s % c for s, c in zip(shard_shape, chunk_shape)):
        raise MetadataError(
            f"{where}: shards {shard_shape} must be a multiple of chunks {chunk_shape}"
        )
    return chunk_shape, shard_shape


def _is_rectilinear(chunks: Any) -> bool:
    return (
        isinstance(chunks, Sequence)
        and not isinstance(chunks, str)
        and any(isinstance(c, Sequence) for c in chunks)
    )


def _codec_list(value: Any, *, where: str) -> list[Codec]:
    """Codecs given as one (an object of zarrx, numcodecs or zarr-python, a dict, a name)
    or as a list or tuple of them."""
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        value = [value]
    return [coerce_codec(v, where=where) for v in value]


@dataclass(frozen=True, kw_only=True)
class ArrayRequest:
    """What is asked of a new array: the keywords of :func:`zarrx.create_array` that
    describe it, listed once for every format. Made once per array, with its memory order
    and shape checked (an int ``shape`` is one axis); each format's builder
    (:func:`array_metadata_v3`, :func:`array_metadata_v2`, :func:`array_metadata_draft`)
    turns it into that format's metadata and rejects what the format cannot store."""

    shape: tuple[int, ...]  # given as an int or a sequence of ints
    dtype: Any
    chunks: Any = None
    shards: Any = None
    compressors: Any = "auto"
    filters: Any = None
    serializer: Any = "auto"
    fill_value: Any = None
    order: str = "C"
    attributes: Mapping[str, Any] | None = None
    dimension_names: Any = None
    chunk_key_encoding: Any = None
    extensions: Any = None
    where: str = "array"

    def __post_init__(self) -> None:
        if self.order not in ("C", "F"):
            raise MetadataError(f"{self.where}: order must be 'C' or 'F', got {self.order!r}")
        shape: Any = self.shape
        if isinstance(shape, int):
            shape = (shape,)
        object.__setattr__(self, "shape", parse_shape(list(shape), where=self.where))
        _check_item_size(self.dtype, self.where)

    def compressor_codecs(self) -> list[Codec]:
        """The bytes→bytes codecs asked for (``"auto"``: zstd, level 0)."""
        compressors = DEFAULT_COMPRESSORS if self.compressors == "auto" else self.compressors
        return _codec_list(compressors, where=self.where)

    @property
    def shard_shape(self) -> Any:
        """The shards asked for: ``None``, ``"auto"``, a shape (zarr-python's
        ``{"shape": ..., "index_location": ...}`` form too)."""
        return self.shards.get("shape") if isinstance(self.shards, Mapping) else self.shards

    @property
    def index_location(self) -> Any:
        """Where a shard's index lies (``"end"`` unless ``shards`` is a mapping saying)."""
        if isinstance(self.shards, Mapping):
            return self.shards.get("index_location", "end")
        return "end"

    def separator(self, default: str) -> str:
        """The chunk key separator asked for (v2 and the draft keep only the separator)."""
        if self.chunk_key_encoding is None:
            return default
        configuration = dict(self.chunk_key_encoding).get("configuration", {})
        return configuration.get("separator", default)

    def user_attributes(self) -> dict[str, Any]:
        return dict(self.attributes or {})


def _check_item_size(dtype: Any, where: str) -> None:
    """Refuse a fixed-size type of no size (``"<U"``, ``"S0"``, ``"V0"``, a record of no
    fields): no value fits in it, and no Zarr reader opens it."""
    if variable_kind(dtype) or ml_name(dtype) or named_data_type(dtype) is not None:
        return
    try:
        parsed = np.dtype(dtype)
    except (TypeError, ValueError):
        return  # (not a NumPy type: each format's builder says what it takes)
    if parsed.itemsize == 0:
        hint = {
            "U": "give the length in characters, e.g. '<U16', or dtype=str for "
                 "variable-length strings",
            "S": "give the length in bytes, e.g. 'S16', or dtype=bytes for variable-length "
                 "bytes",
        }.get(parsed.kind, "give it a size, e.g. 'V8'" if parsed.fields is None
              else "give the record at least one field")
        raise MetadataError(f"{where}: data type {parsed.str!r} holds zero bytes; {hint}")


def _explicit_byte_order(dtype: np.dtype) -> np.dtype:
    """``dtype`` with ``=`` (native) spelled as the machine's ``<`` or ``>``."""
    if dtype.byteorder == "=":
        return dtype.newbyteorder("<" if np.little_endian else ">")
    return dtype


def array_metadata(*, zarr_format: Any = 3, **keywords: Any) -> Any:
    """Metadata for a new array in ``zarr_format`` (3, 2 or ``"3-draft"``) from the
    keywords of :class:`ArrayRequest`."""
    request = ArrayRequest(**keywords)
    if zarr_format == 2:
        return array_metadata_v2(request)
    if zarr_format == "3-draft":
        return array_metadata_draft(request)
    return array_metadata_v3(request)


def _only_in_v3(r: ArrayRequest, fmt: str) -> None:
    """Refuse what only Zarr v3 has: a data type NumPy has no dtype for (``optional``,
    ``complex_*``), chunks of variable sizes."""
    named = named_data_type(r.dtype)
    if named is not None:
        raise UnknownDataTypeError(
            f"{r.where}: {fmt} has no data type {named.to_json()!r}; use zarr_format=3"
        )
    if _is_rectilinear(r.chunks):
        raise MetadataError(f"{r.where}: chunks of variable sizes (the rectilinear grid) "
                            f"need zarr_format=3; {fmt} has one chunk shape")


def array_metadata_v2(request: ArrayRequest) -> ArrayMetadataV2:
    """Validated v2 metadata for a new array (zarr-python 3 defaults: Zstd level 0)."""
    r, where = request, request.where
    _only_in_v3(r, "Zarr v2")
    if r.shards is not None:
        raise MetadataError(f"{where}: Zarr v2 has no sharding; use zarr_format=3")
    if r.extensions:
        raise MetadataError(f"{where}: Zarr v2 has no extensions; use zarr_format=3")
    if r.serializer != "auto":
        raise MetadataError(f"{where}: Zarr v2 has no serializer; leave serializer='auto'")
    if r.dimension_names is not None:
        raise MetadataError(f"{where}: Zarr v2 has no dimension_names (use attributes)")
    shape, dtype, filters, fill_value = r.shape, r.dtype, r.filters, r.fill_value
    kind = variable_kind(dtype)
    if kind:
        filters = [{"id": "vlen-utf8" if kind == "text" else "vlen-bytes"}]
        if fill_value is None:
            fill_value = "" if kind == "text" else b""
    ml = MLDataType.from_numpy(dtype) if ml_name(dtype) else None
    stored = _explicit_byte_order(OBJECT if kind else ml.dtype if ml else np.dtype(dtype))
    chunk_shape, _ = partition(r, 1 if kind else stored.itemsize)
    check_product(chunk_shape, where=where, field="chunks", itemsize=stored.itemsize)
    separator = r.separator(".")
    compressor_list = r.compressor_codecs()
    if len(compressor_list) > 1:
        raise MetadataError(f"{where}: Zarr v2 takes one compressor, got {len(compressor_list)}")
    nat = native_dtype(stored)
    if kind:
        fill = fill_value
    elif ml:
        fill = ml.coerce_fill(fill_value)
    else:
        fill = _native_fill(nat, fill_value, where)
    meta = ArrayMetadataV2(
        shape=shape,
        chunks=chunk_shape,
        stored_dtype=stored,
        compressor=compressor_list[0] if compressor_list else None,
        filters=tuple(_codec_list(filters, where=where)),
        fill_value=fill,
        order=r.order,
        dimension_separator=separator,
        attributes=r.user_attributes(),
    )
    meta.codecs  # noqa: B018 - validates the chain now rather than at first write
    return meta


def array_metadata_v3(request: ArrayRequest) -> ArrayMetadataV3:
    """Validated v3 metadata for a new array, codecs evolved for its data type."""
    r, where = request, request.where
    shape, dtype, chunks, serializer = r.shape, r.dtype, r.chunks, r.serializer
    named = named_data_type(dtype)
    kind = None if named is not None else variable_kind(dtype)
    if named is not None:  # a type NumPy has no dtype for (complex_float16, optional, ...)
        data_type: Any = named
        if serializer == "auto" and hasattr(named, "default_serializer"):
            serializer = named.default_serializer()
    elif kind:
        data_type = StringDataType() if kind == "text" else BytesDataType()
    elif ml_name(dtype):
        data_type = MLDataType.from_numpy(dtype)
    elif np.dtype(dtype).kind in "Mm":
        data_type = TimeDataType.from_numpy(np.dtype(dtype))
    elif np.dtype(dtype).kind in "US":
        data_type = FixedDataType.from_numpy(np.dtype(dtype))
    elif np.dtype(dtype).fields is not None:
        data_type = StructDataType.from_numpy(np.dtype(dtype))
    else:
        data_type = DataType.from_numpy(dtype)
    if kind and serializer == "auto":
        serializer = {"name": "vlen-utf8" if kind == "text" else "vlen-bytes"}
    shard_grid: Any = None
    if _is_rectilinear(chunks):  # per-axis chunk sizes: the rectilinear grid
        if r.shards is not None:
            raise MetadataError(
                f"{where}: sharded arrays take regular inner chunks; give the variable "
                "sizes as shards= instead"
            )
        grid = RectilinearChunkGrid.from_sizes(chunks)
        grid.validate(shape, where)
        chunk_shape = grid.chunk_shape_at((0,) * len(shape))
    elif _is_rectilinear(r.shard_shape):  # shards of variable sizes, each a multiple of chunks
        if _is_auto(chunks):
            raise MetadataError(f"{where}: shards of variable sizes need explicit chunks=")
        chunk_shape = normalize_chunks(chunks, shape, where=where)
        shard_grid = RectilinearChunkGrid.from_sizes(r.shard_shape)
        shard_grid.validate(shape, where)
        if not shard_grid.multiple_of(chunk_shape):
            raise MetadataError(
                f"{where}: shards {r.shard_shape} must be a multiple of chunks {chunk_shape}"
            )
        grid = registry.chunk_grids.get("regular")(chunk_shape)
    else:  # zarr-python's element size: none (1) for variable-length types
        chunk_shape, shard_shape = partition(r, 1 if kind else data_type.dtype.itemsize)
        grid = registry.chunk_grids.get("regular")(chunk_shape)
        if shard_shape is not None:
            shard_grid = registry.chunk_grids.get("regular")(shard_shape)
    check_product(chunk_shape, where=where, field="chunk shape", itemsize=data_type.dtype.itemsize)
    grid.validate(shape, where)

    array_array = _codec_list(r.filters, where=where)
    if r.order == "F" and len(shape) > 1:
        transpose = registry.codecs.get("transpose")
        array_array.append(transpose.from_config({"order": list(range(len(shape)))[::-1]}))
    for codec in array_array:
        if not isinstance(codec, ArrayArrayCodec):
            raise MetadataError(f"{where}: filter {codec.name!r} is not an array→array codec")
    serializer_codecs = _codec_list(
        DEFAULT_SERIALIZER if serializer == "auto" else serializer, where=where
    )
    if len(serializer_codecs) != 1 or not isinstance(serializer_codecs[0], ArrayBytesCodec):
        raise MetadataError(
            f"{where}: serializer must be exactly one array→bytes codec, got "
            f"{[c.name for c in serializer_codecs]}"
        )
    bytes_bytes = r.compressor_codecs()
    for codec in bytes_bytes:
        if isinstance(codec, ArrayBytesCodec):
            raise MetadataError(
                f"{where}: {codec.name!r} compresses typed arrays (an array→bytes codec): "
                f"give it as serializer=, not among the compressors"
            )

    fill = data_type.coerce_fill(r.fill_value)
    codecs: list[Any] = [*array_array, *serializer_codecs, *bytes_bytes]
    if shard_grid is not None:
        sharding = registry.codecs.get("sharding_indexed")
        codecs = [
            sharding.from_config(
                {
                    "chunk_shape": list(chunk_shape),
                    "codecs": [c.to_dict() for c in codecs],
                    "index_location": r.index_location,
                }
            )
        ]
        grid = shard_grid
    pipeline = CodecPipeline(codecs, where=where).evolve(
        ChunkSpec(grid.chunk_shape_at((0,) * len(shape)), data_type.dtype, fill)
    )

    chunk_key_encoding = r.chunk_key_encoding
    if chunk_key_encoding is None:
        chunk_key_encoding = {"name": "default", "configuration": {"separator": "/"}}
    if isinstance(chunk_key_encoding, Mapping):
        name = str(chunk_key_encoding.get("name"))
        encoding = registry.chunk_key_encodings.get(name).from_config(
            chunk_key_encoding.get("configuration", {})
        )
    else:
        encoding = chunk_key_encoding

    return ArrayMetadataV3(
        shape=shape,
        data_type=data_type,
        chunk_grid=grid,
        chunk_key_encoding=encoding,
        fill_value=fill,
        codecs=pipeline,
        attributes=r.user_attributes(),
        dimension_names=parse_dimension_names(
            list(r.dimension_names) if r.dimension_names is not None else None,
            len(shape),
            where=where,
        ),
        extensions=parse_extensions(
            [e.to_dict() if hasattr(e, "to_dict") else e for e in r.extensions]
            if r.extensions
            else None,
            where=where,
            node_type="array",
            shape=shape,
        ),
    )


def array_metadata_draft(request: ArrayRequest) -> ArrayMetadataDraft:
    """Validated draft metadata for a new array: the document is built, then parsed like
    any other, so what zarrx writes is what it reads."""
    r, where = request, request.where
    _only_in_v3(r, "the Zarr v3.0 draft")
    if r.serializer != "auto":
        raise MetadataError(f"{where}: the Zarr v3.0 draft has no serializer; leave 'auto'")
    if r.dimension_names is not None:
        raise MetadataError(f"{where}: the Zarr v3.0 draft has no dimension_names")
    shape, dtype, fill_value = r.shape, r.dtype, r.fill_value
    if ml_name(dtype):  # else NumPy (with ml_dtypes) would make it raw bits, losing the type
        raise UnknownDataTypeError(
            f"{where}: the Zarr v3.0 draft has no data type {ml_name(dtype)!r}; use "
            "zarr_format=3 or 2"
        )
    stored = _explicit_byte_order(np.dtype(dtype))
    data_type = data_type_to_json(stored)
    chunk_shape, shard_shape = partition(r, stored.itemsize)
    separator = r.separator("/")
    codecs = r.compressor_codecs()
    if len(codecs) > 1:
        raise MetadataError(f"{where}: the Zarr v3.0 draft takes one compressor, got {len(codecs)}")
    filter_codecs = _codec_list(r.filters, where=where)
    nat = draft_native(stored)
    fill = _native_fill(nat, fill_value, where)
    doc: dict[str, Any] = {
        "shape": list(shape),
        "data_type": data_type,
        "chunk_grid": {"type": "regular", "chunk_shape": list(chunk_shape),
                       "separator": separator},
        "chunk_memory_layout": r.order,
    }
    if codecs:
        doc["compressor"] = compressor_to_json(codecs[0], stored.itemsize)
    doc["fill_value"] = fill_to_json(stored, fill)
    doc["extensions"] = [extension_to_json(e) for e in r.extensions or ()]
    user_attributes = r.user_attributes()
    if filter_codecs:
        from zarrx.codecs.numcodecs_compat import to_numcodecs_config

        if "filters" in user_attributes:
            raise MetadataError(
                f"{where}: the attribute 'filters' holds the numcodecs filters in the Zarr "
                "v3.0 draft; choose another name"
            )
        try:
            configs = [to_numcodecs_config(f, stored.itemsize) for f in filter_codecs]
        except MetadataError as e:
            raise MetadataError(f"{where}: filters must be numcodecs codecs: {e}") from None
        user_attributes["filters"] = configs
    doc["attributes"] = user_attributes
    if shard_shape is not None:
        if not shape:
            raise MetadataError(f"{where}: a 0-dimensional array cannot be sharded")
        doc["storage_transformers"] = [{
            "extension": SHARDING_URI,
            "type": "indexed",
            "configuration": {
                "chunks_per_shard": [s // c for s, c in zip(shard_shape, chunk_shape)],
            },
        }]
    return ArrayMetadataDraft.from_json(doc, where=where)


def _native_fill(nat: np.dtype, value: Any, where: str) -> Any:
    """A user's fill value for a v2 or draft array of NumPy type ``nat`` as a NumPy scalar
    (zero when ``None``): numbers by the data type's rules, raw bytes padded with NULs."""
    if nat.kind in "biufc":
        return DataType.from_numpy(nat).coerce_fill(value)
    if value is None:
        return np.zeros((), nat)[()]
    if nat.kind == "V" and isinstance(value, bytes) and len(value) > nat.itemsize:
        raise FillValueError(
            f"{where}: fill_value is {len(value)} bytes, longer than the data type's "
            f"{nat.itemsize}"
        )
    return np.asarray(value, nat)[()]
