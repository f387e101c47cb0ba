"""Reads through ``cast_value``, ``scale_offset`` and bitround: zarrx beside zarr-python 3.4.

zarr-python 3.4 needs Python >= 3.12, so it runs in its own environment: the one the interop
tests build (``.venv-zarr34``, see ``tests/interop/peer_envs.py``), or ``--zarr34-python``.
Each library reads in a process of its own (``--worker``), started afresh for every round;
the rounds alternate the libraries' order so a slow phase of the machine hits both alike.
A worker reads the whole array once untimed (warm-up), then ``--repeats`` times timed (wall
and CPU time of the read only); the report gives each library's median over all rounds and
zarr-python's time over zarrx's. Every store is written once by zarrx (the interop tests
show zarr-python 3.4 writes the same chunk bytes for these chains), and each worker's result
is checked against zarrx's by a digest.

    python bench/ext_codecs.py             # 4096 x 2048 elements, 5 rounds of 3 reads
    python bench/ext_codecs.py --quick     # a smoke test
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
WORKLOADS: dict[str, dict[str, Any]] = {
    "scale_offset+cast_value f8->u1 (NaN map), zstd": {
        "dtype": "float64", "fill_value": "NaN", "filters": [
            {"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
            {"name": "cast_value", "configuration": {
                "data_type": "uint8",
                "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}],
        "values": "range2540"},
    "cast_value f4->f2 (clamp), zstd": {
        "dtype": "float32", "fill_value": 0.0, "filters": [
            {"name": "cast_value", "configuration": {"data_type": "float16",
                                                     "out_of_range": "clamp"}}],
        "values": "smooth"},
    "scale_offset f8, zstd": {
        "dtype": "float64", "fill_value": 0.0, "filters": [
            {"name": "scale_offset", "configuration": {"offset": 3.5, "scale": 8}}],
        "values": "smooth"},
    "numcodecs.bitround f4 (keepbits 10), zstd": {
        "dtype": "float32", "fill_value": 0.0, "filters": [
            {"name": "numcodecs.bitround", "configuration": {"keepbits": 10}}],
        "values": "smooth"},
}


def values_for(kind: str, shape: tuple[int, int], dtype: str) -> np.ndarray:
    i = np.arange(shape[0] * shape[1], dtype="f8").reshape(shape)
    if kind == "range2540":
        out = (i % 25400) / 10
        out[::97, ::89] = np.nan
        return out.astype(dtype)
    return (np.sin(i / 977) * 1000 + i / 4096).astype(dtype)


def digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def worker(lib: str, path: str, repeats: int) -> None:
    """Runs in the library's own process; prints JSON timings and the result's digest."""
    if lib == "zarrx":
        import zarrx

        def read() -> np.ndarray:
            return zarrx.open_array(path, mode="r")[...]
    else:
        import zarr

        def read() -> np.ndarray:
            return zarr.open_array(path, mode="r")[...]
    result = read()
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        result = read()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    print(json.dumps({"wall": walls, "cpu": cpus, "digest": digest(result)}))


def run_worker(python: str, lib: str, path: str, repeats: int) -> dict[str, Any]:
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([python, __file__, "--worker", lib, "--path", path,
                           "--repeats", str(repeats)], capture_output=True, text=True,
                          env=env, check=False, cwd=str(ROOT) if lib == "zarrx" else "/")
    if proc.returncode:
        raise SystemExit(f"{lib} worker failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=["zarrx", "zarr"])
    parser.add_argument("--path")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--zarr34-python", default=os.environ.get(
        "ZARRX_ZARR34_PYTHON", str(ROOT / ".venv-zarr34" / "bin" / "python")))
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.path, args.repeats)
        return
    if not Path(args.zarr34_python).exists():
        raise SystemExit(f"no zarr-python 3.4 at {args.zarr34_python}: run "
                         "`pytest tests/interop/zarr34` once (it builds .venv-zarr34) or pass "
                         "--zarr34-python")
    import zarrx

    shape, chunks = ((512, 256), (128, 128)) if args.quick else ((4096, 2048), (512, 512))
    rounds, repeats = (1, 1) if args.quick else (args.rounds, args.repeats)
    version = subprocess.run([args.zarr34_python, "-c", "import zarr; print(zarr.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    print(f"shape {shape}, chunks {chunks}; {rounds} rounds x {repeats} reads; "
          f"zarrx {zarrx.__version__}, zarr-python {version}, {os.cpu_count()} cores")
    print(f"{'workload':48s} {'zarrx ms':>9s} {'zarr ms':>9s} {'ratio':>6s}  (wall; CPU)")
    with tempfile.TemporaryDirectory() as tmp:
        for name, w in WORKLOADS.items():
            path = os.path.join(tmp, f"w{len(os.listdir(tmp))}.zarr")
            data = values_for(w["values"], shape, w["dtype"])
            fill = np.nan if w["fill_value"] == "NaN" else w["fill_value"]
            a = zarrx.create_array(path, shape=shape, chunks=chunks, dtype=w["dtype"],
                                   fill_value=fill, filters=w["filters"], compressors=[ZSTD])
            a[...] = data
            expected = digest(zarrx.open_array(path, mode="r")[...])
            times: dict[str, dict[str, list[float]]] = {
                lib: {"wall": [], "cpu": []} for lib in ("zarrx", "zarr")}
            for r in range(rounds):
                order = ["zarrx", "zarr"] if r % 2 == 0 else ["zarr", "zarrx"]
                for lib in order:
                    python = sys.executable if lib == "zarrx" else args.zarr34_python
                    out = run_worker(python, lib, path, repeats)
                    if out["digest"] != expected:
                        raise SystemExit(f"{lib} read {name} differently from zarrx")
                    times[lib]["wall"] += out["wall"]
                    times[lib]["cpu"] += out["cpu"]
            med = {lib: {k: statistics.median(v) * 1e3 for k, v in t.items()}
                   for lib, t in times.items()}
            print(f"{name:48s} {med['zarrx']['wall']:9.1f} {med['zarr']['wall']:9.1f} "
                  f"{med['zarr']['wall'] / med['zarrx']['wall']:6.2f}  "
                  f"(CPU {med['zarrx']['cpu']:.0f} / {med['zarr']['cpu']:.0f} ms, "
                  f"{med['zarr']['cpu'] / med['zarrx']['cpu']:.2f})")


if __name__ == "__main__":
    main()
