"""zarrx on dask: lazy reads, chunk-aligned writes, and a real dask.distributed cluster."""

from __future__ import annotations

import os
import pickle
from collections import Counter
from pathlib import Path
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest

import zarrx
from zarrx.errors import ReadOnlyError
from zarrx.integrations.dask import ArrayHandle, aligned_chunks, store_dask, to_dask
from zarrx.stores.local import LocalStore
from zarrx.stores.memory import MemoryStore


class CountingStore(MemoryStore):
    """Records every read and write (dask's threaded scheduler shares one process)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()
        self.writes: Counter[str] = Counter()

    def get(self, key: str, byte_range: Any = None) -> bytes | None:
        self.reads[key] += 1
        return super().get(key, byte_range)

    def set(self, key: str, value: Any) -> None:
        self.writes[key] += 1
        super().set(key, value)


@pytest.fixture(autouse=True)
def _threads() -> Any:
    with dask.config.set(scheduler="threads"):
        yield


def test_to_dask_is_lazy_and_follows_the_chunks() -> None:
    store = CountingStore()
    data = np.arange(45 * 32, dtype="f4").reshape(45, 32)
    a = zarrx.create_array(store, shape=data.shape, dtype="f4", chunks=(10, 8))
    a[...] = data
    store.reads.clear()
    x = to_dask(a)
    assert x.chunks == ((10, 10, 10, 10, 5), (8, 8, 8, 8))
    assert x.dtype == np.float32
    assert sum(store.reads.values()) == 0  # nothing read until computed
    np.testing.assert_array_equal(x[12:18, 9:15].compute(), data[12:18, 9:15])
    assert set(store.reads) == {"c/1/1"}  # one block, one chunk
    np.testing.assert_array_equal(x.compute(), data)
    np.testing.assert_array_equal(to_dask(a, chunks=(45, 16)).compute(), data)


def test_to_dask_of_a_sharded_array_reads_shards() -> None:
    data = np.arange(40 * 40, dtype="i2").reshape(40, 40)
    a = zarrx.create_array(MemoryStore(), shape=(40, 40), dtype="i2", chunks=(5, 5),
                           shards=(20, 20))
    a[...] = data
    x = to_dask(a)
    assert x.chunks == ((20, 20), (20, 20))
    np.testing.assert_array_equal(x.compute(), data)
    assert to_dask(a).name == x.name  # deterministic names


def test_store_dask_rechunks_so_each_chunk_is_written_once() -> None:
    store = CountingStore()
    a = zarrx.create_array(store, shape=(100, 60), dtype="i4", chunks=(10, 12))
    source = da.arange(1, 6001, chunks=6001, dtype="i4").reshape(100, 60).rechunk((25, 17))
    store_dask(source, a)
    np.testing.assert_array_equal(a[...], np.arange(1, 6001, dtype="i4").reshape(100, 60))
    chunk_writes = {k: n for k, n in store.writes.items() if k.startswith("c/")}
    assert len(chunk_writes) == 10 * 5
    assert set(chunk_writes.values()) == {1}  # no chunk split between two tasks


def test_store_dask_into_a_region() -> None:
    a = zarrx.create_array(MemoryStore(), shape=(30, 30), dtype="f8", chunks=(7, 7),
                           fill_value=-1.0)
    block = da.ones((13, 9), chunks=(4, 4))
    store_dask(block, a, region=(slice(5, 18), slice(20, 29)))
    expected = np.full((30, 30), -1.0)
    expected[5:18, 20:29] = 1.0
    np.testing.assert_array_equal(a[...], expected)
    with pytest.raises(ValueError, match="shape"):
        store_dask(block, a, region=(slice(0, 5), slice(0, 5)))
    with pytest.raises(ValueError, match="step 1"):
        store_dask(block, a, region=(slice(0, 26, 2), slice(0, 9)))


def test_store_dask_delayed_and_read_only() -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(8,), dtype="u1", chunks=(3,))
    delayed = store_dask(da.full((8,), 7, chunks=4, dtype="u1"), a, compute=False)
    assert a[...].tolist() == [0] * 8
    delayed.compute()
    assert a[...].tolist() == [7] * 8
    with pytest.raises(ReadOnlyError):
        store_dask(da.zeros((8,), chunks=4), zarrx.open_array(store.with_read_only(True)))


def test_aligned_chunks() -> None:
    assert aligned_chunks((slice(0, 50),), (10,), ((20, 20, 10),)) is None
    assert aligned_chunks((slice(3, 50),), (10,), ((25, 22),)) == ((7, 20, 20),)
    assert aligned_chunks((slice(0, 7), slice(0, 30)), (10, 10), ((7,), (15, 15))) == (
        (7,), (20, 10))


def test_plain_dask_functions_accept_zarrx_arrays() -> None:
    """``da.from_array`` and ``da.store`` work on the Array itself (threaded scheduler)."""
    data = np.arange(24 * 10, dtype="u2").reshape(24, 10)
    a = zarrx.create_array(MemoryStore(), shape=data.shape, dtype="u2", chunks=(6, 5))
    a[...] = data
    x = da.from_array(a, chunks=a.chunks)
    np.testing.assert_array_equal(x.compute(), data)
    b = zarrx.create_array(MemoryStore(), shape=data.shape, dtype="u2", chunks=(6, 5))
    da.store(x[::-1] + 1, b, lock=False)
    np.testing.assert_array_equal(b[...], data[::-1] + 1)


def test_handle_pickles_as_store_and_path(tmp_path: Path) -> None:
    a = zarrx.create_array(str(tmp_path / "p"), shape=(4, 4), dtype="i8", chunks=(2, 2))
    a[...] = np.eye(4, dtype="i8")
    handle = pickle.loads(pickle.dumps(ArrayHandle(a)))
    assert handle.store == LocalStore(tmp_path / "p")
    np.testing.assert_array_equal(handle[...], np.eye(4))
    handle[0, 3] = 9
    assert a[0, 3] == 9


def test_distributed_local_cluster_writes_and_reads(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster, get_task_stream

    shape, chunks = (230, 170), (32, 24)
    expected = (np.arange(230 * 170, dtype="<i8") * 3 + 1).reshape(shape)
    root = tmp_path / "cluster.zarr"
    target = zarrx.create_array(str(root), name="x", shape=shape, dtype="<i8", chunks=chunks)
    with (
        LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
            dashboard_address=None, local_directory=str(tmp_path / "dask-scratch"),
        ) as cluster,
        Client(cluster) as client,
    ):
        workers = client.scheduler_info()["workers"]
        assert len(workers) == 2
        assert all(address.startswith("tcp://127.0.0.1:") for address in workers)
        pids = set(client.run(os.getpid).values())
        assert len(pids) == 2  # two worker processes...
        assert os.getpid() not in pids  # ...neither of them this one

        source = (da.arange(230 * 170, chunks=5000, dtype="<i8") * 3 + 1).reshape(shape)
        source = source.rechunk((50, 45))  # not aligned with the chunks: store_dask realigns
        with get_task_stream(client) as stream:
            store_dask(source, target)  # runs on the cluster (the active client)
        writers = {task["worker"] for task in stream.data if "store" in str(task["key"])}
        assert writers  # written by the worker processes
        assert writers <= set(workers)

        reread = zarrx.open_array(str(root), path="x", mode="r")
        back = client.compute(to_dask(reread)).result()
        total = client.compute(to_dask(reread, chunks=(100, 100)).sum()).result()
    np.testing.assert_array_equal(back, expected)  # every value, read on the workers
    assert int(total) == int(expected.sum())
    np.testing.assert_array_equal(zarrx.open_array(str(root), path="x")[...], expected)
    store = LocalStore(root)
    chunk_keys = [k for k in store.list_prefix("x/") if k.startswith("x/c/")]
    assert len(chunk_keys) == target.nchunks == 8 * 8  # none lost



def test_process_workers_write_parts_of_the_same_shards_without_a_lock(tmp_path: Path) -> None:
    """dask blocks smaller than the shards, not aligned with them or with the inner chunks,
    written by ``da.store(lock=False)`` from two worker processes with two threads each:
    the store's atomic updates keep every value."""
    from distributed import Client, LocalCluster

    shape = (60, 66)
    expected = (np.arange(60 * 66, dtype="<i4") * 7 - 5).reshape(shape)
    root = str(tmp_path / "sharded.zarr")
    target = zarrx.create_array(root, shape=shape, dtype="<i4", chunks=(10, 11),
                                shards=(30, 33), fill_value=0)
    assert target.store.supports_atomic_update
    source = da.from_array(expected, chunks=(7, 9))  # 9 x 8 blocks over 2 x 2 shards
    with (
        LocalCluster(
            n_workers=2, processes=True, threads_per_worker=2, host="127.0.0.1",
            dashboard_address=None, local_directory=str(tmp_path / "dask-scratch"),
        ) as cluster,
        Client(cluster),
    ):
        da.store(source, target, lock=False)
    np.testing.assert_array_equal(zarrx.open_array(root)[...], expected)
    assert sorted(LocalStore(root).list()) == [
        "c/0/0", "c/0/1", "c/1/0", "c/1/1", "zarr.json"]  # no lock file left


def test_public_names() -> None:
    assert zarrx.to_dask is to_dask
    assert zarrx.store_dask is store_dask


def test_module_examples_run() -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module("zarrx.integrations.dask"))
    assert result.attempted > 0
    assert result.failed == 0
