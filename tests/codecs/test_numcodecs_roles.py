"""Every numcodecs codec under its ``numcodecs.<id>`` name, in its role (array→array,
array→bytes, bytes→bytes), through the registry, the chain rules and ``create_array``.

numcodecs itself is the oracle: what a chunk reads back after a zarrx write is what the
numcodecs codec's own encode and decode make of it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx import registry
from zarrx.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, ChunkSpec
from zarrx.codecs import numcodecs_compat
from zarrx.codecs.numcodecs_compat import ARRAY_FILTERS, SERIALIZERS, KeepName
from zarrx.codecs.pipeline import CodecPipeline
from zarrx.errors import MetadataError, MissingCodecError, UnknownCodecError
from zarrx.storage import MemoryStore

ROOT = Path(__file__).resolve().parents[2]

#: A configuration for each id numcodecs ships (zarr-python 3.4 registers these 21 and
#: ``categorize``); ``None``: the id is bytes→bytes and takes ``{}``.
CONFIGS: dict[str, dict[str, Any]] = {
    "adler32": {}, "bz2": {"level": 1}, "crc32": {}, "crc32c": {}, "fletcher32": {},
    "gzip": {"level": 1}, "jenkins_lookup3": {}, "lz4": {}, "lzma": {"preset": 1},
    "zlib": {"level": 1}, "zstd": {"level": 1}, "shuffle": {},
    "blosc": {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "delta": {"dtype": "<f8"}, "fixedscaleoffset": {"offset": 1, "scale": 10, "astype": "<i4"},
    "quantize": {"digits": 3}, "astype": {"encode_dtype": "<f4"}, "bitround": {"keepbits": 5},
    "pcodec": {"level": 4}, "zfpy": {"mode": 4, "tolerance": -1},
}
ROLES = {i: ArrayArrayCodec if i in ARRAY_FILTERS else ArrayBytesCodec if i in SERIALIZERS
         else BytesBytesCodec for i in CONFIGS}
DATA = (np.arange(7 * 9, dtype="f8").reshape(7, 9) - 20) / 7


def _entry_points() -> dict[str, str]:
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return doc["project"]["entry-points"]["zarrx.codecs"]


def test_every_numcodecs_id_is_registered() -> None:
    """Each codec numcodecs ships (but its object codecs and ``pickle``) has an entry
    point, and each entry point resolves to a builder for its own id."""
    ids = {n.removeprefix("numcodecs.") for n in _entry_points() if n.startswith("numcodecs.")}
    shipped = set(numcodecs.registry.codec_registry)
    objects = {"json2", "msgpack2", "vlen-array", "vlen-bytes", "vlen-utf8", "pickle", "base64"}
    assert ids == (shipped | {"pcodec", "zfpy"}) - objects
    for codec_id in ids:
        found = registry.codecs.get(f"numcodecs.{codec_id}")
        assert found.name == f"numcodecs.{codec_id}"


@pytest.mark.parametrize("codec_id", sorted(CONFIGS))
def test_role_of_each_codec(codec_id: str) -> None:
    codec = registry.codecs.get(f"numcodecs.{codec_id}").from_config(CONFIGS[codec_id])
    assert isinstance(codec, ROLES[codec_id])
    assert codec.to_dict() == {"name": f"numcodecs.{codec_id}",
                               "configuration": CONFIGS[codec_id]}


def _chain(codec_id: str) -> list[dict[str, Any]]:
    entry = {"name": f"numcodecs.{codec_id}", "configuration": CONFIGS[codec_id]}
    if ROLES[codec_id] is ArrayArrayCodec:
        return [entry, {"name": "bytes", "configuration": {"endian": "little"}}]
    if ROLES[codec_id] is ArrayBytesCodec:
        return [entry]
    return [{"name": "bytes", "configuration": {"endian": "little"}}, entry]


def _oracle(codec_id: str, chunk: np.ndarray) -> np.ndarray:
    """What numcodecs itself makes of a chunk: its encode then its decode."""
    config = dict(CONFIGS[codec_id])
    if codec_id in ("quantize", "fixedscaleoffset"):
        config["dtype"] = chunk.dtype.str
    if codec_id == "astype":
        config["decode_dtype"] = chunk.dtype.str
    codec = numcodecs.get_codec({"id": codec_id, **config})
    out = codec.decode(codec.encode(chunk.copy()))
    return np.frombuffer(np.ascontiguousarray(out), chunk.dtype).reshape(chunk.shape)


@pytest.mark.parametrize("codec_id", sorted(CONFIGS))
@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
def test_v3_writes_and_reads_through_each_codec(codec_id: str, sharded: bool) -> None:
    """Writes through every codec (bitround, quantize and astype included, which used to
    fail: the filter gave back the chunk's shape, the chain expected it flattened), with
    partial edge chunks and a NaN fill; each chunk reads as numcodecs makes it."""
    store = MemoryStore()
    chain = _chain(codec_id)
    kwargs: dict[str, Any] = {"filters": chain[:1], "compressors": None}
    if ROLES[codec_id] is BytesBytesCodec:
        kwargs = {"compressors": chain[1:]}
    if ROLES[codec_id] is ArrayBytesCodec:
        kwargs = {"serializer": chain[0], "compressors": None}
    fill = 2.5 if codec_id == "fixedscaleoffset" else np.nan  # NaN has no integer form
    a = zarrx.create_array(store, shape=(7, 9), chunks=(3, 4), dtype="f8", fill_value=fill,
                           shards=(6, 8) if sharded else None, **kwargs)
    assert [c["name"] for c in a.metadata.to_json()["codecs"]] == (
        ["sharding_indexed"] if sharded else [c["name"] for c in chain])
    user = DATA[1:, :8].copy()
    a[1:, :8] = user
    np.testing.assert_array_equal(user, DATA[1:, :8])  # filters never write into the input
    got = a[...]
    np.testing.assert_array_equal(got[0], fill)
    np.testing.assert_array_equal(got[:, 8], fill)
    part = np.full((9, 12), fill)  # the array's chunks, edge chunks whole
    part[1:7, :8] = DATA[1:, :8]
    for i in range(0, 7, 3):
        for j in range(0, 8, 4):
            expected = _oracle(codec_id, part[i:i + 3, j:j + 4])
            np.testing.assert_array_equal(got[i:i + 3, j:j + 4], expected[: 7 - i, : 9 - j],
                                          err_msg=f"{codec_id} chunk {(i, j)}")
    reopened = zarrx.open_array(store)
    np.testing.assert_array_equal(reopened[...], got)


@settings(max_examples=40, deadline=None)
@given(keepbits=st.integers(1, 52), data=st.lists(
    st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=30))
def test_numcodecs_bitround_writes_as_numcodecs_rounds(keepbits: int, data: list[float]) -> None:
    values = np.array(data)
    a = zarrx.create_array(MemoryStore(), shape=values.shape, chunks=(7,), dtype="f8",
                           filters=[{"name": "numcodecs.bitround",
                                     "configuration": {"keepbits": keepbits}}])
    a[...] = values
    rounder = numcodecs.BitRound(keepbits)
    expected = rounder.encode(values.copy()).view("f8")
    got = a[...]
    # numcodecs' integer addition wraps for the all-ones NaN patterns: not drawn here
    assert got.view("u8").tolist() == expected.view("u8").tolist()


def test_serializer_argument_takes_numcodecs_objects_and_dicts() -> None:
    for serializer in (numcodecs.PCodec(level=3), {"name": "numcodecs.pcodec",
                                                   "configuration": {"level": 3}}):
        a = zarrx.create_array(MemoryStore(), shape=(5, 6), chunks=(2, 4), dtype="i4",
                               serializer=serializer, compressors=None, fill_value=7)
        a[1:, 2:] = np.arange(16, dtype="i4").reshape(4, 4)
        assert a.metadata.to_json()["codecs"][0]["name"] == "numcodecs.pcodec"
        assert a[0, 0] == 7
        assert a[4, 5] == 15


def test_array_bytes_codec_among_compressors_is_refused_with_a_hint() -> None:
    with pytest.raises(MetadataError, match="serializer="):
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="f8", compressors=[numcodecs.ZFPY()])
    with pytest.raises(MetadataError, match="array→bytes"):
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="f8", serializer=numcodecs.Zlib())


def test_chain_rules_name_each_codec_role() -> None:
    doc = [{"name": "bytes"}, {"name": "numcodecs.pcodec", "configuration": {}}]
    with pytest.raises(MetadataError, match=r"found 2 array→bytes codecs: \[bytes "
                                            r"\(array→bytes\), numcodecs.pcodec"):
        CodecPipeline.from_json(doc, where="test")
    with pytest.raises(MetadataError, match="out of order"):
        CodecPipeline.from_json([{"name": "numcodecs.pcodec", "configuration": {}},
                                 {"name": "numcodecs.delta", "configuration": {"dtype": "<f8"}}],
                                where="test")


@pytest.mark.parametrize("codec_id", ["pcodec", "zfpy"])
def test_v2_compressor_that_serialises(codec_id: str) -> None:
    """In v2 an array compressor (pcodec, zfpy) takes the place of ``bytes``, as
    zarr-python hands the chunk's array to it, and its config is written back as given."""
    config = CONFIGS[codec_id]
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(7, 9), chunks=(3, 4), dtype="i4", zarr_format=2,
                           compressors=numcodecs.get_codec({"id": codec_id, **config}),
                           filters=[numcodecs.Delta(dtype="<i4")], fill_value=-15)
    values = np.arange(63, dtype="i4").reshape(7, 9) ** 2
    a[:5, 2:] = values[:5, 2:]
    expected = np.full((7, 9), -15, dtype="i4")
    expected[:5, 2:] = values[:5, 2:]
    np.testing.assert_array_equal(zarrx.open_array(store)[...], expected)
    assert a.metadata.to_json()["compressor"]["id"] == codec_id


