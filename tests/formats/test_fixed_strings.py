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
