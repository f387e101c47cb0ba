"""CacheStore: a least-recently-used cache of values in front of any store.

Reads that the cache can answer make no request to the wrapped store: metadata documents,
chunks, the byte ranges read from shards (an index, an inner chunk), and the absence of a
key (a fill-value chunk read again). A cached whole value also answers any range of it.
The values held never add up to more than ``max_size`` bytes; the least recently used go
first, and a value bigger than ``max_size`` is not kept. ``max_entries`` bounds the number
of entries (absent keys hold no bytes).

Reads in rounds (:meth:`CacheStore.read_rounds`: a shard's index, then its inner chunks)
are answered from one version here too: from a cached whole value, or from the answers
one earlier read in rounds of the key got from the wrapped store (each such read's answers
are kept together, tagged with that read, and a read is answered only from answers of one
tag); otherwise the read goes to the wrapped store's ``read_rounds``, and its answers are
kept. A reader answered from the cache in part, then missing a round, is restarted and
read from the wrapped store.

Writes and erases go to the wrapped store, then drop what the cache held for the key, so a
read through the cache after a write through it sees the write. A read that was already
under way when a write changed its key does not enter the cache (it may hold the old
value). The cache sees only what goes through it: another process writing the store is
not seen until the entry is evicted or :meth:`CacheStore.clear` is called — put a cache in
front of data that does not change underneath it, as zarr-python 2's ``LRUStoreCache``.

Read-modify-writes (:meth:`~zarrx.abc.store.Store.atomic_update`) never start from a cached
value: on ``"lock"`` stores, taking the lock drops the key from the cache, so the read
under the lock is the wrapped store's; on ``"conditional"`` stores the versioned reads and
conditional writes go to the wrapped store. ``atomic_updates`` is the wrapped store's.

>>> from zarrx.stores.memory import MemoryStore
>>> cache = CacheStore(MemoryStore(), max_size=2**20)
>>> cache.set("zarr.json", b"{}")
>>> cache.get("zarr.json"), cache.get("zarr.json"), cache.get("absent"), cache.get("absent")
(b'{}', b'{}', None, None)
>>> cache.hits, cache.misses
(2, 2)
"""

from __future__ import annotations

import builtins
import itertools
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from zarrx.abc.store import (
    ByteRange,
    RangeReader,
    Snapshot,
    Store,
    Value,
    answer_rounds,
    as_bytes,
)
from zarrx.stores.keys import resolve_byte_range, validate_byte_range, validate_key, validate_prefix

#: An entry: the key and the range read (``None`` for the whole value).
Entry = tuple[str, ByteRange | None]


#: Not in the cache (``None`` is a cached answer: the key is absent).
_ABSENT: Any = object()

