"""The Zarr v3.0 editor's draft (16 October 2020, seeds 000-002): documents and key layout.

Spec: https://purl.org/zarr/spec/protocol/core/3.0 (seed 000), with the complex types of
seed 001, and the variant zarr-python 2.18 wrote under ``ZARR_V3_EXPERIMENTAL_API=1``.

A draft hierarchy is recognised by its entry point, the root ``zarr.json``, whose
``zarr_format`` is the core protocol URI. Everything else follows from the entry point:

=========================  ==========================================================
node                       key
=========================  ==========================================================
entry point                ``zarr.json``
root array / group         ``meta/root.array<sfx>`` / ``meta/root.group<sfx>``
array / group at ``/P``    ``meta/root/P.array<sfx>`` / ``meta/root/P.group<sfx>``
chunk ``(i, j)`` of ``/P``  ``data/root/P/c<i><sep><j>`` (``c`` alone when 0-d)
=========================  ==========================================================

``<sfx>`` is the entry point's ``metadata_key_suffix`` (default ``.json``); ``<sep>`` the
chunk grid's ``separator`` (default ``/``; zarr-python 2.18's top-level
``dimension_separator`` wins when present). Groups may be *implicit*: a path with no
document is a group when ``list_dir("meta/root/P/")`` is not empty.

Mapping onto the shared engine: an array's ``codecs`` is a :class:`CodecPipeline` of
``transpose`` (``chunk_memory_layout: "F"``), the numcodecs ``filters`` zarr-python 2.18
keeps in ``attributes["filters"]``, ``bytes`` in the data type's byte order, and the
``compressor`` resolved by its URI through the codec registry (numcodecs by the URI's
codec id otherwise). zarr-python 2.18's sharding storage transformer (``chunks_per_shard``,
an index of little-endian ``(offset, nbytes)`` uint64 pairs at the shard's end) is the
``sharding_indexed`` codec with a ``bytes``-only index over a grid of whole shards.

Known incompatibilities: zarr-python 2.18 stores the chunk of a 0-d array at ``c0``, not
the seed's ``c``; zarrx reads ``c0`` when only that key exists, and writes ``c``.

>>> entry = EntryPoint.from_json({"zarr_format": CORE_URI, "metadata_encoding": CORE_URI,
...                               "metadata_key_suffix": ".json", "extensions": []})
>>> DraftLayout(entry).array_key("foo/baz"), DraftLayout(entry).data_prefix("foo/baz")
('meta/root/foo/baz.array.json', 'data/root/foo/baz/')
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from zarrx import registry
from zarrx.abc.codec import ChunkSpec
from zarrx.abc.store import Store
from zarrx.chunk_grids.regular import RegularChunkGrid
from zarrx.codecs.bytes import has_byte_order
from zarrx.codecs.pipeline import CodecPipeline
from zarrx.data_types.ml import ml_name
from zarrx.errors import (
    FillValueError,
    InvalidKeyError,
    MetadataError,
    UnknownCodecError,
    UnknownDataTypeError,
    UnknownExtensionError,
)
from zarrx.metadata.json import dump_json, load_json
from zarrx.metadata.model import check_product, parse_attributes, parse_shape

#: The ``zarr_format`` (and ``LAYOUTS`` key) of the draft in zarrx's API.
FORMAT = "3-draft"
CORE_URI = "https://purl.org/zarr/spec/protocol/core/3.0"
ENTRY_POINT_KEY = "zarr.json"
META_ROOT = "meta/root"
DATA_ROOT = "data/root"
CODEC_URI_PREFIX = "https://purl.org/zarr/spec/codec/"
SHARDING_URI = "https://purl.org/zarr/spec/storage_transformers/sharding/1.0"
#: Both spellings of the core protocol URI (seed 002 wrote ``http``); major version 3.
_CORE = re.compile(r"^https?://purl\.org/zarr/spec/protocol/core/(\d+)\.(\d+)$")
#: Encodings of group and array documents understood here: JSON, as the seeds define it.
_JSON_ENCODINGS = {CORE_URI, "http://purl.org/zarr/spec/protocol/core/3.0", "application/json"}
_CODEC_URI = re.compile(r"^https?://purl\.org/zarr/spec/codec/([A-Za-z0-9_.-]+?)(?:/[0-9.]+)?/?$")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_SUFFIX = re.compile(r"^[A-Za-z0-9_.-]*$")

# -- data types ------------------------------------------------------------------------------

#: Seed 000's core identifiers and seed 001's complex types, as NumPy dtypes.
CORE_DTYPES: dict[str, np.dtype] = {
    "bool": np.dtype("|b1"),
    "i1": np.dtype("|i1"),
    "u1": np.dtype("|u1"),
    **{f"{e}{k}{n}": np.dtype(f"{e}{k}{n}") for e in "<>" for k in "iuf" for n in (2, 4, 8)},
    **{f"{e}c{n}": np.dtype(f"{e}c{n}") for e in "<>" for n in (8, 16)},
}
_RAW = re.compile(r"^r([1-9][0-9]*)$")
#: Data type extensions zarrx understands natively (type = a NumPy type string).
COMPLEX_URIS = frozenset({
    "https://zarr-specs.readthedocs.io/en/core-protocol-v3.0-dev/protocol/extensions/"
    "complex-dtypes/v1.0.html",
})
DATETIME_URI = "https://purl.org/zarr/spec/protocol/extensions/datetime-dtypes/1.0"
DATETIME_URIS = frozenset({
    DATETIME_URI,
    "http://purl.org/zarr/spec/protocol/extensions/datetime-dtypes/1.0",
    "https://zarr-specs.readthedocs.io/en/latest/extensions/data-types/datetime/v1.0.html",
})
_DATETIME = re.compile(r"^[<>][mM]8\[(Y|M|W|D|h|m|s|ms|us|ns|ps|fs|as)\]$")


def native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=") if dtype.byteorder in "<>" else dtype


def core_dtype(identifier: Any, *, where: str) -> np.dtype:
    """The NumPy dtype of a core identifier (``bool``, ``<f8``, ``>c16``, ``r24`` …)."""
    if isinstance(identifier, str):
        if identifier in CORE_DTYPES:
            return CORE_DTYPES[identifier]
        raw = _RAW.match(identifier)
        if raw and int(raw.group(1)) % 8 == 0:
            return np.dtype(f"V{int(raw.group(1)) // 8}")
    raise UnknownDataTypeError(
        f"{where}: unknown data type {identifier!r}; the core identifiers are "
        f"{', '.join(CORE_DTYPES)} and raw bits r8, r16, … (a multiple of 8)"
    )


def parse_data_type(value: Any, *, where: str) -> np.dtype:
    """A ``data_type``: a core identifier, or an extension object (with its ``fallback``)."""
    if not isinstance(value, Mapping):
        return core_dtype(value, where=where)
    uri, kind = value.get("extension"), value.get("type")
    if not isinstance(uri, str) or "type" not in value:
        raise MetadataError(
            f"{where}: an extension data_type needs 'extension' (a URI) and 'type', got {value!r}"
        )
    if uri in COMPLEX_URIS and isinstance(kind, str) and kind in CORE_DTYPES and "c" in kind:
        return CORE_DTYPES[kind]
    if uri in DATETIME_URIS and isinstance(kind, str) and _DATETIME.match(kind):
        return np.dtype(kind)
    fallback = value.get("fallback")
    if fallback is None:
        raise UnknownDataTypeError(
            f"{where}: data type extension {uri!r} (type {kind!r}) is not supported and "
            "declares no fallback"
        )
    return core_dtype(fallback, where=f"{where} (fallback of extension {uri!r})")


def data_type_to_json(dtype: np.dtype) -> Any:
    """The ``data_type`` zarrx writes for a NumPy dtype (byte order included)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "V" and dtype.fields is None and dtype.subdtype is None:
        return f"r{dtype.itemsize * 8}"
    if dtype.kind in "mM" and _DATETIME.match(dtype.str):
        return {"extension": DATETIME_URI, "type": dtype.str, "fallback": f"{dtype.str[0]}i8"}
    for name, core in CORE_DTYPES.items():
        if core.str == dtype.str:
            return name
    raise UnknownDataTypeError(
        f"NumPy dtype {dtype} has no Zarr v3.0 draft data type; supported: "
        f"{', '.join(CORE_DTYPES)}, raw bits (void), datetime64 and timedelta64"
    )


