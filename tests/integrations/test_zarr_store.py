"""ZarrxStore: a zarrx store as a zarr-python store. Every operation is compared with
zarr-python's own MemoryStore on random sequences of operations (hypothesis), and
zarr-python's arrays and groups work on it."""

from __future__ import annotations

import asyncio
import pickle
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st
from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync

import zarrx
from zarrx.integrations.zarr_store import ZarrxStore, as_zarr_store
from zarrx.stores.local import LocalStore
from zarrx.stores.memory import MemoryStore

PROTOTYPE = default_buffer_prototype()

pytestmark = pytest.mark.filterwarnings(
    "ignore:Consolidated metadata is currently not part:UserWarning"  # zarr-python, writing v3
)

KEYS = st.sampled_from(["zarr.json", "a/zarr.json", "a/c/0", "a/c/1", "a/b/c/0", "b"])
# Values are empty or longer than any suffix drawn: zarr-python's MemoryStore answers a
# suffix longer than the value with its last len(value) - suffix bytes (a negative start),
# where zarrx gives the whole value, as HTTP's "Range: bytes=-N" does (tested below).
VALUES = st.one_of(st.just(b""), st.binary(min_size=51, max_size=90))
RANGES = st.one_of(
    st.none(),
    st.builds(lambda s, n: RangeByteRequest(s, s + n), st.integers(0, 50), st.integers(0, 50)),
    st.builds(OffsetByteRequest, st.integers(0, 50)),
    st.builds(SuffixByteRequest, st.integers(0, 50)),
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), KEYS, VALUES),
        st.tuples(st.just("set_if_not_exists"), KEYS, VALUES),
        st.tuples(st.just("delete"), KEYS),
        st.tuples(st.just("delete_dir"), st.sampled_from(["", "a", "a/", "a/b"])),
    ),
    max_size=12,
)


async def _apply(store: Any, op: tuple[Any, ...]) -> None:
    name, key, *value = op
    if name in ("set", "set_if_not_exists"):
        await getattr(store, name)(key, PROTOTYPE.buffer.from_bytes(value[0]))
    else:
        await getattr(store, name)(key)


async def _observe(store: Any, reads: list[tuple[str, Any]]) -> dict[str, Any]:
    def as_bytes(buffer: Any) -> bytes | None:
        return None if buffer is None else buffer.to_bytes()

    async def listed(iterator: Any) -> list[str]:
        return sorted([k async for k in iterator])

    return {
        "gets": [as_bytes(await store.get(k, PROTOTYPE, r)) for k, r in reads],
        "partial": [as_bytes(b) for b in await store.get_partial_values(PROTOTYPE, reads)],
        "exists": [await store.exists(k) for k, _ in reads],
        "list": await listed(store.list()),
        "prefixes": {p: await listed(store.list_prefix(p)) for p in ("", "a/", "a/b/")},
        "dirs": {p: await listed(store.list_dir(p)) for p in ("", "a", "a/", "a/b")},
        "empty": {p: await store.is_empty(p) for p in ("", "a", "b/")},
    }


@settings(max_examples=60, deadline=None)
@given(ops=OPS, reads=st.lists(st.tuples(KEYS, RANGES), max_size=6))
def test_behaves_as_zarr_pythons_memory_store(ops: list[Any], reads: list[Any]) -> None:
    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        theirs = zarr.storage.MemoryStore()
        ours = ZarrxStore(MemoryStore())
        for op in ops:
            await _apply(theirs, op)
            await _apply(ours, op)
        return await _observe(theirs, reads), await _observe(ours, reads)

    theirs, ours = sync(run())
    assert ours == theirs


def test_a_suffix_longer_than_the_value_is_the_whole_value() -> None:
    store = ZarrxStore(MemoryStore())
    sync(store.set("k", PROTOTYPE.buffer.from_bytes(b"abc")))
    assert sync(store.get("k", PROTOTYPE, SuffixByteRequest(10))).to_bytes() == b"abc"  # type: ignore[union-attr]
    assert sync(store.get("k", PROTOTYPE, SuffixByteRequest(2))).to_bytes() == b"bc"  # type: ignore[union-attr]


