"""zarr-python's convenience layer in zarrx: constructors, save/load, Array and Group
helpers — the behaviour beyond the documentation examples (test_zarr_python_examples)."""

from __future__ import annotations

import doctest
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.errors import (
    ArgumentError,
    CastingError,
    NodeExistsError,
    NodeNotFoundError,
    NodeTypeError,
    ReadOnlyError,
    SelectionError,
    ShapeError,
)
from zarrx.metadata.v3_draft import FORMAT as DRAFT
from zarrx.storage import LocalStore, MemoryStore


@pytest.mark.parametrize("module", ["zarrx.convenience", "zarrx.copying"])
def test_module_examples_run(module: str) -> None:
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted
    assert not result.failed


def test_create_translates_zarr_python_keywords() -> None:
    a = zarrx.create((10, 10), chunk_shape=(5, 5), dtype="i2", compressor=None,
                     dimension_separator=".", path="x/y", zarr_version=3)
    assert (a.path, a.chunks, a.compressors, a.zarr_format) == ("x/y", (5, 5), (), 3)
    assert a.metadata.chunk_key((1, 0)) == "c.1.0"
    v2 = zarrx.create(8, chunks=4, zarr_format=2, compressor={"id": "zlib", "level": 1},
                      dimension_separator="/", fill_value=3)
    assert v2.compressor.to_dict()["name"] == "numcodecs.zlib"
    assert v2.metadata.chunk_key((1,)) == "1"
    assert v2[...].tolist() == [3] * 8
    c = zarrx.create((6,), dtype="u1", codecs=[{"name": "bytes"}, {"name": "gzip"}])
    assert c.serializer.name == "bytes"
    assert [x.name for x in c.compressors] == ["gzip"]
    with pytest.raises(ArgumentError, match="chunk_store"):
        zarrx.create((4,), chunk_store=MemoryStore())
    with pytest.raises(ArgumentError, match="differ"):
        zarrx.create((4,), zarr_format=2, zarr_version=3)
    with pytest.raises(ArgumentError, match="codecs"):
        zarrx.create((4,), codecs=[{"name": "bytes"}], compressor=None)
    store = MemoryStore()
    zarrx.zeros((3,), store=store)
    with pytest.raises(NodeExistsError):
        zarrx.ones((3,), store=store)
    assert zarrx.ones((3,), store=store, mode="w")[...].tolist() == [1, 1, 1]


def test_like_keeps_the_models_format_and_codecs() -> None:
    a = zarrx.create_array(MemoryStore(), shape=(6, 4), chunks=(3, 2), dtype="<i4",
                           zarr_format=2, order="F", fill_value=5,
                           compressors={"id": "zlib", "level": 3})
    for make in (zarrx.zeros_like, zarrx.ones_like, zarrx.empty_like, zarrx.full_like):
        b = make(a)
        assert (b.zarr_format, b.shape, b.chunks, b.dtype, b.order) == (2, (6, 4), (3, 2),
                                                                         a.dtype, "F")
        assert b.compressor.to_dict() == a.compressor.to_dict()
    assert zarrx.full_like(a)[0, 0] == 5
    assert zarrx.zeros_like(a)[0, 0] == 0
    assert zarrx.zeros_like(np.ones((2, 3), "u2")).dtype == np.dtype("u2")
    with pytest.raises(ArgumentError, match="fill_value"):
        zarrx.full_like(np.ones(3))
    s = zarrx.create_array(MemoryStore(), shape=(8,), chunks=(2,), shards=(4,), dtype="f4")
    like = zarrx.zeros_like(s)
    assert (like.chunks, like.shards) == ((2,), (4,))


