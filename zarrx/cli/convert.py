"""``zarrx convert``: copy a hierarchy into another Zarr format, chunk by chunk.

1. The source's structure is read once (:mod:`zarrx.zom`) and mapped to the target model
   (``to_v2`` / ``to_v3``; the 3.0 draft uses the v3 model). Anything the target cannot
   hold is an error before the destination is touched.
2. The destination is created from the mapped ZOM (groups, arrays, attributes; no data).
3. Every *initialised* chunk of every source array (a stored key; for sharded arrays,
   each shard) is read as its region of the array and written to the same region of the
   destination, by a thread pool (``--threads``, default ``zarrx.config`` "threads").
   Regions follow the chunk grid, which the mapping keeps, so each write covers whole
   destination chunks and no two tasks touch the same one (:func:`zarrx.transfer.run`).
4. ``--verify`` re-reads every chunk region of both sides and compares them bit for bit,
   and compares the destination's ZOM with the mapped one.
5. A source opened from consolidated metadata gets a consolidated destination (v2, v3).

Resumability: ``DST/.zarrx-convert.json`` (a store key no Zarr format uses) records the
source, the target format, a digest of the mapped ZOM and, per array, the ranges of chunk
numbers (C order) already written. It is rewritten at most every second and when the
copy stops for any reason; a re-run with ``--resume`` copies only what is missing, and
the file is deleted once the conversion (and the verification) succeeded.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from zarrx.errors import (
    ArgumentError,
    MetadataError,
    NodeExistsError,
    PathNotFoundError,
    VerificationError,
    ZarrxError,
)
from zarrx.metadata import v3_draft
from zarrx.transfer import run

STATE_KEY = ".zarrx-convert.json"
STATE_FORMAT = "zarrx-convert"
STATE_VERSION = 1
FORMATS: dict[str, Any] = {"2": 2, "3": 3, "3-draft": v3_draft.FORMAT}
SAVE_INTERVAL = 1.0  # seconds between state writes while copying


def parse_format(value: Any) -> Any:
    key = str(value)
    if key not in FORMATS:
        raise ArgumentError(f"--zarr-format must be one of {', '.join(FORMATS)}, got {value!r}")
    return FORMATS[key]


# -- chunk-number ranges (the state file's compact form) -----------------------------------------

def to_ranges(numbers: Iterable[int]) -> list[list[int]]:
    """``{0, 1, 2, 5}`` → ``[[0, 3], [5, 6]]`` (half-open ranges).

    >>> to_ranges([5, 0, 2, 1])
    [[0, 3], [5, 6]]
    """
    out: list[list[int]] = []
    for n in sorted(set(numbers)):
        if out and out[-1][1] == n:
            out[-1][1] = n + 1
        else:
            out.append([n, n + 1])
    return out


def from_ranges(ranges: Any) -> set[int]:
    out: set[int] = set()
    for start, stop in ranges:
        out.update(range(int(start), int(stop)))
    return out


# -- the state file ----------------------------------------------------------------------------

@dataclass
class State:
    """What a conversion has done, saved in the destination."""

    source: str
    zarr_format: Any
    digest: str
    phase: str = "creating"  # then "copying"
    done: dict[str, set[int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "source": self.source,
            "zarr_format": self.zarr_format,
            "target_digest": self.digest,
            "phase": self.phase,
            "arrays": {path: to_ranges(n) for path, n in sorted(self.done.items())},
        }

    @classmethod
    def from_json(cls, doc: Any) -> State:
        if (
            not isinstance(doc, dict)
            or doc.get("format") != STATE_FORMAT
            or doc.get("version") != STATE_VERSION
        ):
            raise ArgumentError(
                f"{STATE_KEY} is not a zarrx conversion state (version {STATE_VERSION}); "
                "use --overwrite to start over"
            )
        try:
            done = {path: from_ranges(r) for path, r in doc.get("arrays", {}).items()}
        except (TypeError, ValueError):
            raise ArgumentError(f"{STATE_KEY} is damaged; use --overwrite to start over") from None
        return cls(doc["source"], doc["zarr_format"], doc["target_digest"],
                   doc.get("phase", "creating"), done)

    def save(self, store: Any) -> None:
        store.set(STATE_KEY, json.dumps(self.to_json(), indent=1).encode())

    @property
    def chunks_done(self) -> int:
        return sum(len(n) for n in self.done.values())


def load_state(store: Any) -> State | None:
    raw = store.get(STATE_KEY)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        raise ArgumentError(f"{STATE_KEY} is not JSON; use --overwrite to start over") from None
    return State.from_json(doc)


def digest(spec: Any, zarr_format: Any) -> str:
    from zarrx.zom.frozen import canonical

    text = canonical({"zarr_format": zarr_format, "spec": spec.to_json()})
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# -- the plan ------------------------------------------------------------------------------------

@dataclass
class ArrayJob:
    path: str  # relative to the root ("" when the source is an array)
    source: Any
    dest: Any
    chunk_grid: Any  # the source's (and the destination's) chunk grid
    grid: tuple[int, ...]
    todo: list[tuple[int, tuple[int, ...]]]  # (chunk number, coords)

    def region(self, coords: tuple[int, ...]) -> tuple[slice, ...]:
        bound = self.chunk_grid.axis_boundary  # chunks of one size or of many (rectilinear)
        return tuple(
            slice(bound(axis, c), min(bound(axis, c + 1), s))
            for axis, (c, s) in enumerate(zip(coords, self.source.shape))
        )

    def number(self, coords: tuple[int, ...]) -> int:
        n = 0
        for c, g in zip(coords, self.grid):
            n = n * g + c
        return n


def _copy_region(job: ArrayJob, coords: tuple[int, ...]) -> int:
    """Copy one chunk's region; returns the decoded bytes moved."""
    region = job.region(coords)
    data = job.source[region]
    job.dest[region] = data
    return int(np.asarray(data).nbytes)


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.hasobject or a.dtype.kind == "T" or b.dtype.hasobject or b.dtype.kind == "T":
        return a.tolist() == b.tolist()
    if a.dtype != b.dtype:
        return False
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _verify_region(job: ArrayJob, coords: tuple[int, ...]) -> tuple[bool, int]:
    """Whether one chunk's region reads the same from both sides; and its decoded bytes."""
    region = job.region(coords)
    expected = job.source[region]
    return _same(expected, job.dest[region]), int(np.asarray(expected).nbytes)


