"""CacheStore: the store contract, hits and misses counted at the wrapped store, the size
bound under any sequence of operations, coherence under threads, and updates that never
start from a cached value."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from obstore.store import MemoryStore as ObstoreMemory

import zarrx
from zarrx.abc.store import ByteRange, Store, resolve_byte_range
from zarrx.stores.cache import CacheStore
from zarrx.stores.memory import MemoryStore
from zarrx.stores.obstore import ObstoreStore
from zarrx.testing.rounds import Scripted, VersionReader, version_value
from zarrx.testing.stores import StoreTests


class Counting(MemoryStore):
    """A memory store counting the reads that reach it (each request of a batch counts)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[str, ByteRange | None]] = []
        self.count_lock = threading.Lock()

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        with self.count_lock:
            self.reads.append((key, byte_range))
        return super().get(key, byte_range)

    def get_many(self, requests: Any) -> list[bytes | None]:
        return [self.get(key, byte_range) for key, byte_range in requests]


class TestCacheStore(StoreTests):
    @pytest.fixture
    def store(self) -> CacheStore:
        return CacheStore(MemoryStore(), max_size=2**20)


class TestSmallCacheStore(StoreTests):
    """Most values do not fit: the contract holds while entries come and go."""

    @pytest.fixture
    def store(self) -> CacheStore:
        return CacheStore(MemoryStore(), max_size=100, max_entries=3)


def test_repeated_reads_make_no_request() -> None:
    inner = Counting()
    cache = CacheStore(inner, max_size=2**20)
    data = np.arange(64 * 64, dtype="<f4").reshape(64, 64)
    a = zarrx.create_array(cache, shape=data.shape, dtype="f4", chunks=(16, 16),
                           shards=(32, 32), attributes={"t": 1})
    a[...] = data
    inner.reads.clear()
    b = zarrx.open_array(cache, mode="r")
    np.testing.assert_array_equal(b[5:20, 3:40], data[5:20, 3:40])  # inner chunks of shards
    np.testing.assert_array_equal(b[...], data)
    first = len(inner.reads)
    assert first > 0
    hits = cache.hits
    again = zarrx.open_array(cache, mode="r")
    np.testing.assert_array_equal(again[5:20, 3:40], data[5:20, 3:40])
    np.testing.assert_array_equal(again[...], data)
    assert again.attrs["t"] == 1
    assert len(inner.reads) == first  # nothing more reached the store
    assert cache.hits > hits


def test_a_cached_value_answers_its_ranges_and_absent_keys_are_cached() -> None:
    inner = Counting()
    inner.set("v", b"0123456789")
    cache = CacheStore(inner, max_size=100)
    assert cache.get("v") == b"0123456789"
    assert cache.get_many([("v", ByteRange(2, 3)), ("v", ByteRange(-2)), ("v", ByteRange(20))]) \
        == [b"234", b"89", b""]
    assert cache.get("absent") is None
    assert cache.get("absent", ByteRange(0, 4)) is None
    assert not cache.exists("absent")
    assert inner.reads == [("v", None), ("absent", None)]
    assert (cache.hits, cache.misses) == (4, 2)


def test_ranges_are_cached_by_range() -> None:
    inner = Counting()
    inner.set("shard", bytes(range(200)))
    cache = CacheStore(inner, max_size=100)
    for _ in range(3):
        assert cache.get("shard", ByteRange(-20)) == bytes(range(180, 200))
        assert cache.get("shard", ByteRange(10, 5)) == bytes(range(10, 15))
    assert inner.reads == [("shard", ByteRange(-20)), ("shard", ByteRange(10, 5))]
    assert cache.size == 25
    assert cache.get("shard") == bytes(range(200))  # bigger than the cache: not kept
    assert cache.get("shard") == bytes(range(200))
    assert len(inner.reads) == 4
    assert cache.size == 25


def test_least_recently_used_go_first() -> None:
    inner = Counting()
    for name in "abcd":
        inner.set(name, name.encode() * 10)
    cache = CacheStore(inner, max_size=30)
    for name in "abc":
        cache.get(name)
    cache.get("a")  # a is now the most recent: b goes when d comes
    cache.get("d")
    assert cache.size == 30
    inner.reads.clear()
    for name in "acd":
        cache.get(name)
    assert inner.reads == []
    cache.get("b")
    assert inner.reads == [("b", None)]


