"""ZarrPythonStore: any zarr-python 3 store as a zarrx store — an Icechunk session's store,
zarr-python's ``MemoryStore``, ``LocalStore``, ``ObjectStore`` ...

zarr-python's stores are asynchronous. Their coroutines run on zarrx's store event loop
(:mod:`zarrx.stores.aio`), which zarrx's threads hand work to and wait on, so no thread
blocks another; ``get_many`` submits a whole batch at once (``asyncio.gather``, at most
``max_concurrency`` in flight). A zarr-python store passed as ``store`` to
:func:`zarrx.open`, :func:`zarrx.create_array` ... is wrapped in this class automatically.

- Keys are validated by zarrx before the wrapped store sees them. An erase names one key
  and erases it only if it is one: zarr-python's ``LocalStore.delete`` would remove a
  whole directory given a prefix. ``erase_prefix`` erases the keys it lists, one by one.
- ``list_dir`` is computed from ``list_prefix`` (zarr-python's ``list_dir`` does not say
  which names are keys and which are prefixes).
- Read-modify-writes are atomic (``atomic_updates = "lock"``, one lock per key among this
  process's threads) where only this process can change the data: zarr-python's
  ``MemoryStore``, and an Icechunk session (its changes stay in the session until it
  commits; Icechunk checks them against other sessions' commits then). Other stores
  (``LocalStore``, ``FsspecStore``, ``ObjectStore``) can be written by other processes:
  ``atomic_updates = None`` (use zarrx's own stores there).

>>> import zarr
>>> store = ZarrPythonStore(zarr.storage.MemoryStore())
>>> store.set("a/b", b"0123456789")
>>> store.get_many([("a/b", ByteRange(-3)), ("a/c", None)])
[b'789', None]
>>> store.list_dir("")
([], ['a/'])
"""

from __future__ import annotations

import builtins
import os
import threading
import weakref
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from zarrx.abc.store import ByteRange, Store, as_bytes
from zarrx.errors import StoreError
from zarrx.stores import aio
from zarrx.stores.directories import prune_empty_directories
from zarrx.stores.keys import (
    is_valid_key,
    resolve_byte_range,
    validate_byte_range,
    validate_key,
    validate_prefix,
)
from zarrx.stores.locks import KeyLocks
from zarrx.stores.ranges import LATENCY_BYTES

#: zarr-python store classes whose data only this process can change (module, class name).
_IN_PROCESS = frozenset({("zarr.storage._memory", "MemoryStore"),
                         ("zarr.storage._memory", "GpuMemoryStore"),
                         ("icechunk.store", "IcechunkStore")})
#: The key locks of each wrapped store (by ``id``, while it lives): every wrapper of one
#: store object shares them.
_key_locks: dict[int, KeyLocks] = {}
_key_locks_guard = threading.Lock()


def _locks_of(store: Any) -> KeyLocks:
    with _key_locks_guard:
        locks = _key_locks.get(id(store))
        if locks is None:
            locks = _key_locks[id(store)] = KeyLocks()
            weakref.finalize(store, _key_locks.pop, id(store), None)
        return locks


def is_zarr_python_store(candidate: object) -> bool:
    """Whether ``candidate`` is a zarr-python 3 store (without importing zarr: a store
    object exists only once zarr is imported)."""
    import sys

    module = sys.modules.get("zarr.abc.store")
    return module is not None and isinstance(candidate, module.Store)


def _zarr() -> Any:
    try:
        import zarr.abc.store
        import zarr.core.buffer
    except ImportError as error:
        raise ImportError("ZarrPythonStore wraps zarr-python 3 stores: pip install zarr") from error
    return zarr



