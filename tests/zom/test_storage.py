"""ZOMs and stores: snapshots of hierarchies written by zarr-python, creation, flattening."""

import json
import warnings
from typing import Any

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.errors import InvalidKeyError, MetadataError, NodeExistsError
from zarrx.storage import MemoryStore
from zarrx.zom import ArraySpec, GroupSpec, diff, from_json, from_zarr, validate_json
from zarrx.zom.frozen import thaw

from .conftest import CountingStore, zarr_python_hierarchy


def test_zarr_python_hierarchy_snapshot(tmp_path, zarr_format):
    root = zarr_python_hierarchy(tmp_path / "h", zarr_format)
    spec = from_zarr(str(root))
    assert isinstance(spec, GroupSpec)
    assert spec.zarr_format == zarr_format
    assert [p for p, _ in spec.walk()] == [
        "", "labels", "labels/empty", "labels/mask", "temperature"]
    assert dict(spec.attributes) == {"title": "survey", "version": 2}
    assert spec["labels"].attributes == {"kind": ("mask",)}
    temperature = spec["temperature"]
    assert temperature.shape == (10, 12)
    assert temperature.chunks == (4, 5)
    assert temperature.fill_value == "NaN"
    assert temperature.attributes == {"units": "K"}
    assert temperature.data_type == ("float64" if zarr_format == 3 else "<f8")
    doc = spec.to_json()
    assert validate_json(doc) == []
    assert from_json(json.loads(json.dumps(doc))) == spec


def test_snapshot_of_an_array_and_of_a_subgroup(tmp_path, zarr_format):
    root = zarr_python_hierarchy(tmp_path / "h", zarr_format)
    group = zarrx.open_group(str(root))
    assert ArraySpec.from_zarr(group["labels/mask"]) == from_zarr(str(root))["labels/mask"]
    assert from_zarr(str(root), path="labels") == from_zarr(str(root))["labels"]
    with pytest.raises(MetadataError, match="is a group"):
        ArraySpec.from_zarr(group)
    with pytest.raises(MetadataError, match="is an array"):
        GroupSpec.from_zarr(group["labels/mask"])


def test_snapshot_reads_one_listing_and_no_data(tmp_path, zarr_format):
    root = zarr_python_hierarchy(tmp_path / "h", zarr_format)
    store = CountingStore(str(root))
    group = zarrx.open_group(store)
    store.calls.clear()
    group.members(max_depth=None)
    listing = list(store.calls)
    store.calls.clear()
    spec = GroupSpec.from_zarr(group)
    assert store.calls == listing  # exactly the one recursive listing, nothing per node
    read = [k for kind, keys in store.calls if kind == "get_many" for k in keys]
    read += [key for kind, key in store.calls if kind == "get"]
    assert read
    documents = ("zarr.json", ".zarray", ".zgroup", ".zattrs")
    assert all(k.rsplit("/", 1)[-1] in documents for k in read), read  # no chunk read
    assert len(spec.to_flat()) == 5


def test_snapshot_from_consolidated_metadata_reads_nothing_more(tmp_path, zarr_format):
    root = zarr_python_hierarchy(tmp_path / "h", zarr_format, consolidate=True)
    store = CountingStore(str(root))
    group = zarrx.open_group(store)
    assert group.consolidated is not None
    store.calls.clear()
    spec = GroupSpec.from_zarr(group)
    assert store.calls == []
    assert spec == from_zarr(zarrx.open_group(str(root), use_consolidated=False))
    assert "consolidated_metadata" not in spec.to_json()


def test_to_zarr_creates_the_hierarchy_without_data(tmp_path, zarr_format):
    source = from_zarr(str(zarr_python_hierarchy(tmp_path / "h", zarr_format)))
    made = source.to_zarr(str(tmp_path / "copy"))
    assert isinstance(made, zarrx.Group)
    assert from_zarr(str(tmp_path / "copy")) == source
    keys = zarrx.storage.LocalStore(str(tmp_path / "copy")).list()
    assert all(k.rsplit("/", 1)[-1] in ("zarr.json", ".zarray", ".zgroup", ".zattrs")
               for k in keys), keys
    # zarr-python sees the same structure
    g = zarr.open_group(str(tmp_path / "copy"), mode="r")
    assert g.attrs["title"] == "survey"
    assert g["temperature"].shape == (10, 12)
    assert g["labels"].attrs["kind"] == ["mask"]
    assert np.isnan(g["temperature"][0, 0])


def test_to_zarr_refuses_an_existing_node_unless_overwrite(tmp_path):
    spec = GroupSpec(members={"a": ArraySpec.new(shape=(2,), dtype="u1")})
    spec.to_zarr(str(tmp_path / "h"))
    with pytest.raises(NodeExistsError):
        spec.to_zarr(str(tmp_path / "h"))
    other = GroupSpec(attributes={"v": 2}, members={"b": GroupSpec()})
    other.to_zarr(str(tmp_path / "h"), overwrite=True)
    assert from_zarr(str(tmp_path / "h")) == other
    # below an existing group, at a path
    spec.to_zarr(str(tmp_path / "h"), path="b/inner")
    assert from_zarr(str(tmp_path / "h"), path="b/inner") == spec


