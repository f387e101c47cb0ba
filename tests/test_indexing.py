"""Fancy indexing (oindex, vindex, masks, blocks), resize and append, against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.errors import BoundsCheckError, SelectionError, ShapeError
from zarrx.storage import MemoryStore


@st.composite
def arrays(draw):
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)))
    chunks = tuple(draw(st.integers(1, n + 1)) for n in shape)
    sharded = draw(st.booleans())
    return shape, chunks, sharded


def _make(shape, chunks, sharded, data):
    kwargs = {}
    if sharded:
        kwargs["shards"] = tuple(c * 2 for c in chunks)
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype="int32", chunks=chunks,
                           fill_value=-7, **kwargs)
    a[...] = data
    return a


def _axis_index(draw, n):
    kind = draw(st.sampled_from(["int", "slice", "array", "mask"]))
    if kind == "int":
        return draw(st.integers(-n, n - 1))
    if kind == "slice":
        return slice(draw(st.none() | st.integers(-n, n)), draw(st.none() | st.integers(-n, n)),
                     draw(st.none() | st.integers(-3, 3).filter(bool)))
    if kind == "array":
        return np.array(draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=6)),
                        dtype=np.int64)
    return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))


@st.composite
def orthogonal_cases(draw):
    shape, chunks, sharded = draw(arrays())
    selection = tuple(_axis_index(draw, n) for n in shape)
    return shape, chunks, sharded, selection


def _numpy_orthogonal(data, selection):
    out = data
    axis = 0
    for item in selection:
        index = [slice(None)] * out.ndim
        if isinstance(item, np.ndarray | slice):
            index[axis] = item
            out = out[tuple(index)]
            axis += 1
        else:
            index[axis] = item
            out = out[tuple(index)]
    return out


@settings(max_examples=150, deadline=None)
@given(orthogonal_cases(), st.integers(0, 1000))
def test_oindex_matches_numpy(case, seed):
    shape, chunks, sharded, selection = case
    data = np.random.default_rng(seed).integers(-100, 100, size=shape).astype("int32")
    a = _make(shape, chunks, sharded, data)
    expected = _numpy_orthogonal(data, selection)
    got = a.oindex[selection]
    np.testing.assert_array_equal(got, expected)
    assert np.shape(got) == np.shape(expected)
    # write: new values through the same selection
    value = np.arange(expected.size, dtype="int32").reshape(np.shape(expected)) + 1000
    a.oindex[selection] = value
    view = data.copy()
    # NumPy's orthogonal assignment: build it with np.ix_ on normalised arrays
    norm = []
    for item, n in zip(selection, shape):
        if isinstance(item, np.ndarray) and item.dtype == bool:
            norm.append(np.flatnonzero(item))
        elif isinstance(item, np.ndarray):
            norm.append(item % n)
        elif isinstance(item, slice):
            norm.append(np.arange(n)[item])
        else:
            norm.append(np.array([item % n]))
    view[np.ix_(*norm)] = value.reshape([len(x) for x in norm])
    np.testing.assert_array_equal(a[...], view)


@st.composite
def coordinate_cases(draw):
    shape, chunks, sharded = draw(arrays())
    npoints = draw(st.integers(0, 12))
    coords = tuple(
        np.array(draw(st.lists(st.integers(-n, n - 1), min_size=npoints, max_size=npoints)),
                 dtype=np.int64)
        for n in shape
    )
    return shape, chunks, sharded, coords


@settings(max_examples=150, deadline=None)
@given(coordinate_cases(), st.integers(0, 1000))
def test_vindex_matches_numpy(case, seed):
    shape, chunks, sharded, coords = case
    data = np.random.default_rng(seed).integers(-100, 100, size=shape).astype("int32")
    a = _make(shape, chunks, sharded, data)
    np.testing.assert_array_equal(a.vindex[coords], data[coords])
    # unique points for the write, so the expected result is unambiguous
    flat = np.ravel_multi_index(tuple(c % n for c, n in zip(coords, shape)), shape)
    _, first = np.unique(flat, return_index=True)
    unique = tuple(c[np.sort(first)] for c in coords)
    value = np.arange(len(unique[0]), dtype="int32") + 500
    a.vindex[unique] = value
    data[unique] = value
    np.testing.assert_array_equal(a[...], data)


@settings(max_examples=60, deadline=None)
@given(arrays(), st.integers(0, 1000))
def test_mask_selection(case, seed):
    shape, chunks, sharded = case
    rng = np.random.default_rng(seed)
    data = rng.integers(-100, 100, size=shape).astype("int32")
    a = _make(shape, chunks, sharded, data)
    mask = rng.random(shape) < 0.3
    np.testing.assert_array_equal(a.vindex[mask], data[mask])
    np.testing.assert_array_equal(a.get_mask_selection(mask), data[mask])
    a.vindex[mask] = 99
    data[mask] = 99
    np.testing.assert_array_equal(a[...], data)


@settings(max_examples=60, deadline=None)
@given(arrays(), st.data())
def test_blocks(case, draw):
    shape, chunks, sharded = case
    data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    a = _make(shape, chunks, sharded, data)
    grid = [-(-n // c) for n, c in zip(shape, chunks)]
    index = tuple(draw.draw(st.integers(0, g - 1)) for g in grid)
    expected = data[tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, chunks))]
    np.testing.assert_array_equal(a.blocks[index], expected)
    a.blocks[index] = -1
    data[tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, chunks))] = -1
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a.blocks[:2], data[: 2 * chunks[0]])


def test_getitem_dispatches_like_numpy():
    data = np.arange(60, dtype="int16").reshape(6, 10)
    a = _make((6, 10), (4, 3), False, data)
    np.testing.assert_array_equal(a[[4, 0, 4]], data[[4, 0, 4]])
    np.testing.assert_array_equal(a[:, [9, 1]], data[:, [9, 1]])
    np.testing.assert_array_equal(a[[1, 2], [3, 4]], data[[1, 2], [3, 4]])
    np.testing.assert_array_equal(a[data > 30], data[data > 30])
    a[data > 50] = 0
    data[data > 50] = 0
    np.testing.assert_array_equal(a[...], data)


def test_fancy_errors():
    a = _make((6, 10), (4, 3), False, np.zeros((6, 10), "int32"))
    with pytest.raises(BoundsCheckError, match="index 6 is out of bounds for axis 0"):
        a.oindex[[0, 6], :]
    with pytest.raises(BoundsCheckError):
        a.vindex[[0, 1], [2, 10]]
    with pytest.raises(SelectionError, match="broadcast"):
        a.vindex[[0, 1], [2, 3, 4]]
    with pytest.raises(SelectionError, match="boolean"):
        a.oindex[np.ones(5, bool), :]
    with pytest.raises(BoundsCheckError, match="block index 2"):
        a.blocks[2, 0]
    with pytest.raises(SelectionError, match="step 1"):
        a.blocks[::2]


def test_points_in_one_chunk_decode_it_once():
    store = MemoryStore()
    reads = []
    original = store.get

    def counting_get(key, byte_range=None):
        reads.append(key)
        return original(key, byte_range)

    a = zarrx.create_array(store, shape=(100,), dtype="f8", chunks=(10,))
    a[...] = np.arange(100.0)
    store.get = counting_get
    got = a.vindex[np.array([3, 5, 7, 3, 95, 1])]
    np.testing.assert_array_equal(got, [3, 5, 7, 3, 95, 1])
    assert sorted(k for k in reads if k.startswith("c/")) == ["c/0", "c/9"]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_resize_and_append(zarr_format):
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(10, 12), dtype="i4", chunks=(3, 5), fill_value=-1,
                           zarr_format=zarr_format)
    data = np.arange(120, dtype="i4").reshape(10, 12)
    a[...] = data
    a.resize((7, 8))
    assert a.shape == (7, 8)
    np.testing.assert_array_equal(a[...], data[:7, :8])
    assert zarrx.open_array(store).shape == (7, 8)
    chunk_keys = [k for k in store.list() if not k.split("/")[-1].startswith((".z", "zarr"))]
    assert len(chunk_keys) == 3 * 2  # chunks beyond the new grid were erased
    a.resize(10, 12)
    expected = np.full((10, 12), -1, "i4")
    expected[:7, :8] = data[:7, :8]
    np.testing.assert_array_equal(a[...], expected)  # no stale data reappears
    new_shape = a.append(np.zeros((2, 12), "i4"))
    assert new_shape == (12, 12)
    expected = np.concatenate([expected, np.zeros((2, 12), "i4")])
    np.testing.assert_array_equal(zarrx.open_array(store)[...], expected)
    a.append(np.ones((12, 1), "i4"), axis=1)
    assert a.shape == (12, 13)
    with pytest.raises(ShapeError):
        a.append(np.ones((3, 3), "i4"))
    with pytest.raises(ShapeError):
        a.resize(5)
