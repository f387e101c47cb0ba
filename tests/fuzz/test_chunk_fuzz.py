"""Fuzzed chunk bytes, for every codec chain: truncation at every offset, every single-bit
flip, appended garbage, empty and random values, shard indexes pointing outside the shard.

Reading a corrupted chunk must raise :class:`zarrx.errors.CodecError` or, where nothing in
the chain can tell, return data of the right shape and dtype: never another exception
type, a crash or a large allocation. With ``crc32c`` covering the bytes, every single-bit
flip must be detected.

Each chain is fuzzed in a child process (the children run side by side) whose address
space is capped with ``RLIMIT_AS`` at 256 MiB above its set-up (a decoder that trusts a
size in the data gets ``MemoryError`` there, which counts as a failure, instead of taking
the machine's memory) and whose peak resident size may not grow by more than 64 MiB. A
crash of the child (a segfault in a C decoder) fails the test and names the last case
read. Hostile size fields are also checked in process with ``tracemalloc``.
"""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
import tracemalloc
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError
from zarrx.storage import LocalStore, MemoryStore

ROOT = Path(__file__).resolve().parents[2]
SHAPE = (8, 6)
CHUNKS = (4, 3)
KEY = "c/0/0"  # the chunk (or shard) that gets corrupted
EMPTY = 2**64 - 1
#: Largest traced allocation peak of one read of a corrupted small array.
PEAK_LIMIT = 1 << 20
#: Address space a worker may add after its set-up: a larger allocation fails.
AS_HEADROOM = 256 << 20
#: Most a worker's peak resident size may grow over all its cases.
RSS_LIMIT = 64 << 20

ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
CRC = {"name": "crc32c"}
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def _sharding(index_codecs=None, inner=None, location="end"):
    config = {"chunk_shape": [2, 3], "codecs": inner or [BYTES], "index_location": location}
    if index_codecs is not None:
        config["index_codecs"] = index_codecs
    return {"name": "sharding_indexed", "configuration": config}


def _chain(dtype, detect=None, **kwargs):
    return kwargs, dtype, detect


