"""``AsyncArray`` and ``AsyncGroup``: zarrx's arrays and groups for asyncio code, with
zarr-python 3's names (``await a.getitem(sel)``, ``await a.setitem(sel, v)``,
``await g.getitem("x")``, ``async for name, node in g.members()`` ...).

zarrx's engine is synchronous and parallel (a selection's chunks are read, decoded and
placed by a thread pool, the GIL released). A coroutine here runs the whole blocking call
in a worker thread (``asyncio.to_thread``: the event loop's default executor, which a
service sizes with ``loop.set_default_executor``), so the event loop never waits on a
file, a network or a codec: its other tasks go on while an array is read or written.
Properties (``shape``, ``dtype``, ``chunks``, ``attrs`` ...) come from the parsed
metadata and need no I/O.

A cancelled coroutine stops waiting, but the thread finishes the call it started: a
write then completes (each chunk whole, as ever) or fails on its own.

>>> import asyncio, numpy as np, zarrx
>>> async def main():
...     g = await AsyncGroup.from_store(zarrx.storage.MemoryStore())
...     a = await g.create_array("x", shape=(4, 4), dtype="i4", chunks=(2, 2))
...     await a.setitem((slice(None), 1), np.arange(4))
...     return await (await g.getitem("x")).getitem((slice(None), 1))
>>> asyncio.run(main())
array([0, 1, 2, 3], dtype=int32)
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, ParamSpec, TypeVar

from zarrx.arrays import Array
from zarrx.groups import Group
from zarrx.node import Node

P = ParamSpec("P")
T = TypeVar("T")


def as_async(value: Any) -> Any:
    """An :class:`Array` or :class:`Group` as its asynchronous counterpart; anything else
    as it is."""
    if isinstance(value, Array):
        return AsyncArray(value)
    if isinstance(value, Group):
        return AsyncGroup(value)
    return value


def as_sync(value: Any) -> Any:
    """The synchronous node an :class:`AsyncArray` or :class:`AsyncGroup` wraps; anything
    else as it is (so ``zeros_like(async_array)`` works)."""
    return value._node if isinstance(value, _AsyncNode) else value


async def in_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` run in a worker thread, async nodes among the
    arguments given as their synchronous ones."""
    args = tuple(as_sync(a) for a in args)
    kwargs = {k: as_sync(v) for k, v in kwargs.items()}
    return await asyncio.to_thread(function, *args, **kwargs)


def asynchronous(function: Callable[P, Any]) -> Callable[P, Awaitable[Any]]:
    """The coroutine function of a blocking zarrx function: same name, signature and
    documentation; run in a worker thread; nodes returned as async nodes."""

    @functools.wraps(function)
    async def run(*args: P.args, **kwargs: P.kwargs) -> Any:
        return as_async(await in_thread(function, *args, **kwargs))

    run.__module__ = "zarrx.api.asynchronous"
    return run


class _AsyncNode:
    """What arrays and groups share: the wrapped node, its place, its metadata."""

    __slots__ = ("_node",)
    _node: Node

    @property
    def store(self) -> Any:
        return self._node.store

    @property
    def store_path(self) -> Any:
        return self._node.store_path

    @property
    def path(self) -> str:
        return self._node.path

    @property
    def name(self) -> str:
        return self._node.name

    @property
    def basename(self) -> str:
        return self._node.basename

    @property
    def metadata(self) -> Any:
        return self._node.metadata

    @property
    def zarr_format(self) -> Any:
        return self._node.zarr_format

    @property
    def read_only(self) -> bool:
        return self._node.read_only

    @property
    def attrs(self) -> dict[str, Any]:
        """The attributes as parsed when the node was opened or last changed (a copy:
        change them with :meth:`update_attributes`)."""
        return dict(self._node.metadata.attributes)

    async def update_attributes(self, new_attributes: Mapping[str, Any]) -> Any:
        """Merge ``new_attributes`` into the stored attributes (one atomic update)."""
        await in_thread(self._node.update_attributes, new_attributes)
        return self

    async def info_complete(self) -> Any:
        return await in_thread(self._node.info_complete)  # type: ignore[attr-defined]

    @property
    def info(self) -> Any:
        return self._node.info  # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._node == other._node

    def __hash__(self) -> int:
        return hash((type(self), self._node))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._node.name!r}>"


