"""One thread pool for chunk work, sized by ``zarrx.config`` ("threads").

Tasks never submit to the pool themselves (a worker runs nested work inline), so nested
parallelism — sharding inside a chunk task — cannot deadlock or oversubscribe the cores.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import TypeVar

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
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(size, thread_name_prefix="zarrx", initializer=_mark)
            _pool_size = size
        return _pool


def _mark() -> None:
    _local.worker = True


def in_worker() -> bool:
    return getattr(_local, "worker", False)


def run_all(fn: Callable[[T], None], items: Iterable[T]) -> None:
    """Call ``fn`` on every item, concurrently when it pays; re-raise the first error."""
    work = list(items)
    threads = config.get("threads")
    if len(work) <= 1 or threads == 1 or in_worker():
        for item in work:
            fn(item)
        return
    pool = _get_pool(threads)
    futures: list[Future[None]] = [pool.submit(fn, item) for item in work]
    _, pending = wait(futures, return_when=FIRST_EXCEPTION)
    for f in pending:
        f.cancel()
    wait(pending)
    for f in futures:
        if f.done() and not f.cancelled() and f.exception() is not None:
            raise f.exception()  # type: ignore[misc]
