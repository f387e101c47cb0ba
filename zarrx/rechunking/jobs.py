"""The rechunk of one array as a *job*: checked and planned before anything is written
(:func:`prepare`), started — its record and its target node written (:func:`start`) —
then run stage by stage, slab by slab (:func:`run_jobs`), its record erased at the end.
:func:`zarrx.rechunk` runs one job, :func:`zarrx.rechunk_group` one per array."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx import config
from zarrx.arrays import Array
from zarrx.creation import array_metadata
from zarrx.errors import ArgumentError, NodeExistsError, ZarrxError
from zarrx.info import listed_keys
from zarrx.metadata.io import data_prefix, find_node
from zarrx.metadata.nodes import create_node, erase_node
from zarrx.rechunking.plan import Geometry, Plan, count, make_plan, slabs
from zarrx.rechunking.record import (
    Record,
    State,
    metadata_digest,
    record_prefix,
    source_fingerprint,
)
from zarrx.rechunking.report import Reporter
from zarrx.rechunking.target import Options, intermediate_keywords, target_keywords
from zarrx.rechunking.tasks import SlabTask, object_regions, run_tasks
from zarrx.stores.keys import validate_prefix
from zarrx.transfer import regions

#: Bytes per element assumed for variable-length strings and bytes when sizing slabs.
VARIABLE_ITEMSIZE = 64


def overlaps(src: Any, store: Any, path: str) -> bool:
    """Whether the node at ``path`` of ``store`` is ``src`` (an array or group), or lies
    inside it, or contains it."""
    same_store = src.store.same_data(store)
    a, b = src.path, path
    return same_store and (a == b or not a or not b or a.startswith(b + "/")
                           or b.startswith(a + "/"))


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


def a_or_an(noun: str) -> str:
    """``noun`` with its indefinite article ("an array", "a group")."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _where(store: Any, path: str) -> str:
    return f"array {'/' + path!r} in {store!r}"


@dataclass
class Job:
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
    stray: bool = False  # keys without a node at the target's data prefix, to erase
    overwrite: bool = False  # what is at the target (a node, a record) is replaced


def prepare(
    src: Array, store: Any, path: str, opts: Options, *, max_mem: int, threads: int,
    engine_threads: int, resume: bool, overwrite: bool,
) -> Job:
    """Check and plan the rechunk of ``src`` into ``path`` of ``store``; nothing written."""
    where = _where(store, path)
    if overlaps(src, store, path):
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
            f"{where}: {a_or_an(existing.node_type)} exists there; pass overwrite=True to "
            "replace it"
        )
    if state is not None and not overwrite and not resume:
        raise NodeExistsError(
            f"{where}: holds an interrupted rechunk (recorded in {record.state_key!r}); "
            "pass resume=True to finish it, or overwrite=True to start over"
        )
    if overwrite:
        state = None
    stray = existing is None and state is None and bool(path) and any(
        not key.startswith(record.prefix)
        for key in store.list_prefix(data_prefix(path, meta))
    )  # (what an erase interrupted, or something else, left where the chunks will go)
    if stray and not overwrite:
        raise NodeExistsError(
            f"{where}: keys are stored under {data_prefix(path, meta)!r} though no node is "
            "there; pass overwrite=True to erase them"
        )
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
    return Job(src, store, path, fmt, kw, meta, record, plan, state, existing, fingerprint,
               options, resumed=state is not None, stray=stray, overwrite=overwrite)


def _describe(src: Array) -> str:
    return f"{src.store!r} {('/' + src.path)!r}"


def start(job: Job) -> Array:
    """Write the record and the target node (replacing what ``overwrite`` replaces)."""
    store, path = job.store, job.path
    if job.state is None:
        if job.existing is not None:
            erase_node(store, path, job.existing)
            job.existing = None
        if job.stray:
            store.erase_prefix(validate_prefix(data_prefix(path, job.meta)))
        if job.overwrite:
            job.record.erase()
        job.state = State(_describe(job.src), job.fingerprint, metadata_digest(job.meta),
                          job.options, job.plan.to_json())
        if not job.record.claim(job.state):  # another rechunk started here since prepare
            raise NodeExistsError(
                f"{_where(store, path)}: another rechunk into it started meanwhile (its "
                f"record is {job.record.state_key!r}); one rechunk per target at a time"
            )
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


def _intermediate(job: Job, target: Array) -> Array:
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
    job: Job, target: Array, settings: tuple[tuple[str, Any], ...] | None = None
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


def _tasks(job: Job, name: str, source: Array, dest: Array, slab: tuple[int, ...],
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


def run_jobs(jobs: list[Job], progress: Any, threads: int, executor: Any,
             window: int, on_job: Callable[[Job], None] | None = None) -> list[Array]:
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
    reporter = Reporter(progress, total, done)
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


__all__ = [
    "Job", "geometry", "overlaps", "prepare", "run_jobs", "source_edges", "stage_tasks", "start",
]