class _AsyncSelection:
    """``a.oindex`` / ``a.vindex`` / ``a.blocks`` of an :class:`AsyncArray`."""

    __slots__ = ("_get", "_set")

    def __init__(self, get: Callable[..., Any], set_: Callable[..., Any]) -> None:
        self._get = get
        self._set = set_

    async def getitem(self, selection: Any) -> Any:
        return await in_thread(self._get, selection)

    async def setitem(self, selection: Any, value: Any) -> None:
        await in_thread(self._set, selection, value)


class AsyncArray(_AsyncNode):
    """A Zarr array for asyncio code: :class:`zarrx.Array`'s reads and writes as
    coroutines (zarr-python's ``AsyncArray``)."""

    __slots__ = ()
    _node: Array

    def __init__(self, array: Array) -> None:
        if not isinstance(array, Array):
            raise TypeError(f"expected a zarrx.Array, got {type(array).__name__}")
        self._node = array

    @classmethod
    async def open(cls, store: Any = None, **kwargs: Any) -> AsyncArray:
        """:func:`zarrx.open_array` in a worker thread."""
        from zarrx.api import open_array

        return cls(await in_thread(open_array, store, **kwargs))

    @property
    def array(self) -> Array:
        """The synchronous :class:`zarrx.Array` (same store, path and metadata)."""
        return self._node

    # -- description (no I/O) -----------------------------------------------------------
    shape = property(lambda self: self._node.shape)
    dtype = property(lambda self: self._node.dtype)
    ndim = property(lambda self: self._node.ndim)
    size = property(lambda self: self._node.size)
    nbytes = property(lambda self: self._node.nbytes)
    chunks = property(lambda self: self._node.chunks)
    shards = property(lambda self: self._node.shards)
    cdata_shape = property(lambda self: self._node.cdata_shape)
    nchunks = property(lambda self: self._node.nchunks)
    fill_value = property(lambda self: self._node.fill_value)
    order = property(lambda self: self._node.order)
    dimension_names = property(lambda self: self._node.dimension_names)
    compressors = property(lambda self: self._node.compressors)
    filters = property(lambda self: self._node.filters)
    serializer = property(lambda self: self._node.serializer)

    # -- reading and writing ------------------------------------------------------------
    async def getitem(self, selection: Any) -> Any:
        """``a[selection]`` (NumPy's meaning of every index)."""
        return await in_thread(self._node.__getitem__, selection)

    async def setitem(self, selection: Any, value: Any) -> None:
        """``a[selection] = value``."""
        await in_thread(self._node.__setitem__, selection, value)

    async def get_basic_selection(self, selection: Any = Ellipsis, **kwargs: Any) -> Any:
        return await in_thread(self._node.get_basic_selection, selection, **kwargs)

    async def get_orthogonal_selection(self, selection: Any, **kwargs: Any) -> Any:
        return await in_thread(self._node.get_orthogonal_selection, selection, **kwargs)

    async def get_coordinate_selection(self, selection: Any, **kwargs: Any) -> Any:
        return await in_thread(self._node.get_coordinate_selection, selection, **kwargs)

    async def get_mask_selection(self, mask: Any, **kwargs: Any) -> Any:
        return await in_thread(self._node.get_mask_selection, mask, **kwargs)

    async def get_block_selection(self, selection: Any, **kwargs: Any) -> Any:
        return await in_thread(self._node.get_block_selection, selection, **kwargs)

    async def set_basic_selection(self, selection: Any, value: Any) -> None:
        await in_thread(self._node.set_basic_selection, selection, value)

    async def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        await in_thread(self._node.set_orthogonal_selection, selection, value)

    async def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        await in_thread(self._node.set_coordinate_selection, selection, value)

    async def set_mask_selection(self, mask: Any, value: Any) -> None:
        await in_thread(self._node.set_mask_selection, mask, value)

    async def set_block_selection(self, selection: Any, value: Any) -> None:
        await in_thread(self._node.set_block_selection, selection, value)

    @property
    def oindex(self) -> _AsyncSelection:
        """Orthogonal selections: ``await a.oindex.getitem(([0, 2], slice(None)))``."""
        return _AsyncSelection(self._node.get_orthogonal_selection,
                               self._node.set_orthogonal_selection)

    @property
    def vindex(self) -> _AsyncSelection:
        """Coordinate (and mask) selections, as ``a.vindex``."""
        return _AsyncSelection(self._node.vindex.__getitem__, self._node.vindex.__setitem__)

    @property
    def blocks(self) -> _AsyncSelection:
        return _AsyncSelection(self._node.get_block_selection, self._node.set_block_selection)

    async def resize(self, *shape: Any) -> None:
        await in_thread(self._node.resize, *shape)

    async def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        return await in_thread(self._node.append, data, axis=axis)

    async def nchunks_initialized(self) -> int:
        return await in_thread(lambda: self._node.nchunks_initialized)

    async def nbytes_stored(self) -> int:
        return await in_thread(self._node.nbytes_stored)


