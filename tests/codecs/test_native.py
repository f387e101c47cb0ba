"""The batch kernels against the chunk-by-chunk path (hypothesis differentials).

``BatchDecoder.place`` puts into an output exactly what ``runtime.place.place_selection``
puts there chunk by chunk with the same chain, and ``PreparedChain.encode_many`` makes
exactly the bytes ``PreparedChain.encode_general`` makes of each chunk alone: over data
types (both byte orders, 1 to 16 bytes an item, text, records), chunk shapes of 1 to 4
dimensions, every chain the kernels take (``bytes`` alone or with ``blosc`` of every cname
and shuffle, ``zstd``, ``gzip`` and ``crc32c`` in several orders), random boxes and steps,
absent chunks, outputs of any layout, and one source or one per chunk.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.blosc import CNAMES, _available_cnames
from zarrx.codecs.pipeline import CodecPipeline, PreparedChain, codec_from_json
from zarrx.data_types.core import fill_bytes
from zarrx.runtime.elements import Elements
from zarrx.runtime.place import place_selection

CNAMES_HERE = [c for c in CNAMES if c in _available_cnames()]
#: Item sizes 1 to 16: numbers, complex, text, bytes, records (stored in either byte
#: order by the ``bytes`` codec: a chain's own dtype is native).
DTYPES = ["u1", "b1", "i2", "u4", "f4", "f8", "i8", "c8", "c16", "S3", "V5", "U2", "U1",
          "f2", [("a", "=i2"), ("b", "u1")], [("a", "=u4"), ("b", "=f4")]]


@st.composite
def bytes_codecs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A list of bytes→bytes codecs the kernels take, in an order the spec allows."""
    compressors = st.one_of(
        st.builds(lambda cname, shuffle, level, block: {"name": "blosc", "configuration": {
            "cname": cname, "shuffle": shuffle, "clevel": level, "blocksize": block}},
            st.sampled_from(CNAMES_HERE), st.sampled_from(["noshuffle", "shuffle",
                                                           "bitshuffle"]),
            st.integers(0, 9), st.sampled_from([0, 0, 16, 256])),
        st.builds(lambda level, checksum: {"name": "zstd", "configuration": {
            "level": level, "checksum": checksum}}, st.integers(-3, 9), st.booleans()),
        st.builds(lambda level: {"name": "gzip", "configuration": {"level": level}},
                  st.integers(0, 9)),
    )
    kind = draw(st.sampled_from(["none", "one", "one+crc", "crc", "crc+one", "two",
                                 "one+crc+one"]))
    crc = {"name": "crc32c"}
    if kind == "none":
        return []
    if kind == "crc":
        return [crc]
    one = draw(compressors)
    if kind == "one+crc+one":
        return [one, crc, draw(compressors)]
    return {"one": [one], "one+crc": [one, crc], "crc+one": [crc, one],
            "two": [one, draw(compressors)]}[kind]


def chain_of(dtype: np.dtype, shape: tuple[int, ...], codecs: list[dict[str, Any]],
             endian: str, fill: Any = None) -> PreparedChain:
    """A chain of a fresh pipeline (its batch decoder and encoder made for this test)."""
    serializer = {"name": "bytes", "configuration": {"endian": endian}}
    pipeline = CodecPipeline([codec_from_json(c, where="test") for c in [serializer, *codecs]])
    value = np.zeros((), dtype)[()] if fill is None else np.asarray(fill, dtype)[()]
    return pipeline.prepare(ChunkSpec(shape, dtype, value))


