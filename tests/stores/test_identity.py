"""What a store says of itself for work spread over processes: whether a copy of it in
another process reaches the same keys (``shared``), whether two stores hold the same data
(``same_data``), and a token that changes when a value is rewritten (``stamp``)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from zarrx.storage import LocalStore, MemoryStore, ZipStore


def test_shared(tmp_path: Path) -> None:
    assert LocalStore(tmp_path / "a").shared
    assert not MemoryStore().shared
    with ZipStore(tmp_path / "a.zip", mode="w") as z:
        assert not z.shared


def test_same_data(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    a = LocalStore(tmp_path / "x")
    assert a.same_data(LocalStore(tmp_path / "x", read_only=True))
    assert a.same_data(LocalStore(tmp_path / "y" / ".." / "x"))
    assert not a.same_data(LocalStore(tmp_path / "y"))
    m = MemoryStore()
    assert m.same_data(m.with_read_only(True))
    assert not m.same_data(MemoryStore())
    assert not m.same_data(a)
    assert not a.same_data(m)


def test_stamp_changes_when_a_value_is_rewritten(tmp_path: Path) -> None:
    s = LocalStore(tmp_path / "s")
    assert s.stamp("k") is None
    s.set("k", b"one")
    first = s.stamp("k")
    assert first is not None
    assert first == pickle.loads(pickle.dumps(s)).stamp("k")  # (the same in a worker)
    os.utime(tmp_path / "s" / "k", ns=(1, 1))
    s.set("k", b"two")  # the same size: the time tells
    assert s.stamp("k") != first
    assert MemoryStore().stamp("k") is None
