"""The Zarr v3.0 editor's draft (seed 000, with 001's complex types), to the letter.

Hand-written documents follow the seed's examples and tables; zarrx-written hierarchies
are checked key by key. zarr-python 2.18's variant is covered in tests/interop/draft.
"""

from __future__ import annotations

import gzip
import json
import math
from typing import Any

import numcodecs
import numpy as np
import pytest

import zarrx
from zarrx import registry
from zarrx.errors import (
    FillValueError,
    FormatMismatchError,
    InvalidKeyError,
    MetadataError,
    NodeNotFoundError,
    NodeTypeError,
    UnknownCodecError,
    UnknownDataTypeError,
    UnknownExtensionError,
)
from zarrx.metadata import v3_draft
from zarrx.metadata.v3_draft import CORE_URI, DraftLayout
from zarrx.storage import LocalStore, MemoryStore

DRAFT = "3-draft"
GZIP_URI = "https://purl.org/zarr/spec/codec/gzip/1.0"
ENTRY = {
    "zarr_format": CORE_URI,
    "metadata_encoding": CORE_URI,
    "metadata_key_suffix": ".json",
    "extensions": [],
}
#: Seed 000, "Entry point metadata", second example (an extension that may be ignored).
ENTRY_WITH_EXTENSION = {
    **ENTRY,
    "extensions": [{
        "extension": "http://example.org/zarr/extension/foo",
        "must_understand": False,
        "configuration": {"foo": "bar"},
    }],
}
#: Seed 000, "Array metadata", first example.
SEED_ARRAY = {
    "shape": [10000, 1000],
    "data_type": "<f8",
    "chunk_grid": {"type": "regular", "chunk_shape": [1000, 100], "separator": "/"},
    "chunk_memory_layout": "C",
    "compressor": {"codec": GZIP_URI, "configuration": {"level": 1}},
    "fill_value": "NaN",
    "extensions": [],
    "attributes": {"foo": 42, "bar": "apples", "baz": [1, 2, 3, 4]},
}
#: Seed 000, "Array metadata", second example (an extension data type with a fallback).
SEED_DATETIME_ARRAY = {
    **SEED_ARRAY,
    "data_type": {
        "extension": "https://purl.org/zarr/spec/protocol/extensions/datetime-dtypes/1.0",
        "type": "<M8[ns]",
        "fallback": "<i8",
    },
    "fill_value": None,
    "attributes": {},
}
#: Seed 000, "Group metadata" example (its trailing comma removed: it is not JSON).
SEED_GROUP = {"attributes": {"spam": "ham", "eggs": 42}}


def put(store: Any, key: str, doc: Any) -> None:
    store.set(key, json.dumps(doc).encode())


def array_doc(data_type: Any = "<i4", shape: list[int] | None = None, **kwargs: Any) -> dict:
    shape = [6] if shape is None else shape
    doc = {
        "shape": shape,
        "data_type": data_type,
        "chunk_grid": {"type": "regular", "chunk_shape": kwargs.pop("chunks", shape),
                       "separator": "/"},
        "chunk_memory_layout": "C",
        "fill_value": 0,
        "extensions": [],
        "attributes": {},
    }
    doc.update(kwargs)
    return doc


def draft_store() -> MemoryStore:
    """A store holding only the default entry point."""
    store = MemoryStore()
    put(store, "zarr.json", ENTRY)
    return store


