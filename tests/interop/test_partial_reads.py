"""Chunks that zarr-python and tensorstore compressed with blosc, read in part by zarrx
(one element or a small region of a chunk: only the frame's header, block starts and the
blocks holding it; see zarrx.codecs.partial), equal what was written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import tensorstore as ts
import zarr

import zarrx
from zarrx.storage import LocalStore

SHAPE, CHUNKS = (64, 64, 32), [64, 64, 32]  # 512 KiB chunks: points are read in part


def _data() -> np.ndarray:
    rng = np.random.default_rng(5)
    return (rng.integers(0, 1000, SHAPE) + np.arange(np.prod(SHAPE)).reshape(SHAPE)).astype(
        "<f4") / 7


def _points() -> Iterator[tuple[int, ...]]:
    rng = np.random.default_rng(4)
    for _ in range(30):
        yield tuple(int(rng.integers(0, n)) for n in SHAPE)


def _check(path: Path, data: np.ndarray) -> None:
    a = zarrx.open_array(LocalStore(str(path)), mode="r")
    assert a._chunk_store.chain(tuple(CHUNKS)).reads_in_part()  # blosc, read in part
    for p in _points():
        assert a[p] == data[p]
    np.testing.assert_array_equal(a[3:5, 7, 1:30:2], data[3:5, 7, 1:30:2])
    np.testing.assert_array_equal(a[60:64, 1, :], data[60:64, 1, :])


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("shuffle", ["noshuffle", "shuffle", "bitshuffle"])
@pytest.mark.parametrize("blocksize", [0, 8192])
def test_zarr_python_blosc(tmp_path: Path, zarr_format: int, shuffle: str,
                           blocksize: int) -> None:
    data = _data()
    kind = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[shuffle]
    compressor: Any = (
        numcodecs.Blosc(cname="lz4", clevel=5, shuffle=kind, blocksize=blocksize)
        if zarr_format == 2
        else zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle=shuffle,
                                    blocksize=blocksize)
    )
    z = zarr.create_array(str(tmp_path), shape=SHAPE, chunks=CHUNKS, dtype="f4",
                          compressors=compressor, zarr_format=zarr_format)
    z[...] = data
    _check(tmp_path, data)


def test_tensorstore_blosc_v2(tmp_path: Path) -> None:
    data = _data()
    metadata = {"shape": list(SHAPE), "chunks": CHUNKS, "dtype": "<f4", "compressor": {
        "id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 4096}}
    t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(tmp_path)},
                 "metadata": metadata, "create": True}).result()
    t.write(data).result()
    _check(tmp_path, data)


def test_tensorstore_blosc_v3(tmp_path: Path) -> None:
    data = _data()
    metadata = {
        "shape": list(SHAPE), "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": CHUNKS}},
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                    "shuffle": "shuffle", "typesize": 4, "blocksize": 4096}}],
    }
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path)},
                 "metadata": metadata, "create": True}).result()
    t.write(data).result()
    _check(tmp_path, data)
