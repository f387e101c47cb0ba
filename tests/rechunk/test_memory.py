"""Peak memory of a rechunk stays within ``max_mem`` plus a small constant, on the worst
crossing of the grids: source chunks ``(1, N, N)`` into target chunks ``(N, 1, 1)``.

Measured in a child process: its peak resident set (``VmHWM`` of ``/proc/self/status``,
which, unlike ``ru_maxrss``, starts afresh at ``exec``) once zarrx is imported and warm,
against its peak after the rechunk. The array (64 MiB) is four times
``max_mem`` (16 MiB), so a copy that held the array, or a slab of it per source chunk
row, would overshoot by far."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrx

N = 256  # float32: 64 MiB
MAX_MEM = 16 << 20
SLACK = 8 << 20  # allocator pages, the interpreter's own growth, thread stacks

CHILD = r"""
import json, sys
import numpy as np, zarrx
src, dst, max_mem, shards = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
n = int(sys.argv[5])
source = zarrx.open_array(src, mode="r")
source[0, :4, :4]  # warm up: codecs loaded, pools started
w = zarrx.create_array(zarrx.storage.MemoryStore(), data=np.zeros((4, 4, 4), "f4"),
                       chunks=(4, 1, 1))
w[...]
def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
before = status("VmHWM")
out = zarrx.rechunk(source, dst, chunks=(n, 1, 1), max_mem=max_mem, threads=2,
                    shards=None if shards == "none" else (n, 32, 32))
print(json.dumps({"before": before, "peak": status("VmHWM")}))
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("memory") / "src.zarr"
    a = zarrx.create_array(str(root), shape=(N, N, N), dtype="f4", chunks=(1, N, N))
    for i in range(0, N, 16):
        a[i:i + 16] = np.random.default_rng(i).random((16, N, N), dtype="f4")
    return root


@pytest.mark.parametrize("shards", ["none", "sharded"])
def test_peak_memory_on_the_worst_crossing(source: Path, tmp_path: Path, shards: str) -> None:
    dst = tmp_path / "dst.zarr"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(source), str(dst), str(MAX_MEM), shards, str(N)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout)
    grown = measured["peak"] - measured["before"]
    print(f"peak growth {grown / 2**20:.1f} MiB for max_mem {MAX_MEM / 2**20:.0f} MiB")
    assert grown <= MAX_MEM + SLACK, f"{grown / 2**20:.1f} MiB"
    src = zarrx.open_array(str(source), mode="r")
    out = zarrx.open_array(str(dst), mode="r")
    assert out.chunks == (N, 1, 1)
    for i in range(0, N, 64):
        assert np.array_equal(src[:, i:i + 64], out[:, i:i + 64])
