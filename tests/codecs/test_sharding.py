"""sharding_indexed: layout, partial reads through byte ranges, and corrupt shards."""

import numpy as np
import pytest

import zarrx
from zarrx.abc.store import ByteRange, answer_rounds
from zarrx.errors import ChecksumError, CodecError, MetadataError
from zarrx.storage import MemoryStore
from zarrx.testing.rounds import Noted


class CountingStore(MemoryStore):
    """A memory store that records every read request."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, ByteRange | None]] = []

    def get(self, key, byte_range=None):
        self.requests.append((key, byte_range))
        return super().get(key, byte_range)

    def get_many(self, requests):
        return [self.get(k, r) for k, r in requests]

    def read_rounds(self, reads):
        for key, reader in reads:  # each round's ranges noted, as a store of ranges reads
            answer_rounds(Noted(reader, key, self.requests), key, MemoryStore.get(self, key))


def _sharded(store, location="end", **kwargs):
    codecs = kwargs.pop("codecs", None)
    a = zarrx.create_array(store, shape=(40, 30), dtype="int32", chunks=(5, 5), shards=(20, 15),
                           **kwargs)
    if location != "end":
        config = a.metadata.codecs.codecs[0].to_config()
        config["index_location"] = location
        if codecs is not None:
            config["codecs"] = codecs
        a = zarrx.create_array(store, shape=(40, 30), dtype="int32", chunks=(20, 15),
                               serializer={"name": "sharding_indexed", "configuration": config},
                               compressors=None, overwrite=True, **kwargs)
    return a


@pytest.mark.parametrize("location", ["start", "end"])
def test_round_trip_and_layout(location):
    store = MemoryStore()
    a = _sharded(store, location)
    assert a.chunks == (5, 5)
    assert a.shards == (20, 15)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    data[:5, :5] = 0  # an inner chunk equal to the fill value: not stored
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[3:33:4, ::-7], data[3:33:4, ::-7])
    shard = store.get("c/0/0")
    n_inner = 4 * 3
    index_nbytes = n_inner * 16 + 4
    raw_index = shard[:index_nbytes] if location == "start" else shard[-index_nbytes:]
    index = np.frombuffer(raw_index[:-4], dtype="<u8").reshape(4, 3, 2)
    assert (index[0, 0] == 2**64 - 1).all()
    assert (index[1:, :] != 2**64 - 1).all()
    assert sorted(store.list()) == ["c/0/0", "c/0/1", "c/1/0", "c/1/1", "zarr.json"]


def test_partial_read_fetches_index_and_needed_chunks_only():
    store = CountingStore()
    a = _sharded(store, compressors=None)
    a[...] = np.arange(1200, dtype="int32").reshape(40, 30)
    store.requests.clear()
    assert a[7, 8] == 7 * 30 + 8
    ranges = [r for k, r in store.requests if k == "c/0/0"]
    assert len(ranges) == 2
    assert ranges[0] == ByteRange(-(12 * 16 + 4))  # the index, from the end
    assert ranges[1].length == 5 * 5 * 4  # one uncompressed inner chunk
    store.requests.clear()
    np.testing.assert_array_equal(a[:20, :15], np.arange(1200).reshape(40, 30)[:20, :15])
    assert store.requests == [("c/0/0", None)]  # a whole shard is one plain read


def test_empty_shard_is_not_written_and_reads_fill():
    store = MemoryStore()
    a = _sharded(store, fill_value=-1)
    a[:20, :15] = -1
    assert store.list() == ["zarr.json"]
    assert (a[...] == -1).all()


def test_partial_write_read_modify_writes_the_shard():
    a = _sharded(MemoryStore())
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    a[...] = data
    a[2:3, 4:9] = 99
    data[2:3, 4:9] = 99
    np.testing.assert_array_equal(a[...], data)


def test_nested_sharding():
    inner = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [5, 5], "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
    }}
    a = zarrx.create_array(MemoryStore(), shape=(40, 30), dtype="float64", chunks=(20, 15),
                           serializer={"name": "sharding_indexed", "configuration": {
                               "chunk_shape": [10, 15], "codecs": [inner]}},
                           compressors=None)
    data = np.random.default_rng(1).standard_normal((40, 30))
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[11:13, 3], data[11:13, 3])


def test_shard_shape_must_be_a_multiple():
    with pytest.raises(MetadataError, match="multiple"):
        zarrx.create_array(MemoryStore(), shape=(10,), dtype="i1", chunks=(3,), shards=(4,))


@pytest.fixture
def filled():
    store = MemoryStore()
    a = _sharded(store, compressors=None)
    a[...] = np.arange(1200, dtype="int32").reshape(40, 30)
    return store, a


def test_truncated_shard(filled):
    store, a = filled
    shard = store.get("c/0/0")
    for cut in (0, 1, 50, len(shard) // 2, len(shard) - 1):
        store.set("c/0/0", shard[:cut])
        with pytest.raises(CodecError, match="c/0/0"):
            a[:20, :15]
        with pytest.raises(CodecError):
            a[1, 1]


def test_corrupt_index_checksum(filled):
    store, a = filled
    shard = bytearray(store.get("c/0/0"))
    shard[-10] ^= 0x01
    store.set("c/0/0", bytes(shard))
    with pytest.raises(ChecksumError):
        a[:20, :15]
    with pytest.raises(ChecksumError):
        a[0, 0]


def test_index_pointing_outside_the_shard(filled):
    store, a = filled
    shard = store.get("c/0/0")
    index_nbytes = 12 * 16 + 4
    index = np.frombuffer(shard[-index_nbytes:-4], dtype="<u8").copy().reshape(12, 2)
    index[3] = (len(shard) - 10, 100)  # runs past the end
    codec = a.metadata.codecs.codecs[0].index_codecs.codecs[1]
    raw = codec.encode(index.tobytes())
    store.set("c/0/0", shard[:-index_nbytes] + bytes(raw))
    with pytest.raises(CodecError, match="outside the shard"):
        a[:20, :15]
    with pytest.raises(CodecError, match="truncated"):
        a[5, 0]  # inner chunk (1, 0) is entry 3: its ranged read comes back short


def _threads_of_inner_chunks(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Record which threads decode inner chunks."""
    import threading

    import zarrx.codecs.sharding as sharding
    import zarrx.engine.shards as engine

    seen: set[str] = set()

    def spy(real):
        def decode(*args, **kwargs):
            seen.add(threading.current_thread().name)
            return real(*args, **kwargs)
        return decode

    # one inner chunk at a time, or a shard's inner chunks read whole, a slice at a time
    monkeypatch.setattr(sharding, "place", spy(sharding.place))
    monkeypatch.setattr(engine, "place_each", spy(engine.place_each))
    return seen


