"""Reading and writing a file below a directory without leaving it, in one system call
for the check.

Why it exists: a file store must never follow a key out of its root (through a symbolic
link or ``..``). Proving that from user space costs an ``lstat`` per path component and a
``realpath`` when there is a link; Linux (5.6 and later) proves it in the kernel during
the open itself: ``openat2(2)`` with ``RESOLVE_BENEATH`` fails with ``EXDEV`` instead of
resolving a path, link or ``..`` that leaves the directory, and ``RESOLVE_NO_MAGICLINKS``
refuses ``/proc``-style links. This module wraps that call, and a whole-file read behind it
that holds no GIL, for :mod:`zarrx.stores.local`; and an atomic write (a temporary file
beside the target, renamed over it) in one call without the GIL, below a directory opened
the same way, so a write costs neither an ``lstat`` per component nor a GIL hand-off per
system call. Where the kernel or C library lacks
``openat2`` every call fails with ``ENOSYS`` and the caller uses its own checks.
What each function takes, checks and guarantees: ``zarrx/_core/README.md``.
"""

import os
from operator import index

from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdlib cimport calloc, free
from libc.errno cimport EINTR, ENOENT, ENOTDIR, errno

cdef extern from *:
    """
    #include <errno.h>
    #if defined(_WIN32)
    /* No openat2: every call reports ENOSYS and the store uses its own checks. */
    static int zarrx_open_beneath(int dirfd, const char *path) {
        (void)dirfd; (void)path; return -ENOSYS;
    }
    static int zarrx_regular_size(int fd, long long *size) {
        (void)fd; (void)size; return -ENOSYS;
    }
    static long long zarrx_read(int fd, char *buffer, long long count) {
        (void)fd; (void)buffer; (void)count; errno = ENOSYS; return -1;
    }
    static long long zarrx_pread(int fd, char *buffer, long long count, long long at) {
        (void)fd; (void)buffer; (void)count; (void)at; errno = ENOSYS; return -1;
    }
    static int zarrx_close(int fd) { (void)fd; return 0; }
    typedef struct { const char *data; long long size; } zarrx_span;
    static int zarrx_write_beneath(int rootfd, const char *dir, const char *name,
                                   const char *temp, zarrx_span *spans, long long count,
                                   int *error) {
        (void)rootfd; (void)dir; (void)name; (void)temp; (void)spans; (void)count;
        *error = ENOSYS; return 1;
    }
    static int zarrx_write_locked_beneath(int rootfd, const char *dir, const char *name,
                                          const char *lock, zarrx_span *spans,
                                          long long count, int *error) {
        (void)rootfd; (void)dir; (void)name; (void)lock; (void)spans; (void)count;
        *error = ENOSYS; return 1;
    }
    #else
    #include <fcntl.h>
    #include <stdint.h>
    #include <string.h>
    #include <sys/stat.h>
    #include <sys/uio.h>
    #include <unistd.h>
    #ifdef __linux__
    #include <sys/syscall.h>
    #ifndef SYS_openat2
    #define SYS_openat2 437  /* the same number on every architecture since Linux 5.6 */
    #endif
    #endif
    #ifndef O_CLOEXEC
    #define O_CLOEXEC 0
    #endif
    #ifndef O_PATH
    #define O_PATH 0  /* Linux only; elsewhere nothing is opened (ENOSYS) */
    #endif

    struct zarrx_open_how { uint64_t flags; uint64_t mode; uint64_t resolve; };

    /* path below dirfd opened with flags, resolved with RESOLVE_BENEATH and
       RESOLVE_NO_MAGICLINKS (never above dirfd, never through /proc links), or -errno. */
    static int zarrx_openat2_beneath(int dirfd, const char *path, uint64_t flags) {
    #if defined(__linux__)
        struct zarrx_open_how how;
        long fd;
        memset(&how, 0, sizeof(how));
        how.flags = flags;
        how.resolve = 0x08 /* RESOLVE_BENEATH */ | 0x02 /* RESOLVE_NO_MAGICLINKS */;
        do {
            fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        } while (fd < 0 && errno == EINTR);
        return fd < 0 ? -errno : (int)fd;
    #else
        (void)dirfd; (void)path; (void)flags;
        return -ENOSYS;
    #endif
    }

    /* A file below dirfd opened read-only, or -errno. O_NONBLOCK: a FIFO planted in the
       store must not hang the open. */
    static int zarrx_open_beneath(int dirfd, const char *path) {
        return zarrx_openat2_beneath(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    }

    /* 1 if fd is a regular file (its size in *size), 0 if not, -errno on failure. */
    static int zarrx_regular_size(int fd, long long *size) {
        struct stat info;
        if (fstat(fd, &info) != 0) return -errno;
        if (!S_ISREG(info.st_mode)) return 0;
        *size = (long long)info.st_size;
        return 1;
    }

    static long long zarrx_read(int fd, char *buffer, long long count) {
        return (long long)read(fd, buffer, (size_t)count);
    }

    static long long zarrx_pread(int fd, char *buffer, long long count, long long at) {
        return (long long)pread(fd, buffer, (size_t)count, (off_t)at);
    }

    static int zarrx_close(int fd) { return close(fd); }

    /* The directory dir below rootfd (O_PATH), resolved as zarrx_open_beneath resolves. */
    static int zarrx_open_dir_beneath(int rootfd, const char *dir) {
        return zarrx_openat2_beneath(rootfd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }

    /* One buffer of a file's content. */
    typedef struct { const char *data; long long size; } zarrx_span;

    /* Write all of spans[0..count) to fd, in order, by writev (a shard's inner chunks and
       its index go out as they are, never joined into one buffer first): 0, or the errno.
       spans is consumed (advanced past what was written). */
    static int zarrx_write_spans(int fd, zarrx_span *spans, long long count) {
        struct iovec iov[128];
        long long next = 0, i, wrote;
        int n;
        while (1) {
            while (next < count && spans[next].size == 0) next++;
            if (next == count) return 0;
            n = 0;
            for (i = next; i < count && n < 128; i++) {
                if (!spans[i].size) continue;
                iov[n].iov_base = (void *)spans[i].data;
                /* At most 1 GiB a buffer: what Linux writes at once anyway. */
                iov[n].iov_len = (size_t)(spans[i].size < (1LL << 30) ? spans[i].size
                                                                      : (1LL << 30));
                n++;
            }
            wrote = (long long)writev(fd, iov, n);
            if (wrote < 0) {
                if (errno == EINTR) continue;
                return errno;
            }
            if (wrote == 0) return EIO;
            while (wrote > 0) {  /* drop what was written; a span written in part keeps its rest */
                if (wrote >= spans[next].size) {
                    wrote -= spans[next].size;
                    spans[next].size = 0;
                    next++;
                } else {
                    spans[next].data += wrote;
                    spans[next].size -= wrote;
                    wrote = 0;
                }
            }
        }
    }

    /* Write the buffers spans[0..count) one after the other as the file name in the
       directory dir below rootfd ("" for rootfd itself), atomically: the temporary file
       temp is created beside it (O_EXCL), written whole, closed and renamed over name.
       Only a rename over the old file, never a swap (renameat2 RENAME_EXCHANGE) and an
       unlink, although ext4 then starts the new file's writeback in the caller
       (auto_da_alloc): that is what keeps a crash before the writeback from leaving name
       empty, losing the old value with the new one. Returns 0 once in place, else the
       step that failed (1 the directory, 2 name is a symbolic link or cannot be
       examined, 3 the temporary file, 4 its write or close, 5 the rename) with its errno
       in *error; the temporary file never outlives a failure. */
    #if defined(__linux__)
    /* The directory dir beneath rootfd opened into *dirfd (rootfd itself for ""), and
       name in it checked not to be a link: 0, else the step that failed (1 the
       directory, 2 name is a link or cannot be examined) with its errno in *error and
       *dirfd closed again. */
    static int zarrx_key_dir_beneath(int rootfd, const char *dir, const char *name,
                                     int *dirfd, int *error) {
        struct stat info;
        *dirfd = rootfd;
        *error = 0;
        if (dir[0]) {
            *dirfd = zarrx_open_dir_beneath(rootfd, dir);
            if (*dirfd < 0) { *error = -*dirfd; *dirfd = rootfd; return 1; }
        }
        if (fstatat(*dirfd, name, &info, AT_SYMLINK_NOFOLLOW) == 0) {
            if (!S_ISLNK(info.st_mode)) return 0;
        } else if (errno == ENOENT) {
            return 0;
        } else {
            *error = errno;
        }
        if (*dirfd != rootfd) close(*dirfd);
        *dirfd = rootfd;
        return 2;
    }

    static int zarrx_write_beneath(int rootfd, const char *dir, const char *name,
                                   const char *temp, zarrx_span *spans, long long count,
                                   int *error) {
        int dirfd, fd, step = zarrx_key_dir_beneath(rootfd, dir, name, &dirfd, error);
        if (step) return step;
        do {
            fd = openat(dirfd, temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0) { *error = errno; step = 3; goto done; }
        *error = zarrx_write_spans(fd, spans, count);
        if (close(fd) != 0 && !*error && errno != EINTR) *error = errno;
        if (*error) { step = 4; unlinkat(dirfd, temp, 0); goto done; }
        if (renameat(dirfd, temp, dirfd, name) != 0) {
            *error = errno; step = 5; unlinkat(dirfd, temp, 0);
        }
    done:
        if (dirfd != rootfd) close(dirfd);
        return step;
    }
    #else
    static int zarrx_write_beneath(int rootfd, const char *dir, const char *name,
                                   const char *temp, zarrx_span *spans, long long count,
                                   int *error) {
        (void)rootfd; (void)dir; (void)name; (void)temp; (void)spans; (void)count;
        *error = ENOSYS; return 1;
    }
    #endif

    /* zarrx_write_beneath under the key's lock file lock (beside name, in dir), the
       protocol of zarrx/stores/locks.py in one call: the lock file opened (made), locked
       with an open file description lock (F_OFD_SETLKW: other threads, processes and
       machines sharing the file system wait), checked to be still the file its name
       leads to (else taken again on the one it leads to now), emptied (a killed writer's
       leftovers), written, and renamed over name — which frees the lock's name; closing
       it releases the lock. Returns 0 once in place, else the step that failed (1 the
       directory, 2 name is a link or cannot be examined, 3 the lock file, 4 its write, 5
       the rename, 6 the lock) with its errno in *error; a failure after the lock was
       taken removes the lock file (the holder's to remove) and leaves name as it was. */
    #if defined(__linux__) && defined(F_OFD_SETLKW)
    static int zarrx_write_locked_beneath(int rootfd, const char *dir, const char *name,
                                          const char *lock, zarrx_span *spans,
                                          long long count, int *error) {
        struct stat held, named;
        struct flock request;
        int dirfd, fd, now, step = zarrx_key_dir_beneath(rootfd, dir, name, &dirfd, error);
        if (step) return step;
        do {
            fd = openat(dirfd, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0) { *error = errno; step = 3; goto done; }
        for (;;) {
            memset(&request, 0, sizeof(request));
            request.l_type = F_WRLCK;
            request.l_whence = SEEK_SET;
            while (fcntl(fd, F_OFD_SETLKW, &request) != 0) {
                if (errno != EINTR) { *error = errno; step = 6; close(fd); goto done; }
            }
            do {
                now = openat(dirfd, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
            } while (now < 0 && errno == EINTR);
            if (now < 0) { *error = errno; step = 3; close(fd); goto done; }
            if (fstat(fd, &held) == 0 && fstat(now, &named) == 0
                    && held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
                close(now);
                break;
            }
            close(fd);  /* the name leads to another lock file now: take that one */
            fd = now;
        }
        if (fstat(fd, &held) != 0) { *error = errno; step = 4; goto failed; }
        if (held.st_size > 0 && ftruncate(fd, 0) != 0) { *error = errno; step = 4; goto failed; }
        *error = zarrx_write_spans(fd, spans, count);
        if (*error) { step = 4; goto failed; }
        if (renameat(dirfd, lock, dirfd, name) != 0) { *error = errno; step = 5; goto failed; }
        close(fd);  /* releases the lock */
        goto done;
    failed:
        unlinkat(dirfd, lock, 0);
        close(fd);
    done:
        if (dirfd != rootfd) close(dirfd);
        return step;
    }
    #else
    static int zarrx_write_locked_beneath(int rootfd, const char *dir, const char *name,
                                          const char *lock, zarrx_span *spans,
                                          long long count, int *error) {
        (void)rootfd; (void)dir; (void)name; (void)lock; (void)spans; (void)count;
        *error = ENOSYS; return 1;
    }
    #endif
    #endif
    """
    int zarrx_open_beneath(int dirfd, const char* path) nogil
    int zarrx_regular_size(int fd, long long* size) nogil
    long long zarrx_read(int fd, char* buffer, long long count) nogil
    long long zarrx_pread(int fd, char* buffer, long long count, long long at) nogil
    int zarrx_close(int fd) nogil
    ctypedef struct zarrx_span:
        const char* data
        long long size
    int zarrx_write_beneath(int rootfd, const char* dir, const char* name, const char* temp,
                            zarrx_span* spans, long long count, int* error) nogil
    int zarrx_write_locked_beneath(int rootfd, const char* dir, const char* name,
                                   const char* lock, zarrx_span* spans, long long count,
                                   int* error) nogil


