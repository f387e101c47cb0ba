from __future__ import annotations

import os
import shutil
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx.stores.local as local_module
import zarrx.stores.splice as splice_module
from zarrx.abc.store import ByteRange
from zarrx.errors import InvalidKeyError, ReadOnlyError, StoreError
from zarrx.runtime import executor
from zarrx.stores.keys import LOCK_PREFIX, TEMP_PREFIX, lock_name
from zarrx.stores.local import LocalStore
from zarrx.testing.stores import BAD_KEYS, StoreTests


class TestLocalStore(StoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> LocalStore:
        return LocalStore(tmp_path / "store")  # absent: made on first write


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (symlinks not followed), by relative path."""
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory, name)
            found[path.relative_to(root).as_posix()] = (
                b"<link>" if path.is_symlink() else path.read_bytes()
            )
    return found


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the store holding files that must never be touched."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret").write_bytes(b"precious")
    (path / "sub").mkdir()
    (path / "sub" / "deep").write_bytes(b"also precious")
    return path


# -- layout and lifecycle -------------------------------------------------------------


def test_keys_are_files_under_root(root: Path) -> None:
    store = LocalStore(root)
    store.set("a/b/c", b"abc")
    store.set("zarr.json", b"{}")
    assert (root / "a" / "b" / "c").read_bytes() == b"abc"
    assert (root / "zarr.json").read_bytes() == b"{}"
    assert _files(root) == {"a/b/c": b"abc", "zarr.json": b"{}"}


def test_files_written_by_others_are_keys(root: Path) -> None:
    (root / "x").mkdir()
    (root / "x" / "y").write_bytes(b"external")
    store = LocalStore(root)
    assert store.list() == ["x/y"]
    assert store.get("x/y") == b"external"


def test_root_is_created_lazily(tmp_path: Path) -> None:
    root = tmp_path / "new" / "store"
    store = LocalStore(root)
    assert not root.exists()
    assert store.get("k") is None
    assert store.list() == []
    assert store.list_dir("") == ([], [])
    store.erase("k")
    store.erase_prefix("")
    assert not root.exists()
    store.set("k", b"v")
    assert (root / "k").read_bytes() == b"v"


def test_read_only_never_creates_or_writes(tmp_path: Path) -> None:
    root = tmp_path / "absent"
    store = LocalStore(root, read_only=True)
    assert store.get("k") is None
    assert store.list() == []
    with pytest.raises(ReadOnlyError):
        store.set("k", b"v")
    with pytest.raises(ReadOnlyError):
        store.erase_prefix("")
    assert not root.exists()


def test_read_only_refuses_before_touching_files(root: Path) -> None:
    (root / "k").write_bytes(b"old")
    store = LocalStore(root, read_only=True)
    for operation in (
        lambda: store.set("k", b"new"),
        lambda: store.erase("k"),
        lambda: store.erase_prefix(""),
    ):
        with pytest.raises(ReadOnlyError):
            operation()
    assert _files(root) == {"k": b"old"}


def test_written_files_honour_the_umask(root: Path, fence: str) -> None:
    umask = os.umask(0o022)
    try:
        store = LocalStore(root)
        for key in ("a/k", "a/j", "k"):  # "a/j": its directory made by "a/k" before
            store.set(key, b"v")
    finally:
        os.umask(umask)
    for file in ("a/k", "a/j", "k"):
        assert (root / file).stat().st_mode & 0o777 == 0o644


def test_empty_root_refused() -> None:
    with pytest.raises(ValueError, match="root directory"):
        LocalStore("")


def test_repr_and_equality(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore(root)
    assert str(root.resolve()) in repr(store)
    assert "read_only=True" in repr(LocalStore(root, read_only=True))
    assert store.root == root.resolve()
    monkeypatch.chdir(root.parent)
    assert LocalStore("store") == store
    assert LocalStore(str(root) + "/") == store
    assert hash(LocalStore("store")) == hash(store)
    assert LocalStore(root, read_only=True) != store
    assert store.with_read_only(True) == LocalStore(root, read_only=True)
    assert LocalStore(root.parent) != store


def test_root_through_a_symlink(tmp_path: Path, root: Path) -> None:
    link = tmp_path / "link-to-store"
    link.symlink_to(root, target_is_directory=True)
    store = LocalStore(link)
    store.set("a/b", b"v")
    assert (root / "a" / "b").read_bytes() == b"v"
    assert store == LocalStore(root)
    store.erase_prefix("")
    assert link.is_symlink()
    assert root.is_dir()
    assert _files(root) == {}


# -- atomic writes ----------------------------------------------------------------------


def test_no_temporary_file_left_after_write(root: Path, fence: str) -> None:
    store = LocalStore(root)
    for i in range(5):
        store.set(f"a/{i}", b"x" * (i * 1000))
    store.set("a/0", b"overwritten")
    assert store.list() == [f"a/{i}" for i in range(5)]
    assert sorted(_files(root)) == [f"a/{i}" for i in range(5)]
    assert not [p for p in root.rglob("*") if p.name.startswith(TEMP_PREFIX)]


def test_failed_replace_keeps_old_value(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_module, "use_openat2", False)  # the checked path's replace
    store = LocalStore(root)
    store.set("a/k", b"old value")

    def failing_replace(src: str, dst: str) -> None:
        assert Path(src).name.startswith(TEMP_PREFIX)
        assert Path(src).read_bytes() == b"new value"  # fully written before the rename
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(local_module.os, "replace", failing_replace)
    with pytest.raises(StoreError, match="a/k") as info:
        store.set("a/k", b"new value")
    assert isinstance(info.value, OSError)
    monkeypatch.setattr(local_module.os, "replace", os.replace)
    assert store.get("a/k") == b"old value"
    assert _files(root) == {"a/k": b"old value"}
    assert store.list() == ["a/k"]


def test_interrupted_write_cleans_up(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_module, "use_openat2", False)  # the checked path's replace
    store = LocalStore(root)
    store.set("k", b"old")

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(local_module.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.set("k", b"new")
    monkeypatch.setattr(local_module.os, "replace", os.replace)
    assert _files(root) == {"k": b"old"}


def test_stale_temporary_files_are_not_keys(root: Path, fence: str) -> None:
    (root / "a").mkdir()
    (root / (TEMP_PREFIX + "dead")).write_bytes(b"partial")
    (root / "a" / (TEMP_PREFIX + "dead")).write_bytes(b"partial")
    store = LocalStore(root)
    store.set("a/k", b"v")
    assert store.list() == ["a/k"]
    assert store.list_prefix("a/") == ["a/k"]
    assert store.list_dir("") == ([], ["a/"])
    assert store.list_dir("a/") == (["a/k"], [])
    with pytest.raises(InvalidKeyError):
        store.get(TEMP_PREFIX + "dead")
    store.erase_prefix("")
    assert list(root.iterdir()) == []


def test_write_below_an_existing_key_is_a_store_error(root: Path, fence: str) -> None:
    store = LocalStore(root)
    store.set("a", b"file")
    with pytest.raises(StoreError, match="a/b"):
        store.set("a/b", b"cannot be a file and a directory")
    assert _files(root) == {"a": b"file"}


def test_write_over_a_prefix_is_a_store_error(root: Path, fence: str) -> None:
    store = LocalStore(root)
    store.set("a/b", b"v")
    with pytest.raises(StoreError, match="'a'"):
        store.set("a", b"cannot replace a directory")
    assert _files(root) == {"a/b": b"v"}


# -- listing ----------------------------------------------------------------------------


def test_empty_directories_are_not_prefixes(root: Path) -> None:
    (root / "empty" / "nested").mkdir(parents=True)
    (root / "full").mkdir()
    (root / "full" / "k").write_bytes(b"v")
    store = LocalStore(root)
    assert store.list_dir("") == ([], ["full/"])
    assert store.list() == ["full/k"]


def _group_of_members(root: Path, outside: Path) -> None:
    """Ten members holding ``zarr.json`` (so the listing probes their siblings for that
    name), then siblings where ``zarr.json`` is something else, or absent."""
    for i in range(10):
        (root / f"a{i}").mkdir()
        (root / f"a{i}" / "zarr.json").write_bytes(b"{}")
    (root / "t1_dir" / "zarr.json").mkdir(parents=True)  # an empty directory: no key
    (root / "t2_dir_key" / "zarr.json").mkdir(parents=True)
    (root / "t2_dir_key" / "zarr.json" / "k").write_bytes(b"v")  # a key below it
    (outside / "f").write_bytes(b"secret")
    (root / "t3_link_out").mkdir()
    (root / "t3_link_out" / "zarr.json").symlink_to(outside / "f")  # leads out: no key
    (root / "t4_link_in").mkdir()
    (root / "t4_link_in" / "zarr.json").symlink_to(root / "a0" / "zarr.json")  # a key
    (root / "t5_dangling").mkdir()
    (root / "t5_dangling" / "zarr.json").symlink_to(root / "nowhere")
    (root / "t6_temp").mkdir()
    (root / "t6_temp" / (TEMP_PREFIX + "zarr.json")).write_bytes(b"partial")
    (root / "t7_nested" / "c").mkdir(parents=True)
    (root / "t7_nested" / "c" / "0").write_bytes(b"chunk")
    (root / "t8_empty").mkdir()
    (root / "t9_other").mkdir()
    (root / "t9_other" / "attrs.json").write_bytes(b"{}")
    os.mkfifo(root / "t9_other" / "zarr.json")


@pytest.mark.parametrize("order", ["sorted", "reversed"])
def test_list_dir_children_probed_by_a_siblings_key_name_are_prefixes_exactly_when_a_key_lies_below(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str
) -> None:
    """A child directory is a prefix iff ``list()`` finds a key below it, whether it is
    proven by the name its previous sibling held or listed (directories in a fixed order,
    so the probe meets every kind of sibling)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    _group_of_members(root, outside)
    store = LocalStore(root)
    expected = sorted({k.split("/")[0] + "/" for k in store.list() if "/" in k})
    assert "t1_dir/" not in expected
    assert "t2_dir_key/" in expected
    assert "t3_link_out/" not in expected
    assert "t4_link_in/" in expected
    scandir, listed = os.scandir, []

    def in_order(path: Any) -> list[os.DirEntry[str]]:
        listed.append(path)
        entries = sorted(scandir(path), key=lambda e: e.name)
        return entries[::-1] if order == "reversed" and path == str(root) else entries

    monkeypatch.setattr(os, "scandir", in_order)
    assert store.list_dir("") == ([], expected)
    monkeypatch.undo()
    # The members holding the probed name were not listed, but the first one met.
    members_listed = [p for p in listed if os.path.basename(p).startswith("a")]
    assert len(members_listed) <= 1, members_listed


def test_fifo_neither_hangs_nor_lists(root: Path, fence: str) -> None:
    os.mkfifo(root / "pipe")
    store = LocalStore(root)
    assert store.get("pipe") is None
    assert store.get("pipe", ByteRange(-1)) is None
    assert store.list() == []


def test_names_that_are_not_keys_are_not_listed(root: Path) -> None:
    (root / "back\\slash").write_bytes(b"x")
    (root / "line\nbreak").write_bytes(b"x")
    (root / "ok").write_bytes(b"x")
    assert LocalStore(root).list() == ["ok"]


def test_erase_removes_empty_directories_but_not_root(root: Path) -> None:
    store = LocalStore(root)
    store.set("a/b/c/d", b"v")
    store.set("a/x", b"v")
    store.erase("a/b/c/d")
    assert not (root / "a" / "b").exists()
    assert (root / "a" / "x").exists()
    store.erase("a/x")
    assert root.is_dir()
    assert list(root.iterdir()) == []


def test_get_many_reads_concurrently(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore(root)
    keys = [f"c/{i}" for i in range(32)]
    for key in keys:
        store.set(key, key.encode())
    threads = set()
    # the checked path, the openat2 one, and the openat2 one for whole files in a batch
    for name in ("read_path", "_read_beneath", "read_many_beneath"):
        real_read = getattr(local_module, name)

        def recording_read(*args: object, real_read: Any = real_read) -> Any:
            threads.add(threading.current_thread().name)
            return real_read(*args)

        monkeypatch.setattr(local_module, name, recording_read)
    assert store.get_many([(k, None) for k in keys]) == [k.encode() for k in keys]
    assert threads
    assert all(name.startswith("zarrx-io") for name in threads)
    threads.clear()
    assert store.get_many([("c/1", None)]) == [b"c/1"]
    assert threads == {"MainThread"}


# -- the fence: nothing outside the root is read, written or deleted ---------------------


def _openat2_works(tmp_path: Path) -> bool:
    from zarrx._core.files import read_beneath

    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        read_beneath(fd, b"absent")
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


@pytest.fixture(params=["openat2", "checks"])
def fence(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Run a fence test through each read and write path: ``openat2`` (where the kernel
    has it) and the user-space checks it falls back to."""
    if request.param == "checks":
        monkeypatch.setattr(local_module, "use_openat2", False)
    elif not (local_module.use_openat2 and _openat2_works(tmp_path)):
        pytest.skip("this kernel has no openat2 (the checks are tested on their own)")
    return str(request.param)


def _no_checked_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("read through the checked path")

    monkeypatch.setattr(local_module, "read_path", refuse)
    monkeypatch.setattr(local_module, "open_file", refuse)
    monkeypatch.setattr(LocalStore, "_path", refuse)


def test_reads_use_openat2_without_path_checks(
    root: Path, fence: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(root)
    store.set("a/k", b"0123456789")
    (root / "d").mkdir()
    if fence == "openat2":
        _no_checked_reads(monkeypatch)
    assert store.get("a/k") == b"0123456789"
    assert store.get("a/k", ByteRange(2, 3)) == b"234"
    assert store.get("a/k", ByteRange(-2)) == b"89"
    assert store.get("a/absent") is None
    assert store.get("a/k/below") is None  # a file where a directory would be
    assert store.get("d") is None  # a directory is no value
    keys = [("a/k", None), ("a/absent", None), ("a/k", ByteRange(0, 1))] * 3
    assert store.get_many(keys) == [b"0123456789", None, b"0"] * 3


class _Then:
    """A reader of two rounds: ``head``, then the ranges ``then(head value)`` names."""

    def __init__(self, head: ByteRange, then: Any) -> None:
        self.head, self.then = head, then
        self.restart()

    def restart(self) -> None:
        self.asked: list[ByteRange] | None = None
        self.values: list[Any] = []

    def ranges(self) -> list[ByteRange]:
        return [self.head] if self.asked is None else ([] if self.values else self.asked)

    def receive(self, values: Any) -> None:
        if self.asked is None:
            self.asked = list(self.then(values[0]))
            self.values = [] if self.asked else [None]
        else:
            self.values = [bytes(v) for v in values]


def _indexed(store: LocalStore, key: str, head: ByteRange, then: Any) -> list[Any]:
    """A read in two rounds from one open of the file (``read_rounds``)."""
    reader = _Then(head, then)
    store.read_rounds([(key, reader)])
    return [] if reader.values == [None] else reader.values


def test_an_indexed_read_reads_the_head_then_its_ranges(
    root: Path, fence: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read in rounds: the head, then the ranges it names, from the open file (through
    ``openat2`` alone where the kernel has it); an absent key, a directory or a path
    through a file gives ``then(None)`` and no values."""
    store = LocalStore(root)
    store.set("a/k", b"0123456789")
    (root / "d").mkdir()
    if fence == "openat2":
        _no_checked_reads(monkeypatch)
    heads: list[bytes | None] = []

    def then(head: bytes | None) -> list[ByteRange]:
        heads.append(head)
        return [ByteRange(int(head[:1]), 2), ByteRange(8, 5)] if head else []

    assert _indexed(store, "a/k", ByteRange(-1), then) == [b"9", b"89"]
    assert heads == [b"9"]
    assert _indexed(store, "a/k", ByteRange(3, 1), then) == [b"34", b"89"]
    heads.clear()
    assert _indexed(store, "a/absent", ByteRange(0, 1), then) == []
    assert _indexed(store, "d", ByteRange(0, 1), then) == []
    assert _indexed(store, "a/k/below", ByteRange(0, 1), then) == []
    assert heads == [None, None, None]


def test_an_indexed_read_passes_on_errors_and_closes_the_file(root: Path, fence: str) -> None:
    store = LocalStore(root)
    store.set("k", b"0123")

    def fail(head: bytes | None) -> list[ByteRange]:
        raise ValueError("bad index")

    before = set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()
    for _ in range(3):
        with pytest.raises(ValueError, match="bad index"):
            _indexed(store, "k", ByteRange(0, 2), fail)
    if before:
        assert len(set(os.listdir("/proc/self/fd")) - before) <= 1  # (the root's, once)
    with pytest.raises(InvalidKeyError):
        _indexed(store, "../k", ByteRange(0, 1), fail)


def test_an_indexed_read_never_leaves_the_root(root: Path, outside: Path, fence: str) -> None:
    (root / "a").mkdir()
    (root / "a" / "leak").symlink_to(outside / "secret")
    store = LocalStore(root)
    with pytest.raises(InvalidKeyError):
        _indexed(store, "a/leak", ByteRange(0, 1), lambda head: [ByteRange(0, 8)])


def test_links_that_stay_inside_are_read(root: Path, fence: str) -> None:
    (root / "real").mkdir()
    (root / "real" / "k").write_bytes(b"v")
    (root / "relative").symlink_to("real", target_is_directory=True)
    (root / "absolute").symlink_to(root / "real", target_is_directory=True)  # EXDEV: checks
    (root / "up").mkdir()
    (root / "up" / "file").symlink_to("../real/k")
    store = LocalStore(root)
    for key in ("relative/k", "absolute/k", "up/file"):
        assert store.get(key) == b"v"
        assert store.get(key, ByteRange(0, 1)) == b"v"
        assert store.get_many([(key, None)] * 5) == [b"v"] * 5


def test_relative_links_out_of_the_store_are_refused(
    root: Path, outside: Path, fence: str
) -> None:
    (root / "a").mkdir()
    (root / "a" / "up").symlink_to("../../outside/secret")
    (root / "a" / "dir").symlink_to("../../outside", target_is_directory=True)
    (root / "a" / "loop").symlink_to("loop")
    store = LocalStore(root)
    for key in ("a/up", "a/dir/secret", "a/dir/sub/deep"):
        with pytest.raises(InvalidKeyError, match="outside the store root"):
            store.get(key)
        with pytest.raises(InvalidKeyError, match="outside the store root"):
            store.get(key, ByteRange(0, 2))
        with pytest.raises(InvalidKeyError, match="outside the store root"):
            store.get_many([(key, None)] * 5)
    with pytest.raises((InvalidKeyError, StoreError)):
        store.get("a/loop")


def test_a_root_replaced_is_never_read_through_its_old_descriptor(
    root: Path, outside: Path, tmp_path: Path, fence: str
) -> None:
    store = LocalStore(root)
    store.set("k", b"old")
    assert store.get("k") == b"old"
    root.rename(tmp_path / "moved")
    assert store.get("k") is None  # the root is gone, not read from where it went
    root.mkdir()
    store.set("k", b"new")
    assert store.get("k") == b"new"
    assert store.get_many([("k", None)] * 5) == [b"new"] * 5
    root.rename(tmp_path / "moved-again")
    root.symlink_to(outside, target_is_directory=True)  # the root is now a link out
    with pytest.raises(InvalidKeyError, match="outside the store root"):
        store.get("secret")


@pytest.mark.parametrize("code", ["ENOSYS", "EPERM", "EINVAL", "E2BIG"])
def test_a_kernel_without_openat2_falls_back_for_good(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    import errno

    def missing(*args: object) -> None:
        raise OSError(getattr(errno, code), code)

    monkeypatch.setattr(local_module, "use_openat2", True)
    monkeypatch.setattr(local_module, "read_beneath", missing)
    monkeypatch.setattr(local_module, "open_beneath", missing)
    (root / "link").symlink_to(outside, target_is_directory=True)
    store = LocalStore(root)
    store.set("k", b"v")
    assert store.get("k") == b"v"
    assert local_module.use_openat2 is False
    assert store.get("k", ByteRange(0, 1)) == b"v"
    with pytest.raises(InvalidKeyError):
        store.get("link/secret")


def test_a_pickled_store_opens_its_own_root_descriptor(root: Path) -> None:
    import pickle

    store = LocalStore(root)
    store.set("k", b"v")
    assert store.get("k") == b"v"
    copy = pickle.loads(pickle.dumps(store))
    assert copy == store
    assert copy.get("k") == b"v"


def test_symlinked_directory_out_of_store_is_refused(root: Path, outside: Path, fence: str) -> None:
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "inside").write_bytes(b"mine")
    store = LocalStore(root)
    before = _files(outside)
    for operation in (
        lambda: store.get("link/secret"),
        lambda: store.get("link/secret", ByteRange(0, 3)),
        lambda: store.get_many([("inside", None), ("link/secret", None)]),
        lambda: store.exists("link/secret"),
        lambda: store.set("link/new", b"x"),
        lambda: store.set("link/secret", b"overwritten"),
        lambda: store.set("link/sub/deeper/new", b"x"),
        lambda: store.erase("link/secret"),
        lambda: store.erase("link/sub/deep"),
        lambda: store.erase_prefix("link/"),
        lambda: store.erase_prefix("link/sub/"),
        lambda: store.list_prefix("link/"),
        lambda: store.list_dir("link/"),
    ):
        with pytest.raises(InvalidKeyError, match="outside the store root"):
            operation()
    assert _files(outside) == before
    assert store.list() == ["inside"]
    assert store.list_dir("") == (["inside"], [])


def test_symlinked_file_out_of_store_is_refused(root: Path, outside: Path, fence: str) -> None:
    (root / "a").mkdir()
    (root / "a" / "leak").symlink_to(outside / "secret")
    store = LocalStore(root)
    with pytest.raises(InvalidKeyError):
        store.get("a/leak")
    with pytest.raises(InvalidKeyError):
        store.set("a/leak", b"overwritten")
    with pytest.raises(InvalidKeyError):
        store.erase("a/leak")
    assert store.list() == []
    assert (outside / "secret").read_bytes() == b"precious"


def test_erase_prefix_root_unlinks_links_without_following(root: Path, outside: Path) -> None:
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "d").mkdir()
    (root / "d" / "nested-link").symlink_to(outside, target_is_directory=True)
    (root / "d" / "file-link").symlink_to(outside / "secret")
    (root / "d" / "k").write_bytes(b"v")
    before = _files(outside)
    LocalStore(root).erase_prefix("")
    assert root.is_dir()
    assert list(root.iterdir()) == []
    assert _files(outside) == before


def test_erase_prefix_keeps_root(root: Path, tmp_path: Path) -> None:
    store = LocalStore(root)
    store.set("a/b", b"v")
    store.set("c", b"v")
    (tmp_path / "sibling").write_bytes(b"keep")
    store.erase_prefix("")
    assert root.is_dir()
    assert list(root.iterdir()) == []
    assert (tmp_path / "sibling").read_bytes() == b"keep"


def test_symlink_inside_store_is_followed_for_reads_not_deletes(root: Path, fence: str) -> None:
    (root / "real").mkdir()
    (root / "real" / "k").write_bytes(b"v")
    (root / "alias").symlink_to(root / "real", target_is_directory=True)
    store = LocalStore(root)
    assert store.get("alias/k") == b"v"
    assert store.list() == ["real/k"]  # linked directories are not walked (no cycles)
    store.erase_prefix("alias/")
    assert not (root / "alias").exists()
    assert (root / "real" / "k").read_bytes() == b"v"


def test_symlink_to_root_is_refused(root: Path, fence: str) -> None:
    (root / "k").write_bytes(b"v")
    (root / "self").symlink_to(root, target_is_directory=True)
    store = LocalStore(root)
    with pytest.raises(InvalidKeyError):
        store.erase_prefix("self/")
    with pytest.raises(InvalidKeyError):
        store.get("self")
    assert (root / "k").read_bytes() == b"v"
    assert store.list() == ["k"]


@pytest.mark.parametrize(
    ("operation", "argument"),
    [
        ("erase", "/"),
        ("erase", "../x"),
        ("erase", "a/../../x"),
        ("erase", "/x"),
        ("erase_prefix", "../"),
        ("erase_prefix", "/"),
        ("erase_prefix", "a/../../"),
        ("set", "../x"),
        ("get", "../x"),
    ],
)
def test_escaping_keys_delete_nothing(
    root: Path, tmp_path: Path, operation: str, argument: str, fence: str
) -> None:
    (tmp_path / "x").write_bytes(b"outside")
    store = LocalStore(root)
    store.set("a/b", b"inside")
    args = (argument, b"v") if operation == "set" else (argument,)
    with pytest.raises(InvalidKeyError):
        getattr(store, operation)(*args)
    assert (tmp_path / "x").read_bytes() == b"outside"
    assert _files(root) == {"a/b": b"inside"}


@pytest.mark.parametrize("key", BAD_KEYS)
def test_invalid_keys_refused_before_any_io(
    root: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    def no_io(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"I/O attempted with an invalid key {key!r}")

    store = LocalStore(root)
    operations = (
        lambda: store.get(key),
        lambda: store.get_many([(key, None)]),
        lambda: store.exists(key),
        lambda: store.set(key, b"v"),
        lambda: store.erase(key),
        lambda: store.erase_prefix(key + "/"),  # a prefix is a valid key plus "/"
        lambda: store.list_prefix(key + "/"),
        lambda: store.list_dir(key + "/"),
    )
    with monkeypatch.context() as patch:
        for name in ("open", "unlink", "rmdir", "makedirs", "replace", "scandir", "lstat"):
            patch.setattr(local_module.os, name, no_io)
        patch.setattr(local_module.os.path, "realpath", no_io)
        patch.setattr(shutil, "rmtree", no_io)
        patch.setattr("builtins.open", no_io)
        for operation in operations:
            with pytest.raises(InvalidKeyError):
                operation()
    assert list(root.iterdir()) == []


def test_from_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert LocalStore.from_url(f"file://{tmp_path}", read_only=False) == LocalStore(tmp_path)
    ro = LocalStore.from_url(f"file://{tmp_path}", read_only=True)
    assert ro.read_only
    assert LocalStore.from_url(f"file://localhost{tmp_path}") == LocalStore(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert LocalStore.from_url("file://rel/dir") == LocalStore(tmp_path / "rel" / "dir")
    with pytest.raises(TypeError, match="storage_options"):
        LocalStore.from_url(f"file://{tmp_path}", storage_options={"anon": True})
    with pytest.raises(ValueError, match="file://"):
        LocalStore.from_url("file://")
    with pytest.raises(ValueError, match="file://"):
        LocalStore.from_url(f"s3://{tmp_path}")


@pytest.mark.filterwarnings("ignore:This process .* fork:DeprecationWarning")
def test_get_many_after_fork(root: Path) -> None:
    """A forked child (multiprocessing, dask) must not wait on its parent's read threads."""
    store = LocalStore(root)
    keys = [f"c/{i}" for i in range(16)]
    for key in keys:
        store.set(key, key.encode())
    requests = [(k, None) for k in keys]
    assert store.get_many(requests) == [k.encode() for k in keys]
    pool = executor.io_pool()
    barrier = threading.Barrier(executor.IO_THREADS)
    list(pool.map(lambda _: barrier.wait(timeout=10), range(barrier.parties)))  # all threads up
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if the reads complete
        signal.alarm(20)
        ok = store.get_many(requests) == [k.encode() for k in keys]
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# -- atomic updates: lock files beside the keys ---------------------------------------------


def test_lock_file_lives_beside_the_key_while_held_and_goes_after(root: Path) -> None:
    store = LocalStore(root)
    seen: list[dict[str, bytes]] = []

    def update(old: bytes | None) -> bytes:
        seen.append(_files(root))
        return b"new"

    store.atomic_update("a/c/0", update)
    assert seen == [{"a/c/" + lock_name("0"): b""}]  # with the data, not in a temporary dir
    assert _files(root) == {"a/c/0": b"new"}  # removed afterwards
    store.atomic_update("a/c/0", lambda old: None)
    assert _files(root) == {}
    assert list(root.iterdir()) == []  # the directories it made are pruned too


def test_lock_files_left_by_dead_writers_are_not_keys(root: Path) -> None:
    store = LocalStore(root)
    store.set("g/a/c/0", b"chunk")
    store.set("g/zarr.json", b"{}")
    (root / "g" / lock_name("zarr.json")).write_bytes(b"")  # as a killed writer leaves them
    (root / "g" / "x").mkdir()
    (root / "g" / "x" / lock_name("zarr.json")).write_bytes(b"")
    assert store.list() == ["g/a/c/0", "g/zarr.json"]
    assert store.list_dir("g/") == (["g/zarr.json"], ["g/a/"])  # "x" holds no key
    with pytest.raises(InvalidKeyError, match="reserved"):
        store.get("g/" + lock_name("zarr.json"))
    store.atomic_update("g/zarr.json", lambda old: b"{\"v\": 2}")  # takes the stale lock
    assert not (root / "g" / lock_name("zarr.json")).exists()
    removed = store.clean_leftovers()
    assert removed == [str(root / "g" / "x" / lock_name("zarr.json"))]
    store.erase_prefix("g/")
    assert _files(root) == {}


def test_a_symlink_planted_as_lock_file_is_refused(root: Path, outside: Path) -> None:
    store = LocalStore(root)
    store.set("k", b"v")
    target = outside / "victim"
    target.write_bytes(b"keep")
    (root / lock_name("k")).symlink_to(target)
    with pytest.raises(StoreError, match="cannot lock"):
        store.atomic_update("k", lambda old: b"w")
    assert target.read_bytes() == b"keep"
    assert store.get("k") == b"v"
    store.clean_leftovers()  # removes the link, never its target
    assert target.read_bytes() == b"keep"
    assert not (root / lock_name("k")).is_symlink()


def test_a_waiting_writer_is_logged_and_goes_on_when_the_lock_is_released(root: Path) -> None:
    import logging

    store = LocalStore(root)
    inside, waiting, release = threading.Event(), threading.Event(), threading.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "locked by another writer" in record.getMessage():
                waiting.set()

    def hold(old: bytes | None) -> bytes:
        inside.set()
        assert release.wait(timeout=300)  # a hang guard, not a deadline
        return (old or b"") + b"first,"

    watch = Watch(logging.DEBUG)
    logger = logging.getLogger("zarrx.stores.locks")
    logger.addHandler(watch)
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        holder = threading.Thread(target=store.atomic_update, args=("k", hold))
        holder.start()
        assert inside.wait(timeout=300)
        second = threading.Thread(
            target=store.atomic_update, args=("k", lambda old: (old or b"") + b"second")
        )
        second.start()
        assert waiting.wait(timeout=300)  # the second writer found the key locked, said so
        release.set()
        holder.join()
        second.join()
    finally:
        logger.removeHandler(watch)
        logger.setLevel(previous)
    assert store.get("k") == b"first,second"
    assert _files(root) == {"k": b"first,second"}


def test_a_key_whose_lock_name_would_be_too_long_still_updates(root: Path) -> None:
    store = LocalStore(root)
    limit = os.pathconf(root, "PC_NAME_MAX")
    name = "n" * limit  # the longest name the file system takes: its lock name is shorter
    seen: list[dict[str, bytes]] = []

    def update(old: bytes | None) -> bytes:
        seen.append(_files(root))
        return b"v"

    store.atomic_update(f"a/{name}", update)
    [lock] = seen[0]
    assert lock.startswith("a/" + LOCK_PREFIX)
    assert len(lock) - 2 <= limit
    assert _files(root) == {f"a/{name}": b"v"}


# -- names the spec allows but the file system cannot store -----------------------------------

def test_name_longer_than_the_file_system_allows_is_refused_before_writing(tmp_path: Path) -> None:
    """The draft allows node names of 255 characters; ``<250 characters>.group.json`` is
    261 bytes, over NAME_MAX (255 on the usual file systems). Nothing is written."""
    import zarrx

    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    name = "n" * 250
    for zarr_format, create in (
        ("3-draft", lambda root: zarrx.create_group(str(root), path=name, zarr_format="3-draft")),
        ("3-draft", lambda root: zarrx.create_array(str(root), name=f"g/{name}", shape=(1,),
                                                    dtype="u1", zarr_format="3-draft")),
        (3, lambda root: zarrx.create_group(str(root), path="n" * (limit + 1))),
        (2, lambda root: zarrx.create_array(str(root), name="n" * (limit + 1), shape=(1,),
                                            dtype="u1", zarr_format=2)),
    ):
        root = tmp_path / f"h{zarr_format}"
        with pytest.raises(InvalidKeyError, match=f"limit of {limit} bytes") as info:
            create(root)
        assert "NAME_MAX" in str(info.value)
        assert not root.exists() or not any(root.rglob("*")), zarr_format
    # the longest name the file system takes works
    fits = "f" * (limit - len(".group.json"))
    zarrx.create_group(str(tmp_path / "ok"), path=fits, zarr_format="3-draft")
    assert zarrx.open_group(str(tmp_path / "ok"), path=fits).path == fits


def test_set_refuses_names_over_the_limit(root: Path) -> None:
    store = LocalStore(root)
    limit = os.pathconf(root.parent, "PC_NAME_MAX")
    with pytest.raises(InvalidKeyError, match="NAME_MAX"):
        store.set("a/" + "é" * (limit // 2 + 1), b"x")  # characters of 2 bytes each
    assert store.list() == []


def test_updates_that_write_nothing_prune_while_others_make_the_same_directories(
    root: Path,
) -> None:
    """An update that leaves no key prunes the directories its lock made, while other
    threads make the same directories for their lock and temporary files: none fails."""
    store = LocalStore(root)

    def work(n: int) -> None:
        for i in range(150):
            key = f"c/{i % 3}/0/1/{n}"
            store.atomic_update(key, (lambda old: None) if (i + n) % 2 else (lambda old: b"v"))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    assert all(v == b"v" for v in _files(root).values())
    assert store.list() == sorted(_files(root))  # no lock or temporary file left


def test_make_directory_tolerates_a_concurrent_prune(tmp_path, monkeypatch):
    """makedirs(exist_ok=True) raises FileExistsError when the directory is pruned between
    mkdir's "exists" and its own check (seen in CI with concurrent lock-file clean-up):
    that is a race for the caller's next attempt, while a file in the way stays an error."""
    from zarrx.stores import locks

    target = tmp_path / "a" / "b"

    def pruned_meanwhile(path, exist_ok=False):
        raise FileExistsError(17, "File exists", str(path))

    monkeypatch.setattr(locks.os, "makedirs", pruned_meanwhile)
    assert locks.make_directory(str(target)) is False
    monkeypatch.undo()
    assert locks.make_directory(str(target)) is True
    assert target.is_dir()
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(FileExistsError):
        locks.make_directory(str(tmp_path / "file"))


@pytest.mark.parametrize(
    "value",
    [
        np.arange(12, dtype=">f4").reshape(3, 4),  # several dimensions, one buffer
        np.arange(24, dtype="<i8").reshape(4, 6)[:, ::2],  # strided: copied first
        np.zeros(3, dtype="i4,f8"),  # a record format memoryview cannot cast
        np.float64(2.5),  # zero dimensions
        bytearray(b"xyz"),
        memoryview(b"0123456789")[2:7],
        b"",
    ],
    ids=["2d", "strided", "records", "scalar", "bytearray", "memoryview", "empty"],
)
def test_set_writes_the_bytes_of_any_buffer(root: Path, value: object) -> None:
    store = LocalStore(root)
    expected = np.asarray(value).tobytes() if isinstance(value, np.ndarray | np.generic) else (
        bytes(value))  # type: ignore[call-overload]
    store.set("a/b", value)  # type: ignore[arg-type]
    assert store.get("a/b") == expected
    assert (root / "a" / "b").read_bytes() == expected
    assert [p.name for p in (root / "a").iterdir()] == ["b"]  # no temporary file left


# -- writes through openat2 ------------------------------------------------------------------


def test_writes_use_openat2_without_path_checks(
    root: Path, fence: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(root)
    store.set("a/b/first", b"made the directories")  # absent directories: the checked path
    if fence == "openat2":
        def refuse(*args: object) -> None:
            raise AssertionError("written through the checked path")

        for name in ("_path", "_has_link", "_open_temp"):
            monkeypatch.setattr(LocalStore, name, refuse)
        monkeypatch.setattr(local_module.os, "replace", refuse)
    big = np.arange(3 << 18, dtype="<i4")  # 3 MiB
    values = {
        "a/b/k": b"v",
        "a/b/empty": b"",
        "a/b/big": big,
        "a/b/strided": big[::3],  # not contiguous: written as its bytes
        "top": bytearray(b"at the root"),
    }
    for key, value in values.items():
        store.set(key, value)
    store.set("a/b/k", b"overwritten")
    for key, value in values.items():
        stored = value.tobytes() if isinstance(value, np.ndarray) else bytes(value)
        expected = b"overwritten" if key == "a/b/k" else stored
        assert store.get(key) == expected
    assert not [p for p in root.rglob("*") if p.name.startswith(TEMP_PREFIX)]


def test_links_inside_the_store_are_written_through_as_before(root: Path, fence: str) -> None:
    """A link to a directory inside the root is written through (a relative one in the
    kernel, an absolute one by the checks); a key that is itself a link is replaced by the
    value, never written through."""
    (root / "real").mkdir()
    (root / "real" / "k").write_bytes(b"old")
    (root / "relative").symlink_to("real", target_is_directory=True)
    (root / "absolute").symlink_to(root / "real", target_is_directory=True)
    (root / "alias").symlink_to("real/k")
    store = LocalStore(root)
    store.set("relative/k", b"through relative")
    assert (root / "real" / "k").read_bytes() == b"through relative"
    store.set("absolute/j", b"through absolute")
    assert (root / "real" / "j").read_bytes() == b"through absolute"
    store.set("alias", b"replaces the link")
    assert not (root / "alias").is_symlink()
    assert (root / "alias").read_bytes() == b"replaces the link"
    assert (root / "real" / "k").read_bytes() == b"through relative"


def test_a_write_that_fails_midway_leaves_the_old_value_and_no_temporary_file(
    root: Path, fence: str
) -> None:
    """The file size limit (``RLIMIT_FSIZE``, in a child process) fails the write itself."""
    import subprocess
    import sys

    store = LocalStore(root)
    store.set("a/k", b"old")
    script = (
        "import resource, signal, sys\n"
        "import zarrx.stores.local as local\n"
        "from zarrx.errors import StoreError\n"
        "local.use_openat2 = sys.argv[2] == 'openat2'\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    local.LocalStore(sys.argv[1]).set('a/k', b'x' * 5000)\n"
        "except StoreError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(root), fence],
                         capture_output=True, text=True, check=True).stdout
    assert "cannot write key 'a/k'" in out
    assert "File too large" in out
    assert _files(root) == {"a/k": b"old"}


def test_concurrent_writers_of_one_key_leave_one_whole_value(root: Path, fence: str) -> None:
    """Writers replacing one key while a reader reads it: the reader meets one whole value
    every time."""
    store = LocalStore(root)
    values = [bytes([i]) * (1000 * (i + 1)) for i in range(8)]
    store.set("d/k", values[0])
    seen: list[bytes | None] = []
    stop = threading.Event()

    def write(value: bytes) -> None:
        for _ in range(30):
            store.set("d/k", value)

    def read() -> None:
        while not stop.is_set():
            seen.append(store.get("d/k"))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(write, values))
    finally:
        stop.set()
        reader.join()
    assert store.get("d/k") in values
    assert seen
    assert all(value in values for value in seen)  # never a part, never absent
    assert _files(root) == {"d/k": store.get("d/k")}  # no temporary file left


def test_a_kernel_without_openat2_writes_through_the_checks(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    monkeypatch.setattr(local_module, "use_openat2", True)
    monkeypatch.setattr(local_module, "write_beneath",
                        lambda *args: (local_module.WRITE_DIRECTORY, errno.ENOSYS))
    (root / "d").mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    store = LocalStore(root)
    store.set("d/k", b"v")
    assert local_module.use_openat2 is False
    assert (root / "d" / "k").read_bytes() == b"v"
    with pytest.raises(InvalidKeyError):
        store.set("link/secret", b"overwritten")
    assert (outside / "secret").read_bytes() == b"precious"


def test_temporary_names_differ_in_a_forked_child(root: Path) -> None:
    parent = local_module._temp_name()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its first name
        os.write(write, local_module._temp_name().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 200).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert parent.startswith(TEMP_PREFIX)
    assert child.startswith(TEMP_PREFIX)
    assert parent.rsplit("-", 1)[0] != child.rsplit("-", 1)[0]


# -- values written in parts -------------------------------------------------------------------


def test_set_parts_writes_the_parts_one_after_the_other(
    root: Path, fence: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through either write path, the parts are written as they are (never joined first:
    ``bytes.join`` is refused) and atomically (no temporary file left), over an old value."""
    store = LocalStore(root)
    store.set("a/b/k", b"old value")
    parts = [os.urandom(70000), b"", bytearray(b"middle"), memoryview(b"0123456789")[2:7],
             np.arange(6, dtype="<u2"), os.urandom(20)]
    expected = b"".join(bytes(memoryview(p).cast("B")) for p in parts)  # type: ignore[arg-type]
    written: list[int] = []  # how many buffers each write was given

    def spy(name: str, at: int) -> None:
        real = getattr(local_module if name == "write_beneath" else local_module.splice, name)

        def wrapper(*args: Any) -> Any:
            written.append(len(args[at]))
            return real(*args)

        monkeypatch.setattr(local_module if name == "write_beneath" else local_module.splice,
                            name, wrapper)

    spy("write_beneath", 4)
    spy("write_run", 1)
    store.set_parts("a/b/k", parts)  # type: ignore[arg-type]
    assert store.get("a/b/k") == expected
    assert written[-1] == len(parts)
    store.set_parts("a/new/k", [b"x", b"y"])  # absent directories: made
    assert store.get("a/new/k") == b"xy"
    store.set_parts("a/b/k", [])
    assert store.get("a/b/k") == b""
    assert not [p for p in root.rglob("*") if p.name.startswith(TEMP_PREFIX)]
    with pytest.raises(TypeError):
        store.set_parts("a/b/k", [b"x", "text"])  # type: ignore[list-item]
    assert store.get("a/b/k") == b""
    with pytest.raises(ReadOnlyError):
        LocalStore(root, read_only=True).set_parts("a/b/k", [b"x"])


def test_set_parts_refuses_keys_outside_the_root(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    store = LocalStore(root)
    with pytest.raises(InvalidKeyError):
        store.set_parts("link/k", [b"x"])
    with pytest.raises(InvalidKeyError):
        store.set_parts("../k", [b"x"])
    assert not list(outside.iterdir())


def test_a_large_value_holds_the_file_it_replaces_for_a_later_close(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Freeing a replaced file waits for its writeback on ext4: a write of a large value
    (through openat2) holds the old file open across the rename and leaves its last close
    to ``close_later``; small values, and absent keys, hold nothing."""
    if not (local_module.use_openat2 and _openat2_works(root)):
        pytest.skip("this kernel has no openat2")
    store = LocalStore(root)
    big = os.urandom(splice_module.CLOSE_LATER)
    store.set("a/k", big)
    old_inode = (root / "a" / "k").stat().st_ino
    closed: list[tuple[int, int, int]] = []
    real = splice_module.close_later

    def spy(fd: int, size: int) -> None:
        closed.append((os.fstat(fd).st_ino, os.fstat(fd).st_nlink, size))
        real(fd, size)

    monkeypatch.setattr(splice_module, "close_later", spy)
    store.set_parts("a/k", [big[:10], big[10:]])
    assert closed == [(old_inode, 0, len(big))]  # the old file, unlinked by the rename
    assert store.get("a/k") == big
    store.set("a/k", b"small")  # a small value: nothing held
    store.set("a/absent", big)  # nothing to hold
    store.set("a/k", big)  # over a small file: nothing held
    assert len(closed) == 1
    assert store.get("a/k") == big
    assert store.get("a/absent") == big


def test_whole_writes_take_the_lock_updates_take(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``atomic_set_parts`` — in one call without the GIL (``write_locked_beneath``) where
    the kernel has open file description locks and ``openat2``, else in Python — takes the
    very lock ``atomic_update`` takes: a whole write waits for an update holding the key's
    lock, and lands after it; no lock file is left."""
    from zarrx.stores import locks

    calls: list[bytes] = []
    real = local_module.write_locked_beneath

    def spy(dirfd: int, directory: bytes, name: bytes, lock: bytes, data: Any) -> Any:
        calls.append(name)
        return real(dirfd, directory, name, lock, data)

    monkeypatch.setattr(local_module, "write_locked_beneath", spy)
    store = LocalStore(root)
    store.set("a/k", b"old")
    inside, release, written = threading.Event(), threading.Event(), threading.Event()

    def update(old: bytes | None) -> bytes:
        inside.set()
        release.wait(timeout=60)
        return b"updated"

    updater = threading.Thread(target=store.atomic_update, args=("a/k", update))
    updater.start()
    assert inside.wait(timeout=60)

    def whole() -> None:
        store.atomic_set_parts("a/k", [b"wh", b"ole"])
        written.set()

    writer = threading.Thread(target=whole)
    writer.start()
    assert not written.wait(timeout=0.5)  # it waits for the lock (no deadline is tested)
    release.set()
    updater.join(timeout=60)
    writer.join(timeout=60)
    assert written.is_set()
    assert store.get("a/k") == b"whole"  # after the update, never under it
    assert sorted(p.name for p in (root / "a").iterdir()) == ["k"]
    assert calls == ([b"k"] if locks.OFD and local_module.use_openat2 else [])