class CountingStore(MemoryStore):
    """Records the store operations the protocol performs."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, Any]] = []

    def get(self, key: str, byte_range: Any = None) -> bytes | None:
        self.calls.append(("get", key))
        return super().get(key, byte_range)

    def get_many(self, requests: Any) -> list[bytes | None]:
        self.calls.append(("get_many", [k for k, _ in requests]))
        return [MemoryStore.get(self, k, r) for k, r in requests]

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        self.calls.append(("list_dir", prefix))
        return super().list_dir(prefix)


# -- the seed's examples, by hand ---------------------------------------------------------

@pytest.fixture
def seed_hierarchy() -> tuple[MemoryStore, np.ndarray]:
    """The seed's examples in one hierarchy: a group at /foo/bar, the gzip array at
    /foo/baz/qux (so /, /foo and /foo/baz are implicit), the datetime array at /foo/times."""
    store = MemoryStore()
    put(store, "zarr.json", ENTRY_WITH_EXTENSION)
    put(store, "meta/root/foo/bar.group.json", SEED_GROUP)
    put(store, "meta/root/foo/baz/qux.array.json", SEED_ARRAY)
    put(store, "meta/root/foo/times.array.json", SEED_DATETIME_ARRAY)
    chunk = np.arange(100_000, dtype="<f8").reshape(1000, 100) / 7
    store.set("data/root/foo/baz/qux/c0/0", gzip.compress(chunk.tobytes(), compresslevel=1))
    store.set("data/root/foo/baz/qux/c9/9", gzip.compress((-chunk).tobytes(), compresslevel=1))
    return store, chunk


def test_seed_hierarchy_opens(seed_hierarchy: tuple[MemoryStore, np.ndarray]) -> None:
    store, chunk = seed_hierarchy
    root = zarrx.open(store)
    assert isinstance(root, zarrx.Group)
    assert root.zarr_format == DRAFT
    assert root.metadata.implicit
    assert root.metadata.entry_point.extensions == tuple(ENTRY_WITH_EXTENSION["extensions"])
    assert [name for name, _ in root.members(max_depth=None)] == [
        "foo", "foo/bar", "foo/baz", "foo/baz/qux", "foo/times",
    ]
    assert dict(root["foo/bar"].attrs) == {"spam": "ham", "eggs": 42}
    assert not root["foo/bar"].metadata.implicit
    assert root["foo/baz"].metadata.implicit

    qux = root["foo/baz/qux"]
    assert (qux.shape, qux.dtype, qux.chunks, qux.cdata_shape) == (
        (10000, 1000), np.dtype("float64"), (1000, 100), (10, 10))
    assert math.isnan(qux.fill_value)
    assert dict(qux.attrs) == {"foo": 42, "bar": "apples", "baz": [1, 2, 3, 4]}
    np.testing.assert_array_equal(qux[:1000, :100], chunk)
    np.testing.assert_array_equal(qux[9000:, 900:], -chunk)
    assert np.isnan(qux[1000:1010, 100:120]).all()
    assert qux[999, 99] == chunk[999, 99]
    assert np.isnan(qux[5000, 5])

    times = zarrx.open(store, path="foo/times")
    assert times.dtype == np.dtype("M8[ns]")  # the seed's datetime extension is understood
    assert times.fill_value == np.datetime64(0, "ns")  # null: any value; zarrx uses zero
    assert times[0, 0] == np.datetime64(0, "ns")


def test_seed_group_example_is_not_json() -> None:
    store = draft_store()
    store.set("meta/root/g.group.json", b'{"attributes": {"spam": "ham", "eggs": 42,}}')
    with pytest.raises(MetadataError, match=r"meta/root/g\.group\.json: invalid JSON"):
        zarrx.open(store, path="g")


def test_seed_documents_round_trip(seed_hierarchy: tuple[MemoryStore, np.ndarray]) -> None:
    """Writing attributes rewrites the document with everything else as it was."""
    store, _ = seed_hierarchy
    qux = zarrx.open_array(store, path="foo/baz/qux", mode="r+")
    qux.attrs["new"] = True
    doc = json.loads(store.get("meta/root/foo/baz/qux.array.json"))
    assert doc == {**SEED_ARRAY, "attributes": {**SEED_ARRAY["attributes"], "new": True}}
    times = zarrx.open_array(store, path="foo/times", mode="r+")
    times.attrs["x"] = 1
    doc = json.loads(store.get("meta/root/foo/times.array.json"))
    assert doc == {**SEED_DATETIME_ARRAY, "attributes": {"x": 1}}
    assert json.loads(store.get("zarr.json")) == ENTRY_WITH_EXTENSION  # never rewritten


# -- storage keys (the seed's tables) -----------------------------------------------------

@pytest.mark.parametrize(("node_type", "path", "key"), [
    ("array", "", "meta/root.array.json"),
    ("group", "", "meta/root.group.json"),
    ("group", "foo", "meta/root/foo.group.json"),
    ("array", "foo", "meta/root/foo.array.json"),
    ("group", "foo/bar", "meta/root/foo/bar.group.json"),
    ("array", "foo/baz", "meta/root/foo/baz.array.json"),
])
def test_metadata_key_table(node_type: str, path: str, key: str) -> None:
    layout = DraftLayout()
    assert (layout.array_key if node_type == "array" else layout.group_key)(path) == key
    store = MemoryStore()
    if node_type == "array":
        zarrx.create_array(store, name=path, shape=(2,), dtype="u1", zarr_format=DRAFT)
    else:
        zarrx.create_group(store, path=path, zarr_format=DRAFT)
    assert store.list() == sorted(["zarr.json", key])
    assert json.loads(store.get("zarr.json")) == ENTRY
    node = zarrx.open(store, path=path)
    assert node.metadata.node_type == node_type


def test_data_key_table() -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, name="foo/baz", shape=(4, 4), chunks=(2, 2), dtype="<i2",
                           zarr_format=DRAFT, compressors=None)
    a[:2, :2] = 1
    assert [k for k in store.list() if k.startswith("data/")] == ["data/root/foo/baz/c0/0"]
    assert a.metadata.chunk_key((0, 0)) == "c0/0"
    root = zarrx.create_array(MemoryStore(), shape=(3,), chunks=(2,), dtype="u1",
                              zarr_format=DRAFT)
    root[:] = 5
    assert [k for k in root.store.list() if k.startswith("data/")] == [
        "data/root/c0", "data/root/c1"]


def test_regular_grid_example() -> None:
    """Seed 000, "Regular grids": shape (10, 200, 3000), chunks (5, 20, 400)."""
    store = MemoryStore()
    a = zarrx.create_array(store, name="g", shape=(10, 200, 3000), chunks=(5, 20, 400),
                           dtype="u1", zarr_format=DRAFT, compressors=None)
    assert a.cdata_shape == (2, 10, 8)
    assert a.metadata.chunk_key((1, 23, 45)) == "c1/23/45"
    a[7, 150, 900] = 1
    assert [k for k in store.list() if k.startswith("data/")] == ["data/root/g/c1/7/2"]
    chunk = np.frombuffer(store.get("data/root/g/c1/7/2"), "u1").reshape(5, 20, 400)
    assert chunk[2, 10, 100] == 1
    assert chunk.sum() == 1


def test_zero_dimensional_key() -> None:
    """Seed 000 names the chunk of a 0-d array ``c``; zarr-python 2.18 reads and writes
    ``c0`` (its key for the empty chunk coordinate). zarrx writes ``c0``, so zarr-python
    2.18 finds the data (docs/formats.md)."""
    store = MemoryStore()
    a = zarrx.create_array(store, name="s", shape=(), dtype="<f4", zarr_format=DRAFT)
    a[...] = 2.5
    assert store.get("data/root/s/c0") is not None
    assert store.get("data/root/s/c") is None
    assert a.metadata.to_json()["chunk_grid"]["chunk_shape"] == []
    assert zarrx.open_array(store, path="s")[()] == np.float32(2.5)


def test_zero_dimensional_seed_key() -> None:
    """A 0-d chunk stored at the seed's ``c`` is read there, and written there."""
    store = draft_store()
    put(store, "meta/root/s.array.json", array_doc("<i8", []))
    store.set("data/root/s/c", np.int64(-3).tobytes())
    a = zarrx.open_array(store, path="s", mode="r+")
    assert a.metadata.zero_d_key == "c"
    assert a[()] == -3
    a[...] = 11
    assert np.frombuffer(store.get("data/root/s/c"), "<i8")[0] == 11
    assert store.get("data/root/s/c0") is None


def test_zero_dimensional_zarr2_key() -> None:
    """zarr-python 2.18 keeps a 0-d chunk at ``c0``: read it, and keep writing it there."""
    store = draft_store()
    put(store, "meta/root/s.array.json", array_doc("<i8", []))
    store.set("data/root/s/c0", np.int64(-3).tobytes())
    a = zarrx.open_array(store, path="s", mode="r+")
    assert a[()] == -3
    a[...] = 11
    assert np.frombuffer(store.get("data/root/s/c0"), "<i8")[0] == 11
    assert store.get("data/root/s/c") is None


