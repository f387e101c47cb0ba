"""ZipStore: a whole hierarchy in one zip archive (``zip://path/to/data.zip``).

Modes, as :class:`zipfile.ZipFile`: ``"r"`` reads an existing archive (read-only: every
write raises :class:`~zarrx.errors.ReadOnlyError`); ``"w"`` makes a new archive, replacing
any file at ``path``; ``"a"`` reads an existing archive (or starts an empty one) and
changes it.

Reads use the central directory, read once at open: ``list``/``list_dir`` never touch the
file, and a member stored without compression (the default: chunks are compressed already)
is read with ``os.pread`` at its offset, so a byte range (a shard's index, an inner
chunk) reads only those bytes and concurrent reads do not wait for each other. Whole
members are checked against their CRC-32. Reads in rounds (:meth:`ZipStore.read_rounds`)
take a key's entry once and read every round from it: a member once written is never
changed (a new value is a new member), so every round sees one version.

Writes are buffered: values go to a temporary archive beside the target (named with
:data:`~zarrx.stores.keys.TEMP_PREFIX`), and :meth:`ZipStore.close` writes the final
archive there and renames it over ``path`` in one step, so the file at ``path`` is always
a complete archive, old or new. Overwritten or erased values (and, in mode ``"a"``, the
members kept from the old archive) are copied into a compacted archive at close. As with
:class:`zipfile.ZipFile`, a store that is dropped without being closed is closed when it is
garbage collected or at interpreter exit; close it (or use ``with``) to be sure.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "data.zip")
>>> with ZipStore(path, mode="w") as store:
...     store.set("zarr.json", b"{}")
>>> ZipStore(path).list()
['zarr.json']
"""

from __future__ import annotations

import builtins
import contextlib
import os
import struct
import threading
import time
import weakref
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

from zarrx.abc.store import (
    ByteRange,
    RangeReader,
    Store,
    answer_rounds,
    as_bytes,
    read_each_round,
)
from zarrx.errors import InvalidKeyError, ReadOnlyError, StoreError, StoreNotFoundError
from zarrx.stores.keys import (
    TEMP_PREFIX,
    is_valid_key,
    resolve_byte_range,
    validate_key,
    validate_prefix,
)
from zarrx.stores.locks import KeyLocks

MODES = ("r", "w", "a")
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... file name length, extra length
_LOCAL_SIGNATURE = b"PK\x03\x04"
_PREAD = hasattr(os, "pread")



class _Source:
    """One open archive file: the ZipFile, and a descriptor for positioned reads."""

    __slots__ = ("fd", "path", "zip")

    def __init__(self, path: str, zip_file: zipfile.ZipFile) -> None:
        self.path = path
        self.zip = zip_file
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.zip.close()


class _Entry:
    """Where the current value of a key lives."""

    __slots__ = ("info", "offset", "source")

    def __init__(self, source: _Source, info: zipfile.ZipInfo) -> None:
        self.source = source
        self.info = info
        self.offset: int | None = None  # of the data, once read from the local header


