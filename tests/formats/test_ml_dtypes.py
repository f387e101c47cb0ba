"""The machine-learning data types (bfloat16, float8/6/4, int2/int4/uint2/uint4) in zarrx.

Expected bits are written here by hand from the zarr-extensions data-type pages (sign,
exponent and bias, mantissa; the NaN each page names), never computed with zarrx. The
peers' view (tensorstore, both directions, v3 and v2) is in
``tests/interop/test_ml_tensorstore.py``; the ``packbits`` codec in
``tests/codecs/test_packbits.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import zarrx
from zarrx.data_types.ml import NAMES, MLDataType
from zarrx.errors import FillValueError, MetadataError, MissingDependencyError

FLOAT8 = ("float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
          "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")


def bits(scalar: Any) -> int:
    """The stored bits of one element (its bytes as a little-endian integer)."""
    return int.from_bytes(np.asarray(scalar).tobytes(), "little")


def sample(name: str, n: int, seed: int = 0) -> np.ndarray:
    """``n`` elements of every bit pattern the type's bytes can hold: random bytes viewed
    as the type, so NaN payloads, -0.0, subnormals and ±inf all occur (for a sub-byte
    type, only the k value bits vary: ml_dtypes' own layout)."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=n * dtype.itemsize, dtype=np.uint8)
    k = {"int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4,
         "float6_e2m3fn": 6, "float6_e3m2fn": 6}.get(name)
    if k:
        raw &= (1 << k) - 1
    return raw.view(dtype)


def assert_same_bits(actual: Any, expected: np.ndarray) -> None:
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape
    assert np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes()


# -- fill values, from the spec pages -----------------------------------------------------

#: (type, JSON fill value, expected bits, JSON written back) — bits worked out by hand.
V3_FILLS = [
    ("bfloat16", "NaN", 0x7FC0, "NaN"),  # the page: "NaN" is 0x7fc0
    ("bfloat16", 1.0, 0x3F80, 1.0),  # 0 01111111 0000000
    ("bfloat16", -0.0, 0x8000, -0.0),
    ("bfloat16", "Infinity", 0x7F80, "Infinity"),
    ("bfloat16", "-Infinity", 0xFF80, "-Infinity"),
    ("bfloat16", "0x7fc1", 0x7FC1, "0x7fc1"),  # a NaN payload survives
    ("bfloat16", "0xffc0", 0xFFC0, "0xffc0"),  # a negative NaN too
    ("bfloat16", 0.30078125, 0x3E9A, 0.30078125),
    ("float8_e3m4", "NaN", 0x78, "NaN"),
    ("float8_e3m4", 1.0, 0x30, 1.0),  # 0 011 0000, bias 3
    ("float8_e3m4", "Infinity", 0x70, "Infinity"),
    ("float8_e4m3", "NaN", 0x7C, "NaN"),
    ("float8_e4m3", 1.0, 0x38, 1.0),  # 0 0111 000, bias 7
    ("float8_e4m3", "-Infinity", 0xF8, "-Infinity"),
    ("float8_e4m3fn", 1.0, 0x38, 1.0),
    ("float8_e4m3fn", 448.0, 0x7E, 448.0),  # 0 1111 110: the largest
    ("float8_e4m3fn", "0xff", 0xFF, "0xff"),
    ("float8_e4m3fnuz", "NaN", 0x80, "NaN"),
    ("float8_e4m3fnuz", 1.0, 0x40, 1.0),  # bias 8
    ("float8_e4m3b11fnuz", "NaN", 0x80, "NaN"),
    ("float8_e4m3b11fnuz", 1.0, 0x58, 1.0),  # 0 1011 000, bias 11
    ("float8_e5m2", "NaN", 0x7E, "NaN"),
    ("float8_e5m2", 1.0, 0x3C, 1.0),  # 0 01111 00, bias 15
    ("float8_e5m2", "Infinity", 0x7C, "Infinity"),
    ("float8_e5m2fnuz", "NaN", 0x80, "NaN"),
    ("float8_e5m2fnuz", 1.0, 0x40, 1.0),  # bias 16
    ("float8_e8m0fnu", "NaN", 0xFF, "NaN"),
    ("float8_e8m0fnu", 1.0, 0x7F, "0x7f"),  # 2**(127-127); written in hex (see ml.py)
    ("float8_e8m0fnu", 0.25, 0x7D, "0x7d"),
    ("float8_e8m0fnu", 0, 0x00, "0x00"),  # no zero: the smallest value, 2**-127
    ("float8_e8m0fnu", "0x81", 0x81, "0x81"),
    ("float6_e2m3fn", 1.0, 0x08, 1.0),  # 0 01 000, bias 1
    ("float6_e2m3fn", -7.5, 0x3F, -7.5),  # 1 11 111
    ("float6_e3m2fn", 1.0, 0x0C, 1.0),  # 0 011 00, bias 3
    ("float6_e3m2fn", 28.0, 0x1F, 28.0),  # 0 111 11: the largest
    ("float4_e2m1fn", 1.0, 0x2, 1.0),  # 0 01 0
    ("float4_e2m1fn", -6.0, 0xF, -6.0),  # 1 11 1
    ("float4_e2m1fn", 0.5, 0x1, 0.5),  # 0 00 1: subnormal
    ("float4_e2m1fn", -0.0, 0x8, -0.0),
    ("int4", 7, 0x07, 7),
    ("int4", -1, 0xFF, -1),  # sign-extended through the byte, as tensorstore makes it
    ("int4", -8, 0xF8, -8),
    ("int2", -2, 0xFE, -2),
    ("int2", 1, 0x01, 1),
    ("uint4", 15, 0x0F, 15),
    ("uint2", 3, 0x03, 3),
]


@pytest.mark.parametrize(("name", "value", "expected", "written"), V3_FILLS)
def test_v3_fill_values(name: str, value: Any, expected: int, written: Any) -> None:
    t = MLDataType.from_json(name)
    fill = t.fill_from_json(value)
    assert bits(fill) == expected
    out = t.fill_to_json(fill)
    assert type(out) is type(written)
    assert out == written
    assert bits(t.fill_from_json(out)) == expected


BAD_FILLS = [
    ("float4_e2m1fn", "NaN", "no NaN"),
    ("float6_e3m2fn", "Infinity", "no infinity"),
    ("float8_e4m3fn", "Infinity", "no infinity"),
    ("float8_e4m3fnuz", "-Infinity", "no infinity"),
    ("float8_e4m3fn", 449.0, "out of range"),
    ("float4_e2m1fn", 1e10, "out of range"),
    ("float8_e8m0fnu", -1.0, "unsigned"),
    ("bfloat16", "0x7fc", "hex digits"),
    ("bfloat16", True, "not a number"),
    ("int4", 8, "out of range"),
    ("int2", -3, "out of range"),
    ("uint4", -1, "out of range"),
    ("uint2", 0.5, "expected an integer"),
]


@pytest.mark.parametrize(("name", "value", "message"), BAD_FILLS)
def test_v3_fill_values_refused(name: str, value: Any, message: str) -> None:
    with pytest.raises(FillValueError, match=message):
        MLDataType.from_json(name).fill_from_json(value)


def test_bad_fill_in_metadata_names_the_node(tmp_path: Path) -> None:
    zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype="float4_e2m1fn")
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    doc["fill_value"] = "NaN"
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(FillValueError, match=r"zarr\.json.*float4_e2m1fn.*no NaN"):
        zarrx.open_array(str(tmp_path / "a"))


