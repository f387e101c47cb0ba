"""zarr-python 2's copy helpers, which zarr-python 3 never ported: :func:`copy`,
:func:`copy_all` and :func:`copy_store`, with their names, keywords, log lines and
``(n_copied, n_skipped, n_bytes_copied)`` results.

- :func:`copy` / :func:`copy_all` copy arrays and groups node by node into a destination
  group, which may live in another store and another format (v2, v3, the 3.0 draft): each
  array is re-created in the destination's format with the source's chunks, codecs, fill
  value, attributes and dimension names (keywords given to the call override them), then
  its data is copied region by region on the thread pool (:mod:`zarrx.transfer`), never
  more than a few chunks in memory.
- :func:`copy_store` copies the stored bytes of every key below a path, unchanged.

Everything the copy will do is decided first: an existing node in the way
(``if_exists="raise"``) or an array the destination format cannot hold is an error
before anything is written. If writing fails later, the nodes this call created are
erased again. ``if_exists="replace"`` erases only the node being replaced, through its
validated keys.

>>> import numpy as np, zarrx
>>> source = zarrx.group()
>>> _ = source.create_array("foo/bar/baz", data=np.arange(100))
>>> dest = zarrx.group(zarr_format=2)
>>> zarrx.copy(source["foo"], dest)
(3, 0, 800)
>>> int(dest["foo/bar/baz"][-1]), dest["foo/bar/baz"].zarr_format
(99, 2)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO

from zarrx import config
from zarrx.arrays import Array
from zarrx.convenience import create_keywords
from zarrx.creation import array_metadata
from zarrx.errors import ArgumentError, CopyError, MetadataError, ReadOnlyError
from zarrx.groups import Group
from zarrx.hierarchy import create_array
from zarrx.metadata.io import find_node, join_path, normalize_path
from zarrx.metadata.nodes import erase_node, open_store, write_group
from zarrx.progress import Progress
from zarrx.stores.keys import validate_key
from zarrx.transfer import copy_region, regions, run

IF_EXISTS = ("raise", "replace", "skip", "skip_initialized")


class _Log:
    """zarr-python 2's ``log``: a callable, a file path (written, then closed) or a
    file-like object; ``None`` logs nothing."""

    def __init__(self, log: Any) -> None:
        self._func: Callable[[str], Any] | None = None
        self._file: TextIO | None = None
        self._owned = False
        if log is None:
            return
        if callable(log):
            self._func = log
        elif isinstance(log, str):
            self._file = open(log, "w")  # noqa: SIM115 - closed in __exit__
            self._owned = True
        elif hasattr(log, "write"):
            self._file = log
        else:
            raise ArgumentError(f"log must be a callable, a file path or a file, got {log!r}")

    def __enter__(self) -> _Log:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._owned and self._file is not None:
            self._file.close()

    def __call__(self, message: str) -> None:
        if self._file is not None:
            print(message, file=self._file)
            if hasattr(self._file, "flush"):
                self._file.flush()
        elif self._func is not None:
            self._func(message)

    def summary(self, dry_run: bool, copied: int, skipped: int, nbytes: int) -> None:
        message = f"dry run: {copied:,} copied, {skipped:,} skipped" if dry_run else (
            f"all done: {copied:,} copied, {skipped:,} skipped, {nbytes:,} bytes copied"
        )
        self(message)


@dataclass
class _Step:
    """One node to write: a group (``keywords is None``) or an array."""

    source: Array | Group
    path: str  # in the destination store
    keywords: dict[str, Any] | None
    replace: Any = None  # metadata of a node in the way, erased first
    exists: bool = False  # a group already there: its attributes are updated


@dataclass
class _Plan:
    dest: Group
    shallow: bool
    without_attrs: bool
    if_exists: str
    create_kws: dict[str, Any]
    log: _Log
    steps: list[_Step] = field(default_factory=list)
    copied: int = 0
    skipped: int = 0
    nbytes: int = 0

    def array(self, source: Array, parent: Any, name: str, path: str) -> None:
        describe = f"{source.name} {source.shape} {source.dtype}"
        existing = None if parent is None else parent.get(name)
        if existing is not None:
            if self.if_exists == "raise":
                raise CopyError(
                    f"an object {name!r} already exists in destination {parent.name!r}"
                )
            if self.if_exists == "skip" or (
                self.if_exists == "skip_initialized" and isinstance(existing, Array)
                and existing.nchunks_initialized == existing.nchunks
            ):
                self.log(f"skip {describe}")
                self.skipped += 1
                return
        self.log(f"copy {describe}")
        self.steps.append(_Step(source, path, self._keywords(source, path),
                                None if existing is None else existing.metadata))
        self.copied += 1
        self.nbytes += source.size * source.dtype.itemsize

    def _keywords(self, source: Array, path: str) -> dict[str, Any]:
        """create_array keywords making ``source`` in the destination's format, checked."""
        from zarrx.zom.mapping import keywords

        fmt = self.dest.zarr_format
        where = f"array {'/' + path!r}"
        kw = keywords(source.metadata, fmt, where=where)
        overrides = create_keywords(**self.create_kws)
        given = overrides.pop("zarr_format", fmt)
        if given != fmt:
            raise ArgumentError(
                f"{where}: zarr_format={given!r}, but the destination group is {fmt!r}"
            )
        for key in ("name", "overwrite", "store"):
            if key in overrides:
                raise ArgumentError(f"{where}: {key} cannot be given to a copy")
        kw.update(overrides)
        if self.without_attrs:
            kw["attributes"] = {}
        try:
            array_metadata(zarr_format=fmt, where=where, **kw)
        except MetadataError as e:
            message = str(e)
            raise type(e)(message if message.startswith(where) else f"{where}: {message}") from None
        return kw

    def group(self, source: Group, parent: Any, name: str, path: str, root: bool) -> None:
        if not (root or not self.shallow):
            return
        existing = None if parent is None else parent.get(name)
        in_the_way = isinstance(existing, Array)
        if in_the_way:
            if self.if_exists == "raise":
                raise CopyError(
                    f"an array {name!r} already exists in destination {parent.name!r}"
                )
            if self.if_exists == "skip":
                self.log(f"skip {source.name}")
                self.skipped += 1
                return
        self.log(f"copy {source.name}")
        self.steps.append(_Step(source, path, None,
                                existing.metadata if isinstance(existing, Array) else None,
                                exists=isinstance(existing, Group)))
        self.copied += 1
        below = existing if isinstance(existing, Group) else None
        for child_name, child in source.members():
            self.node(child, below, child_name, join_path(path, child_name), root=False)

    def node(self, source: Any, parent: Any, name: str, path: str, root: bool) -> None:
        if isinstance(source, Array):
            self.array(source, parent, name, path)
        elif isinstance(source, Group):
            self.group(source, parent, name, path, root)
        else:
            raise ArgumentError(f"can only copy a zarrx Array or Group, got {source!r}")


