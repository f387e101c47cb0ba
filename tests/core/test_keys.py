"""The C key builder equals each format's own key encoding, and the engine uses it only
where it is proven equal (a plugin's encoding falls back to ``meta.chunk_key``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx._core.keys import chunk_keys
from zarrx.chunk_key_encodings.default import DefaultChunkKeyEncoding, V2ChunkKeyEncoding
from zarrx.engine.chunks import ChunkStore
from zarrx.storage import MemoryStore

COORDS = st.lists(
    st.lists(st.integers(0, 2**63 - 1) | st.integers(0, 12), min_size=1, max_size=5),
    min_size=1, max_size=20,
).filter(lambda rows: len({len(r) for r in rows}) == 1)


@settings(max_examples=200, deadline=None)
@given(COORDS, st.sampled_from(["/", "."]))
def test_equal_to_the_v3_encodings(rows: list[list[int]], separator: str) -> None:
    coords = np.array(rows, dtype=np.int64)
    default = DefaultChunkKeyEncoding(separator)
    assert chunk_keys("c" + separator, separator, coords) == [
        default.encode(tuple(r)) for r in rows
    ]
    v2 = V2ChunkKeyEncoding(separator)
    assert chunk_keys("", separator, coords) == [v2.encode(tuple(r)) for r in rows]


def test_heads_and_dtypes() -> None:
    assert chunk_keys("päth/c/", "/", [[1, 22]]) == ["päth/c/1/22"]  # not ASCII
    assert chunk_keys("x/", ".", np.array([[0], [9], [10]], dtype=np.uint8)) == [
        "x/0", "x/9", "x/10"
    ]
    assert chunk_keys("", ".", np.zeros((0, 3), dtype=np.int64)) == []
    big = np.array([[2**63 - 1, 0]], dtype=np.uint64)
    assert chunk_keys("", ".", big) == [f"{2**63 - 1}.0"]
    column = np.arange(12, dtype=np.int64).reshape(3, 4)[:, 1:3]  # not contiguous
    assert chunk_keys("", "/", column) == ["1/2", "5/6", "9/10"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("", "//", [[1]]), ValueError),
        (("", "é", [[1]]), ValueError),
        (("", "/", [1, 2]), ValueError),
        (("", "/", np.zeros((2, 0), np.int64)), ValueError),
        (("", "/", [[-1]]), ValueError),
        (("", "/", [[1.5]]), TypeError),
        (("", "/", np.array([[2**63]], dtype=np.uint64)), ValueError),
    ],
)
def test_refused(args: tuple[Any, ...], error: type[Exception]) -> None:
    with pytest.raises(error, match="chunk_keys"):
        chunk_keys(*args)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"zarr_format": 3},
        {"zarr_format": 3, "chunk_key_encoding": {"name": "default", "separator": "."}},
        {"zarr_format": 3, "chunk_key_encoding": {"name": "v2", "separator": "."}},
        {"zarr_format": 3, "chunk_key_encoding": {"name": "v2", "separator": "/"}},
        {"zarr_format": 2},
        {"zarr_format": 2, "chunk_key_encoding": {"name": "v2", "separator": "/"}},
        {"zarr_format": "3-draft"},
        {"zarr_format": "3-draft", "chunk_key_encoding": {"name": "v2", "separator": "."}},
    ],
)
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_chunk_store_keys_equal_the_format_keys(kwargs: dict[str, Any], ndim: int) -> None:
    a = zarrx.create_array(MemoryStore(), name="grp/arr", shape=(40,) * ndim,
                           chunks=(3,) * ndim, dtype="u1", **kwargs)
    cs = a._chunk_store
    assert cs.key_layout is not None
    coords = np.array(np.meshgrid(*[[0, 1, 13]] * ndim)).reshape(ndim, -1).T
    assert cs.keys(coords) == [cs.key(tuple(c)) for c in coords.tolist()]
    a[...] = 7  # written under those keys, read back through them
    assert (a[...] == 7).all()
    assert sorted(k for k in a._store.list() if k.startswith(cs.data_prefix)
                  and not k.endswith(("json", ".zarray", ".zattrs"))) == sorted(
        cs.keys(np.argwhere(np.ones((14,) * ndim)))
    )


def test_zero_d_arrays_use_the_format_key() -> None:
    for zarr_format in (3, 2, "3-draft"):
        a = zarrx.create_array(MemoryStore(), shape=(), dtype="i4", zarr_format=zarr_format)
        cs = a._chunk_store
        assert cs.key_layout is None
        assert cs.keys(np.zeros((1, 0), np.int64)) == [cs.key(())]


@dataclass(frozen=True)
class _Padded:
    """A plugin-like metadata whose keys are zero-padded: not head + joined decimals."""

    inner: Any
    shape: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", self.inner.shape)

    def chunk_key(self, coords: tuple[int, ...]) -> str:
        return "k/" + "/".join(f"{c:04d}" for c in coords)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_other_key_encodings_fall_back_to_the_metadata() -> None:
    a = zarrx.create_array(MemoryStore(), shape=(40, 40), chunks=(3, 3), dtype="u1")
    cs = ChunkStore(a._store, "", _Padded(a._metadata), "padded")  # type: ignore[arg-type]
    assert cs.key_layout is None
    assert cs.keys(np.array([[0, 12], [3, 4]])) == ["k/0000/0012", "k/0003/0004"]
