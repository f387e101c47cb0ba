"""The ``rectilinear`` chunk grid of zarr-extensions: chunk sizes that vary along each axis.

``{"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[2, 3, 5],
[[4, 3]], 10]}}`` — per axis, a list of chunk sizes (a ``[size, count]`` pair repeats a
size), or one integer for a regular axis. The sizes along an axis must cover its length.
Only :mod:`zarrx.abc` is imported: zarrx's engine asks the grid, per axis, which chunks a
selection touches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.abc.chunk_grid import ChunkGrid
from zarrx.errors import MetadataError


def _expand(axis: int, spec: Any) -> tuple[int, ...] | int:
    if isinstance(spec, int) and not isinstance(spec, bool):
        if spec < 1:
            raise MetadataError(f"rectilinear axis {axis}: chunk size must be positive")
        return spec
    if not isinstance(spec, list) or not spec:
        raise MetadataError(f"rectilinear axis {axis}: expected an int or a list, got {spec!r}")
    sizes: list[int] = []
    for item in spec:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(v, int) for v in item):
            size, count = item
            sizes.extend([size] * count)
        elif isinstance(item, int) and not isinstance(item, bool):
            sizes.append(item)
        else:
            raise MetadataError(f"rectilinear axis {axis}: bad entry {item!r}")
    if any(s < 1 for s in sizes):
        raise MetadataError(f"rectilinear axis {axis}: chunk sizes must be positive")
    return tuple(sizes)


class RectilinearChunkGrid(ChunkGrid):
    name = "rectilinear"

    def __init__(self, axes: tuple[tuple[int, ...] | int, ...], raw: list[Any]) -> None:
        self.axes = axes
        self.raw = raw
        self.edges = [
            None if isinstance(a, int) else np.concatenate([[0], np.cumsum(a)]).astype(np.int64)
            for a in axes
        ]

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> RectilinearChunkGrid:
        if configuration.get("kind", "inline") != "inline":
            raise MetadataError(f"rectilinear: unsupported kind {configuration.get('kind')!r}")
        shapes = configuration.get("chunk_shapes")
        if not isinstance(shapes, list) or not shapes:
            raise MetadataError("rectilinear: chunk_shapes must be a non-empty list")
        return cls(tuple(_expand(i, s) for i, s in enumerate(shapes)), shapes)

    def to_dict(self) -> dict[str, Any]:
        return {"name": "rectilinear",
                "configuration": {"kind": "inline", "chunk_shapes": self.raw}}

    @property
    def chunk_shape(self) -> tuple[Any, ...]:
        """Per axis: the chunk size (regular axis) or the tuple of sizes."""
        return self.axes

    def validate(self, shape: tuple[int, ...], where: str) -> None:
        if len(shape) != len(self.axes):
            raise MetadataError(f"{where}: rectilinear grid of rank {len(self.axes)} for shape "
                                f"{list(shape)}")
        for axis, (edges, n) in enumerate(zip(self.edges, shape)):
            if edges is not None and edges[-1] < n:
                raise MetadataError(
                    f"{where}: rectilinear chunks along axis {axis} cover {int(edges[-1])} "
                    f"elements, the array has {n}"
                )

    def grid_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(
            -(-n // a) if isinstance(a, int) else int(np.searchsorted(e, n, "left"))
            for a, e, n in zip(self.axes, self.edges, shape)
        )

    def chunk_shape_at(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(a if isinstance(a, int) else a[c] for a, c in zip(self.axes, coords))

    def axis_locate(self, axis: int, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        size, edges = self.axes[axis], self.edges[axis]
        if edges is None:
            return np.divmod(indices, size)
        chunk = np.searchsorted(edges, indices, "right") - 1
        return chunk, indices - edges[chunk]

    def axis_slice_chunks(
        self, axis: int, start: int, step: int, count: int, dim_len: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        index = start + step * np.arange(count, dtype=np.int64)
        chunk, offset = self.axis_locate(axis, index)
        first = np.flatnonzero(np.r_[True, chunk[1:] != chunk[:-1]])
        counts = np.diff(np.r_[first, count])
        chunks = chunk[first]
        size = self.axes[axis]
        extent = np.array([
            (size if isinstance(size, int) else size[c]) for c in chunks
        ], dtype=np.int64)
        origin = chunks * size if isinstance(size, int) else self.edges[axis][chunks]
        extent = np.minimum(extent, dim_len - origin)
        complete = ((step == 1) & (counts == extent)).astype(np.int64)
        return chunks, offset[first], counts, first, complete
