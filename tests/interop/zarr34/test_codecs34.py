"""The codecs zarr-python 3.4 writes (``cast_value``, ``scale_offset``, every ``numcodecs.*``
codec in its role), both ways, against zarr-python 3.4 in its own environment.

For every case both libraries write the same array (partial edge chunks, chunks never
written, non-zero and NaN fills; sharded too), then:

- zarrx reads zarr-python's store exactly as zarr-python reads it back (bit for bit);
- zarr-python reads zarrx's store exactly as zarrx reads it back;
- both wrote the same ``codecs`` metadata, and, for the deterministic chains, the same bytes
  in every chunk file (so zarrx encodes as zarr-python does, not only decodes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx

from .conftest import run_peer

SHAPE, CHUNKS, SHARDS = (13, 17), (4, 5), (8, 10)
REGION = ((1, 7), (2, 13))  # chunks of rows 2-3 and of column 3 are never written


def codec(name: str, role: str, configuration: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "role": role}
    if configuration is not None:
        out["configuration"] = configuration
    return out


BYTES = codec("bytes", "serializer", {"endian": "little"})
SO_NAN_U8 = [codec("scale_offset", "array", {"offset": -10, "scale": 0.1}),
             codec("cast_value", "array", {"data_type": "uint8", "scalar_map": {
                 "encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}), BYTES]


def case(name: str, dtype: str, codecs: list[dict[str, Any]], fill: Any, values: str,
         *, shards: bool = False, same_bytes: bool = True) -> dict[str, Any]:
    return {"name": name, "dtype": dtype, "codecs": codecs, "fill_value": fill,
            "values": values, "shape": SHAPE, "chunks": CHUNKS,
            "shards": SHARDS if shards else None, "region": REGION,
            # zarr-python 3.4 lays a shard's inner chunks out in Morton order, zarrx in C order
            "same_bytes": same_bytes and not shards}


def numcodecs_case(codec_id: str, role: str, config: dict[str, Any], *,
                   dtype: str = "float64", fill: Any = "NaN", same_bytes: bool = True
                   ) -> dict[str, Any]:
    entry = codec(f"numcodecs.{codec_id}", role, config)
    codecs = {"array": [entry, BYTES], "serializer": [entry],
              "bytes": [BYTES, entry]}[role]
    return case(f"numcodecs_{codec_id}", dtype, codecs, fill,
                "ints" if dtype.startswith(("int", "uint")) else "smooth",
                same_bytes=same_bytes)


CASES = [
    # cast_value and scale_offset, alone and chained
    case("so_cast_u8_nan", "float64", SO_NAN_U8, "NaN", "range2540"),
    case("so_cast_u8_nan_sharded", "float64", SO_NAN_U8, "NaN", "range2540", shards=True),
    case("cast_f4_f2_clamp", "float32", [codec("cast_value", "array", {
        "data_type": "float16", "out_of_range": "clamp"}), BYTES], "NaN", "wide"),
    case("cast_i4_i1_wrap", "int32", [codec("cast_value", "array", {
        "data_type": "int8", "rounding": "towards-zero", "out_of_range": "wrap"}), BYTES],
        7, "ints"),
    case("cast_f8_i2_away_clamp", "float64", [codec("cast_value", "array", {
        "data_type": "int16", "rounding": "nearest-away", "out_of_range": "clamp"}), BYTES],
        2.5, "wide"),
    case("cast_f8_f4_down", "float64", [codec("cast_value", "array", {
        "data_type": "float32", "rounding": "towards-negative"}), BYTES], 0.1, "smooth"),
    case("cast_i8_f4_up", "int64", [codec("cast_value", "array", {
        "data_type": "float32", "rounding": "towards-positive"}), BYTES], -3, "bigints"),
    case("cast_u2_so_u1", "uint16", [codec("scale_offset", "array", {"offset": 1000}),
                                      codec("cast_value", "array", {"data_type": "uint8"}),
                                      BYTES], 1000, "u1000"),
    case("cast_f8_u1_map_zstd", "float64", [codec("cast_value", "array", {
        "data_type": "uint8", "out_of_range": "clamp", "rounding": "towards-zero",
        "scalar_map": {"encode": [["NaN", 255], ["Infinity", 254]],
                       "decode": [[255, "NaN"], [254, "Infinity"]]}}), BYTES,
        codec("zstd", "bytes", {"level": 1, "checksum": False})], "NaN", "specials",
        same_bytes=False),
    case("so_f4", "float32", [codec("scale_offset", "array", {"offset": 5, "scale": 0.1}),
                              BYTES], "NaN", "smooth"),
    case("so_i4", "int32", [codec("scale_offset", "array", {"offset": -7, "scale": 3}),
                            BYTES], 2, "ints"),
    case("so_default", "float64", [codec("scale_offset", "array"), BYTES], -1.5, "smooth"),
    case("so_f8_sharded", "float64", [codec("scale_offset", "array", {"offset": 1.5,
                                                                       "scale": 4}), BYTES],
         "NaN", "smooth", shards=True),
    # every numcodecs codec zarr-python 3.4 registers, in its role
    numcodecs_case("delta", "array", {"dtype": "float64"}),
    numcodecs_case("bitround", "array", {"keepbits": 6}),
    numcodecs_case("quantize", "array", {"digits": 3}),
    numcodecs_case("astype", "array", {"encode_dtype": "float32"}),
    numcodecs_case("fixedscaleoffset", "array", {"offset": 2, "scale": 100, "astype": "int32"},
                   fill=1.25),
    numcodecs_case("packbits", "array", {}, dtype="bool", fill=True),
    numcodecs_case("pcodec", "serializer", {"level": 3}),
    numcodecs_case("zfpy", "serializer", {"mode": 4, "tolerance": 0.001}),
    *(numcodecs_case(i, "bytes", c, same_bytes=s) for i, c, s in [
        ("blosc", {"cname": "zstd", "clevel": 3, "shuffle": 1}, False),
        ("lz4", {"acceleration": 1}, True), ("zstd", {"level": 2}, False),
        ("zlib", {"level": 2}, True), ("gzip", {"level": 2}, False),
        ("bz2", {"level": 2}, True), ("lzma", {"preset": 1}, True),
        ("shuffle", {}, True), ("crc32", {}, True), ("crc32c", {}, True),
        ("adler32", {}, True), ("fletcher32", {}, True), ("jenkins_lookup3", {}, True)]),
]


def values_for(kind: str, dtype: str, shape: tuple[int, int]) -> np.ndarray:
    n = shape[0] * shape[1]
    i = np.arange(n, dtype="f8").reshape(shape)
    if dtype == "bool":
        return (i.astype(int) % 3) == 0
    if kind == "range2540":
        out = i * (2540 / n)
        out[0, 0] = np.nan
        return out.astype(dtype)
    if kind == "wide":  # in and out of the target's range, ties, negatives
        out = (i - n / 2) * 1234.5 + 0.5
        out[1, 1] = np.nan if dtype.startswith("float") and "f4" in dtype else out[1, 1]
        return out.astype(dtype)
    if kind == "smooth":
        return (np.sin(i / 7) * 100 + i / 3).astype(dtype)
    if kind == "ints":
        return ((i * 7919) % 1000 - 500).astype(dtype) * 3
    if kind == "bigints":
        return (np.arange(n, dtype="i8").reshape(shape) * 987_654_321_987 - 2**62).astype(dtype)
    if kind == "u1000":
        return (1000 + np.arange(n) % 256).reshape(shape).astype(dtype)
    if kind == "specials":
        out = i * 1.7 - 3
        out.flat[::5] = np.nan
        out.flat[1::7] = np.inf
        return out.astype(dtype)
    raise AssertionError(kind)


def fill_for_zarrx(value: Any) -> Any:
    return {"NaN": np.nan, "Infinity": np.inf}.get(value, value) if isinstance(value, str) \
        else value


def zarrx_write(root: Path, c: dict[str, Any], values: np.ndarray) -> None:
    entries = [{k: v for k, v in e.items() if k != "role"} for e in c["codecs"]]
    roles = [e["role"] for e in c["codecs"]]
    a = zarrx.create_array(
        str(root / "zarrx" / c["name"]), shape=c["shape"], chunks=c["chunks"],
        shards=c["shards"], dtype=c["dtype"], fill_value=fill_for_zarrx(c["fill_value"]),
        filters=[e for e, r in zip(entries, roles) if r == "array"] or None,
        serializer=next(e for e, r in zip(entries, roles) if r == "serializer"),
        compressors=[e for e, r in zip(entries, roles) if r == "bytes"] or None)
    a[tuple(slice(*r) for r in c["region"])] = values


@pytest.fixture(scope="module")
def exchanged(zarr34_python: str, tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("zarr34")
    (root / "in").mkdir()
    (root / "zarrx_read").mkdir()
    for c in CASES:
        (r0, r1), (c0, c1) = c["region"]
        values = values_for(c["values"], c["dtype"], (r1 - r0, c1 - c0))
        np.save(root / "in" / f"{c['name']}.npy", values)
        zarrx_write(root, c, values)
        np.save(root / "zarrx_read" / f"{c['name']}.npy",
                zarrx.open_array(str(root / "zarrx" / c["name"]))[...])
    (root / "cases.json").write_text(json.dumps(CASES))
    return root, run_peer(zarr34_python, "peer.py", root)


def assert_same(got: np.ndarray, expected: np.ndarray, what: str) -> None:
    assert got.shape == expected.shape, what
    assert got.dtype == expected.dtype, (what, got.dtype, expected.dtype)
    assert got.tobytes() == expected.tobytes(), f"{what}\n{got}\n{expected}"


IDS = [c["name"] for c in CASES]


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_zarrx_reads_what_zarr34_writes(exchanged: tuple[Path, dict[str, Any]],
                                        c: dict[str, Any]) -> None:
    root, report = exchanged
    assert "write_error" not in report[c["name"]], report[c["name"]]["write_error"]
    expected = np.load(root / "zarr_read" / f"{c['name']}.npy")
    a = zarrx.open_array(str(root / "zarr" / c["name"]))
    assert_same(a[...], expected, c["name"])
    assert_same(a[::-2, 3:15:4], expected[::-2, 3:15:4], c["name"] + " (a selection)")


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_zarr34_reads_what_zarrx_writes(exchanged: tuple[Path, dict[str, Any]],
                                        c: dict[str, Any]) -> None:
    root, report = exchanged
    assert "read_error" not in report[c["name"]], report[c["name"]]["read_error"]
    assert_same(np.load(root / "zarr_reads_zarrx" / f"{c['name']}.npy"),
                np.load(root / "zarrx_read" / f"{c['name']}.npy"), c["name"])


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_same_metadata_and_chunks(exchanged: tuple[Path, dict[str, Any]],
                                  c: dict[str, Any]) -> None:
    root, report = exchanged
    ours = json.loads((root / "zarrx" / c["name"] / "zarr.json").read_text())["codecs"]
    assert ours == report[c["name"]]["codecs"]
    files = sorted(p.relative_to(root / "zarr" / c["name"])
                   for p in (root / "zarr" / c["name"]).rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(root / "zarrx" / c["name"])
                           for p in (root / "zarrx" / c["name"]).rglob("*") if p.is_file())
    if c["same_bytes"]:
        for name in files:
            if name.name != "zarr.json":
                assert (root / "zarr" / c["name"] / name).read_bytes() == \
                    (root / "zarrx" / c["name"] / name).read_bytes(), name
