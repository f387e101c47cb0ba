"""Points (``vindex``) read through the batch kernel: the chunks holding them decoded in
one call, then every point gathered by NumPy — equal to NumPy for plain and sharded
arrays, both byte orders, absent chunks (the fill value), index arrays of any shape, and
a damaged chunk named in the error as the chunk-by-chunk path names it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.codecs.native import BatchDecoder
from zarrx.errors import CodecError
from zarrx.storage import MemoryStore

BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                            "typesize": 4, "blocksize": 0}}


def _array(dtype: str, sharded: bool) -> tuple[Any, np.ndarray, MemoryStore]:
    store = MemoryStore()
    kwargs: dict[str, Any] = {"shards": (16, 16, 16)} if sharded else {}
    a = zarrx.create_array(store, shape=(40, 36, 33), chunks=(8, 8, 8), dtype=dtype,
                           fill_value=-3, compressors=[BLOSC], **kwargs)
    x = np.full(a.shape, -3, dtype=dtype)
    rng = np.random.default_rng(0)
    x[:30, 4:, :20] = rng.integers(-1000, 1000, (30, 32, 20))  # the rest never written
    a[:30, 4:, :20] = x[:30, 4:, :20]
    return a, x, store


@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("dtype", ["<i4", ">i4"])
def test_points_equal_numpy_through_one_kernel_call_a_group(monkeypatch: Any, dtype: str,
                                                            sharded: bool) -> None:
    a, x, _ = _array(dtype, sharded)
    calls: list[int] = []
    real = BatchDecoder.place

    def place(self: BatchDecoder, sources: Any, which: Any, *rest: Any) -> None:
        calls.append(len(which))
        real(self, sources, which, *rest)

    monkeypatch.setattr(BatchDecoder, "place", place)
    rng = np.random.default_rng(1)
    for shape in [(1,), (500,), (20, 25), (0,)]:
        sel = tuple(rng.integers(0, n, shape) for n in a.shape)
        got = a.vindex[sel]
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(got, x[sel])
    assert calls
    assert max(calls) > 1  # chunks decoded together, not one by one
    mixed = (rng.integers(0, 40, 30), slice(2, 30), 5)  # not points: placed chunk by chunk
    np.testing.assert_array_equal(a.oindex[mixed], x[mixed[0]][:, 2:30, 5])


def test_a_damaged_chunk_is_named() -> None:
    a, _, store = _array("<i4", False)
    key = "c/0/0/0"
    value = store.get(key)
    store.set(key, value[:len(value) // 2])  # truncated
    sel = (np.array([0, 1, 39]), np.array([5, 5, 0]), np.array([0, 3, 32]))
    with pytest.raises(CodecError, match="c/0/0/0"):
        a.vindex[sel]
