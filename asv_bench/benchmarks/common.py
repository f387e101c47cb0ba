"""Shared array geometry, data and store helpers for the suites.

The stores are written by zarrx itself, so the suites need nothing but zarrx and NumPy.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import zarrx

SHAPE = (64, 128, 256)  # float32: 8 MiB
CHUNKS = (32, 32, 32)
SHARDS = (64, 64, 64)
INNER = (16, 16, 16)
REGION = (slice(5, 50), slice(17, 120), slice(25, 225))  # crosses chunk edges on every axis

CODECS: dict[str, Any] = {
    "raw": None,
    "lz4": [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                               "shuffle": "shuffle"}}],
    "zstd": [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
}


def make_data(shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Smooth float32 with noise at 1/256 precision: compresses about 2x, like real data."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape, dtype=np.float32)
    data *= np.float32(0.05)
    np.cumsum(data, axis=-1, out=data)
    data += np.sin(np.linspace(0, 8 * np.pi, shape[-1], dtype=np.float32))
    return np.round(data * 256) / np.float32(256)


def create(path: str, codec: str, *, sharded: bool = False) -> zarrx.Array:
    """An empty array at ``path`` with the suites' layout."""
    layout = {"chunks": INNER, "shards": SHARDS} if sharded else {"chunks": CHUNKS}
    return zarrx.create_array(path, shape=SHAPE, dtype="float32", fill_value=0.0,
                              compressors=CODECS[codec], overwrite=True, **layout)


def write_stores(root: str) -> dict[str, str]:
    """Write one array per codec plus a sharded one under ``root``; name → path."""
    data = make_data()
    paths = {}
    for name, sharded in [("raw", False), ("lz4", False), ("zstd", False), ("sharded", True)]:
        path = os.path.join(root, f"{name}.zarr")
        create(path, "lz4" if sharded else name, sharded=sharded)[...] = data
        paths[name] = path
    return paths


def cached_stores() -> dict[str, str]:
    """For ``setup_cache``: asv runs it in a scratch directory that it removes afterwards,
    and passes the returned absolute paths to every benchmark of the suite."""
    return write_stores(os.path.abspath("stores"))


def warm_up(array: zarrx.Array) -> None:
    """One small read, so that codec modules load (lazily, on first use) before timing:
    ``asv run --quick`` times a single call, which would otherwise include the imports."""
    array[(0,) * array.ndim]
