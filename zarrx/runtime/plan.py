"""A selection's buffer layout x chunk grid → per-chunk projections.

Each group of the layout (:mod:`zarrx.selection.layout`) is projected onto the grid once:
a run of indices on one axis by the Cython indexer, a group of points by grouping them by
chunk in Cython (so a chunk is decoded once however many points it holds, in O(points +
chunks touched)). The chunks a selection touches are the product of the groups'
projections, generated lazily so a selection over millions of chunks costs memory only for
the batch in flight.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx._core.indexing import points_chunks
from zarrx.selection.layout import Group, Layout, Points, Run


@dataclass(frozen=True)
class ChunkProjection:
    """One chunk's share of a selection."""

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


# One group's share of one chunk: (chunk coords on the group's axes, in-chunk index per
# axis, index into the group's buffer dimension, complete).
_Part = tuple[tuple[int, ...], tuple[Any, ...], Any, bool]


def plan(grid: Any, shape: tuple[int, ...], layout: Layout) -> Iterator[ChunkProjection]:
    """The chunks touched by a selection, in C order of the grid for runs."""
    return _plan(grid, shape, layout.groups, layout.simple_points)


def plan_ranges(
    grid: Any, shape: tuple[int, ...], ranges: Sequence[slice]
) -> Iterator[ChunkProjection]:
    """The chunks touched by positive-step ``ranges`` (explicit start and stop, inside
    ``shape``); the buffer has one dimension per range."""
    groups = []
    for axis, r in enumerate(ranges):
        step = r.step or 1
        count = max(0, -(-(r.stop - r.start) // step))
        groups.append(Run(axis, r.start, step, count, axis, False))
    return _plan(grid, shape, groups, True)


def _plan(
    grid: Any, shape: tuple[int, ...], groups: Sequence[Group], simple: bool
) -> Iterator[ChunkProjection]:
    if any(g.count == 0 for g in groups):
        return
    if not shape:  # a 0-d array has one chunk; Ellipsis keeps views (not scalars) of it
        yield ChunkProjection((), (Ellipsis,), (Ellipsis,), True)
        return
    parts = [_project(grid, shape, g) for g in groups]
    axes = [(g.axis,) if isinstance(g, Run) else g.axes for g in groups]
    fancy = any(isinstance(g, Points) for g in groups)
    ndim = len(shape)
    if len(groups) == ndim and not fancy:  # one run per axis, in axis order
        for combo in itertools.product(*parts):
            yield ChunkProjection(
                tuple(p[0][0] for p in combo),
                tuple(p[1][0] for p in combo),
                tuple(p[2] for p in combo),
                all(p[3] for p in combo),
            )
        return
    nbuf = len(groups)
    for combo in itertools.product(*parts):
        coords: list[int] = [0] * ndim
        inner: list[Any] = [None] * ndim
        where: list[int] = [0] * ndim  # buffer dimension of each axis
        for b, (group_axes, part) in enumerate(zip(axes, combo)):
            for k, axis in enumerate(group_axes):
                coords[axis] = part[0][k]
                inner[axis] = part[1][k]
                where[axis] = b
        out_groups = tuple(p[2] for p in combo)
        out: Any = out_groups
        fancy = not all(isinstance(ix, slice) for ix in (*inner, *out))
        if fancy and not simple:  # broadcast every index over the buffer's dimensions
            inner = [_spread(_as_index(ix), where[axis], nbuf) for axis, ix in enumerate(inner)]
            out = np.ix_(*map(_as_index, out))
        yield ChunkProjection(
            tuple(coords), tuple(inner), out, all(p[3] for p in combo), fancy, out_groups
        )


def _project(grid: Any, shape: tuple[int, ...], g: Group) -> list[_Part]:
    if isinstance(g, Run):
        return [
            ((c,), (inner,), out, complete)
            for c, inner, out, complete in grid.axis_projections(
                g.axis, g.start, g.step, g.count, shape[g.axis]
            )
        ]
    if len(g.axes) == 1:
        chunks, offsets = grid.axis_locate(g.axes[0], g.coords[0])
        order, chunk_index, bounds, _ = points_chunks(chunks.astype(np.int64, copy=False), 1)
        in_chunk = offsets[order]
        return [
            ((int(c),), (_run_or(in_chunk[bounds[i]:bounds[i + 1]]),),
             _run_or(order[bounds[i]:bounds[i + 1]]), False)
            for i, c in enumerate(chunk_index)
        ]
    located = [grid.axis_locate(axis, c) for axis, c in zip(g.axes, g.coords)]
    chunk_coords = [c for c, _ in located]
    grid_shape = [grid.grid_shape(shape)[axis] for axis in g.axes]
    if np.prod(np.asarray(grid_shape, dtype=float)) < 2**62:
        keys = np.ravel_multi_index(chunk_coords, grid_shape)
    else:  # too many chunks for one linear key: rank the distinct chunk coordinates
        _, keys = np.unique(np.stack(chunk_coords, axis=1), axis=0, return_inverse=True)
        keys = keys.reshape(-1)
    order, _, bounds, _ = points_chunks(keys.astype(np.int64), 1)
    parts = []
    for i in range(len(bounds) - 1):
        positions = order[bounds[i]:bounds[i + 1]]
        first = positions[0]
        parts.append((
            tuple(int(c[first]) for c in chunk_coords),
            tuple(offset[positions] for _, offset in located),
            positions,
            False,
        ))
    return parts


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
