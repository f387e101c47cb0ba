"""Fancy-indexing benchmark: 100 000 random ``vindex`` points and an ``oindex`` selection.

Run once per library, each in its own process, on a store written by ``compare.py``
(``--dir``) or any 3-D float32 v3 array:

    python bench/fancy_index.py zarrx STORE
    python bench/fancy_index.py zarr STORE
    python bench/fancy_index.py tensorstore STORE
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def selections(shape: tuple[int, ...]) -> tuple[tuple[np.ndarray, ...], tuple[Any, ...]]:
    rng = np.random.default_rng(0)
    points = tuple(rng.integers(0, n, 100_000) for n in shape)
    rows = np.sort(rng.choice(shape[0], min(40, shape[0]), replace=False))
    cols = np.sort(rng.choice(shape[2], min(100, shape[2]), replace=False))
    return points, (rows, slice(10, 200, 3), cols)


def readers(lib: str, path: str) -> tuple[tuple[int, ...], Callable[..., Any], Callable[..., Any]]:
    if lib == "zarrx":
        import zarrx

        a = zarrx.open_array(path)
        return a.shape, lambda s: a.vindex[s], lambda s: a.oindex[s]
    if lib == "zarr":
        import zarr

        z = zarr.open_array(path)
        return z.shape, lambda s: z.vindex[s], lambda s: z.oindex[s]
    import tensorstore as ts

    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()
    return (tuple(t.shape), lambda s: t.vindex[s].read().result(),
            lambda s: t.oindex[s].read().result())


def main() -> None:
    lib, path = sys.argv[1], sys.argv[2]
    shape, vindex, oindex = readers(lib, path)
    points, ortho = selections(shape)
    for name, fn, sel in (("vindex", vindex, points), ("oindex", oindex, ortho)):
        fn(sel)  # warm up: codecs loaded, pages touched
        times = []
        for _ in range(5):
            start = time.perf_counter()
            result = fn(sel)
            times.append(time.perf_counter() - start)
        print(f"{lib:12s} {name}: median {statistics.median(times):.4f} s, "
              f"result {np.shape(result)}, checksum {float(np.sum(result)):.3f}")


if __name__ == "__main__":
    main()
