"""``zarrx.rechunk_group``: copy a hierarchy, rechunking the arrays named, copying the
others as they are (chunks, codecs; the format may change), every group's attributes
kept, consolidated metadata rebuilt when the source had it.

Each array is one :func:`zarrx.rechunk` job, checked and planned before anything is
written. The group's own record (``<group data prefix>.zarrx-rechunk/``: a state document
and a marker per finished array) lets a second call with ``resume=True`` skip the arrays
already complete and resume the one that was interrupted.

>>> import numpy as np, zarrx
>>> from zarrx.storage import MemoryStore
>>> g = zarrx.group(MemoryStore())
>>> _ = g.create_array("a", data=np.arange(12).reshape(3, 4), chunks=(1, 4))
>>> _ = g.create_array("b", data=np.arange(5), chunks=(5,))
>>> out = zarrx.rechunk_group(g, MemoryStore(), chunks={"a": (3, 1)}, max_mem="1MiB")
>>> out["a"].chunks, out["b"].chunks
((3, 1), (5,))
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from zarrx.arrays import Array
from zarrx.creation import array_metadata
from zarrx.errors import ArgumentError, NodeExistsError, NodeTypeError, RechunkError
from zarrx.groups import Group
from zarrx.metadata.io import LAYOUTS, data_prefix, find_node, join_path, normalize_path
from zarrx.metadata.nodes import erase_node, open_store, write_group
from zarrx.rechunking.api import check_executor, check_threads
from zarrx.rechunking.jobs import a_or_an, overlaps, prepare, run_jobs
from zarrx.rechunking.parse import parse_mem
from zarrx.rechunking.record import Record, digest, record_prefix, source_fingerprint
from zarrx.rechunking.target import Options, check_format, target_keywords
from zarrx.rechunking.tasks import executor_slots
from zarrx.stores.keys import validate_key, validate_prefix

GROUP_STATE = "group.json"
#: Per-array options a ``chunks={path: {...}}`` entry may give.
ARRAY_OPTIONS = ("chunks", "shards", "compressors", "filters", "serializer", "dtype",
                 "fill_value", "attributes")


def _open_group(source: Any, path: str | None, storage_options: Any) -> Group:
    if isinstance(source, Group):
        if path is not None:
            raise ArgumentError("source_path is for a source given as a store, path or URL")
        return source
    from zarrx.api import open_group

    return open_group(source, mode="r", path=path, storage_options=storage_options)


def _array_options(
    rel: str, array: Array, chunks: Any, common: dict[str, Any], fmt: Any
) -> Options:
    spec = chunks(rel, array) if callable(chunks) else (chunks or {}).get(rel)
    if spec is None:
        return Options(zarr_format=fmt)
    if isinstance(spec, Mapping):
        unknown = set(spec) - set(ARRAY_OPTIONS)
        if unknown:
            raise ArgumentError(f"array {'/' + rel!r}: unknown options {sorted(unknown)}; "
                                f"known: {', '.join(ARRAY_OPTIONS)}")
        return Options(**{**common, **spec}, zarr_format=fmt)
    return Options(**common, chunks=spec, zarr_format=fmt)


class _GroupRecord:
    def __init__(self, store: Any, path: str, fmt: Any) -> None:
        meta = LAYOUTS[fmt].new_group({})
        self.store = store
        self.prefix = validate_prefix(f"{data_prefix(path, meta)}.zarrx-rechunk/")
        self.key = validate_key(self.prefix + GROUP_STATE)

    def load(self) -> dict[str, Any] | None:
        raw = self.store.get(self.key)
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
            if doc.get("format") != "zarrx-rechunk-group":
                raise ValueError
            return dict(doc)
        except (ValueError, AttributeError):
            raise RechunkError(f"the key {self.key!r} does not hold a zarrx rechunk_group "
                               "record; pass overwrite=True to start over") from None

    def save(self, doc: dict[str, Any]) -> None:
        self.store.set(self.key, json.dumps(doc, indent=1).encode())

    def marker(self, rel: str) -> str:
        return validate_key(f"{self.prefix}done/{digest(rel)}")

    def done(self) -> set[str]:
        return {k.rsplit("/", 1)[-1] for k in self.store.list_prefix(self.prefix + "done/")}

    def erase(self) -> None:
        for key in self.store.list_prefix(self.prefix):
            if key != self.key:
                self.store.erase(validate_key(key))
        self.store.erase(self.key)
        self.store.erase_prefix(self.prefix)


def rechunk_group(
    source: Any,
    target: Any,
    chunks: Mapping[str, Any] | Callable[[str, Array], Any] | None = None,
    *,
    compressors: Any = None,
    filters: Any = None,
    serializer: Any = None,
    shards: Any = None,
    dtype: Any = None,
    zarr_format: Any = None,
    max_mem: int | str = "512MiB",
    resume: bool = True,
    overwrite: bool = False,
    progress: Any = False,
    threads: int | None = None,
    executor: Any = None,
    source_path: str | None = None,
    target_path: str | None = None,
    source_storage_options: dict[str, Any] | None = None,
    target_storage_options: dict[str, Any] | None = None,
) -> Group:
    """Copy the group ``source`` (a Group, or a store/path/URL with ``source_path=``) and
    everything below it into ``target`` (a store/path/URL, at ``target_path=``).

    ``chunks`` names the arrays to rechunk: ``{path: chunks}`` (paths relative to the
    source group; a value may also be a dict of :func:`zarrx.rechunk` options, e.g.
    ``{"chunks": (64, 64), "shards": (512, 512)}``), or a callable ``(path, array) ->
    chunks or None``. ``compressors``, ``filters``, ``serializer``, ``shards`` and
    ``dtype`` apply to the arrays rechunked; the other arrays are copied as they are.
    ``zarr_format`` applies to the whole hierarchy. The other keywords are those of
    :func:`zarrx.rechunk`; ``max_mem`` bounds each array's copy (they run one after
    another). Returns the target group."""
    limit = parse_mem(max_mem)
    n = check_threads(threads)
    group = _open_group(source, source_path, source_storage_options)
    store = open_store(target, "a", target_storage_options)
    path = normalize_path(target_path)
    if overlaps(group, store, path):
        raise ArgumentError(f"the target {'/' + path!r} in {store!r} is the source group, or "
                            "lies inside it, or contains it; choose another target")
    fmt = check_format(zarr_format, group.zarr_format)
    check_executor(executor, group, store)  # type: ignore[arg-type]
    per_worker, window = (n, 0) if executor is None else executor_slots(executor, threads)
    members = group.members(max_depth=None)
    arrays = {rel: node for rel, node in members if isinstance(node, Array)}
    groups = [(rel, node) for rel, node in members if isinstance(node, Group)]
    if isinstance(chunks, Mapping):
        for rel in chunks:
            if rel not in arrays:
                raise ArgumentError(f"chunks names {rel!r}, which is not an array below "
                                    f"{group.name!r}")
    elif chunks is not None and not callable(chunks):
        raise ArgumentError("chunks must be a mapping {path: chunks} or a callable "
                            "(path, array) -> chunks or None")
    common = {"compressors": compressors, "filters": filters, "serializer": serializer,
              "shards": shards, "dtype": dtype}

    record = _GroupRecord(store, path, fmt)
    existing = find_node(store, path)
    state = record.load() if existing is not None and existing.node_type == "group" else None
    if existing is not None and state is None and not overwrite:
        raise NodeExistsError(f"{a_or_an(existing.node_type)} exists at {'/' + path!r} in "
                              f"{store!r}; pass overwrite=True to replace it")
    if state is not None and not (resume or overwrite):
        raise NodeExistsError(f"{'/' + path!r} in {store!r} holds an interrupted "
                              "rechunk_group; pass resume=True or overwrite=True")
    fresh = overwrite or state is None
    fingerprint = digest({
        "group": group.metadata.to_json(),
        "arrays": {rel: source_fingerprint(a) for rel, a in sorted(arrays.items())},
        "groups": {rel: g.metadata.to_json() for rel, g in groups},
    })
    if not fresh and state is not None and state.get("source") != fingerprint:
        raise RechunkError(f"the source group {group.name!r} changed since the interrupted "
                           f"rechunk_group recorded in {record.key!r}; pass overwrite=True")
    finished = set() if fresh else record.done()

    jobs = []
    leftovers = []  # records of arrays finished but not yet cleared when interrupted
    for rel, array in sorted(arrays.items()):
        opts = _array_options(rel, array, chunks, common, fmt)
        if digest(rel) in finished:
            where = join_path(path, rel)
            _, kw = target_keywords(array.metadata, opts, where)
            meta = array_metadata(zarr_format=fmt, where=where, **kw)
            leftovers.append(Record(store, record_prefix(where, meta), where))
            continue
        jobs.append(prepare(array, store, join_path(path, rel), opts, max_mem=limit,
                            threads=per_worker, engine_threads=n if executor is None else
                            per_worker, resume=not fresh, overwrite=fresh))
    # -- everything is checked: now write
    if fresh:
        for job in jobs:
            job.existing, job.state, job.resumed = None, None, False
            if existing is not None:
                job.stray = False  # (erased with the old group, just below)
        if existing is not None:
            erase_node(store, path, existing)
        record.save({"format": "zarrx-rechunk-group", "source": fingerprint})
    for leftover in leftovers:
        leftover.erase()
    for rel, node in [("", group), *groups]:
        where = join_path(path, rel) if rel else path
        found = find_node(store, where)
        if found is None:
            write_group(store, where, attributes=dict(node.attrs), zarr_format=fmt,
                        overwrite=False)
        elif found.node_type != "group":
            raise NodeTypeError(f"{'/' + where!r} in {store!r} is an array, expected a group")
    relative = {id(job): job.path[len(path):].lstrip("/") for job in jobs}
    run_jobs(jobs, progress, n, executor, window,
             lambda job: store.set(record.marker(relative[id(job)]), b""))
    if group.consolidated is not None and fmt in (2, 3):
        from zarrx.api import consolidate_metadata

        consolidate_metadata(store, path)
    record.erase()
    from zarrx.api import open_group

    return open_group(store, mode="r+", path=path)


__all__ = ["rechunk_group"]
