"""A selection's buffer layout x chunk grid → per-chunk projections, in batches.

Each group of the layout (:mod:`zarrx.selection.layout`) is projected onto the grid once,
into arrays: a run of indices on one axis by the Cython indexer (``slice_chunks``), a group
of points by grouping them by chunk in Cython (``points_chunks``; so a chunk is decoded
once however many points it holds, in O(points + chunks touched)). The chunks a selection
touches are the product of the groups' projections, walked in C order in batches
(:class:`ChunkBatch`, ``config.get("batch_chunks")`` chunks each): the batch's chunk
coordinates and complete flags are gathered from those arrays with NumPy, and its in-chunk
and buffer selections are built from them in a few list operations, so a selection over
millions of chunks costs memory only for the batch in flight and no Python loop over the
grid. :func:`plan` and :func:`plan_ranges` give the same chunks one
:class:`ChunkProjection` at a time.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice, product, repeat
from typing import Any, NamedTuple

import numpy as np

from zarrx import config
from zarrx._core.indexing import points_chunks
from zarrx.selection.layout import Group, Layout, Points, Run


class ChunkProjection(NamedTuple):
    """One chunk's share of a selection. (A named tuple, not a frozen dataclass: a small
    read makes one, and a frozen dataclass costs a microsecond to make.)"""

    coords: tuple[int, ...]  # chunk grid coordinates
    chunk_selection: tuple[Any, ...]  # inside the chunk
    out_selection: tuple[Any, ...]  # inside the selection buffer
    complete: bool  # every element of the chunk inside the array is selected
    #: Selections are index arrays (NumPy advanced indexing): results are copies, so
    #: the engine assigns through them instead of copying into views.
    fancy: bool = False
    #: The share of the buffer per layout group (a slice or an array of positions each),
    #: when ``out_selection`` broadcasts them into index arrays; else ``out_selection``.
    groups: tuple[Any, ...] | None = None

    @property
    def buffer_index(self) -> tuple[Any, ...]:
        return self.out_selection if self.groups is None else self.groups


class ChunkBatch:
    """Consecutive chunks of a plan, as columns: chunk ``i`` is ``coords[i]``,
    ``chunk_selections[i]`` … (the fields of :class:`ChunkProjection`).

    A batch of a selection of runs also holds its geometry as arrays (:attr:`starts`,
    :attr:`counts`, :attr:`outs`, :attr:`steps`: chunk ``i`` selects, on axis ``d``, the
    in-chunk indices ``starts[i, d] + k * steps[d]`` for ``k < counts[i, d]``, placed at
    buffer index ``outs[i, d] + k`` of the buffer dimension of axis ``d``): kernels take
    them as they are, and the selections as Python slices are only made if asked for.

    A batch planned by tiles (the shards of a sharded array, :func:`plan_batches`) holds
    whole tiles, each a run of consecutive chunks: tile ``j`` is chunks
    ``units[j]:units[j + 1]``, at tile coordinates ``unit_coords[j]``."""

    __slots__ = ("_chunk_selections", "_out_selections", "complete", "coords", "counts",
                 "fancy", "groups", "outs", "starts", "steps", "unit_coords", "units")

    def __init__(
        self,
        coords: np.ndarray,
        complete: np.ndarray,
        chunk_selections: list[tuple[Any, ...]] | None = None,
        out_selections: list[tuple[Any, ...]] | None = None,
        fancy: list[bool] | None = None,
        groups: list[tuple[Any, ...] | None] | None = None,
        *,
        geometry: tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]] | None = None,
    ) -> None:
        self.coords = coords  # (n, ndim) int64 grid coordinates
        self.complete = complete  # (n,) bool
        self._chunk_selections = chunk_selections
        self._out_selections = out_selections
        #: Per chunk, or ``None`` when no chunk of the batch is fancy.
        self.fancy = fancy
        #: Per chunk (``None`` entries where ``out_selection`` is the buffer index), or ``None``.
        self.groups = groups
        self.starts: np.ndarray | None = None
        self.counts: np.ndarray | None = None
        self.outs: np.ndarray | None = None
        self.steps: tuple[int, ...] | None = None
        if geometry is not None:
            self.starts, self.counts, self.outs, self.steps = geometry
        self.units: np.ndarray | None = None
        self.unit_coords: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.coords)

    @property
    def chunk_selections(self) -> list[tuple[Any, ...]]:
        found = self._chunk_selections
        if found is None:
            assert self.starts is not None
            assert self.counts is not None
            assert self.steps
            stops = self.starts + (self.counts - 1) * np.asarray(self.steps) + 1
            columns = [list(map(slice, a.tolist(), b.tolist(), repeat(step)))
                       for a, b, step in zip(self.starts.T, stops.T, self.steps)]
            found = self._chunk_selections = list(zip(*columns))
        return found

    @property
    def out_selections(self) -> list[tuple[Any, ...]]:
        found = self._out_selections
        if found is None:
            assert self.outs is not None
            assert self.counts is not None
            ends = self.outs + self.counts
            columns = [list(map(slice, a.tolist(), b.tolist()))
                       for a, b in zip(self.outs.T, ends.T)]
            found = self._out_selections = list(zip(*columns))
        return found

    def projection(self, i: int) -> ChunkProjection:
        return ChunkProjection(
            tuple(self.coords[i].tolist()),
            self.chunk_selections[i],
            self.out_selections[i],
            bool(self.complete[i]),
            False if self.fancy is None else self.fancy[i],
            None if self.groups is None else self.groups[i],
        )

    def projections(self) -> Iterator[ChunkProjection]:
        coords = map(tuple, self.coords.tolist())
        fancy = repeat(False) if self.fancy is None else self.fancy
        groups = repeat(None) if self.groups is None else self.groups
        for c, inner, out, complete, f, g in zip(
            coords, self.chunk_selections, self.out_selections, self.complete.tolist(),
            fancy, groups,
        ):
            yield ChunkProjection(c, inner, out, complete, f, g)

    @classmethod
    def of(cls, projections: Sequence[ChunkProjection], ndim: int) -> ChunkBatch:
        """The batch holding ``projections`` (any source of them) in their order."""
        coords = np.array([p.coords for p in projections], dtype=np.int64)
        coords = coords.reshape(len(projections), ndim)
        fancy = [p.fancy for p in projections]
        groups = [p.groups for p in projections]
        return cls(
            coords,
            np.array([p.complete for p in projections], dtype=bool),
            [p.chunk_selection for p in projections],
            [p.out_selection for p in projections],
            fancy if any(fancy) else None,
            groups if any(g is not None for g in groups) else None,
        )


def plan(grid: Any, shape: tuple[int, ...], layout: Layout) -> Iterator[ChunkProjection]:
    """The chunks touched by a selection, in C order of the grid for runs."""
    groups = layout.groups
    if shape and all(isinstance(g, Run) and 0 < g.count <= _SMALL_RUN for g in groups):
        small = _small_projections(grid, shape, groups)  # type: ignore[arg-type]
        if small is not None:
            return iter(small)
    return _projections(plan_batches(grid, shape, layout))


def plan_ranges(
    grid: Any, shape: tuple[int, ...], ranges: Sequence[slice]
) -> Iterator[ChunkProjection]:
    """The chunks touched by positive-step ``ranges`` (explicit start and stop, inside
    ``shape``); the buffer has one dimension per range."""
    if shape and all(0 < r.stop - r.start <= _SMALL_RUN and (r.step or 1) == 1 for r in ranges):
        runs = [Run(axis, r.start, 1, r.stop - r.start, axis, False)
                for axis, r in enumerate(ranges)]
        small = _small_projections(grid, shape, runs)
        if small is not None:
            return iter(small)
    return _projections(plan_range_batches(grid, shape, ranges))


def _projections(batches: Iterable[ChunkBatch]) -> Iterator[ChunkProjection]:
    for batch in batches:
        yield from batch.projections()


def batches_of(
    projections: Iterable[ChunkProjection], ndim: int, size: int | None = None
) -> Iterator[ChunkBatch]:
    """``projections`` (of an array of ``ndim`` dimensions) grouped into batches of
    ``size`` (``config.get("batch_chunks")``)."""
    size = max(1, size if size is not None else config.get("batch_chunks"))
    it = iter(projections)
    while chunk := list(islice(it, size)):
        yield ChunkBatch.of(chunk, ndim)


def plan_batches(
    grid: Any, shape: tuple[int, ...], layout: Layout, size: int | None = None,
    tiles: tuple[int, ...] | None = None,
) -> Iterator[ChunkBatch]:
    """:func:`plan`'s chunks in batches of about ``size`` (``config.get("batch_chunks")``).

    ``tiles``: chunks per tile on each axis (a shard's inner chunks): the chunks are then
    walked tile by tile (tiles in C order of the tile grid, each tile's chunks in C order),
    and a batch holds whole tiles — at least one, then more while it holds fewer than
    ``size`` chunks (:attr:`ChunkBatch.units`)."""
    return _batches(grid, shape, layout.groups, layout.simple_points, size, tiles)


def one_chunk(grid: Any, shape: tuple[int, ...], layout: Layout) -> ChunkProjection | None:
    """The projection of a selection of runs that lies in one chunk (a small read: a
    point, a few elements), computed with Python integers; ``None`` for any other."""
    if not shape:
        return None
    coords, inner, outs = [], [], []
    complete = True
    for g in layout.groups:
        if type(g) is not Run:
            return None
        found = grid.axis_chunk(g.axis, g.start, g.step, g.count, shape[g.axis])
        if found is None:
            return None
        coords.append(found[0])
        inner.append(found[1])
        outs.append(found[2])
        complete = complete and found[3]
    return ChunkProjection(tuple(coords), tuple(inner), tuple(outs), complete)


def plan_range_batches(
    grid: Any, shape: tuple[int, ...], ranges: Sequence[slice], size: int | None = None,
    tiles: tuple[int, ...] | None = None,
) -> Iterator[ChunkBatch]:
    """:func:`plan_ranges`'s chunks in batches of ``size`` (``tiles``: as
    :func:`plan_batches`)."""
    groups = []
    for axis, r in enumerate(ranges):
        step = r.step or 1
        count = max(0, -(-(r.stop - r.start) // step))
        groups.append(Run(axis, r.start, step, count, axis, False))
    return _batches(grid, shape, groups, True, size, tiles)


def _batches(
    grid: Any, shape: tuple[int, ...], groups: Sequence[Group], simple: bool, size: int | None,
    tiles: tuple[int, ...] | None = None,
) -> Iterator[ChunkBatch]:
    if any(g.count == 0 for g in groups):
        return
    if not shape:  # a 0-d array has one chunk; Ellipsis keeps views (not scalars) of it
        batch = ChunkBatch(
            np.zeros((1, 0), np.int64), np.ones(1, bool), [(Ellipsis,)], [(Ellipsis,)]
        )
        if tiles is not None:
            batch.units = np.array([0, 1], np.int64)
            batch.unit_coords = np.zeros((1, 0), np.int64)
        yield batch
        return
    size = max(1, size if size is not None else config.get("batch_chunks"))
    ndim = len(shape)
    if all(type(g) is Run and g.count <= _SMALL_RUN for g in groups):
        small = _small_batch(grid, shape, groups, size, tiles)  # type: ignore[arg-type]
        if small is not None:
            yield small if tiles is None or small.units is not None else by_tiles(small, tiles)
            return
    parts = [_project(grid, shape, g, simple) for g in groups]
    if tiles is not None:
        yield from _tiled_batches(parts, ndim, simple, size, tiles)
        return
    counts = [p.n for p in parts]
    total = 1
    for n in counts:
        total *= n
    for lo in range(0, total, size):
        linear = np.arange(lo, min(lo + size, total), dtype=np.int64)
        where = np.unravel_index(linear, counts) if len(counts) > 1 else (linear,)
        yield _batch(parts, where, ndim, simple)


def by_tiles(batch: ChunkBatch, tiles: tuple[int, ...]) -> ChunkBatch:
    """``batch`` (any order) with its chunks reordered tile by tile, tiles in C order and
    each tile's chunks in C order, and its :attr:`~ChunkBatch.units` set."""
    n = len(batch)
    if n == 1:  # (a small read: no sorting)
        batch.units = _ONE_UNIT
        batch.unit_coords = np.array(
            [[c // t for c, t in zip(batch.coords[0].tolist(), tiles)]], dtype=np.int64)
        return batch
    per = np.asarray(tiles, dtype=np.int64)
    tile, local = np.divmod(batch.coords, per) if n else (batch.coords, batch.coords)
    keys = [local[:, d] for d in reversed(range(local.shape[1]))]
    keys += [tile[:, d] for d in reversed(range(tile.shape[1]))]
    order = np.lexsort(keys) if keys and n else np.arange(n)
    if n > 1 and not np.array_equal(order, np.arange(n)):
        batch = _taken(batch, order)
        tile = tile[order]
    new = np.ones(n, dtype=bool)
    if n > 1:
        new[1:] = np.any(tile[1:] != tile[:-1], axis=1)
    starts = np.flatnonzero(new)
    batch.units = np.append(starts, n).astype(np.int64)
    batch.unit_coords = tile[starts]
    return batch


def _taken(batch: ChunkBatch, order: np.ndarray) -> ChunkBatch:
    """The chunks of ``batch`` in the order ``order``."""
    pick = order.tolist()
    geometry = None
    if batch.starts is not None:
        assert batch.counts is not None
        assert batch.outs is not None
        assert batch.steps is not None
        geometry = (batch.starts[order], batch.counts[order], batch.outs[order], batch.steps)
    return ChunkBatch(
        batch.coords[order], batch.complete[order],
        None if batch._chunk_selections is None
        else [batch._chunk_selections[i] for i in pick],
        None if batch._out_selections is None else [batch._out_selections[i] for i in pick],
        None if batch.fancy is None else [batch.fancy[i] for i in pick],
        None if batch.groups is None else [batch.groups[i] for i in pick],
        geometry=geometry,
    )


def _tiled_batches(
    parts: Sequence[_Projected], ndim: int, simple: bool, size: int, tiles: tuple[int, ...]
) -> Iterator[ChunkBatch]:
    """The product of ``parts`` walked tile by tile (see :func:`plan_batches`).

    Each part's entries are grouped into segments of one tile (its entries sorted by tile,
    then by position in the tile); a tile of the product is one segment of each part, and
    its chunks the product of those segments. Tiles are counted, sized and expanded into
    positions with NumPy, a block of tiles at a time: no Python loop per tile or chunk."""
    per = np.asarray(tiles, dtype=np.int64)
    segments = [_segments(part, per) for part in parts]
    nseg = [len(s[1]) for s in segments]
    total = 1
    for n in nseg:
        total *= n
    block = max(1, min(total, 4096))
    pending: list[np.ndarray] = []  # tile numbers of the batch being gathered
    held = 0
    for lo in range(0, total, block):
        numbers = np.arange(lo, min(lo + block, total), dtype=np.int64)
        sizes = _tile_sizes(segments, nseg, numbers)
        # Cut the block where a batch reaches ``size`` chunks (each batch whole tiles).
        done = held + np.cumsum(sizes)
        at = 0
        while at < len(numbers):
            cut = int(np.searchsorted(done[at:], size, side="left")) + at
            if cut >= len(numbers):
                pending.append(numbers[at:])
                held = int(done[-1])
                break
            pending.append(numbers[at:cut + 1])
            yield _tile_batch(parts, segments, nseg, np.concatenate(pending), ndim, simple)
            pending, held = [], 0
            done = done - done[cut]
            at = cut + 1
    if pending:
        yield _tile_batch(parts, segments, nseg, np.concatenate(pending), ndim, simple)


def _segments(part: _Projected, per: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                          np.ndarray]:
    """A part's entries grouped by tile: ``(order, starts, lengths, tile_coords)`` — the
    entries in tile order (``order``: positions in the part), and per segment its first
    place in ``order``, its length and its tile coordinates on the part's axes."""
    axes = per[part.axes]
    tile, local = np.divmod(part.coords, axes)
    if len(part.axes) == 1 or part.n < 2:
        order = np.arange(part.n, dtype=np.int64)  # ascending chunks: tiles are runs
    else:
        keys = [local[:, d] for d in reversed(range(local.shape[1]))]
        keys += [tile[:, d] for d in reversed(range(tile.shape[1]))]
        order = np.lexsort(keys).astype(np.int64)
        tile = tile[order]
    new = np.ones(part.n, dtype=bool)
    if part.n > 1:
        new[1:] = np.any(tile[1:] != tile[:-1], axis=1)
    starts = np.flatnonzero(new).astype(np.int64)
    lengths = np.diff(np.append(starts, part.n)).astype(np.int64)
    return order, starts, lengths, tile[starts]


def _tile_sizes(segments: Sequence[tuple[np.ndarray, ...]], nseg: Sequence[int],
                numbers: np.ndarray) -> np.ndarray:
    """How many chunks each of the tiles ``numbers`` (C order over the parts' segments) holds."""
    which = np.unravel_index(numbers, nseg) if len(nseg) > 1 else (numbers,)
    sizes = np.ones(len(numbers), dtype=np.int64)
    for (_, _, lengths, _), w in zip(segments, which):
        sizes *= lengths[w]
    return sizes


def _tile_batch(
    parts: Sequence[_Projected], segments: Sequence[tuple[np.ndarray, ...]],
    nseg: Sequence[int], numbers: np.ndarray, ndim: int, simple: bool,
) -> ChunkBatch:
    """The batch of the tiles ``numbers``: each tile's chunks, in C order of its segments."""
    which = np.unravel_index(numbers, nseg) if len(nseg) > 1 else (numbers,)
    sizes = np.ones(len(numbers), dtype=np.int64)
    for (_, _, lengths, _), w in zip(segments, which):
        sizes *= lengths[w]
    total = int(sizes.sum())
    bounds = np.zeros(len(numbers) + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds[1:])
    tile_of = np.repeat(np.arange(len(numbers)), sizes)
    local = np.arange(total, dtype=np.int64) - bounds[tile_of]
    where: list[np.ndarray] = [np.empty(0, np.int64)] * len(parts)
    for g in reversed(range(len(parts))):
        order, starts, lengths, _ = segments[g]
        w = which[g][tile_of]
        length = lengths[w]
        where[g] = order[starts[w] + local % length]
        local //= length
    batch = _batch(parts, where, ndim, simple)
    batch.units = bounds
    unit_coords = np.empty((len(numbers), ndim), dtype=np.int64)
    for part, (_, _, _, tile), w in zip(parts, segments, which):
        unit_coords[:, part.axes] = tile[w]
    batch.unit_coords = unit_coords
    return batch


#: Runs of at most this many indices (a point, a chunk's worth) are projected with Python
#: integers: for a selection of a few chunks, a dozen NumPy calls cost more than the rest.
_SMALL_RUN = 64


def _small_projections(
    grid: Any, shape: tuple[int, ...], runs: Sequence[Run]
) -> list[ChunkProjection] | None:
    """:func:`plan`'s chunks for one short run per axis (a point, a chunk's worth: the
    fixed cost of a small read), built from the grid's per-axis tuples with no arrays;
    ``None`` if they touch more than a batch of chunks."""
    per_axis = [
        grid.axis_projections(g.axis, g.start, g.step, g.count, shape[g.axis]) for g in runs
    ]
    if len(per_axis) == 1:
        return [ChunkProjection((e[0],), (e[1],), (e[2],), e[3]) for e in per_axis[0]]
    total = 1
    for entries in per_axis:
        total *= len(entries)
    if total > config.get("batch_chunks"):
        return None
    projections = []
    for combo in product(*per_axis):
        coords, inner, out, complete = zip(*combo)
        projections.append(ChunkProjection(coords, inner, out, all(complete)))
    return projections


_TRUE, _FALSE = np.ones(1, dtype=bool), np.zeros(1, dtype=bool)
_ONE_UNIT = np.array([0, 1], dtype=np.int64)  # the units of a batch of one chunk
_TRUE.flags.writeable = _FALSE.flags.writeable = _ONE_UNIT.flags.writeable = False


def _small_batch(
    grid: Any, shape: tuple[int, ...], runs: Sequence[Run], size: int,
    tiles: tuple[int, ...] | None = None,
) -> ChunkBatch | None:
    """The one batch of a selection of one run per axis touching at most ``size`` chunks,
    built from the grid's per-axis tuples; ``None`` if it touches more. A batch of one
    chunk is made with its one unit (``tiles``: as :func:`by_tiles`)."""
    per_axis = [
        grid.axis_projections(g.axis, g.start, g.step, g.count, shape[g.axis]) for g in runs
    ]
    total = 1
    for entries in per_axis:
        total *= len(entries)
    if total > size:
        return None
    if total == 1:  # (inside one chunk: the commonest small read)
        coords, inner, out, complete = zip(*[e[0] for e in per_axis])
        batch = ChunkBatch(np.array([coords], np.int64), _TRUE if all(complete) else _FALSE,
                           [inner], [out])
        if tiles is not None:
            batch.units = _ONE_UNIT
            batch.unit_coords = np.array([[c // t for c, t in zip(coords, tiles)]], np.int64)
        return batch
    combos = list(product(*per_axis))
    return ChunkBatch(
        np.array([[e[0] for e in combo] for combo in combos], np.int64).reshape(total, len(runs)),
        np.array([all(e[3] for e in combo) for combo in combos], dtype=bool),
        [tuple(e[1] for e in combo) for combo in combos],
        [tuple(e[2] for e in combo) for combo in combos],
    )


def _batch(
    parts: Sequence[_Projected], where: Sequence[np.ndarray], ndim: int, simple: bool
) -> ChunkBatch:
    """The chunks at positions ``where`` (one index array per group) of the product."""
    n = len(where[0])
    coords = np.empty((n, ndim), dtype=np.int64)
    complete = np.ones(n, dtype=bool)
    if all(type(part) is _RunProjection and part.axes[0] == axis
           for axis, part in enumerate(parts)):
        # One run per axis, in axis order: the geometry as arrays, slices made if asked.
        first = np.empty((n, ndim), dtype=np.int64)
        lengths = np.empty((n, ndim), dtype=np.int64)
        at = np.empty((n, ndim), dtype=np.int64)
        steps = []
        for axis, (part, pos) in enumerate(zip(parts, where)):
            run: _RunProjection = part  # type: ignore[assignment]
            coords[:, axis] = run.coords[pos, 0]
            complete &= run.complete[pos]
            first[:, axis] = run.start[pos]
            lengths[:, axis] = run.count[pos]
            at[:, axis] = run.out[pos]
            steps.append(run.step)
        return ChunkBatch(coords, complete, geometry=(first, lengths, at, tuple(steps)))
    inner: list[list[Any]] = [[]] * ndim
    outs: list[list[Any]] = []
    multi: np.ndarray | None = None
    for part, pos in zip(parts, where):
        coords[:, part.axes] = part.coords[pos]
        complete &= part.complete[pos]
        selections, column_out, many = part.take(pos)
        for axis, column in zip(part.axes, selections):
            inner[axis] = column
        outs.append(column_out)
        if many is not None:
            multi = many if multi is None else multi | many
    chunk_selections = list(zip(*inner))
    out_groups = list(zip(*outs))
    if multi is None or not multi.any():
        return ChunkBatch(coords, complete, chunk_selections, out_groups)
    fancy = [False] * n
    groups: list[Any] = [None] * n
    out_selections: list[Any] = list(out_groups)
    axes_of = [part.axes for part in parts]
    for i in np.flatnonzero(multi).tolist():
        sel, out = chunk_selections[i], out_groups[i]
        if all(isinstance(ix, slice) for ix in (*sel, *out)):
            continue
        fancy[i] = True
        groups[i] = out
        if not simple:  # broadcast every index over the buffer's dimensions
            buffer_dim = [0] * ndim
            for b, group_axes in enumerate(axes_of):
                for axis in group_axes:
                    buffer_dim[axis] = b
            chunk_selections[i] = tuple(
                _spread(_as_index(ix), buffer_dim[axis], len(parts)) for axis, ix in enumerate(sel)
            )
            out_selections[i] = np.ix_(*map(_as_index, out))
    return ChunkBatch(coords, complete, chunk_selections, out_selections, fancy, groups)


class _Projected(ABC):
    """One layout group projected onto the grid: ``n`` entries (chunks along the group's
    axes), each with its chunk coordinates on ``axes`` and complete flag, and
    :meth:`take` building their in-chunk and buffer selections."""

    axes: list[int]
    n: int
    coords: np.ndarray  # (n, len(axes)) int64
    complete: np.ndarray  # (n,) bool

    @abstractmethod
    def take(self, pos: np.ndarray) -> tuple[list[list[Any]], list[Any], np.ndarray | None]:
        """For entries ``pos``: the in-chunk selection per axis, the buffer selection, and
        which of them select several points (``None``: none can)."""


class _RunProjection(_Projected):
    def __init__(self, grid: Any, g: Run, dim_len: int) -> None:
        chunk, start, count, out, complete = grid.axis_slice_chunks(
            g.axis, g.start, g.step, g.count, dim_len
        )
        self.axes = [g.axis]
        self.n = len(chunk)
        self.coords = chunk.reshape(-1, 1)
        self.complete = complete.astype(bool)
        self.step = g.step
        self.start, self.count, self.out = start, count, out

    def take(self, pos: np.ndarray) -> tuple[list[list[Any]], list[Any], np.ndarray | None]:
        start, count, out = self.start[pos], self.count[pos], self.out[pos]
        stop = start + (count - 1) * self.step + 1
        inner = list(map(slice, start.tolist(), stop.tolist(), repeat(self.step)))
        return [inner], list(map(slice, out.tolist(), (out + count).tolist())), None


class _PointsProjection(_Projected):
    def __init__(self, grid: Any, shape: tuple[int, ...], g: Points, simple: bool) -> None:
        located = [grid.axis_locate(axis, c) for axis, c in zip(g.axes, g.coords)]
        if len(g.axes) == 1:
            keys = located[0][0]
        else:
            chunk_coords = [c for c, _ in located]
            grid_shape = [grid.grid_shape(shape)[axis] for axis in g.axes]
            if np.prod(np.asarray(grid_shape, dtype=float)) < 2**62:
                keys = np.ravel_multi_index(chunk_coords, grid_shape)
            else:  # too many chunks for one linear key: rank the distinct chunk coordinates
                _, keys = np.unique(
                    np.stack(chunk_coords, axis=1), axis=0, return_inverse=True
                )
                keys = keys.reshape(-1)
        order, _, bounds, _ = points_chunks(np.asarray(keys).astype(np.int64, copy=False), 1)
        first = order[bounds[:-1]]
        self.axes = list(g.axes)
        self.n = len(first)
        self.coords = np.stack([c[first] for c, _ in located], axis=1).astype(np.int64)
        self.complete = np.zeros(self.n, dtype=bool)
        self.order, self.bounds = order, bounds
        self.offsets = [offset[order] for _, offset in located]  # grouped by chunk
        #: On one axis, a chunk's points are selected by a slice where they are
        #: consecutive (one point: a slice of one), as a run would be.
        self.runs = len(g.axes) == 1

    def take(self, pos: np.ndarray) -> tuple[list[list[Any]], list[Any], np.ndarray | None]:
        begin, end = self.bounds[pos], self.bounds[pos + 1]
        if self.runs:
            many = end - begin > 1
            first = self.offsets[0][begin]
            inner: list[list[Any]] = [
                list(map(slice, first.tolist(), (first + 1).tolist(), repeat(1)))
            ]
            out_lo = self.order[begin]
            out: list[Any] = list(map(slice, out_lo.tolist(), (out_lo + 1).tolist()))
        else:
            many = np.ones(len(pos), dtype=bool)
            inner = [[None] * len(pos) for _ in self.offsets]
            out = [None] * len(pos)
        for i in np.flatnonzero(many).tolist():
            b, e = int(begin[i]), int(end[i])
            positions = self.order[b:e]
            if self.runs:
                inner[0][i] = _run_or(self.offsets[0][b:e])
                out[i] = _run_or(positions)
            else:
                for column, offset in zip(inner, self.offsets):
                    column[i] = offset[b:e]
                out[i] = positions
        return inner, out, many


def _project(grid: Any, shape: tuple[int, ...], g: Group, simple: bool) -> _Projected:
    if isinstance(g, Run):
        return _RunProjection(grid, g, shape[g.axis])
    return _PointsProjection(grid, shape, g, simple)


def _run_or(index: np.ndarray) -> Any:
    """A step-1 slice when ``index`` is consecutive ascending integers (sorted index
    arrays: a strided copy instead of a gather), else ``index``."""
    if len(index) > 1 and index[-1] - index[0] == len(index) - 1 and (
        np.all(index[1:] > index[:-1])
    ):
        return slice(int(index[0]), int(index[-1]) + 1, 1)
    return index


def _as_index(item: Any) -> np.ndarray:
    if isinstance(item, slice):
        return np.arange(item.start, item.stop, item.step)
    return item


def _spread(index: np.ndarray, dim: int, ndim: int) -> np.ndarray:
    shape = [1] * ndim
    shape[dim] = len(index)
    return index.reshape(shape)
