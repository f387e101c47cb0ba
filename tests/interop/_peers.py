"""Write and read the same array with zarrx, zarr-python 3 and tensorstore's ``zarr3`` driver.

An array configuration is a library-neutral :class:`Layout` holding v3 codec JSON; each
writer translates it to its library's own API (``zarrx.create_array``,
``zarr.create_array``, a tensorstore ``zarr3`` spec) and each reader returns what its library
decodes. :func:`check_roundtrip` writes with one, reads with another and compares bit for
bit against NumPy, including NaN payloads and the fill value of chunks never written.

The JSON forms of fill values used for tensorstore are encoded here, independently of
zarrx, so that a wrong encoder in zarrx cannot hide behind itself.
"""

from __future__ import annotations

import dataclasses
import json
import math
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import tensorstore as ts
import zarr

import zarrx

# -- the matrix ---------------------------------------------------------------------------

DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)
FLOAT_DTYPES = ("float16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")

#: (writer, reader): zarrx writes and each peer reads, each peer writes and zarrx reads.
DIRECTIONS = (
    ("zarrx", "zarr"),
    ("zarrx", "tensorstore"),
    ("zarr", "zarrx"),
    ("tensorstore", "zarrx"),
)
DIRECTION_IDS = [f"{w}->{r}" for w, r in DIRECTIONS]

BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES_BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC32C = {"name": "crc32c"}
DEFAULT_KEYS = {"name": "default", "configuration": {"separator": "/"}}


