"""A zarrx store as a zarr-python 3 store, so that tools built on zarr-python write
through zarrx's stores: ``ds.to_zarr(as_zarr_store(store))`` in xarray,
``x.to_zarr(as_zarr_store(store), component="x")`` in dask.

zarr-python then does what it does for any store — xarray's modes, ``region=``,
``append_dim=``, encodings, consolidated metadata — and every byte it reads, writes, lists
or deletes goes through the zarrx store: zarrx's key checks (no key escapes the root),
its atomic whole-value writes (a reader never sees a torn chunk), its locks and
conditional writes for the one read-modify-write zarr-python's store interface has
(``set_if_not_exists``), and any zarrx store (``CacheStore``, ``ZipStore``, obstore,
plugins) where zarr-python has none.

zarr-python's coroutines must not wait on a file or a network: each call runs the zarrx
store's blocking method in a worker thread (``asyncio.to_thread``), so the event loop
zarr-python runs its many concurrent requests on keeps turning.

>>> import numpy as np, zarr, zarrx
>>> store = zarrx.storage.MemoryStore()
>>> z = zarr.create_array(as_zarr_store(store), name="x", shape=(4,), chunks=(2,), dtype="i2")
>>> z[:] = np.arange(4)
>>> sorted(store.list_prefix("x/"))
['x/c/0', 'x/c/1', 'x/zarr.json']
>>> zarrx.open_array(store, path="x")[...]
array([0, 1, 2, 3], dtype=int16)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterable
from typing import Any

from zarr.abc.store import (
    ByteRequest,
    OffsetByteRequest,
    RangeByteRequest,
    Store,
    SuffixByteRequest,
)
from zarr.core.buffer import Buffer, BufferPrototype

from zarrx.abc import store as zarrx_store
from zarrx.abc.store import ByteRange


def _byte_range(request: ByteRequest | None) -> ByteRange | None:
    """zarr-python's byte request as a zarrx :class:`~zarrx.abc.store.ByteRange`."""
    if request is None:
        return None
    if isinstance(request, RangeByteRequest):
        return ByteRange(request.start, max(0, request.end - request.start))
    if isinstance(request, OffsetByteRequest):
        return ByteRange(request.offset)
    if isinstance(request, SuffixByteRequest):
        return ByteRange(-request.suffix) if request.suffix else ByteRange(0, 0)
    raise TypeError(f"unexpected byte request {request!r}")


def _listing_prefix(prefix: str) -> str:
    """The prefix zarrx lists for a zarr-python ``prefix`` (zarrx lists whole names:
    ``""`` or a prefix ending in ``/``; the caller filters by ``prefix`` itself)."""
    if not prefix or prefix.endswith("/"):
        return prefix
    return prefix[: prefix.rfind("/") + 1]


