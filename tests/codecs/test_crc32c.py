from __future__ import annotations

import google_crc32c
import numcodecs
import numpy as np
import pytest
import zarr

from tests.codecs._peers import same_bytes, spec_of, zarr_read, zarr_write
from zarrx.codecs.crc32c import Crc32cCodec
from zarrx.errors import ChecksumError, CodecError, MetadataError
from zarrx.testing.codecs import BytesBytesCodecTests

DATA = np.arange(10_000, dtype="float64").tobytes()


class TestCrc32cCodec(BytesBytesCodecTests):
    codecs = (Crc32cCodec(),)
    detects_corruption = True


def test_check_value() -> None:
    # The CRC-32C check value (RFC 3720 / iSCSI): crc32c(b"123456789") == 0xE3069283.
    assert bytes(Crc32cCodec().encode(b"123456789"))[-4:] == (0xE3069283).to_bytes(4, "little")
    assert bytes(Crc32cCodec().encode(b""))[-4:] == b"\0\0\0\0"


def test_config() -> None:
    assert Crc32cCodec.from_config({}).to_dict() == {"name": "crc32c"}
    with pytest.raises(MetadataError, match="'crc32c'"):
        Crc32cCodec.from_config({"location": "end"})


@pytest.mark.parametrize("size", [0, 1, 3])
def test_too_short(size: int) -> None:
    with pytest.raises(ChecksumError, match="too few"):
        Crc32cCodec().decode(b"\0" * size, None)


def test_mismatch_is_a_checksum_error() -> None:
    encoded = bytearray(Crc32cCodec().encode(DATA))
    encoded[100] ^= 0x10
    with pytest.raises(ChecksumError, match="mismatch"):
        Crc32cCodec().decode(bytes(encoded), len(DATA))
    assert issubclass(ChecksumError, CodecError)


def test_decode_is_zero_copy() -> None:
    encoded = bytearray(Crc32cCodec().encode(DATA))
    decoded = Crc32cCodec().decode(encoded, len(DATA))
    assert np.shares_memory(np.frombuffer(decoded, np.uint8), np.frombuffer(encoded, np.uint8))
    assert memoryview(decoded).nbytes == len(DATA)


def test_max_size() -> None:
    encoded = Crc32cCodec().encode(DATA)
    with pytest.raises(CodecError, match="more than the expected"):
        Crc32cCodec().decode(encoded, len(DATA) - 1)
    assert Crc32cCodec().max_encoded_size(10) == 14


def test_same_checksum_as_google_crc32c() -> None:
    encoded = bytes(Crc32cCodec().encode(DATA))
    assert int.from_bytes(encoded[-4:], "little") == google_crc32c.value(DATA)


def test_numcodecs_interop() -> None:
    theirs = numcodecs.CRC32C()
    encoded = bytes(Crc32cCodec().encode(DATA))
    assert encoded == bytes(theirs.encode(DATA))
    assert bytes(theirs.decode(encoded)) == DATA
    assert bytes(Crc32cCodec().decode(theirs.encode(DATA), len(DATA))) == DATA


ARRAYS = [
    np.sin(np.arange(5000) / 30).reshape(50, 100),
    np.arange(1000, dtype="int16"),
    np.random.default_rng(0).integers(0, 255, 3000, dtype="uint8"),
]


@pytest.mark.parametrize("data", ARRAYS, ids=["f8", "i2", "u1"])
def test_zarr_python_interop(data: np.ndarray) -> None:
    peer = zarr.codecs.Crc32cCodec()
    raw, codecs = zarr_write(data, compressors=[peer])
    ours = Crc32cCodec.from_config(codecs[1].get("configuration", {})).evolve(spec_of(data))
    assert codecs[1] == ours.to_dict() == peer.to_dict()
    little = data.astype(data.dtype.newbyteorder("<")).tobytes()
    assert bytes(ours.decode(raw, len(little))) == little
    encoded = bytes(ours.encode(little))
    assert encoded == raw
    assert same_bytes(zarr_read(encoded, data, compressors=[peer]), data)
    corrupt = bytearray(encoded)
    corrupt[0] ^= 1
    with pytest.raises(ChecksumError):
        ours.decode(bytes(corrupt), len(little))