def test_data_type_object_form_and_configuration() -> None:
    assert MLDataType.from_json({"name": "int4"}).name == "int4"
    assert MLDataType.from_json({"name": "int4", "configuration": {}}).name == "int4"
    with pytest.raises(MetadataError, match="takes no configuration"):
        MLDataType.from_json({"name": "int4", "configuration": {"bits": 4}})


# -- creation and what is written ---------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("zarr_format", [3, 2])
def test_round_trip_every_type(name: str, zarr_format: int, tmp_path: Path) -> None:
    """Every type, both formats: a name and the ml_dtypes type create the same array; every
    bit pattern is read back; unwritten chunks read the fill value."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    data = sample(name, 5 * 7).reshape(5, 7)
    fill = MLDataType.from_json(name).fill_from_json(1)
    path = tmp_path / name
    a = zarrx.create_array(str(path), shape=(5, 7), chunks=(2, 3), dtype=name, fill_value=1,
                           zarr_format=zarr_format)
    b = zarrx.create_array(str(tmp_path / "b"), shape=(5, 7), chunks=(2, 3),
                           dtype=getattr(ml_dtypes, name), fill_value=1, zarr_format=zarr_format)
    assert a.metadata.to_json() == b.metadata.to_json()
    a[1:4, 2:6] = data[1:4, 2:6]
    expected = np.full((5, 7), fill, dtype=dtype)
    expected[1:4, 2:6] = data[1:4, 2:6]
    reopened = zarrx.open_array(str(path), mode="r")
    assert reopened.dtype == dtype
    assert bits(reopened.fill_value) == bits(fill)
    assert_same_bits(reopened[...], expected)
    doc = json.loads((path / ("zarr.json" if zarr_format == 3 else ".zarray")).read_text())
    assert doc["data_type" if zarr_format == 3 else "dtype"] == name


def test_metadata_written_v3(tmp_path: Path) -> None:
    a = zarrx.create_array(str(tmp_path / "a"), shape=(4,), dtype="bfloat16", fill_value=np.nan)
    b = zarrx.create_array(str(tmp_path / "b"), shape=(4,), dtype="float8_e5m2")
    doc_a = json.loads((tmp_path / "a" / "zarr.json").read_text())
    doc_b = json.loads((tmp_path / "b" / "zarr.json").read_text())
    assert (doc_a["data_type"], doc_a["fill_value"]) == ("bfloat16", "NaN")
    assert doc_a["codecs"][0] == {"name": "bytes", "configuration": {"endian": "little"}}
    # one-byte types have no byte order: "bytes" without "endian", as tensorstore writes it
    assert doc_b["codecs"][0] == {"name": "bytes"}
    assert a.dtype == ml_dtypes.bfloat16
    assert b.dtype == ml_dtypes.float8_e5m2


@pytest.mark.parametrize("endian", ["little", "big"])
def test_bfloat16_byte_order(endian: str, tmp_path: Path) -> None:
    """bfloat16 is stored in the ``bytes`` codec's byte order: 1.5 is 0x3fc0."""
    a = zarrx.create_array(str(tmp_path), shape=(2,), chunks=(2,), dtype="bfloat16",
                           serializer={"name": "bytes", "configuration": {"endian": endian}},
                           compressors=None)
    a[...] = np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16)
    raw = (tmp_path / "c" / "0").read_bytes()
    assert raw == (b"\xc0\x3f\x00\xc0" if endian == "little" else b"\x3f\xc0\xc0\x00")
    assert_same_bits(a[...], np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16))