# -- the command -----------------------------------------------------------------------------------

@dataclass
class Report:
    arrays: int = 0
    groups: int = 0
    chunks_copied: int = 0
    chunks_skipped: int = 0  # done by an earlier, interrupted run
    bytes_copied: int = 0
    chunks_verified: int = 0
    seconds: float = 0.0
    resumed: bool = False
    consolidated: bool = False


def _describe(location: Any) -> str:
    if isinstance(location, str | os.PathLike):
        text = os.fspath(location)
        return text if "://" in text else os.path.abspath(text)
    return repr(location)


def _overlap(src: Any, dst: Any) -> bool:
    """Whether two local paths are the same directory or one contains the other."""
    if not (isinstance(src, str | os.PathLike) and isinstance(dst, str | os.PathLike)):
        return False
    a, b = os.fspath(src), os.fspath(dst)
    if "://" in a or "://" in b:
        return False
    a, b = os.path.realpath(a), os.path.realpath(b)
    return os.path.commonpath([a, b]) in (a, b)


def _non_empty(store: Any) -> bool:
    from zarrx.storage import LocalStore

    if isinstance(store, LocalStore):
        root = store.root
        return root.is_dir() and any(root.iterdir())
    keys, prefixes = store.list_dir("")
    return bool(keys or prefixes)


def _holds_zarr(store: Any) -> bool:
    from zarrx.metadata.io import find_node

    try:
        return find_node(store, "") is not None
    except ZarrxError:
        return store.get("zarr.json") is not None or store.get(".zgroup") is not None


def _again(error: BaseException) -> bool:
    """Whether running the conversion again may get past ``error``: an interruption, the
    machine or a store failing (``OSError``, store errors), anything unexpected — not what
    zarrx found wrong with the data (a corrupt chunk, metadata, a shape), which a re-run
    meets again."""
    from zarrx.errors import StoreError

    return not isinstance(error, ZarrxError) or isinstance(error, StoreError)


def _local_dir(location: Any) -> str | None:
    if isinstance(location, str | os.PathLike):
        text = os.fspath(location)
        if "://" not in text:
            return text
        if text.startswith("file://"):
            return text[len("file://"):]
    return None


def _remove_empty(directory: str) -> None:
    """Remove ``directory`` if nothing but empty directories is left in it."""
    for root, _, _ in sorted(os.walk(directory), key=lambda w: -len(w[0])):
        try:
            os.rmdir(root)
        except OSError:
            return