def test_set_if_not_exists_is_one_atomic_update(tmp_path: Path) -> None:
    """Writers racing to create one key: the first value stays, none is replaced (zarr-
    python's default checks then writes, and a later writer can replace an earlier one)."""
    store = ZarrxStore(LocalStore(tmp_path))
    values = [bytes([i]) * 8 for i in range(16)]
    written: list[bytes] = []
    seen = threading.Lock()

    real_set = store.store.set

    def set_once(key: str, value: Any) -> None:
        with seen:
            written.append(bytes(value))
        real_set(key, value)

    store.store.set = set_once  # type: ignore[method-assign]

    async def race() -> None:
        await asyncio.gather(*(
            store.set_if_not_exists("k", PROTOTYPE.buffer.from_bytes(v)) for v in values
        ))

    sync(race())
    assert len(written) == 1  # one writer created it; every other found it there
    assert store.store.get("k") == written[0]


def test_zarr_python_arrays_and_groups_on_it(tmp_path: Path) -> None:
    root = zarr.open_group(as_zarr_store(tmp_path / "g.zarr"), mode="w")
    z = root.create_array("x", shape=(10, 7), chunks=(4, 3), shards=(8, 6), dtype="f8",
                          attributes={"units": "m"})
    data = np.arange(70.0).reshape(10, 7)
    z[...] = data
    z[3:9, 2] = -1  # partial chunks and shards: zarr-python's read-modify-write, through zarrx
    data[3:9, 2] = -1
    back = zarrx.open_array(tmp_path / "g.zarr", path="x", mode="r")
    np.testing.assert_array_equal(back[...], data)
    assert back.shards == (8, 6)
    assert dict(back.attrs) == {"units": "m"}
    # zarr-python's own LocalStore reads what went through zarrx
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "g.zarr", path="x")[...], data)
    zarr.consolidate_metadata(as_zarr_store(tmp_path / "g.zarr"))
    assert list(zarr.open_group(tmp_path / "g.zarr", mode="r").array_keys()) == ["x"]
    assert sync(as_zarr_store(tmp_path / "g.zarr").getsize("x/zarr.json")) == (
        tmp_path / "g.zarr" / "x" / "zarr.json").stat().st_size


def test_as_zarr_store_takes_what_zarrx_opens(tmp_path: Path) -> None:
    local = as_zarr_store(tmp_path / "p.zarr")
    assert isinstance(local, ZarrxStore)
    assert isinstance(local.store, LocalStore)
    assert isinstance(as_zarr_store(str(tmp_path / "p.zarr")).store, LocalStore)  # type: ignore[attr-defined]
    assert as_zarr_store("memory://zarr-store-test").store == MemoryStore.from_url(  # type: ignore[attr-defined]
        "memory://zarr-store-test")
    g = zarrx.create_group(MemoryStore())
    assert as_zarr_store(g).store is g.store  # type: ignore[attr-defined]
    theirs = zarr.storage.MemoryStore()
    assert as_zarr_store(theirs) is theirs
    assert as_zarr_store(zarrx.storage.ZarrPythonStore(theirs)) is theirs
    read_only = as_zarr_store(tmp_path / "p.zarr", read_only=True)
    assert read_only.read_only
    assert read_only.store.read_only  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="read-only"):
        sync(read_only.set("k", PROTOTYPE.buffer.from_bytes(b"x")))
    with pytest.raises(TypeError, match="zarrx store"):
        ZarrxStore(theirs)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="storage_options"):
        as_zarr_store(MemoryStore(), storage_options={"anon": True})


def test_keys_stay_inside_the_root(tmp_path: Path) -> None:
    store = as_zarr_store(tmp_path / "root")
    with pytest.raises(zarrx.errors.InvalidKeyError):
        sync(store.set("../outside", PROTOTYPE.buffer.from_bytes(b"x")))
    assert not (tmp_path / "outside").exists()


def test_pickles_with_its_store(tmp_path: Path) -> None:
    store = as_zarr_store(tmp_path / "p.zarr")
    sync(store.set("k", PROTOTYPE.buffer.from_bytes(b"v")))
    copy = pickle.loads(pickle.dumps(store))
    assert copy == store
    assert sync(copy.get("k", PROTOTYPE)).to_bytes() == b"v"  # type: ignore[union-attr]
