"""LocalStore: reads in rounds from one open file, through ``openat2`` and the checked
path; on the I/O threads, or in the caller when it holds a key's lock; whole writes
through the lock file; and the root's descriptor, closed once unused."""

from __future__ import annotations

import gc
import os
import shutil
import struct
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import zarrx.stores.local as local_module
from zarrx.abc.store import ByteRange, Value
from zarrx.errors import InvalidKeyError
from zarrx.stores.keys import LOCK_PREFIX
from zarrx.stores.local import LocalStore
from zarrx.stores.root import RootDescriptor
from zarrx.testing.rounds import Scripted, VersionReader, version_value

_FDS = Path("/proc/self/fd")


@pytest.fixture(params=["openat2", "checks"])
def fence(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each read path: ``openat2`` where the platform has it, and the checked path."""
    if request.param == "checks" or not local_module.use_openat2:
        monkeypatch.setattr(local_module, "use_openat2", False)
    return str(request.param)


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "store")


def _open_descriptors() -> int:
    return len(os.listdir(_FDS))


def test_every_round_reads_the_file_opened_first(store: LocalStore, fence: str) -> None:
    """A writer renames a new file over the key, or erases it, between rounds: the reader
    goes on reading the file it opened."""
    store.set("a/v", version_value(1))
    reader = VersionReader(lambda r: store.set("a/v", version_value(2)) if r == 1 else None)
    store.read_rounds([("a/v", reader)])
    assert reader.consistent()
    assert (reader.version, reader.restarts) == (1, 0)
    erased = VersionReader(lambda r: store.erase("a/v") if r == 1 else None)
    store.read_rounds([("a/v", erased)])
    assert erased.consistent()
    assert erased.version == 2


def test_rounds_never_leave_the_root(tmp_path: Path, store: LocalStore, fence: str) -> None:
    (tmp_path / "outside").write_bytes(b"secret")
    store.set("a/k", b"v")
    (store.root / "a" / "leak").symlink_to(tmp_path / "outside")
    with pytest.raises(InvalidKeyError, match="outside the store root"):
        store.read_rounds([("a/k", Scripted(lambda got: [])),
                           ("a/leak", Scripted(lambda got: [] if got else [ByteRange(0)]))])
    reader = Scripted(lambda got: [] if got else [ByteRange(0, 3)])
    store.read_rounds([("a/k/below", reader)])  # a path through a file: absent
    assert reader.received == [[None]]
    (store.root / "d").mkdir()
    directory = Scripted(lambda got: [] if got else [ByteRange(0, 3)])
    store.read_rounds([("d", directory)])  # a directory is no value
    assert directory.received == [[None]]


class _Where(Scripted):
    """A reader that notes the threads that served it."""

    def __init__(self) -> None:
        super().__init__(lambda got: [] if len(got) == 2 else [ByteRange(0, 1)])
        self.threads: set[str] = set()

    def receive(self, values: Sequence[Value | None]) -> None:
        self.threads.add(threading.current_thread().name)
        super().receive(values)


def test_many_keys_are_read_on_the_io_threads_unless_a_lock_is_held(
        store: LocalStore) -> None:
    keys = [f"c/{i}" for i in range(16)]
    for key in keys:
        store.set(key, key.encode())
    readers = [_Where() for _ in keys]
    store.read_rounds(list(zip(keys, readers)))
    assert [r.received for r in readers] == [[[b"c"], [b"c"]]] * len(keys)
    assert set().union(*(r.threads for r in readers)) <= {
        name for name in (t.name for t in threading.enumerate()) if name.startswith("zarrx-io")}
    held: list[_Where] = []

    def update(old: bytes | None) -> bytes:
        held.extend(_Where() for _ in keys)
        store.read_rounds(list(zip(keys, held)))  # under the lock of "x": in this thread
        assert store.get_many([(k, None) for k in keys]) == [k.encode() for k in keys]
        return b"done"

    store.atomic_update("x", update)
    assert set().union(*(r.threads for r in held)) == {threading.current_thread().name}
    with store.lock("y"):
        again = [_Where() for _ in keys]
        store.read_rounds(list(zip(keys, again)))
    assert set().union(*(r.threads for r in again)) == {threading.current_thread().name}


@pytest.mark.skipif(not _FDS.is_dir(), reason="counts descriptors in /proc/self/fd")
def test_rounds_close_every_file(store: LocalStore, fence: str) -> None:
    store.set("k", b"0123456789")

    class Refusing(Scripted):
        def receive(self, values: Sequence[Value | None]) -> None:
            raise ValueError("bad index")

    store.read_rounds([("k", Scripted(lambda got: [] if got else [ByteRange(0, 1)]))])
    gc.collect()  # files of stores an earlier test left to the collector
    before = _open_descriptors()
    for _ in range(20):
        with pytest.raises(ValueError, match="bad index"):
            store.read_rounds([("k", Refusing(lambda got: [ByteRange(0, 2)]))] * 4)
        store.read_rounds([("k", VersionReader()), ("absent", VersionReader())])
    assert _open_descriptors() <= before


@pytest.mark.skipif(not _FDS.is_dir(), reason="counts descriptors in /proc/self/fd")
def test_a_root_replaced_many_times_leaves_no_descriptor(tmp_path: Path) -> None:
    """300 times: the root removed and made again, then written and read (one read in
    rounds, one batch on the I/O threads): the process's descriptors stay as many."""
    root = tmp_path / "store"
    store = LocalStore(root)
    keys = [f"c/{i}" for i in range(8)]

    def cycle() -> None:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        for key in keys:
            store.set(key, version_value(3))
        assert store.get("c/0") == version_value(3)
        reader = VersionReader()
        store.read_rounds([("c/1", reader)])
        assert reader.consistent()
        assert store.get_many([(k, None) for k in keys]) == [version_value(3)] * len(keys)

    cycle()  # the I/O threads started, the root's descriptor held
    gc.collect()  # files of stores an earlier test left to the collector
    before = _open_descriptors()
    for _ in range(300):
        cycle()
    assert _open_descriptors() <= before


def test_a_descriptor_in_use_is_closed_by_its_last_user(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    descriptor = RootDescriptor(str(root))
    with descriptor.use() as first:
        root.rename(tmp_path / "gone")
        root.mkdir()
        with descriptor.use() as second:  # the new root: the old descriptor kept open
            assert second != first
            assert os.path.samestat(os.fstat(second), os.stat(root))
            os.fstat(first)
        os.fstat(first)  # still in use here
        os.fstat(second)  # the current one: kept for the next use
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(first)  # closed once its last user was done
    shutil.rmtree(root)
    with descriptor.use() as none:
        assert none is None  # no root: the checked path decides
    descriptor.close()


def test_whole_writes_go_through_the_lock_file(store: LocalStore, fence: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``atomic_set_parts`` makes one file, the lock file, and renames it over the key."""
    made: list[str] = []
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        made.append(os.path.basename(src))
        real(src, dst)

    monkeypatch.setattr(local_module.os, "replace", replace)
    real_kernel = local_module.write_locked_beneath

    def kernel(dirfd: int, directory: bytes, name: bytes, lock: bytes, data: Any) -> Any:
        step, code = real_kernel(dirfd, directory, name, lock, data)
        if not step:  # written by the kernel: the lock file renamed over the key
            made.append(os.fsdecode(lock))
        return step, code

    monkeypatch.setattr(local_module, "write_locked_beneath", kernel)
    store.atomic_set_parts("a/k", [b"01", memoryview(b"23")])
    store.atomic_set_parts("a/k", [b"new"] * 1000)
    assert store.get("a/k") == b"new" * 1000
    assert made == [LOCK_PREFIX + "k.lock"] * 2
    big = os.urandom(1 << 20)
    store.atomic_set_parts("a/big", [big[:10], big[10:]])  # a large file replaced later
    store.atomic_set_parts("a/big", [big])
    assert store.get("a/big") == big
    store.atomic_set_parts("a/k", None)
    assert store.list() == ["a/big"]
    assert sorted(p.name for p in (store.root / "a").iterdir()) == ["big"]


def _blocked_on(path: Path) -> bool:
    """Whether a lock request waits on the file ``path`` (``/proc/locks`` lists waiters
    with ``->``, naming the file as ``major:minor:inode``)."""
    inode = f":{path.stat().st_ino} "
    lines = Path("/proc/locks").read_text().splitlines()
    return any("->" in line and inode in line for line in lines)


@pytest.mark.skipif(not local_module.locks.OFD or not Path("/proc/locks").exists(),
                    reason="open file description locks and /proc/locks are Linux's")
@pytest.mark.parametrize("then", ["moved", "replaced"])
def test_a_writer_waiting_on_a_lock_file_its_holder_moved_starts_again(
        store: LocalStore, fence: str, then: str) -> None:
    """The holder of the key's lock renames the lock file over the key while a writer
    waits on it (``moved``), or another lock file then takes the name (``replaced``):
    the waiter finds that the name no longer leads to the file it locked, takes the one
    it leads to now, and its value is the key's in the end; no lock file is left."""
    import fcntl  # (POSIX only: the module runs everywhere)

    store.set("a/k", b"old")
    lock = store.root / "a" / (LOCK_PREFIX + "k.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    request = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    fcntl.fcntl(fd, fcntl.F_OFD_SETLKW, request)
    writer = threading.Thread(target=store.atomic_set_parts, args=("a/k", [b"new"]))
    try:
        writer.start()
        deadline = time.monotonic() + 60
        while not _blocked_on(lock):
            assert writer.is_alive(), "the writer did not wait"
            assert time.monotonic() < deadline, "the writer did not wait"
            time.sleep(0.001)  # (polls until the writer waits; nothing is timed)
        os.write(fd, b"holder")
        os.replace(lock, store.root / "a" / "k")  # the holder's update, in place
        if then == "replaced":
            lock.write_bytes(b"")  # a new lock file, held by nobody
    finally:
        os.close(fd)  # releases the lock
        writer.join(60)
    assert not writer.is_alive()
    assert store.get("a/k") == b"new"
    assert sorted(p.name for p in (store.root / "a").iterdir()) == ["k"]
