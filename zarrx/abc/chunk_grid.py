"""The chunk grid contract: how an array's index space is cut into chunks.

The engine asks a grid only these questions, per axis, so grids with variable chunk sizes
(e.g. ``rectilinear``) plug in beside ``regular`` without the engine knowing either.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Self

import numpy as np


class ChunkGrid(ABC):
    name: str

    @classmethod
    @abstractmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> Self:
        """Parse the ``configuration`` object; :class:`zarrx.errors.MetadataError` if bad."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., "configuration": {...}}``."""

    @abstractmethod
    def validate(self, shape: tuple[int, ...], where: str) -> None:
        """Raise :class:`zarrx.errors.MetadataError` if the grid does not fit ``shape``."""

    @abstractmethod
    def grid_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """Number of chunks along each axis."""

    def resized(self, shape: tuple[int, ...]) -> Self:
        """The grid of the array resized to ``shape`` (a grid with finite edges may have to
        grow to cover it); by default the grid itself."""
        return self

    @abstractmethod
    def axis_boundary(self, axis: int, chunk: int) -> int:
        """The first element of chunk ``chunk`` along ``axis`` (the end of chunk
        ``chunk - 1``): where a resize to ``chunk`` chunks cuts the axis."""

    @abstractmethod
    def chunk_shape_at(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        """Shape of the stored chunk at grid position ``coords``."""

    @abstractmethod
    def chunk_sizes(self, shape: tuple[int, ...]) -> tuple[int | tuple[int, ...], ...]:
        """What ``Array.chunks`` shows: per axis the size every chunk has, or the sizes of
        the chunks inside an array of ``shape`` (the last one cut at its end)."""

    @abstractmethod
    def axis_slice_chunks(
        self, axis: int, start: int, step: int, count: int, dim_len: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Project ``start + k*step`` (k < count) onto the chunks of ``axis``: arrays of
        chunk index, in-chunk start, count in chunk, output start and "chunk complete"."""

    def axis_projections(
        self, axis: int, start: int, step: int, count: int, dim_len: int
    ) -> list[tuple[int, slice, slice, bool]]:
        """:meth:`axis_slice_chunks` as ``(chunk index, in-chunk slice, output slice,
        complete)`` tuples, the form the planner combines across axes."""
        chunk_index, chunk_start, chunk_count, out_start, complete = self.axis_slice_chunks(
            axis, start, step, count, dim_len
        )
        return [
            (int(c), slice(int(s), int(s) + (int(n) - 1) * step + 1, step),
             slice(int(o), int(o) + int(n)), bool(f))
            for c, s, n, o, f in zip(chunk_index, chunk_start, chunk_count, out_start, complete)
        ]

    def axis_chunk(
        self, axis: int, start: int, step: int, count: int, dim_len: int
    ) -> tuple[int, slice, slice, bool] | None:
        """The one :meth:`axis_projections` entry of ``start + k*step`` (k < count) when
        they all lie in one chunk of ``axis`` (a small read), else ``None``. By default
        asked of :meth:`axis_projections` for runs of at most 64 indices."""
        if count > 64:
            return None
        found = self.axis_projections(axis, start, step, count, dim_len)
        return found[0] if len(found) == 1 else None

    @abstractmethod
    def axis_locate(self, axis: int, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For element indices along ``axis``: their chunk index and in-chunk offset."""
