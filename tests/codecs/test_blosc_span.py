"""Part of a Blosc 1 frame decoded (``zarrx._core.blosc_part.decode_span``, used by
``BloscCodec.decode_span``, ``PreparedChain.decoded(data, selection)`` and the partial
reads' ``decode_blocks``): the bytes of a span equal numcodecs' whole decode for every
cname, level, shuffle, type size, block size and kind of data (hypothesis); frames the
kernel does not handle (other compressors, a bit shuffle, no LZ4 symbol) fall back to the
whole decode and are still right; corrupt frames never crash and never give wrong bytes."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numcodecs.blosc
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import zarrx
import zarrx._core.shuffle
import zarrx.codecs.blosc as blosc_module
from zarrx._core.blosc_part import decode_span
from zarrx.codecs import libraries
from zarrx.codecs.blosc import CNAMES, BloscCodec, _available_cnames
from zarrx.codecs.bytes import BytesCodec
from zarrx.codecs.partial import IN_MEMORY_SHARE
from zarrx.codecs.pipeline import CodecPipeline
from zarrx.testing.codecs import spec

CNAMES_HERE = [c for c in CNAMES if c in _available_cnames()]
LZ4, LZ4_WHOLE = blosc_module._lz4()
SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}


def _raw(kind: str, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.integers(0, 256, size=size, dtype=np.uint8)
    if kind == "constant":
        return np.full(size, rng.integers(0, 256), dtype=np.uint8)
    return ((np.arange(size) // 7) % 5 + (np.arange(size) // 997) % 3).astype(np.uint8)


def _handled(frame: bytes) -> bool:
    """Whether the kernel must decode ``frame`` itself: a plain copy, or lz4 streams
    without a bit shuffle."""
    flags = frame[2]
    return bool(flags & 0x02) or (flags >> 5 == 1 and not flags & 0x04)


@contextmanager
def _whole_decodes() -> Iterator[list[int]]:
    """Count the whole-frame decodes (c-blosc) made inside the block."""
    calls: list[int] = []
    original = blosc_module._decompress_into

    def counting(view: Any, out: Any, nbytes: int) -> None:
        calls.append(nbytes)
        original(view, out, nbytes)

    blosc_module._decompress_into = counting
    try:
        yield calls
    finally:
        blosc_module._decompress_into = original


@st.composite
def frames(draw: st.DrawFn) -> tuple[bytes, np.ndarray]:
    """A frame numcodecs wrote and its decoded bytes: any cname, level, shuffle and type
    size (3, 5, 7 included), automatic or small forced blocks (many blocks, a short last
    block, sizes that are not a whole number of elements)."""
    typesize = draw(st.sampled_from([1, 2, 3, 4, 5, 7, 8, 12, 16, 17]))
    size = draw(st.sampled_from([1, 3, 127, 128, 1000, 4099, 20_000, 65_536, 131_072,
                                 131_075, 300_001]))
    kind = draw(st.sampled_from(["smooth", "constant", "random"]))
    raw = _raw(kind, size, draw(st.integers(0, 2**16)))
    cname = draw(st.sampled_from([*CNAMES_HERE, "lz4", "lz4", "lz4hc"]))
    clevel = draw(st.integers(0, 9))
    shuffle = draw(st.sampled_from(["noshuffle", "shuffle", "shuffle", "bitshuffle"]))
    blocksize = draw(st.sampled_from([0, 0, 0, 128, 256, 1000, 4096, 2**16]))
    frame = numcodecs.blosc.compress(raw, cname.encode(), clevel, SHUFFLES[shuffle],
                                     blocksize, typesize)
    event(f"flags {frame[2]:#04x}")
    return bytes(frame), raw


@st.composite
def spans(draw: st.DrawFn, size: int) -> tuple[int, int]:
    start = draw(st.integers(0, size - 1))
    length = draw(st.sampled_from([1, 1, 2, 3, 4, 17, 1000, size]))
    return start, min(size, start + length)


@settings(max_examples=600, deadline=None)
@given(frames(), st.data())
def test_span_equals_whole_decode(case: tuple[bytes, np.ndarray], data: st.DataObject) -> None:
    frame, raw = case
    start, stop = data.draw(spans(raw.size))
    # Garbage around the span: only the span's bytes are promised.
    out = np.random.default_rng(start).integers(0, 256, raw.size, dtype=np.uint8)
    whole = data.draw(st.sampled_from([0, LZ4_WHOLE]))  # with and without whole streams
    done = decode_span(frame, start, stop, out, LZ4, whole)
    assert done == _handled(frame)
    if done:
        np.testing.assert_array_equal(out[start:stop], raw[start:stop])
    assert numcodecs.blosc.decompress(frame) == raw.tobytes()  # the oracle is right too


@settings(max_examples=300, deadline=None)
@given(frames(), st.data())
def test_span_from_part_of_the_frame(case: tuple[bytes, np.ndarray],
                                     data: st.DataObject) -> None:
    """The header and block starts in one buffer, and some of the frame's bytes (the
    blocks a partial read fetched) in another: right where they hold the blocks needed,
    refused where they do not."""
    frame, raw = case
    start, stop = data.draw(spans(raw.size))
    blocksize = struct.unpack_from("<I", frame, 8)[0]
    head = frame[: 16 + 4 * -(-raw.size // blocksize)]
    lo = data.draw(st.integers(0, len(frame)))
    hi = data.draw(st.integers(lo, len(frame)))
    out = np.zeros(raw.size, dtype=np.uint8)
    work = np.zeros(raw.size, dtype=np.uint8)
    whole = data.draw(st.sampled_from([0, LZ4_WHOLE]))
    if decode_span(head, start, stop, out, LZ4, whole, work, frame[lo:hi], lo):
        np.testing.assert_array_equal(out[start:stop], raw[start:stop])
    everything = decode_span(head, start, stop, out, LZ4, whole, work, frame, 0)
    assert everything == _handled(frame)
    if everything:
        np.testing.assert_array_equal(out[start:stop], raw[start:stop])


def test_no_lz4_symbol_is_no_span() -> None:
    frame = numcodecs.blosc.compress(_raw("smooth", 100_000, 1), b"lz4", 5, 1, 0, 4)
    out = np.zeros(100_000, dtype=np.uint8)
    assert decode_span(frame, 10, 20, out, LZ4)
    assert not decode_span(frame, 10, 20, out, 0)
    plain = numcodecs.blosc.compress(_raw("random", 1000, 1), b"lz4", 0, 1, 0, 4)
    assert plain[2] & 0x02
    assert decode_span(plain, 10, 20, np.zeros(1000, dtype=np.uint8), 0)  # no LZ4 needed


def test_arguments_are_checked() -> None:
    frame = numcodecs.blosc.compress(_raw("smooth", 1000, 1), b"lz4", 5, 1, 0, 4)
    out = np.zeros(1000, dtype=np.uint8)
    with pytest.raises(ValueError, match="span"):
        decode_span(frame, 10, 1001, out, LZ4)
    with pytest.raises(ValueError, match="span"):
        decode_span(frame, 11, 10, out, LZ4)
    with pytest.raises(ValueError, match="writable"):
        decode_span(frame, 0, 10, np.zeros(1000, dtype=np.uint8)[::2], LZ4)
    with pytest.raises(ValueError, match="writable"):
        decode_span(frame, 0, 10, bytes(1000), LZ4)
    with pytest.raises(TypeError):
        decode_span(12, 0, 10, out, LZ4)
    shared = bytearray(frame) + bytearray(1000)
    view = memoryview(shared)
    with pytest.raises(ValueError, match="overlap"):
        decode_span(view[: len(frame)], 0, 10, view[len(frame) - 8 : len(frame) + 992], LZ4)
    work = np.zeros(1000, dtype=np.uint8)
    with pytest.raises(ValueError, match="work and out overlap"):
        decode_span(frame, 0, 10, out, LZ4, 0, out[10:])
    with pytest.raises(ValueError, match="body and out overlap"):
        decode_span(frame, 0, 10, out, LZ4, 0, work, out[:10])
    with pytest.raises(ValueError, match="at must not be negative"):
        decode_span(frame, 0, 10, out, LZ4, 0, work, frame, -1)
    with pytest.raises(ValueError, match="writable"):
        decode_span(frame, 0, 10, out, LZ4, 0, bytes(1000))
    assert decode_span(frame, 0, 10, out, LZ4, 0, work[:3])  # too small: its own scratch
    assert decode_span(frame, 5, 5, out, LZ4)  # an empty span
    # A frame of another decoded size is left to the whole decode (which says so).
    assert not decode_span(frame, 0, 10, np.zeros(999, dtype=np.uint8), LZ4)


# -- corrupt frames ---------------------------------------------------------------------------


def _sample_frame(typesize: int = 4, blocksize: int = 4096, size: int = 50_000,
                  shuffle: int = 1) -> tuple[bytes, np.ndarray]:
    raw = _raw("smooth", size, 7)
    frame = numcodecs.blosc.compress(raw, b"lz4", 5, shuffle, blocksize, typesize)
    assert frame[2] & 0x02 == 0
    assert frame[2] >> 5 == 1
    return bytes(frame), raw


def _stream_sizes(frame: bytes) -> list[int]:
    """Where each stream's size field lies (offsets in the frame)."""
    _, _, flags, typesize, nbytes, blocksize, _cbytes = struct.unpack_from("<BBBBIII", frame)
    nblocks = -(-nbytes // blocksize)
    at: list[int] = []
    for b in range(nblocks):
        bsize = min(blocksize, nbytes - b * blocksize)
        split = (not flags & 0x10 and typesize <= 16 and bsize // typesize >= 128
                 and bsize == blocksize)
        (off,) = struct.unpack_from("<i", frame, 16 + 4 * b)
        for _ in range(typesize if split else 1):
            at.append(off)
            (size,) = struct.unpack_from("<i", frame, off)
            off += 4 + size
    return at


def _check(frame: bytes, raw: np.ndarray, start: int, stop: int, whole: int) -> None:
    """The kernel on a damaged ``frame`` of ``raw``: no crash; a success gives ``raw``'s
    bytes (the damage lies where the span needs nothing)."""
    out = np.zeros(raw.size, dtype=np.uint8)
    if decode_span(frame, start, stop, out, LZ4, whole):
        np.testing.assert_array_equal(out[start:stop], raw[start:stop])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 50_100), st.booleans(), st.data())
