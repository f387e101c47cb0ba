"""ZarrPythonStore: the store contract on zarr-python's MemoryStore and LocalStore, requests
in flight together, zarr-python stores passed as ``store``, and an Icechunk repository
written and read by zarrx and zarr-python in turn, snapshots intact."""

from __future__ import annotations

import asyncio
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import icechunk
import numpy as np
import pytest
import zarr
import zarr.storage

import zarrx
from zarrx.abc.store import ByteRange
from zarrx.errors import InvalidKeyError, ReadOnlyError
from zarrx.stores.zarr_python import ZarrPythonStore
from zarrx.testing.stores import StoreTests


class TestZarrPythonMemory(StoreTests):
    @pytest.fixture
    def store(self) -> ZarrPythonStore:
        return ZarrPythonStore(zarr.storage.MemoryStore())


class TestZarrPythonLocal(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> ZarrPythonStore:
        return ZarrPythonStore(zarr.storage.LocalStore(tmp_path / "root"))


class SlowMemoryStore(zarr.storage.MemoryStore):
    """A zarr-python store whose reads take a while, counting how many are in flight."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.in_flight = 0
        self.most_in_flight = 0
        self.release = asyncio.Event()

    async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.wait_for(self.release.wait(), timeout=30)  # until all have come
            return await super().get(key, prototype, byte_range)
        finally:
            self.in_flight -= 1


def test_a_batch_is_in_flight_at_once() -> None:
    slow = SlowMemoryStore()
    store = ZarrPythonStore(slow)
    store.set_many([(f"c/{i}", bytes([i])) for i in range(16)])
    loop = zarrx.stores.aio.loop()

    def release_when_all_came() -> None:
        while slow.in_flight < 16:
            threading.Event().wait(0.01)
        loop.call_soon_threadsafe(slow.release.set)

    releaser = threading.Thread(target=release_when_all_came)
    releaser.start()
    got = store.get_many([(f"c/{i}", ByteRange(0, 1)) for i in range(16)])
    releaser.join()
    assert got == [bytes([i]) for i in range(16)]
    assert slow.most_in_flight == 16


def test_callers_on_many_threads_do_not_wait_for_each_other() -> None:
    slow = SlowMemoryStore()
    store = ZarrPythonStore(slow)
    store.set("k", b"v")
    loop = zarrx.stores.aio.loop()

    def release_when_all_came() -> None:
        while slow.in_flight < 4:
            threading.Event().wait(0.01)
        loop.call_soon_threadsafe(slow.release.set)

    releaser = threading.Thread(target=release_when_all_came)
    releaser.start()
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda _: store.get("k"), range(4))) == [b"v"] * 4
    releaser.join()
    assert slow.most_in_flight == 4


def test_capabilities_follow_the_wrapped_store(tmp_path: Path) -> None:
    memory = ZarrPythonStore(zarr.storage.MemoryStore())
    assert memory.atomic_updates == "lock"
    assert memory.batched_reads
    local = ZarrPythonStore(zarr.storage.LocalStore(tmp_path))
    assert local.atomic_updates is None  # other processes may write the directory
    reader = ZarrPythonStore(zarr.storage.LocalStore(tmp_path, read_only=True))
    assert reader.read_only
    with pytest.raises(ReadOnlyError):
        reader.set("k", b"v")
    assert ZarrPythonStore(zarr.storage.MemoryStore(), read_only=True).read_only
    with pytest.raises(TypeError, match="zarr-python store"):
        ZarrPythonStore({"a": b"dict"})


def test_erasing_a_prefix_name_erases_nothing(tmp_path: Path) -> None:
    """zarr-python's LocalStore.delete removes a directory given its name: zarrx only
    erases keys."""
    store = ZarrPythonStore(zarr.storage.LocalStore(tmp_path))
    store.set("a/b", b"1")
    store.erase("a")
    assert store.get("a/b") == b"1"
    with pytest.raises(InvalidKeyError):
        store.erase("a/")


def test_pickle() -> None:
    store = ZarrPythonStore(zarr.storage.MemoryStore())
    store.set("k", b"v")
    again = pickle.loads(pickle.dumps(store))
    assert again.get("k", ByteRange(-1)) == b"v"


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_zarr_python_stores_passed_as_store(tmp_path: Path, kind: str) -> None:
    theirs = (zarr.storage.MemoryStore() if kind == "memory"
              else zarr.storage.LocalStore(tmp_path / "x.zarr"))
    data = np.arange(60, dtype="<i2").reshape(6, 10)
    a = zarrx.create_array(theirs, name="x", shape=data.shape, dtype="i2", chunks=(4, 4),
                           shards=(4, 8), attributes={"by": "zarrx"})
    assert isinstance(a.store, ZarrPythonStore)
    a[...] = data
    a[1, 1:9] = -1
    data[1, 1:9] = -1
    peer = zarr.open_array(theirs, path="x", mode="r")
    np.testing.assert_array_equal(peer[...], data)
    assert peer.attrs["by"] == "zarrx"
    group = zarr.open_group(theirs, path="g", mode="a")
    group.create_array("y", shape=(5,), dtype="f8", fill_value=1.5)[:2] = [7, 8]
    again = zarrx.open_group(theirs, path="g", mode="r")
    np.testing.assert_array_equal(again["y"][...], [7, 8, 1.5, 1.5, 1.5])
    with pytest.raises(TypeError, match="storage_options"):
        zarrx.open_group(theirs, storage_options={"anon": True})


# -- Icechunk -----------------------------------------------------------------------------


@pytest.fixture
def repository(tmp_path: Path) -> Any:
    return icechunk.Repository.create(icechunk.local_filesystem_storage(str(tmp_path / "repo")))


def test_icechunk_round_trips_and_snapshots(repository: Any) -> None:
    data = np.arange(100, dtype="<i4").reshape(10, 10)
    session = repository.writable_session("main")
    group = zarrx.create_group(session.store, attributes={"by": "zarrx"})
    a = group.create_array("x", shape=(10, 10), dtype="i4", chunks=(4, 4), fill_value=0)
    a[...] = data
    a[1:3, 1:3] = -1  # partial chunk updates: read, changed, written in the session
    data[1:3, 1:3] = -1
    assert isinstance(a.store, ZarrPythonStore)
    assert a.store.atomic_updates == "lock"
    first = session.commit("zarrx wrote x")

    theirs = zarr.open_group(repository.readonly_session("main").store, mode="r")
    assert theirs.attrs["by"] == "zarrx"
    np.testing.assert_array_equal(theirs["x"][...], data)

    session = repository.writable_session("main")
    peer = zarr.open_group(session.store, mode="r+")
    peer["x"][0, :] = 99
    peer.create_array("y", shape=(3,), dtype="f8")[...] = [1, 2, 3]
    session.commit("zarr-python wrote")

    latest = zarrx.open_group(repository.readonly_session("main").store, mode="r")
    assert sorted(name for name, _ in latest.members()) == ["x", "y"]
    np.testing.assert_array_equal(latest["x"][0], [99] * 10)
    np.testing.assert_array_equal(latest["x"][1:], data[1:])
    np.testing.assert_array_equal(latest["y"][...], [1.0, 2.0, 3.0])
    assert latest.store.read_only

    old = zarrx.open_group(repository.readonly_session(snapshot_id=first).store, mode="r")
    assert sorted(name for name, _ in old.members()) == ["x"]
    np.testing.assert_array_equal(old["x"][...], data)  # the first snapshot, as it was
    with pytest.raises(ReadOnlyError):
        old["x"][0, 0] = 1


def test_icechunk_uncommitted_changes_stay_in_the_session(repository: Any) -> None:
    session = repository.writable_session("main")
    zarrx.create_array(session.store, shape=(4,), dtype="u1", chunks=(2,))[...] = [1, 2, 3, 4]
    session.commit("first")
    session = repository.writable_session("main")
    a = zarrx.open_array(session.store, mode="r+")
    a[1:3] = 0
    np.testing.assert_array_equal(a[...], [1, 0, 0, 4])
    committed = zarrx.open_array(repository.readonly_session("main").store, mode="r")
    np.testing.assert_array_equal(committed[...], [1, 2, 3, 4])
    session.commit("second")
    committed = zarrx.open_array(repository.readonly_session("main").store, mode="r")
    np.testing.assert_array_equal(committed[...], [1, 0, 0, 4])


def test_public_names_and_module_example() -> None:
    import doctest
    import importlib

    from zarrx import storage

    assert storage.ZarrPythonStore is ZarrPythonStore
    assert "ZarrPythonStore" in storage.__all__
    result = doctest.testmod(importlib.import_module("zarrx.stores.zarr_python"))
    assert result.attempted > 0
    assert result.failed == 0
