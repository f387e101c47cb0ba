"""Partial chunk reads (zarrx.codecs.partial): a small selection of an uncompressed or
blosc chunk reads and decodes only the bytes it needs, and gives NumPy's result.

The rule's threshold (``MIN_CHUNK_BYTES``) is lowered in most tests so that small arrays,
which hypothesis can explore quickly, take the partial path; tests that check what is
requested use real sizes with the real rule.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
import zarrx.codecs.partial as partial_module
from zarrx.abc.store import ByteRange, RangeReader, answer_rounds
from zarrx.codecs.partial import touched_bytes
from zarrx.errors import CodecError
from zarrx.storage import LocalStore, MemoryStore
from zarrx.testing.rounds import Noted

Request = tuple[str, ByteRange | None]


class Recording(MemoryStore):
    """A memory store that records every request it answers: the ranges of each round
    of a read in rounds too (what a high-latency store would fetch)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Request] = []

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        self.requests.append((key, byte_range))
        return super().get(key, byte_range)

    def get_many(self, requests: Sequence[Request]) -> list[bytes | None]:
        return [self.get(k, r) for k, r in requests]

    def read_rounds(self, reads: Sequence[tuple[str, RangeReader]]) -> None:
        for key, reader in reads:  # every round from the value as it is now
            answer_rounds(self._noted(key, reader), key, MemoryStore.get(self, key))

    def _noted(self, key: str, reader: RangeReader) -> Noted:
        return Noted(reader, key, self.requests)

    def chunk_requests(self) -> list[Request]:
        return [(k, r) for k, r in self.requests if "/c/" in "/" + k or k.startswith("c/")]


class BatchedRecording(Recording):
    """The same, read by the engine as a high-latency store (``get_many`` per batch)."""

    batched_reads = True


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partial_module, "MIN_CHUNK_BYTES", 0)


def _blosc(cname: str = "lz4", clevel: int = 5, shuffle: str = "shuffle",
           blocksize: int = 0) -> dict[str, Any]:
    return {"name": "blosc", "configuration": {
        "cname": cname, "clevel": clevel, "shuffle": shuffle, "blocksize": blocksize}}


def _array(store: Any, data: np.ndarray, chunks: tuple[int, ...], compressors: Any,
           **kwargs: Any) -> zarrx.Array:
    a = zarrx.create_array(store, shape=data.shape, chunks=chunks, dtype=data.dtype,
                           compressors=compressors, fill_value=0, **kwargs)
    a[...] = data
    return a


def _data(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 100, size=shape) + np.arange(int(np.prod(shape))).reshape(shape)
    return values.astype(dtype)


# -- the rule -------------------------------------------------------------------------------


def test_touched_bytes() -> None:
    shape = (64, 64, 64)  # 1 MiB of float32
    assert touched_bytes(shape, 4, (slice(1, 2, 1), slice(2, 3, 1), slice(3, 4, 1))) == (
        (64 * 64 + 2 * 64 + 3) * 4, (64 * 64 + 2 * 64 + 4) * 4)
    # a plane of the first axis: 16 KiB, contiguous
    assert touched_bytes(shape, 4, (slice(5, 6, 1), slice(0, 64, 1), slice(0, 64, 1))) == (
        5 * 16384, 6 * 16384)
    # steps: from the first element to the last
    assert touched_bytes(shape, 4, (slice(0, 1, 1), slice(0, 1, 1), slice(0, 64, 7))) == (
        0, 63 * 4 + 4)
    # more than a quarter of the chunk, index arrays, small chunks: read whole
    assert touched_bytes(shape, 4, (slice(0, 17, 1), slice(0, 64, 1), slice(0, 64, 1))) is None
    assert touched_bytes(shape, 4, (np.array([1]), slice(0, 1, 1), slice(0, 1, 1))) is None
    assert touched_bytes((8, 8), 4, (slice(0, 1, 1), slice(0, 1, 1))) is None
    assert touched_bytes((), 4, (Ellipsis,)) is None


# -- what is read ---------------------------------------------------------------------------


