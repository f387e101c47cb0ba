"""``BackgroundWrites``: how many encoded values, and how many bytes of them, wait for the
I/O threads; ordered by events, not by a clock."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.engine import update
from zarrx.runtime import executor
from zarrx.runtime.executor import BackgroundWrites
from zarrx.stores.memory import MemoryStore


class _Gated(MemoryStore):
    """Each write waits until its key's gate opens; ``entered`` lists the writes begun."""

    def __init__(self) -> None:
        super().__init__()
        self.gates: dict[str, threading.Event] = {}
        self.entered: list[str] = []
        self.changed = threading.Condition()

    def gate(self, key: str) -> threading.Event:
        with self.changed:
            return self.gates.setdefault(key, threading.Event())

    def set(self, key: str, value: Any) -> None:
        with self.changed:
            self.entered.append(key)
            self.changed.notify_all()
        assert self.gate(key).wait(60)
        super().set(key, value)

    def wait_entered(self, keys: set[str]) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: keys <= set(self.entered), 60)


class _Watched(BackgroundWrites):
    """Notes each value it has no room for yet (then its writer waits)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refused: list[int] = []
        self.waiting = threading.Semaphore(0)

    def _fits(self, size: int) -> bool:
        fits = super()._fits(size)
        if not fits:
            self.refused.append(size)
            self.waiting.release()
        return fits


def _writer(writes: BackgroundWrites, values: list[tuple[str, bytes]]) -> threading.Thread:
    thread = threading.Thread(target=lambda: [writes.set(k, v) for k, v in values])
    thread.start()
    return thread


def test_beyond_a_few_values_room_is_counted_in_bytes() -> None:
    store = _Gated()
    writes = _Watched(store, limit=3, few=1, budget=10)
    values = [("a", b"6" * 6), ("b", b"4" * 4), ("c", b"2" * 2), ("d", b"1")]
    writer = _writer(writes, values)
    assert writes.waiting.acquire(timeout=60)  # 'c' would make 12 bytes: it waits
    store.wait_entered({"a", "b"})
    assert writes.refused == [2]
    assert "c" not in store.entered
    store.gate("a").set()  # 6 bytes done: 'c' and 'd' fit (7 bytes, 3 values)
    store.wait_entered({"c", "d"})
    for key, _ in values:
        store.gate(key).set()
    writer.join(60)
    writes.wait()
    assert writes.refused == [2]
    assert {k: store.get(k) for k, _ in values} == dict(values)


def test_a_value_larger_than_the_budget_goes_when_few_wait() -> None:
    store = _Gated()
    writes = _Watched(store, limit=4, few=2, budget=10)
    big = [("a", b"x" * 100), ("b", b"y" * 100), ("c", b"z")]
    writer = _writer(writes, big)
    store.wait_entered({"a", "b"})  # two are always allowed, whatever their size
    assert writes.waiting.acquire(timeout=60)  # a third only within the budget
    assert writes.refused == [1]
    store.gate("a").set()
    store.gate("b").set()
    store.gate("c").set()
    writer.join(60)
    writes.wait()
    assert store.get("c") == b"z"


def test_no_more_than_limit_values_wait_however_small() -> None:
    store = _Gated()
    writes = _Watched(store, limit=3, budget=1 << 20)
    values = [(f"k{i}", b"v") for i in range(5)]
    writer = _writer(writes, values)
    assert writes.waiting.acquire(timeout=60)
    store.wait_entered({"k0", "k1", "k2"})
    assert len(store.entered) == 3
    for key, _ in values:
        store.gate(key).set()
    writer.join(60)
    writes.wait()
    assert store.get("k4") == b"v"


@pytest.mark.parametrize("value", [None, b"abc", bytearray(5), memoryview(b"xy"),
                                   [b"ab", memoryview(b"cde")], (np.zeros(3, "i4"),)])
def test_every_kind_of_value_is_measured_and_written(value: Any) -> None:
    """Buffers, parts of one, NumPy arrays and erases are sized for the budget and
    reach the store whole."""
    store = MemoryStore()
    writes = BackgroundWrites(store, limit=2, budget=8)
    store.set("k", b"old")
    writes.atomic_set_parts("k", None if value is None else
                            value if isinstance(value, list | tuple) else [value])
    writes.wait()
    expected = None if value is None else b"".join(
        bytes(memoryview(p).cast("B")) for p in (value if isinstance(value, list | tuple)
                                                 else [value]))
    assert store.get("k") == expected


def test_in_flight_bytes_bounds_what_a_write_of_large_chunks_holds() -> None:
    """A write of chunks larger than the budget allows keeps ``FEW_IN_FLIGHT`` of them a
    thread in flight, no more; small ones up to ``IN_FLIGHT``."""
    assert update.in_flight_bytes(1 << 10) == update.IN_FLIGHT << 10
    assert update.in_flight_bytes(64 << 20) == update.FEW_IN_FLIGHT * (64 << 20)
    largest = 0
    lock = threading.Lock()
    inside = [0, 0]  # values in the store's hands now, their bytes

    class Slow(MemoryStore):
        def set(self, key: str, value: Any) -> None:
            nonlocal largest
            with lock:
                inside[0] += 1
                largest = max(largest, inside[0])
            time.sleep(0.05)  # (keeps writes overlapping; nothing is timed)
            with lock:
                inside[0] -= 1
            super().set(key, value)

    chunk = 4 << 20  # incompressible chunks: 4 MiB each, stored as they are
    a = zarrx.create_array(Slow(), shape=(16 * chunk,), chunks=(chunk,), dtype="u1",
                           compressors=None)
    with zarrx.config.set(threads=2):
        a[...] = np.random.default_rng(0).integers(0, 256, 16 * chunk, dtype=np.uint8)
    assert largest <= 2 * update.FEW_IN_FLIGHT


def test_an_interrupt_after_the_pool_took_a_write_leaves_the_count_right(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C may land in ``submit`` after the pool queued the write (while it starts a
    thread): the write is counted off once, whether an I/O thread makes it or not, so
    :meth:`~BackgroundWrites.wait` returns and later writes go on."""

    class Interrupted(ThreadPoolExecutor):
        armed = True

        def _adjust_thread_count(self) -> None:
            super()._adjust_thread_count()  # type: ignore[misc]
            if self.armed:
                self.armed = False
                raise KeyboardInterrupt

    pool = Interrupted(2, initializer=executor._mark_io)
    monkeypatch.setattr(executor, "_io_pool", pool)
    store = MemoryStore()
    writes = BackgroundWrites(store, limit=4)
    with pytest.raises(KeyboardInterrupt):
        writes.set("k", b"v")
    waited = threading.Thread(target=writes.wait, kwargs={"raise_failure": False},
                              daemon=True)
    waited.start()
    waited.join(60)
    assert not waited.is_alive()
    writes.set("after", b"w")
    writes.wait()
    assert store.get("after") == b"w"
    pool.shutdown()
