"""zarr-python 3 as a peer: write one chunk with its codecs, or read a chunk we encoded.

A single-chunk array in zarr-python's ``MemoryStore`` gives the exact bytes zarr-python
stores and the exact codec JSON it writes, with no private codec API involved.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import zarr
from zarr.core.buffer import cpu

from zarrx.abc.codec import ChunkSpec
from zarrx.testing.codecs import spec


def _array(data: np.ndarray, **codecs: Any) -> Any:
    return zarr.create_array(
        zarr.storage.MemoryStore(),
        shape=data.shape,
        chunks=data.shape,
        dtype=data.dtype.newbyteorder("="),
        fill_value=0,
        filters=codecs.get("filters"),
        serializer=codecs.get("serializer", zarr.codecs.BytesCodec()),
        compressors=codecs.get("compressors"),
        config={"write_empty_chunks": True},
    )


def _key(ndim: int) -> str:
    return "c" if ndim == 0 else "c/" + "/".join("0" * ndim)


def zarr_write(data: np.ndarray, **codecs: Any) -> tuple[bytes, list[dict[str, Any]]]:
    """The chunk bytes and the ``codecs`` JSON zarr-python writes for ``data``."""
    arr = _array(data, **codecs)
    arr[...] = data
    raw = arr.store._store_dict[_key(data.ndim)].to_bytes()
    return raw, json.loads(json.dumps(arr.metadata.to_dict()["codecs"]))


def zarr_read(raw: bytes, like: np.ndarray, **codecs: Any) -> np.ndarray:
    """What zarr-python reads from a chunk holding ``raw`` (an array shaped like ``like``)."""
    arr = _array(like, **codecs)
    arr.store._store_dict[_key(like.ndim)] = cpu.Buffer.from_bytes(raw)
    return np.asarray(arr[...])


def spec_of(data: np.ndarray) -> ChunkSpec:
    return spec(data.shape, data.dtype)


def same_bytes(a: Any, b: Any) -> bool:
    """Equal shapes and bit-identical values (NaN payloads included), any byte order."""
    a, b = np.asarray(a), np.asarray(b)
    native = a.dtype.newbyteorder("=")
    return (
        a.shape == b.shape
        and np.ascontiguousarray(a.astype(native)).tobytes()
        == np.ascontiguousarray(b.astype(native)).tobytes()
    )
