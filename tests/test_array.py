"""Array reads and writes against NumPy, on random shapes, chunkings and selections."""

import threading
import time

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.runtime.executor import BackgroundWrites
from zarrx.storage import MemoryStore
from zarrx.testing.selections import numpy_indices

CODECS = [
    {"compressors": None},
    {"compressors": "auto"},
    {"compressors": {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3,
                                                        "shuffle": "shuffle"}}},
    {"compressors": [{"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}],
     "serializer": {"name": "bytes", "configuration": {"endian": "big"}}},
    {"order": "F"},
]


@st.composite
def arrays_and_selections(draw):
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=0, max_size=4)))
    selection = draw(numpy_indices(shape, wild=False))
    try:
        np.empty(shape)[selection]
    except IndexError:
        assume(False)  # indices NumPy refuses are tested in tests/selection
    chunks = tuple(draw(st.integers(1, max(n, 1) + 2)) for n in shape)
    dtype = draw(st.sampled_from(["int16", "float32", "float64", "uint8", "complex64", "bool"]))
    options = draw(st.sampled_from(CODECS))
    return shape, chunks, dtype, options, selection


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.integers(0, 100, size=shape) * 1.5).astype(dtype)


@settings(max_examples=150, deadline=None)
@given(arrays_and_selections())
def test_read_matches_numpy(case):
    shape, chunks, dtype, options, selection = case
    data = _data(shape, dtype)
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype=dtype, chunks=chunks, **options)
    a[...] = data
    expected = data[selection]
    got = a[selection]
    assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(np.asarray(a), data)


@settings(max_examples=150, deadline=None)
@given(arrays_and_selections(), st.integers(0, 2**16))
def test_write_matches_numpy(case, seed):
    shape, chunks, dtype, options, selection = case
    data = _data(shape, dtype)
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype=dtype, chunks=chunks,
                           fill_value=True if dtype == "bool" else 3, **options)
    a[...] = data
    expected = data.copy()
    value = _data(np.shape(expected[selection]), dtype, seed)
    expected[selection] = value
    a[selection] = value
    np.testing.assert_array_equal(np.asarray(a), expected)


def test_missing_chunks_read_as_fill_value():
    a = zarrx.create_array(MemoryStore(), shape=(10, 10), dtype="float32", chunks=(3, 4),
                           fill_value=-1.5)
    np.testing.assert_array_equal(a[...], np.full((10, 10), -1.5, "float32"))
    a[4:6, 4:6] = 2
    expected = np.full((10, 10), -1.5, "float32")
    expected[4:6, 4:6] = 2
    np.testing.assert_array_equal(a[...], expected)


def test_chunks_equal_to_fill_are_not_written():
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(8,), dtype="int32", chunks=(4,), fill_value=7)
    a[:] = 7
    assert [k for k in store.list() if k != "zarr.json"] == []
    a[:] = np.arange(8)
    assert sorted(k for k in store.list() if k != "zarr.json") == ["c/0", "c/1"]
    a[4:] = 7  # the second chunk is back to the fill value: erased
    assert sorted(k for k in store.list() if k != "zarr.json") == ["c/0"]
    with zarrx.config.set(write_empty_chunks=True):
        a[4:] = 7
    assert sorted(k for k in store.list() if k != "zarr.json") == ["c/0", "c/1"]


def test_zero_d_array():
    a = zarrx.create_array(MemoryStore(), shape=(), dtype="float64", fill_value=1.0)
    assert a[()] == 1.0
    a[...] = 4.5
    assert a[()] == 4.5
    assert a[...].shape == ()
    assert a.store.get("c") is not None
    with pytest.raises(TypeError, match="unsized"):
        len(a)


def test_zero_length_dimension():
    a = zarrx.create_array(MemoryStore(), shape=(0, 5), dtype="int8", chunks=(2, 2))
    assert a[...].shape == (0, 5)
    a[...] = np.zeros((0, 5))
    assert np.asarray(a).shape == (0, 5)


def test_array_protocol_and_len():
    a = zarrx.create_array(MemoryStore(), shape=(6, 4), dtype="int32", chunks=(4, 4))
    a[...] = np.arange(24).reshape(6, 4)
    assert len(a) == 6
    as_float = np.asarray(a, dtype="float64")
    assert as_float.dtype == np.float64
    np.testing.assert_array_equal(as_float, np.arange(24).reshape(6, 4))
    with pytest.raises(ValueError, match="copy=False"):
        a.__array__(copy=False)
    np.testing.assert_array_equal(np.array(list(a)), np.arange(24).reshape(6, 4))


def test_dask_from_array():
    import dask.array as da

    a = zarrx.create_array(MemoryStore(), shape=(20, 20), dtype="float64", chunks=(5, 5))
    data = np.arange(400, dtype="float64").reshape(20, 20)
    a[...] = data
    d = da.from_array(a, chunks=a.chunks)
    assert float(d.sum().compute()) == data.sum()
    np.testing.assert_array_equal(d[::3, 2:].compute(), data[::3, 2:])


def test_huge_shape_indexes_exactly():
    n = 2**62
    a = zarrx.create_array(MemoryStore(), shape=(n,), dtype="uint8", chunks=(2**31,))
    a[n - 2:] = [1, 2]
    assert a[n - 1] == 2
    assert a.nchunks == 2**31
    assert list(a[n - 3 :]) == [0, 1, 2]
    assert a.store.list_prefix("c/") == [f"c/{(n - 2) // 2**31}"]


class _SlowStore(MemoryStore):
    """Writes take a while (a store's latency, so that writes overlap the encoding of the
    chunks after them; nothing waits on it) and one key fails."""

    def __init__(self, fail: str | None = None) -> None:
        super().__init__()
        self.fail = fail

    def set(self, key, value):
        if key == self.fail:
            raise zarrx.errors.StoreError(f"cannot write {key!r}: disk full")
        time.sleep(0.002)
        super().set(key, value)