def convert(
    src: Any,
    dst: Any,
    zarr_format: Any,
    *,
    overwrite: bool = False,
    resume: bool = False,
    verify: bool = False,
    threads: int | None = None,
    progress: bool | None = None,
    stream: TextIO | None = None,
    src_options: dict[str, Any] | None = None,
    dst_options: dict[str, Any] | None = None,
) -> Report:
    """Copy the hierarchy (or array) at ``src`` into ``dst`` as ``zarr_format``
    (2, 3 or ``"3-draft"``); ``src_options`` / ``dst_options`` are the storage options
    of URLs. See the module docstring for the guarantees."""
    import zarrx
    from zarrx.progress import Progress
    from zarrx.stores.url import make_store
    from zarrx.zom.mapping import node_spec
    from zarrx.zom.model import GroupSpec
    from zarrx.zom.storage import check_writable

    fmt = parse_format(zarr_format)
    stream = sys.stderr if stream is None else stream
    if overwrite and resume:
        raise ArgumentError("--overwrite and --resume exclude each other")
    if threads is None:
        threads = zarrx.config.get("threads")
    if not isinstance(threads, int) or threads < 1:
        raise ArgumentError(f"--threads must be a positive integer, got {threads!r}")
    if _overlap(src, dst):
        raise ArgumentError(
            "the source and the destination overlap (one lies inside the other); choose a "
            "destination outside the source"
        )

    report = Report()
    t0 = time.perf_counter()

    # 1. the source's structure, mapped to the target model, checked before writing
    try:
        source = zarrx.open(make_store(src, mode="r", storage_options=src_options), mode="r")
    except PathNotFoundError:
        raise PathNotFoundError(f"the source {_describe(src)} does not exist") from None
    if isinstance(source, zarrx.Group):
        members = dict(source.members(max_depth=None))
        flat = {"": node_spec(source.metadata)}
        flat.update({rel: node_spec(node.metadata) for rel, node in sorted(members.items())})
        source_spec: Any = GroupSpec.from_flat(flat)
        source_arrays = {rel: n for rel, n in members.items() if isinstance(n, zarrx.Array)}
    else:
        source_spec = node_spec(source.metadata)
        source_arrays = {"": source}
    target = source_spec.to_format(fmt)
    check_writable(target, fmt)
    report.arrays = len(source_arrays)
    report.groups = (
        sum(1 for _, n in target.walk() if isinstance(n, GroupSpec))
        if isinstance(target, GroupSpec) else 0
    )
    target_digest = digest(target, fmt)
    source_name = _describe(src)

    # 2. the destination: fresh, resumed, replaced, or refused
    dst_dir = _local_dir(dst)
    made_dir = dst_dir is not None and not os.path.exists(dst_dir)
    store = make_store(dst, mode="a", storage_options=dst_options)
    state = load_state(store)
    if state is not None and overwrite:
        store.erase_prefix("")
        state = None
    elif state is not None:
        if not resume:
            raise NodeExistsError(
                f"{_describe(dst)} holds an interrupted conversion ({state.chunks_done} chunks "
                "copied); pass --resume to continue it, or --overwrite to start over"
            )
        if (state.source, state.zarr_format, state.digest) != (source_name, fmt, target_digest):
            raise ArgumentError(
                f"{_describe(dst)} holds a conversion of {state.source} to zarr_format "
                f"{state.zarr_format!r}, or the source changed since; it cannot be resumed "
                "with these arguments (use --overwrite to start over)"
            )
        report.resumed = True
    elif _non_empty(store):
        if resume:
            raise ArgumentError(
                f"nothing to resume: {_describe(dst)} is not empty and has no {STATE_KEY}"
            )
        if not overwrite:
            raise NodeExistsError(
                f"{_describe(dst)} exists and is not empty; pass --overwrite to replace it"
            )
        if not _holds_zarr(store):
            raise ArgumentError(
                f"{_describe(dst)} is not empty and holds no Zarr hierarchy; refusing to "
                "delete it (choose an empty destination)"
            )
        store.erase_prefix("")

    if state is None or state.phase == "creating":
        if state is not None:  # interrupted while creating: nothing copied yet
            store.erase_prefix("")
        state = State(source_name, fmt, target_digest)
        state.save(store)
        target.to_zarr(store, zarr_format=fmt)
        state.phase = "copying"
        state.save(store)

    # 3. the copy
    dest_root = zarrx.open(store, mode="r+")
    dest_arrays = (
        {rel: n for rel, n in dest_root.members(max_depth=None) if isinstance(n, zarrx.Array)}
        if isinstance(dest_root, zarrx.Group) else {"": dest_root}
    )
    jobs = _jobs(source_arrays, dest_arrays, state)
    total = sum(len(j.todo) for j in jobs) + state.chunks_done
    report.chunks_skipped = state.chunks_done
    last_save = time.monotonic()

    def copied(job: ArrayJob, coords: tuple[int, ...], nbytes: int) -> None:
        nonlocal last_save
        state.done.setdefault(job.path, set()).add(job.number(coords))
        report.chunks_copied += 1
        report.bytes_copied += nbytes
        bar.advance(1, nbytes=nbytes)
        if time.monotonic() - last_save >= SAVE_INTERVAL:
            state.save(store)
            last_save = time.monotonic()

    tasks = ((job, coords) for job in jobs for _, coords in job.todo)
    with zarrx.config.set(threads=threads), Progress(
        total, label="copying", done=state.chunks_done, stream=stream, enabled=progress
    ) as bar:
        try:
            run(tasks, _copy_region, threads, copied)
        except BaseException as e:
            bar.close()
            if _again(e):
                state.save(store)
                stream.write(
                    f"zarrx: conversion stopped after {state.chunks_done}/{total} chunks; run "
                    "the same command with --resume to continue\n"
                )
            else:  # a re-run meets the same chunk: the partial copy is of no use
                store.erase_prefix("")
                if made_dir and dst_dir is not None:
                    _remove_empty(dst_dir)
                left = "removed" if made_dir else "emptied"
                stream.write(
                    f"zarrx: conversion failed after {state.chunks_done}/{total} chunks: the "
                    f"copy cannot be finished as it is; the partial destination "
                    f"{_describe(dst)} was {left}\n"
                )
            raise
        state.save(store)

    # 4. verification
    if verify:
        _verify(source_arrays, dest_arrays, jobs, target, fmt, store, state, threads,
                progress, stream, report)

    store.erase(STATE_KEY)
    if getattr(source, "consolidated", None) is not None and fmt in (2, 3):
        zarrx.consolidate_metadata(store)  # consolidated in, consolidated out
        report.consolidated = True
    report.seconds = time.perf_counter() - t0
    return report


