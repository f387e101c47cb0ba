"""Moving data from one array into another, region by region, on a bounded thread pool.

The unit of work is a region of the destination that is one of its stored objects
(a chunk, or a shard when sharded), so every write covers whole destination objects and
no two tasks ever touch the same one. Where the source holds nothing (no stored object
overlaps the region) and both arrays share a fill value, there is nothing to copy: only
regions that overlap an *initialised* source object are listed, which costs one listing
of the source, never a walk over a huge empty grid. At most ``4 * threads`` regions are
in flight, so memory stays a few chunks whatever the array's size.

:func:`run` is the thread-pool driver (``zarrx convert`` and :mod:`zarrx.copying` use it).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

import numpy as np

from zarrx.info import grid_shape, initialised

Task = TypeVar("Task", bound=tuple[Any, ...])
Region = tuple[slice, ...]


def run(
    tasks: Iterable[Task],
    fn: Callable[..., Any],
    threads: int,
    on_done: Callable[..., None],
) -> None:
    """``fn(*task)`` for every task on ``threads`` threads (at most ``4 * threads`` in
    flight); ``on_done(*task, result)`` in this thread as each one finishes. On an error
    or an interrupt, no new task starts, running ones finish (and are reported), and the
    error is raised."""
    window = max(1, 4 * threads)
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="zarrx-transfer")
    pending: dict[Future[Any], Task] = {}
    error: BaseException | None = None

    def settle(finished: Iterable[Future[Any]]) -> None:
        for f in finished:
            task = pending.pop(f)
            on_done(*task, f.result())

    try:
        for task in tasks:
            while len(pending) >= window:
                settle(wait(pending, return_when=FIRST_COMPLETED)[0])
            pending[pool.submit(fn, *task)] = task
        while pending:
            settle(wait(pending, return_when=FIRST_COMPLETED)[0])
    except BaseException as e:
        error = e
        raise
    finally:
        if error is not None:
            for f in pending:
                f.cancel()
            for f, task in list(pending.items()):
                if f.cancelled():
                    continue
                try:
                    result = f.result()
                except BaseException:  # the first error is the one reported
                    continue
                on_done(*task, result)
        pool.shutdown(wait=True, cancel_futures=True)


def unit_shape(array: Any) -> tuple[int, ...]:
    """Shape of an array's stored objects (shards when sharded, else chunks)."""
    return tuple(array.metadata.chunk_grid.chunk_shape)


def _same_fill(source: Any, dest: Any) -> bool:
    a = np.asarray(source.fill_value)
    b = np.asarray(dest.fill_value)
    if a.dtype.hasobject or b.dtype.hasobject or a.dtype.kind == "T" or b.dtype.kind == "T":
        return bool(a.tolist() == b.tolist())
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def regions(source: Any, dest: Any) -> Iterator[Region]:
    """The destination's stored-object regions worth copying from ``source`` (same
    shape), in C order: those overlapping an initialised source object, or all of them
    when the fill values differ (the destination must then hold the source's fill)."""
    shape = tuple(dest.shape)
    units = unit_shape(dest)
    grid = grid_shape(dest)
    if not _same_fill(source, dest):
        coords: Iterable[tuple[int, ...]] = np.ndindex(*grid)
    else:
        src_units = unit_shape(source)
        wanted: set[tuple[int, ...]] = set()
        for c, _ in initialised(source):
            spans = []
            for i, n, u, s in zip(c, src_units, units, shape):
                start, stop = i * n, min((i + 1) * n, s)
                spans.append(range(start // u, -(-stop // u)))
            wanted.update(itertools.product(*spans))
        coords = sorted(wanted)
    for c in coords:
        yield tuple(slice(i * u, min((i + 1) * u, s)) for i, u, s in zip(c, units, shape))


def copy_region(source: Any, dest: Any, region: Region) -> int:
    """Copy one region; returns the decoded bytes moved."""
    data = source[region]
    dest[region] = data
    return int(np.asarray(data).nbytes)


def copy_data(
    source: Any, dest: Any, *, threads: int, on_region: Callable[[int], None] | None = None
) -> int:
    """Copy all of ``source`` into ``dest`` (same shape) region by region on ``threads``
    threads; ``on_region(nbytes)`` after each region. Returns the decoded bytes moved."""
    total = 0

    def done(_source: Any, _dest: Any, _region: Region, nbytes: int) -> None:
        nonlocal total
        total += nbytes
        if on_region is not None:
            on_region(nbytes)

    run(((source, dest, r) for r in regions(source, dest)), copy_region, threads, done)
    return total