# -- fill values -----------------------------------------------------------------------------

_SPECIAL = {"NaN": math.nan, "+Infinity": math.inf, "Infinity": math.inf, "-Infinity": -math.inf}


def _bits(value: str, nat: np.dtype, where: str) -> Any | None:
    """A ``0x…``/``0b…`` string: the element's bits, most significant first."""
    if value.startswith("0x"):
        digits, base, width = value[2:], 16, 2 * nat.itemsize
    elif value.startswith("0b"):
        digits, base, width = value[2:], 2, 8 * nat.itemsize
    else:
        return None
    if len(digits) != width or not re.fullmatch(r"[0-9a-fA-F]+" if base == 16 else "[01]+",
                                                digits):
        raise FillValueError(
            f"{where}: fill_value {value!r} must have exactly {width} "
            f"{'hex' if base == 16 else 'binary'} digits for {nat.itemsize}-byte elements"
        )
    raw = int(digits, base).to_bytes(nat.itemsize, "big")
    big = nat.newbyteorder(">") if nat.byteorder != "|" else nat
    return np.frombuffer(raw, dtype=big)[0].astype(nat) if nat.kind != "V" else (
        np.frombuffer(raw, dtype=nat)[0])


def _float(value: Any, nat: np.dtype, where: str) -> Any:
    if isinstance(value, str):
        if value in _SPECIAL:
            return nat.type(_SPECIAL[value])
        bits = _bits(value, nat, where)
        if bits is not None:
            return bits
    elif isinstance(value, int | float) and not isinstance(value, bool):
        with np.errstate(over="ignore"):
            out = nat.type(value)
        if math.isfinite(value) and not np.isfinite(out):
            raise FillValueError(f"{where}: fill_value {value!r} is out of range for {nat}")
        return out
    raise FillValueError(
        f"{where}: fill_value {value!r} for {nat}: expected a number, 'NaN', '+Infinity', "
        "'-Infinity' or a '0x'/'0b' string"
    )


