"""Consolidated metadata (v2 .zmetadata, v3 inline) written by zarr-python and by zarrx."""

import warnings

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.errors import NodeNotFoundError
from zarrx.storage import LocalStore


class CountingStore(LocalStore):
    """Counts read calls: one get_many batch counts once, like one round trip."""

    def __init__(self, root, read_only=False):
        super().__init__(root, read_only=read_only)
        self.calls = []

    def get(self, key, byte_range=None):
        self.calls.append(("get", key))
        return super().get(key, byte_range)

    def get_many(self, requests):
        self.calls.append(("get_many", [k for k, _ in requests]))
        return [LocalStore.get(self, k, r) for k, r in requests]

    def list_dir(self, prefix):
        self.calls.append(("list_dir", prefix))
        return super().list_dir(prefix)


def _zarr_hierarchy(root, zarr_format):
    g = zarr.open_group(str(root), mode="w", zarr_format=zarr_format)
    g.attrs["title"] = "t"
    for i in range(5):
        sub = g.create_group(f"g{i}")
        a = sub.create_array("x", shape=(4,), dtype="i2", chunks=(2,))
        a[...] = np.arange(4) + i
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python warns that v3 consolidation is unofficial
        zarr.consolidate_metadata(str(root))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_consolidated_opens_with_one_read(tmp_path, zarr_format):
    _zarr_hierarchy(tmp_path / "h", zarr_format)
    store = CountingStore(str(tmp_path / "h"))
    g = zarrx.open_group(store)
    names = [name for name, _ in g.members(max_depth=None)]
    assert names == sorted([f"g{i}" for i in range(5)] + [f"g{i}/x" for i in range(5)])
    assert g["g3/x"].shape == (4,)
    assert g.attrs["title"] == "t"
    assert len(store.calls) == 1, store.calls
    np.testing.assert_array_equal(g["g2/x"][...], np.arange(4) + 2)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_ignoring_stale_consolidated_metadata(tmp_path, zarr_format):
    _zarr_hierarchy(tmp_path / "h", zarr_format)
    zarr.open_group(str(tmp_path / "h"), mode="r+", use_consolidated=False).create_array(
        "late", shape=(1,), dtype="u1")
    stale = zarrx.open_group(str(tmp_path / "h"))
    assert "late" not in stale
    fresh = zarrx.open_group(str(tmp_path / "h"), use_consolidated=False)
    assert fresh.consolidated is None
    assert "late" in fresh


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarrx_consolidates_for_zarr_python(tmp_path, zarr_format):
    root = str(tmp_path / "c")
    g = zarrx.create_group(root, zarr_format=zarr_format, attributes={"k": 1})
    g.create_array("a/b", shape=(3,), dtype="f4")[...] = [1, 2, 3]
    g.create_group("e")
    with pytest.raises(NodeNotFoundError, match="consolidated"):
        zarrx.open_consolidated(root)
    opened = zarrx.consolidate_metadata(root)
    assert sorted(opened.consolidated) == ["a", "a/b", "e"]
    z = zarr.open_consolidated(root, zarr_format=zarr_format)
    assert sorted(name for name, _ in z.members(max_depth=None)) == ["a", "a/b", "e"]
    np.testing.assert_array_equal(z["a/b"][...], [1, 2, 3])
    assert dict(z.attrs) == {"k": 1}
    assert zarrx.open_consolidated(root)["a/b"].dtype == np.float32


def test_writing_through_a_consolidated_group_drops_the_snapshot(tmp_path):
    root = str(tmp_path / "w")
    zarrx.create_group(root).create_array("x", shape=(1,), dtype="i1")
    zarrx.consolidate_metadata(root)
    g = zarrx.open_group(root, mode="r+")
    assert g.consolidated is not None
    g.create_array("y", shape=(1,), dtype="i1")
    assert g.consolidated is None
    assert [n for n, _ in g.members()] == ["x", "y"]