@pytest.mark.parametrize("store_type", [Recording, BatchedRecording])
@pytest.mark.parametrize("blocksize", [0, 65536])
def test_a_point_reads_the_header_and_one_block(store_type: type[Recording],
                                                blocksize: int) -> None:
    data = _data((64, 64, 64), "float32")
    store = store_type()
    a = _array(store, data, (64, 64, 64), [_blosc(blocksize=blocksize)])
    stored = len(store.get("c/0/0/0"))  # type: ignore[arg-type]
    store.requests.clear()
    assert a[40, 3, 7] == data[40, 3, 7]
    requests = store.chunk_requests()
    assert requests
    assert all(r is not None for _, r in requests)
    read = sum(r.length for _, r in requests if r is not None and r.length)
    nbytes, blocksize = struct.unpack_from("<II", store.get("c/0/0/0") or b"", 4)
    nblocks = nbytes // blocksize
    assert nblocks >= 2
    assert read < stored * 1.5 / nblocks + 2048  # the header, starts and one block
    np.testing.assert_array_equal(a[60:62, 5:9, 3:60:4], data[60:62, 5:9, 3:60:4])


@pytest.mark.parametrize("store_type", [Recording, BatchedRecording])
def test_an_uncompressed_point_reads_its_bytes(store_type: type[Recording]) -> None:
    data = _data((64, 64, 64), "<f8")
    store = store_type()
    a = _array(store, data, (64, 64, 64), None)
    store.requests.clear()
    assert a[10, 20, 30] == data[10, 20, 30]
    offset = ((10 * 64 + 20) * 64 + 30) * 8
    assert store.chunk_requests() == [
        ("c/0/0/0", ByteRange(offset, 8)),
        ("c/0/0/0", ByteRange(64**3 * 8 - 1, 2)),  # the size probe
    ]


def test_whole_reads_where_partial_does_not_apply() -> None:
    data = _data((64, 64, 64), "float32")
    cases: list[dict[str, Any]] = [
        {"compressors": [_blosc()], "chunks": (16, 16, 16)},  # 16 KiB chunks: too small
        {"compressors": [_blosc(), {"name": "crc32c"}], "chunks": (64, 64, 64)},  # checksum
        {"compressors": [{"name": "zstd"}], "chunks": (64, 64, 64)},  # not blosc
        {"compressors": [_blosc()], "chunks": (64, 64, 64), "order": "F"},  # transposed
    ]
    for case in cases:
        store = Recording()
        a = _array(store, data, case.pop("chunks"), case.pop("compressors"), **case)
        store.requests.clear()
        assert a[1, 2, 3] == data[1, 2, 3]
        assert all(r is None for _, r in store.chunk_requests()), case
        # a selection of a quarter of a chunk or more is read whole too
    store = Recording()
    a = _array(store, data, (64, 64, 64), [_blosc()])
    store.requests.clear()
    np.testing.assert_array_equal(a[:20], data[:20])
    assert all(r is None for _, r in store.chunk_requests())


# -- NumPy's results ------------------------------------------------------------------------