def parse_fill(stored: np.dtype, value: Any, *, where: str) -> Any:
    """A fill value as a NumPy scalar of the native dtype (``null`` reads as zero)."""
    nat = native(stored)
    if value is None:
        return np.zeros((), dtype=nat)[()]
    kind = nat.kind
    if isinstance(value, str) and kind not in "fc":
        bits = _bits(value, nat, where)
        if bits is not None:
            return bits
    if kind == "b":
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return np.bool_(value)
        raise FillValueError(f"{where}: fill_value {value!r} for bool: expected true or false")
    if kind in "iumM":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise FillValueError(
                f"{where}: fill_value {value!r} for {stored}: expected an integer without "
                "fraction or exponent, or a '0x'/'0b' string"
            )
        info = np.iinfo(nat if kind in "iu" else np.dtype("i8"))
        if not info.min <= value <= info.max:
            raise FillValueError(
                f"{where}: fill_value {value} is out of range for {stored} "
                f"([{info.min}, {info.max}])"
            )
        return nat.type(value) if kind in "iu" else np.array(value, "i8").view(nat)[()]
    if kind == "f":
        return _float(value, nat, where)
    if kind == "c":
        if isinstance(value, str):
            bits = _bits(value, nat, where)
            if bits is not None:
                return bits
        part = np.dtype(f"f{nat.itemsize // 2}")
        if isinstance(value, list | tuple) and len(value) == 2:
            re_, im = (_float(v, part, where) for v in value)
        else:
            re_, im = _float(value, part, where), part.type(0)
        out = np.zeros((), dtype=nat)
        out.real, out.imag = re_, im
        return out[()]
    if kind == "V":
        if isinstance(value, list) and len(value) == nat.itemsize and all(
            isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in value
        ):
            return np.frombuffer(bytes(value), dtype=nat)[0]
        raise FillValueError(
            f"{where}: fill_value {value!r} for raw {nat.itemsize * 8}-bit data: expected a "
            f"'0x' string of {2 * nat.itemsize} hex digits"
        )
    raise FillValueError(f"{where}: no fill-value encoding for {stored}")


def _float_to_json(value: Any) -> Any:
    if math.isnan(value):
        canonical = np.array(np.nan, dtype=value.dtype).tobytes()
        if np.asarray(value).tobytes() == canonical:
            return "NaN"
        return "0x" + np.asarray(value).astype(value.dtype.newbyteorder(">")).tobytes().hex()
    if math.isinf(value):
        return "+Infinity" if value > 0 else "-Infinity"
    return float(value)