def test_one_big_shard_uses_the_thread_pool(monkeypatch: pytest.MonkeyPatch):
    """A single shard is all the work there is: its inner chunks go to the pool, where a
    lone chunk task would otherwise decode them one by one in the calling thread."""
    a = zarrx.create_array(MemoryStore(), shape=(64, 64), chunks=(8, 8), shards=(64, 64),
                           dtype="int32", compressors=[{"name": "blosc"}])
    values = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    with zarrx.config.set(threads=2):
        a[...] = values
        seen = _threads_of_inner_chunks(monkeypatch)
        np.testing.assert_array_equal(a[...], values)
    assert seen
    assert all(name.startswith("zarrx_") for name in seen), seen


def test_many_shards_do_not_submit_from_the_pool(monkeypatch: pytest.MonkeyPatch):
    """With several shards the chunk pool works on shards; a shard's inner chunks run in
    the task that holds it: no task submits to the chunk pool (which could deadlock it)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    a = zarrx.create_array(MemoryStore(), shape=(64, 64), chunks=(8, 8), shards=(16, 64),
                           dtype="int32", compressors=[{"name": "blosc"}])
    values = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    submitters: list[str] = []
    real_submit = ThreadPoolExecutor.submit

    def submit(self, *args, **kwargs):
        if self._thread_name_prefix == "zarrx":  # the chunk pool (writes go to "zarrx-io")
            submitters.append(threading.current_thread().name)
        return real_submit(self, *args, **kwargs)

    monkeypatch.setattr(ThreadPoolExecutor, "submit", submit)
    with zarrx.config.set(threads=2):
        a[...] = values
        np.testing.assert_array_equal(a[...], values)
    assert submitters  # the shards themselves went to the pool
    assert not [name for name in submitters if name.startswith("zarrx_")], submitters


def test_a_store_returning_too_few_ranges_is_a_truncation_error():
    """A faulty store that answers fewer byte ranges than asked is a CodecError, not a
    stray IndexError or a silent fill value."""

    class Shorted(Noted):
        def receive(self, values):
            super().receive(values[:-1] if self.round else values)  # the index, then too few

    class Short(MemoryStore):
        def get_many(self, requests):
            values = super().get_many(requests)
            ranged = all(r is not None and r.start >= 0 for _, r in requests)
            return values[:-1] if ranged else values  # the indexes, then too few

        def read_rounds(self, reads):
            for key, reader in reads:
                answer_rounds(Shorted(reader, key, []), key, self.get(key))

    store = Short()
    a = zarrx.create_array(store, shape=(8, 8), dtype="int32", chunks=(4, 4), shards=(8, 8))
    a[...] = np.arange(64, dtype="int32").reshape(8, 8)
    with pytest.raises(CodecError, match="truncated"):
        a[1:3, 1:7]  # two of the four inner chunks: the index, then their ranges


@pytest.mark.parametrize(("fill_a", "fill_b", "values"), [
    (True, False, [False, True, False, False]),
    (np.nan, 0.0, [0.0, np.nan, 0.0, 0.0]),
    (0.0, -0.0, [-0.0, 0.0, -0.0, -0.0]),
])
def test_arrays_sharing_codecs_but_not_fill_values_keep_their_own(tmp_path, fill_a, fill_b,
                                                                   values):
    """Two arrays with the same codec list share one parsed pipeline; the shard layout
    prepared for one's fill value must not decide which inner chunks of the other are
    "fill" and left out (they would then read back wrong in any other process)."""
    import zarr

    dtype = "bool" if isinstance(fill_a, bool) else "f8"
    kw = {"shape": (4,), "dtype": dtype, "chunks": (1,), "shards": (2,)}
    zarrx.create_array(str(tmp_path / "a"), fill_value=fill_a, **kw)
    zarrx.create_array(str(tmp_path / "b"), fill_value=fill_b, **kw)
    a = zarrx.open_array(str(tmp_path / "a"), mode="r+")
    a[0] = values[0]  # prepares a's shard layout
    b = zarrx.open_array(str(tmp_path / "b"), mode="r+")
    assert b.metadata.codecs is a.metadata.codecs  # shared: the case that matters
    b[...] = values
    expected = np.array(values, dtype=dtype)
    np.testing.assert_array_equal(b[...], expected)
    other = zarr.open_array(str(tmp_path / "b"), mode="r")[...]  # another reader's view
    np.testing.assert_array_equal(np.signbit(other), np.signbit(expected))
    np.testing.assert_array_equal(other, expected)