cdef int _open(int dirfd, bytes path) except? -1:
    if b"\0" in path:
        raise ValueError(f"open_beneath: path contains a NUL byte: {path!r}")
    cdef const char* c_path = path
    cdef int fd
    with nogil:
        fd = zarrx_open_beneath(dirfd, c_path)
    if fd < 0:
        raise OSError(-fd, os.strerror(-fd), os.fsdecode(path))
    return fd


def open_beneath(int dirfd, bytes path):
    """A new file descriptor (read-only, non-blocking, close-on-exec) of ``path`` relative
    to ``dirfd``, resolved strictly beneath it; ``OSError`` carrying the call's errno."""
    return _open(dirfd, path)


def read_beneath(int dirfd, bytes path):
    """The whole content of the regular file ``path`` below ``dirfd`` (resolved as
    :func:`open_beneath` does); ``None`` if it is absent (``ENOENT``, ``ENOTDIR``) or not a
    regular file; ``OSError`` with the errno of any other failure."""
    cdef int fd
    try:
        fd = _open(dirfd, path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    cdef long long size = 0
    cdef int kind
    try:
        with nogil:
            kind = zarrx_regular_size(fd, &size)
        if kind < 0:
            raise OSError(-kind, os.strerror(-kind), os.fsdecode(path))
        if kind == 0:
            return None
        return _read_all(fd, <Py_ssize_t>size, path)
    finally:
        with nogil:
            zarrx_close(fd)


cdef long long _fill(int fd, char* base, long long count, long long at,
                     int* failure) noexcept nogil:
    """Read up to ``count`` bytes of ``fd`` into ``base`` — from its offset ``at`` (``pread``),
    or from where it stands when ``at`` is negative (``read``) — until they are all there,
    the file ends or a call fails (its errno in ``failure``); how many were read."""
    cdef long long filled = 0, got
    while filled < count:
        if at < 0:
            got = zarrx_read(fd, base + filled, count - filled)
        else:
            got = zarrx_pread(fd, base + filled, count - filled, at + filled)
        if got > 0:
            filled += got
        elif got == 0:
            break
        elif errno != EINTR:
            failure[0] = errno
            break
    return filled


cdef object _read_all(int fd, Py_ssize_t size, bytes path):
    """Read ``fd`` to its end into one bytes object of the expected ``size``."""
    value = PyBytes_FromStringAndSize(NULL, size)
    cdef char* base = PyBytes_AS_STRING(value)
    cdef Py_ssize_t filled = 0
    cdef long long got = 1
    cdef int failure = 0
    cdef char probe[1]
    with nogil:
        filled = _fill(fd, base, size, -1, &failure)
        if not failure and filled == size:  # the end of the file must come now
            while True:
                got = zarrx_read(fd, probe, 1)
                if got >= 0 or errno != EINTR:
                    break
            if got < 0:
                failure = errno
    if failure:
        raise OSError(failure, os.strerror(failure), os.fsdecode(path))
    if filled < size:  # the file shrank since fstat
        return value[:filled]
    if got == 0:
        return value
    # The file grew since fstat (a store replaces files whole, so only a foreign writer
    # does this): read the rest through Python.
    rest = [value, bytes(probe[:1])]
    while True:
        part = os.read(fd, 1 << 20)
        if not part:
            return b"".join(rest)
        rest.append(part)


def pread_rounds(int fd, reader not None, ranges, refuse not None, key):
    """Serve the rounds of ``reader`` (a ``RangeReader``: ``ranges()`` and ``receive()``)
    from the open file ``fd``, from its first round's ``ranges`` until it asks for nothing
    more: each range one ``pread`` without the GIL into a new ``bytes``, the ranges
    resolved against the size ``fstat`` gave as ``Store.get`` resolves them (a negative
    start counts from the end, a range past the end is clipped); a bound that is not an
    integer raises ``TypeError``, and ``refuse(range, key)`` is called for a range of
    negative length (it raises). Returns 0 once served, -1 when
    ``fd`` is not a regular file (nothing read), else the errno of the ``fstat`` or
    ``pread`` that failed. ``fd`` stays open."""
    cdef long long size = 0
    cdef int kind
    with nogil:
        kind = zarrx_regular_size(fd, &size)
    if kind < 0:
        return -kind
    if kind == 0:
        return -1
    cdef long long at, count
    cdef int failure
    cdef list values
    while ranges:
        values = []
        for r in ranges:
            # integers only, as os.pread takes them: a float is refused, not rounded
            start = index(r.start)
            length = None if r.length is None else index(r.length)
            if length is not None and length < 0:
                refuse(r, key)
                raise ValueError(f"{key!r}: byte range {r!r} has a negative length")
            start = max(size + start, 0) if start < 0 else min(start, size)
            at = start
            count = (size if length is None else min(start + length, size)) - at
            value, failure = _pread(fd, at, count)
            if failure:
                return failure
            values.append(value)
        reader.receive(values)
        ranges = reader.ranges()
    return 0


cdef tuple _pread(int fd, long long at, long long count):
    """``count`` bytes of ``fd`` from ``at`` (fewer at the end of the file), and 0; or
    ``None`` and the errno of the failed ``pread``."""
    value = PyBytes_FromStringAndSize(NULL, count)
    cdef char* base = PyBytes_AS_STRING(value)
    cdef long long filled
    cdef int failure = 0
    with nogil:
        filled = _fill(fd, base, count, at, &failure)
    if failure:
        return None, failure
    return (value if filled == count else value[:filled]), 0


cdef enum:
    _GROUP = 64  # how many files read_many_beneath holds open at once


def read_many_beneath(int dirfd, paths not None):
    """The whole content of each regular file of ``paths`` below ``dirfd``, as
    :func:`read_beneath` reads one, in one call per 64 files that holds the GIL only to
    make the values: a list with, for each path, its bytes, ``None`` when it is absent
    (``ENOENT``, ``ENOTDIR``) or not a regular file, or an ``int`` when this call cannot
    say (the errno of a failed open, ``stat`` or read, or ``0`` for a file that grew or a
    path with a NUL byte): the caller reads that one alone to raise or fall back."""
    cdef tuple items = tuple(paths)
    cdef Py_ssize_t n = len(items), start, i, count
    cdef const char* names[_GROUP]
    cdef char* bases[_GROUP]
    cdef int fds[_GROUP]
    cdef int codes[_GROUP]  # 0 read, -1 not regular, -2 grew, else an errno
    cdef long long sizes[_GROUP]
    cdef long long filled[_GROUP]
    cdef long long got
    cdef int kind
    cdef char probe[1]
    out = [None] * n
    for start in range(0, n, _GROUP):
        count = min(_GROUP, n - start)
        for i in range(count):
            path = items[start + i]
            if type(path) is not bytes:
                raise TypeError(f"read_many_beneath: expected bytes, got {type(path).__name__}")
            if b"\0" in path:
                names[i] = NULL
            else:
                names[i] = PyBytes_AS_STRING(path)
            bases[i] = NULL
        with nogil:
            for i in range(count):
                fds[i] = -1
                codes[i] = 0
                if names[i] == NULL:
                    continue
                fds[i] = zarrx_open_beneath(dirfd, names[i])
                if fds[i] < 0:
                    codes[i] = -fds[i]
                    continue
                kind = zarrx_regular_size(fds[i], &sizes[i])
                if kind <= 0:
                    codes[i] = -kind if kind < 0 else -1
                    zarrx_close(fds[i])
                    fds[i] = -1
        try:
            for i in range(count):
                if fds[i] >= 0:
                    value = PyBytes_FromStringAndSize(NULL, <Py_ssize_t>sizes[i])
                    out[start + i] = value
                    bases[i] = PyBytes_AS_STRING(value)
        finally:
            with nogil:
                for i in range(count):
                    if fds[i] < 0:
                        continue
                    filled[i] = 0
                    while bases[i] != NULL and filled[i] < sizes[i]:
                        got = zarrx_read(fds[i], bases[i] + filled[i], sizes[i] - filled[i])
                        if got > 0:
                            filled[i] += got
                        elif got == 0:
                            break
                        elif errno != EINTR:
                            codes[i] = errno
                            break
                    if bases[i] != NULL and codes[i] == 0 and filled[i] == sizes[i]:
                        while True:  # the end of the file must come now
                            got = zarrx_read(fds[i], probe, 1)
                            if got >= 0 or errno != EINTR:
                                break
                        if got < 0:
                            codes[i] = errno
                        elif got > 0:
                            codes[i] = -2
                    zarrx_close(fds[i])
        for i in range(count):
            if codes[i] == -1 or codes[i] == ENOENT or codes[i] == ENOTDIR:
                out[start + i] = None
            elif codes[i] == -2 or names[i] == NULL:
                out[start + i] = 0
            elif codes[i]:
                out[start + i] = codes[i]
            elif filled[i] < sizes[i]:  # the file shrank since fstat
                out[start + i] = out[start + i][:filled[i]]
    return out


#: The steps :func:`write_beneath` reports a failure of.
WRITE_DIRECTORY = 1
WRITE_LINK = 2
WRITE_TEMP = 3
WRITE_DATA = 4
WRITE_RENAME = 5
WRITE_LOCK = 6


def write_beneath(int dirfd, bytes directory, bytes name, bytes temp, data not None):
    """Write ``data`` atomically as the file ``name`` in ``directory`` below ``dirfd``
    (``b""``: ``dirfd`` itself): through the temporary file ``temp`` beside it, renamed
    over ``name``. ``data`` is a C-contiguous buffer, or a list or tuple of them written
    one after the other (by ``writev``, never joined). Returns ``(0, 0)`` once written,
    else ``(step, errno)`` of the step that failed (``WRITE_*``); a failure leaves no
    temporary file and ``name`` as it was."""
    return _write(dirfd, directory, name, temp, data, False, "write_beneath")


def write_locked_beneath(int dirfd, bytes directory, bytes name, bytes lock, data not None):
    """:func:`write_beneath` under the lock of the lock file ``lock`` beside ``name``, as
    ``zarrx.stores.locks.hold_lock_file`` takes it (an open file description lock, the
    name checked to lead to the file locked), the data written into the lock file itself
    and renamed over ``name``. Returns ``(0, 0)``, or ``(step, errno)`` (``WRITE_*``, and
    ``WRITE_LOCK``); ``(WRITE_DIRECTORY, ENOSYS)`` where the platform has no such locks."""
    return _write(dirfd, directory, name, lock, data, True, "write_locked_beneath")


cdef object _write(int dirfd, bytes directory, bytes name, bytes temp, data, bint locked,
                   str what):
    for part in (directory, name, temp):
        if b"\0" in part:
            raise ValueError(f"{what}: a path contains a NUL byte: {part!r}")
    if not name or b"/" in name or not temp or b"/" in temp:
        raise ValueError(f"{what}: {name!r} and {temp!r} must be single names")
    parts = data if isinstance(data, (list, tuple)) else (data,)
    cdef Py_ssize_t count = len(parts)
    cdef Py_ssize_t held = 0
    cdef Py_buffer* buffers = <Py_buffer*>calloc(count or 1, sizeof(Py_buffer))
    cdef zarrx_span* spans = <zarrx_span*>calloc(count or 1, sizeof(zarrx_span))
    cdef const char* c_dir = directory
    cdef const char* c_name = name
    cdef const char* c_temp = temp
    cdef int error = 0
    cdef int step
    if buffers == NULL or spans == NULL:
        free(buffers)
        free(spans)
        raise MemoryError()
    try:
        for part in parts:  # BufferError for a buffer not contiguous in C order
            PyObject_GetBuffer(part, &buffers[held], PyBUF_C_CONTIGUOUS)
            spans[held].data = <const char*>buffers[held].buf
            spans[held].size = buffers[held].len
            held += 1
        with nogil:
            if locked:
                step = zarrx_write_locked_beneath(dirfd, c_dir, c_name, c_temp, spans, count,
                                                  &error)
            else:
                step = zarrx_write_beneath(dirfd, c_dir, c_name, c_temp, spans, count,
                                           &error)
    finally:
        for i in range(held):
            PyBuffer_Release(&buffers[i])
        free(buffers)
        free(spans)
    return step, error
