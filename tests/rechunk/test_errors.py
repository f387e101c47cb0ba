"""Bad input to zarrx.rechunk is a clear zarrx.errors error before anything is written."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.errors import (
    ArgumentError,
    MetadataError,
    NodeExistsError,
    RechunkError,
    ZarrxError,
)
from zarrx.storage import LocalStore, MemoryStore


@pytest.fixture
def src(tmp_path: Path) -> zarrx.Array:
    return zarrx.create_array(str(tmp_path / "src.zarr"), data=np.arange(600.0).reshape(6, 100),
                              chunks=(1, 100))


def nothing_written(path: Path) -> bool:
    return not path.exists() or LocalStore(path).list() == []


@pytest.mark.parametrize(("kw", "error", "match"), [
    ({"chunks": (2, 2, 2)}, ArgumentError, "has 3 axes, the array has 2"),
    ({"chunks": (0, 5)}, ArgumentError, "positive"),
    ({"chunks": "big"}, ArgumentError, "int or a sequence"),
    ({"dtype": "i4"}, RechunkError, "same_kind"),
    ({"dtype": "not a type"}, ZarrxError, "dtype"),
    ({"max_mem": "lots"}, ArgumentError, "not a size"),
    ({"max_mem": 0}, ArgumentError, "positive"),
    ({"max_mem": -5}, ArgumentError, "positive"),
    ({"max_mem": True}, ArgumentError, "max_mem"),
    ({"max_mem": "2KiB"}, RechunkError, "too small"),
    ({"chunks": (6, 100), "max_mem": "8KiB"}, RechunkError, "one target object"),
    ({"threads": 0}, ArgumentError, "threads"),
    ({"zarr_format": 4}, ArgumentError, "zarr_format"),
    ({"zarr_format": 2, "shards": (2, 100)}, MetadataError, "sharding"),
    ({"compressors": [{"name": "no-such-codec"}]}, MetadataError, "no-such-codec"),
    ({"progress": "yes"}, ArgumentError, "progress"),
])
def test_refused_before_writing(src: zarrx.Array, tmp_path: Path, kw: dict[str, Any],
                                error: type[Exception], match: str) -> None:
    target = tmp_path / "out.zarr"
    with pytest.raises(error, match=match):
        zarrx.rechunk(src, str(target), **kw)
    assert nothing_written(target)


def test_existing_target_needs_overwrite(src: zarrx.Array, tmp_path: Path) -> None:
    target = tmp_path / "out.zarr"
    old = zarrx.create_array(str(target), data=np.ones(3))
    with pytest.raises(NodeExistsError, match="overwrite=True"):
        zarrx.rechunk(src, str(target), chunks=(6, 1))
    assert np.array_equal(zarrx.open_array(str(target), mode="r")[...], np.ones(3))
    out = zarrx.rechunk(src, str(target), chunks=(6, 1), overwrite=True)
    assert np.array_equal(out[...], src[...])
    assert old.shape == (3,)  # (the old object still describes what it was)


def test_overwrite_erases_only_the_target_node(src: zarrx.Array, tmp_path: Path) -> None:
    root = tmp_path / "out.zarr"
    g = zarrx.create_group(str(root))
    g.create_array("keep", data=np.arange(4))
    g.create_array("x", data=np.zeros(9))
    zarrx.rechunk(src, str(root), target_path="x", chunks=(6, 1), overwrite=True)
    assert np.array_equal(zarrx.open_array(str(root), path="keep", mode="r")[...],
                          np.arange(4))


def test_target_is_the_source(src: zarrx.Array) -> None:
    with pytest.raises(ArgumentError, match="target is the source"):
        zarrx.rechunk(src, src.store, chunks=(6, 1), overwrite=True)
    assert src.chunks == (1, 100)


def test_memory_store_with_a_process_executor(tmp_path: Path) -> None:
    src = zarrx.create_array(MemoryStore(), data=np.arange(10), chunks=(2,))
    with ProcessPoolExecutor(1) as pool:
        with pytest.raises(ArgumentError, match="MemoryStore"):
            zarrx.rechunk(src, str(tmp_path / "t.zarr"), chunks=(5,), executor=pool)
        disk = zarrx.create_array(str(tmp_path / "s.zarr"), data=np.arange(10), chunks=(2,))
        with pytest.raises(ArgumentError, match="MemoryStore"):
            zarrx.rechunk(disk, MemoryStore(), chunks=(5,), executor=pool)
    assert nothing_written(tmp_path / "t.zarr")


def test_a_process_executor_runs_the_plan(tmp_path: Path) -> None:
    data = np.arange(4000).reshape(40, 100)
    src = zarrx.create_array(str(tmp_path / "s.zarr"), data=data, chunks=(1, 100))
    with ProcessPoolExecutor(2) as pool:
        out = zarrx.rechunk(src, str(tmp_path / "t.zarr"), chunks=(40, 1), executor=pool,
                            max_mem="64KiB")
    assert np.array_equal(out[...], data)
    assert out.chunks == (40, 1)


def test_target_inside_a_hierarchy_of_another_format(src: zarrx.Array, tmp_path: Path) -> None:
    root = tmp_path / "v2.zarr"
    zarrx.create_group(str(root), zarr_format=2)
    before = sorted(LocalStore(root).list())
    with pytest.raises(MetadataError, match="one format"):
        zarrx.rechunk(src, str(root), target_path="x", chunks=(6, 1), zarr_format=3)
    assert sorted(LocalStore(root).list()) == before
    out = zarrx.rechunk(src, str(root), target_path="x", chunks=(6, 1), zarr_format=2)
    assert out.zarr_format == 2
    assert np.array_equal(out[...], src[...])


def test_keys_without_a_node_at_the_target(src: zarrx.Array, tmp_path: Path) -> None:
    root = tmp_path / "out.zarr"
    zarrx.create_group(str(root))
    LocalStore(root).set("x/c/0/0", b"stale")  # what an interrupted erase may leave
    with pytest.raises(NodeExistsError, match="no node"):
        zarrx.rechunk(src, str(root), target_path="x", chunks=(6, 1))
    assert LocalStore(root).get("x/c/0/0") == b"stale"
    out = zarrx.rechunk(src, str(root), target_path="x", chunks=(6, 1), overwrite=True)
    assert np.array_equal(out[...], src[...])
    assert LocalStore(root).get("x/c/0/0") != b"stale"
