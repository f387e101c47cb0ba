"""ArraySpec and GroupSpec as values: frozen, hashable, comparable, navigable."""

import dataclasses

import numpy as np
import pytest

import zarrx
from zarrx.errors import MetadataError, NodeNotFoundError
from zarrx.zom import ArraySpec, FrozenDict, GroupSpec, from_json
from zarrx.zom.frozen import freeze, json_equal, thaw


def _array(**kw):
    kw.setdefault("shape", (4, 6))
    kw.setdefault("dtype", "int16")
    kw.setdefault("chunks", (2, 3))
    return ArraySpec.new(**kw)


def test_specs_are_deeply_frozen_and_hashable():
    spec = GroupSpec(attributes={"a": [1, {"b": 2}]}, members={"x": _array()})
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.attributes = {}
    with pytest.raises(TypeError):
        spec.attributes["a"] = 1
    assert isinstance(spec.attributes, FrozenDict)
    assert spec.attributes["a"] == (1, {"b": 2})
    with pytest.raises(TypeError):
        spec.members["y"] = _array()
    same = GroupSpec(attributes={"a": [1, {"b": 2}]}, members={"x": _array()})
    assert spec == same
    assert hash(spec) == hash(same)
    assert len({spec, same}) == 1


def test_json_equality_rules():
    assert json_equal(1, 1.0)
    assert not json_equal(True, 1)
    assert not json_equal(0, False)
    assert json_equal(float("nan"), float("nan"))
    assert not json_equal([1], {"0": 1})
    assert thaw(freeze({"a": (1, 2)})) == {"a": [1, 2]}
    with pytest.raises(MetadataError, match="not a JSON value"):
        freeze({"a": object()})
    assert GroupSpec(attributes={"n": 1}) == GroupSpec(attributes={"n": 1.0})
    assert GroupSpec(attributes={"n": 1}) != GroupSpec(attributes={"n": True})


def test_array_spec_new_matches_what_create_array_stores():
    kw = {"shape": (10, 7), "dtype": "float32", "chunks": (5, 7), "fill_value": np.nan,
          "dimension_names": ["y", "x"], "attributes": {"units": "m"},
          "compressors": {"name": "gzip", "configuration": {"level": 3}}}
    spec = ArraySpec.new(**kw)
    array = zarrx.create_array(zarrx.storage.MemoryStore(), **kw)
    assert ArraySpec.from_zarr(array) == spec
    assert spec.shape == (10, 7)
    assert spec.ndim == 2
    assert spec.chunks == (5, 7)
    assert spec.data_type == "float32"
    assert spec.fill_value == "NaN"
    assert spec.dimension_names == ("y", "x")
    v2 = ArraySpec.new(shape=(3,), dtype=">i2", zarr_format=2)
    assert v2.zarr_format == 2
    assert v2.data_type == ">i2"
    assert v2.chunks == (3,)


def test_replace_and_navigation():
    spec = GroupSpec(members={"a": GroupSpec(members={"b": _array()}), "c": _array()})
    assert spec["a/b"].shape == (4, 6)
    assert spec["/a/b/"] == spec["a/b"]
    assert "a/b" in spec
    assert "a/x" not in spec
    assert 3 not in spec
    with pytest.raises(NodeNotFoundError, match="a/x"):
        spec["a/x"]
    with pytest.raises(NodeNotFoundError):
        spec["c/d"]  # an array has no members
    changed = spec.with_member("a/b", spec["a/b"].replace(shape=[8, 6], attributes={"k": 1}))
    assert changed["a/b"].shape == (8, 6)
    assert changed["a/b"].attributes == {"k": 1}
    assert spec["a/b"].shape == (4, 6)  # the original is untouched
    removed = spec.with_member("c", None)
    assert sorted(removed.members) == ["a"]
    added = spec.with_member("a/new", GroupSpec())
    assert sorted(added["a"].members) == ["b", "new"]
    with pytest.raises(NodeNotFoundError):
        spec.with_member("zz/y", GroupSpec())
    assert [p for p, _ in spec.walk()] == ["", "a", "a/b", "c"]
    assert spec.replace(attributes={"t": 1}).attributes == {"t": 1}


