"""Every codec configuration, both directions: zarrx writes → peers read, peers write → zarrx.

Arrays are 3-d with chunks that do not divide the shape, filled with compressible values
(so compressors really compress and blosc does not store its input verbatim), written in
part (missing chunks read as the fill value) and then reopened and partly overwritten
(read-modify-write of stored, encoded chunks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.interop._peers import (
    BYTES_BE,
    BYTES_LE,
    CRC32C,
    DIRECTION_IDS,
    DIRECTIONS,
    Layout,
    blosc,
    check_roundtrip,
    gzip,
    make_data,
    region_for,
    stored_chunks,
    transpose,
    zstd,
)

SHAPE = (10, 14, 18)
CHUNKS = (4, 6, 8)
DTYPES = ("int8", "uint16", "float64")
BLOSC_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "zlib")
BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")

#: id → Layout keywords (filters, serializer, compressors, order) and whether chunks shrink.
CASES: dict[str, tuple[dict[str, Any], bool]] = {
    "bytes-little": ({"serializer": BYTES_LE}, False),
    "bytes-big": ({"serializer": BYTES_BE}, False),
    "order-F": ({"order": "F"}, False),
    "order-F-bytes-big": ({"order": "F", "serializer": BYTES_BE}, False),
    "transpose-201": ({"filters": (transpose([2, 0, 1]),)}, False),
    "transpose-102-then-F": ({"filters": (transpose([1, 0, 2]),), "order": "F"}, False),
    "crc32c": ({"compressors": (CRC32C,)}, False),
    **{f"gzip-{level}": ({"compressors": (gzip(level),)}, level > 0) for level in (0, 1, 5, 9)},
    **{
        f"zstd-{level}-{'checksum' if checksum else 'nochecksum'}": (
            {"compressors": (zstd(level, checksum),)}, True
        )
        for level, checksum in ((0, False), (0, True), (3, True), (-5, False), (19, False))
    },
    **{
        f"blosc-{cname}-{shuffle}": ({"compressors": (blosc(cname, shuffle),)}, True)
        for cname in BLOSC_CNAMES
        for shuffle in BLOSC_SHUFFLES
    },
    # A typesize other than the item size (tensorstore writes typesize 4 when told so).
    "blosc-typesize-4": (
        {"compressors": ({"name": "blosc", "configuration": {
            "typesize": 4, "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}},)},
        True,
    ),
    "blosc-clevel0": ({"compressors": (blosc("lz4", "shuffle", clevel=0),)}, False),
    "blosc-clevel9-blocksize256": (
        {"compressors": (blosc("zstd", "bitshuffle", clevel=9, blocksize=256),)}, True
    ),
    "blosc-blocksize64-big": (
        {"serializer": BYTES_BE, "compressors": (blosc("lz4", "shuffle", blocksize=64),)}, True
    ),
    "big-blosc-crc32c": (
        {"serializer": BYTES_BE, "compressors": (blosc("zstd", "bitshuffle"), CRC32C)}, True
    ),
    "transpose-big-gzip-crc32c": (
        {"filters": (transpose([2, 0, 1]),), "serializer": BYTES_BE,
         "compressors": (gzip(6), CRC32C)}, True
    ),
    "zstd-crc32c": ({"compressors": (zstd(5, False), CRC32C)}, True),
    "crc32c-zstd": ({"compressors": (CRC32C, zstd(1, True))}, True),
    "gzip-zstd": ({"compressors": (gzip(1), zstd(1, False))}, True),
    "F-blosc-noshuffle-crc32c-gzip": (
        {"order": "F", "compressors": (blosc("blosclz", "noshuffle"), CRC32C, gzip(2))}, True
    ),
}




def _case_dtypes() -> list[Any]:
    """Every case with every dtype, except the 15 blosc cname-by-shuffle cases: each takes one
    dtype, rotated so that every cname and every shuffle still meets all three item sizes."""
    out = []
    for case in CASES:
        dtypes = DTYPES
        for i, cname in enumerate(BLOSC_CNAMES):
            for j, shuffle in enumerate(BLOSC_SHUFFLES):
                if case == f"blosc-{cname}-{shuffle}":
                    dtypes = (DTYPES[(i + j) % len(DTYPES)],)
        out += [pytest.param(case, dtype, id=f"{case}-{dtype}") for dtype in dtypes]
    return out


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize(("case", "dtype"), _case_dtypes())
def test_codecs(case: str, dtype: str, writer: str, reader: str, path: Path) -> None:
    config, compresses = CASES[case]
    layout = Layout(dtype=dtype, shape=SHAPE, chunks=CHUNKS, fill_value=3, **config)
    data = make_data(dtype, SHAPE, compressible=True)
    update = make_data(dtype, (3, 5, 6), seed=1)
    check_roundtrip(
        writer, reader, path, layout, data, region=region_for(layout),
        updates=(((slice(2, 5), slice(4, 9), slice(5, 11)), update),),
    )
    chunks = stored_chunks(path)
    # The last chunk of every axis was never written; the others were.
    assert 0 < len(chunks) < np.prod([-(-s // c) for s, c in zip(SHAPE, CHUNKS)])
    raw = np.prod(CHUNKS) * np.dtype(dtype).itemsize
    if compresses:
        assert sum(map(len, chunks.values())) < raw * len(chunks)


#: (writer, updater, reader): one library writes, another overwrites a region (decoding and
#: re-encoding the first one's chunks), and the first reads the result.
MIXED = (
    ("zarr", "zarrx", "zarr"),
    ("tensorstore", "zarrx", "tensorstore"),
    ("zarrx", "zarr", "zarrx"),
    ("zarrx", "tensorstore", "zarrx"),
)
MIXED_CASES = (
    "bytes-big", "order-F-bytes-big", "transpose-201", "zstd-3-checksum", "blosc-zstd-bitshuffle",
    "big-blosc-crc32c", "transpose-big-gzip-crc32c",
)


@pytest.mark.parametrize(("writer", "updater", "reader"), MIXED,
                         ids=["-".join(m) for m in MIXED])
@pytest.mark.parametrize("case", MIXED_CASES)
def test_codecs_mixed_writers(case: str, writer: str, updater: str, reader: str,
                              path: Path) -> None:
    layout = Layout(dtype="float32", shape=SHAPE, chunks=CHUNKS, fill_value=-1.5,
                    **CASES[case][0])
    update = make_data("float32", (7, 5, 10), seed=2)
    check_roundtrip(
        writer, reader, path, layout, make_data("float32", SHAPE, compressible=True),
        region=region_for(layout), updates=(((slice(1, 8), slice(4, 9), slice(5, 15)), update),),
        updater=updater,
    )