def test_open_like_and_from_array(tmp_path: Any) -> None:
    src = zarrx.create_array(MemoryStore(), shape=(20, 6), chunks=(4, 3), dtype="i8",
                             fill_value=-1, attributes={"k": 1}, dimension_names=["y", "x"],
                             compressors={"name": "gzip", "configuration": {"level": 2}})
    src[:10] = np.arange(60).reshape(10, 6)
    store = str(tmp_path / "like.zarr")
    opened = zarrx.open_like(src, "x", store=store)  # as zarr-python 3: path in the store
    assert (opened.shape, opened.chunks, opened.fill_value) == ((20, 6), (4, 3), -1)
    opened[0, 0] = 5
    assert zarrx.open_like(src, "x", store=store)[0, 0] == 5  # mode "a": reopened
    copied = zarrx.from_array(str(tmp_path / "from.zarr"), data=src)
    assert copied[...].tobytes() == src[...].tobytes()
    assert dict(copied.attrs) == {"k": 1}
    assert copied.dimension_names == ("y", "x")
    assert [c.name for c in copied.compressors] == ["gzip"]
    assert copied.nchunks_initialized == src.nchunks_initialized == 6  # empty chunks stay so
    with pytest.raises(zarrx.errors.MetadataError, match="v2 has no dimension_names"):
        zarrx.from_array(MemoryStore(), data=src, zarr_format=2)
    unnamed = zarrx.create_array(MemoryStore(), data=src[...], chunks=(4, 3))
    v2 = zarrx.from_array(MemoryStore(), data=unnamed, zarr_format=2, chunks=(10, 6))
    assert (v2.zarr_format, v2.chunks) == (2, (10, 6))
    assert v2[...].tobytes() == src[...].tobytes()
    plain = zarrx.from_array(MemoryStore(), data=[[1, 2], [3, 4]], write_data=False)
    assert plain[...].tolist() == [[0, 0], [0, 0]]


def test_create_array_with_data() -> None:
    data = np.arange(12, dtype=">f8").reshape(3, 4)
    a = zarrx.create_array(MemoryStore(), data=data, chunks=(2, 2))
    assert a[...].tobytes() == data.astype("<f8").tobytes()
    with pytest.raises(ArgumentError, match="shape or data"):
        zarrx.create_array(MemoryStore(), data=data, shape=(3, 4))
    with pytest.raises(ArgumentError, match="dtype or data"):
        zarrx.create_array(MemoryStore(), data=data, dtype="f4")
    with pytest.raises(ArgumentError, match="pass shape"):
        zarrx.create_array(MemoryStore())


def test_a_failed_data_write_leaves_no_array(monkeypatch: Any) -> None:
    store = MemoryStore()
    zarrx.create_group(store)

    def failing(self: Any, selection: Any, value: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(zarrx.Array, "__setitem__", failing)
    with pytest.raises(OSError, match="disk full"):
        zarrx.create_array(store, name="a", data=np.arange(4))
    assert sorted(store.list()) == ["zarr.json"]


def test_default_modes_follow_zarr_python(tmp_path: Any) -> None:
    path = str(tmp_path / "new.zarr")
    g = zarrx.open(path)  # nothing there: mode "a" creates a group
    assert isinstance(g, zarrx.Group)
    assert not g.read_only
    assert zarrx.open_group(str(tmp_path / "other.zarr")).path == ""
    with pytest.raises(NodeNotFoundError):
        zarrx.open_array(str(tmp_path / "none.zarr"))
    zarrx.create_array(path, name="a", shape=(2,), dtype="i1")
    read_only = LocalStore(path, read_only=True)
    assert zarrx.open(read_only, path="a").read_only  # a read-only Store: mode "r"
    with pytest.raises(ReadOnlyError):
        zarrx.open(read_only, path="a")[0] = 1
    with pytest.raises(NodeNotFoundError, match="consolidated"):
        zarrx.open_consolidated(path)
    assert zarrx.group(path, overwrite=True).members() == ()


def test_array_codec_attributes() -> None:
    v3 = zarrx.create_array(MemoryStore(), shape=(4, 6), chunks=(2, 3), dtype="f4",
                            order="F", filters=[{"name": "transpose",
                                                 "configuration": {"order": [1, 0]}}])
    assert v3.order == "F"
    assert [f.name for f in v3.filters] == ["transpose"]  # the second one is order's
    assert v3.serializer.name == "bytes"
    assert [c.name for c in v3.compressors] == ["zstd"]
    again = zarrx.create_array(MemoryStore(), shape=(4, 6), chunks=(2, 3), dtype="f4",
                               order=v3.order, filters=v3.filters, serializer=v3.serializer,
                               compressors=v3.compressors)
    assert again.codecs == v3.codecs
    sharded = zarrx.create_array(MemoryStore(), shape=(8,), chunks=(2,), shards=(4,),
                                 dtype="u1", compressors=None)
    assert (sharded.serializer.name, sharded.compressors, sharded.filters) == ("bytes", (), ())
    assert (sharded.nchunks, sharded.cdata_shape) == (4, (4,))
    sharded[:5] = 1
    assert sharded.nchunks_initialized == 4  # two shards of two chunks
    draft = zarrx.create_array(MemoryStore(), shape=(3, 3), dtype="i2", zarr_format=DRAFT,
                               order="F")
    assert draft.order == "F"
    two = zarrx.create_array(MemoryStore(), shape=(3,), dtype="u1",
                             compressors=[{"name": "gzip"}, {"name": "zstd"}])
    with pytest.raises(zarrx.errors.MetadataError, match="compressors"):
        _ = two.compressor


def test_stored_bytes_info_and_store_path() -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, name="g/a", shape=(10, 10), chunks=(5, 5), dtype="i4")
    a[:5] = 7
    assert a.nchunks_initialized == 2
    assert a.nbytes_stored() == sum(len(store.get(k)) for k in store.list()
                                    if k.startswith("g/a/"))
    text = repr(a.info)
    for part in ("Type        : Array", "Shape       : (10, 10)", "Chunk shape : (5, 5)",
                 "Chunks      : 4", "Codecs", "zstd"):
        assert part in text, text
    complete = repr(a.info_complete())
    for part in ("Chunks initialised : 2 / 4 (50.0%)", "Stored size", "Compression ratio"):
        assert part in complete, complete
    assert a.info_complete().as_dict()["chunks_initialised"] == 2
    assert a.store_path.store is store
    assert a.store_path.path == "g/a"
    assert str(a.store_path).endswith("/g/a")
    g = zarrx.open_group(store, path="g")
    assert "Arrays             : 1" in repr(g.info_complete())
    assert "Type         : Group" in repr(g.info)
    assert g.update_attributes({"a": 1}) is g
    assert a.update_attributes({"b": 2}).attrs.asdict() == {"b": 2}
    assert zarrx.open_group(store, path="g").attrs["a"] == 1