def test_flat_form_round_trips():
    spec = GroupSpec(attributes={"r": 1},
                     members={"a": GroupSpec(members={"b": _array()}), "c": _array()})
    flat = spec.to_flat()
    assert list(flat) == ["", "a", "a/b", "c"]
    assert flat[""].members == {}
    assert flat["a"].members == {}
    assert GroupSpec.from_flat(flat) == spec
    assert GroupSpec.from_flat({"/" + k: v for k, v in flat.items()}) == spec
    with pytest.raises(MetadataError, match="no parent group '/a'"):
        GroupSpec.from_flat({"": GroupSpec(), "a/b": _array()})
    with pytest.raises(MetadataError, match="group at the root"):
        GroupSpec.from_flat({"a": GroupSpec()})


def test_member_names_and_formats_are_checked():
    for bad in ("", "a/b", "..", "."):
        with pytest.raises(MetadataError, match="invalid member name"):
            GroupSpec(members={bad: GroupSpec()})
    with pytest.raises(MetadataError, match="zarr_format 2, the group 3"):
        GroupSpec(members={"x": GroupSpec(zarr_format=2)})
    with pytest.raises(MetadataError, match="must be an ArraySpec or a GroupSpec"):
        GroupSpec(members={"x": 3})
    with pytest.raises(MetadataError, match="zarr_format must be 3, 2 or '3-draft'"):
        GroupSpec(zarr_format="3.0")
    with pytest.raises(MetadataError, match=r"only a Zarr v3\.0 draft group"):
        GroupSpec(implicit=True)
    with pytest.raises(MetadataError, match="zarr_format 3-draft, the group 3"):
        GroupSpec(members={"x": GroupSpec(zarr_format="3-draft")})
    with pytest.raises(MetadataError, match="not array properties"):
        ArraySpec(properties={"shape": [1], "attributes": {}})
    with pytest.raises(MetadataError, match="missing required property 'codecs'"):
        ArraySpec(properties={"shape": [1], "data_type": "uint8",
                              "chunk_grid": {"name": "regular", "configuration": {}},
                              "chunk_key_encoding": {"name": "default", "configuration": {}},
                              "fill_value": 0})
    # members given as JSON documents become specs
    g = GroupSpec(members={"x": _array().to_json()})
    assert g["x"] == _array()


def test_a_zarr_property_named_members_is_escaped():
    spec = GroupSpec(properties={"members": {"must_understand": False, "n": 1},
                                 "_members": {"must_understand": False}})
    doc = spec.to_json()
    assert doc["_members"] == {"must_understand": False, "n": 1}
    assert "__members" in doc
    assert doc["members"] == {}
    back = from_json(doc)
    assert back == spec
    assert back.properties["members"]["n"] == 1


def test_from_json_needs_to_know_the_format_and_node_type():
    with pytest.raises(MetadataError, match="no zarr_format"):
        from_json({"attributes": {}, "members": {}})
    assert from_json({"attributes": {}, "members": {}}, zarr_format=2).zarr_format == 2
    # the seed's v2 schema spells it zarr_version
    assert from_json({"zarr_version": 2, "attributes": {}, "members": {}}).zarr_format == 2
    with pytest.raises(MetadataError, match="zarr_format is 3, expected 2"):
        from_json({"zarr_format": 3, "node_type": "group", "attributes": {}, "members": {}},
                  zarr_format=2)
    with pytest.raises(MetadataError, match="cannot tell whether"):
        from_json({"zarr_format": 2, "attributes": {}})
    with pytest.raises(MetadataError, match="invalid JSON"):
        from_json("{nope")
    with pytest.raises(MetadataError, match="expected a JSON object"):
        from_json([1])
    with pytest.raises(MetadataError, match="zarr_format must be 2, 3 or '3-draft'"):
        from_json({"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0"})
    with pytest.raises(MetadataError, match="expected an array, got a group"):
        ArraySpec.from_json({"zarr_format": 2, "attributes": {}, "members": {}})
    with pytest.raises(MetadataError, match="expected a group, got an array"):
        GroupSpec.from_json(_array().to_json())


def test_repr_is_short():
    assert repr(_array()) == (
        "ArraySpec(zarr_format=3, shape=(4, 6), data_type='int16', chunks=(2, 3))"
    )
    assert repr(GroupSpec(members={"b": _array(), "a": GroupSpec()})) == (
        "GroupSpec(zarr_format=3, attributes={}, members=['a', 'b'])"
    )


def test_the_shared_spec_base_is_abstract():
    from zarrx.zom.model import _Spec

    with pytest.raises(TypeError, match="abstract"):
        _Spec()
