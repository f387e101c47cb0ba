"""zarrx._core.indexing against brute-force references (hypothesis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx._core.indexing import points_chunks, slice_chunks

I64_MAX = 2**63 - 1


# ---------------------------------------------------------------------------- slice_chunks


def slice_reference(start, step, count, chunk_size, dim_len):
    """One row (chunk, chunk_start, chunk_count, out_start, complete) per touched chunk."""
    groups = {}
    for k in range(count):
        e = start + k * step
        groups.setdefault(e // chunk_size, []).append((k, e))
    rows = []
    for c in sorted(groups):
        members = groups[c]
        k0, e0 = members[0]
        lo = c * chunk_size
        extent = min(lo + chunk_size, dim_len) - lo
        assert [e for _, e in members] == [e0 + j * step for j in range(len(members))]
        rows.append((c, e0 - lo, len(members), k0, int(len(members) == extent)))
    return rows


def as_rows(result):
    assert len(result) == 5
    n = len(result[0])
    for a in result:
        assert a.dtype == np.int64
        assert a.shape == (n,)
    return [tuple(int(a[i]) for a in result) for i in range(n)]


@st.composite
def small_slices(draw):
    chunk = draw(st.integers(1, 20))
    dim_len = draw(st.integers(0, 300))
    step = draw(st.integers(1, 40))
    if dim_len == 0:
        return 0, step, 0, chunk, 0
    start = draw(st.integers(0, dim_len - 1))
    count = draw(st.integers(0, (dim_len - 1 - start) // step + 1))
    return start, step, count, chunk, dim_len


@st.composite
def huge_slices(draw):
    dim_len = draw(st.integers(2**62, I64_MAX))
    chunk = draw(st.one_of(st.integers(1, 1000), st.integers(1, I64_MAX)))
    step = draw(st.one_of(st.integers(1, 1000), st.integers(1, 2**62)))
    near_end = draw(st.booleans())
    lo = max(0, dim_len - 10**6) if near_end else 0
    start = draw(st.integers(lo, dim_len - 1))
    max_count = (dim_len - 1 - start) // step + 1
    count = draw(st.integers(0, min(max_count, 60)))
    return start, step, count, chunk, dim_len


@settings(max_examples=500, deadline=None)
@given(small_slices())
def test_slice_chunks_small(args):
    assert as_rows(slice_chunks(*args)) == slice_reference(*args)


@settings(max_examples=300, deadline=None)
@given(huge_slices())
def test_slice_chunks_huge_values(args):
    assert as_rows(slice_chunks(*args)) == slice_reference(*args)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # the whole axis with a partial last chunk: every chunk complete
        ((0, 1, 10, 4, 10), [(0, 0, 4, 0, 1), (1, 0, 4, 4, 1), (2, 0, 2, 8, 1)]),
        # step > chunk_size: one element per chunk, chunks skipped
        ((1, 7, 3, 3, 20), [(0, 1, 1, 0, 0), (2, 2, 1, 1, 0), (5, 0, 1, 2, 0)]),
        # a one-element edge chunk is complete even with step > 1
        ((0, 5, 3, 5, 11), [(0, 0, 1, 0, 0), (1, 0, 1, 1, 0), (2, 0, 1, 2, 1)]),
        ((3, 1, 0, 4, 10), []),
        ((0, 1, 0, 4, 0), []),
    ],
)
def test_slice_chunks_examples(args, expected):
    assert as_rows(slice_chunks(*args)) == expected


def test_slice_chunks_is_per_chunk_not_per_element():
    # 2**62 elements in two chunks: must not loop over elements (or allocate per element)
    rows = as_rows(slice_chunks(0, 1, 2**62, 2**61, 2**62))
    assert rows == [(0, 0, 2**61, 0, 1), (1, 0, 2**61, 2**61, 1)]
    rows = as_rows(slice_chunks(5, 3, (I64_MAX - 6) // 3 + 1, 2**62, I64_MAX))
    assert [r[0] for r in rows] == [0, 1]
    assert sum(r[2] for r in rows) == (I64_MAX - 6) // 3 + 1


@pytest.mark.parametrize(
    ("args", "exc", "match"),
    [
        ((0, 0, 1, 1, 10), ValueError, "step"),
        ((-1, 1, 1, 1, 10), ValueError, "start"),
        ((0, 1, -1, 1, 10), ValueError, "count"),
        ((0, 1, 1, 0, 10), ValueError, "chunk_size"),
        ((0, 1, 1, 1, 2**63), ValueError, "dim_len"),
        ((0, 1, 11, 4, 10), ValueError, "out of bounds"),
        ((10, 1, 1, 4, 10), ValueError, "out of bounds"),
        ((0, 3, 5, 4, 12), ValueError, "out of bounds"),
        ((0.0, 1, 1, 1, 10), TypeError, "start must be an integer"),
    ],
)
def test_slice_chunks_errors(args, exc, match):
    with pytest.raises(exc, match=match):
        slice_chunks(*args)


def test_slice_chunks_accepts_numpy_integers():
    rows = as_rows(slice_chunks(np.int32(2), np.int64(1), np.uint8(3), 2, np.intp(6)))
    assert rows == slice_reference(2, 1, 3, 2, 6)


# ---------------------------------------------------------------------------- points_chunks


def check_points(indices, chunk_size):
    idx = np.asarray(indices).astype(np.int64)
    order, chunks, offsets, in_chunk = points_chunks(indices, chunk_size)
    for a in (order, chunks, offsets, in_chunk):
        assert a.dtype == np.int64
        assert a.ndim == 1
    c = idx // chunk_size
    ref_order = np.argsort(c, kind="stable")
    ref_chunks, counts = np.unique(c, return_counts=True)
    np.testing.assert_array_equal(order, ref_order)
    np.testing.assert_array_equal(chunks, ref_chunks)
    np.testing.assert_array_equal(offsets, np.concatenate([[0], np.cumsum(counts)]))
    np.testing.assert_array_equal(in_chunk, idx[ref_order] - c[ref_order] * chunk_size)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 200), max_size=60),
    st.integers(1, 30),
)
def test_points_chunks_dense(values, chunk_size):
    check_points(np.array(values, dtype=np.int64), chunk_size)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.integers(0, I64_MAX), st.integers(I64_MAX - 10**4, I64_MAX)), max_size=40
    ),
    st.one_of(st.integers(1, 100), st.integers(1, I64_MAX)),
)
def test_points_chunks_sparse_huge(values, chunk_size):
    check_points(np.array(values, dtype=np.int64), chunk_size)


KINDS = ["dense", "sparse", "sorted", "reversed", "dups", "wide"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("chunk_size", [1, 7, 1000])
def test_points_chunks_large_random(kind, chunk_size):
    rng = np.random.default_rng([KINDS.index(kind), chunk_size])
    n = 50_000
    if kind == "dense":
        idx = rng.integers(0, 3 * n, n)
    elif kind == "sparse":  # exercises the multi-pass radix sort
        idx = rng.integers(0, 2**40, n)
    elif kind == "sorted":
        idx = np.sort(rng.integers(0, 2**40, n))
    elif kind == "reversed":
        idx = np.sort(rng.integers(0, 10**6, n))[::-1]
    elif kind == "dups":
        idx = rng.choice(rng.integers(0, 2**50, 30), n)
    else:
        idx = rng.integers(0, I64_MAX, n, dtype=np.int64)
    check_points(idx, chunk_size)


def test_points_chunks_inputs():
    check_points(np.array([5, 1, 5, 0], dtype=np.int32), 2)
    check_points(np.array([5, 1, 5, 0], dtype=np.uint64), 2)
    check_points(np.arange(40, dtype=np.int64)[::-3], 4)  # non-contiguous view
    check_points(np.frombuffer(np.array([3, 1, 2], dtype=np.int64).tobytes(), np.int64), 2)
    check_points([4, 0, 9], 3)
    order, chunks, offsets, in_chunk = points_chunks(np.empty(0, np.int64), 3)
    assert order.shape == chunks.shape == in_chunk.shape == (0,)
    np.testing.assert_array_equal(offsets, [0])


@pytest.mark.parametrize(
    ("indices", "chunk_size", "exc", "match"),
    [
        (np.array([1, -1]), 2, ValueError, "non-negative"),
        (np.zeros((2, 2), np.int64), 2, ValueError, "1-d"),
        (np.array([1.0, 2.0]), 2, TypeError, "integer"),
        (np.array([2**63], dtype=np.uint64), 2, ValueError, "2\\*\\*63"),
        (np.array([1, 2]), 0, ValueError, "chunk_size"),
    ],
)
def test_points_chunks_errors(indices, chunk_size, exc, match):
    with pytest.raises(exc, match=match):
        points_chunks(indices, chunk_size)


@settings(max_examples=500, deadline=None)
@given(
    chunk=st.integers(1, 10),
    dim=st.integers(1, 60),
    data=st.data(),
)
def test_regular_grid_single_chunk_projection_equals_the_general_one(chunk, dim, data):
    """The regular grid answers selections inside one chunk without the Cython arrays;
    the answer must be the general one, "complete" flag included."""
    from zarrx.abc.chunk_grid import ChunkGrid
    from zarrx.chunk_grids.regular import RegularChunkGrid

    grid = RegularChunkGrid((chunk,))
    start = data.draw(st.integers(0, dim - 1))
    step = data.draw(st.integers(1, 12))
    count = data.draw(st.integers(1, len(range(start, dim, step))))
    fast = grid.axis_projections(0, start, step, count, dim)
    assert fast == ChunkGrid.axis_projections(grid, 0, start, step, count, dim)
