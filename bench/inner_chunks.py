"""Per-inner-chunk cost of decoding and placing, and of encoding, the inner chunks of one
shard: the batch kernels (one call for the whole shard, without the GIL) against the
chunk-by-chunk path (Python per inner chunk: ``runtime.place.place`` to read,
``PreparedChain.encode_general`` to write).

A shard of 2048 x 2048 uint8 in 65 536 inner chunks of 8 x 8 (smooth data with a little
noise), for the inner chains ``bytes`` alone, ``bytes`` + ``zstd`` and ``bytes`` +
``blosc`` (lz4, bit shuffle: zarr-python's default for 1-byte items). Prints the median of
``--repeats`` runs in µs per inner chunk, on one thread:

- ``decode+place``: every inner chunk decoded and copied into a 2048 x 2048 result;
- ``decode in place``: the same into a (65536, 8, 8) result, where every inner chunk is
  decoded straight into its place (the kernel's floor: the codec plus the loop);
- ``encode``: every 8 x 8 view of a 2048 x 2048 array encoded.

    python bench/inner_chunks.py --repeats 5
    python bench/inner_chunks.py --chunk 32 --chains zstd   # 4096 inner chunks of 32 x 32
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from zarrx.codecs.pipeline import CodecPipeline
from zarrx.runtime.elements import Elements
from zarrx.runtime.place import place
from zarrx.runtime.plan import ChunkProjection
from zarrx.testing.codecs import spec

CHAINS: dict[str, list[dict[str, Any]]] = {
    "bytes": [{"name": "bytes"}],
    "zstd": [{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 0}}],
    "blosc-lz4": [{"name": "bytes"}, {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "bitshuffle", "typesize": 1}}],
}


def _timed(run: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class Shard:
    """The shard's data, its inner chunks' views and projections, and their geometry."""

    def __init__(self, side: int, c: int) -> None:
        grid = side // c
        self.side, self.c, self.n = side, c, grid * grid
        rng = np.random.default_rng(0)
        y, x = np.mgrid[0:side, 0:side]
        self.data = ((x // 16 + y // 16) % 200 + rng.integers(0, 3, (side, side))).astype("uint8")
        coords = [(i, j) for i in range(grid) for j in range(grid)]
        self.views = [self.data[i * c:(i + 1) * c, j * c:(j + 1) * c] for i, j in coords]
        whole = (slice(0, c, 1), slice(0, c, 1))
        self.projections = [
            ChunkProjection(coords=(i, j), chunk_selection=whole, complete=True,
                            out_selection=(slice(i * c, (i + 1) * c), slice(j * c, (j + 1) * c)))
            for i, j in coords]
        n = self.n
        self.which = np.zeros(n, np.int64)
        self.starts = np.zeros((n, 2), np.int64)
        self.steps = np.ones((n, 2), np.int64)
        self.counts = np.full((n, 2), c, np.int64)
        self.outs = np.array([(i * c, j * c) for i, j in coords], np.int64)
        self.flat_outs = np.array([(k * c, 0) for k in range(n)], np.int64)


def measure(name: str, shard: Shard, repeats: int) -> None:
    c, n = shard.c, shard.n
    chain = CodecPipeline.from_json(CHAINS[name], where="bench").prepare(spec((c, c), "uint8"))
    elements = Elements.of(np.dtype("uint8"), 0)
    frames = [bytes(chain.encode_general(v)) for v in shard.views]
    stored = b"".join(frames)
    sizes = np.array([len(f) for f in frames], np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    items = [(p, memoryview(stored)[o:o + s])
             for p, o, s in zip(shard.projections, offsets.tolist(), sizes.tolist())]
    out = np.zeros((shard.side, shard.side), "uint8")
    flat = np.zeros((n * c, c), "uint8")
    decoder = chain.batch_decoder
    assert decoder is not None

    def each() -> None:
        for p, data in items:
            place(chain, elements, p, data, out)

    def batch() -> None:
        decoder.place([stored], shard.which, offsets, sizes, shard.starts, shard.steps,
                      shard.counts, shard.outs, out, b"\0")

    def in_place() -> None:
        decoder.place([stored], shard.which, offsets, sizes, shard.starts, shard.steps,
                      shard.counts, shard.flat_outs, flat, b"\0")

    def encode_each() -> None:
        for v in shard.views:
            chain.encode_general(v)

    def encode_batch() -> None:
        chain.encode_many(shard.views)

    us = 1e6 / n
    before, after = _timed(each, repeats), _timed(batch, repeats)
    assert np.array_equal(out, shard.data)
    print(f"{name:10} {'decode+place':16} {before * us:10.2f} {after * us:8.3f} "
          f"{before / after:8.1f}x")
    floor = _timed(in_place, repeats)
    assert np.array_equal(flat.reshape(n, c, c), np.stack(shard.views))
    print(f"{name:10} {'decode in place':16} {'':10} {floor * us:8.3f}")
    before, after = _timed(encode_each, repeats), _timed(encode_batch, repeats)
    assert chain.encode_many(shard.views[:64]) == frames[:64]
    print(f"{name:10} {'encode':16} {before * us:10.2f} {after * us:8.3f} "
          f"{before / after:8.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2048, help="the shard's side")
    parser.add_argument("--chunk", type=int, default=8, help="the inner chunks' side")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chains", nargs="*", default=list(CHAINS), choices=list(CHAINS))
    args = parser.parse_args()
    shard = Shard(args.size, args.chunk)
    print(f"one shard of {shard.n} inner chunks of {shard.c} x {shard.c} uint8, µs per inner "
          f"chunk (median of {args.repeats})")
    print(f"{'chain':10} {'what':16} {'per chunk':>10} {'batch':>8} {'speed-up':>9}")
    for name in args.chains:
        measure(name, shard, args.repeats)


if __name__ == "__main__":
    main()
