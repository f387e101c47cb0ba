"""Per-thread scratch buffers for chunks on their way through the codecs.

A chunk that is decoded only to be copied into the output, or copied only to be
compressed, does not need memory of its own: a fresh allocation costs a page fault per
4 KiB on first touch, often more than the codec itself. Each thread keeps the few buffers
it has used and lends them out again; a nested use (an inner chunk inside a shard)
borrows a second buffer rather than overwriting the first.
"""

from __future__ import annotations

import threading

import numpy as np

#: Buffers larger than this are not kept once returned (a rare huge chunk should not pin
#: its size in memory for the life of the thread).
KEEP_AT_MOST = 64 * 2**20
#: Buffers kept per thread (the deepest nesting is a shard, its inner chunk, and a spare).
KEEP_BUFFERS = 3

_local = threading.local()


class scratch:
    """A writable uint8 buffer of ``nbytes``, this thread's alone until the block ends.
    (A class, not a generator: it runs once per chunk, where every microsecond shows.)"""

    __slots__ = ("_buffer", "_free", "_nbytes")

    def __init__(self, nbytes: int) -> None:
        self._nbytes = nbytes

    def __enter__(self) -> np.ndarray:
        nbytes = self._nbytes
        free: list[np.ndarray] | None = getattr(_local, "free", None)
        if free is None:
            free = _local.free = []
        self._free = free
        best = -1  # the smallest buffer kept that fits
        for i, b in enumerate(free):
            if len(b) >= nbytes and (best < 0 or len(b) < len(free[best])):
                best = i
        self._buffer = np.empty(nbytes, dtype=np.uint8) if best < 0 else free.pop(best)
        return self._buffer[:nbytes]

    def __exit__(self, *exc: object) -> None:
        buffer, free = self._buffer, self._free
        if buffer.nbytes <= KEEP_AT_MOST:
            free.append(buffer)
            if len(free) > KEEP_BUFFERS:
                free.pop(min(range(len(free)), key=lambda i: len(free[i])))