@st.composite
def _cases(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, ...], Any, tuple[Any, ...]]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 24), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, n + 3)) for n in shape)  # edge chunks stick out
    dtype = draw(st.sampled_from(["u1", "<i2", ">u2", "<f4", ">i4", "<f8", ">i8"]))
    data = _data(shape, dtype, draw(st.integers(0, 3)))
    if draw(st.booleans()):
        compressors: Any = None
    else:
        compressors = [_blosc(
            cname=draw(st.sampled_from(["lz4", "blosclz", "zstd", "zlib", "lz4hc"])),
            clevel=draw(st.sampled_from([0, 1, 5, 9])),
            shuffle=draw(st.sampled_from(["noshuffle", "shuffle", "bitshuffle"])),
            blocksize=draw(st.sampled_from([0, 128, 256, 1000])),
        )]
    index = []
    for n in shape:
        if draw(st.booleans()):
            index.append(draw(st.integers(-n, n - 1)))
        else:
            start = draw(st.integers(0, n - 1))
            stop = draw(st.integers(start + 1, n))
            index.append(slice(start, stop, draw(st.integers(1, 3))))
    return data, chunks, compressors, tuple(index)


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("store_type", ["memory", "batched", "local"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_cases())
def test_partial_reads_equal_numpy(
    store_type: str, case: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data, chunks, compressors, index = case
    store = (
        MemoryStore() if store_type == "memory"
        else BatchedRecording() if store_type == "batched"
        else LocalStore(str(tmp_path_factory.mktemp("partial")))
    )
    a = _array(store, data, chunks, compressors)
    np.testing.assert_array_equal(a[index], data[index])
    # and points, one chunk each (index arrays place them; slices of one read in part)
    for point in np.ndindex(*data.shape[:1]):
        tail = tuple(n // 2 for n in data.shape[1:])
        assert a[(*point, *tail)] == data[(*point, *tail)]


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("itemsize", [1, 2, 4, 8])
@pytest.mark.parametrize("shuffle", ["noshuffle", "shuffle", "bitshuffle"])
@pytest.mark.parametrize("cname", ["zstd", "lz4"])
def test_out_of_order_blocks(itemsize: int, shuffle: str, cname: str) -> None:
    """c-blosc compressing on several threads may store block 1 before block 0: a
    block ends where the next higher start is, not where the next block starts. (zstd
    keeps the asked 1 KiB blocks, unsplit; lz4 enlarges them to 64 KiB or more and splits
    them into a stream per byte of the type, except the short last block.)"""
    n = 150_001
    data = (np.arange(n) // 3 % 50 + np.arange(n) % 11).astype(f"<u{itemsize}")
    store = MemoryStore()
    a = _array(store, data, (n,), [_blosc(cname=cname, blocksize=1024, shuffle=shuffle)])
    frame = store.get("c/0")
    assert frame is not None
    store.set("c/0", _reverse_blocks(frame))
    assert numcodecs.blosc.decompress(store.get("c/0")) == data.tobytes()
    (blocksize,) = struct.unpack_from("<I", frame, 8)
    per_block = blocksize // itemsize
    for i in (0, 1, per_block - 1, per_block, n // 2, n - 2, n - 1):
        assert a[i] == data[i]
    for sel in (slice(per_block - 5, per_block + 5), slice(n - per_block - 3, n),
                slice(3, 3000, 7)):
        np.testing.assert_array_equal(a[sel], data[sel])


def _reverse_blocks(frame: bytes) -> bytes:
    """The same frame with its blocks stored last to first."""
    assert not frame[2] & 0x02  # not a plain copy: it has blocks
    nbytes, blocksize, cbytes = struct.unpack_from("<III", frame, 4)
    n = -(-nbytes // blocksize)
    assert n > 2
    starts = struct.unpack_from(f"<{n}i", frame, 16)
    ends = [*sorted(starts)[1:], cbytes]
    stop = dict(zip(sorted(starts), ends))
    blocks = [frame[s : stop[s]] for s in starts]
    at = 16 + 4 * n
    new_starts = [0] * n
    body = b""
    for j in reversed(range(n)):
        new_starts[j] = at + len(body)
        body += blocks[j]
    return frame[:16] + struct.pack(f"<{n}i", *new_starts) + body


# -- damaged values -------------------------------------------------------------------------


def _blosc_array(store: Any, cname: str) -> tuple[zarrx.Array, np.ndarray]:
    """zstd keeps 512-byte blocks (63 here); lz4 and blosclz make one 32000-byte block."""
    data = _data((20, 20, 20), "<f4")
    return _array(store, data, (20, 20, 20), [_blosc(cname=cname, blocksize=512)]), data


@pytest.mark.usefixtures("small_chunks")
@settings(max_examples=60, deadline=None)
@given(cut=st.integers(0, 40_000), clevel=st.sampled_from([0, 5]),
       cname=st.sampled_from(["zstd", "lz4"]))
def test_truncated_frames_are_refused(cut: int, clevel: int, cname: str) -> None:
    store = MemoryStore()
    data = _data((20, 20, 20), "<f4")
    a = _array(store, data, (20, 20, 20), [_blosc(cname, clevel=clevel, blocksize=512)])
    frame = store.get("c/0/0/0")
    assert frame is not None
    store.set("c/0/0/0", frame[: min(cut, len(frame) - 1)])
    for index in [(0, 0, 0), (19, 19, 19), (10, 3, slice(2, 9))]:
        with pytest.raises(CodecError, match="c/0/0/0"):
            a[index]


@pytest.mark.usefixtures("small_chunks")
@settings(max_examples=150, deadline=None)
@given(changes=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), min_size=1,
                        max_size=4),
       anywhere=st.booleans(), cname=st.sampled_from(["lz4", "zstd", "blosclz"]))
def test_corrupt_frames_never_crash(changes: list[tuple[int, int]], anywhere: bool,
                                    cname: str) -> None:
    """Damaged headers, block starts and blocks give a CodecError or (where the damage
    is in bytes the codec cannot tell) some values; nothing is read out of bounds."""
    store = MemoryStore()
    a, data = _blosc_array(store, cname)
    frame = bytearray(store.get("c/0/0/0") or b"")
    for at, value in changes:
        frame[at * (len(frame) // 200 if anywhere else 1) % len(frame)] = value
    store.set("c/0/0/0", bytes(frame))
    for index in [(0, 0, 0), (19, 19, 19), (10, 3, slice(2, 9)), (5, slice(None), 5)]:
        error = None
        try:
            result = a[index]
        except CodecError as e:
            error = str(e)
        if error is None:
            assert np.shape(result) == np.shape(data[index])
        else:
            assert "c/0/0/0" in error


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("extra", [-1, 1])
def test_uncompressed_chunk_of_the_wrong_size_is_refused(extra: int) -> None:
    store = MemoryStore()
    data = _data((20, 20, 20), "<f4")
    a = _array(store, data, (20, 20, 20), None)
    value = store.get("c/0/0/0") or b""
    store.set("c/0/0/0", value[:-1] if extra < 0 else value + b"\0")
    with pytest.raises(CodecError, match="c/0/0/0"):
        a[0, 0, 0]


class _Rewritten(Recording):
    """A store whose chunk is replaced (as a writer's rename would) after the first round
    of a read in rounds of it."""

    def __init__(self, replacement: bytes) -> None:
        super().__init__()
        self.replacement: bytes | None = replacement

    def _noted(self, key: str, reader: RangeReader) -> Noted:
        def replace(round_: int) -> None:
            if self.replacement is not None:
                self.set(key, self.replacement)
                self.replacement = None

        return Noted(reader, key, self.requests, replace)


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("clevel", [0, 5])
def test_a_frame_replaced_between_rounds_is_read_from_one_version(clevel: int) -> None:
    """The blocks decoded are those of the frame whose header was read: with plain-copy
    frames (clevel 0) the two frames' headers are equal, so only reading every round
    from one version tells them apart."""
    old, new = _data((20, 20, 20), "<f4", 1), _data((20, 20, 20), "<f4", 2) + 1000
    source = MemoryStore()
    _array(source, new, (20, 20, 20), [_blosc(clevel=clevel, blocksize=512)])
    store = _Rewritten(source.get("c/0/0/0") or b"")
    a = _array(store, old, (20, 20, 20), [_blosc(clevel=clevel, blocksize=512)])
    store.requests.clear()
    assert a[17, 2, 9] == old[17, 2, 9]
    assert store.replacement is None  # replaced during the read
    assert all(r is not None for _, r in store.chunk_requests())  # in part, not again whole
    assert a[17, 2, 9] == new[17, 2, 9]


@pytest.mark.usefixtures("small_chunks")
def test_absent_chunks_are_the_fill_value() -> None:
    store = BatchedRecording()
    a = zarrx.create_array(store, shape=(40, 40), chunks=(20, 20), dtype="f4",
                           compressors=[_blosc()], fill_value=-1.5)
    a[:20, :20] = 1
    assert a[30, 30] == -1.5
    assert a[3, 4] == 1
    np.testing.assert_array_equal(a[19:21, 5], [1, -1.5])
