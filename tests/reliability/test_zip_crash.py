"""Processes writing a zip archive (``ZipStore`` modes ``"w"`` and ``"a"``, then close),
killed with SIGKILL at random moments, over and over: the file at the archive's path is
always a complete archive, the old one or the new one — zipfile's ``testzip`` finds no bad
member, zarrx reads one consistent generation — and the temporary files the writers leave
beside it are never listed as keys and are removed by ``zarrx fsck``."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.storage import LocalStore, ZipStore
from zarrx.stores.keys import TEMP_PREFIX

SHAPE = (128, 128)
CHUNKS = (32, 32)
KEYS = sorted(["zarr.json"] + [f"c/{i}/{j}" for i in range(4) for j in range(4)])

# Each cycle writes generation i into every chunk and into the attributes, then closes
# (and so renames the new archive over the old one). Odd cycles in mode "a" write one
# chunk twice, so close compacts (copies live members into a second temporary archive).
WRITER = """
import sys
import zarrx
from zarrx.storage import ZipStore
path, mode, generation = sys.argv[1], sys.argv[2], int(sys.argv[3])
shape, chunks = (128, 128), (32, 32)
print("ready", flush=True)
while True:
    generation += 1
    store = ZipStore(path, mode=mode)
    if mode == "w":
        a = zarrx.create_array(store, shape=shape, chunks=chunks, dtype="i4",
                               compressors=None, attributes={"generation": generation})
    else:
        a = zarrx.open_array(store, mode="r+")
        a.attrs["generation"] = generation
    a[...] = generation
    if generation % 2:
        a[:32, :32] = generation
    store.close()
    print(generation, flush=True)
"""


def _create(path: str, generation: int) -> None:
    with ZipStore(path, mode="w") as store:
        a = zarrx.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype="i4", compressors=None,
                               attributes={"generation": generation})
        a[...] = generation


def _check_archive(path: str) -> int:
    """The archive is complete and holds one generation; return it."""
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None  # every member's CRC-32 is right
        assert sorted(z.namelist()) == KEYS
    store = ZipStore(path, mode="r")
    try:
        assert store.list() == KEYS
        a = zarrx.open_array(store)
        generation = a.attrs["generation"]
        np.testing.assert_array_equal(a[...], np.full(SHAPE, generation, dtype="i4"))
    finally:
        store.close()
    return generation


def _kill_at_random(path: str, mode: str, generation: int, delay: float) -> tuple[int, int]:
    """Run a writer, SIGKILL it ``delay`` s after it is ready; return (last generation it
    reported closed, generation it started from)."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, path, mode, str(generation)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        with contextlib.suppress(subprocess.TimeoutExpired):  # it never ends by itself
            proc.wait(timeout=delay)
        proc.kill()  # SIGKILL; nothing to do when it has ended and been reaped
        proc.wait()
        assert proc.returncode == -signal.SIGKILL  # it was still writing: killed, not done
        reported = [int(line) for line in proc.stdout.read().split()]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    return (reported[-1] if reported else generation), generation


@pytest.mark.parametrize("mode", ["w", "a"])
def test_sigkill_leaves_the_old_or_the_new_archive(tmp_path, mode):
    path = str(tmp_path / "data.zip")
    _create(path, 1)
    generation = 1
    rng = random.Random(20240610 + len(mode))
    seen_new = 0
    for attempt in range(14):
        # early kills (during start-up and the first cycle) and later ones (any phase)
        delay = rng.uniform(0.0, 0.05) if attempt % 3 == 0 else rng.uniform(0.02, 0.4)
        closed, started = _kill_at_random(path, mode, generation, delay)
        found = _check_archive(path)
        # old or new: what the last reported close wrote, or the one being closed
        assert found in (closed, closed + 1), (found, closed, started)
        assert found >= started
        seen_new += found > started
        generation = found
        # temporary files sit beside the archive, never inside a listing of keys
        for key in LocalStore(str(tmp_path)).list():
            assert TEMP_PREFIX not in key
    assert seen_new >= 5  # the kills did land after completed writes, not only at start-up
    leftovers = [name for name in os.listdir(tmp_path) if name.startswith(TEMP_PREFIX)]
    result = subprocess.run([sys.executable, "-m", "zarrx", "fsck", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"{len(leftovers)} leftover" in result.stdout
    assert sorted(os.listdir(tmp_path)) == ["data.zip"]
    assert _check_archive(path) == generation  # cleaning touched only leftovers


def test_kill_during_close_of_a_large_archive(tmp_path):
    """Kills aimed at the close: the writer stages ~8 MiB, then closes (copy + rename)."""
    path = str(tmp_path / "big.zip")
    _create(path, 1)
    writer = """
import sys, numpy as np, zarrx
from zarrx.storage import ZipStore
store = ZipStore(sys.argv[1], mode="a")
a = zarrx.open_array(store, mode="r+")
a.attrs["generation"] = 2
a[...] = 2
for i in range(64):  # dead members: close must compact them away
    store.set("pad/%d" % (i % 4), np.random.default_rng(i).bytes(1 << 17))
for i in range(4):
    store.erase("pad/%d" % i)
print("closing", flush=True)
store.close()
print("closed", flush=True)
"""
    rng = random.Random(7)
    outcomes = set()
    for _ in range(6):
        _create(path, 1)
        proc = subprocess.Popen([sys.executable, "-c", writer, path], stdout=subprocess.PIPE,
                                text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line == "closing"
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=rng.uniform(0.0, 0.03))
        proc.kill()  # SIGKILL; nothing to do when it has ended and been reaped
        proc.wait()
        proc.stdout.close()
        outcomes.add(_check_archive(path))  # 1 (old) or 2 (new), never partial
        assert outcomes <= {1, 2}
    LocalStore(str(tmp_path)).clean_leftovers()
    assert sorted(os.listdir(tmp_path)) == ["big.zip"]
    assert _check_archive(path) in (1, 2)
