"""The thread pools: one for chunk work (decode, encode, assembly), sized by
``zarrx.config`` ("threads"), and one for blocking store I/O.

Chunk tasks never submit to the chunk pool themselves (a worker runs nested work inline),
so nested parallelism — sharding inside a chunk task — cannot deadlock or oversubscribe
the cores. I/O tasks are leaves (a file read or write that waits on nothing else), so the
I/O pool can have more threads than cores: while one waits on the kernel, another runs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
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


def run_all(fn: Callable[[T], None], items: Iterable[T]) -> None:
    """Call ``fn`` on every item, concurrently when it pays; re-raise the first error.

    The pool's threads each take items from one shared queue until it is empty (one task
    per thread, not one per item: tiny chunks cost a function call, not a future); after
    an error no thread takes another item."""
    work = list(items)
    threads = config.get("threads")
    if len(work) <= 1 or threads == 1 or in_worker():
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


IO_THREADS = 8

_io_lock = threading.Lock()
_io_pool: ThreadPoolExecutor | None = None


def io_pool() -> ThreadPoolExecutor:
    """The pool for blocking store calls; its tasks must never wait on either pool."""
    global _io_pool
    if _io_pool is None:
        with _io_lock:
            if _io_pool is None:
                _io_pool = ThreadPoolExecutor(IO_THREADS, thread_name_prefix="zarrx-io")
    return _io_pool


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

    At most ``limit`` encoded values wait in memory. Once a write has failed, the next
    :meth:`set` raises that failure instead of writing more. :meth:`wait` returns once
    every write is done and re-raises the first failure."""

    def __init__(self, store: Any, limit: int) -> None:
        self._store = store
        self._slots = threading.BoundedSemaphore(limit)
        self._futures: list[Future[None]] = []
        self._lock = threading.Lock()
        self._failure: BaseException | None = None

    def set(self, key: str, value: Any) -> None:
        self._submit(self._store.set, key, value)

    def set_parts(self, key: str, parts: Any) -> None:
        """:meth:`set` of a value in parts (the store's ``set_parts``)."""
        self._submit(self._store.set_parts, key, parts)

    def atomic_set_parts(self, key: str, parts: Any) -> None:
        """The store's ``atomic_set_parts``, on the I/O threads."""
        self._submit(self._store.atomic_set_parts, key, parts)

    def _submit(self, write: Callable[[str, Any], None], key: str, value: Any) -> None:
        self._slots.acquire()
        if self._failure is not None:
            self._slots.release()
            raise self._failure
        try:
            future = io_pool().submit(self._set, write, key, value)
        except BaseException:
            self._slots.release()
            raise
        with self._lock:
            self._futures.append(future)

    def _set(self, write: Callable[[str, Any], None], key: str, value: Any) -> None:
        try:
            write(key, value)
        except BaseException as error:
            with self._lock:
                if self._failure is None:
                    self._failure = error
            raise
        finally:
            self._slots.release()

    def wait(self, *, raise_failure: bool = True) -> None:
        """Wait for every write; ``raise_failure=False`` when another error is already
        on its way (it must not be masked by a write's)."""
        with self._lock:
            futures, self._futures = self._futures, []
        wait(futures)
        if raise_failure and self._failure is not None:
            raise self._failure
