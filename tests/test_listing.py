"""Listing hierarchies: one bad node never blocks its siblings, and the store calls a
listing costs (seed 002: a draft hierarchy is discovered with one ``list_prefix``).

A node with an unknown must-understand extension (ZEP 10, seed 003) must not be loaded;
its siblings list and open, its parent opens (also from consolidated metadata), and
opening the node itself raises the same error as before. A key that is not a valid node
name is skipped in listings with a :class:`SkippedNodeWarning`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.errors import (
    InvalidKeyError,
    MetadataError,
    SkippedNodeWarning,
    UnknownCodecError,
    UnknownExtensionError,
)
from zarrx.storage import MemoryStore
from zarrx.testing.stores import CountingStore

DRAFT = "3-draft"
REQUIRED = "https://example.org/zarr/extension/required"


def _doc(store: Any, key: str) -> dict[str, Any]:
    return json.loads(store.get(key))


def _put(store: Any, key: str, doc: Any) -> None:
    store.set(key, json.dumps(doc).encode())


def _hierarchy(zarr_format: Any) -> tuple[MemoryStore, str]:
    """A group with arrays ``a``, ``c``, a group ``g`` (holding ``g/x``) and ``bad``, an array
    that cannot be opened: an unknown must-understand extension (v3, draft) or an unknown
    codec (v2, which has no extensions). Returns the store and the bad node's key."""
    store = MemoryStore()
    root = zarrx.create_group(store, zarr_format=zarr_format)
    for name in ("a", "bad", "c"):
        root.create_array(name, shape=(4,), dtype="i2", chunks=(2,))[...] = np.arange(4)
    root.create_group("g").create_array("x", shape=(2,), dtype="u1")
    if zarr_format == 3:
        key = "bad/zarr.json"
        doc = _doc(store, key)
        doc["extensions"] = [{"name": REQUIRED}]
    elif zarr_format == DRAFT:
        key = "meta/root/bad.array.json"
        doc = _doc(store, key)
        doc["extensions"] = [{"extension": REQUIRED, "must_understand": True}]
    else:
        key = "bad/.zarray"
        doc = _doc(store, key)
        doc["compressor"] = {"id": "no-such-codec"}
    _put(store, key, doc)
    return store, key


ERRORS = {3: (UnknownExtensionError, REQUIRED), DRAFT: (UnknownExtensionError, REQUIRED),
          2: (UnknownCodecError, "no-such-codec")}


@pytest.mark.parametrize("zarr_format", [3, 2, DRAFT])
def test_siblings_of_a_bad_node_list_and_open(zarr_format: Any) -> None:
    store, key = _hierarchy(zarr_format)
    error, match = ERRORS[zarr_format]
    root = zarrx.open_group(store, mode="r")
    with pytest.warns(SkippedNodeWarning, match=f"'bad'.*{match}"):
        names = [name for name, _ in root.members(max_depth=None)]
    assert names == ["a", "c", "g", "g/x"]
    np.testing.assert_array_equal(root["a"][...], np.arange(4))
    assert root["g/x"].shape == (2,)
    with pytest.raises(error, match=match) as info:
        root["bad"]
    assert key in str(info.value)  # the error names the document
    with pytest.raises(error, match=match):
        zarrx.open(store, path="bad")
    with pytest.warns(SkippedNodeWarning):
        assert sorted(root.array_keys()) == ["a", "c"]


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_a_consolidated_parent_opens_and_reports_the_bad_child_on_access(
    zarr_format: int,
) -> None:
    store, key = _hierarchy(zarr_format)
    repaired = _doc(store, key)
    repaired.pop("extensions", None)
    _put(store, key, {**repaired, "compressor": None} if zarr_format == 2 else repaired)
    zarrx.consolidate_metadata(store)
    # the bad entry is planted in the consolidated metadata, as another writer may have
    if zarr_format == 3:
        doc = _doc(store, "zarr.json")
        doc["consolidated_metadata"]["metadata"]["bad"]["extensions"] = [{"name": REQUIRED}]
        _put(store, "zarr.json", doc)
    else:
        doc = _doc(store, ".zmetadata")
        doc["metadata"]["bad/.zarray"]["compressor"] = {"id": "no-such-codec"}
        _put(store, ".zmetadata", doc)
    error, match = ERRORS[zarr_format]
    root = zarrx.open_group(store, mode="r")
    assert root.consolidated is not None
    with pytest.warns(SkippedNodeWarning, match=match):
        assert [name for name, _ in root.members()] == ["a", "c", "g"]
    assert root["c"].shape == (4,)
    with pytest.raises(error, match=match):
        root["bad"]


def test_consolidating_refuses_a_hierarchy_with_a_bad_node() -> None:
    """Consolidated metadata without the node would hide it from every reader."""
    store, _ = _hierarchy(3)
    with pytest.raises(UnknownExtensionError, match=f"consolidate.*'bad'.*{REQUIRED}"):
        zarrx.consolidate_metadata(store)
    assert "consolidated_metadata" not in _doc(store, "zarr.json")


