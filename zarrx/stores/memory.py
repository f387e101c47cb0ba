"""MemoryStore: a dict of bytes, for tests, scratch arrays and ``memory://`` URLs.

Views made by :meth:`MemoryStore.with_read_only` and by opening one ``memory://name`` URL
several times share one backing dict, so they see the same data. Named stores live in a
process-wide registry until :func:`forget_named` drops them.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from zarrx.abc.store import ByteRange, Store, as_bytes
from zarrx.stores.keys import resolve_byte_range, validate_key, validate_prefix
from zarrx.stores.locks import KeyLocks


class _Backing:
    """The data shared by every view of one memory store."""

    __slots__ = ("data", "key_locks", "lock", "name")

    def __init__(self, name: str | None = None) -> None:
        self.data: dict[str, bytes] = {}
        self.lock = threading.Lock()  # guards mutation and iteration; dict.get needs none
        self.key_locks = KeyLocks()  # atomic updates: only this process can reach the data
        self.name = name

    def __getstate__(self) -> tuple[dict[str, bytes], str | None]:
        # A pickled memory store is a copy (another process cannot share this memory).
        with self.lock:
            return dict(self.data), self.name

    def __setstate__(self, state: tuple[dict[str, bytes], str | None]) -> None:
        self.data, self.name = state
        self.lock = threading.Lock()
        self.key_locks = KeyLocks()


_named: dict[str, _Backing] = {}
_named_lock = threading.Lock()



class MemoryStore(Store):
    """A thread-safe in-memory store."""

    atomic_updates = "lock"
    shared = False  # (its data lives in this process)

    def __init__(self, *, read_only: bool = False) -> None:
        super().__init__(read_only=read_only)
        self._backing = _Backing()

    @classmethod
    def _view(cls, backing: _Backing, read_only: bool) -> MemoryStore:
        store = cls.__new__(cls)
        Store.__init__(store, read_only=read_only)
        store._backing = backing
        return store

    @classmethod
    def from_url(
        cls, url: str, *, read_only: bool = False, storage_options: dict[str, Any] | None = None
    ) -> MemoryStore:
        """``memory://name`` reaches the same data every time in this process;
        ``memory://`` alone makes a new, anonymous store."""
        if storage_options:
            raise TypeError(f"storage_options {storage_options!r} are not used by {url!r}")
        scheme, sep, name = url.partition("://")
        if scheme.lower() != "memory" or not sep:
            raise ValueError(f"not a memory:// URL: {url!r}")
        name = name.strip("/")
        if not name:
            return cls(read_only=read_only)
        with _named_lock:
            backing = _named.get(name)
            if backing is None:
                backing = _named[name] = _Backing(name)
        return cls._view(backing, read_only)

    def with_read_only(self, read_only: bool = False) -> MemoryStore:
        """Another view of the same data with the given ``read_only``."""
        return self._view(self._backing, read_only)

    # -- readable -----------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        value = self._backing.data.get(validate_key(key))
        if value is None or byte_range is None:
            return value
        start, stop = resolve_byte_range(byte_range, len(value), key)
        return value[start:stop]

    def get_many(self, requests: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
        for key, _ in requests:  # refuse a bad batch before reading any of it
            validate_key(key)
        return [self.get(key, byte_range) for key, byte_range in requests]

    def exists(self, key: str) -> bool:
        return validate_key(key) in self._backing.data

    # -- writeable ----------------------------------------------------------------
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        validate_key(key)
        self._check_writable(key)
        data = as_bytes(value)
        with self._backing.lock:
            self._backing.data[key] = data

    def erase(self, key: str) -> None:
        validate_key(key)
        self._check_writable(key)
        with self._backing.lock:
            self._backing.data.pop(key, None)

    def erase_prefix(self, prefix: str) -> None:
        validate_prefix(prefix)
        self._check_writable(prefix)
        with self._backing.lock:
            if prefix == "":
                self._backing.data.clear()
                return
            for key in [k for k in self._backing.data if k.startswith(prefix)]:
                del self._backing.data[key]

    def lock(self, key: str) -> AbstractContextManager[None]:
        """Exclude the other threads' updates of ``key`` (no other process sees this data)."""
        return self._backing.key_locks.hold(validate_key(key))

    # -- listable -----------------------------------------------------------------
    def _keys(self) -> list[str]:
        with self._backing.lock:
            return list(self._backing.data)

    def list(self) -> list[str]:
        return sorted(self._keys())

    def list_prefix(self, prefix: str) -> builtins.list[str]:
        validate_prefix(prefix)
        return sorted(k for k in self._keys() if k.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        validate_prefix(prefix)
        keys: set[str] = set()
        prefixes: set[str] = set()
        n = len(prefix)
        for key in self._keys():
            if key.startswith(prefix):
                slash = key.find("/", n)
                if slash < 0:
                    keys.add(key)
                else:
                    prefixes.add(key[: slash + 1])
        return sorted(keys), sorted(prefixes)

    # -- identity -------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        """Views of the same data with the same ``read_only`` are equal."""
        if not isinstance(other, MemoryStore):
            return NotImplemented
        return self._backing is other._backing and self.read_only == other.read_only

    def __hash__(self) -> int:
        return hash((id(self._backing), self.read_only))

    def same_data(self, other: Store) -> bool:
        return isinstance(other, MemoryStore) and other._backing is self._backing

    def __repr__(self) -> str:
        where = f"memory://{self._backing.name}" if self._backing.name else hex(id(self._backing))
        return f"MemoryStore({where}{', read_only=True' if self.read_only else ''})"


def forget_named(name: str) -> None:
    """Drop the named store ``memory://name`` (its data goes once no view is left)."""
    with _named_lock:
        _named.pop(name.strip("/"), None)
