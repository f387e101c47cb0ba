"""Sharded arrays read and written inner chunk by inner chunk: a partial write re-encodes
only the inner chunks it touches and keeps the others' stored bytes; neighbouring inner
chunks are read as one range; and any sequence of reads and writes equals NumPy's."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.abc.codec import ChunkSpec
from zarrx.abc.store import ByteRange, answer_rounds
from zarrx.codecs.pipeline import PreparedChain
from zarrx.runtime.plan import plan
from zarrx.selection.layout import Layout
from zarrx.selection.numpy_index import numpy_transform
from zarrx.storage import LocalStore, MemoryStore
from zarrx.testing.rounds import Noted
from zarrx.testing.selections import (
    assigned_values,
    numpy_indices,
    orthogonal_indices,
    outer_selection,
)

EMPTY = 2**64 - 1


class Recording(MemoryStore):
    """A memory store that records every read request."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[str, ByteRange | None]] = []

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        self.reads.append((key, byte_range))
        return super().get(key, byte_range)

    def get_many(self, requests: Any) -> list[bytes | None]:
        return [self.get(k, r) for k, r in requests]

    def read_rounds(self, reads: Any) -> None:
        for key, reader in reads:  # each round's ranges noted, as a store of ranges reads
            answer_rounds(Noted(reader, key, self.reads), key, MemoryStore.get(self, key))


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

    monkeypatch.setattr(PreparedChain, "encode", encode)
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
    store = Recording()
    a = _array(store)
    a[...] = 1
    store.reads.clear()
    a[20:40, :] = 2  # shards c/1/0 and c/1/1, whole
    assert not [k for k, _ in store.reads if k.startswith("c/")]
    a[0:20, 0:15] = np.arange(300, dtype="int32").reshape(20, 15)
    assert not [k for k, _ in store.reads if k.startswith("c/")]
    store.reads.clear()
    a[0, 0] = 5  # a part: one read of the shard it updates
    assert [k for k, _ in store.reads if k.startswith("c/")] == ["c/0/0"]


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
    handed: list[tuple[str, int]] = []
    real = LocalStore.set_parts

    def spy(self: LocalStore, key: str, parts: Any) -> None:
        handed.append((key, len(parts)))
        real(self, key, parts)

    monkeypatch.setattr(LocalStore, "set_parts", spy)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    data[20:40, 15:30] = 0  # shard c/1/1 all fill value
    with zarrx.config.set(threads=threads):
        a[...] = data
    assert sorted(handed) == [("c/0/0", 13), ("c/0/1", 13), ("c/1/0", 13)]  # 12 + the index
    assert store.get("c/1/1") is None
    codec = a.metadata.codecs.codecs[0]
    spec = ChunkSpec((20, 15), np.dtype("int32"), 0)
    for key, (i, j) in (("c/0/0", (0, 0)), ("c/0/1", (0, 1)), ("c/1/0", (1, 0))):
        shard = data[i * 20:(i + 1) * 20, j * 15:(j + 1) * 15]
        assert store.get(key) == bytes(codec.encode(shard, spec))
    np.testing.assert_array_equal(a[...], data)


def test_neighbouring_inner_chunks_are_one_read() -> None:
    store = Recording()
    a = _array(store)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    a[...] = data
    store.reads.clear()
    np.testing.assert_array_equal(a[6:8, :15], data[6:8, :15])  # inner chunks (1, 0..2)
    index, *inner = store.reads
    assert index == ("c/0/0", ByteRange(-(12 * 16 + 4)))
    assert inner == [("c/0/0", ByteRange(3 * 100, 3 * 100))]  # three neighbours, one read
    store.reads.clear()
    np.testing.assert_array_equal(a[2:8, 2], data[2:8, 2])  # (0, 0) and (1, 0): apart
    assert len(store.reads) == 3


