"""dask: a zarrx array as a lazy dask array, and a dask array written into a zarrx array.

>>> import numpy as np, zarrx
>>> from zarrx.integrations.dask import store_dask, to_dask
>>> a = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(6, 4), dtype="i4", chunks=(2, 2))
>>> a[...] = np.arange(24).reshape(6, 4)
>>> x = to_dask(a)
>>> x.chunks
((2, 2, 2), (2, 2))
>>> int(x.sum().compute())
276
>>> store_dask(x * 10, a)
>>> int(a[5, 3])
230

Tasks hold an :class:`ArrayHandle`, not the :class:`~zarrx.Array`: it pickles as (store,
path, mode) and opens the array in the worker on first use, so the graph runs on
``dask.distributed`` process workers with any store that pickles (local directories,
fsspec object stores, zip archives opened with ``mode="r"``, LMDB). A ``MemoryStore`` lives in
one process and refuses to pickle, so it works with dask's threaded scheduler only.

:func:`store_dask` rechunks the dask array to the target's chunk grid when its chunk
boundaries would split a storage chunk (a shard when the array is sharded), so each task
writes whole shards and each shard is encoded and written once. On a store with atomic
updates (``store.supports_atomic_update``: local and shared file systems, S3) that is for
speed only: ``da.store(x, array, lock=False)`` with any chunks is safe too, each partly
written shard being updated atomically. On a store without them, it is what keeps two
tasks from losing each other's part of a shard (docs/concurrency.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrx.array import Array


class ArrayHandle:
    """A zarrx array that pickles as (store, path, mode) and is opened where it is used.

    It has what ``dask.array.from_array`` and ``dask.array.store`` need: ``shape``,
    ``dtype``, ``ndim``, ``__getitem__`` and ``__setitem__``.
    """

    def __init__(self, array: Array) -> None:
        if not isinstance(array, Array):
            raise TypeError(f"expected a zarrx.Array, got {type(array).__name__}")
        self.store = array.store
        self.path = array.path
        self.read_only = array.read_only
        self.zarr_format = array.zarr_format
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim
        self.storage_chunks = array.shards or array.chunks
        self._array: Array | None = array

    def open(self) -> Array:
        """The array (opened from the store on first use after unpickling)."""
        if self._array is None:
            from zarrx.api import open_array

            self._array = open_array(
                self.store, mode="r" if self.read_only else "r+", path=self.path,
                zarr_format=self.zarr_format,
            )
        return self._array

    def __getitem__(self, selection: Any) -> Any:
        return self.open()[selection]

    def __setitem__(self, selection: Any, value: Any) -> None:
        self.open()[selection] = value

    def __len__(self) -> int:
        return len(self.open())

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_array": None}  # metadata is read again where it is used

    def __dask_tokenize__(self) -> Any:
        return (type(self).__name__, repr(self.store), self.path, self.shape, str(self.dtype),
                self.storage_chunks)

    def __repr__(self) -> str:
        return f"ArrayHandle({self.store!r}, path={self.path!r})"


def to_dask(
    array: Array, chunks: Any = None, *, name: str | None = None, inline_array: bool = False
) -> Any:
    """A lazy dask array reading ``array``; each task reads one block.

    ``chunks`` defaults to the array's storage chunks (its shards when it is sharded, so a
    task reads one shard with one index read); any dask ``chunks`` are accepted.
    """
    import dask.array as da
    from dask.base import tokenize

    handle = ArrayHandle(array)
    if chunks is None:
        chunks = handle.storage_chunks
    if name is None:
        name = "zarrx-" + tokenize(handle, chunks)
    meta = np.empty((0,) * handle.ndim, dtype=handle.dtype)
    return da.from_array(
        handle, chunks=chunks, name=name, lock=False, asarray=False, fancy=False,
        inline_array=inline_array, meta=meta,
    )


def _region(region: Any, shape: tuple[int, ...]) -> tuple[slice, ...]:
    if region is None:
        return tuple(slice(0, n) for n in shape)
    items = region if isinstance(region, tuple) else (region,)
    if len(items) != len(shape) or not all(isinstance(s, slice) for s in items):
        raise ValueError(f"region must be {len(shape)} slices, one per axis, got {region!r}")
    out = []
    for s, n in zip(items, shape):
        start, stop, step = s.indices(n)
        if step != 1:
            raise ValueError(f"region slices must have step 1, got {s!r}")
        out.append(slice(start, max(start, stop)))
    return tuple(out)


def aligned_chunks(
    region: tuple[slice, ...], grid: tuple[int, ...], chunks: tuple[tuple[int, ...], ...]
) -> tuple[tuple[int, ...], ...] | None:
    """Chunks for a dask array written at ``region`` so that no storage chunk of ``grid``
    is split between two blocks; ``None`` when ``chunks`` already are."""
    def aligned(axis_chunks: tuple[int, ...], start: int, size: int) -> bool:
        edges = np.cumsum(axis_chunks[:-1]) + start
        return bool(np.all(edges % size == 0))

    if all(aligned(c, r.start, g) for c, r, g in zip(chunks, region, grid)):
        return None
    out = []
    for axis_chunks, r, g in zip(chunks, region, grid):
        length = r.stop - r.start
        if aligned(axis_chunks, r.start, g):
            out.append(axis_chunks)
            continue
        typical = max(axis_chunks) if axis_chunks else g
        step = max(1, round(typical / g)) * g  # about the dask block size, in whole chunks
        first = min(length, (-r.start) % g or step)
        sizes = [first] if first else []
        rest = length - first
        sizes += [step] * (rest // step) + ([rest % step] if rest % step else [])
        out.append(tuple(sizes) or (0,))
    return tuple(out)


def store_dask(
    source: Any, target: Array, region: Any = None, *, compute: bool = True, **kwargs: Any
) -> Any:
    """Write the dask array ``source`` into ``target[region]``, block by block.

    Each task writes whole storage chunks of ``target`` (``source`` is rechunked to its
    grid when needed), so tasks never read-modify-write the same chunk: no lock, and no
    atomic update, is needed, and each chunk is encoded once.
    ``compute=False`` returns the delayed write; other keywords go to ``dask.array.store``.
    """
    import dask.array as da

    handle = ArrayHandle(target)
    if handle.read_only:
        from zarrx.errors import ReadOnlyError

        raise ReadOnlyError(f"cannot write to {target.name!r}: it was opened read-only")
    where = _region(region, handle.shape)
    expected = tuple(s.stop - s.start for s in where)
    if tuple(source.shape) != expected:
        raise ValueError(
            f"cannot store a dask array of shape {tuple(source.shape)} into region "
            f"{where} of {target.name!r} (shape {expected})"
        )
    if math.prod(expected) == 0:
        return None
    rechunked = aligned_chunks(where, handle.storage_chunks, source.chunks)
    if rechunked is not None:
        source = source.rechunk(rechunked)
    if source.dtype != handle.dtype:
        source = source.astype(handle.dtype)
    return da.store(source, handle, regions=where, lock=False, compute=compute, **kwargs)
