"""Arrays committed in zarrs' tests (``tests/fixtures/zarrs``, see its README), read offline:
the values their descriptions list, and zarrx writing the very bytes zarrs wrote."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import zarrx

FIXTURES = Path(__file__).parents[1] / "fixtures" / "zarrs" / "v3"
N = None  # a missing value
#: The values each array's description lists (N missing; SN: present, its inner value missing)
EXPECTED = {
    "array_optional": [[0, N, 2, 3], [N, 5, N, 7], [8, 9, N, N], [12, N, N, N]],
}
#: array_optional_nested: (outer valid, inner valid, value) per element
NESTED = [
    [(0, 0, 0), (1, 0, 0), (1, 1, 2), (1, 1, 3)],
    [(0, 0, 0), (1, 1, 5), (0, 0, 0), (1, 1, 7)],
    [(1, 0, 0), (1, 0, 0), (0, 0, 0), (0, 0, 0)],
    [(1, 0, 0), (1, 0, 0), (0, 0, 0), (0, 0, 0)],
]


def test_optional_uint8_reads_as_a_masked_array():
    a = zarrx.open_array(str(FIXTURES / "array_optional" / "array"), mode="r")
    assert a.dtype == np.uint8
    assert a.fill_value is np.ma.masked
    got = a[...]
    assert isinstance(got, np.ma.MaskedArray)
    assert got.tolist() == EXPECTED["array_optional"]
    assert a[0, 1] is np.ma.masked
    assert a[1, 3] == 7
    assert a[::-2, 1:].tolist() == [[N, N, N], [5, N, 7]]
    assert a.vindex[[0, 3, 2], [0, 0, 3]].tolist() == [0, 12, N]


def test_nested_optional_keeps_its_levels_in_the_records():
    a = zarrx.open_array(str(FIXTURES / "array_optional_nested" / "array"), mode="r")
    want = np.array(NESTED)
    got = a[...]
    assert got.tolist() == [[v if o and i else N for o, i, v in row] for row in NESTED]
    records = a.get_basic_selection(..., fields="value")
    np.testing.assert_array_equal(a.get_basic_selection(..., fields="valid"), want[..., 0])
    np.testing.assert_array_equal(records["valid"], want[..., 1] * want[..., 0])
    np.testing.assert_array_equal(records["value"], want[..., 2])


@pytest.mark.parametrize("name", ["array_optional", "array_optional_nested"])
def test_zarrx_writes_the_bytes_zarrs_wrote(tmp_path, name):
    source = FIXTURES / name / "array"
    target = tmp_path / name
    shutil.copytree(source, target)
    for chunk in target.glob("c/*/*"):
        chunk.unlink()
    elements = zarrx.open_array(str(source), mode="r").get_basic_selection(
        ..., fields=["value", "valid"])
    zarrx.open_array(str(target))[...] = elements
    stored = sorted(p.relative_to(source).as_posix() for p in source.glob("c/*/*"))
    assert sorted(p.relative_to(target).as_posix() for p in target.glob("c/*/*")) == stored
    for key in stored:
        assert (target / key).read_bytes() == (source / key).read_bytes(), key
    doc = json.loads((source / "zarr.json").read_text())
    written = zarrx.open_array(str(target)).metadata.to_json()
    assert written["data_type"] == doc["data_type"]
    assert written["fill_value"] == doc["fill_value"]
