"""One event loop, on a thread of its own, for stores whose clients are asynchronous
(obstore, zarr-python stores).

zarrx's threads are synchronous: a store method submits its coroutine to this loop with
:func:`run` and waits for the result. The loop is never blocked by a caller, so the
requests of many callers (the engine's chunk and I/O threads) and the requests of one
batch (:func:`gather`) are in flight together, however few threads zarrx has.

The loop starts on first use and runs until the interpreter exits: it is stopped and its
thread joined at exit, before finalization, so no coroutine runs while the interpreter is
being torn down. A native client delivers each result from a thread of its own (obstore:
a tokio thread calls the loop's ``call_soon_threadsafe``); the loop may run the callback,
and the caller return and leave the interpreter, before that thread is out of Python. If
finalization starts then, the thread cannot take the GIL back, and CPython ends it with a
forced unwind that aborts the process when the thread's stack holds Rust frames (SIGABRT
after every write succeeded). So exit also waits until no thread that Python did not start
runs Python code. A forked child starts its own loop (it has none of its parent's threads).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import sys
import threading
import time
from collections.abc import Awaitable, Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The running loop of the store thread (started on first use)."""
    global _loop, _thread
    with _lock:
        if _loop is None:
            ready = threading.Event()
            new = asyncio.new_event_loop()

            def serve() -> None:
                asyncio.set_event_loop(new)
                new.call_soon(ready.set)
                new.run_forever()

            _thread = threading.Thread(target=serve, name="zarrx-aio", daemon=True)
            _thread.start()
            ready.wait()
            _loop = new
            atexit.register(_stop, new, _thread)
        return _loop


#: Exit waits at most this long for the loop's thread and for native threads in Python: a
#: guard against a hang, never a deadline anything depends on.
EXIT_GUARD = 5.0


def _stop(running: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    """At interpreter exit: stop the loop, wait for its thread, then for native threads
    still delivering a result (see the module's docstring)."""
    if not running.is_closed():
        running.call_soon_threadsafe(running.stop)
        thread.join(timeout=EXIT_GUARD)
    deadline = time.monotonic() + EXIT_GUARD
    while native_threads_in_python() and time.monotonic() < deadline:
        time.sleep(0.001)  # hands them the GIL


def native_threads_in_python() -> list[int]:
    """Idents of the threads running Python code now that Python did not start (a native
    library's threads calling back into Python)."""
    dummy = getattr(threading, "_DummyThread", ())
    started = {t.ident for t in threading.enumerate() if not isinstance(t, dummy)}
    return [ident for ident in sys._current_frames() if ident not in started]


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the store loop and wait for its result (or its error)."""
    if threading.current_thread() is _thread:
        coroutine.close()
        raise RuntimeError(
            "a synchronous zarrx store method was called from a coroutine on zarrx's store "
            "event loop: it would wait for itself"
        )
    return asyncio.run_coroutine_threadsafe(coroutine, loop()).result()


async def gather(awaitables: Sequence[Awaitable[T]], limit: int) -> list[T]:
    """Await all, at most ``limit`` at once, in order. The first error is raised once every
    one has finished, so nothing is left running behind the caller."""
    if not awaitables:
        return []
    semaphore = asyncio.Semaphore(limit)

    async def bounded(awaitable: Awaitable[T]) -> T:
        async with semaphore:
            return await awaitable

    results = await asyncio.gather(*map(bounded, awaitables), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results  # type: ignore[return-value]


def _forget_loop() -> None:
    """A forked child has no loop thread: it starts its own on first use."""
    global _loop, _thread, _lock
    _loop, _thread, _lock = None, None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_loop)
