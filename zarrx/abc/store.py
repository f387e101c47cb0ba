"""The store contract: seed 000's abstract store interface, plus byte ranges, batches and
atomic updates.

Keys are ``/``-separated strings without a leading slash, validated before any I/O by
:func:`zarrx.stores.keys.validate_key`. A store says whether it is readable, writeable and
listable; an operation it does not support raises :class:`zarrx.errors.ReadOnlyError` (for
writes) or :class:`TypeError`.

Every read-modify-write in zarrx — a partly written chunk or shard, a metadata document
changed by ``resize``, ``append`` or an attribute — goes through :meth:`Store.atomic_update`,
whose one loop is written here. A store takes part by saying how it excludes other writers
(:attr:`Store.atomic_updates`) and implementing the primitives of that way:

- ``"lock"`` (file systems): :meth:`Store.lock` holds every other writer of the key off —
  other threads, processes and machines — while the value is read, changed and written;
- ``"conditional"`` (object stores): :meth:`Store.get_with_version` returns the value with
  a version token (an ETag, a generation), and :meth:`Store.set_if` writes only if the key
  still holds that version (``If-Match``), or is still absent (``If-None-Match: *``); the
  update is read, changed and tried again when another writer got there first.

:meth:`Store.atomic_splice` is the same update stated in parts: the new value is a list of
bytes and byte ranges of the current value, and the current value is read only where the
caller asks (a shard's index, say). The default joins the parts from the whole value read
by :meth:`Store.atomic_update`; a store that can build a value from ranges of the stored one
without reading them (:class:`~zarrx.stores.local.LocalStore` copies them in the kernel)
overrides it, with the same guarantees. A whole value written where updates may run
(:meth:`Store.atomic_set_parts`) is atomic against them too.

Reads that depend on what they read (a shard's index, then its inner chunks; a blosc
frame's header, then its blocks) go through :meth:`Store.read_rounds`: a
:class:`RangeReader` says which ranges it needs next from what it has received, and every
round of one reader is answered from one version of the value, however writers replace it
meanwhile.

**Threads and locks**: a thread that holds a key's lock never waits for a pool
(:mod:`zarrx.runtime.executor`). The locked sections run here and in the stores count
themselves (:func:`~zarrx.runtime.executor.key_lock_held`), so whatever would hand work
to a pool and wait runs in the holder's thread instead.
"""

from __future__ import annotations

import builtins
import logging
import operator
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal, Protocol, final

from zarrx import config
from zarrx.errors import InvalidKeyError, ReadOnlyError, UpdateConflictError
from zarrx.runtime.executor import key_lock_held

_log = logging.getLogger(__name__)

Value = bytes | bytearray | memoryview
#: What :meth:`Store.atomic_update` applies: the current value (``None``: absent) to the new
#: one (``None``: erase the key). Returning the very object it was given writes nothing.
Update = Callable[[bytes | None], Value | None]


def as_bytes(value: Value) -> bytes:
    """``value`` as immutable ``bytes`` (no copy for ``bytes``; a strided buffer in C
    order): what a store keeps, so callers may reuse their buffers. ``TypeError`` for a
    ``str`` or an ``int`` before any request (``bytes(3)`` would make three zeros)."""
    if type(value) is bytes:
        return value
    return memoryview(value).tobytes()


@dataclass(frozen=True)
class ByteRange:
    """A request for part of a value.

    ``start`` alone (``length=None``) reads to the end; a negative ``start`` with no length
    reads the last ``-start`` bytes (a suffix, as HTTP ``Range: bytes=-N``).
    """

    start: int
    length: int | None = None


def validate_byte_range(byte_range: ByteRange | None, key: str) -> None:
    """Refuse, before any I/O, a byte range whose start or length is not an integer
    (``TypeError``: never rounded) or whose length is negative."""
    if byte_range is not None:
        _bounds(byte_range, key)


def _bounds(byte_range: ByteRange, key: str) -> tuple[int, int | None]:
    """The range's start and length as Python integers, checked (see
    :func:`validate_byte_range`)."""
    try:
        start = operator.index(byte_range.start)
        length = None if byte_range.length is None else operator.index(byte_range.length)
    except TypeError:
        raise TypeError(f"invalid byte range {byte_range!r} for key {key!r}: start and "
                        "length must be integers") from None
    if length is not None and length < 0:
        raise InvalidKeyError(
            f"invalid byte range {byte_range!r} for key {key!r}: length must be >= 0"
        )
    return start, length


