"""ZipStore: the store contract, the archive on disk, modes, byte ranges and the peers."""

from __future__ import annotations

import hashlib
import pickle
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx import registry
from zarrx.abc.store import ByteRange
from zarrx.errors import InvalidKeyError, ReadOnlyError, StoreError
from zarrx.stores import zip as zip_module
from zarrx.stores.keys import TEMP_PREFIX
from zarrx.stores.url import store_from_url
from zarrx.stores.zip import ZipStore
from zarrx.testing.stores import StoreTests


class TestZipStore(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[ZipStore]:
        store = ZipStore(tmp_path / "store.zip", mode="w")
        yield store
        store.close()
        # Whatever the test did, the result is one valid archive holding the listed keys.
        with zipfile.ZipFile(tmp_path / "store.zip") as archive:
            assert archive.testzip() is None
            names = archive.namelist()
        assert len(names) == len(set(names))
        assert [p.name for p in tmp_path.iterdir()] == ["store.zip"]


class TestDeflatedZipStore(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[ZipStore]:
        store = ZipStore(tmp_path / "store.zip", mode="w", compression=zipfile.ZIP_DEFLATED)
        yield store
        store.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_archive_is_written_at_close_only(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    store = ZipStore(path, mode="w")
    store.set("zarr.json", b"{}")
    store.set("c/0", b"chunk")
    assert not path.exists()  # buffered beside the target, under a reserved name
    assert all(p.name.startswith(TEMP_PREFIX) for p in tmp_path.iterdir())
    store.close()
    store.close()  # idempotent
    assert _members(path) == {"zarr.json": b"{}", "c/0": b"chunk"}
    assert [p.name for p in tmp_path.iterdir()] == ["a.zip"]
    with pytest.raises(StoreError, match="closed"):
        store.get("zarr.json")


def test_overwrites_and_erases_are_compacted(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w") as store:
        for i in range(5):
            store.set("k", bytes([i]) * 1000)
        store.set("gone/x", b"x")
        store.set("gone/y", b"y")
        store.erase_prefix("gone/")
        store.set("kept", b"kept")
    assert _members(path) == {"k": bytes([4]) * 1000, "kept": b"kept"}
    assert path.stat().st_size < 2 * 1000 + 500  # dead values did not survive


def test_mode_a_keeps_and_changes_members(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.comment = b"made by zipfile"
        archive.writestr("keep", b"old")
        archive.writestr("change", b"old")
        archive.writestr("drop/me", b"old")
    before = _digest(path)
    store = ZipStore(path, mode="a")
    assert store.list() == ["change", "drop/me", "keep"]
    store.set("change", b"new")
    store.erase_prefix("drop/")
    store.set("add/x", b"added")
    assert store.get("change") == b"new"
    assert _digest(path) == before  # untouched until close
    store.close()
    assert _members(path) == {"keep": b"old", "change": b"new", "add/x": b"added"}
    with zipfile.ZipFile(path) as archive:
        assert archive.comment == b"made by zipfile"


def test_mode_a_without_changes_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("k", b"v")
    before = _digest(path)
    with ZipStore(path, mode="a") as store:
        assert store.get("k") == b"v"
    assert _digest(path) == before
    with ZipStore(tmp_path / "new.zip", mode="a") as store:  # absent: a new archive
        store.set("k", b"v")
    assert _members(tmp_path / "new.zip") == {"k": b"v"}


def test_mode_r_is_enforced(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w") as store:
        store.set("a/b", b"v")
    before = _digest(path)
    store = ZipStore(path, mode="r")
    assert store.read_only
    for operation in (
        lambda: store.set("a/b", b"new"),
        lambda: store.set("c", b"new"),
        lambda: store.erase("a/b"),
        lambda: store.erase_prefix(""),
    ):
        with pytest.raises(ReadOnlyError, match="mode='r'"):
            operation()
    assert store.with_read_only(False).read_only  # an 'r' archive has no writable view
    store.close()
    assert _digest(path) == before
    with pytest.raises(FileNotFoundError, match=r"absent\.zip"):
        ZipStore(tmp_path / "absent.zip", mode="r")
    with pytest.raises(zarrx.errors.StoreNotFoundError):
        ZipStore(tmp_path / "absent.zip", mode="r")
    with pytest.raises(ValueError, match="mode"):
        ZipStore(path, mode="x")


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "bad.zip"
    path.write_bytes(b"not a zip archive")
    with pytest.raises(StoreError, match="not a valid zip"):
        ZipStore(path, mode="r")


def test_reopened_archive_reads_ranges_from_the_central_directory(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    value = np.random.default_rng(0).integers(0, 256, 3 * 2**20, dtype=np.uint8).tobytes()
    with ZipStore(path, mode="w") as store:
        store.set("big", value)
        store.set("d/zarr.json", b"{}")
        store.set("d/c/0", b"0")
    store = ZipStore(path, mode="r")
    assert store.list_dir("") == (["big"], ["d/"])
    assert store.list_dir("d/") == (["d/zarr.json"], ["d/c/"])
    assert store.get("big", ByteRange(1000, 10)) == value[1000:1010]
    assert store.get("big", ByteRange(-16)) == value[-16:]
    assert store.get("big") == value
    store.close()


def test_byte_ranges_read_only_their_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.zip"
    value = bytes(range(256)) * 4096  # 1 MiB
    with ZipStore(path, mode="w") as store:
        store.set("v", value)
    store = ZipStore(path, mode="r")
    read: list[int] = []
    real_pread = zip_module.os.pread

    def counting_pread(fd: int, n: int, offset: int) -> bytes:
        read.append(n)
        return real_pread(fd, n, offset)

    monkeypatch.setattr(zip_module.os, "pread", counting_pread)
    assert store.get("v", ByteRange(-20)) == value[-20:]
    assert store.get("v", ByteRange(500_000, 100)) == value[500_000:500_100]
    assert sum(read) <= 30 + 20 + 100  # one local header, then just the ranges
    store.close()


def test_corrupted_member_fails_its_crc(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"0123456789" * 10)
    raw = bytearray(path.read_bytes())
    at = bytes(raw).index(b"0123456789")
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    with ZipStore(path, mode="r") as store:
        with pytest.raises(StoreError, match="CRC"):
            store.get("k")
        assert store.get("k", ByteRange(1, 3)) == b"123"  # a range cannot be checked


def test_member_names_that_are_not_keys_are_never_listed(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("dir/", b"")
        archive.writestr("../escape", b"x")
        archive.writestr("/abs", b"x")
        archive.writestr("ok/k", b"v")
    with ZipStore(path, mode="r") as store:
        assert store.list() == ["ok/k"]
        assert store.list_dir("") == ([], ["ok/"])
        with pytest.raises(InvalidKeyError):
            store.get("../escape")


def test_pickle(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    writer = ZipStore(path, mode="w")
    writer.set("k", b"v")
    with pytest.raises(TypeError, match="buffered"):
        pickle.dumps(writer)
    writer.close()
    reader = ZipStore(path, mode="r")
    again = pickle.loads(pickle.dumps(reader))
    assert again == reader
    assert again.get("k") == b"v"
    reader.close()
    again.close()


def test_zip_url_through_the_registry(tmp_path: Path) -> None:
    assert registry.stores.get("zip") is ZipStore
    url = f"zip://{tmp_path / 'u.zip'}"
    store = store_from_url(url, read_only=False)
    assert isinstance(store, ZipStore)
    assert store.mode == "a"
    store.set("k", b"v")
    store.close()
    reader = store_from_url(url, read_only=True)
    assert reader.read_only
    assert reader.get("k") == b"v"
    reader.close()
    with pytest.raises(TypeError, match="storage_options"):
        ZipStore.from_url(url, storage_options={"anon": True})
    with pytest.raises(ValueError, match="zip://"):
        ZipStore.from_url("zip://")


def test_array_in_a_zip_url(tmp_path: Path) -> None:
    url = f"zip://{tmp_path / 'arr.zip'}"
    data = np.arange(30 * 40, dtype="<i4").reshape(30, 40)
    a = zarrx.create_array(url, shape=data.shape, dtype=data.dtype, chunks=(7, 9),
                           shards=(14, 18))
    a[...] = data
    a.store.close()
    b = zarrx.open(url, mode="r")
    assert isinstance(b, zarrx.Array)
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b[3:20:4, ::7], data[3:20:4, ::7])
    with pytest.raises(ReadOnlyError):
        b[0, 0] = 1
    b.store.close()


def test_zarr_python_reads_zarrx_zip_and_back(tmp_path: Path) -> None:
    import zarr

    ours = tmp_path / "ours.zip"
    data = np.linspace(0, 1, 24 * 18).reshape(24, 18)
    with ZipStore(ours, mode="w") as store:
        g = zarrx.create_group(store, attributes={"who": "zarrx"})
        g.create_array("x", shape=data.shape, dtype="f8", chunks=(5, 6))[...] = data
    peer_store = zarr.storage.ZipStore(ours, mode="r")
    peer = zarr.open_group(peer_store, mode="r")
    assert peer.attrs["who"] == "zarrx"
    np.testing.assert_array_equal(peer["x"][...], data)
    peer_store.close()

    theirs = tmp_path / "theirs.zip"
    peer_store = zarr.storage.ZipStore(theirs, mode="w")
    z = zarr.create_array(peer_store, name="y", shape=(10, 11), dtype="i2", chunks=(3, 4))
    z[...] = np.arange(110, dtype="i2").reshape(10, 11)
    peer_store.close()
    with ZipStore(theirs, mode="r") as store:
        np.testing.assert_array_equal(
            zarrx.open_array(store, path="y")[...], np.arange(110, dtype="i2").reshape(10, 11)
        )


def test_public_names() -> None:
    from zarrx import storage

    assert storage.ZipStore is ZipStore
    assert "ZipStore" in storage.__all__


def test_module_examples_run() -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module("zarrx.stores.zip"))
    assert result.attempted > 0
    assert result.failed == 0