def fill_to_json(stored: np.dtype, value: Any) -> Any:
    """The JSON form zarrx writes (read back bit for bit; zarr-python 2.18 reads all but
    NaN payloads and raw bits)."""
    nat = native(stored)
    scalar = np.asarray(value, dtype=nat)[()]
    if nat.kind == "b":
        return bool(scalar)
    if nat.kind in "iu":
        return int(scalar)
    if nat.kind in "mM":
        return int(np.asarray(scalar).view("i8"))
    if nat.kind == "f":
        return _float_to_json(scalar)
    if nat.kind == "c":
        return [_float_to_json(scalar.real), _float_to_json(scalar.imag)]
    return "0x" + np.asarray(scalar).tobytes().hex()


# -- extensions ------------------------------------------------------------------------------

def check_extensions(value: Any, *, where: str) -> tuple[dict[str, Any], ...]:
    """An ``extensions`` list: unknown ones that must be understood stop the open."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MetadataError(f"{where}: extensions must be a list, got {value!r}")
    for ext in value:
        if not isinstance(ext, dict) or not isinstance(ext.get("extension"), str):
            raise MetadataError(
                f"{where}: each extension must be an object with an 'extension' URI, got {ext!r}"
            )
        must = ext.get("must_understand", True)
        if not isinstance(must, bool):
            raise MetadataError(
                f"{where}: extension {ext['extension']!r}: must_understand must be true or false"
            )
        if must and registry.extensions.find(ext["extension"]) is None:
            raise UnknownExtensionError(
                f"{where}: extension {ext['extension']!r} must be understood, and no installed "
                "zarrx package provides it (entry-point group 'zarrx.extensions'); install one, "
                "or open the data with an implementation that supports it"
            )
    return tuple(value)


# -- the entry point -------------------------------------------------------------------------

@dataclass(frozen=True)
class EntryPoint:
    """The ``zarr.json`` of a draft hierarchy."""

    zarr_format: str = CORE_URI
    metadata_encoding: str = CORE_URI
    metadata_key_suffix: str = ".json"
    extensions: tuple[dict[str, Any], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Any, *, where: str = ENTRY_POINT_KEY) -> EntryPoint:
        if not isinstance(doc, dict):
            raise MetadataError(f"{where}: the entry point must be a JSON object")
        fmt = doc.get("zarr_format")
        match = _CORE.match(fmt) if isinstance(fmt, str) else None
        if match is None:
            raise MetadataError(
                f"{where}: zarr_format must be the core protocol URI {CORE_URI!r}, got {fmt!r}"
            )
        if match.group(1) != "3":
            raise MetadataError(
                f"{where}: core protocol version {match.group(1)}.{match.group(2)} is not "
                "supported; zarrx reads version 3 of the draft"
            )
        encoding = doc.get("metadata_encoding", CORE_URI)
        if encoding not in _JSON_ENCODINGS:
            raise UnknownExtensionError(
                f"{where}: metadata_encoding {encoding!r} is not supported; zarrx reads the "
                f"JSON encoding {CORE_URI!r}"
            )
        suffix = doc.get("metadata_key_suffix", ".json")
        if not isinstance(suffix, str) or not _SUFFIX.match(suffix):
            raise MetadataError(
                f"{where}: metadata_key_suffix must be a string of the characters a-z A-Z "
                f"0-9 - _ . (no '/'), got {suffix!r}"
            )
        extensions = check_extensions(doc.get("extensions", []), where=where)
        known = {"zarr_format", "metadata_encoding", "metadata_key_suffix", "extensions"}
        return cls(fmt, encoding, suffix, extensions,
                   {k: v for k, v in doc.items() if k not in known})

    def to_json(self) -> dict[str, Any]:
        # Exactly these four keys: zarr-python 2.18 refuses an entry point with others.
        return {
            "zarr_format": self.zarr_format,
            "metadata_encoding": self.metadata_encoding,
            "metadata_key_suffix": self.metadata_key_suffix,
            "extensions": list(self.extensions),
            **self.extra,
        }


DEFAULT_ENTRY_POINT = EntryPoint()


def is_draft_entry_point(doc: Any) -> bool:
    """Whether a parsed root ``zarr.json`` names the draft's core protocol (any version)."""
    fmt = doc.get("zarr_format") if isinstance(doc, dict) else None
    return isinstance(fmt, str) and _CORE.match(fmt) is not None