def resolve_byte_range(byte_range: ByteRange, size: int, key: str) -> tuple[int, int]:
    """``(start, stop)`` offsets of ``byte_range`` in a value of ``size`` bytes: what
    :meth:`Store.get` returns of it (its bounds checked as :func:`validate_byte_range`
    checks them).

    Out-of-range requests are clipped like Python slicing. A negative ``start`` counts
    from the end: alone it is a suffix (the last ``-start`` bytes).
    """
    start, length = _bounds(byte_range, key)
    start = max(size + start, 0) if start < 0 else min(start, size)
    stop = size if length is None else min(start + length, size)
    return start, stop


def span(byte_range: ByteRange, size: int) -> tuple[int, int]:
    """``(start, stop)`` of a range of a splice (:meth:`Store.atomic_splice`) in a value of
    ``size`` bytes. Such ranges are explicit (a start of 0 or more and a length) and lie
    inside the value: anything else is a ``ValueError``, never clipped."""
    start, length = byte_range.start, byte_range.length
    if length is None or start < 0 or length < 0 or start + length > size:
        raise ValueError(f"{byte_range!r} is not an explicit range inside a value of {size} bytes")
    return start, start + length


class Stored(ABC):
    """The current value of a key while :meth:`Store.atomic_splice` builds its new value:
    its size, and reads of its parts (the value stays as it is until the splice ends)."""

    size: int

    @abstractmethod
    def read(self, byte_range: ByteRange) -> Value:
        """The bytes of an explicit range inside the value (see :func:`span`)."""


class StoredBytes(Stored):
    """A value held in memory, read by slicing (the default splice's)."""

    def __init__(self, value: Value) -> None:
        self._view = memoryview(value).cast("B")
        self.size = len(self._view)

    def read(self, byte_range: ByteRange) -> memoryview:
        start, stop = span(byte_range, self.size)
        return self._view[start:stop]


#: One part of a value built by :meth:`Store.atomic_splice`: bytes, or a range of the
#: current value.
Part = Value | ByteRange
#: What :meth:`Store.atomic_splice` applies: the current value (``None``: absent) to the
#: parts of the new one, in order (``None``: erase the key).
Splice = Callable[[Stored | None], Sequence[Part] | None]


def joined(parts: Sequence[Part], current: Stored | None) -> bytes:
    """The value ``parts`` make from ``current`` (its ranges read from it), in one buffer."""
    buffers: list[Value] = []
    for part in parts:
        if isinstance(part, ByteRange):
            if current is None:
                raise ValueError("a splice of an absent key cannot keep ranges of its value")
            part = current.read(part)
        buffers.append(part)
    return b"".join(buffers)


class RangeReader(Protocol):
    """A read of one value in rounds, each round's ranges chosen from the answers of the
    rounds before: a shard's index, then its inner chunks; a blosc frame's header and
    block starts, then its blocks. :meth:`Store.read_rounds` serves it: it asks
    :meth:`ranges`, answers them through :meth:`receive`, and again until :meth:`ranges`
    is empty. (A protocol: any object with these three methods is a reader.)

    The methods are called by one thread at a time, but not always the caller's: a store
    may serve several readers on its I/O threads. A reader must not wait for zarrx's
    pools there (it does its own work, or leaves it to the caller after the read)."""

    def ranges(self) -> Sequence[ByteRange]:
        """The next round's ranges; empty: the read is done. Asked again before
        :meth:`receive`, it gives the same ranges."""
        ...

    def receive(self, values: Sequence[Value | None]) -> None:
        """The answers to the last :meth:`ranges`, in order (``None``: the key is absent)."""
        ...

    def restart(self) -> None:
        """The value changed between rounds: forget everything received; :meth:`ranges`
        starts again from the first round."""
        ...


def read_each_round(
    reader: RangeReader,
    fetch: Callable[[Sequence[ByteRange]], Sequence[Value | None]],
    ranges: Sequence[ByteRange] | None = None,
) -> None:
    """Serve ``reader`` round after round with ``fetch`` (the answers to a round's ranges,
    from the one version the caller holds), from the round whose ``ranges`` are given
    (else asked first) until it asks for nothing more."""
    if ranges is None:
        ranges = reader.ranges()
    while ranges:
        reader.receive(fetch(ranges))
        ranges = reader.ranges()


def answer_rounds(
    reader: RangeReader, key: str, value: Value | None,
    ranges: Sequence[ByteRange] | None = None,
) -> None:
    """Serve every round of ``reader`` from ``value``, the value of ``key`` held in memory
    (``None``: absent), by slicing it: views of it, no copies."""
    if value is None:
        read_each_round(reader, lambda asked: [None] * len(asked), ranges)
        return
    view = memoryview(value).cast("B")
    size = len(view)

    def fetch(asked: Sequence[ByteRange]) -> list[memoryview]:
        return [view[slice(*resolve_byte_range(r, size, key))] for r in asked]

    read_each_round(reader, fetch, ranges)


