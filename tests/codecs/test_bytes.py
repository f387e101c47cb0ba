from __future__ import annotations

import numpy as np
import pytest
import zarr

from tests.codecs._peers import same_bytes, spec_of, zarr_read, zarr_write
from zarrx.codecs.bytes import BytesCodec, as_byte_view, has_byte_order
from zarrx.errors import CodecError, MetadataError
from zarrx.testing.codecs import ArrayBytesCodecTests, spec

SPECS = (
    spec((0,), "uint8"),
    spec((), "float64"),
    spec((7,), "uint8"),
    spec((64,), "bool"),
    spec((37, 29), "int16"),
    spec((16, 16, 4), "float64"),
    spec((100,), "complex128"),
    spec((5, 3), "uint64"),
    spec((11,), "datetime64[s]"),
    spec((5, 7), [("a", "int32"), ("b", "float64")]),
    spec((9,), "S5"),
    spec((4, 4), "U3"),
    spec((128, 128), "float32"),
)


class TestBytesCodec(ArrayBytesCodecTests):
    codecs = (BytesCodec(), BytesCodec(endian="big"), BytesCodec(endian=None))
    specs = SPECS


def test_evolve_fills_little_for_multibyte() -> None:
    codec = BytesCodec.from_config({})
    assert codec.endian is None
    evolved = codec.evolve(spec((3,), "float64"))
    assert evolved.to_dict() == {"name": "bytes", "configuration": {"endian": "little"}}
    evolved.validate(spec((3,), "float64"))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "bool", "S7", "V4"])
def test_evolve_drops_endian_without_byte_order(dtype: str) -> None:
    for codec in (BytesCodec(endian="big"), BytesCodec.from_config({})):
        evolved = codec.evolve(spec((3,), dtype))
        assert evolved.to_dict() == {"name": "bytes"}
        evolved.validate(spec((3,), dtype))


def test_validate_requires_endian_for_multibyte() -> None:
    with pytest.raises(MetadataError, match="endian"):
        BytesCodec.from_config({}).validate(spec((3,), "int32"))
    with pytest.raises(MetadataError, match="endian"):
        BytesCodec(endian=None).validate(spec((3,), [("a", "u1"), ("b", "<i2")]))


def test_validate_refuses_variable_length() -> None:
    with pytest.raises(MetadataError, match="variable-length"):
        BytesCodec().validate(spec((3,), object))


@pytest.mark.parametrize("endian", ["middle", "LITTLE", "", 1, True, None])
def test_bad_endian(endian: object) -> None:
    with pytest.raises(MetadataError, match=r"'bytes'.*'endian'"):
        BytesCodec.from_config({"endian": endian})


def test_has_byte_order() -> None:
    assert has_byte_order(np.dtype("float32"))
    assert has_byte_order(np.dtype("U2"))
    assert has_byte_order(np.dtype([("a", "u1"), ("b", "i4")]))
    assert has_byte_order(np.dtype(("i2", (3,))))
    assert not has_byte_order(np.dtype("u1"))
    assert not has_byte_order(np.dtype("S9"))
    assert not has_byte_order(np.dtype([("a", "u1"), ("b", "S3")]))


def test_decode_is_a_zero_copy_view_in_stored_order() -> None:
    chunk = spec((4, 5), "float64")
    data = np.arange(20, dtype=">f8").reshape(4, 5)
    raw = bytearray(data.tobytes())
    decoded = BytesCodec(endian="big").decode(raw, chunk)
    assert decoded.dtype == np.dtype(">f8")
    assert decoded.shape == (4, 5)
    assert decoded.flags.c_contiguous
    assert np.shares_memory(decoded, np.frombuffer(raw, np.uint8))
    assert (decoded == data).all()
    little = BytesCodec().decode(np.arange(20, dtype="<f8").tobytes(), chunk)
    assert little.dtype == np.dtype("<f8")


