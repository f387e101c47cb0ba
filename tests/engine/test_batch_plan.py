"""The batch planner against NumPy: for random arrays, chunk grids and every kind of index,
each chunk's in-chunk and buffer selections, applied to the stored chunks, assemble NumPy's
result, every cell of the buffer written exactly once; the batch size changes nothing;
the complete flags say which chunks are covered whole."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from zarrx.chunk_grids.regular import RegularChunkGrid
from zarrx.runtime.plan import ChunkBatch, plan, plan_batches, plan_range_batches, plan_ranges
from zarrx.selection.layout import Layout, Points
from zarrx.selection.modes import coordinate_transform, orthogonal_transform
from zarrx.selection.numpy_index import numpy_transform
from zarrx.testing.selections import numpy_indices, orthogonal_indices

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def grids(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.integers(1, 7)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, n + 1)) for n in shape)
    return shape, chunks


def _stored_chunk(x: np.ndarray, chunks: tuple[int, ...], coords: tuple[int, ...]) -> np.ndarray:
    """The chunk at ``coords`` as stored: whole, cells past the array's end hold -1."""
    chunk = np.full(chunks, -1, dtype=x.dtype)
    region = tuple(slice(c * n, c * n + n) for c, n in zip(coords, chunks))
    part = x[region]
    chunk[tuple(slice(0, s) for s in part.shape)] = part
    return chunk


