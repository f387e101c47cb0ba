"""The ``rectilinear`` chunk grid with zarr-python 3.4, both directions, with and without
shards: what one writes the other reads exactly (partial edge chunks, chunks never written,
non-zero and NaN fills), and zarrx's selections of the peer's arrays equal NumPy's.
tensorstore 0.1.86 refuses the grid (checked, so that its support is noticed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrx
from tests.interop.zarr34.conftest import run_peer

ZSTD = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
BLOSC = [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                            "shuffle": "shuffle", "blocksize": 0}}]


def case(shape, dtype, chunks, fill, written, shards=None, compressors=None):
    return {"shape": shape, "dtype": dtype, "chunks": chunks, "shards": shards,
            "fill_value": fill, "compressors": compressors, "written": written}


#: name → the array: per-axis edges (lists, [length, count] runs) or integers; shards of
#: variable sizes around regular inner chunks; the box written (the rest is the fill).
CASES = {
    "edges_nan_fill": case([10, 9], "float32", [[2, 3, 5], [4, 4, 1]], "NaN", [[0, 7], [1, 9]],
                           compressors=ZSTD),
    "runs": case([11], "uint16", [[4, 4, 2, 1]], 7, [[3, 10]]),
    "integer_axis_mixed": case([5, 7, 3], "int32", [[1, 4], 3, [2, 1]], -9,
                               [[1, 5], [0, 6], [0, 3]], compressors=BLOSC),
    "bool_single_chunk_axis": case([6, 4], "bool", [[6], [1, 1, 2]], True, [[0, 3], [0, 4]]),
    "sharded": case([10, 9], "int16", [2, 3], -3, [[1, 10], [0, 8]], shards=[[4, 6], [3, 6]],
                    compressors=ZSTD),
    "sharded_runs": case([14], "float64", [2], "NaN", [[2, 11]], shards=[[4, 4, 6]],
                         compressors=BLOSC),
}
#: zarr-python's create_array wants edges that end with the array; its reader, like the
#: spec, takes more (chunks wholly past the end): those arrays are written by zarrx only.
OVERFLOW = {
    "overflowing_edges": case([11], "uint16", [[4, 4, 4, 2, 2]], 7, [[3, 10]]),
    "overflowing_shards": case([9, 5], "int8", [3, 1], 1, [[0, 8], [1, 5]],
                               shards=[[6, 6, 6], [2, 4]], compressors=ZSTD),
}


def fill_of(case):
    return np.nan if case["fill_value"] == "NaN" else case["fill_value"]


def data_for(dtype, shape):
    """Not the peer's values (those are its own): zarrx's, different on purpose."""
    n = int(np.prod(shape))
    values = (np.arange(n) * 7 + 5) % 97
    if np.dtype(dtype).kind == "b":
        values = values % 2 == 0
    elif np.dtype(dtype).kind == "f":
        values = values / 8 - 3
    return values.astype(dtype).reshape(shape)


def same(got, want):
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()  # NaNs too, bit for bit


def sizes(case):
    """The sizes of the stored chunks (of the shards when sharded) inside the array, from the
    case: what zarr-python's ``write_chunk_sizes`` and zarrx's ``chunks``/``shards`` say."""
    out = []
    for spec, n in zip(case["shards"] or case["chunks"], case["shape"]):
        if isinstance(spec, int):
            edges = [spec] * -(-n // spec)
        else:
            edges = [s for item in spec for s in
                     ([item[0]] * item[1] if isinstance(item, list) else [item])]
        kept, start = [], 0
        for e in edges:
            if start >= n:
                break
            kept.append(min(e, n - start))
            start += e
        out.append(kept)
    return out


def test_zarrx_reads_what_zarr_python_writes(tmp_path: Path, zarr34_python: str) -> None:
    (tmp_path / "cases.json").write_text(json.dumps(CASES))
    report = run_peer(zarr34_python, "peer_rectilinear.py", "write", tmp_path / "cases.json",
                      tmp_path)
    for name, case in CASES.items():
        expected = np.load(tmp_path / f"{name}.npy")
        a = zarrx.open_array(str(tmp_path / name), mode="r")
        assert a.metadata.chunk_grid.to_dict() == report["arrays"][name]["chunk_grid"], name
        same(a[...], expected)
        for sel in [(slice(None, None, -1),), (slice(1, None, 3),), (Ellipsis, -1)]:
            same(np.asarray(a[sel]), expected[sel])
        points = tuple(np.arange(n)[::-2] % n for n in case["shape"])
        width = min(len(p) for p in points)
        same(a.vindex[tuple(p[:width] for p in points)],
             expected[tuple(p[:width] for p in points)])
        got_sizes = a.shards if case["shards"] else a.chunks
        assert [list(s) for s in got_sizes] == sizes(case)
        assert report["arrays"][name]["write_chunk_sizes"] == sizes(case)


def test_zarr_python_reads_what_zarrx_writes(tmp_path: Path, zarr34_python: str) -> None:
    cases = {**CASES, **OVERFLOW}
    expected = {}
    for name, case in cases.items():
        a = zarrx.create_array(
            str(tmp_path / name), shape=tuple(case["shape"]), dtype=case["dtype"],
            chunks=case["chunks"], shards=case["shards"], fill_value=fill_of(case),
            compressors=case["compressors"],
        )
        box = tuple(slice(lo, hi) for lo, hi in case["written"])
        part = data_for(case["dtype"], tuple(s.stop - s.start for s in box))
        a[box] = part
        want = np.full(tuple(case["shape"]), fill_of(case), dtype=case["dtype"])
        want[box] = part
        expected[name] = want
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    report = run_peer(zarr34_python, "peer_rectilinear.py", "read", tmp_path / "cases.json",
                      tmp_path)
    for name, case in cases.items():
        same(np.load(tmp_path / f"{name}.read.npy"), expected[name])
        grid = json.loads((tmp_path / name / "zarr.json").read_text())["chunk_grid"]
        assert report["arrays"][name]["chunk_grid"] == grid
        assert report["arrays"][name]["write_chunk_sizes"] == sizes(case)


def test_tensorstore_refuses_the_grid(tmp_path: Path) -> None:
    ts = pytest.importorskip("tensorstore")
    zarrx.create_array(str(tmp_path / "a"), shape=(5,), dtype="u1", chunks=[[2, 3]])
    with pytest.raises(ValueError, match="rectilinear"):
        ts.open({"driver": "zarr3", "kvstore": f"file://{tmp_path / 'a'}"}).result()
