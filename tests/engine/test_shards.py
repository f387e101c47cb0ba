"""Sharded arrays read and written inner chunk by inner chunk: a partial write re-encodes
only the inner chunks it touches and keeps the others' stored bytes; neighbouring inner
chunks are read as one range; and any sequence of reads and writes equals NumPy's."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from tests.engine._rounds import RoundsRecording
from zarrx.abc.codec import ChunkSpec
from zarrx.abc.store import ByteRange
from zarrx.codecs.pipeline import PreparedChain
from zarrx.storage import LocalStore, MemoryStore
from zarrx.testing.selections import (
    assigned_values,
    numpy_indices,
    orthogonal_indices,
    outer_selection,
)

EMPTY = 2**64 - 1


def _array(store: Any, location: str = "end", **kwargs: Any) -> Any:
    """(40, 30) int32 in shards of (20, 15), inner chunks of (5, 5): 4 x 3 per shard."""
    inner = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if kwargs.pop("blosc", False):
        inner.append({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                         "shuffle": "shuffle", "typesize": 4}})
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [5, 5], "codecs": inner, "index_location": location}}
    return zarrx.create_array(store, shape=kwargs.pop("shape", (40, 30)), dtype="int32",
                              chunks=(20, 15), serializer=sharding, compressors=None, **kwargs)


def _inner_chunks(shard: bytes, location: str = "end") -> dict[tuple[int, int], bytes]:
    """The stored bytes of each inner chunk of a (20, 15) shard of (5, 5) inner chunks."""
    nbytes = 12 * 16 + 4
    raw = shard[:nbytes] if location == "start" else shard[-nbytes:]
    index = np.frombuffer(raw[:-4], dtype="<u8").reshape(4, 3, 2)
    return {(i, j): shard[int(o):int(o) + int(n)] for (i, j) in np.ndindex(4, 3)
            for o, n in [index[i, j]] if o != EMPTY}


def _conditional_store() -> Any:
    obstore = pytest.importorskip("obstore")
    from zarrx.stores.obstore import ObstoreStore

    return ObstoreStore(obstore.store.MemoryStore())


#: The three ways a shard is updated: a splice joined from the value read under a lock
#: (memory), spliced from the stored file (local), joined and written conditionally.
STORES: dict[str, Callable[[Path], Any]] = {
    "memory": lambda tmp_path: MemoryStore(),
    "local": lambda tmp_path: LocalStore(tmp_path / "store"),
    "conditional": lambda tmp_path: _conditional_store(),
}


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("location", ["start", "end"])
def test_partial_write_reencodes_only_the_touched_inner_chunks(
        location: str, kind: str, tmp_path: Path, monkeypatch: Any) -> None:
    store = STORES[kind](tmp_path)
    a = _array(store, location, blosc=True)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    a[...] = data
    before = _inner_chunks(store.get("c/0/0"), location)
    assert len(before) == 12
    encoded: list[tuple[int, ...]] = []
    real_encode = PreparedChain.encode

    def encode(self: PreparedChain, chunk: np.ndarray) -> Any:
        encoded.append(self.spec.shape)
        return real_encode(self, chunk)

    real_many = PreparedChain.encode_many

    def encode_many(self: PreparedChain, chunks: list[np.ndarray]) -> Any:
        encoded.extend([self.spec.shape] * len(chunks))
        with monkeypatch.context() as inside:  # (one chunk counted once)
            inside.setattr(PreparedChain, "encode", real_encode)
            return real_many(self, chunks)

    monkeypatch.setattr(PreparedChain, "encode", encode)
    monkeypatch.setattr(PreparedChain, "encode_many", encode_many)
    a[5:10, 5:10] = -7  # inner chunk (1, 1), covered whole
    a[12, 3] = -8  # part of inner chunk (2, 0): read, modified, written
    data[5:10, 5:10] = -7
    data[12, 3] = -8
    # the two inner chunks and the two updated indexes: nothing else re-encoded
    assert sorted(encoded) == [(4, 3, 2), (4, 3, 2), (5, 5), (5, 5)]
    after = _inner_chunks(store.get("c/0/0"), location)
    assert set(after) == set(before)
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {(1, 1), (2, 0)}  # the others' stored bytes are untouched
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("kind", STORES)
def test_inner_chunks_written_as_fill_become_empty_and_an_empty_shard_is_erased(
        kind: str, tmp_path: Path) -> None:
    store = STORES[kind](tmp_path)
    a = _array(store, fill_value=-1)
    a[...] = np.arange(1200, dtype="int32").reshape(40, 30)
    a[0:5, 0:5] = -1
    a[7, 7:12] = -1  # part of (1, 1) and (1, 2): they still hold other values
    chunks = _inner_chunks(store.get("c/0/0"))
    assert (0, 0) not in chunks
    assert {(1, 1), (1, 2)} <= set(chunks)
    a[0:20, 0:14] = -1
    assert set(_inner_chunks(store.get("c/0/0"))) == {(0, 2), (1, 2), (2, 2), (3, 2)}
    a[0:20, 10:15] = -1  # the last inner chunks of the shard: it is erased
    if store.conditional_erase:
        assert store.get("c/0/0") is None
    else:  # obstore cannot erase on condition: the shard is written empty, its index alone
        assert len(store.get("c/0/0")) == 12 * 16 + 4
        assert _inner_chunks(store.get("c/0/0")) == {}
    assert "c/0/1" in store.list()


@pytest.mark.parametrize("kind", STORES)
def test_threads_writing_different_inner_chunks_of_one_shard_lose_nothing(
        kind: str, tmp_path: Path) -> None:
    """Twelve threads, each writing its own inner chunk of one shard again and again (and
    one of them a part of its inner chunk): every update keeps the others' inner chunks."""
    store = STORES[kind](tmp_path)
    a = _array(store, blosc=True)
    a[...] = 1
    before = _inner_chunks(store.get("c/0/0"))

    def work(n: int) -> None:
        i, j = divmod(n, 3)
        for r in range(4):
            if n == 11:
                a[i * 5 + 1, j * 5 + 2] = 100 * n + r  # part of an inner chunk
            else:
                a[i * 5:(i + 1) * 5, j * 5:(j + 1) * 5] = 100 * n + r

    with ThreadPoolExecutor(12) as pool:
        list(pool.map(work, range(12)))
    expected = np.ones((40, 30), dtype="int32")
    for n in range(11):
        i, j = divmod(n, 3)
        expected[i * 5:(i + 1) * 5, j * 5:(j + 1) * 5] = 100 * n + 3
    expected[16, 12] = 1103
    np.testing.assert_array_equal(a[...], expected)
    after = _inner_chunks(store.get("c/0/0"))
    assert after.keys() == before.keys()
    assert {k for k in before if before[k] == after[k]} == set()  # every one rewritten