def test_selection_out_fields_and_masks() -> None:
    a = zarrx.create_array(MemoryStore(), data=np.arange(20).reshape(4, 5), chunks=(2, 2))
    out = np.empty((2, 5), dtype=a.dtype)
    assert a.get_basic_selection(slice(1, 3), out=out) is out
    assert out.tolist() == [[5, 6, 7, 8, 9], [10, 11, 12, 13, 14]]
    with pytest.raises(ShapeError, match="out must"):
        a.get_orthogonal_selection(([0], slice(None)), out=np.empty((2, 2)))
    with pytest.raises(SelectionError, match="structured"):
        a.get_basic_selection(..., fields="x")
    with pytest.raises(SelectionError, match="boolean array of shape"):
        a.get_mask_selection([0, 1])
    with pytest.raises(SelectionError, match="boolean array of shape"):
        a.set_mask_selection(np.ones((2, 2), bool), 0)
    rec = zarrx.create_array(MemoryStore(), shape=(3,), dtype=[("x", "<i4"), ("y", "<f8")],
                             zarr_format=2)
    rec[...] = np.array([(1, 0.5), (2, 1.5), (3, 2.5)], dtype=rec.dtype)
    assert rec.get_basic_selection(slice(None), fields="x").tolist() == [1, 2, 3]
    assert rec.get_coordinate_selection([2], fields=["y"]).tolist() == [(2.5,)]


def test_group_helpers() -> None:
    g = zarrx.group(zarr_format=2)
    z = g.zeros(name="z", shape=(4,), chunks=(2,), dtype="i2")
    assert (z.zarr_format, z.fill_value, z.path) == (2, 0, "z")
    assert g.full(name="f", shape=3, fill_value=9, dtype="u1")[...].tolist() == [9, 9, 9]
    assert g.ones_like(name="o", data=z)[...].tolist() == [1, 1, 1, 1]
    assert g.empty_like(name="e", data=np.zeros((2, 2), "f4")).dtype == np.dtype("f4")
    assert g.require_array("z", shape=(4,), dtype="i4") == z  # i2 casts safely to i4
    with pytest.raises(NodeTypeError, match="cast"):
        g.require_array("z", shape=(4,), dtype="i1")
    with pytest.raises(NodeTypeError, match="dtype"):
        g.require_array("z", shape=(4,), dtype="i4", exact=True)
    with pytest.raises(NodeTypeError, match="shape"):
        g.require_array("z", shape=(5,), dtype="i2")
    new = g.require_array("n", shape=(2, 2), dtype="f8", chunks=(1, 2))
    assert (new.chunks, new.zarr_format) == ((1, 2), 2)
    sub = g.require_group("sub")
    assert g.require_group("sub") == sub
    with pytest.raises(NodeTypeError, match="is an array"):
        g.require_group("z")
    with pytest.raises(NodeTypeError, match="is a group"):
        g.require_array("sub", shape=(1,))
    a, b = g.require_groups("sub", "b/c")
    assert (a, b.path) == (sub, "b/c")
    assert sorted(g.group_keys()) == ["b", "sub"]
    assert sorted(g.array_keys()) == ["e", "f", "n", "o", "z"]
    with pytest.raises(ReadOnlyError):
        zarrx.open_group(g.store, mode="r").zeros(name="x", shape=(1,))


