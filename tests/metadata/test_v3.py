"""Parsing and validating v3 zarr.json documents."""

import copy
import math

import numpy as np
import pytest

from zarrx.errors import (
    FillValueError,
    MetadataError,
    UnknownCodecError,
    UnknownDataTypeError,
    UnknownExtensionError,
)
from zarrx.metadata.json import dump_json, load_json
from zarrx.metadata.v3 import ArrayMetadataV3, GroupMetadataV3, node_from_json

ARRAY = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [100, 50],
    "data_type": "float32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 25]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": "NaN",
    "codecs": [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "gzip", "configuration": {"level": 5}},
        {"name": "crc32c"},
    ],
    "attributes": {"a": [1, 2]},
    "dimension_names": ["y", None],
}


def test_array_round_trip():
    meta = ArrayMetadataV3.from_json(copy.deepcopy(ARRAY))
    assert meta.shape == (100, 50)
    assert meta.dtype == np.dtype("float32")
    assert meta.chunk_grid.chunk_shape == (10, 25)
    assert math.isnan(meta.fill_value)
    assert meta.chunk_key((3, 1)) == "c/3/1"
    assert [c.name for c in meta.codecs] == ["transpose", "bytes", "gzip", "crc32c"]
    again = meta.to_json()
    assert again["codecs"][1] == ARRAY["codecs"][1]
    assert again["codecs"][3]["name"] == "crc32c"
    assert {k: v for k, v in again.items() if k != "codecs"} == {
        k: v for k, v in ARRAY.items() if k != "codecs"
    }
    reparsed = ArrayMetadataV3.from_json(load_json(dump_json(again), where="x"))
    assert reparsed.to_json() == again


def test_group_round_trip_keeps_zarr_python_keys():
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {"x": 1},
           "consolidated_metadata": None}
    meta = GroupMetadataV3.from_json(doc)
    assert meta.attributes == {"x": 1}
    assert meta.to_json() == doc
    assert isinstance(node_from_json(doc, where="zarr.json"), GroupMetadataV3)


def test_unknown_key_with_must_understand_false_is_kept():
    doc = copy.deepcopy(ARRAY)
    doc["my_ext"] = {"must_understand": False, "value": 3}
    meta = ArrayMetadataV3.from_json(doc)
    assert meta.to_json()["my_ext"] == {"must_understand": False, "value": 3}


def _with(**changes):
    doc = copy.deepcopy(ARRAY)
    for key, value in changes.items():
        if value is KeyError:
            del doc[key]
        else:
            doc[key] = value
    return doc


@pytest.mark.parametrize(
    ("doc", "error", "match"),
    [
        (_with(zarr_format=2), MetadataError, "zarr_format must be 3"),
        (_with(node_type="dataset"), MetadataError, "node_type"),
        (_with(shape=KeyError), MetadataError, r"missing required keys \['shape'\]"),
        (_with(shape=[10, -1]), MetadataError, "must not be negative"),
        (_with(shape=[10, "5"]), MetadataError, "list of integers"),
        (_with(shape=[2**40, 2**63]), MetadataError, "longer than 2\\*\\*63-1"),
        (_with(data_type="float128"), UnknownDataTypeError, "float128"),
        (_with(data_type=7), MetadataError, "data_type must be"),
        (_with(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [10]}}),
         MetadataError, "rank"),
        (_with(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [0, 5]}}),
         MetadataError, "positive"),
        (_with(chunk_grid={"name": "hexagonal", "configuration": {}}), MetadataError,
         "hexagonal"),
        (_with(chunk_key_encoding={"name": "default", "configuration": {"separator": "-"}}),
         MetadataError, "separator"),
        (_with(fill_value="zero"), FillValueError, "fill value 'zero'"),
        (_with(fill_value=None), MetadataError, "fill_value must not be null"),
        (_with(fill_value="0x7fc0"), FillValueError, "8 hex digits"),
        (_with(codecs=[]), MetadataError, "non-empty list"),
        (_with(codecs=[{"name": "lzma9"}]), UnknownCodecError, "lzma9"),
        (_with(codecs=[{"name": "gzip"}, {"name": "bytes"}]), MetadataError, "out of order"),
        (_with(dimension_names=["a"]), MetadataError, "dimension_names has 1"),
        (_with(storage_transformers=[{"name": "chunk-manifest"}]), UnknownExtensionError,
         "chunk-manifest"),
        (_with(unknown_thing=5), UnknownExtensionError, "unknown_thing"),
        (_with(attributes=[1]), MetadataError, "attributes must be an object"),
    ],
)
def test_bad_array_metadata(doc, error, match):
    with pytest.raises(error, match=match):
        ArrayMetadataV3.from_json(doc, where="arr/zarr.json")


def test_error_names_the_document():
    with pytest.raises(MetadataError, match=r"arr/zarr\.json"):
        ArrayMetadataV3.from_json(_with(shape=[1]), where="arr/zarr.json")


