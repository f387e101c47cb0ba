"""A rechunk killed (SIGKILL) part way finishes when called again the same way: exact,
without rewriting the target objects already stored, its record then gone; a source or
target changed in between is refused; the record is invisible to the hierarchy."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.errors import NodeExistsError, RechunkError

CHILD = r"""
import os, signal, sys, zarrx
src, dst, path, kill_after = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
chunks = tuple(int(c) for c in sys.argv[5].split(","))
finished = []
def progress(update):  # killed once this run finished kill_after slabs
    finished.append(update)
    if len(finished) > kill_after:
        os.kill(os.getpid(), signal.SIGKILL)
zarrx.rechunk(src, dst, target_path=path or None, chunks=chunks, max_mem=sys.argv[6],
              threads=2, progress=progress)
"""

SHAPE = (64, 64, 64)


def make_source(root: Path, chunks: tuple[int, ...] = (1, 64, 64)) -> np.ndarray:
    data = np.random.default_rng(3).random(SHAPE).astype("f4")
    data[:, 32:, :] = 0  # all fill: the target objects there are never stored
    a = zarrx.create_array(str(root), shape=SHAPE, dtype="f4", chunks=chunks)
    a[...] = data
    return data


def run_killed(src: Path, dst: Path, path: str, kill_after: int, chunks: str,
               max_mem: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(src), str(dst), path, str(kill_after), chunks,
         max_mem], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def stored_objects(root: Path, node: str = "") -> dict[str, tuple[int, int]]:
    """Inode and modification time of each target object (chunk or shard) file."""
    out = {}
    base = root / node / "c"
    for dirpath, _, files in os.walk(base):
        for name in files:
            if name.startswith(".zarrx-"):  # a killed writer's lock or temporary file
                continue
            st = os.stat(os.path.join(dirpath, name))
            out[os.path.join(dirpath, name)] = (st.st_ino, st.st_mtime_ns)
    return out


def record_keys(root: Path) -> list[str]:
    return [k for k in zarrx.storage.LocalStore(root).list() if ".zarrx-rechunk" in k]


@pytest.mark.parametrize(("source", "chunks", "max_mem", "kill_after", "mode"), [
    ((8, 8, 8), "64,4,4", "128KiB", 10, "direct"),  # 64 slabs (32 of data), killed among them
    ((1, 64, 64), "64,2,2", "100KiB", 20, "intermediate"),  # 64 + 64: in the first stage
    ((1, 64, 64), "64,2,2", "100KiB", 90, "intermediate"),  # in the second stage
])
def test_killed_then_resumed(tmp_path: Path, source: tuple[int, ...], chunks: str,
                             max_mem: str, kill_after: int, mode: str) -> None:
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    data = make_source(src, source)
    run_killed(src, dst, "", kill_after, chunks, max_mem)
    state = zarrx.storage.LocalStore(dst).get(".zarrx-rechunk/state.json")
    assert state is not None
    assert f'"mode": "{mode}"' in state.decode()
    before = stored_objects(dst)
    # another call without resume is refused, and so are other options
    with pytest.raises(NodeExistsError, match="interrupted rechunk"):
        zarrx.rechunk(str(src), str(dst), chunks=tuple(map(int, chunks.split(","))),
                      max_mem=max_mem, resume=False)
    with pytest.raises(RechunkError, match="other options"):
        zarrx.rechunk(str(src), str(dst), chunks=(4, 4, 4), max_mem=max_mem)
    out = zarrx.rechunk(str(src), str(dst), chunks=tuple(map(int, chunks.split(","))),
                        max_mem=max_mem)
    assert np.array_equal(out[...], data)
    after = stored_objects(dst)
    for key, stamp in before.items():
        assert after[key] == stamp, f"{key} was rewritten"
    assert len(after) == out.nchunks_initialized == out.nchunks // 2  # the fill half: none
    assert record_keys(dst) == []
    reopened = zarrx.open_array(str(dst), mode="r")
    assert reopened.chunks == tuple(map(int, chunks.split(",")))
    assert np.array_equal(reopened[...], data)


def test_fill_objects_are_recorded_not_stored(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    data = make_source(src, (8, 8, 8))
    run_killed(src, dst, "", 5, "64,8,8", "300KiB")
    store = zarrx.storage.LocalStore(dst)
    markers = [k for k in record_keys(dst) if "/done/" in k]
    assert len(markers) >= 5
    out = zarrx.rechunk(str(src), str(dst), chunks=(64, 8, 8), max_mem="300KiB")
    assert np.array_equal(out[...], data)
    assert out.nchunks_initialized == out.nchunks // 2  # the all-fill half: never stored
    assert store.get(".zarrx-rechunk/state.json") is None


def test_source_changed_since(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    make_source(src)
    run_killed(src, dst, "", 3, "64,4,4", "256KiB")
    zarrx.open_array(str(src), mode="r+")[5] = 42.0
    with pytest.raises(RechunkError, match=r"source .* changed since.*state\.json"):
        zarrx.rechunk(str(src), str(dst), chunks=(64, 4, 4), max_mem="256KiB")
    out = zarrx.rechunk(str(src), str(dst), chunks=(64, 4, 4), max_mem="256KiB",
                        overwrite=True)
    assert np.all(out[5] == 42.0)


def test_target_changed_since(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    make_source(src)
    run_killed(src, dst, "", 3, "64,4,4", "256KiB")
    zarrx.open_array(str(dst), mode="r+").attrs["touched"] = True
    with pytest.raises(RechunkError, match="target's metadata changed"):
        zarrx.rechunk(str(src), str(dst), chunks=(64, 4, 4), max_mem="256KiB")


def test_record_is_invisible_to_the_hierarchy(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    data = make_source(src)
    g = zarrx.create_group(str(dst))
    g.create_array("other", data=np.arange(3))
    run_killed(src, dst, "g/sub/a", 3, "64,4,4", "256KiB")
    assert record_keys(dst)  # the record is there, under the target node
    assert all(k.startswith("g/sub/a/.zarrx-rechunk/") for k in record_keys(dst))
    root = zarrx.open_group(str(dst), mode="r+")
    assert sorted(name for name, _ in root.members(max_depth=None)) == [
        "g", "g/sub", "g/sub/a", "other"]
    assert ".zarrx" not in str(root.tree())
    zarrx.consolidate_metadata(str(dst))
    meta = zarrx.open_group(str(dst), mode="r", use_consolidated=True).consolidated
    assert meta is not None
    assert not any(".zarrx" in k for k in meta)
    out = zarrx.rechunk(str(src), str(dst), target_path="g/sub/a", chunks=(64, 4, 4),
                        max_mem="256KiB")
    assert np.array_equal(out[...], data)
    assert record_keys(dst) == []
    assert np.array_equal(zarrx.open_array(str(dst), path="other", mode="r")[...],
                          np.arange(3))


def test_completed_target_is_refused_without_overwrite(tmp_path: Any) -> None:
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    make_source(src)
    zarrx.rechunk(str(src), str(dst), chunks=(64, 4, 4))
    with pytest.raises(NodeExistsError, match="overwrite=True"):
        zarrx.rechunk(str(src), str(dst), chunks=(64, 4, 4))


def test_interrupted_while_erasing_the_record(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from zarrx.rechunking.record import Record

    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    data = make_source(src, (8, 8, 8))
    erase = Record.erase

    def half_erase(self: Record) -> None:  # marks the record complete, loses markers, dies
        state = self.load()
        if state is None:  # (a fresh start clearing the way)
            erase(self)
            return
        state.phase = "complete"
        self.save(state)
        for key in self.store.list_prefix(self.prefix + "done/")[::2]:
            self.store.erase(key)
        raise RuntimeError("killed while erasing")

    monkeypatch.setattr(Record, "erase", half_erase)
    with pytest.raises(RuntimeError, match="erasing"):
        zarrx.rechunk(str(src), str(dst), chunks=(64, 4, 4), max_mem="256KiB")
    monkeypatch.setattr(Record, "erase", erase)
    before = stored_objects(dst)
    updates: list[Any] = []
    out = zarrx.rechunk(str(src), str(dst), chunks=(64, 4, 4), max_mem="256KiB",
                        progress=updates.append)
    assert len(updates) == 2  # the start and the end: no slab copied again
    assert updates[0].done == updates[0].total
    assert stored_objects(dst) == before
    assert np.array_equal(out[...], data)
    assert record_keys(dst) == []


def test_a_second_rechunk_started_meanwhile_is_refused(tmp_path: Path) -> None:
    """Two rechunks prepared into the same new target (both found nothing there): the
    one that starts second is refused, and the first's record is left as it was."""
    from zarrx.rechunking.jobs import prepare, start
    from zarrx.rechunking.target import Options

    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    data = make_source(src)
    source = zarrx.open_array(str(src), mode="r")
    store = zarrx.storage.LocalStore(dst)
    opts = Options((64, 4, 4), None, None, None, None, None, None, None, None)
    first, second = (prepare(source, store, "", opts, max_mem=1 << 20, threads=2,
                             engine_threads=2, resume=True, overwrite=False)
                     for _ in range(2))
    start(first)
    record = store.get(".zarrx-rechunk/state.json")
    with pytest.raises(NodeExistsError, match="another rechunk"):
        start(second)
    assert store.get(".zarrx-rechunk/state.json") == record
    # the first's record is whole: the same call finishes it as a resume
    out = zarrx.rechunk(str(src), str(dst), chunks=(64, 4, 4), max_mem=1 << 20)
    assert np.array_equal(out[...], data)
    assert record_keys(dst) == []