def test_a_write_covering_whole_shards_reads_nothing() -> None:
    store = RoundsRecording()
    a = _array(store)
    a[...] = 1
    store.clear()
    a[20:40, :] = 2  # shards c/1/0 and c/1/1, whole
    a[0:20, 0:15] = np.arange(300, dtype="int32").reshape(20, 15)
    assert store.calls == []
    assert store.rounds == []
    a[0, 0] = 5  # a part: read under the shard's lock, by its update
    assert store.calls == ["get"]
    assert store.gets == [("c/0/0", None)]


@pytest.mark.parametrize("threads", [1, 2])
def test_shards_written_whole_are_the_codecs_bytes_written_in_parts(
    tmp_path: Path, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write of whole shards hands each shard to the store in parts (``set_parts``, never
    joined first), once; each stored shard is what the sharding codec encodes the same
    elements to, and a shard left all fill value is erased."""
    store = LocalStore(tmp_path / "store")
    a = _array(store, blosc=True)
    a[...] = 7
    handed: list[tuple[str, int | None]] = []
    real = LocalStore.atomic_set_parts

    def spy(self: LocalStore, key: str, parts: Any) -> None:
        handed.append((key, None if parts is None else len(parts)))
        real(self, key, parts)

    monkeypatch.setattr(LocalStore, "atomic_set_parts", spy)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    data[20:40, 15:30] = 0  # shard c/1/1 all fill value
    with zarrx.config.set(threads=threads):
        a[...] = data
    # 12 inner chunks + the index each; the shard left all fill value erased, atomically
    assert sorted(handed) == [("c/0/0", 13), ("c/0/1", 13), ("c/1/0", 13), ("c/1/1", None)]
    assert store.get("c/1/1") is None
    codec = a.metadata.codecs.codecs[0]
    spec = ChunkSpec((20, 15), np.dtype("int32"), 0)
    for key, (i, j) in (("c/0/0", (0, 0)), ("c/0/1", (0, 1)), ("c/1/0", (1, 0))):
        shard = data[i * 20:(i + 1) * 20, j * 15:(j + 1) * 15]
        assert store.get(key) == bytes(codec.encode(shard, spec))
    np.testing.assert_array_equal(a[...], data)


def test_neighbouring_inner_chunks_are_one_read() -> None:
    store = RoundsRecording()
    a = _array(store)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    a[...] = data
    store.clear()
    np.testing.assert_array_equal(a[6:8, :15], data[6:8, :15])  # inner chunks (1, 0..2)
    assert store.rounds == [
        [("c/0/0", ByteRange(-(12 * 16 + 4)))],  # the index, then
        [("c/0/0", ByteRange(3 * 100, 3 * 100))],  # three neighbours, one read
    ]
    assert store.calls == ["read_rounds"]
    store.clear()
    np.testing.assert_array_equal(a[2:8, 2], data[2:8, 2])  # (0, 0) and (1, 0): apart
    assert [len(r) for r in store.rounds] == [1, 2]


@pytest.mark.parametrize("location", ["start", "end"])
def test_a_read_of_many_shards_is_one_read_in_rounds(location: str) -> None:
    """Every shard a batch needs is read in the same rounds: the shards needed whole at
    once with the other shards' indexes, then those shards' inner chunks."""
    store = RoundsRecording(batched=True)
    a = _array(store, location)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    a[...] = data
    a[20:40, 15:30] = 0  # shard c/1/1 all fill value: not stored
    data[20:40, 15:30] = 0
    store.clear()
    np.testing.assert_array_equal(a[2:38, 1:30:9], data[2:38, 1:30:9])  # 8 of 12 each
    index = ByteRange(0, 196) if location == "start" else ByteRange(-196)
    first, second = store.rounds
    assert sorted(first) == [("c/0/0", index), ("c/0/1", index), ("c/1/0", index),
                             ("c/1/1", index)]
    assert {k for k, _ in second} == {"c/0/0", "c/0/1", "c/1/0"}  # c/1/1 is absent
    store.clear()
    np.testing.assert_array_equal(a[1:39, 1:29], data[1:39, 1:29])  # every inner chunk
    assert store.rounds == [[(f"c/{i}/{j}", ByteRange(0)) for i in (0, 1) for j in (0, 1)]]
    assert store.calls == ["read_rounds"]


def test_a_small_read_is_one_read_of_its_shard(tmp_path: Path) -> None:
    """A read inside one inner chunk: one ``read_rounds`` of its shard (the index, then the
    inner chunk: one open of the shard on a local store), nothing else read."""
    calls: list[str] = []

    class Counting(LocalStore):
        def get(self, key: str, byte_range: Any = None) -> bytes | None:
            calls.append("get")
            return super().get(key, byte_range)

        def get_many(self, requests: Any) -> list[bytes | None]:
            calls.append("get_many")
            return super().get_many(requests)

        def read_rounds(self, reads: Any) -> None:
            calls.append(f"read_rounds {len(reads)}")
            super().read_rounds(reads)

    a = _array(Counting(tmp_path / "s"), blosc=True)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    a[...] = data
    a[25:30, 20:25] = 0  # an inner chunk of fill values: not stored
    for selection in [(6, 4), (slice(6, 8), slice(0, 4)), (slice(26, 29), slice(21, 25))]:
        calls.clear()
        np.testing.assert_array_equal(a[selection], np.where(
            (np.arange(40)[:, None] // 5 == 5) & (np.arange(30) // 5 == 4), 0, data)[selection])
        assert calls == ["read_rounds 1"]
    b = _array(Counting(tmp_path / "absent"))
    calls.clear()
    assert b[3, 3] == 0  # no shard: the fill value
    assert calls == ["read_rounds 1"]


def test_edge_shards_stick_out_of_the_array() -> None:
    """v3 edge shards are full-size: inner chunks wholly outside the array are never
    stored, and what an update does not touch is kept."""
    store = MemoryStore()
    a = _array(store, shape=(27, 17))
    data = np.arange(27 * 17, dtype="int32").reshape(27, 17) + 1
    a[...] = data
    assert set(_inner_chunks(store.get("c/1/1"))) == {(0, 0), (1, 0)}  # rows 20..29, col 15
    a[25:27, 15:17] = 0
    data[25:27, 15:17] = 0
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[::-3, 16], data[::-3, 16])


# -- NumPy as the oracle ---------------------------------------------------------------------
SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def sharded_arrays(draw: Any, directory: Callable[[], Path],
                   local: bool = True) -> tuple[np.ndarray, Any]:
    """A sharded array (any index location, edge shards that stick out, shards left
    absent and inner chunks left empty; in memory, or in a new ``directory()``, where
    updates are spliced from the stored files) and its NumPy twin."""
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    shards = tuple(c * draw(st.integers(1, 3)) for c in inner)
    shape = tuple(draw(st.integers(1, 9)) for _ in range(ndim))
    location = draw(st.sampled_from(["start", "end"]))
    codecs: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if draw(st.booleans()):
        codecs.append({"name": "zstd", "configuration": {"level": 1}})
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs, "index_location": location}}
    store = LocalStore(directory()) if local and draw(st.booleans()) else RoundsRecording()
    a = zarrx.create_array(store, shape=shape, dtype="int16", chunks=shards,
                           serializer=sharding, compressors=None, fill_value=0)
    x = np.zeros(shape, dtype="int16")
    if draw(st.booleans()):  # some data; the rest (and some whole shards) stays absent
        region = tuple(slice(0, draw(st.integers(0, n))) for n in shape)
        x[region] = (np.arange(x[region].size) % 50 + 1).reshape(x[region].shape)
        a[region] = x[region]
    return x, a


@SETTINGS
@given(st.data())
def test_reads_and_writes_of_sharded_arrays_match_numpy(
        tmp_path_factory: pytest.TempPathFactory, data: Any) -> None:
    x, a = data.draw(sharded_arrays(lambda: tmp_path_factory.mktemp("sharded")))
    for _ in range(data.draw(st.integers(1, 3))):
        if data.draw(st.booleans()):
            idx = data.draw(orthogonal_indices(x.shape))
            np.testing.assert_array_equal(a.oindex[idx], outer_selection(x, idx))
            shape = outer_selection(x, idx).shape
            start = data.draw(st.integers(-3, 3))  # 0: fill values, written as such
            value = (np.arange(start, start + int(np.prod(shape))) % 5).astype(x.dtype)
            value = value.reshape(shape)
            expected = x.copy()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a.oindex[idx] = value
                _oindex_assign(expected, idx, value)
        else:
            idx = data.draw(numpy_indices(x.shape, wild=False))
            try:
                selected = x[idx]
            except (IndexError, TypeError, ValueError):
                continue  # refusals are the oracle test's (tests/selection)
            value = data.draw(assigned_values(np.shape(selected), x.dtype, wild=False))
            expected = x.copy()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    expected[idx] = value
                except (IndexError, TypeError, ValueError, OverflowError):
                    continue
                a[idx] = value
            np.testing.assert_array_equal(a[idx], expected[idx])
        x = expected
        np.testing.assert_array_equal(a[...], x)


def _oindex_assign(x: np.ndarray, sel: tuple[Any, ...], value: Any) -> None:
    """``x.oindex[sel] = value`` in NumPy: through the open mesh of the axes' indices."""
    axes = []
    for item, n in zip(sel, x.shape):
        if isinstance(item, int | np.integer):
            axes.append(np.array([item]))
        else:
            axes.append(np.arange(n)[item])
    mesh = np.ix_(*axes)
    shape = tuple(len(ix) for ix in axes)
    result_shape = outer_selection(x, sel).shape
    x[mesh] = np.broadcast_to(np.asarray(value, dtype=x.dtype), result_shape).reshape(shape)


# -- shards of uncompressed inner chunks: placed by one kernel call --------------------------
#: One dtype per element size (and complex, whose halves swap on their own).
KERNEL_DTYPES = ["uint8", "int16", "float32", "int64", "complex64", "complex128", "<U2"]


@st.composite
def uncompressed_shards(draw: Any) -> tuple[np.ndarray, Any]:
    """An array whose inner chunks are mostly the ``bytes`` codec alone (either byte
    order, the index at either end, edge shards, absent shards and empty inner chunks),
    and its twin."""
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    shards = tuple(c * draw(st.integers(1, 3)) for c in inner)
    shape = tuple(draw(st.integers(1, 10)) for _ in range(ndim))
    dtype = np.dtype(draw(st.sampled_from(KERNEL_DTYPES)))
    endian = draw(st.sampled_from(["little", "big"]))
    codecs: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": endian}}]
    compressed = draw(st.sampled_from([None, "zstd", "gzip"]))
    if compressed:  # decoded inner chunk by inner chunk, through one scratch chunk
        codecs.append({"name": compressed, "configuration": {"level": 1}})
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs,
        "index_location": draw(st.sampled_from(["start", "end"]))}}
    fill = np.zeros((), dtype)[()]
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype=dtype, chunks=shards,
                           serializer=sharding, compressors=None, fill_value=fill)
    x = np.full(shape, fill, dtype)
    seed = draw(st.integers(0, 2**32 - 1))
    values = np.random.default_rng(seed).integers(1, 1000, shape)
    keep = np.random.default_rng(seed + 1).random(shape) < draw(st.sampled_from([0.0, 0.3, 1.0]))
    x[keep] = values[keep].astype(str) if dtype.kind == "U" else values[keep].astype(dtype)
    a[...] = x  # inner chunks left all fill are not stored, nor are empty shards
    return x, a


