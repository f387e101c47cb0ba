"""The offset extension, installed: the stored array is presented from its offset on."""

import json

import numpy as np
import pytest
from zarrx_offset import OffsetExtension

import zarrx
from zarrx.errors import MetadataError


def _with_offset(tmp_path, offset):
    root = tmp_path / "o.zarr"
    data = np.arange(100, dtype="i4").reshape(10, 10)
    zarrx.create_array(str(root), shape=(10, 10), dtype="i4", chunks=(3, 4))[...] = data
    doc = json.loads((root / "zarr.json").read_text())
    doc["extensions"] = [{"name": "example.offset", "configuration": {"offset": offset}}]
    (root / "zarr.json").write_text(json.dumps(doc))
    return root, data


def test_offset_moves_the_origin(tmp_path):
    root, data = _with_offset(tmp_path, [2, 3])
    a = zarrx.open_array(str(root), mode="r+")
    assert isinstance(a.extensions["example.offset"], OffsetExtension)
    assert a.shape == (8, 7)
    np.testing.assert_array_equal(a[...], data[2:, 3:])
    np.testing.assert_array_equal(a[1:5:2, -1], data[3:7:2, -1])
    np.testing.assert_array_equal(a.oindex[[0, 7], [6, 0]], data[np.ix_([2, 9], [9, 3])])
    np.testing.assert_array_equal(a.vindex[[0, 7], [6, 0]], data[[2, 9], [9, 3]])
    a[0, 0] = -1
    doc = json.loads((root / "zarr.json").read_text())
    assert doc["extensions"][0]["configuration"] == {"offset": [2, 3]}
    del doc["extensions"]
    (root / "zarr.json").write_text(json.dumps(doc))
    assert zarrx.open_array(str(root))[2, 3] == -1  # the stored element at the offset


def test_created_with_the_extension(tmp_path):
    a = zarrx.create_array(str(tmp_path / "c"), shape=(6,), dtype="f8", chunks=(4,),
                           extensions=[OffsetExtension({"offset": [4]})])
    assert a.shape == (2,)
    a[...] = [1.5, 2.5]
    assert zarrx.open_array(str(tmp_path / "c"))[...].tolist() == [1.5, 2.5]


@pytest.mark.parametrize("offset", [[1], [11, 0], [-1, 0], "x"])
def test_bad_offsets(tmp_path, offset):
    root, _ = _with_offset(tmp_path, offset)
    with pytest.raises(MetadataError, match="offset"):
        zarrx.open(str(root))
