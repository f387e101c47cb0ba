"""``zarrx.api.asynchronous``: zarrx's functions as coroutines, with zarr-python 3's names
(``zarr.api.asynchronous``), so asyncio services switch by changing the import.

Each is the synchronous function of the same name (same keywords, same defaults and
modes) run in a worker thread, the event loop free meanwhile; arrays and groups come
back as :class:`~zarrx.AsyncArray` and :class:`~zarrx.AsyncGroup`, and are accepted where
a function takes a node (``zeros_like(a)``, ``copy(source, dest)``).

This module is reached as ``zarrx.api.asynchronous`` (``import zarrx.api.asynchronous``,
``from zarrx.api import asynchronous``): zarrx attaches it to :mod:`zarrx.api` on first use.

>>> import asyncio, numpy as np, zarrx
>>> import zarrx.api.asynchronous as async_api
>>> async def main():
...     a = await async_api.create_array("memory://doc-async", shape=(3,), dtype="u1", chunks=(2,))
...     await a.setitem(slice(None), np.arange(3))
...     b = await async_api.open_array("memory://doc-async", mode="r")
...     return await b.getitem(slice(1, None))
>>> asyncio.run(main())
array([1, 2], dtype=uint8)
"""

from __future__ import annotations

from zarrx import api as _api
from zarrx import convenience as _convenience
from zarrx import copying as _copying
from zarrx import hierarchy as _hierarchy
from zarrx.async_nodes import AsyncArray, AsyncGroup, asynchronous

__all__ = [
    "AsyncArray", "AsyncGroup", "array", "consolidate_metadata", "copy", "copy_all",
    "copy_store", "create", "create_array", "create_group", "empty", "empty_like",
    "from_array", "full", "full_like", "group", "load", "ones", "ones_like", "open",
    "open_array", "open_consolidated", "open_group", "open_like", "save", "save_array",
    "save_group", "tree", "zeros", "zeros_like",
]

open = asynchronous(_api.open)  # zarr-python's name (shadows the builtin here)
open_array = asynchronous(_api.open_array)
open_group = asynchronous(_api.open_group)
open_like = asynchronous(_api.open_like)
open_consolidated = asynchronous(_api.open_consolidated)
consolidate_metadata = asynchronous(_api.consolidate_metadata)
create_group = asynchronous(_api.create_group)
group = asynchronous(_api.group)
save = asynchronous(_api.save)
save_array = asynchronous(_api.save_array)
save_group = asynchronous(_api.save_group)
load = asynchronous(_api.load)
tree = asynchronous(_api.tree)
create_array = asynchronous(_hierarchy.create_array)
array = asynchronous(_convenience.array)
create = asynchronous(_convenience.create)
empty = asynchronous(_convenience.empty)
zeros = asynchronous(_convenience.zeros)
ones = asynchronous(_convenience.ones)
full = asynchronous(_convenience.full)
empty_like = asynchronous(_convenience.empty_like)
zeros_like = asynchronous(_convenience.zeros_like)
ones_like = asynchronous(_convenience.ones_like)
full_like = asynchronous(_convenience.full_like)
from_array = asynchronous(_convenience.from_array)
copy = asynchronous(_copying.copy)
copy_all = asynchronous(_copying.copy_all)
copy_store = asynchronous(_copying.copy_store)
