"""dask's writes into zarrx: ``x.to_zarr(as_zarr_store(...))`` (zarr-python encodes, zarrx
stores) and ``da.store(x, zarrx_array)`` (zarrx's engine), read back by zarr-python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest
import zarr

import zarrx
from zarrx.integrations.zarr_store import as_zarr_store
from zarrx.stores.local import LocalStore


@pytest.fixture(autouse=True)
def _threads() -> Any:
    with dask.config.set(scheduler="threads", num_workers=4):
        yield


def _source(shape: tuple[int, ...], chunks: Any, seed: int = 0) -> tuple[np.ndarray, Any]:
    data = np.random.default_rng(seed).standard_normal(shape).astype("f4")
    return data, da.from_array(data, chunks=chunks)


def _stored(path: Path) -> dict[str, bytes]:
    store = LocalStore(path)
    return {key: store.get(key) for key in store.list()}  # type: ignore[misc]


@pytest.mark.parametrize("shards", [None, (40, 32)], ids=["chunked", "sharded"])
def test_to_zarr_through_zarrx_equals_to_zarr(tmp_path: Path, shards: Any) -> None:
    data, x = _source((100, 64), (20, 16))
    kwargs: dict[str, Any] = {"chunks": (20, 16)}
    if shards:
        kwargs["shards"] = shards
        x = x.rechunk(shards)  # dask writes whole shards (its to_zarr refuses to split them)
    x.to_zarr(str(tmp_path / "theirs.zarr"), component="x", **kwargs)
    x.to_zarr(as_zarr_store(LocalStore(tmp_path / "ours.zarr")), component="x", **kwargs)
    assert _stored(tmp_path / "ours.zarr") == _stored(tmp_path / "theirs.zarr")
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "ours.zarr", path="x")[...], data)
    # mode="w" replaces it, as with any store
    other, y = _source((10,), 5, seed=1)
    y.to_zarr(as_zarr_store(tmp_path / "ours.zarr"), component="x", mode="w")
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "ours.zarr", path="x")[...], other)


def test_to_zarr_of_a_zarr_array_over_a_zarrx_store_with_a_region(tmp_path: Path) -> None:
    target = zarrx.create_array(tmp_path / "t.zarr", shape=(60, 30), chunks=(10, 10), dtype="f4")
    z = zarr.open_array(as_zarr_store(target), path=target.path, mode="r+")
    data, x = _source((20, 30), (10, 10))
    x.to_zarr(z, region=(slice(20, 40), slice(None)))
    expected = np.zeros((60, 30), "f4")
    expected[20:40] = data
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "t.zarr")[...], expected)


@pytest.mark.parametrize(("shards", "lock"), [(None, False), (None, True), ((24, 24), True),
                                              ((24, 24), False)],
                         ids=["chunked-unlocked", "chunked-locked", "sharded-locked",
                              "sharded-unlocked"])
def test_store_into_a_zarrx_array_with_blocks_that_split_chunks(
    tmp_path: Path, lock: bool, shards: Any
) -> None:
    """``da.store(x, a)``: zarrx's engine writes each block; blocks that split chunks
    (and shards) are read-modify-writes, atomic on a LocalStore."""
    a = zarrx.create_array(tmp_path / "a.zarr", shape=(100, 90), chunks=(8, 8), shards=shards,
                           dtype="f4", fill_value=-1.0)
    data, x = _source((100, 90), (13, 17))
    da.store(x, a, lock=lock)
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a.zarr")[...], data)
    # a region, with the array's own dtype cast by NumPy's rules
    part, y = _source((30, 20), (7, 9), seed=3)
    da.store(y.astype("f8"), a, regions=(slice(50, 80), slice(5, 25)), lock=lock)
    data[50:80, 5:25] = part
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a.zarr")[...], data)


def test_store_dask_writes_whole_shards_without_a_lock(tmp_path: Path) -> None:
    a = zarrx.create_array(tmp_path / "s.zarr", shape=(100, 90), chunks=(8, 8), shards=(24, 24),
                           dtype="f4")
    data, x = _source((100, 90), (13, 17))
    zarrx.store_dask(x, a)  # rechunked to whole shards, stored with lock=False
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "s.zarr")[...], data)
