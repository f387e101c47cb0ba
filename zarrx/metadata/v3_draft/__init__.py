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
chunk ``(i, j)`` of ``/P``  ``data/root/P/c<i><sep><j>`` (``c0`` or ``c`` when 0-d)
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
the seed's ``c``, and reads only ``c0``; zarrx reads both (``c`` when only it exists) and
writes new 0-d arrays at ``c0`` (docs/formats.md).

>>> entry = EntryPoint.from_json({"zarr_format": CORE_URI, "metadata_encoding": CORE_URI,
...                               "metadata_key_suffix": ".json", "extensions": []})
>>> DraftLayout(entry).array_key("foo/baz"), DraftLayout(entry).data_prefix("foo/baz")
('meta/root/foo/baz.array.json', 'data/root/foo/baz/')
"""

from zarrx.data_types.fill import native
from zarrx.metadata.v3_draft.array import ArrayMetadataDraft, GroupMetadataDraft
from zarrx.metadata.v3_draft.codecs import codec_uri, compressor_from_json, compressor_to_json
from zarrx.metadata.v3_draft.data_types import (
    COMPLEX_URIS,
    CORE_DTYPES,
    DATETIME_URI,
    DATETIME_URIS,
    core_dtype,
    data_type_to_json,
    fill_to_json,
    parse_data_type,
    parse_fill,
)
from zarrx.metadata.v3_draft.entry_point import (
    CODEC_URI_PREFIX,
    CORE_URI,
    DATA_ROOT,
    DEFAULT_ENTRY_POINT,
    ENTRY_POINT_KEY,
    FORMAT,
    META_ROOT,
    SHARDING_URI,
    EntryPoint,
    check_extensions,
    entry_point_from,
    extension_to_json,
    is_draft_entry_point,
    parse_node_extensions,
)
from zarrx.metadata.v3_draft.layout import DraftLayout, validate_path

__all__ = [
    "CODEC_URI_PREFIX",
    "COMPLEX_URIS",
    "CORE_DTYPES",
    "CORE_URI",
    "DATA_ROOT",
    "DATETIME_URI",
    "DATETIME_URIS",
    "DEFAULT_ENTRY_POINT",
    "ENTRY_POINT_KEY",
    "FORMAT",
    "META_ROOT",
    "SHARDING_URI",
    "ArrayMetadataDraft",
    "DraftLayout",
    "EntryPoint",
    "GroupMetadataDraft",
    "check_extensions",
    "codec_uri",
    "compressor_from_json",
    "compressor_to_json",
    "core_dtype",
    "data_type_to_json",
    "entry_point_from",
    "extension_to_json",
    "fill_to_json",
    "is_draft_entry_point",
    "native",
    "parse_data_type",
    "parse_fill",
    "parse_node_extensions",
    "validate_path",
]