def test_encode_writes_the_byte_order() -> None:
    chunk = spec((3,), "uint32")
    x = np.array([1, 2, 0x01020304], dtype="uint32")
    assert bytes(BytesCodec(endian="big").encode(x, chunk)) == x.astype(">u4").tobytes()
    assert bytes(BytesCodec(endian="little").encode(x, chunk)) == x.astype("<u4").tobytes()
    # Non-contiguous input is serialised in C order.
    y = np.arange(12, dtype="int16").reshape(3, 4)
    assert bytes(BytesCodec().encode(y.T, spec((4, 3), "int16"))) == y.T.copy().tobytes()


def test_native_little_encode_is_zero_copy() -> None:
    x = np.arange(10, dtype="<i4")
    encoded = BytesCodec().encode(x, spec((10,), "int32"))
    assert np.shares_memory(np.asarray(encoded), x)


@pytest.mark.parametrize("size", [0, 23, 25, 100])
def test_wrong_length_refused(size: int) -> None:
    with pytest.raises(CodecError, match="expected 24 bytes"):
        BytesCodec().decode(b"\0" * size, spec((3,), "float64"))


def test_encode_wrong_shape_refused() -> None:
    with pytest.raises(CodecError, match="shape"):
        BytesCodec().encode(np.zeros(4), spec((3,), "float64"))


def test_encoded_size() -> None:
    chunk = spec((3, 7), "complex64")
    assert BytesCodec().encoded_size(chunk) == 3 * 7 * 8
    assert BytesCodec().max_encoded_size(chunk) == 3 * 7 * 8


def test_alias_and_name() -> None:
    assert BytesCodec.name == "bytes"
    assert "endian" in BytesCodec.aliases


def test_as_byte_view() -> None:
    x = np.arange(6, dtype="complex64").reshape(2, 3)
    view = as_byte_view(x, "bytes")
    assert view.format == "B"
    assert view.ndim == 1
    assert view.nbytes == 48
    with pytest.raises(CodecError, match="not contiguous"):
        as_byte_view(x[:, ::2], "bytes")
    with pytest.raises(CodecError, match="cannot read"):
        as_byte_view(object(), "bytes")


# -- interop with zarr-python 3 ---------------------------------------------------------

INTEROP = [
    ("little", np.linspace(-1, 1, 24).reshape(4, 6)),
    ("big", np.linspace(-1, 1, 24).reshape(4, 6)),
    ("big", np.arange(-50, 50, dtype="int16")),
    ("little", np.arange(30, dtype="uint32").reshape(2, 3, 5)),
    ("big", (np.arange(12) * (1 + 2j)).astype("complex64")),
    ("little", np.arange(200, dtype="uint8")),
    ("big", np.array([True, False, True])),
    ("big", np.array(3.5)),
]


@pytest.mark.parametrize(("endian", "data"), INTEROP)
def test_zarr_python_writes_we_read(endian: str, data: np.ndarray) -> None:
    raw, codecs = zarr_write(data, serializer=zarr.codecs.BytesCodec(endian=endian))
    chunk = spec_of(data)
    ours = BytesCodec.from_config(codecs[0].get("configuration", {})).evolve(chunk)
    assert codecs == [BytesCodec(endian=endian).evolve(chunk).to_dict()]
    assert same_bytes(ours.decode(raw, chunk), data)


@pytest.mark.parametrize(("endian", "data"), INTEROP)
def test_we_write_zarr_python_reads(endian: str, data: np.ndarray) -> None:
    chunk = spec_of(data)
    ours = BytesCodec(endian=endian).evolve(chunk)
    encoded = bytes(ours.encode(data, chunk))
    back = zarr_read(encoded, data, serializer=zarr.codecs.BytesCodec(endian=endian))
    assert same_bytes(back, data)
    # zarr-python parses our JSON (it defaults a missing endian to the system's).
    peer = zarr.codecs.BytesCodec.from_dict(ours.to_dict())
    assert peer.endian is not None
    assert peer.endian.value == (ours.endian or "little")
