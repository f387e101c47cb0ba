"""The ``optional`` data type and codec: masked arrays in and out, against NumPy's ``np.ma``."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.abc.codec import ChunkSpec
from zarrx.codecs.optional import OptionalCodec
from zarrx.data_types.optional import OptionalDataType
from zarrx.errors import CodecError, FillValueError, MetadataError, UnknownDataTypeError
from zarrx.storage import MemoryStore
from zarrx.testing.selections import numpy_indices


def optional(inner, **config):
    return {"name": "optional", "configuration": {"name": inner, **config}}


def same(got, want):
    """Equal as masked arrays: the same mask, and the same values where present."""
    got, want = np.ma.asarray(got), np.ma.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    np.testing.assert_array_equal(got.compressed(), want.compressed())


INNER = ["uint8", "int16", "float32", "float64", "bool", "complex64", "int64"]


@st.composite
def masked_arrays(draw):
    inner = draw(st.sampled_from(INNER))
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=1, max_size=3)))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    values = np.arange(int(np.prod(shape))).reshape(shape).astype(inner)
    mask = np.array(draw(st.lists(st.booleans(), min_size=values.size, max_size=values.size)),
                    dtype=bool).reshape(shape)
    fill = draw(st.sampled_from([None, 1]))
    sharded = draw(st.booleans())
    return inner, shape, chunks, np.ma.MaskedArray(values, mask=mask), fill, sharded


@settings(max_examples=60, deadline=None)
@given(masked_arrays(), st.data())
def test_reads_and_writes_like_numpy_masked_arrays(case, draw):
    inner, shape, chunks, data, fill, sharded = case
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype=optional(inner), chunks=chunks,
                           fill_value=fill,
                           shards=tuple(2 * c for c in chunks) if sharded else None)
    want = np.ma.masked_all(shape, dtype=inner) if fill is None else np.ma.MaskedArray(
        np.full(shape, fill, dtype=inner), mask=False)
    same(a[...], want)  # never written: the fill value
    a[...] = data
    same(a[...], data)
    index = draw.draw(numpy_indices(shape, wild=False))
    try:
        expected = data[index]
    except (IndexError, TypeError, ValueError):
        return
    got = a[index]
    if not isinstance(expected, np.ndarray):  # one element: a scalar, or np.ma.masked
        assert (got is np.ma.masked) == (expected is np.ma.masked)
        assert got is np.ma.masked or (type(got) is type(expected) and got == expected)
        return
    same(got, expected)
    n = np.asarray(expected).size
    value = np.ma.MaskedArray(np.arange(n).astype(inner).reshape(np.shape(expected)),
                              mask=np.arange(n).reshape(np.shape(expected)) % 3 == 1)
    a[index] = value
    data[index] = value
    same(a[...], data)


def test_scalars_none_and_masked_mean_missing():
    a = zarrx.create_array(MemoryStore(), shape=(6,), dtype=optional("int32"), chunks=(4,),
                           fill_value=-1)
    assert a.fill_value == -1
    a[0] = np.ma.masked
    a[1] = None
    a[2:4] = [5, None]
    a[4:] = np.ma.masked
    assert a[...].tolist() == [None, None, 5, None, None, None]
    assert a[0] is np.ma.masked
    a[:] = 7  # plain values are present
    assert a[...].tolist() == [7] * 6
    assert not np.ma.getmaskarray(a[...]).any()


def test_casts_like_numpy_before_writing():
    a = zarrx.create_array(MemoryStore(), shape=(3,), dtype=optional("int16"), chunks=(3,))
    with pytest.raises(OverflowError):
        a[0] = 2**40
    with pytest.raises(ValueError, match="NaN"):
        a[1] = float("nan")
    assert a[...].mask.all()  # nothing was written


def test_missing_chunks_are_not_stored_and_nan_fills_survive(tmp_path):
    root = tmp_path / "a"
    a = zarrx.create_array(str(root), shape=(4,), dtype=optional("float32"), chunks=(2,),
                           fill_value=None)
    a[...] = np.ma.masked_all((4,), "f4")
    assert not list(root.glob("c/*"))
    a[:2] = np.ma.MaskedArray([np.nan, 1.0], mask=[False, True])
    assert [p.name for p in root.glob("c/*")] == ["0"]
    got = a[...]
    assert np.isnan(got[0])
    assert got.mask.tolist() == [False, True, True, True]
    b = zarrx.create_array(MemoryStore(), shape=(2,), dtype=optional("float64"), chunks=(2,),
                           fill_value=float("nan"))
    assert json.dumps(b.metadata.to_json()["fill_value"]) == '["NaN"]'
    assert np.isnan(b[0])


@pytest.mark.parametrize(("data_type", "fill", "json_fill"), [
    (optional("uint8"), None, None),
    (optional("uint8"), 42, [42]),
    (optional("float32"), -np.inf, ["-Infinity"]),
    (optional("optional", configuration={"name": "uint8", "configuration": {}}), None, None),
])
def test_fill_values_in_json(data_type, fill, json_fill):
    a = zarrx.create_array(MemoryStore(), shape=(2,), dtype=data_type, chunks=(2,),
                           fill_value=fill)
    doc = a.metadata.to_json()
    assert doc["fill_value"] == json_fill
    t = OptionalDataType.from_json(doc["data_type"])
    assert t.fill_to_json(t.fill_from_json(json_fill)) == json_fill


def test_nested_fill_values_and_levels():
    t = OptionalDataType.from_json(
        optional("optional", configuration={"name": "uint8", "configuration": {}}))
    for json_fill in (None, [None], [[42]]):
        assert t.fill_to_json(t.fill_from_json(json_fill)) == json_fill
    assert t.present_fill(t.fill_from_json([[42]])) == 42
    assert t.present_fill(t.fill_from_json([None])) is np.ma.masked
    assert t.user_dtype == np.uint8


@pytest.mark.parametrize(("value", "error"), [
    ({"name": "optional"}, MetadataError),
    ({"name": "optional", "configuration": {"configuration": {}}}, MetadataError),
    ({"name": "optional", "configuration": {"name": "uint8", "extra": 1}}, MetadataError),
    ({"name": "optional", "configuration": {"name": "nope"}}, MetadataError),
    ({"name": "optional", "configuration": {"name": "string"}}, UnknownDataTypeError),
])
def test_bad_data_types_are_refused(value, error):
    with pytest.raises(error):
        OptionalDataType.from_json(value)


@pytest.mark.parametrize("fill", [[1, 2], "x", 5, [None, None]])
def test_bad_fill_values_are_refused(fill):
    t = OptionalDataType.from_json(optional("uint8"))
    with pytest.raises(FillValueError):
        t.fill_from_json(fill)


def test_null_fill_only_for_nullable_types(tmp_path):
    a = zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype="u1", chunks=(2,))
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    doc["fill_value"] = None
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match="nullable"):
        zarrx.open_array(str(tmp_path / "a"))
    assert a.shape == (2,)


def codec():
    return OptionalCodec.from_config({"mask_codecs": [{"name": "packbits"}],
                                      "data_codecs": [{"name": "bytes"}]})


def test_the_codec_refuses_other_types_and_corrupt_chunks():
    with pytest.raises(MetadataError, match="optional data type only"):
        codec().validate(ChunkSpec((2,), np.dtype("u1"), np.uint8(0)))
    with pytest.raises(MetadataError, match="exactly"):
        OptionalCodec.from_config({"mask_codecs": []})
    t = OptionalDataType.from_json(optional("uint16"))
    spec = ChunkSpec((4,), t.dtype, t.default_fill())
    good = bytes(codec().encode(t.absorb(np.ma.masked_equal([1, 0, 3, 4], 0)), spec))
    assert t.present(codec().decode(good, spec)).tolist() == [1, None, 3, 4]
    for bad in (good[:10], good[:-1], good + b"\0", good[:8] + (99).to_bytes(8, "little")
                + good[16:]):
        with pytest.raises(CodecError):
            codec().decode(bad, spec)
    none_present = bytes(codec().encode(t.absorb(np.ma.masked_all(4, "u2")), spec))
    assert none_present[8:16] == bytes(8)  # no value bytes at all
    with pytest.raises(CodecError, match="no present value"):
        codec().decode(none_present[:8] + (2).to_bytes(8, "little") + none_present[16:]
                       + b"\0\0", spec)


def test_zarrs_spelling_is_read_and_written_back(tmp_path):
    a = zarrx.create_array(str(tmp_path / "a"), shape=(3,), dtype=optional("int8"), chunks=(3,),
                           fill_value=None)
    a[...] = np.ma.masked_equal([1, 0, 2], 0)
    path = tmp_path / "a" / "zarr.json"
    text = path.read_text().replace('"optional"', '"zarrs.optional"')
    path.write_text(text)
    b = zarrx.open_array(str(tmp_path / "a"))
    assert b[...].tolist() == [1, None, 2]
    b.attrs["k"] = 1  # the metadata written again keeps zarrs' names
    doc = json.loads(path.read_text())
    assert doc["data_type"]["name"] == "zarrs.optional"
    assert doc["codecs"][0]["name"] == "zarrs.optional"


@pytest.mark.parametrize("fmt", [2, "3-draft"])
@pytest.mark.parametrize("dtype", [optional("int8"), "complex_float16"])
def test_formats_without_these_types_refuse_them(fmt, dtype):
    with pytest.raises(UnknownDataTypeError, match="use zarr_format=3"):
        zarrx.create_array(MemoryStore(), shape=(2,), dtype=dtype, chunks=(2,), zarr_format=fmt)


def test_like_arrays_keep_the_type():
    a = zarrx.create_array(MemoryStore(), shape=(4,), dtype=optional("int16"), chunks=(2,),
                           fill_value=None)
    a[...] = np.ma.masked_equal([1, 0, 3, 0], 0)
    z = zarrx.zeros_like(a)
    assert z.metadata.to_json()["data_type"] == a.metadata.to_json()["data_type"]
    assert z[...].tolist() == [0, 0, 0, 0]
    e = zarrx.empty_like(a)
    assert e[...].mask.all()  # its fill value: missing
    c = zarrx.create_array(MemoryStore(), shape=(2,), dtype="complex_bfloat16", chunks=(2,))
    assert zarrx.zeros_like(c).metadata.to_json()["data_type"] == "complex_bfloat16"
