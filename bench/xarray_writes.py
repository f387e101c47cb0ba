"""xarray's ``to_zarr`` into a plain path (zarr-python's own LocalStore) against the same
write through zarrx's LocalStore (``zarrx.integrations.xarray.to_zarr``), and the cost of
the asyncio API's thread hop per call.

    python bench/xarray_writes.py DIR [--rounds 7] [--mib 128]

Both writes run in this one process, alternating round by round (the order swapped every
round), each timed as wall and process CPU time (all threads); medians. Every written store
is read back through xarray's own zarr engine and compared with the dataset.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import time
from pathlib import Path

import numpy as np
import xarray as xr

import zarrx
from zarrx.integrations.xarray import to_zarr


def dataset(mib: int) -> xr.Dataset:
    depth = max(1, mib * 2**20 // (2 * 4 * 512 * 512))
    rng = np.random.default_rng(0)
    field = np.cumsum(rng.standard_normal((depth, 512, 512)).astype("f4"), axis=2)
    field = np.round(field * 256) / 256  # compresses about 2x, like measured data
    return xr.Dataset({"a": (("t", "y", "x"), field), "b": (("t", "y", "x"), field[::-1])})


def timed(action: object) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    action()  # type: ignore[operator]
    return time.perf_counter() - wall, time.process_time() - cpu


def writes(root: Path, rounds: int, mib: int) -> None:
    ds = dataset(mib)
    encoding = {name: {"chunks": (8, 256, 256)} for name in ds.data_vars}
    ways = {
        "zarr-python LocalStore": lambda p: ds.to_zarr(p, mode="w", encoding=encoding,
                                                      consolidated=False),
        "zarrx LocalStore": lambda p: to_zarr(ds, zarrx.storage.LocalStore(p), mode="w",
                                              encoding=encoding, consolidated=False),
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for r in range(rounds + 1):
        order = list(ways) if r % 2 == 0 else list(ways)[::-1]
        for name in order:
            path = root / name.replace(" ", "_")
            shutil.rmtree(path, ignore_errors=True)
            t = timed(lambda: ways[name](path))  # noqa: B023 - used at once
            if r:  # the first round warms up
                times[name].append(t)
            back = xr.open_zarr(path, consolidated=False).load()
            xr.testing.assert_identical(back, ds)
    nbytes = ds.nbytes / 2**20
    print(f"to_zarr of {nbytes:.0f} MiB, {rounds} alternating rounds, medians:")
    for name, samples in times.items():
        wall = statistics.median(s[0] for s in samples)
        cpu = statistics.median(s[1] for s in samples)
        print(f"  {name:24s} wall {wall * 1e3:7.1f} ms   CPU {cpu * 1e3:7.1f} ms")


def hops(calls: int = 2000) -> None:
    a = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(64, 64), chunks=(8, 8), dtype="f8")
    a[...] = 1.0
    aa = zarrx.AsyncArray(a)

    async def run_async() -> float:
        start = time.perf_counter()
        for i in range(calls):
            await aa.getitem((i % 64, 3))
        return (time.perf_counter() - start) / calls

    start = time.perf_counter()
    for i in range(calls):
        a[i % 64, 3]
    sync = (time.perf_counter() - start) / calls
    asynchronous = asyncio.run(run_async())
    print(f"one element, {calls} calls: a[i, 3] {sync * 1e6:.0f} us, "
          f"await aa.getitem((i, 3)) {asynchronous * 1e6:.0f} us a call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--mib", type=int, default=128)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    writes(args.dir, args.rounds, args.mib)
    hops()


if __name__ == "__main__":
    main()
