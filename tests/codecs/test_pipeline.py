"""The prepared codec chain's decode paths: into the caller's array, through scratch
buffers, and the engine's use of them."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import zarrx
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.blosc import BloscCodec
from zarrx.codecs.gzip import GzipCodec
from zarrx.codecs.pipeline import CodecPipeline
from zarrx.errors import CodecError
from zarrx.runtime.scratch import KEEP_AT_MOST, scratch

SPEC = ChunkSpec((8, 16), np.dtype("float32"), np.float32(0))
DATA = np.arange(128, dtype="float32").reshape(8, 16)


def chain(codecs: list) -> object:
    return CodecPipeline.from_json(codecs, where="test").prepare(SPEC)


BLOSC = [{"name": "bytes", "configuration": {"endian": "little"}},
         {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}, {"name": "crc32c"}]
GZIP = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip"}]
TRANSPOSED = [{"name": "transpose", "configuration": {"order": [1, 0]}}, *BLOSC]
BIG_ENDIAN = [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip"}]


@pytest.mark.parametrize("codecs", [BLOSC, GZIP])
def test_decode_into_writes_the_callers_array(codecs: list) -> None:
    c = chain(codecs)
    out = np.full(SPEC.shape, -1, dtype="float32")
    assert c.decode_into(c.encode(DATA), out) is True
    np.testing.assert_array_equal(out, DATA)


@pytest.mark.parametrize(
    ("codecs", "out"),
    [
        (TRANSPOSED, np.empty(SPEC.shape, "float32")),  # an array→array codec in the chain
        (BIG_ENDIAN, np.empty(SPEC.shape, "float32")),  # stored bytes in another byte order
        (BLOSC, np.empty((16, 8), "float32").T),  # not C-contiguous
        (BLOSC, np.empty(SPEC.shape, "float64")),  # another dtype
        (BLOSC, np.empty((8, 8), "float32")),  # part of the chunk
        ([{"name": "bytes", "configuration": {"endian": "little"}}],
         np.empty(SPEC.shape, "float32")),  # nothing to decompress: a view is free
    ],
)
def test_decode_into_declines_what_is_not_the_stored_image(codecs: list, out: np.ndarray) -> None:
    c = chain(codecs)
    before = out.copy()
    assert c.decode_into(c.encode(DATA), out) is False
    np.testing.assert_array_equal(out, before, strict=True)


@pytest.mark.parametrize("codecs", [BLOSC, GZIP, TRANSPOSED, BIG_ENDIAN])
def test_decoded_equals_decode(codecs: list) -> None:
    c = chain(codecs)
    encoded = c.encode(DATA)
    with c.decoded(encoded) as chunk:
        np.testing.assert_array_equal(chunk, DATA)
    np.testing.assert_array_equal(c.decode(encoded), DATA)


def test_decoded_reuses_one_buffer_per_thread() -> None:
    c = chain(BLOSC)
    encoded = c.encode(DATA)
    with c.decoded(encoded) as first:
        address = first.__array_interface__["data"][0]
    with c.decoded(encoded) as second:
        assert second.__array_interface__["data"][0] == address


def test_nested_scratch_buffers_are_distinct() -> None:
    with scratch(64) as outer:
        outer[:] = 1
        with scratch(64) as inner:
            inner[:] = 2
            assert not np.shares_memory(outer, inner)
        assert (outer == 1).all()


def test_huge_scratch_buffers_are_not_kept() -> None:
    with scratch(KEEP_AT_MOST + 1) as big:
        kept = weakref.ref(big.base)
    del big
    gc.collect()
    assert kept() is None
    with scratch(KEEP_AT_MOST) as large:
        kept = weakref.ref(large.base)
    del large
    gc.collect()
    assert kept() is not None


def test_corrupt_data_raises_and_returns_the_buffer() -> None:
    c = chain(BLOSC)
    encoded = bytearray(c.encode(DATA))
    encoded[20] ^= 0xFF
    with pytest.raises(CodecError), c.decoded(bytes(encoded)):
        pass
    with c.decoded(c.encode(DATA)) as chunk:  # the pool still works
        np.testing.assert_array_equal(chunk, DATA)


def test_default_decode_into_checks_the_size() -> None:
    codec = GzipCodec()
    encoded = codec.encode(DATA.tobytes())
    out = bytearray(DATA.nbytes)
    codec.decode_into(encoded, out)
    assert bytes(out) == DATA.tobytes()
    with pytest.raises(CodecError, match="expected"):
        codec.decode_into(encoded, bytearray(DATA.nbytes + 8))


def test_whole_chunks_decompress_straight_into_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """A selection that is exactly one chunk gets the decompressor's output as its memory:
    no intermediate buffer and no copy."""
    a = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(64, 64), chunks=(32, 64),
                           dtype="int32", compressors=[{"name": "blosc"}])
    values = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    a[...] = values
    targets: list[np.ndarray] = []
    original = BloscCodec.decode_into

    def spy(self: BloscCodec, data: object, out: np.ndarray) -> None:
        targets.append(out)
        original(self, data, out)

    monkeypatch.setattr(BloscCodec, "decode_into", spy)
    result = a[32:64]
    np.testing.assert_array_equal(result, values[32:64])
    assert len(targets) == 1
    assert np.shares_memory(targets[0], result)


@pytest.mark.parametrize("codecs", [BLOSC, GZIP, BIG_ENDIAN, TRANSPOSED])
@pytest.mark.parametrize(
    "view",
    [
        lambda d: d[:, ::-1],  # strided
        lambda d: np.asfortranarray(d),  # another layout
        lambda d: d.astype(">f4"),  # another byte order
        lambda d: np.broadcast_to(d[:1], d.shape),  # a broadcast: zero strides
    ],
)
def test_encode_any_layout_equals_contiguous(codecs: list, view) -> None:
    c = chain(codecs)
    chunk = view(DATA)
    expected = c.encode(np.ascontiguousarray(chunk, dtype="float32"))
    assert bytes(memoryview(c.encode(chunk)).cast("B")) == bytes(memoryview(expected).cast("B"))
    np.testing.assert_array_equal(c.decode(c.encode(chunk)), chunk)


def test_shards_decode_into_a_strided_output() -> None:
    """A whole shard goes inner chunk by inner chunk into its place in the output, with
    no shard-sized buffer: the output may be any view."""
    sharded = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 8], "codecs": BLOSC,
    }}]
    c = chain(sharded)
    encoded = c.encode(DATA)
    big = np.zeros((16, 32), dtype="float32")
    view = big[::2, 1::2]
    assert c.decode_into(encoded, view) is True
    np.testing.assert_array_equal(view, DATA)
    assert (big[1::2] == 0).all()
    assert c.decode_into(encoded, np.empty((8, 16), "float64")) is False