@SETTINGS
@given(uncompressed_shards(), st.data())
def test_the_batch_kernel_matches_the_chunk_by_chunk_path(
        case: tuple[np.ndarray, Any], data: Any) -> None:
    """Inner chunks placed a batch at a time (the batch kernel, where the inner chain
    allows) against NumPy and against placing each inner chunk on its own."""
    import zarrx.engine.read as engine

    x, a = case
    whole = tuple(slice(0, data.draw(st.integers(0, n))) for n in x.shape)
    for idx in [(Ellipsis,), whole, data.draw(numpy_indices(x.shape, wild=False))]:
        try:
            expected = x[idx]
        except (IndexError, TypeError, ValueError):
            continue
        got = a[idx]
        np.testing.assert_array_equal(got, expected)
        with pytest.MonkeyPatch.context() as mp:  # the inner chunks decoded one by one
            mp.setattr(engine, "_kernel", lambda *args: None)
            np.testing.assert_array_equal(a[idx], got)


@SETTINGS
@given(st.data())
def test_reads_inside_one_inner_chunk_match_numpy_and_read_it_alone(data: Any) -> None:
    """A selection inside one inner chunk: NumPy's result, from one read of its shard —
    the index, then that inner chunk's bytes (nothing when it is not stored)."""
    x, a = data.draw(sharded_arrays(lambda: Path("unused"), local=False))
    store = a.store
    inner = a.chunks
    corner = [data.draw(st.integers(0, n - 1)) for n in x.shape]
    idx = []
    for c, size, n in zip(corner, inner, x.shape):
        lo = c // size * size
        hi = min(lo + size, n)
        start = data.draw(st.integers(lo, hi - 1))
        kind = data.draw(st.sampled_from(["int", "slice", "negative"]))
        if kind == "int":
            idx.append(start - n if data.draw(st.booleans()) else start)
        elif kind == "slice":
            idx.append(slice(start, data.draw(st.integers(start + 1, hi)),
                             data.draw(st.integers(1, 3))))
        else:
            idx.append(slice(data.draw(st.integers(start, hi - 1)), start - 1 if start else None,
                             -data.draw(st.integers(1, 2))))
    idx = tuple(idx)
    store.clear()
    np.testing.assert_array_equal(a[idx], x[idx])
    assert store.calls == ["read_rounds"]
    if len(store.rounds) == 2:  # an index, then one range (a stored inner chunk)
        assert [len(r) for r in store.rounds] == [1, 1]
        assert store.rounds[1][0][1].start >= 0
    else:  # absent shard or inner chunk; or a shard of one inner chunk, read whole
        assert len(store.rounds) == 1


