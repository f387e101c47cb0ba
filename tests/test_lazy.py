"""Lazy views against NumPy: chains of selections read and write what NumPy's chained
indexing names; declaring costs no store call; chunk projections partition the view."""

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.errors import BoundsCheckError, ZarrxError
from zarrx.storage import MemoryStore
from zarrx.testing.selections import numpy_indices, orthogonal_indices

SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class CountingStore(MemoryStore):
    """A memory store that counts every call that reads or writes."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def get(self, key, byte_range=None):
        self.calls += 1
        return super().get(key, byte_range)

    def set(self, key, value):
        self.calls += 1
        return super().set(key, value)


@st.composite
def stored(draw, max_ndim=3):
    shape = tuple(draw(st.integers(1, 7)) for _ in range(draw(st.integers(1, max_ndim))))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    fmt = draw(st.sampled_from(["v3", "sharded", "v2", "draft"]))
    kwargs = {"shards": tuple(c * draw(st.integers(1, 2)) for c in chunks)} \
        if fmt == "sharded" else {}
    store = CountingStore()
    a = zarrx.create_array(store, shape=shape, chunks=chunks, fill_value=0,
                           dtype=draw(st.sampled_from(["int32", ">f8", "uint8"])),
                           zarr_format={"v2": 2, "draft": "3-draft"}.get(fmt, 3), **kwargs)
    x = (np.arange(int(np.prod(shape))) % 91 + 1).reshape(shape).astype(a.dtype)
    a[...] = x
    return x, a, store


def _orthogonal(x, sel):
    """NumPy's meaning of ``oindex``: one axis at a time."""
    axis = 0
    for item in sel:
        index = [slice(None)] * x.ndim
        index[axis] = item
        x = x[tuple(index)]
        axis += 0 if isinstance(item, int) else 1
    return x


@st.composite
def chains(draw, shape):
    """One to three selections, each valid for the result of the previous ones, and the
    NumPy function applying each."""
    steps = []
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    for _ in range(draw(st.integers(1, 3))):
        if not isinstance(ids, np.ndarray) or ids.ndim == 0:
            break
        if draw(st.integers(0, 4)) == 0 and 0 not in ids.shape:
            sel = draw(orthogonal_indices(ids.shape))
            kind = "oindex"
            nxt = _orthogonal(ids, sel)
        else:
            sel = draw(numpy_indices(ids.shape, wild=False))
            kind = "numpy"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    nxt = ids[sel]
            except IndexError:
                continue
        steps.append((kind, sel))
        ids = nxt
    assume(steps)
    return steps, ids


def _declare(a, steps):
    view = None
    for kind, sel in steps:
        lazy = (a if view is None else view).lazy
        view = lazy.oindex[sel] if kind == "oindex" else lazy[sel]
    return view


@SETTINGS
@given(st.data())
def test_chained_views_read_what_numpy_chains_select(data):
    x, a, store = data.draw(stored())
    steps, ids = data.draw(chains(x.shape))
    before = store.calls
    view = _declare(a, steps)
    assert view.shape == np.shape(ids)
    assert view.dtype == a.dtype
    assert view.size == np.size(ids)
    assert view.nbytes == np.size(ids) * a.dtype.itemsize
    view.chunk_projections("write")
    view.chunk_projections("read")
    assert store.calls == before  # declaring, composing and planning touch no storage
    expected = x.reshape(-1)[ids]
    np.testing.assert_array_equal(np.asarray(view), expected)
    np.testing.assert_array_equal(view[...], expected)
    result = view.result()
    assert np.shape(result) == np.shape(expected)
    np.testing.assert_array_equal(result, expected)


@SETTINGS
@given(st.data())
def test_writes_through_views_land_in_the_cells_they_name(data):
    x, a, _ = data.draw(stored())
    steps, ids = data.draw(chains(x.shape))
    view = _declare(a, steps)
    value = (np.arange(np.size(ids)) % 7 + 100).reshape(np.shape(ids)).astype(a.dtype)
    view.write(value)
    expected = x.copy()
    expected.reshape(-1)[np.asarray(ids).reshape(-1)] = value.reshape(-1)  # last one wins
    np.testing.assert_array_equal(a[...], expected)


@SETTINGS
@given(st.data())
def test_chunk_projections_partition_the_view(data):
    x, a, _ = data.draw(stored())
    steps, ids = data.draw(chains(x.shape))
    view = _declare(a, steps)
    for unit in ("write", "read"):
        cover = np.zeros(view.shape, dtype=int)
        got = np.zeros(view.shape, dtype=x.dtype)
        chunk_shape = a.shards if unit == "write" and a.shards else a.chunks
        for p in view.chunk_projections(unit):
            cover[p.array_selection] += 1
            origin = [c * n for c, n in zip(p.chunk_coords, chunk_shape)]
            chunk = x[tuple(slice(o, o + n) for o, n in zip(origin, chunk_shape))]
            padded = np.zeros(chunk_shape, dtype=x.dtype)
            padded[tuple(slice(0, n) for n in chunk.shape)] = chunk
            got[p.array_selection] = padded[p.chunk_selection]
            if not p.is_partial:  # every cell of the chunk inside the array is selected
                mark = np.zeros(chunk_shape, dtype=bool)
                mark[p.chunk_selection] = True
                assert mark[tuple(slice(0, n) for n in chunk.shape)].all()
        assert cover.size == 0 or (cover.min() == 1 and cover.max() == 1)
        np.testing.assert_array_equal(got, x.reshape(-1)[ids])


