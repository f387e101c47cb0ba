"""Locks that make a store's read-modify-writes atomic (``Store.atomic_updates == "lock"``).

- :class:`KeyLocks`: one lock per key among the threads of one process, for stores that
  only one process can write (memory, a zip archive being written).
- :func:`hold_file_lock`: a lock file beside the key, for directories that processes on
  other machines write too (a parallel or network file system). The lock is an open file
  description lock (``F_OFD_SETLKW``, Linux; ``flock`` elsewhere), which NFS and Lustre
  honour across machines, as tensorstore uses them. Such a lock belongs to one open of the
  file, so threads exclude each other as processes do, and the kernel releases it when its
  holder dies, even by ``SIGKILL``: a dead writer never blocks the others.

Every lock taken here is counted as a key lock its thread holds while it is held
(:func:`~zarrx.runtime.executor.key_lock_held`): such a thread never waits for a pool.

A lock file is removed by the writer that holds it, when its update is done, so none is
left behind by finished writers. A writer that waited on a file its holder has since
removed (or that a killed writer left) finds out after it got the lock — the name no
longer leads to the file it holds — and starts again on the file the name leads to now.
The rule that makes this safe: only the holder of the lock on the file the name leads to
may remove that name.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import struct
import threading
import time
from collections.abc import Iterator

from zarrx.errors import StoreError
from zarrx.runtime.executor import key_lock_held

_log = logging.getLogger(__name__)

_OPEN_FLAGS = (
    os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
_BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)
_ATTEMPTS = 64  # to make a lock file's directory that concurrent writers keep pruning

try:
    import fcntl
except ImportError:  # Windows: LocalStore has no atomic updates there
    fcntl = None  # type: ignore[assignment]

#: File locks work on this platform.
AVAILABLE = fcntl is not None
_OFD = AVAILABLE and hasattr(fcntl, "F_OFD_SETLKW")
#: The locks are open file description locks (which the kernels of ``zarrx._core.files``
#: take too).
OFD = _OFD


class KeyLocks:
    """One exclusive lock per key, among the threads of this process."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}  # lock, threads using it

    @contextlib.contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(key) or (threading.Lock(), 0)
            self._locks[key] = (lock, users + 1)
        try:
            with lock, key_lock_held():
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)


def _lock(fd: int, *, wait: bool) -> bool:
    """Take the exclusive lock of the open file ``fd``; ``False`` if busy and not ``wait``."""
    assert fcntl is not None
    try:
        if _OFD:
            # struct flock: l_type, l_whence, l_start, l_len (0: to the end, whatever it
            # grows to), l_pid (0, as open file description locks require).
            request = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
            fcntl.fcntl(fd, fcntl.F_OFD_SETLKW if wait else fcntl.F_OFD_SETLK, request)
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError as error:
        if not wait and error.errno in _BUSY:
            return False
        raise
    return True


def _open(path: str, made: list[str]) -> int:
    """Open (create) the lock file ``path``, making its directory if needed (then noted in
    ``made``). Another writer may prune an empty directory between our making it and our
    opening the file in it: make it again, a bounded number of times."""
    directory = os.path.dirname(path)
    attempts = _ATTEMPTS
    while True:
        try:
            return os.open(path, _OPEN_FLAGS, 0o666)
        except FileNotFoundError:  # a new chunk directory, or one pruned meanwhile
            attempts -= 1
            if not attempts:
                raise
        if make_directory(directory):
            made.append(directory)


def make_directory(directory: str) -> bool:
    """``os.makedirs(directory, exist_ok=True)`` while other writers may prune empty
    directories: a parent pruned under us (``FileNotFoundError``), or the directory pruned
    between ``mkdir``'s "exists" and makedirs' check of it (``FileExistsError``), leave it
    to the caller's next attempt. Whether this call got as far as making it."""
    try:
        os.makedirs(directory, exist_ok=True)
    except (FileNotFoundError, FileExistsError):
        if os.path.lexists(directory) and not os.path.isdir(directory):
            raise  # a file where the directory should be: not a race
        return False
    return True


def _same(a: int, b: int) -> bool:
    sa, sb = os.fstat(a), os.fstat(b)
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


@contextlib.contextmanager
def hold_file_lock(path: str, what: str) -> Iterator[bool]:
    """Hold the lock file ``path`` (a file the caller proved to lie inside its store) for
    the ``with`` block, then remove it. ``what`` names the key in messages. The block gets
    whether the lock file's directory had to be made (the caller may prune it after)."""
    made: list[str] = []
    try:
        fd = _acquire(path, what, made)
    except OSError as error:
        raise StoreError(f"cannot lock {what} (lock file {path!r}): {error}") from error
    try:
        with key_lock_held():
            yield bool(made)
    finally:
        try:
            os.unlink(path)  # we hold the file the name leads to: the name is ours to remove
        except FileNotFoundError:
            pass  # the key's directory was erased meanwhile (erase_prefix)
        finally:
            os.close(fd)  # releases the lock; a waiter finds the name gone and starts again


class LockFile:
    """A lock file held by :func:`hold_lock_file`: its descriptor (open for reading and
    writing), and whether its directory had to be made."""

    def __init__(self, fd: int, path: str, made_directory: bool) -> None:
        self.fd = fd
        self.path = path
        self.made_directory = made_directory
        self.moved = False

    def move_to(self, target: str) -> None:
        """Rename the lock file (filled by the holder) over ``target``, in the same
        directory: it becomes the target's new value in one step, and the lock's name is
        free. The holder may remove that name, and renaming does (waiters then find the
        name gone and start again, as when it is removed)."""
        os.replace(self.path, target)
        self.moved = True


@contextlib.contextmanager
def hold_lock_file(path: str, what: str) -> Iterator[LockFile]:
    """:func:`hold_file_lock` whose block gets the lock file itself, to write a new value
    into and :meth:`~LockFile.move_to` its key (one file made per update, not two, as
    tensorstore does); a lock file not moved is removed afterwards."""
    made: list[str] = []
    try:
        fd = _acquire(path, what, made)
    except OSError as error:
        raise StoreError(f"cannot lock {what} (lock file {path!r}): {error}") from error
    held = LockFile(fd, path, bool(made))
    try:
        with key_lock_held():
            yield held
    finally:
        try:
            if not held.moved:  # once moved, the name may be another writer's lock file
                os.unlink(path)
        except FileNotFoundError:
            pass  # the key's directory was erased meanwhile (erase_prefix)
        finally:
            os.close(fd)  # releases the lock; a waiter finds the name gone and starts again


def _acquire(path: str, what: str, made: list[str]) -> int:
    fd = _open(path, made)
    waited = 0.0
    try:
        while True:
            if not _lock(fd, wait=False):
                _log.debug("%s is locked by another writer: waiting", what)
                start = time.monotonic()
                _lock(fd, wait=True)
                waited += time.monotonic() - start
            # The holder may have removed the name before we got the lock: check that the
            # name still leads to the file we hold (a second open: an open file description
            # lock, unlike a classic POSIX one, survives closing it).
            current = _open(path, made)
            if _same(fd, current):
                os.close(current)
                if waited:
                    _log.debug("%s: lock taken after waiting %.3f s", what, waited)
                return fd
            os.close(fd)
            fd = current
    except BaseException:
        os.close(fd)
        raise