def _start(dest: Any, if_exists: str, dry_run: bool) -> None:
    if not isinstance(dest, Group):
        raise ArgumentError(f"dest must be a zarrx Group, got {dest!r}")
    if if_exists not in IF_EXISTS:
        raise ArgumentError(f"if_exists must be one of {IF_EXISTS}; found {if_exists!r}")
    if not dry_run and dest.read_only:
        raise ReadOnlyError(f"cannot copy into {dest.name!r}: it was opened read-only")


def _execute(plan: _Plan, progress: bool | None, threads: int | None) -> None:
    """Write the planned nodes, then copy the arrays' data on the thread pool; on a
    failure, erase the nodes this call created."""
    store, fmt = plan.dest.store, plan.dest.zarr_format
    created: list[str] = []
    pairs: list[tuple[Array, Array]] = []
    try:
        for step in plan.steps:
            attributes = {} if plan.without_attrs else dict(step.source.attrs)
            if step.replace is not None:
                erase_node(store, step.path, step.replace)
            if step.keywords is not None:
                made = create_array(store, step.path, zarr_format=fmt, **step.keywords)
                pairs.append((step.source, made))  # type: ignore[arg-type]
                created.append(step.path)
            elif step.exists:
                Group(store, step.path, find_node(store, step.path)).attrs.update(attributes)
            else:
                write_group(store, step.path, attributes=attributes, zarr_format=fmt,
                            overwrite=False)
                created.append(step.path)
        work = [(s, d, r) for s, d in pairs for r in regions(s, d)]
        n = config.get("threads") if threads is None else threads
        with config.set(threads=n), Progress(
            len(work), label="copying", stream=sys.stderr, enabled=bool(progress)
        ) as bar:
            run(work, copy_region, n,
                lambda _s, _d, _r, nbytes: bar.advance(1, nbytes=nbytes))
    except BaseException:
        for path in reversed(created):
            meta = find_node(store, path)
            if meta is not None:
                erase_node(store, path, meta)
        raise


