"""Reading a file below a directory without leaving it, in one system call for the check.

Why it exists: a file store must never follow a key out of its root (through a symbolic
link or ``..``). Proving that from user space costs an ``lstat`` per path component and a
``realpath`` when there is a link; Linux (5.6 and later) proves it in the kernel during
the open itself: ``openat2(2)`` with ``RESOLVE_BENEATH`` fails with ``EXDEV`` instead of
resolving a path, link or ``..`` that leaves the directory, and ``RESOLVE_NO_MAGICLINKS``
refuses ``/proc``-style links. This module wraps that call, and a whole-file read behind it
that holds no GIL, for :mod:`zarrx.stores.local`. Where the kernel or C library lacks
``openat2`` every call fails with ``ENOSYS`` and the caller uses its own checks.
What each function takes, checks and guarantees: ``zarrx/_core/README.md``.
"""

import os

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.errno cimport EINTR, errno

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
    static int zarrx_close(int fd) { (void)fd; return 0; }
    #else
    #include <fcntl.h>
    #include <stdint.h>
    #include <string.h>
    #include <sys/stat.h>
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

    struct zarrx_open_how { uint64_t flags; uint64_t mode; uint64_t resolve; };

    /* A file below dirfd opened read-only, or -errno. O_NONBLOCK: a FIFO planted in the
       store must not hang the open. */
    static int zarrx_open_beneath(int dirfd, const char *path) {
    #if defined(__linux__)
        struct zarrx_open_how how;
        long fd;
        memset(&how, 0, sizeof(how));
        how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
        how.resolve = 0x08 /* RESOLVE_BENEATH */ | 0x02 /* RESOLVE_NO_MAGICLINKS */;
        do {
            fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        } while (fd < 0 && errno == EINTR);
        return fd < 0 ? -errno : (int)fd;
    #else
        (void)dirfd; (void)path;
        return -ENOSYS;
    #endif
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

    static int zarrx_close(int fd) { return close(fd); }
    #endif
    """
    int zarrx_open_beneath(int dirfd, const char* path) nogil
    int zarrx_regular_size(int fd, long long* size) nogil
    long long zarrx_read(int fd, char* buffer, long long count) nogil
    int zarrx_close(int fd) nogil


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


cdef object _read_all(int fd, Py_ssize_t size, bytes path):
    """Read ``fd`` to its end into one bytes object of the expected ``size``."""
    value = PyBytes_FromStringAndSize(NULL, size)
    cdef char* base = PyBytes_AS_STRING(value)
    cdef Py_ssize_t filled = 0
    cdef long long got = 1
    cdef int failure = 0
    cdef char probe[1]
    with nogil:
        while filled < size:
            got = zarrx_read(fd, base + filled, size - filled)
            if got > 0:
                filled += got
            elif got == 0:
                break
            elif errno != EINTR:
                failure = errno
                break
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
