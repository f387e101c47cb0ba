"""Per-inner-chunk cost of decoding and placing, and of encoding, the inner chunks of one
shard: the batch kernels (one call for the whole shard, without the GIL) against the
chunk-by-chunk path (Python per inner chunk: ``runtime.place.place_each`` to read,
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
from zarrx.runtime.place import place_each
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2048, help="the shard's side")
    parser.add_argument("--chunk", type=int, default=8, help="the inner chunks' side")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chains", nargs="*", default=list(CHAINS), choices=list(CHAINS))
    args = parser.parse_args()
    side, c = args.size, args.chunk
    grid = side // c
    n = grid * grid
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:side, 0:side]
    data = ((x // 16 + y // 16) % 200 + rng.integers(0, 3, (side, side))).astype("uint8")
    views = [data[i * c:(i + 1) * c, j * c:(j + 1) * c] for i in range(grid) for j in range(grid)]
    coords = [(i, j) for i in range(grid) for j in range(grid)]
    projections = [ChunkProjection(coords=(i, j),
                                   chunk_selection=(slice(0, c, 1), slice(0, c, 1)),
                                   out_selection=(slice(i * c, (i + 1) * c),
                                                  slice(j * c, (j + 1) * c)),
                                   fancy=False, complete=True)
                   for i, j in coords]
    geometry = dict(
        which=np.zeros(n, np.int64),
        starts=np.zeros((n, 2), np.int64),
        steps=np.ones((n, 2), np.int64),
        counts=np.full((n, 2), c, np.int64),
        outs=np.array([(i * c, j * c) for i, j in coords], np.int64),
    )
    print(f"one shard of {n} inner chunks of {c} x {c} uint8, µs per inner chunk "
          f"(median of {args.repeats})")
    print(f"{'chain':10} {'what':18} {'per chunk':>10} {'batch':>8} {'speed-up':>9}")
    for name in args.chains:
        chain = CodecPipeline.from_json(CHAINS[name], where="bench").prepare(spec((c, c), "uint8"))
        elements = Elements.of(np.dtype("uint8"), 0)
        frames = [bytes(chain.encode_general(v)) for v in views]
        shard = b"".join(frames)
        sizes = np.array([len(f) for f in frames], np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        stored = [memoryview(shard)[o:o + s] for o, s in zip(offsets.tolist(), sizes.tolist())]
        out = np.zeros((side, side), "uint8")
        decoder = chain.batch_decoder
        assert decoder is not None

        def each(out: np.ndarray = out) -> None:
            place_each(chain, elements, (c, c), list(zip(projections, stored)), out)

        def batch(out: np.ndarray = out, decoder: Any = decoder) -> None:
            decoder.place([shard], geometry["which"], offsets, sizes, geometry["starts"],
                          geometry["steps"], geometry["counts"], geometry["outs"], out, b"\0")

        before, after = _timed(each, args.repeats), _timed(batch, args.repeats)
        assert np.array_equal(out, data)
        print(f"{name:10} {'decode+place':18} {before / n * 1e6:10.2f} {after / n * 1e6:8.3f} "
              f"{before / after:8.1f}x")
        flat = np.zeros((n, c, c), "uint8")
        inplace = dict(geometry, outs=np.array([(k * c, 0) for k in range(n)], np.int64))

        def direct(flat: np.ndarray = flat, decoder: Any = decoder) -> None:
            decoder.place([shard], inplace["which"], offsets, sizes, inplace["starts"],
                          inplace["steps"], inplace["counts"], inplace["outs"],
                          flat.reshape(n * c, c), b"\0")

        floor = _timed(direct, args.repeats)
        assert np.array_equal(flat, np.stack(views))
        print(f"{name:10} {'decode in place':18} {'':10} {floor / n * 1e6:8.3f}")

        def encode_each() -> None:
            for v in views:
                chain.encode_general(v)

        def encode_batch() -> None:
            chain.encode_many(views)

        before, after = _timed(encode_each, args.repeats), _timed(encode_batch, args.repeats)
        assert [bytes(f) for f in chain.encode_many(views[:64])] == frames[:64]
        print(f"{name:10} {'encode':18} {before / n * 1e6:10.2f} {after / n * 1e6:8.3f} "
              f"{before / after:8.1f}x")


if __name__ == "__main__":
    main()
