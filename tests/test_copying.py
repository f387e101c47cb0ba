"""zarrx.copy / copy_all / copy_store: zarr-python 2's helpers, between stores and formats."""

from __future__ import annotations

import io
import tracemalloc
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx import copying
from zarrx.errors import ArgumentError, CopyError, MetadataError
from zarrx.metadata.v3_draft import FORMAT as DRAFT
from zarrx.storage import LocalStore, MemoryStore, ZipStore

FORMATS = [2, 3, DRAFT]


def _hierarchy(store: Any, zarr_format: Any) -> zarrx.Group:
    """A small hierarchy with the things a copy must keep: nested groups, attributes,
    partial and missing chunks, F order, a non-zero fill value, several dtypes."""
    root = zarrx.create_group(store, zarr_format=zarr_format, attributes={"title": "t"})
    a = root.create_array("a", shape=(13, 7), chunks=(4, 3), dtype="f4", fill_value=-1.5,
                          attributes={"units": "m"})
    a[:9] = np.arange(63, dtype="f4").reshape(9, 7)  # the last row of chunks stays empty
    sub = root.create_group("sub", attributes={"depth": 1})
    b = sub.create_array("b", shape=(5, 6), chunks=(2, 4), dtype="<i8", order="F",
                         compressors=None)
    b[...] = np.arange(30).reshape(5, 6) * -3
    deep = sub.create_group("deep")
    c = deep.create_array("c", shape=(40,), chunks=(7,), dtype="u2")
    c[3:33] = np.arange(30, dtype="u2") * 1000
    deep.create_group("empty")
    return root


def _walk(group: zarrx.Group) -> dict[str, Any]:
    """Everything a copy must reproduce, by relative path."""
    out: dict[str, Any] = {"": ("group", dict(group.attrs))}
    for rel, node in group.members(max_depth=None):
        if isinstance(node, zarrx.Array):
            data = node[...]
            out[rel] = ("array", dict(node.attrs), node.shape, node.chunks, data.dtype.str,
                        data.tobytes(), np.asarray(node.fill_value).tobytes(), node.order)
        else:
            out[rel] = ("group", dict(node.attrs))
    return out


def _store(kind: str, tmp_path: Any, name: str) -> Any:
    if kind == "memory":
        return MemoryStore()
    if kind == "local":
        return LocalStore(str(tmp_path / f"{name}.zarr"))
    return ZipStore(str(tmp_path / f"{name}.zip"), mode="w")


@pytest.mark.parametrize("source_format", FORMATS, ids=str)
@pytest.mark.parametrize("dest_format", FORMATS, ids=str)
def test_copy_moves_a_hierarchy_between_formats_and_stores(
    tmp_path: Any, source_format: Any, dest_format: Any
) -> None:
    kinds = ["memory", "local", "zip"]
    src_kind = kinds[FORMATS.index(source_format)]
    dst_kind = kinds[(FORMATS.index(dest_format) + 1) % 3]
    source = _hierarchy(_store(src_kind, tmp_path, "src"), source_format)
    dest_store = _store(dst_kind, tmp_path, "dst")
    dest = zarrx.create_group(dest_store, zarr_format=dest_format)
    result = zarrx.copy_all(source, dest)
    assert result == (6, 0, 13 * 7 * 4 + 5 * 6 * 8 + 40 * 2)
    if dst_kind == "zip":
        dest_store.close()
        dest = zarrx.open_group(ZipStore(str(tmp_path / "dst.zip"), mode="r"), mode="r")
    expected = _walk(source)
    expected[""] = ("group", {})  # copy_all copies the members, not the group itself
    assert _walk(dest) == expected
    assert {n.zarr_format for _, n in dest.members(max_depth=None)} == {dest_format}


