"""The store contract: seed 000's abstract store interface, plus byte ranges and batches.

Keys are ``/``-separated strings without a leading slash, validated before any I/O by
:func:`zarrx.stores.keys.validate_key`. A store says whether it is readable, writeable and
listable; an operation it does not support raises :class:`zarrx.errors.ReadOnlyError` (for
writes) or :class:`TypeError`.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from zarrx.errors import ReadOnlyError


@dataclass(frozen=True)
class ByteRange:
    """A request for part of a value.

    ``start`` alone (``length=None``) reads to the end; a negative ``start`` with no length
    reads the last ``-start`` bytes (a suffix, as HTTP ``Range: bytes=-N``).
    """

    start: int
    length: int | None = None


class Store(ABC):
    """A key-value store of bytes."""

    readable: bool = True
    writeable: bool = True
    listable: bool = True
    #: High-latency stores set this: the engine then fetches chunks with ``get_many``
    #: batches; otherwise each worker reads its own chunk (less memory in flight).
    batched_reads: bool = False
    #: Stores whose :meth:`lock` really excludes other writers (threads and processes).
    supports_locking: bool = False

    def __init__(self, *, read_only: bool = False) -> None:
        self.read_only = read_only

    # -- readable -----------------------------------------------------------------
    @abstractmethod
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        """The value (or the requested part of it), or ``None`` when the key is absent."""

    def get_many(
        self, requests: Sequence[tuple[str, ByteRange | None]]
    ) -> list[bytes | None]:
        """Many reads at once. High-latency stores override this to run them concurrently."""
        return [self.get(key, byte_range) for key, byte_range in requests]

    def exists(self, key: str) -> bool:
        return self.get(key) is not None

    # -- writeable ----------------------------------------------------------------
    def check_keys(self, keys: Iterable[str]) -> None:  # noqa: B027 - optional hook
        """Raise :class:`zarrx.errors.InvalidKeyError` for a key this store could not
        write, so that a node is refused before any of its keys is written (a file
        system's name length limit, say). The default has no limits of its own (``set``
        validates every key)."""

    @abstractmethod
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        """Store ``value`` under ``key``, atomically (a reader sees old or new, never partial)."""

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        for key, value in items:
            self.set(key, value)

    @abstractmethod
    def erase(self, key: str) -> None:
        """Remove ``key``; no error if it is absent."""

    @abstractmethod
    def erase_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix`` (which must end in ``/`` or be ``""``)."""

    # -- listable -----------------------------------------------------------------
    @abstractmethod
    def list(self) -> list[str]:
        """Every key in the store."""

    @abstractmethod
    def list_prefix(self, prefix: str) -> builtins.list[str]:
        """Every key that starts with ``prefix``."""

    @abstractmethod
    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """``(keys, prefixes)`` directly below ``prefix`` (seed 000 ``list_dir``).

        ``prefix`` is ``""`` or ends in ``/``. Returned keys and prefixes are full keys;
        prefixes end in ``/``.
        """

    def lock(self, key: str) -> AbstractContextManager[None]:
        """Hold an exclusive lock on ``key`` for a read-modify-write. Stores that cannot lock
        return a no-op: concurrent partial writes to one chunk may then lose updates."""
        return nullcontext()

    # -- helpers --------------------------------------------------------------------
    def _check_writable(self, key: str) -> None:
        if self.read_only or not self.writeable:
            raise ReadOnlyError(f"cannot write {key!r}: {self!r} is read-only")

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (files, connections)."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
