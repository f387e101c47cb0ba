"""Metadata changes apply to the node as the store holds it now: two handles opened on the
same node (two processes, as far as each knows) each keep the other's changes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.errors import NodeNotFoundError, ShapeError
from zarrx.metadata.io import ensure_node, find_node, update_node
from zarrx.storage import LocalStore, MemoryStore

FORMATS = [3, 2, "3-draft"]


@pytest.fixture(params=FORMATS)
def two_handles(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[zarrx.Array, ...]:
    root = str(tmp_path / "a.zarr")
    zarrx.create_array(root, shape=(0, 3), dtype="i4", chunks=(2, 3), fill_value=-1,
                       zarr_format=request.param, attributes={"kept": 1})
    return zarrx.open_array(root, mode="r+"), zarrx.open_array(root, mode="r+")


def test_attribute_keys_set_through_stale_handles_all_survive(two_handles) -> None:
    first, second = two_handles
    first.attrs["a"] = 1
    second.attrs.update(b=2, c=3)  # second has not seen "a"
    first.attrs["d"] = 4  # first has not seen "b", "c"
    expected = {"kept": 1, "a": 1, "b": 2, "c": 3, "d": 4}
    assert first.attrs.asdict() == expected  # a change shows what the store holds now
    assert zarrx.open_array(first.store, path=first.path).attrs.asdict() == expected


def test_deleting_an_attribute_keeps_the_others(two_handles) -> None:
    first, second = two_handles
    first.attrs["a"] = 1
    del second.attrs["kept"]
    assert dict(second.attrs) == {"a": 1}
    with pytest.raises(KeyError):
        del first.attrs["kept"]  # gone meanwhile: as a dict says
    first.attrs.put({"only": True})  # put replaces them all, by its meaning
    assert zarrx.open_array(first.store, path=first.path).attrs.asdict() == {"only": True}


def test_appends_through_stale_handles_each_get_their_own_rows(two_handles) -> None:
    first, second = two_handles
    assert first.append(np.full((1, 3), 10)) == (1, 3)
    assert second.append(np.full((3, 3), 20)) == (4, 3)  # second still thinks shape (0, 3)
    assert first.append(np.full((1, 3), 30)) == (5, 3)
    data = zarrx.open_array(first.store, path=first.path)[...]
    np.testing.assert_array_equal(data[:, 0], [10, 20, 20, 20, 30])
    with pytest.raises(ShapeError, match="along axis 0"):
        second.append(np.zeros((1, 4)))
    assert zarrx.open_array(first.store, path=first.path).shape == (5, 3)


def test_resize_and_attributes_keep_each_other(two_handles) -> None:
    first, second = two_handles
    first.resize((4, 3))
    second.attrs["after"] = True  # v3 and the draft: one document holds both
    reopened = zarrx.open_array(first.store, path=first.path)
    assert reopened.shape == (4, 3)
    assert reopened.attrs.asdict() == {"kept": 1, "after": True}


def test_a_node_removed_meanwhile_is_an_error_not_a_resurrection(tmp_path: Path) -> None:
    root = str(tmp_path / "g.zarr")
    group = zarrx.create_group(root)
    array = group.create_array("x", shape=(2,), dtype="u1")
    zarrx.open_group(root, mode="r+").__delitem__("x")
    with pytest.raises(NodeNotFoundError, match="removed meanwhile"):
        array.attrs["k"] = 1
    assert find_node(LocalStore(root), "x") is None


def test_ensure_node_keeps_a_node_made_meanwhile() -> None:
    store = MemoryStore()
    made = zarrx.create_group(store, "p", attributes={"by": "other"})
    ensure_node(store, "p", made.metadata.with_attributes({}))
    assert zarrx.open_group(store, path="p").attrs.asdict() == {"by": "other"}
    ensure_node(store, "q", made.metadata.with_attributes({"new": 1}))
    assert zarrx.open_group(store, path="q").attrs.asdict() == {"new": 1}


def test_update_node_may_run_again_and_returns_what_it_wrote() -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, "a", shape=(3,), dtype="u1")
    calls = []

    def change(meta):
        calls.append(meta.shape)
        return meta.with_shape((7,))

    new = update_node(store, "a", a.metadata, change)
    assert new.shape == (7,)
    assert calls == [(3,)]
    assert find_node(store, "a").shape == (7,)
