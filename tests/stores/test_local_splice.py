"""LocalStore's native splice: under the key's lock the current file is read only where
the splice asks, the new value is written into the lock file and renamed over the key;
nothing else is made, an interrupted splice leaves the old value, and the fence holds."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import wait
from pathlib import Path
from typing import Any

import pytest

from zarrx.abc.store import ByteRange, Part, Stored
from zarrx.errors import InvalidKeyError, StoreError
from zarrx.runtime.executor import IO_THREADS, io_pool
from zarrx.stores import splice
from zarrx.stores.keys import lock_name
from zarrx.stores.local import LocalStore


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "store")


def _keep_middle(current: Stored | None) -> Sequence[Part]:
    assert current is not None
    return [b"<", ByteRange(1, current.size - 2), b">"]


def test_the_lock_file_becomes_the_value_and_no_other_file_is_made(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.set("a/k", b"0123456789")
    made: list[Any] = []
    monkeypatch.setattr(LocalStore, "_open_temp", lambda *a: made.append(a))  # never called
    reads: list[ByteRange] = []
    real_read = splice.FileValue.read

    def read(self: splice.FileValue, byte_range: ByteRange) -> bytes:
        reads.append(byte_range)
        return real_read(self, byte_range)

    monkeypatch.setattr(splice.FileValue, "read", read)

    def build(current: Stored | None) -> Sequence[Part]:
        assert current is not None
        current.read(ByteRange(8, 2))  # what the splice asks for (an index, say)
        return _keep_middle(current)

    store.atomic_splice("a/k", build)
    assert store.get("a/k") == b"<12345678>"
    assert made == []
    # the splice's read alone: the kept range is copied from a mapping, not read
    assert reads == [ByteRange(8, 2)]
    assert os.listdir(store.root / "a") == ["k"]  # no lock or temporary file left


def test_a_lock_file_left_with_bytes_by_a_killed_writer_is_emptied_first(
        store: LocalStore) -> None:
    store.set("a/k", b"0123456789")
    (store.root / "a" / lock_name("k", 255)).write_bytes(b"stale bytes of a killed writer" * 9)
    store.atomic_splice("a/k", _keep_middle)
    assert store.get("a/k") == b"<12345678>"
    assert os.listdir(store.root / "a") == ["k"]


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_an_interrupted_splice_leaves_the_old_value(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch, failure: BaseException) -> None:
    store.set("a/k", b"0123456789")
    real_writev = os.writev

    def writev(fd: int, buffers: Sequence[Any]) -> int:
        real_writev(fd, buffers[:1])  # part of the new value is written, then it fails
        raise failure

    monkeypatch.setattr(splice.os, "writev", writev)
    with pytest.raises(StoreError if isinstance(failure, OSError) else KeyboardInterrupt):
        store.atomic_splice("a/k", _keep_middle)
    monkeypatch.undo()
    assert store.get("a/k") == b"0123456789"
    assert os.listdir(store.root / "a") == ["k"]  # the lock file, half written, removed
    store.atomic_splice("a/k", _keep_middle)  # the key is not left locked
    assert store.get("a/k") == b"<12345678>"


def test_a_splice_makes_directories_and_an_erase_prunes_them(store: LocalStore) -> None:
    store.set("keep", b"k")
    store.atomic_splice("a/b/c", lambda current: [b"new"])
    assert store.get("a/b/c") == b"new"
    store.atomic_splice("a/b/c", lambda current: None)
    assert store.get("a/b/c") is None
    assert sorted(os.listdir(store.root)) == ["keep"]  # a/b/ and a/ pruned


def test_splices_through_a_link_out_of_the_store_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"precious")
    root = tmp_path / "store"
    root.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    store = LocalStore(root)
    for key in ("link/secret", "link/new", "link/sub/new"):
        with pytest.raises(InvalidKeyError, match="outside the store root"):
            store.atomic_splice(key, lambda current: [b"x"])
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert (outside / "secret").read_bytes() == b"precious"


def test_a_file_that_cannot_be_mapped_is_read_a_few_mib_at_a_time(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splice, "_mapping", lambda source: None)
    monkeypatch.setattr(splice, "BUFFERED", 1000)
    value = bytes(range(256)) * 40  # 10240 bytes: kept ranges read in 1000-byte reads
    store.set("k", value)
    lengths: list[int] = []
    real_read = splice.FileValue.read
    monkeypatch.setattr(splice.FileValue, "read", lambda self, r: lengths.append(r.length)
                        or real_read(self, r))
    store.atomic_splice("k", lambda c: [ByteRange(0, 5000), b"mid", ByteRange(5000, 5240)])
    assert store.get("k") == value[:5000] + b"mid" + value[5000:]
    assert max(lengths) == 1000


def test_a_file_cut_short_by_a_writer_ignoring_the_lock_fails_the_splice(
        store: LocalStore) -> None:
    """The kept range is mapped, and the file is cut short before the kernel copies it:
    the copy fails (no SIGBUS: Python never touches the mapping), nothing is replaced."""
    store.set("k", bytes(range(256)) * 64)

    def build(current: Stored | None) -> Sequence[Part]:
        assert current is not None
        os.truncate(store.root / "k", 10)  # another program, without zarrx's lock
        return [ByteRange(0, current.size), b"!"]

    with pytest.raises(StoreError, match="cannot write key 'k'"):
        store.atomic_splice("k", build)
    assert store.get("k") == bytes(range(10))
    assert os.listdir(store.root) == ["k"]


def _settle_io_threads() -> None:
    """Return once every task handed to the I/O threads before has finished: one task per
    thread, all meeting at a barrier, can only all run when every thread is free."""
    barrier = threading.Barrier(IO_THREADS)
    wait([io_pool().submit(barrier.wait, 10) for _ in range(IO_THREADS)])


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts /proc/self/fd")
def test_the_replaced_files_are_closed(store: LocalStore, monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    monkeypatch.setattr(splice, "CLOSE_LATER", 0)  # every one on the I/O threads
    store.set("k", b"0123456789")
    store.atomic_splice("k", _keep_middle)  # the I/O threads started
    _settle_io_threads()  # its replaced file closed: the count starts from a settled state
    before = _open_descriptors()
    for _ in range(50):
        store.atomic_splice("k", lambda c: [ByteRange(0, c.size)] if c else [])
    deadline = time.monotonic() + 10
    while _open_descriptors() > before and time.monotonic() < deadline:
        time.sleep(0.01)  # closed on the I/O threads, soon
    assert _open_descriptors() <= before
    assert store.get("k") == b"<12345678>"
