"""Side-by-side benchmark: zarrx against zarr-python 3, zarr-python with the zarrs codec
pipeline and tensorstore, on the same stores, in one run, with the floors beside them.

Why it is built this way:

- **Same data.** Every store is written once by zarr-python, so all libraries read identical
  bytes; zarrx is checked to read each store bit-exact (once), every library's result is
  checked against zarr-python's by a digest, and what zarrx writes is read back by zarr-python.
- **One process per library.** Each library (and each floor) runs in its own worker process
  (``compare.py --worker LIB --workload NAME``) so imports, thread pools, allocator state and
  caches cannot leak between them. Workers stay alive for one workload and time only the
  operation itself, never process start or imports.
- **Interleaved.** Repeats go round-robin across the workers (the order rotates each round),
  so a slow phase of the machine hits every library alike; we report medians.
- **Warm-up.** Each worker runs the operation before timing it: the first touch of large
  fresh memory on a VM is very slow, and we want the steady state. On this VM free memory
  is handed back to the host after ~2 s idle (free page reporting) and touching it again,
  as huge pages, costs up to ~1 s per 256 MiB; so for the workloads that allocate tens of
  MiB, each timed run directly follows an untimed one in the same worker, as in a loop of
  back-to-back reads.
- **Wall and CPU time.** Both are reported: CPU time summed over the worker's threads is
  less disturbed by other load on a shared machine, wall time shows the parallelism.
- **Floors.** ``memcpy`` (``np.copyto`` into a preallocated array of the output size),
  ``codec`` (decode — or encode for writes — every stored chunk with the codec library
  directly, on a pool of one thread per core, no assembly) and ``io`` (plain file reads — or
  writes — of every stored chunk's bytes, same pool) bound what any library can reach.
  ``chunks`` does both for each chunk in one task (read then decode, or encode then write;
  a hierarchy's documents read then parsed), on the same pool: on a machine with few cores
  reading and decoding compete for them, so this, not the larger of ``codec`` and ``io``,
  is what a library that reads and decodes every chunk at least costs. The last column is
  zarrx over it.

Run ``python bench/compare.py --help``; ``--quick`` is a smoke test.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

LIBS = ("zarr", "zarrs", "tensorstore", "zarrx")
PEERS = ("zarr", "zarrs", "tensorstore")
FLOORS = ("memcpy", "codec", "io", "chunks")
NCORES = os.cpu_count() or 1

Index = tuple[Any, ...]  # a basic selection: ints and slices, one per axis


# --------------------------------------------------------------------------------------------
# What is measured
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sizes:
    """Array geometry and counts; ``--quick`` shrinks them so a smoke run takes a minute."""

    tag: str
    shape: tuple[int, int, int]
    chunks: tuple[int, int, int]
    shards: tuple[int, int, int]
    inner: tuple[int, int, int]
    region: tuple[slice, slice, slice]
    n_random: int  # random inner chunks / elements per measurement
    n_members: int  # arrays in the hierarchy
    repeats: int


FULL = Sizes(
    tag="full", shape=(256, 256, 1024), chunks=(64, 64, 64), shards=(128, 128, 128),
    inner=(32, 32, 32), region=(slice(10, 200), slice(33, 250), slice(100, 900)),
    n_random=200, n_members=1000, repeats=7,
)
QUICK = Sizes(
    tag="quick", shape=(128, 128, 256), chunks=(64, 64, 64), shards=(128, 128, 128),
    inner=(32, 32, 32), region=(slice(5, 100), slice(17, 120), slice(25, 225)),
    n_random=50, n_members=200, repeats=3,
)


@dataclass(frozen=True)
class Dataset:
    """A store written once by zarr-python and shared by the workloads that read it."""

    name: str
    codec: str  # "raw", "lz4", "zstd"
    sharded: bool = False
    hierarchy: bool = False


DATASETS = {
    d.name: d
    for d in (
        Dataset("raw", "raw"),
        Dataset("lz4", "lz4"),
        Dataset("zstd", "zstd"),
        Dataset("sharded", "lz4", sharded=True),
        Dataset("tree", "raw", hierarchy=True),
    )
}


@dataclass(frozen=True)
class Workload:
    name: str
    dataset: str
    kind: str  # "read", "write" or "hierarchy"
    what: str  # one line for the table's legend
    selections: Callable[[Sizes], list[Index]] = field(default=lambda s: [(Ellipsis,)])
    #: A write into an array whose first shard (or chunks) zarr-python filled beforehand.
    existing: bool = False

    @property
    def big(self) -> bool:
        """Allocates tens of MiB per run: each timed run follows an untimed one (below)."""
        return self.kind == "write" or (self.kind == "read" and len(self.selections(QUICK)) == 1)


def _full(s: Sizes) -> list[Index]:
    return [(slice(None),) * 3]


def _strided(s: Sizes) -> list[Index]:
    return [(slice(None, None, 2),) * 3]


def _region(s: Sizes) -> list[Index]:
    return [s.region]


def _one_inner_chunk(s: Sizes) -> list[Index]:
    return [tuple(slice(c, 2 * c) for c in s.inner)]  # inside the first shard


def _filled(s: Sizes) -> Index:
    """The region zarr-python fills before a write into existing data: the first shard."""
    return tuple(slice(0, n) for n in s.shards)


def _rng() -> np.random.Generator:
    return np.random.default_rng(12345)  # the same random picks in every worker


def _random_inner_chunks(s: Sizes) -> list[Index]:
    grid = [n // c for n, c in zip(s.shape, s.inner)]
    picks = np.stack([_rng().integers(0, g, s.n_random) for g in grid], axis=1)
    return [tuple(slice(int(i) * c, (int(i) + 1) * c) for i, c in zip(p, s.inner)) for p in picks]


def _random_points(s: Sizes) -> list[Index]:
    picks = np.stack([_rng().integers(0, n, s.n_random) for n in s.shape], axis=1)
    return [tuple(int(i) for i in p) for p in picks]


WORKLOADS = {
    w.name: w
    for w in (
        Workload("read_raw", "raw", "read", "full read, 64³ chunks, uncompressed", _full),
        Workload("read_lz4", "lz4", "read", "full read, 64³ chunks, blosc lz4 + shuffle", _full),
        Workload("read_zstd", "zstd", "read", "full read, 64³ chunks, zstd (zarr default)", _full),
        Workload("read_sharded", "sharded", "read",
                 "full read, 128³ shards of 32³ blosc-lz4 chunks", _full),
        Workload("shard_chunk", "sharded", "read",
                 "one random 32³ inner chunk of a shard (mean per read)", _random_inner_chunks),
        Workload("point", "lz4", "read",
                 "one random element, 64³ lz4 chunks (mean per read)", _random_points),
        Workload("point_sharded", "sharded", "read",
                 "one random element, sharded (mean per read)", _random_points),
        Workload("strided", "lz4", "read", "[::2, ::2, ::2] of the lz4 array", _strided),
        Workload("region", "lz4", "read", "unaligned region of the lz4 array", _region),
        Workload("write_chunked", "lz4", "write", "full write, 64³ chunks, blosc lz4", _full),
        Workload("write_sharded", "sharded", "write",
                 "full write, 128³ shards of 32³ blosc-lz4 chunks", _full),
        Workload("write_shard_part", "sharded", "write",
                 "one 32³ inner chunk into an existing 128³ shard (64 inner chunks)",
                 _one_inner_chunk, existing=True),
        Workload("hierarchy", "tree", "hierarchy",
                 "open a group, list its arrays (1000; 200 with --quick)"),
    )
}


def make_data(shape: Sequence[int]) -> np.ndarray:
    """Deterministic float32 data that compresses like measurements (~2x with lz4): a smooth
    field plus a random walk, kept to 1/256 precision."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal(tuple(shape), dtype=np.float32)
    data *= np.float32(0.05)
    np.cumsum(data, axis=2, out=data)
    y = np.cos(np.linspace(0, 2 * np.pi, shape[1], dtype=np.float32))
    z = np.sin(np.linspace(0, 8 * np.pi, shape[2], dtype=np.float32))
    data += np.float32(10) * y[None, :, None] * z[None, None, :]
    data *= np.float32(256)
    np.round(data, out=data)
    data /= np.float32(256)
    return data


