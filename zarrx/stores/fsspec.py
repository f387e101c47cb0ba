"""FsspecStore: object stores and web servers through fsspec (``s3://``, ``gs://``, ``http(s)://``).

A high-latency store, so it sets ``batched_reads``: the engine hands it whole batches of
chunk reads, and :meth:`FsspecStore.get_many` issues them at once on fsspec's event loop
(``asyncio.gather`` over the filesystem's async ``_cat_file``, at most ``max_concurrency``
in flight). A byte range is one ranged GET (``Range: bytes=a-b``), a suffix (a shard's
index at its end) is one ``Range: bytes=-n`` GET: no HEAD to learn the size first. Ranges
of one value that lie close together in a batch are one GET (:mod:`zarrx.stores.ranges`).
On ``s3`` and ``http(s)``, reads in rounds (a shard's index, then its inner chunks) send
each round of a batch's readers at once, every round after the first with ``If-Match``
the ETag the first answered with, so a value replaced between rounds restarts its reader
(:mod:`zarrx.stores.versioned`); elsewhere, and from a web server that gives no strong
ETag, each value is read whole once and its rounds answered from it.

- Options reach the filesystem through ``storage_options`` as in zarr-python:
  ``FsspecStore.from_url("s3://bucket/x.zarr", storage_options={"endpoint_url": ...,
  "key": ..., "secret": ...})``. Synchronous filesystems are wrapped with fsspec's
  ``AsyncFileSystemWrapper``, so every backend runs through the same code.
- On ``s3``, botocore's connection pool is sized to ``max_concurrency`` (it keeps 10
  connections otherwise, which would bound the requests in flight) unless
  ``config_kwargs={"max_pool_connections": ...}`` says otherwise.
- ``list_dir`` is one delimiter listing (``fs._ls`` of the prefix); ``list`` and
  ``list_prefix`` are one recursive listing (``fs._find``). Listings are not cached on
  ``s3``/``gs`` (``use_listings_cache=False`` unless given), so writers in other
  processes are seen.
- ``http``/``https`` are read-only and not listable (HTTP has neither writes nor
  listings): open a consolidated hierarchy there. The server must honour ``Range``.
- Keys are validated before any request; deletions name each key (``erase_prefix`` lists
  then deletes, in bulk on S3), never a glob pattern.
- On ``s3``, read-modify-writes are atomic (``atomic_updates = "conditional"``): a value is
  read with its ETag and written back with ``If-Match: <ETag>`` (``If-None-Match: *`` when
  there was none; a ``DELETE`` with ``If-Match``); a ``412``/``409`` answer means another
  writer got there first, and the update starts again. The server must honour these
  headers (AWS S3 does, as do recent MinIO, Ceph and Cloudflare R2); pass
  ``conditional_writes=False`` for one that does not. Other protocols have no atomic
  updates here (``atomic_updates = None``).

>>> FsspecStore.from_url("https://example.org/data.zarr")  # no request until a read
FsspecStore('https://example.org/data.zarr', read_only=True)
"""

from __future__ import annotations

import builtins
import copy
import inspect
from collections.abc import Iterable, Sequence
from typing import Any

from zarrx import imports
from zarrx.abc.store import ByteRange, RangeReader, Snapshot, Store, as_bytes
from zarrx.errors import MissingDependencyError, StoreError
from zarrx.stores import versioned
from zarrx.stores.aio import gather
from zarrx.stores.keys import (
    is_valid_key,
    resolve_byte_range,
    validate_byte_range,
    validate_key,
    validate_prefix,
)
from zarrx.stores.ranges import COALESCE_GAP, LATENCY_BYTES, coalesced

#: Protocols whose data cannot be written or listed.
READ_ONLY_PROTOCOLS = frozenset({"http", "https"})
#: Protocols whose listings fsspec would otherwise cache for the life of the filesystem.
_NO_LISTINGS_CACHE = frozenset({"s3", "s3a", "gs", "gcs"})
_S3_BULK_DELETE = 1000  # the most keys one DeleteObjects request may name
#: The package fsspec needs for a protocol, and zarrx's pip extra that installs it.
_BACKENDS = {"s3": ("s3fs", "s3"), "s3a": ("s3fs", "s3"), "gs": ("gcsfs", "gcs"),
             "gcs": ("gcsfs", "gcs"), "http": ("aiohttp", "http"), "https": ("aiohttp", "http")}


