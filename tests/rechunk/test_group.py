"""zarrx.rechunk_group: a hierarchy copied, the arrays named rechunked, the others as
they were, attributes kept, consolidated metadata rebuilt; resumable as a whole."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentError, NodeExistsError
from zarrx.metadata.v3_draft import FORMAT as DRAFT
from zarrx.storage import LocalStore, MemoryStore


def hierarchy(store: Any, zarr_format: Any = 3) -> zarrx.Group:
    root = zarrx.create_group(store, zarr_format=zarr_format, attributes={"title": "t"})
    a = root.create_array("a", data=np.arange(64 * 30, dtype="f4").reshape(64, 30),
                          chunks=(1, 30), attributes={"units": "m"})
    a.attrs["more"] = [1, 2]
    sub = root.create_group("sub", attributes={"depth": 1})
    sub.create_array("b", data=np.arange(100, dtype="i2"), chunks=(7,), fill_value=3)
    sub.create_group("empty/deeper")
    return root


def test_named_arrays_rechunked_others_copied() -> None:
    src = hierarchy(MemoryStore())
    out = zarrx.rechunk_group(src, MemoryStore(), chunks={"a": (64, 1)}, max_mem="1MiB")
    assert out["a"].chunks == (64, 1)
    assert out["sub/b"].chunks == (7,)
    assert out["sub/b"].fill_value == 3
    assert dict(out.attrs) == {"title": "t"}
    assert dict(out["sub"].attrs) == {"depth": 1}
    assert dict(out["a"].attrs) == {"units": "m", "more": [1, 2]}
    assert "sub/empty/deeper" in dict(out.members(max_depth=None))
    for path in ("a", "sub/b"):
        assert np.array_equal(out[path][...], src[path][...])


@pytest.mark.parametrize("fmt", [2, 3, DRAFT])
def test_callable_and_format(fmt: Any) -> None:
    src = hierarchy(MemoryStore())
    seen = []

    def choose(path: str, array: zarrx.Array) -> Any:
        seen.append(path)
        return (10, 10) if array.ndim == 2 else None

    out = zarrx.rechunk_group(src, MemoryStore(), chunks=choose, zarr_format=fmt)
    assert sorted(seen) == ["a", "sub/b"]
    assert out.zarr_format == fmt
    assert out["a"].chunks == (10, 10)
    assert np.array_equal(out["sub/b"][...], np.arange(100))


def test_options_per_array() -> None:
    src = hierarchy(MemoryStore())
    out = zarrx.rechunk_group(src, MemoryStore(), chunks={
        "a": {"chunks": (8, 5), "shards": (16, 30), "compressors": []},
        "sub/b": (50,)})
    assert out["a"].shards == (16, 30)
    assert out["a"].compressors == ()
    assert out["sub/b"].chunks == (50,)
    with pytest.raises(ArgumentError, match="unknown options"):
        zarrx.rechunk_group(src, MemoryStore(), chunks={"a": {"chunk": 3}})


def test_consolidated_metadata_rebuilt(tmp_path: Path) -> None:
    hierarchy(str(tmp_path / "src.zarr"))
    zarrx.consolidate_metadata(str(tmp_path / "src.zarr"))
    out = zarrx.rechunk_group(str(tmp_path / "src.zarr"), str(tmp_path / "out.zarr"),
                              chunks={"a": (32, 3)})
    reopened = zarrx.open_group(str(tmp_path / "out.zarr"), mode="r", use_consolidated=True)
    assert reopened.consolidated is not None
    assert reopened["a"].chunks == (32, 3)
    assert out["a"].chunks == (32, 3)
    plain = zarrx.rechunk_group(hierarchy(MemoryStore()), MemoryStore(), chunks={})
    assert plain.consolidated is None


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    src = hierarchy(MemoryStore())
    target = tmp_path / "out.zarr"
    with pytest.raises(ArgumentError, match="not an array"):
        zarrx.rechunk_group(src, str(target), chunks={"nope": (1,)})
    with pytest.raises(ArgumentError, match="has 1 axes"):
        zarrx.rechunk_group(src, str(target), chunks={"a": (1,)})
    with pytest.raises(zarrx.errors.RechunkError, match="too small"):
        zarrx.rechunk_group(src, str(target), chunks={"a": (64, 30)}, max_mem="4KiB")
    assert not target.exists() or LocalStore(target).list() == []
    zarrx.create_group(str(target))
    with pytest.raises(NodeExistsError):
        zarrx.rechunk_group(src, str(target), chunks={"a": (64, 1)})


CHILD = r"""
import os, signal, sys, zarrx
finished = []
def progress(update):  # killed once this run finished the slabs asked
    finished.append(update)
    if len(finished) > int(sys.argv[3]):
        os.kill(os.getpid(), signal.SIGKILL)
zarrx.rechunk_group(sys.argv[1], sys.argv[2], chunks={"a": (64, 1)}, max_mem="64KiB",
                    threads=2, progress=progress)
"""


def test_group_killed_then_resumed(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    source = hierarchy(str(src))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(dst), "2"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert any(".zarrx-rechunk" in k for k in LocalStore(dst).list())
    with pytest.raises(NodeExistsError, match="interrupted"):
        zarrx.rechunk_group(str(src), str(dst), chunks={"a": (64, 1)}, resume=False)
    out = zarrx.rechunk_group(str(src), str(dst), chunks={"a": (64, 1)}, max_mem="64KiB")
    assert out["a"].chunks == (64, 1)
    for path in ("a", "sub/b"):
        assert np.array_equal(out[path][...], source[path][...])
    assert not any(".zarrx-rechunk" in k for k in LocalStore(dst).list())


def test_group_interrupted_between_arrays(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from zarrx.rechunking.record import Record

    src, dst = tmp_path / "src.zarr", tmp_path / "dst.zarr"
    source = hierarchy(str(src))
    erase = Record.erase

    def dies_after_the_first_array(self: Record) -> None:
        if self.load() is not None:  # an array's copy is complete: die before clearing
            raise RuntimeError("killed")
        erase(self)

    monkeypatch.setattr(Record, "erase", dies_after_the_first_array)
    with pytest.raises(RuntimeError, match="killed"):
        zarrx.rechunk_group(str(src), str(dst), chunks={"a": (64, 1)})
    monkeypatch.setattr(Record, "erase", erase)
    assert any(k.startswith("a/.zarrx-rechunk/") for k in LocalStore(dst).list())
    out = zarrx.rechunk_group(str(src), str(dst), chunks={"a": (64, 1)})
    for path in ("a", "sub/b"):
        assert np.array_equal(out[path][...], source[path][...])
    assert not any(".zarrx-rechunk" in k for k in LocalStore(dst).list())


def test_target_inside_the_source_is_refused(tmp_path: Path) -> None:
    hierarchy(str(tmp_path / "src.zarr"))
    before = sorted(LocalStore(tmp_path / "src.zarr").list())
    with pytest.raises(ArgumentError, match="inside it"):
        zarrx.rechunk_group(str(tmp_path / "src.zarr"), str(tmp_path / "src.zarr"),
                            target_path="copy", chunks={"a": (64, 1)})
    assert sorted(LocalStore(tmp_path / "src.zarr").list()) == before
