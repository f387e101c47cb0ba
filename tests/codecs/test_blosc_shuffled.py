"""A strided chunk laid out already byte-shuffled (``BloscCodec.shuffled_layout``: the batch
encoder's gather does the shuffle, c-blosc compresses with its shuffle off, the flag is
set after) makes exactly numcodecs' frame of the contiguous chunk, for every cname, level,
block size, item size, layout and kind of data (hypothesis)."""

from __future__ import annotations

import numcodecs.blosc
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from zarrx._core.batch import encode_chunks
from zarrx.codecs import libraries
from zarrx.codecs.blosc import CNAMES, BloscCodec, _available_cnames
from zarrx.codecs.bytes import BytesCodec
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


def fused(codec: BloscCodec, chunk: np.ndarray, swap: int) -> bytes | str | None:
    """The frame the fused path makes of ``chunk`` (``None``: declined), or ``"no"`` when
    the codec offers no fused layout for it."""
    layout = codec.shuffled_layout(chunk.dtype.itemsize, chunk.nbytes)
    if layout is None:
        return "no"
    step = layout.step
    (frame,), stop, _, _ = encode_chunks([chunk], chunk.dtype, chunk.shape, swap,
                                         layout.blocksize, [step.encode], [step.context],
                                         [step.release], [chunk.nbytes + 16])
    assert stop == 1
    return frame


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

    # The fused layout, where it applies: the frame, or None (then the chain encodes the
    # image the usual way).
    swap = swap_unit(chunk.dtype) or swap_unit(image_dtype) if chunk.dtype != image_dtype else 0
    frame = fused(codec, chunk, swap)
    event("not offered" if frame == "no" else "fused" if frame is not None else "declined")
    if frame is not None and frame != "no":
        assert frame == expected
    elif frame is None and clevel > 0 and image.nbytes >= 128 and not expected[2] & 0x02:
        # A frame that compresses (not a plain copy) always comes out of the fused path.
        pytest.fail("the fused path declined a compressible chunk")

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
    frame = fused(codec, chunk, 0)
    assert isinstance(frame, bytes)
    assert frame == reference(np.ascontiguousarray(chunk), codec)
    assert frame[2] & 0x01  # the header says shuffled


def test_incompressible_chunk_falls_back_to_a_plain_copy_of_the_image() -> None:
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2**32, size=(70, 70), dtype="<u4")
    chunk = base[::2, 1:65]
    codec = BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4)
    assert fused(codec, chunk, 0) is None  # c-blosc stored it as a copy: declined
    chain = CodecPipeline([BytesCodec(), codec]).prepare(spec(chunk.shape, "<u4"))
    for encoded in (chain.encode(chunk), *chain.encode_many([chunk, chunk])):
        assert encoded == reference(np.ascontiguousarray(chunk), codec)
        assert encoded[2] & 0x02  # the plain copy, of the unshuffled image


def test_no_fused_layout_where_it_cannot_be_the_frame() -> None:
    codec = BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4)
    assert codec.shuffled_layout(4, 64 * 64) is not None
    assert codec.shuffled_layout(8, 64 * 64) is None  # another type size
    assert codec.shuffled_layout(4, 64) is None  # stored as a plain copy by c-blosc
    for other in (BloscCodec(cname="lz4", clevel=0, shuffle="shuffle", typesize=4),
                  BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle", typesize=4),
                  BloscCodec(cname="lz4", clevel=5, shuffle="noshuffle", typesize=4)):
        assert other.shuffled_layout(4, 64 * 64) is None


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
    """PreparedChain.encode_many (one call without the GIL where c-blosc's functions are
    reachable, else numcodecs chunk by chunk) gives each chunk the bytes the general path
    gives it alone (numcodecs' frames, above), and they decode back."""
    endian_or_none = None if chunk.dtype.byteorder == "|" else endian
    codec = BloscCodec(cname=cname, clevel=clevel, shuffle="shuffle", blocksize=blocksize,
                       typesize=chunk.dtype.itemsize)
    native = chunk.dtype.newbyteorder("=")
    if chunk.dtype.byteorder not in "=|" and endian_or_none is None:
        chunk = chunk.astype(native, copy=False)
    run = [chunk, chunk[::-1], np.ascontiguousarray(chunk), chunk]
    with pytest.MonkeyPatch.context() as mp:
        if not direct:
            mp.setitem(libraries._FOUND, "blosc", None)
        chain = CodecPipeline([BytesCodec(endian=endian_or_none), codec]).prepare(
            spec(chunk.shape, native))
        assert (chain.batch_decoder is None) != direct
        encoded = chain.encode_many(run)
    assert [bytes(e) for e in encoded] == [bytes(chain.encode_general(c)) for c in run]
    for e, c in zip(encoded, run):
        np.testing.assert_array_equal(chain.decode(e), c)
