"""The ``bitround`` codec against a scalar reading of the spec (Python integers, one element
at a time, as zarrs rounds), the registry's sample tables, and numcodecs for floats."""

from __future__ import annotations

import ml_dtypes
import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zarrx
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.bitround import BitroundCodec
from zarrx.errors import MetadataError
from zarrx.storage import MemoryStore

#: dtype → (unsigned view, mantissa bits or None for integers)
LAYOUTS = {
    "u1": ("u1", None), "u2": ("u2", None), "u4": ("u4", None), "u8": ("u8", None),
    "i1": ("u1", None), "i2": ("u2", None), "i4": ("u4", None), "i8": ("u8", None),
    "f2": ("u2", 10), "f4": ("u4", 23), "f8": ("u8", 52), "c8": ("u4", 23),
    "c16": ("u8", 52), "M8[s]": ("u8", None), "m8[ns]": ("u8", None),
}


def reference(value: int, width: int, keepbits: int, maxbits: int) -> int:
    """One element's bits rounded: the spec's procedure with unbounded integers."""
    if keepbits >= maxbits:
        return value
    m = maxbits - keepbits
    top = (1 << width) - 1
    total = min(value + ((value >> m) & 1) + (1 << (m - 1)) - 1, top)
    return total & (top >> m << m) if m < width else 0


def reference_array(values: np.ndarray, dtype: str, keepbits: int) -> np.ndarray:
    unsigned, mantissa = LAYOUTS.get(dtype, ("u2", 7))
    bits = np.ascontiguousarray(values).reshape(-1).view(unsigned)
    width = 8 * bits.dtype.itemsize
    out = [reference(int(u), width, keepbits, mantissa if mantissa is not None
                     else int(u).bit_length()) for u in bits]
    return np.array(out, dtype=unsigned)


@settings(max_examples=200, deadline=None)
@given(dtype=st.sampled_from([*LAYOUTS, "bfloat16"]), keepbits=st.integers(0, 66),
       data=st.data())
def test_rounds_as_the_spec_reads(dtype: str, keepbits: int, data: st.DataObject) -> None:
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    unsigned = LAYOUTS.get(dtype, ("u2", 7))[0]
    n = data.draw(st.integers(1, 40))
    bits = data.draw(hnp.arrays(unsigned, n * np_dtype.itemsize // np.dtype(unsigned).itemsize,
                                elements=st.one_of(
                                    st.integers(0, np.iinfo(unsigned).max),
                                    st.sampled_from([0, 1, np.iinfo(unsigned).max,
                                                     np.iinfo(unsigned).max // 2 + 1]))))
    values = bits.view(np_dtype)
    codec = BitroundCodec(keepbits)
    got = codec.encode(values, ChunkSpec(values.shape, np_dtype, values[0]))
    assert got.dtype == np_dtype
    assert got.view(unsigned).tolist() == reference_array(values, dtype, keepbits).tolist()
    assert codec.decode(got, ChunkSpec(values.shape, np_dtype, None)) is got


@settings(max_examples=100, deadline=None)
@given(keepbits=st.integers(0, 23), values=hnp.arrays("f4", st.integers(1, 30)))
def test_floats_round_as_numcodecs_does(keepbits: int, values: np.ndarray) -> None:
    """numcodecs' bitround wraps where the spec saturates: only all-ones NaNs differ."""
    values = values[values.view("u4") < 0xFFFFFFFF - (1 << 23)]
    got = BitroundCodec(keepbits).encode(values, ChunkSpec(values.shape, np.dtype("f4"), 0))
    expected = numcodecs.BitRound(keepbits).encode(values.copy()).view("f4")
    assert got.view("u4").tolist() == expected.view("u4").tolist()


def test_registry_sample_tables() -> None:
    """codecs/bitround/sample_data/README.md of zarr-extensions, ``keepbits`` 3."""
    codec = BitroundCodec(3)
    floats = np.array([0.0, 0.1, 1.2, 12.3, 123.4, 1234.5, np.nan, np.inf, -np.inf], "f4")
    rounded = codec.encode(floats, ChunkSpec((9,), np.dtype("f4"), np.float32(0)))
    assert rounded.view("u4").tolist() == [int(b.replace("_", ""), 2) for b in (
        "0_00000000_00000000000000000000000", "0_01111011_10100000000000000000000",
        "0_01111111_01000000000000000000000", "0_10000010_10000000000000000000000",
        "0_10000101_11100000000000000000000", "0_10001001_01000000000000000000000",
        "0_11111111_10000000000000000000000", "0_11111111_00000000000000000000000",
        "1_11111111_00000000000000000000000")]
    ints = np.array([0, 1, 10, 11, 100, 123, 200, 208, 209, 255], "u1")
    assert codec.encode(ints, ChunkSpec((10,), np.dtype("u1"), np.uint8(0))).tolist() == [
        0, 1, 10, 12, 96, 128, 192, 192, 224, 224]


def test_fill_value_is_rounded_and_arrays_round_trip() -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(7, 9), chunks=(3, 4), dtype="f4", fill_value=1.2345,
                           filters=[{"name": "bitround", "configuration": {"keepbits": 4}}])
    codec = BitroundCodec(4)
    spec = ChunkSpec((3, 4), np.dtype("f4"), np.float32(1.2345))
    assert codec.resolve_spec(spec).fill_value == np.float32(1.25)
    values = np.linspace(-50, 50, 35, dtype="f4").reshape(5, 7)
    a[1:6, 2:] = values
    got = zarrx.open_array(store)[...]
    expected = np.full((7, 9), 1.2345, "f4")  # unwritten chunks read the array's fill
    expected[1:6, 2:] = codec.encode(values, ChunkSpec((5, 7), np.dtype("f4"), 0))
    for i in range(0, 7, 3):  # written chunks hold the rounded fill where not written
        for j in range(0, 9, 4):
            if i < 6 and j + 4 > 2:
                block = expected[i:i + 3, j:j + 4]
                block[block == np.float32(1.2345)] = np.float32(1.25)
    np.testing.assert_array_equal(got, expected)
    assert a.metadata.to_json()["codecs"][0] == {"name": "bitround",
                                                 "configuration": {"keepbits": 4}}


@pytest.mark.parametrize("bad", [{}, {"keepbits": -1}, {"keepbits": 1.5}, {"keepbits": True},
                                 {"keepbits": 3, "extra": 1}])
def test_bad_configurations(bad: dict) -> None:
    with pytest.raises(MetadataError, match="bitround"):
        BitroundCodec.from_config(bad)


@pytest.mark.parametrize("dtype", ["bool", "U3", "S2", "V4"])
def test_refuses_types_it_cannot_round(dtype: str) -> None:
    with pytest.raises(MetadataError, match="cannot round the data type"):
        zarrx.create_array(MemoryStore(), shape=(3,), dtype=dtype,
                           filters=[{"name": "bitround", "configuration": {"keepbits": 2}}])
