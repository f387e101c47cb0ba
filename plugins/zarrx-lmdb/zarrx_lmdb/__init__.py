"""zarrx-lmdb: an LMDB key-value store for zarrx (seed 000 names key-value databases).

Installing this package registers the ``lmdb`` URL scheme in zarrx's ``zarrx.stores``
entry-point group, so ``zarrx.open("lmdb:///path/to/db")`` works with no change to zarrx.

- One LMDB environment per database directory and process, shared by every store and
  view on it (LMDB forbids opening one environment twice in a process); it is closed when
  the last owning store closes, and reopened in a forked child.
- Reads of a batch share one read transaction: a consistent snapshot. A byte range is
  cut from LMDB's memory map without copying the whole value.
- Each write is one write transaction, so it is atomic and durable (``sync=True``).
- ``map_size`` is the largest the database may grow (virtual address space, not memory
  or disk used up front): 1 TiB by default.

>>> import tempfile
>>> with LMDBStore(tempfile.mkdtemp()) as store:
...     store.set("zarr.json", b"{}")
...     store.list_dir("")
(['zarr.json'], [])
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import lmdb

from zarrx.abc import ByteRange, Store
from zarrx.errors import InvalidKeyError, StoreError
from zarrx.stores.keys import is_valid_key, resolve_byte_range, validate_key, validate_prefix

__all__ = ["LMDBStore"]
__version__ = "0.1.0"

DEFAULT_MAP_SIZE = 2**40
_OPTIONS = frozenset({"map_size", "sync", "max_readers"})


class _Env:
    """One open environment, shared in this process, with the owners that keep it open."""

    def __init__(self, path: str, map_size: int, sync: bool, max_readers: int) -> None:
        self.path = path
        self.pid = os.getpid()
        self.owners = 0
        self.write_lock = threading.Lock()
        writable = not os.path.exists(path) or os.access(path, os.W_OK)
        try:
            self.env = lmdb.open(
                path,
                map_size=map_size,
                subdir=True,
                readonly=not writable,
                create=writable,
                sync=sync,
                max_readers=max_readers,
                max_dbs=0,
                lock=True,
            )
        except lmdb.Error as error:
            raise StoreError(f"cannot open the LMDB database at {path!r}: {error}") from error
        self.writable = writable


_envs: dict[str, _Env] = {}
_envs_lock = threading.Lock()


def _forget_envs() -> None:
    """A forked child must not use its parent's environments (LMDB's rule): reopen them."""
    global _envs_lock
    _envs.clear()
    _envs_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_envs)


def _acquire(path: str, map_size: int, sync: bool, max_readers: int) -> _Env:
    with _envs_lock:
        env = _envs.get(path)
        if env is None or env.pid != os.getpid():
            env = _envs[path] = _Env(path, map_size, sync, max_readers)
        env.owners += 1
        return env


def _release(env: _Env) -> None:
    with _envs_lock:
        env.owners -= 1
        if env.owners <= 0 and env.pid == os.getpid():
            if _envs.get(env.path) is env:
                del _envs[env.path]
            env.env.close()


class LMDBStore(Store):
    """A zarrx store in the LMDB database directory ``path`` (created when writable)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        read_only: bool = False,
        *,
        map_size: int = DEFAULT_MAP_SIZE,
        sync: bool = True,
        max_readers: int = 126,
    ) -> None:
        super().__init__(read_only=read_only)
        location = os.fspath(path)
        if not location:
            raise ValueError("LMDBStore needs the path of a database directory")
        if read_only and not os.path.isdir(location):
            raise FileNotFoundError(f"no LMDB database at {location!r} to open read-only")
        self._path = os.path.realpath(location)
        self._options = {"map_size": map_size, "sync": sync, "max_readers": max_readers}
        self._env: _Env | None = _acquire(self._path, map_size, sync, max_readers)
        self._owner = True
        if not self._env.writable and not read_only:
            self.read_only = True  # the directory is not writable: so is this store

    @classmethod
    def from_url(
        cls, url: str, *, read_only: bool = False, storage_options: dict[str, Any] | None = None
    ) -> LMDBStore:
        """``lmdb:///abs/path`` or ``lmdb://relative/path``; ``storage_options`` may hold
        ``map_size``, ``sync`` and ``max_readers``."""
        scheme, sep, path = url.partition("://")
        if scheme.lower() != "lmdb" or not sep or not path:
            raise ValueError(f"not an lmdb:// URL with a path: {url!r}")
        options = dict(storage_options or {})
        unknown = set(options) - _OPTIONS
        if unknown:
            raise TypeError(f"unknown storage_options {sorted(unknown)} for {url!r}")
        return cls(path, read_only=read_only, **options)

    def with_read_only(self, read_only: bool = False) -> LMDBStore:
        """Another view of the same database (closing a view closes nothing)."""
        view = type(self).__new__(type(self))
        Store.__init__(view, read_only=read_only or not self._live().writable)
        view._path = self._path
        view._options = self._options
        view._env = self._env
        view._owner = False
        return view

    @property
    def path(self) -> str:
        return self._path

    def close(self) -> None:
        if self._owner and self._env is not None:
            env, self._env = self._env, None
            _release(env)

    def __del__(self) -> None:
        if getattr(self, "_owner", False) and getattr(self, "_env", None) is not None:
            self.close()

    # -- plumbing -----------------------------------------------------------------------
    def _live(self) -> _Env:
        env = self._env
        if env is None:
            raise StoreError(f"{self!r} is closed")
        if env.pid != os.getpid():  # after a fork: this process's own environment
            self._env = env = _acquire(self._path, **self._options)
            self._owner = True
        return env

    def _read(self, txn: Any, key: str, byte_range: ByteRange | None) -> bytes | None:
        try:
            value = txn.get(key.encode())
        except lmdb.BadValsizeError:  # longer than LMDB's key limit: it cannot be there
            return None
        if value is None:
            return None
        if byte_range is None:
            return bytes(value)
        start, stop = resolve_byte_range(byte_range, len(value), key)
        return bytes(value[start:stop])

    @staticmethod
    def _check_range(key: str, byte_range: ByteRange | None) -> None:
        if byte_range is not None and byte_range.length is not None and byte_range.length < 0:
            raise InvalidKeyError(
                f"invalid byte range {byte_range!r} for key {key!r}: length must be >= 0"
            )

    def _write(self, action: str, what: str, work: Any) -> None:
        env = self._live()
        try:
            with env.write_lock, env.env.begin(write=True) as txn:
                work(txn)
        except lmdb.MapFullError as error:
            raise StoreError(
                f"cannot {action} {what!r}: the LMDB database {self._path!r} is full "
                f"(map_size={self._options['map_size']}); reopen it with a larger map_size"
            ) from error
        except lmdb.BadValsizeError as error:
            raise StoreError(
                f"cannot {action} {what!r}: LMDB keys are at most "
                f"{self._live().env.max_key_size()} bytes"
            ) from error
        except lmdb.Error as error:
            raise StoreError(f"cannot {action} {what!r} in {self._path!r}: {error}") from error

    # -- readable -----------------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        validate_key(key)
        self._check_range(key, byte_range)
        with self._live().env.begin(buffers=True) as txn:
            return self._read(txn, key, byte_range)

    def get_many(self, requests: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
        for key, byte_range in requests:  # refuse a bad batch before reading any of it
            validate_key(key)
            self._check_range(key, byte_range)
        if not requests:
            return []
        with self._live().env.begin(buffers=True) as txn:  # one snapshot for the batch
            return [self._read(txn, key, byte_range) for key, byte_range in requests]

    def exists(self, key: str) -> bool:
        validate_key(key)
        return self.get(key, ByteRange(0, 0)) is not None

    # -- writeable ----------------------------------------------------------------------
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        validate_key(key)
        self._check_writable(key)
        data = value if type(value) is bytes else memoryview(value).tobytes()  # TypeError
        self._write("write", key, lambda txn: txn.put(key.encode(), data))

    def erase(self, key: str) -> None:
        validate_key(key)
        self._check_writable(key)
        self._write("erase", key, lambda txn: txn.delete(key.encode()))

    def erase_prefix(self, prefix: str) -> None:
        validate_prefix(prefix)
        self._check_writable(prefix)

        def erase_all(txn: Any) -> None:
            with txn.cursor() as cursor:
                head = prefix.encode()
                if not cursor.set_range(head):
                    return
                while cursor.key().startswith(head):
                    if not cursor.delete():  # moves to the next record
                        return

        self._write("erase prefix", prefix, erase_all)

    # -- listable -----------------------------------------------------------------------
    def _keys(self, prefix: str) -> Iterator[str]:
        head = prefix.encode()
        with self._live().env.begin() as txn, txn.cursor() as cursor:
            if not cursor.set_range(head):
                return
            for raw in cursor.iternext(keys=True, values=False):
                if not raw.startswith(head):
                    return
                key = raw.decode("utf-8", "surrogateescape")
                if is_valid_key(key):
                    yield key

    def list(self) -> list[str]:
        return list(self._keys(""))  # LMDB keeps keys in byte order: UTF-8 sorts as str

    def list_prefix(self, prefix: str) -> list[str]:
        validate_prefix(prefix)
        return list(self._keys(prefix))

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        validate_prefix(prefix)
        keys: list[str] = []
        prefixes: list[str] = []
        head = prefix.encode()
        with self._live().env.begin() as txn, txn.cursor() as cursor:
            found = cursor.set_range(head)
            while found:
                raw = cursor.key()
                if not raw.startswith(head):
                    break
                slash = raw.find(b"/", len(head))
                if slash < 0:
                    key = raw.decode("utf-8", "surrogateescape")
                    if is_valid_key(key):
                        keys.append(key)
                    found = cursor.next()
                else:
                    child = raw[: slash + 1]
                    name = child.decode("utf-8", "surrogateescape")
                    if is_valid_key(name[:-1]):
                        prefixes.append(name)
                    found = cursor.set_range(child[:-1] + b"0")  # skip the subtree ("/"+1)
        return keys, prefixes

    # -- identity -----------------------------------------------------------------------
    def __reduce__(self) -> Any:
        return _reopen, (self._path, self.read_only, self._options)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LMDBStore):
            return NotImplemented
        return self._path == other._path and self.read_only == other.read_only

    def __hash__(self) -> int:
        return hash((self._path, self.read_only))

    def __repr__(self) -> str:
        return f"LMDBStore({self._path!r}{', read_only=True' if self.read_only else ''})"


def _reopen(path: str, read_only: bool, options: dict[str, Any]) -> LMDBStore:
    return LMDBStore(path, read_only=read_only, **options)