def _name_of(source: Any, name: str | None) -> str:
    if name is None:
        name = source.name.rstrip("/").rpartition("/")[2]
        if not name:
            raise ArgumentError(
                "the source is a root node and has no name: pass name= to say what to "
                "call it in the destination"
            )
    return normalize_path(name)


def copy(
    source: Array | Group,
    dest: Group,
    name: str | None = None,
    shallow: bool = False,
    without_attrs: bool = False,
    log: Any = None,
    if_exists: str = "raise",
    dry_run: bool = False,
    *,
    progress: bool | None = False,
    threads: int | None = None,
    **create_kws: Any,
) -> tuple[int, int, int]:
    """Copy the array or group ``source`` (with everything below it) into the group
    ``dest`` as ``name`` (default: the source's own name).

    ``if_exists``: ``"raise"`` (a :class:`~zarrx.errors.CopyError` before anything is
    written), ``"replace"``, ``"skip"``, or ``"skip_initialized"`` (skip arrays whose
    chunks are all stored). ``shallow`` copies only the arrays directly in ``source``;
    ``without_attrs`` leaves attributes behind; ``dry_run`` only says what would happen.
    ``log`` is a callable, file path or file receiving one line per node and a summary;
    ``progress=True`` draws a progress bar on stderr; ``threads`` defaults to
    ``zarrx.config`` "threads". Other keywords (``chunks``, ``compressor(s)``,
    ``filters``, ``fill_value`` …) override the source's settings for every array.

    Returns ``(n_copied, n_skipped, n_bytes_copied)``, the bytes being the decoded size
    of the copied arrays."""
    _start(dest, if_exists, dry_run)
    with _Log(log) as logger:
        plan = _Plan(dest, shallow, without_attrs, if_exists, create_kws, logger)
        target = _name_of(source, name)
        plan.node(source, dest, target, join_path(dest.path, target), root=True)
        return _finish(plan, dry_run, progress, threads)


def copy_all(
    source: Group,
    dest: Group,
    shallow: bool = False,
    without_attrs: bool = False,
    log: Any = None,
    if_exists: str = "raise",
    dry_run: bool = False,
    *,
    progress: bool | None = False,
    threads: int | None = None,
    **create_kws: Any,
) -> tuple[int, int, int]:
    """Copy every member of the group ``source`` into the group ``dest`` (keywords as
    :func:`copy`; the source group's own attributes are not copied)."""
    _start(dest, if_exists, dry_run)
    if not isinstance(source, Group):
        raise ArgumentError(f"copy_all copies the members of a group, got {source!r}")
    with _Log(log) as logger:
        plan = _Plan(dest, shallow, without_attrs, if_exists, create_kws, logger)
        for child_name, child in source.members():
            plan.node(child, dest, child_name, join_path(dest.path, child_name), root=False)
        return _finish(plan, dry_run, progress, threads)


