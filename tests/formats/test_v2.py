"""Zarr v2 arrays and groups, against zarr-python 3 writing and reading zarr_format=2."""

import json

import numcodecs
import numpy as np
import pytest
import zarr

import zarrx
from zarrx.errors import FillValueError, MetadataError, UnknownDataTypeError

DTYPES = ["|b1", "|i1", "<i2", ">i4", "<i8", "|u1", ">u2", "<u4", ">u8", "<f2", ">f4", "<f8",
          "<c8", ">c16", "<M8[ns]", ">m8[s]", "|S5", "<U3", "|V4"]
COMPRESSORS = [
    None,
    numcodecs.Zstd(level=1),
    numcodecs.Blosc(cname="lz4", shuffle=numcodecs.Blosc.BITSHUFFLE),
    numcodecs.GZip(level=2),
    numcodecs.Zlib(level=1),
    numcodecs.LZ4(),
    numcodecs.BZ2(level=1),
    numcodecs.LZMA(preset=1),
]


def _data(dtype, shape=(7, 9)):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind in "SUV":
        raw = np.arange(n * dtype.itemsize, dtype="u1") % 26 + 65
        return raw.view("S1").reshape(-1, dtype.itemsize).view(f"S{dtype.itemsize}")[:, 0] \
            .astype(dtype if dtype.kind != "V" else f"S{dtype.itemsize}").view(dtype).reshape(shape)
    if dtype.kind in "Mm":
        return np.arange(n, dtype="i8").view(dtype).reshape(shape)
    return (np.arange(n) % 100).astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_zarr_python_writes_zarrx_reads(tmp_path, dtype, order):
    data = _data(dtype)
    z = zarr.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(3, 4), dtype=dtype,
                          zarr_format=2, order=order)
    z[:5] = data[:5]
    expected = z[...]
    a = zarrx.open(str(tmp_path / "a"))
    assert a.zarr_format == 2
    got = a[...]
    assert got.dtype == np.dtype(dtype).newbyteorder("=") or got.dtype == np.dtype(dtype)
    assert got.tobytes() == expected.astype(got.dtype).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_zarrx_writes_zarr_python_reads(tmp_path, dtype, order):
    data = _data(dtype)
    a = zarrx.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(3, 4), dtype=dtype,
                           zarr_format=2, order=order)
    a[1:] = data[1:]
    z = zarr.open_array(str(tmp_path / "a"), zarr_format=2)
    expected = data.copy()
    expected[0] = np.zeros((), dtype)  # never written: the fill value
    np.testing.assert_array_equal(z[...], expected)
    assert z.dtype == np.dtype(dtype)
    doc = json.loads((tmp_path / "a" / ".zarray").read_text())
    assert doc["dtype"] == np.dtype(dtype).str
    assert doc["order"] == order


@pytest.mark.parametrize("compressor", COMPRESSORS, ids=lambda c: c and c.codec_id)
@pytest.mark.parametrize("filters", [None, [numcodecs.Delta(dtype="<i4")],
                                     [numcodecs.FixedScaleOffset(0, 10, dtype="<i4",
                                                                 astype="<i2")],
                                     [numcodecs.Shuffle(elementsize=4)],
                                     [numcodecs.Delta(dtype="<i4"), numcodecs.Shuffle(4)]],
                         ids=["none", "delta", "scaleoffset", "shuffle", "delta+shuffle"])
def test_codecs_both_ways(tmp_path, compressor, filters):
    data = np.arange(300, dtype="<i4").reshape(15, 20) * 3
    z = zarr.create_array(str(tmp_path / "z"), shape=data.shape, chunks=(4, 6), dtype="<i4",
                          zarr_format=2, compressors=compressor, filters=filters)
    z[...] = data
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / "z"))[...], data)
    a = zarrx.create_array(str(tmp_path / "x"), shape=data.shape, chunks=(4, 6), dtype="<i4",
                           zarr_format=2, compressors=compressor, filters=filters)
    a[...] = data
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "x"))[...], data)
    doc = json.loads((tmp_path / "x" / ".zarray").read_text())
    ref = json.loads((tmp_path / "z" / ".zarray").read_text())
    assert doc["compressor"] == ref["compressor"]
    assert doc["filters"] == ref["filters"]


