"""Rechunking benchmark: ``zarrx.rechunk`` against dask and rechunker, time and peak memory.

Usage::

    python bench/rechunk.py --dir /scratch/rechunk                 # 256 MiB, 3 repeats
    python bench/rechunk.py --dir /scratch/rechunk --size 1GiB --repeats 1
    python bench/rechunk.py --quick                                # 64 MiB smoke test
    python bench/rechunk.py --libs zarrx,dask --crossings transposed --max-mem 128MiB \\
        --json rechunk.json

The source arrays (float32, the data of ``bench/compare.py``; 256 MiB ``(256, 256, 1024)``
or 1 GiB ``(512, 512, 1024)``) are written once by zarr-python 3 as Zarr v2 with blosc-lz4
and kept in ``--dir``. Three crossings:

- ``aligned``: v2 chunks (64, 256, 256) → v2 chunks (128, 128, 128) (each axis a multiple or a
  divisor), blosc-lz4 on both sides;
- ``transposed``: v2 chunks (1, Y, X) — whole planes — → v2 chunks (Z, 16, 16) — whole
  columns — blosc-lz4: every target chunk takes a piece of every source chunk. 16 x 16
  columns keep the target at 1024 chunks of 256 KiB (2048 of 512 KiB for 1 GiB) so the peers
  finish in minutes;
- ``v2-sharded``: the aligned source → v3 shards (128, 256, 256) of (64, 64, 64) chunks, zstd
  level 3. rechunker (zarr-python 2) cannot write v3: it writes v2 (64, 64, 64) chunks with
  zstd 3 instead (the table says so).

Each library runs in a child process of its own for each crossing and repeat (a fresh
process each time; the order of the libraries rotates between repeats):

- ``zarrx``: ``zarrx.rechunk(source, target, chunks=..., shards=..., compressors=...,
  zarr_format=..., max_mem=MAX_MEM)``;
- ``dask`` (with zarr-python 3, in this environment): ``da.from_zarr(source).rechunk(chunks,
  block_size_limit=MAX_MEM).to_zarr(target)`` into an array created by zarr-python with the
  target's codecs; for the sharded crossing the rechunk is to the shard shape and
  ``da.store(..., lock=False)`` writes whole shards. dask's threaded scheduler (its default;
  one thread per core);
- ``rechunker`` (with zarr-python 2.18, in ``.venv-rechunker`` built on first use from
  ``tests/interop/locks/rechunker.txt``): ``rechunker.rechunk(source, chunks, MAX_MEM,
  target, temp_store=..., target_options=..., temp_options=...).execute()`` on dask's
  threaded scheduler.

Each child opens the source, resets its RSS high-water mark (``/proc/self/clear_refs``),
times the rechunk (opening the source, planning, writing the target), reads the peak RSS
(``VmHWM``) and its CPU time, and only then checks its result: it reads the target back slab
by slab with its own library and reports a CRC-32 of the whole array and the chunk (and
shard) shape it found; the parent compares both with the source's and reads every target
once more with zarr-python 3. Reported: wall time (median over repeats), its ratio to zarrx,
peak RSS of the child during the rechunk, the part above the RSS it had before starting
(after its imports), that part over ``--max-mem``, and the plan each library chose (zarrx:
direct or through an intermediate array, and its slabs, from its progress callback;
rechunker: its read / intermediate / write chunks). The same ``--max-mem`` means different
things: zarrx bounds the whole copy by it; rechunker sizes each task's chunks by it (two
threads run tasks at once); for dask it is only ``block_size_limit``, the largest block the
rechunk graph makes. A whole-process figure (``/usr/bin/time -v``) is higher for runs whose
check reads a large slab back. Timing on a shared 2-core VM is noisy: compare ratios from
one run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
import traceback
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

# bench/compare.py's helpers (its imports are the standard library and NumPy, which every
# environment here has, the peers' included)
from compare import _reset_peak_rss, _status_kib, _subset, data_root, machine, make_data

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LIBS = ("zarrx", "dask", "rechunker")
NCORES = os.cpu_count() or 1
SIZES: dict[str, tuple[int, int, int]] = {
    "quick": (128, 256, 512),  # 64 MiB
    "256MiB": (256, 256, 1024),  # bench/compare.py's array
    "1GiB": (512, 512, 1024),
}
LZ4 = "lz4"
ZSTD = "zstd"


# --------------------------------------------------------------------------------------------
# What is measured
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    name: str
    chunks: Callable[[tuple[int, ...]], tuple[int, ...]]


@dataclass(frozen=True)
class Crossing:
    name: str
    what: str
    source: str
    chunks: Callable[[tuple[int, ...]], tuple[int, ...]]
    shards: Callable[[tuple[int, ...]], tuple[int, ...]] | None
    codec: str  # LZ4 (blosc) or ZSTD
    zarr_format: int


def _fit(shape: Sequence[int], chunks: Sequence[int]) -> tuple[int, ...]:
    return tuple(min(n, c) for n, c in zip(shape, chunks))


SOURCES = {
    s.name: s
    for s in (
        Source("blocks", lambda shape: _fit(shape, (64, 256, 256))),
        Source("planes", lambda shape: (1, *shape[1:])),
    )
}

CROSSINGS = {
    c.name: c
    for c in (
        Crossing("aligned", "v2 (64,256,256) -> v2 (128,128,128), blosc-lz4", "blocks",
                 lambda shape: _fit(shape, (128, 128, 128)), None, LZ4, 2),
        Crossing("transposed", "v2 (1,Y,X) planes -> v2 (Z,16,16) columns, blosc-lz4", "planes",
                 lambda shape: (shape[0], 16, 16), None, LZ4, 2),
        Crossing("v2-sharded",
                 "v2 (64,256,256) blosc-lz4 -> v3 shards (128,256,256) of (64,64,64), zstd 3",
                 "blocks", lambda shape: _fit(shape, (64, 64, 64)),
                 lambda shape: _fit(shape, (128, 256, 256)), ZSTD, 3),
    )
}


def parse_size(text: str) -> int:
    """``256MiB``, ``1GiB``, ``500MB``, ``1e9`` → bytes."""
    units = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9,
             "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
    m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in units:
        raise argparse.ArgumentTypeError(f"not a memory size: {text!r} (e.g. 256MiB)")
    return int(float(m.group(1)) * units[m.group(2).lower()])


def mib(n: float | None) -> str:
    return "-" if n is None else f"{n / 2**20:.0f}"


# --------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------
def source_path(root: str, size: str, source: str) -> str:
    return os.path.join(root, size, f"source-{source}.zarr")


def target_path(root: str, size: str, crossing: str, lib: str) -> str:
    return os.path.join(root, size, "out", crossing, f"{lib}.zarr")


def temp_path(root: str, size: str, crossing: str, lib: str) -> str:
    return os.path.join(root, size, "out", crossing, f"{lib}-temp.zarr")


# --------------------------------------------------------------------------------------------
# The children: one rechunk each
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    src: str
    dst: str
    tmp: str
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    shards: tuple[int, ...] | None
    codec: str
    zarr_format: int
    max_mem: int


def _zarrx_codec(codec: str) -> dict[str, Any]:
    if codec == LZ4:
        return {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                   "shuffle": "shuffle", "typesize": 4,
                                                   "blocksize": 0}}
    return {"name": "zstd", "configuration": {"level": 3, "checksum": False}}


def _numcodecs_codec(codec: str) -> Any:
    import numcodecs

    if codec == LZ4:
        return numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    return numcodecs.Zstd(level=3)


def run_zarrx(job: Job) -> str:
    import zarrx
    from zarrx.rechunking import RechunkProgress, rechunk  # zarrx.rechunk

    stages: dict[str, int] = {}

    def seen(p: RechunkProgress) -> None:  # (called once a slab: costs nothing to speak of)
        stages[p.stage] = p.total

    source = zarrx.open_array(job.src, mode="r")
    rechunk(source, job.dst, chunks=job.chunks, shards=job.shards,
            compressors=_zarrx_codec(job.codec), zarr_format=job.zarr_format,
            max_mem=job.max_mem, progress=seen)
    two = "intermediate" in stages
    return f"{'two stages (an intermediate array)' if two else 'direct'}, " \
        f"{max(stages.values(), default=0)} slabs"


def run_dask(job: Job) -> str:
    import dask
    import dask.array as da
    import zarr
    import zarr.codecs

    source = zarr.open_array(job.src, mode="r")
    x = da.from_zarr(source)
    compressors = (_numcodecs_codec(job.codec) if job.zarr_format == 2
                   else zarr.codecs.ZstdCodec(level=3))
    target = zarr.create_array(job.dst, shape=job.shape, dtype=x.dtype, chunks=job.chunks,
                               shards=job.shards, compressors=compressors, fill_value=0,
                               zarr_format=job.zarr_format,  # type: ignore[arg-type]
                               overwrite=True)
    with dask.config.set(scheduler="threads"):
        if job.shards is None:
            x.rechunk(job.chunks, block_size_limit=job.max_mem).to_zarr(target)
        else:  # whole shards per task: tasks writing parts of one shard would race
            da.store(x.rechunk(job.shards, block_size_limit=job.max_mem), target,  # type: ignore[arg-type]
                     lock=False)
    return f"threaded scheduler, {NCORES} threads"


def run_rechunker(job: Job) -> str:
    import dask
    import zarr
    from rechunker import rechunk  # type: ignore[import-not-found]
    from rechunker.algorithm import rechunking_plan  # type: ignore[import-not-found]

    source = zarr.open_array(job.src, mode="r")
    plan = rechunk(source, job.chunks, job.max_mem, job.dst, temp_store=job.tmp,
                   target_options={"compressor": _numcodecs_codec(job.codec)},
                   temp_options={"compressor": _numcodecs_codec(LZ4)})
    with dask.config.set(scheduler="threads"):
        plan.execute()
    read, between, write = rechunking_plan(job.shape, source.chunks, job.chunks,
                                           source.dtype.itemsize, job.max_mem)
    return f"read {read}, intermediate {between}, write {write}"


RUNNERS: dict[str, Callable[[Job], str]] = {
    "zarrx": run_zarrx, "dask": run_dask, "rechunker": run_rechunker}


def call_text(lib: str, job: Job) -> str:
    """The library call a child makes, for the report."""
    m = mib(job.max_mem) + "MiB"
    if lib == "zarrx":
        shards = f", shards={job.shards}" if job.shards else ""
        return (f"zarrx.rechunk(zarrx.open_array(SRC), DST, chunks={job.chunks}{shards}, "
                f"compressors={_zarrx_codec(job.codec)['name']}, zarr_format={job.zarr_format}, "
                f"max_mem={m})")
    if lib == "dask":
        if job.shards:
            return (f"da.store(da.from_zarr(zarr.open_array(SRC)).rechunk({job.shards}, "
                    f"block_size_limit={m}), zarr.create_array(DST, chunks={job.chunks}, "
                    f"shards={job.shards}, compressors=zstd(3)), lock=False)")
        return (f"da.from_zarr(zarr.open_array(SRC)).rechunk({job.chunks}, block_size_limit={m})"
                f".to_zarr(zarr.create_array(DST, chunks={job.chunks}, zarr_format=2, "
                f"compressors=blosc-lz4))")
    codec = "Blosc(lz4)" if job.codec == LZ4 else "Zstd(3)"
    return (f"rechunker.rechunk(zarr.open_array(SRC), {job.chunks}, {m}, DST, temp_store=TMP, "
            f"target_options={{'compressor': {codec}}}).execute()  # zarr 2: writes v2")


def _versions(lib: str) -> dict[str, str]:
    import importlib.metadata as md

    names = {"zarrx": ("zarrx", "numpy"), "dask": ("dask", "zarr", "numcodecs", "numpy"),
             "rechunker": ("rechunker", "dask", "zarr", "numcodecs", "numpy")}[lib]
    out = {}
    for name in names:
        with contextlib.suppress(md.PackageNotFoundError):
            out[name] = md.version(name)
    out["python"] = platform.python_version()
    return out


def read_back(lib: str, path: str) -> tuple[Any, Callable[[slice], np.ndarray]]:
    """The target as its writer's library opens it, and a reader of slabs along axis 0."""
    if lib == "zarrx":
        import zarrx

        a: Any = zarrx.open_array(path, mode="r")
    else:
        import zarr

        a = zarr.open_array(path, mode="r")
    return a, lambda s: np.ascontiguousarray(a[s])