@pytest.mark.parametrize("separator", ["/", "."])
def test_separator(separator: str) -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, name="a", shape=(4, 4), chunks=(2, 2), dtype="u1",
                           zarr_format=DRAFT,
                           chunk_key_encoding={"name": "v2",
                                               "configuration": {"separator": separator}})
    a[2:, :2] = 3
    assert [k for k in store.list() if k.startswith("data/")] == [f"data/root/a/c1{separator}0"]
    doc = json.loads(store.get("meta/root/a.array.json"))
    assert doc["chunk_grid"] == {"type": "regular", "chunk_shape": [2, 2],
                                 "separator": separator}


def test_dimension_separator_overrides_grid_separator() -> None:
    """zarr-python 2.18 writes ``dimension_separator`` beside the grid's ``separator``."""
    doc = array_doc("u1", [4], chunks=[2], dimension_separator=".")
    doc["chunk_grid"]["separator"] = "."
    store = draft_store()
    put(store, "meta/root/a.array.json", doc)
    assert zarrx.open_array(store, path="a").metadata.chunk_key((3,)) == "c3"
    doc2 = array_doc("u1", [4, 4], chunks=[2, 2], dimension_separator=".")
    put(store, "meta/root/b.array.json", doc2)
    b = zarrx.open_array(store, path="b")
    assert b.metadata.chunk_key((1, 0)) == "c1.0"


# -- data types and memory layouts --------------------------------------------------------

CORE = [
    "bool", "i1", "<i2", "<i4", "<i8", ">i2", ">i4", ">i8", "u1", "<u2", "<u4", "<u8",
    ">u2", ">u4", ">u8", "<f2", "<f4", "<f8", ">f2", ">f4", ">f8", "<c8", "<c16", ">c8", ">c16",
]


@pytest.mark.parametrize("identifier", CORE)
def test_core_data_types(identifier: str) -> None:
    stored = np.dtype("|b1" if identifier == "bool" else identifier)
    values = (np.arange(6) % 2 == 1) if identifier == "bool" else (np.arange(6) * 3 - 7)
    data = np.asarray(values).astype(stored)
    store = draft_store()
    fill = False if identifier == "bool" else 0
    put(store, "meta/root/a.array.json", array_doc(identifier, [6], fill_value=fill))
    store.set("data/root/a/c0", data.tobytes())
    a = zarrx.open_array(store, path="a")
    assert a.dtype == stored.newbyteorder("=") if stored.byteorder != "|" else stored
    assert a.metadata.stored_dtype == stored
    np.testing.assert_array_equal(a[...], data)
    if identifier == "bool":
        assert store.get("data/root/a/c0") == b"\x00\x01\x00\x01\x00\x01"
    # zarrx writes the same identifier and the same bytes.
    out = MemoryStore()
    b = zarrx.create_array(out, name="a", shape=(6,), dtype=stored, zarr_format=DRAFT,
                           compressors=None, fill_value=fill)
    b[...] = data
    assert json.loads(out.get("meta/root/a.array.json"))["data_type"] == identifier
    assert out.get("data/root/a/c0") == data.tobytes()


@pytest.mark.parametrize("bits", [8, 16, 24, 128])
def test_raw_data_types(bits: int) -> None:
    n = bits // 8
    raw = bytes(range(1, 3 * n + 1))
    store = draft_store()
    put(store, "meta/root/r.array.json",
        array_doc(f"r{bits}", [3], fill_value="0x" + "ab" * n))
    store.set("data/root/r/c0", raw)
    a = zarrx.open_array(store, path="r")
    assert a.dtype == np.dtype(f"V{n}")
    assert a[...].tobytes() == raw
    assert a.fill_value.tobytes() == b"\xab" * n
    b = zarrx.create_array(MemoryStore(), name="r", shape=(3,), dtype=f"V{n}",
                           zarr_format=DRAFT, fill_value=b"\x01" * n)
    doc = b.metadata.to_json()
    assert doc["data_type"] == f"r{bits}"
    assert doc["fill_value"] == "0x" + "01" * n


@pytest.mark.parametrize("identifier", ["r0", "r12", "<f16", "int32", "|b1", "<U4", "c8"])
def test_unknown_data_types(identifier: str) -> None:
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc(identifier))
    with pytest.raises(UnknownDataTypeError, match=re_escape(identifier)):
        zarrx.open(store, path="a")


def re_escape(text: str) -> str:
    import re

    return re.escape(repr(text))


def test_extension_data_type_fallback() -> None:
    ext = {"extension": "http://example.org/zarr/extension/decimal64", "type": "decimal(16, 4)",
           "fallback": "<i8"}
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc(ext, [3], fill_value=5))
    store.set("data/root/a/c0", np.array([1, -2, 3], "<i8").tobytes())
    a = zarrx.open_array(store, path="a", mode="r+")
    assert a.dtype == np.dtype("int64")
    np.testing.assert_array_equal(a[...], [1, -2, 3])
    a.attrs["k"] = "v"  # the extension's description is written back as it was
    assert json.loads(store.get("meta/root/a.array.json"))["data_type"] == ext

    raw_ext = {"extension": "http://example.org/zarr/extension/float128", "type": "<f16",
               "fallback": "r128"}
    put(store, "meta/root/b.array.json", array_doc(raw_ext, [1], fill_value=None))
    assert zarrx.open_array(store, path="b").dtype == np.dtype("V16")

    no_fallback = {"extension": "http://example.org/zarr/extension/ragged", "type": "x"}
    put(store, "meta/root/c.array.json", array_doc(no_fallback))
    with pytest.raises(UnknownDataTypeError, match="extension/ragged"):
        zarrx.open(store, path="c")


def test_complex_extension_data_type_of_zarr2() -> None:
    ext = {"extension": next(iter(v3_draft.COMPLEX_URIS)), "type": ">c16", "fallback": None}
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc(ext, [2], fill_value=[1.0, "-Infinity"]))
    a = zarrx.open_array(store, path="a")
    assert a.metadata.stored_dtype == np.dtype(">c16")
    assert a.fill_value == complex(1, -np.inf)


@pytest.mark.parametrize("order", ["C", "F"])
def test_chunk_memory_layout(order: str) -> None:
    data = np.arange(24, dtype="<u2").reshape(2, 3, 4)
    stored = data.tobytes(order=order)  # the seed's C and F element orders
    store = draft_store()
    put(store, "meta/root/a.array.json",
        array_doc("<u2", [2, 3, 4], chunk_memory_layout=order))
    store.set("data/root/a/c0/0/0", stored)
    np.testing.assert_array_equal(zarrx.open_array(store, path="a")[...], data)
    out = MemoryStore()
    b = zarrx.create_array(out, name="a", shape=data.shape, dtype="<u2", order=order,
                           zarr_format=DRAFT, compressors=None)
    b[...] = data
    assert out.get("data/root/a/c0/0/0") == stored
    assert json.loads(out.get("meta/root/a.array.json"))["chunk_memory_layout"] == order