def test_copy_keeps_the_source_name_and_reports_like_zarr_python_2() -> None:
    # zarr-python 2.18's docstring example of copy, with its log output
    source = zarrx.group()
    dest = zarrx.group()
    source.create_array("foo/bar/baz", data=np.arange(100))
    source.create_array("foo/spam", data=np.arange(1000))
    dest.create_array("foo/spam", data=np.arange(1000))

    out = io.StringIO()
    with pytest.raises(CopyError) as e:
        zarrx.copy(source["foo"], dest, log=out, dry_run=True)
    assert str(e.value) == "an object 'spam' already exists in destination '/foo'"
    assert out.getvalue() == "copy /foo\ncopy /foo/bar\ncopy /foo/bar/baz (100,) int64\n"

    out = io.StringIO()
    assert zarrx.copy(source["foo"], dest, log=out, if_exists="replace", dry_run=True) == (
        4, 0, 0)
    assert out.getvalue().splitlines() == [
        "copy /foo", "copy /foo/bar", "copy /foo/bar/baz (100,) int64",
        "copy /foo/spam (1000,) int64", "dry run: 4 copied, 0 skipped"]

    lines: list[str] = []
    assert zarrx.copy(source["foo"], dest, log=lines.append, if_exists="skip") == (3, 1, 800)
    assert lines == ["copy /foo", "copy /foo/bar", "copy /foo/bar/baz (100,) int64",
                     "skip /foo/spam (1000,) int64",
                     "all done: 3 copied, 1 skipped, 800 bytes copied"]
    assert str(dest.tree()) == (
        "/\n└── foo\n    ├── bar\n    │   └── baz (100,) int64\n    └── spam (1000,) int64\n")
    np.testing.assert_array_equal(dest["foo/bar/baz"][...], np.arange(100))


def test_a_dry_run_writes_nothing(tmp_path: Any) -> None:
    source = _hierarchy(MemoryStore(), 3)
    dest_store = MemoryStore()
    dest = zarrx.create_group(dest_store)
    before = sorted(dest_store.list())
    assert zarrx.copy(source["sub"], dest, dry_run=True) == (5, 0, 0)
    assert sorted(dest_store.list()) == before


def test_if_exists_replace_erases_only_the_replaced_node() -> None:
    source = zarrx.group()
    source.create_array("x", data=np.arange(4, dtype="i2"))
    dest = zarrx.group()
    old = dest.create_array("x", shape=(100,), chunks=(10,), dtype="f8")
    old[...] = 1.0
    dest.create_array("xy", data=np.arange(3))  # a sibling whose name extends "x"
    dest.create_group("g").create_array("x", data=np.ones(2))
    keep = {k: dest.store.get(k) for k in dest.store.list() if not k.startswith("x/")}
    assert zarrx.copy(source["x"], dest, if_exists="replace") == (1, 0, 8)
    assert dest["x"][...].tolist() == [0, 1, 2, 3]
    assert [k for k in dest.store.list() if k.startswith("x/c")] == ["x/c/0"]
    for key, value in keep.items():
        if key != "zarr.json":
            assert dest.store.get(key) == value, key


def test_skip_initialized_skips_only_complete_arrays() -> None:
    source = zarrx.group()
    source.create_array("full", data=np.arange(6), chunks=(2,))
    source.create_array("part", data=np.arange(6), chunks=(2,))
    dest = zarrx.group()
    dest.create_array("full", shape=(6,), chunks=(2,), dtype="i8")[...] = 9
    dest.create_array("part", shape=(6,), chunks=(2,), dtype="i8")[:2] = 9
    assert zarrx.copy_all(source, dest, if_exists="skip_initialized") == (1, 1, 48)
    assert dest["full"][...].tolist() == [9] * 6
    assert dest["part"][...].tolist() == list(range(6))


def test_shallow_without_attrs_name_and_overrides() -> None:
    source = _hierarchy(MemoryStore(), 3)
    dest = zarrx.group()
    assert zarrx.copy(source["sub"], dest, name="copy", shallow=True, without_attrs=True,
                      chunks=(5, 6), compressor={"name": "gzip", "configuration": {"level": 1}}
                      ) == (2, 0, 240)
    assert sorted(n for n, _ in dest.members(max_depth=None)) == ["copy", "copy/b"]
    b = dest["copy/b"]
    assert dict(b.attrs) == {}
    assert dict(dest["copy"].attrs) == {}
    assert b.chunks == (5, 6)
    assert [c.name for c in b.compressors] == ["gzip"]
    np.testing.assert_array_equal(b[...], source["sub/b"][...])
    with pytest.raises(ArgumentError, match="no name"):
        zarrx.copy(source, dest)
    with pytest.raises(ArgumentError, match="if_exists"):
        zarrx.copy(source["a"], dest, if_exists="overwrite")
    with pytest.raises(ArgumentError, match="Group"):
        zarrx.copy(source["a"], dest.store)


