"""Per-thread scratch buffers for decoded chunks.

A chunk that is decoded only to be copied into the output does not need memory of its
own: decoding every chunk into a fresh allocation costs a page fault per 4 KiB on first
touch, often more than the decompression itself. Each thread keeps the buffers it has
used and lends them out again; a nested decode (a shard inside a chunk) borrows a second
buffer rather than overwriting the first.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

#: Buffers larger than this are not kept once returned (a rare huge chunk should not pin
#: its size in memory for the life of the thread).
KEEP_AT_MOST = 64 * 2**20

_local = threading.local()


@contextmanager
def scratch(nbytes: int) -> Iterator[np.ndarray]:
    """A writable uint8 buffer of ``nbytes``, this thread's alone until the block ends."""
    free: list[np.ndarray] | None = getattr(_local, "free", None)
    if free is None:
        free = _local.free = []
    buffer = free.pop() if free else None
    if buffer is None or buffer.nbytes < nbytes:
        buffer = np.empty(nbytes, dtype=np.uint8)
    try:
        yield buffer[:nbytes]
    finally:
        if buffer.nbytes <= KEEP_AT_MOST:
            free.append(buffer)