def test_shuffle_filter_stored_bytes(tmp_path):
    """numcodecs' shuffle, a bytes→bytes filter in v2, as zarr-python 3 writes it: the
    stored chunk is the byte-shuffled little-endian chunk (numcodecs' own encoding)."""
    data = np.arange(12, dtype="<i4").reshape(3, 4) * 1000
    zarr.create_array(str(tmp_path / "z"), shape=data.shape, chunks=(3, 4), dtype="<i4",
                      zarr_format=2, compressors=None,
                      filters=[numcodecs.Shuffle(elementsize=4)])[...] = data
    a = zarrx.open_array(str(tmp_path / "z"), mode="r+")
    assert [c.name for c in a.codecs] == ["bytes", "numcodecs.shuffle"]
    np.testing.assert_array_equal(a[...], data)
    a[1] = -1
    stored = (tmp_path / "z" / "0.0").read_bytes()
    data[1] = -1
    assert stored == bytes(numcodecs.Shuffle(elementsize=4).encode(data.tobytes()))
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "z"))[...], data)


@pytest.mark.parametrize("fill", [np.nan, np.inf, -np.inf, 0.0, 2.5, None])
def test_fill_values(tmp_path, fill):
    z = zarr.create_array(str(tmp_path / "f"), shape=(5,), chunks=(2,), dtype="<f4",
                          zarr_format=2, fill_value=fill)
    z[:2] = 1
    a = zarrx.open_array(str(tmp_path / "f"))
    np.testing.assert_array_equal(a[...], z[...])
    a2 = zarrx.create_array(str(tmp_path / "g"), shape=(5,), chunks=(2,), dtype="<f4",
                            zarr_format=2, fill_value=fill)
    a2[:2] = 1
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "g"))[...], z[...])


@pytest.mark.parametrize("separator", [".", "/"])
def test_dimension_separator(tmp_path, separator):
    a = zarrx.create_array(str(tmp_path / "s"), shape=(4, 4), chunks=(2, 2), dtype="u1",
                           zarr_format=2,
                           chunk_key_encoding={"name": "v2",
                                               "configuration": {"separator": separator}})
    a[...] = np.arange(16).reshape(4, 4)
    key = "1/1" if separator == "/" else "1.1"
    assert (tmp_path / "s" / key).is_file()
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "s"))[...],
                                  np.arange(16).reshape(4, 4))


def test_groups_and_attributes(tmp_path):
    root = zarr.open_group(str(tmp_path / "h"), mode="w", zarr_format=2)
    root.attrs["title"] = "x"
    root.create_group("sub").create_array("arr", shape=(3,), dtype="i2")
    g = zarrx.open_group(str(tmp_path / "h"))
    assert g.zarr_format == 2
    assert g.attrs["title"] == "x"
    assert [n for n, _ in g.members(max_depth=None)] == ["sub", "sub/arr"]
    g2 = zarrx.open_group(str(tmp_path / "h"), mode="r+")
    g2["sub"].create_array("new", shape=(2, 2), dtype="f8").attrs["units"] = "m"
    g2.attrs["more"] = [1]
    z = zarr.open_group(str(tmp_path / "h"))
    assert sorted(z["sub"].array_keys()) == ["arr", "new"]
    assert z["sub/new"].attrs["units"] == "m"
    assert dict(z.attrs) == {"title": "x", "more": [1]}
    assert not (tmp_path / "h" / "zarr.json").exists()


@pytest.mark.parametrize(
    ("doc", "error", "match"),
    [
        ({"zarr_format": 3}, MetadataError, "zarr_format must be 2"),
        ({"shape": [4, -1]}, MetadataError, "negative"),
        ({"chunks": [2]}, MetadataError, "rank"),
        ({"dtype": "<q9"}, UnknownDataTypeError, "q9"),
        ({"dtype": "|O"}, UnknownDataTypeError, "object"),
        ({"order": "X"}, MetadataError, "order"),
        ({"fill_value": "abc"}, FillValueError, "fill_value"),
        ({"compressor": {"id": "nonexistent-codec"}}, MetadataError, "nonexistent-codec"),
        ({"compressor": "zlib"}, MetadataError, "'id'"),
        ({"dimension_separator": "-"}, MetadataError, "dimension_separator"),
    ],
)
def test_bad_zarray(tmp_path, doc, error, match):
    base = {"zarr_format": 2, "shape": [4, 4], "chunks": [2, 2], "dtype": "<i4",
            "compressor": None, "fill_value": 0, "order": "C", "filters": None}
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / ".zarray").write_text(json.dumps({**base, **doc}))
    with pytest.raises(error, match=match) as info:
        zarrx.open(str(tmp_path / "bad"))
    assert ".zarray" in str(info.value)