def test_sub_byte_types_one_element_per_byte(tmp_path: Path) -> None:
    """Without packbits, an int4 element takes a byte, its value in the low nibble."""
    a = zarrx.create_array(str(tmp_path), shape=(4,), chunks=(4,), dtype="int4",
                           compressors=None)
    a[...] = np.array([1, -2, 7, -8], dtype=ml_dtypes.int4)
    assert (tmp_path / "c" / "0").read_bytes() == b"\x01\x0e\x07\x08"


# -- Zarr v2 ---------------------------------------------------------------------------------

def _zarray(path: Path, dtype: str, fill: Any) -> None:
    path.mkdir()
    (path / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [4], "chunks": [2], "dtype": dtype, "compressor": None,
        "fill_value": fill, "order": "C", "filters": None,
    }))


def test_v2_int4_fill_with_ml_dtypes_imported(tmp_path: Path) -> None:
    """The silent bug: once ml_dtypes is imported, NumPy resolves "int4" itself (a bare
    one-byte dtype), and a fill value of 1 was read as raw bytes, i.e. 0."""
    assert np.dtype("int4") == ml_dtypes.int4  # the trap is armed in this process
    _zarray(tmp_path / "a", "int4", 1)
    a = zarrx.open_array(str(tmp_path / "a"), mode="r")
    assert a.dtype == ml_dtypes.int4
    assert int(a.fill_value) == 1
    assert a[...].view(np.uint8).tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize(
    ("dtype", "fill", "expected"),
    [("int4", -3, 0xFD), ("bfloat16", "NaN", 0x7FC0), ("bfloat16", -2.5, 0xC020),
     ("float8_e4m3fn", 1.0, 0x38), ("float4_e2m1fn", "Dw==", 0x0F), ("int2", None, 0x00)],
)
def test_v2_fill_values(dtype: str, fill: Any, expected: int, tmp_path: Path) -> None:
    _zarray(tmp_path / "a", dtype, fill)
    a = zarrx.open_array(str(tmp_path / "a"), mode="r")
    assert bits(a.fill_value) == expected
    assert [bits(x) for x in a[...]] == [expected] * 4


