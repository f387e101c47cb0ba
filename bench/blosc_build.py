"""numcodecs' c-blosc against tensorstore's bundled c-blosc, compressor alone.

    python bench/blosc_build.py [--chunks 16] [--repeats 9]

Compresses the same 64³ float32 chunks of ``compare.py``'s data (blosc, clevel 5, byte
shuffle, typesize 4, automatic block size; lz4 and zstd) on one thread, in interleaved
rounds (the order alternates):

- ``numcodecs``: ``numcodecs.blosc.compress`` as zarrx calls it (``use_threads = False``:
  ``blosc_compress_ctx`` with one internal thread);
- ``tensorstore``: a write of one chunk into a zarr v2 array on a ``memory`` kvstore
  (one data-copy thread, no cache), minus the same write without a compressor
  (``tensorstore raw``), which leaves tensorstore's compressor.

It prints the median CPU time of the process per chunk (all its threads: tensorstore
compresses on its own; wall time on a loaded machine favours a thread that sleeps between
bursts) and the frames' sizes, and whether the two libraries
wrote the same bytes (the same algorithm, level and block size give identical frames).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import time

import numcodecs.blosc
import numpy as np
import tensorstore as ts

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import make_data


def tensorstore_array(cname: str | None) -> ts.TensorStore:
    compressor = None if cname is None else {
        "id": "blosc", "cname": cname, "clevel": 5, "shuffle": 1, "blocksize": 0}
    return ts.open({
        "driver": "zarr",
        "kvstore": {"driver": "memory"},
        "metadata": {"shape": [64, 64, 64], "chunks": [64, 64, 64], "dtype": "<f4",
                     "compressor": compressor},
        "context": {"data_copy_concurrency": {"limit": 1},
                    "cache_pool": {"total_bytes_limit": 0}},
        "create": True,
        "delete_existing": True,
    }).result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    numcodecs.blosc.use_threads = False
    data = make_data((256, 256, 1024))
    chunks = [np.ascontiguousarray(data[i:i + 64, j:j + 64, k:k + 64])
              for i in range(0, 256, 64) for j in range(0, 256, 64)
              for k in range(0, 1024, 64)][: args.chunks]
    print(f"numcodecs {numcodecs.__version__} (c-blosc {numcodecs.blosc.VERSION_STRING}), "
          f"tensorstore {importlib.metadata.version('tensorstore')}; "
          f"{len(chunks)} chunks of 1 MiB, one thread")
    for cname in ("lz4", "zstd"):
        raw, blosc = tensorstore_array(None), tensorstore_array(cname)
        blosc.write(chunks[0]).result()
        theirs = bytes(blosc.kvstore.read("0.0.0").result().value)
        ours = numcodecs.blosc.compress(chunks[0], cname.encode(), 5, 1, 0, 4)
        runs = {
            "numcodecs": lambda c, cname=cname: numcodecs.blosc.compress(
                c, cname.encode(), 5, 1, 0, 4),
            "tensorstore": lambda c, blosc=blosc: blosc.write(c).result(),
            "tensorstore raw": lambda c, raw=raw: raw.write(c).result(),
        }
        times: dict[str, list[float]] = {name: [] for name in runs}
        for r in range(args.repeats):
            for name in (list(runs) if r % 2 else list(runs)[::-1]):
                t0 = time.process_time()
                for chunk in chunks:
                    runs[name](chunk)
                times[name].append((time.process_time() - t0) / len(chunks))
        med = {name: float(np.median(t)) * 1e3 for name, t in times.items()}
        compressor = med["tensorstore"] - med["tensorstore raw"]
        print(f"{cname}: numcodecs {med['numcodecs']:.3f} ms of CPU per chunk, tensorstore's "
              f"compressor {compressor:.3f} ms (write {med['tensorstore']:.3f} - raw write "
              f"{med['tensorstore raw']:.3f}); numcodecs / tensorstore "
              f"{med['numcodecs'] / compressor:.2f}")
        print(f"  frame of chunk 0: numcodecs {len(ours)} bytes, tensorstore {len(theirs)} "
              f"bytes, identical: {ours == theirs}")


if __name__ == "__main__":
    main()
