"""numpy.datetime64 / numpy.timedelta64 extension data types, both ways with zarr-python."""

import json

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.errors import FillValueError, MetadataError

DTYPES = ["datetime64[ns]", "datetime64[10s]", "datetime64[D]", "timedelta64[ms]",
          "timedelta64[3h]"]


def _values(dtype):
    v = np.array([0, 1, -5, 123456, np.iinfo("i8").min], dtype="i8").view(dtype)
    return v  # the last one is NaT


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fill", [None, "NaT"])
def test_both_ways(tmp_path, dtype, fill):
    fill_value = None if fill is None else np.array("NaT", dtype=dtype)[()]
    values = _values(dtype)
    a = zarrx.create_array(str(tmp_path / "x"), shape=(7,), dtype=dtype, chunks=(3,),
                           fill_value=fill_value)
    a[:5] = values
    z = zarr.open_array(str(tmp_path / "x"))
    assert z.dtype == np.dtype(dtype)
    assert z[...].view("i8").tolist() == a[...].view("i8").tolist()
    w = zarr.create_array(str(tmp_path / "w"), shape=(7,), dtype=dtype, chunks=(3,),
                          fill_value=fill_value)
    w[1:6] = values
    got = zarrx.open_array(str(tmp_path / "w"))[...]
    assert got.dtype == np.dtype(dtype)
    assert got.view("i8").tolist() == w[...].view("i8").tolist()
    ours = json.loads((tmp_path / "x" / "zarr.json").read_text())
    theirs = json.loads((tmp_path / "w" / "zarr.json").read_text())
    assert ours["data_type"] == theirs["data_type"]
    assert ours["fill_value"] == theirs["fill_value"]


@pytest.mark.parametrize(
    ("data_type", "fill", "error"),
    [({"name": "numpy.datetime64", "configuration": {"unit": "parsec"}}, 0, MetadataError),
     ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 0}}, 0,
      MetadataError),
     ({"name": "numpy.timedelta64", "configuration": {"unit": "s"}}, "soon", FillValueError)],
)
def test_bad_time_metadata(tmp_path, data_type, fill, error):
    a = zarrx.create_array(str(tmp_path / "t"), shape=(2,), dtype="datetime64[s]")
    doc = a.metadata.to_json()
    doc.update(data_type=data_type, fill_value=fill)
    (tmp_path / "t" / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(error):
        zarrx.open(str(tmp_path / "t"))
