"""zarrx.config: the keyword and dict forms, zarr-python's key names, and one meaning of
``write_empty_chunks`` whichever way it is set (zarr-python's arrays as the oracle)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st
from zarr.core.array_spec import ArrayConfig

import zarrx
from zarrx import config
from zarrx.errors import ArgumentError, NodeTypeError


@pytest.fixture(autouse=True)
def _defaults() -> Iterator[None]:
    yield
    config.reset()


# -- the dict form and zarr-python's names ----------------------------------------------------

def test_the_dict_form_is_the_keyword_form() -> None:
    threads = config.get("threads")
    with config.set({"threads": 1, "batch_chunks": 7}):
        assert (config.get("threads"), config.get("batch_chunks")) == (1, 7)
    assert config.get("threads") == threads
    config.set({"threads": 2}, write_empty_chunks=True)
    assert (config.get("threads"), config.get("write_empty_chunks")) == (2, True)


@pytest.mark.parametrize(("key", "value", "name", "expected"), [
    ("array.write_empty_chunks", True, "write_empty_chunks", True),
    ("array.target_shard_size_bytes", 1 << 20, "target_shard_size_bytes", 1 << 20),
    ("async.concurrency", 3, "threads", 3),
    ("threading.max_workers", 5, "threads", 5),
])
def test_zarr_pythons_keys_flat_and_nested(key: str, value: Any, name: str,
                                           expected: Any) -> None:
    before = config.get(name)
    with config.set({key: value}):
        assert config.get(name) == expected
    assert config.get(name) == before
    head, tail = key.split(".")
    with config.set({head: {tail: value}}):
        assert config.get(name) == expected


def test_the_names_are_zarr_pythons() -> None:
    """Every zarr-python key zarrx takes or explains is one of zarr-python 3.1's."""
    missing = object()
    for key in [*config.ZARR_PYTHON_KEYS, *config.NO_MEANING]:
        assert zarr.config.get(key, missing) is not missing, key


def test_max_workers_none_is_the_default() -> None:
    config.set(threads=1)
    with config.set({"threading.max_workers": None}):
        assert config.get("threads") == config._DEFAULTS["threads"]


@pytest.mark.parametrize("key", sorted(config.NO_MEANING))
def test_zarr_pythons_keys_without_a_meaning_say_why(key: str) -> None:
    with pytest.raises(ArgumentError, match=f"zarr-python's setting '{key}[^']*' has no zarrx"):
        config.set({f"{key}.x" if key in ("codecs", "codec_pipeline") else key: 1})


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=12), st.integers(), min_size=1,
                       max_size=3))
def test_a_refused_key_or_value_changes_nothing(values: dict[str, int]) -> None:
    before = {name: config.get(name) for name in config._DEFAULTS}
    with pytest.raises(ValueError, match=r"setting|threads|twice|keys are strings"):
        config.set({**values, "threads": 0})
    assert {name: config.get(name) for name in config._DEFAULTS} == before


def test_one_setting_given_twice_differently() -> None:
    with pytest.raises(ArgumentError, match="'threads' is given twice"):
        config.set({"async.concurrency": 2, "threading.max_workers": 3})
    with config.set({"async.concurrency": 2, "threading.max_workers": 2}):
        assert config.get("threads") == 2


def test_unknown_keys_name_the_known_ones() -> None:
    with pytest.raises(ArgumentError, match=r"unknown zarrx setting 'thread'.*threads.*"
                                            r"async\.concurrency"):
        config.set(thread=1)
    with pytest.raises(ArgumentError, match="write_empty_chunks must be True or False"):
        config.set({"array.write_empty_chunks": "yes"})


# -- write_empty_chunks: one meaning -------------------------------------------------------------

SHAPE, CHUNKS = (6, 4), (2, 2)


def _made(path: Path, sharded: bool, **kw: Any) -> zarrx.Array:
    shards = {"shards": (2, 4)} if sharded else {}
    return zarrx.create_array(str(path), shape=SHAPE, chunks=CHUNKS, dtype="i4",
                              **shards, **kw)


