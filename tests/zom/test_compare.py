"""Structural differences: what is compared, how it reads, and the options."""

import pytest

from zarrx.zom import MISSING, ArraySpec, Difference, GroupSpec, diff, from_json

from .conftest import seed_json


def _hierarchy(shape=(10, 10), attrs=None, **members):
    array = ArraySpec.new(shape=shape, dtype="uint8", chunks=(5, 5),
                          attributes=attrs or {"units": "m"})
    return GroupSpec(attributes={"title": "t"},
                     members={"group": GroupSpec(members={"array": array, **members})})


def test_a_difference_names_the_path_and_the_field():
    (d,) = diff(_hierarchy(), _hierarchy(shape=(10, 20)))
    assert str(d) == "/group/array: shape (10, 10) != (10, 20)"
    assert (d.path, d.field, d.a, d.b) == ("/group/array", "shape", [10, 10], [10, 20])
    assert isinstance(d, Difference)


def test_attributes_members_and_node_types():
    a = _hierarchy(attrs={"units": "m", "scale": 1})
    b = _hierarchy(attrs={"units": "km", "offset": 0}, extra=GroupSpec())
    assert [str(d) for d in diff(a, b)] == [
        '/group/array: attributes.units "m" != "km"',
        "/group/array: attributes.scale 1 != (absent)",
        "/group/array: attributes.offset (absent) != 0",
        '/group/extra: node (absent) != "group"',
    ]
    c = _hierarchy(array=GroupSpec())
    assert [str(d) for d in diff(a, c)] == ['/group/array: node_type "array" != "group"']
    assert diff(a, b, attributes=False) == [
        d for d in diff(a, b) if d.field == "node"]
    assert diff(b, a, attributes=False)[0].b is MISSING


def test_ignore_and_allow_extra():
    a = _hierarchy(extra=GroupSpec())
    b = _hierarchy(shape=(10, 20), attrs={"units": "km"})
    fields = [d.field for d in diff(a, b)]
    assert fields == ["shape", "attributes.units", "node"]
    assert [d.field for d in diff(a, b, ignore=["shape", "attributes.units"])] == ["node"]
    assert diff(a, b, ignore=("shape", "attributes"), allow_extra=True) == []
    assert diff(a, b, ignore="shape", allow_extra=True, attributes=False) == []
    assert not a.like(b)
    assert a.like(b, ignore=["shape"], attributes=False, allow_extra=True)
    # allow_extra is one-sided: the second may not have more than the first
    assert [d.field for d in diff(b, a, ignore=["shape"], attributes=False,
                                  allow_extra=True)] == ["node"]


def test_formats_differ():
    v3 = _hierarchy()
    v2 = v3.to_v2()
    assert [str(d) for d in diff(v3, v2)][:2] == [
        "/: zarr_format 3 != 2", "/group: zarr_format 3 != 2"]


def test_defaults_the_specs_imply_are_not_differences():
    doc = seed_json("v3_example")
    array = doc["members"]["array"]
    other = from_json(doc)
    array["storage_transformers"] = []
    array["chunk_key_encoding"] = {"name": "default", "configuration": None}
    array["codecs"] = ["GZip"]
    other = other.with_member("array", other["array"].replace(
        codecs=[{"name": "GZip", "configuration": {}}]))
    assert diff(from_json(doc), other) == []
    del array["storage_transformers"]
    array["chunk_key_encoding"] = {"name": "default", "configuration": {"separator": "/"}}
    assert diff(from_json(doc), other) == []
    array["chunk_key_encoding"] = {"name": "default", "configuration": {"separator": "."}}
    assert [d.field for d in diff(from_json(doc), other)] == ["chunk_key_encoding"]
    v2 = seed_json("v2_example")
    left = from_json(v2)
    v2["members"]["foo"]["filters"] = None
    del v2["members"]["foo"]["dimension_separator"]
    right = from_json(v2)
    # filters: {} and null agree; an absent separator is the default "."
    assert [str(d) for d in diff(left, right)] == ['/foo: dimension_separator "/" != "."']


def test_json_documents_are_accepted_and_numbers_compare_as_json():
    a = seed_json("v3_example")
    b = seed_json("v3_example")
    b["attributes"]["foo"] = 42.0
    assert diff(a, b) == []
    b["attributes"]["bar"] = 0
    assert [str(d) for d in diff(a, b)] == ["/: attributes.bar false != 0"]


@pytest.mark.parametrize(("value", "text"), [
    ((1,), "(1,)"), ([2, 3], "(2, 3)"), ("x", '"x"'), (None, "null"),
    ({"a": [1]}, '{"a": [1]}'), (MISSING, "(absent)"), (True, "true"),
])
def test_values_read_naturally(value, text):
    assert str(Difference("/", "f", value, 0)) == f"/: f {text} != 0"
