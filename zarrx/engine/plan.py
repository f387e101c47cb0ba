"""Selection x chunk grid → per-chunk projections.

The Cython indexer projects each axis once (one call per axis, not per chunk); the chunks a
selection touches are the product of the per-axis results, generated lazily so a selection
over millions of chunks costs memory only for the batch in flight. Index arrays (orthogonal
axes) and points are grouped by chunk in Cython too, so a chunk is decoded once however
many of the selected elements it holds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx._core.indexing import points_chunks
from zarrx.selection.modes import CoordinateSelection
from zarrx.selection.normalize import BasicSelection


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


def _array_axis(grid: Any, axis: int, indices: np.ndarray) -> list[tuple]:
    chunks, offsets_in_chunk = grid.axis_locate(axis, indices)
    order, chunk_index, offsets, _ = points_chunks(chunks.astype(np.int64, copy=False), 1)
    in_chunk = offsets_in_chunk[order]
    return [
        (int(c), in_chunk[offsets[i]:offsets[i + 1]], order[offsets[i]:offsets[i + 1]], False)
        for i, c in enumerate(chunk_index)
    ]


def _as_index(item: Any) -> np.ndarray:
    return np.arange(item.start, item.stop, item.step) if isinstance(item, slice) else item


def plan_basic(
    grid: Any, shape: tuple[int, ...], sel: BasicSelection
) -> Iterator[ChunkProjection]:
    """The chunks touched by a basic or orthogonal selection, in C order of the grid."""
    if any(c == 0 for c in sel.counts):
        return
    if not shape:  # a 0-d array has one chunk; Ellipsis keeps views (not scalars) of it
        yield ChunkProjection((), (Ellipsis,), (Ellipsis,), True)
        return
    arrays = getattr(sel, "arrays", ()) or (None,) * len(shape)
    axes = [
        grid.axis_projections(axis, sel.starts[axis], sel.steps[axis], sel.counts[axis],
                              shape[axis]) if arrays[axis] is None
        else _array_axis(grid, axis, arrays[axis])
        for axis in range(len(shape))
    ]
    fancy = any(a is not None for a in arrays)
    for combo in itertools.product(*axes):
        chunk_sel = tuple(a[1] for a in combo)
        out_sel = tuple(a[2] for a in combo)
        if fancy:
            chunk_sel = np.ix_(*map(_as_index, chunk_sel))
            out_sel = np.ix_(*map(_as_index, out_sel))
        yield ChunkProjection(
            coords=tuple(a[0] for a in combo),
            chunk_selection=chunk_sel,
            out_selection=out_sel,
            complete=all(a[3] for a in combo),
            fancy=fancy,
        )


def plan_points(
    grid: Any, shape: tuple[int, ...], sel: CoordinateSelection
) -> Iterator[ChunkProjection]:
    """The chunks holding the points of ``sel``; outputs index the flat point buffer."""
    if sel.npoints == 0:
        return
    if not shape:
        yield ChunkProjection((), (), (np.zeros(1, np.int64),), False, fancy=True)
        return
    located = [grid.axis_locate(axis, c) for axis, c in enumerate(sel.coords)]
    chunk_coords = [c for c, _ in located]
    grid_shape = grid.grid_shape(shape)
    if np.prod(np.asarray(grid_shape, dtype=float)) < 2**62:
        keys = np.ravel_multi_index(chunk_coords, grid_shape)
    else:  # too many chunks for one linear key: rank the distinct chunk coordinates
        _, keys = np.unique(np.stack(chunk_coords, axis=1), axis=0, return_inverse=True)
        keys = keys.reshape(-1)
    order, _, offsets, _ = points_chunks(keys.astype(np.int64), 1)
    for i in range(len(offsets) - 1):
        positions = order[offsets[i]:offsets[i + 1]]
        first = positions[0]
        coords = tuple(int(c[first]) for c in chunk_coords)
        in_chunk = tuple(offset[positions] for _, offset in located)
        yield ChunkProjection(coords, in_chunk, (positions,), False, fancy=True)