def test_chunk_memory_layout_must_be_known() -> None:
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc(chunk_memory_layout="Z"))
    with pytest.raises(MetadataError, match="chunk_memory_layout must be 'C' or 'F'"):
        zarrx.open(store, path="a")
    put(store, "meta/root/b.array.json", array_doc(
        chunk_memory_layout={"extension": "http://example.org/morton", "type": "z"}))
    with pytest.raises(UnknownExtensionError, match=r"example\.org/morton"):
        zarrx.open(store, path="b")


# -- fill values -----------------------------------------------------------------------------

def _bits(value: Any, dtype: str) -> bytes:
    return np.asarray(value, dtype=dtype).tobytes()


@pytest.mark.parametrize(("data_type", "fill", "expected"), [
    ("<i4", 7, _bits(7, "<i4")),
    ("<i4", -2147483648, _bits(-2**31, "<i4")),
    (">u8", 18446744073709551615, _bits(2**64 - 1, "<u8")),
    ("<i4", "0x0000000a", _bits(10, "<i4")),
    ("<i2", "0b1111111111111110", _bits(-2, "<i2")),
    ("u1", "0xff", _bits(255, "u1")),
    ("bool", True, b"\x01"),
    (">f8", "NaN", _bits(np.nan, "<f8")),
    ("<f4", "+Infinity", _bits(np.inf, "<f4")),
    ("<f4", "Infinity", _bits(np.inf, "<f4")),
    (">f4", "-Infinity", _bits(-np.inf, "<f4")),
    ("<f8", "0x7ff8000000000001", bytes.fromhex("7ff8000000000001")[::-1]),
    ("<f2", "0b0011110000000000", _bits(1.0, "<f2")),
    ("<f8", 1e300, _bits(1e300, "<f8")),
    ("<f8", None, _bits(0, "<f8")),
    ("<i8", None, _bits(0, "<i8")),
    ("<c8", [1.5, "NaN"], _bits(complex(1.5, np.nan), "<c8")),
    (">c16", "0x3ff00000000000004000000000000000", _bits(1 + 2j, "<c16")),
])
def test_fill_values(data_type: str, fill: Any, expected: bytes) -> None:
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc(data_type, [4], chunks=[2], fill_value=fill))
    a = zarrx.open_array(store, path="a")
    assert np.asarray(a.fill_value).tobytes() == expected
    assert a[2:].tobytes() == expected * 2  # chunks never written read as the fill value


@pytest.mark.parametrize(("data_type", "fill", "match"), [
    ("<i2", 70000, "out of range"),
    ("u1", -1, "out of range"),
    ("<i4", 1.5, "expected an integer"),
    ("<i4", "0x0a", "exactly 8 hex digits"),
    ("<f4", "0b101", "exactly 32 binary digits"),
    ("bool", 3, "expected true or false"),
    ("<f4", "nan", "expected a number"),
    ("<f4", 1e300, "out of range"),
    ("r16", [1, 2, 3], "expected a '0x' string"),
])
def test_bad_fill_values(data_type: str, fill: Any, match: str) -> None:
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc(data_type, fill_value=fill))
    with pytest.raises(FillValueError, match=match):
        zarrx.open(store, path="a")


@pytest.mark.parametrize(("dtype", "fill", "written"), [
    ("<f8", np.nan, "NaN"),
    (">f4", np.inf, "+Infinity"),
    ("<f2", -np.inf, "-Infinity"),
    ("<f8", np.frombuffer(bytes.fromhex("7ff8000000000001")[::-1], "<f8")[0],
     "0x7ff8000000000001"),
    ("<f4", -0.0, -0.0),
    ("<c8", complex(np.nan, -np.inf), ["NaN", "-Infinity"]),
    ("<i8", -(2**63), -(2**63)),
    ("|b1", True, True),
])
def test_written_fill_values(dtype: str, fill: Any, written: Any) -> None:
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(2,), dtype=dtype, fill_value=fill,
                       zarr_format=DRAFT)
    doc = json.loads(store.get("meta/root/a.array.json"))
    assert doc["fill_value"] == written
    a = zarrx.open_array(store, path="a")
    assert np.asarray(a.fill_value).tobytes() == np.asarray(fill, dtype=a.dtype).tobytes()


# -- the entry point -------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", ["", ".meta", ".JSON", "_v3.json"])
def test_metadata_key_suffix(suffix: str) -> None:
    store = MemoryStore()
    put(store, "zarr.json", {**ENTRY, "metadata_key_suffix": suffix})
    a = zarrx.create_array(store, name="x/arr", shape=(3,), dtype="<i2", zarr_format=DRAFT)
    a[:] = [1, 2, 3]
    zarrx.create_group(store, path="x/grp", zarr_format=DRAFT, attributes={"a": 1})
    assert store.get(f"meta/root/x/arr.array{suffix}") is not None
    assert store.get(f"meta/root/x/grp.group{suffix}") is not None
    assert json.loads(store.get("zarr.json"))["metadata_key_suffix"] == suffix
    root = zarrx.open_group(store, mode="r+")
    assert [n for n, _ in root.members(max_depth=None)] == ["x", "x/arr", "x/grp"]
    np.testing.assert_array_equal(root["x/arr"][...], [1, 2, 3])
    assert dict(root["x/grp"].attrs) == {"a": 1}
    del root["x/arr"]
    assert store.get(f"meta/root/x/arr.array{suffix}") is None


def test_default_suffix_when_absent() -> None:
    store = MemoryStore()
    put(store, "zarr.json", {"zarr_format": CORE_URI, "metadata_encoding": CORE_URI})
    put(store, "meta/root/a.array.json", array_doc())
    assert zarrx.open(store, path="a").shape == (6,)


