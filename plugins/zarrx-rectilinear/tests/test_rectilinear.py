"""The rectilinear grid, installed: variable chunk sizes, read and write like NumPy."""

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from zarrx_rectilinear import RectilinearChunkGrid

import zarrx
from zarrx.storage import MemoryStore


def test_layout_and_metadata(tmp_path):
    root = tmp_path / "r.zarr"
    a = zarrx.create_array(str(root), shape=(10, 10), dtype="u2", chunks=[[2, 3, 5], [[4, 2], 2]],
                           compressors=None)
    assert isinstance(a.metadata.chunk_grid, RectilinearChunkGrid)
    data = np.arange(100, dtype="u2").reshape(10, 10)
    a[...] = data
    doc = json.loads((root / "zarr.json").read_text())
    assert doc["chunk_grid"] == {"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[2, 3, 5], [[4, 2], 2]]}}
    assert (root / "c" / "1" / "2").stat().st_size == 3 * 2 * 2  # a 3 x 2 chunk of uint16
    assert (root / "c" / "2" / "0").stat().st_size == 5 * 4 * 2
    np.testing.assert_array_equal(zarrx.open_array(str(root))[...], data)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_selections_match_numpy(draw):
    sizes = [draw.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)) for _ in range(2)]
    shape = tuple(sum(s) for s in sizes)
    data = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape)
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype="i4", chunks=sizes, fill_value=-1)
    a[...] = data
    sl = tuple(slice(draw.draw(st.integers(0, n)), None, draw.draw(st.integers(1, 3)))
               for n in shape)
    np.testing.assert_array_equal(a[sl], data[sl])
    idx = [np.array(draw.draw(st.lists(st.integers(0, n - 1), max_size=5)), dtype=np.int64)
           for n in shape]
    np.testing.assert_array_equal(a.oindex[tuple(idx)], data[np.ix_(*idx)])
    points = tuple(np.array(draw.draw(st.lists(st.integers(0, n - 1), min_size=3, max_size=3)))
                   for n in shape)
    np.testing.assert_array_equal(a.vindex[points], data[points])
    a[sl] = 7
    data[sl] = 7
    np.testing.assert_array_equal(a[...], data)