class ZarrPythonStore(Store):
    """A zarrx store on a zarr-python 3 store (``zarr.abc.store.Store``)."""

    batched_reads = True
    read_latency_bytes = LATENCY_BYTES

    def __init__(
        self, store: Any, *, read_only: bool | None = None, max_concurrency: int = 64
    ) -> None:
        zarr = _zarr()
        if not isinstance(store, zarr.abc.store.Store):
            raise TypeError(
                f"expected a zarr-python store (zarr.abc.store.Store), got {type(store).__name__}"
            )
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        super().__init__(read_only=bool(read_only) or store.read_only)
        self.store = store
        self.max_concurrency = max_concurrency
        self.writeable = store.supports_writes and store.supports_deletes
        self.listable = store.supports_listing
        kind = (type(store).__module__, type(store).__name__)
        self.atomic_updates = "lock" if kind in _IN_PROCESS else None
        root = getattr(store, "root", None) if kind[1] == "LocalStore" else None
        self._local_root = None if root is None else os.fspath(root)
        self._prototype = zarr.core.buffer.default_buffer_prototype()
        self._requests = zarr.abc.store

    def with_read_only(self, read_only: bool = False) -> ZarrPythonStore:
        """The wrapped store, read-only or not (zarr-python's ``with_read_only``)."""
        return type(self)(self.store.with_read_only(read_only), read_only=read_only,
                          max_concurrency=self.max_concurrency)

    def _error(self, action: str, key: str, error: BaseException) -> StoreError:
        return StoreError(f"cannot {action} key {key!r} in {self!r}: {error}")

    def _check_listable(self, what: str) -> None:
        if not self.listable:
            raise TypeError(f"{self!r} cannot {what}: the wrapped store does not list")

    # -- readable ---------------------------------------------------------------------
    def _request(self, byte_range: ByteRange) -> Any:
        start, length = byte_range.start, byte_range.length
        if start < 0:
            return self._requests.SuffixByteRequest(-start)
        if length is None:
            return self._requests.OffsetByteRequest(start)
        return self._requests.RangeByteRequest(start, start + length)

    async def _read(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        buffer = None
        try:
            if byte_range is None:
                buffer = await self.store.get(key, self._prototype)
                return None if buffer is None else buffer.to_bytes()
            if byte_range.length == 0:
                return b"" if await self.store.exists(key) else None
            buffer = await self.store.get(key, self._prototype, self._request(byte_range))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except Exception as error:
            if byte_range is None:
                raise self._error("read", key, error) from error
            # some stores refuse a range past the end of the value: answered below
        if buffer is not None:
            data = buffer.to_bytes()
            return data if byte_range.start >= 0 else data[: byte_range.length]
        if not await self._exists(key):
            return None
        whole = await self._read(key, None)  # the value, sliced as the range says
        if whole is None:
            return None
        start, stop = resolve_byte_range(byte_range, len(whole), key)
        return whole[start:stop]

    async def _exists(self, key: str) -> bool:
        try:
            return bool(await self.store.exists(key))
        except Exception as error:
            raise self._error("read", key, error) from error

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        validate_key(key)
        validate_byte_range(byte_range, key)
        return aio.run(self._read(key, byte_range))

    def get_many(self, requests: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
        """All requests at once, on the store loop."""
        for key, byte_range in requests:  # refuse a bad batch before any request
            validate_key(key)
            validate_byte_range(byte_range, key)
        if not requests:
            return []
        return aio.run(self._read_all(list(requests)))

    async def _read_all(self, requests: list[tuple[str, ByteRange | None]]) -> list[Any]:
        return await aio.gather([self._read(*r) for r in requests], self.max_concurrency)

    def exists(self, key: str) -> bool:
        validate_key(key)
        return aio.run(self._exists(key))

    # -- writeable --------------------------------------------------------------------
    async def _write(self, key: str, data: bytes) -> None:
        try:
            await self.store.set(key, self._prototype.buffer.from_bytes(data))
        except Exception as error:
            raise self._error("write", key, error) from error

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        validate_key(key)
        self._check_writable(key)
        aio.run(self._write(key, as_bytes(value)))

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        jobs = []
        for key, value in items:
            validate_key(key)
            self._check_writable(key)
            jobs.append((key, as_bytes(value)))
        if jobs:
            aio.run(self._write_all(jobs))

    async def _write_all(self, jobs: list[tuple[str, bytes]]) -> None:
        await aio.gather([self._write(key, data) for key, data in jobs], self.max_concurrency)

    async def _delete(self, key: str) -> None:
        """Erase ``key`` if it is a key (never what a store takes a prefix to mean)."""
        try:
            if await self.store.exists(key):
                await self.store.delete(key)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            pass
        except Exception as error:
            raise self._error("erase", key, error) from error

    def erase(self, key: str) -> None:
        validate_key(key)
        self._check_writable(key)
        aio.run(self._delete(key))
        self._prune([key])

    def erase_prefix(self, prefix: str) -> None:
        validate_prefix(prefix)
        self._check_writable(prefix)
        keys = self.list_prefix(prefix)
        if keys:
            aio.run(self._delete_all(keys))
            self._prune(keys)

    async def _delete_all(self, keys: list[str]) -> None:
        await aio.gather([self._delete(key) for key in keys], self.max_concurrency)

    def _prune(self, keys: list[str]) -> None:
        if self._local_root is not None:
            prune_empty_directories(self._local_root, keys)

    def lock(self, key: str) -> AbstractContextManager[None]:
        """Exclude the other threads' updates of ``key`` (where only this process can
        change the data; see the module's notes)."""
        validate_key(key)
        if self.atomic_updates != "lock":
            return nullcontext()
        return _locks_of(self.store).hold(key)

    # -- listable ---------------------------------------------------------------------
    async def _list(self, prefix: str) -> list[str]:
        try:
            return [key async for key in self.store.list_prefix(prefix)]
        except FileNotFoundError:
            return []
        except Exception as error:
            raise self._error("list", prefix, error) from error

    def list(self) -> list[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> builtins.list[str]:
        validate_prefix(prefix)
        self._check_listable("list keys")
        found = aio.run(self._list(prefix))
        return sorted(k for k in found if k.startswith(prefix) and is_valid_key(k))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        keys: set[str] = set()
        prefixes: set[str] = set()
        n = len(prefix)
        for key in self.list_prefix(prefix):
            slash = key.find("/", n)
            if slash < 0:
                keys.add(key)
            else:
                prefixes.add(key[: slash + 1])
        return sorted(keys), sorted(prefixes)

    # -- identity ---------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_requests"]  # a module: imported again on the other side
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._requests = _zarr().abc.store

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ZarrPythonStore):
            return NotImplemented
        return self.store == other.store and self.read_only == other.read_only

    def __hash__(self) -> int:
        return hash((id(self.store), self.read_only))

    def __repr__(self) -> str:
        return f"ZarrPythonStore({self.store!r}{', read_only=True' if self.read_only else ''})"