def test_extensions_must_understand() -> None:
    uri = "http://example.org/zarr/extension/required"
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc())
    put(store, "zarr.json", {**ENTRY, "extensions": [
        {"extension": uri, "must_understand": True}]})
    for call in (lambda: zarrx.open(store), lambda: zarrx.open(store, path="a"),
                 lambda: zarrx.open_group(store, zarr_format=DRAFT)):
        with pytest.raises(UnknownExtensionError, match=uri):
            call()
    with pytest.raises(UnknownExtensionError, match=uri):
        zarrx.create_array(store, name="b", shape=(1,), dtype="u1", zarr_format=DRAFT)
    with registry.extensions.override(uri, object()):  # an installed implementation
        assert zarrx.open(store, path="a").shape == (6,)
    put(store, "zarr.json", {**ENTRY, "extensions": [
        {"extension": uri, "must_understand": False, "configuration": {"x": 1}}]})
    assert zarrx.open(store, path="a").shape == (6,)


def test_array_extensions_must_understand() -> None:
    uri = "http://example.org/zarr/extension/array-thing"
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc(extensions=[
        {"extension": uri, "must_understand": True}]))
    with pytest.raises(UnknownExtensionError, match=uri):
        zarrx.open(store, path="a")
    put(store, "meta/root/a.array.json", array_doc(extensions=[
        {"extension": uri, "must_understand": False}]))
    assert zarrx.open(store, path="a").shape == (6,)


@pytest.mark.parametrize(("entry", "error", "match"), [
    ({**ENTRY, "metadata_encoding": "https://example.org/yaml"}, UnknownExtensionError,
     "metadata_encoding"),
    ({**ENTRY, "zarr_format": "https://purl.org/zarr/spec/protocol/core/4.0"}, MetadataError,
     "version 4.0"),
    ({**ENTRY, "metadata_key_suffix": "/x"}, MetadataError, "metadata_key_suffix"),
    ({**ENTRY, "extensions": [{"must_understand": False}]}, MetadataError, "'extension' URI"),
])
def test_bad_entry_points(entry: dict, error: type, match: str) -> None:
    store = MemoryStore()
    put(store, "zarr.json", entry)
    with pytest.raises(error, match=match):
        zarrx.open(store)


def test_entry_point_variants() -> None:
    """Seed 002's ``http`` URI and ``application/json``, and unknown names, are accepted."""
    store = MemoryStore()
    put(store, "zarr.json", {"zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0",
                             "metadata_encoding": "application/json", "later": {"x": 1}})
    put(store, "meta/root.group.json", {"attributes": {"k": 1}})
    g = zarrx.open(store)
    assert isinstance(g, zarrx.Group)
    assert dict(g.attrs) == {"k": 1}


# -- node names ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["a b", "caf\u00e9", "...", "x" * 256, "a:b", "a*"])
def test_invalid_node_names(name: str) -> None:
    store = MemoryStore()
    with pytest.raises(InvalidKeyError, match=r"node name|store key"):
        zarrx.create_array(store, name=f"g/{name}", shape=(1,), dtype="u1", zarr_format=DRAFT)
    with pytest.raises(InvalidKeyError, match=r"node name|store key"):
        zarrx.create_group(store, path=name, zarr_format=DRAFT)
    assert store.list() == []  # nothing written, not even the entry point
    zarrx.create_group(store, zarr_format=DRAFT)
    with pytest.raises(InvalidKeyError, match=r"node name|store key"):
        zarrx.open(store, path=name)
    assert name not in zarrx.open_group(store)


@pytest.mark.parametrize("name", ["x" * 255, "A-b_c.d", ".hidden", "0", "-", "a..b"])
def test_valid_node_names(name: str) -> None:
    store = MemoryStore()
    zarrx.create_array(store, name=name, shape=(1,), dtype="u1", zarr_format=DRAFT)
    assert store.get(f"meta/root/{name}.array.json") is not None
    assert [n for n, _ in zarrx.open_group(store).members()] == [name]


def test_node_names_are_case_sensitive() -> None:
    store = MemoryStore()
    lower = zarrx.create_array(store, name="foo", shape=(2,), dtype="u1", zarr_format=DRAFT)
    upper = zarrx.create_array(store, name="FOO", shape=(3,), dtype="u1", zarr_format=DRAFT)
    lower[:] = 1
    upper[:] = 2
    root = zarrx.open_group(store)
    assert sorted(root.array_keys()) == ["FOO", "foo"]
    np.testing.assert_array_equal(root["foo"][...], [1, 1])
    np.testing.assert_array_equal(root["FOO"][...], [2, 2, 2])


# -- implicit groups, existence and discovery -------------------------------------------------

def test_creating_writes_no_group_documents() -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, name="a/b/c", shape=(2,), dtype="u1", zarr_format=DRAFT)
    a[:] = 1
    assert store.list() == ["data/root/a/b/c/c0", "meta/root/a/b/c.array.json", "zarr.json"]
    for path in ("", "a", "a/b"):
        g = zarrx.open_group(store, path=path)
        assert g.metadata.implicit
        assert g.zarr_format == DRAFT
    assert zarrx.open(store, path="a/b/c").shape == (2,)
    with pytest.raises(NodeTypeError):
        zarrx.open_group(store, path="a/b/c")
    with pytest.raises(NodeNotFoundError):
        zarrx.open(store, path="a/x", mode="r")
    with pytest.raises(NodeTypeError, match="is an array"):
        zarrx.create_array(store, name="a/b/c/d", shape=(1,), dtype="u1", zarr_format=DRAFT)


def test_group_creation_through_groups_stays_implicit_above() -> None:
    store = MemoryStore()
    root = zarrx.create_group(store, zarr_format=DRAFT)
    sub = root.create_group("p/q")
    sub.create_array("arr", shape=(2,), dtype="<f4")
    assert sorted(k for k in store.list() if k.startswith("meta/")) == [
        "meta/root.group.json", "meta/root/p/q.group.json", "meta/root/p/q/arr.array.json"]
    assert root["p"].metadata.implicit
    assert not root["p/q"].metadata.implicit
    assert root["p/q/arr"].zarr_format == DRAFT


def test_creating_a_group_at_an_implicit_group_keeps_members() -> None:
    store = MemoryStore()
    zarrx.create_array(store, name="a/b", shape=(1,), dtype="u1", zarr_format=DRAFT)
    g = zarrx.create_group(store, path="a", zarr_format=DRAFT, attributes={"k": 1})
    assert not g.metadata.implicit
    assert sorted(g.array_keys()) == ["b"]
    with pytest.raises(zarrx.errors.NodeExistsError):
        zarrx.create_group(store, path="a", zarr_format=DRAFT)  # explicit now
    zarrx.create_array(store, name="c/d", shape=(1,), dtype="u1", zarr_format=DRAFT)
    with pytest.raises(zarrx.errors.NodeExistsError):
        zarrx.create_array(store, name="c", shape=(1,), dtype="u1", zarr_format=DRAFT)


