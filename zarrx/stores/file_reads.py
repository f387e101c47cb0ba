"""Reading one file of a :class:`~zarrx.stores.local.LocalStore` once it is open: whole,
a byte range (one ``pread``), or the rounds of a reader, all from the one open file
(:func:`serve_rounds`: a shard's index, then its inner chunks, from one version of the
shard even if a writer renames another over the key meanwhile).

The store decides how a key is opened (``openat2`` beneath its root, or its checked
path); everything here takes the open descriptor and closes it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from zarrx._core.files import pread_rounds
from zarrx.abc.store import ByteRange, RangeReader, answer_rounds, validate_byte_range
from zarrx.errors import StoreError
from zarrx.stores.keys import resolve_byte_range

ABSENT = (FileNotFoundError, NotADirectoryError, IsADirectoryError)
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def open_file(path: str, key: str) -> int | None:
    """A read-only descriptor of the file at ``path``; ``None`` if it is absent."""
    try:
        # O_NONBLOCK: a FIFO planted in the store must not hang the open.
        return os.open(path, READ_FLAGS)
    except ABSENT:
        return None
    except OSError as error:
        raise StoreError(f"cannot read key {key!r} from {path!r}: {error}") from error


def read_path(path: str, byte_range: ByteRange | None, key: str) -> bytes | None:
    """Read a regular file, or only the requested part of it; ``None`` if it is absent."""
    fd = open_file(path, key)
    return None if fd is None else read_open(fd, byte_range, key, path)


def read_open(fd: int, byte_range: ByteRange | None, key: str, path: str) -> bytes | None:
    """Read the open file ``fd`` (closed here) whole or in part; ``None`` if it is not
    a regular file."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if byte_range is None:
            with open(fd, "rb", buffering=0, closefd=False) as f:
                return f.readall()
        return _pread(fd, byte_range, info.st_size, key)
    except ABSENT:
        return None
    except OSError as error:
        raise StoreError(f"cannot read key {key!r} from {path!r}: {error}") from error
    finally:
        os.close(fd)


def serve_rounds(
    fd: int | None, key: str, path: str, reader: RangeReader, ranges: Sequence[ByteRange]
) -> None:
    """:meth:`~zarrx.abc.store.Store.read_rounds` of one reader from the open file ``fd``
    (closed here; ``None``: the key is absent), whose first round asks ``ranges``: every
    round read from that file (:func:`zarrx._core.files.pread_rounds`). A file that is not
    a regular file is absent."""
    if fd is None:
        answer_rounds(reader, key, None, ranges)
        return
    try:
        failed = pread_rounds(fd, reader, ranges, validate_byte_range, key)
        if failed < 0:
            answer_rounds(reader, key, None, ranges)
        elif failed:
            error = OSError(failed, os.strerror(failed))
            raise StoreError(f"cannot read key {key!r} from {path!r}: {error}") from error
    finally:
        os.close(fd)


def _pread(fd: int, byte_range: ByteRange, size: int, key: str) -> bytes:
    """``byte_range`` of the open file ``fd`` of ``size`` bytes (one ``pread``)."""
    start, stop = resolve_byte_range(byte_range, size, key)
    return os.pread(fd, stop - start, start)
