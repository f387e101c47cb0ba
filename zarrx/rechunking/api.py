"""``zarrx.rechunk``: copy an array into another chunking (and format, codecs, dtype) within
a memory bound, resumably, on threads or a cluster. See ``docs/rechunk.md``.

>>> import numpy as np, zarrx
>>> from zarrx.storage import MemoryStore
>>> src = zarrx.create_array(MemoryStore(), data=np.arange(24.0).reshape(4, 6), chunks=(1, 6))
>>> out = zarrx.rechunk(src, MemoryStore(), chunks=(4, 1), max_mem="1MiB")
>>> out.chunks, bool((out[...] == src[...]).all())
((4, 1), True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx import config
from zarrx.arrays import Array
from zarrx.creation import array_metadata
from zarrx.errors import ArgumentError, NodeExistsError, NodeTypeError, ZarrxError
from zarrx.info import listed_keys
from zarrx.metadata.io import data_prefix, find_node, normalize_path
from zarrx.metadata.nodes import create_node, erase_node, open_store
from zarrx.progress import Progress
from zarrx.rechunking.parse import parse_mem
from zarrx.rechunking.plan import Geometry, Plan, count, make_plan, slabs
from zarrx.rechunking.record import (
    Record,
    State,
    metadata_digest,
    record_prefix,
    source_fingerprint,
)
from zarrx.rechunking.target import Options, intermediate_keywords, target_keywords
from zarrx.rechunking.tasks import SlabTask, executor_slots, object_regions, run_tasks
from zarrx.transfer import regions

#: Bytes per element assumed for variable-length strings and bytes when sizing slabs.
VARIABLE_ITEMSIZE = 64


@dataclass(frozen=True)
class RechunkProgress:
    """What a ``progress=`` callable receives after every finished slab (and once at the
    start and at the end): ``done`` of ``total`` slabs (over every stage; those done before
    a resume included), ``nbytes`` moved by this call, ``seconds`` since it started,
    ``stage`` (``"target"``, or ``"intermediate"`` for the first stage of a two-stage
    plan) and ``finished``."""

    done: int
    total: int
    nbytes: int
    seconds: float
    stage: str
    finished: bool = False


class _Reporter:
    """Progress to a bar on stderr (``progress=True``) or to a callable."""

    def __init__(self, progress: Any, total: int, done: int) -> None:
        self.callback = progress if callable(progress) else None
        self.bar = Progress(total, label="rechunk", unit="slabs", done=done,
                            enabled=progress is True)
        self.start = time.perf_counter()
        self.stage = "target"

    def update(self, n: int = 0, nbytes: int = 0, finished: bool = False) -> None:
        if n or nbytes:
            self.bar.advance(n, nbytes=nbytes)
        if self.callback is not None:
            self.callback(RechunkProgress(self.bar.done, self.bar.total, self.bar.nbytes,
                                          time.perf_counter() - self.start, self.stage,
                                          finished))

    def close(self) -> None:
        self.bar.close()


def _open_source(source: Any, path: str | None, storage_options: Any) -> Array:
    if isinstance(source, Array):
        if path is not None:
            raise ArgumentError("source_path is for a source given as a store, path or URL; "
                                "the source is already an Array")
        return source
    from zarrx.api import open_array

    return open_array(source, mode="r", path=path, storage_options=storage_options)


def _same_node(src: Array, store: Any, path: str) -> bool:
    from zarrx.storage import LocalStore

    same_store = src.store is store or (
        isinstance(src.store, LocalStore) and isinstance(store, LocalStore)
        and src.store.root.resolve() == store.root.resolve()
    )
    a, b = src.path, path
    return same_store and (a == b or not a or not b or a.startswith(b + "/")
                           or b.startswith(a + "/"))


def _check_executor(executor: Any, src: Array, store: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    if executor is None or isinstance(executor, ThreadPoolExecutor):
        return
    if not callable(getattr(executor, "submit", None)):
        raise ArgumentError(f"executor must have a submit method (a dask Client, a "
                            f"concurrent.futures executor), got {executor!r}")
    import pickle

    from zarrx.storage import MemoryStore

    for what, s in (("source", src.store), ("target", store)):
        if isinstance(s, MemoryStore):
            raise ArgumentError(
                f"the {what} is a MemoryStore, which lives in this process only: an "
                "executor's workers cannot reach it; use a store they share (a local "
                "directory, an object store), or no executor"
            )
        try:
            pickle.dumps(s)
        except Exception as e:
            raise ArgumentError(
                f"the {what}'s store {s!r} cannot be sent to an executor's workers: {e}"
            ) from None


def _itemsize(dtype: np.dtype) -> int:
    return VARIABLE_ITEMSIZE if dtype.hasobject or dtype.kind == "T" else dtype.itemsize


def source_edges(array: Array) -> tuple[tuple[int, ...], ...]:
    """Per axis, the boundaries of the array's read units (inner chunks when sharded)."""
    out = []
    for n, c in zip(array.shape, array.chunks):
        if isinstance(c, tuple):
            edges = [0, *np.cumsum(c).tolist()]
        else:
            edges = [*range(0, n, int(c)), n] if n else [0, 0]
        out.append(tuple(int(e) for e in edges))
    return tuple(out)


