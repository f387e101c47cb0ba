"""At-scale benchmark: arrays of ~1 M chunks, the peak memory of a full read, partial writes
into existing shards and 100 000 scattered points — zarrx beside zarr-python, zarr-python
with the zarrs codec pipeline and tensorstore, with floors.

It runs on ``compare.py``'s harness (imported, not copied): one worker process per library
and per workload, repeats interleaved round-robin with the order rotating, medians of wall
and CPU time, every library's result checked against zarr-python's by a CRC digest, stores
written once by zarr-python. What it adds:

- **Peak memory.** Each worker's first run happens right after set-up in a fresh process:
  the worker resets its RSS high-water mark (``/proc/self/clear_refs``), runs the operation
  once and reports ``VmHWM`` minus the RSS before the run. That is what the operation costs
  the machine — NumPy output, codec buffers, per-chunk bookkeeping, whichever library
  allocates it (Python, C++, Rust) — which ``tracemalloc`` (Python allocations only) would
  not see for tensorstore or zarrs. It is reported beside the output's size.
- **Plan time.** ``plan`` times zarrx's planner alone (no I/O) on the ~1 M-chunk arrays:
  every projection onto the read unit (chunks; inner chunks of a sharded array, which the
  engine plans per shard for a partial read (``engine/shards.py``), but which a full read
  walks in the sharding codec without planning).
- **A time budget.** zarr-python needs minutes per read of a million chunks; a library
  whose timed runs of a workload add up to more than ``--budget`` seconds is asked no
  further (it keeps at least one sample; the table says how many each has).
- **Writes are checked.** After a write workload, each library's store is read back by
  zarr-python and compared with the expected array.

Run ``python bench/scale.py --help``; ``--quick`` is a smoke test (~2 min).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import compare as h  # the harness: workers, interleaving, digests, floors' helpers
import numpy as np

LIBS = h.LIBS
EXTRA = ("plan",)
FLOORS = h.FLOORS


@dataclass(frozen=True)
class Sizes:
    tag: str
    absent: tuple[int, int]  # float32, (1, 1) chunks, almost all absent
    dense: tuple[int, int]  # uint8, (4, 4) inner chunks, all present
    dense_shards: tuple[int, int]
    big: tuple[int, int, int]  # float32, 64³ lz4 chunks / 128³ shards of 32³
    write: tuple[int, int, int]  # float32, 128³ shards of 32³ lz4 inner chunks
    inner: tuple[int, int]  # uint8, (8, 8) zstd inner chunks in (512, 512) shards
    tiny: tuple[int, int]  # uint8, (8, 8) uncompressed chunks (64 B each), all stored
    n_points: int
    repeats: int
    budget: float  # seconds of timed runs per library and workload


FULL = Sizes("full", (1000, 1000), (4096, 4096), (512, 512), (256, 256, 1024),
             (256, 256, 256), (2048, 2048), (2000, 3200), 100_000, 5, 60.0)
QUICK = Sizes("quick", (150, 150), (512, 512), (256, 256), (128, 128, 256),
              (128, 128, 128), (512, 512), (400, 400), 100_000, 3, 10.0)


@dataclass(frozen=True)
class Dataset:
    name: str
    dtype: str
    chunks: Callable[[Sizes], dict[str, Any]]  # zarr-python's layout keywords
    shape: Callable[[Sizes], tuple[int, ...]]
    codec: str  # "raw" or "lz4"


DATASETS = {d.name: d for d in (
    Dataset("absent", "float32", lambda s: {"chunks": (1, 1)}, lambda s: s.absent, "raw"),
    Dataset("dense", "uint8", lambda s: {"chunks": (4, 4), "shards": s.dense_shards},
            lambda s: s.dense, "raw"),
    Dataset("lz4", "float32", lambda s: {"chunks": (64, 64, 64)}, lambda s: s.big, "lz4"),
    Dataset("sharded", "float32", lambda s: {"chunks": (32,) * 3, "shards": (128,) * 3},
            lambda s: s.big, "lz4"),
    Dataset("write", "float32", lambda s: {"chunks": (32,) * 3, "shards": (128,) * 3},
            lambda s: s.write, "lz4"),
    Dataset("inner", "uint8", lambda s: {"chunks": (8, 8), "shards": (512, 512)},
            lambda s: s.inner, "zstd"),
    Dataset("tiny", "uint8", lambda s: {"chunks": (8, 8)}, lambda s: s.tiny, "raw"),
)}


@dataclass(frozen=True)
class Workload:
    name: str
    dataset: str
    kind: str  # "read", "points" or "write"
    what: str
    sel: Callable[[Sizes], Any]

    @property
    def million(self) -> bool:
        return self.dataset in ("absent", "dense", "tiny")


def _points(s: Sizes, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(12345)  # the same points in every worker
    return tuple(rng.integers(0, n, s.n_points) for n in shape)


FULL_SEL = (slice(None), slice(None))
STRIDED = (slice(None, None, 2), slice(None, None, 2))
WORKLOADS = {w.name: w for w in (
    Workload("million_full", "absent", "read",
             "full read, 1000² float32 in (1, 1) chunks: 1 M keys, 1 000 present",
             lambda s: FULL_SEL),
    Workload("million_strided", "absent", "read", "[::2, ::2] of the same (250 k keys)",
             lambda s: STRIDED),
    Workload("million_sharded_full", "dense", "read",
             "full read, 4096² uint8, 1 M (4, 4) inner chunks in 64 shards", lambda s: FULL_SEL),
    Workload("million_sharded_strided", "dense", "read", "[::2, ::2] of the same",
             lambda s: STRIDED),
    Workload("inner_full", "inner", "read",
             "full read, 2048² uint8, 65 536 (8, 8) zstd inner chunks in 16 shards",
             lambda s: FULL_SEL),
    Workload("inner_strided", "inner", "read", "[::2, ::2] of the same", lambda s: STRIDED),
    Workload("tiny_full", "tiny", "read",
             "full read, 2000 x 3200 uint8 in 100 000 stored (8, 8) chunks of 64 B",
             lambda s: FULL_SEL),
    Workload("full_read_memory", "lz4", "read",
             "full read, 256 MiB float32, 64³ blosc-lz4 chunks", lambda s: (slice(None),) * 3),
    Workload("write_shard_aligned", "write", "write",
             "write one 32³ inner chunk into an existing 128³ shard (32³ lz4 inner chunks)",
             lambda s: (slice(32, 64), slice(64, 96), slice(96, 128))),
    Workload("write_shard_unaligned", "write", "write",
             "write a 40³ block at (50, 50, 50) into the same (8 partial inner chunks)",
             lambda s: (slice(50, 90),) * 3),
    Workload("points_chunked", "lz4", "points",
             "100 000 random points (vindex), 64³ lz4 chunks", lambda s: _points(s, s.big)),
    Workload("points_sharded", "sharded", "points",
             "100 000 random points (vindex), 128³ shards of 32³ lz4", lambda s: _points(s, s.big)),
)}


# --------------------------------------------------------------------------------------------
# Stores (written once by zarr-python)
# --------------------------------------------------------------------------------------------
def dataset_path(root: str, sizes: Sizes, name: str) -> str:
    return os.path.join(root, sizes.tag, f"{name}.zarr")


def output_path(root: str, sizes: Sizes, workload: str, lib: str) -> str:
    return os.path.join(root, sizes.tag, "out", workload, f"{lib}.zarr")


def dataset_data(ds: Dataset, sizes: Sizes) -> np.ndarray | None:
    """The array's contents (None for the absent one: its diagonal is written alone)."""
    shape = ds.shape(sizes)
    if ds.name == "absent":
        return None
    if ds.dtype == "uint8":
        n = np.arange(int(np.prod(shape)), dtype=np.uint64)
        return ((n * np.uint64(2654435761)) >> np.uint64(24)).astype(np.uint8).reshape(shape)
    return h.make_data(shape)


