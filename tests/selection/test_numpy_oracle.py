"""Differential tests: NumPy is the oracle for ``a[idx]`` and ``a[idx] = value``.

Random stored arrays (0 to 4 dimensions, random chunks, v3, sharded v3, v2 and the draft,
several dtypes including big-endian ones) and random indices of every form NumPy has, some
of which NumPy refuses. Every selection NumPy answers is answered exactly (type, shape,
dtype, values); every error NumPy raises is raised with the same builtin class, from
``zarrx.errors``; a write NumPy refuses changes nothing in the store.
"""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.errors import ZarrxError
from zarrx.storage import MemoryStore
from zarrx.testing.selections import (
    assigned_values,
    numpy_indices,
    orthogonal_indices,
    outer_selection,
)

DTYPES = ["int32", "uint8", "float32", ">f8", ">i4", "<i2", "bool", "complex64"]
FORMATS = ["v3", "sharded", "v2", "draft"]
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def stored_arrays(draw, max_ndim=4):
    ndim = draw(st.integers(0, max_ndim))
    shape = tuple(draw(st.integers(0 if draw(st.integers(0, 9)) == 0 else 1, 6))
                  for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, max(n, 1) + 1)) for n in shape)
    fmt = draw(st.sampled_from(FORMATS))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    kwargs = {}
    if fmt == "sharded" and ndim:
        kwargs["shards"] = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    zarr_format = {"v2": 2, "draft": "3-draft"}.get(fmt, 3)
    store = MemoryStore()
    a = zarrx.create_array(store, shape=shape, dtype=dtype, chunks=chunks,
                           zarr_format=zarr_format, fill_value=0, **kwargs)
    x = (np.arange(int(np.prod(shape)), dtype=np.int64) % 97 + 1).reshape(shape)
    x = x.astype(a.dtype)  # v3 keeps the byte order in the bytes codec, not the dtype
    a[...] = x
    return x, a, store