@pytest.mark.parametrize(("dtype", "ndim"), [("u1", 2), ("f4", 5), ("c8", 1)])
def test_zfpy_refuses_what_it_cannot_encode(dtype: str, ndim: int) -> None:
    with pytest.raises(MetadataError, match=r"numcodecs\.zfpy cannot encode"):
        zarrx.create_array(MemoryStore(), shape=(2,) * ndim, dtype=dtype,
                           serializer={"name": "numcodecs.zfpy", "configuration": {"mode": 4}},
                           compressors=None)


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(numcodecs.registry.codec_registry, "pcodec")
    monkeypatch.setattr(numcodecs.registry, "entries", {}, raising=False)
    with pytest.raises(MissingCodecError, match=r"pip install 'zarrx\[pcodec\]'") as e:
        CodecPipeline([numcodecs_compat.numcodecs_pcodec.from_config({})])
    assert isinstance(e.value, ImportError)
    assert isinstance(e.value, UnknownCodecError)


def test_crc32c_is_zarrxs_own_kept_under_its_name() -> None:
    codec = numcodecs_compat.numcodecs_crc32c.from_config({})
    assert isinstance(codec, KeepName)
    assert codec.inner.name == "crc32c"
    data = b"zarr chunk"
    assert bytes(codec.encode(data)) == bytes(numcodecs.CRC32C().encode(data))
    assert codec.to_dict() == {"name": "numcodecs.crc32c", "configuration": {}}
    start = numcodecs_compat.numcodecs_crc32c.from_config({"location": "start"})
    assert not isinstance(start, KeepName)  # numcodecs' own, checksum first


def test_quantize_needs_its_dtype_filled_before_use() -> None:
    codec = numcodecs_compat.numcodecs_quantize.from_config({"digits": 2})
    with pytest.raises(MetadataError, match="'dtype' is filled from the array's data type"):
        codec.encode(np.zeros(3), ChunkSpec((3,), np.dtype("f8"), 0.0))
    evolved = codec.evolve(ChunkSpec((3,), np.dtype("f4"), 0.0))
    assert evolved.to_config() == {"digits": 2, "dtype": "float32"}  # as zarr-python 3.4


def test_shuffle_elementsize_is_the_item_size() -> None:
    codec = numcodecs_compat.numcodecs_shuffle.from_config({})
    assert codec.evolve(ChunkSpec((3,), np.dtype("i2"), 0)).to_config() == {"elementsize": 2}
