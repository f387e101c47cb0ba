"""The thread pools: one for chunk work (decode, encode, assembly), sized by
``zarrx.config`` ("threads"), and one for blocking store I/O.

Chunk tasks never submit to the chunk pool themselves (a worker runs nested work inline),
so nested parallelism — sharding inside a chunk task — cannot deadlock or oversubscribe
the cores. I/O tasks are leaves (a file read or write that waits on nothing else), so the
I/O pool can have more threads than cores: while one waits on the kernel, another runs.

**The lock-holder rule**: a thread that holds a key's lock never waits for a pool. The
store layer counts the key locks each thread holds (:func:`key_lock_held` around every
locked section: an atomic update, a splice, a whole write, a store's ``lock()``), and
whatever would hand work to a pool and wait for it asks :func:`may_wait_for_pools` first:
:func:`run_all` then runs its items in the caller, :class:`BackgroundWrites` writes in
the caller, ``LocalStore`` reads in the caller. Pool workers may wait on key locks; a
lock's holder waits on nothing a pool must do, so it always makes progress and every
waiter gets the lock in the end. An I/O thread waits for no pool either (its task may be
a store's read of many keys, or a reader's code).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any, TypeVar

from zarrx import config

T = TypeVar("T")

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_local = threading.local()


def _get_pool(size: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size != size:
            # The old pool is not shut down: another thread may have just taken it and be
            # about to submit (its idle workers exit once it is no longer referenced).
            _pool = ThreadPoolExecutor(size, thread_name_prefix="zarrx", initializer=_mark)
            _pool_size = size
        return _pool


def _mark() -> None:
    _local.worker = True


def in_worker() -> bool:
    return getattr(_local, "worker", False)


@contextmanager
def key_lock_held() -> Iterator[None]:
    """Count, for the block, a key lock the calling thread holds (see the module's rule)."""
    _local.locks = getattr(_local, "locks", 0) + 1
    try:
        yield
    finally:
        _local.locks -= 1


def holds_key_lock() -> bool:
    """Whether the calling thread holds a key's lock (inside :func:`key_lock_held`)."""
    return getattr(_local, "locks", 0) > 0


def may_wait_for_pools() -> bool:
    """Whether the calling thread may hand work to a pool and wait for it: not while it
    holds a key's lock, nor on an I/O thread."""
    return not (getattr(_local, "locks", 0) or getattr(_local, "io", False))


def run_all(fn: Callable[[T], None], items: Iterable[T]) -> None:
    """Call ``fn`` on every item, concurrently when it pays; re-raise the first error.
    In the caller, in turn, on a chunk or I/O thread and in a thread that holds a key's
    lock (the module's rule).

    The pool's threads each take items from one shared queue until it is empty (one task
    per thread, not one per item: tiny chunks cost a function call, not a future); after
    an error no thread takes another item."""
    work = list(items)
    threads = config.get("threads")
    if len(work) <= 1 or threads == 1 or in_worker() or not may_wait_for_pools():
        for item in work:
            fn(item)
        return
    queue = iter(work)
    take = threading.Lock()
    failures: list[BaseException] = []

    def drain() -> None:
        while not failures:
            with take:
                item = next(queue, _DONE)
            if item is _DONE:
                return
            try:
                fn(item)  # type: ignore[arg-type]
            except BaseException as error:
                failures.append(error)
                return

    pool = _get_pool(threads)
    wait([pool.submit(drain) for _ in range(min(threads, len(work)))])
    if failures:
        raise failures[0]


_DONE = object()


#: Threads for blocking store calls. A local file write spends most of its time waiting
#: for the disk, not the CPU: enough of them keep the chunk threads' encoded values moving
#: (:data:`zarrx.engine.update.IN_FLIGHT`).
IO_THREADS = 16

_io_lock = threading.Lock()
_io_pool: ThreadPoolExecutor | None = None


def io_pool() -> ThreadPoolExecutor:
    """The pool for blocking store calls; its tasks must never wait on either pool."""
    global _io_pool
    if _io_pool is None:
        with _io_lock:
            if _io_pool is None:
                _io_pool = ThreadPoolExecutor(IO_THREADS, thread_name_prefix="zarrx-io",
                                              initializer=_mark_io)
    return _io_pool


def _mark_io() -> None:
    _local.io = True


def on_io_threads(fn: Callable[[T], Any], parts: Sequence[T]) -> list[Any]:
    """``[fn(part) for part in parts]``, run on the I/O threads; every call has ended when
    this returns or raises (the first error, in order), so nothing the calls use is
    released under them. The caller must be allowed to wait (:func:`may_wait_for_pools`)."""
    futures = [io_pool().submit(fn, part) for part in parts]
    wait(futures)
    return [future.result() for future in futures]


#: Tasks a batch of reads is split into (a thousand small reads are not a thousand
#: hand-offs); half the I/O threads: more contend for the GIL (100 000 files of 64 B,
#: cached: 16 slices 1.2 times slower than 8), and 8 keep a disk's queue busy.
READ_SLICES = 8


def io_slices(items: Sequence[T]) -> list[Sequence[T]]:
    """``items`` in at most :data:`READ_SLICES` slices, for :func:`on_io_threads`."""
    size = max(1, -(-len(items) // READ_SLICES))
    return [items[i:i + size] for i in range(0, len(items), size)]


def _forget_pools() -> None:
    """A forked child has none of its parent's threads: it must make its own pools."""
    global _pool, _pool_size, _lock, _io_pool, _io_lock
    _pool, _pool_size, _lock = None, 0, threading.Lock()
    _io_pool, _io_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


class BackgroundWrites:
    """Store writes run on the I/O pool, so encoding the next chunk overlaps writing this
    one (a file system may block a writer: ext4 flushes a file renamed over another).

    At most ``limit`` encoded values wait in memory; beyond ``few`` of them (all of
    ``limit`` by default), only while their bytes stay within ``budget``: many small
    values, a few large ones. Once a write has failed, the next :meth:`set` raises that
    failure instead of writing more. :meth:`wait` returns once every write is done and
    re-raises the first failure. A caller that holds a key's lock writes itself (the
    module's rule): it never waits for room the I/O threads make."""

    def __init__(self, store: Any, limit: int, few: int | None = None,
                 budget: int | None = None) -> None:
        self._store = store
        self._limit = limit
        self._few = limit if few is None else max(1, min(few, limit))  # one always goes
        self._budget = budget
        self._room = threading.Condition(threading.Lock())
        self._count = 0  # writes handed over and not done, and their bytes
        self._bytes = 0
        self._failure: BaseException | None = None

    def set(self, key: str, value: Any) -> None:
        self._submit(self._store.set, key, value)

    def set_parts(self, key: str, parts: Any) -> None:
        """:meth:`set` of a value in parts (the store's ``set_parts``)."""
        self._submit(self._store.set_parts, key, parts)

    def atomic_set_parts(self, key: str, parts: Any) -> None:
        """The store's ``atomic_set_parts``: a whole value in parts (``None``: erase the
        key), atomic against the key's updates."""
        self._submit(self._store.atomic_set_parts, key, parts)

    def _submit(self, write: Callable[[str, Any], None], key: str, value: Any) -> None:
        if not may_wait_for_pools():
            if self._failure is not None:
                raise self._failure
            write(key, value)
            return
        handed = _Handed(_nbytes(value))
        try:
            with self._room:
                while not self._fits(handed.size):
                    self._room.wait()
                if self._failure is not None:
                    raise self._failure
                self._count += 1
                self._bytes += handed.size
                handed.state = _COUNTED
            io_pool().submit(self._set, handed, write, key, value)
        except BaseException:  # (an interrupt may land after the pool queued the write)
            self._settle(handed, _COUNTED)  # one no I/O thread has begun is never made
            raise

    def _fits(self, size: int) -> bool:
        if self._failure is not None or self._count < self._few:
            return True
        return self._count < self._limit and (
            self._budget is None or self._bytes + size <= self._budget)

    def _set(self, handed: _Handed, write: Callable[[str, Any], None], key: str,
             value: Any) -> None:
        with self._room:
            if handed.state != _COUNTED:
                return  # given up by its caller
            handed.state = _BEGUN
        try:
            write(key, value)
        except BaseException as error:
            with self._room:
                if self._failure is None:
                    self._failure = error
        finally:
            self._settle(handed, _BEGUN)

    def _settle(self, handed: _Handed, state: int) -> None:
        """Take ``handed`` off the count if it is still in ``state``, once."""
        with self._room:
            if handed.state != state:
                return
            handed.state = _SETTLED
            self._count -= 1
            self._bytes -= handed.size
            self._room.notify_all()

    def wait(self, *, raise_failure: bool = True) -> None:
        """Wait for every write; ``raise_failure=False`` when another error is already
        on its way (it must not be masked by a write's)."""
        with self._room:
            while self._count:
                self._room.wait()
        if raise_failure and self._failure is not None:
            raise self._failure


_COUNTED, _BEGUN, _SETTLED = 1, 2, 3


class _Handed:
    """A write handed to :class:`BackgroundWrites`: its bytes, and how far it got
    (0, then counted, begun by an I/O thread, settled), changed under its lock."""

    __slots__ = ("size", "state")

    def __init__(self, size: int) -> None:
        self.size, self.state = size, 0


def _nbytes(value: Any) -> int:
    """The bytes of a value to write: a buffer, parts of one, or ``None`` (an erase)."""
    if value is None:
        return 0
    if type(value) is list or type(value) is tuple:
        return sum(map(_nbytes, value))
    return len(value) if type(value) is bytes else memoryview(value).nbytes