class Ranged(Counting):
    """A counting store that reads each round of a read in rounds as ranges of the one
    value it held at the first round (as a store of files or objects does)."""

    def read_rounds(self, reads: Any) -> None:
        for key, reader in reads:
            value = MemoryStore.get(self, key)
            ranges = reader.ranges()
            while ranges:
                with self.count_lock:
                    self.reads.extend((key, r) for r in ranges)
                reader.receive([None if value is None else
                                value[slice(*resolve_byte_range(r, len(value), key))]
                                for r in ranges])
                ranges = reader.ranges()


def test_reads_in_rounds_are_answered_from_one_version() -> None:
    inner = Ranged()
    inner.set("v", version_value(1))
    cache = CacheStore(inner, max_size=2**20)
    first = VersionReader()
    cache.read_rounds([("v", first)])
    asked = len(inner.reads)
    assert asked == 5  # the head; middle, suffix, tail; a place
    again = VersionReader()
    cache.read_rounds([("v", again)])  # the same rounds: the kept answers
    assert len(inner.reads) == asked
    assert again.consistent()
    assert (again.version, again.restarts) == (1, 0)
    wrapped = inner.get("v") or b""
    inner.set("v", version_value(2))  # past the cache: it keeps what it saw, one version
    kept = VersionReader()
    cache.read_rounds([("v", kept)])
    assert kept.consistent()
    assert kept.version == 1
    other = Scripted(lambda got: [] if len(got) == 2 else [ByteRange(0, 16)] if not got
                     else [ByteRange(100, 8)])  # the same head, another second round
    cache.read_rounds([("v", other)])
    assert other.restarts == 1  # answered from the cache in part, then read again
    assert other.received == [[inner.get("v", ByteRange(0, 16))],
                              [inner.get("v", ByteRange(100, 8))]]
    cache.set("v", version_value(3))  # through the cache: what it kept is dropped
    fresh = VersionReader()
    cache.read_rounds([("v", fresh)])
    assert fresh.version == 3
    assert cache.size <= 2**20
    cache.clear()
    assert cache.size == 0
    inner.set("w", wrapped)
    assert cache.get("w") == wrapped  # a whole value cached: it answers every round
    inner.reads.clear()
    whole = VersionReader()
    cache.read_rounds([("w", whole), ("absent", VersionReader())])
    cache.read_rounds([("absent", VersionReader())])  # absent: kept as such
    assert whole.version == 1
    assert inner.reads == [("absent", ByteRange(0, 16))]


def test_a_read_in_rounds_overtaken_by_a_write_is_not_kept() -> None:
    inner = Ranged()
    inner.set("v", version_value(1))
    cache = CacheStore(inner, max_size=2**20)
    reader = VersionReader(lambda r: cache.set("v", version_value(2)) if r == 1 else None)
    cache.read_rounds([("v", reader)])
    assert reader.version == 1  # the wrapped store's one version
    inner.reads.clear()
    after = VersionReader()
    cache.read_rounds([("v", after)])
    assert after.version == 2
    assert inner.reads  # nothing of the overtaken read was kept


operations = st.lists(
    st.tuples(
        st.sampled_from(["get", "range", "many", "rounds", "set", "erase", "erase_prefix"]),
        st.sampled_from(["a", "b", "c/0", "c/1", "d"]),
        st.integers(0, 40),
    ),
    max_size=60,
)


@given(ops=operations, max_size=st.integers(0, 64))
@settings(max_examples=200, deadline=None)
def test_size_bound_and_coherence_under_any_operations(ops: Any, max_size: int) -> None:
    inner = MemoryStore()
    cache = CacheStore(inner, max_size=max_size, max_entries=4)
    for op, key, n in ops:
        if op == "set":
            cache.set(key, bytes([n]) * n)
        elif op == "erase":
            cache.erase(key)
        elif op == "erase_prefix":
            cache.erase_prefix("c/")
        elif op == "get":
            assert cache.get(key) == inner.get(key)
        elif op == "range":
            r = ByteRange(n - 20, n % 7 or None)
            assert cache.get(key, r) == inner.get(key, r)
        elif op == "rounds":
            asked = [ByteRange(n - 20, n % 7 or None), ByteRange(1, 3)]
            reader = Scripted(lambda got, asked=asked: [] if len(got) == 2 else asked)
            cache.read_rounds([(key, reader)])
            assert reader.received == [[inner.get(key, r) for r in asked]] * 2
        else:
            asked = [(key, None), ("a", ByteRange(1, 2)), (key, ByteRange(-3))]
            assert cache.get_many(asked) == inner.get_many(asked)
        held = cache._lru.entries
        assert cache.size == sum(len(v) for v in held.values() if v is not None) <= max_size
        assert len(held) <= 4


