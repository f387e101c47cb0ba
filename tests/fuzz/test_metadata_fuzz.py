"""Fuzzed metadata: every failure to open is a zarrx error naming the document, never
another exception type, a hang or a crash."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.errors import ZarrxError
from zarrx.storage import MemoryStore

VALID_V3 = {
    "zarr_format": 3, "node_type": "array", "shape": [10, 7], "data_type": "float32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 3]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": "NaN",
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                   "shuffle": "shuffle", "typesize": 4,
                                                   "blocksize": 0}}],
    "attributes": {"a": 1}, "dimension_names": ["y", None],
}
VALID_SHARDED = {**VALID_V3, "codecs": [{"name": "sharding_indexed", "configuration": {
    "chunk_shape": [2, 3], "codecs": [{"name": "bytes"}], "index_location": "end"}}]}
VALID_V2 = {"zarr_format": 2, "shape": [10, 7], "chunks": [4, 3], "dtype": "<f4",
            "compressor": {"id": "zstd", "level": 1}, "fill_value": "NaN", "order": "F",
            "filters": [{"id": "delta", "dtype": "<f4"}], "dimension_separator": "/"}
VALID_GROUP = {"zarr_format": 3, "node_type": "group", "attributes": {},
               "consolidated_metadata": None}

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _open(key: str, raw: bytes) -> None:
    store = MemoryStore()
    store.set(key, raw)
    try:
        node = zarrx.open(store)
        if isinstance(node, zarrx.Array):
            # the metadata must also be usable, not only parseable: read a corner
            node[tuple(slice(0, 2) for _ in node.shape)]
        else:
            node.members()
    except ZarrxError:
        pass


def _mutate(doc, path, value):
    out = json.loads(json.dumps(doc))
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


def _paths(doc, prefix=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


@SETTINGS
@given(st.sampled_from([("zarr.json", VALID_V3), ("zarr.json", VALID_SHARDED),
                        (".zarray", VALID_V2), ("zarr.json", VALID_GROUP)]), st.data())
def test_structural_mutations(case, data):
    key, doc = case
    paths = list(_paths(doc))
    path = data.draw(st.sampled_from(paths))
    value = data.draw(JSON)
    _open(key, json.dumps(_mutate(doc, path, value)).encode())


@SETTINGS
@given(st.sampled_from([("zarr.json", VALID_V3), (".zarray", VALID_V2),
                        ("zarr.json", VALID_SHARDED)]), st.data())
def test_byte_mutations(case, data):
    key, doc = case
    raw = bytearray(json.dumps(doc).encode())
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "delete", "insert", "truncate"]))
        pos = data.draw(st.integers(0, max(len(raw) - 1, 0)))
        if op == "flip" and raw:
            raw[pos] ^= 1 << data.draw(st.integers(0, 7))
        elif op == "delete" and raw:
            del raw[pos]
        elif op == "insert":
            raw[pos:pos] = data.draw(st.binary(min_size=1, max_size=3))
        else:
            raw = raw[:pos]
    _open(key, bytes(raw))


@SETTINGS
@given(st.dictionaries(st.sampled_from(sorted(VALID_V3)), JSON, max_size=6))
def test_random_documents(extra):
    _open("zarr.json", json.dumps({**VALID_V3, **extra}).encode())


def test_overflowing_shapes_are_refused():
    """A dimension or a chunk beyond int64, or a rank mismatch (a shape of 2**64 elements
    in dimensions that fit, [2**62, 4], is valid: see tests/reliability/test_huge_shapes)."""
    for shape, chunks in [([2**63, 4], [1, 1]), ([2**63], [2**63]), ([1], [2**62, 1]),
                          ([4, 4], [2**62, 2**62])]:
        doc = {**VALID_V3, "shape": shape, "dimension_names": None,
               "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}}}
        store = MemoryStore()
        store.set("zarr.json", json.dumps(doc).encode())
        with pytest.raises(ZarrxError, match=r"zarr\.json"):
            zarrx.open(store)


def test_deep_json_is_refused():
    store = MemoryStore()
    store.set("zarr.json", b'{"attributes": ' + b"[" * 100000 + b"]" * 100000 + b"}")
    with pytest.raises(ZarrxError, match=r"zarr\.json"):
        zarrx.open(store)
