"""Where the chunks the engine plans are stored, and how a batch of them is fetched and
committed: one contract for plain arrays (:class:`KeyChunks`: a chunk per key) and sharded
ones (:class:`~zarrx.engine.shard_store.ShardChunks`: a shard is a store of inner chunks).

The engine (:mod:`.read`, :mod:`.write`) plans chunks in batches whose chunks come unit by
unit — a unit is what one key of the store holds: a chunk, or a shard's inner chunks — and
asks the source, per batch:

- **reads**: the values of a unit's chunks, or of the whole batch's at once (stores with
  batched reads), as a :class:`Fetched`: every unit's values come from one version of its
  key's value (:meth:`~zarrx.abc.store.Store.read_rounds`);
- **writes**: a :class:`Commit` that stores a unit's chunks — those the write covers,
  encoded ahead by the chunk threads, and the others read, modified and encoded inside the
  unit's one atomic update — so no write of a key is ever lost to another.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from zarrx.abc.store import Store
from zarrx.engine.update import new_chunk
from zarrx.errors import CodecError
from zarrx.runtime.executor import BackgroundWrites

if TYPE_CHECKING:
    from zarrx.codecs.partial import PartialRead
    from zarrx.codecs.pipeline import PreparedChain
    from zarrx.metadata.model import ArrayMetadata
    from zarrx.runtime.elements import Elements
    from zarrx.runtime.plan import ChunkBatch, ChunkProjection

#: A chunk's value is a partial read standing in for it (``Fetched.sizes``).
PART = -2


class ChunkStore(Protocol):
    """What a source needs of the array (:class:`zarrx.engine.chunks.ChunkStore`)."""

    @property
    def store(self) -> Store: ...
    @property
    def meta(self) -> ArrayMetadata: ...
    @property
    def node(self) -> str: ...
    @property
    def elements(self) -> Elements: ...
    @property
    def uniform(self) -> bool: ...

    def keys(self, coords: np.ndarray) -> list[str]: ...

    def key(self, coords: tuple[int, ...]) -> str: ...


class Fetched:
    """The stored values of the batch's chunks ``lo`` to ``lo + len(sizes)``: chunk ``i``'s
    bytes are ``sources[which[i - lo]]`` from ``offsets[i - lo]``, ``sizes[i - lo]`` long;
    a size of -1 is an absent chunk (the fill value), :data:`PART` a partial read (the
    source itself)."""

    __slots__ = ("lo", "offsets", "sizes", "sources", "which")

    def __init__(self, lo: int, sources: list[Any], which: np.ndarray, offsets: np.ndarray,
                 sizes: np.ndarray) -> None:
        self.lo, self.sources, self.which, self.offsets, self.sizes = (
            lo, sources, which, offsets, sizes)

    @classmethod
    def of_values(cls, lo: int, values: Sequence[Any]) -> Fetched:
        """A value each (bytes, ``None`` for an absent chunk, or a partial read)."""
        n = len(values)
        sizes = np.array([-1 if v is None else PART if not hasattr(v, "__len__") else len(v)
                          for v in values], dtype=np.int64)
        sources = [b"" if v is None else v for v in values]  # (every source a buffer)
        return cls(lo, sources, np.arange(n, dtype=np.int64), np.zeros(n, np.int64), sizes)

    @classmethod
    def one(cls, value: Any) -> Fetched:
        """The value of a batch of one chunk (``None``: absent)."""
        if value is None:
            return cls(0, [b""], _ZERO, _ZERO, _ABSENT)
        return cls(0, [value], _ZERO, _ZERO, np.array([len(value)], dtype=np.int64))

    @classmethod
    def joined(cls, parts: Sequence[Fetched]) -> Fetched:
        """Consecutive ``parts`` as one."""
        if len(parts) == 1:
            return parts[0]
        sources: list[Any] = []
        which = []
        for part in parts:
            which.append(part.which + len(sources))
            sources.extend(part.sources)
        return cls(parts[0].lo, sources, np.concatenate(which),
                   np.concatenate([p.offsets for p in parts]),
                   np.concatenate([p.sizes for p in parts]))

    def value(self, i: int) -> Any:
        """Chunk ``i``'s stored bytes (``None``: absent; or its partial read)."""
        j = i - self.lo
        size = int(self.sizes[j])
        if size < 0:
            return None if size == -1 else self.sources[int(self.which[j])]
        source = self.sources[int(self.which[j])]
        offset = int(self.offsets[j])
        if offset == 0 and size == len(source):
            return source
        return memoryview(source)[offset:offset + size]

    def plain(self) -> bool:
        """No partial read among them (the batch kernel takes the values as they are)."""
        return not (self.sizes == PART).any()


