"""The zarr-extensions ``packbits`` codec, tested from its specification.

No peer writes it (tensorstore 0.1.86 refuses it), so the expected bytes are worked out by
hand from the spec's rules: element ``i`` is bits ``[i*k, (i+1)*k)`` of a bit sequence whose
bit ``j`` is bit ``j % 8`` of byte ``j // 8`` (least significant first), zero padding bits,
and an optional byte before or after holding the number of padding bits. The bit codes of
the sub-byte values come from the data-type pages (sign, exponent and bias, mantissa).
numcodecs' own v2 ``packbits`` filter (bool only, most significant bit first) is tested at
the end, through zarrx and zarr-python.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import ml_dtypes
import numcodecs
import numpy as np
import pytest
import zarr

import zarrx
from tests.formats.test_ml_dtypes import assert_same_bits, sample
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.packbits import PackBitsCodec
from zarrx.errors import CodecError, MetadataError


def spec(dtype: Any, n: int) -> ChunkSpec:
    return ChunkSpec((n,), np.dtype(dtype), None)


#: (dtype, values, packed bytes without padding byte, padding bits) — packed by hand.
HAND = [
    # bool, 1 bit: 1,0,1,1,0,0,0,0 -> 0b00001101; the 9th element alone in byte 1
    ("bool", [1, 0, 1, 1, 0, 0, 0, 0, 1], b"\x0d\x01", 7),
    # int2 codes 01 10 11 00 | 01 -> byte 0 = 0b00_11_10_01, byte 1 = 0b01
    ("int2", [1, -2, -1, 0, 1], b"\x39\x01", 6),
    ("uint2", [3, 0, 2, 1], b"\x63", 0),  # 0b01_10_00_11
    # int4 nibbles 0x1, 0xe, 0x7: the first element in the low nibble
    ("int4", [1, -2, 7], b"\xe1\x07", 4),
    ("uint4", [15, 0, 9, 3], b"\x0f\x39", 0),
    # float4_e2m1fn: 1.0 = 0b0010, -6.0 = 0b1111, 0.5 = 0b0001
    ("float4_e2m1fn", [1.0, -6.0, 0.5], b"\xf2\x01", 4),
    # float6_e2m3fn: 1.0 = 0b001000, -7.5 = 0b111111, 0.125 = 0b000001, 7.5 = 0b011111:
    # 0x08 | 0x3f << 6 | 0x01 << 12 | 0x1f << 18 = 0x7c1fc8, little endian
    ("float6_e2m3fn", [1.0, -7.5, 0.125, 7.5], b"\xc8\x1f\x7c", 0),
    # float6_e3m2fn: 1.0 = 0b001100, -28.0 = 0b111111 -> 0x0c | 0x3f << 6 = 0xfcc
    ("float6_e3m2fn", [1.0, -28.0], b"\xcc\x0f", 4),
    # whole-byte types are their little-endian bytes, as with "bytes"
    ("int16", [1, -2], b"\x01\x00\xfe\xff", 0),
    ("bfloat16", [1.5], b"\xc0\x3f", 0),
    ("float8_e4m3fn", [1.0, -448.0], b"\x38\xfe", 0),
    ("complex64", [1 - 2j], b"\x00\x00\x80\x3f\x00\x00\x00\xc0", 0),
]


def _dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name, name))


@pytest.mark.parametrize("padding", ["none", "first_byte", "last_byte"])
@pytest.mark.parametrize(("name", "values", "packed", "pad"), HAND, ids=[h[0] for h in HAND])
def test_bytes_by_hand(name: str, values: list[Any], packed: bytes, pad: int,
                       padding: str) -> None:
    dtype = _dtype(name)
    data = np.array(values, dtype=dtype)
    codec = PackBitsCodec.from_config({"padding_encoding": padding})
    expected = {"none": packed, "first_byte": bytes([pad]) + packed,
                "last_byte": packed + bytes([pad])}[padding]
    s = spec(dtype, len(values))
    assert bytes(codec.encode(data, s)) == expected
    assert codec.encoded_size(s) == len(expected)
    decoded = codec.decode(expected, s)
    assert decoded.dtype == dtype
    assert decoded.tolist() == data.tolist()


def test_signed_sub_byte_decodes_sign_extended() -> None:
    """Decoding sign-extends int2/int4 through the byte (as tensorstore makes fill values
    and zarrs decodes): -2 as int4 is 0xfe; unsigned values are zero-extended."""
    codec = PackBitsCodec()
    assert codec.decode(b"\xe1", spec(ml_dtypes.int4, 2)).view(np.uint8).tolist() == [0x01, 0xFE]
    assert codec.decode(b"\xe1", spec(ml_dtypes.uint4, 2)).view(np.uint8).tolist() == [0x01, 0x0E]
    assert codec.decode(b"\x0e", spec(ml_dtypes.int2, 2)).view(np.uint8).tolist() == [0xFE, 0xFF]


def test_first_and_last_bit() -> None:
    """Bits 2..5 of each uint8: 0xab -> 0b1010, 0x3c -> 0b1111 -> one byte 0xfa; decoding
    shifts them back to bit 2 (the other bits are zero)."""
    codec = PackBitsCodec.from_config({"first_bit": 2, "last_bit": 5})
    s = spec("uint8", 2)
    assert bytes(codec.encode(np.array([0xAB, 0x3C], np.uint8), s)) == b"\xfa"
    assert codec.decode(b"\xfa", s).tolist() == [0x28, 0x3C]


def test_last_bit_sign_extends_signed_integers() -> None:
    """12-bit int16: -1, 2047, -2048 are 0xfff, 0x7ff, 0x800; 36 bits, 4 of padding:
    0xfff | 0x7ff << 12 | 0x800 << 24 = 0x8007fffff, little endian."""
    codec = PackBitsCodec.from_config({"last_bit": 11, "padding_encoding": "last_byte"})
    s = spec("int16", 3)
    data = np.array([-1, 2047, -2048], np.int16)
    assert bytes(codec.encode(data, s)) == b"\xff\xff\x7f\x00\x08\x04"
    assert codec.decode(b"\xff\xff\x7f\x00\x08\x04", s).tolist() == [-1, 2047, -2048]


def test_complex_components_each_take_the_bit_range() -> None:
    """For complex types first_bit/last_bit apply to real and imaginary parts: the top 16
    bits of each float32 of 1-2j are 0x3f80 and 0xc000."""
    codec = PackBitsCodec.from_config({"first_bit": 16, "last_bit": 31})
    s = spec("complex64", 1)
    assert bytes(codec.encode(np.array([1 - 2j], np.complex64), s)) == b"\x80\x3f\x00\xc0"
    assert codec.decode(b"\x80\x3f\x00\xc0", s).tolist() == [1 - 2j]


def test_schema_spellings_are_read() -> None:
    """The spec's JSON schema spells the options start_/end_: read as the README's names."""
    codec = PackBitsCodec.from_config({"padding_encoding": "start_byte", "start_bit": 1,
                                       "end_bit": 2})
    assert codec.to_config() == {"padding_encoding": "first_byte", "first_bit": 1, "last_bit": 2}


@pytest.mark.parametrize(("config", "message"), [
    ({"padding_encoding": "middle"}, "padding_encoding must be one of"),
    ({"first_bit": 3, "last_bit": 2}, "less than first_bit"),
    ({"first_bit": -1}, "non-negative"),
    ({"first_bit": 1, "start_bit": 1}, "given twice"),
    ({"bits": 4}, "unknown configuration field"),
])
def test_bad_configuration(config: dict[str, Any], message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        PackBitsCodec.from_config(config)


def test_bit_range_outside_the_type_and_unsupported_types() -> None:
    with pytest.raises(MetadataError, match="outside the 4 bits"):
        PackBitsCodec.from_config({"last_bit": 4}).validate(spec(ml_dtypes.int4, 1))
    with pytest.raises(MetadataError, match="cannot encode"):
        PackBitsCodec().validate(spec("U3", 1))


def test_corrupt_input() -> None:
    codec = PackBitsCodec.from_config({"padding_encoding": "first_byte"})
    s = spec("bool", 9)
    with pytest.raises(CodecError, match="expected 3 bytes"):
        codec.decode(b"\x07\x0d", s)
    with pytest.raises(CodecError, match="says 6 padding bits, expected 7"):
        codec.decode(b"\x06\x0d\x01", s)


# -- through arrays: chunk sizes and round trips ------------------------------------------

PACKED_BITS = {"bool": 1, "int2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4,
               "float6_e2m3fn": 6}


def _data(name: str, shape: tuple[int, ...]) -> np.ndarray:
    n = math.prod(shape)
    if name == "bool":
        return (np.arange(n) % 7 == 0).reshape(shape)
    if name in ("int8", "uint16", "float32", "complex64"):
        rng = np.random.default_rng(1)
        return rng.integers(0, 256, n * _dtype(name).itemsize, np.uint8).view(name).reshape(shape)
    return sample(name, n).reshape(shape)


@pytest.mark.parametrize("padding", ["none", "first_byte"])
@pytest.mark.parametrize("name", PACKED_BITS)
def test_chunk_sizes_and_round_trip(name: str, padding: str, tmp_path: Path) -> None:
    """A (7, 5) chunk holds 35 elements: ceil(35 k / 8) bytes (+1), edge chunks too (they
    are stored at the full chunk shape)."""
    shape, chunks = (10, 12), (7, 5)
    data = _data(name, shape)
    a = zarrx.create_array(str(tmp_path), shape=shape, chunks=chunks, dtype=_dtype(name),
                           serializer={"name": "packbits",
                                       "configuration": {"padding_encoding": padding}},
                           compressors=None)
    a[...] = data
    expected_size = -(-35 * PACKED_BITS[name] // 8) + (padding != "none")
    stored = sorted(p for p in (tmp_path / "c").rglob("*") if p.is_file())
    assert len(stored) == 2 * 3
    assert {p.stat().st_size for p in stored} == {expected_size}
    doc = json.loads((tmp_path / "zarr.json").read_text())
    assert doc["codecs"][0] == {"name": "packbits",
                                "configuration": {"padding_encoding": padding}}
    back = zarrx.open_array(str(tmp_path), mode="r")
    assert back[...].tolist() == data.tolist()
    assert back[2:9, 3:11].tolist() == data[2:9, 3:11].tolist()


def test_first_chunk_bytes_of_an_int4_array(tmp_path: Path) -> None:
    """The stored chunk itself: elements 0..3 of a row-major (2, 2) chunk, low nibble first."""
    a = zarrx.create_array(str(tmp_path), shape=(2, 2), chunks=(2, 2), dtype="int4",
                           serializer={"name": "packbits"}, compressors=None)
    a[...] = np.array([[1, 2], [-1, -8]], dtype=ml_dtypes.int4)
    assert (tmp_path / "c" / "0" / "0").read_bytes() == b"\x21\x8f"


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e8m0fnu", "uint2",
                                  "float6_e3m2fn", "int8", "uint16", "float32", "complex64"])
def test_other_types_round_trip(name: str, tmp_path: Path) -> None:
    """Every other type round-trips through packbits bit for bit (NaN payloads included),
    sharded and zstd-compressed too."""
    data = _data(name, (6, 9))
    a = zarrx.create_array(str(tmp_path), shape=(6, 9), chunks=(2, 3), shards=(4, 6),
                           dtype=_dtype(name), serializer={"name": "packbits"})
    a[...] = data
    assert_same_bits(zarrx.open_array(str(tmp_path), mode="r")[...], data)


# -- numcodecs' v2 packbits filter (bool) ------------------------------------------------------

def test_numcodecs_v2_packbits_filter(tmp_path: Path) -> None:
    """numcodecs' filter: a byte of padding bits, then 8 bools a byte, first element in the
    most significant bit. zarrx reads what zarr-python wrote and writes what it reads."""
    values = np.array([1, 0, 1, 1, 0, 0, 0, 0, 1], dtype=bool)
    z = zarr.create_array(str(tmp_path / "zarr"), shape=(9,), chunks=(9,), dtype=bool,
                          filters=[numcodecs.PackBits()], compressors=None, zarr_format=2)
    z[...] = values
    assert (tmp_path / "zarr" / "0").read_bytes() == b"\x07\xb0\x80"  # 0b10110000, 0b10000000
    assert zarrx.open_array(str(tmp_path / "zarr"))[...].tolist() == values.tolist()
    x = zarrx.create_array(str(tmp_path / "zarrx"), shape=(9,), chunks=(9,), dtype=bool,
                           filters=[{"id": "packbits"}], compressors=None, zarr_format=2)
    x[...] = values
    assert (tmp_path / "zarrx" / "0").read_bytes() == b"\x07\xb0\x80"
    assert zarr.open_array(str(tmp_path / "zarrx"))[...].tolist() == values.tolist()


def test_numcodecs_packbits_refuses_non_bool(tmp_path: Path) -> None:
    """numcodecs' filter views any chunk as bools: on uint8 it would turn 2 into 1. zarrx
    refuses to build such an array instead of losing data."""
    with pytest.raises(MetadataError, match=r"packbits.*bool"):
        zarrx.create_array(str(tmp_path), shape=(9,), dtype="uint8",
                           filters=[{"id": "packbits"}], zarr_format=2)
