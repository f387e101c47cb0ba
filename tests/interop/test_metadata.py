"""``zarrx.create_array`` and ``zarr.create_array`` with the same arguments write the same
``zarr.json`` (as JSON) and, for the same data, the same chunk keys and bytes: this catches
default mismatches (codec configuration defaults, fill value encodings, key encodings)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrx
from tests.interop._peers import (
    BYTES_BE,
    CRC32C,
    DTYPES,
    blosc,
    gzip,
    load_json,
    make_data,
    shard_inner_chunks,
    stored_chunks,
    transpose,
    zstd,
)

BASE = {"shape": (13, 17), "chunks": (4, 5)}

CONFIGS: dict[str, dict[str, Any]] = {
    "defaults": {"dtype": "float32"},
    "gzip": {"dtype": "int16", "compressors": gzip(5)},
    "gzip-0": {"dtype": "int16", "compressors": [gzip(0)]},
    "zstd-no-checksum-key": {"dtype": "uint32", "compressors": {"name": "zstd",
                                                               "configuration": {"level": 3}}},
    "zstd-negative-checksum": {"dtype": "float64", "compressors": [zstd(-7, True)]},
    "blosc-only-cname-uint8": {"dtype": "uint8", "compressors": [
        {"name": "blosc", "configuration": {"cname": "lz4"}}]},
    "blosc-only-cname-float64": {"dtype": "float64", "compressors": [
        {"name": "blosc", "configuration": {"cname": "zlib"}}]},
    "blosc-everything": {"dtype": "int64", "compressors": [blosc("lz4hc", "bitshuffle", 9, 512)]},
    "bytes-big-blosc-crc32c": {"dtype": "complex128", "serializer": BYTES_BE,
                               "compressors": [blosc("zstd", "shuffle"), CRC32C]},
    "no-compressors": {"dtype": "int8", "compressors": None},
    "big-endian-int8": {"dtype": "int8", "serializer": BYTES_BE, "compressors": None},
    "transpose": {"dtype": "uint16", "filters": [transpose([1, 0])]},
    "crc32c": {"dtype": "float16", "compressors": [CRC32C]},
    "fill-nan": {"dtype": "float32", "fill_value": float("nan")},
    "fill-inf": {"dtype": "float64", "fill_value": float("inf")},
    "fill--inf-float16": {"dtype": "float16", "fill_value": float("-inf")},
    "fill--0.0": {"dtype": "float64", "fill_value": -0.0},
    "fill-complex": {"dtype": "complex64", "fill_value": 1.5 - 2j},
    "fill-complex-nan": {"dtype": "complex128", "fill_value": complex(float("nan"), 1)},
    "fill-int-min": {"dtype": "int64", "fill_value": -(2**63)},
    "fill-uint64-max": {"dtype": "uint64", "fill_value": 2**64 - 1},
    "fill-bool": {"dtype": "bool", "fill_value": True},
    "keys-v2": {"dtype": "int32", "chunk_key_encoding": {"name": "v2", "configuration":
                                                         {"separator": "."}}},
    "keys-v2-no-configuration": {"dtype": "int32", "chunk_key_encoding": {"name": "v2"}},
    "keys-default-dot": {"dtype": "int32", "chunk_key_encoding": {
        "name": "default", "configuration": {"separator": "."}}},
    "sharded": {"dtype": "float32", "chunks": (2, 5), "shards": (4, 10)},
    "sharded-gzip": {"dtype": "int16", "chunks": (2, 5), "shards": (4, 10),
                     "compressors": [gzip(1)]},
    "sharded-start": {"dtype": "float32", "chunks": (2, 5),
                      "shards": {"shape": (4, 10), "index_location": "start"}},
    "attributes-dimension-names": {"dtype": "uint64", "attributes": {"a": [1, {"b": None}]},
                                   "dimension_names": ["y", None]},
    **{f"default-{dtype}": {"dtype": dtype} for dtype in DTYPES},
}


def _write_both(tmp_path: Path, kwargs: dict[str, Any]) -> tuple[Path, Path]:
    kwargs = {**BASE, **kwargs}
    data = make_data(kwargs["dtype"], kwargs["shape"], compressible=True)
    zarrx_path, zarr_path = tmp_path / "zarrx", tmp_path / "zarr"
    zarrx.create_array(str(zarrx_path), **kwargs)[:9, 2:] = data[:9, 2:]
    zarr.create_array(str(zarr_path), **kwargs)[:9, 2:] = data[:9, 2:]
    return zarrx_path, zarr_path


def _docs(zarrx_path: Path, zarr_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    ours, theirs = load_json(zarrx_path / "zarr.json"), load_json(zarr_path / "zarr.json")
    # Known, harmless: zarr-python writes an empty "storage_transformers" list, zarrx leaves
    # the (optional) key out when there are none.
    assert theirs.pop("storage_transformers") == []
    assert "storage_transformers" not in ours
    return ours, theirs


@pytest.mark.parametrize("config", CONFIGS)
def test_same_metadata_and_chunks(config: str, tmp_path: Path) -> None:
    zarrx_path, zarr_path = _write_both(tmp_path, CONFIGS[config])
    ours, theirs = _docs(zarrx_path, zarr_path)
    assert ours == theirs
    ours_chunks, theirs_chunks = stored_chunks(zarrx_path), stored_chunks(zarr_path)
    assert set(ours_chunks) == set(theirs_chunks)
    sharding = ours["codecs"][0]
    sharded = sharding["name"] == "sharding_indexed"
    for key, value in ours_chunks.items():
        if sharded:
            # Known, harmless: zarr-python places inner chunks in the order its concurrent
            # encodes finish, so compare the inner chunks, not their places in the shard.
            config = sharding["configuration"]
            shard = ours["chunk_grid"]["configuration"]["chunk_shape"]
            n = int(np.prod(shard) // np.prod(config["chunk_shape"]))
            location = config["index_location"]
            assert [_comparable(c) for c in shard_inner_chunks(value, n, location)] == [
                _comparable(c) for c in shard_inner_chunks(theirs_chunks[key], n, location)
            ], f"inner chunks of {key} differ"
        else:
            assert _comparable(value) == _comparable(theirs_chunks[key]), f"chunk {key} differs"


def _comparable(chunk: bytes | None) -> bytes | None:
    """Known, harmless: numcodecs' gzip (zarr-python) stamps the current time in the
    header's MTIME field, zarrx writes 0 so that equal chunks give equal bytes."""
    if chunk is not None and chunk[:3] == b"\x1f\x8b\x08":
        assert chunk[4:8] == b"\0\0\0\0" or int.from_bytes(chunk[4:8], "little") > 1.6e9
        return chunk[:4] + b"\0\0\0\0" + chunk[8:]
    return chunk


def test_order_f(tmp_path: Path) -> None:
    """Known difference: for Zarr v3 zarr-python's ``order`` is a memory layout only (its
    ``config={"order": "F"}``; the ``order=`` keyword only warns), while zarrx's
    ``order="F"`` stores chunks in F order with a reversing ``transpose`` codec, as
    zarr-python 2 did for v2. The documents differ by exactly that codec."""
    data = make_data("int32", (5, 7, 9))
    kwargs = {"shape": (5, 7, 9), "chunks": (2, 3, 4), "dtype": "int32"}
    zarrx.create_array(str(tmp_path / "zarrx"), order="F", **kwargs)[...] = data
    zarr.create_array(str(tmp_path / "zarr"), config={"order": "F"}, **kwargs)[...] = data
    ours, theirs = _docs(tmp_path / "zarrx", tmp_path / "zarr")
    assert ours.pop("codecs") == [transpose([2, 1, 0]), *theirs.pop("codecs")]
    assert ours == theirs
    # Each reads the other's array as the same values.
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "zarrx"))[...], data)
    np.testing.assert_array_equal(np.asarray(zarrx.open_array(str(tmp_path / "zarr"))), data)
