"""The asyncio API (``zarrx.api.asynchronous``, ``AsyncArray``, ``AsyncGroup``): the same
results as the synchronous API, zarr-python's names, and an event loop that keeps running
its other tasks while an array is read or written."""

from __future__ import annotations

import asyncio
import inspect
import threading
from typing import Any

import numpy as np
import pytest
import zarr.api.asynchronous as zarr_async
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zarrx
import zarrx.api.asynchronous as async_api
from zarrx import AsyncArray, AsyncGroup
from zarrx.stores.memory import MemoryStore


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_names_are_zarr_pythons() -> None:
    from zarrx.api import asynchronous

    assert asynchronous is async_api is zarrx.api.asynchronous
    ours = set(async_api.__all__)
    theirs = {name for name in zarr_async.__all__ if inspect.iscoroutinefunction(
        getattr(zarr_async, name))}
    assert len(theirs) > 20
    assert theirs <= ours
    for name in ours - {"AsyncArray", "AsyncGroup"}:
        function = getattr(async_api, name)
        assert inspect.iscoroutinefunction(function), name
        # the synchronous function's keywords, as zarr-python's are its own
        assert inspect.signature(function) == inspect.signature(function.__wrapped__)


@settings(max_examples=40, deadline=None)
@given(
    data=hnp.arrays("i2", hnp.array_shapes(min_dims=1, max_dims=3, max_side=9)),
    chunk=st.integers(1, 4),
    index=st.data(),
)
def test_getitem_and_setitem_equal_the_synchronous_array(
    data: np.ndarray, chunk: int, index: st.DataObject
) -> None:
    selection = index.draw(hnp.basic_indices(data.shape, allow_newaxis=True))
    store = MemoryStore()
    chunks = tuple(min(chunk, max(n, 1)) for n in data.shape)

    async def main() -> tuple[Any, Any]:
        a = await async_api.create_array(store, shape=data.shape, dtype="i2", chunks=chunks)
        await a.setitem(Ellipsis, data)
        got = await a.getitem(selection)
        await a.setitem(selection, -7)
        return got, await a.getitem(Ellipsis)

    got, after = run(main())
    np.testing.assert_array_equal(got, data[selection])
    expected = data.copy()
    expected[selection] = -7
    np.testing.assert_array_equal(after, expected)
    np.testing.assert_array_equal(zarrx.open_array(store)[...], expected)


def test_array_selections_and_changes() -> None:
    data = np.arange(60, dtype="f4").reshape(6, 10)

    async def main() -> None:
        a = await async_api.from_array(MemoryStore(), data=data, chunks=(4, 4))
        assert isinstance(a, AsyncArray)
        assert (a.shape, a.dtype, a.chunks, a.ndim, a.nchunks) == (data.shape, data.dtype,
                                                                  (4, 4), 2, 6)
        np.testing.assert_array_equal(await a.oindex.getitem(([0, 5], [1, 9])),
                                      data[np.ix_([0, 5], [1, 9])])
        np.testing.assert_array_equal(await a.vindex.getitem(([0, 5], [1, 9])),
                                      data[[0, 5], [1, 9]])
        np.testing.assert_array_equal(await a.blocks.getitem((1, 2)), data[4:, 8:])
        np.testing.assert_array_equal(await a.get_orthogonal_selection((slice(1, 3), [2])),
                                      data[1:3, [2]])
        await a.set_coordinate_selection(([0, 1], [0, 1]), [-1, -2])
        assert (await a.getitem((1, 1))) == -2
        await a.resize(8, 10)
        assert a.shape == (8, 10)
        await a.append(np.ones((2, 10), "f4"))
        assert a.shape == (10, 10)
        await a.update_attributes({"units": "m"})
        assert a.attrs == {"units": "m"}
        assert await a.nchunks_initialized() == 9  # the appended rows' chunks
        assert await a.nbytes_stored() > 0
        like = await async_api.zeros_like(a, store=MemoryStore())
        assert isinstance(like, AsyncArray)
        assert like.shape == a.shape

    run(main())


