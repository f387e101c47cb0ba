"""Selection x chunk grid → per-chunk projections.

The Cython indexer projects each axis once (one call per axis, not per chunk); the chunks a
selection touches are the product of the per-axis results, generated lazily so a selection
over millions of chunks costs memory only for the batch in flight.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from zarrx.selection.normalize import BasicSelection


@dataclass(frozen=True)
class ChunkProjection:
    """One chunk's share of a selection."""

    coords: tuple[int, ...]  # chunk grid coordinates
    chunk_selection: tuple[slice, ...]  # inside the chunk
    out_selection: tuple[slice, ...]  # inside the selection buffer (shape = counts)
    complete: bool  # every element of the chunk inside the array is selected


def plan_basic(
    grid: Any, shape: tuple[int, ...], sel: BasicSelection
) -> Iterator[ChunkProjection]:
    """The chunks touched by ``sel``, in C order of the grid."""
    if any(c == 0 for c in sel.counts):
        return
    if not shape:  # a 0-d array has one chunk; Ellipsis keeps views (not scalars) of it
        yield ChunkProjection((), (Ellipsis,), (Ellipsis,), True)
        return
    axes = []
    for axis in range(len(shape)):
        chunk_index, chunk_start, chunk_count, out_start, complete = grid.axis_slice_chunks(
            axis, sel.starts[axis], sel.steps[axis], sel.counts[axis], shape[axis]
        )
        step = sel.steps[axis]
        axes.append([
            (int(c), slice(int(s), int(s) + (int(n) - 1) * step + 1, step),
             slice(int(o), int(o) + int(n)), bool(f))
            for c, s, n, o, f in zip(chunk_index, chunk_start, chunk_count, out_start, complete)
        ])
    for combo in itertools.product(*axes):
        yield ChunkProjection(
            coords=tuple(a[0] for a in combo),
            chunk_selection=tuple(a[1] for a in combo),
            out_selection=tuple(a[2] for a in combo),
            complete=all(a[3] for a in combo),
        )
