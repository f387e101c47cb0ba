"""LocalStore: a directory on the local file system, one file per key.

Safety first, because this store deletes files. Every key goes through
:func:`zarrx.stores.keys.validate_key` and then :meth:`LocalStore._path`, which proves
that the real path (symlinks resolved) lies inside the real root before any read, write
or delete; a symlink in the store that leads outside is refused. Deletions never follow
symlinks, and the root directory itself is never removed.

Reads (``get``, ``get_many``, whole or byte ranges) prove the same in the kernel where
Linux has ``openat2(2)`` (5.6 and later): the key is opened relative to a descriptor of
the root with ``RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS``, which fails (``EXDEV``,
``ELOOP``) instead of resolving a link or ``..`` that leaves the root, so a read costs
no ``lstat`` per component. Any failure of that open other than "absent" (a link that
leaves, ``EAGAIN`` after a concurrent rename, an error) sends the read through
:meth:`LocalStore._path` as before, which then decides with its own checks; ``ENOSYS``,
``EPERM`` (a seccomp filter), ``EINVAL`` or ``E2BIG`` turn ``openat2`` off for the
process. The root's descriptor is checked against the root path (device and inode, by
one ``lstat`` per call or batch) so a root removed, renamed or replaced by a link is
never read through a stale descriptor (:mod:`zarrx.stores.root`; a replaced root's
descriptor is closed once no reader uses it).

Reads in rounds (:meth:`LocalStore.read_rounds`: a shard's index, then its inner chunks)
open the key once and read every round from that descriptor with ``pread``: one version
of the value, even if a writer renames another over the key meanwhile.

Writes are atomic: the value goes to a temporary file in the target directory, named
with :data:`~zarrx.stores.keys.TEMP_PREFIX` (never a valid key, so never listed), and is
then put in its place. Where reads use ``openat2``, so do writes, in one call without the
GIL (:func:`zarrx._core.files.write_beneath`: the key's directory opened beneath the root's
descriptor, the value's parts written by ``writev``, the temporary file renamed over the
key: a rename, not a swap, so that ext4's ``auto_da_alloc`` writes the new file before a
crash could leave the key empty); an absent directory, a key that is a link, or anything
the kernel refuses goes through :meth:`LocalStore._path` and :func:`os.replace`. Neither
way is durable across a crash without ``fsync``.

Read-modify-writes are atomic against writers on other machines too (``atomic_updates =
"lock"``): the lock of key ``a/b`` is the lock file ``a/.zarrx-lock-b.lock`` beside it, held
with a file system lock that NFS and Lustre honour (:mod:`zarrx.stores.locks`), and removed
when the update is done. A whole value written against such updates
(:meth:`LocalStore.atomic_set_parts`) is written into the lock file, which is renamed over
the key. A thread holding a lock reads in its own thread, never waiting for the I/O threads.

Listings skip temporary files, lock files, names that are not valid keys, symlinked
directories (which could form cycles) and symlinks that resolve outside the root
(:mod:`zarrx.stores.tree`).
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import itertools
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from zarrx._core.files import (
    WRITE_DIRECTORY,
    WRITE_LINK,
    WRITE_TEMP,
    open_beneath,
    read_beneath,
    read_many_beneath,
    write_beneath,
    write_locked_beneath,
)
from zarrx.abc.store import ByteRange, Part, RangeReader, Snapshot, Splice, Store, Value
from zarrx.errors import InvalidKeyError, StoreError
from zarrx.runtime.executor import io_slices, may_wait_for_pools, on_io_threads
from zarrx.stores import locks, splice, tree
from zarrx.stores.file_reads import (
    ABSENT,
    READ_FLAGS,
    open_file,
    read_open,
    read_path,
    serve_rounds,
)
from zarrx.stores.keys import (
    LOCK_PREFIX,
    TEMP_PREFIX,
    lock_name,
    validate_byte_range,
    validate_key,
    validate_prefix,
)
from zarrx.stores.root import NO_ROOT, RootDescriptor

if TYPE_CHECKING:
    from pathlib import Path

_MIN_CONCURRENT_READS = 4  # below this, thread hand-off costs more than it saves
_POSIX = os.name == "posix"
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)

#: Whether reads may try ``openat2`` (Linux only; turned off for the process once the
#: kernel, the C library or a seccomp filter is found to lack it). Tests set it to force
#: the checked path.
use_openat2 = sys.platform.startswith("linux")
_OPENAT2_UNSUPPORTED = frozenset({errno.ENOSYS, errno.EPERM, errno.EINVAL, errno.E2BIG})
_CHECK = object()  # openat2 could not decide: read through the checked path


def _beneath(dirfd: int, key: str, open_only: bool) -> Any:
    """``key`` below the root's descriptor through ``openat2``: read whole, or
    (``open_only``) opened (a descriptor); ``None`` when it is absent, :data:`_CHECK`
    when that open fails for any other reason."""
    global use_openat2
    try:
        return (open_beneath if open_only else read_beneath)(dirfd, os.fsencode(key))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        if error.errno in _OPENAT2_UNSUPPORTED:
            use_openat2 = False
        return _CHECK


def _read_beneath(dirfd: int, key: str, byte_range: ByteRange | None) -> Any:
    """A read of ``key`` below the root's descriptor through ``openat2``, or
    :data:`_CHECK` when that open fails for any reason but an absent file."""
    if byte_range is None:
        return _beneath(dirfd, key, False)
    fd = _beneath(dirfd, key, True)
    if fd is None or fd is _CHECK:
        return fd
    return read_open(fd, byte_range, key, key)


def _new_temp_names() -> None:
    """This process's temporary file names: a random token and a counter (a new token in a
    forked child). ``O_EXCL`` makes a clash an error to retry, never a shared file."""
    global _temp_token, _temp_counter
    _temp_token = TEMP_PREFIX + os.urandom(6).hex()
    _temp_counter = itertools.count()


_temp_token: str
_temp_counter: Iterator[int]
_new_temp_names()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_temp_names)


def _temp_name() -> str:
    return f"{_temp_token}-{next(_temp_counter):x}"


def _name_max(root: str) -> int:
    """The longest file name (bytes) the file system under ``root`` stores."""
    directory = root
    while True:
        try:
            return int(os.pathconf(directory, "PC_NAME_MAX"))
        except (OSError, ValueError, AttributeError):  # no such directory yet, or no pathconf
            parent = os.path.dirname(directory)
            if parent == directory or not hasattr(os, "pathconf"):
                return 255
            directory = parent


class LocalStore(Store):
    """A directory store: key ``"a/b/c"`` is the file ``root/a/b/c``."""

    def __init__(self, root: str | os.PathLike[str], read_only: bool = False) -> None:
        super().__init__(read_only=read_only)
        if not os.fspath(root):
            raise ValueError("LocalStore needs a root directory (use '.' for the current one)")
        # The real root, resolved once: every path is checked against it.
        self._root = os.path.realpath(os.fspath(root))
        self._root_sep = self._root.rstrip(os.sep) + os.sep
        self._name_max = _name_max(self._root)
        self._root_fd = RootDescriptor(self._root)

    @property
    def root(self) -> Path:
        """The resolved root directory."""
        from pathlib import Path

        return Path(self._root)

    @classmethod
    def from_url(
        cls, url: str, *, read_only: bool = False, storage_options: dict[str, Any] | None = None
    ) -> LocalStore:
        """``file:///abs/path`` (or ``file://relative/path``) → ``LocalStore(path)``."""
        if storage_options:
            raise TypeError(f"storage_options {storage_options!r} are not used by {url!r}")
        scheme, sep, path = url.partition("://")
        if scheme.lower() != "file" or not sep or not path:
            raise ValueError(f"not a file:// URL with a path: {url!r}")
        if path.startswith("localhost/"):
            path = path[len("localhost") :]
        return cls(path, read_only=read_only)

    def with_read_only(self, read_only: bool = False) -> LocalStore:
        """The same directory with the given ``read_only``."""
        return type(self)(self._root, read_only=read_only)

    # -- the fence ------------------------------------------------------------------
    def _inside(self, real: str) -> bool:
        """Whether the resolved path ``real`` lies strictly inside the root."""
        try:
            return real != self._root and os.path.commonpath((self._root, real)) == self._root
        except ValueError:  # on another drive
            return False

    def _path(self, key: str) -> str:
        """The file of ``key``, proven to lie inside the root; the only way to get one."""
        validate_key(key)
        path = self._root_sep + (key if os.sep == "/" else key.replace("/", os.sep))
        if _POSIX and not self._has_link(path):
            return path
        real = os.path.realpath(path)
        if not self._inside(real):
            raise InvalidKeyError(
                f"key {key!r} resolves to {real!r}, outside the store root {self._root!r} "
                "(through a symbolic link?)"
            )
        return path

    def _has_link(self, path: str) -> bool:
        """Whether the root, or a component of ``path`` below it, may be a symlink.

        The root was resolved when the store was made and a valid key has no ``..``, so
        only such a link can lead out. ``lstat`` of each existing component finds one
        several times faster than ``realpath``, which walks every component from ``/``;
        when there is a link, :meth:`_path` lets ``realpath`` and ``commonpath`` decide.
        (Windows junctions are not ``S_ISLNK``: there :meth:`_path` always resolves.)
        """
        end = len(self._root)  # the root itself first, then each component below it
        while True:
            try:
                if stat.S_ISLNK(os.lstat(path[:end] or os.sep).st_mode):
                    return True
            except (FileNotFoundError, NotADirectoryError):
                return False  # nothing exists from here on, so no link either
            except OSError:
                return True  # cannot tell: let realpath decide
            if end == len(path):
                return False
            next_sep = path.find(os.sep, end + 1)
            end = len(path) if next_sep < 0 else next_sep

    def _beneath_fd(self) -> contextlib.AbstractContextManager[Any]:
        """A ``with`` block that gets a descriptor of the root for ``openat2``, proven to
        be the root's directory now and kept open until the block ends; ``None`` when
        reads must take the checked path."""
        return self._root_fd.use() if use_openat2 else NO_ROOT

    def __del__(self) -> None:
        root = getattr(self, "_root_fd", None)
        if root is not None:
            root.close()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_root_fd")  # descriptors stay in this process
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._root_fd = RootDescriptor(self._root)

    def _read_key(
        self, dirfd: int | None, key: str, byte_range: ByteRange | None
    ) -> bytes | None:
        """Read a key already validated: through ``openat2`` when ``dirfd`` is given and
        it can decide, else through the checked path."""
        if dirfd is not None:
            value = _read_beneath(dirfd, key, byte_range)
            if value is not _CHECK:
                return value
        return read_path(self._path(key), byte_range, key)

    # -- readable -----------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        validate_key(key)  # refused before any I/O
        with self._beneath_fd() as dirfd:
            return self._read_key(dirfd, key, byte_range)

    def read_rounds(self, reads: Sequence[tuple[str, RangeReader]]) -> None:
        """:meth:`~zarrx.abc.store.Store.read_rounds`: each key opened once (as
        :meth:`get` opens it) and every round of its reader read from that descriptor
        (``pread``), so from one version of the value. Several keys are read on the I/O
        threads, unless the caller holds a key's lock (then in the caller, in turn)."""
        reads = list(reads)
        for key, _ in reads:
            validate_key(key)  # every key refused before any read
        with self._beneath_fd() as dirfd:
            if len(reads) < 2 or not may_wait_for_pools():
                self._serve(dirfd, reads)
            else:
                on_io_threads(partial(self._serve, dirfd), io_slices(reads))

    def _serve(self, dirfd: int | None, reads: Sequence[tuple[str, RangeReader]]) -> None:
        for key, reader in reads:
            self._read_rounds(dirfd, key, reader)

    def _read_rounds(self, dirfd: int | None, key: str, reader: RangeReader) -> None:
        ranges = reader.ranges()
        if not ranges:
            return
        for byte_range in ranges:
            if byte_range.length is not None and byte_range.length < 0:
                validate_byte_range(byte_range, key)  # raises, before the file is opened
        fd: Any = _CHECK if dirfd is None else _beneath(dirfd, key, True)
        path = key
        if fd is _CHECK:
            path = self._path(key)
            fd = open_file(path, key)
        serve_rounds(fd, key, path, reader, ranges)

    def get_many(self, requests: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
        """Reads run concurrently when there are several (file reads release the GIL)."""
        for key, _ in requests:
            validate_key(key)  # every key refused before any read
        with self._beneath_fd() as dirfd:

            def read_part(part: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
                if dirfd is None or any(r is not None for _, r in part):
                    return [self._read_key(dirfd, key, r) for key, r in part]
                # Whole files, 64 a call without the GIL; one it cannot settle is read alone.
                found = read_many_beneath(dirfd, [os.fsencode(key) for key, _ in part])
                return [self._read_key(dirfd, key, None) if isinstance(value, int) else value
                        for (key, _), value in zip(part, found)]

            if len(requests) < _MIN_CONCURRENT_READS or not may_wait_for_pools():
                return read_part(requests)
            return [value for part in on_io_threads(read_part, io_slices(requests))
                    for value in part]

    def exists(self, key: str) -> bool:
        return os.path.isfile(self._path(key))

    # -- writeable ----------------------------------------------------------------
    def check_keys(self, keys: Iterable[str]) -> None:
        """Keys whose file or directory names exceed the file system's name limit
        (``NAME_MAX``, 255 bytes on most file systems) are refused before any write:
        Zarr allows such names (a 250-character node name plus ``.group.json``), the file
        system does not."""
        for key in keys:
            validate_key(key)
            for name in key.split("/"):
                size = len(name.encode("utf-8", "surrogatepass"))
                if size > self._name_max:
                    raise InvalidKeyError(
                        f"cannot store key {key!r} in {self._root!r}: its name "
                        f"{name[:40] + '…' if len(name) > 40 else name!r} is {size} bytes, "
                        f"over the file system's limit of {self._name_max} bytes per file or "
                        "directory name (NAME_MAX); choose a shorter node name"
                    )

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        self._check_writable(key)
        validate_key(key)
        view = splice.byte_view(value)  # TypeError for str, int ... before touching the disk
        self._write(key, view)

    def set_parts(self, key: str, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        """:meth:`set` of ``parts``, written as they are (``writev``), never joined."""
        self._check_writable(key)
        validate_key(key)
        self._write(key, [part if type(part) is bytes else splice.byte_view(part)
                          for part in parts])

    def _write(self, key: str, data: memoryview | builtins.list[memoryview | bytes]) -> None:
        """Write ``data`` (a view, or views one after the other) as the validated ``key``,
        atomically: a temporary file beside it, renamed over it."""
        if len(key) > self._name_max // 4:  # else no name in it can be too long
            self.check_keys((key,))
        with self._beneath_fd() as dirfd:
            if dirfd is not None and self._set_beneath(dirfd, key, data):
                return
        path = self._path(key)
        directory = os.path.dirname(path)
        try:
            fd, tmp = self._open_temp(directory)
        except OSError as error:
            raise StoreError(f"cannot write key {key!r} under {self._root!r}: {error}") from error
        try:
            try:
                splice.write_run(fd, [data] if isinstance(data, memoryview) else data)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except BaseException as error:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            if isinstance(error, OSError):
                raise StoreError(f"cannot write key {key!r} to {path!r}: {error}") from error
            raise

    def _set_beneath(
        self, dirfd: int, key: str, data: memoryview | builtins.list[memoryview | bytes]
    ) -> bool:
        """Write a validated key through ``write_beneath``; ``False`` (nothing written)
        when the checked path must decide: an absent directory (made there), a link, ...
        A large file it replaces is freed after the write (:func:`splice.hold`)."""
        global use_openat2
        bdir, _, bname = os.fsencode(key).rpartition(b"/")
        size = sum(map(len, data if isinstance(data, list) else [data]))
        old = splice.hold(dirfd, key) if size >= splice.CLOSE_LATER else None
        try:
            for _ in range(8):  # a temporary name taken meanwhile: try another
                step, code = write_beneath(dirfd, bdir, bname, os.fsencode(_temp_name()), data)
                if not step:
                    return True
                if step == WRITE_TEMP and code == errno.EEXIST:
                    continue
                if step == WRITE_DIRECTORY and code in _OPENAT2_UNSUPPORTED:
                    use_openat2 = False
                    return False
                if step in (WRITE_DIRECTORY, WRITE_LINK) or code in (errno.ENOENT, errno.ENOTDIR):
                    return False  # absent (made there), a link, or removed meanwhile
                at = (f"under {self._root!r}" if step == WRITE_TEMP
                      else f"to {self._root_sep + key!r}")
                error = OSError(code, os.strerror(code))
                raise StoreError(f"cannot write key {key!r} {at}: {error}") from error
            return False
        finally:
            if old is not None:
                splice.close_later(*old)

    @staticmethod
    def _open_temp(directory: str) -> tuple[int, str]:
        """Create a temporary file in ``directory`` (made if needed) with default permissions.

        A concurrent erase or update may remove an empty parent between makedirs and open,
        or while makedirs runs: retry.
        """
        attempts = 64
        while True:
            tmp = os.path.join(directory, TEMP_PREFIX + os.urandom(8).hex())
            try:
                return os.open(tmp, _WRITE_FLAGS, 0o666), tmp  # 0o666: honour the umask
            except FileNotFoundError:
                attempts -= 1
                if not attempts:
                    raise
            locks.make_directory(directory)

    def erase(self, key: str) -> None:
        self._check_writable(key)
        path = self._path(key)
        try:
            os.unlink(path)  # a symlink is unlinked, its target untouched
        except (FileNotFoundError, NotADirectoryError):
            return  # absent
        except OSError as error:
            if os.path.isdir(path) and not os.path.islink(path):
                return  # a directory is a prefix, not a key
            raise StoreError(f"cannot erase key {key!r} at {path!r}: {error}") from error
        self._prune(os.path.dirname(path))

    # -- atomic updates -----------------------------------------------------------------
    atomic_updates = "lock" if locks.AVAILABLE else None

    def _lock_file(self, key: str) -> tuple[str, str]:
        """The file of ``key`` and its lock file, both proven to lie inside the root."""
        path = self._path(key)  # the fence: the key's file lies inside the root...
        directory, name = os.path.split(path)
        # ...so does its lock file: the same directory, a name without a separator.
        return path, os.path.join(directory, lock_name(name, self._name_max))

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        """Hold the lock file beside ``key`` (``dir/.zarrx-lock-name.lock``) for the block: it
        excludes every other writer of the key, on this machine or another one sharing the
        file system. The lock file is removed afterwards, and so is the key's directory
        when the update left it empty."""
        path, lock_file = self._lock_file(key)
        self._check_writable(key)
        if not locks.AVAILABLE:
            yield
            return
        with locks.hold_file_lock(lock_file, repr(key)) as made_directory:
            yield
        if made_directory or not os.path.lexists(path):  # the update left no key there
            self._prune(os.path.dirname(path))  # only ever removes empty directories

    def atomic_set_parts(self, key: str, parts: Sequence[Value] | None) -> None:
        """:meth:`~zarrx.abc.store.Store.atomic_set_parts` under the key's lock: the
        parts are written (``writev``) into the lock file itself, which is renamed over the
        key (:meth:`~zarrx.stores.locks.LockFile.move_to`): one file made, nothing of the
        current value read. ``None`` erases the key under the lock."""
        if self.atomic_updates != "lock" or parts is None:
            super().atomic_set_parts(key, parts)
            return
        self._check_writable(key)
        self.check_keys((key,))
        views = [part if type(part) is bytes else splice.byte_view(part) for part in parts]
        if locks.OFD and use_openat2 and self._set_locked_beneath(key, views):
            return
        path, lock_file = self._lock_file(key)
        with locks.hold_lock_file(lock_file, repr(key)) as held:
            self._fill(held, key, path, lambda fd: splice.write_run(fd, views),
                       sum(map(len, views)))

    def _set_locked_beneath(self, key: str, views: builtins.list[Any]) -> bool:
        """:meth:`atomic_set_parts` in one call without the GIL where reads use ``openat2``
        (:func:`zarrx._core.files.write_locked_beneath`: the lock file of
        :mod:`~zarrx.stores.locks`, taken the same way); ``False``, nothing written, when
        the Python path must decide (an absent directory, made there; a link; an error)."""
        global use_openat2
        bdir, _, bname = os.fsencode(key).rpartition(b"/")
        lock = os.fsencode(lock_name(bname.decode("utf-8", "surrogateescape"), self._name_max))
        size = sum(map(len, views))
        with self._beneath_fd() as dirfd:
            if dirfd is None:
                return False
            old = splice.hold(dirfd, key) if size >= splice.CLOSE_LATER else None
            try:
                step, code = write_locked_beneath(dirfd, bdir, bname, lock, views)
            finally:
                if old is not None:
                    splice.close_later(*old)
        if not step:
            return True
        if step == WRITE_DIRECTORY and code in _OPENAT2_UNSUPPORTED:
            use_openat2 = False
        return False

    def _fill(self, held: locks.LockFile, key: str, path: str, write: Any,
              size: int) -> None:
        """Write the new value of ``key`` into the held lock file (``write(fd)``, ``size``
        bytes) and rename it over the key's ``path``. A large file it replaces is freed
        after the update (:func:`splice.hold`)."""
        old = None
        try:
            if os.fstat(held.fd).st_size:  # left by a writer killed meanwhile
                os.ftruncate(held.fd, 0)
            write(held.fd)
            if size >= splice.CLOSE_LATER and use_openat2:
                with self._beneath_fd() as dirfd:
                    old = None if dirfd is None else splice.hold(dirfd, key)
            held.move_to(path)
        except OSError as error:
            raise StoreError(f"cannot write key {key!r} to {path!r}: {error}") from error
        finally:
            if old is not None:
                splice.close_later(*old)

    def atomic_splice(
        self, key: str, build: Splice, snapshot: Snapshot | None = None
    ) -> Sequence[Part] | None:
        """:meth:`~zarrx.abc.store.Store.atomic_splice` without reading what is kept
        whole: under the key's lock the current file is read only where ``build`` asks,
        the new value is written into the lock file itself from the parts (bytes, and the
        kept ranges read from the current file: :mod:`zarrx.stores.splice`), and the lock
        file is renamed over the key (:func:`~zarrx.stores.locks.hold_lock_file`): one
        file made per update. ``snapshot`` is not used: the value is read under the lock."""
        if self.atomic_updates != "lock":
            return super().atomic_splice(key, build, snapshot)
        self._check_writable(key)
        self.check_keys((key,))
        path, lock_file = self._lock_file(key)
        with locks.hold_lock_file(lock_file, repr(key)) as held:
            try:
                fd = os.open(path, READ_FLAGS)  # O_NONBLOCK: a planted FIFO does not hang
            except ABSENT:
                fd = None
            except OSError as error:
                raise StoreError(f"cannot read key {key!r} from {path!r}: {error}") from error
            try:
                current = None
                if fd is not None:
                    info = os.fstat(fd)
                    if stat.S_ISREG(info.st_mode):  # else absent, as for get
                        current = splice.FileValue(fd, info.st_size)
                parts = build(current)
                if parts is None:
                    if fd is not None:
                        self.erase(key)
                else:
                    self._fill(held, key, path,
                               lambda out: splice.write_parts(out, parts, current), 0)
                if fd is not None:  # the file replaced or erased: see zarrx.stores.splice
                    splice.close_later(fd, 0 if current is None else current.size)
                    fd = None
            finally:
                if fd is not None:
                    os.close(fd)
        if held.made_directory or parts is None:  # the splice may have left no key there
            self._prune(os.path.dirname(path))  # only ever removes empty directories
        return parts

    def clean_leftovers(self) -> list[str]:
        """Remove what interrupted writers left behind: temporary files of writes that never
        reached their rename, and lock files of updates that never finished. Returns the
        paths removed. Keys are untouched: each holds its old or new value, whole. Run it
        when no writer is active (a live writer's temporary or lock file would be removed)."""
        removed: list[str] = []
        for directory, _, filenames in os.walk(self._root, followlinks=False):
            for name in filenames:
                if name.startswith((TEMP_PREFIX, LOCK_PREFIX)):
                    path = os.path.join(directory, name)  # found below the root, no link
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)
                        removed.append(path)
        return removed

    def erase_prefix(self, prefix: str) -> None:
        import shutil

        self._check_writable(prefix)
        validate_prefix(prefix)
        try:
            if prefix == "":
                self._clear(self._root)
                return
            path = self._path(prefix[:-1])
            if os.path.islink(path):
                os.unlink(path)  # never delete through a link
            elif os.path.isdir(path):
                shutil.rmtree(path)  # removes links inside, never their targets
            else:
                return  # absent, or a key (not a prefix)
        except FileNotFoundError:
            return
        except OSError as error:
            where = f"under {self._root!r}"
            raise StoreError(f"cannot erase prefix {prefix!r} {where}: {error}") from error
        self._prune(os.path.dirname(path))

    def _clear(self, directory: str) -> None:
        """Remove everything inside ``directory`` but not ``directory`` itself."""
        import shutil

        try:
            entries = list(os.scandir(directory))
        except ABSENT:
            return
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)  # refuses a symlink; removes links, not targets
                else:
                    os.unlink(entry.path)
            except FileNotFoundError:
                pass  # removed concurrently

    def _prune(self, directory: str) -> None:
        """Remove now-empty directories from ``directory`` up to, not including, the root."""
        while directory.startswith(self._root_sep) and not os.path.islink(directory):
            try:
                os.rmdir(directory)  # only ever succeeds on an empty directory
            except OSError:
                return
            directory = os.path.dirname(directory)

    # -- listable: zarrx.stores.tree ---------------------------------------------------
    def _directory(self, prefix: str) -> str:
        validate_prefix(prefix)
        return self._root if prefix == "" else self._path(prefix[:-1])

    def list(self) -> list[str]:
        return sorted(tree.walk(self._root, "", self._inside))

    def list_prefix(self, prefix: str) -> builtins.list[str]:
        return sorted(tree.walk(self._directory(prefix), prefix, self._inside))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return tree.list_dir(self._directory(prefix), prefix, self._inside)

    # -- identity -------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LocalStore):
            return NotImplemented
        return self._root == other._root and self.read_only == other.read_only

    def __hash__(self) -> int:
        return hash((self._root, self.read_only))

    def same_data(self, other: Store) -> bool:
        return isinstance(other, LocalStore) and (
            other._root == self._root or self.root.resolve() == other.root.resolve())

    def stamp(self, key: str) -> Any:
        """The file's size and modification time (``None``: absent)."""
        validate_key(key)
        try:
            info = os.stat(self._path(key))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return [info.st_size, info.st_mtime_ns]

    def __repr__(self) -> str:
        return f"LocalStore({self._root!r}{', read_only=True' if self.read_only else ''})"