#: Ways to ask for chunks equal to the fill value to be stored, each giving an Array to
#: write through (and the global setting left at False unless the way is the global one).
WAYS: dict[str, Callable[[Path, bool], Any]] = {
    "create_array(config=)": lambda p, s: _made(p, s, config={"write_empty_chunks": True}),
    "create(write_empty_chunks=)": lambda p, s: zarrx.create(
        SHAPE, store=str(p), chunks=CHUNKS, dtype="i4", write_empty_chunks=True,
        **({"shards": (2, 4)} if s else {})),
    "zeros(config=)": lambda p, s: zarrx.zeros(
        SHAPE, store=str(p), chunks=CHUNKS, dtype="i4", config={"write_empty_chunks": True},
        **({"shards": (2, 4)} if s else {})),
    "zarr-python ArrayConfig": lambda p, s: _made(
        p, s, config=ArrayConfig(order="C", write_empty_chunks=True)),
    "open_array(config=)": lambda p, s: (_made(p, s), zarrx.open_array(
        str(p), config={"write_empty_chunks": True}))[1],
    "open(write_empty_chunks=)": lambda p, s: (_made(p, s), zarrx.open(
        str(p), write_empty_chunks=True))[1],
    "with_config": lambda p, s: _made(p, s).with_config({"write_empty_chunks": True}),
    "group.create_array(config=)": lambda p, s: zarrx.open_group(str(p), mode="w")
        .create_array("x", shape=SHAPE, chunks=CHUNKS, dtype="i4",
                      config={"write_empty_chunks": True},
                      **({"shards": (2, 4)} if s else {})),
}


def _stored_chunks(path: Path) -> set[str]:
    return {str(f.relative_to(path)) for f in path.rglob("*")
            if f.is_file() and f.name != "zarr.json"}


@pytest.mark.parametrize("sharded", [False, True], ids=["chunks", "shards"])
@pytest.mark.parametrize("way", sorted(WAYS))
def test_every_way_means_what_the_global_setting_means(way: str, sharded: bool,
                                                       tmp_path: Path) -> None:
    """Writing fill values (whole chunks, then a part) stores what it stores with
    ``zarrx.config.set(write_empty_chunks=True)``, and what zarr-python stores."""
    zeros = np.zeros(SHAPE, "i4")
    reference = _made(tmp_path / "reference", sharded)
    with config.set(write_empty_chunks=True):
        reference[...] = zeros
        reference[:2, :2] = 0
    array = WAYS[way](tmp_path / "way", sharded)
    array[...] = zeros
    array[:2, :2] = 0
    theirs = zarr.create_array(str(tmp_path / "zarr"), shape=SHAPE, chunks=CHUNKS, dtype="i4",
                               shards=(2, 4) if sharded else None,
                               config={"write_empty_chunks": True})
    theirs[...] = zeros
    expected = _stored_chunks(tmp_path / "reference")
    assert expected == _stored_chunks(tmp_path / "zarr")
    root = tmp_path / "way" / ("x" if way.startswith("group") else "")
    assert _stored_chunks(root) == expected
    assert expected  # (the probe can fail: without the setting nothing is stored)
    plain = _made(tmp_path / "plain", sharded)
    plain[...] = zeros
    assert _stored_chunks(tmp_path / "plain") == set()


def test_an_arrays_own_false_wins_over_the_global_true(tmp_path: Path) -> None:
    a = _made(tmp_path, False, config={"write_empty_chunks": False})
    with config.set(write_empty_chunks=True):
        a[...] = 0
        a.lazy[:2][...] = 0  # (a view writes through its array's settings)
    assert _stored_chunks(tmp_path) == set()


def test_config_refusals_come_before_anything_is_written(tmp_path: Path) -> None:
    for bad, message in [({"write_empty_chunk": True}, "unknown array config key"),
                         ({"write_empty_chunks": 1}, "must be True or False"),
                         ({"order": "F"}, "C-ordered"), ("fast", "must be a dict")]:
        with pytest.raises(ArgumentError, match=message):
            zarrx.create_array(str(tmp_path / "a"), shape=(4,), dtype="u1", config=bad)
        assert not (tmp_path / "a").exists()
    with pytest.raises(ArgumentError, match="differ; pass one"):
        zarrx.create((4,), write_empty_chunks=True, config={"write_empty_chunks": False})


def test_a_group_has_no_array_settings(tmp_path: Path) -> None:
    zarrx.create_group(str(tmp_path))
    with pytest.raises(ArgumentError, match="settings of an array; the node at '/' is a group"):
        zarrx.open(str(tmp_path), config={"write_empty_chunks": True})
    with pytest.raises(NodeTypeError):
        zarrx.open_array(str(tmp_path), config={"write_empty_chunks": True})
