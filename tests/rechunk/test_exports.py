"""``zarrx.rechunk`` and ``zarrx.rechunk_group`` are lazy exports: nothing of rechunking is
imported by ``import zarrx``, and a first use from many threads at once works."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import zarrx
from zarrx.storage import MemoryStore

FIRST_USE = r"""
import sys, threading
import numpy as np
import zarrx
assert "zarrx.rechunking" not in sys.modules, "imported by import zarrx"
root = sys.argv[1]
src = zarrx.create_array(f"{root}/src", data=np.arange(400).reshape(20, 20), chunks=(1, 20))
barrier = threading.Barrier(8)
failures = []
def first_use(i):
    barrier.wait()
    try:
        fn = zarrx.rechunk if i % 2 else zarrx.rechunk_group
        if i % 2:
            out = fn(src, f"{root}/out{i}", chunks=(20, 1), max_mem="1MiB", threads=1)
            assert np.array_equal(out[...], np.arange(400).reshape(20, 20))
    except BaseException as e:
        failures.append(f"{i}: {e!r}")
threads = [threading.Thread(target=first_use, args=(i,)) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("\n".join(failures))
sys.exit(1 if failures else 0)
"""


def test_first_use_from_threads(tmp_path: Path) -> None:
    for attempt in range(3):
        proc = subprocess.run([sys.executable, "-c", FIRST_USE, str(tmp_path / str(attempt))],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_exported() -> None:
    assert "rechunk" in zarrx.__all__
    assert "rechunk_group" in zarrx.__all__
    from zarrx.rechunking import rechunk, rechunk_group

    assert zarrx.rechunk is rechunk
    assert zarrx.rechunk_group is rechunk_group


def test_thread_pool_executor_shares_a_memory_store() -> None:
    src = zarrx.create_array(MemoryStore(), data=np.arange(900).reshape(30, 30),
                             chunks=(1, 30))
    with ThreadPoolExecutor(2) as pool:
        out = zarrx.rechunk(src, MemoryStore(), chunks=(30, 1), executor=pool,
                            max_mem="64KiB")
    assert np.array_equal(out[...], np.arange(900).reshape(30, 30))