def write_dataset(root: str, sizes: Sizes, ds: Dataset) -> None:
    import zarr

    path = dataset_path(root, sizes, ds.name)
    done = os.path.join(path, ".complete")
    if os.path.exists(done):
        return
    t0 = time.perf_counter()
    print(f"writing {path} with zarr-python ...", end="", flush=True, file=sys.stderr)
    shutil.rmtree(path, ignore_errors=True)
    z = zarr.create_array(path, shape=ds.shape(sizes), dtype=ds.dtype, fill_value=0,
                          overwrite=True, **ds.chunks(sizes), **h._zarr_codecs(ds.codec))
    data = dataset_data(ds, sizes)
    if data is None:
        for i in range(z.shape[0]):  # one present chunk per row: the diagonal
            z[i, i] = i + 1
    else:
        z[...] = data
    with open(done, "w") as f:
        f.write("written by zarr-python\n")
    print(f" {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def block_data(w: Workload, sizes: Sizes) -> np.ndarray:
    sel = w.sel(sizes)
    return h.make_data(tuple(s.stop - s.start for s in sel)) + np.float32(1000)


def out_nbytes(w: Workload, sizes: Sizes) -> int:
    ds = DATASETS[w.dataset]
    item = np.dtype(ds.dtype).itemsize
    if w.kind == "points":
        return sizes.n_points * item
    sel = w.sel(sizes)
    return int(np.prod(h._axis_counts(sel, ds.shape(sizes)))) * item


# --------------------------------------------------------------------------------------------
# Libraries and floors (inside the worker processes)
# --------------------------------------------------------------------------------------------
def lib_bench(lib: str, w: Workload, sizes: Sizes, root: str) -> Callable[[], Any]:
    path = dataset_path(root, sizes, w.dataset)
    sel = w.sel(sizes)
    if w.kind == "read":
        read = h.lib_reader(lib, path)
        return lambda: read(sel)
    if w.kind == "points":
        if lib in ("zarr", "zarrs"):
            z = h._import_zarr(lib).open_array(path, mode="r")
            return lambda: z.vindex[sel]
        if lib == "tensorstore":
            t = h._tensorstore_open(path, read=True).result()
            return lambda: t.vindex[sel].read().result()
        import zarrx

        a = zarrx.open_array(path, mode="r")
        return lambda: a.vindex[sel]
    out = output_path(root, sizes, w.name, lib)
    data = block_data(w, sizes)
    if lib in ("zarr", "zarrs"):
        z = h._import_zarr(lib).open_array(out, mode="r+")

        def write_z() -> None:
            z[sel] = data

        return write_z
    if lib == "tensorstore":
        t = h._tensorstore_open(out, write=True).result()
        return lambda: t[sel].write(data).result()
    import zarrx

    a = zarrx.open_array(out, mode="r+")

    def write_x() -> None:
        a[sel] = data

    return write_x


def plan_bench(w: Workload, sizes: Sizes, root: str) -> Callable[[], int]:
    """zarrx's planner alone: the selection projected onto every (inner) chunk."""
    if not w.million:
        raise h.Unavailable("plan is timed on the million-chunk arrays only")
    import zarrx
    from zarrx.chunk_grids.regular import RegularChunkGrid
    from zarrx.runtime.plan import plan

    a = zarrx.open_array(dataset_path(root, sizes, w.dataset), mode="r")
    sel = w.sel(sizes)
    grid = RegularChunkGrid(a.chunks)  # read unit: (inner) chunks

    def count() -> int:
        layout = a._layout(a.lazy[sel].transform)
        return sum(1 for _ in plan(grid, a.shape, layout))

    return count


def _touched_chunks(w: Workload, sizes: Sizes, chunk: Sequence[int]) -> list[tuple[int, ...]]:
    sel = w.sel(sizes)
    if w.kind == "points":
        rows = np.unique(np.stack(sel, axis=1) // np.array(chunk), axis=0)
        return [tuple(int(i) for i in r) for r in rows]
    return h._touched(sel, DATASETS[w.dataset].shape(sizes), chunk)


def floor_bench(floor: str, w: Workload, sizes: Sizes, root: str,
                pool: ThreadPoolExecutor) -> Callable[[], Any]:
    """``memcpy``: copy an array of the output's size. ``codec``: decode the touched chunks
    (writes: decode the partial ones, encode all). ``io``: read the touched chunks' bytes
    (absent chunks: look their keys up; a shard read whole when all of it is needed;
    writes: read the shard and write it back whole, as a shard-rewriting writer must)."""
    ds = DATASETS[w.dataset]
    dtype = np.dtype(ds.dtype)
    if floor == "memcpy":
        n = out_nbytes(w, sizes) // dtype.itemsize
        dst, src = np.empty(n, dtype), np.ones(n, dtype)
        return lambda: np.copyto(dst, src)
    path = dataset_path(root, sizes, ds.name)
    layout = ds.chunks(sizes)
    inner = layout["chunks"]
    index = (h.ShardIndex(path, SimpleNamespace(shards=layout["shards"], inner=inner))
             if "shards" in layout else None)
    touched = _touched_chunks(w, sizes, inner)
    pieces = [index.piece(c) if index else h.Piece(h._chunk_file(path, c)) for c in touched]
    if floor == "codec":
        if ds.codec == "raw":
            raise h.Unavailable("nothing to decode")
        decode, encode = h._codec_functions(ds.codec, int(np.prod(inner)) * dtype.itemsize)
        blobs = [h._read_piece(p) for p in pieces]
        if w.kind != "write":
            return lambda: h._map(pool, decode, blobs)
        chunk = np.ones(inner, dtype)
        partial = [c for c in touched if any(
            s.start > i * n or s.stop < (i + 1) * n for s, i, n in zip(w.sel(sizes), c, inner))]
        return lambda: (h._map(pool, decode, blobs[:len(partial)]),
                        h._map(pool, encode, [chunk] * len(touched)))
    if w.kind == "write":
        assert index is not None
        shards = sorted({index.shard_of(c)[0] for c in touched})
        src = [h._chunk_file(path, s) for s in shards]
        scratch = output_path(root, sizes, w.name, "io")
        os.makedirs(scratch, exist_ok=True)

        def rewrite(i: int) -> None:
            with open(src[i], "rb") as f:
                blob = f.read()
            with open(os.path.join(scratch, str(i)), "wb") as f:
                f.write(blob)

        return lambda: h._map(pool, rewrite, list(range(len(src))))
    if ds.name == "absent":
        keys = [p.path for p in pieces]
        batches = [keys[i::h.NCORES] for i in range(h.NCORES)]
        return lambda: h._map(pool, lambda b: sum(map(os.path.exists, b)), batches)
    if index is None:
        return lambda: h._map(pool, h._read_piece, pieces)
    return lambda: h._read_sharded(index, touched, pool, lambda raw, _: raw)


def setup(lib: str, w: Workload, sizes: Sizes, root: str,
          pool: ThreadPoolExecutor) -> tuple[Callable[[], Any], int]:
    if lib in FLOORS:
        return floor_bench(lib, w, sizes, root, pool), 1
    if lib == "plan":
        return plan_bench(w, sizes, root), 1
    return lib_bench(lib, w, sizes, root), 1


def worker(lib: str, name: str, sizes: Sizes, root: str, warmup: int) -> None:
    w = WORKLOADS[name]
    h.serve(lib, lambda pool: setup(lib, w, sizes, root, pool), warmup=warmup,
            rewarm=w.name == "full_read_memory" and lib != "memcpy",
            check=w.kind != "write" and lib in LIBS)


# --------------------------------------------------------------------------------------------
# Parent process
# --------------------------------------------------------------------------------------------
def check_writes(w: Workload, sizes: Sizes, root: str, libs: Sequence[str]) -> dict[str, str]:
    """Each library's written store, read back by zarr-python, against the expected array."""
    import zarr

    expected = dataset_data(DATASETS[w.dataset], sizes)
    assert expected is not None
    expected[w.sel(sizes)] = block_data(w, sizes)
    crc = zlib.crc32(expected.view(np.uint8).reshape(-1))
    verdicts = {}
    for lib in libs:
        got = zarr.open_array(output_path(root, sizes, w.name, lib), mode="r")[...]
        verdicts[lib] = "ok" if zlib.crc32(got.view(np.uint8).reshape(-1)) == crc else "MISMATCH"
    return verdicts


def run(w: Workload, libs: Sequence[str], args: argparse.Namespace, sizes: Sizes,
        root: str) -> dict[str, Any]:
    if w.kind == "write":
        base = dataset_path(root, sizes, w.dataset)
        for lib in libs:
            if lib in LIBS:
                out = output_path(root, sizes, w.name, lib)
                shutil.rmtree(out, ignore_errors=True)
                shutil.copytree(base, out)
    # The first run is each worker's warm-up and memory measurement; on the million-chunk
    # arrays (minutes per read for zarr-python) it is the only untimed one.
    wargs = argparse.Namespace(**{**vars(args), "warmup": 1 if w.million else args.warmup})
    workers = h.start_workers(libs, w.name, wargs, root, script=__file__)
    times, cpu = h.interleave(workers, args.repeats or sizes.repeats, w.name,
                              budget=args.budget or sizes.budget)
    res = h.summarize(workers, times, cpu, w.name)
    res["out_nbytes"] = out_nbytes(w, sizes)
    if w.kind == "write":
        res["written"] = check_writes(w, sizes, root, [lib for lib in res["median"]
                                                       if lib in LIBS])
    return res


def fmt_mib(n: float | None) -> str:
    return "—" if n is None else f"{n / 2**20:.1f} MiB"


def memory_table(results: dict[str, dict[str, Any]], libs: Sequence[str]) -> str:
    """Output size, zarrx's plan time, each library's peak RSS (x the output) and samples."""
    shown = [lib for lib in LIBS if lib in libs]
    head = ["workload", "output", "zarrx plan", *[f"peak: {lib}" for lib in shown],
            f"samples ({' / '.join(shown)})"]
    rows = [head]
    for name, res in results.items():
        out = res["out_nbytes"]
        cells = [name, fmt_mib(out), h.fmt_time(res["median"].get("plan"))]
        for lib in shown:
            peak = res["peak"].get(lib)
            cells.append("—" if peak is None else f"{fmt_mib(peak)} ({peak / out:.2f}x)")
        cells.append(" / ".join(str(len(res["times"].get(lib, []))) for lib in shown))
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["| " + " | ".join(c.ljust(wd) if i == 0 else c.rjust(wd)
                               for i, (c, wd) in enumerate(zip(r, widths))) + " |"
             for r in rows]
    lines.insert(1, "| " + " | ".join(["-" * widths[0]] + ["-" * (wd - 1) + ":"
                                                            for wd in widths[1:]]) + " |")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="workloads:\n" + "\n".join(
                                    f"  {w.name:<24} {w.what}" for w in WORKLOADS.values()))
    p.add_argument("--quick", action="store_true", help="small arrays (smoke test, ~2 min)")
    p.add_argument("--repeats", type=int, help="timed rounds per workload (default 5; quick 3)")
    p.add_argument("--budget", type=float,
                   help="seconds of timed runs per library and workload (default 60; quick 10)")
    p.add_argument("--warmup", type=int, default=2,
                   help="untimed runs per worker (default 2; always 1 on the million arrays)")
    p.add_argument("--workloads", help="comma-separated subset of the workloads")
    p.add_argument("--libs", help=f"comma-separated subset of {', '.join(LIBS + EXTRA + FLOORS)}")
    p.add_argument("--dir", help="where the stores go (kept and reused); default: a temp dir")
    p.add_argument("--json", help="write every sample, the medians and the peaks to this file")
    p.add_argument("-v", "--verbose", action="store_true", help="show the workers' stderr")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--workload", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.worker:
        worker(args.worker, args.workload, sizes, args.dir, max(1, args.warmup))
        return
    workloads = h._subset(args.workloads, list(WORKLOADS), "workloads")
    libs = h._subset(args.libs, LIBS + EXTRA + FLOORS, "libraries")
    info = h.machine()
    print(f"# {info['cpu']}, nproc {info['nproc']}, Python {info['python']}, "
          f"numpy {info['numpy']}; load average {os.getloadavg()[0]:.1f}")
    print(f"# sizes {sizes.tag}: times are medians of interleaved runs (at most "
          f"{args.repeats or sizes.repeats}, budget {args.budget or sizes.budget:.0f} s per "
          f"library and workload); peak = RSS high-water mark of the first run above the "
          f"set-up state, in a fresh worker")
    started = time.perf_counter()
    results: dict[str, dict[str, Any]] = {}
    with h.data_root(args.dir) as root:
        for name in workloads:
            w = WORKLOADS[name]
            write_dataset(root, sizes, DATASETS[w.dataset])
            t0 = time.perf_counter()
            print(f"{name:<24} {w.what} ...", end="", flush=True, file=sys.stderr)
            results[name] = run(w, libs, args, sizes, root)
            print(f" {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    versions: dict[str, str] = {}
    for res in results.values():
        versions.update(res["versions"])
    print("\nWall time (median):\n")
    print(h.table(results, libs))
    print("\nCPU time, all threads of the worker (median):\n")
    print(h.table(results, libs, key="cpu_median"))
    print("\nPlan time and peak memory (first run in a fresh worker; x the output's size; "
          "samples = timed runs per library):\n")
    print(memory_table(results, libs))
    print()
    for name in workloads:
        print(f"- {name}: {WORKLOADS[name].what}")
    print("\nversions: " + "; ".join(sorted({v for lib, v in versions.items() if lib in LIBS})))
    for name, res in results.items():
        if res["mismatch"]:
            print(f"check: {name}: DIFFERENT DATA from {', '.join(res['mismatch'])}")
        for lib, verdict in res.get("written", {}).items():
            if verdict != "ok":
                print(f"check: {name}: {lib}'s store read back by zarr-python: {verdict}")
    checked = sum(len(r["digests"]) for r in results.values())
    print(f"check: {checked} reads digest-checked against zarr-python, "
          f"{sum(len(r.get('written', {})) for r in results.values())} written stores "
          f"read back by zarr-python")
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump({"machine": info, "sizes": sizes.tag, "versions": versions,
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