def entry_point_from(raw: bytes | None, *, required: bool) -> EntryPoint | None:
    """The entry point of a store from its ``zarr.json`` bytes; ``None`` when the store is
    not a draft hierarchy (an error instead when ``required``)."""
    if raw is None:
        return None
    if not required and b"protocol" not in bytes(raw):
        return None  # a v3 root document (maybe large): leave its parsing to the v3 layout
    try:
        doc = load_json(raw, where=ENTRY_POINT_KEY)
    except MetadataError:
        if required:
            raise
        return None
    if not is_draft_entry_point(doc):
        if required:
            raise MetadataError(
                f"{ENTRY_POINT_KEY}: not a Zarr v3.0 draft entry point (zarr_format "
                f"{doc.get('zarr_format') if isinstance(doc, dict) else doc!r}); expected "
                f"{CORE_URI!r}"
            )
        return None
    return EntryPoint.from_json(doc)


# -- codecs ----------------------------------------------------------------------------------

def compressor_from_json(value: Any, *, where: str) -> Any:
    """The codec of a ``compressor`` object, by URI through the registry, else numcodecs."""
    if not isinstance(value, Mapping) or not isinstance(value.get("codec"), str):
        raise MetadataError(
            f"{where}: compressor must be an object with a 'codec' URI, got {value!r}"
        )
    uri = value["codec"]
    config = value.get("configuration") or {}
    if not isinstance(config, Mapping):
        raise MetadataError(f"{where}: compressor configuration must be an object")
    try:
        cls = registry.codecs.find(uri)
        if cls is not None:
            return cls.from_config(dict(config))
        match = _CODEC_URI.match(uri)
        if match is None:
            raise UnknownCodecError(
                f"unknown codec {uri!r}: no installed package registers this URI "
                "(entry-point group 'zarrx.codecs')"
            )
        from zarrx.codecs.numcodecs_compat import numcodecs_codec

        try:
            return numcodecs_codec(match.group(1), dict(config))
        except MetadataError as e:
            raise UnknownCodecError(f"codec {uri!r}: {e}") from None
    except MetadataError as e:
        raise type(e)(f"{where}: {e}") from None


def codec_uri(codec: Any) -> str:
    """The draft URI of a codec object (its registered alias, or by numcodecs id)."""
    for alias in getattr(codec, "aliases", ()):
        if alias.startswith(CODEC_URI_PREFIX):
            return alias
    codec_id = getattr(codec, "codec_id", None)
    if codec_id:
        return f"{CODEC_URI_PREFIX}{codec_id}/1.0"
    raise MetadataError(f"codec {codec.name!r} has no Zarr v3.0 draft URI")


def compressor_to_json(codec: Any, itemsize: int) -> dict[str, Any]:
    """``{"codec": URI, "configuration": …}`` with numcodecs' configuration, as zarr-python
    2.18 writes and reads it."""
    from zarrx.codecs.numcodecs_compat import to_numcodecs_config

    config = {k: v for k, v in to_numcodecs_config(codec, itemsize).items() if k != "id"}
    return {"codec": codec_uri(codec), "configuration": config}


def _filters(attributes: Mapping[str, Any], *, where: str) -> tuple[Any, ...] | None:
    """zarr-python 2.18's numcodecs filters in ``attributes["filters"]`` (``None`` when that
    attribute is not a list of numcodecs configurations: then it is an ordinary attribute)."""
    value = attributes.get("filters")
    if not isinstance(value, list) or not value or not all(
        isinstance(f, dict) and isinstance(f.get("id"), str) for f in value
    ):
        return None
    from zarrx.codecs.numcodecs_compat import numcodecs_codec

    try:
        return tuple(numcodecs_codec(f["id"], f) for f in value)
    except MetadataError as e:
        raise type(e)(f"{where}: attributes['filters']: {e}") from None


# -- node names ------------------------------------------------------------------------------

