"""ObstoreStore: any obstore store (S3, GCS, Azure, HTTP, local, memory) as a zarrx store.

`obstore <https://developmentseed.org/obstore/>`_ is the Python binding of the Rust
``object_store`` crate (zarr-python 3's ``ObjectStore`` is built on it). Install it with
``pip install 'zarrx[obstore]'``; URLs given as strings still open through fsspec
(:class:`~zarrx.stores.fsspec.FsspecStore`), as in zarr-python: pass an ``ObstoreStore`` to
use obstore.

- A high-latency store (``batched_reads``): a batch of reads is one call of the store's
  event loop (:mod:`zarrx.stores.aio`) awaiting obstore's async ``get_async`` for each
  request, at most ``max_concurrency`` in flight; ranges of one value that lie close
  together are coalesced into one request first (:mod:`zarrx.stores.ranges`).
- A byte range is one ranged GET, a suffix (a shard's index) one ``Range: bytes=-n``.
- Reads in rounds (a shard's index, then its inner chunks) send each round of a batch's
  readers at once; the first round's answers carry the value's ETag, and every later round
  asks for that ETag (``if_match``): a value replaced between rounds restarts its reader
  (:mod:`zarrx.stores.versioned`).
- ``list_dir`` is one delimiter listing (``list_with_delimiter``); ``list_prefix`` one
  recursive listing.
- Read-modify-writes are atomic where the backend writes on condition
  (``atomic_updates = "conditional"``: S3, GCS, Azure and obstore's memory store): a value
  is read with its ETag and version, and written back with ``put(mode=UpdateVersion)``, or
  ``mode="create"`` where there was none. object_store has no conditional delete, so this
  store cannot erase on condition (``conditional_erase = False``): a chunk an update leaves
  all fill value is written rather than erased. obstore's local and HTTP stores have no
  conditional update (``atomic_updates = None``); ``conditional_writes=False`` turns them
  off for an S3-compatible server without them.

>>> from obstore.store import MemoryStore
>>> store = ObstoreStore(MemoryStore())
>>> store.set("a/b", b"0123456789")
>>> store.get_many([("a/b", ByteRange(-3)), ("a/c", None)])
[b'789', None]
>>> store.list_dir("")
([], ['a/'])
"""

from __future__ import annotations

import builtins
import errno
import os
import re
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any

from zarrx.abc.store import ByteRange, RangeReader, Snapshot, Store, as_bytes
from zarrx.errors import StoreError
from zarrx.stores import aio, versioned
from zarrx.stores.directories import prune_empty_directories
from zarrx.stores.keys import (
    is_valid_key,
    resolve_byte_range,
    validate_byte_range,
    validate_key,
    validate_prefix,
)
from zarrx.stores.ranges import COALESCE_GAP, LATENCY_BYTES, coalesced

#: obstore store classes whose backend writes on condition (ETag / generation).
_CONDITIONAL = ("S3Store", "GCSStore", "AzureStore", "MemoryStore")
#: A local store's answers where a path leads through a file, or to a directory: no key.
_NOT_A_FILE = (f"(os error {errno.ENOTDIR})", f"(os error {errno.EISDIR})")


def _obstore() -> Any:
    try:
        import obstore
    except ImportError as error:
        raise ImportError(
            "ObstoreStore needs obstore: pip install 'zarrx[obstore]' (or open the URL as a "
            "string: it goes through fsspec)"
        ) from error
    return obstore


def one_line(error: BaseException) -> str:
    """An obstore error in one line: its message without the ``Debug source:`` dump of the
    Rust error that follows it, and the innermost cause that dump names (``Connection
    refused``) when the message does not say it."""
    head, _, dump = str(error).partition("Debug source:")
    line = " ".join(head.split()) or type(error).__name__
    causes = re.findall(r'message: "([^"\n]*)"', dump)
    if causes and causes[-1] not in line:
        line += f" ({causes[-1]})"
    return line


def _absent(error: BaseException) -> bool:
    """Whether ``error`` says there is no such value: not found, or (local stores) a path
    through a file or to a directory, neither of which is a key."""
    if isinstance(error, FileNotFoundError):
        return True
    message = str(error)
    return any(code in message for code in _NOT_A_FILE)