def data_of(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...],
            kind: str) -> np.ndarray:
    """Values of ``dtype`` (native) as raw bytes: random, smooth or constant."""
    n = int(np.prod(shape)) * dtype.itemsize
    if kind == "random":
        raw = rng.integers(0, 256, n, dtype=np.uint8)
    elif kind == "constant":
        raw = np.tile(rng.integers(0, 256, dtype.itemsize, dtype=np.uint8), n // dtype.itemsize)
    else:
        raw = (np.arange(n) // 5 % 7).astype(np.uint8)
    if dtype.kind == "b":
        raw = raw & 1
    if dtype.kind == "U":  # valid code points (below the surrogates), in native order
        raw = (raw.view("=u4") % 0xD7FF).view(np.uint8)
    return raw.view(dtype).reshape(shape)


@st.composite
def selections(draw: st.DrawFn, shape: tuple[int, ...], out_shape: tuple[int, ...]
               ) -> tuple[list[int], list[int], list[int], list[int]]:
    """A box with steps inside a chunk, and where it goes in the output."""
    starts, steps, counts, outs = [], [], [], []
    for n, m in zip(shape, out_shape):
        start = draw(st.integers(0, n - 1))
        step = draw(st.sampled_from([1, 1, 1, 2, 3]))
        count = draw(st.integers(0, min((n - 1 - start) // step + 1, m)))
        starts.append(start)
        steps.append(step)
        counts.append(count)
        outs.append(draw(st.integers(0, m - count)))
    return starts, steps, counts, outs


@st.composite
def batches(draw: st.DrawFn) -> dict[str, Any]:
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    endian = draw(st.sampled_from(["little", "big"]))
    codecs = draw(bytes_codecs())
    n = draw(st.integers(0, 7))
    whole = draw(st.booleans())  # chunks laid out side by side along axis 0, whole
    out_shape = (shape[0] * n, *shape[1:]) if whole else tuple(
        draw(st.lists(st.integers(1, 8), min_size=ndim, max_size=ndim)))
    geometry = []
    for i in range(n):
        if whole and draw(st.booleans()):
            at = [i * shape[0]] + [0] * (ndim - 1)
            geometry.append(([0] * ndim, [1] * ndim, list(shape), at))
        else:
            geometry.append(draw(selections(shape, out_shape or (1,) * ndim)))
    return {
        "dtype": dtype, "shape": shape, "endian": endian, "codecs": codecs,
        "geometry": geometry, "out_shape": out_shape,
        "absent": [draw(st.integers(0, 5)) == 0 for _ in range(n)],
        "kinds": [draw(st.sampled_from(["random", "smooth", "constant"])) for _ in range(n)],
        "order": draw(st.sampled_from(["C", "F", "strided", "reversed"])),
        "one_source": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**16)),
    }


def output(shape: tuple[int, ...], dtype: np.dtype, order: str, rng: np.random.Generator
           ) -> np.ndarray:
    """An output of ``shape`` in the layout ``order``, holding random bytes."""
    big = tuple(2 * n + 1 for n in shape) if order == "strided" else shape
    base = rng.integers(0, 256, int(np.prod(big)) * dtype.itemsize, dtype=np.uint8)
    base = base.view(dtype).reshape(big, order="F" if order == "F" else "C")
    if order == "strided":
        return base[tuple(slice(1, 1 + 2 * n, 2) for n in shape)]
    if order == "reversed":
        return base[tuple(slice(None, None, -1) for _ in shape)]
    return base


def stored(chain: PreparedChain, values: list[np.ndarray], absent: list[bool],
           one_source: bool) -> tuple[list[Any], list[int], list[int], list[int], list[Any]]:
    """The chunks as a shard (one source, in a shuffled order, with gaps) or one source
    each: sources, which, offsets, sizes, and each chunk's bytes (None: absent)."""
    frames = [None if gone else bytes(chain.encode_general(v)) for v, gone in zip(values, absent)]
    if not one_source:
        sources = [b"" if f is None else f for f in frames]
        return (sources, list(range(len(frames))), [0] * len(frames),
                [-1 if f is None else len(f) for f in frames], frames)
    parts, offsets, at = [b"\x07" * 3], [], 3
    for f in reversed(frames):
        offsets.append(at)
        parts.append(f or b"")
        parts.append(b"\x09")
        at += len(f or b"") + 1
    offsets.reverse()
    return ([b"".join(parts)], [0] * len(frames), offsets,
            [-1 if f is None else len(f) for f in frames], frames)


@settings(max_examples=500, deadline=None)
@given(batches())
def test_place_equals_chunk_by_chunk(case: dict[str, Any]) -> None:
    dtype, shape = case["dtype"], case["shape"]
    rng = np.random.default_rng(case["seed"])
    fill = data_of(rng, dtype, (1,), "random")[0]
    chain = chain_of(dtype, shape, case["codecs"], case["endian"], fill=fill)
    decoder = chain.batch_decoder
    event(f"{'no decoder' if decoder is None else 'decoder'}: {dtype.kind}")
    if decoder is None:  # records whose fields change byte order
        assert dtype.fields is not None
        return
    values = [data_of(rng, dtype, shape, kind) for kind in case["kinds"]]
    sources, which, offsets, sizes, frames = stored(chain, values, case["absent"],
                                                    case["one_source"])
    geometry = case["geometry"]
    out = output(case["out_shape"], dtype, case["order"], rng)
    expected = out.copy()
    elements = Elements.of(dtype, chain.spec.fill_value)
    for (starts, steps, counts, outs), data in zip(geometry, frames):
        if 0 in counts:
            continue
        chunk_selection = tuple(slice(a, a + (c - 1) * b + 1, b)
                                for a, b, c in zip(starts, steps, counts))
        out_selection = tuple(slice(o, o + c) for o, c in zip(outs, counts))
        place_selection(chain, elements, chunk_selection, out_selection, False, data,
                        expected)
    n, ndim = len(geometry), len(shape)
    columns = [np.array([g[k] for g in geometry], dtype=np.int64).reshape(n, ndim)
               for k in range(4)]
    decoder.place(sources, np.array(which, np.int64), np.array(offsets, np.int64),
                  np.array(sizes, np.int64), *columns, out, elements.fill)
    assert out.tobytes() == expected.tobytes()


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(DTYPES),
    st.lists(st.integers(1, 9), min_size=1, max_size=4),
    bytes_codecs(),
    st.sampled_from(["little", "big"]),
    st.sampled_from(["C", "F", "strided", "reversed", "swapped"]),
    st.sampled_from(["random", "smooth", "constant"]),
    st.integers(0, 2**16),
)
def test_encode_many_equals_encode_general(dtype: Any, shape: list[int],
                                           codecs: list[dict[str, Any]], endian: str,
                                           layout: str, kind: str, seed: int) -> None:
    dtype = np.dtype(dtype)
    chain = chain_of(dtype, tuple(shape), codecs, endian)
    rng = np.random.default_rng(seed)
    chunks = []
    for _ in range(3):
        value = data_of(rng, dtype, tuple(shape), kind)
        base = output(tuple(shape), dtype, "C" if layout == "swapped" else layout, rng)
        base[...] = value
        if layout == "swapped" and dtype.fields is None:
            base = base.astype(dtype.newbyteorder())
        chunks.append(base)
    chunks.append(np.ascontiguousarray(chunks[0]))
    event(f"batch encoder: {chain._batch_encoder is not None}")
    encoded = chain.encode_many(chunks)
    assert [bytes(e) for e in encoded] == [bytes(chain.encode_general(c)) for c in chunks]
    assert all(type(e) is bytes for e in encoded) or chain._batch_encoder is None
    for e, c in zip(encoded, chunks):
        assert chain.decode(e).astype(dtype).tobytes() == np.ascontiguousarray(c, dtype).tobytes()
        assert bytes(chain.encode(c)) == bytes(e)


@pytest.mark.parametrize("codecs", [
    [{"name": "gzip", "configuration": {"level": 1}}],
    [{"name": "gzip", "configuration": {"level": 9}}],
    [{"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    [{"name": "blosc", "configuration": {"cname": "zstd", "shuffle": "shuffle"}},
     {"name": "crc32c"}],
])
def test_large_chunks_encode_as_alone(codecs: list[dict[str, Any]]) -> None:
    # Outputs larger than any one buffer Python's zlib grows to (its first is 16-32 KiB).
    rng = np.random.default_rng(3)
    values = (np.cumsum(rng.integers(-2, 3, 300_000)) % 1000).astype("<i4").reshape(600, 500)
    chain = chain_of(np.dtype("<i4"), (300, 500), codecs, "little")
    views = [values[:300], values[300:], values[::2], values[1::2]]
    assert chain._batch_encoder is not None
    assert chain.encode_many(views) == [bytes(chain.encode_general(v)) for v in views]


def test_gzip_level_0_is_decoded_but_not_encoded_in_batches() -> None:
    chain = chain_of(np.dtype("u1"), (64,), [{"name": "gzip", "configuration": {"level": 0}}],
                     "little")
    assert chain.batch_decoder is not None
    assert chain._batch_encoder is None  # zlib cuts stored blocks by its room
    chunks = [np.arange(64, dtype="u1"), np.arange(128, dtype="u1")[::2]]
    assert chain.encode_many(chunks) == [bytes(chain.encode_general(c)) for c in chunks]


def test_streams_the_python_path_reads_are_read_alike() -> None:
    """gzip members one after another with zero padding, zstd frames without a content
    size and skippable frames: decoded natively as the Python path decodes them."""
    import gzip as gzip_module

    import numcodecs.zstd

    values = np.arange(96, dtype="<u2")
    raw = values.tobytes()
    gz = gzip_module.compress(raw[:100]) + bytes(5) + gzip_module.compress(raw[100:]) + bytes(3)
    streaming = numcodecs.zstd.Zstd().encode(raw)  # with its content size
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"skip" + streaming
    for codecs, frame in (([{"name": "gzip"}], gz), ([{"name": "zstd"}], skippable)):
        chain = chain_of(np.dtype("<u2"), (96,), codecs, "little")
        out = np.zeros(96, "<u2")
        chain.batch_decoder.place([frame], [0], [0], [len(frame)], [[0]], [[1]], [[96]],
                                  [[0]], out, b"\0\0")
        np.testing.assert_array_equal(out, values)
        np.testing.assert_array_equal(chain.decode(frame), values)


def test_zstd_frame_without_content_size() -> None:
    # numcodecs' frame with its header rewritten as a streaming writer's: no
    # Frame_Content_Size, not single-segment, a 4 KiB window (the data is 4000 bytes).
    import numcodecs.zstd

    from zarrx.codecs.zstd import _frame_header

    values = np.arange(1000, dtype="<i4")
    frame = numcodecs.zstd.Zstd().encode(values.tobytes())
    blocks, size = _frame_header(memoryview(frame), 0)
    assert size == 4000
    streaming = frame[:4] + bytes([frame[4] & 0x04, 2 << 3]) + frame[blocks:]
    chain = chain_of(np.dtype("<i4"), (1000,), [{"name": "zstd"}], "little")
    np.testing.assert_array_equal(chain.decode(streaming), values)
    out = np.zeros(1000, "<i4")
    chain.batch_decoder.place([streaming], [0], [0], [len(streaming)], [[0]], [[1]], [[1000]],
                              [[0]], out, bytes(4))
    np.testing.assert_array_equal(out, values)


def test_threads_place_disjoint_slices_of_one_batch_at_once() -> None:
    rng = np.random.default_rng(0)
    chain = chain_of(np.dtype("<f8"), (16, 16), [{"name": "zstd"}, {"name": "crc32c"}], "big")
    values = rng.normal(size=(64, 64, 64))
    chunks = [values[i // 4 * 16:(i // 4 + 1) * 16, i % 4 * 16:(i % 4 + 1) * 16, k]
              for k in range(64) for i in range(16)]
    frames = chain.encode_many(chunks)
    shard = b"".join(frames)
    sizes = np.array([len(f) for f in frames], np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    n = len(chunks)
    outs = np.array([(i // 4 * 16, i % 4 * 16 + 64 * k) for k in range(64) for i in range(16)],
                    np.int64)
    out = np.zeros((64, 64 * 64))
    geometry = (np.zeros(n, np.int64), offsets, sizes, np.zeros((n, 2), np.int64),
                np.ones((n, 2), np.int64), np.full((n, 2), 16, np.int64), outs)
    threads = [threading.Thread(target=chain.batch_decoder.place, args=(
        [shard], *(g[t::8] for g in geometry), out, bytes(8))) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = np.concatenate([values[:, :, k] for k in range(64)], axis=1)
    np.testing.assert_array_equal(out, expected)


def test_fill_bytes_in_the_outputs_order() -> None:
    chain = chain_of(np.dtype("<f4"), (4,), [{"name": "zstd"}], "big", fill=np.float32(2.5))
    out = np.zeros(8, "<f4")
    fill = fill_bytes(np.dtype("<f4"), np.float32(2.5))
    frame = chain.encode_general(np.arange(4, dtype="<f4"))
    chain.batch_decoder.place([frame], [0, 0], [0, 0], [len(frame), -1], [[0], [0]],
                              [[1], [1]], [[4], [4]], [[0], [4]], out, fill)
    np.testing.assert_array_equal(out, [0, 1, 2, 3, 2.5, 2.5, 2.5, 2.5])


def test_strided_records_whose_fields_change_byte_order() -> None:
    # NumPy converts such records field by field; reversing whole records would exchange
    # the fields' places.
    dtype = np.dtype([("a", "<i4"), ("b", "<i4")])
    chain = chain_of(dtype, (4, 4), [{"name": "zstd"}], "big")
    assert chain.batch_decoder is None
    base = np.zeros((8, 8), dtype)
    base["a"] = np.arange(64).reshape(8, 8)
    base["b"] = -np.arange(64).reshape(8, 8)
    for chunk in (base[::2, ::2], base[:4, :4]):
        for encoded in (chain.encode(chunk), *chain.encode_many([chunk])):
            np.testing.assert_array_equal(chain.decode(encoded).astype(dtype), chunk)


def test_a_chain_pickles_without_its_kernels_and_makes_them_again() -> None:
    import pickle

    chain = chain_of(np.dtype("<i4"), (4, 4), [{"name": "blosc"}, {"name": "crc32c"}], "big")
    chunk = np.arange(32, dtype="<i4").reshape(4, 8)[:, ::2]
    frame = chain.encode_many([chunk])[0]
    assert chain.batch_decoder is not None
    again = pickle.loads(pickle.dumps(chain))
    assert again.batch_decoder is not None
    assert again.batch_decoder is not chain.batch_decoder
    assert again.encode_many([chunk]) == [frame]
    out = np.zeros((4, 4), "<i4")
    again.batch_decoder.place([frame], [0], [0], [len(frame)], [[0, 0]], [[1, 1]], [[4, 4]],
                              [[0, 0]], out, bytes(4))
    np.testing.assert_array_equal(out, chunk)


def test_a_0d_chunk_is_encoded_alone() -> None:
    chain = chain_of(np.dtype("<f8"), (), [{"name": "zstd"}], "big")
    assert chain.batch_decoder is None
    value = np.asarray(np.arange(3.0)[1])
    assert chain.encode_many([value]) == [bytes(chain.encode_general(value))]
    assert chain.decode(chain.encode(value)) == 1.0


def test_the_module_example_runs() -> None:
    import doctest

    import zarrx.codecs.native

    result = doctest.testmod(zarrx.codecs.native)
    assert result.attempted >= 4
    assert result.failed == 0