def test_children_of_a_bad_group_are_not_listed() -> None:
    """A group that cannot be loaded hides its members from listings (ZEP 10 forbids
    loading it); its siblings are listed."""
    store = MemoryStore()
    root = zarrx.create_group(store, zarr_format=DRAFT)
    root.create_group("bad").create_array("inner", shape=(1,), dtype="u1")
    root.create_array("ok", shape=(1,), dtype="u1")
    _put(store, "meta/root/bad.group.json",
         {"attributes": {}, "extensions": [{"extension": REQUIRED, "must_understand": True}]})
    with pytest.warns(SkippedNodeWarning, match="'bad'"):
        assert [n for n, _ in root.members(max_depth=None)] == ["ok"]


@pytest.mark.parametrize(("zarr_format", "planted", "name"), [
    (DRAFT, "meta/root/has space.array.json", "has space"),
    (DRAFT, "meta/root/bad!/x.array.json", "bad!"),
    (DRAFT, "meta/root/....group.json", "..."),
])
def test_a_key_that_is_not_a_node_name_is_skipped(zarr_format: Any, planted: str,
                                                  name: str) -> None:
    store = MemoryStore()
    root = zarrx.create_group(store, zarr_format=zarr_format)
    root.create_array("fine", shape=(3,), dtype="u1")
    store.set(planted, store.get("meta/root/fine.array.json"))
    for depth in (0, None):
        with pytest.warns(SkippedNodeWarning, match=f"{name!r}") as record:
            assert [n for n, _ in root.members(max_depth=depth)] == ["fine"]
        assert len(record) == 1
        assert issubclass(record[0].category, UserWarning)
    with pytest.raises((InvalidKeyError, MetadataError)):
        root[name]


# -- store calls ------------------------------------------------------------------------------

def _twenty_one_nodes(zarr_format: Any, store: Any) -> None:
    """A root, 4 groups, 8 subgroups (implicit ones in the draft) and 8 arrays: 21 nodes."""
    root = zarrx.create_group(store, zarr_format=zarr_format)
    for i in range(4):
        g = root.create_group(f"g{i}")
        for j in range(2):
            g.create_array(f"s{j}/x", shape=(2,), dtype="u1")


def test_draft_listing_is_one_list_prefix_and_one_batch_of_gets() -> None:
    """Seed 002: one ``list_prefix("meta/")``-style call lists the whole hierarchy, then
    one get per explicit node (in one batch). Implicit groups cost no get."""
    store = CountingStore(MemoryStore())
    _twenty_one_nodes(DRAFT, store)
    root = zarrx.open_group(store, mode="r")
    store.calls.clear()
    members = root.members(max_depth=None)
    assert len(members) == 20
    assert store.counts() == {"list_prefix": 1, "get_many": 1}
    assert store.calls[0] == ("list_prefix", "meta/root/")
    # the 4 explicit groups and 8 arrays have documents; the 8 s* groups are implicit
    assert store.keys_read() == 12
    assert sum(m.metadata.implicit for _, m in members if isinstance(m, zarrx.Group)) == 8
    g1 = root["g1"]
    store.calls.clear()
    assert [n for n, _ in g1.members()] == ["s0", "s1"]  # one level: one list_dir
    assert store.counts() == {"get_many": 1, "list_dir": 1}


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_v3_and_v2_listing_costs(zarr_format: int) -> None:
    """Without consolidated metadata: one ``list_dir`` per group and one batch of gets per
    level of the tree; with it: one read when opening and none when listing."""
    store = CountingStore(MemoryStore())
    _twenty_one_nodes(zarr_format, store)
    root = zarrx.open_group(store, mode="r")
    store.calls.clear()
    assert len(root.members(max_depth=None)) == 20
    groups = 1 + 4 + 8
    levels = 3  # children of the root, of g*, of s*
    assert store.counts() == {"list_dir": groups, "get_many": levels}
    zarrx.consolidate_metadata(store.inner)
    store.calls.clear()
    root = zarrx.open_group(store, mode="r")
    assert len(root.members(max_depth=None)) == 20
    assert root["g3/s1/x"].shape == (2,)
    assert store.counts() == {"get_many": 1}


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_members_come_parents_before_children_and_siblings_by_name(zarr_format: int) -> None:
    """One level (listed in order) and the whole tree (levels merged) alike: by path
    segments, so ``a/c`` comes before ``a-b`` although ``"a/" > "a-"``."""
    g = zarrx.group(zarr_format=zarr_format)
    for name in ["b", "a-b", "a", "c", "a/z", "a/c", "b/x", "b/x/y"]:
        parent, _, leaf = name.rpartition("/")
        (g[parent] if parent else g).create_group(leaf)
    g.create_array("a0", shape=(1,), dtype="i1")
    assert [n for n, _ in g.members()] == ["a", "a-b", "a0", "b", "c"]
    assert [n for n, _ in g.members(max_depth=None)] == [
        "a", "a/c", "a/z", "a-b", "a0", "b", "b/x", "b/x/y", "c"]
    assert [n for n, _ in g.members(max_depth=1)] == [
        "a", "a/c", "a/z", "a-b", "a0", "b", "b/x", "c"]