class _Archive:
    """The state every view of one zip store shares."""

    def __init__(self, path: str, mode: str, compression: int) -> None:
        self.path = path
        self.mode = mode
        self.compression = compression
        self.lock = threading.RLock()
        self.key_locks = KeyLocks()  # atomic updates (one process writes an archive)
        self.idle = threading.Condition(self.lock)  # notified when the last read ends
        self.readers = 0
        self.closed = False
        self.changed = mode == "w"
        self.dead = 0  # staged values overwritten or erased since
        self.entries: dict[str, _Entry] = {}
        self.base: _Source | None = None
        self.staging: _Source | None = None
        self.comment = b""
        if mode in ("r", "a") and (mode == "r" or os.path.exists(path)):
            self._open_base()

    def _open_base(self) -> None:
        try:
            zip_file = zipfile.ZipFile(self.path, "r")
        except zipfile.BadZipFile as error:
            raise StoreError(f"{self.path!r} is not a valid zip archive: {error}") from error
        except OSError as error:  # missing, a directory, not readable ...
            found = not isinstance(error, FileNotFoundError)
            raise (StoreError if found else StoreNotFoundError)(
                f"cannot open the zip archive {self.path!r}: {error.strerror or error}"
            ) from None
        self.base = _Source(self.path, zip_file)
        self.comment = zip_file.comment
        for info in zip_file.infolist():  # the last of duplicate names wins, as in zipfile
            if is_valid_key(info.filename):  # skips directories and names like "../x"
                self.entries[info.filename] = _Entry(self.base, info)

    # -- reading ------------------------------------------------------------------------
    def check_open(self) -> None:
        if self.closed:
            raise StoreError(f"the zip store {self.path!r} is closed")

    @contextlib.contextmanager
    def reading(self, key: str) -> Iterator[_Entry | None]:
        """The entry of ``key`` (or ``None``), kept readable until the block ends."""
        with self.lock:
            self.check_open()
            entry = self.entries.get(key)
            self.readers += 1
        try:
            yield entry
        finally:
            with self.lock:
                self.readers -= 1
                if not self.readers:
                    self.idle.notify_all()

    def read(self, entry: _Entry, byte_range: ByteRange | None, key: str) -> bytes:
        info = entry.info
        if info.flag_bits & 0x1:
            raise StoreError(f"member {key!r} of {self.path!r} is encrypted: not supported")
        start, stop = (
            (0, info.file_size) if byte_range is None
            else resolve_byte_range(byte_range, info.file_size, key)
        )
        if stop <= start:
            return b""
        try:
            if info.compress_type == zipfile.ZIP_STORED and _PREAD:
                data = self._pread(entry, start, stop - start, key)
                if byte_range is None and zlib.crc32(data) != info.CRC:
                    raise StoreError(f"member {key!r} of {self.path!r} fails its CRC-32 check")
                return data
            with self.lock, entry.source.zip.open(info) as member:  # zipfile checks the CRC
                if start:
                    member.seek(start)
                return member.read(stop - start)
        except (OSError, zipfile.BadZipFile, zlib.error, EOFError) as error:
            if isinstance(error, StoreError):
                raise
            raise StoreError(f"cannot read member {key!r} of {self.path!r}: {error}") from error

    def _pread(self, entry: _Entry, start: int, length: int, key: str) -> bytes:
        fd = entry.source.fd
        if entry.offset is None:
            header = os.pread(fd, _LOCAL_HEADER.size, entry.info.header_offset)
            if len(header) < _LOCAL_HEADER.size:
                raise StoreError(f"member {key!r} of {self.path!r}: truncated local header")
            signature, name_length, extra_length = _LOCAL_HEADER.unpack(header)
            if signature != _LOCAL_SIGNATURE:
                raise StoreError(f"member {key!r} of {self.path!r}: bad local header")
            entry.offset = entry.info.header_offset + _LOCAL_HEADER.size + name_length
            entry.offset += extra_length
        parts = []
        position = entry.offset + start
        while length:
            part = os.pread(fd, length, position)
            if not part:
                raise StoreError(f"member {key!r} of {self.path!r} is truncated")
            parts.append(part)
            position += len(part)
            length -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    # -- writing ------------------------------------------------------------------------
    def _staging(self) -> _Source:
        if self.staging is None:
            directory = os.path.dirname(self.path) or "."
            fd, path = _temporary(directory)
            os.close(fd)
            try:
                zip_file = zipfile.ZipFile(path, "w", self.compression, allowZip64=True)
                self.staging = _Source(path, zip_file)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(path)
                raise
        return self.staging

    def _retire(self, key: str) -> None:
        """Forget the value of ``key``; a staged one leaves a dead member behind."""
        entry = self.entries.pop(key, None)
        if entry is not None and entry.source is self.staging:
            self.dead += 1
            # The member stays in the temporary file (compacted away at close); zipfile
            # must not see its name again, or it warns of a duplicate.
            entry.source.zip.NameToInfo.pop(key, None)

    def write(self, key: str, data: bytes) -> None:
        with self.lock:
            self.check_open()
            staging = self._staging()
            self._retire(key)
            info = zipfile.ZipInfo(key, date_time=time.localtime()[:6])
            info.compress_type = self.compression
            info.external_attr = 0o644 << 16
            try:
                staging.zip.writestr(info, data)
                staging.zip.fp.flush()  # type: ignore[union-attr]  # visible to pread
            except OSError as error:
                raise StoreError(f"cannot write {key!r} to {self.path!r}: {error}") from error
            self.entries[key] = _Entry(staging, staging.zip.NameToInfo[key])
            self.changed = True

    def erase(self, keys: Sequence[str]) -> None:
        with self.lock:
            self.check_open()
            for key in keys:
                if key in self.entries:
                    self._retire(key)
                    self.changed = True

    def names(self) -> list[str]:
        with self.lock:
            self.check_open()
            return list(self.entries)

    # -- closing ------------------------------------------------------------------------
    def close(self) -> None:
        """Write the archive (if anything changed) and release the files."""
        with self.lock:
            if self.closed:
                return
            while self.readers:
                self.idle.wait()
            self.closed = True
            try:
                if self.changed:
                    self._commit()
            finally:
                self._release()

    def _commit(self) -> None:
        staging = self.staging
        clean = (
            staging is not None
            and self.dead == 0
            and all(entry.source is staging for entry in self.entries.values())
        )
        if clean:  # the temporary archive holds exactly the live values: finish it
            assert staging is not None
            staging.zip.comment = self.comment
            staging.zip.close()
            os.replace(staging.path, self.path)
            return
        fd, path = _temporary(os.path.dirname(self.path) or ".")
        os.close(fd)
        try:
            with zipfile.ZipFile(path, "w", self.compression, allowZip64=True) as out:
                out.comment = self.comment
                for key, entry in self.entries.items():
                    info = zipfile.ZipInfo(key, date_time=entry.info.date_time)
                    info.compress_type = entry.info.compress_type
                    info.external_attr = entry.info.external_attr
                    out.writestr(info, self.read(entry, None, key))
            os.replace(path, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise

    def _release(self) -> None:
        for source in (self.base, self.staging):
            if source is not None:
                source.close()
        if self.staging is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.staging.path)
        self.base = self.staging = None
        self.entries = {}


