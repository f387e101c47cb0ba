"""Lazy views benchmark: a 3-step crop chain on the 256 MiB array of ``fancy_index.py``.

    python bench/lazy_views.py --dir DIR [--rounds 5]

Each library in its own process, interleaved round by round; median seconds and the ratio
to zarrx's eager read of the same cells:

- ``zarrx lazy``: ``a.lazy[16:240, ::2, 100:500].lazy[::-1, 10:200].lazy[5:100, :, ::3]``
  read once (the chain is fused into one transform);
- ``zarrx eager``: the equivalent single selection ``a[...]``;
- ``tensorstore``: the same chain of views (each step re-based to 0 with
  ``translate_to[0]``, for NumPy's meaning), read once;
- ``zarr-python eager``: the single selection (zarr-python 3.1.6 has no lazy views, and
  the experimental ``zarr-indexing`` package is not on PyPI).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from fancy_index import write

CHAIN = [(slice(16, 240), slice(None, None, 2), slice(100, 500)),
         (slice(None, None, -1), slice(10, 200)),
         (slice(5, 100), slice(None), slice(None, None, 3))]
# The same cells in one step: rows 16..239 reversed then 5:100 -> 234, 233, ..., 140.
EAGER = (slice(234, 139, -1), slice(20, 400, 2), slice(100, 500, 3))


def run(lib: str, path: str) -> dict[str, Any]:
    if lib.startswith("zarrx"):
        import zarrx

        a = zarrx.open_array(path, mode="r")
        if lib == "zarrx-lazy":
            def read() -> Any:
                view = a.lazy[CHAIN[0]].lazy[CHAIN[1]].lazy[CHAIN[2]]
                return np.asarray(view)
        else:
            def read() -> Any:
                return a[EAGER]
    elif lib == "zarr":
        import zarr

        z = zarr.open_array(path, mode="r")
        step = EAGER[0]  # zarr-python refuses negative steps: read forwards, then flip

        def read() -> Any:
            return z[(slice(step.stop + 1, step.start + 1), *EAGER[1:])][::-1]
    else:
        import tensorstore as ts

        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()

        def read() -> Any:
            view = t
            for step in CHAIN:
                view = view[step].translate_to[0]
            return view.read().result()

    read()  # warm
    start = time.perf_counter()
    result = read()
    return {"seconds": time.perf_counter() - start, "shape": list(np.shape(result)),
            "checksum": float(np.sum(result, dtype=np.float64))}


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
    libs = ("zarrx-lazy", "zarrx-eager", "tensorstore", "zarr")
    times: dict[str, list[float]] = {lib: [] for lib in libs}
    checks = {}
    for _ in range(args.rounds):
        for lib in libs:
            done = subprocess.run([sys.executable, __file__, "--run", lib, path],
                                  capture_output=True, text=True, check=True)
            r = json.loads(done.stdout)
            times[lib].append(r["seconds"])
            checks[lib] = (r["shape"], round(r["checksum"], 1))
    eager = statistics.median(times["zarrx-eager"])
    for lib in libs:
        med = statistics.median(times[lib])
        print(f"{lib:12s} {med:8.4f} s   {med / eager:5.2f}x zarrx eager   {checks[lib]}")


if __name__ == "__main__":
    main()
