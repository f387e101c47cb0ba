"""A node whose metadata document is corrupt (not JSON, wrong types, not an object) is
replaced by ``create_array(..., overwrite=True)``, ``create_group(..., overwrite=True)`` and
``open_group(mode="w")``, as zarr-python does, in every format; without overwriting, it
still raises the clear error, and nothing is touched."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.errors import MetadataError
from zarrx.storage import LocalStore, MemoryStore

FORMATS = [3, 2, "3-draft"]
#: The document of an array at path "a", by format.
DOCUMENT = {3: "a/zarr.json", 2: "a/.zarray", "3-draft": "meta/root/a.array.json"}
CORRUPTIONS = {
    "not JSON": b'{"zarr_format": 3, "node_type": "array",',
    "wrong types": json.dumps({"zarr_format": 3, "node_type": "array", "shape": "big",
                               "data_type": 7, "chunks": None, "dtype": [],
                               "chunk_grid": 1}).encode(),
    "not an object": b"[1, 2, 3]",
    "binary": bytes(range(256)),
}


def replace(kind: str, store: Any, fmt: Any) -> Any:
    if kind == "create_array":
        return zarrx.create_array(store, name="a", shape=(3,), dtype="i2", fill_value=7,
                                  zarr_format=fmt, overwrite=True)
    if kind == "create_group":
        return zarrx.create_group(store, path="a", zarr_format=fmt, overwrite=True,
                                  attributes={"new": True})
    return zarrx.open_group(store, path="a", mode="w", zarr_format=fmt,
                            attributes={"new": True})


def broken_store(fmt: Any, corruption: str) -> MemoryStore:
    store = MemoryStore()
    old = zarrx.create_array(store, name="a", shape=(4,), dtype="f8", chunks=(2,),
                             zarr_format=fmt)
    old[...] = np.arange(4.0)
    zarrx.create_array(store, name="b", shape=(2,), dtype="u1", zarr_format=fmt)[...] = 9
    store.set(DOCUMENT[fmt], CORRUPTIONS[corruption])
    return store


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
@pytest.mark.parametrize("kind", ["create_array", "create_group", "open_group_w"])
def test_a_corrupt_node_is_replaced(fmt: Any, corruption: str, kind: str) -> None:
    store = broken_store(fmt, corruption)
    old_chunks = [k for k in store.list()
                  if k.startswith(("a/c/", "data/root/a/")) or k in ("a/0", "a/1")]
    assert len(old_chunks) == 2
    new = replace(kind, store, fmt)
    assert not set(old_chunks) & set(store.list())  # the old node's chunks are gone
    again = zarrx.open(store, path="a", mode="r")
    if kind == "create_array":
        assert again.shape == (3,)
        assert again.dtype == np.dtype("i2")
        np.testing.assert_array_equal(again[...], [7, 7, 7])  # no old chunk is read
        new[...] = [1, 2, 3]
        np.testing.assert_array_equal(zarrx.open_array(store, path="a")[...], [1, 2, 3])
    else:
        assert isinstance(again, zarrx.Group)
        assert dict(again.attrs) == {"new": True}
        assert list(again.members()) == []
    # its sibling is untouched
    np.testing.assert_array_equal(zarrx.open_array(store, path="b", mode="r")[...], [9, 9])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_without_overwrite_the_error_stays_and_nothing_changes(fmt: Any, corruption: str) -> None:
    store = broken_store(fmt, corruption)
    before = {k: store.get(k) for k in store.list()}
    for attempt in (
        lambda: zarrx.open_array(store, path="a", mode="r"),
        lambda: zarrx.open(store, path="a"),
        lambda: zarrx.create_array(store, name="a", shape=(3,), dtype="i2", zarr_format=fmt),
        lambda: zarrx.create_group(store, path="a", zarr_format=fmt),
        lambda: zarrx.open_group(store, path="a", mode="a"),
    ):
        with pytest.raises(MetadataError, match=DOCUMENT[fmt].replace(".", r"\.")):
            attempt()
    assert {k: store.get(k) for k in store.list()} == before


@pytest.mark.parametrize("fmt", [3, 2])
def test_a_corrupt_root_in_a_directory_is_replaced(tmp_path: Any, fmt: Any) -> None:
    root = tmp_path / "s.zarr"
    zarrx.create_group(str(root), zarr_format=fmt)
    zarrx.create_array(str(root), name="x", shape=(2,), dtype="i1", zarr_format=fmt)[...] = 1
    (root / ("zarr.json" if fmt == 3 else ".zgroup")).write_text("{oops")
    with pytest.raises(MetadataError, match="invalid JSON"):
        zarrx.open_group(str(root), mode="r")
    g = zarrx.open_group(str(root), mode="w", zarr_format=fmt)
    assert list(g.members()) == []
    kept = {3: {"zarr.json"}, 2: {".zgroup", ".zattrs"}}[fmt]
    assert set(LocalStore(str(root)).list()) <= kept