def test_sharded_projections_name_the_shard_and_the_inner_chunk():
    a = zarrx.create_array(MemoryStore(), shape=(8, 8), dtype="u1", chunks=(2, 2),
                           shards=(4, 4))
    view = a.lazy[1:3, 4:8]
    write = view.chunk_projections("write")
    assert [(p.key, p.chunk_coords, p.is_partial) for p in write] == [
        ("c/0/1", (0, 1), True)
    ]
    read = view.chunk_projections("read")
    assert [(p.key, p.chunk_coords) for p in read] == [
        ("c/0/1", (0, 2)), ("c/0/1", (0, 3)), ("c/0/1", (1, 2)), ("c/0/1", (1, 3))
    ]
    assert not view.is_chunk_aligned()
    assert a.lazy[2:4, 4:8].is_chunk_aligned("read")


def test_negative_indices_count_from_the_end_of_the_view():
    x = np.arange(100).reshape(10, 10)
    a = zarrx.create_array(MemoryStore(), shape=x.shape, dtype=x.dtype, chunks=(3, 3))
    a[...] = x
    v = a.lazy[2:8, ::-1].lazy[-1, [-1, 0, -3]].lazy[None, ::-1]
    np.testing.assert_array_equal(v[...], x[2:8, ::-1][-1, [-1, 0, -3]][None, ::-1])
    assert "shape=(1, 3)" in repr(v)
    assert "int64" in repr(v)


def test_out_of_range_is_refused_at_declaration():
    a = zarrx.create_array(MemoryStore(), name="img", shape=(4, 5), dtype="i2", chunks=(2, 2))
    view = a.lazy[1:3]
    with pytest.raises(IndexError, match=r"img.*index 2 is out of bounds for axis 0 with size 2"):
        view.lazy[2]
    with pytest.raises(IndexError, match="axis 1"):
        a.lazy[:, [0, 9]]


def test_a_view_after_a_shrink_refuses_cells_outside():
    a = zarrx.create_array(MemoryStore(), shape=(10,), dtype="i4", chunks=(3,))
    a[...] = np.arange(10)
    view = a.lazy[4:9]
    a.resize((6,))
    with pytest.raises(BoundsCheckError, match="axis 0") as info:
        np.asarray(view)
    assert isinstance(info.value, ZarrxError)
    with pytest.raises(IndexError):
        view.write(1)
    np.testing.assert_array_equal(a.lazy[4:6][...], [4, 5])


def test_writes_cast_like_numpy_and_write_nothing_on_error():
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(6,), dtype="i4", chunks=(2,))
    a[...] = np.arange(6)
    before = {k: store.get(k) for k in store.list()}
    with pytest.raises(OverflowError):
        a.lazy[1:4][0] = 2**40
    with pytest.raises(ValueError, match="NaN"):
        a.lazy[::2].write(float("nan"))
    assert {k: store.get(k) for k in store.list()} == before
    a.lazy[[1, 1, 2]] = [7, 8, 9]  # repeated: the last wins
    np.testing.assert_array_equal(a[...], [0, 8, 9, 3, 4, 5])


def test_lazy_oindex_and_vindex():
    x = np.arange(60).reshape(5, 12)
    a = zarrx.create_array(MemoryStore(), shape=x.shape, dtype=x.dtype, chunks=(2, 5))
    a[...] = x
    v = a.lazy.oindex[[4, 0], [1, 11, 3]]
    np.testing.assert_array_equal(v[...], x[np.ix_([4, 0], [1, 11, 3])])
    w = v.lazy.vindex[[0, 1], [2, 0]]
    np.testing.assert_array_equal(w[...], [x[4, 3], x[0, 1]])
    np.testing.assert_array_equal(v.oindex[[1], [0, 2]], [[x[0, 1], x[0, 3]]])
    v.vindex[[0], [0]] = -5
    assert a[4, 1] == -5


def test_views_pickle_and_feed_dask():
    da = pytest.importorskip("dask.array")
    x = np.arange(200.0).reshape(10, 20)
    a = zarrx.create_array(MemoryStore(), shape=x.shape, dtype=x.dtype, chunks=(4, 6))
    a[...] = x
    view = a.lazy[1:9, ::-3]
    again = pickle.loads(pickle.dumps(view))
    np.testing.assert_array_equal(again[...], x[1:9, ::-3])
    np.testing.assert_array_equal(da.from_array(view, chunks=(3, 2)).compute(), x[1:9, ::-3])


def test_a_chain_reads_each_chunk_once():
    store = CountingStore()
    a = zarrx.create_array(store, shape=(12, 12), dtype="f4", chunks=(4, 4))
    a[...] = np.arange(144.0).reshape(12, 12)
    view = a.lazy[1:11].lazy[::-1, 2:].lazy[[0, 1, 5, 5], 3:8]
    store.calls = 0
    view[...]
    assert store.calls == len({p.key for p in view.chunk_projections()})
