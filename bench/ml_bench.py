"""Machine-learning data types, side by side with tensorstore: a full read and a full write of
a 256 MiB bfloat16 array (512³, 64³ chunks), uncompressed and zstd.

Built like ``compare.py`` (whose helpers it uses): the stores are written once by tensorstore
(zarr-python 3.1.6 has no bfloat16); zarrx must read them bit for bit, every library's read
must equal the data, and tensorstore must read back what zarrx wrote. Each library runs in
its own worker process, kept alive for a workload; rounds are interleaved (the order rotates)
and every timed run follows an untimed one in the same worker (warm memory). Medians of wall
time and of CPU time (all threads of the worker) are reported, with zarrx / tensorstore.

    python bench/ml_bench.py [--repeats 7] [--dir DIR] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import _tensorstore_open, fmt_time, machine, make_data

LIBS = ("tensorstore", "zarrx")
CODECS = {"raw": [], "zstd": [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]}
WORKLOADS = [f"{op}_{codec}" for op in ("read", "write") for codec in CODECS]


def metadata(shape: tuple[int, ...], chunks: tuple[int, ...], codec: str) -> dict[str, Any]:
    return {"shape": list(shape), "data_type": "bfloat16", "fill_value": 0.0,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, *CODECS[codec]]}


def create_with_tensorstore(path: str, shape: tuple[int, ...], chunks: tuple[int, ...],
                            codec: str) -> Any:
    import tensorstore as ts

    shutil.rmtree(path, ignore_errors=True)
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path},
            "metadata": metadata(shape, chunks, codec)}
    return ts.open(spec, create=True).result()


def bfloat16_data(shape: tuple[int, ...]) -> np.ndarray:
    import ml_dtypes

    return make_data(shape).astype(ml_dtypes.bfloat16)


def digest(array: np.ndarray) -> str:
    return f"{zlib.crc32(np.ascontiguousarray(array).view(np.uint8)):08x}"


# -- the worker: one library, one workload, kept alive over the rounds ------------------------
def worker(lib: str, workload: str, root: str) -> None:
    op, codec = workload.split("_")
    source = os.path.join(root, f"{codec}.zarr")
    if op == "read":
        if lib == "zarrx":
            import zarrx

            a = zarrx.open_array(source, mode="r")

            def run() -> Any:
                return a[...]
        else:
            t = _tensorstore_open(source, read=True).result()

            def run() -> Any:
                return t.read().result()
    else:
        import zarrx

        data = zarrx.open_array(source, mode="r")[...]
        target = os.path.join(root, "out", codec, f"{lib}.zarr")
        if lib == "zarrx":
            out = zarrx.open_array(target, mode="r+")

            def run() -> Any:
                out[...] = data
        else:
            t = _tensorstore_open(target, write=True).result()

            def run() -> Any:
                t.write(data).result()
    for line in sys.stdin:
        if line.strip() != "run":
            break
        run()  # untimed: the timed run meets warm memory, as in a loop of back-to-back runs
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        check = digest(result) if result is not None else None
        print(json.dumps({"wall": wall, "cpu": cpu, "digest": check}), flush=True)


# -- the driver --------------------------------------------------------------------------------
def prepare(root: str, shape: tuple[int, ...], chunks: tuple[int, ...]) -> str:
    """Write the stores with tensorstore and the empty outputs; check zarrx reads them."""
    import zarrx

    data = bfloat16_data(shape)
    for codec in CODECS:
        create_with_tensorstore(os.path.join(root, f"{codec}.zarr"), shape, chunks,
                                codec).write(data).result()
        for lib in LIBS:
            create_with_tensorstore(os.path.join(root, "out", codec, f"{lib}.zarr"), shape,
                                    chunks, codec)
        got = zarrx.open_array(os.path.join(root, f"{codec}.zarr"), mode="r")[...]
        if got.tobytes() != data.tobytes():
            raise SystemExit(f"zarrx does not read the {codec} store bit-exact")
    return digest(data)


def run_workload(workload: str, root: str, repeats: int) -> dict[str, dict[str, float]]:
    procs = {lib: subprocess.Popen([sys.executable, __file__, "--worker", lib, workload, root],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for lib in LIBS}
    times: dict[str, dict[str, list[float]]] = {lib: {"wall": [], "cpu": []} for lib in LIBS}
    digests: dict[str, set[str | None]] = {lib: set() for lib in LIBS}
    try:
        for r in range(repeats):
            for lib in LIBS[r % 2:] + LIBS[: r % 2]:  # rotate the order each round
                proc = procs[lib]
                assert proc.stdin is not None
                assert proc.stdout is not None
                proc.stdin.write("run\n")
                proc.stdin.flush()
                msg = json.loads(proc.stdout.readline())
                times[lib]["wall"].append(msg["wall"])
                times[lib]["cpu"].append(msg["cpu"])
                digests[lib].add(msg["digest"])
    finally:
        for proc in procs.values():
            proc.communicate("stop\n", timeout=600)
    return {lib: {"wall": statistics.median(t["wall"]), "cpu": statistics.median(t["cpu"]),
                  "digests": digests[lib]} for lib, t in times.items()}  # type: ignore[misc]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dir", help="where the stores go (default: a temporary directory)")
    parser.add_argument("--quick", action="store_true", help="a 16 MiB array, 3 repeats")
    parser.add_argument("--worker", nargs=3, metavar=("LIB", "WORKLOAD", "ROOT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return
    shape, chunks = ((128, 256, 256), (64, 64, 64)) if args.quick else ((512,) * 3, (64,) * 3)
    repeats = 3 if args.quick else args.repeats
    root = args.dir or tempfile.mkdtemp(prefix="zarrx-ml-bench-")
    expected = prepare(root, shape, chunks)
    print(f"bfloat16 {shape}, chunks {chunks}, {np.prod(shape) * 2 / 2**20:.0f} MiB; "
          f"{repeats} interleaved repeats; {machine()}")
    print("| workload | tensorstore wall | zarrx wall | zarrx / tensorstore (wall) "
          "| tensorstore CPU | zarrx CPU | zarrx / tensorstore (CPU) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for workload in WORKLOADS:
        res = run_workload(workload, root, repeats)
        if workload.startswith("read"):
            for lib in LIBS:
                if res[lib]["digests"] != {expected}:
                    raise SystemExit(f"{lib} read wrong data in {workload}")
        else:
            import zarrx  # tensorstore reads what zarrx wrote, and the reverse

            codec = workload.split("_")[1]
            for lib in LIBS:
                path = os.path.join(root, "out", codec, f"{lib}.zarr")
                back = (_tensorstore_open(path, read=True).result().read().result()
                        if lib == "zarrx" else zarrx.open_array(path, mode="r")[...])
                if digest(back) != expected:
                    raise SystemExit(f"what {lib} wrote in {workload} reads back wrong")
        ts_, zx = res["tensorstore"], res["zarrx"]
        print(f"| {workload} | {fmt_time(ts_['wall'])} | {fmt_time(zx['wall'])} | "
              f"{zx['wall'] / ts_['wall']:.2f} | {fmt_time(ts_['cpu'])} | "
              f"{fmt_time(zx['cpu'])} | {zx['cpu'] / ts_['cpu']:.2f} |", flush=True)
    if not args.dir:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
