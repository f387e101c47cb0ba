"""Opening a path with no node: zarr-python 3.1's behaviour where it is safe (mode ``a``
makes a group where nothing is stored), never a group written into a directory that holds
other things unasked, and a path that does not exist said to be so in modes ``r``/``r+``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zarr

import zarrx
from zarrx.errors import ArgumentError, NodeExistsError, NodeNotFoundError, PathNotFoundError

OPENERS: dict[str, Callable[..., Any]] = {
    "open": zarrx.open,
    "open_group": zarrx.open_group,
    "open_array": zarrx.open_array,
}


def _listing(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize("mode", ["r", "r+"])
@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_a_missing_path_is_said_to_be_missing(tmp_path: Path, opener: str, mode: str) -> None:
    missing = tmp_path / "nope2.zarr"
    with pytest.raises(PathNotFoundError, match=f"'{missing}' does not exist") as e:
        OPENERS[opener](str(missing), mode=mode)
    assert isinstance(e.value, FileNotFoundError)  # as zarr-python's error is
    assert isinstance(e.value, NodeNotFoundError)  # as zarrx's was
    assert not missing.exists()
    with pytest.raises(FileNotFoundError, match="does not exist"):  # zarr-python alike
        zarr.open(str(missing), mode=mode)


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_a_missing_node_inside_a_hierarchy_and_in_any_store(tmp_path: Path, mode: str) -> None:
    zarrx.create_group(str(tmp_path)).create_group("a")
    with pytest.raises(PathNotFoundError, match=f"'{tmp_path / 'a' / 'b'}' does not exist"):
        zarrx.open(str(tmp_path), path="a/b", mode=mode)
    store = zarrx.storage.MemoryStore()
    with pytest.raises(PathNotFoundError, match=r"'/' in MemoryStore\(.*\) does not exist"):
        zarrx.open_group(store, mode=mode)


def test_a_directory_holding_no_node_is_not_said_missing(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(NodeNotFoundError) as e:
        zarrx.open(str(tmp_path), mode="r")
    assert not isinstance(e.value, PathNotFoundError)
    assert "no array or group" in str(e.value)


def test_mode_a_on_a_missing_path_makes_a_group_as_zarr_python(tmp_path: Path) -> None:
    ours = zarrx.open(str(tmp_path / "nope2.zarr"))
    theirs = zarr.open(str(tmp_path / "theirs.zarr"))
    assert isinstance(ours, zarrx.Group)
    assert isinstance(theirs, zarr.Group)
    assert _listing(tmp_path / "nope2.zarr") == _listing(tmp_path / "theirs.zarr")
    assert isinstance(zarrx.open_group(str(tmp_path / "g.zarr")), zarrx.Group)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert isinstance(zarrx.open(str(empty)), zarrx.Group)  # an empty directory: nothing there
    made = zarrx.open_array(str(tmp_path / "a.zarr"), shape=(3,), dtype="i4")
    assert made.shape == (3,)


def test_mode_a_without_shape_on_a_missing_path_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(PathNotFoundError, match="with shape= and dtype= creates an array"):
        zarrx.open_array(str(tmp_path / "nope.zarr"))
    assert not (tmp_path / "nope.zarr").exists()


@pytest.mark.parametrize("maker", ["open", "open_group", "open_array", "group"])
def test_mode_a_never_makes_a_plain_directory_a_group(tmp_path: Path, maker: str) -> None:
    """zarr-python writes zarr.json into any directory in mode ``a``; zarrx refuses."""
    plain = tmp_path / "plain_dir"
    (plain / "raw").mkdir(parents=True)
    (plain / "raw" / "scan.tif").write_bytes(b"\0")
    (plain / "notes.txt").write_text("x")
    before = _listing(plain)
    call = {
        "open": lambda: zarrx.open(str(plain)),
        "open_group": lambda: zarrx.open_group(str(plain)),
        "open_array": lambda: zarrx.open_array(str(plain), shape=(3,), dtype="u1"),
        "group": lambda: zarrx.group(str(plain)),
    }[maker]
    with pytest.raises(NodeExistsError, match=r"plain_dir' holds 'notes.txt', 'raw/' but no "
                                              "Zarr array or group") as e:
        call()
    assert isinstance(e.value, FileExistsError)
    assert "zarrx.create_group" in str(e.value)
    assert _listing(plain) == before


def test_asked_for_explicitly_a_node_goes_there(tmp_path: Path) -> None:
    for name, make in [
        ("w-", lambda p: zarrx.open_group(str(p), mode="w-")),
        ("create_group", lambda p: zarrx.create_group(str(p))),
        ("create_array", lambda p: zarrx.create_array(str(p), shape=(2,), dtype="u1")),
    ]:
        plain = tmp_path / name
        plain.mkdir()
        (plain / "notes.txt").write_text("x")
        make(plain)
        assert sorted(os.listdir(plain)) == ["notes.txt", "zarr.json"]


def test_a_node_below_in_a_directory_is_no_node_here(tmp_path: Path) -> None:
    """A directory of stores (``data/a.zarr``, ``data/b.zarr``) is not made a group."""
    zarrx.create_group(str(tmp_path / "data" / "a.zarr"))
    with pytest.raises(NodeExistsError, match=r"'a\.zarr/'"):
        zarrx.open(str(tmp_path / "data"))
    assert not (tmp_path / "data" / "zarr.json").exists()


def test_open_with_an_unknown_mode_is_still_refused(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="mode"):
        zarrx.open(str(tmp_path / "x"), mode="q")
