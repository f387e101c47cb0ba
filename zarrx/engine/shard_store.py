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
from zarrx.engine.sources import ChunkSource, ChunkStore, Commit, Fetched, OneRead, Reads
from zarrx.engine.update import new_chunk
from zarrx.errors import CodecError
from zarrx.runtime.executor import BackgroundWrites
from zarrx.stores.ranges import COALESCE_GAP

if TYPE_CHECKING:
    from zarrx.codecs.pipeline import PreparedChain
    from zarrx.codecs.sharding import ShardLayout
    from zarrx.runtime.plan import ChunkBatch, ChunkProjection

_EMPTY = np.uint64(2**64 - 1)
_EMPTY_INT = 2**64 - 1
# The units of a batch of one chunk (a small read), shared (never written).
_ONE_BOUNDS = np.array([0, 1], dtype=np.int64)
_ONE_BOUNDS.flags.writeable = False
_WHOLE = ByteRange(0)


class ShardChunks(ChunkSource):
    """The inner chunks of a sharded array, shard by shard (see the module's docstring).

    ``levels``: the shard layouts from the outermost down — more than one when the inner
    chunks of a shard are shards themselves (nested sharding: the same store stacked). The
    engine plans the innermost chunks; each of them is found in its shard's index, then in
    the index of the shard holding it at the next level, and so on."""

    def __init__(self, cs: ChunkStore, levels: Sequence[ShardLayout]) -> None:
        super().__init__(cs)
        self.levels = list(levels)
        self.layout = outer = self.levels[0]
        innermost = np.asarray(self.levels[-1].chunk_shape, dtype=np.int64)
        self._shard = np.asarray(outer.spec.shape, dtype=np.int64)
        #: Innermost chunks per outer shard, on each axis (the planner's tiles).
        self.per = self._shard // innermost
        self.tiles = tuple(self.per.tolist())
        #: Per level: innermost chunks per inner chunk of that level's shards, on each axis.
        self._ratios = [tuple((np.asarray(level.chunk_shape) // innermost).tolist())
                        for level in self.levels]
        self._inner = innermost
        self._shape = np.asarray(cs.meta.shape, dtype=np.int64)
        # A shard no larger than what a request's latency is worth is read whole: one
        # request instead of two (its index, then its ranges).
        self.cheap = outer.spec.nbytes + outer.index_nbytes <= cs.store.read_latency_bytes
        self._shard_shape = tuple(outer.spec.shape)
        self._chunk_shape = tuple(innermost.tolist())
        self._array_shape = tuple(cs.meta.shape)
        self._index_range = outer.index_range

    def held(self, coords: np.ndarray) -> np.ndarray:
        """How many innermost chunks each shard at ``coords`` (rows) has inside the array."""
        if len(coords) == 1:  # (a small read: Python integers cost less than NumPy calls)
            n = 1
            for c, s, k, m in zip(coords[0].tolist(), self._shard_shape, self._chunk_shape,
                                  self._array_shape):
                n *= -(-min(s, m - c * s) // k)
            return np.array([n], dtype=np.int64)
        extent = np.minimum(self._shard, self._shape - coords * self._shard)
        return np.prod(-(-extent // self._inner), axis=1)

    def flats(self, coords: np.ndarray) -> list[np.ndarray]:
        """Per level, the positions (C order in that level's index) of the entries that
        hold the innermost chunks at ``coords``: at the outermost level in their shard, at
        each next one in the shard the level above holds them in."""
        found = []
        if len(coords) == 1:
            rest = [c % n for c, n in zip(coords[0].tolist(), self.tiles)]
            for level, ratio in zip(self.levels, self._ratios):
                at = 0
                for r, k, n in zip(rest, ratio, level.chunks_per_shard):
                    at = at * n + r // k
                found.append(np.array([at], dtype=np.int64))
                rest = [r % k for r, k in zip(rest, ratio)]
            return found
        rest_a = coords % self.per
        for level, ratio in zip(self.levels, self._ratios):
            if not len(rest_a):
                found.append(np.zeros(0, np.int64))
                continue
            k = np.asarray(ratio, dtype=np.int64)
            found.append(np.ravel_multi_index(tuple((rest_a // k).T),
                                              tuple(level.chunks_per_shard)).astype(np.int64))
            rest_a = rest_a % k
        return found

    def reads(self, batch: ChunkBatch, chains: list[PreparedChain]) -> Reads:
        if len(batch) == 1 and len(self.levels) == 1:  # a small read
            return _OneReads(_OneRead(self, batch.coords[0].tolist()))
        return _ShardReads(self, batch)

    def read_one(self, p: ChunkProjection, chain: PreparedChain) -> OneRead | None:
        return _OneRead(self, p.coords) if len(self.levels) == 1 else None

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
        flats = source.flats(batch.coords)
        gap = COALESCE_GAP if self.store.batched_reads else 0
        self.reads = [
            ShardRead(source, key, bounds[u], [f[bounds[u]:bounds[u + 1]] for f in flats],
                      source.cheap or _read_whole(counts[u], held[u]), gap)
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


class _OneReads(Reads):
    """The reads of a batch of one inner chunk: its :class:`_OneRead`."""

    bounds = _ONE_BOUNDS

    def __init__(self, one: _OneRead) -> None:
        self.one, self.node = one, one.source.cs.node

    def fetch_all(self) -> Fetched:
        return Fetched.one(self.one.value())

    def fetch(self, u: int) -> Fetched:
        return Fetched.one(self.one.value())

    def key(self, i: int) -> str:
        return self.one.key()

    def named(self, i: int, e: CodecError) -> CodecError:
        return self.one.named(e)


class _OneRead(OneRead):
    """The read of one inner chunk (a small read) — :class:`_ShardReads` and
    :class:`ShardRead` for that case, with Python integers instead of arrays: the shard's
    index (or the whole shard, where a request costs more than its bytes), then the inner
    chunk's bytes, from one version of the shard."""

    def __init__(self, source: ShardChunks, coords: Sequence[int]) -> None:
        self.source = source
        shard, local = [], []
        flat = 0
        held = 1  # inner chunks of the shard inside the array
        for c, n, s, k, m in zip(coords, source.tiles, source._shard_shape,
                                 source._chunk_shape, source._array_shape):
            q, r = divmod(c, n)
            shard.append(q)
            local.append(r)
            flat = flat * n + r
            held *= n if (q + 1) * s <= m else -(-(m - q * s) // k)
        self._key = source.cs.key(tuple(shard))
        self._flat = flat
        self._local = tuple(local)
        self._whole = source.cheap or held == 1
        self.restart()

    # -- the RangeReader the store serves ---------------------------------------------
    def restart(self) -> None:
        self._round = 0
        self._entry: tuple[int, int] | None = None
        self._value: Any = None
        self._asked: list[ByteRange] = []

    def ranges(self) -> Sequence[ByteRange]:
        if self._round == 0:
            self._asked = [_WHOLE if self._whole else self.source._index_range]
        elif self._round == 1 and self._entry is not None:
            self._asked = [ByteRange(*self._entry)]
        else:
            self._asked = []
        return self._asked

    def receive(self, values: Sequence[Any]) -> None:
        source = self.source
        if len(values) != len(self._asked):
            raise source.named(
                self._key, f"the data read is truncated: the store answered {len(values)} "
                f"of {len(self._asked)} reads of the shard")
        (value,) = values
        if self._round == 1:
            assert self._entry is not None
            if value is None or len(value) != self._entry[1]:
                got = 0 if value is None else len(value)
                start, size = self._entry
                raise source.named(
                    self._key, f"inner chunk {self._local} is truncated: bytes {start}-"
                    f"{start + size} of the shard were asked for, {got} came back")
            self._value, self._round = value, 2
            return
        self._round = 1
        if value is None:
            return  # an absent shard: the fill value
        layout = source.layout
        try:
            index = layout.index_of(value) if self._whole else layout.decode_index(value, None)
        except CodecError as e:
            raise source.named(self._key, e) from None
        offset, size = index.reshape(-1, 2)[self._flat].tolist()
        if offset == _EMPTY_INT:
            return
        if offset >= 2**62 or size >= 2**62:
            raise source.named(self._key, f"shard index entry of inner chunk {self._local} "
                               "is not a valid byte range")
        if self._whole:
            self._value = memoryview(value).cast("B")[offset:offset + size]
            self._round = 2
        else:
            self._entry = (offset, size)

    # -- the OneRead the engine asks --------------------------------------------------
    def value(self) -> Any:
        self.restart()
        self.source.cs.store.read_rounds([(self._key, self)])
        return self._value

    def key(self) -> str:
        return self._key

    def named(self, e: CodecError) -> CodecError:
        return type(e)(f"{self.source.cs.node}: chunk {self._key!r} could not be decoded: "
                       f"inner chunk {self._local}: {e}")


def _read_whole(needed: int, held: int) -> bool:
    """Whether a shard whose ``needed`` of ``held`` inner chunks a batch reads is read
    whole: one read instead of its index and then its ranges, for at most twice the
    bytes (all of them, or at least half of many)."""
    return needed == held or (needed >= 16 and 2 * needed >= held)


class ShardRead:
    """The reads of some innermost chunks of one shard, in rounds from one version of it
    (a :class:`~zarrx.abc.store.RangeReader`): the shard whole, or its index and then, level
    by level, the indexes of the shards inside it that hold them (nested sharding), and
    last the byte ranges of the chunks themselves (neighbours within ``gap`` bytes merged).
    Everything below a shard read whole is cut from it, with no more reads."""

    def __init__(self, source: ShardChunks, key: str, lo: int, flats: list[np.ndarray],
                 whole: bool, gap: int) -> None:
        self.source, self.key, self.lo, self.flats, self.whole, self.gap = (
            source, key, lo, flats, whole, gap)
        self.n = len(flats[0])
        self.restart()

    def restart(self) -> None:
        n = self.n
        self._sources: list[Any] = []
        self._which = np.zeros(n, np.int64)
        self._offsets = np.zeros(n, np.int64)
        self._sizes = np.full(n, -1, np.int64)
        # Pending reads: (level, members, window start, window size, what) — ``what`` is
        # "index" (an index to read) or an array of (member, start, size) rows (chunks).
        root = _Step(0, np.arange(n, dtype=np.int64), 0, None, "index")
        self._steps: list[_Step] = [root]
        self._asked: list[ByteRange] = []
        self._local: Any = None  # the shard read whole: every step after it cut from it
        self._done = False

    def ranges(self) -> Sequence[ByteRange]:
        asked: list[ByteRange] = []
        for step in self._steps:
            step.ranges = self._ranges_of(step)
            asked.extend(step.ranges)
        self._asked = asked
        if not asked:
            self._done = True
        return asked

    def _ranges_of(self, step: _Step) -> list[ByteRange]:
        layout = self.source.levels[step.level]
        if step.what == "index":
            if step.size is None:  # the shard itself
                return [ByteRange(0) if self.whole else layout.index_range]
            n = layout.index_nbytes
            at = step.start if layout.location == "start" else step.start + step.size - n
            return [ByteRange(at, n)]
        return step.what  # chunk ranges (merged), made when the index was read

    def receive(self, values: Sequence[Any]) -> None:
        if len(values) != len(self._asked):
            raise self.source.named(
                self.key, f"the data read is truncated: the store answered {len(values)} of "
                f"{len(self._asked)} reads of the shard")
        steps, self._steps = self._steps, []
        at = 0
        for step in steps:
            count = len(step.ranges)
            self._receive(step, values[at:at + count])
            at += count
        while self._local is not None and self._steps:  # cut from the shard read whole
            steps, self._steps = self._steps, []
            for step in steps:
                self._receive(step, [self._cut(r) for r in self._ranges_of(step)])

    def _cut(self, r: ByteRange) -> Any:
        value = self._local
        assert r.length is not None
        assert r.start >= 0
        return value[r.start:r.start + r.length]

    def _receive(self, step: _Step, values: Sequence[Any]) -> None:
        if step.what == "index":
            self._receive_index(step, values[0])
        else:
            self._receive_chunks(step, values)

    def _receive_index(self, step: _Step, raw: Any) -> None:
        levels = self.source.levels
        layout = levels[step.level]
        if raw is None:  # an absent shard: the fill value (sizes stay -1)
            return
        try:
            if step.size is None and self.whole:
                view = memoryview(raw).cast("B")
                self._local = view
                index = layout.index_of(view)
            else:
                index = layout.decode_index(raw, step.size)
        except CodecError as e:
            raise self.source.named(self.key, e) from None
        members = step.members
        flat = self.flats[step.level][members]
        entries = index.reshape(-1, 2)[flat]
        offsets, sizes = entries[:, 0], entries[:, 1]
        stored = offsets != _EMPTY
        if ((offsets >= np.uint64(2**62)) & stored).any() or (
                (sizes >= np.uint64(2**62)) & stored).any():
            i = int(members[np.flatnonzero(stored & ((offsets >= np.uint64(2**62)) | (
                sizes >= np.uint64(2**62))))[0]])
            raise self.source.named(self.key, f"shard index entry of inner chunk "
                                    f"{self._coords(i)} is not a valid byte range")
        members, offs, lens = (members[stored], offsets[stored].astype(np.int64) + step.start,
                               sizes[stored].astype(np.int64))
        if not len(members):
            return
        if step.level + 1 < len(levels):  # shards inside: read each one's index next
            order = np.argsort(offs, kind="stable")
            members, offs, lens = members[order], offs[order], lens[order]
            new = np.ones(len(members), dtype=bool)
            new[1:] = offs[1:] != offs[:-1]
            starts = np.flatnonzero(new)
            for a, b in zip(starts.tolist(), [*starts[1:].tolist(), len(members)]):
                self._steps.append(_Step(step.level + 1, members[a:b], int(offs[a]),
                                         int(lens[a]), "index"))
            return
        if self._local is not None:  # in the shard read whole, where they lie
            if not self._sources:
                self._sources.append(self._local)
            self._which[members] = 0
            self._offsets[members] = offs
            self._sizes[members] = lens
            return
        chunks = _Step(step.level, members, step.start, step.size, "chunks")
        chunks.what, chunks.pending = self._merged(members, offs, lens)
        self._steps.append(chunks)

    def _merged(self, members: np.ndarray, offs: np.ndarray, lens: np.ndarray
                ) -> tuple[list[ByteRange], tuple[np.ndarray, ...]]:
        """The byte ranges of chunks ``members`` (at ``offs``, ``lens`` bytes), neighbours
        within the gap merged, and what places the chunks in their answers."""
        order = np.argsort(offs, kind="stable")
        members, offs, lens = members[order], offs[order], lens[order]
        ends = offs + lens
        reach = np.maximum.accumulate(ends)
        new = np.ones(len(members), dtype=bool)
        new[1:] = offs[1:] > reach[:-1] + self.gap
        first = np.flatnonzero(new)
        range_starts = offs[first]
        range_ends = np.maximum.reduceat(ends, first)
        group = np.cumsum(new) - 1
        return ([ByteRange(int(a), int(b - a)) for a, b in zip(range_starts.tolist(),
                                                                 range_ends.tolist())],
                (members, group, offs, lens, range_starts))

    def _receive_chunks(self, step: _Step, values: Sequence[Any]) -> None:
        members, group, offs, lens, range_starts = step.pending
        for g, (r, value) in enumerate(zip(step.ranges, values)):
            if value is None or len(value) != r.length:
                got = 0 if value is None else len(value)
                i = int(members[group == g][-1])
                raise self.source.named(
                    self.key, f"inner chunk {self._coords(i)} is truncated: bytes "
                    f"{r.start}-{r.start + (r.length or 0)} of the shard were asked for, "
                    f"{got} came back")
        base = len(self._sources)
        self._sources.extend(values)
        self._which[members] = base + group
        self._offsets[members] = offs - range_starts[group]
        self._sizes[members] = lens

    def _coords(self, i: int) -> tuple[int, ...]:
        """The coordinates in the outermost shard (in innermost chunks) of chunk ``i``."""
        at = [0] * len(self.source.tiles)
        for flat, level, ratio in zip(self.flats, self.source.levels, self.source._ratios):
            cell = np.unravel_index(int(flat[i]), tuple(level.chunks_per_shard))
            at = [a + int(c) * k for a, c, k in zip(at, cell, ratio)]
        return tuple(at)

    def result(self) -> Fetched:
        """The values read (after the store's rounds)."""
        assert self._done or not self._steps, "the shard was not read"
        return Fetched(self.lo, self._sources, self._which, self._offsets, self._sizes)


class _Step:
    """One pending read of a :class:`ShardRead`: at ``level``, for chunks ``members``
    (positions in the read), inside the window ``start``/``size`` of the shard (``size``
    ``None``: the shard itself); ``what``: ``"index"``, or the chunks' merged ranges."""

    __slots__ = ("level", "members", "pending", "ranges", "size", "start", "what")

    def __init__(self, level: int, members: np.ndarray, start: int, size: int | None,
                 what: Any) -> None:
        self.level, self.members, self.start, self.size, self.what = (
            level, members, start, size, what)
        self.ranges: list[ByteRange] = []
        self.pending: tuple[np.ndarray, ...] = ()


# -- writing -----------------------------------------------------------------------------------
class _ShardCommit(Commit):
    """A batch's inner chunks written shard by shard (see the module's docstring): each
    shard built level by level — the shards inside it too, for nested sharding."""

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
        #: Per level, each chunk's coordinates in the shard that holds it at that level.
        self.local = [
            [tuple(c) for c in np.stack(np.unravel_index(flat, level.chunks_per_shard),
                                        axis=-1).tolist()]
            for flat, level in zip(source.flats(batch.coords), source.levels)
        ]

    def commit(self, u: int) -> None:
        lo, hi = int(self._bounds[u]), int(self._bounds[u + 1])
        key = self.keys[u]
        encoded = {i: self.encoded.pop(i) for i in range(lo, hi) if self.whole[i]}
        members = list(range(lo, hi))
        if self.full[u]:  # nothing stored is kept: nothing is read
            parts: Any = self._parts(0, None, 0, None, members, encoded, key)  # (bytes)
            if parts is not None and len(parts) == 1 and not self.write_empty:
                parts = None  # a shard of nothing but its index
            self.writes.atomic_set_parts(key, parts)
            return
        self.store.atomic_splice(key, partial(self._splice, members, key, encoded),
                                 self.ahead.get(key))

    def _splice(self, members: list[int], key: str, encoded: dict[int, Any],
                current: Stored | None) -> list[Part] | None:
        """The parts of the shard of ``members`` from the stored one ``current`` (``None``:
        absent): the inner chunks the write leaves alone kept as their byte ranges in it,
        covered ones as encoded, partly covered ones read, modified and encoded here.
        ``None``: erase it (no inner chunk left)."""
        parts = self._parts(0, current, 0, None if current is None else current.size,
                            members, encoded, key)
        write_empty = self.write_empty or (current is not None
                                           and not self.store.conditional_erase)
        assert parts is not None
        return None if len(parts) == 1 and not write_empty else parts

    def _parts(self, level: int, current: Stored | None, start: int, size: int | None,
               members: list[int], encoded: dict[int, Any], key: str) -> list[Part] | None:
        """The parts of the shard at ``level`` lying at ``start`` (``size`` bytes) in the
        stored value ``current`` (``None``: absent, or not read), holding chunks
        ``members``; a shard inside it is built the same way, one level down. ``None`` for
        a shard inside another that holds nothing (it is not stored)."""
        levels = self.source.levels
        layout = levels[level]
        index = None
        if current is not None and size is not None:
            try:
                at = layout.index_span(size)
                index = layout.decode_index(
                    current.read(ByteRange(start + at.start, layout.index_nbytes)), size)
            except CodecError as e:
                raise self.source.named(key, e) from None
        local = self.local[level]
        entries: dict[tuple[int, ...], Any] = {}
        if level + 1 < len(levels):  # the shards inside, each built one level down
            groups: dict[tuple[int, ...], list[int]] = {}
            for i in members:
                groups.setdefault(local[i], []).append(i)
            for coords, inside in groups.items():
                entry = None if index is None else layout.entry(index, coords)
                sub_start, sub_size = (0, None) if entry is None else (
                    start + entry.start, entry.length)
                entries[coords] = self._parts(level + 1, None if entry is None else current,
                                              sub_start, sub_size, inside, encoded, key)
            parts = layout.parts(entries, index, start)
            return None if level and len(parts) == 1 else parts
        node, elements = self.source.cs.node, self.source.cs.elements
        for i in members:
            coords = local[i]
            if i in encoded:
                entries[coords] = encoded[i]
                continue
            entry = None if index is None else layout.entry(index, coords)
            old = None if entry is None or current is None else current.read(
                ByteRange(start + entry.start, entry.length))
            entries[coords] = new_chunk(layout.inner, elements, self.value,
                                        self.batch.projection(i), old, False,
                                        f"{node}: chunk {key!r}: inner chunk {coords}")
        parts = layout.parts(entries, index, start)
        return None if level and len(parts) == 1 else parts
