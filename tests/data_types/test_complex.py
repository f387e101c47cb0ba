"""The ``complex_*`` data types (exact to the bit through ``bytes`` and ``packbits``), and the
registered ``float8_e4m3`` kept apart from the machine-learning ``float8_e4m3fn``."""

import json

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.data_types.complex import NAMES, PARTS, ComplexDataType, to_complex
from zarrx.errors import FillValueError, MetadataError
from zarrx.storage import MemoryStore

PACKBITS = {"name": "packbits"}


def bits_of(t):
    """How many bits each part carries (what packbits keeps)."""
    part = PARTS[t.name]
    if part in ("float16", "float32", "float64", "bfloat16"):
        return 8 * np.dtype(part if part != "bfloat16" else ml_dtypes.bfloat16).itemsize
    return ml_dtypes.finfo(getattr(ml_dtypes, part)).bits


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NAMES), st.sampled_from(["auto", "packbits", "big"]), st.data())
def test_every_bit_pattern_round_trips(name, serializer, draw):
    t = ComplexDataType.from_json(name)
    n = draw.draw(st.integers(1, 9))
    width = t.dtype.itemsize // 2
    k = bits_of(t)
    parts = draw.draw(st.lists(st.integers(0, 2**k - 1), min_size=2 * n, max_size=2 * n))
    raw = np.array(parts, dtype=f"u{width}").view(
        t.dtype if t.dtype.fields else np.dtype(f"f{width}")).reshape(-1)
    values = raw.view(t.dtype)
    ser = {"auto": "auto", "packbits": PACKBITS,
           "big": {"name": "bytes", "configuration": {"endian": "big"}}}[serializer]
    a = zarrx.create_array(MemoryStore(), shape=(n,), dtype=name, chunks=(4,),
                           serializer=ser, compressors=None)
    a[...] = values
    got = a[...]
    assert got.dtype == t.dtype
    assert got.tobytes() == values.tobytes()  # NaN payloads included


def test_the_layout_the_spec_gives():
    """packbits: real then imaginary, k bits each, least significant first; bytes: one
    byte per 4-bit part."""
    a = zarrx.create_array(MemoryStore(), shape=(1,), dtype="complex_float4_e2m1fn",
                           chunks=(1,), serializer=PACKBITS, compressors=None)
    a[0] = 1.0 - 2.0j  # 1.0 is 0b0010, -2.0 is 0b1100
    assert bytes(a._store.get("c/0")) == b"\xc2"
    b = zarrx.create_array(MemoryStore(), shape=(1,), dtype="complex_float4_e2m1fn",
                           chunks=(1,), compressors=None)
    b[0] = 1.0 - 2.0j
    assert bytes(b._store.get("c/0")) == b"\x02\x0c"
    c = zarrx.create_array(MemoryStore(), shape=(1,), dtype="complex_bfloat16", chunks=(1,),
                           serializer={"name": "bytes", "configuration": {"endian": "big"}},
                           compressors=None)
    c[0] = 1.0 - 2.0j
    assert bytes(c._store.get("c/0")) == b"\x3f\x80\xc0\x00"


def test_complex_values_in_and_out():
    a = zarrx.create_array(MemoryStore(), shape=(4,), dtype="complex_float16", chunks=(2,),
                           fill_value=[1.5, -0.5])
    assert to_complex(a[...]).tolist() == [1.5 - 0.5j] * 4
    a[1:3] = np.array([2 + 3j, -1j])
    a[3] = 7
    np.testing.assert_array_equal(to_complex(a[...]), [1.5 - 0.5j, 2 + 3j, -1j, 7])
    b = zarrx.create_array(MemoryStore(), shape=(2,), dtype="complex_float32", chunks=(2,))
    assert b.dtype == np.complex64
    assert b.metadata.to_json()["data_type"] == "complex_float32"


