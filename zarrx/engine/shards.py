"""Sharded arrays, read and written inner chunk by inner chunk, as tensorstore does: a
shard is a small store of inner chunks (:class:`~zarrx.codecs.sharding.ShardLayout`), and
the engine plans, fetches, decodes and encodes inner chunks as it does chunks.

- **Planning**: a selection of runs is planned over the shard grid, then each shard's
  share over its inner chunks (so the inner chunks of one shard come together, and a
  shard whose inner chunks are all needed is known as such); a selection with index
  arrays is planned over the grid of inner chunks (points grouped by inner chunk) and its
  inner chunks grouped by shard.
- **Reads**, per batch: the shards whose inner chunks are all needed (each one plain
  read, no index first) and the other shards' indexes in one ``get_many``; then the
  inner chunks' byte ranges in another, adjacent ranges of one shard merged into one
  read (:mod:`zarrx.stores.ranges`); then each inner chunk is decoded into its place
  with the :func:`~zarrx.runtime.place.place` chunks use. An absent shard, or an inner
  chunk without an index entry, is the fill value.
- **Writes**, per shard one :meth:`~zarrx.abc.store.Store.atomic_splice`: the index is
  read, inner chunks the write does not touch are kept as their byte ranges in the
  stored shard (a store copies them without reading them where it can), covered ones
  are encoded from the value (before the update, concurrently), partly covered ones are
  read, modified and written; a shard left without inner chunks is erased. A shard
  covered whole is written without a read.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx import config
from zarrx.abc.store import ByteRange, Part, Snapshot, Store, Stored
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.update import (
    background_writes,
    covers,
    encode_chunk,
    encode_chunks,
    new_chunk,
)
from zarrx.errors import CodecError
from zarrx.runtime.executor import BackgroundWrites, in_worker, run_all
from zarrx.runtime.place import place_each
from zarrx.runtime.plan import ChunkProjection, plan, plan_ranges
from zarrx.selection.layout import Layout, Points, Run
from zarrx.stores.ranges import coalesced

if TYPE_CHECKING:  # the sharding codec loads on first use, as every codec does
    from zarrx.codecs.sharding import ShardLayout

Coords = tuple[int, ...]


@dataclass(frozen=True)
class ShardPart:
    """One shard's share of a selection."""

    key: str
    coords: Coords  # in the shard grid
    #: The inner chunks' projections (see :attr:`items`), or ``None``: planned from
    #: ``selection`` when first asked for (a shard placed by one kernel call never is).
    planned: list[ChunkProjection] | None
    #: Every inner chunk of the shard inside the array is touched: the shard is read
    #: whole, in one request, with no index read first.
    read_whole: bool
    #: How many inner chunks the part touches (``len(items)``).
    count: int
    #: For a selection of runs: the shard's share of the buffer (step-1 slices), which
    #: ``items`` place into (for a shard selected whole and not cut by the array's end,
    #: they are the shard's :attr:`~zarrx.codecs.sharding.ShardLayout.whole_plan`,
    #: planned once per array). ``None``: ``items`` place into the buffer itself.
    region: tuple[Any, ...] | None = None
    #: With ``region``: the share's elements in the shard (positive-step slices), and
    #: the inner grid and the shard's extent inside the array, to plan them over.
    selection: tuple[slice, ...] | None = None
    grid: Any = None
    extent: tuple[int, ...] = ()
    #: ``items`` is the shard's ``whole_plan``, shared by every shard selected whole.
    shared: bool = False

    @cached_property
    def items(self) -> list[ChunkProjection]:
        """The inner chunks' projections: ``coords`` inside the shard, ``out_selection``
        in the selection's buffer (or its ``region``)."""
        if self.planned is not None:
            return self.planned
        assert self.selection is not None  # a part is planned or has a selection
        return list(plan_ranges(self.grid, self.extent, self.selection))

    def target(self, buffer: np.ndarray) -> np.ndarray:
        """What the items' ``out_selection`` index: ``buffer`` or its region (a view)."""
        return buffer if self.region is None else buffer[self.region]