def validate_path(path: str) -> str:
    """Check every name of a node path against seed 000's rules (``""`` is the root)."""
    if not path:
        return path
    for name in path.split("/"):
        reason = (
            "it is empty" if not name
            else "it has characters other than a-z A-Z 0-9 - _ ." if not _NAME.match(name)
            else "it consists only of periods" if set(name) == {"."}
            else f"it is {len(name)} characters long (at most 255)" if len(name) > 255
            else None
        )
        if reason:
            raise InvalidKeyError(
                f"invalid node name {name!r} in path {'/' + path!r}: {reason} "
                "(Zarr v3.0 draft node names: 1-255 characters from a-z A-Z 0-9 - _ ., "
                "not only periods, case-sensitive)"
            )
    return path


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
    #: The key of the chunk of a 0-d array: ``c`` (seed 000), ``c0`` for zarr-python 2.18.
    zero_d_key: str = "c"

    zarr_format = FORMAT
    node_type = "array"
    dimension_names = None

    @property
    def dtype(self) -> np.dtype:
        return native(self.stored_dtype)

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
        from zarrx.metadata.v2 import StoredOrder

        ndim = len(self.shape)
        chain: list[Any] = []
        if self.chunk_memory_layout == "F" and ndim > 1:
            transpose = registry.codecs.get("transpose")
            chain.append(transpose.from_config({"order": list(range(ndim))[::-1]}))
        if self.filters:
            chain.append(StoredOrder(self.stored_dtype))
            chain.extend(self.filters)
        chain.append(registry.codecs.get("bytes")(endian=_endian(self.stored_dtype)))
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
        separator = doc.get("dimension_separator", separator)  # zarr-python 2.18 writes both
        if separator not in ("/", "."):
            raise MetadataError(
                f"{where}: dimension_separator must be '/' or '.', got {separator!r}"
            )
        fill = parse_fill(stored, doc["fill_value"], where=where)
        check_extensions(doc.get("extensions", []), where=where)
        compressor = (
            None if doc.get("compressor") is None
            else compressor_from_json(doc["compressor"], where=where)
        )
        attributes = dict(parse_attributes(doc.get("attributes"), where=where))
        filters = _filters(attributes, where=where)
        if filters is not None:
            del attributes["filters"]
        cps = _parse_transformers(doc.get("storage_transformers"), len(shape), where=where)
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


def _endian(dtype: np.dtype) -> str | None:
    if not has_byte_order(dtype):
        return None
    order = dtype.byteorder
    if order == "=":
        order = "<" if np.little_endian else ">"
    return "little" if order == "<" else "big"


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
        isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in shape
    ):
        raise MetadataError(
            f"{where}: chunk_grid chunk_shape must be a list of non-negative integers, "
            f"got {shape!r}"
        )
    if len(shape) != ndim:
        raise MetadataError(
            f"{where}: chunk_shape {shape} has rank {len(shape)} but the array has rank {ndim}"
        )
    separator = value.get("separator", "/")
    if separator not in ("/", "."):
        raise MetadataError(f"{where}: chunk_grid separator must be '/' or '.', got {separator!r}")
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

    zarr_format = FORMAT
    node_type = "group"

    @classmethod
    def from_json(
        cls, doc: Any, entry_point: EntryPoint = DEFAULT_ENTRY_POINT, *, where: str = "group"
    ) -> GroupMetadataDraft:
        if not isinstance(doc, dict):
            raise MetadataError(f"{where}: group metadata must be a JSON object")
        check_extensions(doc.get("extensions", []), where=where)
        return cls(
            parse_attributes(doc.get("attributes"), where=where),
            entry_point,
            extra={k: v for k, v in doc.items() if k != "attributes"},
        )

    def to_json(self) -> dict[str, Any]:
        return {"attributes": self.attributes, **self.extra}

    def with_attributes(self, attributes: dict[str, Any]) -> GroupMetadataDraft:
        """Written attributes make an implicit group explicit."""
        return replace(self, attributes=dict(attributes), implicit=False)

    def with_entry_point(self, entry_point: EntryPoint) -> GroupMetadataDraft:
        return replace(self, entry_point=entry_point)


# -- creation --------------------------------------------------------------------------------