# name -> (create_array keywords, dtype, what must be detected: any change of "all" bytes
# (a checksum over them), of the shard "index", of the "size" only, or nothing (None))
CHAINS = {
    "bytes": _chain("i2", "size", compressors=None),
    "bytes-big-f8": _chain("f8", "size", serializer={"name": "bytes", "configuration": {
        "endian": "big"}}, compressors=None),
    "gzip": _chain("i4", compressors=[{"name": "gzip", "configuration": {"level": 5}}]),
    "zstd": _chain("i4", compressors=[ZSTD]),
    "zstd-checksum": _chain("u2", compressors=[{"name": "zstd", "configuration": {
        "level": 3, "checksum": True}}]),
    "blosc-lz4": _chain("f4", compressors=[{"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]),
    "blosc-zstd-bitshuffle": _chain("i2", compressors=[{"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 2,
        "blocksize": 0}}]),
    "crc32c": _chain("i4", "all", compressors=[CRC]),
    "zstd+crc32c": _chain("i4", "all", compressors=[ZSTD, CRC]),
    "transpose+bytes+zstd": _chain("u4", filters=[{"name": "transpose", "configuration": {
        "order": [1, 0]}}], compressors=[ZSTD]),
    "sharding": _chain("i2", "index", serializer=_sharding(), compressors=None),
    "sharding-crc32c-inner": _chain("i2", "all", serializer=_sharding(inner=[BYTES, CRC]),
                                    compressors=None),
    "sharding-index-start": _chain("i4", "index", serializer=_sharding(location="start"),
                                   compressors=None),
    "sharding-no-index-crc": _chain("i2", serializer=_sharding(index_codecs=[BYTES]),
                                    compressors=None),
    "sharding-zstd-inner": _chain("i4", "index", serializer=_sharding(inner=[BYTES, ZSTD]),
                                  compressors=None),
    "vlen-utf8": _chain(str, serializer={"name": "vlen-utf8"}, compressors=None),
    "vlen-utf8+zstd": _chain(str, serializer={"name": "vlen-utf8"}, compressors=[ZSTD]),
}
#: Inner chunks per shard (CHUNKS / the inner chunk_shape [2, 3]).
INNER = (CHUNKS[0] // 2) * (CHUNKS[1] // 3)


def _values(dtype) -> np.ndarray:
    rng = np.random.default_rng(7)
    if dtype is str:
        words = ["", "a", "zarr", "é", "日本", "x" * 9]
        return np.array([[words[(i * 7 + j) % 6] + str(i) for j in range(SHAPE[1])]
                         for i in range(SHAPE[0])], dtype=np.dtypes.StringDType())
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(SHAPE).astype(dt)
    # a few repeats so compressors have something to do, and no zeros (the fill value)
    return (rng.integers(1, 50, SHAPE) * (1 + np.arange(SHAPE[1]) % 2)).astype(dt)


def _make(name: str, store) -> tuple[zarrx.Array, np.ndarray]:
    kwargs, dtype, _ = CHAINS[name]
    a = zarrx.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype=dtype, **kwargs)
    values = _values(dtype)
    a[...] = values
    np.testing.assert_array_equal(a[...], values)
    return a, values


def _index_region(name: str, shard: bytes) -> range:
    """Byte offsets of a shard's index (16 bytes per inner chunk, + crc32c)."""
    size = INNER * 16 + (0 if "no-index-crc" in name else 4)
    if "index-start" in name:
        return range(size)
    return range(len(shard) - size, len(shard))


def _shard_index_attacks(name: str, shard: bytes) -> list[tuple[str, bytes, bool]]:
    """Shards whose index (with a valid checksum) points outside the shard, into the
    index, or at sizes that overflow; and whether the entry must be refused."""
    from zarrx._core.steps import crc32c

    has_crc = "no-index-crc" not in name
    region = _index_region(name, shard)
    entries = list(struct.iter_unpack("<QQ", shard[region.start:region.start + INNER * 16]))
    n = len(shard)
    cases = {
        "offset past the end": (n + 10, entries[0][1]),
        "offset at the end": (n, 1),
        "size past the end": (entries[0][0], n + 1),
        "offset+size wraps 2**64": (2**64 - 8, 16),
        "offset 2**63": (2**63, entries[0][1]),
        "size 2**63": (entries[0][0], 2**63),
        "huge size": (0, 2**64 - 2),
        "offset empty size not": (EMPTY, entries[0][1]),
        "size empty offset not": (entries[0][0], EMPTY),
        "zero size": (entries[0][0], 0),
        "short size": (entries[0][0], 5),
        "long size inside": (0, entries[0][1] + 1),
        "into the index": (region.start, entries[0][1]),
    }
    out = []
    for label, entry in cases.items():
        for slot in (0, INNER - 1):
            table = list(entries)
            table[slot] = entry
            raw = b"".join(struct.pack("<QQ", o, s) for o, s in table)
            if has_crc:
                raw += crc32c(raw).to_bytes(4, "little")
            # an entry reaching past the end of the shard is always an error
            outside = entry != (EMPTY, entries[0][1]) and entry[0] + entry[1] > n
            out.append((f"index {label} (slot {slot})",
                        shard[:region.start] + raw + shard[region.stop:], outside))
    return out


def _cases(name: str, original: bytes) -> list[tuple[str, bytes, bool]]:
    """(label, corrupted value, whether reading it must raise)."""
    _, _, detect = CHAINS[name]
    rng = random.Random(zlib.crc32(name.encode()))
    cases: list[tuple[str, bytes, bool]] = [("empty value", b"", detect is not None)]
    for cut in range(1, len(original)):
        cases.append((f"truncated to {cut}", original[:cut], detect is not None))
    protected = (range(len(original)) if detect == "all"
                 else _index_region(name, original) if detect == "index" else range(0))
    for bit in range(len(original) * 8):
        flipped = bytearray(original)
        flipped[bit // 8] ^= 1 << (bit % 8)
        cases.append((f"bit {bit} flipped", bytes(flipped), bit // 8 in protected))
    # Bytes after a shard's data are legal when its index is at the start; a shard followed
    # by a copy of itself is a valid shard (its index at the end points into the copy).
    for extra in (b"\0", b"\xff" * 7, bytes(rng.randrange(256) for _ in range(300)),
                  b"\0" * 4096, original):
        legal = "index-start" in name or (name.startswith("sharding") and extra == original)
        cases.append((f"{len(extra)} bytes appended", original + extra,
                      detect is not None and not legal))
    for size in (1, 3, 4, 15, 16, 17, len(original) - 1, len(original), len(original) + 1, 600):
        for _ in range(4):
            junk = bytes(rng.randrange(256) for _ in range(size))
            detectable = detect in ("all", "index") or (
                detect == "size" and size != len(original))
            cases.append((f"{size} random bytes", junk, detectable))
    for prefix in (b"\x28\xb5\x2f\xfd", b"\x1f\x8b\x08\x00", b"\x02\x01\x21\x04"):
        # plausible magic numbers (zstd, gzip, blosc) followed by hostile size fields
        for filler in (b"\xff" * 28, b"\x7f" * 28, b"\x00" * 28):
            cases.append((f"magic {prefix.hex()} + {filler[:1].hex()}", prefix + filler,
                          detect is not None))
    if name.startswith("sharding"):
        cases += _shard_index_attacks(name, original)
    return cases


def _read_all(a: zarrx.Array) -> list[np.ndarray]:
    """Several reads touching the corrupted chunk: the whole array, one element, a part
    (for sharding: the partial-decode path with byte ranges), a fancy selection."""
    return [
        a[...],
        np.asarray(a[0, 0]).reshape(()),
        a[1:3, 1:2],
        a.oindex[[0, 3], [2]],
        a.vindex[[3, 5], [0, 4]],
    ]


EXPECTED_SHAPES = [SHAPE, (), (2, 1), (2, 1), (2,)]


def _worker(name: str, store_kind: str, tmp: str) -> None:
    """Child process: fuzz one chain, print a JSON report on stdout (last line)."""
    import resource

    zarrx.config.set(threads=1)  # the same decode paths, without thread hand-offs
    store = MemoryStore() if store_kind == "memory" else LocalStore(os.path.join(tmp, name))
    a, values = _make(name, store)
    original = store.get(KEY)
    assert original is not None
    cases = _cases(name, original)
    for _ in range(2):  # warm caches before the limits are measured
        _read_all(a)
    with open("/proc/self/statm") as f:
        vm = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (vm + AS_HEADROOM, vm + AS_HEADROOM))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = {"cases": len(cases), "errors": 0, "returned": 0, "bad": [], "undetected": []}
    for label, raw, must_detect in cases:
        print(label, file=sys.stderr, flush=True)  # the last line names a crashing case
        store.set(KEY, raw)
        try:
            results = _read_all(a)
        except CodecError:
            report["errors"] += 1
            continue
        except BaseException as e:  # MemoryError (RLIMIT_AS) included
            report["bad"].append(f"{label}: {type(e).__module__}.{type(e).__name__}: {e}")
            continue
        report["returned"] += 1
        if must_detect:
            report["undetected"].append(label)
        for got, shape in zip(results, EXPECTED_SHAPES):
            if shape == () and values.dtype.kind == "T":
                ok = isinstance(got.item(), str)
            else:
                ok = isinstance(got, np.ndarray) and got.shape == shape and (
                    got.dtype == values.dtype)
            if not ok:
                report["bad"].append(f"{label}: returned {got!r}, expected shape {shape}")
    report["rss_growth"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                            - rss_before) * 1024
    store.set(KEY, original)  # and the array reads back intact
    np.testing.assert_array_equal(a[...], values)
    print(json.dumps(report))


def _run(name: str, store_kind: str, tmp: Path) -> dict:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from tests.fuzz.test_chunk_fuzz import _worker; "
            "_worker(sys.argv[2], sys.argv[3], sys.argv[4])")
    env = {**os.environ, "MALLOC_ARENA_MAX": "2", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "TMPDIR": str(tmp)}  # anything temporary: in tmp
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT), name, store_kind, str(tmp)],
                          capture_output=True, text=True, env=env, timeout=300)
    tail = "\n".join(proc.stderr.splitlines()[-15:])
    assert proc.returncode == 0, f"fuzz worker for {name!r} died ({proc.returncode}):\n{tail}"
    return json.loads(proc.stdout.splitlines()[-1])


