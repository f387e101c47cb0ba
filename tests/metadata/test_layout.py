"""The ``Layout`` contract (``zarrx.metadata.layout``): every format's layout implements it,
and ``io.py`` reaches each format's behaviour through its hooks."""

from __future__ import annotations

import json

import pytest

import zarrx
from zarrx.metadata import io, v3_draft
from zarrx.metadata.layout import Layout
from zarrx.storage import MemoryStore


def test_every_format_has_a_layout() -> None:
    assert set(io.LAYOUTS) == {3, 2, "3-draft"}
    for fmt, layout in io.LAYOUTS.items():
        assert isinstance(layout, Layout)
        assert layout.zarr_format == fmt


@pytest.mark.parametrize(("fmt", "parents"), [(3, True), (2, True), ("3-draft", False)])
def test_parent_groups_follow_the_layout(fmt: object, parents: bool) -> None:
    store = MemoryStore()
    zarrx.create_array(store, name="a/b/x", shape=(2,), dtype="i1", zarr_format=fmt)
    assert io.creates_parent_groups(fmt) is parents
    a = io.find_node(store, "a")
    assert a.node_type == "group"
    assert io.layout_of(a).is_implicit(a) is not parents


def test_a_draft_node_is_read_and_written_through_its_own_entry_point() -> None:
    store = MemoryStore()
    entry = {**v3_draft.DEFAULT_ENTRY_POINT.to_json(), "metadata_key_suffix": ".meta"}
    store.set(v3_draft.ENTRY_POINT_KEY, json.dumps(entry).encode())
    a = zarrx.create_array(store, name="g/x", shape=(2,), dtype="i1", zarr_format="3-draft")
    meta = io.find_node(store, "g/x")
    layout = io.layout_of(meta)
    assert layout is not io.LAYOUTS["3-draft"]  # bound to the store's entry point
    assert io.document_keys("g/x", meta) == ["meta/root/g/x.array.meta",
                                             "meta/root/g/x.group.meta"]
    assert store.get("meta/root/g/x.array.meta") is not None
    a.attrs["k"] = 1  # an update through the node's layout
    assert json.loads(store.get("meta/root/g/x.array.meta"))["attributes"] == {"k": 1}
    io.erase_tree(store, "g", io.find_node(store, "g"))
    assert io.find_node(store, "g/x") is None
