"""Several processes writing into one array: different chunks, and different parts of one
chunk or shard (read-modify-write under the local store's per-chunk lock). Nothing lost."""

import multiprocessing as mp

import numpy as np
import pytest

import zarrx

WRITERS = 4
ROUNDS = 3


def _write_columns(root: str, column: int, rounds: int) -> None:
    a = zarrx.open_array(root, mode="r+")
    for r in range(rounds):
        # each writer owns one column of every chunk: every write is a partial chunk write
        a[:, column] = np.full(a.shape[0], column * 100 + r + 1, dtype=a.dtype)


@pytest.mark.parametrize("layout", ["chunks", "shards"])
def test_processes_writing_parts_of_the_same_chunks_lose_nothing(tmp_path, layout):
    root = str(tmp_path / "c.zarr")
    kwargs = {"chunks": (4, WRITERS)} if layout == "chunks" else {
        "chunks": (2, 2), "shards": (4, WRITERS)}
    zarrx.create_array(root, shape=(8, WRITERS), dtype="i4", fill_value=-1, **kwargs)
    ctx = mp.get_context("spawn")
    for _ in range(2):  # races are intermittent: repeat
        procs = [ctx.Process(target=_write_columns, args=(root, c, ROUNDS)) for c in range(WRITERS)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
            assert p.exitcode == 0
        got = zarrx.open_array(root)[...]
        expected = np.array([[c * 100 + ROUNDS for c in range(WRITERS)]] * 8, dtype="i4")
        np.testing.assert_array_equal(got, expected)
        zarrx.open_array(root, mode="r+")[...] = -1


def _write_rows(root: str, row: int) -> None:
    a = zarrx.open_array(root, mode="r+")
    a[row] = np.arange(a.shape[1], dtype=a.dtype) + row * 1000


def test_processes_writing_different_chunks(tmp_path):
    root = str(tmp_path / "d.zarr")
    zarrx.create_array(root, shape=(6, 50), dtype="i8", chunks=(1, 50))
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_write_rows, args=(root, r)) for r in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    expected = np.arange(50)[None, :] + (np.arange(6) * 1000)[:, None]
    np.testing.assert_array_equal(zarrx.open_array(root)[...], expected)


def test_lock_files_are_not_listed(tmp_path):
    root = str(tmp_path / "l.zarr")
    a = zarrx.create_array(root, shape=(4,), dtype="u1", chunks=(4,))
    a[1] = 5  # a partial write takes the chunk's lock
    assert sorted(a.store.list()) == ["c/0", "zarr.json"]
