"""Zarr v3 (final spec) metadata: the ``zarr.json`` document of arrays and groups.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html#metadata
Spec 3.1 rule for extra top-level keys: accepted only as objects with
``"must_understand": false``; they are kept and written back unchanged.
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from typing import Any

import numpy as np

from zarrx import registry
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.pipeline import CodecPipeline, resolution_state
from zarrx.data_types.struct import resolve
from zarrx.errors import MetadataError, UnknownExtensionError
from zarrx.extensions import extensions_to_json, parse_extensions
from zarrx.metadata.model import (
    check_product,
    parse_attributes,
    parse_dimension_names,
    parse_shape,
)

METADATA_KEY = "zarr.json"
_ARRAY_KEYS = {
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "attributes",
    "dimension_names",
    "storage_transformers",
    "extensions",
}
_GROUP_KEYS = {"zarr_format", "node_type", "attributes", "extensions"}
#: Keys zarr-python writes that are not in the spec and that we keep as they are.
_KNOWN_EXTRA = {"consolidated_metadata"}


def parse_data_type(value: Any, *, where: str) -> Any:
    """Resolve a ``data_type`` through the registry (``r8``, ``r16`` … share ``r*``)."""
    try:
        return resolve(value)
    except MetadataError as e:
        raise type(e)(f"{where}: {e}") from None


def _named(value: Any, *, where: str, field: str) -> tuple[str, Mapping[str, Any]]:
    if isinstance(value, str):
        return value, {}
    if (
        not isinstance(value, Mapping)
        or not isinstance(value.get("name"), str)
        or set(value) - {"name", "configuration"}
        or not isinstance(value.get("configuration", {}), Mapping)
    ):
        raise MetadataError(
            f"{where}: {field} must be an object with 'name' and 'configuration', got {value!r}"
        )
    return value["name"], value.get("configuration", {})


def _extra_keys(doc: Mapping[str, Any], known: set[str], *, where: str) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for key in doc.keys() - known:
        value = doc[key]
        optional = isinstance(value, Mapping) and value.get("must_understand") is False
        if key in _KNOWN_EXTRA or optional:
            extra[key] = value
        else:
            raise UnknownExtensionError(
                f"{where}: unknown metadata key {key!r}; Zarr v3 accepts extra keys only as "
                'objects with "must_understand": false'
            )
    return extra


def _check_header(doc: Any, node_type: str | None, *, where: str) -> str:
    if not isinstance(doc, dict):
        raise MetadataError(f"{where}: metadata must be a JSON object")
    if doc.get("zarr_format") != 3:
        raise MetadataError(f"{where}: zarr_format must be 3, got {doc.get('zarr_format')!r}")
    found = doc.get("node_type")
    if found not in ("array", "group"):
        raise MetadataError(f"{where}: node_type must be 'array' or 'group', got {found!r}")
    if node_type is not None and found != node_type:
        raise MetadataError(f"{where}: expected node_type {node_type!r}, got {found!r}")
    return found


@dataclass(frozen=True)
class ArrayMetadataV3:
    """A parsed, validated v3 array ``zarr.json``."""

    shape: tuple[int, ...]
    data_type: Any
    chunk_grid: Any
    chunk_key_encoding: Any
    fill_value: Any
    codecs: CodecPipeline
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    storage_transformers: tuple[Any, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    extensions: tuple[Any, ...] = ()  # ZEP 10 entries: Extension objects or UnknownEntry

    zarr_format = 3
    node_type = "array"

    @property
    def dtype(self) -> np.dtype:
        return self.data_type.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def chunk_spec(self, coords: tuple[int, ...] | None = None) -> ChunkSpec:
        coords = coords if coords is not None else (0,) * len(self.shape)
        return ChunkSpec(self.chunk_grid.chunk_shape_at(coords), self.dtype, self.fill_value)

    def chunk_key(self, coords: tuple[int, ...]) -> str:
        return self.chunk_key_encoding.encode(coords)

    @classmethod
    def from_json(cls, doc: Any, *, where: str = "array") -> ArrayMetadataV3:
        _check_header(doc, "array", where=where)
        missing = {
            "shape",
            "data_type",
            "chunk_grid",
            "chunk_key_encoding",
            "fill_value",
            "codecs",
        } - doc.keys()
        if missing:
            raise MetadataError(f"{where}: missing required keys {sorted(missing)}")
        extra = _extra_keys(doc, _ARRAY_KEYS, where=where)
        shape = parse_shape(doc["shape"], where=where)
        data_type = parse_data_type(doc["data_type"], where=where)

        grid_name, grid_config = _named(doc["chunk_grid"], where=where, field="chunk_grid")
        grid = registry.chunk_grids.get(grid_name).from_config(grid_config)
        grid.validate(shape, where)
        first = grid.chunk_shape_at((0,) * len(shape))
        check_product(first, where=where, field="chunk shape", itemsize=data_type.dtype.itemsize)

        cke_name, cke_config = _named(
            doc["chunk_key_encoding"], where=where, field="chunk_key_encoding"
        )
        key_encoding = registry.chunk_key_encodings.get(cke_name).from_config(cke_config)

        if doc["fill_value"] is None and not getattr(data_type, "null_fill", False):
            raise MetadataError(f"{where}: fill_value must not be null in Zarr v3 (only "
                                "nullable data types such as 'optional' take null)")
        try:
            fill_value = data_type.fill_from_json(doc["fill_value"])
        except MetadataError as e:
            raise type(e)(f"{where}: {e}") from None

        pipeline = CodecPipeline.from_json(doc["codecs"], where=where)
        spec = ChunkSpec(first, data_type.dtype, fill_value)
        try:
            pipeline.prepare(spec)
        except MetadataError as e:
            raise type(e)(f"{where}: {e}") from None

        transformers = doc.get("storage_transformers", [])
        if not isinstance(transformers, list):
            raise MetadataError(f"{where}: storage_transformers must be a list")
        if transformers:
            names = [t.get("name") if isinstance(t, dict) else t for t in transformers]
            raise UnknownExtensionError(
                f"{where}: unsupported storage transformers {names}; none is installed"
            )
        return cls(
            shape=shape,
            data_type=data_type,
            chunk_grid=grid,
            chunk_key_encoding=key_encoding,
            fill_value=fill_value,
            codecs=pipeline,
            attributes=parse_attributes(doc.get("attributes"), where=where),
            dimension_names=parse_dimension_names(
                doc.get("dimension_names"), len(shape), where=where
            ),
            storage_transformers=(),
            extra=extra,
            extensions=parse_extensions(
                doc.get("extensions"), where=where, node_type="array", shape=shape
            ),
        )

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": self.data_type.to_json(),
            "chunk_grid": self.chunk_grid.to_dict(),
            "chunk_key_encoding": self.chunk_key_encoding.to_dict(),
            "fill_value": self.data_type.fill_to_json(self.fill_value),
            "codecs": self.codecs.to_json(),
            "attributes": self.attributes,
        }
        if self.dimension_names is not None:
            doc["dimension_names"] = list(self.dimension_names)
        if self.storage_transformers:
            doc["storage_transformers"] = list(self.storage_transformers)
        if self.extensions:
            doc["extensions"] = extensions_to_json(self.extensions)
        doc.update(self.extra)
        return doc

    def with_attributes(self, attributes: dict[str, Any]) -> ArrayMetadataV3:
        return replace(self, attributes=attributes)

    def with_shape(self, shape: tuple[int, ...]) -> ArrayMetadataV3:
        shape = tuple(shape)  # a grid with finite edges grows to cover the new shape
        return replace(self, shape=shape, chunk_grid=self.chunk_grid.resized(shape))


@dataclass(frozen=True)
class GroupMetadataV3:
    """A parsed v3 group ``zarr.json``."""

    attributes: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    extensions: tuple[Any, ...] = ()

    zarr_format = 3
    node_type = "group"

    @classmethod
    def from_json(cls, doc: Any, *, where: str = "group") -> GroupMetadataV3:
        _check_header(doc, "group", where=where)
        extra = _extra_keys(doc, _GROUP_KEYS, where=where)
        extensions = parse_extensions(
            doc.get("extensions"), where=where, node_type="group", shape=None
        )
        return cls(parse_attributes(doc.get("attributes"), where=where), extra, extensions)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "zarr_format": 3,
            "node_type": "group",
            "attributes": self.attributes,
        }
        if self.extensions:
            doc["extensions"] = extensions_to_json(self.extensions)
        doc.update(self.extra)
        return doc

    def with_attributes(self, attributes: dict[str, Any]) -> GroupMetadataV3:
        return replace(self, attributes=attributes)


def node_from_json(doc: Any, *, where: str) -> ArrayMetadataV3 | GroupMetadataV3:
    """Parse a ``zarr.json`` of either node type."""
    if _check_header(doc, None, where=where) == "array":
        return ArrayMetadataV3.from_json(doc, where=where)
    return GroupMetadataV3.from_json(doc, where=where)


#: Arrays parsed from stored documents, by the document without its attributes, with the
#: resolution state (registry bindings, settings) they were parsed in. A hierarchy of many
#: arrays of one layout (the tiles, variables or scales of a dataset) resolves it once.
#: The key is the document in ``marshal``'s format: exact for what JSON parses to (``1``,
#: ``1.0`` and ``true`` differ, as they must), and cheaper to build than its ``repr``.
_PARSED: dict[bytes, tuple[Any, ArrayMetadataV3]] = {}
#: The same by the document without its attributes and its shape: an array of a layout seen
#: before with another shape of the same rank (the scales of a pyramid, variables of other
#: lengths) checks its shape only — the checks ``from_json`` makes of a shape, in its order.
#: Not for documents with ZEP 10 extensions, whose checks may involve the shape.
_ANY_SHAPE: dict[bytes, tuple[Any, ArrayMetadataV3]] = {}


def node_from_document(
    doc: Any, *, where: str, owned: bool = False
) -> ArrayMetadataV3 | GroupMetadataV3:
    """:func:`node_from_json` for a document as the JSON parser returned it (plain
    dicts, lists, strings, numbers). ``owned``: the caller's own copy, which may be
    changed (else it is left as it is)."""
    if not isinstance(doc, dict) or doc.get("node_type") != "array":
        return node_from_json(doc, where=where)
    if not owned:
        doc = dict(doc)  # only top-level keys are taken out and put back
    # The layout is the document without its attributes (absent and null alike: {}).
    attributes = doc.pop("attributes", None)
    state = resolution_state()
    key = _key(doc)
    found = None if key is None else _PARSED.get(key)
    if found is not None and found[0] == state:
        return _copy(found[1], attributes=parse_attributes(attributes, where=where))
    any_key = None
    if "shape" in doc and "extensions" not in doc:
        shape_json = doc.pop("shape")
        any_key = _key(doc)
        doc["shape"] = shape_json
        found = None if any_key is None else _ANY_SHAPE.get(any_key)
        if found is not None and found[0] == state and _same_rank(shape_json, found[1]):
            shape = parse_shape(shape_json, where=where)
            found[1].chunk_grid.validate(shape, where)
            meta = _copy(found[1], shape=shape,
                         attributes=parse_attributes(attributes, where=where))
            _remember(_PARSED, key, state, meta)
            return meta
    doc["attributes"] = attributes
    meta = ArrayMetadataV3.from_json(doc, where=where)
    _remember(_PARSED, key, state, meta)
    _remember(_ANY_SHAPE, any_key, state, meta)
    return meta


def _key(layout: dict[str, Any]) -> bytes | None:
    try:
        return marshal.dumps(layout, 2)
    except ValueError:  # not what a JSON parser returns (or nested beyond marshal's depth)
        return None


def _same_rank(shape_json: Any, meta: ArrayMetadataV3) -> bool:
    """Whether ``shape_json`` is a list of ``meta``'s rank (any other is parsed whole)."""
    return isinstance(shape_json, list) and len(shape_json) == len(meta.shape)


def _remember(
    cache: dict[bytes, tuple[Any, ArrayMetadataV3]], key: bytes | None, state: Any,
    meta: ArrayMetadataV3,
) -> None:
    if key is not None:
        if len(cache) >= 256:
            cache.clear()
        cache[key] = (state, meta)


def _copy(meta: ArrayMetadataV3, **changes: Any) -> ArrayMetadataV3:
    """``dataclasses.replace(meta, **changes)`` for a cached layout (no field needs
    checking): the fields set directly, without ``replace``'s generic path (every member
    of a large group pays it)."""
    new = object.__new__(ArrayMetadataV3)
    values, fields = meta.__dict__, new.__dict__
    if len(values) == len(_FIELDS):
        fields.update(values)
    else:  # the fields only (not what a cached property may have stored beside them)
        fields.update({name: values[name] for name in _FIELDS})
    fields.update(changes)
    return new


#: The fields of an array's metadata.
_FIELDS = tuple(f.name for f in dataclass_fields(ArrayMetadataV3))