def _read_ranges(archive: _Archive, entry: _Entry, key: str,
                 ranges: Sequence[ByteRange]) -> list[bytes]:
    return [archive.read(entry, r, key) for r in ranges]


def _temporary(directory: str) -> tuple[int, str]:
    import tempfile

    return tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".zip", dir=directory)


class ZipStore(Store):
    """A store in one zip archive; see the module documentation for modes and writes."""

    #: One process writes an archive (it replaces the file when it closes): its threads'
    #: updates exclude each other.
    atomic_updates = "lock"
    shared = False  # (one process writes an archive)

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: str = "r",
        *,
        compression: int = zipfile.ZIP_STORED,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"invalid ZipStore mode {mode!r}; expected one of {MODES}")
        if compression not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ValueError(
                f"unsupported compression {compression!r}: use zipfile.ZIP_STORED "
                "(the default; chunks are compressed already) or zipfile.ZIP_DEFLATED"
            )
        location = os.fspath(path)
        if not location:
            raise ValueError("ZipStore needs the path of an archive")
        super().__init__(read_only=mode == "r")
        self._archive = _Archive(os.path.abspath(location), mode, compression)
        self._owner = True
        weakref.finalize(self, self._archive.close)

    @classmethod
    def _view(cls, archive: _Archive, read_only: bool) -> ZipStore:
        store = cls.__new__(cls)
        Store.__init__(store, read_only=read_only or archive.mode == "r")
        store._archive = archive
        store._owner = False
        return store

    @classmethod
    def from_url(
        cls, url: str, *, read_only: bool = False, storage_options: dict[str, Any] | None = None
    ) -> ZipStore:
        """``zip:///abs/path/data.zip`` or ``zip://relative/data.zip``: mode ``"r"`` when
        ``read_only``, else ``"a"`` (an existing archive is kept and changed)."""
        if storage_options:
            raise TypeError(f"storage_options {storage_options!r} are not used by {url!r}")
        scheme, sep, path = url.partition("://")
        if scheme.lower() != "zip" or not sep or not path:
            raise ValueError(f"not a zip:// URL with a path: {url!r}")
        return cls(path, mode="r" if read_only else "a")

    def with_read_only(self, read_only: bool = False) -> ZipStore:
        """Another view of the same open archive (closing a view closes nothing)."""
        return self._view(self._archive, read_only)

    @property
    def path(self) -> str:
        return self._archive.path

    @property
    def mode(self) -> str:
        return self._archive.mode

    def close(self) -> None:
        """Write the archive (modes ``w``/``a``) and release the files; idempotent."""
        if self._owner:
            self._archive.close()

    # -- readable -----------------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        validate_key(key)
        if byte_range is not None and byte_range.length is not None and byte_range.length < 0:
            raise InvalidKeyError(
                f"invalid byte range {byte_range!r} for key {key!r}: length must be >= 0"
            )
        with self._archive.reading(key) as entry:
            return None if entry is None else self._archive.read(entry, byte_range, key)

    def get_many(self, requests: Sequence[tuple[str, ByteRange | None]]) -> list[bytes | None]:
        for key, _ in requests:  # refuse a bad batch before reading any of it
            validate_key(key)
        return [self.get(key, byte_range) for key, byte_range in requests]

    def read_rounds(self, reads: Sequence[tuple[str, RangeReader]]) -> None:
        """:meth:`~zarrx.abc.store.Store.read_rounds`: each key's entry taken once (kept
        readable while its reader is served) and every round read from that member."""
        for key, _ in reads:  # refuse a bad batch before reading any of it
            validate_key(key)
        archive = self._archive
        for key, reader in reads:
            ranges = reader.ranges()
            if not ranges:
                continue
            with archive.reading(key) as entry:
                if entry is None:
                    answer_rounds(reader, key, None, ranges)
                else:
                    read_each_round(reader, partial(_read_ranges, archive, entry, key), ranges)

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._archive.reading(key) as entry:
            return entry is not None

    # -- writeable ----------------------------------------------------------------------
    def _check_writable(self, key: str) -> None:
        if self.read_only:
            raise ReadOnlyError(
                f"cannot write {key!r}: {self!r} is read-only"
                + (" (opened with mode='r')" if self.mode == "r" else "")
            )

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        validate_key(key)
        self._check_writable(key)
        self._archive.write(key, as_bytes(value))

    def erase(self, key: str) -> None:
        validate_key(key)
        self._check_writable(key)
        self._archive.erase([key])

    def erase_prefix(self, prefix: str) -> None:
        validate_prefix(prefix)
        self._check_writable(prefix)
        self._archive.erase([k for k in self._archive.names() if k.startswith(prefix)])

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        """Exclude the other threads' updates of ``key`` (one process writes an archive)."""
        return self._archive.key_locks.hold(validate_key(key))

    # -- listable -----------------------------------------------------------------------
    def list(self) -> list[str]:
        return sorted(self._archive.names())

    def list_prefix(self, prefix: str) -> builtins.list[str]:
        validate_prefix(prefix)
        return sorted(k for k in self._archive.names() if k.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        validate_prefix(prefix)
        keys: set[str] = set()
        prefixes: set[str] = set()
        n = len(prefix)
        for key in self._archive.names():
            if key.startswith(prefix):
                slash = key.find("/", n)
                if slash < 0:
                    keys.add(key)
                else:
                    prefixes.add(key[: slash + 1])
        return sorted(keys), sorted(prefixes)

    # -- identity -----------------------------------------------------------------------
    def __reduce__(self) -> Any:
        if self.mode != "r":
            raise TypeError(
                f"{self!r} cannot be pickled: its writes are buffered in this process. "
                "Close it, then share ZipStore(path, mode='r')"
            )
        return type(self), (self.path, "r")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ZipStore):
            return NotImplemented
        if self.read_only != other.read_only:
            return False
        if self._archive is other._archive:
            return True
        return self.mode == other.mode == "r" and self.path == other.path

    def __hash__(self) -> int:
        return hash((self.path, self.read_only))

    def __repr__(self) -> str:
        view = ", read_only=True" if self.read_only and self.mode != "r" else ""
        return f"ZipStore({self.path!r}, mode={self.mode!r}{view})"