def test_a_small_read_opens_its_shard_once(tmp_path: Path) -> None:
    """One shard read in part on a local store: the index and the inner chunks it names
    come from one ``get_indexed`` (one open of the shard), nothing else is read."""
    calls: list[str] = []

    class Counting(LocalStore):
        def get(self, key: str, byte_range: Any = None) -> bytes | None:
            calls.append("get")
            return super().get(key, byte_range)

        def get_many(self, requests: Any) -> list[bytes | None]:
            calls.append("get_many")
            return super().get_many(requests)

        def get_indexed(self, key: str, head: Any, then: Any) -> list[bytes | None]:
            calls.append("get_indexed")
            return super().get_indexed(key, head, then)

    a = _array(Counting(tmp_path / "s"), blosc=True)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    a[...] = data
    a[25:30, 20:25] = 0  # an inner chunk of fill values: not stored
    for selection in [(6, 4), (slice(6, 8), slice(0, 15)), (slice(21, 32), slice(16, 30))]:
        calls.clear()
        np.testing.assert_array_equal(a[selection], np.where(
            (np.arange(40)[:, None] // 5 == 5) & (np.arange(30) // 5 == 4), 0, data)[selection])
        assert calls == ["get_indexed"]
    calls.clear()
    assert a[0:2, 0:2].tolist() == data[0:2, 0:2].tolist()
    assert calls == ["get_indexed"]
    b = _array(Counting(tmp_path / "absent"))
    calls.clear()
    assert b[3, 3] == 0  # no shard: the fill value
    assert calls == ["get_indexed"]


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
def sharded_arrays(draw: Any, directory: Callable[[], Path]) -> tuple[np.ndarray, Any]:
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
    store = LocalStore(directory()) if draw(st.booleans()) else MemoryStore()
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


def _place_one_by_one(chain: Any, elements: Any, chunk_shape: Any, items: Any,
                      out: np.ndarray, what: str = "chunk") -> None:
    """The general path: each inner chunk through ``place`` on its own."""
    from zarrx.runtime.place import place

    for p, data in items:
        place(chain, elements, p, data, out)


@SETTINGS
@given(uncompressed_shards(), st.data())
def test_whole_shards_placed_at_once_match_the_decoding_path(
        case: tuple[np.ndarray, Any], data: Any) -> None:
    """The kernel (uncompressed inner chunks) and the shard-at-a-time loop (compressed
    ones) against NumPy and against placing each inner chunk on its own."""
    import zarrx.engine.shards as engine

    x, a = case
    layout = a._chunk_store.shards
    uncompressed = not layout.inner.bytes_bytes
    assert (layout.copy_swap is not None) == uncompressed
    whole = tuple(slice(0, data.draw(st.integers(0, n))) for n in x.shape)
    for idx in [(Ellipsis,), whole, data.draw(numpy_indices(x.shape, wild=False))]:
        try:
            expected = x[idx]
        except (IndexError, TypeError, ValueError):
            continue
        got = a[idx]
        np.testing.assert_array_equal(got, expected)
        with pytest.MonkeyPatch.context() as mp:  # the inner chunks decoded one by one
            mp.setattr(type(layout), "place_all", lambda *args: False)
            mp.setattr(engine, "place_each", _place_one_by_one)
            np.testing.assert_array_equal(a[idx], got)


@SETTINGS
@given(st.data())
def test_reads_inside_one_inner_chunk_match_the_general_plan_and_numpy(
        tmp_path_factory: pytest.TempPathFactory, data: Any) -> None:
    """A selection of runs inside one inner chunk is read without a plan (the small
    read's shortcut: its projection is what the planner projects on the inner grid); the
    same read planned shard by shard, and NumPy, agree."""
    import zarrx.engine.shards as engine

    x, a = data.draw(sharded_arrays(lambda: tmp_path_factory.mktemp("small")))
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
            idx.append(slice(start, data.draw(st.integers(start, hi)),
                             data.draw(st.integers(1, 3))))
        else:
            idx.append(slice(data.draw(st.integers(start, hi - 1)), start - 1 if start else None,
                             -data.draw(st.integers(1, 2))))
    idx = tuple(idx)
    layout = Layout(numpy_transform(x.shape, idx).transform)
    shards = a._chunk_store.shards
    assert engine._in_one_inner_chunk(shards, layout) == (
        np.prod(shards.chunks_per_shard) > 1 and x[idx].size > 0)
    if engine._in_one_inner_chunk(shards, layout):
        (planned,) = plan(shards.grid, x.shape, layout)
        key, coords, projection = engine._one_inner_chunk(a._chunk_store, shards, layout)
        per_shard = shards.chunks_per_shard
        assert coords == tuple(c // n for c, n in zip(planned.coords, per_shard))
        assert key == a._chunk_store.key(coords)
        assert projection == replace(planned, coords=tuple(
            c % n for c, n in zip(planned.coords, per_shard)))
    got = a[idx]
    np.testing.assert_array_equal(got, x[idx])
    with pytest.MonkeyPatch.context() as mp:  # planned shard by shard, then inner chunks
        mp.setattr(engine, "_in_one_inner_chunk", lambda *args: False)
        np.testing.assert_array_equal(a[idx], got)


def test_a_full_read_of_uncompressed_shards_is_one_kernel_call_per_shard(
        monkeypatch: Any) -> None:
    a = zarrx.create_array(MemoryStore(), shape=(40, 30), dtype=">i4", chunks=(20, 15),
                           serializer={"name": "sharding_indexed",
                           "configuration": {"chunk_shape": [5, 5], "codecs": [
                               {"name": "bytes", "configuration": {"endian": "big"}}]}},
                           compressors=None, fill_value=0)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    a[...] = data
    a[0:20, 15:30] = 0  # shard (0, 1) absent
    data[0:20, 15:30] = 0
    calls: list[tuple[int, ...]] = []
    decodes: list[Any] = []
    shards = type(a._chunk_store.shards)
    real_place_all, real_place = shards.place_all, shards.place

    def place_all(self: Any, shard: Any, index: Any, out: np.ndarray,
                  selection: Any = None) -> bool:
        calls.append(out.shape)
        return real_place_all(self, shard, index, out, selection)

    def place(self: Any, *args: Any) -> None:
        decodes.append(args)
        real_place(self, *args)

    monkeypatch.setattr(shards, "place_all", place_all)
    monkeypatch.setattr(shards, "place", place)
    np.testing.assert_array_equal(a[...], data)
    assert calls == [(20, 15)] * 3
    calls.clear()
    # any selection of runs that needs every inner chunk of a shard: one call per shard
    np.testing.assert_array_equal(a[1:39, ::-2], data[1:39, ::-2])
    assert sorted(calls) == [(19, 7), (19, 7), (19, 8)]  # shard (0, 1) is absent
    assert decodes == []


def test_a_wrong_inner_chunk_size_in_an_uncompressed_shard_is_an_error() -> None:
    store = MemoryStore()
    a = _array(store)
    a[...] = np.arange(1200, dtype="int32").reshape(40, 30)
    shard = bytearray(store.get("c/1/0"))
    index = np.frombuffer(bytes(shard[-196:-4]), "<u8").reshape(4, 3, 2).copy()
    index[2, 1, 1] -= 4  # one element short
    from zarrx.codecs.crc32c import _crc32c

    raw = index.tobytes()
    shard[-196:] = raw + _crc32c()(raw).to_bytes(4, "little")
    store.set("c/1/0", bytes(shard))
    with pytest.raises(zarrx.errors.CodecError, match=r"chunk 'c/1/0'.*inner chunk \(2, 1\)"):
        a[...]


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6), st.integers(1, 40), st.data())
def test_a_parts_count_of_inner_chunks_is_what_the_planner_projects(
        chunk: int, extent: int, data: Any) -> None:
    """``_touched`` (counted without planning) against the inner projections planned."""
    from zarrx.chunk_grids.regular import RegularChunkGrid
    from zarrx.engine.shards import _touched
    from zarrx.runtime.plan import plan_ranges

    start = data.draw(st.integers(0, extent - 1))
    step = data.draw(st.integers(1, 8))
    stop = data.draw(st.integers(start + 1, extent))
    selection = slice(start, start + (len(range(start, stop, step)) - 1) * step + 1, step)
    planned = list(plan_ranges(RegularChunkGrid((chunk,)), (extent,), [selection]))
    assert _touched(selection, chunk) == len(planned)


@pytest.mark.parametrize("compressed", [False, True])
def test_many_uncompressed_inner_chunks_of_a_shard_are_read_with_it(compressed: bool) -> None:
    """A selection needing a quarter or more of a shard's 400 uncompressed inner chunks
    reads the shard whole (one kernel call places them); compressed ones are read as
    ranges after the index."""
    store = Recording()
    codecs: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if compressed:
        codecs.append({"name": "zstd", "configuration": {"level": 1}})
    a = zarrx.create_array(store, shape=(40, 40), dtype="int16", chunks=(40, 40),
                           serializer={"name": "sharding_indexed", "configuration": {
                               "chunk_shape": [2, 2], "codecs": codecs}},
                           compressors=None, fill_value=0)
    data = np.arange(1600, dtype="int16").reshape(40, 40)
    a[...] = data
    store.reads.clear()
    np.testing.assert_array_equal(a[1:39, 3:37:3], data[1:39, 3:37:3])  # 20 x 12 of 20 x 20
    if compressed:
        assert store.reads[0] == ("c/0/0", ByteRange(-(400 * 16 + 4)))
        assert len(store.reads) > 2
    else:
        assert store.reads == [("c/0/0", None)]
