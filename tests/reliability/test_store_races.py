"""Readers racing writers, store by store: reads in rounds against writers replacing the
value (0 reads mixing two versions, 0 errors), whole writes against updates of the same
value (0 lost writes), and a chunk's partial blosc reads against a writer flipping it
between plain-copy and compressed frames (0 values never stored).

LocalStore's writers are processes (other machines sharing the file system); memory and
zip stores' are threads (only one process can write them). Object stores race the same
way in ``tests/stores/test_s3_rounds.py``.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.abc.store import Store
from zarrx.storage import LocalStore, MemoryStore, ZipStore
from zarrx.testing.rounds import VersionReader, race_counters, version_value

RACER = Path(__file__).with_name("racer.py")
KEYS = ["a/v", "b/c/v"]
#: A guard against a hang only, never a deadline.
HANG_GUARD = 600


@contextmanager
def _fine_grained_threads() -> Iterator[None]:
    """Threads switch far more often than every 5 ms: races meet more often."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


class _Reads:
    """Reads in rounds of ``KEYS`` (two readers at once) until ``busy()`` is false."""

    def __init__(self) -> None:
        self.count = 0
        self.mixed: list[tuple[str, dict[int, int]]] = []
        self.versions: set[int] = set()

    def run(self, store: Store, busy: Callable[[], bool]) -> None:
        while busy() or not self.count:
            readers = [VersionReader() for _ in KEYS]
            store.read_rounds(list(zip(KEYS, readers)))
            for key, reader in zip(KEYS, readers):
                self.count += 1
                if not reader.consistent():
                    self.mixed.append((key, reader.words))
                if reader.version is not None:
                    self.versions.add(reader.version)


def _seed(store: Store) -> None:
    for key in KEYS:
        store.set(key, version_value(0))