_ZERO = np.zeros(1, dtype=np.int64)
_ABSENT = np.full(1, -1, dtype=np.int64)
_ZERO.flags.writeable = _ABSENT.flags.writeable = False


class Reads(ABC):
    """A batch's reads, as a source prepares them: its units (``bounds``: unit ``u`` is
    chunks ``bounds[u]:bounds[u + 1]``; ``None``: a chunk each) and their values."""

    bounds: np.ndarray | None

    @abstractmethod
    def fetch_all(self) -> Fetched:
        """Every chunk's value, all units at once (the caller's thread)."""

    @abstractmethod
    def fetch(self, u: int) -> Fetched:
        """Unit ``u``'s values (a chunk thread's)."""

    @abstractmethod
    def key(self, i: int) -> str:
        """The key holding chunk ``i`` of the batch."""

    def named(self, i: int, e: CodecError) -> CodecError:
        """``e``, raised decoding chunk ``i``, naming the array and the key."""
        return type(e)(f"{self.node}: chunk {self.key(i)!r} could not be decoded: {e}")

    node: str


class Commit(ABC):
    """A batch's writes, unit by unit: :attr:`encoded` gathers the chunks the write covers
    (encoded by the chunk threads; ``None``: the fill value, not stored), then
    :meth:`commit` stores a unit — the rest of its chunks read, modified and encoded in its
    one atomic update."""

    bounds: np.ndarray | None
    encoded: dict[int, Any]
    #: Whether covered chunks equal to the fill value are encoded and stored.
    encode_empty: bool

    @abstractmethod
    def commit(self, u: int) -> None:
        """Store unit ``u`` (every encoded chunk of it is in :attr:`encoded`)."""


class ChunkSource(ABC):
    """Where an array's planned chunks live (see the module's docstring)."""

    def __init__(self, cs: ChunkStore) -> None:
        self.cs = cs

    @abstractmethod
    def reads(self, batch: ChunkBatch, chains: list[PreparedChain]) -> Reads:
        """The reads of ``batch`` (nothing read yet)."""

    @abstractmethod
    def commits(self, batch: ChunkBatch, chains: list[PreparedChain], whole: np.ndarray,
                value: np.ndarray, write_empty: bool,
                writes: Store | BackgroundWrites) -> Commit:
        """The writes of ``batch`` (``whole``: the chunks the write covers)."""

    def read_one(self, p: ChunkProjection, chain: PreparedChain) -> OneRead | None:
        """The read of the one chunk of a small read (``p``: its projection), made with
        Python integers rather than a batch's arrays; ``None`` where this source reads it
        only as a batch (the engine then plans one)."""
        return None


class OneRead(ABC):
    """The read of one chunk (:meth:`ChunkSource.read_one`), from one version of its key."""

    @abstractmethod
    def value(self) -> Any:
        """The chunk's stored bytes (``None``: absent), or its partial read."""

    @abstractmethod
    def key(self) -> str:
        """The key holding the chunk."""

    @abstractmethod
    def named(self, e: CodecError) -> CodecError:
        """``e``, raised decoding the chunk, naming the array and the key."""


# -- a chunk per key ----------------------------------------------------------------------------
class KeyChunks(ChunkSource):
    """A chunk per key of the store."""

    def reads(self, batch: ChunkBatch, chains: list[PreparedChain]) -> Reads:
        return _KeyReads(self.cs, batch, chains)

    def read_one(self, p: ChunkProjection, chain: PreparedChain) -> OneRead | None:
        return _KeyOne(self.cs, p, chain)

    def commits(self, batch: ChunkBatch, chains: list[PreparedChain], whole: np.ndarray,
                value: np.ndarray, write_empty: bool,
                writes: Store | BackgroundWrites) -> Commit:
        return _KeyCommit(self, batch, chains, whole, value, write_empty, writes)


class _KeyReads(Reads):
    """A batch's chunks read key by key: whole, or in part where a chain can and the
    selection touches little of a chunk (:meth:`PreparedChain.partial_read`)."""

    bounds = None

    def __init__(self, cs: ChunkStore, batch: ChunkBatch, chains: list[PreparedChain]) -> None:
        self.cs = cs
        self.node = cs.node
        self.keys = cs.keys(batch.coords)
        self.parts = _partial_reads(cs, batch, chains)

    def fetch_all(self) -> Fetched:
        store, keys, parts = self.cs.store, self.keys, self.parts
        if parts is None:
            return Fetched.of_values(0, store.get_many([(k, None) for k in keys]))
        whole = [(k, None) for k, p in zip(keys, parts) if p is None]
        values = iter(store.get_many(whole) if whole else ())
        pending = [(k, p) for k, p in zip(keys, parts) if p is not None]
        _read_parts(store, pending)
        return Fetched.of_values(0, [next(values) if p is None else p for p in parts])

    def fetch(self, u: int) -> Fetched:
        p = None if self.parts is None else self.parts[u]
        if p is None:
            return Fetched.of_values(u, [self.cs.store.get(self.keys[u])])
        _read_parts(self.cs.store, [(self.keys[u], p)])
        return Fetched.of_values(u, [p])

    def key(self, i: int) -> str:
        return self.keys[i]


