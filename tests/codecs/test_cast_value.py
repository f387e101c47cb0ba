"""The ``cast_value`` codec: configuration as zarr-python 3.4 writes it, the fill value cast
like an element, arrays round-tripping with maps; the widening fast path equals the general
path (the casts themselves: test_casting.py)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs import casting
from zarrx.codecs.cast_value import CastValueCodec
from zarrx.errors import CodecError, MetadataError
from zarrx.storage import MemoryStore


@pytest.mark.parametrize("config", [
    {"data_type": "uint8"},
    {"data_type": "int16", "rounding": "towards-zero", "out_of_range": "wrap"},
    {"data_type": "float16", "out_of_range": "clamp",
     "scalar_map": {"encode": [["NaN", "Infinity"]]}},
    {"data_type": "uint8", "scalar_map": {"encode": [["NaN", 0], [1.5, 3]],
                                          "decode": [[0, "NaN"]]}},
])
def test_configuration_is_written_back_as_read(config: dict) -> None:
    codec = CastValueCodec.from_config(config)
    assert codec.to_dict() == {"name": "cast_value", "configuration": config}
    assert codec.evolve(ChunkSpec((2,), np.dtype("f8"), 0.0)).to_dict() == codec.to_dict()


def test_defaults_are_left_out() -> None:
    codec = CastValueCodec.from_config({"data_type": "uint8", "rounding": "nearest-even"})
    assert codec.to_config() == {"data_type": "uint8"}


@pytest.mark.parametrize(("config", "message"), [
    ({}, "'data_type' is required"),
    ({"data_type": "uint8", "extra": 1}, "unknown configuration"),
    ({"data_type": "uint8", "rounding": "up"}, "rounding must be one of"),
    ({"data_type": "uint8", "out_of_range": "saturate"}, "out_of_range must be"),
    ({"data_type": "float32", "out_of_range": "wrap"}, "'wrap' needs an integer"),
    ({"data_type": "string"}, "integer or float type"),
    ({"data_type": "uint8", "scalar_map": {"both": []}}, "scalar_map must be an object"),
    ({"data_type": "uint8", "scalar_map": {"encode": [[1, 2, 3]]}}, r"\[input, output\]"),
])
def test_bad_configurations(config: dict, message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        CastValueCodec.from_config(config)


def test_bad_map_entries_and_sources() -> None:
    codec = CastValueCodec.from_config({"data_type": "uint8",
                                        "scalar_map": {"encode": [["NaN", 300]]}})
    with pytest.raises(MetadataError, match="scalar_map 'encode' entry"):
        codec.evolve(ChunkSpec((2,), np.dtype("f8"), 0.0))
    with pytest.raises(MetadataError, match="casts integer and float arrays"):
        zarrx.create_array(MemoryStore(), shape=(2,), dtype="c8",
                           filters=[{"name": "cast_value",
                                     "configuration": {"data_type": "float32"}}])


def test_fill_value_must_cast() -> None:
    filters = [{"name": "cast_value", "configuration": {"data_type": "uint8"}}]
    with pytest.raises(MetadataError, match="the fill value"):
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="f4", fill_value=np.nan,
                           filters=filters)
    spec = ChunkSpec((4,), np.dtype("f4"), np.float32(2.5))
    assert CastValueCodec.from_config(filters[0]["configuration"]).resolve_spec(
        spec).fill_value == 2


def test_array_with_nan_fill_and_maps() -> None:
    """The spec's example: float64 stored as uint8 through scale_offset, NaN ↔ 0."""
    store = MemoryStore()
    a = zarrx.create_array(
        store, shape=(11, 7), chunks=(4, 3), dtype="f8", fill_value=np.nan, filters=[
            {"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
            {"name": "cast_value", "configuration": {
                "data_type": "uint8", "rounding": "nearest-even",
                "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}])
    values = np.linspace(0, 2540, 9 * 5).reshape(9, 5)
    values[2, 3] = np.nan
    a[1:10, 1:6] = values
    got = zarrx.open_array(store)[...]
    expected = np.full((11, 7), np.nan)
    expected[1:10, 1:6] = np.rint((values + 10) * 0.1) / 0.1 - 10
    np.testing.assert_array_equal(got, expected)
    assert zarrx.open_array(store)[2:4, ::-2].shape == (2, 4)
    with pytest.raises(CodecError, match="outside the range of uint8"):
        a[0, 0] = 3000.0


@settings(max_examples=100, deadline=None)
@given(pair=st.sampled_from([("u1", "f2"), ("i2", "f4"), ("u4", "f8"), ("f2", "f4"),
                             ("f4", "f8"), ("i1", "i8"), ("u2", "u4"), ("bfloat16", "f4"),
                             ("float8_e4m3fn", "f2"), ("int4", "i2")]),
       data=st.data())
def test_widening_fast_path_equals_the_general_path(pair: tuple[str, str],
                                                    data: st.DataObject) -> None:
    source, target = (np.dtype(getattr(ml_dtypes, n, n)) for n in pair)
    bits = data.draw(st.lists(st.integers(0, 2 ** (8 * source.itemsize) - 1), min_size=1,
                              max_size=20))
    values = np.array(bits, f"u{source.itemsize}").view(source)
    s, t = casting.numeric(source), casting.numeric(target)
    assert s is not None
    assert t is not None
    if not s.integer:  # NaNs: the general path sets them apart (same result)
        with np.errstate(invalid="ignore"):
            values = values[~np.isnan(values.astype("f8"))]
    if not values.size:
        return
    assert casting.is_exact(source, target)
    for rounding in casting.ROUNDINGS:
        general = casting._cast(values, s, t, rounding, None)
        fast = casting.cast(values, target, rounding, None)
        assert general.tobytes() == fast.tobytes()


def test_big_endian_storage() -> None:
    """Chunks stored big-endian reach the cast in the stored byte order."""
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(6,), chunks=(4,), dtype="f8", fill_value=-1.0,
                           filters=[{"name": "cast_value", "configuration": {
                               "data_type": "float32", "rounding": "towards-zero"}}],
                           serializer={"name": "bytes", "configuration": {"endian": "big"}})
    a[1:5] = [0.1, -0.1, 2.0, 3.0]
    with pytest.raises(CodecError, match="outside the range of float32"):
        a[0] = 1e300
    tenth = np.float32(0.1)
    if float(tenth) > 0.1:  # towards zero
        tenth = np.nextafter(tenth, np.float32(0))
    got = zarrx.open_array(store)[...]
    assert got.tolist() == [-1.0, float(tenth), -float(tenth), 2.0, 3.0, -1.0]