def geometry(src: Array, meta: Any) -> Geometry:
    """The plan's view of rechunking ``src`` into an array of metadata ``meta``."""
    target = Array(src.store, "", meta)  # (describes; never reads or writes)
    itemsize = max(_itemsize(src.dtype), _itemsize(target.dtype))
    obj = tuple(int(c) for c in meta.chunk_grid.chunk_shape)
    return Geometry(
        shape=tuple(src.shape), itemsize=itemsize, source_edges=source_edges(src),
        target_object=obj, target_chunk=tuple(int(c) for c in target.chunks),
        cast=src.dtype != target.dtype,
    )


def _where(store: Any, path: str) -> str:
    return f"array {'/' + path!r} in {store!r}"


def _threads(threads: Any) -> int:
    n = config.get("threads") if threads is None else threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(f"threads must be a positive integer, got {threads!r}")
    return n


@dataclass
class _Job:
    """One array's rechunk, decided (checked, planned) before anything is written."""

    src: Array
    store: Any
    path: str
    fmt: Any
    kw: dict[str, Any]
    meta: Any  # the target's metadata as asked
    record: Record
    plan: Plan
    state: State | None  # the record of an interrupted rechunk, to resume
    existing: Any  # metadata of a node at the target path
    fingerprint: dict[str, str]
    options: str
    resumed: bool  # it finishes an interrupted rechunk


def prepare(
    src: Array, store: Any, path: str, opts: Options, *, max_mem: int, threads: int,
    engine_threads: int, resume: bool, overwrite: bool,
) -> _Job:
    """Check and plan the rechunk of ``src`` into ``path`` of ``store``; nothing written."""
    where = _where(store, path)
    if _same_node(src, store, path):
        raise ArgumentError(f"{where}: the target is the source (or inside it, or contains "
                            "it); choose another target")
    fmt, kw = target_keywords(src.metadata, opts, where)
    meta = array_metadata(zarr_format=fmt, where=where, **kw)
    options = metadata_digest(meta)
    record = Record(store, record_prefix(path, meta), where)
    existing = find_node(store, path)
    state = record.load() if existing is None or existing.node_type == "array" else None
    if existing is not None and state is None and not overwrite:
        raise NodeExistsError(
            f"{where}: a {existing.node_type} exists there; pass overwrite=True to replace it"
        )
    if state is not None and not overwrite and not resume:
        raise NodeExistsError(
            f"{where}: holds an interrupted rechunk (recorded in {record.state_key!r}); "
            "pass resume=True to finish it, or overwrite=True to start over"
        )
    if overwrite:
        state = None
    fingerprint = source_fingerprint(src)
    if state is not None:
        record.check(state, fingerprint, options,
                     existing if existing is not None and existing.node_type == "array"
                     else None)
        plan = Plan.from_json(state.plan)
        if plan.peak_bytes > max_mem:
            raise ArgumentError(
                f"{where}: the interrupted rechunk was planned for {plan.peak_bytes} bytes "
                f"of memory, more than max_mem={max_mem}; resume with a larger max_mem, or "
                "pass overwrite=True to start over"
            )
    else:
        plan = make_plan(geometry(src, meta), max_mem, threads, engine_threads)
    return _Job(src, store, path, fmt, kw, meta, record, plan, state, existing, fingerprint,
                options, resumed=state is not None)


def _describe(src: Array) -> str:
    return f"{src.store!r} {('/' + src.path)!r}"


