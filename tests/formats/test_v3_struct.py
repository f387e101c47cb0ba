"""v3 structured data types: zarr-python 3.1.6's ``structured`` both ways, and the
zarr-extensions ``struct`` definition (its README's examples, bytes packed by hand)."""

from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.errors import MetadataError, UnknownDataTypeError

DTYPES = [
    np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S3")]),
    np.dtype([("x", "<f4"), ("y", "<f4")]),
    np.dtype([("p", [("x", "<f4"), ("y", "<f4")]), ("n", "u1"), ("t", "<M8[s]")]),
    np.dtype([("flag", "?"), ("v", "<u8"), ("c", "<c8")]),
]


def _data(dtype: np.dtype, n: int) -> np.ndarray:
    raw = (np.arange(n * dtype.itemsize, dtype=np.uint32) * 37 % 251).astype(np.uint8)
    out = raw.view(dtype)
    for name in dtype.names:  # only valid booleans (NumPy compares bools by truth)
        if dtype.fields[name][0].kind == "b":
            out[name] = np.arange(n) % 2 == 0
    return out


def _zarr_create(path: Path, **kwargs: object) -> zarr.Array:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python: structured is not yet in the v3 spec
        return zarr.create_array(str(path), **kwargs)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zarr_python_writes_zarrx_reads(tmp_path: Path, dtype: np.dtype) -> None:
    data = _data(dtype, 7)
    fill = _data(dtype, 8)[-1]
    z = _zarr_create(tmp_path / "z", shape=(9,), chunks=(4,), dtype=dtype, fill_value=fill)
    z[:7] = data
    a = zarrx.open_array(str(tmp_path / "z"))
    assert a.dtype == dtype
    assert a[...].tobytes() == z[...].tobytes()  # the last two elements are the fill value
    assert np.asarray(a.fill_value, dtype).tobytes() == np.asarray(z.fill_value).tobytes()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zarrx_writes_zarr_python_reads(tmp_path: Path, dtype: np.dtype) -> None:
    data = _data(dtype, 7)
    fill = _data(dtype, 8)[-1]
    a = zarrx.create_array(str(tmp_path / "x"), shape=(9,), chunks=(4,), dtype=dtype,
                           fill_value=fill)
    a[:7] = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(str(tmp_path / "x"))
        got = z[...]
    assert got.tobytes() == a[...].tobytes()
    assert got[:7].tobytes() == data.tobytes()
    # the same data type and fill value documents as zarr-python writes for this dtype
    ref = _zarr_create(tmp_path / "ref", shape=(9,), chunks=(4,), dtype=dtype, fill_value=fill)
    assert ref is not None
    ours = json.loads((tmp_path / "x" / "zarr.json").read_text())
    theirs = json.loads((tmp_path / "ref" / "zarr.json").read_text())
    assert ours["data_type"] == theirs["data_type"]
    assert ours["fill_value"] == theirs["fill_value"]


#: zarr-extensions data-types/struct README: the 13-byte layout example, as a full document.
STRUCT_DOC = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [3],
    "data_type": {"name": "struct", "configuration": {"fields": [
        {"name": "id", "data_type": "int32"},
        {"name": "flags", "data_type": "uint8"},
        {"name": "value", "data_type": "float64"},
    ]}},
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    "chunk_key_encoding": {"name": "default"},
    "fill_value": {"id": -1, "flags": 7, "value": 0.5},
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
}


def test_struct_spec_example(tmp_path: Path) -> None:
    """Each element is the packed concatenation of its fields (4 + 1 + 8 = 13 bytes at
    offsets 0, 4, 5), multi-byte fields in the bytes codec's order; the fill value is an
    object with one value per field."""
    root = tmp_path / "s"
    root.mkdir()
    (root / "zarr.json").write_text(json.dumps(STRUCT_DOC))
    (root / "c").mkdir()
    (root / "c" / "0").write_bytes(struct.pack("<iBd", 5, 200, -2.25)
                                   + struct.pack("<iBd", -6, 0, 1e300))
    a = zarrx.open_array(str(root), mode="r+")
    assert a.dtype.itemsize == 13
    assert [tuple(r) for r in a[...].tolist()] == [(5, 200, -2.25), (-6, 0, 1e300),
                                                   (-1, 7, 0.5)]
    a[2] = np.array((9, 1, 3.0), dtype=a.dtype)
    # the last chunk is whole: element 2, then the fill value past the array's end
    assert (root / "c" / "1").read_bytes() == (struct.pack("<iBd", 9, 1, 3.0)
                                               + struct.pack("<iBd", -1, 7, 0.5))
    a.attrs["k"] = 1  # rewritten in the spelling it was read in
    doc = json.loads((root / "zarr.json").read_text())
    assert doc["data_type"] == STRUCT_DOC["data_type"]
    assert doc["fill_value"] == STRUCT_DOC["fill_value"]


def test_struct_big_endian_and_nested(tmp_path: Path) -> None:
    doc = {**STRUCT_DOC, "shape": [1], "chunk_grid": {
        "name": "regular", "configuration": {"chunk_shape": [1]}},
        "data_type": {"name": "struct", "configuration": {"fields": [
            {"name": "point", "data_type": {"name": "struct", "configuration": {"fields": [
                {"name": "x", "data_type": "float32"}, {"name": "y", "data_type": "float32"}]}}},
            {"name": "value", "data_type": "float64"}]}},
        "fill_value": {"point": {"x": 1.0, "y": 2.0}, "value": 3.14},
        "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}]}
    root = tmp_path / "n"
    root.mkdir()
    (root / "zarr.json").write_text(json.dumps(doc))
    a = zarrx.open_array(str(root), mode="r+")
    assert a[0].tolist() == ((1.0, 2.0), 3.14)  # the fill value
    a[0] = np.array(((0.5, -1.5), 2.0), dtype=a.dtype)
    assert (root / "c" / "0").read_bytes() == struct.pack(">ffd", 0.5, -1.5, 2.0)


@pytest.mark.parametrize(("fields", "error", "match"), [
    ([], MetadataError, "at least one field"),
    ([{"name": "a", "data_type": "int8"}, {"name": "a", "data_type": "int8"}], MetadataError,
     "unique"),
    ([{"name": "s", "data_type": "string"}], UnknownDataTypeError, "variable-length"),
    ([{"name": "", "data_type": "int8"}], MetadataError, "non-empty"),
    ([{"name": "q", "data_type": "no-such-type"}], UnknownDataTypeError, "no-such-type"),
])
def test_bad_struct(tmp_path: Path, fields: list, error: type, match: str) -> None:
    root = tmp_path / "bad"
    root.mkdir()
    doc = {**STRUCT_DOC, "data_type": {"name": "struct", "configuration": {"fields": fields}},
           "fill_value": {}}
    (root / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(error, match=match):
        zarrx.open_array(str(root))


def test_padded_dtypes_are_refused() -> None:
    aligned = np.dtype([("a", "u1"), ("b", "<i4")], align=True)
    with pytest.raises(UnknownDataTypeError, match="padding"):
        zarrx.create_array(zarrx.storage.MemoryStore(), shape=(2,), dtype=aligned)
