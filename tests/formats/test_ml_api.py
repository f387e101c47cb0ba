"""The machine-learning data types work everywhere float32 does: every selection and
assignment kind (compared with NumPy on the same data, bit for bit), sharding, consolidated
metadata (v3 and v2), ZOM snapshots, ``zarrx info``, dask and xarray; and assignment
casts as NumPy's ``__setitem__`` does with ml_dtypes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import dask.array as da
import ml_dtypes
import numpy as np
import pytest
import xarray as xr

import zarrx
from tests.formats.test_ml_dtypes import assert_same_bits, bits, sample
from zarrx.zom import GroupSpec, from_json

TYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float6_e3m2fn",
         "int4", "uint2")
SHAPE, CHUNKS, SHARDS = (7, 10), (2, 3), (4, 6)


def dtype_of(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name))


@pytest.fixture(params=TYPES)
def stored(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[zarrx.Array, np.ndarray]:
    """A sharded array of the type holding random bit patterns, and the same in NumPy."""
    data = sample(request.param, SHAPE[0] * SHAPE[1]).reshape(SHAPE)
    a = zarrx.create_array(str(tmp_path / "a"), shape=SHAPE, chunks=CHUNKS, shards=SHARDS,
                           dtype=request.param, fill_value=1)
    a[...] = data
    return a, data


SELECTIONS: list[tuple[str, Any]] = [
    ("basic", (slice(1, 6), slice(None, None, -3))),
    ("int", (3, 4)),
    ("newaxis", (None, Ellipsis, 2)),
    ("fancy", ([0, 6, 2], slice(1, 9, 2))),
    ("points", ([0, 6, 2], [9, 0, 4])),
    ("mask-row", (np.array([True, False, True, False, False, True, True]),)),
]


@pytest.mark.parametrize(("kind", "selection"), SELECTIONS, ids=[s[0] for s in SELECTIONS])
def test_selections(stored: tuple[zarrx.Array, np.ndarray], kind: str, selection: Any) -> None:
    a, data = stored
    assert_same_bits(np.asarray(a[selection]), np.asarray(data[selection]))


def test_orthogonal_vectorized_block_and_mask(stored: tuple[zarrx.Array, np.ndarray]) -> None:
    a, data = stored
    assert_same_bits(a.oindex[[0, 5], [1, 7, 8]], data[np.ix_([0, 5], [1, 7, 8])])
    assert_same_bits(a.vindex[[0, 5, 6], [1, 7, 8]], data[[0, 5, 6], [1, 7, 8]])
    assert_same_bits(a.blocks[1, 2], data[2:4, 6:9])
    mask = data.view(np.uint8 if data.itemsize == 1 else np.uint16) % 3 == 0
    assert_same_bits(a[mask], data[mask])
    assert_same_bits(a.vindex[mask], data[mask])


def test_every_assignment_kind(stored: tuple[zarrx.Array, np.ndarray]) -> None:
    a, data = stored
    expected = data.copy()
    values = sample(a.dtype.name, 64, seed=5)
    writes: list[tuple[Any, Any]] = [
        ((slice(1, 6), slice(None, None, -3)), values[:20].reshape(5, 4)),
        ((3, 4), values[20]),
        ((Ellipsis, 0), values[21:28]),
    ]
    for selection, value in writes:
        a[selection] = value
        expected[selection] = value
    a.oindex[[0, 6], [2, 5]] = values[28:32].reshape(2, 2)
    expected[np.ix_([0, 6], [2, 5])] = values[28:32].reshape(2, 2)
    a.vindex[[1, 2], [8, 9]] = values[32:34]
    expected[[1, 2], [8, 9]] = values[32:34]
    a.blocks[0, 0] = values[34:40].reshape(2, 3)
    expected[0:2, 0:3] = values[34:40].reshape(2, 3)
    mask = np.zeros(SHAPE, dtype=bool)
    mask[5, ::2] = True
    a[mask] = values[40]
    expected[mask] = values[40]
    assert_same_bits(a[...], expected)


def test_resize_and_append(stored: tuple[zarrx.Array, np.ndarray]) -> None:
    a, data = stored
    more = sample(a.dtype.name, 2 * SHAPE[1], seed=9).reshape(2, SHAPE[1])
    a.append(more, axis=0)
    a.resize((SHAPE[0] + 3, SHAPE[1]))
    fill = a.fill_value
    expected = np.concatenate([data, more, np.full((1, SHAPE[1]), fill, a.dtype)])
    assert_same_bits(a[...], expected)


# -- assignment casts like NumPy's __setitem__ with ml_dtypes ------------------------------

def numpy_setitem(dtype: np.dtype, value: Any) -> np.ndarray | type[Exception]:
    """What NumPy does: ``tmp = np.empty(shape, dtype); tmp[...] = value``."""
    tmp = np.zeros(3, dtype=dtype)
    try:
        tmp[...] = value
    except (ValueError, OverflowError, TypeError) as e:
        return type(e)
    return tmp


CASTS = [
    ("bfloat16", np.float64(1.00390625 + 1e-9)),  # rounds (ml_dtypes via float32)
    ("bfloat16", [0.1, 65504.0, -3.3]),  # rounds
    ("float8_e4m3fn", np.array([1e10, 0.3, -500.0])),  # past the range -> NaN
    ("float4_e2m1fn", 2.6),  # rounds to 3
    ("int4", 20),  # wraps, as NumPy with ml_dtypes does
    ("int4", np.array([1.9, -7.5, 3.0])),
    ("uint2", 5),
    ("float8_e5m2", np.array([1, 2, 3], dtype=ml_dtypes.bfloat16)),  # between ML types
]

#: Where a plain ``astype`` would differ from NumPy's ``__setitem__`` (NumPy raises and
#: astype does not, or astype warns where NumPy does not).
CASTS += [
    ("int4", np.nan),  # NumPy: ValueError (cannot convert float NaN to integer)
    ("int4", 1e10),  # NumPy: OverflowError
    ("uint2", np.inf),  # NumPy: OverflowError
    ("bfloat16", [0.1, 1e39, -3.3]),  # NumPy: inf, silently; astype: RuntimeWarning
]


def check_assignment(name: str, value: Any) -> None:
    """zarrx's ``a[...] = value`` ends as NumPy's: the same bits, or the same error with
    nothing written."""
    a = zarrx.create_array("memory://", shape=(3,), chunks=(2,), dtype=name, fill_value=1)
    expected = numpy_setitem(a.dtype, value)
    if isinstance(expected, np.ndarray):
        a[...] = value
        assert_same_bits(a[...], expected)
    else:
        with pytest.raises(expected):
            a[...] = value
        assert a[...].view(np.uint8).tolist() == [1, 1, 1]  # nothing written


@pytest.mark.parametrize(("name", "value"), CASTS, ids=[f"{n}-{v!r}" for n, v in CASTS])
def test_assignment_casts_like_numpy(name: str, value: Any) -> None:
    check_assignment(name, value)


# -- hierarchy-level features -------------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", [3, 2])
def test_consolidated_metadata(zarr_format: int, tmp_path: Path) -> None:
    g = zarrx.create_group(str(tmp_path), zarr_format=zarr_format)
    for i, name in enumerate(TYPES):
        g.create_array(name, shape=(4,), chunks=(2,), dtype=name, fill_value=i % 2)
    zarrx.consolidate_metadata(str(tmp_path))
    c = zarrx.open_consolidated(str(tmp_path))
    for i, name in enumerate(TYPES):
        assert c[name].dtype == dtype_of(name)
        assert bits(c[name].fill_value) == bits(c[name].metadata.data_type.fill_from_json(i % 2)
                                                if zarr_format == 3 else
                                                np.array(i % 2).astype(dtype_of(name)))


def test_zom_snapshot(tmp_path: Path) -> None:
    g = zarrx.create_group(str(tmp_path / "g"))
    g.create_array("w", shape=(4, 4), chunks=(2, 2), dtype="bfloat16", fill_value="0x7fc1")
    g.create_array("q", shape=(8,), chunks=(4,), dtype="int4", fill_value=-1,
                   serializer={"name": "packbits"})
    spec = GroupSpec.from_zarr(g)
    doc = spec.to_json()
    assert doc["members"]["w"]["data_type"] == "bfloat16"
    assert doc["members"]["w"]["fill_value"] == "0x7fc1"
    assert doc["members"]["q"]["fill_value"] == -1
    again = from_json(doc)
    assert again == spec
    copy = again.to_zarr(zarrx.storage.MemoryStore())
    assert GroupSpec.from_zarr(copy) == spec
    assert bits(copy["w"].fill_value) == 0x7FC1
    assert bits(copy["q"].fill_value) == 0xFF


def test_cli_info(tmp_path: Path) -> None:
    a = zarrx.create_array(str(tmp_path / "a"), shape=(6, 8), chunks=(2, 3), dtype="bfloat16",
                           fill_value=np.nan)
    a[...] = 1.5
    out = subprocess.run([sys.executable, "-m", "zarrx", "info", str(tmp_path / "a")],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert "bfloat16" in out
    assert "nan" in out


def test_dask(stored: tuple[zarrx.Array, np.ndarray]) -> None:
    a, data = stored
    d = da.from_array(a, chunks=a.chunks)
    assert_same_bits(d.compute(), data)
    assert_same_bits(d[1:6, ::2].compute(), data[1:6, ::2])


def test_xarray(tmp_path: Path) -> None:
    g = zarrx.create_group(str(tmp_path))
    data = sample("bfloat16", 24).reshape(4, 6)
    w = g.create_array("w", shape=(4, 6), chunks=(2, 3), dtype="bfloat16",
                       dimension_names=["y", "x"])
    w[...] = data
    q = g.create_array("q", shape=(6,), chunks=(4,), dtype="int4", dimension_names=["x"])
    q[...] = np.arange(-3, 3).astype(ml_dtypes.int4)
    ds = xr.open_dataset(str(tmp_path), engine="zarrx", mask_and_scale=False).load()
    assert_same_bits(ds["w"].values, data)
    assert ds["q"].values.tolist() == [-3, -2, -1, 0, 1, 2]
