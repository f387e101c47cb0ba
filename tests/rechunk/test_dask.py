"""zarrx.rechunk with ``executor=`` a dask distributed Client: the plan's slabs run in the
worker processes (each writes its objects and its marker), the result is exact."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentError
from zarrx.storage import LocalStore, MemoryStore

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    scratch = tmp_path_factory.mktemp("dask-scratch")
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
            dashboard_address=None, local_directory=str(scratch),
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def test_rechunk_on_a_local_cluster(client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2
    assert os.getpid() not in pids
    data = np.random.default_rng(5).random((48, 48, 48)).astype("f4")
    src = zarrx.create_array(str(tmp_path / "src.zarr"), data=data, chunks=(1, 48, 48))
    with distributed.get_task_stream(client) as stream:
        out = zarrx.rechunk(src, str(tmp_path / "dst.zarr"), chunks=(48, 2, 2),
                            shards=(48, 8, 8), max_mem="256KiB", executor=client)
    workers = {task["worker"] for task in stream.data if "run_slab" in str(task["key"])}
    assert len(workers) == 2  # both worker processes wrote slabs
    assert out.shards == (48, 8, 8)
    assert np.array_equal(out[...], data)
    assert not any(".zarrx-rechunk" in k for k in LocalStore(tmp_path / "dst.zarr").list())


def test_group_on_a_local_cluster(client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    g = zarrx.create_group(str(tmp_path / "src.zarr"), attributes={"k": 1})
    g.create_array("x", data=np.arange(2000).reshape(20, 100), chunks=(1, 100))
    g.create_array("y/z", data=np.arange(10.0), chunks=(3,))
    out = zarrx.rechunk_group(g, str(tmp_path / "dst.zarr"), chunks={"x": (20, 5)},
                              executor=client)
    assert out["x"].chunks == (20, 5)
    assert np.array_equal(out["x"][...], np.arange(2000).reshape(20, 100))
    assert np.array_equal(out["y/z"][...], np.arange(10.0))


def test_memory_store_refused(client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = zarrx.create_array(MemoryStore(), data=np.arange(10), chunks=(2,))
    with pytest.raises(ArgumentError, match="MemoryStore"):
        zarrx.rechunk(src, str(tmp_path / "t.zarr"), chunks=(5,), executor=client)
    assert not (tmp_path / "t.zarr").exists()