def test_attributes_make_an_implicit_group_explicit() -> None:
    store = MemoryStore()
    zarrx.create_array(store, name="a/b", shape=(1,), dtype="u1", zarr_format=DRAFT)
    g = zarrx.open_group(store, path="a", mode="r+")
    g.attrs["title"] = "now explicit"
    assert json.loads(store.get("meta/root/a.group.json")) == {
        "attributes": {"title": "now explicit"}}
    again = zarrx.open_group(store, path="a")
    assert not again.metadata.implicit
    assert dict(again.attrs) == {"title": "now explicit"}


def test_existence_order() -> None:
    """get(array key), then get(group key), then list_dir: as seed 000 orders them."""
    store = CountingStore()
    put(store, "zarr.json", ENTRY)
    put(store, "meta/root/both.array.json", array_doc())
    put(store, "meta/root/both.group.json", SEED_GROUP)
    put(store, "meta/root/grp.group.json", SEED_GROUP)
    put(store, "meta/root/imp/x.array.json", array_doc())
    assert zarrx.open(store, path="both").metadata.node_type == "array"  # the array wins
    for path, kind in (("both", "array"), ("grp", "group"), ("imp", "group"), ("none", None)):
        store.calls.clear()
        meta = v3_draft.DraftLayout().read_nodes(store, [path])[0]
        assert (meta and meta.node_type) == kind
        assert store.calls[0] == (
            "get_many", [f"meta/root/{path}.array.json", f"meta/root/{path}.group.json"])
        listed = [c for c in store.calls if c[0] == "list_dir"]
        assert listed == ([] if path in ("both", "grp") else [("list_dir", f"meta/root/{path}/")])


def test_children_are_discovered_with_list_dir() -> None:
    """Seed 000, "Discover children of a group": a group at /foo/bar and an array at
    /foo/baz/qux; listing /foo finds bar (explicit) and baz (implied)."""
    store = CountingStore()
    put(store, "zarr.json", ENTRY)
    put(store, "meta/root/foo/bar.group.json", {"attributes": {}})
    put(store, "meta/root/foo/baz/qux.array.json", array_doc())
    foo = zarrx.open_group(store, path="foo")
    store.calls.clear()
    members = dict(foo.members())
    assert sorted(members) == ["bar", "baz"]
    assert not members["bar"].metadata.implicit
    assert members["baz"].metadata.implicit
    assert ("list_dir", "meta/root/foo/") in store.calls


def test_all_nodes_from_list_prefix() -> None:
    """Seed 000, "Discover all nodes": ``list_prefix("meta/root/")``; keys are explicit
    nodes, intermediate prefixes implicit groups. zarrx's recursive listing agrees."""
    store = MemoryStore()
    zarrx.create_array(store, name="a/b/c", shape=(1,), dtype="u1", zarr_format=DRAFT)
    zarrx.create_group(store, path="a/g", zarr_format=DRAFT)
    zarrx.create_array(store, name="x", shape=(1,), dtype="u1", zarr_format=DRAFT)
    zarrx.create_group(store, path="y/z/w", zarr_format=DRAFT)
    expected = set()
    for key in store.list_prefix("meta/root/"):
        path = key.removeprefix("meta/root/").rsplit(".", 2)[0]
        parts = path.split("/")
        expected.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    found = {name for name, _ in zarrx.open_group(store).members(max_depth=None)}
    assert found == expected == {"a", "a/b", "a/b/c", "a/g", "x", "y", "y/z", "y/z/w"}


# -- erasing ---------------------------------------------------------------------------------

def _hierarchy(store: Any) -> None:
    for name in ("arr", "arrow", "grp/inner", "grp2/inner", "imp/deep/x", "imp2/x"):
        a = zarrx.create_array(store, name=name, shape=(4,), chunks=(2,), dtype="u1",
                               zarr_format=DRAFT)
        a[:] = 1
    zarrx.create_group(store, path="grp", zarr_format=DRAFT, attributes={"g": 1})


def _keys_under(store: Any, *paths: str) -> list[str]:
    return [k for k in store.list() if any(
        k.startswith((f"{root}/{p}.", f"{root}/{p}/"))
        for p in paths for root in ("meta/root", "data/root"))]


@pytest.mark.parametrize("store_kind", ["memory", "local"])
def test_erase_array(store_kind: str, tmp_path: Any) -> None:
    store = MemoryStore() if store_kind == "memory" else LocalStore(str(tmp_path))
    _hierarchy(store)
    before = store.list()
    root = zarrx.open_group(store, mode="r+")
    del root["arr"]
    gone = {"meta/root/arr.array.json", "data/root/arr/c0", "data/root/arr/c1"}
    assert set(before) - set(store.list()) == gone
    assert zarrx.open(store, path="arrow")[...].tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("store_kind", ["memory", "local"])
def test_erase_explicit_group(store_kind: str, tmp_path: Any) -> None:
    store = MemoryStore() if store_kind == "memory" else LocalStore(str(tmp_path))
    _hierarchy(store)
    before = store.list()
    del zarrx.open_group(store, mode="r+")["grp"]
    assert set(before) - set(store.list()) == {
        "meta/root/grp.group.json", "meta/root/grp/inner.array.json",
        "data/root/grp/inner/c0", "data/root/grp/inner/c1"}
    assert "grp2" in zarrx.open_group(store)


@pytest.mark.parametrize("store_kind", ["memory", "local"])
def test_erase_implicit_group(store_kind: str, tmp_path: Any) -> None:
    store = MemoryStore() if store_kind == "memory" else LocalStore(str(tmp_path))
    _hierarchy(store)
    before = store.list()
    del zarrx.open_group(store, mode="r+")["imp"]
    assert set(before) - set(store.list()) == set(_keys_under(MemoryStore(), "imp")) | {
        "meta/root/imp/deep/x.array.json", "data/root/imp/deep/x/c0", "data/root/imp/deep/x/c1"}
    assert "imp" not in zarrx.open_group(store)
    assert "imp2" in zarrx.open_group(store)