class AsyncGroup(_AsyncNode):
    """A Zarr group for asyncio code: :class:`zarrx.Group`'s members and creation as
    coroutines (zarr-python's ``AsyncGroup``)."""

    __slots__ = ()
    _node: Group

    def __init__(self, group: Group) -> None:
        if not isinstance(group, Group):
            raise TypeError(f"expected a zarrx.Group, got {type(group).__name__}")
        self._node = group

    @classmethod
    async def open(cls, store: Any = None, **kwargs: Any) -> AsyncGroup:
        """:func:`zarrx.open_group` in a worker thread."""
        from zarrx.api import open_group

        return cls(await in_thread(open_group, store, **kwargs))

    @classmethod
    async def from_store(cls, store: Any, **kwargs: Any) -> AsyncGroup:
        """A new group at the root of ``store`` (:func:`zarrx.create_group`)."""
        from zarrx.api import create_group

        return cls(await in_thread(create_group, store, **kwargs))

    @property
    def group(self) -> Group:
        """The synchronous :class:`zarrx.Group`."""
        return self._node

    # -- members ------------------------------------------------------------------------
    async def getitem(self, key: str) -> AsyncArray | AsyncGroup:
        return as_async(await in_thread(self._node.__getitem__, key))

    async def get(self, key: str, default: Any = None) -> Any:
        return as_async(await in_thread(self._node.get, key, default))

    async def contains(self, member: str) -> bool:
        return await in_thread(self._node.__contains__, member)

    async def delitem(self, key: str) -> None:
        await in_thread(self._node.__delitem__, key)

    async def nmembers(self, max_depth: int | None = 0) -> int:
        return len(await in_thread(self._node.members, max_depth))

    async def members(
        self, max_depth: int | None = 0
    ) -> AsyncIterator[tuple[str, AsyncArray | AsyncGroup]]:
        """``(name, node)`` of the members (to ``max_depth``; ``None``: all), listed in a
        worker thread, then yielded."""
        for name, node in await in_thread(self._node.members, max_depth):
            yield name, as_async(node)

    async def keys(self) -> AsyncIterator[str]:
        for name in await in_thread(lambda: list(self._node.keys())):
            yield name

    async def arrays(self) -> AsyncIterator[tuple[str, AsyncArray]]:
        for name, node in await in_thread(lambda: list(self._node.arrays())):
            yield name, AsyncArray(node)

    async def groups(self) -> AsyncIterator[tuple[str, AsyncGroup]]:
        for name, node in await in_thread(lambda: list(self._node.groups())):
            yield name, AsyncGroup(node)

    async def array_keys(self) -> AsyncIterator[str]:
        for name in await in_thread(lambda: list(self._node.array_keys())):
            yield name

    async def group_keys(self) -> AsyncIterator[str]:
        for name in await in_thread(lambda: list(self._node.group_keys())):
            yield name

    async def tree(self, expand: bool | None = None, level: int | None = None) -> Any:
        return await in_thread(self._node.tree, expand=expand, level=level)

    # -- creating -----------------------------------------------------------------------
    async def create_array(self, name: str, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await in_thread(self._node.create_array, name, **kwargs))

    async def create_group(self, name: str, **kwargs: Any) -> AsyncGroup:
        return AsyncGroup(await in_thread(self._node.create_group, name, **kwargs))

    async def require_group(self, name: str, overwrite: bool = False) -> AsyncGroup:
        return AsyncGroup(await in_thread(self._node.require_group, name, overwrite=overwrite))

    async def require_groups(self, *names: str) -> tuple[AsyncGroup, ...]:
        return tuple(AsyncGroup(g) for g in await in_thread(self._node.require_groups, *names))

    async def require_array(self, name: str, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await in_thread(self._node.require_array, name, **kwargs))

    async def empty(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await in_thread(self._node.empty, name=name, shape=shape, **kwargs))

    async def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await in_thread(self._node.zeros, name=name, shape=shape, **kwargs))

    async def ones(self, *, name: str, shape: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await in_thread(self._node.ones, name=name, shape=shape, **kwargs))

    async def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> AsyncArray:
        return AsyncArray(await in_thread(
            self._node.full, name=name, shape=shape, fill_value=fill_value, **kwargs))