def _jobs(
    source_arrays: dict[str, Any], dest_arrays: dict[str, Any], state: State
) -> list[ArrayJob]:
    from zarrx.info import grid_shape, initialised

    jobs = []
    for rel in sorted(source_arrays):
        src_array = source_arrays[rel]
        dest = dest_arrays.get(rel)
        if dest is None:
            raise MetadataError(f"the destination has no array {'/' + rel!r} to copy into")
        chunk_shape = tuple(src_array.metadata.chunk_grid.chunk_shape)
        if tuple(dest.metadata.chunk_grid.chunk_shape) != chunk_shape:
            raise MetadataError(
                f"{'/' + rel}: the destination's chunk grid {dest.metadata.chunk_grid.chunk_shape}"
                f" differs from the source's {chunk_shape}"
            )
        grid = grid_shape(src_array)
        job = ArrayJob(rel, src_array, dest, src_array.metadata.chunk_grid, grid, [])
        done = state.done.get(rel, set())
        for coords, _ in initialised(src_array):
            number = job.number(coords)
            if number not in done:
                job.todo.append((number, coords))
        jobs.append(job)
    return jobs


def _verify(
    source_arrays: dict[str, Any], dest_arrays: dict[str, Any], jobs: list[ArrayJob],
    target: Any, fmt: Any, store: Any, state: State, threads: int, progress: bool | None,
    stream: TextIO, report: Report,
) -> None:
    import zarrx
    from zarrx.progress import Progress
    from zarrx.zom.compare import diff
    from zarrx.zom.storage import from_zarr

    found = from_zarr(zarrx.open(store, mode="r"))
    if found.zarr_format != target.zarr_format:  # a v3 model written as a draft hierarchy
        found = found.to_format(target.zarr_format)
    problems = [str(d) for d in diff(found, target)]
    bad: list[tuple[ArrayJob, tuple[int, ...]]] = []

    def checked(job: ArrayJob, coords: tuple[int, ...], result: tuple[bool, int]) -> None:
        same, nbytes = result
        report.chunks_verified += 1
        bar.advance(1, nbytes=nbytes)
        if not same:
            bad.append((job, coords))

    total = sum(math.prod(j.grid) for j in jobs)
    tasks = ((job, coords) for job in jobs for coords in np.ndindex(*job.grid))
    with zarrx.config.set(threads=threads), Progress(
        total, label="verifying", stream=stream, enabled=progress
    ) as bar:
        run(tasks, _verify_region, threads, checked)
    if bad or problems:
        for job, coords in bad:  # copy them again on --resume
            state.done.get(job.path, set()).discard(job.number(coords))
        state.save(store)
        shown = [f"{'/' + job.path}: chunk {coords} differs" for job, coords in bad[:10]]
        raise VerificationError(
            "verification failed:\n  " + "\n  ".join(problems + shown)
            + ("\nrun the same command with --resume to copy the differing chunks again"
               if bad else "")
        )