class _LRU:
    """The cached values, shared by the views of one cache; every method holds the lock
    only for its bookkeeping, never during a request."""

    def __init__(self, max_size: int, max_entries: int) -> None:
        self.max_size = max_size
        self.max_entries = max_entries
        self.lock = threading.Lock()
        self.entries: OrderedDict[Entry, bytes | None] = OrderedDict()
        #: The entries kept from a read in rounds: the tag of that read (one version).
        self.tags: dict[Entry, int] = {}
        self._tags = itertools.count(1)
        self.by_key: dict[str, set[Entry]] = {}
        self.size = 0  # bytes held
        self.reading: dict[str, int] = {}  # key -> reads of it under way
        self.stale: set[str] = set()  # keys changed while a read of them was under way
        self.hits = 0
        self.misses = 0

    def find(self, key: str, byte_range: ByteRange | None) -> tuple[bool, bytes | None]:
        """``(True, value)`` when the cache answers the read; else ``(False, None)``,
        and the read is counted as under way until :meth:`done`."""
        with self.lock:
            whole = self.entries.get((key, None), _ABSENT)
            if whole is not _ABSENT:
                self.entries.move_to_end((key, None))
                self.hits += 1
                if whole is None or byte_range is None:
                    return True, whole
                start, stop = resolve_byte_range(byte_range, len(whole), key)
                return True, whole[start:stop]
            part = self.entries.get((key, byte_range), _ABSENT)
            if part is not _ABSENT:
                self.entries.move_to_end((key, byte_range))
                self.hits += 1
                return True, part
            self.misses += 1
            self.reading[key] = self.reading.get(key, 0) + 1
            return False, None

    def done(self, key: str, byte_range: ByteRange | None, value: bytes | None,
             keep: bool = True) -> None:
        """A read of the wrapped store has ended: keep its value unless the key changed
        meanwhile (or the read failed: ``keep=False``)."""
        with self.lock:
            if keep and key not in self.stale:
                self._put((key, byte_range), value)
            self._ended(key)

    def _ended(self, key: str) -> None:
        left = self.reading[key] - 1
        if left:
            self.reading[key] = left
        else:
            del self.reading[key]
            self.stale.discard(key)

    def whole(self, key: str) -> tuple[bool, bytes | None]:
        """``(True, value)`` when the whole value of ``key`` (or its absence) is cached."""
        with self.lock:
            value = self.entries.get((key, None), _ABSENT)
            if value is _ABSENT:
                return False, None
            self.entries.move_to_end((key, None))
            return True, value

    def recorded(self, key: str, ranges: Sequence[ByteRange], tag: int | None
                 ) -> tuple[list[bytes | None] | None, int | None]:
        """The answers one read in rounds got for ``ranges`` of ``key``, all of one tag
        (``tag``, or the first range's when ``None``), and that tag; ``None`` for the
        answers when any is missing."""
        with self.lock:
            values: list[bytes | None] = []
            for r in ranges:
                entry = (key, r)
                found = self.tags.get(entry)
                if found is None or (tag is not None and found != tag):
                    return None, tag
                tag = found
                self.entries.move_to_end(entry)
                values.append(self.entries[entry])
            return values, tag

    def count(self, hit: bool) -> None:
        with self.lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1

    def started(self, keys: Iterable[str]) -> None:
        """Reads in rounds of ``keys`` went to the wrapped store (see :meth:`kept`)."""
        with self.lock:
            for key in keys:
                self.reading[key] = self.reading.get(key, 0) + 1

    def kept(self, key: str, answers: dict[ByteRange, bytes | None] | None) -> None:
        """A read in rounds of ``key`` that :meth:`started` has ended: keep its
        ``answers`` (``None``: it failed), tagged as one version, unless the key changed
        meanwhile. A key found absent is kept as an absent whole value."""
        with self.lock:
            if answers and key not in self.stale:
                if all(v is None for v in answers.values()):
                    self._put((key, None), None)
                else:
                    tag = next(self._tags)
                    for byte_range, value in answers.items():
                        entry = (key, byte_range)
                        if entry in self.entries:
                            self._drop(entry)
                        if self._put(entry, value):
                            self.tags[entry] = tag
            self._ended(key)

    def _put(self, entry: Entry, value: bytes | None) -> bool:
        """Keep ``value`` (dropping the least recently used beyond the bounds); whether it
        is held now."""
        nbytes = 0 if value is None else len(value)
        if nbytes > self.max_size or entry in self.entries:
            return False
        self.entries[entry] = value
        self.by_key.setdefault(entry[0], set()).add(entry)
        self.size += nbytes
        while self.size > self.max_size or len(self.entries) > self.max_entries:
            self._drop(next(iter(self.entries)))
        return entry in self.entries

    def _drop(self, entry: Entry) -> None:
        self.tags.pop(entry, None)
        value = self.entries.pop(entry)
        self.size -= 0 if value is None else len(value)
        entries = self.by_key[entry[0]]
        entries.discard(entry)
        if not entries:
            del self.by_key[entry[0]]

    def forget(self, keys: Iterable[str]) -> None:
        """Drop what is held for ``keys``; reads of them under way will not be kept."""
        with self.lock:
            for key in keys:
                for entry in list(self.by_key.get(key, ())):
                    self._drop(entry)
                if key in self.reading:
                    self.stale.add(key)

    def forget_prefix(self, prefix: str) -> None:
        with self.lock:
            keys = [k for k in (*self.by_key, *self.reading) if k.startswith(prefix)]
        self.forget(keys)

    def clear(self) -> None:
        with self.lock:
            keys = [*self.by_key, *self.reading]
        self.forget(keys)