@pytest.mark.parametrize(
    ("dtype", "fill", "error"),
    [("int8", 128, FillValueError), ("uint8", -1, FillValueError), ("bool", 2, FillValueError),
     ("float16", 1e10, FillValueError), ("int32", 1.5, FillValueError),
     ("complex64", 1.0, FillValueError), ("r16", [1, 2, 3], FillValueError)],
)
def test_fill_value_out_of_range(dtype, fill, error):
    doc = _with(data_type=dtype, fill_value=fill,
                codecs=[{"name": "bytes", "configuration": {"endian": "little"}}])
    with pytest.raises(error):
        ArrayMetadataV3.from_json(doc)


@pytest.mark.parametrize(
    "raw",
    [b"{", b'{"a": 1, "a": 2}', b'{"x": NaN}', b"\xff\xfe", b"[" * 10000 + b"]" * 10000],
)
def test_bad_json_is_a_metadata_error(raw):
    with pytest.raises(MetadataError):
        load_json(raw, where="zarr.json")


@pytest.mark.parametrize(
    ("raw", "message"),
    [(b'{"a": {"b": 1, "b": 2}}', "duplicate key 'b'"), (b'{"x": NaN}', "NaN is not valid")],
)
def test_bad_json_names_the_document_and_the_problem(raw, message):
    with pytest.raises(MetadataError, match=f"^arr/zarr.json: {message}"):
        load_json(raw, where="arr/zarr.json")
    if b"NaN" in raw:  # v2 documents may hold NaN literals
        assert math.isnan(load_json(raw, where="x", allow_nan=True)["x"])


def test_arrays_of_one_layout_keep_their_own_attributes():
    """Stored documents that differ only in attributes share the parsed layout, never
    the attributes."""
    from zarrx.metadata.v3 import node_from_document

    first = node_from_document(_with(attributes={"i": 1}), where="a")
    second = node_from_document(_with(attributes={"i": 2, "units": "m"}), where="b")
    assert first.attributes == {"i": 1}
    assert second.attributes == {"i": 2, "units": "m"}
    assert second.codecs is first.codecs
    direct = ArrayMetadataV3.from_json(_with(attributes={"i": 2, "units": "m"}))
    assert second.to_json() == direct.to_json()
    with pytest.raises(MetadataError, match=r"^c: attributes"):
        node_from_document(_with(attributes=[1, 2]), where="c")


def test_a_parsed_layout_is_reused_only_for_a_document_of_the_same_json_types():
    """``[100, 50] == [100.0, 50]`` and ``[1] == [True]`` in Python: a document
    differing from a cached layout only so is parsed (and refused) as itself."""
    from zarrx.metadata.v3 import node_from_document

    node_from_document(_with(), where="a")
    with pytest.raises(MetadataError, match=r"^b: shape must be a list of integers"):
        node_from_document(_with(shape=[100.0, 50]), where="b")
    node_from_document(_with(shape=[1, 50]), where="c")
    with pytest.raises(MetadataError, match=r"^d: shape must be a list of integers"):
        node_from_document(_with(shape=[True, 50]), where="d")


def test_a_parsed_layout_keeps_the_document_and_each_node_its_attributes():
    """The document passed in is not changed (consolidated metadata keeps its entries),
    and a node made from a cached layout is a whole one: every field, its own attributes."""
    from zarrx.metadata.v3 import node_from_document

    doc = _with(attributes={"i": 1})
    before = copy.deepcopy(doc)
    first = node_from_document(doc, where="a")
    second = node_from_document(_with(attributes={"i": 2}), where="a")
    assert doc == before
    assert (first.attributes, second.attributes) == ({"i": 1}, {"i": 2})
    assert second.with_attributes({"j": 2}).attributes == {"j": 2}
    assert second.attributes == {"i": 2}
    expected = ArrayMetadataV3.from_json(_with(attributes={"i": 2}))
    assert second.to_json() == expected.to_json()
    assert type(second) is ArrayMetadataV3
    assert second.dtype == expected.dtype


def test_a_document_the_caller_owns_is_parsed_alike_on_a_miss_and_a_hit():
    """``owned=True`` (a document read from the store) may be taken apart; the node and
    the errors are those of the document as written, whether its layout was cached."""
    from zarrx.metadata.v3 import node_from_document

    fresh = _with(shape=[7, 3], attributes=[1])  # a layout not seen yet: a miss
    with pytest.raises(MetadataError, match=r"^m: attributes must be an object"):
        node_from_document(fresh, where="m", owned=True)
    first = node_from_document(_with(shape=[7, 3], attributes={"i": 1}), where="a", owned=True)
    with pytest.raises(MetadataError, match=r"^h: attributes must be an object"):  # a hit
        node_from_document(_with(shape=[7, 3], attributes=[1]), where="h", owned=True)
    second = node_from_document(_with(shape=[7, 3], attributes=None), where="b", owned=True)
    third = node_from_document(_with(shape=[7, 3], attributes=KeyError), where="c", owned=True)
    assert (first.attributes, second.attributes, third.attributes) == ({"i": 1}, {}, {})
    assert second.codecs is first.codecs
    assert first.to_json() == ArrayMetadataV3.from_json(
        _with(shape=[7, 3], attributes={"i": 1})).to_json()


