"""Reading and writing a file below a directory without leaving it (``openat2`` with
``RESOLVE_BENEATH``; ``ENOSYS`` where the kernel or platform lacks it).

What each function takes, checks and guarantees: ``zarrx/_core/README.md``.
"""

from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import Buffer

def open_beneath(dirfd: int, path: bytes) -> int:
    """A new read-only file descriptor of ``path`` resolved strictly beneath ``dirfd``."""

def read_beneath(dirfd: int, path: bytes) -> bytes | None:
    """The whole regular file ``path`` below ``dirfd``; ``None`` if absent or not regular."""

def read_many_beneath(dirfd: int, paths: Sequence[bytes]) -> list[bytes | int | None]:
    """Each regular file of ``paths`` below ``dirfd`` read whole (``None``: absent or not
    regular; an ``int``: read that one alone), holding the GIL only to make the values."""

def pread_rounds(
    fd: int, reader: Any, ranges: Sequence[Any], refuse: Callable[[Any, str], None], key: str
) -> int:
    """Serve the rounds of ``reader`` from the open file ``fd`` (one ``pread`` a range, no
    GIL); 0 once served, -1 when it is not a regular file, else the errno that failed."""

WRITE_DIRECTORY: int
WRITE_LINK: int
WRITE_TEMP: int
WRITE_DATA: int
WRITE_RENAME: int

def write_beneath(
    dirfd: int,
    directory: bytes,
    name: bytes,
    temp: bytes,
    data: Buffer | Sequence[Buffer],
) -> tuple[int, int]:
    """Write ``data`` (a buffer, or buffers one after the other) atomically as
    ``directory/name`` below ``dirfd`` through ``temp``; ``(0, 0)`` or the failed step
    and its errno."""

WRITE_LOCK: int

def write_locked_beneath(
    dirfd: int,
    directory: bytes,
    name: bytes,
    lock: bytes,
    data: Buffer | Sequence[Buffer],
) -> tuple[int, int]:
    """:func:`write_beneath` under the lock file ``lock`` beside ``name`` (taken as
    ``zarrx.stores.locks`` takes it), the data written into it and renamed over ``name``."""
