"""Groups, nested groups, attributes and dimension names, both directions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tensorstore as ts
import zarr

import zarrx
from tests.interop._peers import (
    Layout,
    assert_bit_equal,
    load_json,
    make_data,
    read_ts,
    ts_spec,
    write_ts,
    write_zarrx,
)

#: Attributes with every JSON type, unicode, nesting and large integers.
ATTRS: dict[str, Any] = {
    "title": "ünïcödé ✓ 数据",
    "int": -(2**63),
    "big": 2**63 - 1,
    "float": 0.1,
    "exp": -1.5e-300,
    "true": True,
    "none": None,
    "list": [1, "two", [3.5, None], {"k": []}],
    "nested": {"a": {"b": {"c": [False]}}},
    "empty": {},
}

#: path → (kind, attributes, dimension names) of the hierarchy both libraries build.
TREE: dict[str, tuple[str, dict[str, Any], Any]] = {
    "": ("group", ATTRS, None),
    "raw": ("array", {"units": "m"}, ("y", "x")),
    "sub": ("group", {"level": 1}, None),
    "sub/empty": ("group", {}, None),
    "sub/deeper": ("group", {"level": 2, "list": [1, 2]}, None),
    "sub/deeper/cube": ("array", ATTRS, ("t", None, "x")),
    "sub/deeper/unnamed": ("array", {}, None),
}
SHAPES = {2: ((13, 17), (4, 5)), 3: ((5, 7, 9), (2, 3, 4))}


def _array_args(path: str, dims: Any) -> tuple[tuple[int, ...], tuple[int, ...], str]:
    ndim = 2 if dims is None or len(dims) == 2 else 3
    shape, chunks = SHAPES[ndim]
    return shape, chunks, "float32" if path == "raw" else "int16"


def _data(path: str, dims: Any) -> np.ndarray:
    shape, _, dtype = _array_args(path, dims)
    return make_data(dtype, shape, seed=len(path))


def build_zarr(root: Path) -> None:
    group = zarr.create_group(str(root), attributes=ATTRS)
    for path, (kind, attrs, dims) in list(TREE.items())[1:]:
        if kind == "group":
            group.create_group(path, attributes=attrs)
        else:
            shape, chunks, dtype = _array_args(path, dims)
            array = group.create_array(path, shape=shape, chunks=chunks, dtype=dtype,
                                       attributes=attrs, dimension_names=dims)
            array[...] = _data(path, dims)


def build_zarrx(root: Path) -> None:
    group = zarrx.create_group(str(root), attributes=ATTRS)
    for path, (kind, attrs, dims) in list(TREE.items())[1:]:
        if kind == "group":
            group.create_group(path, attributes=attrs)
        else:
            shape, chunks, dtype = _array_args(path, dims)
            array = group.create_array(path, shape=shape, chunks=chunks, dtype=dtype,
                                       attributes=attrs, dimension_names=dims)
            array[...] = _data(path, dims)


def test_zarr_python_hierarchy_opens_in_zarrx(tmp_path: Path) -> None:
    build_zarr(tmp_path)
    root = zarrx.open_group(str(tmp_path), mode="r")
    assert isinstance(zarrx.open(str(tmp_path)), zarrx.Group)
    assert dict(root.attrs) == ATTRS
    assert {name for name, _ in root.members()} == {"raw", "sub"}
    every = dict(root.members(max_depth=None))
    assert set(every) == set(TREE) - {""}
    for path, (kind, attrs, dims) in list(TREE.items())[1:]:
        node = every[path]
        assert isinstance(node, zarrx.Array if kind == "array" else zarrx.Group), path
        assert node.path == path
        assert dict(node.attrs) == attrs
        assert root[path].path == path
        assert path in root
        if kind == "array":
            assert node.dimension_names == dims
            assert_bit_equal(np.asarray(node), _data(path, dims))
            opened = zarrx.open(str(tmp_path), path=path)
            assert isinstance(opened, zarrx.Array)
    assert {n for n, _ in root["sub"].members()} == {"empty", "deeper"}
    assert list(root["sub/empty"].members()) == []
    tree = root.tree()
    for line in ("raw (13, 17) float32", "sub", "deeper", "cube (5, 7, 9) int16",
                 "unnamed (13, 17) int16", "empty"):
        assert line in tree, tree
    assert tree.index("deeper") < tree.index("cube")


def test_zarrx_hierarchy_opens_in_zarr_python(tmp_path: Path) -> None:
    build_zarrx(tmp_path)
    root = zarr.open_group(str(tmp_path), mode="r")
    assert root.attrs.asdict() == ATTRS
    assert {name for name, _ in root.members()} == {"raw", "sub"}
    every = dict(root.members(max_depth=None))
    assert set(every) == set(TREE) - {""}
    for path, (kind, attrs, dims) in list(TREE.items())[1:]:
        node = every[path]
        assert isinstance(node, zarr.Array if kind == "array" else zarr.Group), path
        assert node.attrs.asdict() == attrs
        if kind == "array":
            assert node.metadata.dimension_names == dims
            assert_bit_equal(node[...], _data(path, dims))
            store = ts.open(ts_spec(tmp_path / path), open=True).result()
            assert store.domain.labels == tuple(d or "" for d in dims or (None,) * node.ndim)
    assert {n for n, _ in root["sub"].members()} == {"empty", "deeper"}
    assert root["sub/empty"].members() == ()


@pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part")
def test_consolidated_zarr_python_hierarchy_opens_in_zarrx(tmp_path: Path) -> None:
    """zarr-python keeps consolidated metadata inline in the root ``zarr.json``."""
    build_zarr(tmp_path)
    zarr.consolidate_metadata(str(tmp_path))
    assert "consolidated_metadata" in load_json(tmp_path / "zarr.json")
    root = zarrx.open_group(str(tmp_path), mode="r")
    assert dict(root.attrs) == ATTRS
    assert set(dict(root.members(max_depth=None))) == set(TREE) - {""}
    cube = root["sub/deeper/cube"]
    assert_bit_equal(cube[1:-1:2, ::-3, 2:], _data(cube.path, ("t", None, "x"))[1:-1:2, ::-3, 2:])


def _chunk_files(root: Path) -> dict[str, bytes]:
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
             if p.is_file() and p.name != "zarr.json"}
    assert files
    return files


@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_attributes_edited_by_the_other_library(writer: str, tmp_path: Path) -> None:
    """Attributes changed by one library are seen by the other; the rest is untouched."""
    (build_zarr if writer == "zarr" else build_zarrx)(tmp_path)
    before = _chunk_files(tmp_path)
    docs = {p: load_json(tmp_path / p / "zarr.json") for p in TREE}
    if writer == "zarr":
        root = zarrx.open_group(str(tmp_path), mode="r+")
        root.attrs["added"] = {"by": "zarrx"}
        cube = zarrx.open_array(str(tmp_path), mode="r+", path="sub/deeper/cube")
        del cube.attrs["title"]
        cube.attrs["units"] = "K"
        reopened = zarr.open_group(str(tmp_path), mode="r")
        attrs = reopened.attrs.asdict()
        cube_attrs = reopened["sub/deeper/cube"].attrs.asdict()
    else:
        root = zarr.open_group(str(tmp_path), mode="r+")
        root.attrs["added"] = {"by": "zarrx"}
        zcube = root["sub/deeper/cube"]
        del zcube.attrs["title"]
        zcube.attrs["units"] = "K"
        reopened = zarrx.open_group(str(tmp_path), mode="r")
        attrs = dict(reopened.attrs)
        cube_attrs = dict(reopened["sub/deeper/cube"].attrs)
    assert attrs == {**ATTRS, "added": {"by": "zarrx"}}
    assert cube_attrs == {**{k: v for k, v in ATTRS.items() if k != "title"}, "units": "K"}
    for path, doc in docs.items():
        now = load_json(tmp_path / path / "zarr.json")
        now.pop("attributes"), doc.pop("attributes")
        # zarr-python writes "storage_transformers": [] and zarrx leaves the empty list out.
        assert now.pop("storage_transformers", []) == doc.pop("storage_transformers", []) == []
        assert now == doc, path
    assert before == _chunk_files(tmp_path)


@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_members_added_by_the_other_library(writer: str, tmp_path: Path) -> None:
    """Arrays and groups added to one library's hierarchy by the other are its members."""
    (build_zarr if writer == "zarr" else build_zarrx)(tmp_path)
    data = make_data("uint32", (6, 4))
    if writer == "zarr":
        root = zarrx.open_group(str(tmp_path), mode="r+")
        root["sub"].create_group("added", attributes={"by": "zarrx"})
        root.create_array("sub/added/x", shape=(6, 4), chunks=(4, 4), dtype="uint32")[...] = data
        check = zarr.open_group(str(tmp_path), mode="r")
        members = dict(check.members(max_depth=None))
        assert members["sub/added"].attrs.asdict() == {"by": "zarrx"}
        assert_bit_equal(members["sub/added/x"][...], data)
    else:
        root = zarr.open_group(str(tmp_path), mode="r+")
        root["sub"].create_group("added", attributes={"by": "zarr"})
        root.create_array("sub/added/x", shape=(6, 4), chunks=(4, 4), dtype="uint32")[...] = data
        check = zarrx.open_group(str(tmp_path), mode="r")
        members = dict(check.members(max_depth=None))
        assert dict(members["sub/added"].attrs) == {"by": "zarr"}
        assert_bit_equal(np.asarray(members["sub/added/x"]), data)
    assert set(members) == set(TREE) - {""} | {"sub/added", "sub/added/x"}
    assert {n for n, _ in check["sub"].members()} == {"empty", "deeper", "added"}


@pytest.mark.parametrize("dims", [("y", "x"), ("y", None), (None, None), ("", "x")])
def test_dimension_names_with_tensorstore(dims: Any, tmp_path: Path) -> None:
    """tensorstore's labels are zarr's dimension names (None is tensorstore's "")."""
    layout = Layout(dtype="uint8", dimension_names=dims, attributes={"from": "ts"})
    data = make_data("uint8", layout.shape)
    write_ts(tmp_path / "ts", layout, data)
    array = zarrx.open_array(str(tmp_path / "ts"), mode="r")
    # tensorstore leaves out dimension_names that are all null (the spec's equivalent).
    assert array.dimension_names == (None if dims == (None, None) else dims)
    assert dict(array.attrs) == {"from": "ts"}
    assert_bit_equal(np.asarray(array), data)

    write_zarrx(tmp_path / "zx", layout, data)
    read_ts(tmp_path / "zx", layout)
    store = ts.open(ts_spec(tmp_path / "zx"), open=True).result()
    assert store.domain.labels == tuple(d or "" for d in dims)
    assert load_json(tmp_path / "zx" / "zarr.json")["dimension_names"] == list(dims)
