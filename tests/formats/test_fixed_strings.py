"""Fixed-size strings and bytes in v3 (fixed_length_utf32, null_terminated_bytes), both ways."""

import json

import numpy as np
import pytest
import zarr

import zarrx

pytestmark = pytest.mark.filterwarnings("ignore:The data type .* does not have a Zarr V3")

CASES = [("<U4", ["ab", "héé", "", "wxyz"], "xx"), ("S3", [b"a", b"xyz", b"", b"\x00q"], b"f")]


@pytest.mark.parametrize(("dtype", "values", "fill"), CASES)
def test_both_ways(tmp_path, dtype, values, fill):
    values = np.array(values, dtype=dtype)
    z = zarr.create_array(str(tmp_path / "z"), shape=(5,), dtype=dtype, chunks=(2,),
                          fill_value=fill)
    z[:4] = values
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / "z"))[...], z[...])
    a = zarrx.create_array(str(tmp_path / "a"), shape=(5,), dtype=dtype, chunks=(2,),
                           fill_value=fill)
    a[:4] = values
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"))[...], z[...])
    ours = json.loads((tmp_path / "a" / "zarr.json").read_text())
    theirs = json.loads((tmp_path / "z" / "zarr.json").read_text())
    assert ours["data_type"] == theirs["data_type"]
    assert ours["fill_value"] == theirs["fill_value"]


@pytest.mark.parametrize("zarr_format", [3, 2, "3-draft"])
@pytest.mark.parametrize("dtype", ["<U", "U0", "S", "S0", "V0", np.dtype([])])
def test_a_type_of_no_size_is_refused_before_anything_is_written(tmp_path, dtype, zarr_format):
    """As zarr-python refuses it (it would write ``length_bytes: 0``, which no reader opens)."""
    with pytest.raises(zarrx.errors.MetadataError, match="holds zero bytes; give") as e:
        zarrx.create_array(str(tmp_path / "a"), shape=(3,), dtype=dtype,
                           zarr_format=zarr_format)
    assert isinstance(e.value, ValueError)
    assert not (tmp_path / "a").exists()
    with pytest.raises(zarrx.errors.MetadataError, match="holds zero bytes"):
        zarrx.zeros((3,), dtype=dtype, zarr_format=zarr_format)


@pytest.mark.parametrize("name", ["fixed_length_utf32", "null_terminated_bytes", "raw_bytes"])
def test_a_stored_type_of_no_size_is_refused(tmp_path, name):
    zarrx.create_array(str(tmp_path), shape=(3,), dtype="S4" if name != "raw_bytes" else "V4")
    doc = json.loads((tmp_path / "zarr.json").read_text())
    doc["data_type"] = {"name": name, "configuration": {"length_bytes": 0}}
    doc["fill_value"] = ""
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(zarrx.errors.MetadataError, match="length_bytes must be a positive"):
        zarrx.open_array(str(tmp_path), mode="r")
