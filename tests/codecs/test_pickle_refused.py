"""No code runs from stored data: a codec that unpickles (numcodecs' ``pickle``, as a v3
``numcodecs.pickle`` codec, a v2 compressor or filter, or a draft compressor or filter) is
refused at open and again at decode, unless the process opted in with
``zarrx.config.set(allow_pickle=True)``."""

from __future__ import annotations

import builtins
import json
import pickle
from typing import Any

import numcodecs
import numpy as np
import pytest

import zarrx
from zarrx.errors import UnsafeCodecError, ZarrxError
from zarrx.storage import MemoryStore

DRAFT_CORE = "https://purl.org/zarr/spec/protocol/core/3.0"
DRAFT_ENTRY = {"zarr_format": DRAFT_CORE, "metadata_encoding": DRAFT_CORE,
               "metadata_key_suffix": ".json", "extensions": []}


class Payload:
    """Unpickling this runs code: it sets an attribute on ``builtins``."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, ("import builtins; builtins.zarrx_test_pickle_ran = True",))


PAYLOAD = pickle.dumps(Payload())


@pytest.fixture(autouse=True)
def _no_payload_ran():
    yield
    ran = getattr(builtins, "zarrx_test_pickle_ran", False)
    if ran:
        del builtins.zarrx_test_pickle_ran
    assert not ran, "a stored pickle was unpickled"


def put(store: MemoryStore, key: str, doc: Any) -> None:
    store.set(key, json.dumps(doc).encode())


def v3_store() -> MemoryStore:
    store = MemoryStore()
    put(store, "zarr.json", {
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "numcodecs.pickle", "configuration": {"protocol": 5}}]})
    store.set("c/0", PAYLOAD)
    return store


def v2_store(**codecs: Any) -> MemoryStore:
    store = MemoryStore()
    put(store, ".zarray", {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<i4",
                           "fill_value": 0, "order": "C", "compressor": None, "filters": None,
                           **codecs})
    store.set("0", PAYLOAD)
    return store


def draft_store(**fields: Any) -> MemoryStore:
    store = MemoryStore()
    put(store, "zarr.json", DRAFT_ENTRY)
    doc = {"shape": [4], "data_type": "<i4",
           "chunk_grid": {"type": "regular", "chunk_shape": [4], "separator": "/"},
           "chunk_memory_layout": "C", "fill_value": 0, "extensions": [], "attributes": {}}
    doc.update(fields)
    put(store, "meta/root/a.array.json", doc)
    store.set("data/root/a/c0", PAYLOAD)
    return store


STORES = {
    "v3 numcodecs.pickle": (v3_store, {}, "zarr.json"),
    "v2 compressor": (v2_store, {"compressor": {"id": "pickle", "protocol": 5}}, ".zarray"),
    "v2 filter": (v2_store, {"filters": [{"id": "pickle"}]}, ".zarray"),
    "draft compressor": (draft_store, {"compressor": {
        "codec": "https://purl.org/zarr/spec/codec/pickle/1.0", "configuration": {}}},
        "a.array.json"),
    "draft filter": (draft_store, {"attributes": {"filters": [{"id": "pickle"}]}},
                     "a.array.json"),
}


def open_stored(kind: str) -> zarrx.Array:
    make, fields, _ = STORES[kind]
    store = make(**fields)
    return zarrx.open_array(store, path="a" if kind.startswith("draft") else None, mode="r")


@pytest.mark.parametrize("kind", sorted(STORES))
def test_opening_is_refused_and_says_how_to_opt_in(kind: str) -> None:
    with pytest.raises(UnsafeCodecError) as refused:
        open_stored(kind)
    message = str(refused.value)
    assert STORES[kind][2] in message  # which document
    assert "numcodecs.pickle" in message  # which codec
    assert "unpickles stored bytes" in message  # why
    assert "runs whatever code" in message
    assert "zarrx.config.set(allow_pickle=True)" in message  # how to opt in
    assert isinstance(refused.value, ZarrxError)
    assert isinstance(refused.value, ValueError)


@pytest.mark.parametrize("kind", ["v3 numcodecs.pickle", "v2 compressor", "draft compressor"])
def test_decoding_is_refused_when_the_opt_in_has_ended(kind: str) -> None:
    """Opened while allowed, read after: the chunk is not unpickled. (A pickle *filter* on
    a numeric array makes bytes where an array is expected: such a chain is refused even
    when allowed, as out of order.)"""
    with zarrx.config.set(allow_pickle=True):
        a = open_stored(kind)
    with pytest.raises(UnsafeCodecError, match=r"allow_pickle=True"):
        a[...]


def test_creating_with_the_pickle_codec_is_refused_without_the_opt_in() -> None:
    for codecs in ({"compressors": numcodecs.Pickle()},
                   {"compressors": {"name": "numcodecs.pickle"}},
                   {"compressors": {"id": "pickle"}, "zarr_format": 2}):
        with pytest.raises(UnsafeCodecError):
            zarrx.create_array(MemoryStore(), shape=(3,), dtype="i4", **codecs)


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_opted_in_pickled_chunks_round_trip(zarr_format: int) -> None:
    store = MemoryStore()
    values = np.array([3, -1, 7, 12], dtype="i4")
    with zarrx.config.set(allow_pickle=True):
        a = zarrx.create_array(store, shape=(4,), dtype="i4", chunks=(2,),
                               compressors=numcodecs.Pickle(), zarr_format=zarr_format)
        a[...] = values
        np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[...], values)
    with pytest.raises(UnsafeCodecError):
        zarrx.open_array(store, mode="r")  # a cached parse does not outlive the opt-in


def test_the_opt_in_is_off_by_default_and_takes_only_a_bool() -> None:
    assert zarrx.config.get("allow_pickle") is False
    with pytest.raises(ValueError, match="allow_pickle"):
        zarrx.config.set(allow_pickle="yes")
    assert zarrx.config.get("allow_pickle") is False


@pytest.mark.parametrize("zarr_format", [3, 2])
@pytest.mark.parametrize("dtype", [str, bytes])
def test_object_arrays_through_vlen_codecs_stay_readable(zarr_format: int, dtype: Any) -> None:
    store = MemoryStore()
    values = np.array(["a", "bcd", "", "é"] if dtype is str else [b"a", b"bcd", b"", b"\x00"],
                      dtype=object)
    zarrx.create_array(store, shape=(4,), dtype=dtype, chunks=(3,),
                       zarr_format=zarr_format)[...] = values
    assert zarrx.open_array(store, mode="r")[...].tolist() == values.tolist()