@contextmanager
def _counted(lock: AbstractContextManager[None]) -> Iterator[None]:
    """Hold ``lock``, counted as a key lock this thread holds (the lock-holder rule)."""
    with lock, key_lock_held():
        yield


@dataclass(frozen=True)
class Snapshot:
    """A value read for an update, and the store's version of it: an opaque token that
    :meth:`Store.set_if` compares (``None`` when the key is absent, or on stores without
    versions)."""

    value: bytes | None
    version: Any = None


class Store(ABC):
    """A key-value store of bytes."""

    readable: bool = True
    writeable: bool = True
    listable: bool = True
    #: High-latency stores set this: the engine then fetches chunks with ``get_many``
    #: batches; otherwise each worker reads its own chunk (less memory in flight).
    batched_reads: bool = False
    #: About how many bytes the store streams in the time one more request costs (its
    #: latency times its bandwidth): reading that many more bytes of a value costs about
    #: what a second request does. 0 where requests cost nothing of their own (files,
    #: memory). The engine reads a chunk or a shard whole, in one request, rather than a
    #: header and then the parts it names, when it is no larger than this.
    read_latency_bytes: int = 0
    #: How :meth:`atomic_update` excludes every other writer that can reach the store:
    #: ``"lock"`` (:meth:`lock`), ``"conditional"`` (:meth:`get_with_version` and
    #: :meth:`set_if`), or ``None``: it cannot, and concurrent updates of one key may lose
    #: each other's changes (docs/concurrency.md says what to align then).
    atomic_updates: Literal["lock", "conditional"] | None = None
    #: Whether :meth:`set_if` can erase a key on condition (``value=None`` with a version).
    #: A conditional store whose backend cannot (obstore has no conditional delete) sets
    #: this to ``False``: the engine then writes a chunk left all fill value by an update,
    #: where it would otherwise erase it.
    conditional_erase: bool = True
    #: Whether other processes reach the same keys through a copy of the store (pickled to
    #: a worker): a directory, an object store. ``False`` for a store whose data lives in
    #: this process (memory, an open zip archive).
    shared: bool = True

    def __init__(self, *, read_only: bool = False) -> None:
        self.read_only = read_only

    def same_data(self, other: Store) -> bool:
        """Whether ``other`` reaches the same keys as this store (whatever either's
        ``read_only``); by default only when it is this store."""
        return other is self

    def stamp(self, key: str) -> Any:
        """A cheap token of the stored value of ``key`` that changes when it is rewritten
        (a file's size and modification time), or ``None`` where the store has none."""
        return None

    # -- readable -----------------------------------------------------------------
    @abstractmethod
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        """The value (or the requested part of it), or ``None`` when the key is absent."""

    def get_many(
        self, requests: Sequence[tuple[str, ByteRange | None]]
    ) -> list[bytes | None]:
        """Many reads at once. High-latency stores override this to run them concurrently."""
        return [self.get(key, byte_range) for key, byte_range in requests]

    def read_rounds(self, reads: Sequence[tuple[str, RangeReader]]) -> None:
        """Serve each reader of ``reads`` (a key and a :class:`RangeReader`) round after
        round until it asks for nothing more.

        The contract the engine relies on:

        - every round of one reader is answered from **one version** of its key's value,
          whatever writers do meanwhile; a key absent at the first round answers ``None``
          for every range of every round;
        - ranges are :class:`ByteRange` s as for :meth:`get` (explicit, suffix,
          open-ended), answered as :meth:`get` answers them: clipped to the value, and a
          negative length raises :class:`~zarrx.errors.InvalidKeyError`;
        - every key is validated before any I/O;
        - readers of different keys may be served concurrently (a high-latency store sends
          each round of all its readers at once; a file system reads on its I/O threads);
          one reader is served by one thread at a time;
        - answers are bytes-like and may be ``memoryview`` s of an immutable buffer (valid
          as long as the reader keeps them);
        - where a store finds that the value changed between rounds (an object store's
          ETag), it calls the reader's ``restart()`` and serves it again from its first
          round, at most ``zarrx.config`` ``"update_attempts"`` times, then raises
          :class:`~zarrx.errors.StoreError` naming the key.

        Errors a reader raises propagate (a store may first finish the readers it serves
        alongside). This default reads each key whole once (one :meth:`get_many` of the
        keys) and answers every round by slicing that value: one version by construction.
        Stores that can read ranges of one version (one open file, an ETag) override it."""
        reads = list(reads)
        if not reads:
            return
        first = []
        for key, reader in reads:
            ranges = reader.ranges()
            for r in ranges:
                validate_byte_range(r, key)
            first.append(ranges)
        keys = list(dict.fromkeys(key for key, _ in reads))
        values = dict(zip(keys, self.get_many([(key, None) for key in keys])))
        for (key, reader), ranges in zip(reads, first):
            answer_rounds(reader, key, values[key], ranges)

    def exists(self, key: str) -> bool:
        return self.get(key) is not None

    # -- writeable ----------------------------------------------------------------
    def check_keys(self, keys: Iterable[str]) -> None:  # noqa: B027 - optional hook
        """Raise :class:`zarrx.errors.InvalidKeyError` for a key this store could not
        write, so that a node is refused before any of its keys is written (a file
        system's name length limit, say). The default has no limits of its own (``set``
        validates every key)."""

    @abstractmethod
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        """Store ``value`` under ``key``, atomically (a reader sees old or new, never partial)."""

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        for key, value in items:
            self.set(key, value)

    def set_parts(self, key: str, parts: Sequence[Value]) -> None:
        """:meth:`set` of the value ``parts`` make one after the other (a shard's inner
        chunks and index). The default joins them; a store that can write them as they
        are (:class:`~zarrx.stores.local.LocalStore`: ``writev``) overrides it. Parts
        are any buffers, as for :meth:`set` (a strided one is copied in C order)."""
        self.set(key, b"".join(
            p if type(p) is bytes or memoryview(p).c_contiguous else as_bytes(p)
            for p in parts))

    def atomic_set_parts(self, key: str, parts: Sequence[Value] | None) -> None:
        """Write the value ``parts`` make one after the other (erase the key for
        ``None``), atomically against every :meth:`atomic_update` and
        :meth:`atomic_splice` of the key: an update that read the old value never writes
        over this one. A whole chunk or shard written where others may update parts of it.

        On ``"lock"`` stores under the key's :meth:`lock` (:class:`~zarrx.stores.local.
        LocalStore` writes the parts into the lock file and renames it over the key: one
        file made, nothing of the current value read); on ``"conditional"`` stores a plain
        write or erase (one atomic PUT or DELETE, which the conditional updates see as a
        new version); on stores without atomic updates a plain write or erase too."""
        self._check_writable(key)
        with self._update_lock(key):
            if parts is None:
                self.erase(key)
            else:
                self.set_parts(key, parts)

    @abstractmethod
    def erase(self, key: str) -> None:
        """Remove ``key``; no error if it is absent."""

    @abstractmethod
    def erase_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix`` (which must end in ``/`` or be ``""``)."""

    # -- listable -----------------------------------------------------------------
    @abstractmethod
    def list(self) -> list[str]:
        """Every key in the store."""

    @abstractmethod
    def list_prefix(self, prefix: str) -> builtins.list[str]:
        """Every key that starts with ``prefix``."""

    @abstractmethod
    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """``(keys, prefixes)`` directly below ``prefix`` (seed 000 ``list_dir``).

        ``prefix`` is ``""`` or ends in ``/``. Returned keys and prefixes are full keys;
        prefixes end in ``/``.
        """

    # -- atomic updates ---------------------------------------------------------------
    @property
    def supports_atomic_update(self) -> bool:
        """Whether :meth:`atomic_update` is atomic against every writer of the store."""
        return self.atomic_updates is not None

    @final
    def atomic_update(self, key: str, update: Update, snapshot: Snapshot | None = None) -> Any:
        """Replace the value of ``key`` by ``update(value)``, atomically: no other writer's
        change of ``key`` between the read and the write is lost. ``update`` returns the new
        value, ``None`` to erase the key, or the value it was given to leave it as it is.

        ``snapshot``: the value read ahead by :meth:`prefetch_for_update`, used for the
        first try where that is safe. ``update`` may be called more than once (a retry on
        conditional stores) and must not have other effects. Returns what ``update``
        returned on the try that was kept. Stores do not override this: they implement
        the primitives of their :attr:`atomic_updates` way.
        """
        self._check_writable(key)
        if self.atomic_updates == "conditional":
            return _update_conditionally(self, key, update, snapshot)
        with self._update_lock(key):
            if snapshot is None or self.atomic_updates == "lock":
                old = self.get(key)
            else:
                old = snapshot.value
            new = update(old)
            if new is not old:
                if new is None:
                    self.erase(key)
                else:
                    self.set(key, new)
        return new

    def atomic_splice(
        self, key: str, build: Splice, snapshot: Snapshot | None = None
    ) -> Sequence[Part] | None:
        """:meth:`atomic_update` with the new value stated as parts: ``build`` gets the
        current value as a :class:`Stored` (``None``: absent), reads what it needs of it,
        and returns the new value's parts in order (bytes, or explicit byte ranges of the
        current value: what it keeps), or ``None`` to erase the key. Returns what ``build``
        returned on the try that was kept; ``build`` may be called more than once.

        The caller says what the value is made of, the store how to make it: this default
        reads the whole value (or takes ``snapshot``, as :meth:`atomic_update` does) and
        joins the parts; a store that copies ranges of a stored value without reading
        them overrides it, keeping every guarantee of :meth:`atomic_update`."""
        kept: list[Sequence[Part] | None] = [None]

        def update(old: bytes | None) -> Value | None:
            current = None if old is None else StoredBytes(old)
            kept[0] = parts = build(current)
            return None if parts is None else joined(parts, current)

        self.atomic_update(key, update, snapshot)
        return kept[0]

    def prefetch_for_update(self, keys: Sequence[str]) -> dict[str, Snapshot]:
        """The current values of ``keys``, read in one batch ahead of their updates, where
        the update may start from them: not on ``"lock"`` stores, which read under the lock."""
        if not keys or self.atomic_updates == "lock":
            return {}
        return dict(zip(keys, self.get_many_with_version(keys)))

    def lock(self, key: str) -> AbstractContextManager[None]:
        """Exclude every other writer's update of ``key`` for the ``with`` block (on stores
        whose :attr:`atomic_updates` is ``"lock"``; elsewhere a no-op)."""
        return nullcontext()

    def _update_lock(self, key: str) -> AbstractContextManager[Any]:
        """:meth:`lock` of ``key`` for an update or a whole write, counted as a key lock
        this thread holds (the lock-holder rule) on stores that lock."""
        if self.atomic_updates == "lock":
            return _counted(self.lock(key))
        return nullcontext()

    def get_with_version(self, key: str) -> Snapshot:
        """The value of ``key`` with its version, for :meth:`set_if` (stores without
        versions give ``None``)."""
        return Snapshot(self.get(key))

    def get_many_with_version(self, keys: Sequence[str]) -> builtins.list[Snapshot]:
        """:meth:`get_with_version` of many keys at once."""
        return [Snapshot(value) for value in self.get_many([(key, None) for key in keys])]

    def set_if(self, key: str, value: Value | None, version: Any) -> bool:
        """Write ``value`` (erase the key when ``None``) only if ``key`` still holds
        ``version`` — or, for ``version=None``, is still absent — as one atomic step of the
        store; ``False``, with nothing written, when it does not. For stores whose
        :attr:`atomic_updates` is ``"conditional"`` (erasing a key that holds a version
        needs :attr:`conditional_erase`)."""
        raise TypeError(
            f"{self!r} cannot write conditionally (its atomic_updates is "
            f"{self.atomic_updates!r}, not 'conditional')"
        )

    # -- helpers --------------------------------------------------------------------
    def _check_writable(self, key: str) -> None:
        if self.read_only or not self.writeable:
            raise ReadOnlyError(f"cannot write {key!r}: {self!r} is read-only")

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (files, connections)."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _backoff(attempt: int) -> float:
    """Seconds to wait before try ``attempt + 2``: exponential, capped, with jitter, so
    writers that met stop meeting."""
    return min(1.0, 0.005 * 2**attempt) * (0.5 + random.random())


def _update_conditionally(
    store: Store, key: str, update: Update, snapshot: Snapshot | None
) -> Any:
    """The read-modify-write loop of conditional stores: read with the version, change,
    write if the version still holds; otherwise read again, a bounded number of times."""
    attempts = config.get("update_attempts")
    for attempt in range(attempts):
        if snapshot is None:
            snapshot = store.get_with_version(key)
        new = update(snapshot.value)
        if new is snapshot.value or store.set_if(key, new, snapshot.version):
            if attempt:
                _log.debug("update of %r in %r succeeded at try %d", key, store, attempt + 1)
            return new
        _log.debug("update of %r in %r: another writer changed it first (try %d of %d)",
                   key, store, attempt + 1, attempts)
        snapshot = None
        time.sleep(_backoff(attempt))
    raise UpdateConflictError(
        f"could not update key {key!r} in {store!r}: other writers changed it between "
        f"each of {attempts} reads and writes (raise zarrx.config 'update_attempts', or "
        "align the writers so fewer of them update the same key)"
    )
