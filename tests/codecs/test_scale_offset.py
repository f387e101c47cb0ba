"""The ``scale_offset`` codec: Python integers and NumPy's in-type float arithmetic are the
oracles; the configuration is written as zarr-python 3.4 writes it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.scale_offset import ScaleOffsetCodec
from zarrx.errors import CodecError, MetadataError
from zarrx.storage import MemoryStore

INTS = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(INTS), data=st.data())
def test_integers_are_exact_or_refused(dtype: str, data: st.DataObject) -> None:
    info = np.iinfo(dtype)
    value = st.integers(int(info.min), int(info.max))
    values = np.array(data.draw(st.lists(value, min_size=1, max_size=10)), dtype)
    offset = data.draw(st.one_of(value, st.integers(-3, 3)).filter(
        lambda v: info.min <= v <= info.max))
    scale = data.draw(st.one_of(st.integers(-4, 4), value).filter(
        lambda v: v != 0 and info.min <= v <= info.max))
    codec = ScaleOffsetCodec(offset, scale)
    spec = ChunkSpec(values.shape, np.dtype(dtype), np.dtype(dtype).type(0))
    expected = [(int(v) - offset) * scale for v in values]
    if all(info.min <= e <= info.max for e in expected):
        encoded = codec.encode(values, spec)
        assert encoded.dtype == np.dtype(dtype)
        assert encoded.tolist() == expected
        assert codec.decode(encoded, spec).tolist() == values.tolist()
    else:
        with pytest.raises(CodecError, match="outside the range"):
            codec.encode(values, spec)


def test_decoding_refuses_values_that_are_not_multiples() -> None:
    codec = ScaleOffsetCodec(0, 4)
    spec = ChunkSpec((3,), np.dtype("i2"), np.int16(0))
    with pytest.raises(CodecError, match="not a multiple of the scale 4"):
        codec.decode(np.array([4, 8, 9], "i2"), spec)


@settings(max_examples=200, deadline=None)
@given(dtype=st.sampled_from(["f2", "f4", "f8"]), data=st.data())
def test_floats_use_their_own_arithmetic(dtype: str, data: st.DataObject) -> None:
    width = 8 * np.dtype(dtype).itemsize
    floats = st.floats(width=width, allow_nan=True)
    values = np.array(data.draw(st.lists(floats, min_size=1, max_size=10)), dtype)
    offset = data.draw(st.floats(-1e3, 1e3, width=width))
    scale = data.draw(st.floats(0.125, 1e3, width=width))
    codec = ScaleOffsetCodec(offset, scale)
    spec = ChunkSpec(values.shape, np.dtype(dtype), np.dtype(dtype).type(0))
    t = np.dtype(dtype).type
    with np.errstate(all="ignore"):
        expected = (values - t(offset)) * t(scale)
        back = expected / t(scale) + t(offset)
    encoded = codec.encode(values, spec)
    assert encoded.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(encoded, expected)
    np.testing.assert_array_equal(codec.decode(encoded, spec), back)


@pytest.mark.parametrize(("config", "written"), [
    ({}, {"name": "scale_offset"}),
    ({"offset": 0, "scale": 1}, {"name": "scale_offset"}),
    ({"offset": 5}, {"name": "scale_offset", "configuration": {"offset": 5}}),
    ({"scale": 0.1, "offset": "NaN"},
     {"name": "scale_offset", "configuration": {"offset": "NaN", "scale": 0.1}}),
])
def test_written_as_zarr_python_writes_it(config: dict, written: dict) -> None:
    assert ScaleOffsetCodec.from_config(config).to_dict() == written


@pytest.mark.parametrize(("config", "dtype", "message"), [
    ({"scale": 0}, "i4", "must not be zero"),
    ({"offset": 1.5}, "i4", "is not a value of int32"),
    ({"offset": 300}, "u1", "is not a value of uint8"),
    ({"scale": 2}, "bool", "integer and float arrays"),
])
def test_refused(config: dict, dtype: str, message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        zarrx.create_array(MemoryStore(), shape=(3,), dtype=dtype,
                           filters=[{"name": "scale_offset", "configuration": config}])
    with pytest.raises(MetadataError, match="unknown configuration"):
        ScaleOffsetCodec.from_config({"offset": 1, "astype": "u1"})


def test_fill_value_is_encoded_and_arrays_round_trip() -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(10,), chunks=(4,), dtype="u2", fill_value=1003,
                           filters=[{"name": "scale_offset", "configuration": {"offset": 1000}},
                                    {"name": "cast_value",
                                     "configuration": {"data_type": "uint8"}}])
    spec = ChunkSpec((4,), np.dtype("u2"), np.uint16(1003))
    assert ScaleOffsetCodec(1000).resolve_spec(spec).fill_value == 3
    a[2:7] = np.arange(1000, 1005, dtype="u2")
    np.testing.assert_array_equal(zarrx.open_array(store)[...],
                                  [1003, 1003, 1000, 1001, 1002, 1003, 1004, 1003, 1003, 1003])
    with pytest.raises(CodecError, match="outside the range"):
        a[0] = 999


@pytest.mark.parametrize("dtype", ["i1", "i2", "i4", "i8"])
def test_decoding_the_minimum_by_minus_one(dtype: str) -> None:
    """``offset -1, scale -1`` maps the type's ends onto each other; decoding divides the
    minimum by -1, which does not fit the type (it must not overflow on the way)."""
    info = np.iinfo(dtype)
    codec = ScaleOffsetCodec(-1, -1)
    spec = ChunkSpec((2,), np.dtype(dtype), np.dtype(dtype).type(0))
    values = np.array([info.max, info.min], dtype)
    encoded = codec.encode(values, spec)
    assert encoded.tolist() == [int(info.min), int(info.max)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert codec.decode(encoded, spec).tolist() == values.tolist()
