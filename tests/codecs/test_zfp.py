"""The ``zfp`` codec against zfpy's own headerless streams (``compress_numpy(...,
write_header=False)``, ``_decompress``): the same bytes, and each decodes the other's.
``zfp_examples.json`` holds zarr-extensions' ``codecs/zfp/examples/*.json`` (commit
4da7b37a84f76e660902f6d3de3eaef0e0febae6), unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zfpy
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zarrx
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.zfp import ZfpCodec
from zarrx.errors import CodecError, MetadataError
from zarrx.storage import MemoryStore

#: (our configuration, zfpy's keywords); fixed_rate only where zfpy's block size is ours (3-d)
MODES = [({"mode": "reversible"}, {}),
         ({"mode": "fixed_accuracy", "tolerance": 0.01}, {"tolerance": 0.01}),
         ({"mode": "fixed_precision", "precision": 14}, {"precision": 14})]


def spec(values: np.ndarray) -> ChunkSpec:
    return ChunkSpec(values.shape, values.dtype, values.dtype.type(0))


@settings(max_examples=80, deadline=None)
@given(dtype=st.sampled_from(["f4", "f8", "i4", "i8"]), mode=st.sampled_from(MODES),
       values=st.data())
def test_same_stream_as_zfpy(dtype: str, mode: tuple[dict, dict], values: st.DataObject) -> None:
    config, keywords = mode
    if config["mode"] == "fixed_accuracy" and dtype[0] == "i":
        return
    shape = values.draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=6))
    elements = st.floats(-1e6, 1e6, width=32 if dtype == "f4" else 64) if dtype[0] == "f" \
        else st.integers(-(2**20), 2**20)
    x = values.draw(hnp.arrays(dtype, shape, elements=elements))
    codec = ZfpCodec.from_config(config)
    ours = bytes(codec.encode(x, spec(x)))
    assert ours == zfpy.compress_numpy(x, write_header=False, **keywords)
    decoded = codec.decode(ours, spec(x))
    theirs = np.asarray(zfpy._decompress(ours, zfpy.dtype_to_ztype(x.dtype), list(x.shape),
                                         **keywords)).reshape(x.shape)
    assert decoded.tobytes() == theirs.tobytes()
    if config["mode"] == "reversible":
        assert decoded.tobytes() == x.tobytes()


def test_fixed_rate_is_set_for_three_dimensional_blocks() -> None:
    """zarrs sets the rate for 3-d blocks whatever the chunk: 3-d chunks match zfpy, and a
    2-d chunk of 4 blocks of 4 x 4 takes 4 x rate x 64 bits."""
    x = np.random.default_rng(1).random((4, 8, 8))
    codec = ZfpCodec.from_config({"mode": "fixed_rate", "rate": 6})
    assert bytes(codec.encode(x, spec(x))) == zfpy.compress_numpy(x, rate=6,
                                                                   write_header=False)
    y = x[0]
    assert len(codec.encode(y, spec(y))) == 4 * 6 * 64 // 8


@pytest.mark.parametrize("dtype", ["i1", "u1", "i2", "u2"])
def test_small_integers_are_promoted_and_back(dtype: str) -> None:
    info = np.iinfo(dtype)
    x = np.linspace(info.min, info.max, 60).astype(dtype).reshape(3, 4, 5)
    codec = ZfpCodec.from_config({"mode": "reversible"})
    encoded = codec.encode(x, spec(x))
    shift = 23 if x.dtype.itemsize == 1 else 15
    offset = 0 if dtype[0] == "i" else 1 << (8 * x.dtype.itemsize - 1)
    promoted = (x.astype("i4") - offset) << shift
    assert bytes(encoded) == zfpy.compress_numpy(promoted, write_header=False)
    np.testing.assert_array_equal(codec.decode(encoded, spec(x)), x)


def test_unsigned_32_and_64_are_clamped_as_zarrs_does() -> None:
    x = np.array([0, 5, 2**31 - 1, 2**31, 2**32 - 1], "u4")
    codec = ZfpCodec.from_config({"mode": "reversible"})
    assert codec.decode(codec.encode(x, spec(x)), spec(x)).tolist() == [
        0, 5, 2**31 - 1, 2**31 - 1, 2**31 - 1]


def test_registry_examples_and_specials() -> None:
    examples = Path(__file__).resolve().parent / "zfp_examples.json"
    x = np.array([[np.nan, 1.5, np.inf, -0.0], [1, 2, 3, 4]] * 2, "f4")
    for config in json.loads(examples.read_text()):
        codec = ZfpCodec.from_config(config["configuration"])
        assert codec.to_dict() == config
        decoded = codec.decode(codec.encode(x[1:2], spec(x[1:2])), spec(x[1:2]))
        assert decoded.shape == (1, 4)
    reversible = ZfpCodec.from_config({"mode": "reversible"})
    assert reversible.decode(reversible.encode(x, spec(x)), spec(x)).tobytes() == x.tobytes()


@pytest.mark.parametrize(("config", "message"), [
    ({"mode": "lossy"}, "mode must be one of"),
    ({"mode": "fixed_rate"}, "takes the fields"),
    ({"mode": "reversible", "rate": 2}, "takes the fields"),
    ({"mode": "fixed_precision", "precision": 1.5}, "must be an integer"),
    ({"mode": "fixed_accuracy", "tolerance": "0.1"}, "must be a number"),
    ({"mode": "expert", "minbits": -1, "maxbits": 2, "maxprec": 3, "minexp": 0},
     "must not be negative"),
])
def test_bad_configurations(config: dict, message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        ZfpCodec.from_config(config)


@pytest.mark.parametrize(("config", "dtype", "ndim", "message"), [
    ({"mode": "reversible"}, "f2", 2, "cannot encode the data type"),
    ({"mode": "reversible"}, "c8", 2, "cannot encode the data type"),
    ({"mode": "fixed_accuracy", "tolerance": 1}, "i4", 2, "float32 and float64 only"),
    ({"mode": "reversible"}, "f4", 5, "1 to 4 dimensions"),
    ({"mode": "expert", "minbits": 100, "maxbits": 13, "maxprec": 19, "minexp": -2}, "f4", 2,
     "refuses the expert parameters"),
])
def test_refused_arrays(config: dict, dtype: str, ndim: int, message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        zarrx.create_array(MemoryStore(), shape=(2,) * ndim, dtype=dtype, compressors=None,
                           serializer={"name": "zfp", "configuration": config})


def test_damaged_streams_are_refused_or_read_within_bounds() -> None:
    x = np.random.default_rng(2).random((6, 7))
    codec = ZfpCodec.from_config({"mode": "fixed_precision", "precision": 20})
    encoded = bytes(codec.encode(x, spec(x)))
    short = codec.decode(encoded[: len(encoded) // 2], spec(x))  # read as zeros past its end
    assert short.shape == x.shape
    with pytest.raises(CodecError, match="more than the"):
        codec.decode(encoded + bytes(10_000), spec(x))


def test_array_round_trip_with_partial_chunks() -> None:
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(9, 11), chunks=(4, 4), dtype="f8", fill_value=np.nan,
                           serializer={"name": "zfp", "configuration": {"mode": "reversible"}},
                           compressors=None)
    values = np.random.default_rng(3).normal(size=(6, 8))
    a[2:8, 1:9] = values
    expected = np.full((9, 11), np.nan)
    expected[2:8, 1:9] = values
    np.testing.assert_array_equal(zarrx.open_array(store)[...], expected)
    b = zarrx.create_array(MemoryStore(), shape=(), dtype="i8", fill_value=3,
                           serializer={"name": "zfp", "configuration": {"mode": "reversible"}})
    b[()] = -(2**40)
    assert b[()] == -(2**40)
