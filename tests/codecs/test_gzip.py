from __future__ import annotations

import gzip
import tracemalloc
import zlib

import numcodecs
import numpy as np
import pytest
import zarr

from tests.codecs._peers import same_bytes, spec_of, zarr_read, zarr_write
from zarrx.codecs.gzip import GzipCodec
from zarrx.errors import CodecError, MetadataError
from zarrx.testing.codecs import BytesBytesCodecTests

DATA = np.sin(np.arange(20000) / 50).astype("float32").tobytes()


class TestGzipCodec(BytesBytesCodecTests):
    codecs = (GzipCodec(), GzipCodec(level=0), GzipCodec(level=1), GzipCodec(level=9))


def test_defaults_and_aliases() -> None:
    assert GzipCodec.from_config({}).to_dict() == {"name": "gzip", "configuration": {"level": 5}}
    assert "https://purl.org/zarr/spec/codec/gzip/1.0" in GzipCodec.aliases


@pytest.mark.parametrize("level", [-1, 10, True, 1.0, "5", None])
def test_bad_level(level: object) -> None:
    with pytest.raises(MetadataError, match=r"'gzip'.*'level'"):
        GzipCodec.from_config({"level": level})


@pytest.mark.parametrize("level", range(10))
def test_same_stream_as_numcodecs(level: int) -> None:
    ours = bytes(GzipCodec(level=level).encode(DATA))
    theirs = numcodecs.GZip(level=level).encode(DATA)
    # Identical but for the modification time (bytes 4-7), which zarrx leaves at 0.
    assert ours[:4] == theirs[:4]
    assert ours[4:8] == b"\0\0\0\0"
    assert ours[8:] == theirs[8:]
    assert gzip.decompress(ours) == DATA


@pytest.mark.parametrize("level", [0, 1, 5, 9])
def test_numcodecs_decodes_ours_and_back(level: int) -> None:
    codec = GzipCodec(level=level)
    assert bytes(numcodecs.GZip(level).decode(codec.encode(DATA))) == DATA
    assert bytes(codec.decode(numcodecs.GZip(level).encode(DATA), len(DATA))) == DATA


def test_other_writers() -> None:
    codec = GzipCodec()
    # zlib's own gzip header (OS byte 3), a file name field, and two concatenated members.
    assert bytes(codec.decode(zlib.compress(DATA, 6, wbits=31), len(DATA))) == DATA
    named = gzip.compress(DATA, mtime=12345)
    assert bytes(codec.decode(named, len(DATA))) == DATA
    half = len(DATA) // 2
    two = gzip.compress(DATA[:half]) + gzip.compress(DATA[half:]) + b"\0\0\0"
    assert bytes(codec.decode(two, len(DATA))) == DATA
    with pytest.raises(CodecError):
        codec.decode(two, len(DATA) - 1)
    with pytest.raises(CodecError, match="corrupt"):
        codec.decode(gzip.compress(DATA) + b"garbage!", None)


def test_bomb_refused_without_inflating_it() -> None:
    bomb = gzip.compress(bytes(64 << 20), 9)  # 64 MiB of zeros in ~64 KiB
    assert len(bomb) < 100_000
    tracemalloc.start()
    try:
        with pytest.raises(CodecError, match="more than the expected 1048576"):
            GzipCodec().decode(bomb, 1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_max_encoded_size_formula() -> None:
    codec = GzipCodec()
    assert codec.max_encoded_size(0) == 25
    n = 1 << 20
    assert codec.max_encoded_size(n) == n + (n >> 12) + (n >> 14) + 7 + 18


# -- interop with zarr-python 3 ---------------------------------------------------------

ARRAYS = [
    np.sin(np.arange(5000) / 30).reshape(50, 100),
    np.arange(1000, dtype="int16"),
    np.random.default_rng(0).integers(0, 255, 3000, dtype="uint8"),
]


@pytest.mark.parametrize("level", [0, 1, 5, 9])
@pytest.mark.parametrize("data", ARRAYS, ids=["f8", "i2", "u1"])
def test_zarr_python_interop(level: int, data: np.ndarray) -> None:
    peer = zarr.codecs.GzipCodec(level=level)
    raw, codecs = zarr_write(data, compressors=[peer])
    ours = GzipCodec.from_config(codecs[1]["configuration"]).evolve(spec_of(data))
    assert codecs[1] == ours.to_dict() == GzipCodec(level=level).to_dict()
    assert peer.to_dict() == ours.to_dict()
    little = data.astype(data.dtype.newbyteorder("<")).tobytes()
    assert bytes(ours.decode(raw, len(little))) == little
    back = zarr_read(bytes(ours.encode(little)), data, compressors=[peer])
    assert same_bytes(back, data)
