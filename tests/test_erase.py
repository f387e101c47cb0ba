"""Erasing is fenced: only keys of the node being erased, in the node's own format; and a
hierarchy holds nodes of one format (creating another format inside it is refused)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.api import erase_node
from zarrx.errors import FormatMismatchError, NodeExistsError, NodeNotFoundError
from zarrx.storage import MemoryStore
from zarrx.testing.stores import CountingStore

DRAFT = "3-draft"


def _draft_store() -> MemoryStore:
    store = MemoryStore()
    for name in ("a", "b"):
        zarrx.create_array(store, name=name, shape=(4,), dtype="i2", chunks=(2,),
                           zarr_format=DRAFT)[...] = np.arange(4)
    return store


@pytest.mark.parametrize("path", ["data/root/a", "data/root", "data", "meta/root/a", "a/c", "c"])
def test_erasing_a_path_that_names_no_node_erases_nothing(path: str) -> None:
    """On a draft store, ``data/root/a`` is no node: v2/v3 would keep a node's chunks below
    ``data/root/a/``; the draft's are the chunks of array ``a``, which must survive."""
    store = _draft_store()
    before = {k: store.get(k) for k in store.list()}
    with pytest.raises(NodeNotFoundError, match=repr(path)):
        erase_node(store, path)
    assert {k: store.get(k) for k in store.list()} == before


@pytest.mark.parametrize("zarr_format", [3, 2, DRAFT])
def test_del_erases_exactly_the_node_keys(zarr_format: Any) -> None:
    store = CountingStore(MemoryStore())
    root = zarrx.create_group(store, zarr_format=zarr_format)
    for name in ("x", "xy", "x.y"):
        root.create_array(name, shape=(4,), dtype="u1", chunks=(2,))[...] = 1
    before = set(store.inner.list())
    store.calls.clear()
    del root["x"]
    erased = [c for c in store.calls if c[0] in ("erase", "erase_prefix")]
    gone = before - set(store.inner.list())
    if zarr_format == DRAFT:
        assert erased == [("erase", "meta/root/x.array.json"),
                          ("erase_prefix", "data/root/x/")]
        assert gone == {"meta/root/x.array.json", "data/root/x/c0", "data/root/x/c1"}
    else:
        assert erased == [("erase_prefix", "x/")]
        assert all(k.startswith("x/") for k in gone)
    assert sorted(n for n, _ in root.members()) == ["x.y", "xy"]
    with pytest.raises(NodeNotFoundError):
        del root["x"]


@pytest.mark.parametrize(("existing", "new"), [
    (DRAFT, 3), (DRAFT, 2), (3, 2), (2, 3), (3, DRAFT), (2, DRAFT),
])
def test_a_node_of_another_format_inside_a_hierarchy_is_refused(existing: Any, new: Any) -> None:
    store = MemoryStore()
    zarrx.create_array(store, name="g/a", shape=(2,), dtype="u1", zarr_format=existing)
    before = {k: store.get(k) for k in store.list()}
    for call in (
        lambda: zarrx.create_group(store, path="g/h", zarr_format=new),
        lambda: zarrx.create_array(store, name="x", shape=(1,), dtype="u1", zarr_format=new),
    ):
        with pytest.raises(FormatMismatchError, match=f"zarr_format={new!r}"):
            call()
    with pytest.raises((FormatMismatchError, NodeExistsError)):  # explicit roots exist
        zarrx.create_group(store, zarr_format=new)
    assert {k: store.get(k) for k in store.list()} == before  # nothing written


def test_an_empty_draft_hierarchy_refuses_other_formats() -> None:
    """Only the entry point exists: a v3 root group would overwrite it."""
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(1,), dtype="u1", zarr_format=DRAFT)
    del zarrx.open_group(store, mode="r+")["a"]
    assert store.list() == ["zarr.json"]
    with pytest.raises(FormatMismatchError, match="draft"):
        zarrx.create_group(store, path="v3", zarr_format=3)
    assert store.list() == ["zarr.json"]
    # replacing the whole store is still possible
    zarrx.create_group(store, zarr_format=3, overwrite=True)
    assert zarrx.open_group(store).zarr_format == 3
