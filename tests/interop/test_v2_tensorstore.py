"""Zarr v2 between zarrx and tensorstore's ``zarr`` (v2) driver, both ways, bit for bit.

Each round trip writes part of an array with one library (so some chunks are never stored,
some are partly written, and edge chunks are cut by the array's bounds), checks the
``.zarray`` the writer recorded and the chunk keys it stored, and reads the whole array with
the other library, comparing dtype, shape, fill value and bytes (NaN payloads and -0.0
included). Then the reader updates a region across stored, partly stored and missing chunks
(a read-modify-write of the writer's chunks) and the writer reads the result back.

What tensorstore 0.1.86's ``zarr`` driver supports, and so what is tested against it here:

- Data types: ``|b1``, ``|i1``, ``|u1``, ``i2``..``u8``, ``f2``/``f4``/``f8`` and ``c8``/``c16``
  in both byte orders; fixed-size ``|S<n>`` and ``|V<n>`` (exposed as an extra dimension of
  ``char`` / ``byte``); structured dtypes, opened one ``field`` at a time, with subarray fields
  (extra dimensions). It rejects ``M8``/``m8``, ``U``, ``|O`` and nested structured dtypes:
  :func:`test_tensorstore_limitations` pins that (a tensorstore that gains one fails it, which
  prompts a real round trip here); zarr-python covers those types in ``tests/formats``.
- tensorstore's Python binding maps ``char`` / ``byte`` to the zero-sized NumPy ``|S0`` /
  ``|V0``, so such arrays cannot be read into NumPy: :func:`ts_read` makes tensorstore copy
  them (decoding the other library's chunks) into an uncompressed single-chunk array whose
  chunk file is parsed here by hand. Writing them from ``S1`` / ``V1`` arrays works.
- Compressors: ``blosc`` (cnames ``blosclz``, ``lz4``, ``lz4hc``, ``zlib``, ``zstd`` and
  ``snappy``; shuffle -1, 0, 1, 2; clevel; blocksize), ``zlib``, ``gzip``, ``bz2``, ``zstd`` and
  ``null``. Not ``lz4`` or ``lzma`` (pinned). zarrx's c-blosc, like numcodecs', is built without
  snappy: tensorstore's blosc/snappy arrays must fail to open in zarrx with a clear error.
- Filters: none at all (``"filters are not supported"``, pinned).
- A ``null`` fill value: tensorstore writes and reads it (as zeros); zarrx, like zarr-python 3,
  records ``fill_value=None`` as the zero of the data type.

The expected ``.zarray`` values and fill values are decoded here by hand from the v2 spec, not
with zarrx, so that a wrong encoder in zarrx cannot hide behind itself.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tensorstore as ts

import zarrx
from tests.interop._peers import make_data

# -- the cases ----------------------------------------------------------------------------

#: Every non-structured v2 dtype tensorstore supports, in both byte orders where there are two.
NUMERIC = (
    "|b1", "|i1", "|u1",
    *(f"{e}{t}" for t in ("i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16")
      for e in "<>"),
)

#: A non-zero fill value (its ``.zarray`` JSON) for each kind of data type.
NONZERO_FILL = {"b": True, "i": -7, "u": 200, "f": -2.5, "c": [1.5, "-Infinity"]}

DIRECTIONS = (("zarrx", "tensorstore"), ("tensorstore", "zarrx"))
DIRECTION_IDS = [f"{w}->{r}" for w, r in DIRECTIONS]


def b64(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode()


@dataclasses.dataclass(frozen=True)
class Case:
    """One v2 array configuration, in ``.zarray`` JSON terms."""

    dtype: Any = "<f8"  # the ``.zarray`` dtype: a string or a structured list
    shape: tuple[int, ...] = (9, 11)
    chunks: tuple[int, ...] = (4, 3)
    compressor: dict[str, Any] | None = None
    fill: Any = None  # the ``.zarray`` fill_value (None: null)
    order: str = "C"
    separator: str = "."

    @property
    def stored(self) -> np.dtype:
        """The dtype as stored (byte order of the ``.zarray``)."""
        if isinstance(self.dtype, str):
            return np.dtype(self.dtype)
        return np.dtype([(f[0], f[1], tuple(f[2])) if len(f) > 2 else (f[0], f[1])
                         for f in self.dtype])

    @property
    def native(self) -> np.dtype:
        """What a reader hands out: the stored dtype in the machine's byte order."""
        return self.stored.newbyteorder("=")

    @property
    def fields(self) -> tuple[str, ...] | tuple[None]:
        """The fields tensorstore opens one at a time (``None``: not structured)."""
        return self.stored.names or (None,)

    @property
    def fill_scalar(self) -> np.ndarray:
        """The fill value as a 0-d array of :attr:`native` (null: zeros)."""
        return parse_fill(self.stored, self.fill)

    @property
    def region(self) -> tuple[slice, ...]:
        """The first write: from 1 to before the last chunk of every axis, so the last chunks
        are never written and the others are cut through."""
        return tuple(
            slice(1, s - c) if s > c + 1 else slice(None) for s, c in zip(self.shape, self.chunks)
        )

    @property
    def update(self) -> tuple[slice, ...]:
        """The second write: the upper half, across stored, partial and missing chunks."""
        return tuple(slice(s // 2, s) for s in self.shape)

    def metadata(self) -> dict[str, Any]:
        """The metadata given to tensorstore (and expected in every ``.zarray``)."""
        return {
            "zarr_format": 2,
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": self.dtype,
            "compressor": self.compressor,
            "fill_value": self.fill,
            "order": self.order,
            "filters": None,
            "dimension_separator": self.separator,
        }


# -- fill values, decoded by hand ---------------------------------------------------------

_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def parse_fill(stored: np.dtype, value: Any) -> np.ndarray:
    """A v2 JSON fill value as a 0-d array of the native dtype."""
    native = stored.newbyteorder("=")
    if value is None:
        return np.zeros((), native)
    if stored.fields is not None or stored.kind in "SV":
        raw = base64.standard_b64decode(value)
        assert len(raw) == stored.itemsize, (value, stored)
        return np.frombuffer(raw, stored).astype(native).reshape(())
    if stored.kind == "c":
        out = np.zeros((), native)
        out.real, out.imag = (_SPECIAL.get(v, v) for v in value)
        return out
    if stored.kind == "f":
        return np.array(_SPECIAL.get(value, value), native)
    return np.array(value, native)


# -- data ---------------------------------------------------------------------------------

def values(dtype: np.dtype, shape: tuple[int, ...], seed: int, compressible: bool) -> np.ndarray:
    """Data of the native ``dtype``: every value class of numeric types (NaN payloads, ±inf,
    -0.0, subnormals, extremes), random bytes (zeros included) for ``S``/``V``, and so on for
    each field of a structured dtype."""
    rng = np.random.default_rng(seed)
    if dtype.fields is not None:
        out = np.zeros(shape, dtype)
        for i, name in enumerate(dtype.names):
            sub = dtype.fields[name][0]
            out[name] = values(sub.base, shape + sub.shape, seed + 100 * i + 1, compressible)
        return out
    if dtype.kind in "SV":
        raw = rng.integers(0, 256, (*shape, dtype.itemsize), dtype="u1")
        raw[rng.random(raw.shape) < 0.3] = 0  # trailing and embedded NULs
        return np.ascontiguousarray(raw).view(dtype).reshape(shape)
    return make_data(dtype.name, shape, seed, compressible=compressible)


def expected_after(case: Case, *writes: tuple[tuple[slice, ...], np.ndarray]) -> np.ndarray:
    expected = np.full(case.shape, case.fill_scalar, case.native)
    for region, data in writes:
        expected[region] = data[region]
    return expected


def as_chars(array: np.ndarray) -> np.ndarray:
    """An ``S<n>``/``V<n>`` array as tensorstore's ``char``/``byte`` array (one more axis)."""
    n = array.dtype.itemsize
    raw = np.ascontiguousarray(array).view("u1").reshape(*array.shape, n)
    return raw.view("S1" if array.dtype.kind == "S" else "V1")


def assert_same(actual: Any, expected: np.ndarray, what: str = "") -> None:
    """Same dtype, shape and bytes (so NaN payloads, -0.0 and padding of ``S`` included)."""
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype, (what, actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    a = np.ascontiguousarray(actual).reshape(-1)
    e = np.ascontiguousarray(expected).reshape(-1)
    if a.tobytes() != e.tobytes():
        unit = np.dtype(f"V{e.dtype.itemsize}")
        bad = np.flatnonzero(a.view(unit) != e.view(unit))
        raise AssertionError(
            f"{what}: {bad.size} items differ in their bytes, first at flat indices "
            f"{bad[:8].tolist()}: got {a[bad[:3]]!r}, expected {e[bad[:3]]!r}"
        )


# -- tensorstore --------------------------------------------------------------------------

def ts_spec(path: Path, field: str | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": "zarr", "kvstore": {"driver": "file", "path": str(path)}}
    if field is not None:
        spec["field"] = field
    return {**spec, **extra}


def ts_write(path: Path, case: Case, data: np.ndarray, region: Any, *, create: bool) -> None:
    """Create (or open) with tensorstore and write ``data[region]``, one field at a time."""
    for i, field in enumerate(case.fields):
        if create and i == 0:
            spec = ts_spec(path, field, metadata=case.metadata())
            store = ts.open(spec, create=True).result()
        else:
            store = ts.open(ts_spec(path, field), open=True, write=True).result()
        part = data if field is None else data[field]
        part = np.array(part[region], order="C")  # (0-d stays 0-d)
        if part.dtype.kind in "SV":
            part = as_chars(part)
        store[region].write(part).result()


def ts_read_field(path: Path, case: Case, field: str | None) -> np.ndarray:
    store = ts.open(ts_spec(path, field), open=True, read=True).result()
    dtype = case.native if field is None else case.native.fields[field][0]
    inner = dtype.shape + ((dtype.itemsize,) if dtype.base.kind in "SV" else ())
    assert store.shape == case.shape + inner
    if store.rank:  # tensorstore reports no chunk shape for rank 0
        assert tuple(store.chunk_layout.read_chunk.shape) == case.chunks + inner
    if store.dtype not in (ts.char, ts.byte):
        fill = store.fill_value
        assert_same(
            fill if fill is not None else np.zeros(dtype.shape, dtype.base),
            np.asarray(case.fill_scalar if field is None else case.fill_scalar[field]),
            f"tensorstore's fill value of field {field}",
        )
        assert store.dtype.numpy_dtype == dtype.base
        return store.read().result()
    # NumPy cannot hold tensorstore's char/byte (|S0), not even its fill value: tensorstore
    # copies the data (missing chunks as its fill value) into an uncompressed array of one
    # chunk, whose file is then the C-ordered bytes.
    assert not dtype.shape, "a subarray of S/V is not exercised"
    copy = path.parent / f"{path.name}-copy-{field}"
    target = ts.open(
        ts_spec(copy, store_data_equal_to_fill_value=True, metadata={
            "shape": list(case.shape), "chunks": list(case.shape), "dtype": dtype.str,
            "compressor": None, "order": "C", "fill_value": None,
        }),
        create=True, delete_existing=True,
    ).result()
    target.write(store).result()
    raw = (copy / (".".join("0" * len(case.shape)) or "0")).read_bytes()
    return np.frombuffer(raw, dtype).reshape(case.shape)


def ts_read(path: Path, case: Case) -> np.ndarray:
    if case.fields == (None,):
        return ts_read_field(path, case, None)
    out = np.empty(case.shape, case.native)
    for field in case.fields:
        out[field] = ts_read_field(path, case, field)
    return out


# -- zarrx --------------------------------------------------------------------------------

def zarrx_write(path: Path, case: Case, data: np.ndarray, region: Any, *, create: bool) -> None:
    if create:
        array = zarrx.create_array(
            str(path), shape=case.shape, dtype=case.stored, chunks=case.chunks,
            compressors=case.compressor,
            fill_value=None if case.fill is None else case.fill_scalar[()],
            order=case.order, zarr_format=2,
            chunk_key_encoding={"name": "v2", "configuration": {"separator": case.separator}},
        )
    else:
        array = zarrx.open_array(str(path), mode="r+")
    # Given in the stored byte order, so that zarrx converts on the way in.
    array[region] = data[region].astype(case.stored)


def zarrx_read(path: Path, case: Case) -> np.ndarray:
    array = zarrx.open_array(str(path), mode="r")
    assert array.zarr_format == 2
    assert array.shape == case.shape
    assert array.chunks == case.chunks
    assert array.dtype == case.native, (array.dtype, case.native)
    assert array.metadata.order == case.order
    assert_same(np.asarray(array.fill_value, case.native), case.fill_scalar, "zarrx's fill value")
    return np.asarray(array[...])


WRITERS = {"zarrx": zarrx_write, "tensorstore": ts_write}
READERS = {"zarrx": zarrx_read, "tensorstore": ts_read}


# -- what is stored -----------------------------------------------------------------------

def check_zarray(path: Path, case: Case, writer: str) -> None:
    """The ``.zarray`` holds the case, in the v2 spec's encoding."""
    doc = json.loads((path / ".zarray").read_text())
    want = case.metadata()
    for key in ("zarr_format", "shape", "chunks", "order", "filters", "dimension_separator"):
        assert doc.get(key) == want[key], (key, doc.get(key), want[key])
    assert doc["dtype"] == want["dtype"], (doc["dtype"], want["dtype"])
    check_compressor(doc["compressor"], case, writer)
    if case.fill is None and writer == "zarrx":
        # zarrx records fill_value=None as the zero of the type (zarr-python 3 does so
        # for numbers, and writes null for records).
        assert doc["fill_value"] is not None
    else:
        assert doc["fill_value"] == case.fill, (doc["fill_value"], case.fill)
    assert_same(parse_fill(case.stored, doc["fill_value"]), case.fill_scalar, "fill_value")


def check_compressor(written: Any, case: Case, writer: str) -> None:
    requested = case.compressor
    if requested is None or requested.get("id") != "blosc":
        assert written == requested, (written, requested)
        return
    want = {"cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0, **requested}
    assert written.get("typesize") is None, written  # not a v2 (numcodecs) blosc key
    shuffle = written["shuffle"]
    if writer == "zarrx" and want["shuffle"] == -1:
        # zarrx records the automatic shuffle resolved, as numcodecs applies it.
        assert shuffle in (-1, 2 if case.stored.itemsize == 1 else 1), written
        shuffle = -1
    assert {**written, "shuffle": shuffle} == want, (written, want)


def stored_keys(path: Path) -> set[str]:
    return {
        p.relative_to(path).as_posix()
        for p in path.rglob("*")
        if p.is_file() and p.name not in (".zarray", ".zattrs")
    }


def check_keys(path: Path, case: Case, expected: np.ndarray, *regions: tuple[slice, ...]) -> None:
    """The writes of ``regions`` stored the chunks they touch, except that chunks left
    holding only the fill value (e.g. a bool edge chunk of a few items) may be left out:
    zarrx leaves them out; tensorstore does too, except when the fill value is null."""
    touched = set()
    for region in regions:
        ranges = []
        for sel, size, chunk in zip(region, case.shape, case.chunks):
            start, stop, _ = sel.indices(size)
            ranges.append(range(start // chunk, -(-stop // chunk)))
        touched |= {tuple(r[i] for r, i in zip(ranges, c))
                    for c in np.ndindex(*(len(r) for r in ranges))}
    fill = case.fill_scalar.tobytes()
    required = set()
    for index in touched:
        box = tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, case.chunks))
        items = np.ascontiguousarray(expected[box]).reshape(-1)
        if any(item.tobytes() != fill for item in items):
            required.add(index)
    keys = stored_keys(path)

    def key(index: tuple[int, ...]) -> str:
        return case.separator.join(map(str, index)) or "0"

    assert {key(i) for i in required} <= keys, sorted({key(i) for i in required} - keys)
    assert keys <= {key(i) for i in touched}, sorted(keys - {key(i) for i in touched})


# -- the round trip -----------------------------------------------------------------------

def roundtrip(path: Path, case: Case, writer: str, reader: str) -> np.ndarray:
    """``writer`` writes :attr:`Case.region`, ``reader`` reads all and updates
    :attr:`Case.update`, both read it all again. Returns the final expected array."""
    compressible = case.compressor is not None
    data = values(case.native, case.shape, 0, compressible)
    WRITERS[writer](path, case, data, case.region, create=True)
    check_zarray(path, case, writer)
    expected = expected_after(case, (case.region, data))
    check_keys(path, case, expected, case.region)
    assert_same(READERS[reader](path, case), expected, f"{reader} reading {writer}'s data")

    update = values(case.native, case.shape, 1, compressible)
    WRITERS[reader](path, case, update, case.update, create=False)
    check_zarray(path, case, writer)  # updating data leaves the metadata alone
    expected = expected_after(case, (case.region, data), (case.update, update))
    check_keys(path, case, expected, case.region, case.update)
    for who in (writer, reader):
        assert_same(READERS[who](path, case), expected, f"{who} after {reader}'s update")
    return expected


# -- data types ---------------------------------------------------------------------------

@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_numeric_dtypes(path: Path, dtype: str, order: str, writer: str, reader: str) -> None:
    case = Case(dtype=dtype, order=order, fill=NONZERO_FILL[np.dtype(dtype).kind])
    expected = roundtrip(path, case, writer, reader)
    fill = case.fill_scalar.tobytes()
    items = np.ascontiguousarray(expected).reshape(-1).view(f"V{expected.itemsize}")
    assert any(v.tobytes() == fill for v in items)  # missing chunks were read


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(
    ("dtype", "fill"),
    [("|S1", b64(b"z")), ("|S3", b64(b"a\0c")), ("|S5", None), ("|V4", b64(b"\x01\x00\xff\x7f")),
     ("|V1", None)],
)
def test_fixed_bytes(path: Path, dtype: str, fill: Any, order: str, writer: str,
                     reader: str) -> None:
    """``S<n>`` and ``V<n>``: tensorstore's char/byte arrays with one more axis."""
    roundtrip(path, Case(dtype=dtype, fill=fill, order=order), writer, reader)


#: Record dtypes: fields of both byte orders (the case numpy and zarr-python 2 write for
#: ``>`` data with little-endian parts), only little-endian fields, only big-endian ones.
STRUCTURED = {
    "mixed": [
        ["x", "<f4"], ["y", ">i2"], ["s", "|S3"], ["v", "<u2", [2]], ["b", "|b1"],
        ["c", ">c8"], ["m", ">f8", [2, 3]], ["r", "|V2"],
    ],
    "little": [["x", "<f4"], ["s", "|S3"], ["v", "<u2", [2]], ["b", "|b1"], ["c", "<c16"]],
    "big": [["y", ">i2"], ["z", ">f8"], ["m", ">u4", [3]], ["b", "|i1"]],
}
STRUCTURED_VALUES = {
    "mixed": (np.nan, -2, b"ab", [7, 65535], True, -1 + 2j, [[np.inf, -0.0, 1], [2, 3, 4]],
              b"\x00\x01"),
    "little": (-0.0, b"xyz", [1, 2], True, 1e300 - 1j),
    "big": (-300, np.inf, [1, 2**32 - 1, 0], -5),
}


def record_fill(kind: str) -> str:
    """The base64 ``fill_value`` of a record: its bytes, each field in its own byte order."""
    stored = Case(dtype=STRUCTURED[kind]).stored
    return b64(np.array(STRUCTURED_VALUES[kind], stored).tobytes())


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("fill", ["base64", "null"])
@pytest.mark.parametrize(
    "compressor", [None, {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 1}],
    ids=["raw", "blosc"],
)
@pytest.mark.parametrize("kind", list(STRUCTURED))
def test_structured(path: Path, kind: str, compressor: Any, fill: str, order: str,
                    writer: str, reader: str) -> None:
    """Record dtypes with bytes, bool, complex and subarray fields; tensorstore reads and
    writes them one field at a time."""
    case = Case(dtype=STRUCTURED[kind], fill=record_fill(kind) if fill == "base64" else None,
                order=order, compressor=compressor)
    roundtrip(path, case, writer, reader)


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize(
    ("shape", "chunks"),
    [((), ()), ((1,), (1,)), ((10,), (3,)), ((10,), (20,)), ((5, 7, 6), (2, 3, 4)),
     ((3, 1, 4, 2), (2, 1, 3, 1))],
)
def test_shapes(path: Path, shape: tuple[int, ...], chunks: tuple[int, ...], writer: str,
                reader: str) -> None:
    """Rank 0 to 4, chunks larger than the array, and chunks of one item."""
    roundtrip(path, Case(dtype=">i4", shape=shape, chunks=chunks, fill=-1), writer, reader)


# -- fill values --------------------------------------------------------------------------

FILLS = [
    ("<f4", "NaN"), (">f8", "NaN"), ("<f2", "NaN"), ("<f2", "Infinity"), (">f4", "-Infinity"),
    ("<f8", "Infinity"), ("<f8", -0.0), (">f8", 1e300), ("<f4", 0.5), (">f2", 65504.0),
    ("<f2", None), (">f8", None),
    ("<c8", ["NaN", "Infinity"]), (">c16", [-0.0, "-Infinity"]), ("<c16", [2.5, -1e-300]),
    ("<c16", None),
    ("|b1", True), ("|b1", False), ("|b1", None), ("|i1", -128), ("|u1", 255),
    (">i8", -(2**63)), ("<u8", 2**64 - 1), (">u4", 123456), ("<i2", None), (">u2", 0),
]


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize(("dtype", "fill"), FILLS, ids=[f"{d}-{f}" for d, f in FILLS])
def test_fill_values(path: Path, dtype: str, fill: Any, writer: str, reader: str) -> None:
    roundtrip(path, Case(dtype=dtype, fill=fill), writer, reader)


# -- compressors --------------------------------------------------------------------------

BLOSC_CNAMES = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")  # snappy: see test_blosc_snappy


def blosc(cname: str = "lz4", shuffle: int = -1, clevel: int = 5, blocksize: int = 0
          ) -> dict[str, Any]:
    return {"id": "blosc", "cname": cname, "clevel": clevel, "shuffle": shuffle,
            "blocksize": blocksize}


COMPRESSORS = [
    *(blosc(c, s) for c in BLOSC_CNAMES for s in (-1, 0, 1, 2)),
    blosc("lz4", 1, clevel=0), blosc("zstd", 2, clevel=9), blosc("blosclz", 1, blocksize=256),
    {"id": "blosc", "cname": "zstd"},  # the others left to their defaults
    {"id": "zlib", "level": 0}, {"id": "zlib", "level": 1}, {"id": "zlib", "level": 9},
    {"id": "gzip", "level": 1}, {"id": "gzip", "level": 9},
    {"id": "bz2", "level": 1}, {"id": "bz2", "level": 9},
    {"id": "zstd", "level": 1}, {"id": "zstd", "level": 19}, {"id": "zstd", "level": -5},
    None,
]


def codec_id(codec: Any) -> str:
    if codec is None:
        return "null"
    return "-".join(str(v) for k, v in codec.items() if k != "blocksize" or v)


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("compressor", COMPRESSORS, ids=codec_id)
def test_compressors(path: Path, compressor: Any, writer: str, reader: str) -> None:
    case = Case(dtype="<f8", shape=(20, 30), chunks=(8, 12), compressor=compressor, fill=1.0)
    roundtrip(path, case, writer, reader)


@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("shuffle", [-1, 1, 2])
@pytest.mark.parametrize("dtype", ["|u1", "|b1", ">i2", "<c16", "|S3"])
def test_blosc_shuffle_item_size(path: Path, dtype: str, shuffle: int, writer: str,
                                 reader: str) -> None:
    """Shuffles of 1-byte, big-endian, 16-byte and string items (automatic: bits for 1 byte)."""
    case = Case(dtype=dtype, shape=(20, 30), chunks=(8, 12), compressor=blosc("lz4", shuffle),
                order="F")
    roundtrip(path, case, writer, reader)


def test_blosc_snappy(path: Path) -> None:
    """tensorstore writes blosc/snappy; zarrx's c-blosc has no snappy and says so on open."""
    case = Case(compressor=blosc("snappy", 1))
    data = values(case.native, case.shape, 0, True)
    ts_write(path, case, data, ..., create=True)
    assert_same(ts_read(path, case), data, "tensorstore itself")
    with pytest.raises(zarrx.errors.MetadataError, match="snappy"):
        zarrx.open_array(str(path))


# -- key layout ---------------------------------------------------------------------------

@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("separator", [".", "/"])
def test_dimension_separator(path: Path, separator: str, order: str, writer: str,
                             reader: str) -> None:
    case = Case(dtype=">u2", shape=(5, 7, 9), chunks=(2, 3, 4), separator=separator, order=order,
                compressor={"id": "zlib", "level": 1}, fill=7)
    roundtrip(path, case, writer, reader)
    other = "/" if separator == "." else "."
    assert not any(other in key for key in stored_keys(path))
    assert f"1{separator}1{separator}1" in stored_keys(path)


# -- bytes on disk ------------------------------------------------------------------------

@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [*NUMERIC, "|S3", "|V2", *STRUCTURED])
def test_same_bytes_on_disk(tmp_path: Path, dtype: str, order: str) -> None:
    """Uncompressed, zarrx and tensorstore store the same data in the same chunk files with
    the same bytes (byte order, C/F layout within chunks, edge-chunk padding with the fill
    value) and an equal ``.zarray``."""
    if dtype in STRUCTURED:
        case = Case(dtype=STRUCTURED[dtype], order=order, fill=record_fill(dtype))
    else:
        fill = (b64(b"xyz"[: np.dtype(dtype).itemsize]) if dtype[1] in "SV" else
                NONZERO_FILL[np.dtype(dtype).kind])
        case = Case(dtype=dtype, order=order, fill=fill)
    data = values(case.native, case.shape, 0, False)
    zarrx_write(tmp_path / "x", case, data, case.region, create=True)
    ts_write(tmp_path / "t", case, data, case.region, create=True)
    docs = [json.loads((tmp_path / name / ".zarray").read_text()) for name in "xt"]
    assert docs[0] == docs[1]
    keys = stored_keys(tmp_path / "t")
    assert stored_keys(tmp_path / "x") == keys
    for key in sorted(keys):
        raw = [(tmp_path / name / key).read_bytes() for name in "xt"]
        assert raw[0] == raw[1], f"chunk {key} differs"


# -- what tensorstore does not do ---------------------------------------------------------

@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"dtype": "<M8[ns]"}, "Unsupported zarr dtype"),
        ({"dtype": ">m8[s]"}, "Unsupported zarr dtype"),
        ({"dtype": "<U3"}, "Unsupported zarr dtype"),
        ({"dtype": "|O"}, "Unsupported zarr dtype"),
        ({"dtype": [["a", [["b", "<i2"]]]]}, "Expected string"),
        ({"filters": [{"id": "delta", "dtype": "<f8"}]}, "filters are not supported"),
        ({"compressor": {"id": "lz4"}}, "not registered"),
        ({"compressor": {"id": "lzma"}}, "not registered"),
    ],
    ids=["M8", "m8", "U", "O", "nested", "filters", "lz4", "lzma"],
)
def test_tensorstore_limitations(path: Path, metadata: dict[str, Any], message: str) -> None:
    """Pins what tensorstore's ``zarr`` driver rejects, so the gaps in the matrix above are
    deliberate; when tensorstore gains one of these, this fails and a round trip belongs above.
    zarrx reads and writes all of them (tests/formats)."""
    base = {"shape": [4], "chunks": [2], "dtype": "<f8", "compressor": None}
    with pytest.raises(ValueError, match=message):
        ts.open(ts_spec(path, metadata={**base, **metadata}), create=True).result()