def test_truncated_frames(cut: int, fix_header: bool, data: st.DataObject) -> None:
    frame, raw = _sample_frame()
    short = bytearray(frame[:cut])
    if fix_header and cut >= 16:
        struct.pack_into("<I", short, 12, cut)  # the header agrees with the cut
    start, stop = data.draw(spans(raw.size))
    out = np.zeros(raw.size, dtype=np.uint8)
    done = decode_span(bytes(short), start, stop, out, LZ4,
                       data.draw(st.sampled_from([0, LZ4_WHOLE])))
    if not fix_header and cut < len(frame):
        assert not done  # the header states more bytes than there are
    if done:
        np.testing.assert_array_equal(out[start:stop], raw[start:stop])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 3, 4, 8]),
       st.one_of(st.integers(-(2**31), 2**31 - 1), st.integers(-64, 64)), st.booleans(),
       st.data())
def test_sizes_and_starts_pointing_anywhere(typesize: int, value: int, starts: bool,
                                            data: st.DataObject) -> None:
    frame, raw = _sample_frame(typesize)
    blocksize = struct.unpack_from("<I", frame, 8)[0]
    fields = ([16 + 4 * b for b in range(-(-raw.size // blocksize))] if starts
              else _stream_sizes(frame))
    at = data.draw(st.sampled_from(fields))
    damaged = bytearray(frame)
    old = struct.unpack_from("<i", frame, at)[0]
    # Anything, or near the true value (a size that still lies inside the frame).
    struct.pack_into("<i", damaged, at, value if abs(value) > 64 else max(0, old + value))
    start, stop = data.draw(spans(raw.size))
    _check(bytes(damaged), raw, start, stop, data.draw(st.sampled_from([0, LZ4_WHOLE])))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50_100), st.integers(0, 255)), min_size=1,
                max_size=8), st.sampled_from([0, 4096]), st.sampled_from([0, 1]), st.data())
