"""``openat2`` with ``RESOLVE_BENEATH``: files below the directory are read, nothing that a
path, ``..`` or a link leads out to is (tested where the kernel has the call)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from zarrx._core.files import (
    WRITE_DATA,
    WRITE_DIRECTORY,
    WRITE_LINK,
    WRITE_RENAME,
    WRITE_TEMP,
    open_beneath,
    read_beneath,
    read_many_beneath,
    write_beneath,
)


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


def test_read_many_answers_as_read_beneath_does(root: tuple[int, Path]) -> None:
    """Each path as read_beneath reads it: the value, or None; where read_beneath raises
    (a path out of the root, a bad descriptor) an errno to read that one alone; over more
    files than one call holds open (64), in order, files of every size."""
    fd, path = root
    (path / "a").mkdir()
    (path / "up").symlink_to("../outside")
    (path / "a" / "rel").symlink_to("k")
    os.mkfifo(path / "fifo")
    rng = np.random.default_rng(5)
    names = []
    for i in range(150):
        size = int(rng.choice([0, 1, 7, 4096, 70_000]))
        (path / f"f{i}").write_bytes(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
        names.append(f"f{i}".encode())
    (path / "a" / "k").write_bytes(b"value")
    odd = [b"absent", b"a/k/below", b"a", b"fifo", b"a/rel", b"a/k"]
    descriptors = len(os.listdir("/proc/self/fd"))
    paths = [*names[:70], *odd, *names[70:]]
    got = read_many_beneath(fd, paths)
    assert len(got) == len(paths)
    for name, value in zip(paths, got):
        assert value == read_beneath(fd, name), name
    escaping = [b"../outside", b"up", b"/etc/passwd"]
    assert read_many_beneath(fd, [b"a/k", *escaping]) == [b"value"] + [errno.EXDEV] * 3
    assert read_many_beneath(fd, [b"a\0b", b"a/k"]) == [0, b"value"]  # NUL: read alone
    assert read_many_beneath(-1, [b"a/k"]) == [errno.EBADF]
    assert read_many_beneath(fd, []) == []
    with pytest.raises(TypeError):
        read_many_beneath(fd, ["text"])  # type: ignore[list-item]
    assert len(os.listdir("/proc/self/fd")) == descriptors  # every file closed again


# -- write_beneath --------------------------------------------------------------------------
def _temps(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.name.startswith("tmp-")]


def test_writes_files_below_atomically(root: tuple[int, Path]) -> None:
    fd, path = root
    (path / "a" / "b").mkdir(parents=True)
    big = os.urandom(3 << 20)
    assert write_beneath(fd, b"a/b", b"k", b"tmp-1", big) == (0, 0)
    assert (path / "a" / "b" / "k").read_bytes() == big
    assert write_beneath(fd, b"a/b", b"k", b"tmp-1", memoryview(b"new")) == (0, 0)
    assert (path / "a" / "b" / "k").read_bytes() == b"new"
    assert write_beneath(fd, b"", b"top", b"tmp-2", bytearray()) == (0, 0)  # in dirfd itself
    assert (path / "top").read_bytes() == b""
    assert not _temps(path)


def test_writes_parts_one_after_the_other(root: tuple[int, Path]) -> None:
    """A list or tuple of buffers is the file's content in order: empty parts, more parts
    than one ``writev`` takes, and parts of every buffer kind."""
    fd, path = root
    (path / "d").mkdir()
    rng = np.random.default_rng(7)
    parts: list[object] = [os.urandom(int(n)) for n in rng.integers(0, 5000, 300)]
    parts[3] = b""
    parts[10] = bytearray(b"middle")
    parts[20] = memoryview(os.urandom(100))[10:60]
    parts[30] = np.arange(100, dtype="<u4")
    parts[40] = os.urandom(3 << 20)
    expected = b"".join(bytes(memoryview(p).cast("B")) for p in parts)  # type: ignore[arg-type]
    assert write_beneath(fd, b"d", b"k", b"tmp-1", parts) == (0, 0)
    assert (path / "d" / "k").read_bytes() == expected
    assert write_beneath(fd, b"d", b"k", b"tmp-1", (b"a", b"", b"bc")) == (0, 0)
    assert (path / "d" / "k").read_bytes() == b"abc"
    assert write_beneath(fd, b"d", b"k", b"tmp-1", []) == (0, 0)
    assert (path / "d" / "k").read_bytes() == b""
    with pytest.raises(BufferError):  # one part not contiguous: nothing written
        write_beneath(fd, b"d", b"k", b"tmp-1", [b"x", memoryview(b"abcd")[::2]])
    with pytest.raises(TypeError):
        write_beneath(fd, b"d", b"k", b"tmp-1", [b"x", "text"])
    assert (path / "d" / "k").read_bytes() == b""
    assert not _temps(path)


def test_write_failures_name_their_step_and_leave_nothing(
    root: tuple[int, Path], tmp_path: Path
) -> None:
    fd, path = root
    (path / "d").mkdir()
    (path / "d" / "k").write_bytes(b"old")
    (path / "d" / "dir").mkdir()
    (path / "d" / "dir" / "inner").write_bytes(b"x")
    (path / "d" / "link").symlink_to("k")
    (path / "d" / "tmp-taken").write_bytes(b"someone else's")
    (path / "out").symlink_to(tmp_path, target_is_directory=True)
    (path / "abs").symlink_to(path / "d", target_is_directory=True)
    assert write_beneath(fd, b"absent", b"k", b"tmp-1", b"v") == (WRITE_DIRECTORY, errno.ENOENT)
    assert write_beneath(fd, b"d/k", b"k", b"tmp-1", b"v") == (WRITE_DIRECTORY, errno.ENOTDIR)
    assert write_beneath(fd, b"out", b"k", b"tmp-1", b"v") == (WRITE_DIRECTORY, errno.EXDEV)
    assert write_beneath(fd, b"abs", b"k", b"tmp-1", b"v") == (WRITE_DIRECTORY, errno.EXDEV)
    assert write_beneath(fd, b"../root/d", b"k", b"tmp-1", b"v") == (
        WRITE_DIRECTORY, errno.EXDEV)
    assert write_beneath(fd, b"d", b"link", b"tmp-1", b"v") == (WRITE_LINK, 0)
    assert write_beneath(fd, b"d", b"k", b"tmp-taken", b"v") == (WRITE_TEMP, errno.EEXIST)
    assert write_beneath(fd, b"d", b"dir", b"tmp-1", b"v") == (WRITE_RENAME, errno.EISDIR)
    assert (path / "d" / "k").read_bytes() == b"old"
    assert (path / "d" / "link").is_symlink()
    assert (path / "d" / "tmp-taken").read_bytes() == b"someone else's"
    assert sorted(p.name for p in _temps(path)) == ["tmp-taken"]
    assert not (tmp_path / "k").exists()
    for bad in ((b"d\0", b"k", b"t"), (b"d", b"k\0", b"t"), (b"d", b"k", b"t\0"),
                (b"d", b"a/k", b"t"), (b"d", b"k", b"x/t"), (b"d", b"", b"t")):
        with pytest.raises(ValueError, match=r"NUL byte|single names"):
            write_beneath(fd, *bad, b"v")
    with pytest.raises(BufferError):  # not contiguous
        write_beneath(fd, b"d", b"k", b"t", memoryview(b"abcd")[::2])


def test_a_write_that_fails_midway_leaves_no_temporary_file(
    root: tuple[int, Path], tmp_path: Path
) -> None:
    """A file size limit (``RLIMIT_FSIZE``) makes the write itself fail (``EFBIG``), in a
    child process so the limit binds nothing else."""
    _, path = root
    (path / "d").mkdir()
    (path / "d" / "k").write_bytes(b"old")
    script = (
        "import os, resource, signal, sys\n"
        "from zarrx._core.files import write_beneath\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))\n"
        "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\n"
        "print(write_beneath(fd, b'd', b'k', b'tmp-1', b'x' * 5000))\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"({WRITE_DATA}, {errno.EFBIG})"
    assert (path / "d" / "k").read_bytes() == b"old"
    assert not _temps(path)