def _request_range(byte_range: ByteRange) -> Any:
    """obstore's ``range`` option for ``byte_range`` (length > 0 or ``None``)."""
    start, length = byte_range.start, byte_range.length
    if start < 0:
        return {"suffix": -start}
    if length is None:
        return {"offset": start}
    return (start, start + length)


def _run_made(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """The coroutine ``make`` makes, run on the store loop."""
    return aio.run(make())


class ObstoreStore(Store):
    """A zarrx store on an obstore store (``obstore.store.S3Store(...)`` ...)."""

    batched_reads = True
    read_latency_bytes = LATENCY_BYTES

    def __init__(
        self,
        store: Any,
        *,
        read_only: bool = False,
        max_concurrency: int = 64,
        conditional_writes: bool | None = None,
    ) -> None:
        obstore = _obstore()
        kind = type(store).__name__
        if not isinstance(store, tuple(getattr(obstore.store, name) for name in (
                "S3Store", "GCSStore", "AzureStore", "HTTPStore", "LocalStore", "MemoryStore"))):
            raise TypeError(f"expected an obstore store (obstore.store.S3Store ...), got {kind}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        conditional = kind in _CONDITIONAL
        if conditional_writes and not conditional:
            raise ValueError(
                f"conditional_writes=True: obstore's {kind} has no conditional updates"
            )
        super().__init__(read_only=read_only)
        self.store = store
        self.max_concurrency = max_concurrency
        self.conditional_writes = conditional if conditional_writes is None else conditional_writes
        self.atomic_updates = "conditional" if self.conditional_writes else None
        self.conditional_erase = not self.conditional_writes
        self._obs = obstore
        prefix = getattr(store, "prefix", None) if kind == "LocalStore" else None
        self._local_root = None if prefix is None else os.fspath(prefix)

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        read_only: bool = False,
        storage_options: dict[str, Any] | None = None,
    ) -> ObstoreStore:
        """``s3://bucket/prefix``, ``gs://…``, ``az://…``, ``https://…``, ``file:///…``,
        ``memory:///``: ``obstore.store.from_url(url, **storage_options)`` (obstore's
        configuration keys, e.g. ``{"endpoint": ..., "access_key_id": ...,
        "client_options": {...}}``); ``max_concurrency`` and ``conditional_writes`` among
        them are taken by this store."""
        options = dict(storage_options or {})
        max_concurrency = options.pop("max_concurrency", 64)
        conditional_writes = options.pop("conditional_writes", None)
        store = _obstore().store.from_url(url, **options)
        return cls(store, read_only=read_only, max_concurrency=max_concurrency,
                   conditional_writes=conditional_writes)

    def with_read_only(self, read_only: bool = False) -> ObstoreStore:
        """The same obstore store with the given ``read_only``."""
        return type(self)(self.store, read_only=read_only, max_concurrency=self.max_concurrency,
                          conditional_writes=self.conditional_writes)

    def _error(self, action: str, key: str, error: BaseException) -> StoreError:
        """One line (the raising code keeps ``error``, with its Rust debug dump, as the
        cause)."""
        return StoreError(f"cannot {action} key {key!r} in {self!r}: {one_line(error)}")

    # -- readable ---------------------------------------------------------------------
    async def _size(self, key: str) -> int | None:
        try:
            meta = await self._obs.head_async(self.store, key)
        except Exception as error:
            if _absent(error):
                return None
            raise self._error("read", key, error) from error
        return int(meta["size"])

    async def _read(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        obs = self._obs
        if byte_range is not None and byte_range.length == 0:
            return b"" if await self._size(key) is not None else None
        options = None if byte_range is None else {"range": _request_range(byte_range)}
        try:
            result = await obs.get_async(self.store, key, options=options)
            data = bytes(await result.bytes_async())
        except Exception as error:
            if _absent(error):
                return None
            if byte_range is None:
                raise self._error("read", key, error) from error
            # A range wholly past the end, or a suffix of an empty value, is refused by
            # the server (416): the answer is b"" if the value exists.
            size = await self._size(key)
            if size is None:
                return None
            start, stop = resolve_byte_range(byte_range, size, key)
            if start >= stop:
                return b""
            raise self._error("read", key, error) from error
        if byte_range is not None and byte_range.start < 0 and byte_range.length is not None:
            data = data[: byte_range.length]
        return data

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        validate_key(key)
        validate_byte_range(byte_range, key)
        return aio.run(self._read(key, byte_range))

    def get_many(self, requests: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
        """All requests at once, concurrently; close ranges of one value as one request."""
        for key, byte_range in requests:  # refuse a bad batch before any request
            validate_key(key)
            validate_byte_range(byte_range, key)
        if not requests:
            return []
        return aio.run(self._read_all(list(requests)))

    async def _read_all(self, requests: list[tuple[str, ByteRange | None]]) -> list[Any]:
        fetches, answer = coalesced(requests, COALESCE_GAP)
        values = await aio.gather([self._read(*f) for f in fetches], self.max_concurrency)
        return answer(values)

    def exists(self, key: str) -> bool:
        validate_key(key)
        return aio.run(self._size(key)) is not None

    def read_rounds(self, reads: Sequence[tuple[str, RangeReader]]) -> None:
        """Each round of every reader at once, every round after the first on condition
        that the value is still the version (ETag) the first answered from
        (:mod:`zarrx.stores.versioned`)."""
        for key, _ in reads:  # refuse a bad batch before any request
            validate_key(key)
        versioned.serve(reads, self._fetch_versioned, _run_made, self.max_concurrency, self)

    async def _fetch_versioned(self, key: str, byte_range: ByteRange, version: Any
                               ) -> tuple[bytes | None, Any]:
        """One range of ``key`` and the ETag of the value it came from (``version``: only
        from that one, else :class:`~zarrx.stores.versioned.Changed`)."""
        obs = self._obs
        condition = {} if version is None else {"if_match": version}
        if byte_range.length == 0:
            found = await self._head_versioned(key, condition)
            return (None, None) if found is None else (b"", found[1])
        try:
            result = await obs.get_async(
                self.store, key, options={"range": _request_range(byte_range), **condition})
            data = bytes(await result.bytes_async())
        except obs.exceptions.PreconditionError:
            raise versioned.Changed from None
        except Exception as error:
            if _absent(error):
                if version is not None:
                    raise versioned.Changed from None
                return None, None
            # A range wholly past the end, or any range of an empty value, is refused by
            # the server (416): the answer is b"" if the value (of that version) exists.
            found = await self._head_versioned(key, condition)
            if found is None:
                if version is not None:
                    raise versioned.Changed from None
                return None, None
            start, stop = resolve_byte_range(byte_range, found[0], key)
            if start >= stop:
                return b"", found[1]
            raise self._error("read", key, error) from error
        tag = result.meta["e_tag"]
        if version is not None and tag != version:
            raise versioned.Changed
        if byte_range.start < 0 and byte_range.length is not None:
            data = data[: byte_range.length]
        return data, tag

    async def _head_versioned(self, key: str, condition: dict[str, Any]
                              ) -> tuple[int, Any] | None:
        """The size and ETag of ``key`` (``None``: absent), on ``condition``."""
        try:
            result = await self._obs.get_async(self.store, key,
                                               options={"head": True, **condition})
        except self._obs.exceptions.PreconditionError:
            raise versioned.Changed from None
        except Exception as error:
            if _absent(error):
                return None
            raise self._error("read", key, error) from error
        return int(result.meta["size"]), result.meta["e_tag"]

    # -- writeable --------------------------------------------------------------------
    async def _write(self, key: str, data: bytes, mode: Any = None) -> Any:
        try:
            return await self._obs.put_async(self.store, key, data, mode=mode,
                                             use_multipart=False if mode else None)
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

    async def _delete(self, keys: list[str], what: str) -> None:
        try:
            await self._obs.delete_async(self.store, keys)
        except Exception as error:
            if not _absent(error):
                raise self._error("erase", what, error) from error
            # local stores refuse to delete what is absent; delete the others one by one
            if len(keys) > 1:
                await aio.gather([self._delete([key], key) for key in keys],
                                 self.max_concurrency)

    def erase(self, key: str) -> None:
        validate_key(key)
        self._check_writable(key)
        aio.run(self._delete([key], key))
        self._prune([key])

    def erase_prefix(self, prefix: str) -> None:
        validate_prefix(prefix)
        self._check_writable(prefix)
        keys = self.list_prefix(prefix)  # each key named: never a pattern
        if keys:
            aio.run(self._delete(keys, prefix))
            self._prune(keys)

    def _prune(self, keys: list[str]) -> None:
        if self._local_root is not None:
            prune_empty_directories(self._local_root, keys)

    # -- atomic updates: conditional writes -------------------------------------------
    async def _read_versioned(self, key: str) -> Snapshot:
        try:
            result = await self._obs.get_async(self.store, key)
            data = bytes(await result.bytes_async())
        except Exception as error:
            if _absent(error):
                return Snapshot(None)
            raise self._error("read", key, error) from error
        meta = result.meta
        return Snapshot(data, (meta["e_tag"], meta["version"]))

    def get_with_version(self, key: str) -> Snapshot:
        validate_key(key)
        if not self.conditional_writes:
            return super().get_with_version(key)
        return aio.run(self._read_versioned(key))

    def get_many_with_version(self, keys: Sequence[str]) -> list[Snapshot]:
        for key in keys:
            validate_key(key)
        if not self.conditional_writes:
            return super().get_many_with_version(keys)
        return aio.run(self._gather_versioned(list(keys))) if keys else []

    async def _gather_versioned(self, keys: list[str]) -> list[Snapshot]:
        return await aio.gather([self._read_versioned(key) for key in keys],
                                self.max_concurrency)

    def set_if(self, key: str, value: Any, version: Any) -> bool:
        validate_key(key)
        self._check_writable(key)
        if not self.conditional_writes:
            return super().set_if(key, value, version)
        if value is None:
            if version is not None:
                raise TypeError(
                    f"cannot erase key {key!r} on condition in {self!r}: object_store has no "
                    "conditional delete (this store's conditional_erase is False)"
                )
            return not self.exists(key)  # erase what must be absent: done if it is
        data = as_bytes(value)
        if version is None:
            mode: Any = "create"
        else:
            e_tag, object_version = version
            mode = {name: token for name, token in (("e_tag", e_tag), ("version", object_version))
                    if token is not None}
        return aio.run(self._write_if(key, data, mode))

    async def _write_if(self, key: str, data: bytes, mode: Any) -> bool:
        exceptions = self._obs.exceptions
        try:
            await self._obs.put_async(self.store, key, data, mode=mode, use_multipart=False)
        except (exceptions.PreconditionError, exceptions.AlreadyExistsError, FileNotFoundError):
            return False  # another writer changed (or made, or erased) it first
        except Exception as error:
            raise self._error("write", key, error) from error
        return True

    # -- listable ---------------------------------------------------------------------
    async def _list(self, prefix: str) -> list[str]:
        try:
            keys: list[str] = []
            async for batch in self._obs.list(self.store, prefix or None, chunk_size=1000):
                keys.extend(meta["path"] for meta in batch)
            return keys
        except Exception as error:
            if _absent(error):
                return []
            raise self._error("list", prefix, error) from error

    async def _list_dir(self, prefix: str) -> Any:
        try:
            return await self._obs.list_with_delimiter_async(self.store, prefix or None)
        except Exception as error:
            if _absent(error):
                return {"objects": [], "common_prefixes": []}
            raise self._error("list", prefix, error) from error

    def list(self) -> list[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> builtins.list[str]:
        validate_prefix(prefix)
        found = aio.run(self._list(prefix))
        return sorted(k for k in found if k.startswith(prefix) and is_valid_key(k))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        validate_prefix(prefix)
        listing = aio.run(self._list_dir(prefix))
        keys = []
        for meta in listing["objects"]:
            key = meta["path"]
            if key.startswith(prefix) and "/" not in key[len(prefix):] and is_valid_key(key):
                keys.append(key)
        prefixes = []
        for name in listing["common_prefixes"]:
            name = name.rstrip("/")
            if name.startswith(prefix) and is_valid_key(name):
                prefixes.append(name + "/")
        return sorted(keys), sorted(prefixes)

    # -- identity ---------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_obs"]  # a module: imported again on the other side
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._obs = _obstore()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ObstoreStore):
            return NotImplemented
        return (self.store, self.read_only) == (other.store, other.read_only)

    def __hash__(self) -> int:
        return hash((id(self.store), self.read_only))

    def __repr__(self) -> str:
        return f"ObstoreStore({self.store!r}{', read_only=True' if self.read_only else ''})"
