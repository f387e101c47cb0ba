"""Reading a file below a directory without leaving it (``openat2`` with
``RESOLVE_BENEATH``; ``ENOSYS`` where the kernel or platform lacks it).

What each function takes, checks and guarantees: ``zarrx/_core/README.md``.
"""

def open_beneath(dirfd: int, path: bytes) -> int:
    """A new read-only file descriptor of ``path`` resolved strictly beneath ``dirfd``."""

def read_beneath(dirfd: int, path: bytes) -> bytes | None:
    """The whole regular file ``path`` below ``dirfd``; ``None`` if absent or not regular."""