def test_erasing_the_last_child_removes_an_implicit_parent() -> None:
    """An implicit group exists only through its descendants (seed 000)."""
    store = MemoryStore()
    zarrx.create_array(store, name="p/only", shape=(1,), dtype="u1", zarr_format=DRAFT)
    del zarrx.open_group(store, path="p", mode="r+")["only"]
    assert store.list() == ["zarr.json"]
    with pytest.raises(NodeNotFoundError):
        zarrx.open(store, path="p", mode="r")


def test_overwrite_erases_the_old_node() -> None:
    store = MemoryStore()
    _hierarchy(store)
    zarrx.create_group(store, path="grp", zarr_format=DRAFT, overwrite=True)
    assert _keys_under(store, "grp") == ["meta/root/grp.group.json"]
    zarrx.create_array(store, name="imp", shape=(2,), dtype="u1", zarr_format=DRAFT,
                       overwrite=True)
    assert _keys_under(store, "imp") == ["meta/root/imp.array.json"]
    g = zarrx.open_group(store, mode="w", zarr_format=DRAFT)  # the root, overwritten
    assert store.list() == ["meta/root.group.json", "zarr.json"]
    assert g.members() == ()


# -- the API and the engine ------------------------------------------------------------------

DTYPES = ["|b1", "|i1", "<u2", ">i4", "<i8", ">u8", "<f2", ">f4", "<f8", "<c8", ">c16",
          "<M8[ms]", ">m8[ns]"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("compressor", [
    None, {"name": "gzip", "configuration": {"level": 2}}, "blosc",
    numcodecs.Zstd(level=2), numcodecs.Zlib(level=1), numcodecs.LZMA(preset=1),
])
def test_round_trip(tmp_path: Any, dtype: str, order: str, compressor: Any) -> None:
    rng = np.random.default_rng(5)
    data = rng.integers(0, 255, size=(9, 7) if order == "C" else (4, 5, 6),
                        dtype="u1").astype(np.dtype(dtype).newbyteorder("="))
    if compressor == "blosc":
        compressor = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1}}
    a = zarrx.create_array(str(tmp_path / "s"), name="d/a", shape=data.shape, dtype=dtype,
                           chunks=(2, 3, 4)[: data.ndim], order=order, compressors=compressor,
                           zarr_format=DRAFT)
    a[1:] = data[1:]
    expected = data.copy()
    expected[0] = a.fill_value
    b = zarrx.open(str(tmp_path / "s"), path="d/a")
    assert b.metadata.stored_dtype == np.dtype(dtype)
    assert b[...].tobytes() == expected.tobytes()
    assert b[::-2, 1].tobytes() == expected[::-2, 1].tobytes()


def test_compressor_uris() -> None:
    store = MemoryStore()
    for codec, name in ((numcodecs.GZip(3), "gzip"), (numcodecs.Blosc(), "blosc"),
                        (numcodecs.Zstd(1), "zstd"), (numcodecs.BZ2(1), "bz2"),
                        (numcodecs.LZ4(), "lz4")):
        zarrx.create_array(store, name=name, shape=(8,), dtype="<f8", compressors=codec,
                           zarr_format=DRAFT)[:] = np.arange(8)
        doc = json.loads(store.get(f"meta/root/{name}.array.json"))
        assert doc["compressor"]["codec"] == f"https://purl.org/zarr/spec/codec/{name}/1.0"
        assert doc["compressor"]["configuration"] == {
            k: v for k, v in codec.get_config().items() if k != "id" and v is not False}
        assert zarrx.open(store, path=name)[...].tolist() == list(range(8))
    assert zarrx.open(store, path="gzip").codecs[-1].name == "gzip"  # zarrx's own, by URI
    with pytest.raises(MetadataError, match="one compressor"):
        zarrx.create_array(store, name="two", shape=(1,), dtype="u1", zarr_format=DRAFT,
                           compressors=[numcodecs.GZip(), numcodecs.Zstd()])
    with pytest.raises(MetadataError, match=r"no Zarr v3\.0 draft URI"):
        zarrx.create_array(store, name="crc", shape=(1,), dtype="u1", zarr_format=DRAFT,
                           compressors={"name": "crc32c"})


def test_unknown_compressor() -> None:
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc(
        compressor={"codec": "https://example.org/codec/magic/1.0", "configuration": {}}))
    with pytest.raises(UnknownCodecError, match=r"example\.org/codec/magic"):
        zarrx.open(store, path="a")
    put(store, "meta/root/b.array.json", array_doc(
        compressor={"codec": "https://purl.org/zarr/spec/codec/nonesuch/1.0"}))
    with pytest.raises(UnknownCodecError, match="nonesuch"):
        zarrx.open(store, path="b")
    put(store, "meta/root/c.array.json", array_doc(compressor={"id": "gzip"}))
    with pytest.raises(MetadataError, match="'codec' URI"):
        zarrx.open(store, path="c")


def test_filters_in_attributes() -> None:
    store = MemoryStore()
    data = np.arange(20, dtype="<i4") ** 2
    a = zarrx.create_array(store, name="a", shape=(20,), chunks=(6,), dtype="<i4",
                           zarr_format=DRAFT, filters=[numcodecs.Delta(dtype="<i4")],
                           attributes={"user": 1})
    a[:] = data
    doc = json.loads(store.get("meta/root/a.array.json"))
    assert doc["attributes"] == {"user": 1, "filters": [
        {"id": "delta", "dtype": "<i4", "astype": "<i4"}]}
    b = zarrx.open_array(store, path="a", mode="r+")
    assert dict(b.attrs) == {"user": 1}
    np.testing.assert_array_equal(b[...], data)
    raw = numcodecs.Zstd().decode(store.get("data/root/a/c1"))  # Delta: first, then steps
    np.testing.assert_array_equal(np.frombuffer(raw, "<i4"), [data[6], *np.diff(data[6:12])])
    b.attrs["more"] = 2
    assert json.loads(store.get("meta/root/a.array.json"))["attributes"]["filters"]
    with pytest.raises(MetadataError, match="'filters'"):
        b.attrs["filters"] = "mine"
    # Without numcodecs configurations, "filters" is an ordinary attribute.
    put(store, "meta/root/c.array.json", array_doc(attributes={"filters": ["a", "b"]}))
    assert dict(zarrx.open(store, path="c").attrs) == {"filters": ["a", "b"]}