def test_corrupt_bytes_anywhere(changes: list[tuple[int, int]], blocksize: int, shuffle: int,
                                data: st.DataObject) -> None:
    frame, raw = _sample_frame(blocksize=blocksize, shuffle=shuffle)
    damaged = bytearray(frame)
    for at, value in changes:
        if at < len(damaged):
            damaged[at] = value
    start, stop = data.draw(spans(raw.size))
    out = np.zeros(raw.size, dtype=np.uint8)
    if not decode_span(bytes(damaged), start, stop, out, LZ4,
                       data.draw(st.sampled_from([0, LZ4_WHOLE]))):
        return
    if np.array_equal(out[start:stop], raw[start:stop]):
        return
    try:
        whole = numcodecs.blosc.decompress(bytes(damaged))
    except RuntimeError:
        # LZ4 streams carry no checksum: c-blosc notices damaged stream bytes only when
        # the whole stream then decodes to another size, which a decode of the stream's
        # first bytes never sees. The bytes are what the damaged stream says (as they
        # would be from c-blosc had the damage kept the size).
        event("damaged stream bytes, refused by c-blosc for its decoded size")
        return
    assert whole[start:stop] == out[start:stop].tobytes()


# -- the fallback ---------------------------------------------------------------------------


def test_lookup_of_the_lz4_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    # numcodecs' blosc extension exports its LZ4 (1.9.0 or later here); the lookup itself,
    # its version and symbol checks, are tested in test_libraries.py.
    assert LZ4 != 0
    assert LZ4_WHOLE != 0
    monkeypatch.setitem(libraries._FOUND, "lz4", None)  # none usable
    assert blosc_module._lz4() == (0, 0)


# -- the chain ------------------------------------------------------------------------------


def _chain(cname: str, shuffle: str, dtype: str, shape: tuple[int, ...],
           blocksize: int = 0) -> Any:
    codec = BloscCodec(cname=cname, clevel=5, shuffle=shuffle, blocksize=blocksize)
    return CodecPipeline([BytesCodec(), codec]).prepare(spec(shape, dtype))