# --------------------------------------------------------------------------------------------
# Stores: written once by zarr-python
# --------------------------------------------------------------------------------------------
def dataset_path(root: str, sizes: Sizes, name: str) -> str:
    return os.path.join(root, sizes.tag, f"{name}.zarr")


def output_path(root: str, sizes: Sizes, workload: str, lib: str) -> str:
    return os.path.join(root, sizes.tag, "out", workload, f"{lib}.zarr")


def _zarr_codecs(codec: str) -> dict[str, Any]:
    import zarr.codecs as zc

    if codec == "raw":
        return {"compressors": None}
    if codec == "lz4":
        return {"compressors": zc.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")}
    return {"compressors": zc.ZstdCodec()}  # zarr-python's default compressor (level 0)


def create_with_zarr(path: str, ds: Dataset, sizes: Sizes) -> Any:
    """An empty array with the dataset's layout, created by zarr-python."""
    import zarr

    layout = {"chunks": sizes.inner, "shards": sizes.shards} if ds.sharded else {
        "chunks": sizes.chunks}
    return zarr.create_array(path, shape=sizes.shape, dtype="float32", fill_value=0.0,
                             overwrite=True, **layout, **_zarr_codecs(ds.codec))


def create_output(w: Workload, root: str, sizes: Sizes, lib: str, data: np.ndarray) -> None:
    """The empty array a write workload writes into, created by zarr-python (and partly
    filled, for a write into existing data)."""
    z = create_with_zarr(output_path(root, sizes, w.name, lib), DATASETS[w.dataset], sizes)
    if w.existing:
        z[_filled(sizes)] = data[_filled(sizes)]


def write_dataset(root: str, sizes: Sizes, ds: Dataset, data: np.ndarray | None) -> bool:
    """Write ``ds`` unless a finished copy is already there; True when it was written."""
    path = dataset_path(root, sizes, ds.name)
    done = os.path.join(path, ".complete")
    if os.path.exists(done):
        return False
    shutil.rmtree(path, ignore_errors=True)
    if ds.hierarchy:
        import zarr

        group = zarr.open_group(path, mode="w")
        for i in range(sizes.n_members):
            group.create_array(f"array_{i:04d}", shape=(100, 100), chunks=(10, 10),
                               dtype="float32", attributes={"index": i, "units": "m"})
    else:
        assert data is not None
        create_with_zarr(path, ds, sizes)[...] = data
    with open(done, "w") as f:
        f.write("written by zarr-python\n")
    return True


def check_zarrx_reads(path: str, data: np.ndarray) -> None:
    """zarrx must read what zarr-python wrote bit for bit (checked once per store)."""
    import zarrx

    got = zarrx.open_array(path, mode="r")[...]
    if not np.array_equal(got.view(np.uint32), data.view(np.uint32)):
        raise SystemExit(f"zarrx does not read {path} bit-exact")


# --------------------------------------------------------------------------------------------
# Libraries (each only ever imported inside its own worker process)
# --------------------------------------------------------------------------------------------
class Unavailable(Exception):
    """The library cannot be imported or configured here; the run goes on without it."""


def _versions(lib: str) -> str:
    from importlib.metadata import version

    if lib == "zarr":
        return f"zarr {version('zarr')}"
    if lib == "zarrs":
        return f"zarr {version('zarr')} + zarrs {version('zarrs')}"
    if lib in ("tensorstore", "zarrx"):
        return f"{lib} {version(lib)}"
    return f"numpy {np.__version__}, numcodecs {version('numcodecs')}"


def _import_zarr(lib: str) -> Any:
    import zarr

    if lib == "zarrs":
        try:
            import zarrs  # noqa: F401
        except ImportError as e:
            raise Unavailable(f"zarrs cannot be imported ({e}); pip install zarrs") from e
        # Set for the whole process (not as a context): the pipeline is chosen per array open.
        zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline"})
    return zarr


_ts_context: Any = None


def _tensorstore_open(path: str, **mode: bool) -> Any:
    """Open a zarr3 TensorStore, all in one shared context (thread pools are per context).
    ``file_io_sync`` off: tensorstore fsyncs every write by default, the others do not;
    no chunk cache, like the others."""
    global _ts_context
    import tensorstore as ts

    if _ts_context is None:
        _ts_context = ts.Context({"file_io_sync": False, "cache_pool": {"total_bytes_limit": 0}})
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
    return ts.open(spec, context=_ts_context, open=True, **mode)


def lib_reader(lib: str, path: str) -> Callable[[Index], Any]:
    """A function reading one selection of the array at ``path`` into a new NumPy array."""
    if lib in ("zarr", "zarrs"):
        z = _import_zarr(lib).open_array(path, mode="r")
        if lib == "zarrs" and "Zarrs" not in type(z._async_array.codec_pipeline).__name__:
            raise Unavailable("zarr did not pick up the zarrs codec pipeline")
        return lambda sel: z[sel]
    if lib == "tensorstore":
        t = _tensorstore_open(path, read=True).result()
        return lambda sel: t[sel].read().result()
    if lib == "zarrx":
        import zarrx

        a = zarrx.open_array(path, mode="r")
        return lambda sel: a[sel]
    raise ValueError(lib)


def lib_writer(lib: str, path: str) -> Callable[[Index, np.ndarray], None]:
    """A function writing one selection of the array at ``path`` (created beforehand by
    zarr-python)."""
    if lib in ("zarr", "zarrs"):
        z = _import_zarr(lib).open_array(path, mode="r+")

        def write(sel: Index, data: np.ndarray) -> None:
            z[sel] = data

        return write
    if lib == "tensorstore":
        t = _tensorstore_open(path, write=True).result()
        return lambda sel, data: t[sel].write(data).result()
    if lib == "zarrx":
        import zarrx

        a = zarrx.open_array(path, mode="r+")

        def write_x(sel: Index, data: np.ndarray) -> None:
            a[sel] = data

        return write_x
    raise ValueError(lib)


def lib_lister(lib: str, path: str) -> Callable[[], list[str]]:
    """A function opening the group at ``path`` and listing its members as opened nodes.
    tensorstore has no group API: it lists the keys and opens every member array
    concurrently, which is what a group listing has to do (the tree holds arrays only)."""
    if lib in ("zarr", "zarrs"):
        zarr = _import_zarr(lib)

        def members() -> list[str]:
            return sorted(name for name, _ in zarr.open_group(path, mode="r").members())

        return members
    if lib == "tensorstore":
        import tensorstore as ts

        def members_ts() -> list[str]:
            kv = ts.KvStore.open({"driver": "file", "path": path + "/"}).result()
            if json.loads(kv.read("zarr.json").result().value)["node_type"] != "group":
                raise ValueError(f"{path} is not a group")
            names = sorted(k.decode()[: -len("/zarr.json")] for k in kv.list().result()
                           if k.count(b"/") == 1 and k.endswith(b"/zarr.json"))
            opening = [_tensorstore_open(os.path.join(path, n)) for n in names]
            for f in opening:
                f.result()
            return names

        return members_ts
    if lib == "zarrx":
        import zarrx

        def members_x() -> list[str]:
            return sorted(name for name, _ in zarrx.open_group(path, mode="r").members())

        return members_x
    raise ValueError(lib)


# --------------------------------------------------------------------------------------------
# Floors
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Piece:
    """A stored chunk: a whole file (``length`` None) or a byte range of a shard."""

    path: str
    offset: int = 0
    length: int | None = None


def _axis_indices(sel: Index, shape: Sequence[int]) -> list[np.ndarray]:
    out = []
    for s, n in zip(sel, shape):
        out.append(np.arange(*s.indices(n)) if isinstance(s, slice) else np.array([s]))
    return out


def _touched(sel: Index, shape: Sequence[int], chunk: Sequence[int]) -> list[tuple[int, ...]]:
    """Grid coordinates of the chunks holding at least one selected element."""
    per_axis = [np.unique(ix // c) for ix, c in zip(_axis_indices(sel, shape), chunk)]
    return [tuple(int(i) for i in t) for t in itertools.product(*per_axis)]


def _chunk_file(path: str, coords: Sequence[int]) -> str:
    return os.path.join(path, "c", *map(str, coords))


class ShardIndex:
    """Byte ranges of inner chunks, from zarr-python's default shard index (at the end:
    ``(offset, nbytes)`` little-endian uint64 pairs in C order, then a crc32c)."""

    def __init__(self, path: str, sizes: Sizes) -> None:
        self.path = path
        self.sizes = sizes
        self.per_shard = tuple(s // c for s, c in zip(sizes.shards, sizes.inner))
        self.index_nbytes = int(np.prod(self.per_shard)) * 16 + 4
        self._cache: dict[tuple[int, ...], np.ndarray] = {}

    def shard_of(self, inner: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return (tuple(i // p for i, p in zip(inner, self.per_shard)),
                tuple(i % p for i, p in zip(inner, self.per_shard)))

    def ranges(self, shard: tuple[int, ...]) -> np.ndarray:
        if shard not in self._cache:
            with open(_chunk_file(self.path, shard), "rb") as f:
                f.seek(-self.index_nbytes, os.SEEK_END)
                raw = f.read(self.index_nbytes)
            self._cache[shard] = np.frombuffer(raw[:-4], "<u8").reshape(*self.per_shard, 2)
        return self._cache[shard]

    def piece(self, inner: Sequence[int]) -> Piece:
        shard, pos = self.shard_of(inner)
        offset, nbytes = (int(v) for v in self.ranges(shard)[pos])
        return Piece(_chunk_file(self.path, shard), offset, nbytes)


def _read_piece(p: Piece) -> bytes:
    with open(p.path, "rb") as f:
        if p.length is None:
            return f.read()
        return os.pread(f.fileno(), p.length, p.offset)


def _map(pool: ThreadPoolExecutor, fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    """Run on the pool, or inline when there is a single item (no hand-off latency)."""
    return [fn(items[0])] if len(items) == 1 else list(pool.map(fn, items))


def _codec_functions(codec: str, nbytes: int) -> tuple[Callable[[bytes], None],
                                                        Callable[[np.ndarray], bytes]]:
    """Decode into a per-thread buffer / encode a chunk, straight through numcodecs' C calls
    (the same library zarr-python and zarrx use), with the GIL released."""
    import numcodecs.blosc
    import numcodecs.zstd

    numcodecs.blosc.use_threads = False  # the thread-safe *_ctx calls, one thread per chunk
    local = threading.local()

    def buffer() -> np.ndarray:
        if getattr(local, "buf", None) is None:
            local.buf = np.empty(nbytes, np.uint8)
        return local.buf

    if codec == "lz4":
        blosc = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
        return (lambda raw: numcodecs.blosc.decompress(raw, buffer()),
                lambda chunk: blosc.encode(chunk))
    if codec == "zstd":
        zstd = numcodecs.Zstd(level=0)
        return (lambda raw: numcodecs.zstd.decompress(raw, buffer()),
                lambda chunk: zstd.encode(chunk))
    raise Unavailable("no codec to run for uncompressed data")


def floor_bench(floor: str, w: Workload, sizes: Sizes, root: str,
                pool: ThreadPoolExecutor) -> Callable[[], Any]:
    """One measurement of a floor for workload ``w`` (per read for the random workloads)."""
    ds = DATASETS[w.dataset]
    path = dataset_path(root, sizes, ds.name)
    if w.kind == "hierarchy":
        return _hierarchy_floor(floor, path)
    if w.kind == "write":
        return _write_floor(floor, w, ds, sizes, root, pool)
    sels = w.selections(sizes)
    if floor == "memcpy":
        outs = [(np.empty(_axis_counts(s, sizes.shape), np.float32),
                 np.ones(_axis_counts(s, sizes.shape), np.float32)) for s in sels]
        return lambda: [np.copyto(dst, src) for dst, src in outs]
    index = ShardIndex(path, sizes) if ds.sharded else None
    chunk = sizes.inner if ds.sharded else sizes.chunks
    ops: list[list[tuple[int, ...]]] = [_touched(s, sizes.shape, chunk) for s in sels]

    def pieces(op: list[tuple[int, ...]]) -> list[Piece]:
        return [index.piece(c) if index else Piece(_chunk_file(path, c)) for c in op]

    if floor == "codec":
        decode, _ = _codec_functions(ds.codec, int(np.prod(chunk)) * 4)
        blobs = [[_read_piece(p) for p in pieces(op)] for op in ops]
        return lambda: [_map(pool, decode, b) for b in blobs]
    if floor == "io":
        if index is None:
            files = [pieces(op) for op in ops]
            return lambda: [_map(pool, _read_piece, f) for f in files]
        return lambda: [_read_sharded(index, op, pool, lambda raw, _: raw) for op in ops]
    # chunks: read, decode and place each chunk into a fresh output of the result's shape,
    # in one task per chunk (each library must return the NumPy result, so it places too).
    decode: Callable[[bytes], Any] = lambda raw: raw  # noqa: E731
    if ds.codec != "raw":
        decode = _codec_functions(ds.codec, int(np.prod(chunk)) * 4)[0]
    places = [_placements(s, sizes.shape, chunk, op) for s, op in zip(sels, ops)]
    shapes = [_axis_counts(s, sizes.shape) for s in sels]

    def run(i: int) -> np.ndarray:
        out = np.empty(shapes[i], np.float32)

        def then(raw: bytes, coords: tuple[int, ...]) -> None:
            dst, src = places[i][coords]
            out[dst] = np.frombuffer(decode(raw), "<f4").reshape(chunk)[src]

        if index is None:
            _map(pool, lambda c: then(_read_piece(Piece(_chunk_file(path, c))), c), ops[i])
        else:
            _read_sharded(index, ops[i], pool, then)
        return out

    return lambda: [run(i) for i in range(len(sels))]


def _placements(sel: Index, shape: Sequence[int], chunk: Sequence[int],
                touched: list[tuple[int, ...]]) -> dict[tuple[int, ...], tuple[Index, Index]]:
    """For each touched chunk of a selection of ints and forward slices: where its selected
    elements go in the output, and where they are in the chunk."""
    axes = _axis_indices(sel, shape)
    out = {}
    for coords in touched:
        dst, src = [], []
        for s, ix, c, k in zip(sel, axes, coords, chunk):
            lo = c * k
            if not isinstance(s, slice):
                src.append(int(ix[0]) - lo)
                continue
            p0, p1 = np.searchsorted(ix, [lo, lo + k])
            dst.append(slice(int(p0), int(p1)))
            src.append(slice(int(ix[p0]) - lo, int(ix[p1 - 1]) - lo + 1, s.step or 1))
        out[coords] = (tuple(dst), tuple(src))
    return out


def _axis_counts(sel: Index, shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(len(ix) for ix, s in zip(_axis_indices(sel, shape), sel)
                 if isinstance(s, slice))


def _read_sharded(index: ShardIndex, op: list[tuple[int, ...]], pool: ThreadPoolExecutor,
                  then: Callable[[bytes, tuple[int, ...]], Any]) -> list[Any]:
    """What a reader must at least do: a whole shard when all of it is needed, otherwise
    the shard's index and then the inner chunks' byte ranges; ``then`` (nothing, or a
    decode and placement) applied to each inner chunk's bytes and grid coordinates in the
    same task."""
    by_shard: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for inner in op:
        shard, pos = index.shard_of(inner)
        by_shard.setdefault(shard, []).append(pos)
    every = list(itertools.product(*map(range, index.per_shard)))  # C order, as the index

    def one(item: tuple[tuple[int, ...], list[tuple[int, ...]]]) -> list[Any]:
        shard, positions = item
        file = _chunk_file(index.path, shard)

        def inner(p: tuple[int, ...]) -> tuple[int, ...]:
            return tuple(s * n + q for s, n, q in zip(shard, index.per_shard, p))

        if len(positions) == len(every):
            whole = _read_piece(Piece(file))
            ranges = np.frombuffer(whole[-index.index_nbytes:-4], "<u8").reshape(-1, 2)
            view = memoryview(whole)
            return [then(view[int(o):int(o) + int(n)], inner(p))
                    for (o, n), p in zip(ranges.tolist(), every)]
        with open(file, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            raw = os.pread(f.fileno(), index.index_nbytes, size - index.index_nbytes)
            ranges = np.frombuffer(raw[:-4], "<u8").reshape(*index.per_shard, 2)
            return [then(os.pread(f.fileno(), int(ranges[p][1]), int(ranges[p][0])), inner(p))
                    for p in positions]

    return _map(pool, one, list(by_shard.items()))


def _write_floor(floor: str, w: Workload, ds: Dataset, sizes: Sizes, root: str,
                 pool: ThreadPoolExecutor) -> Callable[[], Any]:
    if w.existing:
        raise Unavailable("no floor for a write into existing data")
    data = make_data(sizes.shape)
    if floor == "memcpy":
        dst = np.empty_like(data)
        return lambda: np.copyto(dst, data)
    chunk = sizes.inner if ds.sharded else sizes.chunks
    coords = _touched((slice(None),) * 3, sizes.shape, chunk)
    pieces = [np.ascontiguousarray(data[tuple(slice(i * c, (i + 1) * c)
                                              for i, c in zip(co, chunk))]) for co in coords]
    _, encode = _codec_functions(ds.codec, int(np.prod(chunk)) * 4)
    if floor == "codec":
        return lambda: _map(pool, encode, pieces)
    # io: write every stored object's bytes as plain files (whole shards when sharded);
    # chunks: encode an object's chunks, then write it, in one task per object.
    scratch = os.path.join(output_path(root, sizes, w.name, floor), "c")
    index = ShardIndex("", sizes) if ds.sharded else None
    objects: dict[tuple[int, ...], list[np.ndarray]] = {}
    for co, piece in zip(coords, pieces):  # C order of inner chunks = C order in each shard
        objects.setdefault(index.shard_of(co)[0] if index else co, []).append(piece)
    tail = bytes(index.index_nbytes) if index else b""
    files = []
    for co, parts in objects.items():
        file = os.path.join(scratch, *map(str, co))
        os.makedirs(os.path.dirname(file), exist_ok=True)
        files.append((file, parts))

    def write(file: str, blob: bytes) -> None:
        with open(file, "wb") as f:
            f.write(blob)

    def stored(encoded: list[bytes]) -> bytes:
        return encoded[0] if len(encoded) == 1 and not tail else b"".join([*encoded, tail])

    if floor == "chunks":
        return lambda: _map(pool, lambda item: write(item[0], stored(
            [encode(part) for part in item[1]])), files)
    blobs = [(file, stored(_map(pool, encode, parts))) for file, parts in files]
    return lambda: _map(pool, lambda item: write(*item), blobs)


def _hierarchy_floor(floor: str, path: str) -> Callable[[], Any]:
    def docs() -> list[bytes]:
        out = [_read_piece(Piece(os.path.join(path, "zarr.json")))]
        for name in sorted(os.listdir(path)):
            doc = os.path.join(path, name, "zarr.json")
            if os.path.exists(doc):
                out.append(_read_piece(Piece(doc)))
        return out

    if floor == "io":
        return docs
    if floor == "codec":
        raw = docs()
        return lambda: [json.loads(d) for d in raw]
    if floor == "chunks":
        return lambda: [json.loads(d) for d in docs()]
    raise Unavailable("nothing to copy")


# --------------------------------------------------------------------------------------------
# Worker process
# --------------------------------------------------------------------------------------------
def digest(results: Any) -> str | None:
    """A fingerprint of what was read, to check that every library returns the same data."""
    if results is None:
        return None
    if isinstance(results, list) and results and isinstance(results[0], str):
        return f"{len(results)} names, crc {zlib.crc32(chr(0).join(results).encode()):08x}"
    crc, shapes = 0, []
    for r in results if isinstance(results, list) else [results]:
        a = np.ascontiguousarray(np.asarray(r, dtype=np.float32))
        shapes.append(a.shape)
        crc = zlib.crc32(a.view(np.uint8).reshape(-1), crc)
    return f"{shapes[0] if len(shapes) == 1 else len(shapes)} crc {crc:08x}"


def make_bench(lib: str, w: Workload, sizes: Sizes, root: str,
               pool: ThreadPoolExecutor) -> tuple[Callable[[], Any], int]:
    """The operation to time, and how many reads it makes (times are reported per read)."""
    if lib in FLOORS:
        n = len(w.selections(sizes)) if w.kind == "read" else 1
        return floor_bench(lib, w, sizes, root, pool), n
    path = dataset_path(root, sizes, w.dataset)
    if w.kind == "hierarchy":
        return lib_lister(lib, path), 1
    if w.kind == "write":
        write = lib_writer(lib, output_path(root, sizes, w.name, lib))
        sel = w.selections(sizes)[0]
        data = np.ascontiguousarray(make_data(sizes.shape)[sel])
        return (lambda: write(sel, data)), 1
    read = lib_reader(lib, path)
    sels = w.selections(sizes)
    if len(sels) == 1:
        return (lambda: read(sels[0])), 1
    return (lambda: [read(s) for s in sels]), len(sels)


def worker(lib: str, workload: str, sizes: Sizes, root: str, warmup: int) -> None:
    """Set up, warm up, then time the operation once per ``run`` line on stdin."""
    w = WORKLOADS[workload]
    serve(lib, lambda pool: make_bench(lib, w, sizes, root, pool), warmup=warmup,
          rewarm=w.big and lib != "memcpy", check=w.kind != "write" and lib not in FLOORS)


def _status_kib(field: str) -> int | None:
    """A ``VmRSS``/``VmHWM`` line of /proc/self/status (Linux), in KiB."""
    with contextlib.suppress(OSError), open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def _reset_peak_rss() -> bool:
    """Reset this process's RSS high-water mark (Linux >= 4.0); False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def serve(lib: str, setup: Callable[[ThreadPoolExecutor], tuple[Callable[[], Any], int]], *,
          warmup: int, rewarm: bool, check: bool) -> None:
    """The worker's side of the protocol: set up, run once (its digest, and the peak RSS
    above the set-up state: the RSS high-water mark is reset just before), warm up, then
    time the operation once per ``run`` line on stdin."""
    proto: IO[str] = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # libraries printing to stdout must not corrupt the protocol

    def send(**msg: Any) -> None:
        proto.write(json.dumps(msg) + "\n")

    with ThreadPoolExecutor(NCORES) as pool:
        try:
            op, n = setup(pool)
            gc.collect()
            base = _status_kib("VmRSS") if _reset_peak_rss() else None
            result = op()
            peak = _status_kib("VmHWM")
            peak = (peak - base) * 1024 if peak is not None and base is not None else None
            check_digest = digest(result) if check else None
            del result
            for _ in range(warmup - 1):
                op()
        except Unavailable as e:
            send(unavailable=str(e))
            return
        except Exception:
            send(error=traceback.format_exc())
            return
        send(ready=True, n=n, digest=check_digest, version=_versions(lib), peak=peak)
        for line in sys.stdin:
            if line.strip() != "run":
                break
            if rewarm:
                # Steady state of back-to-back reads: on this VM, memory idle for ~2 s goes
                # back to the host (free page reporting) and the next touch of a NumPy
                # array (transparent huge pages) costs up to ~1 s per 256 MiB. The other
                # workers ran meanwhile, so run once untimed to get warm pages again.
                op()
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            result = op()
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
            del result
            send(t=elapsed / n, cpu=cpu / n)


# --------------------------------------------------------------------------------------------
# Parent process
# --------------------------------------------------------------------------------------------
@dataclass
class Worker:
    lib: str
    proc: subprocess.Popen[str]
    info: dict[str, Any] = field(default_factory=dict)

    def ask(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        if line:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            return {"error": f"worker exited with code {self.proc.wait()}"}
        return json.loads(reply)

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError, OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_workers(libs: Sequence[str], workload: str, args: argparse.Namespace,
                  root: str, script: str = __file__) -> list[Worker]:
    """One worker process per library, started as ``script --worker LIB --workload ...``."""
    workers = []
    for lib in libs:
        cmd = [sys.executable, os.path.abspath(script), "--worker", lib, "--workload", workload,
               "--dir", root, "--warmup", str(args.warmup)]
        if args.quick:
            cmd.append("--quick")
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                stderr=None if args.verbose else subprocess.DEVNULL)
        workers.append(Worker(lib, proc))
    ready = []
    for wk in workers:  # they set up and warm up in parallel; nothing is timed yet
        wk.info = wk.ask("")
        if wk.info.get("ready"):
            ready.append(wk)
            continue
        reason = wk.info.get("unavailable") or wk.info.get("error", "?")
        if wk.lib in LIBS or "error" in wk.info:  # a floor that does not apply is no news
            print(f"\n  {wk.lib}: skipped — {reason.strip()}", file=sys.stderr)
        wk.close()
    return ready


def run_workload(w: Workload, libs: Sequence[str], args: argparse.Namespace, sizes: Sizes,
                 root: str, repeats: int, data: np.ndarray) -> dict[str, Any]:
    """Interleaved repeats of one workload across the libraries' workers."""
    if w.kind == "write":
        for lib in libs:
            if lib in LIBS:
                create_output(w, root, sizes, lib, data)
    workers = start_workers(libs, w.name, args, root)
    times, cpu = interleave(workers, repeats, w.name)
    return summarize(workers, times, cpu, w.name)


def interleave(workers: list[Worker], repeats: int, name: str,
               budget: float | None = None) -> tuple[dict[str, list[float]],
                                                     dict[str, list[float]]]:
    """``repeats`` rounds across the workers, the order rotating each round, then closes
    them. With a ``budget`` (seconds), a worker whose timed runs add up to more than it
    is asked no further (it keeps at least one sample)."""
    times: dict[str, list[float]] = {wk.lib: [] for wk in workers}
    cpu: dict[str, list[float]] = {wk.lib: [] for wk in workers}
    failed: set[str] = set()
    try:
        for r in range(repeats):
            shift = r % max(1, len(workers))
            for wk in workers[shift:] + workers[:shift]:
                if wk.lib in failed:
                    continue
                if budget is not None and sum(times[wk.lib]) * wk.info["n"] > budget:
                    continue
                reply = wk.ask("run")
                if "t" not in reply:
                    print(f"\n  {wk.lib} failed on {name}: {reply.get('error')}",
                          file=sys.stderr)
                    failed.add(wk.lib)
                    continue
                times[wk.lib].append(reply["t"])
                cpu[wk.lib].append(reply["cpu"])
    finally:
        for wk in workers:
            wk.close()
    return times, cpu


def summarize(workers: list[Worker], times: dict[str, list[float]],
              cpu: dict[str, list[float]], name: str) -> dict[str, Any]:
    """Medians per library, and every library's digest checked against zarr-python's."""
    digests = {wk.lib: wk.info["digest"] for wk in workers if wk.info.get("digest")}
    reference = digests.get("zarr") or next(iter(digests.values()), None)
    bad = [lib for lib, d in digests.items() if d != reference]
    if bad:
        print(f"  WARNING: {', '.join(bad)} returned different data than zarr on {name}: "
              f"{digests}", file=sys.stderr)
    return {
        "times": times,
        "median": {lib: statistics.median(ts) for lib, ts in times.items() if ts},
        "min": {lib: min(ts) for lib, ts in times.items() if ts},
        "cpu_times": cpu,
        "cpu_median": {lib: statistics.median(ts) for lib, ts in cpu.items() if ts},
        "versions": {wk.lib: wk.info["version"] for wk in workers},
        "digests": digests,
        "mismatch": bad,
        "peak": {wk.lib: wk.info.get("peak") for wk in workers},
    }


def check_written(w: Workload, root: str, sizes: Sizes, data: np.ndarray) -> str:
    """zarr-python must read back what zarrx wrote, bit for bit."""
    import zarr

    path = output_path(root, sizes, w.name, "zarrx")
    got = zarr.open_array(path, mode="r")[...]
    expected = data
    if w.existing:  # the filled region (which holds the written one), zeros elsewhere
        expected = np.zeros_like(data)
        expected[_filled(sizes)] = data[_filled(sizes)]
    ok = np.array_equal(got.view(np.uint32), expected.view(np.uint32))
    return "ok" if ok else "MISMATCH"


def profile(lib: str, w: Workload, sizes: Sizes, root: str, repeats: int) -> None:
    """cProfile ``repeats`` runs of one library on one workload, after a warm-up."""
    import cProfile
    import pstats

    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(ThreadPoolExecutor(NCORES))
        if lib == "zarrx":  # everything on the calling thread, where cProfile can see it
            import zarrx

            stack.enter_context(zarrx.config.set(threads=1))
        op, n = make_bench(lib, w, sizes, root, pool)
        op()
        profiler = cProfile.Profile()
        t0 = time.perf_counter()
        profiler.enable()
        for _ in range(repeats):
            op()
        profiler.disable()
        per_op = (time.perf_counter() - t0) / repeats / n
    print(f"\n=== {lib} on {w.name}: {fmt_time(per_op)} per read under the profiler "
          f"({repeats} runs; only the calling thread is profiled: zarrx runs with threads=1)")
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(18)


def fmt_time(t: float | None) -> str:
    if t is None:
        return "—"
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    if t < 1:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def table(results: dict[str, dict[str, Any]], libs: Sequence[str], key: str = "median") -> str:
    """A Markdown table: medians per library, zarrx / best peer, and the floors."""
    peers = [lib for lib in PEERS if lib in libs]
    floors = [f for f in FLOORS if f in libs]
    head = ["workload", *[lib for lib in LIBS if lib in libs]]
    if "zarrx" in libs and peers:
        head.append("zarrx / best peer")
    head += [f"floor: {f}" for f in floors]
    if "zarrx" in libs and "chunks" in floors:
        head.append("zarrx / floor: chunks")
    rows = [head, ["---"] * len(head)]
    for name, res in results.items():
        med = res[key]
        row = [name] + [fmt_time(med.get(lib)) for lib in LIBS if lib in libs]
        if "zarrx" in libs and peers:
            best = min(((med[p], p) for p in peers if p in med), default=None)
            ratio = med["zarrx"] / best[0] if best and "zarrx" in med else None
            row.append(f"{ratio:.2f} ({best[1]})" if ratio is not None and best else "—")
        row += [fmt_time(med.get(f)) for f in floors]
        if "zarrx" in libs and "chunks" in floors:
            fl = med.get("chunks")
            row.append(f"{med['zarrx'] / fl:.2f}" if fl and "zarrx" in med else "—")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = []
    for r in rows:
        cells = [c.ljust(wd) if i == 0 else c.rjust(wd) for i, (c, wd) in
                 enumerate(zip(r, widths))]
        if r[0] == "---":
            cells = ["-" * widths[0]] + ["-" * (wd - 1) + ":" for wd in widths[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine() -> dict[str, str]:
    cpu = platform.processor() or "?"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    return {"cpu": cpu, "nproc": str(NCORES), "python": platform.python_version(),
            "numpy": np.__version__, "platform": platform.platform()}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="workloads:\n" + "\n".join(
                                    f"  {w.name:<14} {w.what}" for w in WORKLOADS.values()))
    p.add_argument("--quick", action="store_true", help="small arrays, 3 repeats (smoke test)")
    p.add_argument("--repeats", type=int, help="timed rounds per workload (default 7; quick 3)")
    p.add_argument("--warmup", type=int, default=2, help="untimed runs per worker (default 2)")
    p.add_argument("--workloads", help="comma-separated subset of the workloads")
    p.add_argument("--libs", help=f"comma-separated subset of {', '.join(LIBS + FLOORS)}")
    p.add_argument("--dir", help="where the stores go (kept and reused); default: a temp dir")
    p.add_argument("--json", help="write every sample and the medians to this file")
    p.add_argument("--profile", metavar="LIB",
                   help="instead of comparing, profile LIB (e.g. zarrx) on the workloads with "
                        "cProfile, in this process, and print where the time goes")
    p.add_argument("-v", "--verbose", action="store_true", help="show the workers' stderr")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--workload", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _subset(text: str | None, known: Sequence[str], what: str) -> list[str]:
    if not text:
        return list(known)
    chosen = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [x for x in chosen if x not in known]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)}; known: {', '.join(known)}")
    return chosen


@contextlib.contextmanager
def data_root(given: str | None) -> Iterator[str]:
    if given:
        os.makedirs(given, exist_ok=True)
        yield os.path.abspath(given)
        return
    root = tempfile.mkdtemp(prefix="zarrx-compare-")
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.worker:
        if not (args.dir and args.workload):
            raise SystemExit("--worker needs --workload and --dir")
        worker(args.worker, args.workload, sizes, args.dir, max(1, args.warmup))
        return
    workloads = _subset(args.workloads, list(WORKLOADS), "workloads")
    libs = _subset(args.libs, LIBS + FLOORS, "libraries")
    repeats = args.repeats or sizes.repeats
    info = machine()
    mib = np.prod(sizes.shape) * 4 / 2**20
    print(f"# {info['cpu']}, nproc {info['nproc']}, Python {info['python']}, "
          f"numpy {info['numpy']}")
    load = os.getloadavg()[0]
    if load > NCORES / 2:
        print(f"# WARNING: load average {load:.1f} on {NCORES} cores: timings will be noisy")
    print(f"# array {sizes.shape} float32 ({mib:.0f} MiB), {repeats} interleaved repeats, "
          f"warm-up {args.warmup}; times are medians (per read for the random workloads)")
    started = time.perf_counter()
    results: dict[str, dict[str, Any]] = {}
    checks: dict[str, str] = {}
    with data_root(args.dir) as root:
        data = make_data(sizes.shape)
        if args.profile:
            for name in workloads:
                ds = DATASETS[WORKLOADS[name].dataset]
                write_dataset(root, sizes, ds, data)
                if WORKLOADS[name].kind == "write" and args.profile in LIBS:
                    create_output(WORKLOADS[name], root, sizes, args.profile, data)
                profile(args.profile, WORKLOADS[name], sizes, root, repeats)
            return
        for name in workloads:
            w = WORKLOADS[name]
            ds = DATASETS[w.dataset]
            t0 = time.perf_counter()
            if write_dataset(root, sizes, ds, data) and not ds.hierarchy:
                check_zarrx_reads(dataset_path(root, sizes, ds.name), data)
                checks[ds.name] = "zarrx reads it bit-exact"
            print(f"{name:<14} {w.what} ...", end="", flush=True, file=sys.stderr)
            results[name] = run_workload(w, libs, args, sizes, root, repeats, data)
            if w.kind == "write" and "zarrx" in results[name]["median"]:
                checks[f"{name} (zarrx output)"] = (
                    "zarr-python reads it " + check_written(w, root, sizes, data))
            print(f" {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    versions: dict[str, str] = {}
    for res in results.values():
        versions.update(res["versions"])
    print("\nWall time (median):\n")
    print(table(results, libs))
    print("\nCPU time, all threads of the worker (median; less disturbed by other load on the "
          "machine):\n")
    print(table(results, libs, key="cpu_median"))
    print()
    for name in workloads:
        print(f"- {name}: {WORKLOADS[name].what}")
    print("\nversions: " + "; ".join(sorted({v for lib, v in versions.items() if lib in LIBS})))
    for what, verdict in checks.items():
        print(f"check: {what}: {verdict}")
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "sizes": sizes.tag, "repeats": repeats,
                       "versions": versions, "checks": checks, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
