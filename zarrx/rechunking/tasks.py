"""The work of a rechunk: one slab read, held and written, and the driver that runs the
slabs of a stage on this process's threads (:func:`zarrx.transfer.run`) or on an executor
(a dask ``Client``, a ``concurrent.futures`` executor: anything with ``submit``).

A :class:`SlabTask` is plain data plus the two arrays (which pickle with their stores),
so it runs in another process as well. It writes whole target objects (chunks, or whole
shards), each an atomic write in zarrx's stores, then records itself done with an empty
marker value beside the target's data (:mod:`zarrx.rechunking.record`). A task resumed
after an interruption writes only the objects that are not stored yet: a stored object is
a complete one.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from zarrx import config
from zarrx.rechunking.plan import Region
from zarrx.transfer import run


@dataclass(frozen=True)
class SlabTask:
    """Copy ``region`` of ``source`` into ``dest`` and write the marker ``marker``.
    ``objects``: the regions of the destination's objects to write (``None``: all).
    ``settings``: :mod:`zarrx.config` values for a task run in another process (the
    engine's threads the plan counted on)."""

    source: Any
    dest: Any
    number: int
    region: Region
    marker: str
    objects: tuple[Region, ...] | None = None
    settings: tuple[tuple[str, Any], ...] | None = None


def run_slab(task: SlabTask) -> int:
    """Do one task (in any process); returns the bytes of the slab."""
    if task.settings is not None and any(config.get(k) != v for k, v in task.settings):
        with config.set(dict(task.settings)):
            return _copy(task)
    return _copy(task)


def _copy(task: SlabTask) -> int:
    data = task.source[task.region]
    dest = task.dest
    if data.dtype != dest.dtype and dest.dtype.kind not in "OT":
        data = data.astype(dest.dtype, casting="same_kind")
    if task.objects is None:
        dest[task.region] = data
    else:
        starts = [s.start for s in task.region]
        for obj in task.objects:
            local = tuple(slice(o.start - b, o.stop - b) for o, b in zip(obj, starts))
            dest[obj] = data[local]
    dest.store.set(task.marker, b"")
    return int(data.nbytes)


def object_regions(dest: Any, region: Region) -> list[tuple[tuple[int, ...], Region]]:
    """``(coords, region)`` of the destination's stored objects inside ``region`` (a slab
    made of whole objects)."""
    units = tuple(dest.metadata.chunk_grid.chunk_shape)
    spans = [range(s.start // u, -(-s.stop // u)) for s, u in zip(region, units)]
    out = []
    for coords in itertools.product(*spans):
        out.append((coords, tuple(slice(c * u, min((c + 1) * u, n))
                                  for c, u, n in zip(coords, units, dest.shape))))
    return out


def executor_slots(executor: Any, threads: int | None) -> tuple[int, int]:
    """``(tasks one worker runs at once, tasks to keep submitted)`` for ``executor``."""
    info = getattr(executor, "scheduler_info", None)
    if callable(info):  # a dask distributed Client
        workers = info().get("workers", {}) or {}
        per = max((int(w.get("nthreads", 1)) for w in workers.values()), default=1)
        total = sum(int(w.get("nthreads", 1)) for w in workers.values()) or 1
        return (threads or per), 2 * total
    workers = int(getattr(executor, "_max_workers", 0) or 0)
    from concurrent.futures import ThreadPoolExecutor

    if isinstance(executor, ThreadPoolExecutor):
        return (threads or workers or 1), 2 * max(workers, 1)
    return (threads or 1), 2 * max(workers, 1)


def run_tasks(
    tasks: Iterable[SlabTask],
    threads: int,
    executor: Any,
    window: int,
    on_done: Callable[[SlabTask, int], None],
) -> None:
    """Run ``tasks`` on ``threads`` threads here, or on ``executor`` with at most
    ``window`` submitted at once; ``on_done(task, nbytes)`` in this thread as each ends."""
    if executor is None:
        run(((t,) for t in tasks), run_slab, threads, on_done)
        return
    pending: deque[tuple[Any, SlabTask]] = deque()
    submit = executor.submit
    dask = callable(getattr(executor, "scheduler_info", None))
    try:
        for task in tasks:
            while len(pending) >= window:
                future, done = pending.popleft()
                on_done(done, future.result())
            future = submit(run_slab, task, pure=False) if dask else submit(run_slab, task)
            pending.append((future, task))
        while pending:
            future, done = pending.popleft()
            on_done(done, future.result())
    except BaseException:
        for future, _ in pending:
            future.cancel()
        raise
