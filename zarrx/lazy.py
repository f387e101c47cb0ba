"""Lazy views: declare a selection, compose it, read or write it later — with NumPy's
meaning.

``a.lazy[idx]`` is a :class:`View`: the array and an index transform from the view's
coordinates into the array's (:mod:`zarrx.selection.transform`). Declaring one parses
``idx`` against the view's own shape exactly as NumPy would (negative indices from the
end, negative steps, ``None``, index arrays, masks) and touches no storage; ``view.lazy``
composes another selection on top, so ``a.lazy[i].lazy[j]`` is NumPy's ``x[i][j]``. A chain
of any length is one transform, read or written in one pass: each chunk it touches is
fetched and decoded once.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from zarrx.errors import BoundsCheckError, SelectionError
from zarrx.runtime.plan import plan, plan_batches
from zarrx.selection.layout import Layout, Run
from zarrx.selection.modes import coordinate_transform, orthogonal_transform
from zarrx.selection.numpy_index import ParsedIndex, Selected, parse_index
from zarrx.selection.transform import IndexTransform


class ChunkProjection(NamedTuple):
    """One stored chunk's (or inner chunk's) share of a view."""

    key: str  # the store key holding it (the shard's key for an inner chunk)
    chunk_coords: tuple[int, ...]  # in the grid of the unit asked for
    chunk_selection: tuple[Any, ...]  # the cells inside that chunk
    array_selection: tuple[Any, ...]  # the cells of the view they fill (an index into it)
    is_partial: bool  # the view covers only part of the chunk


class View:
    """A selection of an array, resolved but not read. Index it, convert it with
    ``np.asarray``, or assign into it; ``view.lazy`` declares a view of the view."""

    __slots__ = ("_array", "_mode", "_transform")

    def __init__(self, array: Any, transform: IndexTransform, mode: str = "view") -> None:
        self._array = array
        self._transform = transform
        self._mode = mode  # NumPy's path for the last step (a scalar result, a view, ...)

    # -- description ----------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._transform.shape

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._transform.ndim

    @property
    def size(self) -> int:
        return self._transform.size

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def array(self) -> Any:
        """The array the view selects from."""
        return self._array

    @property
    def transform(self) -> IndexTransform:
        """The map from the view's coordinates into the array's."""
        return self._transform

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        maps = ", ".join(_describe(m, self._transform.shape) for m in self._transform.maps)
        return (f"<zarrx.View shape={self.shape} dtype={self.dtype} of "
                f"{self._array.name!r}[{maps}]>")

    @property
    def lazy(self) -> LazyIndexer:
        """Declare a view of this view: ``v.lazy[idx]``."""
        return LazyIndexer(self._array, self._transform)

    # -- reading ------------------------------------------------------------------------
    def _checked(self, transform: IndexTransform) -> IndexTransform:
        """``transform`` if every cell it names is inside the array as it is now (it may
        have shrunk since the view was declared), else ``IndexError`` naming the axis."""
        bounds = transform.bounds()
        for axis, (size, span) in enumerate(zip(self._array.shape, bounds or ())):
            if span[1] >= size:
                raise BoundsCheckError(
                    f"{self._array.name}: the view reaches index {span[1]} on axis {axis}, "
                    f"but the array's size there is now {size}"
                )
        return transform

    def _read(self, selected: Selected) -> Any:
        composed = self._checked(self._transform.compose(selected.transform))
        return self._array._read(Selected(composed, selected.mode))

    def result(self) -> Any:
        """NumPy's result of the chain of selections (a scalar where NumPy gives one)."""
        return self._read(Selected(IndexTransform.identity(self.shape), self._mode))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            raise ValueError(f"{self._array.name}: a view is read from storage (copy=False)")
        out = np.asarray(self._read(Selected(IndexTransform.identity(self.shape), "view")))
        return out if dtype is None else out.astype(dtype, copy=False)

    def __getitem__(self, selection: Any) -> Any:
        """Read ``view[selection]`` now (NumPy's meaning, relative to the view)."""
        return self._read(parse_index(self.shape, selection, self._array.name).resolve())

    @property
    def oindex(self) -> _Eager:
        return _Eager(self, orthogonal_transform)

    @property
    def vindex(self) -> _Eager:
        return _Eager(self, coordinate_transform)

    # -- writing ------------------------------------------------------------------------
    def _write(self, selected: Selected | ParsedIndex, value: Any) -> None:
        data = self._array._cast(selected, value)
        if isinstance(selected, ParsedIndex):
            selected = selected.resolve()
        composed = self._checked(self._transform.compose(selected.transform))
        self._array._write_cells(composed, data)

    def __setitem__(self, selection: Any, value: Any) -> None:
        """Write ``value`` into the cells of the array that ``view[selection]`` names."""
        self._write(parse_index(self.shape, selection, self._array.name), value)

    def write(self, value: Any) -> None:
        """Write ``value`` (broadcast to the view's shape) into the cells it names."""
        self._write(Selected(IndexTransform.identity(self.shape), self._mode), value)

    # -- chunks -------------------------------------------------------------------------
    def chunk_projections(self, unit: str = "write") -> list[ChunkProjection]:
        """Every stored chunk the view touches, without I/O: ``unit="write"`` lists the
        units written whole (shards of a sharded array), ``unit="read"`` the units read
        (inner chunks of a sharded array). Their ``array_selection``\\ s cover the view
        exactly once."""
        if unit not in ("write", "read"):
            raise SelectionError(f"unit must be 'write' or 'read', got {unit!r}")
        array = self._array
        layout = array._layout(self._checked(self._transform))
        if not self.size:
            return []
        cs = array._chunk_store
        if unit == "read" and cs.tiles is not None:  # the engine's plan of inner chunks
            found = ((cs.key(tuple(c // n for c, n in zip(p.coords, cs.tiles))), p.coords, p)
                     for batch in plan_batches(cs.grid, cs.meta.shape, layout, tiles=cs.tiles)
                     for p in batch.projections())
        else:
            found = ((cs.key(p.coords), p.coords, p)
                     for p in plan(array._metadata.chunk_grid, array._metadata.shape, layout))
        out = []
        for key, coords, p in found:
            out.append(ChunkProjection(
                key, coords, _chunk_index(layout, p.chunk_selection),
                layout.result_index(p.buffer_index), not p.complete,
            ))
        return out

    def is_chunk_aligned(self, unit: str = "write") -> bool:
        """Whether every chunk the view touches is covered whole."""
        return all(not p.is_partial for p in self.chunk_projections(unit))

    # -- pickling -----------------------------------------------------------------------
    def __getstate__(self) -> tuple[Any, IndexTransform, str]:
        return self._array, self._transform, self._mode

    def __setstate__(self, state: tuple[Any, IndexTransform, str]) -> None:
        self._array, self._transform, self._mode = state


class LazyIndexer:
    """``a.lazy`` / ``view.lazy``: square brackets that declare views."""

    __slots__ = ("_array", "_transform")

    def __init__(self, array: Any, transform: IndexTransform) -> None:
        self._array = array
        self._transform = transform

    def _view(self, selected: Selected) -> View:
        return View(self._array, self._transform.compose(selected.transform), selected.mode)

    def __getitem__(self, selection: Any) -> View:
        return self._view(
            parse_index(self._transform.shape, selection, self._array.name).resolve()
        )

    def __setitem__(self, selection: Any, value: Any) -> None:
        View(self._array, self._transform)[selection] = value

    @property
    def oindex(self) -> _Declare:
        return _Declare(self, orthogonal_transform)

    @property
    def vindex(self) -> _Declare:
        return _Declare(self, coordinate_transform)


class _Declare:
    """``a.lazy.oindex`` / ``a.lazy.vindex``."""

    def __init__(self, lazy: LazyIndexer, mode: Any) -> None:
        self._lazy = lazy
        self._mode = mode

    def __getitem__(self, selection: Any) -> View:
        shape = self._lazy._transform.shape
        return self._lazy._view(self._mode(shape, selection, self._lazy._array.name))


class _Eager:
    """``view.oindex`` / ``view.vindex``: read and write now, relative to the view."""

    def __init__(self, view: View, mode: Any) -> None:
        self._view = view
        self._mode = mode

    def __getitem__(self, selection: Any) -> Any:
        return self._view._read(self._mode(self._view.shape, selection, self._view.array.name))

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._view._write(self._mode(self._view.shape, selection, self._view.array.name), value)


def _chunk_index(layout: Layout, selection: tuple[Any, ...]) -> tuple[Any, ...]:
    """The engine's in-chunk selection in the form of :meth:`Layout.result_index`, so that
    ``view_result[array_selection] = chunk[chunk_selection]`` holds for every projection:
    integers on fixed axes when the result index is slices, else index arrays with one
    axis per group (and a length-one axis per dimension the result repeats along)."""
    groups = layout.groups
    if not layout.needs_index_arrays():
        return tuple(s.start if isinstance(g, Run) and g.dim is None else s
                     for g, s in zip(groups, selection))
    nbuf = len(groups) + len(layout.broadcast_dims)
    where = {}
    for b, g in enumerate(groups):
        for axis in ((g.axis,) if isinstance(g, Run) else g.axes):
            where[axis] = b
    index = []
    for axis, s in enumerate(selection):
        values = np.arange(s.start, s.stop, s.step) if isinstance(s, slice) else np.asarray(s)
        if values.ndim == 1:
            shape = [1] * nbuf
            shape[where[axis]] = len(values)
            values = values.reshape(shape)
        else:  # already broadcast over the groups
            values = values.reshape(values.shape + (1,) * (nbuf - values.ndim))
        index.append(values)
    return tuple(index)


def _describe(m: Any, shape: tuple[int, ...]) -> str:
    """One array axis of a transform, for ``repr``."""
    if hasattr(m, "value"):
        return str(m.value)
    if hasattr(m, "step"):
        n = shape[m.dim]
        last = m.start + m.step * (n - 1)
        stop = last + (1 if m.step > 0 else -1)
        return f"{m.start}:{stop if stop >= 0 else ''}:{m.step}" if n else "0:0"
    return f"<index array {m.index.shape}>"
