"""Per-chunk cost of zarrx's read path: one element from each of N chunks, and a full read
of an array of N tiny chunks, on a LocalStore and a MemoryStore.

The chunks are tiny and uncompressed, so what is measured is the library's work per
chunk (plan, key, codec chain, store call, placement), not decoding. Prints µs per chunk
(median of ``--repeats``); compare two builds by running this script from each one's
environment, interleaved (``--json`` writes the medians for a script to compare).

    python bench/many_chunks.py --chunks 100000 --repeats 5
    python bench/many_chunks.py --profile point-local   # cProfile of one case
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import pstats
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import zarrx


def _make(store: object, n: int, chunk: int) -> zarrx.Array:
    with contextlib.suppress(Exception):  # reuse the array of an earlier run (--dir)
        a = zarrx.open_array(store, mode="r")
        if a.shape == (n * chunk,) and a.chunks == (chunk,):
            return a
    a = zarrx.create_array(store, shape=(n * chunk,), chunks=(chunk,), dtype="int32",
                           compressors=None, fill_value=0, overwrite=True)
    a[...] = np.arange(n * chunk, dtype="int32")
    return a


def _make_2d(store: object, n: int) -> zarrx.Array:
    side = round(n ** 0.5)
    with contextlib.suppress(Exception):
        a = zarrx.open_array(store, mode="r")
        if a.shape == (side * 2, side * 2):
            return a
    a = zarrx.create_array(store, shape=(side * 2, side * 2), chunks=(2, 2), dtype="int32",
                           compressors=None, fill_value=0, overwrite=True)
    a[...] = np.arange(side * side * 4, dtype="int32").reshape(side * 2, side * 2)
    return a


def cases(root: Path, n: int, chunk: int) -> dict[str, Callable[[], object]]:
    local = _make(zarrx.storage.LocalStore(root / "1d"), n, chunk)
    memory = _make(zarrx.storage.MemoryStore(), n, chunk)
    grid = _make_2d(zarrx.storage.LocalStore(root / "2d"), n)
    points = np.arange(n, dtype=np.intp) * chunk + 1  # one element in each chunk
    side = grid.shape[0] // 2
    rows = np.repeat(np.arange(side) * 2, side)
    cols = np.tile(np.arange(side) * 2 + 1, side)
    return {
        "point-local": lambda: local[points],
        "point-memory": lambda: memory[points],
        "strided-local": lambda: local[1::chunk],  # one element per chunk, by a slice
        "vindex2d-local": lambda: grid.vindex[rows, cols],
        "full-local": lambda: local[...],
        "full-memory": lambda: memory[...],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--chunk-size", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--profile", default="", help="cProfile one case and print the top")
    parser.add_argument("--threads", type=int, default=0, help="zarrx.config threads")
    parser.add_argument("--json", default="", help="write {case: median seconds} here")
    parser.add_argument("--dir", default="", help="keep the local stores here (reused)")
    args = parser.parse_args()
    if args.threads:
        zarrx.config.set(threads=args.threads)
    with contextlib.ExitStack() as stack:
        tmp = args.dir or stack.enter_context(tempfile.TemporaryDirectory())
        todo = cases(Path(tmp), args.chunks, args.chunk_size)
        if args.profile:
            fn = todo[args.profile]
            fn()
            prof = cProfile.Profile()
            prof.runcall(fn)
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
            return
        names = [c for c in args.only.split(",") if c] or list(todo)
        times: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(args.repeats):
            for name in names:  # interleaved: a slow phase of the machine hits all cases
                todo[name]()  # untimed first touch of fresh memory
                t = time.perf_counter()
                todo[name]()
                times[name].append(time.perf_counter() - t)
        medians = {name: statistics.median(ts) for name, ts in times.items()}
        nchunks = dict.fromkeys(names, args.chunks)
        for name in names:
            print(f"{name:16s} {medians[name] * 1e3:9.1f} ms  "
                  f"{medians[name] / nchunks[name] * 1e6:7.2f} µs/chunk")
        if args.json:
            Path(args.json).write_text(json.dumps(medians))


if __name__ == "__main__":
    main()
