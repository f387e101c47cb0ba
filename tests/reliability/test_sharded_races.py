"""Sharded arrays under concurrent writers and readers, through the public API:

- no hang: many threads writing parts of the same shards finish, with chunk pools of 1, 2
  and 8 threads, on every store (each run in a child process with a deadline, so a hang
  fails the test instead of stopping the suite), and nothing any of them wrote is lost;
- no lost write: a thread writing whole shards beside threads updating parts of the same
  shards: every cell only the whole-shard writer writes holds its last value;
- no torn read: readers racing a writer that rewrites whole shards with one value each
  never see two versions of a shard (a region inside one shard is all one value).
"""

from __future__ import annotations

import multiprocessing as mp
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.storage import LocalStore, MemoryStore, ZipStore

STORES = ["memory", "zip", "local"]


def _store(kind: str, where: Path) -> Any:
    if kind == "memory":
        return MemoryStore()
    if kind == "zip":
        return ZipStore(str(where / "a.zip"), mode="w")
    return LocalStore(str(where / "a.zarr"))


_WRITERS = textwrap.dedent("""
    import random, sys, threading
    import numpy as np
    import zarrx
    from zarrx.storage import LocalStore, MemoryStore, ZipStore

    kind, where, pool = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = {"memory": lambda: MemoryStore(),
             "zip": lambda: ZipStore(where + "/a.zip", mode="w"),
             "local": lambda: LocalStore(where + "/a.zarr")}[kind]()
    zarrx.config.set(threads=pool)
    a = zarrx.create_array(store, shape=(64, 96), chunks=(4, 4), shards=(32, 32),
                           dtype="i4", fill_value=-1)
    WRITERS, WIDTH = 4, 24  # each thread owns a band of columns crossing the shards
    expected = np.full(a.shape, -1, dtype="i4")
    errors = []

    def write(t):
        try:
            rng = random.Random(t)
            lo = t * WIDTH
            for k in range(25):
                r0 = rng.randrange(0, 60); r1 = rng.randrange(r0 + 1, 65)
                c0 = rng.randrange(lo, lo + WIDTH); c1 = rng.randrange(c0 + 1, lo + WIDTH + 1)
                value = t * 1000 + k
                a[r0:r1, c0:c1] = value
                expected[r0:r1, c0:c1] = value
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=write, args=(t,)) for t in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    np.testing.assert_array_equal(a[...], expected)
    print("ok")
""")


@pytest.mark.parametrize("pool", [1, 2, 8])
@pytest.mark.parametrize("kind", STORES)
def test_threads_writing_parts_of_shards_finish_and_lose_nothing(
        tmp_path: Path, kind: str, pool: int) -> None:
    done = subprocess.run([sys.executable, "-c", _WRITERS, kind, str(tmp_path), str(pool)],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"


@pytest.mark.parametrize("kind", STORES)
def test_whole_shard_writes_beside_partial_updates_lose_nothing(
        tmp_path: Path, kind: str) -> None:
    """Thread W writes whole shards with increasing values; threads P update one row of
    each shard. A partial update that put back a shard read before W's last write would
    leave an older W value in the cells only W writes."""
    store = _store(kind, tmp_path)
    a = zarrx.create_array(store, shape=(32, 64), chunks=(4, 4), shards=(16, 32), dtype="i4",
                           fill_value=-1)
    rounds = 40
    errors: list[BaseException] = []

    def whole() -> None:
        try:
            for k in range(rounds):
                a[:, :] = np.full(a.shape, k, dtype="i4")
        except BaseException as e:
            errors.append(e)

    def partly(row: int) -> None:
        try:
            for k in range(rounds):
                a[row, 1:31] = 10_000 + k  # inside the shards of column 0 only
                a[row, 33:63] = 20_000 + k
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=whole)] + [
        threading.Thread(target=partly, args=(r,)) for r in (3, 19)]
    with zarrx.config.set(threads=2):
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=240)
    assert not any(t.is_alive() for t in threads), "a writer hangs"
    assert not errors, errors
    got = a[...]
    only_whole = np.ones(a.shape, dtype=bool)
    only_whole[[3, 19], 1:31] = False
    only_whole[[3, 19], 33:63] = False
    assert (got[only_whole] == rounds - 1).all(), np.unique(got[only_whole])


def _version(k: int, shape: tuple[int, ...]) -> np.ndarray:
    """Version ``k`` of the array: ``k`` in the high bits of every element, and in the low
    byte noise for odd ``k`` (zeros for even ones), so that versions compress to inner
    chunks of other sizes, at other offsets in their shards."""
    x = np.full(shape, k << 8, dtype="u4")
    if k % 2:
        x |= (np.arange(x.size, dtype="u4").reshape(shape) * 2654435761 >> 24) & 0xFF
    return x


