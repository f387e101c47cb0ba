"""``sharding_indexed``, both directions: index at the start and the end, several inner and
index codec chains, shards never written, empty inner chunks, edge shards, and zarrx's
partial reads of peers' shards (a small slice fetches only part of the shard)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from tests.interop._peers import (
    BYTES_BE,
    CRC32C,
    DIRECTION_IDS,
    DIRECTIONS,
    EMPTY_ENTRY,
    WRITERS,
    Layout,
    assert_bit_equal,
    blosc,
    check_roundtrip,
    expected_array,
    gzip,
    make_data,
    region_for,
    shard_index,
    stored_chunks,
    transpose,
    zstd,
)

SHAPE = (13, 27)
SHARDS = (4, 10)
CHUNKS = (2, 5)

CASES: dict[str, dict[str, Any]] = {
    "end-bytes": {},
    "start-bytes": {"index_location": "start"},
    "end-big-blosc-crc32c": {
        "serializer": BYTES_BE, "compressors": (blosc("lz4", "bitshuffle"), CRC32C),
    },
    "start-transpose-zstd": {
        "index_location": "start", "filters": (transpose([1, 0]),),
        "compressors": (zstd(3, True),),
    },
    "end-F-gzip": {"order": "F", "compressors": (gzip(5),)},
    "end-index-big-no-crc32c": {"index_codecs": (BYTES_BE,)},
    "start-index-big-crc32c": {
        "index_location": "start", "index_codecs": (BYTES_BE, CRC32C),
        "compressors": (zstd(0, False),),
    },
}

#: Inner chunk (2, 2) of shard (1, 1) is overwritten with the fill value after the write.
FILLED_INNER = (slice(4, 6), slice(10, 15))
#: Reads inside one shard (one element, one inner chunk, a slice across inner chunks).
SHARD_SELECTIONS = ((6, 12), FILLED_INNER, (slice(5, 8), slice(12, 19, 3)), (slice(9, 12), 26))


def layout_for(case: str, dtype: str) -> Layout:
    return Layout(dtype=dtype, shape=SHAPE, chunks=CHUNKS, shards=SHARDS, fill_value=7,
                  **CASES[case])


def check_shards(path: Path, layout: Layout, expected: np.ndarray) -> None:
    """Stored shards are exactly those holding data; an inner chunk is stored exactly when
    it holds a value other than the fill value (in the array's bounds)."""
    per_shard = [s // c for s, c in zip(SHARDS, CHUNKS)]
    shards = stored_chunks(path)
    grid = [range(-(-s // c)) for s, c in zip(SHAPE, SHARDS)]
    fill = np.full((), layout.fill, dtype=layout.np_dtype).tobytes()
    for coords in itertools.product(*grid):
        key = "c/" + "/".join(map(str, coords))
        empty_inner = []
        for inner in itertools.product(*map(range, per_shard)):
            box = tuple(
                slice(o * s + i * c, o * s + (i + 1) * c)
                for o, i, s, c in zip(coords, inner, SHARDS, CHUNKS)
            )
            values = np.ascontiguousarray(expected[box]).reshape(-1)
            empty_inner.append(all(values[j : j + 1].tobytes() == fill for j in range(values.size)))
        if all(empty_inner):
            assert key not in shards, f"shard {key} holds only the fill value but was stored"
            continue
        assert key in shards, f"shard {key} holds data but was not stored"
        index = shard_index(
            shards[key], len(empty_inner), layout.index_location, layout.index_codecs
        )
        for entry, empty in zip(index, empty_inner, strict=True):
            assert (entry == EMPTY_ENTRY) == empty, (key, entry, empty)


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("dtype", ["int32", "float64", "complex64"])
@pytest.mark.parametrize("partial", [True, False], ids=["partial", "full"])
@pytest.mark.parametrize("case", CASES)
def test_sharding(case: str, partial: bool, dtype: str, writer: str, reader: str,
                  path: Path) -> None:
    layout = layout_for(case, dtype)
    fill_inner = np.full((2, 5), layout.fill, dtype=dtype)
    expected = check_roundtrip(
        writer, reader, path, layout, region=region_for(layout) if partial else Ellipsis,
        updates=((FILLED_INNER, fill_inner),),
    )
    check_shards(path, layout, expected)
    if reader == "zarrx":
        array = zarrx.open_array(str(path), mode="r")
        for selection in SHARD_SELECTIONS:
            assert_bit_equal(np.asarray(array[selection]), expected[selection])


class CountingStore(zarrx.storage.LocalStore):
    """A local store that counts the bytes each key returned."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, read_only=True)
        self.read: dict[str, int] = {}

    def _count(self, key: str, value: bytes | None) -> bytes | None:
        if value is not None:
            self.read[key] = self.read.get(key, 0) + len(value)
        return value

    def get(self, key: str, byte_range: Any = None) -> bytes | None:
        return self._count(key, super().get(key, byte_range))

    def get_many(self, requests: Any) -> list[bytes | None]:
        values = super().get_many(requests)
        return [self._count(key, v) for (key, _), v in zip(requests, values)]

    def read_rounds(self, reads: Any) -> None:
        counting = self

        class Counted:  # a reader's answers counted as they arrive
            def __init__(self, key: str, reader: Any) -> None:
                self.key, self.reader = key, reader

            def ranges(self) -> Any:
                return self.reader.ranges()

            def receive(self, values: Any) -> None:
                self.reader.receive([counting._count(self.key, v) for v in values])

            def restart(self) -> None:
                self.reader.restart()

        super().read_rounds([(key, Counted(key, reader)) for key, reader in reads])


@pytest.mark.parametrize("writer", ["zarrx", "zarr", "tensorstore"])
@pytest.mark.parametrize("case", ["end-bytes", "start-bytes", "start-index-big-crc32c"])
def test_partial_shard_read(case: str, writer: str, path: Path) -> None:
    """One element of a shard is read with the index and one inner chunk, not the shard."""
    layout = layout_for(case, "float64")
    data = make_data("float64", SHAPE)
    WRITERS[writer](path, layout, data)
    expected = expected_array(layout, data)
    shard = (path / "c" / "1" / "1").stat().st_size
    for selection in SHARD_SELECTIONS[:2]:
        store = CountingStore(path)
        array = zarrx.open_array(store, mode="r")
        assert_bit_equal(np.asarray(array[selection]), expected[selection])
        assert set(store.read) <= {"zarr.json", "c/1/1"}
        assert store.read["c/1/1"] < shard / 2, (store.read, shard)


@pytest.mark.parametrize(
    ("writer", "updater", "reader"),
    [("zarr", "zarrx", "zarr"), ("tensorstore", "zarrx", "tensorstore"),
     ("zarrx", "zarr", "zarrx"), ("zarrx", "tensorstore", "zarrx")],
    ids=lambda v: v,
)
@pytest.mark.parametrize("case", ["end-bytes", "start-transpose-zstd", "start-index-big-crc32c"])
def test_sharding_mixed_writers(case: str, writer: str, updater: str, reader: str,
                                path: Path) -> None:
    """Another library rewrites part of the shards (and empties one inner chunk)."""
    layout = layout_for(case, "uint16")
    update = make_data("uint16", (5, 9), seed=9)
    fill_inner = np.full((2, 5), layout.fill, dtype="uint16")
    expected = check_roundtrip(
        writer, reader, path, layout, region=region_for(layout), updater=updater,
        updates=(((slice(3, 8), slice(8, 17)), update), (FILLED_INNER, fill_inner)),
    )
    check_shards(path, layout, expected)
