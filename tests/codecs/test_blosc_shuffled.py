"""A strided chunk laid out already byte-shuffled (``BloscCodec.encode_shuffled``, used by
``PreparedChain.encode``) makes exactly numcodecs' frame of the contiguous chunk, for every
cname, level, block size, item size, layout and kind of data (hypothesis)."""

from __future__ import annotations

import numcodecs.blosc
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import zarrx.codecs.blosc as blosc_module
from zarrx.codecs.blosc import CNAMES, BloscCodec, _available_cnames
from zarrx.codecs.pipeline import CodecPipeline
from zarrx.runtime.elements import swap_unit
from zarrx.testing.codecs import spec

CNAMES_HERE = [c for c in CNAMES if c in _available_cnames()]
#: Item sizes 1 to 16: numbers of both byte orders, and byte strings (no byte order).
DTYPES = ["<i2", ">u2", "<f4", ">i4", "<f8", ">c8", "<c16", "<u8", "S3", "S5", "S12", "S16",
          "S7", "u1", "S1"]


@st.composite
def chunks(draw: st.DrawFn) -> np.ndarray:
    """A chunk as the engine meets it: a view of a bigger array (steps, negative steps,
    C or Fortran order), of compressible, constant or incompressible data."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 40), min_size=ndim, max_size=ndim))
    steps = draw(st.lists(st.sampled_from([1, 1, 1, 2, -1, -2]), min_size=ndim, max_size=ndim))
    order = draw(st.sampled_from("CF"))
    kind = draw(st.sampled_from(["smooth", "constant", "random"]))
    base_shape = [n * abs(s) + 1 for n, s in zip(shape, steps)]
    size = int(np.prod(base_shape)) * dtype.itemsize
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if kind == "random":
        raw = rng.integers(0, 256, size=size, dtype=np.uint8)
    elif kind == "constant":
        element = rng.integers(0, 256, size=dtype.itemsize, dtype=np.uint8)
        raw = np.tile(element, size // dtype.itemsize)
    else:
        raw = (np.arange(size) // 7 % 5).astype(np.uint8)
    base = raw.view(dtype).reshape(base_shape, order=order)
    index = tuple(slice(0, n * s, s) if s > 0 else slice(n * -s, 0, s)
                  for n, s in zip(shape, steps))
    return base[index]


def reference(image: np.ndarray, codec: BloscCodec) -> bytes:
    """numcodecs' frame of the contiguous stored image."""
    return numcodecs.blosc.compress(
        image, codec.cname.encode(), codec.clevel, 1, codec.blocksize, codec.typesize
    )


def stored(chunk: np.ndarray, endian: str | None) -> np.dtype:
    if endian is None or chunk.dtype.byteorder == "|":
        return chunk.dtype
    return chunk.dtype.newbyteorder("<" if endian == "little" else ">")


@settings(max_examples=400, deadline=None)
@given(
    chunks(),
    st.sampled_from(CNAMES_HERE),
    st.integers(0, 9),
    st.sampled_from([0, 0, 0, 1, 200, 4096, 2**16]),
    st.sampled_from(["little", "big"]),
)
def test_fused_frame_is_numcodecs_frame(
    chunk: np.ndarray, cname: str, clevel: int, blocksize: int, endian: str
) -> None:
    endian_or_none = None if chunk.dtype.byteorder == "|" else endian
    image_dtype = stored(chunk, endian_or_none)
    image = np.ascontiguousarray(chunk, dtype=image_dtype)
    codec = BloscCodec(cname=cname, clevel=clevel, shuffle="shuffle", blocksize=blocksize,
                       typesize=chunk.dtype.itemsize)
    expected = reference(image, codec)

    # The codec's own fused call, where it applies: the frame, or None (then the chain
    # encodes the image the usual way).
    if codec.shuffles_bytes_of(chunk.dtype.itemsize):
        swap = swap_unit(chunk.dtype) or swap_unit(image_dtype) if chunk.dtype != image_dtype else 0
        memory = np.empty(image.nbytes, dtype=np.uint8)
        frame = codec.encode_shuffled(chunk, swap, memory)
        event("fused" if frame is not None else "not fused")
        if frame is not None:
            assert frame == expected
        elif clevel > 0 and image.nbytes >= 128 and not expected[2] & 0x02:
            # A frame that compresses (not a plain copy) always comes out of the fused path.
            pytest.fail("the fused path refused a compressible chunk")

    # The chain, as the engine calls it.
    spec_ = spec(chunk.shape, chunk.dtype.newbyteorder("="))
    codecs = [{"name": "bytes", "configuration": {"endian": endian_or_none} if endian_or_none
               else {}}, codec.to_dict()]
    chain = CodecPipeline.from_json(codecs, where="test").prepare(spec_)
    encoded = chain.encode(chunk.astype(chunk.dtype.newbyteorder("="), copy=False)
                           if chunk.dtype.byteorder not in "=|" and endian_or_none is None
                           else chunk)
    assert bytes(encoded) == expected
    np.testing.assert_array_equal(chain.decode(encoded), chunk)


@pytest.mark.parametrize("cname", CNAMES_HERE)
@pytest.mark.parametrize("clevel", [1, 5, 9])
@pytest.mark.parametrize("dtype", ["<f4", "<f8", "<i2", "<c16"])
def test_big_chunks_take_the_fused_path(cname: str, clevel: int, dtype: str) -> None:
    # Chunks large enough for several automatic blocks (and split blocks), as written by
    # the benchmarks: a 64^3-like view of a larger array.
    base = (np.arange(40 * 48 * 130) % 1000).astype(dtype).reshape(40, 48, 130)
    chunk = base[3:35, 5:45, 1:129]
    codec = BloscCodec(cname=cname, clevel=clevel, shuffle="shuffle",
                       typesize=np.dtype(dtype).itemsize)
    memory = np.empty(chunk.nbytes, dtype=np.uint8)
    frame = codec.encode_shuffled(chunk, 0, memory)
    assert frame is not None
    assert frame == reference(np.ascontiguousarray(chunk), codec)
    assert frame[2] & 0x01  # the header says shuffled