def test_a_full_read_places_a_batch_in_one_call_per_thread(monkeypatch: Any) -> None:
    """A read of one big shard: its inner chunks placed in one slice per thread (a batch
    kernel call each where the chain allows), never a call per inner chunk."""
    import zarrx.engine.read as engine

    a = zarrx.create_array(MemoryStore(), shape=(64, 64), dtype=">i4", chunks=(64, 64),
                           serializer={"name": "sharding_indexed",
                           "configuration": {"chunk_shape": [4, 4], "codecs": [
                               {"name": "bytes", "configuration": {"endian": "big"}}]}},
                           compressors=None, fill_value=0)
    data = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    a[...] = data
    calls: list[tuple[int, int]] = []
    real = engine._place

    def spy(*args: Any, **kwargs: Any) -> None:
        calls.append((args[6], args[7]))
        real(*args, **kwargs)

    monkeypatch.setattr(engine, "_place", spy)
    with zarrx.config.set(threads=2):
        for idx in [(Ellipsis,), (slice(1, 63), slice(None, None, -3))]:
            calls.clear()
            np.testing.assert_array_equal(a[idx], data[idx])
            assert 1 <= len(calls) <= 2  # one slice a thread (or the caller's one)
            assert sum(hi - lo for lo, hi in calls) == 256


