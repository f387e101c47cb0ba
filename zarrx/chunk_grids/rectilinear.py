"""The ``rectilinear`` chunk grid: chunk sizes that vary along each axis.

- Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear
- v3 name: ``rectilinear``, configuration ``{"kind": "inline", "chunk_shapes": [...]}``
  with one entry per axis: an integer (a regular axis of that step, covering any length)
  or a list whose items are edge lengths or ``[length, count]`` runs. The edges of an
  axis must cover its length; more is allowed (chunks wholly past the end are never
  stored).
- v2 id, draft URI: none (regular grids only).
- Writers: zarr-python 3.4 (``zarr.config.set({"array.rectilinear_chunks": True})``),
  zarrs. zarrx writes what it read; for new and resized arrays it writes each list with
  runs of equal lengths as ``[length, count]`` (what zarr-python writes).
- Chunks are stored whole, as on a regular grid: a chunk sticking out of the array has its
  full edge lengths. Resizing past the last edge of an axis adds one edge that reaches the
  new end (as zarr-python does).

An axis is kept as its runs, never expanded, so ``[[1, 1000000000]]`` costs no memory;
every question the engine asks (which chunks a strided range touches, where points fall)
is answered with a binary search over the runs.

>>> grid = RectilinearChunkGrid.from_config(
...     {"kind": "inline", "chunk_shapes": [[2, [3, 2]], 4]})
>>> grid.grid_shape((8, 10)), grid.chunk_shape_at((2, 0))
((3, 3), (3, 4))
>>> [int(v) for v in grid.axis_locate(0, np.array([0, 2, 7]))[0]]
[0, 1, 2]
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from zarrx.abc.chunk_grid import ChunkGrid
from zarrx.errors import MetadataError

MAX_INT64 = 2**63 - 1


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INT64:
        raise MetadataError(f"rectilinear chunk grid: {what} must be a positive integer, "
                            f"got {value!r}")
    return value


@dataclass(frozen=True)
class Axis:
    """One axis: a regular step, or runs of equal edge lengths (``sizes[r]`` repeated
    ``counts[r]`` times)."""

    step: int | None  # a regular axis (an integer in the metadata)
    sizes: tuple[int, ...] = ()
    counts: tuple[int, ...] = ()

    @classmethod
    def parse(cls, axis: int, spec: Any) -> Axis:
        if isinstance(spec, int) and not isinstance(spec, bool):
            return cls(_positive(spec, f"the chunk size of axis {axis}"))
        if not isinstance(spec, list) or not spec:
            raise MetadataError(
                f"rectilinear chunk grid: axis {axis} must be an integer or a non-empty list "
                f"of edge lengths and [length, count] runs, got {spec!r}"
            )
        sizes: list[int] = []
        counts: list[int] = []
        for item in spec:
            if isinstance(item, list):
                if len(item) != 2:
                    raise MetadataError(
                        f"rectilinear chunk grid: a run of axis {axis} is [length, count], "
                        f"got {item!r}"
                    )
                size = _positive(item[0], f"an edge length of axis {axis}")
                count = _positive(item[1], f"a run count of axis {axis}")
            else:
                size, count = _positive(item, f"an edge length of axis {axis}"), 1
            if sizes and sizes[-1] == size:
                counts[-1] += count
            else:
                sizes.append(size)
                counts.append(count)
        found = cls(None, tuple(sizes), tuple(counts))
        if found.extent > MAX_INT64 or found.nchunks > MAX_INT64:
            raise MetadataError(
                f"rectilinear chunk grid: the edges of axis {axis} overflow 64 bits"
            )
        return found

    @cached_property
    def _first(self) -> list[int]:
        """The first chunk of each run, then the number of chunks."""
        out = [0]
        for count in self.counts:
            out.append(out[-1] + count)
        return out

    @cached_property
    def _starts(self) -> list[int]:
        """The first element of each run, then the extent the edges cover."""
        out = [0]
        for size, count in zip(self.sizes, self.counts):
            out.append(out[-1] + size * count)
        return out

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (np.array(self.sizes, np.int64), np.array(self._first, np.int64),
                np.array(self._starts, np.int64))

    @property
    def extent(self) -> int:
        """Elements the edges cover (a regular axis: any number)."""
        return MAX_INT64 if self.step is not None else self._starts[-1]

    @property
    def nchunks(self) -> int:
        return MAX_INT64 if self.step is not None else self._first[-1]

    def to_json(self) -> Any:
        if self.step is not None:
            return self.step
        return [s if n == 1 else [s, n] for s, n in zip(self.sizes, self.counts)]

    def grown(self, length: int) -> Axis:
        """The axis with one more edge when its edges end before ``length``."""
        if self.step is not None or length <= self.extent:
            return self
        extra = length - self.extent
        if extra == self.sizes[-1]:
            return Axis(None, self.sizes, (*self.counts[:-1], self.counts[-1] + 1))
        return Axis(None, (*self.sizes, extra), (*self.counts, 1))

    # -- scalar questions (Python integers) ------------------------------------------------
    def count(self, length: int) -> int:
        """Chunks holding at least one of the first ``length`` elements."""
        if length <= 0:
            return 0
        return -(-length // self.step) if self.step is not None else self.locate(length - 1)[0] + 1

    def locate(self, index: int) -> tuple[int, int]:
        """(chunk, offset in it) of element ``index``."""
        if self.step is not None:
            return divmod(index, self.step)
        r = min(bisect.bisect_right(self._starts, index), len(self.sizes)) - 1
        k, offset = divmod(index - self._starts[r], self.sizes[r])
        return self._first[r] + k, offset

    def origin(self, chunk: int) -> int:
        """First element of chunk ``chunk`` (the end of the edges for ``nchunks``)."""
        if self.step is not None:
            return chunk * self.step
        r = min(bisect.bisect_right(self._first, chunk) - 1, len(self.sizes) - 1)
        return self._starts[r] + (chunk - self._first[r]) * self.sizes[r]

    def size(self, chunk: int) -> int:
        if self.step is not None:
            return self.step
        return self.sizes[bisect.bisect_right(self._first, chunk) - 1]

    # -- vector questions (int64 arrays) ---------------------------------------------------
    def locate_many(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        indices = np.asarray(indices, dtype=np.int64)
        if self.step is not None:
            chunk, offset = np.divmod(indices, self.step)
            return chunk, offset
        sizes, first, starts = self._arrays
        r = np.searchsorted(starts, indices, side="right") - 1
        k, offset = np.divmod(indices - starts[r], sizes[r])
        return first[r] + k, offset

    def origins_and_sizes(self, chunks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.step is not None:
            return chunks * self.step, np.full(len(chunks), self.step, np.int64)
        sizes, first, starts = self._arrays
        r = np.searchsorted(first, chunks, side="right") - 1
        return starts[r] + (chunks - first[r]) * sizes[r], sizes[r]


@dataclass(frozen=True)
class RectilinearChunkGrid(ChunkGrid):
    """Per axis, a regular step or a list of edge lengths (kept as runs)."""

    axes: tuple[Axis, ...]
    #: The ``chunk_shapes`` as read, written back unchanged (``None``: as runs).
    raw: tuple[Any, ...] | None = field(default=None, compare=False, repr=False)
    name = "rectilinear"

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any]) -> RectilinearChunkGrid:
        if not isinstance(configuration, Mapping):
            raise MetadataError(
                f"rectilinear chunk grid: configuration must be an object, got {configuration!r}"
            )
        extra = set(configuration) - {"kind", "chunk_shapes"}
        if extra:
            raise MetadataError(
                f"rectilinear chunk grid: unknown configuration keys {sorted(extra)}"
            )
        if configuration.get("kind") != "inline":
            raise MetadataError(
                "rectilinear chunk grid: configuration 'kind' must be \"inline\" (the only kind "
                f"the spec defines), got {configuration.get('kind')!r}"
            )
        shapes = configuration.get("chunk_shapes")
        if not isinstance(shapes, list | tuple):
            raise MetadataError(
                f"rectilinear chunk grid: chunk_shapes must be a list, got {shapes!r}"
            )
        axes = tuple(Axis.parse(i, spec) for i, spec in enumerate(shapes))
        return cls(axes, tuple(shapes))

    @classmethod
    def from_sizes(cls, chunks: Sequence[Any]) -> RectilinearChunkGrid:
        """From per-axis chunk sizes as a user gives them: an integer, or a sequence of edge
        lengths (``[2, 3, 5]``) — a ``[length, count]`` pair is a run, as in the metadata."""
        spec = [c if isinstance(c, int | np.integer) else
                [list(map(int, i)) if isinstance(i, Sequence) else int(i) for i in c]
                for c in chunks]
        parsed = cls.from_config({"kind": "inline",
                                  "chunk_shapes": [int(s) if isinstance(s, np.integer) else s
                                                   for s in spec]})
        return cls(parsed.axes)  # written as runs

    def to_dict(self) -> dict[str, Any]:
        shapes = list(self.raw) if self.raw is not None else [a.to_json() for a in self.axes]
        return {"name": "rectilinear",
                "configuration": {"kind": "inline", "chunk_shapes": shapes}}

    @property
    def chunk_shape(self) -> tuple[Any, ...]:
        """Per axis: the chunk size of a regular axis, or the tuple of edge lengths."""
        return tuple(a.step if a.step is not None else
                     tuple(np.repeat(a.sizes, a.counts).tolist()) for a in self.axes)

    def validate(self, shape: tuple[int, ...], where: str) -> None:
        if len(shape) != len(self.axes):
            raise MetadataError(
                f"{where}: the rectilinear chunk grid has {len(self.axes)} axes but the array "
                f"shape {list(shape)} has rank {len(shape)}"
            )
        for i, (axis, n) in enumerate(zip(self.axes, shape)):
            if axis.extent < n:
                raise MetadataError(
                    f"{where}: the rectilinear chunk edges of axis {i} cover {axis.extent} "
                    f"elements, the array has {n}"
                )

    def resized(self, shape: tuple[int, ...]) -> RectilinearChunkGrid:
        """The grid for the array reshaped to ``shape``: an axis whose edges end before its
        new length gets one edge more."""
        axes = tuple(a.grown(n) for a, n in zip(self.axes, shape))
        return self if axes == self.axes else RectilinearChunkGrid(axes)

    def grid_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(a.count(n) for a, n in zip(self.axes, shape))

    def multiple_of(self, chunk_shape: tuple[int, ...]) -> bool:
        """Whether every edge is a multiple of ``chunk_shape`` (shards of inner chunks)."""
        return len(chunk_shape) == len(self.axes) and all(
            all(size % c == 0 for size in ((a.step,) if a.step is not None else a.sizes))
            for a, c in zip(self.axes, chunk_shape)
        )

    def chunk_shape_at(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(a.size(c) for a, c in zip(self.axes, coords))

    def chunk_sizes(self, shape: tuple[int, ...]) -> tuple[int | tuple[int, ...], ...]:
        out: list[int | tuple[int, ...]] = []
        for a, n in zip(self.axes, shape):  # an integer axis too: the sizes along it
            origin, size = a.origins_and_sizes(np.arange(a.count(n), dtype=np.int64))
            out.append(tuple(np.minimum(size, n - origin).tolist()))
        return tuple(out)

    def chunk_origin(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(a.origin(c) for a, c in zip(self.axes, coords))

    def axis_boundary(self, axis: int, chunk: int) -> int:
        return self.axes[axis].origin(chunk)

    def axis_locate(self, axis: int, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.axes[axis].locate_many(indices)

    def axis_slice_chunks(
        self, axis: int, start: int, step: int, count: int, dim_len: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per chunk touched by ``start + k*step`` (k < count, step > 0): its index, the
        in-chunk start, the count in it, the output start and whether it is complete."""
        if count < 1:
            empty = np.empty(0, np.int64)
            return empty, empty, empty, empty, empty
        if step < 1 or start < 0 or start + (count - 1) * step >= dim_len:
            raise ValueError(f"slice out of bounds: start={start}, step={step}, "
                             f"count={count} selects past dim_len={dim_len}")
        a = self.axes[axis]
        first, last = a.locate(start)[0], a.locate(start + (count - 1) * step)[0]
        if last - first + 1 > count:  # fewer indices than chunks spanned: walk the indices
            chunk, offset = a.locate_many(start + step * np.arange(count, dtype=np.int64))
            out = np.flatnonzero(np.r_[True, chunk[1:] != chunk[:-1]])
            counts = np.diff(np.r_[out, count])
            chunks, in_start = chunk[out], offset[out]
            origin, size = a.origins_and_sizes(chunks)
        else:  # every chunk spanned: where the strided range enters and leaves each
            chunks = np.arange(first, last + 1, dtype=np.int64)
            origin, size = a.origins_and_sizes(chunks)
            enter = np.maximum(-((start - origin) // step), 0)  # ceil((origin - start) / step)
            leave = np.minimum(-((start - origin - size) // step), count)
            counts = leave - enter
            keep = counts > 0
            chunks, origin, size = chunks[keep], origin[keep], size[keep]
            out, counts = enter[keep], counts[keep]
            in_start = start + out * step - origin
        held = np.minimum(size, dim_len - origin)
        return chunks, in_start, counts, out, (counts == held).astype(np.int64)

    def axis_projections(
        self, axis: int, start: int, step: int, count: int, dim_len: int
    ) -> list[tuple[int, slice, slice, bool]]:
        a = self.axes[axis]
        if count >= 1 and start >= 0 and start + (count - 1) * step < dim_len:
            index, inner = a.locate(start)
            if a.locate(start + (count - 1) * step)[0] == index:  # one chunk: no arrays
                held = min(a.size(index), dim_len - a.origin(index))
                return [(index, slice(inner, inner + (count - 1) * step + 1, step),
                         slice(0, count), count == held)]
        return super().axis_projections(axis, start, step, count, dim_len)
