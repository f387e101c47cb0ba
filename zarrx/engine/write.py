"""Writing: a selection planned into batches of chunks (the inner chunks of a sharded
array), each batch written through the array's chunk source (:mod:`.sources`) one atomic
update per unit — a chunk, or a shard — so that no write of a key is lost to another,
whole or partial.

Per batch, the chunks the value covers are encoded by the chunk threads, runs of up to
:data:`RUN` of a unit in one call (without the GIL where the chain can,
:meth:`PreparedChain.encode_many`; :data:`KEY_RUN` chunks, each a unit of its own, where a
key holds one chunk); the thread that encodes a unit's last run commits the unit: a
unit the write covers whole is handed to the I/O threads (nothing read), any other is
read, modified and written by its atomic update there and then — in that thread, which
holds the key's lock and waits for no pool. A unit with no covered chunk is one task.
A chunk equal to the fill value is not stored (unless ``write_empty_chunks`` is set).
When this returns, every write is done."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable

import numpy as np

from zarrx import config
from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.sources import Commit
from zarrx.engine.update import background_writes, encode_chunks, spans
from zarrx.runtime.executor import run_all
from zarrx.runtime.plan import ChunkBatch, ChunkProjection, batches_of, by_tiles, plan_batches
from zarrx.selection.layout import Layout

#: Covered chunks of a unit encoded by one task, in one call without the GIL where the
#: chain can (:func:`~zarrx.engine.update.encode_chunks`): a thread takes the GIL once per
#: run instead of twice per chunk, and one preempted while it holds it stalls the others
#: less often. A full write of 2048 32³ float32 inner chunks (blosc lz4), interleaved
#: against one inner chunk a task: CPU 0.88-0.92, wall 0.79-0.89.
RUN = 8
#: Covered chunks of an array of a chunk per key encoded by one task, the same way, then
#: each committed: fewer hand-offs than one a task, and the first writes start sooner than
#: after eight (a full write of 256 64³ float32 chunks, blosc lz4, interleaved against one
#: chunk a task: CPU 0.95, wall 0.98; runs of 8: wall 1.03).
KEY_RUN = 4


def write_selection(cs: ChunkStore, layout: Layout, value: np.ndarray) -> None:
    """Write ``value`` (NumPy's result shape for the selection, the array's dtype) into
    the cells the selection of ``layout`` names; where several name one cell, the last
    wins, as in NumPy."""
    if not value.size:
        return
    tiles = cs.tiles
    size = None
    if tiles is not None:  # a batch of two shards a thread at least: the threads encode
        size = max(config.get("batch_chunks"),  # shards while others are written
                   2 * config.get("threads") * math.prod(tiles))
    batches = plan_batches(cs.grid, cs.meta.shape, layout, size, tiles)
    write_batches(cs, batches, layout.buffer_of(value))


def write_from(cs: ChunkStore, projections: Iterable[ChunkProjection], value: np.ndarray) -> None:
    """Write ``value`` (shape = selection counts, native dtype) into the chunks of
    ``projections`` (see :func:`write_batches`)."""
    batches = batches_of(projections, len(cs.meta.shape))
    tiles = cs.tiles
    write_batches(cs, batches if tiles is None else (by_tiles(b, tiles) for b in batches),
                  value)


def write_batches(cs: ChunkStore, batches: Iterable[ChunkBatch], value: np.ndarray) -> None:
    """Write ``value`` (shape = selection counts, native dtype) into the chunks of
    ``batches`` (see the module's docstring)."""
    write_empty = cs.writes_empty_chunks()
    source = cs.source
    with background_writes(cs.store) as writes:
        for batch in batches:
            chains = cs.chains(batch.coords)
            whole = _covered(batch, chains)
            commit = source.commits(batch, chains, whole, value, write_empty, writes)
            run_all(_call, _BatchWrite(cs, batch, chains, whole, value, commit).tasks())


def _call(task: Callable[[], None]) -> None:
    task()


def _covered(batch: ChunkBatch, chains: list[PreparedChain]) -> np.ndarray:
    """Per chunk of ``batch``: the value covers all of it (it is encoded from the value
    alone; a chunk sticking out of the array's end is not covered: what lies outside the
    shape this writer knows may be rows another writer appended meanwhile)."""
    if batch.starts is not None and all(s == 1 for s in batch.steps or ()) and len(chains):
        assert batch.counts is not None
        if all(chain is chains[0] for chain in chains):
            shape = np.asarray(chains[0].spec.shape, dtype=np.int64)
            return np.all((batch.starts == 0) & (batch.counts == shape), axis=1)
    fancy = batch.fancy
    complete = batch.complete.tolist()
    return np.array([
        complete[i] and not (fancy is not None and fancy[i])
        and spans(sel, chains[i].spec.shape)
        for i, sel in enumerate(batch.chunk_selections)
    ], dtype=bool)


class _BatchWrite:
    """One batch's tasks: runs of covered chunks to encode, each unit committed by the
    thread that encodes its last run (or as a task of its own)."""

    def __init__(self, cs: ChunkStore, batch: ChunkBatch, chains: list[PreparedChain],
                 whole: np.ndarray, value: np.ndarray, commit: Commit) -> None:
        self.cs, self.batch, self.chains, self.value, self.commit = (
            cs, batch, chains, value, commit)
        self.whole = whole
        self.lock = threading.Lock()
        self.left: dict[int, int] = {}

    def tasks(self) -> list[Callable[[], None]]:
        commit = self.commit
        bounds = commit.bounds
        covered = np.flatnonzero(self.whole).tolist()
        tasks: list[Callable[[], None]] = []
        if bounds is None:  # a chunk a unit: runs of covered chunks, each committed after
            tasks.extend(_Commit(commit, u) for u in np.flatnonzero(~self.whole).tolist())
            tasks.extend(_Encode(self, None, covered[k:k + KEY_RUN])
                         for k in range(0, len(covered), KEY_RUN))
            return tasks
        at = 0
        for u in range(len(bounds) - 1):
            hi = int(bounds[u + 1])
            mine = []
            while at < len(covered) and covered[at] < hi:
                mine.append(covered[at])
                at += 1
            if not mine:
                tasks.append(_Commit(commit, u))
                continue
            runs = [mine[k:k + RUN] for k in range(0, len(mine), RUN)]
            self.left[u] = len(runs)
            tasks.extend(_Encode(self, u, run) for run in runs)
        return tasks

    def encode(self, u: int | None, run: list[int]) -> None:
        """Encode the covered chunks ``run`` of unit ``u``; the last run commits it
        (``None``: each chunk is a unit, committed once the run is encoded)."""
        outs = self.batch.out_selections
        chain = self.chains[run[0]]
        same = all(self.chains[i] is chain for i in run)
        values = [self.value[outs[i]] for i in run]
        empty = self.commit.encode_empty
        if same:
            encoded = encode_chunks(chain, self.cs.elements, empty, values)
        else:
            encoded = [encode_chunks(self.chains[i], self.cs.elements, empty, [v])[0]
                       for i, v in zip(run, values)]
        with self.lock:
            for i, data in zip(run, encoded):
                self.commit.encoded[i] = data
            if u is not None:
                self.left[u] -= 1
                last = not self.left[u]
        if u is None:
            for i in run:
                self.commit.commit(i)
        elif last:
            self.commit.commit(u)


class _Encode:
    __slots__ = ("run", "u", "write")

    def __init__(self, write: _BatchWrite, u: int | None, run: list[int]) -> None:
        self.write, self.u, self.run = write, u, run

    def __call__(self) -> None:
        self.write.encode(self.u, self.run)


class _Commit:
    __slots__ = ("commit", "u")

    def __init__(self, commit: Commit, u: int) -> None:
        self.commit, self.u = commit, u

    def __call__(self) -> None:
        self.commit.commit(self.u)