def test_a_wrong_inner_chunk_size_in_an_uncompressed_shard_is_an_error() -> None:
    store = MemoryStore()
    a = _array(store)
    a[...] = np.arange(1200, dtype="int32").reshape(40, 30)
    shard = bytearray(store.get("c/1/0"))
    index = np.frombuffer(bytes(shard[-196:-4]), "<u8").reshape(4, 3, 2).copy()
    index[2, 1, 1] -= 4  # one element short
    from zarrx._core.steps import crc32c

    raw = index.tobytes()
    shard[-196:] = raw + crc32c(raw).to_bytes(4, "little")
    store.set("c/1/0", bytes(shard))
    with pytest.raises(zarrx.errors.CodecError, match=r"chunk 'c/1/0'.*inner chunk \(2, 1\)"):
        a[...]


@pytest.mark.parametrize("compressed", [False, True])
def test_most_inner_chunks_of_a_shard_are_read_with_it(compressed: bool) -> None:
    """A batch needing at least half of a shard's 400 inner chunks reads the shard whole
    (one read, no index first); fewer are read as ranges after the index."""
    store = RoundsRecording()
    codecs: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if compressed:
        codecs.append({"name": "zstd", "configuration": {"level": 1}})
    a = zarrx.create_array(store, shape=(40, 40), dtype="int16", chunks=(40, 40),
                           serializer={"name": "sharding_indexed", "configuration": {
                               "chunk_shape": [2, 2], "codecs": codecs}},
                           compressors=None, fill_value=0)
    data = np.arange(1600, dtype="int16").reshape(40, 40)
    a[...] = data
    store.clear()
    np.testing.assert_array_equal(a[1:39, 3:37:2], data[1:39, 3:37:2])  # 20 x 17 of 20 x 20
    assert store.rounds == [[("c/0/0", ByteRange(0))]]
    store.clear()
    np.testing.assert_array_equal(a[1:39, 3:37:6], data[1:39, 3:37:6])  # 20 x 6 of 20 x 20
    assert store.rounds[0] == [("c/0/0", ByteRange(-(400 * 16 + 4)))]
    assert len(store.rounds) == 2