def selections_for(shape: tuple[int, ...]) -> list[Any]:
    """Basic selections zarrx reads from a peer's data, compared with NumPy on the same data:
    steps of both signs (``[1:-1:2, ::-3, ...]``), integers, ``Ellipsis``, ``None``, a small
    box, and an empty slice."""
    if not shape:
        return [(), Ellipsis, (None,), (Ellipsis, None)]
    ndim = len(shape)
    out: list[Any] = [
        tuple(slice(1, -1, 2) if i % 2 == 0 else slice(None, None, -3) for i in range(ndim)),
        tuple(slice(s // 3, s // 3 + 2) for s in shape),
        (None, Ellipsis, slice(None, None, -1)),
        tuple(slice(s, None) for s in shape),
    ]
    if all(shape):
        out += [
            (-1, *(slice(None),) * (ndim - 1)),
            (Ellipsis, shape[-1] // 2),
            tuple(s // 2 for s in shape),
            (slice(None, None, -1), *(slice(s // 4, None, 7) for s in shape[1:])),
        ]
    return out


def blosc(cname: str, shuffle: str, clevel: int = 5, blocksize: int = 0) -> dict[str, Any]:
    """A blosc codec without ``typesize``: every library fills it from the data type."""
    return {
        "name": "blosc",
        "configuration": {
            "cname": cname, "clevel": clevel, "shuffle": shuffle, "blocksize": blocksize,
        },
    }


def gzip(level: int) -> dict[str, Any]:
    return {"name": "gzip", "configuration": {"level": level}}


def zstd(level: int, checksum: bool) -> dict[str, Any]:
    return {"name": "zstd", "configuration": {"level": level, "checksum": checksum}}


def transpose(order: list[int]) -> dict[str, Any]:
    return {"name": "transpose", "configuration": {"order": list(order)}}


@dataclasses.dataclass(frozen=True)
class Layout:
    """One array configuration, in v3 JSON terms every library understands."""

    dtype: str = "float64"
    shape: tuple[int, ...] = (13, 17)
    chunks: tuple[int, ...] = (4, 5)  # inner chunks when sharded
    filters: tuple[dict[str, Any], ...] = ()
    serializer: dict[str, Any] = dataclasses.field(default_factory=lambda: BYTES_LE)
    compressors: tuple[dict[str, Any], ...] = ()
    fill_value: Any = None  # None: zero of the data type
    order: str = "C"  # "F": zarrx's order="F", an explicit reversing transpose for peers
    chunk_key_encoding: dict[str, Any] = dataclasses.field(default_factory=lambda: DEFAULT_KEYS)
    shards: tuple[int, ...] | None = None
    index_location: str = "end"
    index_codecs: tuple[dict[str, Any], ...] | None = None  # None: the default
    attributes: dict[str, Any] | None = None
    dimension_names: tuple[str | None, ...] | None = None

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    @property
    def fill(self) -> Any:
        """The fill value as a NumPy scalar of the data type."""
        if self.fill_value is None:
            return np.zeros((), dtype=self.np_dtype)[()]
        return np.asarray(self.fill_value, dtype=self.np_dtype)[()]

    @property
    def all_filters(self) -> tuple[dict[str, Any], ...]:
        """The array→array codecs, with ``order="F"`` spelled as the transpose it means."""
        if self.order == "F" and len(self.shape) > 1:
            return (*self.filters, transpose(list(range(len(self.shape)))[::-1]))
        return self.filters

    @property
    def inner_codecs(self) -> list[dict[str, Any]]:
        return [*self.all_filters, self.serializer, *self.compressors]

    def sharding_codec(self) -> dict[str, Any]:
        config: dict[str, Any] = {
            "chunk_shape": list(self.chunks),
            "codecs": self.inner_codecs,
            "index_location": self.index_location,
        }
        config["index_codecs"] = (
            list(self.index_codecs) if self.index_codecs is not None else [BYTES_LE, CRC32C]
        )
        return {"name": "sharding_indexed", "configuration": config}

    def codecs(self) -> list[dict[str, Any]]:
        """The whole ``codecs`` list of ``zarr.json``."""
        return [self.sharding_codec()] if self.shards else self.inner_codecs

    @property
    def grid_chunks(self) -> tuple[int, ...]:
        """The chunk shape of the chunk grid (the shard shape when sharded)."""
        return self.shards or self.chunks

    def metadata(self) -> dict[str, Any]:
        """The ``zarr.json`` array document, with fill values encoded by :func:`fill_json`."""
        doc: dict[str, Any] = {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": self.dtype,
            "chunk_grid": {
                "name": "regular", "configuration": {"chunk_shape": list(self.grid_chunks)},
            },
            "chunk_key_encoding": self.chunk_key_encoding,
            "fill_value": fill_json(self.fill),
            "codecs": self.codecs(),
        }
        if self.attributes is not None:
            doc["attributes"] = self.attributes
        if self.dimension_names is not None:
            doc["dimension_names"] = list(self.dimension_names)
        return doc


# -- values -------------------------------------------------------------------------------

def float_from_bits(dtype: str, bits: int) -> Any:
    """The float of ``dtype`` whose IEEE bits are ``bits`` (NaN payloads survive)."""
    dt = np.dtype(dtype)
    return np.array([bits], dtype=f"u{dt.itemsize}").view(dt)[0]


#: NaNs that are not NumPy's canonical one (payload bits, sign bit): bits must survive.
ODD_NANS = {
    "float16": (0x7E01, 0xFE00),
    "float32": (0x7FC00123, 0xFFC00000),
    "float64": (0x7FF8000000000123, 0xFFF8000000000000),
}


def _floats(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    dt = np.dtype(dtype)
    out = (rng.standard_normal(shape) * 1000).astype(dt)
    info = np.finfo(dt)
    specials = [
        np.nan, np.inf, -np.inf, -0.0, info.max, info.min, info.smallest_subnormal,
        *(float_from_bits(dtype, b) for b in ODD_NANS[dtype]),
    ]
    flat = out.reshape(-1)
    for i, value in enumerate(specials if flat.size else ()):
        flat[(i * 7 + 1) % flat.size] = value  # spread over chunks
    return out


def make_data(
    dtype: str, shape: tuple[int, ...], seed: int = 0, *, compressible: bool = False
) -> np.ndarray:
    """Random values covering the data type's range, with special floats (NaN payloads,
    ±inf, -0.0, subnormals) spread over the array; ``compressible`` makes most values
    repeat so that compressors really compress (and do not store the chunk verbatim)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if compressible:
        out = make_data(dtype, shape, seed)
        ramp = np.arange(math.prod(shape)).reshape(shape) // 5 % 7
        keep = rng.random(shape) < 0.1
        return np.where(keep, out, ramp.astype(dt))
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if dt.kind == "f":
        return _floats(dtype, shape, rng)
    part = f"float{dt.itemsize * 4}"
    out = np.empty(shape, dtype=dt)
    out.real = _floats(part, shape, rng)
    out.imag = np.flip(_floats(part, shape, rng))
    return out


def _float_json(value: Any) -> Any:
    value = np.asarray(value)[()]
    if math.isnan(value):
        canonical = np.array(np.nan, dtype=value.dtype).tobytes()
        if value.tobytes() == canonical:
            return "NaN"
        return "0x" + np.asarray(value).astype(value.dtype.newbyteorder(">")).tobytes().hex()
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float(value)


def fill_json(value: Any) -> Any:
    """The v3 JSON encoding of a NumPy scalar fill value (written by hand from the spec)."""
    kind = np.asarray(value).dtype.kind
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return int(value)
    if kind == "f":
        return _float_json(value)
    return [_float_json(value.real), _float_json(value.imag)]


def region_for(layout: Layout) -> tuple[slice, ...]:
    """A region that leaves the last chunk (shard) of every axis never written and cuts
    through others, so both missing and partly written chunks are read back."""
    out = []
    for size, chunk in zip(layout.shape, layout.grid_chunks):
        assert size > chunk + 1, "the layout is too small for a partial write"
        out.append(slice(1, size - chunk))
    return tuple(out)


def expected_array(layout: Layout, data: np.ndarray, region: Any = Ellipsis) -> np.ndarray:
    expected = np.full(layout.shape, layout.fill, dtype=layout.np_dtype)
    expected[region] = data[region]
    return expected


# -- comparison ---------------------------------------------------------------------------

def assert_bit_equal(actual: Any, expected: np.ndarray) -> None:
    """Same dtype (native), shape, values, and bytes (NaN payloads and -0.0 included)."""
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected, strict=True)
    # Equal values may still differ in their bits (NaN payloads, -0.0): compare the bytes.
    a = np.ascontiguousarray(actual).reshape(-1)
    e = np.ascontiguousarray(expected).reshape(-1)
    if not np.array_equal(a.view(np.uint8), e.view(np.uint8)):
        unit = f"u{e.dtype.itemsize}" if e.dtype.itemsize <= 8 else "V16"
        bad = np.flatnonzero(a.view(unit) != e.view(unit))
        raise AssertionError(
            f"values differ in their bits at flat indices {bad[:10].tolist()}: "
            f"got {a[bad[:3]]!r}, expected {e[bad[:3]]!r}"
        )


def assert_same_scalar(actual: Any, expected: Any) -> None:
    """Two scalars of one dtype with identical bits (for fill values)."""
    e = np.asarray(expected)
    a = np.asarray(actual, dtype=e.dtype)
    assert a.shape == (), a.shape
    assert a.tobytes() == e.tobytes(), f"fill value {a!r} != expected {e!r} (bits differ)"


# -- writers ------------------------------------------------------------------------------

def write_zarrx(path: Path, layout: Layout, data: np.ndarray, region: Any = Ellipsis) -> Any:
    kwargs: dict[str, Any] = {
        "shape": layout.shape,
        "dtype": layout.dtype,
        "fill_value": layout.fill,
        "chunk_key_encoding": layout.chunk_key_encoding,
        "attributes": layout.attributes,
        "dimension_names": layout.dimension_names,
    }
    if layout.shards and layout.index_codecs is not None:
        # ``shards=`` cannot name index codecs: spell the sharding codec out.
        kwargs.update(chunks=layout.shards, serializer=layout.sharding_codec(), filters=None,
                      compressors=None)
        if layout.order == "F":
            raise AssertionError("order='F' cannot be combined with a custom sharding codec")
    else:
        shards: Any = layout.shards
        if shards and layout.index_location != "end":  # zarr-python's form, as in write_zarr
            shards = {"shape": layout.shards, "index_location": layout.index_location}
        kwargs.update(
            chunks=layout.chunks, shards=shards, filters=list(layout.filters) or None,
            serializer=layout.serializer, compressors=list(layout.compressors) or None,
            order=layout.order,
        )
    array = zarrx.create_array(str(path), **kwargs)
    array[region] = data[region]
    return array


def write_zarr(
    path: Path, layout: Layout, data: np.ndarray, region: Any = Ellipsis,
    config: dict[str, Any] | None = None,
) -> Any:
    kwargs: dict[str, Any] = {
        "shape": layout.shape,
        "dtype": layout.dtype,
        "fill_value": layout.fill,
        "chunk_key_encoding": layout.chunk_key_encoding,
        "attributes": layout.attributes,
        "dimension_names": layout.dimension_names,
        "config": config,
    }
    if layout.shards and layout.index_codecs is not None:
        kwargs.update(chunks=layout.shards, serializer=layout.sharding_codec(), filters=None,
                      compressors=None)
    else:
        shards: Any = layout.shards
        if shards and layout.index_location != "end":
            shards = {"shape": layout.shards, "index_location": layout.index_location}
        kwargs.update(
            chunks=layout.chunks, shards=shards, filters=list(layout.all_filters) or None,
            serializer=layout.serializer, compressors=list(layout.compressors) or None,
        )
    array = zarr.create_array(str(path), **kwargs)
    array[region] = data[region]
    return array


def ts_spec(path: Path) -> dict[str, Any]:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}


def write_ts(path: Path, layout: Layout, data: np.ndarray, region: Any = Ellipsis) -> Any:
    metadata = layout.metadata()
    del metadata["zarr_format"], metadata["node_type"]
    store = ts.open({**ts_spec(path), "metadata": metadata}, create=True).result()
    if region is Ellipsis:
        store.write(data).result()
    else:
        store[region].write(data[region]).result()
    return store


WRITERS: dict[str, Callable[..., Any]] = {
    "zarrx": write_zarrx, "zarr": write_zarr, "tensorstore": write_ts,
}


# -- readers ------------------------------------------------------------------------------

class Read(NamedTuple):
    data: np.ndarray
    fill_value: Any


def read_zarrx(path: Path, layout: Layout) -> Read:
    array = zarrx.open_array(str(path), mode="r")
    assert isinstance(array, zarrx.Array)
    assert array.shape == layout.shape
    assert array.dtype == layout.np_dtype
    assert array.chunks == layout.chunks
    assert array.shards == layout.shards
    return Read(np.asarray(array), array.fill_value)


def read_zarr(path: Path, layout: Layout) -> Read:
    array = zarr.open_array(str(path), mode="r")
    assert array.shape == layout.shape
    assert array.dtype == layout.np_dtype
    assert array.chunks == layout.chunks
    assert array.shards == layout.shards
    return Read(np.asarray(array[...]), array.fill_value)


def read_ts(path: Path, layout: Layout) -> Read:
    store = ts.open(ts_spec(path), open=True, read=True).result()
    assert store.shape == layout.shape
    assert store.dtype.numpy_dtype == layout.np_dtype
    if layout.shape:  # tensorstore reports no chunk shape for rank 0
        assert tuple(store.chunk_layout.read_chunk.shape) == layout.chunks
        assert tuple(store.chunk_layout.write_chunk.shape) == layout.grid_chunks
    return Read(store.read().result(), store.fill_value)


READERS: dict[str, Callable[[Path, Layout], Read]] = {
    "zarrx": read_zarrx, "zarr": read_zarr, "tensorstore": read_ts,
}


def update_zarrx(path: Path, region: Any, data: np.ndarray) -> None:
    zarrx.open_array(str(path), mode="r+")[region] = data


def update_zarr(path: Path, region: Any, data: np.ndarray) -> None:
    zarr.open_array(str(path), mode="r+")[region] = data


def update_ts(path: Path, region: Any, data: np.ndarray) -> None:
    ts.open(ts_spec(path), open=True, write=True).result()[region].write(data).result()


#: Reopen an existing array and overwrite a region (read-modify-write of stored chunks).
UPDATERS: dict[str, Callable[[Path, Any, np.ndarray], None]] = {
    "zarrx": update_zarrx, "zarr": update_zarr, "tensorstore": update_ts,
}


def check_roundtrip(
    writer: str,
    reader: str,
    path: Path,
    layout: Layout,
    data: np.ndarray | None = None,
    region: Any = Ellipsis,
    updates: tuple[tuple[Any, np.ndarray], ...] = (),
    updater: str | None = None,
) -> np.ndarray:
    """Write ``data[region]`` with ``writer``, then reopen with ``updater`` (default: the
    writer) and write each ``(region, values)`` of ``updates``; read with ``reader`` and
    compare bit for bit (and the fill value); zarrx readers also read :func:`selections_for`.
    Returns the expected array."""
    if data is None:
        data = make_data(layout.dtype, layout.shape)
    WRITERS[writer](path, layout, data, region)
    expected = expected_array(layout, data, region)
    for where, values in updates:
        UPDATERS[updater or writer](path, where, values)
        expected[where] = values
    assert_written_metadata(path, layout)
    read = READERS[reader](path, layout)
    assert_bit_equal(read.data, expected)
    assert_same_scalar(read.fill_value, layout.fill)
    if reader == "zarrx":
        check_zarrx_selections(path, expected)
    return expected


def check_zarrx_selections(path: Path, expected: np.ndarray) -> None:
    array = zarrx.open_array(str(path), mode="r")
    for selection in selections_for(expected.shape):
        assert_bit_equal(np.asarray(array[selection]), expected[selection])


def normalize_codec(codec: dict[str, Any], itemsize: int) -> dict[str, Any]:
    """A codec's JSON with the values every writer derives from the data type made explicit:
    blosc's ``typesize`` (the item size), no ``endian`` for one-byte types, sharding's
    default ``index_location``, and an empty ``configuration`` where there is none."""
    name, config = codec["name"], dict(codec.get("configuration", {}))
    if name == "blosc":
        config.setdefault("typesize", itemsize)
    if name == "bytes" and itemsize == 1:
        config.pop("endian", None)
    if name == "sharding_indexed":
        config.setdefault("index_location", "end")  # tensorstore omits the default
        config["codecs"] = [normalize_codec(c, itemsize) for c in config["codecs"]]
        config["index_codecs"] = [normalize_codec(c, 8) for c in config["index_codecs"]]
    return {"name": name, "configuration": config}


def assert_written_metadata(path: Path, layout: Layout) -> None:
    """The writer recorded the layout's codecs, fill value, grid and key encoding."""
    doc = load_json(path / "zarr.json")
    itemsize = layout.np_dtype.itemsize  # blosc's typesize is the whole (complex) item
    written = [normalize_codec(c, itemsize) for c in doc["codecs"]]
    assert written == [normalize_codec(c, itemsize) for c in layout.codecs()]
    assert doc["data_type"] == layout.dtype
    assert doc["shape"] == list(layout.shape)
    assert doc["chunk_grid"] == {
        "name": "regular", "configuration": {"chunk_shape": list(layout.grid_chunks)},
    }
    encoding = doc["chunk_key_encoding"]
    separator = {"default": "/", "v2": "."}[encoding["name"]]
    assert encoding["name"] == layout.chunk_key_encoding["name"]
    assert encoding.get("configuration", {}).get("separator", separator) == (
        layout.chunk_key_encoding.get("configuration", {}).get("separator", separator)
    )
    assert_same_scalar(parse_fill_json(layout.np_dtype, doc["fill_value"]), layout.fill)


def _parse_float_json(dtype: np.dtype, value: Any) -> Any:
    if isinstance(value, str) and value.startswith("0x"):
        return np.frombuffer(bytes.fromhex(value[2:]), dtype=dtype.newbyteorder(">"))[0]
    special = {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}
    return np.asarray(special.get(value, value), dtype=dtype)[()]


def parse_fill_json(dtype: np.dtype, value: Any) -> Any:
    """A v3 JSON fill value as a NumPy scalar (written by hand from the spec)."""
    if dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        out = np.zeros((), dtype=dtype)
        out.real, out.imag = (_parse_float_json(part, v) for v in value)
        return out[()]
    if dtype.kind == "f":
        return _parse_float_json(dtype, value)
    return np.asarray(value, dtype=dtype)[()]


def load_json(path: Path) -> Any:
    return json.loads(path.read_text())


def stored_chunks(path: Path) -> dict[str, bytes]:
    """Every stored object of the array at ``path`` except its metadata, by relative key."""
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and p.name != "zarr.json"
    }


#: An index entry of an inner chunk that is not stored (all fill value).
EMPTY_ENTRY = (2**64 - 1, 2**64 - 1)


def shard_index(
    raw: bytes, n: int, index_location: str = "end",
    index_codecs: tuple[dict[str, Any], ...] | None = None,
) -> list[tuple[int, int]]:
    """The ``(offset, nbytes)`` pairs of the ``n`` inner chunks of a shard, in C order,
    decoded by hand from the spec (index codecs: ``bytes`` and an optional ``crc32c``)."""
    codecs = index_codecs or (BYTES_LE, CRC32C)
    size = 16 * n + 4 * (CRC32C in codecs)
    index = raw[:size] if index_location == "start" else raw[-size:]
    endian = "<" if codecs[0].get("configuration", {}).get("endian") == "little" else ">"
    values = struct.unpack(f"{endian}{2 * n}Q", index[: 16 * n])
    return list(zip(values[::2], values[1::2]))


def shard_inner_chunks(raw: bytes, n: int, index_location: str = "end") -> list[bytes | None]:
    """The stored bytes of each inner chunk of a shard (``None`` when empty)."""
    return [
        None if entry == EMPTY_ENTRY else raw[entry[0] : entry[0] + entry[1]]
        for entry in shard_index(raw, n, index_location)
    ]