def _rewrite_shards(root: str, rounds: int) -> None:
    a = zarrx.open_array(root, mode="r+")
    for k in range(1, rounds + 1):
        a[...] = _version(k, a.shape)


def _one_version_per_shard(got: np.ndarray, rows: slice, cols: slice,
                           shard: tuple[int, int], shape: tuple[int, int]) -> bool:
    """Every shard's share of the region ``rows, cols`` is one version's."""
    r = np.arange(rows.start, rows.stop)
    c = np.arange(cols.start, cols.stop)
    for sr in np.unique(r // shard[0]):
        for sc in np.unique(c // shard[1]):
            inside = np.ix_(r // shard[0] == sr, c // shard[1] == sc)
            part = got[inside]
            k = int(part.flat[0]) >> 8
            if not np.array_equal(part, _version(k, shape)[rows, cols][inside]):
                return False
    return True


def _random_region(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[slice, slice]:
    r0, c0 = int(rng.integers(0, shape[0] - 1)), int(rng.integers(0, shape[1] - 1))
    return (slice(r0, int(rng.integers(r0 + 1, shape[0] + 1))),
            slice(c0, int(rng.integers(c0 + 1, shape[1] + 1))))


@pytest.mark.parametrize("kind", STORES)
def test_readers_see_one_version_of_each_shard(tmp_path: Path, kind: str) -> None:
    store = _store(kind, tmp_path)
    shard, shape = (16, 32), (32, 64)
    a = zarrx.create_array(store, shape=shape, chunks=(4, 8), shards=shard, dtype="u4",
                           compressors=[{"name": "zstd"}])
    a[...] = _version(0, shape)
    stop = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            k = 0
            while not stop.is_set():
                k += 1
                a[...] = _version(k, shape)
        except BaseException as e:
            errors.append(e)

    writer = threading.Thread(target=write)
    writer.start()
    rng = np.random.default_rng(0)
    torn = 0
    try:
        for _ in range(300):
            rows, cols = _random_region(rng, shape)
            if not _one_version_per_shard(a[rows, cols], rows, cols, shard, shape):
                torn += 1
    finally:
        stop.set()
        writer.join(timeout=60)
    assert not errors, errors
    assert torn == 0


def test_readers_in_another_process_see_one_version_of_each_shard(tmp_path: Path) -> None:
    root = str(tmp_path / "p.zarr")
    shard, shape = (16, 32), (32, 64)
    a = zarrx.create_array(root, shape=shape, chunks=(4, 8), shards=shard, dtype="u4",
                           compressors=[{"name": "zstd"}])
    a[...] = _version(0, shape)
    ctx = mp.get_context("spawn")
    writer = ctx.Process(target=_rewrite_shards, args=(root, 400))
    writer.start()
    rng = np.random.default_rng(1)
    torn = reads = 0
    try:
        while writer.is_alive() and reads < 2000:
            rows, cols = _random_region(rng, shape)
            reads += 1
            if not _one_version_per_shard(a[rows, cols], rows, cols, shard, shape):
                torn += 1
    finally:
        writer.join(timeout=120)
    assert writer.exitcode == 0
    assert reads > 0
    assert torn == 0


_DASK = textwrap.dedent("""
    import sys
    import dask, dask.array as da
    import numpy as np
    import zarrx
    from zarrx.storage import LocalStore, MemoryStore, ZipStore

    kind, where, pool = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = {"memory": lambda: MemoryStore(),
             "zip": lambda: ZipStore(where + "/a.zip", mode="w"),
             "local": lambda: LocalStore(where + "/a.zarr")}[kind]()
    zarrx.config.set(threads=pool)
    expected = (np.arange(120 * 132, dtype="<i4") * 7 - 5).reshape(120, 132)
    a = zarrx.create_array(store, shape=expected.shape, dtype="<i4", chunks=(10, 11),
                           shards=(60, 66), fill_value=0)
    source = da.from_array(expected, chunks=(7, 9))  # blocks splitting shards and chunks
    with dask.config.set(scheduler="threads", num_workers=8):
        for _ in range(3):
            da.store(source, a, lock=False)
    np.testing.assert_array_equal(a[...], expected)
    print("ok")
""")


@pytest.mark.parametrize("pool", [1, 2, 8])
@pytest.mark.parametrize("kind", STORES)
def test_dask_threads_storing_blocks_that_split_shards_finish(
        tmp_path: Path, kind: str, pool: int) -> None:
    """``da.store(x, a, lock=False)`` with dask's threaded scheduler (8 threads) and blocks
    that split shards: finishes, every value kept."""
    done = subprocess.run([sys.executable, "-c", _DASK, kind, str(tmp_path), str(pool)],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
