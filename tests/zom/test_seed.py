"""Seed 004's documents: the examples round-trip, the schemas are exported as the seed
gives them (v2 with its errata), and the validator judges documents as the schemas say."""

import json

import pytest

import zarrx
from zarrx.errors import MetadataError
from zarrx.zom import V2_ERRATA, ArraySpec, GroupSpec, from_json, json_schema, validate_json
from zarrx.zom.schema import SEED_V2_SCHEMA, V3_SCHEMA, apply_errata

from .conftest import seed_json, seed_text


@pytest.mark.parametrize("name", ["v3_example", "v2_example"])
def test_seed_examples_load_and_reserialise_equal(name):
    doc = seed_json(name)
    spec = from_json(doc)
    assert isinstance(spec, GroupSpec)
    assert spec.to_json() == doc
    # from the text as printed, and through a JSON text round trip
    assert from_json(seed_text(name)) == spec
    assert from_json(json.loads(spec.dumps())).to_json() == doc


def test_seed_v3_example_model():
    spec = from_json(seed_json("v3_example"))
    assert spec.zarr_format == 3
    assert dict(spec.attributes) == {"foo": 42, "bar": False}
    array = spec["array"]
    assert isinstance(array, ArraySpec)
    assert array.shape == (1000, 1000)
    assert array.chunks == (1000, 100)
    assert array.data_type == "|u1"
    assert array.dimension_names == ("rows", "columns")
    assert array.get("storage_transformers") is None
    assert array.attributes["baz"] == (1, 2, 3)


def test_seed_v2_example_model():
    spec = from_json(seed_json("v2_example"))
    assert spec.zarr_format == 2
    foo = spec["foo"]
    assert foo.shape == (1000, 1000)
    assert foo.chunks == (100, 100)
    assert foo.data_type == "|u1"
    assert foo.get("filters") == {}
    assert foo.attributes == {"baz": True}


def test_v3_schema_is_the_seeds():
    assert json_schema(3) == seed_json("v3_schema")
    assert json_schema(3) == V3_SCHEMA


def test_v2_schema_is_the_seeds_with_errata():
    seed = seed_json("v2_schema")
    assert seed == SEED_V2_SCHEMA
    assert json_schema(2) == apply_errata(seed)
    assert json_schema(2) != seed
    # every erratum says truthfully what the seed has where it applies
    for pointer, seed_value, fixed, reason in V2_ERRATA:
        node = seed
        parts = pointer.strip("/").split("/")
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last = parts[-1]
        found = node[int(last)] if isinstance(node, list) else node.get(last)
        assert found == seed_value, pointer
        assert fixed != seed_value
        assert reason


def test_exported_schemas_are_copies():
    schema = json_schema(3)
    schema["$defs"].clear()
    assert json_schema(3) == V3_SCHEMA


@pytest.mark.parametrize("name", ["v3_example", "v2_example"])
def test_seed_examples_validate_against_the_exported_schemas(name):
    assert validate_json(seed_json(name)) == []


def test_seeds_v2_schema_rejects_its_own_example():
    # Why the errata exist: the v2 schema as printed rejects the v2 example.
    problems = validate_json(seed_json("v2_example"), seed_json("v2_schema"))
    assert problems == [
        "/: property 'zarr_format' is not allowed",
        "/members/foo: missing required property 'attributess'",
        "/members/foo: property 'zarr_format' is not allowed",
        "/members/foo/compressor: expected object, got None",
        "/members/foo/filters: expected array, got {}",
    ]


def test_validator_reports_paths_and_reasons():
    doc = seed_json("v3_example")
    array = doc["members"]["array"]
    array["shape"] = [1000, "x"]
    array["chunk_grid"] = {"name": "regular"}
    array["unknown"] = 1
    del array["codecs"]
    problems = validate_json(doc)
    assert "/members/array/shape/1: expected integer, got 'x'" in problems
    assert "/members/array/chunk_grid: missing required property 'configuration'" in problems
    assert "/members/array: property 'unknown' is not allowed" in problems
    assert "/members/array: missing required property 'codecs'" in problems
    assert len(problems) == 4


def test_validator_judges_members_by_their_node_type():
    doc = seed_json("v3_example")
    doc["members"]["sub"] = {"zarr_format": 3, "node_type": "group", "members": {}}
    assert validate_json(doc) == ["/members/sub: missing required property 'attributes'"]
    doc = seed_json("v2_example")
    doc["members"]["g"] = {"zarr_format": 2, "attributes": [], "members": {}}
    assert validate_json(doc) == ["/members/g/attributes: expected object, got []"]


def test_validator_scalars_and_fill_values():
    doc = seed_json("v3_example")
    array = doc["members"]["array"]
    for good in (0, 1.5, True, "NaN", "-Infinity", [1.0, 2.0], [0, 255]):
        array["fill_value"] = good
        assert validate_json(doc) == [], good
    array["fill_value"] = None
    (problem,) = validate_json(doc)
    assert problem.startswith("/members/array/fill_value: does not match any allowed form")
    array["fill_value"] = 0
    array["shape"] = [2.0, 3]  # an integer-valued number is an integer in JSON Schema
    assert validate_json(doc) == []
    doc["zarr_format"] = 2
    assert validate_json(doc, json_schema(3))[0] == "/zarr_format: expected 3, got 2"


def test_lenient_schema_accepts_what_zarr_v3_allows():
    doc = seed_json("v3_example")
    array = doc["members"]["array"]
    array["dimension_names"] = ["rows", None]
    array["codecs"] = [{"name": "bytes"}, "crc32c"]
    array["ome"] = {"must_understand": False, "version": "0.5"}
    doc["extensions"] = []
    assert validate_json(doc) == [
        "/members/array/codecs/0: missing required property 'configuration'",
        "/members/array/codecs/1: expected object, got 'crc32c'",
        "/members/array/dimension_names/1: expected string, got None",
        "/members/array: property 'ome' is not allowed",
        "/: property 'extensions' is not allowed",
    ]
    assert validate_json(doc, lenient=True) == []
    spec = from_json(doc)
    assert spec.to_json() == doc
    array["other"] = {"must_understand": True}
    with pytest.raises(MetadataError, match="must_understand"):
        from_json(doc)


def test_from_json_names_the_bad_path():
    doc = seed_json("v2_example")
    doc["members"]["foo"]["order"] = "X"
    with pytest.raises(MetadataError, match=r"/members/foo/order: expected one of \['C', 'F'\]"):
        from_json(doc)


def test_seed_v3_example_cannot_be_stored_and_nothing_is_written(tmp_path):
    # "|u1" is not a v3 data type and "GZip" not a registered codec: to_zarr says so
    # before it writes anything.
    spec = from_json(seed_json("v3_example"))
    with pytest.raises(MetadataError, match=r"/array: .*'\|u1'"):
        spec.to_zarr(str(tmp_path / "h"))
    assert not (tmp_path / "h").exists()


def test_seed_v2_example_can_be_stored(tmp_path):
    spec = from_json(seed_json("v2_example"))
    group = spec.to_zarr(str(tmp_path / "h"))
    assert group.zarr_format == 2
    assert group["foo"].shape == (1000, 1000)
    assert group.attrs["foo"] == 42
    stored = zarrx.zom.from_zarr(str(tmp_path / "h"))
    assert stored.like(spec)
    # the stored form spells "no filters" as null, the example as {}
    assert stored["foo"].get("filters") is None
