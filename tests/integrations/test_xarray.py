"""The xarray backend: datasets written by xarray (with zarr-python) read by zarrx."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from zarrx.integrations.xarray import ZarrxBackendArray, ZarrxBackendEntrypoint, open_zarrx
from zarrx.stores.local import LocalStore

pytestmark = pytest.mark.filterwarnings(
    "ignore:Consolidated metadata is currently not part:UserWarning"  # zarr-python, writing v3
)


def _dataset() -> xr.Dataset:
    rng = np.random.default_rng(7)
    time = pd.date_range("2024-01-01", periods=6, freq="D")
    temperature = rng.normal(15, 5, (6, 4, 5))
    temperature[1, 2, 3] = np.nan
    counts = rng.integers(0, 50, (4, 5)).astype("i4")
    ds = xr.Dataset(
        {
            "temperature": (("time", "y", "x"), temperature, {"units": "degC", "long_name": "T"}),
            "counts": (("y", "x"), counts, {"note": "integers"}),
            "pressure": (("time",), np.linspace(1000, 1010, 6)),
            "flag": ((), np.int8(3)),
        },
        coords={
            "time": time,
            "x": np.arange(5) * 0.5,
            "y": ("y", np.arange(4), {"axis": "Y"}),
            # variable-length strings (zarr-python writes fixed-width "<U" as v3
            # "fixed_length_utf32", a data type zarrx does not read yet)
            "station": ("x", np.array(["a", "bb", "ccc", "d", "ee"], dtype=object)),
        },
        attrs={"title": "written by xarray", "version": 2},
    )
    # CF encodings xarray applies on write and must undo on read.
    ds["pressure"].encoding.update(
        {"dtype": "int16", "scale_factor": 0.01, "add_offset": 1000.0, "_FillValue": -9999}
    )
    ds["temperature"].encoding.update({"chunks": (2, 3, 5)})
    return ds


@pytest.fixture(params=[2, 3], ids=["zarr-v2", "zarr-v3"])
def written(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, xr.Dataset, int]:
    path = tmp_path / "dataset.zarr"
    ds = _dataset()
    ds.to_zarr(path, zarr_format=request.param, mode="w")
    return path, ds, request.param


def test_engine_is_registered() -> None:
    assert "zarrx" in xr.backends.list_engines()
    assert isinstance(xr.backends.list_engines()["zarrx"], ZarrxBackendEntrypoint)


def test_open_dataset_equals_open_zarr(written: tuple[Path, xr.Dataset, int]) -> None:
    path, original, _ = written
    ours = xr.open_dataset(path, engine="zarrx")
    theirs = xr.open_zarr(path)
    xr.testing.assert_identical(ours.load(), theirs.load())
    xr.testing.assert_identical(ours, original)  # CF decoding undid the encodings
    assert ours["pressure"].encoding["scale_factor"] == 0.01
    assert ours["temperature"].encoding["chunks"] == (2, 3, 5)
    assert ours["temperature"].encoding["preferred_chunks"] == {"time": 2, "y": 3, "x": 5}
    ours.close()
    theirs.close()


def test_open_zarrx_is_lazy_like_open_zarr(written: tuple[Path, xr.Dataset, int]) -> None:
    path, original, _ = written
    ours = open_zarrx(path)
    theirs = xr.open_zarr(path)
    assert ours["temperature"].chunks == theirs["temperature"].chunks == ((2, 2, 2), (3, 1), (5,))
    for name in ours.variables:
        assert ours[name].chunks == theirs[name].chunks, name
    xr.testing.assert_identical(ours.compute(), theirs.compute())
    xr.testing.assert_identical(ours.compute(), original)


class CountingStore(LocalStore):
    def __init__(self, root: Any) -> None:
        super().__init__(root, read_only=True)
        self.reads: Counter[str] = Counter()

    def get(self, key: str, byte_range: Any = None) -> bytes | None:
        self.reads[key] += 1
        return super().get(key, byte_range)

    def get_many(self, requests: Any) -> list[bytes | None]:
        return [self.get(key, byte_range) for key, byte_range in requests]


def test_reads_are_lazy_and_indexed_by_zarrx(written: tuple[Path, xr.Dataset, int]) -> None:
    path, original, zarr_format = written
    store = CountingStore(path)
    ds = xr.open_dataset(store, engine="zarrx")
    data_keys = [k for k in store.reads if k.startswith("temperature/") and "zarr" not in k
                 and not k.endswith((".zarray", ".zattrs"))]
    assert data_keys == []  # opening read metadata (and the index coordinates) only
    wrapped = ds["temperature"].variable._data
    while not isinstance(wrapped, ZarrxBackendArray):  # xarray's lazy wrappers, layer by layer
        wrapped = wrapped.array
    assert wrapped.shape == (6, 4, 5)

    def block(t: int) -> str:  # the chunk key of time block t (y and x block 0)
        return f"temperature/c/{t}/0/0" if zarr_format == 3 else f"temperature/{t}.0.0"

    t = original["temperature"]
    outer = ds["temperature"].isel(time=[0, 4], x=slice(1, 4))  # orthogonal: oindex
    np.testing.assert_array_equal(outer.values, t.isel(time=[0, 4], x=slice(1, 4)).values)
    assert store.reads[block(0)] == store.reads[block(2)] == 1
    assert store.reads[block(1)] == 0  # times 2-3 were not needed, so not read
    points = ds["temperature"].isel(time=xr.DataArray([0, 5, 3]), x=xr.DataArray([4, 0, 2]))
    expected = t.isel(time=xr.DataArray([0, 5, 3]), x=xr.DataArray([4, 0, 2]))  # vindex
    np.testing.assert_array_equal(points.values, expected.values)
    assert store.reads[block(1)] == 1
    assert ds["flag"].values == 3


def test_group_and_consolidated(tmp_path: Path) -> None:
    path = tmp_path / "grouped.zarr"
    ds = _dataset()
    ds.to_zarr(path, group="inner/level", zarr_format=3, mode="w", consolidated=False)
    ours = xr.open_dataset(path, engine="zarrx", group="inner/level", consolidated=False)
    theirs = xr.open_zarr(path, group="inner/level", consolidated=False)
    xr.testing.assert_identical(ours.load(), theirs.load())
    with pytest.raises(KeyError):
        xr.open_dataset(path, engine="zarrx", group="absent")


def test_guess_can_open(tmp_path: Path) -> None:
    engine = ZarrxBackendEntrypoint()
    assert engine.guess_can_open(str(tmp_path / "a.zarr"))
    assert engine.guess_can_open(tmp_path / "a.zarr/")
    assert engine.guess_can_open("zip:///data/a.zip")
    assert not engine.guess_can_open(str(tmp_path / "a.nc"))


def test_missing_dimension_names_is_a_clear_error(tmp_path: Path) -> None:
    import zarrx

    g = zarrx.create_group(str(tmp_path / "plain.zarr"))
    g.create_array("x", shape=(3,), dtype="i4", chunks=(3,))
    with pytest.raises(KeyError, match="dimension"):
        xr.open_dataset(tmp_path / "plain.zarr", engine="zarrx")


def test_fixed_width_text_and_zip_urls(tmp_path: Path) -> None:
    import zarrx
    from zarrx.stores.zip import ZipStore

    path = tmp_path / "text.zarr"
    ds = xr.Dataset(
        {"v": (("x",), np.arange(4.0))},
        coords={"code": ("x", np.array(["a", "bb", "c", "dd"]))},  # "<U2"
    )
    ds.to_zarr(path, zarr_format=2, mode="w")
    ours = xr.open_dataset(path, engine="zarrx")
    xr.testing.assert_identical(ours.load(), xr.open_zarr(path).load())
    assert ours["code"].dtype == np.dtype("<U2")
    source = LocalStore(path)  # the same dataset, moved into a zip archive
    with ZipStore(tmp_path / "text.zip", mode="w") as archive:
        for key in source.list():
            archive.set(key, source.get(key))
    zipped = xr.open_dataset(f"zip://{tmp_path / 'text.zip'}", engine="zarrx")
    xr.testing.assert_identical(zipped.load(), ours)
    store = zipped["v"].variable._data
    zipped.close()  # closes the archive the engine opened
    del store
    assert isinstance(zarrx.open(f"zip://{tmp_path / 'text.zip'}").store, ZipStore)


def test_chunked_dataset_pickles(written: tuple[Path, xr.Dataset, int]) -> None:
    import pickle

    path, original, _ = written
    ds = open_zarrx(path)
    again = pickle.loads(pickle.dumps(ds))  # what dask's process workers receive
    xr.testing.assert_identical(again.compute(), original)
