"""The descriptor of a :class:`~zarrx.stores.local.LocalStore`'s root directory, which
reads and writes open keys beneath (``openat2``), and its life.

The root may be removed, renamed or replaced while the store lives (a test suite's
temporary directory, an array written again from scratch). Each use of the descriptor
checks it against the root path (the same device and inode, by one ``lstat``), so a
replaced root is never read through its old descriptor: a new one is opened. The old one
may still be in use by another thread's read; it is closed when its last user is done
(users are counted), so a root replaced many times leaves no descriptor behind.

>>> import os, tempfile
>>> root = RootDescriptor(tempfile.mkdtemp())
>>> with root.use() as fd:
...     os.path.samestat(os.fstat(fd), os.stat(root.path))
True
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from contextlib import AbstractContextManager, nullcontext
from typing import Any

_FLAGS = os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_PATH", os.O_RDONLY) if (
    hasattr(os, "O_DIRECTORY") and hasattr(os, "O_NOFOLLOW")
) else 0
#: What :meth:`RootDescriptor.use` gives when there is no descriptor to read beneath.
NO_ROOT: AbstractContextManager[None] = nullcontext()


class _Held:
    """One open descriptor of the root, with the threads using it."""

    __slots__ = ("dev", "fd", "ino", "owner", "users")

    def __init__(self, owner: RootDescriptor, fd: int, dev: int, ino: int) -> None:
        self.owner, self.fd, self.dev, self.ino = owner, fd, dev, ino
        self.users = 0

    def __enter__(self) -> int:
        return self.fd

    def __exit__(self, *exc: object) -> None:
        self.owner._release(self)


class RootDescriptor:
    """The root directory ``path``'s descriptor, opened when first used."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._held: _Held | None = None
        _all.add(self)

    def use(self) -> AbstractContextManager[Any]:
        """A ``with`` block that gets the descriptor of the root as it is now (or
        ``None`` when there is no root directory, or it cannot be opened), kept open
        until the block ends."""
        try:
            info = os.lstat(self.path)
        except OSError:
            return NO_ROOT  # no root (yet): nothing to read below it either
        with self._lock:
            held = self._held
            if held is None or held.dev != info.st_dev or held.ino != info.st_ino:
                held = self._open(info)
                if held is None:
                    return NO_ROOT
            held.users += 1
            return held

    def _open(self, info: os.stat_result) -> _Held | None:
        """Open the root (``info`` its path's ``lstat``) in place of the held descriptor,
        which is closed now if unused, else by its last user."""
        try:
            fd = os.open(self.path, _FLAGS)  # O_NOFOLLOW: never through a link
        except OSError:
            return None
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            os.close(fd)  # replaced meanwhile
            return None
        old, self._held = self._held, _Held(self, fd, opened.st_dev, opened.st_ino)
        if old is not None and not old.users:
            os.close(old.fd)
        return self._held

    def _release(self, held: _Held) -> None:
        with self._lock:
            held.users -= 1
            if not held.users and held is not self._held:
                os.close(held.fd)

    def close(self) -> None:
        """Close the descriptor (when the store goes; no thread may be using it)."""
        held, self._held = self._held, None
        if held is not None:
            with contextlib.suppress(OSError):
                os.close(held.fd)

    def _after_fork(self) -> None:
        # The parent's threads that held the lock or used a descriptor are not here.
        self._lock = threading.Lock()
        if self._held is not None:
            self._held.users = 0


_all: weakref.WeakSet[RootDescriptor] = weakref.WeakSet()


def _after_fork() -> None:
    for root in list(_all):
        root._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