def start(job: _Job) -> Array:
    """Write the record and the target node (replacing what ``overwrite`` replaces)."""
    store, path = job.store, job.path
    if job.state is None:
        if job.existing is not None:
            erase_node(store, path, job.existing)
            job.existing = None
        job.record.erase()  # (a record left by a node erased by hand)
        job.state = State(_describe(job.src), job.fingerprint, metadata_digest(job.meta),
                          job.options, job.plan.to_json())
        job.record.save(job.state)
    if job.existing is None:  # (a resumed rechunk interrupted before it made the node)
        try:
            written = create_node(store, path, job.meta, overwrite=False)
        except ZarrxError:  # refused (e.g. a hierarchy of another format): leave nothing
            job.record.erase()
            raise
    else:
        written = job.existing
    if metadata_digest(written) != job.state.target:
        job.state.target = metadata_digest(written)
        job.record.save(job.state)
    return Array(store, path, written, config={"write_empty_chunks": False})


def _intermediate(job: _Job, target: Array) -> Array:
    assert job.plan.intermediate is not None
    kw = intermediate_keywords(target.metadata, job.plan.intermediate)
    meta = array_metadata(zarr_format=3, where=f"{_where(job.store, job.path)} (scratch)", **kw)
    return Array(job.store, job.record.intermediate_path, meta,
                 config={"write_empty_chunks": False})


