"""Strict where the specifications are: a draft entry point without
``metadata_encoding``, zero chunk sizes in the draft's ``chunk_grid``, and more dimensions
than NumPy arrays can have (in any format) are refused with a zarrx error naming the
document — never a bare NumPy or Python error, at open or at the first read."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.errors import MetadataError
from zarrx.metadata.model import MAX_RANK
from zarrx.storage import MemoryStore

CORE = "https://purl.org/zarr/spec/protocol/core/3.0"
ENTRY = {"zarr_format": CORE, "metadata_encoding": CORE, "metadata_key_suffix": ".json",
         "extensions": []}


def put(store: MemoryStore, key: str, doc: Any) -> None:
    store.set(key, json.dumps(doc).encode())


def draft_array(shape: list[int], chunk_shape: list[int], entry: Any = None) -> MemoryStore:
    store = MemoryStore()
    put(store, "zarr.json", ENTRY if entry is None else entry)
    put(store, "meta/root/a.array.json", {
        "shape": shape, "data_type": "<i4",
        "chunk_grid": {"type": "regular", "chunk_shape": chunk_shape, "separator": "/"},
        "chunk_memory_layout": "C", "fill_value": 0, "extensions": [], "attributes": {}})
    return store


def refused(open_: Any, match: str) -> None:
    """Opening raises a zarrx MetadataError matching ``match``; so would a read."""
    with pytest.raises(MetadataError, match=match):
        open_()[...]


def test_a_draft_entry_point_needs_its_metadata_encoding() -> None:
    entry = {k: v for k, v in ENTRY.items() if k != "metadata_encoding"}
    store = draft_array([4], [2], entry)
    for open_ in (lambda: zarrx.open_array(store, path="a"), lambda: zarrx.open(store),
                  lambda: zarrx.open_group(store, mode="r", zarr_format="3-draft")):
        refused(open_, r"zarr\.json: the entry point has no metadata_encoding")
    put(store, "zarr.json", ENTRY)
    assert zarrx.open_array(store, path="a")[...].tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize(("shape", "chunks"), [([4], [0]), ([4, 4], [2, 0]), ([0], [0]),
                                               ([3, 0, 2], [1, 0, 1])])
def test_draft_chunk_sizes_must_be_positive(shape: list[int], chunks: list[int]) -> None:
    store = draft_array(shape, chunks)
    refused(lambda: zarrx.open_array(store, path="a"),
            r"meta/root/a\.array\.json: chunk_grid chunk_shape must be a list of positive "
            r"integers, got \[")


def test_numpy_s_rank_limit_is_known() -> None:
    np.empty((1,) * MAX_RANK)  # the limit itself is a NumPy array
    with pytest.raises(ValueError, match="dimension"):
        np.empty((1,) * (MAX_RANK + 1))


RANK = MAX_RANK + 1


def v3_document(rank: int) -> dict[str, Any]:
    return {"zarr_format": 3, "node_type": "array", "shape": [1] * rank, "data_type": "int8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1] * rank}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes"}]}


def v2_document(rank: int) -> dict[str, Any]:
    return {"zarr_format": 2, "shape": [1] * rank, "chunks": [1] * rank, "dtype": "|i1",
            "compressor": None, "fill_value": 0, "order": "C", "filters": None}


@pytest.mark.parametrize("fmt", [3, 2, "3-draft"])
def test_a_rank_beyond_numpy_s_is_refused_in_stored_metadata(fmt: Any) -> None:
    store = MemoryStore()
    if fmt == 3:
        put(store, "zarr.json", v3_document(RANK))
        key, path = "zarr.json", None
    elif fmt == 2:
        put(store, ".zarray", v2_document(RANK))
        key, path = ".zarray", None
    else:
        store = draft_array([1] * RANK, [1] * RANK)
        key, path = "meta/root/a.array.json", "a"
    refused(lambda: zarrx.open_array(store, path=path),
            rf"{key.replace('.', '[.]')}: shape has {RANK} dimensions; NumPy arrays have at "
            rf"most {MAX_RANK}")


@pytest.mark.parametrize("fmt", [3, 2, "3-draft"])
def test_a_rank_beyond_numpy_s_is_refused_at_creation_and_the_limit_works(fmt: Any) -> None:
    with pytest.raises(MetadataError, match=f"shape has {RANK} dimensions"):
        zarrx.create_array(MemoryStore(), shape=(1,) * RANK, dtype="i1", zarr_format=fmt)
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(1,) * MAX_RANK, dtype="i1", fill_value=3,
                           zarr_format=fmt)
    a[(0,) * MAX_RANK] = 5
    b = zarrx.open_array(store, mode="r")
    assert b.ndim == MAX_RANK
    assert b[...].reshape(-1).tolist() == [5]
