"""The v2 ↔ v3 model mapping: what maps, how, and clear errors for what cannot."""

import numpy as np
import pytest

import zarrx
from zarrx.errors import MetadataError
from zarrx.zom import DIMENSIONS_ATTRIBUTE, ArraySpec, GroupSpec, diff, from_zarr
from zarrx.zom.frozen import thaw

from .conftest import zarr_python_hierarchy


def _v2(**kw):
    kw.setdefault("shape", (9, 7))
    kw.setdefault("chunks", (4, 3))
    kw.setdefault("dtype", "<f8")
    return ArraySpec.new(zarr_format=2, **kw)


def test_v2_array_to_v3():
    spec = _v2(dtype=">i4", order="F", fill_value=-1,
               compressors={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
               attributes={DIMENSIONS_ATTRIBUTE: ["y", "x"], "units": "m"})
    v3 = spec.to_v3()
    assert v3.zarr_format == 3
    assert v3.shape == (9, 7)
    assert v3.chunks == (4, 3)
    assert v3.data_type == "int32"
    assert v3.fill_value == -1
    assert thaw(v3.get("codecs")) == [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "blosc", "configuration": {"typesize": 4, "cname": "lz4", "clevel": 5,
                                            "shuffle": "shuffle", "blocksize": 0}},
    ]
    assert thaw(v3.get("chunk_key_encoding")) == {"name": "default",
                                                  "configuration": {"separator": "/"}}
    assert v3.dimension_names == ("y", "x")
    assert v3.attributes == {"units": "m"}  # xarray's attribute became dimension_names
    keep = spec.to_v3(chunk_key_encoding="v2")
    assert thaw(keep.get("chunk_key_encoding")) == {"name": "v2",
                                                    "configuration": {"separator": "."}}
    with pytest.raises(MetadataError, match="chunk_key_encoding must be"):
        spec.to_v3(chunk_key_encoding="other")


def test_v2_null_fill_strings_and_filters_to_v3():
    null = ArraySpec(zarr_format=2, properties={
        "shape": [4], "chunks": [2], "dtype": "<u2", "compressor": None, "fill_value": None,
        "order": "C", "filters": None, "dimension_separator": "."})
    assert null.to_v3().fill_value == 0
    text = ArraySpec.new(zarr_format=2, shape=(4,), chunks=(2,), dtype=str)
    assert text.to_v3().data_type == "string"
    assert [c["name"] for c in text.to_v3().get("codecs")] == ["vlen-utf8", "zstd"]
    delta = _v2(dtype="<i8", filters=[{"id": "delta", "dtype": "<i8"}])
    assert [c["name"] for c in delta.to_v3().get("codecs")] == [
        "numcodecs.delta", "bytes", "zstd"]
    assert delta.to_v3().to_v2() == delta


def test_v3_array_to_v2():
    spec = ArraySpec.new(shape=(6, 4), chunks=(3, 2), dtype="float32", order="F",
                         dimension_names=["t", "x"], fill_value=np.nan,
                         compressors={"name": "gzip", "configuration": {"level": 2}})
    v2 = spec.to_v2()
    assert v2.zarr_format == 2
    assert thaw(v2.to_json()) == {
        "zarr_format": 2, "shape": [6, 4], "chunks": [3, 2], "dtype": "<f4",
        "compressor": {"id": "gzip", "level": 2}, "fill_value": "NaN", "order": "F",
        "filters": None, "dimension_separator": ".",
        "attributes": {DIMENSIONS_ATTRIBUTE: ["t", "x"]},
    }
    assert v2.to_v3() == spec  # and back, dimension names included


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_hierarchies_round_trip_through_the_other_model(tmp_path, zarr_format):
    spec = from_zarr(str(zarr_python_hierarchy(tmp_path / "h", zarr_format)))
    other = spec.to_v3() if zarr_format == 2 else spec.to_v2()
    assert other.zarr_format == 5 - zarr_format
    assert [p for p, _ in other.walk()] == [p for p, _ in spec.walk()]
    assert other["labels"].attributes == spec["labels"].attributes
    back = other.to_v2() if zarr_format == 2 else other.to_v3()
    assert diff(back, spec) == []
    assert spec.to_format(zarr_format) is spec
    assert spec.to_format("3-draft").zarr_format == 3


def test_what_v2_cannot_hold():
    sharded = GroupSpec(members={"s": ArraySpec.new(shape=(8,), chunks=(2,), shards=(4,),
                                                    dtype="i2")})
    with pytest.raises(MetadataError, match=r"^/s: Zarr v2 has no sharding"):
        sharded.to_v2()
    two = ArraySpec.new(shape=(4,), dtype="u2",
                        compressors=[{"name": "zstd"}, {"name": "crc32c"}])
    v2_two = two.to_v2()  # bytes→bytes codecs before the last are v2 filters, in order
    assert [f["id"] for f in v2_two.get("filters")] == ["zstd"]
    assert v2_two.get("compressor")["id"] == "crc32c"
    assert [c["name"] for c in v2_two.to_v3().get("codecs")] == [
        "bytes", "zstd", "numcodecs.crc32c"]  # the v2 id, read back through numcodecs
    unnamed = ArraySpec.new(shape=(4, 4), dtype="u1", dimension_names=["y", None])
    with pytest.raises(MetadataError, match="unnamed dimensions"):
        unnamed.to_v2()
    swap = {"name": "transpose", "configuration": {"order": [1, 0, 2]}}
    transposed = ArraySpec.new(shape=(2, 3, 4), dtype="u1", filters=[swap])
    with pytest.raises(MetadataError, match=r"no transpose \[1, 0, 2\]"):
        transposed.to_v2()
    extended = GroupSpec(properties={"ext": {"must_understand": False}})
    with pytest.raises(MetadataError, match="v2 groups have no properties"):
        extended.to_v2()
    clash = ArraySpec.new(shape=(2,), dtype="u1", dimension_names=["x"],
                          attributes={DIMENSIONS_ATTRIBUTE: ["t"]})
    with pytest.raises(MetadataError, match="contradicts"):
        clash.to_v2()


def test_structured_dtypes_map_to_v3_structured():
    """v3 holds records as zarr-python's ``structured`` (zarr-extensions ``struct``)."""
    structured = GroupSpec(zarr_format=2, members={"rec": _v2(dtype=[("a", "<i4"), ("b", "<f8")])})
    v3 = structured.to_v3()
    assert thaw(v3["rec"].data_type) == {"name": "structured", "configuration": {
        "fields": [["a", "int32"], ["b", "float64"]]}}
    assert thaw(v3.to_v2()["rec"].data_type) == [["a", "<i4"], ["b", "<f8"]]


def test_the_draft_cannot_hold_strings(tmp_path):
    spec = GroupSpec(members={"t": ArraySpec.new(shape=(3,), dtype=str)})
    with pytest.raises(MetadataError, match=r"/t: the Zarr v3\.0 draft has no variable-length"):
        spec.to_zarr(str(tmp_path / "d"), zarr_format="3-draft")
    assert not (tmp_path / "d").exists()
    # a spec that fits is written, and reads back as it was declared
    ok = GroupSpec(members={"n": ArraySpec.new(shape=(3,), dtype="<i8")})
    ok.to_zarr(str(tmp_path / "d"), zarr_format="3-draft")
    assert zarrx.open_group(str(tmp_path / "d"))["n"].zarr_format == "3-draft"