@st.composite
def selections(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """What place_selection passes: per axis a slice with a positive step or an index
    (small ones mostly, to fall under the rule), sometimes index arrays."""
    out: list[Any] = []
    count = draw(st.integers(1, 3))  # index arrays broadcast together: one length
    for n in shape:
        how = draw(st.sampled_from(["int", "int", "slice", "all", "array"]))
        if how == "int":
            out.append(draw(st.integers(0, n - 1)))
        elif how == "all":
            out.append(slice(0, n, 1))
        elif how == "array":
            out.append(np.array(draw(st.lists(st.integers(0, n - 1), min_size=count,
                                              max_size=count))))
        else:
            start = draw(st.integers(0, n - 1))
            stop = draw(st.integers(start + 1, n))
            out.append(slice(start, stop, draw(st.integers(1, 3))))
    return tuple(out)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([*CNAMES_HERE, "lz4", "lz4", "lz4hc"]),
       st.sampled_from(["noshuffle", "shuffle", "shuffle", "bitshuffle"]),
       st.sampled_from(["<f4", "<i2", ">f8", "u1", "S3", "<c8"]),
       st.sampled_from([(64, 32, 32), (40, 50, 33), (70_000,), (20, 4100), (16, 16, 16),
                        (7, 300), (1000,)]),
       st.sampled_from([0, 0, 4096]),
       st.sampled_from(["smooth", "random"]), st.data())
def test_chain_selection_equals_numpy(cname: str, shuffle: str, dtype: str,
                                      shape: tuple[int, ...], blocksize: int, kind: str,
                                      data: st.DataObject) -> None:
    chain = _chain(cname, shuffle, dtype, shape, blocksize)
    itemsize = np.dtype(dtype).itemsize
    raw = _raw(kind, int(np.prod(shape)) * itemsize, 3)
    chunk = raw.view(dtype).reshape(shape)
    frame = chain.encode(chunk)
    selection = data.draw(selections(shape))
    with _whole_decodes() as whole, chain.decoded(frame, selection) as got:
        np.testing.assert_array_equal(got[selection], chunk[selection])
    span = chain._spans(shape, itemsize, tuple(
        slice(s, s + 1, 1) if isinstance(s, int) else s for s in selection))
    if span is not None and _handled(frame):
        event("decoded in part")
        assert whole == []  # the span alone
    else:
        assert len(whole) == 1


def test_chain_without_lz4_decodes_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    shape = (64, 32, 32)
    chain = _chain("lz4", "shuffle", "<f4", shape)
    chunk = np.arange(np.prod(shape), dtype="<f4").reshape(shape)
    frame = chain.encode(chunk)
    selection = (3, slice(5, 6, 1), 7)
    with _whole_decodes() as whole, chain.decoded(frame, selection) as got:
        assert got[selection] == chunk[selection]
    assert whole == []
    monkeypatch.setitem(libraries._FOUND, "lz4", None)  # the functions unavailable
    with _whole_decodes() as whole, chain.decoded(frame, selection) as got:
        assert got[selection] == chunk[selection]
    assert len(whole) == 1
    # A large selection is decoded whole too (the rule of partial.in_memory_span).
    big = (slice(0, int(64 * IN_MEMORY_SHARE) + 1, 1), slice(0, 32, 1), slice(0, 32, 1))
    monkeypatch.delitem(libraries._FOUND, "lz4")
    with _whole_decodes() as whole, chain.decoded(frame, big) as got:
        np.testing.assert_array_equal(got[big], chunk[big])
    assert len(whole) == 1


# -- through the engine ---------------------------------------------------------------------


@pytest.mark.parametrize("shards", [None, (64, 64, 64)])
def test_points_and_small_reads_equal_numpy(tmp_path: Any, shards: Any) -> None:
    rng = np.random.default_rng(5)
    data = (np.sin(np.arange(64 * 64 * 128) / 300) * 1000).astype("<f4").reshape(64, 64, 128)
    comp = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                               "shuffle": "shuffle", "typesize": 4}}
    a = zarrx.create_array(str(tmp_path / "a"), data=data, chunks=(32, 32, 64),
                           shards=shards, compressors=[comp])
    with _whole_decodes() as whole:
        for _ in range(50):
            p = tuple(int(rng.integers(0, n)) for n in data.shape)
            assert a[p] == data[p]
        for _ in range(20):
            lo = [int(rng.integers(0, n - 3)) for n in data.shape]
            sel = tuple(slice(x, x + int(rng.integers(1, 4))) for x in lo)
            np.testing.assert_array_equal(a[sel], data[sel])
    assert whole == []  # every one decoded in part
    np.testing.assert_array_equal(a[5, :, [1, 7]], data[5, :, [1, 7]])
