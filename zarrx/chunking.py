"""The chunk and shard shapes of a new array when they are not given: zarr-python 3's.

An array made by ``zarrx.create_array(..., chunks="auto", shards=...)`` gets the chunk and
shard shapes zarr-python 3.1 gives the same call, so a script moved between the two
libraries makes the same arrays (``tests/test_chunking.py`` holds zarr-python's functions
as the oracle). The rules, as zarr-python states them:

- **chunks** (:func:`guess_chunks`, h5py's heuristic): start from the array's shape and
  halve the axes in turn, first to last, until a chunk is smaller than a target size, or
  within half of it, and under 64 MiB. The target grows with the array: 256 KiB times
  ``2 ** log10(array bytes / 1 MiB)``, kept between 128 KiB and 64 MiB.
- **chunks of a sharded array**: the same, with 1 MiB in place of the 64 MiB ceiling.
- **shards="auto"** (:func:`auto_partition`): each axis holding more than 8 chunks gets
  shards of 2 chunks, the others shards of 1 chunk — unless ``target_shard_size_bytes``
  (zarrx.config; zarr-python's ``array.target_shard_size_bytes``) is set: then every axis
  gets the same number of chunks per shard, the largest whose shard stays within that size
  and within the array.

The element size is the data type's (1 for variable-length strings and bytes, which have
none), as in zarr-python. The arithmetic is zarr-python's too (64-bit floats through
NumPy), so the results agree to the last chunk.

>>> guess_chunks((10000, 10000), 4)
(625, 625)
>>> auto_partition((10000, 10000), chunks=(100, 100), shards="auto", itemsize=4)
((200, 200), (100, 100))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrx import config

#: zarr-python's bounds of the chunk-size guess.
INCREMENT_BYTES = 256 * 1024
MIN_BYTES = 128 * 1024
MAX_BYTES = 64 * 1024 * 1024
#: The ceiling of an inner chunk's size when the chunks of a sharded array are guessed.
SHARDED_MAX_BYTES = 1024 * 1024


def guess_chunks(
    shape: tuple[int, ...],
    itemsize: int,
    *,
    increment_bytes: int = INCREMENT_BYTES,
    min_bytes: int = MIN_BYTES,
    max_bytes: int = MAX_BYTES,
) -> tuple[int, ...]:
    """A chunk shape for an array of ``shape`` and ``itemsize``-byte elements (see the
    module's docstring); every axis at least 1."""
    if min_bytes >= max_bytes:
        raise ValueError(f"min_bytes ({min_bytes}) must be less than max_bytes ({max_bytes})")
    chunks = np.maximum(np.array(shape, dtype="=f8"), 1)
    if itemsize == 0:  # (no zero-size data type is created; zarr-python keeps the shape)
        return tuple(int(c) for c in chunks)
    ndim = len(shape)
    array_bytes = np.prod(chunks) * itemsize
    target = increment_bytes * (2 ** np.log10(array_bytes / (1024.0 * 1024)))
    target = min(max(target, min_bytes), max_bytes)
    axis = 0
    while True:
        chunk_bytes = np.prod(chunks) * itemsize
        small_enough = chunk_bytes < target or abs(chunk_bytes - target) / target < 0.5
        if (small_enough and chunk_bytes < max_bytes) or np.prod(chunks) == 1:
            break
        chunks[axis % ndim] = math.ceil(chunks[axis % ndim] / 2.0)
        axis += 1
    return tuple(int(c) for c in chunks)


def chunks_per_shard_axis(
    chunks: tuple[int, ...], itemsize: int, max_bytes: int, shape: tuple[int, ...]
) -> int:
    """How many chunks along every axis a shard of at most ``max_bytes`` holds, without
    growing past the array's ``shape`` on any axis (at least 1)."""
    chunk_bytes = np.prod(chunks) * itemsize
    if max_bytes < chunk_bytes:
        return 1
    n = 1
    while chunk_bytes * (n + 1) ** len(chunks) <= max_bytes and all(
        c * (n + 1) <= s for c, s in zip(chunks, shape)
    ):
        n += 1
    return n


def auto_partition(
    shape: tuple[int, ...], *, chunks: Any, shards: Any, itemsize: int
) -> tuple[tuple[int, ...] | None, tuple[int, ...]]:
    """``(shard shape or None, chunk shape)`` for an array of ``shape``: ``chunks`` is
    ``"auto"`` or a tuple of positive ints, ``shards`` ``None``, ``"auto"`` or a tuple
    (returned as it is, for the caller to check against the chunks)."""
    auto = isinstance(chunks, str) and chunks == "auto"
    if shards is None:
        return None, guess_chunks(shape, itemsize) if auto else tuple(chunks)
    if auto:
        chunks = guess_chunks(shape, itemsize, max_bytes=SHARDED_MAX_BYTES)
    chunks = tuple(chunks)
    if not (isinstance(shards, str) and shards == "auto"):
        return tuple(shards), chunks
    target = config.get("target_shard_size_bytes")
    if target is None:
        return tuple(c * 2 if s // c > 8 else c for s, c in zip(shape, chunks)), chunks
    n = chunks_per_shard_axis(chunks, itemsize, target, shape)
    return tuple(c * n for c in chunks), chunks