def test_what_the_destination_cannot_hold_fails_before_any_write() -> None:
    source = zarrx.group()
    source.create_array("plain", data=np.arange(8))
    source.create_array("sharded", shape=(8,), chunks=(2,), shards=(4,), dtype="i4")
    dest_store = MemoryStore()
    dest = zarrx.create_group(dest_store, zarr_format=2)
    before = sorted(dest_store.list())
    with pytest.raises(MetadataError, match=r"sharded.*sharding"):
        zarrx.copy_all(source, dest)
    assert sorted(dest_store.list()) == before


def test_a_failed_copy_erases_what_it_created(monkeypatch: Any) -> None:
    source = _hierarchy(MemoryStore(), 3)
    dest = zarrx.group()
    dest.create_array("kept", data=np.arange(3))
    before = {k: dest.store.get(k) for k in dest.store.list()}
    calls = 0
    real = copying.copy_region

    def failing(src: Any, dst: Any, region: Any) -> int:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise OSError("disk full")
        return real(src, dst, region)

    monkeypatch.setattr(copying, "copy_region", failing)
    with pytest.raises(OSError, match="disk full"):
        zarrx.copy(source["sub"], dest)
    assert {k: dest.store.get(k) for k in dest.store.list()} == before


def test_copy_is_chunk_by_chunk_in_constant_memory(tmp_path: Any, capsys: Any) -> None:
    n = 2048  # a 2048 x 2048 float64 array: 32 MiB, in 64 KiB chunks
    source = zarrx.create_array(MemoryStore(), shape=(n, n), chunks=(64, 64), dtype="f8")
    for i in range(0, n, 64):
        source[i:i + 64] = np.arange(i * n, (i + 64) * n, dtype="f8").reshape(64, n)
    for fmt in (2, 3):
        # on disk, so that what is written leaves memory (tracemalloc sees a MemoryStore's)
        dest = zarrx.create_group(str(tmp_path / f"v{fmt}"), zarr_format=fmt)
        tracemalloc.start()
        try:
            result = zarrx.copy(source, dest, name="big", threads=2, progress=True)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert result == (1, 0, n * n * 8)
        assert peak < n * n * 8 / 8, f"peak {peak} bytes for a 32 MiB array"
        big = dest["big"]
        for i in range(0, n, 256):
            assert big[i:i + 256].tobytes() == source[i:i + 256].tobytes()
    assert "copying" in capsys.readouterr().err  # the progress bar


def test_copy_store_copies_stored_bytes(tmp_path: Any) -> None:
    source = _hierarchy(MemoryStore(), 2)
    dest = ZipStore(str(tmp_path / "copy.zip"), mode="w")
    out = io.StringIO()
    n_copied, n_skipped, n_bytes = zarrx.copy_store(source.store, dest, source_path="sub",
                                                    dest_path="moved", log=out)
    keys = sorted(k for k in source.store.list() if k.startswith("sub/"))
    assert (n_copied, n_skipped) == (len(keys), 0)
    assert n_bytes == sum(len(source.store.get(k)) for k in keys)
    assert out.getvalue().splitlines()[0] == f"copy {keys[0]} -> moved/{keys[0][4:]}"
    for key in keys:
        assert dest.get("moved/" + key[4:]) == source.store.get(key)
    with pytest.raises(CopyError, match="exists in destination"):
        zarrx.copy_store(source.store, dest, source_path="sub", dest_path="moved")
    assert zarrx.copy_store(source.store, dest, source_path="sub", dest_path="moved",
                            if_exists="skip")[:2] == (0, len(keys))
    dest.close()
    moved = zarrx.open_group(ZipStore(str(tmp_path / "copy.zip"), mode="r"), mode="r",
                             path="moved")
    np.testing.assert_array_equal(moved["b"][...], source["sub/b"][...])


def test_copy_store_filters_keys_and_dry_runs() -> None:
    source = _hierarchy(MemoryStore(), 3)
    dest = MemoryStore()
    excluded = zarrx.copy_store(source.store, dest, excludes=["^sub/"], includes=["zarr.json"],
                                dry_run=True)
    assert dest.list() == []
    n = len([k for k in source.store.list()
             if not k.startswith("sub/") or k.endswith("zarr.json")])
    assert excluded == (n, 0, 0)
    assert zarrx.copy_store(source.store, dest, if_exists="replace")[0] == len(
        source.store.list())
    assert _walk(zarrx.open_group(dest, mode="r")) == _walk(source)
    with pytest.raises(ArgumentError, match="if_exists"):
        zarrx.copy_store(source.store, dest, if_exists="skip_initialized")