def test_local_reads_in_rounds_race_writer_processes(tmp_path: Path) -> None:
    """Three writer processes replace two keys 300 times each (renames of new files, the
    lock file of whole writes); the reader's every round comes from one version."""
    root = tmp_path / "store"
    store = LocalStore(root)
    _seed(store)
    writers = 3
    procs = [subprocess.Popen(
        [sys.executable, str(RACER), str(root), str(w + 1), str(writers), "300", *KEYS],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for w in range(writers)]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reads = _Reads()
        reads.run(store, lambda: any(proc.poll() is None for proc in procs))
    finally:
        for proc in procs:
            try:
                out, err = proc.communicate(timeout=HANG_GUARD)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
            assert proc.returncode == 0, err
            assert out.split()[-1:] == ["done"], err
    assert reads.mixed == []
    assert len(reads.versions) > 1  # the writers were seen at work


def _zip(tmp_path: Path) -> ZipStore:
    return ZipStore(tmp_path / "data.zip", mode="w")


@pytest.mark.parametrize(("make", "count"), [(lambda _: MemoryStore(), 3000), (_zip, 300)],
                         ids=["memory", "zip"])
def test_reads_in_rounds_race_writer_threads(make: Any, count: int, tmp_path: Path) -> None:
    """Two writer threads replace two keys ``count`` times each (set, set_parts and
    atomic_set_parts in turn) while two reader threads read them in rounds."""
    store = make(tmp_path)
    _seed(store)
    writing = [2]
    errors: list[BaseException] = []

    def write(writer: int) -> None:
        try:
            for i in range(count):
                value = version_value(1 + writer + 2 * i)
                for key in KEYS:
                    if i % 3 == 0:
                        store.set(key, value)
                    elif i % 3 == 1:
                        store.set_parts(key, [value[:8], memoryview(value)[8:]])
                    else:
                        store.atomic_set_parts(key, [value])
        except BaseException as error:
            errors.append(error)
        finally:
            writing[0] -= 1

    reads = [_Reads(), _Reads()]

    def read(n: int) -> None:
        try:
            reads[n].run(store, lambda: writing[0] > 0)
        except BaseException as error:
            errors.append(error)

    with _fine_grained_threads():
        threads = [threading.Thread(target=write, args=(w,)) for w in range(2)]
        threads += [threading.Thread(target=read, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(HANG_GUARD)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert [r.mixed for r in reads] == [[], []]
    assert len(reads[0].versions | reads[1].versions) > 1
    store.close()


@pytest.mark.parametrize("kind", ["local", "memory", "zip"])
def test_whole_writes_beside_updates_lose_nothing(kind: str, tmp_path: Path) -> None:
    """A thread writing the value whole (atomic_set_parts) while four others update parts
    of it (atomic_update): no whole write and no increment is lost."""
    store: Any = (LocalStore(tmp_path / "store") if kind == "local"
                  else MemoryStore() if kind == "memory" else _zip(tmp_path))
    with _fine_grained_threads():
        for attempt in range(3):  # races are intermittent: repeat
            assert race_counters(store, f"k/{attempt}", generations=40, updaters=4,
                                 rounds=40) == []
    store.close()


# -- a chunk's partial reads against a writer flipping its frame -------------------------------

_N = 1 << 16  # uint32 elements: a chunk of 256 KiB, read in part by a point


def _frames(versions: int) -> list[bytes]:
    """The stored chunk of each version (element i of version v is ``v << 16 | i``),
    alternately a plain-copy blosc frame (clevel 0: the same header whatever it holds)
    and an lz4-compressed one."""
    frames = []
    for version in range(1, versions + 1):
        scratch = MemoryStore()
        a = zarrx.create_array(scratch, shape=(_N,), chunks=(_N,), dtype="<u4",
                               compressors=_blosc(5 * (version % 2)))
        a[...] = (np.uint32(version) << np.uint32(16)) | np.arange(_N, dtype="<u4")
        frames.append(scratch.get("c/0") or b"")
    return frames


def _blosc(clevel: int) -> dict[str, Any]:
    return {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": clevel, "shuffle": "shuffle", "typesize": 4}}


def _obstore_memory(_: Path) -> Any:
    from obstore.store import MemoryStore as ObstoreMemory

    from zarrx.stores.obstore import ObstoreStore

    return ObstoreStore(ObstoreMemory())


@pytest.mark.parametrize(("make", "pause"), [
    (lambda path: LocalStore(path / "store"), 0), (lambda _: MemoryStore(), 0),
    (_obstore_memory, 0.005),
], ids=["local", "memory", "obstore"])
def test_partial_blosc_reads_race_a_frame_flipping_writer(make: Any, pause: float,
                                                          tmp_path: Path) -> None:
    """Points and short runs of a 256 KiB blosc chunk read in part (the header, then
    blocks) while a writer replaces the chunk, flipping between plain-copy and lz4 frames
    of other values: every value read was stored, and a run's values come from one
    version. (An object store's reader starts again
    when the chunk changed between its rounds, a bounded number of times: there the
    writer pauses between writes, as a writer of one chunk on another machine would.)"""
    store = make(tmp_path)
    frames = _frames(12)
    a = zarrx.create_array(store, shape=(_N,), chunks=(_N,), dtype="<u4",
                           compressors=_blosc(5))
    store.set("c/0", frames[0])
    stop = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            while not stop.is_set():
                for frame in frames:
                    store.set("c/0", frame)
                    time.sleep(pause)
        except BaseException as error:
            errors.append(error)

    rng = np.random.default_rng(0)
    wrong = []
    writer = threading.Thread(target=write)
    with _fine_grained_threads():
        writer.start()
        try:
            for _ in range(1500):
                i = int(rng.integers(0, _N - 8))
                got = np.atleast_1d(a[i] if i % 2 else a[i : i + 8])
                index = np.arange(i, i + len(got), dtype="<u4")
                versions = got >> np.uint32(16)
                if ((got & np.uint32(0xFFFF)) != index).any() or not (
                        (versions >= 1) & (versions <= len(frames))).all() or (
                        versions != versions[0]).any():  # a run: of one version too
                    wrong.append((i, got))
        finally:
            stop.set()
            writer.join(HANG_GUARD)
    assert errors == []
    assert wrong == []
