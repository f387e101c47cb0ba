"""The ``regular`` chunk grid: every chunk has the same shape; edge chunks are stored whole.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/chunk-grids/regular-grid/index.html

>>> RegularChunkGrid.from_config({"chunk_shape": [10, 10]}).grid_shape((25, 10))
(3, 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx._core.indexing import slice_chunks
from zarrx.abc.chunk_grid import ChunkGrid
from zarrx.errors import MetadataError

MAX_INT64 = 2**63 - 1


@dataclass(frozen=True)
class RegularChunkGrid(ChunkGrid):
    """Chunks of one shape, ``chunk_shape``, tiling the array from the origin."""

    chunk_shape: tuple[int, ...]
    name = "regular"

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> RegularChunkGrid:
        shape = config.get("chunk_shape") if isinstance(config, Mapping) else None
        extra = set(config) - {"chunk_shape"} if isinstance(config, Mapping) else set()
        if extra:
            raise MetadataError(f"regular chunk grid: unknown configuration keys {sorted(extra)}")
        if not isinstance(shape, list | tuple) or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in shape
        ):
            raise MetadataError(
                f"regular chunk grid: chunk_shape must be a list of integers, got {shape!r}"
            )
        if any(s < 1 or s > MAX_INT64 for s in shape):
            raise MetadataError(
                f"regular chunk grid: chunk sizes must be positive, got {list(shape)}"
            )
        return cls(tuple(shape))

    def to_dict(self) -> dict[str, Any]:
        return {"name": "regular", "configuration": {"chunk_shape": list(self.chunk_shape)}}

    def validate(self, shape: tuple[int, ...], where: str) -> None:
        if len(shape) != len(self.chunk_shape):
            raise MetadataError(
                f"{where}: chunk_shape {list(self.chunk_shape)} has rank "
                f"{len(self.chunk_shape)} but the array shape {list(shape)} has rank {len(shape)}"
            )

    def grid_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """Number of chunks along each axis."""
        return tuple(-(-s // c) for s, c in zip(shape, self.chunk_shape))

    def chunk_shape_at(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        """Shape of the stored chunk at ``coords`` (all the same on a regular grid)."""
        return self.chunk_shape

    def chunk_sizes(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.chunk_shape

    def chunk_origin(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(i * c for i, c in zip(coords, self.chunk_shape))

    def axis_boundary(self, axis: int, chunk: int) -> int:
        return chunk * self.chunk_shape[axis]

    def axis_slice_chunks(
        self, axis: int, start: int, step: int, count: int, dim_len: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per-chunk projection of ``start + k*step`` (k < count) along ``axis``."""
        return slice_chunks(start, step, count, self.chunk_shape[axis], dim_len)

    def axis_projections(
        self, axis: int, start: int, step: int, count: int, dim_len: int
    ) -> list[tuple[int, slice, slice, bool]]:
        one = self.axis_chunk(axis, start, step, count, dim_len)
        if one is None:
            return super().axis_projections(axis, start, step, count, dim_len)
        return [one]

    def axis_chunk(
        self, axis: int, start: int, step: int, count: int, dim_len: int
    ) -> tuple[int, slice, slice, bool] | None:
        size = self.chunk_shape[axis]
        index = start // size
        if count < 1 or (start + (count - 1) * step) // size != index:
            return None
        # Within one chunk (a small selection): a few integer operations, no arrays.
        lo = index * size
        inner = start - lo
        held = min(lo + size, dim_len) - lo  # elements of the chunk inside the array
        return (index, slice(inner, inner + (count - 1) * step + 1, step),
                slice(0, count), count == held)

    def axis_locate(self, axis: int, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.divmod(indices, self.chunk_shape[axis])