def test_incompressible_chunk_falls_back_to_a_plain_copy_of_the_image() -> None:
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2**32, size=(70, 70), dtype="<u4")
    chunk = base[::2, 1:65]
    codec = BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4)
    memory = np.empty(chunk.nbytes, dtype=np.uint8)
    assert codec.encode_shuffled(chunk, 0, memory) is None  # c-blosc stored it as a copy
    spec_ = spec(chunk.shape, "<u4")
    chain = CodecPipeline([*CodecPipeline.from_json(
        [{"name": "bytes"}], where="test").codecs, codec]).prepare(spec_)
    encoded = chain.encode(chunk)
    assert encoded == reference(np.ascontiguousarray(chunk), codec)
    assert encoded[2] & 0x02  # the plain copy, of the unshuffled image


def test_a_frame_shuffled_by_c_blosc_anyway_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # numcodecs' global-context path honours BLOSC_SHUFFLE: a "no shuffle" compression may
    # come back shuffled, and the pre-shuffled bytes must not be shuffled twice.
    import zarrx.codecs.blosc as blosc_module

    lib = blosc_module._load()
    real = lib.compress

    def shuffles_anyway(source, cname, clevel, shuffle, blocksize, typesize):
        return real(source, cname, clevel, 1, blocksize, typesize)

    monkeypatch.setattr(lib, "compress", shuffles_anyway)
    chunk = (np.arange(64 * 70) % 100).astype("<f4").reshape(64, 70)[:, 3:67]
    codec = BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4)
    assert codec.encode_shuffled(chunk, 0, np.empty(chunk.nbytes, dtype=np.uint8)) is None


@settings(max_examples=200, deadline=None)
@given(
    chunks(),
    st.sampled_from(CNAMES_HERE),
    st.integers(0, 9),
    st.sampled_from([0, 0, 1, 4096]),
    st.sampled_from(["little", "big"]),
    st.booleans(),
)
def test_a_run_of_chunks_is_encoded_as_each_alone(
    chunk: np.ndarray, cname: str, clevel: int, blocksize: int, endian: str, direct: bool
) -> None:
    """PreparedChain.encode_many (the fused run: one call without the GIL where c-blosc's
    blosc_compress_ctx is reachable, else numcodecs chunk by chunk) gives each chunk the
    bytes encode gives it alone (themselves numcodecs' frames, above), and they decode
    back."""
    endian_or_none = None if chunk.dtype.byteorder == "|" else endian
    codec = BloscCodec(cname=cname, clevel=clevel, shuffle="shuffle", blocksize=blocksize,
                       typesize=chunk.dtype.itemsize)
    codecs = [{"name": "bytes", "configuration": {"endian": endian_or_none} if endian_or_none
               else {}}, codec.to_dict()]
    native = chunk.dtype.newbyteorder("=")
    chain = CodecPipeline.from_json(codecs, where="test").prepare(spec(chunk.shape, native))
    if chunk.dtype.byteorder not in "=|" and endian_or_none is None:
        chunk = chunk.astype(native, copy=False)
    run = [chunk, chunk[::-1], np.ascontiguousarray(chunk), chunk]
    with pytest.MonkeyPatch.context() as mp:
        if not direct:
            mp.setattr(blosc_module, "_COMPRESS_CTX", 0)
        encoded = chain.encode_many(run)
    assert [bytes(e) for e in encoded] == [bytes(chain.encode(c)) for c in run]
    for e, c in zip(encoded, run):
        np.testing.assert_array_equal(chain.decode(e), c)


def test_the_run_kernel_refuses_what_it_must() -> None:
    """shuffle_compress_many: a frame whose flags byte has a bit of ``unless`` is None
    (the compressor-format bits of an lz4 frame; c-blosc's plain copy of incompressible
    bytes), the chunks' images must have one size, and it needs a compressor."""
    from zarrx._core.shuffle import shuffle_compress_many

    address = blosc_module._compress_ctx()
    assert address  # numcodecs' extension exports blosc_compress_ctx here
    chunk = (np.arange(64 * 70) % 100).astype("<f4").reshape(64, 70)[:, 3:67]
    memory = np.empty(chunk.nbytes, dtype=np.uint8)
    tail = (chunk.nbytes, 0, address, 5, b"lz4", 4, 0)
    (frame,) = shuffle_compress_many([chunk], memory, *tail, 0x01, 0x02)
    assert frame == reference(np.ascontiguousarray(chunk), BloscCodec(
        cname="lz4", clevel=5, shuffle="shuffle", typesize=4))
    assert shuffle_compress_many([chunk, chunk], memory, *tail, 0x01, 0xE0) == [None, None]
    assert shuffle_compress_many([], memory, *tail, 0x01, 0x02) == []
    noise = np.random.default_rng(0).integers(0, 2**32, chunk.shape, dtype="<u4")
    assert shuffle_compress_many([chunk, noise.view("<f4")], memory, *tail, 0x01,
                                 0x02)[1] is None
    with pytest.raises(ValueError, match="dst has 16384 bytes"):
        shuffle_compress_many([chunk, chunk[:10]], memory, *tail, 0x01, 0x02)
    with pytest.raises(ValueError, match="no compressor"):
        shuffle_compress_many([chunk], memory, chunk.nbytes, 0, 0, 5, b"lz4", 4, 0, 1, 2)
