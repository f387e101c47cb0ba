"""The LMDB plugin: the store contract, its entry point, and LMDB's own behaviour."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from zarrx_lmdb import LMDBStore

import zarrx
from zarrx import registry
from zarrx.abc import ByteRange
from zarrx.errors import ReadOnlyError, StoreError
from zarrx.testing.stores import StoreTests


class TestLMDBStore(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[LMDBStore]:
        store = LMDBStore(tmp_path / "db")
        yield store
        store.close()


def test_scheme_is_registered_by_the_installed_package() -> None:
    entry_points = registry.stores.entry_points().get("lmdb", [])
    assert [ep.value for ep in entry_points] == ["zarrx_lmdb:LMDBStore"]
    assert registry.stores.get("lmdb") is LMDBStore


def test_zarrx_open_lmdb_url(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    data = np.arange(50 * 60, dtype="<f4").reshape(50, 60)
    g = zarrx.open_group(url, mode="w")
    g.create_array("x", shape=data.shape, dtype=data.dtype, chunks=(16, 16))[...] = data
    g.create_array("s", shape=data.shape, dtype=data.dtype, chunks=(5, 5),
                   shards=(25, 30))[...] = data
    g.store.close()
    again = zarrx.open(url, mode="r")
    assert isinstance(again.store, LMDBStore)
    np.testing.assert_array_equal(again["x"][...], data)
    np.testing.assert_array_equal(again["s"][7:33, ::4], data[7:33, ::4])
    assert sorted(name for name, _ in again.members()) == ["s", "x"]
    with pytest.raises(ReadOnlyError):
        again["x"][0, 0] = 1
    again.store.close()


def test_url_options(tmp_path: Path) -> None:
    store = LMDBStore.from_url(f"lmdb://{tmp_path / 'db'}", storage_options={"map_size": 2**24})
    store.set("k", b"v")
    store.close()
    with pytest.raises(TypeError, match="unknown storage_options"):
        LMDBStore.from_url(f"lmdb://{tmp_path / 'db'}", storage_options={"anon": True})
    with pytest.raises(ValueError, match="lmdb://"):
        LMDBStore.from_url("lmdb://")


def test_read_only_needs_an_existing_database(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        LMDBStore(tmp_path / "absent", read_only=True)
    assert not (tmp_path / "absent").exists()


def test_stores_on_one_path_share_the_environment(tmp_path: Path) -> None:
    writer = LMDBStore(tmp_path / "db")
    reader = LMDBStore(tmp_path / "db", read_only=True)
    writer.set("k", b"v")
    assert reader.get("k") == b"v"
    writer.close()
    assert reader.get("k", ByteRange(-1)) == b"v"  # still open: the reader owns it too
    reader.close()
    with pytest.raises(StoreError, match="closed"):
        reader.get("k")


def test_pickle_reopens(tmp_path: Path) -> None:
    store = LMDBStore(tmp_path / "db", map_size=2**26)
    store.set("a/b", b"v")
    again = pickle.loads(pickle.dumps(store))
    assert again == store
    assert again.get("a/b") == b"v"
    again.close()
    store.close()


def test_another_process_sees_the_writes(tmp_path: Path) -> None:
    store = LMDBStore(tmp_path / "db")
    store.set("from/parent", b"p")
    script = textwrap.dedent(f"""
        from zarrx_lmdb import LMDBStore
        s = LMDBStore({str(tmp_path / 'db')!r})
        assert s.get("from/parent") == b"p"
        s.set("from/child", b"c")
        s.close()
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert store.list() == ["from/child", "from/parent"]
    assert store.get("from/child") == b"c"
    store.close()


def test_full_database_is_a_store_error(tmp_path: Path) -> None:
    store = LMDBStore(tmp_path / "db", map_size=2**16)
    with pytest.raises(StoreError, match="map_size"):
        store.set("big", bytes(2**17))
    assert store.get("big") is None
    store.close()


def test_key_longer_than_lmdb_allows(tmp_path: Path) -> None:
    store = LMDBStore(tmp_path / "db")
    key = "k" * 600
    with pytest.raises(StoreError, match="bytes"):
        store.set(key, b"v")
    assert store.get(key) is None
    assert store.list() == []
    store.close()


def test_module_examples_run() -> None:
    import doctest

    import zarrx_lmdb

    result = doctest.testmod(zarrx_lmdb)
    assert result.attempted > 0
    assert result.failed == 0