def _filesystem_class(url: str, scheme: str) -> None:
    """Import fsspec and its implementation of ``scheme`` (once, under zarrx's import
    lock), or say which pip extra installs what is missing."""
    package, extra = _BACKENDS.get(scheme, (f"fsspec's implementation of {scheme!r}", "fsspec"))
    try:
        with imports.lock:
            fsspec = imports.import_module("fsspec")
            fsspec.get_filesystem_class(scheme)
    except ImportError as error:
        missing = "fsspec" if getattr(error, "name", None) == "fsspec" else package
        raise MissingDependencyError(
            f"opening {url!r} needs {missing}, which is not installed: "
            f"pip install 'zarrx[{extra}]' ({error})"
        ) from None


_BOTOCORE = frozenset({"s3", "s3a"})  # s3fs: botocore's client underneath
#: Protocols whose conditional writes (If-Match / If-None-Match) this store uses.
CONDITIONAL_PROTOCOLS = frozenset({"s3", "s3a"})
_S3_MAX_PUT = 5 * 2**30  # the largest object one PUT (hence one conditional write) may hold
#: S3's answers to a write whose condition no longer holds.
_CONFLICT_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict", "412", "409"})


def _protocols(fs: Any) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)



def _http_range(byte_range: ByteRange) -> str:
    """The ``Range`` header of ``byte_range`` (a length > 0, or none)."""
    start, length = byte_range.start, byte_range.length
    if start < 0:
        return f"bytes={start}"  # the last -start bytes
    return f"bytes={start}-" if length is None else f"bytes={start}-{start + length - 1}"


def _strong(tag: str | None) -> str | None:
    """``tag`` if it is a strong ETag (``If-Match`` compares those only), else ``None``."""
    return None if tag is None or tag.startswith("W/") else tag