def _finish(
    plan: _Plan, dry_run: bool, progress: bool | None, threads: int | None
) -> tuple[int, int, int]:
    nbytes = 0 if dry_run else plan.nbytes
    if not dry_run:
        _execute(plan, progress, threads)
    plan.log.summary(dry_run, plan.copied, plan.skipped, nbytes)
    return plan.copied, plan.skipped, nbytes


# -- copying stored bytes ------------------------------------------------------------------------

def _patterns(value: Any, flags: int) -> list[re.Pattern[str]]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    return [re.compile(p, flags) for p in value]


def copy_store(
    source: Any,
    dest: Any,
    source_path: str = "",
    dest_path: str = "",
    excludes: Any = None,
    includes: Any = None,
    flags: int = 0,
    if_exists: str = "raise",
    dry_run: bool = False,
    log: Any = None,
    *,
    progress: bool | None = False,
    threads: int | None = None,
) -> tuple[int, int, int]:
    """Copy the stored bytes of every key below ``source_path`` in the store ``source``
    to the same key below ``dest_path`` in ``dest`` (stores, paths or URLs), unchanged:
    the fastest copy, in the source's own format.

    ``excludes`` / ``includes``: regular expressions (``re.search`` with ``flags``) a key
    must not / may match (an include overrides an exclude). ``if_exists``: ``"raise"``
    (a :class:`~zarrx.errors.CopyError` before any write), ``"replace"`` or ``"skip"``.
    Returns ``(n_copied, n_skipped, n_bytes_copied)``."""
    if if_exists not in IF_EXISTS[:3]:
        raise ArgumentError(f"if_exists must be one of {IF_EXISTS[:3]}; found {if_exists!r}")
    src = open_store(source, "r")
    dst = src if dry_run and dest is None else open_store(dest, "a")
    prefix_in = normalize_path(source_path)
    prefix_out = normalize_path(dest_path)
    prefix_in = f"{prefix_in}/" if prefix_in else ""
    prefix_out = f"{prefix_out}/" if prefix_out else ""
    excluded, included = _patterns(excludes, flags), _patterns(includes, flags)
    present = set(dst.list_prefix(prefix_out)) if if_exists != "replace" else set()
    todo: list[tuple[str, str]] = []
    copied = skipped = 0
    with _Log(log) as logger:
        for key in sorted(src.list_prefix(prefix_in)):
            if any(p.search(key) for p in excluded) and not any(
                p.search(key) for p in included
            ):
                continue
            out = prefix_out + key[len(prefix_in):]
            validate_key(out)
            describe = key if out == key else f"{key} -> {out}"
            if out in present:
                if if_exists == "raise":
                    raise CopyError(f"key {out!r} exists in destination")
                logger(f"skip {describe}")
                skipped += 1
                continue
            logger(f"copy {describe}")
            todo.append((key, out))
            copied += 1
        nbytes = 0
        if not dry_run:
            if dst.read_only:
                raise ReadOnlyError(f"cannot copy into {dst!r}: it is read-only")
            nbytes = _copy_keys(src, dst, todo, progress, threads)
        logger.summary(dry_run, copied, skipped, nbytes)
    return copied, skipped, nbytes


def _copy_keys(
    src: Any, dst: Any, todo: Iterable[tuple[str, str]], progress: bool | None,
    threads: int | None,
) -> int:
    todo = list(todo)
    total = 0

    def one(key: str, out: str) -> int:
        value = src.get(key)
        if value is None:  # erased since the listing
            return 0
        dst.set(out, value)
        return len(value)

    def done(_key: str, _out: str, nbytes: int) -> None:
        nonlocal total
        total += nbytes
        bar.advance(1, nbytes=nbytes)

    n = config.get("threads") if threads is None else threads
    with Progress(len(todo), label="copying", unit="keys", stream=sys.stderr,
                  enabled=bool(progress)) as bar:
        run(todo, one, n, done)
    return total


__all__ = ["IF_EXISTS", "copy", "copy_all", "copy_store"]