def test_tree_levels_and_truncation() -> None:
    g = zarrx.group()
    for i in range(4):
        g.create_group(f"g{i}").create_array("a", shape=(i + 1,), dtype="i1")
    assert str(g.tree(level=0)) == "/\n├── g0\n├── g1\n├── g2\n└── g3\n"
    tree = g.tree(max_nodes=3)
    assert str(tree).startswith("Truncated at max_nodes=3")
    assert repr(g["g1"].tree()) == "/g1\n└── a (2,) int8\n"


def test_save_and_load(tmp_path: Any) -> None:
    path = str(tmp_path / "s.zarr")
    zarrx.save_array(path, np.arange(5, dtype="i2"), chunks=(2,))
    assert zarrx.load(path).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(NodeExistsError):
        zarrx.save_array(path, np.arange(2))
    zarrx.save_array(path, np.arange(2), mode="w")
    assert zarrx.load(path).tolist() == [0, 1]
    zarrx.save_group(path, np.ones(2), x=np.zeros(3))  # replaces the array
    loaded = zarrx.load(path)
    assert repr(loaded) == "<LazyLoader: arr_0, x>"
    assert loaded["x"].tolist() == [0, 0, 0]
    with pytest.raises(KeyError):
        loaded["nope"]
    with pytest.raises(ArgumentError, match="at least one"):
        zarrx.save_group(path)
    v2 = str(tmp_path / "v2.zarr")  # a hierarchy holds nodes of one format (#16)
    zarrx.save(v2, np.arange(3), zarr_format=2, path="sub")
    assert zarrx.open(v2, path="sub", mode="r").zarr_format == 2


OUT_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32",
              "float64", "complex64", "<U4", "S4"]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(OUT_DTYPES[:-2]), st.sampled_from(OUT_DTYPES),
       st.sampled_from(["basic", "orthogonal", "coordinate", "block"]))
def test_out_of_another_dtype_follows_numpys_out_rule(stored: str, wanted: str,
                                                      how: str) -> None:
    """``out=`` of another dtype: cast as NumPy casts into a ufunc's ``out=`` ("same_kind",
    ``np.copyto``'s default), or refused as NumPy refuses it, with ``out`` untouched."""
    a = zarrx.create_array(MemoryStore(), data=(np.arange(20) % 7).astype(stored).reshape(4, 5),
                           chunks=(2, 2))
    read = {
        "basic": lambda out: a.get_basic_selection(slice(0, 2), out=out),
        "orthogonal": lambda out: a.get_orthogonal_selection(([0, 1], slice(None)), out=out),
        "coordinate": lambda out: a.get_coordinate_selection(([0, 1], [2, 3]), out=out),
        "block": lambda out: a.get_block_selection((0, slice(None)), out=out),
    }[how]
    selected = {"basic": a[0:2], "orthogonal": a[0:2], "coordinate": a[[0, 1], [2, 3]],
                "block": a[0:2]}[how]
    expected = np.zeros(selected.shape, wanted)
    out = np.zeros(selected.shape, wanted)
    try:
        np.copyto(expected, selected, casting="same_kind")
    except TypeError:
        with pytest.raises(CastingError, match=f"cannot read {stored} values into out= of "
                                               f"dtype {np.dtype(wanted)}") as e:
            read(out)
        assert isinstance(e.value, TypeError)
        assert not out.any()
    else:
        assert read(out) is out
        np.testing.assert_array_equal(out, expected)
