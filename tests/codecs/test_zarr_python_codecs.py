"""zarr-python's codec objects work where a codec goes, and ``zarrx.codecs`` exports the
codec classes under zarr-python's names: zarr-python, given the same objects, is the
oracle for the metadata written, and reads the data back."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
import zarr.codecs as zc

import zarrx
from zarrx.abc.codec import Codec
from zarrx.errors import MetadataError


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


#: Keywords of create_array with zarr-python codec objects, made fresh for each use.
CASES: dict[str, Callable[[], dict[str, Any]]] = {
    "blosc lz4 alone": lambda: {"compressors": zc.BloscCodec(cname="lz4")},
    "blosc in a list": lambda: {"compressors": [zc.BloscCodec(cname="zstd", clevel=3)]},
    "blosc explicit": lambda: {"compressors": zc.BloscCodec(
        cname="lz4", clevel=7, shuffle=zc.BloscShuffle.noshuffle, typesize=4)},
    "zstd checksum": lambda: {"compressors": zc.ZstdCodec(level=5, checksum=True)},
    "gzip then crc32c": lambda: {"compressors": (zc.GzipCodec(level=2), zc.Crc32cCodec())},
    "transpose filter": lambda: {"filters": zc.TransposeCodec(order=(1, 0)),
                                 "compressors": None},
    "big endian serializer": lambda: {"serializer": zc.BytesCodec(endian="big")},
    "sharding serializer": lambda: {
        "serializer": zc.ShardingCodec(chunk_shape=(4, 5), codecs=[
            zc.BytesCodec(), zc.BloscCodec(cname="lz4")]),
        "compressors": None,
    },
}


@pytest.mark.parametrize("dtype", ["uint8", "int32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_metadata_as_zarr_python_and_it_reads_ours(
    case: str, dtype: str, tmp_path: Path
) -> None:
    data = (np.arange(24 * 30) % 97).astype(dtype).reshape(24, 30)
    theirs = zarr.create_array(zarr.storage.MemoryStore(), shape=data.shape, dtype=dtype,
                               chunks=(8, 10), **CASES[case]())
    ours = zarrx.create_array(str(tmp_path), shape=data.shape, dtype=dtype, chunks=(8, 10),
                              **CASES[case]())
    assert ours.metadata.codecs.to_json() == _plain(theirs.metadata.to_dict()["codecs"])
    ours[...] = data
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), mode="r")[...], data)


def test_numcodecs_wrappers_of_zarr_python() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python: numcodecs codecs are not in the spec
        delta = zarr.codecs.numcodecs.Delta(dtype="<i4")
        theirs = zarr.create_array(zarr.storage.MemoryStore(), shape=(40,), dtype="int32",
                                   filters=delta)
    ours = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(40,), dtype="int32",
                              filters=delta)
    assert ours.metadata.codecs.to_json() == _plain(theirs.metadata.to_dict()["codecs"])
    ours[...] = np.arange(40)
    np.testing.assert_array_equal(ours[...], np.arange(40))


def test_older_keywords_take_them_too() -> None:
    """``create``'s ``compressor=`` and ``codecs=`` (zarr-python's older keywords)."""
    a = zarrx.create((10,), dtype="int16", compressor=zc.BloscCodec(cname="lz4"))
    assert a.compressors[0].to_dict()["configuration"]["typesize"] == 2
    b = zarrx.create((10,), dtype="int16", codecs=[zc.BytesCodec(), zc.GzipCodec(level=1)])
    assert [c.name for c in b.codecs] == ["bytes", "gzip"]


def test_a_group_takes_them() -> None:
    g = zarrx.group()
    a = g.create_array("x", shape=(8,), dtype="f4", compressors=zc.ZstdCodec(level=2))
    assert a.compressors[0].to_dict() == zc.ZstdCodec(level=2).to_dict()


# -- zarrx.codecs under zarr-python's names ------------------------------------------------

#: zarrx.codecs name → the same object made by zarr-python, with the same keywords.
SAME_KEYWORDS: dict[str, tuple[dict[str, Any], Any]] = {
    "BloscCodec": ({"cname": "lz4", "clevel": 3, "shuffle": "bitshuffle", "typesize": 2,
                    "blocksize": 0}, zc.BloscCodec),
    "ZstdCodec": ({"level": 4, "checksum": True}, zc.ZstdCodec),
    "GzipCodec": ({"level": 1}, zc.GzipCodec),
    "BytesCodec": ({"endian": "big"}, zc.BytesCodec),
    "Crc32cCodec": ({}, zc.Crc32cCodec),
    "TransposeCodec": ({"order": (1, 0)}, zc.TransposeCodec),
    "ShardingCodec": ({"chunk_shape": (4, 4)}, zc.ShardingCodec),
    "VLenUTF8Codec": ({}, zc.VLenUTF8Codec),
    "VLenBytesCodec": ({}, zc.VLenBytesCodec),
}


@pytest.mark.parametrize("name", sorted(SAME_KEYWORDS))
def test_exported_classes_take_zarr_pythons_keywords(name: str) -> None:
    keywords, theirs = SAME_KEYWORDS[name]
    cls = getattr(zarrx.codecs, name)
    assert issubclass(cls, Codec)
    assert name in zarrx.codecs.__all__
    assert name in dir(zarrx.codecs)
    assert cls(**keywords).to_dict() == _plain(theirs(**keywords).to_dict())


def test_exported_sharding_codec_takes_codec_lists() -> None:
    codec = zarrx.codecs.ShardingCodec(
        chunk_shape=(5, 5), codecs=[zarrx.codecs.BytesCodec(), zarrx.codecs.ZstdCodec()],
        index_location="start",
    )
    a = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(10, 10), dtype="u1",
                           chunks=(10, 10), serializer=codec, compressors=None)
    a[...] = np.arange(100).reshape(10, 10)
    np.testing.assert_array_equal(a[...], np.arange(100).reshape(10, 10))
    with pytest.raises(MetadataError, match="chunk_shape must be a list of positive"):
        zarrx.codecs.ShardingCodec(chunk_shape=(0, 5))
    with pytest.raises(MetadataError, match="index_location"):
        zarrx.codecs.ShardingCodec(chunk_shape=(5,), index_location="middle")


def test_unknown_names_and_objects() -> None:
    with pytest.raises(AttributeError, match="NoSuchCodec"):
        zarrx.codecs.NoSuchCodec  # noqa: B018
    with pytest.raises(MetadataError, match="a codec must be an object with a 'name'"):
        zarrx.create_array(zarrx.storage.MemoryStore(), shape=(4,), dtype="u1",
                           compressors=object())


def test_the_exports_load_on_first_use_from_many_threads() -> None:
    """``import zarrx`` loads no codec; sixteen threads asking for every exported class at
    once, in a fresh interpreter, each get the class (and only its modules load)."""
    script = """
import sys, threading
import zarrx
before = {m for m in sys.modules if m.startswith("zarrx.codecs.")}
names = list(zarrx.codecs.__all__)
barrier = threading.Barrier(16)
found, failures = [], []
def first_use(i):
    barrier.wait()
    try:
        found.append(getattr(zarrx.codecs, names[i % len(names)]).__name__)
    except BaseException as e:
        failures.append(repr(e))
threads = [threading.Thread(target=first_use, args=(i,)) for i in range(16)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({"before": sorted(before), "failures": failures, "found": found}))
"""
    result = subprocess.run([sys.executable, "-c", "import json\n" + script],
                            capture_output=True, text=True, check=True)
    report = json.loads(result.stdout)
    assert set(report["before"]) <= {"zarrx.codecs.pipeline"}
    assert report["failures"] == []
    assert len(report["found"]) == 16