LOCAL = ["sharding", "sharding-no-index-crc", "zstd+crc32c"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Every worker, started at once and run side by side (one per core)."""
    tmp = tmp_path_factory.mktemp("chunk-fuzz")
    jobs = [(name, "memory") for name in CHAINS] + [(name, "local") for name in LOCAL]
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
    futures = {job: pool.submit(_run, *job, tmp) for job in jobs}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def _check(report: dict, name: str) -> None:
    assert report["bad"] == [], f"{len(report['bad'])} bad outcomes: {report['bad'][:10]}"
    assert report["undetected"] == [], (
        f"{len(report['undetected'])} corruptions not detected: {report['undetected'][:10]}")
    assert report["rss_growth"] < RSS_LIMIT, report
    assert report["errors"] > 0, report  # the corruptions were seen


@pytest.mark.parametrize("name", list(CHAINS))
def test_corrupted_chunks(name, reports):
    _check(reports[(name, "memory")].result(), name)


@pytest.mark.parametrize("name", LOCAL)
def test_corrupted_chunks_local_store(name, reports):
    # byte ranges past the end of a file, and partial shard reads through the file system
    _check(reports[(name, "local")].result(), name)


def test_every_bit_flip_detected_with_crc32c():
    """In process, explicitly: bytes + crc32c, each bit of a chunk flipped in turn."""
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(5,), chunks=(5,), dtype="u2", compressors=[CRC])
    a[...] = np.arange(1, 6, dtype="u2")
    original = store.get("c/0")
    assert len(original) == 10 + 4
    for bit in range(len(original) * 8):
        flipped = bytearray(original)
        flipped[bit // 8] ^= 1 << (bit % 8)
        store.set("c/0", bytes(flipped))
        with pytest.raises(CodecError, match="c/0"):
            a[...]
    store.set("c/0", original)
    np.testing.assert_array_equal(a[...], np.arange(1, 6))


def test_every_bit_flip_of_a_default_shard_index_is_detected():
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(4,), chunks=(1,), shards=(4,), dtype="u1",
                           compressors=None, fill_value=0)
    a[...] = np.array([1, 2, 3, 4], dtype="u1")
    original = store.get("c/0")
    index_size = 4 * 16 + 4
    assert len(original) == 4 + index_size
    for bit in range(4 * 8, len(original) * 8):
        flipped = bytearray(original)
        flipped[bit // 8] ^= 1 << (bit % 8)
        store.set("c/0", bytes(flipped))
        for selection in (Ellipsis, 2, slice(1, 3)):
            with pytest.raises(CodecError):
                a[selection]


def test_absurd_sizes_do_not_allocate():
    """zstd and blosc headers claiming huge outputs are refused before allocating."""
    store = MemoryStore()
    z = zarrx.create_array(store, "z", shape=(16,), chunks=(16,), dtype="u1",
                           compressors=[ZSTD])
    b = zarrx.create_array(store, "b", shape=(16,), chunks=(16,), dtype="u1",
                           compressors=[{"name": "blosc", "configuration": {"cname": "lz4"}}])
    # a zstd frame (single segment, 8-byte content size of 64 GiB) with one RLE block
    frame = struct.pack("<IB", 0xFD2FB528, 0xE0) + (64 << 30).to_bytes(8, "little")
    frame += ((16 << 3) | (1 << 1) | 1).to_bytes(3, "little") + b"\x07"
    blosc = bytes([2, 1, 0x01, 1]) + struct.pack("<III", 2**31, 0, 32) + b"\0" * 16
    tracemalloc.start()
    try:
        for array, raw in ((z, frame), (b, blosc)):
            store.set(f"{array.path}/c/0", raw)
            tracemalloc.reset_peak()
            with pytest.raises(CodecError):
                array[...]
            assert tracemalloc.get_traced_memory()[1] < PEAK_LIMIT
    finally:
        tracemalloc.stop()