def shard_parts(cs: ChunkStore, shards: ShardLayout, layout: Layout) -> Iterator[ShardPart]:
    """The shards the selection of ``layout`` touches, with the inner chunks it needs of
    each (a shard may come more than once for a selection with index arrays)."""
    meta = cs.meta
    if any(isinstance(g, Points) for g in layout.groups):
        yield from _by_shard(cs, shards, plan(shards.grid, meta.shape, layout))
        return
    for sp in plan(meta.chunk_grid, meta.shape, layout):
        yield _split(cs, shards, sp)


def inner_projections(
    cs: ChunkStore, shards: ShardLayout, layout: Layout
) -> Iterator[tuple[str, Coords, ChunkProjection]]:
    """The inner chunks a selection touches, shard by shard: the shard's key, the inner
    chunk's coordinates in the array's grid of inner chunks, and its projection."""
    per_shard = shards.chunks_per_shard
    for part in shard_parts(cs, shards, layout):
        for p in part.items:
            if part.region is not None:
                p = ChunkProjection(p.coords, p.chunk_selection, tuple(
                    slice(o.start + i.start, o.start + i.stop)
                    for o, i in zip(part.region, p.out_selection)), p.complete)
            yield part.key, tuple(s * n + c for s, n, c in zip(part.coords, per_shard,
                                                               p.coords)), p


