"""Splices of files: a new file written from bytes and byte ranges of an open file (what
:meth:`zarrx.stores.local.LocalStore.atomic_splice` does under a key's lock).

The kept ranges are written straight from a read-only mapping of the current file, with
the new bytes, by ``writev``: the kernel copies them once, from the old file's page cache
into the new file's. Measured on ext4 for one inner chunk written into a 4 MiB shard
(interleaved, CPU time per update): reading them first (``pread``) costs ~12% more, and
``copy_file_range(2)`` as much as reading (on ext4 it copies through a pipe, 64 KiB at a
time; a reflink on file systems that share blocks needs block-aligned ranges, which a
shard's rarely are).

The replaced file is freed when its last descriptor closes, and freeing an allocated
file can block: on ext4 a 4 MiB file takes about 0.5 ms of CPU and 3-6 ms in all, in
the kernel (it waits for the writeback its own rename started: measured, a rename over a
4 MiB file takes ~3 ms, ~0.15 ms when the old file is held open). :func:`close_later`
closes the splice's descriptor of it on the I/O threads, after the update is done, so the
writer does not wait for that (a few at a time; beyond that, in the caller). A plain
write of a large value holds the file it replaces the same way (:func:`hold`): the last
shard of a write is then done once it is renamed.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import stat
import threading
from collections.abc import Sequence

from zarrx._core.files import open_beneath
from zarrx.abc.store import ByteRange, Part, Stored, Value, span
from zarrx.runtime.executor import io_pool

_IOV_MAX = 1024  # the most buffers one writev takes (IOV_MAX on Linux)
#: How much of the old value a splice reads before writing it.
BUFFERED = 4 << 20
_CLOSING = 8  # descriptors closed on the I/O threads at once, at most
_MAP_POPULATE = getattr(mmap, "MAP_POPULATE", 0)  # Linux
_WRITEV = hasattr(os, "writev")  # not on Windows: one buffer a call there
#: Smaller files are freed faster than a hand-over to a thread (and a write of a value
#: this large holds the file it replaces: :func:`hold`).
CLOSE_LATER = 1 << 20


def _slots() -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(_CLOSING)


_closing = _slots()
if hasattr(os, "register_at_fork"):  # a forked child has none of its parent's threads
    os.register_at_fork(after_in_child=lambda: globals().update(_closing=_slots()))


def close_later(fd: int, size: int) -> None:
    """Close ``fd``, the last descriptor of a replaced file of ``size`` bytes, on an I/O
    thread (in the caller when the file is small, or enough closes wait already)."""
    slots = _closing
    if size < CLOSE_LATER or not slots.acquire(blocking=False):
        os.close(fd)
        return

    def close() -> None:
        try:
            os.close(fd)
        finally:
            slots.release()

    try:
        io_pool().submit(close)
    except RuntimeError:  # the interpreter is shutting down: no new threads
        close()


def hold(dirfd: int, key: str) -> tuple[int, int] | None:
    """A descriptor and the size of the regular file of ``key`` below ``dirfd`` (opened as
    reads open it), about to be replaced, for :func:`close_later` once it is; ``None``
    when it is absent, small, not a regular file or cannot be opened."""
    try:
        fd = open_beneath(dirfd, os.fsencode(key))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_size >= CLOSE_LATER:
            return fd, info.st_size
    except OSError:
        pass
    os.close(fd)
    return None


class FileValue(Stored):
    """The stored value of an open regular file of ``size`` bytes, read with ``pread``."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size

    def read(self, byte_range: ByteRange) -> bytes:
        start, stop = span(byte_range, self.size)
        data = os.pread(self.fd, stop - start, start)
        if len(data) != stop - start:
            raise OSError(errno.EIO, f"the file was cut short: {len(data)} of "
                          f"{stop - start} bytes at offset {start}")
        return data


def write_parts(fd: int, parts: Sequence[Part], source: FileValue | None) -> None:
    """Write ``parts`` to ``fd`` from its current position, in ``writev`` calls: bytes as
    they are, ranges of ``source`` from a read-only mapping of it (the kernel copies them
    from its page cache into the new file's: one copy, no buffer of ours), or, where the
    file cannot be mapped, read from it :data:`BUFFERED` bytes at a time."""
    kept = any(isinstance(part, ByteRange) for part in parts)
    if kept and source is None:
        raise ValueError("a splice of an absent key cannot keep ranges of its value")
    mapped = _mapping(source) if kept and source is not None else None
    if mapped is None or source is None:
        _write_read(fd, parts, source)
        return
    size = source.size
    try:
        whole = memoryview(mapped)
        write_run(fd, [whole[slice(*span(part, size))]
                        if isinstance(part, ByteRange) else part for part in parts])
        del whole
    finally:
        # Views of it may outlive the call in a traceback: then it is unmapped once freed.
        with contextlib.suppress(BufferError):
            mapped.close()


def _mapping(source: FileValue) -> mmap.mmap | None:
    """A read-only mapping of ``source`` (``None`` where it cannot be mapped). Only the
    kernel touches it (``writev`` reads it): were the file cut short by a writer that
    ignores the lock, the copy fails with ``EFAULT``, never a ``SIGBUS`` in Python."""
    if not source.size:
        return None
    try:
        if _MAP_POPULATE:  # its page table filled at once: ~5% less CPU than faults
            return mmap.mmap(source.fd, source.size, prot=mmap.PROT_READ,
                             flags=mmap.MAP_SHARED | _MAP_POPULATE)
        return mmap.mmap(source.fd, source.size, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # a file system without mmap (some FUSE ones)
        return None


def _write_read(fd: int, parts: Sequence[Part], source: FileValue | None) -> None:
    """:func:`write_parts` with the kept ranges read into memory, a few MiB at a time."""
    pending: list[Value] = []
    held = 0
    for part in parts:
        if not isinstance(part, ByteRange):
            pending.append(part)
            held += len(memoryview(part).cast("B"))
            continue
        assert source is not None
        start, stop = span(part, source.size)
        while start < stop:
            chunk = source.read(ByteRange(start, min(stop - start, BUFFERED)))
            pending.append(chunk)
            held += len(chunk)
            start += len(chunk)
            if held >= BUFFERED:
                write_run(fd, pending)
                pending, held = [], 0
    write_run(fd, pending)


def byte_view(value: Value) -> memoryview:
    """A flat byte view of ``value`` (a copy only when it is not contiguous in C order)."""
    view = memoryview(value)
    if view.format == "B" and view.ndim == 1:
        return view
    if view.c_contiguous:
        try:
            return view.cast("B")
        except TypeError:  # formats memoryview cannot cast (numpy records, ...)
            pass
    return memoryview(view.tobytes())


def write_run(fd: int, buffers: Sequence[Value]) -> None:
    """All of ``buffers`` written to ``fd``, in order: one ``writev`` system call, more
    only when the kernel writes less (or there are more than ``IOV_MAX`` of them)."""
    views = [memoryview(b).cast("B") for b in buffers]
    views = [v for v in views if len(v)]
    while views:
        batch = views[:_IOV_MAX]
        written = os.writev(fd, batch) if _WRITEV else os.write(fd, batch[0])
        if not written:
            raise OSError(errno.EIO, "the file system accepted no more bytes")
        taken = 0
        for v in batch:  # drop what was written; a view written in part keeps its rest
            if written >= len(v):
                written -= len(v)
                taken += 1
            else:
                views[taken] = v[written:]
                break
        del views[:taken]