def _outcome(parse, doc):
    """What parsing ``doc`` gives: the document written back, or the error."""
    try:
        meta = parse(copy.deepcopy(doc))
    except Exception as e:  # any error, compared as it is
        return type(e).__name__, str(e)
    return meta.to_json(), meta.shape, meta.dtype


@pytest.mark.parametrize("owned", [False, True])
@pytest.mark.parametrize(
    "shape",
    [[100, 50], [37, 9], [0, 0], [2**63 - 1, 1], [7], [7, 8, 9], [], [-1, 5], [3, "4"],
     [3, 4.0], [3, True], [2**63, 1], "3,4", None, [2**62, 2**62]],
)
def test_a_layout_seen_with_another_shape_parses_as_the_document_itself(
    shape, owned, monkeypatch
):
    """A document whose layout was parsed before with another shape (the second-level
    cache) gives what parsing it from scratch gives: the node, or the same error."""
    from zarrx.metadata import v3
    from zarrx.metadata.v3 import node_from_document

    monkeypatch.setattr(v3, "_PARSED", {})  # empty caches: the first parse fills both
    monkeypatch.setattr(v3, "_ANY_SHAPE", {})
    node_from_document(_with(), where="z")  # the layout, with shape [100, 50]
    doc = _with(shape=shape) if shape is not None else _with(shape=KeyError)
    got = _outcome(lambda d: node_from_document(d, where="z", owned=owned), doc)
    assert got == _outcome(lambda d: ArrayMetadataV3.from_json(d, where="z"), doc)


def test_a_layout_seen_with_another_shape_keeps_each_nodes_shape_and_attributes(monkeypatch):
    from zarrx.metadata import v3
    from zarrx.metadata.v3 import node_from_document

    monkeypatch.setattr(v3, "_PARSED", {})
    monkeypatch.setattr(v3, "_ANY_SHAPE", {})
    scales = [node_from_document(_with(shape=[100 >> i, 50 >> i], attributes={"level": i}),
                                 where=f"s{i}", owned=True) for i in range(5)]
    assert [m.shape for m in scales] == [(100 >> i, 50 >> i) for i in range(5)]
    assert [m.attributes for m in scales] == [{"level": i} for i in range(5)]
    assert all(m.codecs is scales[0].codecs for m in scales)
    assert len(v3._ANY_SHAPE) == 1  # one layout parsed whole; the other shapes checked
    again = node_from_document(_with(shape=[25, 12], attributes={"level": 2}), where="s")
    assert again.to_json() == scales[2].to_json()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(b' {"a": 1}', {"a": 1}), (b'{"a": 1}\n', {"a": 1}), (b'{"a": 1} \t\r\n', {"a": 1}),
     (b"[1]", [1]), (b'"s"', "s")],
)
def test_json_around_the_value_may_be_white_space(raw, expected):
    assert load_json(raw, where="x") == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [(b'{"a": 1} x', "Extra data"), (b'{"a": 1}{}', "Extra data"), (b"", "Expecting value"),
     (b" ", "Expecting value"), ('{"a": 1}\u00a0'.encode(), "Extra data")],
)
def test_json_anything_else_after_the_value_is_refused(raw, message):
    """Only JSON's four white-space characters may follow the document (not, say, a
    no-break space, which Python's ``str.isspace`` accepts)."""
    with pytest.raises(MetadataError, match=f"^x: invalid JSON \\({message}"):
        load_json(raw, where="x")


def test_a_registry_change_invalidates_parsed_layouts():
    from zarrx import registry
    from zarrx.codecs.gzip import GzipCodec
    from zarrx.metadata.v3 import node_from_document

    class LoudGzip(GzipCodec):
        pass

    before = node_from_document(_with(), where="a")
    with registry.codecs.override("gzip", LoudGzip):
        during = node_from_document(_with(), where="a")
    after = node_from_document(_with(), where="a")
    def gzip(meta):
        return type(next(c for c in meta.codecs.codecs if c.name == "gzip"))

    assert gzip(before) is GzipCodec
    assert gzip(during) is LoudGzip
    assert gzip(after) is GzipCodec


def test_a_node_from_a_cached_layout_carries_no_value_derived_from_another_node(monkeypatch):
    """Only the dataclass fields are copied: a value stored beside them on the cached
    node (as a cached property would store one, for its shape) is not."""
    from zarrx.metadata import v3
    from zarrx.metadata.v3 import node_from_document

    monkeypatch.setattr(v3, "_PARSED", {})
    monkeypatch.setattr(v3, "_ANY_SHAPE", {})
    cached = node_from_document(_with(), where="a")
    cached.__dict__["derived_from_shape"] = cached.shape
    same = node_from_document(_with(attributes={"b": 1}), where="b")
    other = node_from_document(_with(shape=[3, 4]), where="c")
    assert "derived_from_shape" not in same.__dict__
    assert "derived_from_shape" not in other.__dict__
    assert (same.shape, other.shape, same.attributes) == ((100, 50), (3, 4), {"b": 1})