# -- nested sharding: the same store stacked -------------------------------------------------
def _nested(shape: tuple[int, ...], outer: tuple[int, ...], middle: tuple[int, ...],
            inner: tuple[int, ...], locations: tuple[str, str], compressed: bool
            ) -> dict[str, Any]:
    codecs: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if compressed:
        codecs.append({"name": "zstd", "configuration": {"level": 1}})
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(middle), "index_location": locations[0], "codecs": [
            {"name": "sharding_indexed", "configuration": {
                "chunk_shape": list(inner), "codecs": codecs,
                "index_location": locations[1]}}]}}


@st.composite
def nested_arrays(draw: Any) -> tuple[np.ndarray, Any]:
    """An array of shards of shards (either index location at each level, edge shards,
    absent shards and inner shards), in a recording memory store, and its twin."""
    ndim = draw(st.integers(1, 2))
    inner = tuple(draw(st.integers(1, 2)) for _ in range(ndim))
    middle = tuple(c * draw(st.integers(1, 3)) for c in inner)
    outer = tuple(c * draw(st.integers(1, 2)) for c in middle)
    shape = tuple(draw(st.integers(1, 9)) for _ in range(ndim))
    locations = (draw(st.sampled_from(["start", "end"])), draw(st.sampled_from(["start", "end"])))
    serializer = _nested(shape, outer, middle, inner, locations, draw(st.booleans()))
    a = zarrx.create_array(RoundsRecording(), shape=shape, dtype="int16", chunks=outer,
                           serializer=serializer, compressors=None, fill_value=0)
    x = np.zeros(shape, dtype="int16")
    if draw(st.booleans()):
        region = tuple(slice(0, draw(st.integers(0, n))) for n in shape)
        x[region] = (np.arange(x[region].size) % 50 + 1).reshape(x[region].shape)
        a[region] = x[region]
    return x, a


