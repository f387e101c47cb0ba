"""Fancy-indexing benchmark: index arrays on a 256 MiB array, zarrx beside zarr-python and
tensorstore.

    python bench/fancy_index.py --dir DIR [--rounds 5]

writes (once) a float32 v3 array of shape (256, 512, 512) in 64³ blosc-lz4 chunks under
DIR, then times each library in its own process, the libraries interleaved round by
round, and prints the median of each workload and zarrx's ratio to the best peer:

- ``points``: 100 000 random points (``a[i, j, k]`` with three index arrays; zarr-python:
  ``vindex``);
- ``take``: ``a[:, idx, :]`` with a 1 000-element sorted index array with repeats
  (zarr-python: ``oindex``);
- ``oindex``: ``a.oindex[40 rows, 10:200:3, 100 columns]`` (tensorstore: ``oindex``);
- ``mixed``: ``a[rows, 10:400:3, cols]`` with (20, 1) and (1, 50) arrays broadcast
  together around a slice (zarr-python refuses it).

Run one library and workload alone with ``python bench/fancy_index.py --run LIB PATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

SHAPE = (256, 512, 512)
CHUNKS = (64, 64, 64)
LIBS = ("zarrx", "zarr", "tensorstore")


def selections() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {
        "points": tuple(rng.integers(0, n, 100_000) for n in SHAPE),
        "take": (slice(None), np.sort(rng.integers(0, SHAPE[1], 1000)), slice(None)),
        "oindex": (np.sort(rng.choice(SHAPE[0], 40, replace=False)), slice(10, 200, 3),
                   np.sort(rng.choice(SHAPE[2], 100, replace=False))),
        "mixed": (rng.integers(0, SHAPE[0], (20, 1)), slice(10, 400, 3),
                  rng.integers(0, SHAPE[2], (1, 50))),
    }


def readers(lib: str, path: str) -> dict[str, Callable[[Any], Any] | None]:
    if lib == "zarrx":
        import zarrx

        a = zarrx.open_array(path, mode="r")
        return {"points": lambda s: a[s], "take": lambda s: a[s],
                "oindex": lambda s: a.oindex[s], "mixed": lambda s: a[s]}
    if lib == "zarr":
        import zarr

        z = zarr.open_array(path, mode="r")
        return {"points": lambda s: z.vindex[s], "take": lambda s: z.oindex[s],
                "oindex": lambda s: z.oindex[s], "mixed": None}
    import tensorstore as ts

    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()
    return {"points": lambda s: t[s].read().result(), "take": lambda s: t[s].read().result(),
            "oindex": lambda s: t.oindex[s].read().result(),
            "mixed": lambda s: t[s].read().result()}


def run(lib: str, path: str) -> dict[str, Any]:
    """One process, one library: every workload once warm, then timed once."""
    out: dict[str, Any] = {}
    for name, sel in selections().items():
        fn = readers(lib, path)[name]
        if fn is None:
            continue
        fn(sel)  # warm: codecs loaded, pages cached
        start = time.perf_counter()
        result = fn(sel)
        out[name] = {"seconds": time.perf_counter() - start, "shape": list(np.shape(result)),
                     "checksum": float(np.sum(result, dtype=np.float64))}
    return out


def write(path: str) -> None:
    import zarrx

    if os.path.exists(os.path.join(path, "zarr.json")):
        return
    a = zarrx.create_array(path, shape=SHAPE, dtype="float32", chunks=CHUNKS,
                           compressors={"name": "blosc", "configuration": {"cname": "lz4"}})
    rng = np.random.default_rng(1)
    for i in range(0, SHAPE[0], CHUNKS[0]):
        a[i:i + CHUNKS[0]] = rng.standard_normal((CHUNKS[0], *SHAPE[1:]), dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--run", nargs=2, metavar=("LIB", "PATH"))
    args = parser.parse_args()
    if args.run:
        print(json.dumps(run(*args.run)))
        return
    path = os.path.join(args.dir, "fancy.zarr")
    write(path)
    times: dict[str, dict[str, list[float]]] = {}
    checks: dict[str, dict[str, Any]] = {}
    for _ in range(args.rounds):
        for lib in LIBS:
            done = subprocess.run([sys.executable, __file__, "--run", lib, path],
                                  capture_output=True, text=True, check=True)
            for name, r in json.loads(done.stdout).items():
                times.setdefault(name, {}).setdefault(lib, []).append(r["seconds"])
                checks.setdefault(name, {})[lib] = (r["shape"], round(r["checksum"], 1))
    print(f"{'workload':8s} " + " ".join(f"{lib:>12s}" for lib in LIBS) + "   zarrx/best peer")
    for name, per_lib in times.items():
        med = {lib: statistics.median(v) for lib, v in per_lib.items()}
        peers = [v for lib, v in med.items() if lib != "zarrx"]
        cells = " ".join(f"{med[lib]:11.4f}s" if lib in med else f"{'n/a':>12s}"
                         for lib in LIBS)
        agree = len({json.dumps(c) for c in checks[name].values()}) == 1
        print(f"{name:8s} {cells}   {med['zarrx'] / min(peers):.2f}"
              + ("" if agree else "   (results differ!)"))


if __name__ == "__main__":
    main()