@pytest.mark.parametrize(("dtype", "fill"), [("bfloat16", "0x7fc1"), ("float4_e2m1fn", 1.0),
                                              ("int4", 9)])
def test_v2_bad_fill_values(dtype: str, fill: Any, tmp_path: Path) -> None:
    _zarray(tmp_path / "a", dtype, fill)
    with pytest.raises(FillValueError, match=r"\.zarray"):
        zarrx.open_array(str(tmp_path / "a"))


# -- without ml_dtypes -------------------------------------------------------------------------

def _run_without_ml_dtypes(code: str) -> subprocess.CompletedProcess[str]:
    prelude = "import sys\nsys.modules['ml_dtypes'] = None  # import ml_dtypes now fails\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120, check=False)


def test_import_zarrx_does_not_import_ml_dtypes() -> None:
    code = "import sys, zarrx\nassert 'ml_dtypes' not in sys.modules, 'imported'\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr


def test_without_ml_dtypes_a_clear_error(tmp_path: Path) -> None:
    zarrx.create_array(str(tmp_path / "v3"), shape=(2,), dtype="bfloat16")
    zarrx.create_array(str(tmp_path / "v2"), shape=(2,), dtype="int4", zarr_format=2)
    zarrx.create_array(str(tmp_path / "plain"), shape=(2,), dtype="float32")
    result = _run_without_ml_dtypes(f"""
        import zarrx
        from zarrx.errors import MissingDependencyError
        root = {str(tmp_path)!r}
        assert zarrx.open_array(root + "/plain").dtype == "float32"  # other types still work
        for name, call in [
            ("v3", lambda: zarrx.open_array(root + "/v3")),
            ("v2", lambda: zarrx.open_array(root + "/v2")),
            ("create", lambda: zarrx.create_array("memory://", shape=(2,), dtype="float4_e2m1fn")),
        ]:
            try:
                call()
            except MissingDependencyError as e:
                assert isinstance(e, ImportError) and isinstance(e, ValueError)
                print(name, "|", e)
            else:
                raise AssertionError(name + " opened without ml_dtypes")
    """)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" | ", 1) for line in result.stdout.splitlines())
    assert "'bfloat16'" in lines["v3"]
    assert "zarr.json" in lines["v3"]
    assert "'int4'" in lines["v2"]
    assert ".zarray" in lines["v2"]
    for message in lines.values():
        assert "ml_dtypes" in message
        assert "pip install 'zarrx[ml]'" in message


def test_missing_dependency_is_an_unknown_data_type_error() -> None:
    assert issubclass(zarrx.errors.MissingDataTypeError, MissingDependencyError)
    assert issubclass(zarrx.errors.MissingDataTypeError, zarrx.errors.UnknownDataTypeError)


# -- the element kernels ------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_element_kernels_take_ml_types(name: str) -> None:
    """The Cython kernels (copy with byte swapping, fill, compare) serve these types by item
    size, like any fixed-size type: bfloat16 big endian swaps 2 bytes, one-byte types none."""
    from zarrx.runtime.elements import Elements, swap_unit

    dtype = np.dtype(getattr(ml_dtypes, name))
    fill = MLDataType.from_json(name).fill_from_json(-1 if name.startswith("int") else 1)
    ops = Elements.of(dtype, fill)
    assert not ops.variable
    assert ops.fill == np.asarray(fill).tobytes()
    assert swap_unit(dtype.newbyteorder(">")) == (2 if dtype.itemsize == 2 else 0)
    out = np.empty((3, 4), dtype=dtype)
    ops.fill_region(out)
    assert out.tobytes() == ops.fill * 12
    assert ops.is_fill(out)
    src = sample(name, 12).reshape(3, 4)
    stored = src.astype(dtype.newbyteorder(">")) if dtype.itemsize == 2 else src
    ops.copy(stored[:, ::-1], out)
    assert_same_bits(out, src[:, ::-1])
    assert ops.is_fill(out) == (out.tobytes() == ops.fill * 12)


@pytest.mark.parametrize("dtype", ["bfloat16", ml_dtypes.int4])
def test_draft_format_refuses_ml_types(dtype: Any) -> None:
    """The 2020 draft has no such types: a clear error, not a raw r16 array that loses the
    type (what NumPy's name resolution would give once ml_dtypes is imported)."""
    with pytest.raises(zarrx.errors.UnknownDataTypeError, match="draft has no data type"):
        zarrx.create_array("memory://", shape=(3,), dtype=dtype, zarr_format="3-draft")