def _assemble(x: np.ndarray, chunks: tuple[int, ...], layout: Layout, size: int) -> np.ndarray:
    grid = RegularChunkGrid(chunks)
    buffer = np.full(layout.buffer_shape, -2, dtype=x.dtype)
    written = np.zeros(layout.buffer_shape, dtype=np.int64)
    seen: set[tuple[int, ...]] = set()
    for batch in plan_batches(grid, x.shape, layout, size):
        assert 1 <= len(batch) <= size
        assert batch.coords.shape == (len(batch), x.ndim)
        for p in batch.projections():
            assert p.coords not in seen  # each chunk once
            seen.add(p.coords)
            assert all(0 <= c < -(-n // k) for c, n, k in zip(p.coords, x.shape, chunks))
            chunk = _stored_chunk(x, chunks, p.coords)
            if p.fancy:
                buffer[p.out_selection] = chunk[p.chunk_selection]
                np.add.at(written, p.out_selection, 1)
            else:
                assert all(isinstance(s, slice) or s is Ellipsis
                           for s in (*p.chunk_selection, *p.out_selection))
                buffer[p.out_selection] = chunk[p.chunk_selection]
                written[p.out_selection] += 1
                _check_complete(p.complete, p.chunk_selection, p.coords, x.shape, chunks,
                                exact=not any(isinstance(g, Points) for g in layout.groups))
    assert (written == 1).all()  # every cell of the buffer exactly once
    return buffer


def _check_complete(complete: bool, selection: tuple, coords: tuple, shape: tuple,
                    chunks: tuple, exact: bool) -> None:
    """``complete`` only if the selection covers the chunk's cells inside the array; for
    runs, exactly then (points never say complete: the engine then reads before it
    writes, which is always safe)."""
    if selection == (Ellipsis,):
        assert complete
        return
    held = [min(n, s - c * n) for c, n, s in zip(coords, chunks, shape)]
    covers = all(
        len(range(s.start, s.stop, s.step)) == h and s.start == 0 and (s.step == 1 or h == 1)
        for s, h in zip(selection, held)
    )
    assert complete == covers if exact else not complete or covers


@SETTINGS
@given(st.data())
def test_numpy_indices_assemble_exactly_once(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    index = data.draw(numpy_indices(shape, wild=False))
    try:
        expected = x[index]
    except (IndexError, TypeError, ValueError):
        assume(False)  # NumPy refuses it: the selection layer raises before any plan
    layout = Layout(numpy_transform(shape, index).transform)
    assume(np.size(expected))  # the engine plans nothing for an empty result
    size = data.draw(st.sampled_from([1, 2, 7, 256]))
    buffer = _assemble(x, chunks, layout, size)
    np.testing.assert_array_equal(layout.result(buffer), expected)


@SETTINGS
@given(st.data())
def test_orthogonal_and_coordinate_indices_assemble_exactly_once(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids().filter(lambda g: len(g[0]) > 0))
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if data.draw(st.booleans()):
        index = data.draw(orthogonal_indices(shape))
        transform = orthogonal_transform(shape, index).transform
        expected = x[np.ix_(*[np.arange(n)[i] if not isinstance(i, int) else [i]
                              for n, i in zip(shape, index)])]
        expected = expected.reshape(transform.shape)
    else:
        n = data.draw(st.integers(1, 12))
        index = tuple(
            np.asarray(data.draw(st.lists(st.integers(0, s - 1), min_size=n, max_size=n)))
            for s in shape
        )
        transform = coordinate_transform(shape, index).transform
        expected = x[index]
    layout = Layout(transform)
    if not expected.size:
        return
    buffer = _assemble(x, chunks, layout, data.draw(st.sampled_from([1, 3, 256])))
    np.testing.assert_array_equal(layout.result(buffer), expected)


@SETTINGS
@given(st.data())
def test_batch_size_changes_nothing(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    index = data.draw(numpy_indices(shape, wild=False))
    try:
        layout = Layout(numpy_transform(shape, index).transform)
    except (IndexError, TypeError, ValueError):
        assume(False)
    grid = RegularChunkGrid(chunks)
    one = [p for b in plan_batches(grid, shape, layout, 1) for p in b.projections()]
    many = list(plan(grid, shape, layout))
    assert _plain(one) == _plain(many)
    assert _plain(many) == _plain(
        [p for b in plan_batches(grid, shape, layout, 5) for p in b.projections()]
    )
    rebuilt = [] if not many else list(ChunkBatch.of(many, len(shape)).projections())
    assert _plain(rebuilt) == _plain(many)


def _plain(projections: list) -> list:
    """Projections as comparable values (index arrays as lists)."""
    def value(ix: object) -> object:
        return ix.tolist() if isinstance(ix, np.ndarray) else ix

    return [
        (p.coords, [value(s) for s in p.chunk_selection], [value(s) for s in p.out_selection],
         p.complete, p.fancy)
        for p in projections
    ]


def test_ranges_walk_the_grid_in_c_order() -> None:
    grid = RegularChunkGrid((2, 3))
    ranges = [slice(1, 5), slice(0, 7, 2)]
    got = list(plan_ranges(grid, (5, 7), ranges))
    assert [p.coords for p in got] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2),
                                       (2, 0), (2, 1), (2, 2)]
    assert got[0].chunk_selection == (slice(1, 2, 1), slice(0, 3, 2))
    assert got[0].out_selection == (slice(0, 1), slice(0, 2))
    batches = list(plan_range_batches(grid, (5, 7), ranges, 4))
    assert [len(b) for b in batches] == [4, 4, 1]
    np.testing.assert_array_equal(batches[1].coords, [[1, 1], [1, 2], [2, 0], [2, 1]])


def test_one_point_per_chunk_is_selected_by_slices() -> None:
    grid = RegularChunkGrid((4,))
    points = np.array([9, 1, 13, 2])
    layout = Layout(coordinate_transform((16,), (points,)).transform)
    (batch,) = plan_batches(grid, (16,), layout, 256)
    np.testing.assert_array_equal(batch.coords, [[0], [2], [3]])
    assert batch.chunk_selections[1] == (slice(1, 2, 1),)  # 9 in chunk 2
    assert batch.out_selections[1] == (slice(0, 1),)
    assert batch.chunk_selections[0] == (slice(1, 3, 1),)  # 1 and 2: consecutive
    np.testing.assert_array_equal(batch.out_selections[0][0], [1, 3])  # ... at buffer 1, 3
    assert batch.fancy == [True, False, False]


def _tiled_check(grid: RegularChunkGrid, shape: tuple[int, ...], layout: Layout,
                 tiles: tuple[int, ...], size: int) -> None:
    """Planned by tiles: the same chunks and projections as the plain plan, each tile's
    chunks consecutive (and, for runs, in C order, tiles in C order), every tile in
    exactly one batch,
    whole tiles per batch (more than one only while the batch holds fewer than ``size``)."""
    plain = list(plan(grid, shape, layout))
    runs = not any(isinstance(g, Points) for g in layout.groups)
    tiled = []
    seen_tiles: list[tuple[int, ...]] = []
    for batch in plan_batches(grid, shape, layout, size, tiles):
        assert batch.units is not None
        assert batch.unit_coords is not None
        bounds = batch.units.tolist()
        assert bounds[0] == 0
        assert bounds[-1] == len(batch)
        assert all(a < b for a, b in itertools.pairwise(bounds))
        assert len(batch.unit_coords) == len(bounds) - 1
        counts = np.diff(batch.units)
        if len(counts) > 1:  # more tiles only while under the size
            assert counts[:-1].sum() < size
        for u, (lo, hi) in enumerate(itertools.pairwise(bounds)):
            tile = tuple(batch.unit_coords[u].tolist())
            seen_tiles.append(tile)
            coords = [tuple(c) for c in batch.coords[lo:hi].tolist()]
            assert all(tuple(c // t for c, t in zip(cc, tiles)) == tile for cc in coords)
            if runs:
                assert coords == sorted(coords)  # C order inside the tile
        tiled.extend(batch.projections())
    if runs:  # (groups over several axes walk their own order)
        assert seen_tiles == sorted(seen_tiles)  # tiles in C order
    assert len(set(seen_tiles)) == len(seen_tiles)  # each once
    key = lambda p: p[0]  # noqa: E731
    assert sorted(_plain(tiled), key=key) == sorted(_plain(plain), key=key)


@SETTINGS
@given(st.data())
def test_tiled_plans_hold_the_same_chunks_tile_by_tile(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids().filter(lambda g: len(g[0]) > 0))
    tiles = tuple(data.draw(st.integers(1, 4)) for _ in shape)
    kind = data.draw(st.sampled_from(["numpy", "orthogonal", "coordinate"]))
    if kind == "numpy":
        index = data.draw(numpy_indices(shape, wild=False))
        try:
            transform = numpy_transform(shape, index).transform
        except (IndexError, TypeError, ValueError):
            assume(False)
    elif kind == "orthogonal":
        transform = orthogonal_transform(shape, data.draw(orthogonal_indices(shape))).transform
    else:
        n = data.draw(st.integers(1, 12))
        transform = coordinate_transform(shape, tuple(
            np.asarray(data.draw(st.lists(st.integers(0, s - 1), min_size=n, max_size=n)))
            for s in shape)).transform
    layout = Layout(transform)
    assume(all(g.count > 0 for g in layout.groups))
    size = data.draw(st.sampled_from([1, 2, 5, 256]))
    _tiled_check(RegularChunkGrid(chunks), shape, layout, tiles, size)


def test_a_tiled_batch_of_runs_holds_its_geometry_as_arrays() -> None:
    grid = RegularChunkGrid((2, 3))
    layout = Layout(numpy_transform((8, 9), (slice(1, 8, 2), slice(None))).transform)
    batches = list(plan_batches(grid, (8, 9), layout, 4, (2, 2)))
    # tiles (2 x 2 chunks): rows of chunks 0-1 | 2-3, columns 0-1 | 2
    assert [b.unit_coords.tolist() for b in batches] == [[[0, 0]], [[0, 1], [1, 0]], [[1, 1]]]
    first = batches[0]
    assert first.starts is not None
    assert first.steps == (2, 1)
    assert first.coords.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert first.chunk_selections[0] == (slice(1, 2, 2), slice(0, 3, 1))
    assert first.out_selections[3] == (slice(1, 2), slice(3, 6))
