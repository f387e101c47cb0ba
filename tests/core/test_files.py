"""``openat2`` with ``RESOLVE_BENEATH``: files below the directory are read, nothing that a
path, ``..`` or a link leads out to is (tested where the kernel has the call)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from zarrx._core.files import open_beneath, read_beneath


@pytest.fixture
def root(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    path = tmp_path / "root"
    path.mkdir()
    (tmp_path / "outside").write_bytes(b"secret")
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        read_beneath(fd, b"probe")
    except OSError as error:
        os.close(fd)
        if error.errno not in (errno.ENOSYS, errno.EPERM):  # only ever a missing call
            raise
        pytest.skip("this kernel has no openat2")
    yield fd, path
    os.close(fd)


def test_reads_files_below(root: tuple[int, Path]) -> None:
    fd, path = root
    (path / "a").mkdir()
    (path / "a" / "k").write_bytes(b"value")
    (path / "empty").write_bytes(b"")
    big = os.urandom(3 << 20)
    (path / "big").write_bytes(big)
    (path / "a" / "rel").symlink_to("k")
    assert read_beneath(fd, b"a/k") == b"value"
    assert read_beneath(fd, b"a/rel") == b"value"
    assert read_beneath(fd, b"empty") == b""
    assert read_beneath(fd, b"big") == big
    assert read_beneath(fd, b"absent") is None
    assert read_beneath(fd, b"a/k/below") is None  # ENOTDIR: absent
    assert read_beneath(fd, b"a") is None  # a directory is not a regular file
    opened = open_beneath(fd, b"a/k")
    try:
        assert os.read(opened, 10) == b"value"
        assert not os.get_inheritable(opened)  # close-on-exec
    finally:
        os.close(opened)


def test_a_fifo_is_not_read_and_does_not_hang(root: tuple[int, Path]) -> None:
    fd, path = root
    os.mkfifo(path / "fifo")
    assert read_beneath(fd, b"fifo") is None


@pytest.mark.parametrize("name", [b"../outside", b"/etc/passwd", b"a/../../outside",
                                  b"up", b"dir/outside", b"abs"])
def test_nothing_outside_is_opened(root: tuple[int, Path], name: bytes) -> None:
    fd, path = root
    (path / "a").mkdir()
    (path / "up").symlink_to("../outside")
    (path / "dir").symlink_to("..", target_is_directory=True)
    (path / "abs").symlink_to(path.parent / "outside")  # absolute: refused even if inside
    for call in (read_beneath, open_beneath):
        with pytest.raises(OSError, match="cross-device") as caught:
            call(fd, name)
        assert caught.value.errno == errno.EXDEV


def test_magic_links_are_refused(root: tuple[int, Path]) -> None:
    fd, path = root
    (path / "self").symlink_to(f"/proc/self/fd/{fd}")  # absolute anyway: EXDEV
    with pytest.raises(OSError, match="self") as caught:
        read_beneath(fd, b"self")
    assert caught.value.errno in (errno.EXDEV, errno.ELOOP)
    proc = os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(OSError, match="fd/") as caught:  # a magic link below it
            read_beneath(proc, f"fd/{fd}/x".encode())
        assert caught.value.errno in (errno.ELOOP, errno.EXDEV)
    finally:
        os.close(proc)


def test_bad_arguments(root: tuple[int, Path]) -> None:
    fd, _ = root
    with pytest.raises(ValueError, match="NUL"):
        read_beneath(fd, b"a\0b")
    with pytest.raises(TypeError):
        read_beneath(fd, "text")  # type: ignore[arg-type]
    with pytest.raises(OSError, match="x") as caught:
        read_beneath(-1, b"x")
    assert caught.value.errno == errno.EBADF
