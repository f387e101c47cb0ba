"""open / create functions, modes and groups, on a local store under tmp_path."""

import json

import numpy as np
import pytest

import zarrx
from zarrx.errors import (
    ArgumentError,
    NodeExistsError,
    NodeNotFoundError,
    NodeTypeError,
    ReadOnlyError,
)


def test_create_and_open_array(tmp_path):
    root = tmp_path / "a.zarr"
    a = zarrx.create_array(str(root), shape=(10, 20), dtype="int16", chunks=(5, 5),
                           attributes={"units": "m"}, dimension_names=["y", "x"])
    a[...] = np.arange(200, dtype="int16").reshape(10, 20)
    doc = json.loads((root / "zarr.json").read_text())
    assert doc["shape"] == [10, 20]
    assert doc["data_type"] == "int16"
    assert doc["dimension_names"] == ["y", "x"]
    assert (root / "c" / "1" / "3").is_file()

    assert not zarrx.open(str(root)).read_only  # mode "a" by default, as zarr-python
    b = zarrx.open(str(root), mode="r")
    assert isinstance(b, zarrx.Array)
    assert b.read_only
    assert b.attrs["units"] == "m"
    np.testing.assert_array_equal(b[...], np.arange(200).reshape(10, 20))
    with pytest.raises(ReadOnlyError):
        b[0, 0] = 1
    with pytest.raises(ReadOnlyError):
        b.attrs["x"] = 1

    c = zarrx.open_array(f"file://{root}", mode="r+")
    c[0, 0] = -1
    assert zarrx.open_array(str(root))[0, 0] == -1


def test_modes(tmp_path):
    root = str(tmp_path / "g.zarr")
    with pytest.raises(NodeNotFoundError):
        zarrx.open(root, mode="r")
    with pytest.raises(NodeNotFoundError):
        zarrx.open_group(root, mode="r+")
    g = zarrx.open_group(root, mode="a", attributes={"k": 1})
    assert isinstance(g, zarrx.Group)
    assert zarrx.open_group(root, mode="a").attrs["k"] == 1
    with pytest.raises(NodeExistsError):
        zarrx.open_group(root, mode="w-")
    g.create_array("x", shape=(3,), dtype="i4")
    g2 = zarrx.open_group(root, mode="w")
    assert list(g2) == []
    assert dict(g2.attrs) == {}
    with pytest.raises(ArgumentError, match="mode"):
        zarrx.open(root, mode="x")
    arr = zarrx.open_array(root, mode="w", path="new", shape=(4,), dtype="u1", fill_value=9)
    assert zarrx.open_array(root, path="new")[...].tolist() == [9, 9, 9, 9]
    assert zarrx.open_array(root, mode="a", path="new", shape=(4,), dtype="u1") == arr
    with pytest.raises(NodeTypeError):
        zarrx.open_array(root, path="")
    with pytest.raises(NodeTypeError):
        zarrx.open_group(root, path="new")


def test_overwrite(tmp_path):
    root = str(tmp_path / "o.zarr")
    a = zarrx.create_array(root, shape=(4,), dtype="f4", chunks=(2,))
    a[...] = 1
    with pytest.raises(NodeExistsError, match="overwrite=True"):
        zarrx.create_array(root, shape=(4,), dtype="f4")
    b = zarrx.create_array(root, shape=(2,), dtype="i1", overwrite=True)
    assert b.shape == (2,)
    assert not (tmp_path / "o.zarr" / "c").exists()


def test_groups(tmp_path):
    g = zarrx.create_group(str(tmp_path / "h.zarr"), attributes={"title": "t"})
    x = g.create_array("x", shape=(5,), dtype="float32", chunks=(2,))
    deep = g.create_array("a/b/c", shape=(2, 2), dtype="uint8")
    assert deep.path == "a/b/c"
    assert isinstance(g["a"], zarrx.Group)
    assert isinstance(g["a/b"], zarrx.Group)
    assert g["a/b/c"] == deep
    assert "x" in g
    assert "a/b" in g
    assert "nope" not in g
    assert [name for name, _ in g.members()] == ["a", "x"]
    assert [name for name, _ in g.members(max_depth=None)] == ["a", "a/b", "a/b/c", "x"]
    assert list(g.array_keys()) == ["x"]
    assert list(g.group_keys()) == ["a"]
    assert g["x"] == x
    with pytest.raises(KeyError, match="no member 'nope'"):
        g["nope"]
    sub = g.create_group("sub", attributes={"n": 1})
    assert g.require_group("sub") == sub
    assert g["sub"].attrs["n"] == 1
    tree = g.tree()
    assert "x (5,) float32" in tree
    assert "c (2, 2) uint8" in tree
    with pytest.raises(NodeTypeError):
        g.create_array("x/y", shape=(1,), dtype="i1")
    del g["a"]
    assert "a" not in g
    assert not (tmp_path / "h.zarr" / "a").exists()


def test_attributes_persist(tmp_path):
    g = zarrx.create_group(str(tmp_path / "at.zarr"))
    g.attrs["a"] = [1, 2]
    g.attrs.update(b="x", c={"d": None})
    del g.attrs["a"]
    again = zarrx.open_group(str(tmp_path / "at.zarr"))
    assert dict(again.attrs) == {"b": "x", "c": {"d": None}}
    with pytest.raises(ValueError, match="JSON"):
        g.attrs["bad"] = object()
    assert "bad" not in zarrx.open_group(str(tmp_path / "at.zarr")).attrs


def test_memory_url_shares_data():
    a = zarrx.create_array("memory://api-test", shape=(3,), dtype="i8")
    a[...] = [1, 2, 3]
    assert zarrx.open("memory://api-test")[...].tolist() == [1, 2, 3]


def test_info_and_repr():
    a = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(10,), dtype="i2", chunks=(3,))
    text = repr(a.info)
    for part in ("Shape", "(10,)", "Chunk shape", "(3,)", "Chunks", ": 4"):
        assert part in text
    assert "shape=(10,)" in repr(a)