def crc_of(reader: Callable[[slice], np.ndarray], shape: Sequence[int], step: int) -> int:
    crc = 0
    for start in range(0, shape[0], step):
        crc = zlib.crc32(reader(slice(start, start + step)).data, crc)
    return crc


def _layout(lib: str, a: Any) -> tuple[list[int], list[int] | None]:
    shards = getattr(a, "shards", None)
    return list(a.chunks), list(shards) if shards else None


def worker(lib: str, job: Job) -> None:
    """Run one rechunk and print one JSON line: wall and CPU seconds, peak RSS, the check."""
    proto: IO[str] = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # libraries printing to stdout must not corrupt the protocol

    def send(**msg: Any) -> None:
        proto.write(json.dumps(msg) + "\n")

    try:
        run = RUNNERS[lib]
        for path in (job.dst, job.tmp):
            shutil.rmtree(path, ignore_errors=True)
        if lib == "zarrx":
            import zarrx  # noqa: F401
        else:
            import dask.array  # noqa: F401
            import zarr  # noqa: F401
            if lib == "rechunker":
                import rechunker  # noqa: F401
        base = _status_kib("VmRSS") if _reset_peak_rss() else None
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        plan = run(job)
        elapsed = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        hwm = _status_kib("VmHWM") if base is not None else None
        peak = hwm * 1024 if hwm is not None else r1.ru_maxrss * 1024
        cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        # the check, outside the timed part
        array, reader = read_back(lib, job.dst)
        chunks, shards = _layout(lib, array)
        crc = crc_of(reader, job.shape, chunks[0] if shards is None else shards[0])
        send(t=elapsed, cpu=cpu, plan=plan, peak=peak,
             base=base * 1024 if base is not None else None, crc=crc, chunks=chunks,
             shards=shards, shape=list(array.shape), versions=_versions(lib))
    except Exception:
        send(error=traceback.format_exc())
    finally:
        shutil.rmtree(job.tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# The parent
# --------------------------------------------------------------------------------------------
def make_source(root: str, size: str, source: Source) -> int:
    """Write the source once (zarr-python 3, v2, blosc-lz4); its CRC-32, kept beside it."""
    path = source_path(root, size, source.name)
    done = os.path.join(path, ".complete")
    if os.path.exists(done):
        with open(done) as f:
            return int(json.load(f)["crc32"])
    import zarr

    shape = SIZES[size]
    print(f"# writing {path} ...", file=sys.stderr, flush=True)
    data = make_data(shape)
    z = zarr.create_array(path, shape=shape, dtype="float32", chunks=source.chunks(shape),
                          compressors=_numcodecs_codec(LZ4), fill_value=0, zarr_format=2,
                          overwrite=True)
    z[...] = data
    crc = zlib.crc32(data.data)
    with open(done, "w") as f:
        json.dump({"crc32": crc}, f)
    return crc


def rechunker_python() -> str:
    """The interpreter of ``.venv-rechunker`` (built on first use); raises RuntimeError with
    the reason when this machine has no Python it runs on."""
    sys.path.insert(0, ROOT)
    from tests.interop import peer_envs

    env = peer_envs.RECHUNKER
    configured = os.environ.get(env.variable)
    if configured:
        return configured
    base = peer_envs.find_python(env)
    if base is None:
        raise RuntimeError(f"rechunker {env.version} needs {env.describe()}: none found "
                           f"(set {env.variable})")
    print(f"# building or checking {env.venv.name} from {env.lock.name} ...", file=sys.stderr,
          flush=True)
    return str(peer_envs.build(env, base))


def job_for(crossing: Crossing, lib: str, root: str, size: str, max_mem: int) -> Job:
    shape = SIZES[size]
    chunks, shards = crossing.chunks(shape), crossing.shards and crossing.shards(shape)
    zarr_format = crossing.zarr_format
    if lib == "rechunker" and shards:  # zarr-python 2 writes v2: the inner chunks, unsharded
        shards, zarr_format = None, 2
    return Job(source_path(root, size, crossing.source),
               target_path(root, size, crossing.name, lib),
               temp_path(root, size, crossing.name, lib), shape, chunks, shards, crossing.codec,
               zarr_format, max_mem)


def child_command(lib: str, python: str, job: Job, crossing: str, args: argparse.Namespace,
                  root: str) -> list[str]:
    return [python, os.path.abspath(__file__), "--worker", lib, "--crossing", crossing,
            "--size", args.size, "--dir", root, "--max-mem", str(job.max_mem)]


def run_child(cmd: list[str], timeout: float, verbose: bool) -> dict[str, Any]:
    environ = {**os.environ, "PYTHONWARNINGS": "ignore"}
    environ.pop("PYTHONPATH", None)  # the peers' environments never see zarrx's
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=environ,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if verbose and proc.stderr:
        sys.stderr.write(proc.stderr)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        return {"error": f"exit status {proc.returncode}: {tail}"}
    return dict(json.loads(lines[-1]))


def check_with_zarr(path: str, shape: Sequence[int], step: int) -> int:
    import zarr

    a = zarr.open_array(path, mode="r")
    return crc_of(lambda s: np.ascontiguousarray(a[s]), shape, step)


def summarize(runs: list[dict[str, Any]], max_mem: int) -> dict[str, Any]:
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {"error": runs[-1]["error"] if runs else "not run", "runs": runs}
    peak = max(r["peak"] for r in ok)
    bases = [r["base"] for r in ok if r.get("base") is not None]
    above = max(r["peak"] - r["base"] for r in ok) if len(bases) == len(ok) else None
    return {"median": statistics.median(r["t"] for r in ok),
            "cpu_median": statistics.median(r["cpu"] for r in ok),
            "times": [r["t"] for r in ok], "peak": peak, "above_start": above,
            "over_max_mem": above / max_mem if above is not None else None,
            "errors": [r["error"] for r in runs if "error" in r], "runs": runs}


def table(results: dict[str, dict[str, dict[str, Any]]], libs: Sequence[str],
          notes: dict[str, str], max_mem: int) -> str:
    head = (f"{'crossing':<12} {'library':<10} {'time s':>8} {'x zarrx':>8} {'cpu s':>7} "
            f"{'peak MiB':>9} {'+start MiB':>10} {'/max_mem':>8}  check")
    lines = [head, "-" * len(head)]
    for name, per_lib in results.items():
        base = per_lib.get("zarrx", {}).get("median")
        for lib in libs:
            r = per_lib.get(lib)
            if r is None:
                continue
            if "error" in r:
                first = r["error"].strip().splitlines()[-1][:70]
                lines.append(f"{name:<12} {lib:<10} FAILED: {first}")
                continue
            ratio = f"{r['median'] / base:.2f}" if base else "-"
            over = r["over_max_mem"]
            flag = "-" if over is None else f"{over:.2f}" + (" OVER" if over > 1 else "")
            note = notes.get(f"{name}/{lib}", "")
            lines.append(
                f"{name:<12} {lib:<10} {r['median']:8.2f} {ratio:>8} {r['cpu_median']:7.1f} "
                f"{mib(r['peak']):>9} {mib(r['above_start']):>10} {flag:>8}  "
                f"{r.get('check', '')}{note}")
    lines.append(f"(max_mem {mib(max_mem)} MiB; '+start' is the peak RSS above the child's RSS "
                 "just before the rechunk, '/max_mem' that over max_mem)")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    doc = __doc__ or ""
    p = argparse.ArgumentParser(
        description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="crossings:\n" + "\n".join(f"  {c.name:<11} {c.what}" for c in CROSSINGS.values()))
    p.add_argument("--size", choices=list(SIZES), default="256MiB",
                   help="the array: 256MiB (default, compare.py's), 1GiB, or quick (64 MiB)")
    p.add_argument("--quick", action="store_true", help="--size quick --repeats 1")
    p.add_argument("--repeats", type=int, help="child processes per library and crossing (3)")
    p.add_argument("--libs", help=f"comma-separated subset of {', '.join(LIBS)}")
    p.add_argument("--crossings", help=f"comma-separated subset of {', '.join(CROSSINGS)}")
    p.add_argument("--max-mem", type=parse_size, default=parse_size("256MiB"),
                   help="the memory budget given to every library (default 256MiB)")
    p.add_argument("--dir", help="where the sources (kept, reused) and the targets go; "
                   "default: a temporary directory")
    p.add_argument("--json", help="write every run, the medians and the commands to this file")
    p.add_argument("--timeout", type=float, default=1800,
                   help="seconds before a child is stopped (default 1800)")
    p.add_argument("-v", "--verbose", action="store_true", help="show the children's stderr")
    p.add_argument("--worker", choices=LIBS, help=argparse.SUPPRESS)
    p.add_argument("--crossing", choices=list(CROSSINGS), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.size = "quick"
        args.repeats = args.repeats or 1
    args.repeats = args.repeats or 3
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker:
        if not (args.dir and args.crossing):
            raise SystemExit("--worker needs --crossing and --dir")
        worker(args.worker, job_for(CROSSINGS[args.crossing], args.worker, args.dir, args.size,
                                    args.max_mem))
        return
    libs = _subset(args.libs, LIBS, "libraries")
    crossings = _subset(args.crossings, list(CROSSINGS), "crossings")
    shape = SIZES[args.size]
    info = machine()
    print(f"# {info['cpu']}, nproc {info['nproc']}, Python {info['python']}, "
          f"numpy {info['numpy']}")
    load = os.getloadavg()[0]
    if load > NCORES / 2:
        print(f"# WARNING: load average {load:.1f} on {NCORES} cores: timings will be noisy")
    print(f"# array {shape} float32 ({np.prod(shape) * 4 / 2**20:.0f} MiB), max_mem "
          f"{mib(args.max_mem)} MiB, {args.repeats} repeat(s), one child process per run")
    pythons = dict.fromkeys(libs, sys.executable)
    unavailable: dict[str, str] = {}
    if "rechunker" in libs:
        try:
            pythons["rechunker"] = rechunker_python()
        except (RuntimeError, subprocess.CalledProcessError) as e:
            unavailable["rechunker"] = str(e)
            libs.remove("rechunker")
    started = time.perf_counter()
    results: dict[str, dict[str, dict[str, Any]]] = {}
    commands: dict[str, dict[str, str]] = {}
    notes: dict[str, str] = {}
    versions: dict[str, dict[str, str]] = {}
    with data_root(args.dir) as root:
        for name in crossings:
            crossing = CROSSINGS[name]
            expected = make_source(root, args.size, SOURCES[crossing.source])
            runs: dict[str, list[dict[str, Any]]] = {lib: [] for lib in libs}
            print(f"{name:<11} {crossing.what} ...", end="", flush=True, file=sys.stderr)
            t0 = time.perf_counter()
            for r in range(args.repeats):
                for lib in libs[r % len(libs):] + libs[:r % len(libs)]:
                    job = job_for(crossing, lib, root, args.size, args.max_mem)
                    cmd = child_command(lib, pythons[lib], job, name, args, root)
                    commands[f"{name}/{lib}"] = {"shell": shlex.join(cmd),
                                                 "call": call_text(lib, job)}
                    runs[lib].append(run_child(cmd, args.timeout, args.verbose))
            results[name] = {}
            for lib in libs:
                job = job_for(crossing, lib, root, args.size, args.max_mem)
                summary = summarize(runs[lib], args.max_mem)
                if "error" not in summary:
                    last = [x for x in runs[lib] if "error" not in x][-1]
                    versions[lib] = last["versions"]
                    want = (list(job.chunks), list(job.shards) if job.shards else None)
                    problems = []
                    if any(x["crc"] != expected for x in runs[lib] if "error" not in x):
                        problems.append("DATA DIFFERS")
                    if (last["chunks"], last["shards"]) != want:
                        problems.append(f"LAYOUT {last['chunks']}/{last['shards']} != {want}")
                    step = (job.shards or job.chunks)[0]
                    if check_with_zarr(job.dst, shape, step) != expected:
                        problems.append("ZARR-PYTHON 3 READS OTHER DATA")
                    summary["check"] = "; ".join(problems) or "ok"
                    summary["plan"] = last["plan"]
                    shutil.rmtree(job.dst, ignore_errors=True)
                if lib == "rechunker" and crossing.shards:
                    notes[f"{name}/{lib}"] = (f" (writes v2 {job.chunks} chunks: zarr 2 "
                                              "has no v3)")
                results[name][lib] = summary
            print(f" {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print("\nWall time (median), CPU time (median, all threads), peak RSS of the child "
          "(max over repeats):\n")
    print(table(results, libs, notes, args.max_mem))
    print()
    for name in crossings:
        print(f"- {name}: {CROSSINGS[name].what}")
    for lib, why in unavailable.items():
        print(f"- {lib}: not run: {why}")
    print("\nplans (as each library reports or computes them):")
    for name, per_lib in results.items():
        for lib, summary in per_lib.items():
            if "plan" in summary:
                print(f"  {name}/{lib}: {summary['plan']}")
    print("\nversions:")
    for lib, v in versions.items():
        print(f"  {lib}: " + ", ".join(f"{k} {x}" for k, x in v.items()))
    print("\ncommands (one child per run; SRC, DST, TMP under --dir):")
    for key, command in commands.items():
        print(f"  {key}: {command['call']}\n    $ {command['shell']}")
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "size": args.size, "shape": shape,
                       "max_mem": args.max_mem, "repeats": args.repeats, "versions": versions,
                       "commands": commands, "unavailable": unavailable,
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
