"""One writer process of the many-writer tests, run as ``python writer.py JOB URL ARGS...``.

Each writer stands for another machine: the test gives it its own ``TMPDIR`` and ``HOME``,
so nothing but the store is shared. It opens the array, prints ``ready``, waits for a line
on stdin (the test releases every writer at once), does its job and prints ``done``.

Jobs (``W`` is this writer's number, ``N`` the number of writers):

- ``inner URL W N``: write each inner chunk whose flat index is ``W`` modulo ``N``, one
  write each (every write is a partial shard update); its value is the index plus one.
- ``hold URL W N HELD``: as ``inner``, but at its ``HELD``-th write it prints ``holding``
  while inside the shard's atomic update, and waits there forever (the test kills it).
- ``append URL W COUNT``: ``COUNT`` appends of one row holding ``W * 1000 + i``.
- ``attrs URL W COUNT``: ``COUNT`` attribute writes, key ``wW-i``, value ``i``.

Flags at the end: ``--path P`` opens the array at ``P`` in the store; ``--options JSON``
gives ``storage_options`` for an ``s3://`` URL; ``--obstore JSON`` opens the URL as an
``ObstoreStore`` with that obstore configuration.
"""

from __future__ import annotations

import itertools
import json
import os
import selectors
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

import zarrx

WRITERS = 4


def make_sharded(url: str, **options: Any) -> Any:
    """216 inner chunks (6 x 6 x 6) in 8 shards of 27: every write is a partial shard update."""
    return zarrx.create_array(
        url, shape=(12, 12, 12), dtype="i4", chunks=(2, 2, 2), shards=(6, 6, 6),
        fill_value=0, **options,
    )


def lost_inner_chunks(a: Any, skip: frozenset[int] = frozenset()) -> list[int]:
    """Indices of the inner chunks that do not hold their value (index + 1)."""
    data = a[...]  # every shard decodes
    return [i for i, region in enumerate(inner_chunks(a.shape, a.chunks))
            if i not in skip and not (data[region] == i + 1).all()]


def inner_chunks(shape: tuple[int, ...], chunks: tuple[int, ...]) -> list[tuple[slice, ...]]:
    """The region of every inner chunk, in C order of the chunk grid."""
    grid = [range(0, n, c) for n, c in zip(shape, chunks)]
    return [tuple(slice(s, min(s + c, n)) for s, c, n in zip(starts, chunks, shape))
            for starts in itertools.product(*grid)]


def _inner(a: Any, writer: int, writers: int, held: int | None = None) -> None:
    regions = inner_chunks(a.shape, a.chunks)
    mine = [i for i in range(len(regions)) if i % writers == writer]
    for count, i in enumerate(mine):
        if count == held:
            _hold(a, regions[i])
        a[regions[i]] = i + 1


def _hold(a: Any, region: tuple[slice, ...]) -> None:
    """Enter the atomic update of the shard holding ``region`` and never leave it."""
    shard = tuple(s.start // n for s, n in zip(region, a.shards))
    key = a._chunk_store.key(shard)

    def block(old: bytes | None) -> bytes | None:
        print("holding", flush=True)
        sys.stdin.readline()  # the test never answers: it kills this process
        raise SystemExit("released without being killed")

    a.store.atomic_update(key, block)


def main(argv: list[str]) -> None:
    flags: dict[str, str] = {}
    while len(argv) > 2 and argv[-2].startswith("--"):
        flags[argv[-2][2:]] = argv[-1]
        argv = argv[:-2]
    job, url, *args = argv
    options = json.loads(flags["options"]) if "options" in flags else None
    store: Any = url
    if "obstore" in flags:  # the same URL through obstore, with its configuration
        from zarrx.stores.obstore import ObstoreStore

        store = ObstoreStore.from_url(url, storage_options=json.loads(flags["obstore"]))
    a = zarrx.open_array(store, mode="r+", path=flags.get("path"), storage_options=options)
    print("ready", flush=True)
    sys.stdin.readline()
    if job == "inner":
        _inner(a, int(args[0]), int(args[1]))
    elif job == "hold":
        _inner(a, int(args[0]), int(args[1]), held=int(args[2]))
    elif job == "append":
        writer, count = int(args[0]), int(args[1])
        for i in range(count):
            a.append(np.full((1, *a.shape[1:]), writer * 1000 + i, dtype=a.dtype))
    elif job == "attrs":
        writer, count = int(args[0]), int(args[1])
        for i in range(count):
            a.attrs[f"w{writer}-{i}"] = i
    else:
        raise SystemExit(f"unknown job {job!r}")
    print("done", flush=True)


# -- the test's side: start writers as separate machines and release them at once ---------

#: A guard against a hang only (a writer normally takes a second or two), never a deadline.
HANG_GUARD = 600


class Writers:
    """Writer processes, each with its own ``TMPDIR`` and ``HOME`` under ``scratch``."""

    def __init__(self, scratch: Path, jobs: list[list[str]], env: dict[str, str] | None = None):
        self.procs: list[subprocess.Popen[str]] = []
        for n, job in enumerate(jobs):
            home = scratch / f"machine-{n}"
            (home / "tmp").mkdir(parents=True)
            environ = {**os.environ, **(env or {}), "HOME": str(home), "TMPDIR": str(home / "tmp")}
            self.procs.append(subprocess.Popen(
                [sys.executable, __file__, *job], env=environ, text=True,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            ))
        for proc in self.procs:
            self.expect(proc, "ready")

    def expect(self, proc: subprocess.Popen[str], word: str) -> None:
        """Wait until ``proc`` prints ``word`` (it failed if it exits first)."""
        assert proc.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            if not selector.select(timeout=HANG_GUARD):
                proc.kill()
                proc.communicate()
                raise AssertionError(f"writer hung before printing {word!r}")
        line = proc.stdout.readline().strip()
        if line != word:
            _, err = proc.communicate(timeout=HANG_GUARD)
            raise AssertionError(f"writer printed {line!r}, not {word!r}; stderr:\n{err}")

    def go(self) -> None:
        """Release every writer at once."""
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()

    def kill(self, proc: subprocess.Popen[str]) -> None:
        """SIGKILL ``proc`` (as a machine that dies would), and reap it."""
        proc.kill()  # SIGKILL; nothing to do when it has ended and been reaped
        proc.communicate(timeout=HANG_GUARD)
        assert proc.returncode == -signal.SIGKILL

    def finish(self, procs: list[subprocess.Popen[str]] | None = None) -> None:
        """Wait for ``procs`` (default: all) and check that each did its whole job."""
        for proc in self.procs if procs is None else procs:
            try:
                out, err = proc.communicate(timeout=HANG_GUARD)
            except subprocess.TimeoutExpired:
                for other in self.procs:
                    other.kill()
                    other.communicate()
                raise
            report = f"writer exited {proc.returncode}, printed {out!r}; stderr:\n{err}"
            assert proc.returncode == 0, report
            assert out.split()[-1:] == ["done"], report


if __name__ == "__main__":
    main(sys.argv[1:])