class ZarrxStore(Store):
    """A zarr-python store (``zarr.abc.store.Store``) whose I/O is a zarrx store's."""

    def __init__(self, store: zarrx_store.Store, *, read_only: bool | None = None) -> None:
        if not isinstance(store, zarrx_store.Store):
            raise TypeError(f"expected a zarrx store, got {type(store).__name__}")
        if read_only is not None and read_only != store.read_only:
            store = _with_read_only(store, read_only)
        super().__init__(read_only=store.read_only or not store.writeable)
        self.store = store

    # -- what it is -------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, ZarrxStore) and other.store == self.store

    def __hash__(self) -> int:
        return hash((type(self), id(self.store)))

    def __repr__(self) -> str:
        return f"ZarrxStore({self.store!r})"

    def with_read_only(self, read_only: bool = False) -> ZarrxStore:
        return type(self)(self.store, read_only=read_only)

    @property
    def supports_writes(self) -> bool:
        return bool(self.store.writeable)

    @property
    def supports_deletes(self) -> bool:
        return bool(self.store.writeable)

    @property
    def supports_listing(self) -> bool:
        return bool(self.store.listable)

    def close(self) -> None:
        super().close()
        self.store.close()

    # -- reading ----------------------------------------------------------------------
    async def get(
        self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        value = await asyncio.to_thread(self.store.get, key, _byte_range(byte_range))
        return None if value is None else prototype.buffer.from_bytes(value)

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        requests = [(key, _byte_range(request)) for key, request in key_ranges]
        values = await asyncio.to_thread(self.store.get_many, requests)
        return [None if v is None else prototype.buffer.from_bytes(v) for v in values]

    async def exists(self, key: str) -> bool:
        return await asyncio.to_thread(self.store.exists, key)

    # -- writing ----------------------------------------------------------------------
    async def set(self, key: str, value: Buffer) -> None:
        self._check_writable()
        await asyncio.to_thread(self.store.set, key, value.as_numpy_array().data)

    async def set_if_not_exists(self, key: str, value: Buffer) -> None:
        """Write ``value`` unless ``key`` holds one: one atomic update where the zarrx
        store has them (no writer's value is replaced), a check then a write elsewhere."""
        self._check_writable()
        data = value.to_bytes()

        def keep_or_create(old: bytes | None) -> bytes | None:
            return data if old is None else old

        await asyncio.to_thread(self.store.atomic_update, key, keep_or_create)

    async def delete(self, key: str) -> None:
        self._check_writable()
        await asyncio.to_thread(self.store.erase, key)

    async def delete_dir(self, prefix: str) -> None:
        self._check_writable()
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        await asyncio.to_thread(self.store.erase_prefix, prefix)

    # -- listing ----------------------------------------------------------------------
    async def _listed(self, prefix: str) -> list[str]:
        keys = await asyncio.to_thread(self.store.list_prefix, _listing_prefix(prefix))
        return [key for key in keys if key.startswith(prefix)]

    async def list(self) -> AsyncIterator[str]:
        for key in await self._listed(""):
            yield key

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        for key in await self._listed(prefix):
            yield key

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        """Names directly below ``prefix`` (keys and sub-prefixes, without a trailing
        ``/``), as zarr-python's stores give them."""
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        keys, prefixes = await asyncio.to_thread(self.store.list_dir, prefix)
        for name in keys + prefixes:
            yield name[len(prefix):].rstrip("/")

    async def getsize(self, key: str) -> int:
        """The size of a value: ``stat`` on a local store (no read), else its length."""
        from zarrx.info import stored_size

        if not await self.exists(key):
            raise FileNotFoundError(key)
        return await asyncio.to_thread(stored_size, self.store, [key])


def _with_read_only(store: zarrx_store.Store, read_only: bool) -> zarrx_store.Store:
    with_read_only = getattr(store, "with_read_only", None)
    if with_read_only is None:
        raise TypeError(f"{store!r} cannot be opened with read_only={read_only}")
    return with_read_only(read_only)


def as_zarr_store(
    store: Any, *, read_only: bool | None = None, storage_options: dict[str, Any] | None = None
) -> Store:
    """A zarr-python store for ``store``: a zarrx store, a path or a URL (opened by
    zarrx's stores), a zarrx :class:`~zarrx.Group` or :class:`~zarrx.Array` (its
    store; the node's path is the caller's to pass, e.g. ``group=node.path``), or a
    zarr-python store (returned as it is, or the one a ``ZarrPythonStore`` wraps)."""
    from zarrx.node import Node
    from zarrx.stores.url import make_store
    from zarrx.stores.zarr_python import ZarrPythonStore

    if isinstance(store, Store):
        return store if read_only is None else store.with_read_only(read_only)
    if isinstance(store, Node):
        store = store.store
    if isinstance(store, ZarrPythonStore):
        return as_zarr_store(store.store, read_only=read_only)
    if isinstance(store, str | os.PathLike):
        store = make_store(store, mode="r" if read_only else "a", storage_options=storage_options)
    elif storage_options:
        raise TypeError("storage_options are only used when the store is given as a URL")
    return ZarrxStore(store, read_only=read_only)