def _slabs_with_data(source: Array, dest: Array, slab: tuple[int, ...]) -> set[int] | None:
    """Numbers of the slabs of ``dest`` that overlap an initialised object of ``source``
    (:func:`zarrx.transfer.regions`: one listing of the source); the others hold only
    the fill value, which a new target reads without storing anything. ``None``: all
    of them (a grid of variable chunk sizes)."""
    units = getattr(source.metadata.chunk_grid, "chunk_shape", None)
    if units is None or not all(isinstance(u, int | np.integer) for u in units):
        return None
    grid = [max(1, -(-n // s)) for n, s in zip(dest.shape, slab)]
    out = set()
    for region in regions(source, dest):
        number = 0
        for r, s, g in zip(region, slab, grid):
            number = number * g + r.start // s
        out.add(number)
    return out


def stage_tasks(
    job: _Job, target: Array, settings: tuple[tuple[str, Any], ...] | None = None
) -> list[tuple[str, Iterator[SlabTask], int]]:
    """Per stage: its name, the tasks left (made as they are asked for, so a plan of many
    slabs holds a few at a time), and how many slabs need no work (done before, or — in
    the first stage — nothing but fill values to copy)."""
    out: list[tuple[str, Iterator[SlabTask], int]] = []
    source = job.src
    complete = job.state is not None and job.state.phase == "complete"
    for name, slab in job.plan.stages():
        if complete:  # interrupted while erasing its record: nothing left to copy
            out.append((name, iter(()), count(job.plan.shape, slab)))
            continue
        dest = _intermediate(job, target) if name == "intermediate" else target
        done = job.record.done(name)
        wanted = _slabs_with_data(source, dest, slab) if source is job.src else None
        total = count(job.plan.shape, slab)
        left = total - len(done) if wanted is None else len(wanted - done)
        out.append((name, _tasks(job, name, source, dest, slab, done, wanted, settings),
                    total - left))
        source = dest
    return out


def _tasks(job: _Job, name: str, source: Array, dest: Array, slab: tuple[int, ...],
           done: set[int], wanted: set[int] | None,
           settings: tuple[tuple[str, Any], ...] | None) -> Iterator[SlabTask]:
    present = listed_keys(dest) if job.resumed else set()
    prefix = data_prefix(dest.path, dest.metadata)
    for number, region in slabs(job.plan.shape, slab):
        if number in done or (wanted is not None and number not in wanted):
            continue
        objects = None
        if present:
            regions_ = object_regions(dest, region)
            missing = tuple(r for c, r in regions_
                            if prefix + dest.metadata.chunk_key(c) not in present)
            if len(missing) < len(regions_):
                objects = missing
        yield SlabTask(source, dest, number, region, job.record.marker(name, number),
                       objects, settings)


def rechunk(
    source: Any,
    target: Any,
    *,
    chunks: Any = None,
    shards: Any = None,
    compressors: Any = None,
    filters: Any = None,
    serializer: Any = None,
    zarr_format: Any = None,
    dtype: Any = None,
    fill_value: Any = None,
    attributes: Any = None,
    max_mem: int | str = "512MiB",
    resume: bool = True,
    overwrite: bool = False,
    progress: bool | Callable[[RechunkProgress], Any] = False,
    threads: int | None = None,
    executor: Any = None,
    source_path: str | None = None,
    target_path: str | None = None,
    source_storage_options: dict[str, Any] | None = None,
    target_storage_options: dict[str, Any] | None = None,
) -> Array:
    """Copy the array ``source`` into ``target`` with other chunks (and, if asked, shards,
    codecs, format or dtype); returns the target Array, equal to the source element for
    element. See ``docs/rechunk.md``.

    ``source``: a zarrx Array, or a store, path or URL with ``source_path=`` the array's
    path in it. ``target``: a store, path or URL, with ``target_path=`` the path of the new
    array in it (default: the root). Every option left ``None`` keeps the source's:
    ``chunks`` (inner chunks when sharded), ``shards`` (``False``: none), ``compressors``,
    ``filters``, ``serializer`` (``"keep"`` also keeps; ``[]`` is none), ``zarr_format``
    (2, 3 or ``"3-draft"``), ``dtype`` (cast under NumPy's ``"same_kind"`` rule),
    ``fill_value``, ``attributes``. Dimension names are kept.

    ``max_mem`` (bytes, or text such as ``"512MiB"``, ``"1GB"``) bounds the memory of the
    copy; ``threads`` (default ``zarrx.config`` "threads") copy slabs at once, fewer when
    ``max_mem`` requires. ``executor``: a dask ``Client`` or any executor with ``submit``
    runs the slabs there (``max_mem`` then bounds each worker process, running ``threads``
    tasks at once: by default a dask worker's thread count). ``progress=True`` draws a bar
    on stderr; a callable receives a :class:`RechunkProgress` after every slab.

    An interrupted rechunk called again the same way (``resume=True``) finishes what is
    left; an existing target is otherwise refused unless ``overwrite=True``."""
    limit = parse_mem(max_mem)
    n = _threads(threads)
    if not isinstance(resume, bool) or not isinstance(overwrite, bool):
        raise ArgumentError("resume and overwrite must be True or False")
    if not (progress is True or progress is False or progress is None or callable(progress)):
        raise ArgumentError(f"progress must be True, False or a callable, got {progress!r}")
    src = _open_source(source, source_path, source_storage_options)
    if isinstance(target, Array):
        raise NodeTypeError("target must be a store, path or URL (with target_path=), not an "
                            "Array")
    store = open_store(target, "a", target_storage_options)
    path = normalize_path(target_path)
    _check_executor(executor, src, store)
    per_worker, window = (n, 0) if executor is None else executor_slots(executor, threads)
    opts = Options(chunks, shards, compressors, filters, serializer, zarr_format, dtype,
                   fill_value, attributes)
    job = prepare(src, store, path, opts, max_mem=limit, threads=per_worker,
                  engine_threads=n if executor is None else per_worker, resume=resume,
                  overwrite=overwrite)
    return run_jobs([job], progress, n, executor, window)[0]


def run_jobs(jobs: list[_Job], progress: Any, threads: int, executor: Any,
             window: int, on_job: Callable[[_Job], None] | None = None) -> list[Array]:
    """Start and run prepared jobs in order, with one progress display over all;
    ``on_job(job)`` once each is complete."""
    batch = config.get("batch_chunks")  # compressed chunks a batched store fetches at once
    for job in jobs:
        unit = geometry(job.src, job.meta).unit_bytes()
        batch = max(1, min(batch, job.plan.task_bytes // (2 * max(unit, 1))))
    engine = min((j.plan.engine_threads for j in jobs), default=threads)
    if executor is not None:
        engine = threads
    settings = None if executor is None else (("threads", engine), ("batch_chunks", batch))
    targets = [start(job) for job in jobs]
    plans = [(job, t, stage_tasks(job, t, settings)) for job, t in zip(jobs, targets)]
    total = sum(count(job.plan.shape, slab) for job, _, _ in plans
                for _, slab in job.plan.stages())
    done = sum(before for _, _, stages in plans for _, _, before in stages)
    reporter = _Reporter(progress, total, done)
    try:
        reporter.update()
        with config.set(threads=engine, batch_chunks=batch):
            for job, _target, stages in plans:
                for name, todo, _ in stages:
                    reporter.stage = name
                    tasks = job.plan.tasks if executor is None else threads
                    run_tasks(todo, tasks, executor, window,
                              lambda _task, nbytes: reporter.update(1, nbytes))
                if on_job is not None:  # (first: a job recorded done never runs again)
                    on_job(job)
                job.record.erase()
        reporter.update(finished=True)
    finally:
        reporter.close()
    return [Array(t.store, t.path, find_node(t.store, t.path) or t.metadata) for t in targets]


__all__ = ["RechunkProgress", "prepare", "rechunk", "run_jobs", "start"]