def _numpy(fn):
    """``(result, None)`` or ``(None, builtin error class)`` of a NumPy operation."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except (IndexError, TypeError, ValueError, OverflowError) as e:
        return None, next(c for c in (IndexError, OverflowError, TypeError, ValueError)
                          if isinstance(e, c))


def _assert_same(got, expected):
    assert type(got) is type(expected), (type(got), type(expected))
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


def _snapshot(store):
    return {k: store.get(k) for k in store.list()}


def _refused_like(error, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            fn()
    assert isinstance(info.value, ZarrxError) or error is not IndexError, info.value


@SETTINGS
@given(st.data())
def test_reads_match_numpy(data):
    x, a, _ = data.draw(stored_arrays())
    for _ in range(4):
        idx = data.draw(numpy_indices(x.shape))
        expected, error = _numpy(lambda idx=idx: x[idx])
        if error is not None:
            _refused_like(error, lambda idx=idx: a[idx])
        else:
            _assert_same(a[idx], expected)


@SETTINGS
@given(st.data())
def test_writes_match_numpy(data):
    x, a, store = data.draw(stored_arrays())
    idx = data.draw(numpy_indices(x.shape))
    selected, error = _numpy(lambda: x[idx])
    value = data.draw(assigned_values(np.shape(selected) if error is None else (), x.dtype))
    expected = x.copy()

    def numpy_write():
        expected[idx] = value

    _, write_error = _numpy(numpy_write)
    before = _snapshot(store)
    if write_error is not None:

        def write():
            a[idx] = value

        _refused_like(write_error, write)
        assert _snapshot(store) == before  # nothing written (NumPy may write a part)
        expected = x
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a[idx] = value
    _assert_same(a[...], expected)


@SETTINGS
@given(st.data())
def test_oindex_matches_numpy_ix(data):
    x, a, _ = data.draw(stored_arrays(max_ndim=3))
    sel = data.draw(orthogonal_indices(x.shape))
    expected = outer_selection(x, sel)
    got = a.oindex[sel]
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)
    value = (np.arange(np.size(expected)) % 5 + 10).reshape(np.shape(expected)).astype(x.dtype)
    a.oindex[sel] = value
    y = x.copy()
    ix = np.ix_(*[np.arange(n)[s] if not isinstance(s, int) else np.array([s % n])
                  for s, n in zip(sel, x.shape)]) if x.ndim else ()
    y[ix] = np.asarray(value).reshape(y[ix].shape) if x.ndim else value
    np.testing.assert_array_equal(a[...], y)


def test_issue_examples():
    """The cases the issue reports, exactly."""
    x = np.arange(4 * 5 * 6, dtype="int32").reshape(4, 5, 6)
    a = zarrx.create_array(MemoryStore(), shape=x.shape, dtype=x.dtype, chunks=(2, 3, 4))
    a[...] = x
    _assert_same(a[:, [0, 2], [1, 3]], x[:, [0, 2], [1, 3]])
    _assert_same(a[np.array([[1, 2], [3, 0]])], x[np.array([[1, 2], [3, 0]])])
    mask = x[:, :, 0] % 3 == 0
    _assert_same(a[mask], x[mask])
    _assert_same(a[mask, 2], x[mask, 2])
    with pytest.raises(OverflowError):
        a[0] = 2**40
    with pytest.raises(ValueError, match="NaN"):
        a[0] = np.nan
    _assert_same(a[...], x)
    a[[1, 1, 1], 0, 0] = [7, 8, 9]  # repeated indices: the last one wins
    assert a[1, 0, 0] == 9


def test_errors_name_the_array_and_axis():
    a = zarrx.create_array(MemoryStore(), name="grid", shape=(3, 4), dtype="i2", chunks=(2, 2))
    with pytest.raises(IndexError, match=r"grid.*index 7 is out of bounds for axis 1 with size 4"):
        a[:, [0, 7]]
    with pytest.raises(IndexError, match=r"grid.*boolean index did not match.*axis 0"):
        a[np.ones(4, bool)]


@pytest.mark.parametrize("sharded", [False, True])
def test_advanced_reads_fetch_each_chunk_once(sharded):
    """A mixed advanced selection touching many points of few chunks reads each chunk
    (or shard) once, not once per point."""
    store = MemoryStore()
    x = np.arange(40 * 30, dtype="int32").reshape(40, 30)
    a = zarrx.create_array(store, shape=x.shape, dtype=x.dtype, chunks=(10, 10),
                           shards=(20, 30) if sharded else None)
    a[...] = x
    reads = []
    get = store.get

    def counting_get(key, byte_range=None):  # MemoryStore.get_many calls it too
        reads.append((key, byte_range))
        return get(key, byte_range)

    store.get = counting_get
    rows = np.array([[1, 1, 3], [12, 2, 5]])
    idx = (rows, slice(2, 25, 3))
    _assert_same(a[idx], x[idx])
    chunks = [r for r in reads if r[0].startswith("c/")]
    assert len(chunks) == len(set(chunks))  # each chunk (inner chunk, index) fetched once
    if not sharded:
        assert sorted(k for k, _ in chunks) == [
            "c/0/0", "c/0/1", "c/0/2", "c/1/0", "c/1/1", "c/1/2"
        ]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_variable_length_strings_match_numpy(data):
    """Index arrays on variable-length strings (v3 ``string``, v2 ``vlen-utf8``)."""
    shape = tuple(data.draw(st.integers(1, 5)) for _ in range(data.draw(st.integers(1, 3))))
    zarr_format = data.draw(st.sampled_from([2, 3]))
    x = np.array([f"s{i}" * (i % 4) for i in range(int(np.prod(shape)))], dtype="T")
    x = x.reshape(shape)
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype=str, zarr_format=zarr_format,
                           chunks=tuple(data.draw(st.integers(1, n)) for n in shape))
    a[...] = x
    idx = data.draw(numpy_indices(shape, wild=False))
    expected, error = _numpy(lambda: x[idx])
    if error is None:
        got = a[idx]
        assert np.shape(got) == np.shape(expected)
        np.testing.assert_array_equal(got, expected)
        x[idx] = "new"
        a[idx] = "new"
        np.testing.assert_array_equal(a[...], x)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_records_take_tuples_as_numpy_does(zarr_format):
    dtype = np.dtype([("a", "<i4"), ("b", "<f8")])
    a = zarrx.create_array(MemoryStore(), shape=(4,), dtype=dtype, chunks=(2,),
                           zarr_format=zarr_format)
    x = np.zeros(4, dtype)
    for idx, value in [(0, (1, 2.0)), (slice(1, 3), (3, 4.5)), ([3], (7, 8.0)),
                       (slice(0, 2), [(9, 1.0), (8, 2.0)])]:
        x[idx] = value
        a[idx] = value
    _assert_same(a[...], x)


@pytest.mark.parametrize("shape", [(0, 0), (0, 2), (2, 0), (1, 2), (2, 2), (1, 0, 0)])
def test_empty_masks_are_refused_where_numpy_refuses_them(shape):
    # An empty boolean mask's axes of length 0 match any size; its other axes must match.
    x = np.zeros(shape, dtype="int32")
    a = zarrx.create_array(MemoryStore(), shape=shape, dtype="int32", chunks=(1,) * len(shape))
    for k in (1, 2):
        for mask_shape in itertools.product(range(3), repeat=k):
            for lead in ((), (0,)) if shape and shape[0] == 1 else ((),):
                mask = np.zeros(mask_shape, dtype=bool)
                idx = (*lead, mask)
                expected, error = _numpy(lambda idx=idx: x[idx])
                if error is not None:
                    _refused_like(error, lambda idx=idx: a[idx])
                else:
                    _assert_same(a[idx], expected)