def _conflict(error: BaseException | None) -> bool:
    """Whether ``error`` (or what caused it: s3fs translates botocore's errors) is S3's
    answer to a condition that no longer holds."""
    seen = 0
    while error is not None and seen < 8:
        response = getattr(error, "response", None)
        if isinstance(response, dict):
            code = str(response.get("Error", {}).get("Code", ""))
            status = str(response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
            return code in _CONFLICT_CODES or status in _CONFLICT_CODES
        error = error.__cause__ or error.__context__
        seen += 1
    return False


class FsspecStore(Store):
    """A store on any fsspec filesystem, under the directory (or bucket prefix) ``path``."""

    batched_reads = True
    read_latency_bytes = LATENCY_BYTES

    def __init__(
        self,
        fs: Any,
        path: str = "",
        *,
        read_only: bool = False,
        max_concurrency: int = 64,
        conditional_writes: bool | None = None,
    ) -> None:
        if getattr(fs, "asynchronous", False):
            raise TypeError(
                f"{fs!r} was made with asynchronous=True; FsspecStore runs its own calls on "
                "fsspec's event loop: pass a filesystem made with asynchronous=False"
            )
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        protocols = _protocols(fs)
        web = bool(READ_ONLY_PROTOCOLS & set(protocols))
        super().__init__(read_only=read_only or web)
        self.writeable = not web
        self.listable = not web
        self.fs = fs
        self.path = fs._strip_protocol(path).rstrip("/") if path else ""
        self.max_concurrency = max_concurrency
        conditional = bool(CONDITIONAL_PROTOCOLS & set(protocols))
        if conditional_writes and not conditional:
            raise ValueError(
                f"conditional_writes=True: zarrx writes conditionally on "
                f"{sorted(CONDITIONAL_PROTOCOLS)} only, not on {protocols[0]}://"
            )
        self.conditional_writes = conditional if conditional_writes is None else conditional_writes
        self.atomic_updates = "conditional" if self.conditional_writes and not web else None
        self._protocol = protocols[0]
        self._afs: Any = None
        # s3fs reads a whole object with a HEAD first (to split big ones); one GET is enough.
        parameters = inspect.signature(type(fs)._cat_file).parameters if fs.async_impl else {}
        self._whole = {"max_concurrency": 1} if "max_concurrency" in parameters else {}

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        read_only: bool = False,
        storage_options: dict[str, Any] | None = None,
    ) -> FsspecStore:
        """``s3://bucket/path``, ``gs://bucket/path``, ``https://host/path`` ...

        ``storage_options`` go to the fsspec filesystem (credentials, ``endpoint_url``,
        ``anon`` ...); ``max_concurrency`` and ``conditional_writes`` among them are taken
        by the store.
        """
        scheme = url.partition("://")[0].lower()
        _filesystem_class(url, scheme)
        from fsspec.core import url_to_fs

        options = copy.deepcopy(dict(storage_options or {}))  # botocore edits nested dicts
        max_concurrency = options.pop("max_concurrency", 64)
        conditional_writes = options.pop("conditional_writes", None)
        if options.get("asynchronous"):
            raise TypeError("storage_options: asynchronous=True is not supported")
        if scheme in _NO_LISTINGS_CACHE:
            options.setdefault("use_listings_cache", False)
        if scheme in _BOTOCORE:
            # botocore keeps 10 connections unless told: as many as requests in flight
            config = options["config_kwargs"] = dict(options.get("config_kwargs") or {})
            config.setdefault("max_pool_connections", max_concurrency)
        fs, path = url_to_fs(url, **options)
        return cls(fs, path, read_only=read_only, max_concurrency=max_concurrency,
                   conditional_writes=conditional_writes)

    def with_read_only(self, read_only: bool = False) -> FsspecStore:
        """The same location with the given ``read_only``."""
        return type(self)(
            self.fs, self.path, read_only=read_only, max_concurrency=self.max_concurrency,
            conditional_writes=self.conditional_writes,
        )

    # -- plumbing ---------------------------------------------------------------------
    @property
    def _async_fs(self) -> Any:
        """The filesystem's async interface (a thread-backed wrapper for sync ones)."""
        if self._afs is None:
            if self.fs.async_impl:
                self._afs = self.fs
            else:
                from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper

                self._afs = AsyncFileSystemWrapper(self.fs, asynchronous=False)
        return self._afs

    def _run(self, coroutine_function: Any, *args: Any) -> Any:
        """Run a coroutine of this store on fsspec's event loop and wait for it."""
        from fsspec.asyn import sync

        return sync(self._async_fs.loop, coroutine_function, *args)

    def _full(self, key: str) -> str:
        validate_key(key)
        return f"{self.path}/{key}" if self.path else key

    def _directory(self, prefix: str) -> str:
        validate_prefix(prefix)
        if prefix == "":
            return self.path
        return f"{self.path}/{prefix[:-1]}" if self.path else prefix[:-1]

    def _check_listable(self, what: str) -> None:
        if not self.listable:
            raise TypeError(
                f"{self!r} cannot {what}: {self._protocol}:// has no listings "
                "(open a hierarchy with consolidated metadata instead)"
            )

    def _error(self, action: str, key: str, error: BaseException) -> StoreError:
        return StoreError(f"cannot {action} key {key!r} in {self!r}: {error}")

    async def _gather(self, coroutines: Sequence[Any]) -> list[Any]:
        """Await all, at most ``max_concurrency`` at once (see :func:`.aio.gather`)."""
        return await gather(coroutines, self.max_concurrency)

    # -- readable ---------------------------------------------------------------------
    async def _size(self, path: str) -> int | None:
        """The size of the value at ``path``; ``None`` if there is none."""
        try:
            info = await self._async_fs._info(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if info.get("type", "file") != "file":
            return None
        return int(info["size"])

    async def _read(self, path: str, byte_range: ByteRange | None, key: str) -> bytes | None:
        fs = self._async_fs
        try:
            if byte_range is None:
                return bytes(await fs._cat_file(path, **self._whole))
            start, length = byte_range.start, byte_range.length
            if length == 0:
                return b"" if await self._size(path) is not None else None
            if start >= 0:
                end = None if length is None else start + length
                data = await fs._cat_file(path, start=start, end=end)
                if length is not None and len(data) > length:  # the server ignored Range
                    data = data[start : start + length]
            else:  # a suffix: one request for the last -start bytes
                data = await fs._cat_file(path, start=start)
                if len(data) > -start:  # the server ignored Range
                    data = data[start:]
                if length is not None:
                    data = data[:length]
            return bytes(data)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except Exception as error:
            if byte_range is not None:
                # A range wholly past the end, or any range of an empty value, is refused
                # by HTTP servers (416): the answer is b"" if the value exists.
                size = await self._size(path)
                if size is None:
                    return None
                begin, stop = resolve_byte_range(byte_range, size, key)
                if begin >= stop:
                    return b""
            raise self._error("read", key, error) from error

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        path = self._full(key)
        validate_byte_range(byte_range, key)
        return self._run(self._read, path, byte_range, key)

    def get_many(self, requests: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
        """All requests at once, concurrently (one event-loop round trip); close ranges of
        one value are one request."""
        for key, byte_range in requests:  # refuse a bad batch before any request
            self._full(key)
            validate_byte_range(byte_range, key)
        if not requests:
            return []
        fetches, answer = coalesced(requests, COALESCE_GAP)
        jobs = [(self._full(key), byte_range, key) for key, byte_range in fetches]
        return answer(self._run(self._read_all, jobs))

    async def _read_all(self, jobs: list[tuple[str, ByteRange | None, str]]) -> list[Any]:
        return await self._gather([self._read(*job) for job in jobs])

    def exists(self, key: str) -> bool:
        return self._run(self._size, self._full(key)) is not None

    def read_rounds(self, reads: Sequence[tuple[str, RangeReader]]) -> None:
        """On ``s3`` and ``http(s)``, each round of every reader at once, every round
        after the first with ``If-Match`` the ETag the first answered with
        (:mod:`zarrx.stores.versioned`; a web server that gives no strong ETag: each value
        read whole once); elsewhere the default: each value read whole once."""
        for key, _ in reads:  # refuse a bad batch before any request
            self._full(key)
        if self._protocol in _BOTOCORE:
            fetch = self._fetch_versioned
        elif self._protocol in READ_ONLY_PROTOCOLS:
            fetch = self._fetch_web
        else:
            super().read_rounds(reads)
            return
        versioned.serve(reads, fetch, lambda make: self._run(make), self.max_concurrency, self)

    async def _fetch_web(self, key: str, byte_range: ByteRange, version: Any
                         ) -> tuple[bytes | None, Any]:
        """:meth:`_fetch_versioned` from a web server: one ranged GET (or a HEAD for an
        empty range) with ``If-Match``; a weak ETag is no version (``If-Match`` compares
        strong ones)."""
        fs = self._async_fs
        kwargs = dict(fs.kwargs)
        headers = dict(kwargs.pop("headers", None) or {})
        if version is not None:
            headers["If-Match"] = version
        if byte_range.length != 0:
            headers["Range"] = _http_range(byte_range)
        session = await fs.set_session()
        request = session.get if byte_range.length != 0 else session.head
        try:
            async with request(fs.encode_url(self._full(key)), headers=headers,
                               **kwargs) as response:
                data = await response.read()
                status, tag = response.status, response.headers.get("ETag")
                size = response.headers.get("Content-Range", "").rpartition("/")[2]
        except Exception as error:
            raise self._error("read", key, error) from error
        if status == 412 or (status == 404 and version is not None):
            raise versioned.Changed
        if status == 404:
            return None, None
        if status == 416 and size.isdigit():  # a range past the end: b"" if it is empty
            start, stop = resolve_byte_range(byte_range, int(size), key)
            if start >= stop:  # (If-Match, when sent, held: it is evaluated first)
                return b"", version if version is not None else _strong(tag)
        if status >= 400:
            raise self._error("read", key, OSError(f"HTTP {status}"))
        tag = _strong(tag)
        if version is not None and tag != version:
            raise versioned.Changed
        if byte_range.length == 0:
            return b"", tag
        if status != 206:  # the whole value: the server ignored Range
            data = data[slice(*resolve_byte_range(byte_range, len(data), key))]
        elif byte_range.start < 0 and byte_range.length is not None:
            data = data[: byte_range.length]
        return data, tag

    async def _fetch_versioned(self, key: str, byte_range: ByteRange, version: Any
                               ) -> tuple[bytes | None, Any]:
        """One range of ``key`` and the ETag of the value it came from (``version``: only
        from that one, else :class:`~zarrx.stores.versioned.Changed`), in one GET."""
        bucket, name, _ = self.fs.split_path(self._full(key))
        condition = {} if version is None else {"IfMatch": version}
        if byte_range.length == 0:
            found = await self._head_versioned(bucket, name, key, condition)
            return (None, None) if found is None else (b"", found[1])
        try:
            response = await self._async_fs._call_s3(
                "get_object", Bucket=bucket, Key=name, Range=_http_range(byte_range),
                **condition)
            try:
                data = await response["Body"].read()
            finally:
                response["Body"].close()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            if version is not None:
                raise versioned.Changed from None
            return None, None
        except Exception as error:
            if _conflict(error):
                raise versioned.Changed from None
            # A range wholly past the end, or of an empty value, is refused (416): the
            # answer is b"" if the value (of that version) exists.
            found = await self._head_versioned(bucket, name, key, condition)
            if found is None:
                if version is not None:
                    raise versioned.Changed from None
                return None, None
            start, stop = resolve_byte_range(byte_range, found[0], key)
            if start >= stop:
                return b"", found[1]
            raise self._error("read", key, error) from error
        tag = response.get("ETag")
        if version is not None and tag != version:
            raise versioned.Changed
        if "ContentRange" not in response:  # the whole value: the server ignored Range
            data = data[slice(*resolve_byte_range(byte_range, len(data), key))]
        elif byte_range.start < 0 and byte_range.length is not None:
            data = data[: byte_range.length]
        return bytes(data), tag

    async def _head_versioned(self, bucket: str, name: str, key: str,
                              condition: dict[str, Any]) -> tuple[int, Any] | None:
        """The size and ETag of the value (``None``: absent), on ``condition``."""
        try:
            response = await self._async_fs._call_s3("head_object", Bucket=bucket, Key=name,
                                                     **condition)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except Exception as error:
            if _conflict(error):
                raise versioned.Changed from None
            raise self._error("read", key, error) from error
        return int(response["ContentLength"]), response.get("ETag")

    # -- writeable --------------------------------------------------------------------
    async def _write(self, path: str, data: bytes, key: str) -> None:
        try:
            await self._async_fs._pipe_file(path, data)
        except Exception as error:
            raise self._error("write", key, error) from error

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        path = self._full(key)
        self._check_writable(key)
        self._run(self._write, path, as_bytes(value), key)

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        jobs = []
        for key, value in items:
            path = self._full(key)
            self._check_writable(key)
            jobs.append((path, as_bytes(value), key))
        if jobs:
            self._run(self._write_all, jobs)

    async def _write_all(self, jobs: list[tuple[str, bytes, str]]) -> None:
        await self._gather([self._write(*job) for job in jobs])

    async def _remove(self, path: str, key: str) -> None:
        try:
            await self._async_fs._rm_file(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            pass  # absent, or a prefix rather than a key
        except Exception as error:
            raise self._error("erase", key, error) from error

    def erase(self, key: str) -> None:
        path = self._full(key)
        self._check_writable(key)
        self._run(self._remove, path, key)

    def erase_prefix(self, prefix: str) -> None:
        directory = self._directory(prefix)
        self._check_writable(prefix)
        self._check_listable("erase a prefix")
        self._run(self._remove_below, directory, prefix)

    async def _remove_below(self, directory: str, prefix: str) -> None:
        paths = await self._find(directory)
        bulk = getattr(self._async_fs, "_bulk_delete", None)  # s3fs: 1000 keys a request
        try:
            if bulk is not None:
                await self._gather(
                    [bulk(paths[i : i + _S3_BULK_DELETE])
                     for i in range(0, len(paths), _S3_BULK_DELETE)]
                )
            else:
                await self._gather([self._remove(path, path) for path in paths])
        except StoreError:
            raise
        except Exception as error:
            raise self._error("erase", prefix, error) from error

    # -- atomic updates: conditional writes (S3) ----------------------------------------
    def get_with_version(self, key: str) -> Snapshot:
        if not self.conditional_writes:
            return super().get_with_version(key)
        return self._run(self._read_versioned, self._full(key), key)

    def get_many_with_version(self, keys: Sequence[str]) -> list[Snapshot]:
        if not self.conditional_writes:
            return super().get_many_with_version(keys)
        jobs = [(self._full(key), key) for key in keys]
        return self._run(self._gather_versioned, jobs) if jobs else []

    async def _gather_versioned(self, jobs: list[tuple[str, str]]) -> list[Any]:
        return await self._gather([self._read_versioned(*job) for job in jobs])

    async def _read_versioned(self, path: str, key: str) -> Snapshot:
        """The value at ``path`` and its ETag, from one GET."""
        bucket, name, _ = self.fs.split_path(path)
        try:
            response = await self._async_fs._call_s3("get_object", Bucket=bucket, Key=name)
            try:
                data = await response["Body"].read()
            finally:
                response["Body"].close()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return Snapshot(None)
        except Exception as error:
            raise self._error("read", key, error) from error
        return Snapshot(bytes(data), response["ETag"])

    def set_if(self, key: str, value: Any, version: Any) -> bool:
        path = self._full(key)
        self._check_writable(key)
        if not self.conditional_writes:
            return super().set_if(key, value, version)
        data = None if value is None else as_bytes(value)
        if data is not None and len(data) > _S3_MAX_PUT:
            raise StoreError(
                f"cannot update key {key!r} in {self!r}: {len(data)} bytes is more than one "
                f"conditional PUT may hold ({_S3_MAX_PUT}); use smaller shards"
            )
        return self._run(self._write_if, path, data, version, key)

    async def _write_if(self, path: str, data: bytes | None, version: Any, key: str) -> bool:
        bucket, name, _ = self.fs.split_path(path)
        call = self._async_fs._call_s3
        try:
            if data is not None:
                condition = {"IfNoneMatch": "*"} if version is None else {"IfMatch": version}
                await call("put_object", Bucket=bucket, Key=name, Body=data, **condition)
            elif version is not None:
                await call("delete_object", Bucket=bucket, Key=name, IfMatch=version)
            elif await self._size(path) is not None:  # erase what must be absent: it is not
                return False
        except FileNotFoundError:
            return False  # If-Match on a value erased meanwhile
        except Exception as error:
            if _conflict(error):
                return False
            raise self._error("write", key, error) from error
        finally:
            self.fs.invalidate_cache(path)
        return True

    # -- listable ---------------------------------------------------------------------
    async def _find(self, directory: str) -> list[str]:
        """Full paths of the values below ``directory`` (which is never itself a key)."""
        try:
            found = await self._async_fs._find(directory, detail=False)
        except (FileNotFoundError, NotADirectoryError):
            return []
        head = f"{directory}/" if directory else ""
        return [p for p in found if p.startswith(head) and is_valid_key(p[len(head) :])]

    def list(self) -> list[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> builtins.list[str]:
        directory = self._directory(prefix)
        self._check_listable("list keys")
        head = len(self.path) + 1 if self.path else 0
        return sorted(p[head:] for p in self._run(self._find, directory))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        directory = self._directory(prefix)
        self._check_listable("list a directory")
        entries = self._run(self._ls, directory)
        head = f"{directory}/" if directory else ""
        keys: set[str] = set()
        prefixes: set[str] = set()
        for entry in entries:
            name = entry["name"].rstrip("/")
            if not name.startswith(head):
                continue  # the listed path itself, when it is a key
            child = name[len(head) :]
            if "/" in child or not is_valid_key(child):
                continue
            if entry.get("type") == "directory":
                prefixes.add(prefix + child + "/")
            else:
                keys.add(prefix + child)
        return sorted(keys), sorted(prefixes)

    async def _ls(self, directory: str) -> builtins.list[dict[str, Any]]:
        fs = self._async_fs
        fs.invalidate_cache(directory)
        try:
            return await fs._ls(directory, detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return []

    # -- identity ---------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_afs"] = None  # the async view is rebuilt on the other side
        return state

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FsspecStore):
            return NotImplemented
        return (self.fs, self.path, self.read_only) == (other.fs, other.path, other.read_only)

    def __hash__(self) -> int:
        return hash((type(self.fs), self.path, self.read_only))

    def __repr__(self) -> str:
        location = self.path if "://" in self.path else f"{self._protocol}://{self.path}"
        return f"FsspecStore({location!r}{', read_only=True' if self.read_only else ''})"
