from __future__ import annotations

import struct
import tracemalloc
from collections.abc import Callable

import numcodecs
import numpy as np
import pytest
import zarr

from tests.codecs._peers import same_bytes, spec_of, zarr_read, zarr_write
from zarrx.codecs.zstd import ZstdCodec, _frame_header
from zarrx.errors import CodecError, MetadataError
from zarrx.testing.codecs import BytesBytesCodecTests

MAGIC = struct.pack("<I", 0xFD2FB528)
DATA = (np.arange(75_000, dtype="int32") // 7).tobytes()  # 300_000 bytes, compressible


class TestZstdCodec(BytesBytesCodecTests):
    codecs = (
        ZstdCodec(),
        ZstdCodec(level=-5),
        ZstdCodec(level=3, checksum=True),
        ZstdCodec(level=19),
    )


def test_defaults_and_aliases() -> None:
    assert ZstdCodec.from_config({}).to_dict() == {
        "name": "zstd",
        "configuration": {"level": 0, "checksum": False},
    }
    assert "https://purl.org/zarr/spec/codec/zstd/1.0" in ZstdCodec.aliases


@pytest.mark.parametrize("level", [23, -131073, True, 1.0, "3", None])
def test_bad_level(level: object) -> None:
    with pytest.raises(MetadataError, match=r"'zstd'.*'level'"):
        ZstdCodec.from_config({"level": level})


@pytest.mark.parametrize("checksum", [0, 1, "true", None])
def test_bad_checksum(checksum: object) -> None:
    with pytest.raises(MetadataError, match=r"'zstd'.*'checksum'"):
        ZstdCodec.from_config({"checksum": checksum})


def _peak_memory(fn: Callable[[], None]) -> int:
    """The most memory ``fn`` had allocated at once (bytes)."""
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def test_frame_claiming_64_gib_refused_without_allocating() -> None:
    # Single-segment frame, 8-byte Frame_Content_Size = 64 GiB, one last RLE block.
    claimed = 64 << 30
    block = (100 << 3) | (1 << 1) | 1  # 100 bytes, RLE, last block
    frame = MAGIC + bytes([0xE0]) + struct.pack("<Q", claimed) + block.to_bytes(3, "little")
    frame += b"\x2a"
    assert len(frame) == 17
    codec = ZstdCodec()

    def refuse(max_size: int | None, match: str) -> None:
        with pytest.raises(CodecError, match=match):
            codec.decode(frame, max_size)

    for max_size, match in [(1 << 20, "more than the expected 1048576"), (None, "claims")]:
        peak = _peak_memory(lambda m=max_size, p=match: refuse(m, p))
        assert peak < 1 << 20
    with pytest.raises(CodecError):
        codec.decode_into(frame, bytearray(100))


def test_unsized_frame_with_huge_rle_blocks_refused() -> None:
    # No Frame_Content_Size; 1000 RLE blocks each claiming 2 MiB - 1: ~2 GiB from 4 KiB.
    header = MAGIC + bytes([0x00, 0x50])  # not single segment, window 1 MiB
    block = ((1 << 21) - 1) << 3 | (1 << 1)
    blocks = (block.to_bytes(3, "little") + b"\0") * 999
    last = ((1 << 21) - 1) << 3 | (1 << 1) | 1
    frame = header + blocks + last.to_bytes(3, "little") + b"\0"
    assert len(frame) < 5000

    def refuse() -> None:
        with pytest.raises(CodecError, match="without a content size"):
            ZstdCodec().decode(frame, 1 << 20)

    peak = _peak_memory(refuse)
    assert peak < 1 << 20


def _strip_content_size(frame: bytes) -> bytes:
    """The same blocks behind a header without Frame_Content_Size (window 1 MiB)."""
    start, size = _frame_header(memoryview(frame), 0)
    assert size is not None
    checksum = frame[4] & 0x04
    return MAGIC + bytes([checksum, 0x50]) + frame[start:]


@pytest.mark.parametrize("checksum", [False, True])
def test_frames_without_content_size(checksum: bool) -> None:
    frame = numcodecs.Zstd(level=3, checksum=checksum).encode(DATA)
    unsized = _strip_content_size(frame)
    assert _frame_header(memoryview(unsized), 0)[1] is None
    codec = ZstdCodec()
    assert bytes(codec.decode(unsized, len(DATA))) == DATA
    assert bytes(codec.decode(unsized, None)) == DATA
    # The blocks bound the output by 3 x 128 KiB: refused up front when that is far above.
    with pytest.raises(CodecError, match="without a content size"):
        codec.decode(unsized, 200_000)
    # Within one block of the limit: decoded with a bounded stream, then refused.
    with pytest.raises(CodecError, match="more than the expected 250000"):
        codec.decode(unsized, 250_000)
    out = bytearray(len(DATA))
    codec.decode_into(unsized, out)
    assert out == DATA


def test_raw_and_rle_blocks_without_content_size() -> None:
    header = MAGIC + bytes([0x00, 0x38])  # window 128 KiB
    raw = b"abc" * 1000
    blocks = ((len(raw) << 3) | 0).to_bytes(3, "little") + raw
    blocks += ((500 << 3) | (1 << 1) | 1).to_bytes(3, "little") + b"z"
    frame = header + blocks
    assert bytes(ZstdCodec().decode(frame, 3500)) == raw + b"z" * 500
    with pytest.raises(CodecError):
        ZstdCodec().decode(frame, 3499)


def test_several_frames_and_skippable_frames() -> None:
    a, b = DATA[:100_000], DATA[100_000:]
    skippable = struct.pack("<II", 0x184D2A53, 5) + b"hello"
    stream = numcodecs.Zstd().encode(a) + skippable + numcodecs.Zstd(checksum=True).encode(b)
    codec = ZstdCodec()
    assert bytes(codec.decode(stream, len(DATA))) == DATA
    assert bytes(codec.decode(stream, None)) == DATA
    with pytest.raises(CodecError, match="more than the expected"):
        codec.decode(stream, len(DATA) - 1)
    mixed = numcodecs.Zstd().encode(a) + _strip_content_size(numcodecs.Zstd().encode(b))
    assert bytes(codec.decode(mixed, len(DATA))) == DATA


@pytest.mark.parametrize(
    "junk",
    [b"", b"\x28\xb5\x2f", b"not zstd at all", MAGIC + b"\x08\x00\x00\x00\x00\x00"],
)
def test_not_a_frame(junk: bytes) -> None:
    with pytest.raises(CodecError):
        ZstdCodec().decode(junk, 100)


def test_trailing_garbage_refused() -> None:
    frame = numcodecs.Zstd().encode(DATA)
    with pytest.raises(CodecError, match="not a zstd frame"):
        ZstdCodec().decode(frame + b"garbage!", None)


def test_checksum_detects_payload_corruption() -> None:
    frame = bytearray(ZstdCodec(checksum=True).encode(DATA))
    frame[-1] ^= 0xFF  # the stored checksum
    with pytest.raises(CodecError, match="corrupt"):
        ZstdCodec().decode(bytes(frame), len(DATA))


def test_decode_into() -> None:
    codec = ZstdCodec()
    frame = codec.encode(DATA)
    out = np.empty(len(DATA), np.uint8)
    codec.decode_into(frame, out)
    assert out.tobytes() == DATA
    as_int32 = np.empty(len(DATA) // 4, "int32")
    codec.decode_into(frame, as_int32)
    assert as_int32.tobytes() == DATA
    with pytest.raises(CodecError, match="more than the expected"):
        codec.decode_into(frame, bytearray(len(DATA) - 1))
    with pytest.raises(CodecError, match="expected 300001"):
        codec.decode_into(frame, bytearray(len(DATA) + 1))
    with pytest.raises(CodecError, match="writable"):
        codec.decode_into(frame, bytes(len(DATA)))


def test_max_encoded_size_formula() -> None:
    codec = ZstdCodec()
    assert codec.max_encoded_size(0) == 64
    assert codec.max_encoded_size(1 << 20) == (1 << 20) + (1 << 12)


# -- interop with numcodecs and zarr-python 3 -------------------------------------------


@pytest.mark.parametrize(("level", "checksum"), [(0, False), (-3, False), (5, True), (22, False)])
def test_numcodecs_interop(level: int, checksum: bool) -> None:
    ours = ZstdCodec(level=level, checksum=checksum)
    theirs = numcodecs.Zstd(level=level, checksum=checksum)
    encoded = bytes(ours.encode(DATA))
    assert encoded == theirs.encode(DATA)  # the same libzstd call: identical frames
    assert bytes(theirs.decode(encoded)) == DATA
    assert bytes(ours.decode(theirs.encode(DATA), len(DATA))) == DATA


ARRAYS = [
    np.sin(np.arange(5000) / 30).reshape(50, 100),
    np.arange(1000, dtype="int16"),
    np.random.default_rng(0).integers(0, 255, 3000, dtype="uint8"),
]


@pytest.mark.parametrize(("level", "checksum"), [(0, False), (3, True), (-1, False)])
@pytest.mark.parametrize("data", ARRAYS, ids=["f8", "i2", "u1"])
def test_zarr_python_interop(level: int, checksum: bool, data: np.ndarray) -> None:
    peer = zarr.codecs.ZstdCodec(level=level, checksum=checksum)
    raw, codecs = zarr_write(data, compressors=[peer])
    ours = ZstdCodec.from_config(codecs[1]["configuration"]).evolve(spec_of(data))
    assert codecs[1] == ours.to_dict() == ZstdCodec(level=level, checksum=checksum).to_dict()
    assert peer.to_dict() == ours.to_dict()
    little = data.astype(data.dtype.newbyteorder("<")).tobytes()
    assert bytes(ours.decode(raw, len(little))) == little
    encoded = bytes(ours.encode(little))
    assert encoded == raw
    assert same_bytes(zarr_read(encoded, data, compressors=[peer]), data)
