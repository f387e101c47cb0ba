"""xarray's ``to_zarr`` through zarrx's stores: every mode, ``region=``, ``append_dim=`` and
encodings. Each scenario is run twice — written by xarray into a plain path (zarr-python's
own store), and into a zarrx store — and the two must read back identically through
xarray's own ``zarr`` engine, hold the same bytes under the same keys, and read the same
through the ``zarrx`` engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import zarrx
from zarrx.integrations.xarray import to_zarr
from zarrx.integrations.zarr_store import as_zarr_store
from zarrx.stores.local import LocalStore
from zarrx.stores.memory import MemoryStore

pytestmark = pytest.mark.filterwarnings(
    "ignore:Consolidated metadata is currently not part:UserWarning"  # zarr-python, writing v3
)

Write = Callable[[xr.Dataset, Any], Any]  # (dataset, target) -> writes it


def _dataset(start: int = 0, days: int = 4) -> xr.Dataset:
    rng = np.random.default_rng(start)
    temperature = rng.normal(15, 5, (days, 6, 5))
    temperature[0, 1, 2] = np.nan
    return xr.Dataset(
        {
            "temperature": (("time", "y", "x"), temperature, {"units": "degC"}),
            "pressure": (("time",), np.linspace(1000, 1010, days) + start),
            "land": (("y", "x"), (np.arange(30).reshape(6, 5) % 3 == 0)),
        },
        coords={
            "time": pd.date_range("2024-01-01", periods=days, freq="D") + pd.Timedelta(days=start),
            "x": np.arange(5) * 0.5,
            "y": np.arange(6),
            "station": ("x", np.array(["a", "bb", "ccc", "d", "ee"], dtype=object)),
        },
        attrs={"title": "through zarrx"},
    )


def _chunked(ds: xr.Dataset, **chunks: int) -> xr.Dataset:
    """``ds`` with its data variables as dask arrays (the coordinates stay NumPy)."""
    return ds.assign({
        name: ds[name].chunk({d: n for d, n in chunks.items() if d in ds[name].dims})
        for name in ds.data_vars
    })


def _stored(path: Path) -> dict[str, bytes]:
    store = LocalStore(path)
    return {key: store.get(key) for key in store.list()}  # type: ignore[misc]


def _both(tmp_path: Path, steps: list[Write]) -> tuple[Path, Path]:
    """Run ``steps`` against a plain path (xarray + zarr-python) and a zarrx LocalStore."""
    theirs, ours = tmp_path / "theirs.zarr", tmp_path / "ours.zarr"
    for step in steps:
        step(xr.Dataset(), theirs)  # the dataset each step writes is its own
        step(xr.Dataset(), LocalStore(ours))
    return theirs, ours


def _check_same(theirs: Path, ours: Path, expected: xr.Dataset | None = None) -> xr.Dataset:
    stored = xr.open_zarr(ours, consolidated=False).load()
    xr.testing.assert_identical(stored, xr.open_zarr(theirs, consolidated=False).load())
    assert _stored(ours) == _stored(theirs)  # same keys, same bytes
    read_by_zarrx = xr.open_dataset(ours, engine="zarrx").load()
    xr.testing.assert_identical(read_by_zarrx, stored)
    if expected is not None:
        xr.testing.assert_identical(stored, expected)
    return stored


def _writer(ds: xr.Dataset, **kwargs: Any) -> Write:
    def write(_: xr.Dataset, target: Any) -> Any:
        if isinstance(target, Path):
            return ds.to_zarr(target, **kwargs)
        return to_zarr(ds, target, **kwargs)

    return write


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_mode_w_with_encodings(tmp_path: Path, zarr_format: int) -> None:
    ds = _dataset()
    encoding: dict[str, Any] = {
        "temperature": {"chunks": (2, 3, 5)},
        "pressure": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 1000.0,
                     "_FillValue": -9999},
    }
    if zarr_format == 3:
        encoding["temperature"]["compressors"] = [
            {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3, "shuffle": "shuffle"}}
        ]
    theirs, ours = _both(tmp_path, [
        _writer(ds, mode="w", zarr_format=zarr_format, encoding=encoding, consolidated=True),
    ])
    stored = _check_same(theirs, ours)
    xr.testing.assert_allclose(stored, ds)
    assert stored["temperature"].encoding["chunks"] == (2, 3, 5)
    assert stored["pressure"].encoding["scale_factor"] == 0.01


def test_mode_w_minus_refuses_an_existing_store(tmp_path: Path) -> None:
    ds = _dataset()
    theirs, ours = _both(tmp_path, [_writer(ds, mode="w", consolidated=False)])
    with pytest.raises(Exception) as expected:  # noqa: PT011 - whatever xarray raises
        ds.to_zarr(theirs, mode="w-")
    with pytest.raises(type(expected.value)):
        to_zarr(ds, LocalStore(ours), mode="w-")
    _check_same(theirs, ours, ds)


def test_mode_a_adds_variables_and_append_dim_grows(tmp_path: Path) -> None:
    first, second, third = _dataset(0), _dataset(4), _dataset(8, days=3)
    extra = xr.Dataset({"humidity": (("y", "x"), np.ones((6, 5)) * 0.5)})
    theirs, ours = _both(tmp_path, [
        _writer(first, mode="w", consolidated=False),
        _writer(extra, mode="a", consolidated=False),
        _writer(second.drop_vars(["land", "station"]), append_dim="time", consolidated=False),
        _writer(third.drop_vars(["land", "station"]), append_dim="time", consolidated=False),
    ])
    expected = xr.merge([
        xr.concat([first, second, third], dim="time", data_vars="minimal", coords="minimal",
                  compat="override", join="outer"),
        extra,
    ], combine_attrs="override")
    stored = _check_same(theirs, ours)
    assert stored.sizes["time"] == 11
    xr.testing.assert_identical(stored[["temperature", "pressure", "humidity"]],
                                expected[["temperature", "pressure", "humidity"]])


@pytest.mark.parametrize("shards", [None, (4, 6, 5)], ids=["chunked", "sharded"])
def test_template_then_region_writes(tmp_path: Path, shards: Any) -> None:
    """The parallel pattern: the metadata and coordinates first (``compute=False``), then
    each writer its region with ``mode="r+"``, by slices and by ``region="auto"``."""
    ds = _chunked(_dataset(days=8), time=4)
    encoding = {"temperature": {"chunks": (2, 3, 5)}}
    if shards:
        encoding["temperature"]["shards"] = shards
    variables = ["temperature", "pressure"]
    steps = [_writer(ds, mode="w", compute=False, encoding=encoding, consolidated=False)]
    for start in (0, 4):
        part = ds.isel(time=slice(start, start + 4))
        steps.append(_writer(part[variables].drop_vars(["x", "y", "station"]), mode="r+",
                             region={"time": slice(start, start + 4)}, consolidated=False))
    steps.append(_writer(ds[["land"]].drop_vars(["x", "y", "station"]), mode="r+",
                         region="auto", consolidated=False))
    theirs, ours = _both(tmp_path, steps)
    _check_same(theirs, ours, ds.compute())
    if shards:
        assert zarrx.open_array(ours, path="temperature").shards == shards


def test_dask_backed_dataset_on_the_threaded_scheduler(tmp_path: Path) -> None:
    ds = _chunked(_dataset(days=12), time=2, y=3)
    with dask.config.set(scheduler="threads"):
        theirs, ours = _both(tmp_path, [_writer(ds, mode="w", zarr_format=3, consolidated=False)])
    _check_same(theirs, ours, ds.compute())


def test_a_dataarray_and_a_group_and_the_accessor(tmp_path: Path) -> None:
    ds = _dataset()
    g = zarrx.create_group(LocalStore(tmp_path / "h.zarr")).create_group("runs")
    to_zarr(ds["temperature"], g, group="one", mode="w", consolidated=False)
    ds.zarrx.to_zarr(LocalStore(tmp_path / "h.zarr"), group="runs/two", mode="w",
                     consolidated=False)
    one = xr.open_zarr(tmp_path / "h.zarr", group="runs/one", consolidated=False).load()
    two = xr.open_zarr(tmp_path / "h.zarr", group="runs/two", consolidated=False).load()
    xr.testing.assert_identical(one["temperature"], ds["temperature"])
    xr.testing.assert_identical(two, ds)


def test_memory_and_url_stores(tmp_path: Path) -> None:
    ds = _dataset()
    store = MemoryStore()
    to_zarr(ds, store, mode="w", consolidated=False)
    assert "temperature/zarr.json" in store.list()
    xr.testing.assert_identical(xr.open_dataset(store, engine="zarrx").load(), ds)
    wrapped = as_zarr_store(store)  # the zarrx engine opens what it wraps
    xr.testing.assert_identical(xr.open_dataset(wrapped, engine="zarrx").load(), ds)
    to_zarr(ds, f"file://{tmp_path / 'u.zarr'}", mode="w", consolidated=False)
    xr.testing.assert_identical(xr.open_zarr(tmp_path / "u.zarr", consolidated=False).load(), ds)