class Paused(MemoryStore):
    """A memory store whose reads of one key wait until released (a read in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = threading.Event()
        self.release = threading.Event()

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        value = super().get(key, byte_range)
        if key == "slow":
            self.reading.set()
            assert self.release.wait(30)
        return value


def test_a_read_overtaken_by_a_write_is_not_cached() -> None:
    inner = Paused()
    inner.set("slow", b"old")
    cache = CacheStore(inner, max_size=100)
    with ThreadPoolExecutor(1) as pool:
        read = pool.submit(cache.get, "slow")
        assert inner.reading.wait(30)  # it has read b"old" and not returned yet
        cache.set("slow", b"new")
        inner.release.set()
        assert read.result() == b"old"  # it began before the write
    assert cache.get("slow") == b"new"  # but did not enter the cache


def test_threads_reading_and_writing_see_no_stale_value() -> None:
    inner = MemoryStore()
    cache = CacheStore(inner, max_size=300, max_entries=8)
    keys = [f"k/{i}" for i in range(12)]
    barrier = threading.Barrier(8)

    def work(seed: int) -> None:
        rng = random.Random(seed)
        barrier.wait()
        for i in range(400):
            key = rng.choice(keys)
            action = rng.random()
            if action < 0.3:
                cache.set(key, f"{seed}-{i}".encode() * rng.randint(1, 4))
            elif action < 0.35:
                cache.erase(key)
            elif action < 0.7:
                cache.get(key)
            else:
                cache.get_many([(k, ByteRange(0, 3)) for k in rng.sample(keys, 3)])
            assert cache.size <= 300

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    assert [cache.get(k) for k in keys] == [inner.get(k) for k in keys]
    assert [cache.get(k, ByteRange(0, 3)) for k in keys] == [
        inner.get(k, ByteRange(0, 3)) for k in keys]


@pytest.mark.parametrize("inner", [MemoryStore, lambda: ObstoreStore(ObstoreMemory())],
                         ids=["lock", "conditional"])
def test_an_update_never_starts_from_a_cached_value(inner: Any) -> None:
    wrapped: Store = inner()
    cache = CacheStore(wrapped, max_size=100)
    assert cache.atomic_updates == wrapped.atomic_updates
    cache.set("n", b"1")
    assert cache.get("n") == b"1"  # cached
    wrapped.set("n", b"5")  # another writer, past the cache
    assert cache.get("n") == b"1"  # a plain read may be stale: documented
    assert cache.atomic_update("n", lambda old: str(int(old) + 1).encode()) == b"6"
    assert cache.get("n") == b"6"
    assert wrapped.get("n") == b"6"


def test_a_chunk_update_through_the_cache_reads_the_store() -> None:
    wrapped = MemoryStore()
    cache = CacheStore(wrapped, max_size=2**20)
    a = zarrx.create_array(cache, shape=(8,), dtype="i4", chunks=(8,), fill_value=0)
    a[...] = np.arange(8)
    np.testing.assert_array_equal(a[...], np.arange(8))  # chunk cached
    other = zarrx.open_array(wrapped, mode="r+")
    other[0] = 100  # past the cache
    a[7] = -1  # a partial update through the cache: starts from the store's chunk
    np.testing.assert_array_equal(zarrx.open_array(wrapped)[...], [100, 1, 2, 3, 4, 5, 6, -1])


def test_arguments_and_delegation() -> None:
    with pytest.raises(ValueError, match="max_size"):
        CacheStore(MemoryStore(), max_size=-1)
    with pytest.raises(TypeError, match="zarrx Store"):
        CacheStore({}, max_size=10)
    read_only = CacheStore(MemoryStore(read_only=True), max_size=10)
    assert read_only.read_only
    view = CacheStore(MemoryStore(), max_size=10).with_read_only(True)
    assert view.read_only
    assert not view.store.read_only


def test_public_names_and_module_example() -> None:
    import doctest
    import importlib

    from zarrx import storage

    assert storage.CacheStore is CacheStore
    assert "CacheStore" in storage.__all__
    result = doctest.testmod(importlib.import_module("zarrx.stores.cache"))
    assert result.attempted > 0
    assert result.failed == 0