def test_to_zarr_keeps_what_create_array_has_no_keyword_for(tmp_path):
    # a v2 null fill value, and a sharding index without a checksum
    v2 = ArraySpec(zarr_format=2, properties={
        "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": None, "fill_value": None,
        "order": "C", "filters": None, "dimension_separator": "."})
    v3 = ArraySpec.new(shape=(8,), dtype="i2", chunks=(2,), shards=(4,))
    codecs = thaw(v3.get("codecs"))
    codecs[0]["configuration"]["index_codecs"] = [{"name": "bytes",
                                                  "configuration": {"endian": "little"}}]
    v3 = v3.replace(codecs=codecs)
    for name, spec in (("v2", v2), ("v3", v3)):
        array = spec.to_zarr(str(tmp_path / name))
        assert from_zarr(str(tmp_path / name)) == spec
        array[...] = 5
        np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / name))[...], 5)


def test_to_zarr_writes_the_draft_from_a_v3_spec(tmp_path):
    spec = GroupSpec(attributes={"t": 1}, members={
        "a": GroupSpec(members={"x": ArraySpec.new(shape=(6, 4), dtype="<f4", chunks=(3, 2))})})
    made = spec.to_zarr(str(tmp_path / "d"), zarr_format="3-draft")
    assert made.zarr_format == "3-draft"
    assert (tmp_path / "d" / "meta" / "root" / "a" / "x.array.json").exists()
    snapshot = from_zarr(str(tmp_path / "d"))
    assert snapshot.zarr_format == "3-draft"
    assert snapshot.to_v3() == spec  # the draft model maps back onto the v3 model
    with pytest.raises(MetadataError, match="cannot be written as zarr_format 3"):
        spec.to_v2().to_zarr(str(tmp_path / "x"), zarr_format=3)


def test_snapshot_of_a_draft_hierarchy_maps_onto_the_v3_model(tmp_path):
    g = zarrx.create_group(str(tmp_path / "d"), zarr_format="3-draft", attributes={"k": "v"})
    a = g.create_array("x/y", shape=(10, 10), chunks=(3, 4), dtype=">u2", fill_value=7,
                       order="F", compressors={"name": "gzip", "configuration": {"level": 1}})
    draft = from_zarr(str(tmp_path / "d"))
    assert draft.zarr_format == "3-draft"
    assert draft["x"].implicit
    assert draft["x/y"].data_type == ">u2"
    assert ArraySpec.from_zarr(a) == draft["x/y"]
    spec = draft.to_v3()
    assert spec.zarr_format == 3
    assert spec.attributes == {"k": "v"}
    assert isinstance(spec["x"], GroupSpec)  # an implicit group of the draft
    y = spec["x/y"]
    assert y.data_type == "uint16"
    assert y.fill_value == 7
    assert y.chunks == (3, 4)
    assert [c["name"] for c in y.get("codecs")] == ["transpose", "bytes", "gzip"]
    assert y.get("codecs")[1]["configuration"] == {"endian": "big"}


def test_to_consolidated_equals_what_consolidate_metadata_writes(tmp_path, zarr_format):
    root = zarr_python_hierarchy(tmp_path / "h", zarr_format)
    spec = from_zarr(str(root))
    zarrx.consolidate_metadata(str(root))
    if zarr_format == 3:
        written = json.loads((root / "zarr.json").read_text())["consolidated_metadata"]
    else:
        written = json.loads((root / ".zmetadata").read_text())
    assert spec.to_consolidated() == written
    # and zarr-python reads that flattening back
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_consolidated(str(root), zarr_format=zarr_format)
    assert sorted(g.keys()) == ["labels", "temperature"]


def test_flat_consolidated_of_a_zarrx_hierarchy(tmp_path):
    spec = GroupSpec(attributes={"a": 1}, members={
        "g": GroupSpec(attributes={"b": 2}, members={"x": ArraySpec.new(shape=(3,), dtype="u1")})})
    spec.to_zarr(str(tmp_path / "h"))
    zarrx.consolidate_metadata(str(tmp_path / "h"))
    stored = json.loads((tmp_path / "h" / "zarr.json").read_text())["consolidated_metadata"]
    assert spec.to_consolidated() == stored
    assert sorted(stored["metadata"]) == ["g", "g/x"]
    assert diff(from_zarr(str(tmp_path / "h")), spec) == []