def _split(cs: ChunkStore, shards: ShardLayout, sp: ChunkProjection) -> ShardPart:
    """A shard's projection (runs) split over its inner chunks, relative to its share of
    the buffer; the inner projections are planned only if they are used."""
    shard_shape = shards.spec.shape
    extent = tuple(min(s, n - c * s) for s, n, c in zip(shard_shape, cs.meta.shape, sp.coords))
    key = cs.key(sp.coords)
    held = math.prod(-(-e // c) for e, c in zip(extent, shards.chunk_shape))
    if sp.complete:  # all of it: the plan made once, or the part inside the array
        whole = extent == shard_shape
        return ShardPart(key, sp.coords, shards.whole_plan if whole else None, True, held,
                         sp.out_selection, tuple(slice(0, e, 1) for e in extent),
                         shards.grid, extent, whole)
    count = math.prod(_touched(s, c) for s, c in zip(sp.chunk_selection, shards.chunk_shape))
    # Many uncompressed inner chunks (placed by one kernel call from a whole shard) are
    # read with the shard once a quarter of them is needed: one read and one call
    # instead of a ranged read and a placement in Python each, for at most 4x the bytes.
    whole = count == held or (shards.copy_swap is not None and count >= _MANY
                              and 4 * count >= held)
    return ShardPart(key, sp.coords, None, whole, count, sp.out_selection,
                     sp.chunk_selection, shards.grid, extent)


#: Inner chunks of one shard from which reading the whole shard may pay (above).
_MANY = 64


def _touched(selection: slice, chunk: int) -> int:
    """How many chunks of size ``chunk`` the positive-step ``selection`` meets (as the
    indexer projects it: every chunk between the first and the last when the step is
    shorter than a chunk, else one per element)."""
    step = selection.step or 1
    n = len(range(selection.start, selection.stop, step))
    if n == 0:
        return 0
    if step >= chunk:
        return n
    return (selection.start + (n - 1) * step) // chunk - selection.start // chunk + 1


def _by_shard(
    cs: ChunkStore, shards: ShardLayout, projections: Iterable[ChunkProjection]
) -> Iterator[ShardPart]:
    """Inner chunks of the array's inner grid, grouped by shard a batch at a time."""
    per_shard = shards.chunks_per_shard
    it = iter(projections)
    while True:
        groups: dict[Coords, list[ChunkProjection]] = {}
        for _, p in zip(range(config.get("batch_chunks")), it):
            shard = tuple(c // n for c, n in zip(p.coords, per_shard))
            local = tuple(c % n for c, n in zip(p.coords, per_shard))
            groups.setdefault(shard, []).append(ChunkProjection(
                local, p.chunk_selection, p.out_selection, p.complete, p.fancy, p.groups))
        if not groups:
            return
        for shard, items in groups.items():
            yield ShardPart(cs.key(shard), shard, items, False, len(items))


def _batches(parts: Iterable[ShardPart], held: Callable[[ShardPart], int]
             ) -> Iterator[list[ShardPart]]:
    """Whole shards in batches holding about ``batch_chunks`` inner chunks (``held``: how
    many a shard's part holds in memory at once)."""
    batch: list[ShardPart] = []
    size = 0
    limit = config.get("batch_chunks")
    for part in parts:
        batch.append(part)
        size += held(part)
        if size >= limit:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


@contextmanager
def _naming(cs: ChunkStore, key: str) -> Iterator[None]:
    """Codec errors name the array and the shard."""
    try:
        yield
    except CodecError as e:
        raise _named(cs, key, e) from None


def _named(cs: ChunkStore, key: str, e: CodecError) -> CodecError:
    """``e`` naming the array and the shard (where a ``with`` costs too much)."""
    return type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}")


def _get_many(cs: ChunkStore, requests: Sequence[tuple[str, ByteRange | None]]) -> list[Any]:
    if not requests:
        return []
    return _answered(cs, cs.store.get_many(requests), len(requests))


def _answered(cs: ChunkStore, values: Sequence[Any], asked: int) -> list[Any]:
    """``values``, the store's answers to ``asked`` reads, unless some are missing."""
    if len(values) != asked:
        raise CodecError(
            f"{cs.node}: the store answered {len(values)} of {asked} reads of "
            "shards: the data read is truncated"
        )
    return list(values)


# -- reading ---------------------------------------------------------------------------------
def read_shards(cs: ChunkStore, shards: ShardLayout, layout: Layout, out: np.ndarray) -> None:
    """Fill ``out`` (the selection's buffer) from the inner chunks the selection needs.

    A shard read whole is read by the chunk thread that decodes it, as a chunk is, so
    reads and decoding overlap and each shard is freed once placed; on stores with
    batched reads, it is fetched with the batch's indexes."""
    indexes: dict[str, np.ndarray | None] = {}  # a shard may come in several batches
    batched = cs.store.batched_reads

    def held(part: ShardPart) -> int:
        # A shard read whole by its worker holds nothing until then, but a part's own
        # list of inner projections does (only a shard selected whole shares its plan).
        return 1 if part.read_whole and not batched and part.shared else part.count

    if _in_one_inner_chunk(shards, layout):  # a small read: its one inner chunk, unplanned
        key, coords, p = _one_inner_chunk(cs, shards, layout)
        if cs.store.batched_reads:
            _read_batch(cs, shards, [ShardPart(key, coords, [p], False, 1)], out, indexes)
        else:
            _read_inner_chunk(cs, shards, key, p, out)
        return
    for batch in _batches(shard_parts(cs, shards, layout), held):
        _read_batch(cs, shards, batch, out, indexes)


def _in_one_inner_chunk(shards: ShardLayout, layout: Layout) -> bool:
    """Whether a selection of runs lies inside one inner chunk of a shard holding several
    (else a shard selected whole, and read in one request, could be one inner chunk)."""
    chunk = shards.chunk_shape
    if math.prod(shards.chunks_per_shard) < 2:  # (never the whole plan: shards may be huge)
        return False
    for g in layout.groups:
        if not isinstance(g, Run) or g.count < 1:
            return False
        size = chunk[g.axis]
        if g.start // size != (g.start + (g.count - 1) * g.step) // size:
            return False
    return True


def _one_inner_chunk(
    cs: ChunkStore, shards: ShardLayout, layout: Layout
) -> tuple[str, Coords, ChunkProjection]:
    """The shard (key and coordinates) and the projection of the one inner chunk a
    selection inside it needs (see :func:`_in_one_inner_chunk`), computed without a plan."""
    shape, per_shard = cs.meta.shape, shards.chunks_per_shard
    runs: tuple[Run, ...] = layout.groups  # type: ignore[assignment]  # (runs only)
    shard, local, inner, outer = [], [], [], []
    complete = True
    for g, size, n in zip(runs, shards.chunk_shape, per_shard):
        c = g.start // size
        lo = c * size
        first = g.start - lo
        shard.append(c // n)
        local.append(c % n)
        inner.append(slice(first, first + (g.count - 1) * g.step + 1, g.step))
        outer.append(slice(0, g.count))
        complete = complete and g.count == min(lo + size, shape[g.axis]) - lo
    coords = tuple(shard)
    return cs.key(coords), coords, ChunkProjection(tuple(local), tuple(inner), tuple(outer),
                                                   complete)


def _read_inner_chunk(cs: ChunkStore, shards: ShardLayout, key: str, p: ChunkProjection,
                      out: np.ndarray) -> None:
    """:func:`_read_batch` for one inner chunk of shard ``key`` (a small read): the
    shard's index and then the chunk's bytes from one open of the shard
    (:meth:`~zarrx.abc.store.Store.get_indexed`), decoded into its place here."""
    entry: ByteRange | None = None

    def ranges(raw: bytes | None) -> list[ByteRange]:
        nonlocal entry
        if raw is not None:
            entry = shards.entry(_decoded_index(cs, shards, key, raw), p.coords)
        return [] if entry is None else [entry]

    values = cs.store.get_indexed(key, shards.index_range, ranges)
    if entry is None:  # absent shard or inner chunk: the fill value
        _place(cs, shards, out, key, p, None)
        return
    (value,) = _answered(cs, values, 1)
    _place(cs, shards, out, key, p, _checked(cs, key, p, entry, value))


def _decoded_index(cs: ChunkStore, shards: ShardLayout, key: str, raw: bytes) -> np.ndarray:
    """The index of shard ``key`` from its stored bytes, an error naming the shard."""
    try:
        return shards.decode_index(raw, None)
    except CodecError as e:
        raise _named(cs, key, e) from None


def _checked(cs: ChunkStore, key: str, p: ChunkProjection, entry: ByteRange, value: Any) -> Any:
    """``value``, an inner chunk read from shard ``key`` at ``entry``, unless it is short."""
    if value is None or len(value) != entry.length:
        raise CodecError(
            f"{cs.node}: chunk {key!r}: inner chunk {p.coords} is truncated: the "
            f"index says {entry.length} bytes, {0 if value is None else len(value)} "
            "were read"
        )
    return value


def _read_batch(
    cs: ChunkStore,
    shards: ShardLayout,
    batch: list[ShardPart],
    out: np.ndarray,
    indexes: dict[str, np.ndarray | None],
) -> None:
    """Read ``batch`` and decode each inner chunk (or shard read whole) into its place."""
    work: list[partial[None]] = []  # a task per shard read whole or inner chunk
    wanted: list[tuple[int, str, ChunkProjection, ByteRange, np.ndarray]] = []
    if len(batch) == 1 and not batch[0].read_whole and batch[0].key not in indexes \
            and not cs.store.batched_reads:
        values = _read_one(cs, shards, batch[0], out, indexes, work, wanted)
    else:
        values = _read_indexes(cs, shards, batch, out, indexes, work, wanted)
    for (i, key, p, entry, target), value in zip(wanted, values):
        work[i] = partial(_place, cs, shards, target, key, p, _checked(cs, key, p, entry, value))
    run_all(_call, work)


def _read_one(
    cs: ChunkStore,
    shards: ShardLayout,
    part: ShardPart,
    out: np.ndarray,
    indexes: dict[str, np.ndarray | None],
    work: list[partial[None]],
    wanted: list[tuple[int, str, ChunkProjection, ByteRange, np.ndarray]],
) -> list[Any]:
    """:func:`_read_indexes` for one shard read in part (a small read): its index, then
    its inner chunks' byte ranges (adjacent ones merged), in one
    :meth:`~zarrx.abc.store.Store.get_indexed` (one open of the shard where the store
    can)."""
    key = part.key
    answers: list[Callable[[Sequence[bytes | None]], list[bytes | None]]] = []
    asked: list[ByteRange] = []

    def ranges(raw: bytes | None) -> list[ByteRange]:
        index = None if raw is None else _decoded_index(cs, shards, key, raw)
        indexes[key] = index
        _wanted(cs, shards, part, index, out, work, wanted)
        if len(wanted) <= 1:
            asked[:] = [w[3] for w in wanted]
        else:
            fetches, answer = coalesced([(w[1], w[3]) for w in wanted], gap=0)
            answers.append(answer)
            asked[:] = [r for _, r in fetches if r is not None]  # (each one is a range)
        return asked

    values = _answered(cs, cs.store.get_indexed(key, shards.index_range, ranges), len(asked))
    return answers[0](values) if answers else values


def _read_indexes(
    cs: ChunkStore,
    shards: ShardLayout,
    batch: list[ShardPart],
    out: np.ndarray,
    indexes: dict[str, np.ndarray | None],
    work: list[partial[None]],
    wanted: list[tuple[int, str, ChunkProjection, ByteRange, np.ndarray]],
) -> list[Any]:
    """The work of ``batch`` (one task per shard read whole or inner chunk), and the
    values of the inner chunks ``wanted``: first the indexes of shards read in part (and,
    on stores with batched reads, the shards read whole) in one batch, then the inner
    chunks' byte ranges, adjacent ones of a shard merged into one read."""
    batched = cs.store.batched_reads
    first: list[tuple[str, ByteRange | None]] = []
    for part in batch:
        if part.read_whole:
            if batched:
                first.append((part.key, None))
        elif part.key not in indexes:
            indexes[part.key] = None
            first.append((part.key, shards.index_range))
    whole: dict[str, Any] = {}
    for (key, byte_range), value in zip(first, _get_many(cs, first)):
        if byte_range is None:
            whole[key] = value
        elif value is not None:
            indexes[key] = _decoded_index(cs, shards, key, value)
    for part in batch:
        if part.read_whole:
            work.append(partial(_place_shard, cs, shards, out, part,
                                whole.get(part.key, _UNREAD)))
        else:
            _wanted(cs, shards, part, indexes[part.key], out, work, wanted)
    if not wanted:
        return []
    requests: list[tuple[str, ByteRange | None]] = [(w[1], w[3]) for w in wanted]
    if len(requests) > 1:
        fetches, answer = coalesced(requests, gap=0)
        return list(answer(_get_many(cs, fetches)))
    return _get_many(cs, requests)


def _wanted(
    cs: ChunkStore,
    shards: ShardLayout,
    part: ShardPart,
    index: np.ndarray | None,
    out: np.ndarray,
    work: list[partial[None]],
    wanted: list[tuple[int, str, ChunkProjection, ByteRange, np.ndarray]],
) -> None:
    """A task per inner chunk of ``part`` (the fill value until its value is read), and
    the inner chunks stored (per ``index``; ``None``: the shard is absent) in ``wanted``."""
    key = part.key
    target = part.target(out)
    for p in part.items:
        entry = None if index is None else shards.entry(index, p.coords)
        if entry is not None:
            wanted.append((len(work), key, p, entry, target))
        work.append(partial(_place, cs, shards, target, key, p, None))


_UNREAD = object()


def _call(task: Callable[[], None]) -> None:
    task()


def _place(cs: ChunkStore, shards: ShardLayout, out: np.ndarray, key: str,
           p: ChunkProjection, data: Any) -> None:
    try:
        shards.place(p, data, out)
    except CodecError as e:
        raise _named(cs, key, e) from None


def _place_shard(cs: ChunkStore, shards: ShardLayout, out: np.ndarray, part: ShardPart,
                 value: Any) -> None:
    """Every inner chunk of a shard read whole (here, unless it was read ahead)."""
    key = part.key
    out = part.target(out)
    if value is _UNREAD:
        value = cs.store.get(key)
    if value is None:
        if part.region is not None:  # the shard's share of the buffer: filled at once
            shards.elements.fill_region(out)
            return
        stored = {}
    else:
        with _naming(cs, key):
            index = shards.index_of(value)
            if part.region is not None and shards.place_all(value, index, out,
                                                             part.selection):
                return  # the shard's share of the selection, in one kernel call
            stored = shards.stored(value, index)
    # In one slice per thread on the pool when this shard is the only work; in turn
    # inside a chunk task.
    items = [(p, stored.get(p.coords)) for p in part.items]
    n = 1 if in_worker() else max(1, min(config.get("threads"), len(items)))
    with _naming(cs, key):
        run_all(partial(place_each, shards.inner, shards.elements, shards.chunk_shape,
                        out=out, what="inner chunk"), [items[i::n] for i in range(n)])


# -- writing ---------------------------------------------------------------------------------
def write_shards(cs: ChunkStore, shards: ShardLayout, layout: Layout, value: np.ndarray) -> None:
    """Write ``value`` (the selection's buffer) into the inner chunks the selection names,
    one atomic update per shard (see the module's docstring).

    A shard the write covers is tasks of the chunk threads, runs of :data:`_RUN` of its
    inner chunks each (in C order, shard after shard), each run encoded in one call
    without the GIL where the chain can: every thread encodes inner chunks of the same
    shard, and the one that encodes its last hands it to the I/O threads, in parts (its encoded
    inner chunks and its index, never joined into one buffer). So the threads finish
    together, and each shard is written while the next ones are encoded. A shard covered
    in part is one task, as a chunk is: its inner chunks are encoded in turn inside it, or
    on the pool when it is the only task of the batch."""
    write_empty = cs.writes_empty_chunks()
    per_shard = math.prod(shards.chunks_per_shard)
    with background_writes(cs.store) as writes:
        for batch in _batches(shard_parts(cs, shards, layout), _one):
            # A shard selected whole (its items the shard's whole plan) is covered:
            # known without testing each of its inner chunks.
            whole = [part.shared or (len(part.items) == per_shard
                                     and all(_covered(shards, p) for p in part.items))
                     for part in batch]
            partly = [part.key for part, w in zip(batch, whole) if not w]
            ahead = cs.store.prefetch_for_update(partly) if partly else {}
            tasks: list[tuple[Callable[[Any], None], Any]] = []
            for part, w in zip(batch, whole):
                if w:
                    shard = _WholeShard(cs, shards, value, write_empty, writes, part)
                    items = part.items
                    tasks.extend((shard.encode, items[i:i + _RUN])
                                 for i in range(0, len(items), _RUN))
                else:
                    tasks.append((partial(_update, cs, shards, value, write_empty, part),
                                  ahead.get(part.key)))
            run_all(_apply, tasks)


#: Inner chunks of a shard written whole encoded by one task, in one call without the
#: GIL where the chain can (:func:`~zarrx.engine.update.encode_chunks`): a thread takes
#: the GIL once per run instead of twice per inner chunk, and one preempted while it
#: holds it stalls the others less often. A full write of 2048 32³ float32 inner chunks
#: (blosc lz4), interleaved against one inner chunk a task: CPU 0.88-0.92, wall
#: 0.79-0.89; beside a CPU-bound process, wall 0.87-0.94.
_RUN = 8


def _one(part: ShardPart) -> int:
    return 1


def _apply(task: tuple[Callable[[Any], None], Any]) -> None:
    task[0](task[1])


def _covered(shards: ShardLayout, p: ChunkProjection) -> bool:
    """The write covers the inner chunk ``p``: it is encoded from the value alone."""
    return p.complete and covers(p, shards.chunk_shape)


def _encode_covered(shards: ShardLayout, value: np.ndarray, part: ShardPart) -> dict[Coords, Any]:
    """The inner chunks of ``part`` the value covers, encoded (``None``: fill value)."""
    encoded: dict[Coords, Any] = {}
    value = part.target(value)
    chain, elements = shards.inner, shards.elements

    def encode(p: ChunkProjection) -> None:
        encoded[p.coords] = encode_chunk(chain, elements, False, value[p.out_selection])

    run_all(encode, [p for p in part.items if _covered(shards, p)])
    return encoded


class _WholeShard:
    """A shard the write covers, encoded run by run of its inner chunks by any thread
    (:meth:`encode` of runs of its items), and written (nothing read) once its last inner
    chunk is encoded."""

    def __init__(self, cs: ChunkStore, shards: ShardLayout, value: np.ndarray,
                 write_empty: bool, writes: Store | BackgroundWrites, part: ShardPart) -> None:
        self.cs, self.shards, self.write_empty, self.writes, self.part = (
            cs, shards, write_empty, writes, part)
        self.value = part.target(value)
        self.encoded: dict[Coords, Any] = {}
        self.left = len(part.items)
        self.lock = threading.Lock()

    def encode(self, run: list[ChunkProjection]) -> None:
        """Encode a run of the shard's inner chunks; the last one done writes it."""
        shards, value = self.shards, self.value
        encoded = encode_chunks(shards.inner, shards.elements, False,
                                [value[p.out_selection] for p in run])
        with self.lock:
            for p, data in zip(run, encoded):
                self.encoded[p.coords] = data
            self.left -= len(run)
            last = not self.left
        if last:
            self.write()

    def write(self) -> None:
        """The shard, encoded: written in parts, or erased when it holds no inner chunk
        (and empty shards are not written)."""
        parts = _shard_parts(self.shards, self.encoded, self.write_empty)
        self.encoded = {}
        if parts is None:
            self.cs.store.erase(self.part.key)
        else:
            self.writes.set_parts(self.part.key, parts)


def _update(
    cs: ChunkStore,
    shards: ShardLayout,
    value: np.ndarray,
    write_empty: bool,
    part: ShardPart,
    ahead: Snapshot | None,
) -> None:
    """A shard the write covers in part: the inner chunks it covers are encoded first
    (they need nothing stored), then the shard is spliced atomically: its index read,
    the inner chunks the write leaves alone kept as their stored byte ranges (the store
    copies them, without reading them where it can)."""
    encoded = _encode_covered(shards, value, part)
    cs.store.atomic_splice(
        part.key, partial(_new_shard, cs, shards, value, write_empty, encoded, part), ahead
    )


def _new_shard(
    cs: ChunkStore,
    shards: ShardLayout,
    value: np.ndarray,
    write_empty: bool,
    encoded: dict[Coords, Any],
    part: ShardPart,
    current: Stored | None,
) -> list[Part] | None:
    """The parts of the shard ``part`` leaves of the stored shard ``current`` (``None``:
    absent): untouched inner chunks as their byte ranges in it, covered ones as encoded
    ahead, partly covered ones read, modified and encoded. ``None``: erase it (no inner
    chunk left)."""
    key = part.key
    index = None
    if current is not None:
        with _naming(cs, key):
            index = shards.decode_index(current.read(shards.index_span(current.size)),
                                        current.size)
    entries = dict(encoded)
    stored: dict[Coords, Any] = {}
    partly = [p for p in part.items if p.coords not in encoded]
    for p in partly:
        entry = None if index is None else shards.entry(index, p.coords)
        if entry is not None:
            assert current is not None
            stored[p.coords] = current.read(entry)
    name = f"{cs.node}: chunk {key!r}: inner chunk"
    value = part.target(value)

    def modify(p: ChunkProjection) -> None:
        entries[p.coords] = new_chunk(shards.inner, shards.elements, value, p,
                                      stored.get(p.coords), False, f"{name} {p.coords}")

    run_all(modify, partly)  # concurrently when this shard is the only work
    if current is not None and not cs.store.conditional_erase:
        write_empty = True  # a stored shard left empty is written, where it cannot be erased
    parts = shards.parts(entries, index)
    return None if len(parts) == 1 and not write_empty else parts


def _shard_parts(shards: ShardLayout, entries: dict[Coords, Any], write_empty: bool
                 ) -> list[Any] | None:
    """The stored shard of ``entries`` in parts (its inner chunks' bytes and its index), or
    ``None`` when it holds no inner chunk (and empty shards are not written)."""
    if not write_empty and all(v is None for v in entries.values()):
        return None
    return shards.parts(entries)
