"""Splices of files: a new file written from bytes and byte ranges of an open file, the
ranges copied by the kernel (what :meth:`zarrx.stores.local.LocalStore.atomic_splice` does
under a key's lock).

``copy_file_range(2)`` copies between two files without passing the bytes through user
space: file systems that share blocks (XFS, Btrfs, bcachefs, NFS 4.2 servers) make it a
reflink or a server-side copy, others (ext4, tmpfs) an in-kernel copy from the page
cache. Where the call is missing or the file system refuses it, the range is read and
written instead.

The replaced file is freed when its last descriptor closes, and freeing an allocated
file can block: on ext4 a 4 MiB file takes about 0.5 ms of CPU and 3-6 ms in all, in
the kernel. :func:`close_later` closes the splice's descriptor of it on the I/O threads,
after the update is done, so the writer does not wait for that (a few at a time; beyond
that, in the caller).
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Sequence

from zarrx.abc.store import ByteRange, Part, Stored, Value, span
from zarrx.runtime.executor import io_pool

#: Whether ``copy_file_range`` may be tried (turned off for the process when the kernel
#: lacks it). Tests set it to force the read-and-write path.
use_copy_file_range = hasattr(os, "copy_file_range")
_NO_KERNEL_COPY = frozenset({errno.ENOSYS, errno.EPERM})  # for the process
# For this file system (or these files): read and write the range instead.
_NOT_HERE = frozenset({errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP})
_IOV_MAX = 1024
_CLOSING = 8  # descriptors closed on the I/O threads at once, at most


def _slots() -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(_CLOSING)


_closing = _slots()
if hasattr(os, "register_at_fork"):  # a forked child has none of its parent's threads
    os.register_at_fork(after_in_child=lambda: globals().update(_closing=_slots()))


def close_later(fd: int) -> None:
    """Close ``fd`` on an I/O thread (in the caller when enough closes wait already)."""
    slots = _closing
    if not slots.acquire(blocking=False):
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
  # the fewest iovecs a writev may take (POSIX IOV_MAX on Linux)


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
    """Write ``parts`` to ``fd`` from its current position: runs of bytes with one
    ``writev`` each, ranges of ``source`` (adjacent ones merged) copied from it."""
    i = 0
    while i < len(parts):
        part = parts[i]
        if isinstance(part, ByteRange):
            if source is None:
                raise ValueError("a splice of an absent key cannot keep ranges of its value")
            start, stop = span(part, source.size)
            i += 1
            while i < len(parts):  # ranges that continue this one: one copy
                following = parts[i]
                if not isinstance(following, ByteRange) or following.start != stop:
                    break
                stop = span(following, source.size)[1]
                i += 1
            _copy(source, fd, start, stop)
        else:
            run: list[Value] = []
            while i < len(parts) and not isinstance(parts[i], ByteRange):
                run.append(parts[i])  # type: ignore[arg-type]
                i += 1
            _write_run(fd, run)


def _copy(source: FileValue, fd: int, start: int, stop: int) -> None:
    """Bytes ``[start, stop)`` of ``source`` appended to ``fd`` (at its position)."""
    global use_copy_file_range
    while start < stop and use_copy_file_range:
        try:
            copied = os.copy_file_range(source.fd, fd, stop - start, start)
        except OSError as error:
            if error.errno in _NO_KERNEL_COPY:
                use_copy_file_range = False
            elif error.errno not in _NOT_HERE:
                raise
            break
        if not copied:
            raise OSError(errno.EIO, f"the file was cut short: nothing at offset {start} of "
                          f"the {source.size} bytes it had")
        start += copied
    while start < stop:  # no kernel copy here: through a bounded buffer
        chunk = source.read(ByteRange(start, min(stop - start, 1 << 22)))
        _write_run(fd, [chunk])
        start += len(chunk)


def _write_run(fd: int, buffers: list[Value]) -> None:
    """All of ``buffers`` written to ``fd``, in order: one ``writev`` system call, more
    only when the kernel writes less (or there are more than ``IOV_MAX`` of them)."""
    views = [memoryview(b).cast("B") for b in buffers]
    views = [v for v in views if len(v)]
    while views:
        batch = views[:_IOV_MAX]
        written = os.writev(fd, batch)
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