@SETTINGS
@given(nested_arrays(), st.data())
def test_nested_shards_read_and_write_as_numpy(case: tuple[np.ndarray, Any], data: Any) -> None:
    x, a = case
    assert len(a._chunk_store.levels) == 2  # planned on the innermost chunks
    for _ in range(data.draw(st.integers(1, 3))):
        idx = data.draw(numpy_indices(x.shape, wild=False))
        try:
            selected = x[idx]
        except (IndexError, TypeError, ValueError):
            continue  # refusals are the oracle test's (tests/selection)
        if data.draw(st.booleans()):
            value = data.draw(assigned_values(np.shape(selected), x.dtype, wild=False))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    x[idx] = value
                except (IndexError, TypeError, ValueError, OverflowError):
                    continue
                a[idx] = value
        np.testing.assert_array_equal(a[idx], x[idx])
    np.testing.assert_array_equal(a[...], x)


def test_nested_shards_are_what_the_codec_encodes_and_a_point_reads_three_ranges() -> None:
    """A write of whole shards stores what the sharding codec encodes of the same values
    (the stacked store and the opaque codec agree byte for byte); a point is read as the
    outer index, the inner shard's index and one innermost chunk — nothing else."""
    store = RoundsRecording()
    serializer = _nested((16, 16), (8, 8), (4, 4), (2, 2), ("start", "end"), True)
    a = zarrx.create_array(store, shape=(16, 16), dtype="int16", chunks=(8, 8),
                           serializer=serializer, compressors=None, fill_value=0)
    data = np.arange(256, dtype="int16").reshape(16, 16) + 1
    data[8:16, 8:16] = 0  # one shard of fill values: not stored
    a[...] = data
    codec = a.metadata.codecs.codecs[0]
    spec = ChunkSpec((8, 8), np.dtype("int16"), 0)
    for i, j in [(0, 0), (0, 1), (1, 0)]:
        expected = codec.encode(data[i * 8:(i + 1) * 8, j * 8:(j + 1) * 8], spec)
        assert store.get(f"c/{i}/{j}") == bytes(expected)
    assert store.get("c/1/1") is None
    store.clear()
    assert a[5, 6] == data[5, 6]
    (outer,), (middle,), (inner,) = store.rounds
    assert outer == ("c/0/0", ByteRange(0, 4 * 16 + 4))  # the outer index, at the start
    assert middle[0] == "c/0/0"
    assert middle[1].length == 4 * 16 + 4  # the inner shard's index
    assert inner[1].length > 0  # one innermost chunk
    store.clear()
    a[5, 6] = -1  # a part: the shard updated in place, the rest kept
    data[5, 6] = -1
    np.testing.assert_array_equal(a[...], data)