class _KeyOne(OneRead):
    """One chunk read by its key: whole, or in part (as :class:`_KeyReads` reads it)."""

    def __init__(self, cs: ChunkStore, p: ChunkProjection, chain: PreparedChain) -> None:
        self.cs, self._key = cs, cs.key(p.coords)
        self.part = None if p.complete or not _in_part(cs, chain) else chain.partial_read(
            p.chunk_selection)

    def value(self) -> Any:
        part = self.part
        if part is None:
            return self.cs.store.get(self._key)
        _read_parts(self.cs.store, [(self._key, part)])
        return part

    def key(self) -> str:
        return self._key

    def named(self, e: CodecError) -> CodecError:
        return type(e)(f"{self.cs.node}: chunk {self._key!r} could not be decoded: {e}")


def _in_part(cs: ChunkStore, chain: PreparedChain) -> bool:
    """Whether chunks of ``chain`` may be read in part from this store: their chain can,
    and a chunk is larger than what a request's latency is worth (smaller ones are read
    whole: one request, where a part would take two)."""
    return chain.reads_in_part() and chain.spec.nbytes > cs.store.read_latency_bytes


def _partial_reads(
    cs: ChunkStore, batch: ChunkBatch, chains: list[PreparedChain]
) -> list[PartialRead | None] | None:
    """Per chunk of ``batch``, its partial read, or ``None`` where it is read whole
    (``None`` for the batch when every chunk is)."""
    if not chains or (cs.uniform and not _in_part(cs, chains[0])):
        return None
    complete, fancy = batch.complete.tolist(), batch.fancy
    selections = batch.chunk_selections
    parts: list[PartialRead | None] = [
        None if complete[i] or (fancy is not None and fancy[i])
        else chain.partial_read(selections[i])
        for i, chain in enumerate(chains)
    ]
    return parts if any(p is not None for p in parts) else None


def _read_parts(store: Store, pending: list[tuple[str, PartialRead]]) -> None:
    """Run the partial reads ``pending`` to their end, each from one version of its value
    (:meth:`~zarrx.abc.store.Store.read_rounds`). A read that fails keeps its error
    (``failed``): its chunk is then read whole."""
    if pending:
        store.read_rounds(pending)


class _KeyCommit(Commit):
    """A batch's chunks written key by key: a covered chunk replaced whole by one atomic
    write, the others read, modified and written by one atomic update each."""

    bounds = None

    def __init__(self, source: KeyChunks, batch: ChunkBatch, chains: list[PreparedChain],
                 whole: np.ndarray, value: np.ndarray, write_empty: bool,
                 writes: Store | BackgroundWrites) -> None:
        cs = self.cs = source.cs
        self.batch, self.chains, self.whole = batch, chains, whole
        self.value, self.write_empty, self.writes = value, write_empty, writes
        self.encode_empty = write_empty
        self.keys = cs.keys(batch.coords)
        self.encoded = {}
        partly = [k for k, w in zip(self.keys, whole.tolist()) if not w]
        self.ahead = cs.store.prefetch_for_update(partly) if partly else {}

    def commit(self, u: int) -> None:
        key = self.keys[u]
        if self.whole[u]:
            data = self.encoded.pop(u)
            self.writes.atomic_set_parts(key, None if data is None else [data])
            return
        self.cs.store.atomic_update(key, partial(self._rewrite, u, key), self.ahead.get(key))

    def _rewrite(self, u: int, key: str, existing: bytes | None) -> Any:
        """The stored bytes of chunk ``u`` with the write's cells (built from its stored
        bytes ``existing``), or ``None`` when all fill value (and such chunks are not
        written). A stored chunk an update leaves all fill value is written, not erased,
        where the store cannot erase on condition (``conditional_erase``)."""
        cs = self.cs
        write_empty = self.write_empty or (existing is not None
                                           and not cs.store.conditional_erase)
        return new_chunk(self.chains[u], cs.elements, self.value, self.batch.projection(u),
                         existing, write_empty, f"{cs.node}: chunk {key!r}")