@pytest.mark.parametrize(("name", "fill", "json_fill"), [
    ("complex_float16", [1.0, "NaN"], [1.0, "NaN"]),
    ("complex_float16", ["0x7e01", "-Infinity"], ["0x7e01", "-Infinity"]),  # a NaN payload
    ("complex_bfloat16", 2 - 1j, [2.0, -1.0]),
    ("complex_float8_e4m3", ["Infinity", "NaN"], ["Infinity", "NaN"]),
    ("complex_float8_e4m3fnuz", [1.0, "0x80"], [1.0, "NaN"]),
    ("complex_float4_e2m1fn", [-6.0, "0x01"], [-6.0, 0.5]),
    ("complex_float64", [1e300, "0x7ff8000000000001"], [1e300, "0x7ff8000000000001"]),
])
def test_fill_values(name, fill, json_fill):
    a = zarrx.create_array(MemoryStore(), shape=(2,), dtype=name, chunks=(2,), fill_value=fill)
    doc = a.metadata.to_json()
    assert doc["fill_value"] == json_fill
    t = ComplexDataType.from_json(name)
    assert t.fill_to_json(t.fill_from_json(json.loads(json.dumps(json_fill)))) == json_fill


@pytest.mark.parametrize(("name", "fill"), [
    ("complex_float4_e2m1fn", [1.0, "NaN"]),  # no NaN
    ("complex_float6_e2m3fn", ["Infinity", 0]),  # no infinity
    ("complex_float16", [1.0]),
    ("complex_float16", "1"),
    ("complex_float8_e5m2", [1e9, 0]),  # past the largest value
])
def test_bad_fill_values(name, fill):
    with pytest.raises(FillValueError):
        ComplexDataType.from_json(name).fill_from_json(fill)


def test_no_configuration_and_no_unknown_names():
    with pytest.raises(MetadataError):
        ComplexDataType.from_json({"name": "complex_float16", "configuration": {"x": 1}})
    with pytest.raises(MetadataError):
        ComplexDataType.from_json("complex_float8_e4m3fn")  # not a registered type


# -- float8_e4m3 is not float8_e4m3fn -----------------------------------------------------

def test_float8_e4m3_and_e4m3fn_read_the_same_bytes_as_different_values(tmp_path):
    """0x78 is +inf in the registered IEEE-like float8_e4m3 and 256 in the OCP (ML)
    float8_e4m3fn; 0x7c is NaN and 384."""
    stored = bytes([0x78, 0x7C, 0x38, 0xF8])
    values = {}
    for name in ("float8_e4m3", "float8_e4m3fn"):
        a = zarrx.create_array(str(tmp_path / name), shape=(4,), dtype=name, chunks=(4,),
                               compressors=None)
        (tmp_path / name / "c" / "0").parent.mkdir(exist_ok=True)
        (tmp_path / name / "c" / "0").write_bytes(stored)
        values[name] = zarrx.open_array(str(tmp_path / name))[...].astype(np.float64)
        assert a.dtype == np.dtype(getattr(ml_dtypes, name))
    e4m3, fn = values["float8_e4m3"], values["float8_e4m3fn"]
    assert e4m3[0] == np.inf
    assert np.isnan(e4m3[1])
    assert fn[0] == 256.0
    assert fn[1] == 384.0
    assert e4m3[2] == fn[2] == 1.0
    assert e4m3[3] == -np.inf
    assert fn[3] == -256.0


def test_float8_e4m3_fill_values_follow_its_spec():
    e4m3 = zarrx.create_array(MemoryStore(), shape=(1,), dtype="float8_e4m3", chunks=(1,),
                              fill_value="NaN")
    assert np.asarray(e4m3.metadata.fill_value).tobytes() == b"\x7c"  # the spec's NaN
    assert zarrx.create_array(MemoryStore(), shape=(1,), dtype="float8_e4m3", chunks=(1,),
                              fill_value="Infinity").metadata.to_json()["fill_value"] == "Infinity"
    with pytest.raises(FillValueError, match="infinity"):
        zarrx.create_array(MemoryStore(), shape=(1,), dtype="float8_e4m3fn", chunks=(1,),
                           fill_value="Infinity")
    fn = zarrx.create_array(MemoryStore(), shape=(1,), dtype="float8_e4m3fn", chunks=(1,),
                            fill_value=448.0)
    assert fn.metadata.to_json()["fill_value"] == 448.0
    with pytest.raises(FillValueError, match="out of range"):
        zarrx.create_array(MemoryStore(), shape=(1,), dtype="float8_e4m3", chunks=(1,),
                           fill_value=448.0)  # e4m3's largest finite value is 240