def test_writes_are_done_when_setitem_returns():
    store = _SlowStore()
    a = zarrx.create_array(store, shape=(64, 64), chunks=(8, 8), dtype="int32")
    values = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    a[...] = values
    assert len([k for k in store.list() if k.startswith("c/")]) == 64
    np.testing.assert_array_equal(a[...], values)


def test_a_failed_background_write_is_raised():
    store = _SlowStore(fail="c/3/5")
    a = zarrx.create_array(store, shape=(64, 64), chunks=(8, 8), dtype="int32")
    with pytest.raises(zarrx.errors.StoreError, match="c/3/5"):
        a[...] = 1
    assert "c/3/5" not in store.list()


def test_one_thread_means_the_store_is_only_called_by_the_caller():
    callers = set()

    class Recording(MemoryStore):
        def set(self, key, value):
            callers.add(threading.current_thread().name)
            super().set(key, value)

    a = zarrx.create_array(Recording(), shape=(64, 64), chunks=(8, 8), dtype="int32")
    callers.clear()
    with zarrx.config.set(threads=1):
        a[...] = 1
    assert callers == {threading.current_thread().name}


class _FailsWhenTold(MemoryStore):
    """Records every write; the write of ``bad`` waits until ``go`` is set, then fails."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()
        self.attempts: list[str] = []

    def set(self, key, value):
        self.attempts.append(key)
        if key == "bad":
            self.go.wait()
            raise zarrx.errors.StoreError("cannot write 'bad': disk full")
        super().set(key, value)


def test_a_failed_write_stops_the_writes_that_follow():
    """Writes handed over before a failure finish; once it has failed, the next write
    raises that failure and never reaches the store (ordered by events, not by a clock)."""
    store = _FailsWhenTold()
    writes = BackgroundWrites(store, limit=4)
    writes.set("before", b"1")
    writes.set("bad", b"2")
    writes.set("during", b"3")  # handed over while 'bad' is still being written
    store.go.set()
    with pytest.raises(zarrx.errors.StoreError, match="'bad'"):
        writes.wait()
    with pytest.raises(zarrx.errors.StoreError, match="'bad'"):
        writes.set("after", b"4")
    assert sorted(store.attempts) == ["bad", "before", "during"]
    assert sorted(store.list()) == ["before", "during"]


def test_a_write_waiting_for_a_slot_is_stopped_by_a_failure():
    """A writer blocked on the in-flight limit when the write ahead of it fails gets that
    failure, and its value is never handed to the store."""
    store = _FailsWhenTold()
    writes = BackgroundWrites(store, limit=1)
    writes.set("bad", b"1")  # takes the only slot and waits for 'go'
    outcome: list[BaseException] = []

    def next_write() -> None:
        try:
            writes.set("next", b"2")
        except BaseException as e:
            outcome.append(e)

    writer = threading.Thread(target=next_write)
    writer.start()
    store.go.set()
    writer.join()
    assert len(outcome) == 1
    assert isinstance(outcome[0], zarrx.errors.StoreError)
    assert "'bad'" in str(outcome[0])
    assert store.attempts == ["bad"]
    with pytest.raises(zarrx.errors.StoreError, match="'bad'"):
        writes.wait()


@pytest.mark.parametrize("compressors", [None, [{"name": "gzip"}]])
def test_big_endian_unicode_round_trips(compressors):
    a = zarrx.create_array(MemoryStore(), shape=(5,), chunks=(2,), dtype="<U3",
                           serializer={"name": "bytes", "configuration": {"endian": "big"}},
                           compressors=compressors)
    values = np.array(["a", "bcd", "é", "", "xyz"])
    a[...] = values
    np.testing.assert_array_equal(a[...], values)
    np.testing.assert_array_equal(a[1:4], values[1:4])


def test_the_engine_view_follows_the_metadata_it_was_built_for():
    """The chunk store is built on first use, for the metadata the array has then: after
    a resize (new metadata) reads and writes use the new shape, never a stale view."""
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(10, 10), chunks=(4, 4), dtype="int32", fill_value=-1)
    b = zarrx.open_array(store, mode="r+")
    assert b._chunk_store is b._chunk_store  # built once for one metadata
    b[...] = np.arange(100, dtype="int32").reshape(10, 10)
    view = b._chunk_store
    b.resize(12, 6)
    assert b._chunk_store is not view
    assert b._chunk_store.meta is b.metadata
    b[10:, :] = 7
    expected = np.full((12, 6), -1, dtype="int32")
    expected[:10] = np.arange(100, dtype="int32").reshape(10, 10)[:, :6]
    expected[10:] = 7
    np.testing.assert_array_equal(b[...], expected)
    np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[...], expected)
    assert a.shape == (10, 10)  # another object keeps the metadata it has


def test_threads_reading_a_new_array_object_at_once_all_read_it_whole():
    """The first reads of an Array object, from eight threads at the same instant (each
    may build the engine's view): every one returns the data."""
    store = MemoryStore()
    data = np.arange(48 * 40, dtype="float64").reshape(48, 40)
    zarrx.create_array(store, shape=data.shape, chunks=(6, 5), dtype=data.dtype)[...] = data
    for _ in range(20):
        a = zarrx.open_array(store, mode="r")
        barrier = threading.Barrier(8)
        got: list = [None] * 8

        def read(i, a=a, barrier=barrier, got=got):
            barrier.wait()
            got[i] = a[...]

        threads = [threading.Thread(target=read, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for g in got:
            np.testing.assert_array_equal(g, data)