def test_groups() -> None:
    async def main() -> None:
        store = MemoryStore()
        g = await async_api.open_group(store, mode="w")
        assert isinstance(g, AsyncGroup)
        sub = await g.create_group("sub", attributes={"k": 1})
        await sub.create_array("x", shape=(3,), dtype="u1", chunks=(2,))
        await g.zeros(name="z", shape=(2, 2), chunks=(1, 1))
        assert await g.contains("sub")
        assert not await g.contains("nope")
        assert [name async for name in g.keys()] == ["sub", "z"]  # noqa: SIM118 - async
        assert [name async for name in g.array_keys()] == ["z"]
        assert [name async for name, _ in g.groups()] == ["sub"]
        members = {name: type(node) async for name, node in g.members(max_depth=None)}
        assert members == {"sub": AsyncGroup, "sub/x": AsyncArray, "z": AsyncArray}
        assert await g.nmembers(max_depth=None) == 3
        x = await g.getitem("sub/x")
        assert isinstance(x, AsyncArray)
        assert x.path == "sub/x"
        assert (await g.getitem("sub")).attrs == {"k": 1}
        assert await g.get("missing", 5) == 5
        await g.delitem("z")
        assert not await g.contains("z")
        node = await async_api.open(store, mode="r")
        assert isinstance(node, AsyncGroup)
        assert node.read_only
        assert isinstance(await async_api.open(store, path="sub/x", mode="r"), AsyncArray)
        assert "x" in str(await g.tree())
        again = await AsyncGroup.open(store)
        assert again == g

    run(main())


def test_errors_are_the_synchronous_ones() -> None:
    async def main() -> None:
        a = await async_api.zeros(shape=(4,), store=MemoryStore(), chunks=(2,), dtype="i4")
        with pytest.raises(IndexError):
            await a.getitem(9)
        with pytest.raises(zarrx.errors.ZarrxError):
            await async_api.open_array(MemoryStore(), mode="r")

    run(main())


class PacedStore(MemoryStore):
    """A store whose every chunk read and write waits until the event loop's ticker has
    ticked once more (at most ``patience`` seconds): it counts the chunk operations that
    saw the loop keep running while they were in flight."""

    def __init__(self, ticks: list[int], patience: float) -> None:
        super().__init__()
        self.ticks = ticks
        self.patience = patience
        self.ticked = 0
        self.stalled = 0
        self._count = threading.Lock()

    def _wait_for_a_tick(self, key: str) -> None:
        if "/c/" not in "/" + key:
            return  # documents: not the work measured
        start = self.ticks[0]
        waited = 0.0
        while self.ticks[0] == start and waited < self.patience:
            threading.Event().wait(0.001)
            waited += 0.001
        with self._count:
            if self.ticks[0] > start:
                self.ticked += 1
            else:
                self.stalled += 1

    def get(self, key: str, byte_range: Any = None) -> bytes | None:
        self._wait_for_a_tick(key)
        return super().get(key, byte_range)

    def set(self, key: str, value: Any) -> None:
        self._wait_for_a_tick(key)
        super().set(key, value)


async def _ticker(ticks: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        ticks[0] += 1
        await asyncio.sleep(0)


def test_the_event_loop_keeps_running_while_an_array_is_read_and_written() -> None:
    """Every chunk written and read saw the loop tick meanwhile (ticks >= chunks)."""
    ticks = [0]
    store = PacedStore(ticks, patience=30.0)
    data = np.arange(64 * 64, dtype="f8").reshape(64, 64)

    async def main() -> int:
        stop = asyncio.Event()
        ticker = asyncio.create_task(_ticker(ticks, stop))
        a = await async_api.create_array(store, shape=data.shape, dtype="f8", chunks=(8, 8))
        await a.setitem(Ellipsis, data)
        np.testing.assert_array_equal(await a.getitem(Ellipsis), data)
        stop.set()
        await ticker
        return a.nchunks

    nchunks = run(main())
    assert store.stalled == 0
    assert store.ticked == 2 * nchunks  # each chunk written, then read
    assert ticks[0] >= 2 * nchunks


def test_the_pacing_store_sees_a_blocked_loop() -> None:
    """The same check fails when the loop is blocked: the synchronous API called inside a
    coroutine lets no tick through while it reads."""
    ticks = [0]
    store = PacedStore(ticks, patience=0.02)
    zarrx.create_array(store, shape=(4, 4), dtype="u1", chunks=(2, 2))[...] = 1
    store.ticked = store.stalled = 0

    async def main() -> None:
        stop = asyncio.Event()
        ticker = asyncio.create_task(_ticker(ticks, stop))
        await asyncio.sleep(0)
        zarrx.open_array(store)[...]  # blocks the loop
        stop.set()
        await ticker

    run(main())
    assert store.stalled == 4
    assert store.ticked == 0