def array_metadata_draft(
    *,
    shape: Any,
    dtype: Any,
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
    extensions: Any = None,
    where: str = "array",
) -> ArrayMetadataDraft:
    """Validated draft metadata for a new array: the document is built, then parsed like
    any other, so what zarrx writes is what it reads."""
    from zarrx.creation import DEFAULT_COMPRESSORS, _codec_list, normalize_chunks
    from zarrx.data_types.core import DataType

    if serializer != "auto":
        raise MetadataError(f"{where}: the Zarr v3.0 draft has no serializer; leave 'auto'")
    if dimension_names is not None:
        raise MetadataError(f"{where}: the Zarr v3.0 draft has no dimension_names")
    if order not in ("C", "F"):
        raise MetadataError(f"{where}: order must be 'C' or 'F', got {order!r}")
    if isinstance(shape, int):
        shape = (shape,)
    shape = parse_shape(list(shape), where=where)
    if ml_name(dtype):  # else NumPy (with ml_dtypes) would make it raw bits, losing the type
        raise UnknownDataTypeError(
            f"{where}: the Zarr v3.0 draft has no data type {ml_name(dtype)!r}; use "
            "zarr_format=3 or 2"
        )
    stored = np.dtype(dtype)
    if stored.byteorder == "=":
        stored = stored.newbyteorder("<" if np.little_endian else ">")
    data_type = data_type_to_json(stored)
    chunk_shape = normalize_chunks(chunks, shape, stored.itemsize)
    separator = "/"
    if chunk_key_encoding is not None:
        separator = dict(chunk_key_encoding).get("configuration", {}).get("separator", "/")
    codecs = _codec_list(DEFAULT_COMPRESSORS if compressors == "auto" else compressors,
                         where=where)
    if len(codecs) > 1:
        raise MetadataError(f"{where}: the Zarr v3.0 draft takes one compressor, got {len(codecs)}")
    filter_codecs = _codec_list(filters, where=where)
    nat = native(stored)
    if fill_value is None:
        fill = np.zeros((), dtype=nat)[()]
    elif nat.kind in "biufc":
        fill = DataType.from_numpy(nat).coerce_fill(fill_value)
    elif nat.kind == "V" and isinstance(fill_value, bytes):
        fill = np.frombuffer(fill_value.ljust(nat.itemsize, b"\0"), dtype=nat)[0]
    else:
        fill = np.asarray(fill_value, dtype=nat)[()]
    doc: dict[str, Any] = {
        "shape": list(shape),
        "data_type": data_type,
        "chunk_grid": {"type": "regular", "chunk_shape": list(chunk_shape),
                       "separator": separator},
        "chunk_memory_layout": order,
    }
    if codecs:
        doc["compressor"] = compressor_to_json(codecs[0], stored.itemsize)
    doc["fill_value"] = fill_to_json(stored, fill)
    doc["extensions"] = list(check_extensions(list(extensions or []), where=where))
    user_attributes = dict(attributes or {})
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
    if shards is not None:
        shard_shape = normalize_chunks(shards, shape, stored.itemsize)
        if not shape or any(s % c for s, c in zip(shard_shape, chunk_shape)):
            raise MetadataError(
                f"{where}: shards {shard_shape} must be a multiple of chunks {chunk_shape}"
            )
        doc["storage_transformers"] = [{
            "extension": SHARDING_URI,
            "type": "indexed",
            "configuration": {
                "chunks_per_shard": [s // c for s, c in zip(shard_shape, chunk_shape)],
            },
        }]
    return ArrayMetadataDraft.from_json(doc, where=where)


# -- the key layout --------------------------------------------------------------------------

class DraftLayout:
    """Where a draft hierarchy keeps each node's document and chunks (one entry point)."""

    zarr_format = FORMAT
    #: Creating a node writes no documents for its ancestors.
    implicit_groups = True

    def __init__(self, entry_point: EntryPoint = DEFAULT_ENTRY_POINT) -> None:
        self.entry_point = entry_point

    @property
    def suffix(self) -> str:
        return self.entry_point.metadata_key_suffix

    # -- keys ----------------------------------------------------------------------------------
    def _meta(self, path: str) -> str:
        return f"{META_ROOT}/{validate_path(path)}" if path else META_ROOT

    def array_key(self, path: str) -> str:
        return f"{self._meta(path)}.array{self.suffix}"

    def group_key(self, path: str) -> str:
        return f"{self._meta(path)}.group{self.suffix}"

    def meta_prefix(self, path: str) -> str:
        return f"{self._meta(path)}/"

    def data_prefix(self, path: str) -> str:
        return f"{DATA_ROOT}/{validate_path(path)}/" if path else f"{DATA_ROOT}/"

    def document_keys(self, path: str) -> list[str]:
        return [self.array_key(path), self.group_key(path)]

    # -- reading -------------------------------------------------------------------------------
    def parse(self, path: str, docs: Mapping[str, bytes | None]) -> Any | None:
        """The node whose document is in ``docs``: an array first, then an explicit group
        (the seed's order of existence checks); ``None`` when neither is there."""
        array_key, group_key = self.document_keys(path)
        if docs.get(array_key) is not None:
            doc = load_json(docs[array_key], where=array_key)  # type: ignore[arg-type]
            return ArrayMetadataDraft.from_json(doc, self.entry_point, where=array_key)
        if docs.get(group_key) is not None:
            doc = load_json(docs[group_key], where=group_key)  # type: ignore[arg-type]
            return GroupMetadataDraft.from_json(doc, self.entry_point, where=group_key)
        return None

    def read_nodes(self, store: Store, paths: Sequence[str]) -> list[Any]:
        """Existence as the seed orders it: the array document, the group document, then
        ``list_dir`` of the path's metadata prefix (non-empty: an implicit group)."""
        keys = [k for path in paths for k in self.document_keys(path)]
        docs = dict(zip(keys, store.get_many([(k, None) for k in keys])))
        found: list[Any] = []
        for path in paths:
            meta = self.parse(path, docs)
            if meta is None:
                child_keys, prefixes = store.list_dir(self.meta_prefix(path))
                if child_keys or prefixes:
                    meta = GroupMetadataDraft(entry_point=self.entry_point, implicit=True)
            elif meta.node_type == "array" and not meta.shape:
                meta = self._zero_d(store, path, meta)
            found.append(meta)
        return found

    def _zero_d(self, store: Store, path: str, meta: ArrayMetadataDraft) -> ArrayMetadataDraft:
        """zarr-python 2.18 keeps the chunk of a 0-d array at ``c0``: use it when only it
        exists."""
        prefix = self.data_prefix(path)
        seed_key, peer_key = f"{prefix}c", f"{prefix}c0"
        have_seed, have_peer = store.get_many([(seed_key, None), (peer_key, None)])
        if have_seed is None and have_peer is not None:
            return replace(meta, zero_d_key="c0")
        return meta

    def child_paths(self, store: Store, path: str) -> list[str]:
        """Children as the seed discovers them: ``list_dir`` of the metadata prefix; keys
        ending in ``.array``/``.group`` + suffix, and prefixes (implicit groups)."""
        keys, prefixes = store.list_dir(self.meta_prefix(path))
        names = {p.rstrip("/").rsplit("/", 1)[-1] for p in prefixes}
        for key in keys:
            base = key.rsplit("/", 1)[-1]
            for ending in (f".array{self.suffix}", f".group{self.suffix}"):
                if base.endswith(ending) and len(base) > len(ending):
                    names.add(base[: -len(ending)])
        return sorted(f"{path}/{n}" if path else n for n in names)

    # -- writing -------------------------------------------------------------------------------
    def documents(self, path: str, meta: Any) -> dict[str, bytes]:
        layout = DraftLayout(meta.entry_point)
        key = layout.array_key(path) if meta.node_type == "array" else layout.group_key(path)
        return {key: dump_json(meta.to_json())}

    attribute_documents = documents

    def new_group(self, attributes: dict[str, Any]) -> GroupMetadataDraft:
        return GroupMetadataDraft(attributes=attributes, entry_point=self.entry_point)

    def prepare_store(self, store: Store, path: str, meta: Any) -> Any:
        """Before a node is created: write the entry point if the store has none, else
        adopt the store's (its suffix decides the keys)."""
        validate_path(path)
        ours = dump_json(meta.entry_point.to_json())  # written only where there is none yet
        raw = store.atomic_update(ENTRY_POINT_KEY, lambda old: ours if old is None else old)
        if raw is ours:
            return meta
        return meta.with_entry_point(entry_point_from(raw, required=True))

    def erase(self, store: Store, path: str, meta: Any) -> None:
        """Erase a node as the seed says: an array's document and chunks; a group's
        document (if explicit) and everything below its metadata and data prefixes."""
        layout = DraftLayout(meta.entry_point)
        if meta.node_type == "array":
            store.erase(layout.array_key(path))
            store.erase_prefix(layout.data_prefix(path))
            return
        if not getattr(meta, "implicit", False):
            store.erase(layout.group_key(path))
        store.erase_prefix(layout.meta_prefix(path))
        store.erase_prefix(layout.data_prefix(path))