def test_sharding_storage_transformer_layout() -> None:
    """zarr-python 2.18's sharding: shards keyed like chunks, inner chunks in any order,
    then 16 bytes (<u8 offset, <u8 nbytes) per inner chunk, C order, at the end."""
    store = MemoryStore()
    a = zarrx.create_array(store, name="s", shape=(6, 4), chunks=(2, 2), shards=(4, 4),
                           dtype="<u2", compressors=None, zarr_format=DRAFT, fill_value=0)
    data = np.arange(24, dtype="<u2").reshape(6, 4) + 1
    a[:2] = data[:2]
    a[4:, 2:] = data[4:, 2:]
    doc = json.loads(store.get("meta/root/s.array.json"))
    assert doc["chunk_grid"]["chunk_shape"] == [2, 2]
    assert doc["storage_transformers"] == [{
        "extension": v3_draft.SHARDING_URI, "type": "indexed",
        "configuration": {"chunks_per_shard": [2, 2]}}]
    assert [k for k in store.list() if k.startswith("data/")] == [
        "data/root/s/c0/0", "data/root/s/c1/0"]
    shard = store.get("data/root/s/c0/0")
    index = np.frombuffer(shard[-64:], "<u8").reshape(2, 2, 2)
    assert index.tolist() == [[[0, 8], [8, 8]], [[2**64 - 1] * 2, [2**64 - 1] * 2]]
    assert shard[:16] == data[:2, :2].tobytes() + data[:2, 2:].tobytes()
    b = zarrx.open_array(store, path="s")
    assert (b.chunks, b.shards) == ((2, 2), (4, 4))
    expected = np.zeros_like(data)
    expected[:2], expected[4:, 2:] = data[:2], data[4:, 2:]
    np.testing.assert_array_equal(b[...], expected)


def test_unknown_storage_transformer_and_grid() -> None:
    store = draft_store()
    put(store, "meta/root/a.array.json", array_doc(storage_transformers=[
        {"extension": "https://example.org/transformer", "type": "x"}]))
    with pytest.raises(UnknownExtensionError, match=r"example\.org/transformer"):
        zarrx.open(store, path="a")
    put(store, "meta/root/b.array.json", array_doc(
        chunk_grid={"extension": "https://example.org/rectilinear", "type": "rect"}))
    with pytest.raises(UnknownExtensionError, match=r"example\.org/rectilinear"):
        zarrx.open(store, path="b")
    put(store, "meta/root/c.array.json", array_doc(shape=[4], chunks=[2, 2]))
    with pytest.raises(MetadataError, match="rank"):
        zarrx.open(store, path="c")
    doc = array_doc()
    del doc["chunk_memory_layout"]
    put(store, "meta/root/d.array.json", doc)
    with pytest.raises(MetadataError, match="missing required names"):
        zarrx.open(store, path="d")


def test_api_formats() -> None:
    store = MemoryStore()
    g = zarrx.open_group(store, mode="a", zarr_format=DRAFT)
    assert g.zarr_format == DRAFT
    assert store.get("meta/root.group.json") is not None
    a = zarrx.open_array(store, mode="w", path="x/y", shape=(3,), dtype="i1",
                         zarr_format=DRAFT)
    assert a.zarr_format == DRAFT
    assert zarrx.open_array(store, path="x/y", zarr_format=DRAFT).shape == (3,)
    with pytest.raises(MetadataError, match="zarr_format must be 3"):
        zarrx.open(store, zarr_format=3)
    with pytest.raises(NodeNotFoundError):
        zarrx.open(store, path="x/y", zarr_format=2, mode="r")
    assert "x" in g
    assert sorted(g.group_keys()) == ["x"]
    v3 = MemoryStore()
    zarrx.create_group(v3, zarr_format=3)
    with pytest.raises(FormatMismatchError, match=r"the group at '/' is zarr_format=3"):
        zarrx.create_array(v3, name="d", shape=(1,), dtype="u1", zarr_format=DRAFT)
    with pytest.raises(MetadataError, match="dimension_names"):
        zarrx.create_array(MemoryStore(), shape=(1,), dtype="u1", zarr_format=DRAFT,
                           dimension_names=["x"])


def test_open_local_paths_and_urls(tmp_path: Any) -> None:
    root = tmp_path / "h"
    zarrx.create_array(str(root), name="a/b", shape=(2, 2), dtype="<f4", zarr_format=DRAFT)[
        ...] = 1.5
    assert zarrx.open(str(root)).zarr_format == DRAFT
    assert zarrx.open(f"file://{root}", path="a/b")[0, 0] == 1.5
    assert zarrx.open(str(root), path="a").metadata.implicit


def test_resize_and_append() -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, name="r", shape=(5,), chunks=(2,), dtype="<i2",
                           zarr_format=DRAFT, fill_value=-1)
    a[:] = np.arange(5)
    a.resize(3)
    assert json.loads(store.get("meta/root/r.array.json"))["shape"] == [3]
    assert store.get("data/root/r/c2") is None
    a.append(np.array([7, 8], "<i2"))
    np.testing.assert_array_equal(zarrx.open(store, path="r")[...], [0, 1, 2, 7, 8])


def test_info_and_tree() -> None:
    store = MemoryStore()
    zarrx.create_array(store, name="p/a", shape=(2, 3), dtype="<f8", zarr_format=DRAFT)
    root = zarrx.open_group(store)
    assert root.tree() == "/\n└── p\n    └── a (2, 3) float64\n"
    assert root["p/a"].info.as_dict()["zarr_format"] == DRAFT


@pytest.mark.parametrize("zarr_format", [2, DRAFT])
def test_raw_fill_value_padded_never_truncated(zarr_format: object) -> None:
    """A raw (void) fill value shorter than the item is padded with NULs; a longer one is
    refused, not cut, in both formats whose creation coerces it."""
    a = zarrx.create_array(MemoryStore(), name="r", shape=(2,), dtype="V4",
                           zarr_format=zarr_format, fill_value=b"\x01\x02")
    assert a.fill_value.tobytes() == b"\x01\x02\x00\x00"
    assert a[...].tobytes() == b"\x01\x02\x00\x00" * 2
    with pytest.raises(FillValueError, match="5 bytes, longer than the data type's 4"):
        zarrx.create_array(MemoryStore(), name="r", shape=(2,), dtype="V4",
                           zarr_format=zarr_format, fill_value=b"\x01" * 5)
