"""On a high-latency store, a read of parts of many shards fetches the shard indexes (and
the shards it needs whole) in one batch and the inner chunks they need in another; it
equals NumPy's answer."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from tests.engine._rounds import RoundsRecording
from zarrx.abc.store import ByteRange
from zarrx.errors import CodecError
from zarrx.stores.memory import MemoryStore


class Batched(MemoryStore):
    """A memory store that says it is high-latency, and records each batch it is asked."""

    batched_reads = True

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[tuple[str, ByteRange | None]]] = []
        self.lock_ = threading.Lock()

    def get_many(self, requests: Any) -> list[bytes | None]:
        with self.lock_:
            self.batches.append(list(requests))
        return super().get_many(requests)


DATA = np.arange(48 * 40, dtype="<i4").reshape(48, 40)


@pytest.fixture(scope="module")
def sharded() -> tuple[Batched, Any]:
    store = Batched()
    a = zarrx.create_array(store, shape=DATA.shape, dtype="i4", chunks=(4, 5), shards=(16, 20),
                           fill_value=-1)
    a[...] = DATA
    a[16:32, 20:40] = -1  # one shard all fill value: not stored
    return store, a


def test_parts_of_many_shards_are_two_rounds() -> None:
    """On a high-latency store, every shard a read needs is read in the same rounds: the
    shards needed whole and the others' indexes in the first, then those shards' inner
    chunks in the second."""
    store = RoundsRecording(batched=True)
    a = zarrx.create_array(store, shape=DATA.shape, dtype="i4", chunks=(4, 5), shards=(16, 20),
                           fill_value=-1)
    a[...] = DATA
    a[16:32, 20:40] = -1  # one shard all fill value: not stored
    store.clear()
    got = a[6:42, 3:37]  # parts of all 6 shards (one absent)
    expected = DATA.copy()
    expected[16:32, 20:40] = -1
    np.testing.assert_array_equal(got, expected[6:42, 3:37])
    first, inner = store.rounds
    assert sorted(k for k, _ in first) == [f"c/{i}/{j}" for i in range(3) for j in range(2)]
    # Shards c/1/* need every inner chunk: read whole, with no index first; the others'
    # indexes (suffixes) come in the same round.
    assert sorted(k for k, r in first if r == ByteRange(0)) == ["c/1/0", "c/1/1"]
    assert all(r.start < 0 for _, r in first if r != ByteRange(0))
    assert {k for k, _ in inner} == {"c/0/0", "c/0/1", "c/2/0", "c/2/1"}
    assert all(r is not None and r.start >= 0 for _, r in inner)
    assert store.calls == ["read_rounds"]


@given(
    rows=st.tuples(st.integers(0, 47), st.integers(0, 47), st.integers(1, 5)),
    cols=st.tuples(st.integers(0, 39), st.integers(0, 39), st.integers(1, 5)),
    fancy=st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_batched_partial_reads_equal_numpy(sharded: tuple[Batched, Any], rows: Any, cols: Any,
                                          fancy: bool) -> None:
    _, a = sharded
    expected = DATA.copy()
    expected[16:32, 20:40] = -1
    r = slice(min(rows[:2]), max(rows[:2]) + 1, rows[2])
    c = slice(min(cols[:2]), max(cols[:2]) + 1, cols[2])
    if fancy:
        index = np.arange(48)[r][::-1]
        np.testing.assert_array_equal(a.oindex[index, c], expected[index][:, c])
    else:
        np.testing.assert_array_equal(a[r, c], expected[r, c])


def test_a_corrupt_index_names_the_shard() -> None:
    store = Batched()
    a = zarrx.create_array(store, shape=(8, 8), dtype="u1", chunks=(2, 2), shards=(4, 4))
    a[...] = 1
    index = store.get("c/0/1", ByteRange(-(4 * 16 + 4)))
    store.set("c/0/1", store.get("c/0/1")[: -len(index)] + b"\x00" * len(index))
    with pytest.raises(CodecError, match="c/0/1"):
        a[1:3, 1:7]


class Counted(MemoryStore):
    """A memory store without batched reads that counts its whole-key reads by kind."""

    def __init__(self) -> None:
        super().__init__()
        self.singles = 0
        self.batches: list[int] = []
        self.lock_ = threading.Lock()

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        with self.lock_:
            self.singles += 1
        return super().get(key, byte_range)

    def get_many(self, requests: Any) -> list[bytes | None]:
        requests = list(requests)
        with self.lock_:
            self.batches.append(len(requests))
        return [MemoryStore.get(self, key, r) for key, r in requests]  # not counted as singles


@pytest.mark.parametrize("threads", [1, 2])
def test_tiny_chunks_are_fetched_in_one_batch_and_placed_by_the_caller(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks under INLINE_BYTES are read with one get_many per batch even where the store
    reads one key at a time, and placed without the chunk threads; larger chunks are
    still read by the chunk threads, key by key. Both equal NumPy."""
    from zarrx.engine import read

    shared: list[int] = []  # how many chunks were shared out to the chunk threads
    run_all = read.run_all
    monkeypatch.setattr(read, "run_all", lambda fn, items: (
        shared.append(len(items)), run_all(fn, items))[1])  # type: ignore[arg-type]
    data = np.arange(64 * 64, dtype="<i4").reshape(64, 64)
    store = Counted()
    small = zarrx.create_array(store, name="small", shape=data.shape, dtype="i4",
                               chunks=(4, 4), compressors=None)  # 64 bytes a chunk
    side = int((read.INLINE_BYTES // 4) ** 0.5)
    large = zarrx.create_array(store, name="large", shape=(side * 2, side * 2), dtype="i4",
                               chunks=(side, side))  # INLINE_BYTES a chunk: not tiny
    small[...] = data
    large[...] = np.arange(side * side * 4, dtype="<i4").reshape(side * 2, side * 2)
    with zarrx.config.set(threads=threads):
        store.singles, store.batches = 0, []
        np.testing.assert_array_equal(small[3:61:2, 5:], data[3:61:2, 5:])
        assert store.singles == 0
        assert sum(store.batches) == 15 * 15
        assert shared == []
        store.singles, store.batches = 0, []
        got = large[1:, :-1]
        assert store.singles == 4
        assert store.batches == []
        assert shared == [4]
    np.testing.assert_array_equal(
        got, np.arange(side * side * 4, dtype="<i4").reshape(side * 2, side * 2)[1:, :-1])


@pytest.mark.parametrize("latency", [0, 1 << 20])
def test_small_values_on_a_high_latency_store_are_one_request(latency: int) -> None:
    """A store whose requests cost more than reading ``read_latency_bytes`` more: a
    chunk or shard no larger than that is read whole, in one request, where a part would
    take two (a blosc frame's header, then its blocks; a shard's index, then its ranges)."""
    store = RoundsRecording(batched=True)
    store.read_latency_bytes = latency
    blosc = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                "shuffle": "shuffle"}}
    plain = zarrx.create_array(store, name="plain", shape=(512, 512), dtype="f4",
                               chunks=(256, 256), compressors=blosc)
    data = np.random.default_rng(0).random((512, 512), dtype="f4")
    plain[...] = data
    sharded = zarrx.create_array(store, name="sharded", shape=(512, 512), dtype="f4",
                                 chunks=(64, 64), shards=(256, 256), compressors=blosc)
    sharded[...] = data
    store.clear()
    assert plain[300, 7] == data[300, 7]
    if latency:
        assert store.calls == ["get"]
        assert store.gets == [("plain/c/1/0", None)]  # whole
    else:
        assert store.calls == ["read_rounds"]  # in part
        assert len(store.rounds) == 2
    store.clear()
    assert sharded[300, 7] == data[300, 7]
    if latency:
        assert store.rounds == [[("sharded/c/1/0", ByteRange(0))]]
    else:
        assert [len(r) for r in store.rounds] == [1, 1]
