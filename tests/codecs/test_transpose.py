from __future__ import annotations

import numpy as np
import pytest
import zarr

from tests.codecs._peers import same_bytes, spec_of, zarr_read, zarr_write
from zarrx.codecs.bytes import BytesCodec
from zarrx.codecs.transpose import TransposeCodec
from zarrx.errors import CodecError, MetadataError
from zarrx.testing.codecs import ArrayArrayCodecTests, spec


class TestTransposeCodec(ArrayArrayCodecTests):
    codecs = (
        TransposeCodec(order=(1, 0)),
        TransposeCodec(order=(0, 1)),
        TransposeCodec(order=(2, 0, 1)),
        TransposeCodec(order=(1, 2, 0)),
        TransposeCodec(order=(0,)),
        TransposeCodec(order=(3, 1, 0, 2)),
    )
    specs = (
        spec((37, 29), "int16"),
        spec((1, 50), "float64"),
        spec((0, 3), "uint8"),
        spec((16, 16, 4), "float32"),
        spec((3, 1, 7), "complex64"),
        spec((100,), "uint8"),
        spec((2, 3, 4, 5), "int32"),
        spec((5, 7), [("a", "int32"), ("b", "float64")]),
    )


def test_decode_is_a_view_and_encode_is_contiguous() -> None:
    codec = TransposeCodec(order=(2, 0, 1))
    chunk = spec((3, 4, 5), "float32")
    x = np.arange(60, dtype="float32").reshape(3, 4, 5)
    encoded = codec.encode(x, chunk)
    assert encoded.shape == (5, 3, 4)
    assert encoded.flags.c_contiguous
    assert (encoded == x.transpose(2, 0, 1)).all()
    decoded = codec.decode(encoded, chunk)
    assert np.shares_memory(decoded, encoded)  # a view, not a copy
    assert decoded.base is encoded
    assert (decoded == x).all()


def test_resolve_spec_permutes_shape() -> None:
    chunk = spec((2, 3, 4), "int8", 7)
    resolved = TransposeCodec(order=[1, 2, 0]).resolve_spec(chunk)
    assert resolved.shape == (3, 4, 2)
    assert resolved.dtype == chunk.dtype
    assert resolved.fill_value == chunk.fill_value == 7


@pytest.mark.parametrize(
    "order",
    [[0, 0], [1, 2], [-1, 0], [0, 1.0], [True, False], "01", None, 3, [[0]]],
)
def test_bad_order(order: object) -> None:
    with pytest.raises(MetadataError, match=r"'transpose'.*'order'"):
        TransposeCodec.from_config({"order": order})


def test_order_required() -> None:
    with pytest.raises(MetadataError, match="'order' is required"):
        TransposeCodec.from_config({})


def test_validate_rank() -> None:
    codec = TransposeCodec(order=(1, 0))
    codec.validate(spec((2, 3), "int8"))
    with pytest.raises(MetadataError, match="3 dimensions"):
        codec.validate(spec((2, 3, 4), "int8"))
    with pytest.raises(MetadataError, match="dimensions"):
        codec.resolve_spec(spec((2,), "int8"))


def test_shape_mismatch_is_a_codec_error() -> None:
    codec = TransposeCodec(order=(1, 0))
    with pytest.raises(CodecError, match="expected shape"):
        codec.decode(np.zeros((2, 3)), spec((2, 3), "float64"))
    with pytest.raises(CodecError, match="shape"):
        codec.encode(np.zeros((3, 2)), spec((2, 3), "float64"))


def test_config_is_a_json_list() -> None:
    codec = TransposeCodec(order=(np.int64(1), 0))
    assert codec.to_config() == {"order": [1, 0]}
    assert type(codec.to_config()["order"][0]) is int


# -- interop with zarr-python 3 ---------------------------------------------------------

INTEROP = [
    ((1, 0), np.arange(35, dtype="int32").reshape(5, 7)),
    ((2, 0, 1), np.linspace(0, 1, 60).reshape(3, 4, 5)),
    ((0, 2, 1), np.arange(24, dtype="uint8").reshape(2, 3, 4)),
]


@pytest.mark.parametrize(("order", "data"), INTEROP)
def test_zarr_python_writes_we_read(order: tuple[int, ...], data: np.ndarray) -> None:
    raw, codecs = zarr_write(
        data,
        filters=[zarr.codecs.TransposeCodec(order=order)],
        serializer=zarr.codecs.BytesCodec(endian="big"),
    )
    chunk = spec_of(data)
    ours = TransposeCodec.from_config(codecs[0]["configuration"])
    assert codecs[0] == ours.to_dict()
    serializer = BytesCodec.from_config(codecs[1].get("configuration", {})).evolve(chunk)
    stored = serializer.decode(raw, ours.resolve_spec(chunk))
    assert same_bytes(ours.decode(stored, chunk), data)


@pytest.mark.parametrize(("order", "data"), INTEROP)
def test_we_write_zarr_python_reads(order: tuple[int, ...], data: np.ndarray) -> None:
    chunk = spec_of(data)
    ours = TransposeCodec(order=order)
    inner = ours.resolve_spec(chunk)
    raw = bytes(BytesCodec().encode(ours.encode(data, chunk), inner))
    back = zarr_read(
        raw,
        data,
        filters=[zarr.codecs.TransposeCodec(order=order)],
        serializer=zarr.codecs.BytesCodec(endian="little"),
    )
    assert same_bytes(back, data)
    peer = zarr.codecs.TransposeCodec.from_dict(ours.to_dict())
    assert list(peer.order) == list(ours.order)
