"""A shard is a store of inner chunks (tensorstore's ``zarr3_sharding_indexed`` key-value
store, under the engine that plans a sharded array's inner chunks as it plans chunks).

What the engine asks of a batch of inner chunks, a shard at a time (:class:`ShardChunks`,
the :class:`~zarrx.engine.sources.ChunkSource` of a sharded array):

- **Reads.** One :class:`ShardRead` per shard, served by the store's
  :meth:`~zarrx.abc.store.Store.read_rounds`, so the index and the inner chunks come from
  one version of the shard: the whole shard in one read when the batch needs most of its
  inner chunks, else its index and then the byte ranges of the inner chunks needed (those
  that touch merged into one read). Every shard of a batch is read in the same rounds.
- **Writes.** One atomic update per shard: a shard whose every inner chunk the write covers
  is replaced whole (its inner chunks encoded by the chunk threads, then written in parts
  with :meth:`~zarrx.abc.store.Store.atomic_set_parts`, nothing read); any other shard is
  spliced (:meth:`~zarrx.abc.store.Store.atomic_splice`): under the shard's lock its index
  is read, the inner chunks the write does not touch are kept as byte ranges of the stored
  shard, the covered ones are the chunk threads' encodings, and the partly covered ones are
  read, modified and encoded there and then — in that thread, which waits for no pool.

The consistency this gives: a reader never mixes two versions of a shard; two writers of
one shard never lose each other's inner chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx.abc.store import ByteRange, Part, Store, Stored
from zarrx.engine.sources import ChunkSource, ChunkStore, Commit, Fetched, Reads
from zarrx.engine.update import new_chunk
from zarrx.errors import CodecError
from zarrx.runtime.executor import BackgroundWrites
from zarrx.stores.ranges import COALESCE_GAP

if TYPE_CHECKING:
    from zarrx.codecs.pipeline import PreparedChain
    from zarrx.codecs.sharding import ShardLayout
    from zarrx.runtime.plan import ChunkBatch

_EMPTY = np.uint64(2**64 - 1)
_EMPTY_INT = 2**64 - 1
# One inner chunk (a small read): its entry's arrays, shared (never written).
_ONE_STORED = np.zeros(1, np.int64)
_ONE_ABSENT = (np.zeros(1, np.int64), np.full(1, -1, np.int64), np.zeros(0, np.int64))
for _shared in (_ONE_STORED, *_ONE_ABSENT):
    _shared.flags.writeable = False


class ShardChunks(ChunkSource):
    """The inner chunks of a sharded array, shard by shard (see the module's docstring)."""

    def __init__(self, cs: ChunkStore, layout: ShardLayout) -> None:
        super().__init__(cs)
        self.layout = layout
        self.per = np.asarray(layout.chunks_per_shard, dtype=np.int64)
        shape = np.asarray(cs.meta.shape, dtype=np.int64)
        self._shard = np.asarray(layout.spec.shape, dtype=np.int64)
        self._inner = np.asarray(layout.chunk_shape, dtype=np.int64)
        self._shape = shape
        self._per = tuple(layout.chunks_per_shard)
        self._shard_shape = tuple(layout.spec.shape)
        self._chunk_shape = tuple(layout.chunk_shape)
        self._array_shape = tuple(cs.meta.shape)

    def held(self, coords: np.ndarray) -> np.ndarray:
        """How many inner chunks each shard at ``coords`` (rows) has inside the array."""
        if len(coords) == 1:  # (a small read: Python integers cost less than NumPy calls)
            n = 1
            for c, s, k, m in zip(coords[0].tolist(), self._shard_shape, self._chunk_shape,
                                  self._array_shape):
                n *= -(-min(s, m - c * s) // k)
            return np.array([n], dtype=np.int64)
        extent = np.minimum(self._shard, self._shape - coords * self._shard)
        return np.prod(-(-extent // self._inner), axis=1)

    def flat(self, coords: np.ndarray) -> np.ndarray:
        """The positions in their shards' index (C order) of the inner chunks at ``coords``."""
        if len(coords) == 1:
            at = 0
            for c, n in zip(coords[0].tolist(), self._per):
                at = at * n + c % n
            return np.array([at], dtype=np.int64)
        local = coords % self.per
        if not len(local):
            return np.zeros(0, np.int64)
        return np.ravel_multi_index(tuple(local.T), self._per).astype(np.int64)

    def reads(self, batch: ChunkBatch, chains: list[PreparedChain]) -> Reads:
        return _ShardReads(self, batch)

    def commits(self, batch: ChunkBatch, chains: list[PreparedChain], whole: np.ndarray,
                value: np.ndarray, write_empty: bool,
                writes: Store | BackgroundWrites) -> Commit:
        return _ShardCommit(self, batch, whole, value, write_empty, writes)

    def named(self, key: str, e: CodecError | str) -> CodecError:
        """``e`` (an error or a message) naming the array and the shard."""
        kind = type(e) if isinstance(e, CodecError) else CodecError
        return kind(f"{self.cs.node}: chunk {key!r} could not be decoded: {e}")


# -- reading -----------------------------------------------------------------------------------
class _ShardReads(Reads):
    def __init__(self, source: ShardChunks, batch: ChunkBatch) -> None:
        assert batch.units is not None
        assert batch.unit_coords is not None
        self.source = source
        self.node = source.cs.node
        self._coords = batch.coords
        self.store = source.cs.store
        self.bounds = self._bounds = batch.units
        self.keys = source.cs.keys(batch.unit_coords)
        bounds = batch.units.tolist()
        counts = [b - a for a, b in pairwise(bounds)]
        held = source.held(batch.unit_coords).tolist()
        flat = source.flat(batch.coords)
        gap = COALESCE_GAP if self.store.batched_reads else 0
        # A shard no larger than what a request's latency is worth is read whole: one
        # request instead of two (its index, then its ranges).
        small = source.layout.spec.nbytes + source.layout.index_nbytes
        cheap = small <= self.store.read_latency_bytes
        self.reads = [
            ShardRead(source, key, bounds[u], flat[bounds[u]:bounds[u + 1]],
                      cheap or _read_whole(counts[u], held[u]), gap)
            for u, key in enumerate(self.keys)
        ]

    def fetch_all(self) -> Fetched:
        self.store.read_rounds([(r.key, r) for r in self.reads])
        return Fetched.joined([r.result() for r in self.reads])

    def fetch(self, u: int) -> Fetched:
        read = self.reads[u]
        self.store.read_rounds([(read.key, read)])
        return read.result()

    def key(self, i: int) -> str:
        return self.keys[int(np.searchsorted(self._bounds, i, side="right")) - 1]

    def named(self, i: int, e: CodecError) -> CodecError:
        local = tuple((self._coords[i] % self.source.per).tolist())
        return type(e)(f"{self.node}: chunk {self.key(i)!r} could not be decoded: inner "
                       f"chunk {local}: {e}")


def _read_whole(needed: int, held: int) -> bool:
    """Whether a shard whose ``needed`` of ``held`` inner chunks a batch reads is read
    whole: one read instead of its index and then its ranges, for at most twice the
    bytes (all of them, or at least half of many)."""
    return needed == held or (needed >= 16 and 2 * needed >= held)


class ShardRead:
    """The reads of some inner chunks of one shard, in rounds from one version of it (a
    :class:`~zarrx.abc.store.RangeReader`): the shard whole, or its index and then the
    byte ranges of the inner chunks it holds (neighbours within ``gap`` bytes merged)."""

    def __init__(self, source: ShardChunks, key: str, lo: int, flat: np.ndarray, whole: bool,
                 gap: int) -> None:
        self.source, self.key, self.lo, self.flat, self.whole, self.gap = (
            source, key, lo, flat, whole, gap)
        self.restart()

    def restart(self) -> None:
        self._round = 0
        self._asked: list[ByteRange] = []
        self._fetched: Fetched | None = None
        self._entries: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def ranges(self) -> Sequence[ByteRange]:
        if self._round == 0:
            layout = self.source.layout
            self._asked = [ByteRange(0) if self.whole else layout.index_range]
        elif self._round == 1 and self._entries is not None:
            self._asked = self._ranges()
            if not self._asked:  # nothing stored of what is needed: all fill value
                self._receive_ranges([])
        else:
            self._asked = []
        return self._asked

    def receive(self, values: Sequence[Any]) -> None:
        if len(values) != len(self._asked):
            raise self.source.named(
                self.key, f"the data read is truncated: the store answered {len(values)} of "
                f"{len(self._asked)} reads of the shard")
        n = len(self.flat)
        layout = self.source.layout
        if self._round == 0:
            (value,) = values
            self._round = 1
            if value is None:  # an absent shard: the fill value
                self._fetched = Fetched(self.lo, [], np.zeros(n, np.int64),
                                        np.zeros(n, np.int64), np.full(n, -1, np.int64))
                return
            try:
                index = layout.index_of(value) if self.whole else layout.decode_index(
                    value, None)
            except CodecError as e:
                raise self.source.named(self.key, e) from None
            if n == 1 and not self.whole:  # (a small read: Python integers)
                self._entries = self._entry_of(index)
                return
            offsets, sizes = self._entries_of(index)
            if self.whole:
                self._fetched = Fetched(self.lo, [value], np.zeros(n, np.int64), offsets,
                                        sizes)
            else:
                self._entries = (offsets, sizes, np.flatnonzero(sizes >= 0))
            return
        self._round = 2
        assert self._entries is not None
        self._receive_ranges(values)

    def _entry_of(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_entries_of` of one inner chunk, and which of them is stored."""
        offset, size = index.reshape(-1, 2)[int(self.flat[0])].tolist()
        if offset == _EMPTY_INT:
            return _ONE_ABSENT
        if offset >= 2**62 or size >= 2**62:
            raise self.source.named(
                self.key, f"shard index entry {self._coords(0)} (offset {offset}, {size} "
                "bytes) is not a valid byte range")
        return np.array([offset], np.int64), np.array([size], np.int64), _ONE_STORED

    def _entries_of(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The inner chunks' ``(offsets, sizes)`` from the index (-1: not stored)."""
        flat = index.reshape(-1, 2)[self.flat]
        offsets, sizes = flat[:, 0], flat[:, 1]
        empty = offsets == _EMPTY
        big = ~empty & ((offsets >= np.uint64(2**62)) | (sizes >= np.uint64(2**62)))
        if big.any():
            i = int(np.flatnonzero(big)[0])
            raise self.source.named(
                self.key, f"shard index entry {self._coords(i)} (offset {int(offsets[i])}, "
                f"{int(sizes[i])} bytes) is not a valid byte range")
        out_offsets = offsets.astype(np.int64)
        out_sizes = sizes.astype(np.int64)
        out_offsets[empty] = 0
        out_sizes[empty] = -1
        return out_offsets, out_sizes

    def _coords(self, i: int) -> tuple[int, ...]:
        """The coordinates in its shard of inner chunk ``i`` of this read."""
        per = tuple(self.source.per.tolist())
        return tuple(int(c) for c in np.unravel_index(int(self.flat[i]), per))

    def _ranges(self) -> list[ByteRange]:
        """The byte ranges of the stored inner chunks, neighbours merged."""
        assert self._entries is not None
        offsets, sizes, stored = self._entries
        if not len(stored):
            return []
        if len(offsets) == 1:
            self._order, self._group = _ONE_STORED, _ONE_STORED
            self._range_starts = offsets
            return [ByteRange(int(offsets[0]), int(sizes[0]))]
        order = stored[np.argsort(offsets[stored], kind="stable")]
        starts = offsets[order]
        ends = starts + sizes[order]
        reach = np.maximum.accumulate(ends)
        new = np.ones(len(order), dtype=bool)
        new[1:] = starts[1:] > reach[:-1] + self.gap
        first = np.flatnonzero(new)
        range_starts = starts[first]
        range_ends = np.maximum.reduceat(ends, first)
        self._order, self._group = order, np.cumsum(new) - 1
        self._range_starts = range_starts
        return [ByteRange(int(a), int(b - a)) for a, b in zip(range_starts.tolist(),
                                                                range_ends.tolist())]

    def _receive_ranges(self, values: Sequence[Any]) -> None:
        assert self._entries is not None
        self._round = 2
        offsets, sizes, _ = self._entries
        n = len(self.flat)
        if not self._asked:
            self._fetched = Fetched(self.lo, [], np.zeros(n, np.int64), offsets, sizes)
            return
        for r, value in zip(self._asked, values):
            if value is None or len(value) != r.length:
                got = 0 if value is None else len(value)
                i = int(self._order[self._group == self._asked.index(r)][-1])
                raise self.source.named(
                    self.key, f"inner chunk {self._coords(i)} is truncated: bytes "
                    f"{r.start}-{r.start + (r.length or 0)} of the shard were asked for, "
                    f"{got} came back")
        if n == 1:
            self._fetched = Fetched(self.lo, list(values), _ONE_STORED, _ONE_STORED, sizes)
            return
        which = np.zeros(n, np.int64)
        rel = offsets.copy()
        which[self._order] = self._group
        rel[self._order] = offsets[self._order] - self._range_starts[self._group]
        self._fetched = Fetched(self.lo, list(values), which, rel, sizes)

    def result(self) -> Fetched:
        """The values read (after the store's rounds)."""
        assert self._fetched is not None, "the shard was not read"
        return self._fetched


# -- writing -----------------------------------------------------------------------------------
class _ShardCommit(Commit):
    """A batch's inner chunks written shard by shard (see the module's docstring)."""

    def __init__(self, source: ShardChunks, batch: ChunkBatch, whole: np.ndarray,
                 value: np.ndarray, write_empty: bool,
                 writes: Store | BackgroundWrites) -> None:
        assert batch.units is not None
        assert batch.unit_coords is not None
        self.source, self.batch, self.whole = source, batch, whole
        self.value, self.write_empty, self.writes = value, write_empty, writes
        cs = source.cs
        self.store = cs.store
        self.bounds = self._bounds = batch.units
        self.keys = cs.keys(batch.unit_coords)
        self.encoded: dict[int, Any] = {}
        self.encode_empty = False  # a shard stores no inner chunk equal to the fill value
        bounds = batch.units.tolist()
        held = source.held(batch.unit_coords).tolist()
        self.full = [hi - lo == n and bool(whole[lo:hi].all())
                     for lo, hi, n in zip(bounds, bounds[1:], held)]
        partly = [k for k, f in zip(self.keys, self.full) if not f]
        self.ahead = self.store.prefetch_for_update(partly) if partly else {}
        self.local = [tuple(c) for c in (batch.coords % source.per).tolist()]

    def commit(self, u: int) -> None:
        lo, hi = int(self._bounds[u]), int(self._bounds[u + 1])
        key = self.keys[u]
        entries = {self.local[i]: self.encoded.pop(i) for i in range(lo, hi) if self.whole[i]}
        layout = self.source.layout
        if self.full[u]:
            if not self.write_empty and all(v is None for v in entries.values()):
                self.writes.atomic_set_parts(key, None)
            else:
                parts: Any = layout.parts(entries)  # (bytes only: nothing kept)
                self.writes.atomic_set_parts(key, parts)
            return
        self.store.atomic_splice(key, partial(self._splice, u, key, entries),
                                 self.ahead.get(key))

    def _splice(self, u: int, key: str, encoded: dict[tuple[int, ...], Any],
                current: Stored | None) -> list[Part] | None:
        """The parts of shard ``u`` from the stored one ``current`` (``None``: absent): the
        inner chunks the write leaves alone kept as their byte ranges in it, covered ones
        as encoded, partly covered ones read, modified and encoded here. ``None``: erase
        it (no inner chunk left)."""
        layout, node = self.source.layout, self.source.cs.node
        index = None
        if current is not None:
            try:
                index = layout.decode_index(current.read(layout.index_span(current.size)),
                                            current.size)
            except CodecError as e:
                raise self.source.named(key, e) from None
        entries = dict(encoded)
        lo, hi = int(self._bounds[u]), int(self._bounds[u + 1])
        elements = self.source.cs.elements
        for i in range(lo, hi):
            if self.whole[i]:
                continue
            coords = self.local[i]
            entry = None if index is None else layout.entry(index, coords)
            old = None if entry is None or current is None else current.read(entry)
            entries[coords] = new_chunk(layout.inner, elements, self.value,
                                        self.batch.projection(i), old, False,
                                        f"{node}: chunk {key!r}: inner chunk {coords}")
        write_empty = self.write_empty or (current is not None
                                           and not self.store.conditional_erase)
        parts = layout.parts(entries, index)
        return None if len(parts) == 1 and not write_empty else parts