class _Recording:
    """A reader whose answers from the wrapped store are noted, to be cached."""

    def __init__(self, reader: RangeReader) -> None:
        self.reader = reader
        self.answers: dict[ByteRange, Value | None] = {}
        self.asked: Sequence[ByteRange] = ()

    def ranges(self) -> Sequence[ByteRange]:
        self.asked = self.reader.ranges()
        return self.asked

    def receive(self, values: Sequence[Value | None]) -> None:
        self.answers.update(zip(self.asked, values))
        self.reader.receive(values)

    def restart(self) -> None:
        self.answers.clear()
        self.reader.restart()

    def kept(self, max_size: int) -> dict[ByteRange, bytes | None]:
        """The answers the cache may hold (of at most ``max_size`` bytes each), as bytes
        it owns (views copied)."""
        return {r: None if v is None else as_bytes(v) for r, v in self.answers.items()
                if v is None or len(memoryview(v)) <= max_size}


class CacheStore(Store):
    """An LRU cache of at most ``max_size`` bytes of values in front of ``store``."""

    def __init__(
        self, store: Store, max_size: int, *, max_entries: int = 65536, read_only: bool = False
    ) -> None:
        if not isinstance(store, Store):
            raise TypeError(f"CacheStore wraps a zarrx Store, got {type(store).__name__}")
        if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 0:
            raise ValueError(f"max_size must be a number of bytes >= 0, got {max_size!r}")
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries!r}")
        super().__init__(read_only=read_only or store.read_only)
        self.store = store
        self.readable = store.readable
        self.writeable = store.writeable
        self.listable = store.listable
        self.batched_reads = store.batched_reads
        self.read_latency_bytes = store.read_latency_bytes
        self.atomic_updates = store.atomic_updates
        self.conditional_erase = store.conditional_erase
        self._lru = _LRU(max_size, max_entries)

    @property
    def max_size(self) -> int:
        return self._lru.max_size

    @property
    def size(self) -> int:
        """The bytes of the values held now (never more than ``max_size``)."""
        return self._lru.size

    @property
    def hits(self) -> int:
        """Reads answered by the cache."""
        return self._lru.hits

    @property
    def misses(self) -> int:
        """Reads passed to the wrapped store."""
        return self._lru.misses

    def clear(self) -> None:
        """Forget every cached value (to see what others wrote into the wrapped store)."""
        self._lru.clear()

    def with_read_only(self, read_only: bool = False) -> CacheStore:
        """A view of the same store, sharing this cache, with the given ``read_only``."""
        view = type(self).__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.read_only = read_only or self.store.read_only
        return view

    # -- readable ---------------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        validate_key(key)
        validate_byte_range(byte_range, key)
        found, value = self._lru.find(key, byte_range)
        if found:
            return value
        value, keep = None, False
        try:
            value = self.store.get(key, byte_range)
            keep = True
        finally:
            self._lru.done(key, byte_range, value, keep)
        return value

    def get_many(self, requests: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
        """What the cache holds from it; the rest in one ``get_many`` of the wrapped store."""
        for key, byte_range in requests:
            validate_key(key)
            validate_byte_range(byte_range, key)
        out: list[bytes | None] = []
        missing: list[int] = []
        for i, (key, byte_range) in enumerate(requests):
            found, value = self._lru.find(key, byte_range)
            out.append(value)
            if not found:
                missing.append(i)
        if missing:
            asked = [requests[i] for i in missing]
            values: list[bytes | None] = []
            try:
                values = self.store.get_many(asked)
            finally:
                for n, (key, byte_range) in enumerate(asked):
                    kept = n < len(values)
                    self._lru.done(key, byte_range, values[n] if kept else None, kept)
            for i, value in zip(missing, values):
                out[i] = value
        return out

    def read_rounds(self, reads: Sequence[tuple[str, RangeReader]]) -> None:
        """Readers the cache can answer from one version (a whole value, or one earlier
        read's answers) are answered here; the others in one ``read_rounds`` of the
        wrapped store, whose answers are kept (see the module's docstring)."""
        for key, _ in reads:
            validate_key(key)
        passed = [(key, _Recording(reader)) for key, reader in reads
                  if not self._answered(key, reader)]
        if not passed:
            return
        lru = self._lru
        lru.started(key for key, _ in passed)
        done = False
        try:
            self.store.read_rounds(passed)
            done = True
        finally:
            for key, recording in passed:
                lru.kept(key, recording.kept(lru.max_size) if done else None)

    def _answered(self, key: str, reader: RangeReader) -> bool:
        """Answer ``reader`` from the cache if it can (``False``: restarted, unanswered)."""
        lru = self._lru
        found, whole = lru.whole(key)
        if found:
            lru.count(True)
            answer_rounds(reader, key, whole)
            return True
        ranges, tag = reader.ranges(), None
        while ranges:
            values, tag = lru.recorded(key, ranges, tag)
            if values is None:
                lru.count(False)
                if tag is not None:  # answered from the cache in part: start again
                    reader.restart()
                return False
            reader.receive(values)
            ranges = reader.ranges()
        lru.count(True)
        return True

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._lru.lock:
            held = self._lru.entries.get((key, None), self._lru)
        if held is not self._lru:
            return held is not None
        return self.store.exists(key)

    # -- writeable: the wrapped store's, then the key is dropped ---------------------------
    def check_keys(self, keys: Iterable[str]) -> None:
        self.store.check_keys(keys)

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        self._check_writable(validate_key(key))
        try:
            self.store.set(key, value)
        finally:
            self._lru.forget([key])

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        items = list(items)
        for key, _ in items:
            self._check_writable(validate_key(key))
        try:
            self.store.set_many(items)
        finally:
            self._lru.forget([key for key, _ in items])

    def atomic_set_parts(self, key: str, parts: Sequence[Value] | None) -> None:
        self._check_writable(validate_key(key))
        try:
            self.store.atomic_set_parts(key, parts)
        finally:
            self._lru.forget([key])

    def erase(self, key: str) -> None:
        self._check_writable(validate_key(key))
        try:
            self.store.erase(key)
        finally:
            self._lru.forget([key])

    def erase_prefix(self, prefix: str) -> None:
        self._check_writable(validate_prefix(prefix))
        try:
            self.store.erase_prefix(prefix)
        finally:
            self._lru.forget_prefix(prefix)

    # -- atomic updates: never from a cached value -------------------------------------
    def lock(self, key: str) -> AbstractContextManager[None]:
        """The wrapped store's lock of ``key``; taking it drops the key from the cache, so
        an update reads the wrapped store's value."""
        return self._fresh_under(self.store.lock(key), key)

    @contextmanager
    def _fresh_under(self, held: AbstractContextManager[None], key: str) -> Iterator[None]:
        with held:
            self._lru.forget([key])
            yield

    def get_with_version(self, key: str) -> Snapshot:
        return self.store.get_with_version(key)

    def get_many_with_version(self, keys: Sequence[str]) -> list[Snapshot]:
        return self.store.get_many_with_version(keys)

    def set_if(self, key: str, value: Any, version: Any) -> bool:
        self._check_writable(validate_key(key))
        try:
            return self.store.set_if(key, value, version)
        finally:
            self._lru.forget([key])

    # -- listable: the wrapped store's ------------------------------------------------
    def list(self) -> list[str]:
        return self.store.list()

    def list_prefix(self, prefix: str) -> builtins.list[str]:
        return self.store.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return self.store.list_dir(prefix)

    # -- identity ---------------------------------------------------------------------
    def close(self) -> None:
        self.store.close()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        lru = state.pop("_lru")  # another process starts with an empty cache
        state["_limits"] = (lru.max_size, lru.max_entries)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        max_size, max_entries = state.pop("_limits")
        self.__dict__.update(state)
        self._lru = _LRU(max_size, max_entries)

    def __repr__(self) -> str:
        flag = ", read_only=True" if self.read_only and not self.store.read_only else ""
        return f"CacheStore({self.store!r}, max_size={self.max_size}{flag})"