@pytest.mark.parametrize(("name", "dtype", "error"), [
    ("z z", "u1", InvalidKeyError),  # not a draft node name
    ("zz", str, MetadataError),  # no variable-length types in the draft
])
def test_to_zarr_checks_every_node_before_writing(name: str, dtype: object,
                                                  error: type) -> None:
    """The bad node sorts last: nothing of the hierarchy is written all the same."""
    spec = GroupSpec(members={
        "a": ArraySpec.new(shape=(2,), dtype="u1"),
        "g": GroupSpec(members={"b": ArraySpec.new(shape=(2,), dtype="<f8")}),
        name: ArraySpec.new(shape=(2,), dtype=dtype),
    })
    store = MemoryStore()
    with pytest.raises(error, match=repr(name)[1:-1]):
        spec.to_zarr(store, zarr_format="3-draft")
    assert store.list() == []
    with pytest.raises(InvalidKeyError, match="'x y'"):
        spec.to_zarr(store, path="x y/root", zarr_format="3-draft")
    assert store.list() == []


# -- the draft's own model -------------------------------------------------------------------

DECIMAL = {"extension": "http://example.org/zarr/extension/decimal64",
           "type": "decimal(16, 4)", "fallback": "<i8"}
OPTIONAL = {"extension": "http://example.org/zarr/extension/note", "must_understand": False,
            "configuration": {"note": "kept"}}


def _draft_hierarchy(root: Any) -> Any:
    """Seed 000's examples: an extension data type with a fallback, an optional extension,
    implicit groups (``x``, ``x/y``) and an explicit one with attributes."""
    g = zarrx.create_group(root, zarr_format="3-draft", attributes={"title": "t"})
    g.create_group("explicit", attributes={"spam": "ham"})
    zarrx.create_array(root, name="x/y/plain", shape=(4, 3), chunks=(2, 3), dtype=">f4",
                       order="F", zarr_format="3-draft")
    a = zarrx.create_array(root, name="x/dec", shape=(5,), chunks=(2,), dtype="<i8",
                           zarr_format="3-draft", attributes={"units": "EUR"})
    key = "meta/root/x/dec.array.json"
    doc = json.loads(a.store.get(key))
    doc["data_type"] = DECIMAL
    doc["extensions"] = [OPTIONAL]
    a.store.set(key, json.dumps(doc).encode())
    return g


def test_draft_snapshot_is_lossless() -> None:
    store = MemoryStore()
    _draft_hierarchy(store)
    spec = from_zarr(store)
    assert spec.zarr_format == "3-draft"
    dec = spec["x/dec"]
    assert thaw(dec.data_type) == DECIMAL  # the extension, not its fallback
    assert thaw(dec.get("extensions")) == [OPTIONAL]
    assert spec["x"].implicit
    assert spec["x/y"].implicit
    assert not spec["explicit"].implicit
    assert from_json(json.loads(spec.dumps())) == spec  # through JSON text
    out = MemoryStore()
    spec.to_zarr(out)
    assert from_zarr(out) == spec
    assert diff(from_zarr(out), spec) == []
    # the same documents, key for key: implicit groups stay implicit (no document)
    assert out.list() == [k for k in store.list() if not k.startswith("data/")]
    for key in out.list():
        assert json.loads(out.get(key)) == json.loads(store.get(key)), key


def test_draft_diff_reports_every_difference() -> None:
    store = MemoryStore()
    _draft_hierarchy(store)
    spec = from_zarr(store)
    fallback = spec.with_member("x/dec", spec["x/dec"].replace(data_type="<i8"))
    assert [(d.path, d.field) for d in diff(spec, fallback)] == [("/x/dec", "data_type")]
    plain = spec.with_member("x/dec", spec["x/dec"].replace(extensions=[]))
    assert [(d.path, d.field) for d in diff(spec, plain)] == [("/x/dec", "extensions")]
    explicit = spec.with_member("x", spec["x"].replace(implicit=False))
    assert [(d.path, d.field) for d in diff(spec, explicit)] == [("/x", "implicit")]
    assert next((d.path, d.field) for d in diff(spec, spec.to_v3())) == ("/", "zarr_format")


def test_draft_spec_to_zarr_checks_before_writing() -> None:
    store = MemoryStore()
    _draft_hierarchy(store)
    spec = from_zarr(store)
    bad = spec.with_member("x/dec", spec["x/dec"].replace(data_type={"extension": "u:x",
                                                                     "type": "?"}))
    out = MemoryStore()
    with pytest.raises(MetadataError, match=r"/x/dec.*no fallback"):
        bad.to_zarr(out)
    assert out.list() == []
    with pytest.raises(MetadataError, match="map it first"):
        spec.to_zarr(out, zarr_format=3)
    v3 = spec.to_v3()  # through the recipe: the fallback's data type, no draft extensions
    assert v3["x/dec"].data_type == "int64"
    assert v3["x/y/plain"].chunks == (2, 3)
