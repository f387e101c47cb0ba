"""Lock holders that use the pools, run as ``python holders.py JOB STORE THREADS ROOT``;
prints ``ok`` once every thread has finished (the test kills it if it never does).

The I/O pool is small (2 threads) and ``zarrx.config`` threads is ``THREADS``. Jobs:

- ``updates``: many threads update three keys at once (``atomic_update``), some from the
  chunk pool's workers, while others write the same keys whole through
  ``BackgroundWrites.atomic_set_parts`` (the I/O threads then wait on the keys' locks).
  Every update, under its key's lock, calls ``run_all`` (the chunk pool), reads eight
  keys at once (on ``LocalStore``: the I/O pool) and writes through a ``BackgroundWrites``
  of one slot. A holder that waited for a pool would wait for workers that wait for it.
- ``shards``: threads write different parts of the same shards of one array (some of
  one shard, whose update runs in the writer's thread, some of every shard, whose updates
  run on the chunk pool), and dask's threaded scheduler stores an array whose blocks
  split shards (``lock=False``).

STORE is ``memory``, ``zip`` or ``local`` (a store under ROOT).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from zarrx.runtime import executor

executor.IO_THREADS = 2  # a small I/O pool (it is made on first use, after this)

import numpy as np  # noqa: E402

import zarrx  # noqa: E402
from zarrx.runtime.executor import BackgroundWrites, run_all  # noqa: E402
from zarrx.storage import LocalStore, MemoryStore, ZipStore  # noqa: E402

ROUNDS = 12


def _store(kind: str, root: Path) -> Any:
    if kind == "memory":
        return MemoryStore()
    if kind == "zip":
        return ZipStore(root / "data.zip", mode="w")
    return LocalStore(root / "data")


def updates(store: Any) -> None:
    keys = [f"k/{i}" for i in range(3)]
    reads = [(f"r/{i}", None) for i in range(8)]
    for key in keys:
        store.set(key, b"0")
    for key, _ in reads:
        store.set(key, b"r")

    def update(old: bytes | None) -> bytes:
        run_all(lambda i: None, range(4))  # the chunk pool
        assert store.get_many(reads) == [b"r"] * 8  # the I/O pool, on a local store
        writes = BackgroundWrites(store, limit=1)  # one slot, freed by the I/O threads
        for i in range(3):
            writes.set(f"side/{threading.get_ident()}/{i}", b"s")
        writes.wait()
        return str(int(old or b"0") + 1).encode()

    def updater(n: int) -> None:
        for r in range(ROUNDS):
            store.atomic_update(keys[(n + r) % 3], update)

    def whole(n: int) -> None:
        writes = BackgroundWrites(store, limit=2)
        for r in range(ROUNDS):
            writes.atomic_set_parts(keys[(n + r) % 3], [b"1", b"0"])
        writes.wait()

    jobs = [lambda n=n: updater(n) for n in range(4)]  # plain threads
    jobs += [lambda n=n: run_all(updater, range(n, n + 4)) for n in range(2)]  # pool workers
    jobs += [lambda n=n: whole(n) for n in range(2)]
    _run(jobs)
    for key in keys:
        assert int(store.get(key)) >= 1, key


def shards(store: Any) -> None:
    a = zarrx.create_array(store, shape=(64, 64), dtype="i4", chunks=(8, 8), shards=(64, 32),
                           fill_value=-1)
    writers = 10

    def write(n: int) -> None:
        # rows of parts of shards: of the first alone (one update, in the writer's
        # thread), or of both (updates on the chunk pool, the first shard's first)
        columns = slice(0, 32) if n < 3 else slice(0, 64)
        for r in range(ROUNDS):
            a[n + r % 2 * writers : 64 : 2 * writers, columns] = n

    _run([lambda n=n: write(n) for n in range(writers)])
    data = a[...]
    for n in range(writers):
        assert (data[n + writers : 64 : 2 * writers, : 32 if n < 3 else 64] == n).all()

    import dask
    import dask.array as da

    x = da.from_array(np.arange(64 * 64, dtype="i4").reshape(64, 64), chunks=(24, 20))
    with dask.config.set(scheduler="threads"):
        da.store(x, a, lock=False)  # blocks that split shards, stored concurrently
    assert (a[...] == x.compute()).all()


def _run(jobs: list[Any]) -> None:
    failures: list[BaseException] = []

    def guarded(job: Any) -> None:
        try:
            job()
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=guarded, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def main(job: str, kind: str, threads: int, root: str) -> None:
    store = _store(kind, Path(root))
    with zarrx.config.set(threads=threads):
        {"updates": updates, "shards": shards}[job](store)
    store.close()
    print("ok", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
