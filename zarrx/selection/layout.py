"""The buffer a selection is read into and written from, and how it relates to the result.

The engine works on a *buffer* with one dimension per group of array axes, in array-axis
order:

- a :class:`Run` — one array axis selected as a positive-step run of indices (a
  :class:`~zarrx.selection.transform.Const` is a run of one, a negative step is a run read
  backwards);
- a :class:`Points` group — array axes whose index arrays share result dimensions (NumPy's
  broadcast index arrays, or one ``oindex`` array): ``n`` points, one coordinate array per
  axis, in C order of the group's result dimensions.

:meth:`Layout.result` turns a buffer into NumPy's result (reverse backward runs, drop fixed
axes, unfold point groups, move dimensions into the result's order, repeat along result
dimensions that select nothing); :meth:`Layout.buffer_of` is the inverse, used to read
straight into a result and to lay a value out for writing. Both are views where NumPy can
make them so. Nothing here knows about chunks.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from zarrx.selection.transform import Const, Indexed, IndexTransform, Strided


class Run(NamedTuple):
    """``count`` indices ``start + k*step`` (``step >= 1``) on array ``axis``; ``dim`` is
    the result dimension it fills (``None`` for a fixed axis); ``backward``: the result
    reads them from the last to the first."""

    axis: int
    start: int
    step: int
    count: int  # type: ignore[assignment]  # a field named as tuple.count
    dim: int | None
    backward: bool


class Points(NamedTuple):
    """``len(coords[0])`` points on array ``axes``, filling result dimensions ``dims``."""

    axes: tuple[int, ...]
    dims: tuple[int, ...]
    coords: tuple[np.ndarray, ...]

    @property
    def count(self) -> int:  # type: ignore[override]  # Run's field, as a property
        return len(self.coords[0])


Group = Run | Points


class Layout:
    """A transform's groups, its buffer shape, and the result ↔ buffer mappings."""

    __slots__ = ("_plain", "buffer_shape", "groups", "shape", "simple_points", "unused")

    def __init__(self, transform: IndexTransform) -> None:
        shape = transform.shape
        self.shape = shape
        if not shape and all(type(m) is Const for m in transform.maps):
            # A point: a fixed index per axis; its buffer is the result reshaped.
            fixed: list[Group] = [Run(axis, m.value, 1, 1, None, False)
                                  for axis, m in enumerate(transform.maps)
                                  if isinstance(m, Const)]
            self.groups = tuple(fixed)
            self.buffer_shape = (1,) * len(fixed)
            self._plain = True
            self.unused: tuple[int, ...] = ()
            self.simple_points = False
            return
        groups: list[Group] = []
        indexed: dict[int, Indexed] = {}
        dims: list[int] = []  # the result dimensions of the runs, in axis order
        forward = True
        for axis, m in enumerate(transform.maps):
            if isinstance(m, Const):
                groups.append(Run(axis, m.value, 1, 1, None, False))
            elif isinstance(m, Strided):
                run = _run(axis, m, shape[m.dim])
                groups.append(run)
                dims.append(m.dim)
                forward = forward and not run.backward
            else:
                indexed[axis] = m
        if indexed:
            groups += _point_groups(indexed, shape)
            groups.sort(key=lambda g: g.axis if isinstance(g, Run) else g.axes[0])
        self.groups = tuple(groups)
        self.buffer_shape = tuple(g.count for g in groups)
        if not indexed and dims == list(range(len(shape))):
            #: Forward runs filling the result's dimensions in order (basic indexing
            #: without negative steps or None): the buffer is the result reshaped.
            self._plain = forward
            self.unused = ()
            self.simple_points = False
            return
        self._plain = False
        used = {d for g in groups for d in ((g.dim,) if isinstance(g, Run) else g.dims)}
        self.unused = tuple(d for d in range(len(shape)) if d not in used)
        points = [g for g in groups if isinstance(g, Points)]
        #: One point group on consecutive axes: NumPy indexing of a chunk with slices and
        #: those arrays keeps the points' dimension in place, as the buffer has it.
        self.simple_points = len(points) == 1 and (
            points[0].axes[-1] - points[0].axes[0] == len(points[0].axes) - 1
        )

    # -- buffer → result -----------------------------------------------------------------
    def _labels(self) -> list[int]:
        """The result dimensions of the buffer's dimensions once fixed axes are dropped and
        point groups unfolded, in buffer order."""
        labels: list[int] = []
        for g in self.groups:
            if isinstance(g, Run):
                if g.dim is not None:
                    labels.append(g.dim)
            else:
                labels += g.dims
        return labels

    def result(self, buffer: np.ndarray) -> np.ndarray:
        """NumPy's result of the selection, from its buffer (a view where possible)."""
        index: list[Any] = []
        for g in self.groups:
            if isinstance(g, Points):
                index.append(slice(None))
            elif g.dim is None:
                index.append(0)
            else:
                index.append(slice(None, None, -1) if g.backward else slice(None))
        out = buffer[(*index, Ellipsis)]  # the Ellipsis keeps a 0-d result a view
        unfolded: list[int] = []
        for g in self.groups:
            if isinstance(g, Points):
                unfolded += [self.shape[d] for d in g.dims]
            elif g.dim is not None:
                unfolded.append(self.shape[g.dim])
        out = out.reshape(unfolded)
        labels = self._labels()
        out = out.transpose(np.argsort(labels, kind="stable"))
        if self.unused:
            out = np.expand_dims(out, self.unused)
            out = np.broadcast_to(out, self.shape)
        return out

    # -- result → buffer -----------------------------------------------------------------
    def buffer_of(self, result: np.ndarray) -> np.ndarray:
        """The buffer whose :meth:`result` is ``result``: a view of it where NumPy can make
        one (always for a C-contiguous ``result`` of a NumPy selection). Along result
        dimensions that select nothing, the last entry is taken (the last write wins)."""
        out = result
        if self.unused:
            index = tuple(-1 if d in self.unused else slice(None) for d in range(out.ndim))
            out = out[(*index, Ellipsis)]  # a view, even of one element
        labels = self._labels()
        used = sorted(labels)
        out = out.transpose([used.index(label) for label in labels])
        out = out.reshape(self._unfixed_buffer_shape())
        fixed = tuple(i for i, g in enumerate(self.groups) if isinstance(g, Run) and g.dim is None)
        if fixed:
            out = np.expand_dims(out, fixed)
        if any(isinstance(g, Run) and g.backward for g in self.groups):
            out = out[tuple(slice(None, None, -1) if isinstance(g, Run) and g.backward
                            else slice(None) for g in self.groups)]
        return out

    def _unfixed_buffer_shape(self) -> tuple[int, ...]:
        return tuple(g.count for g in self.groups if not (isinstance(g, Run) and g.dim is None))

    @property
    def broadcast_dims(self) -> tuple[int, ...]:
        """Result dimensions longer than one that no array axis depends on (the result
        repeats along them)."""
        return tuple(d for d in self.unused if self.shape[d] != 1)

    def needs_index_arrays(self) -> bool:
        """Whether a share of the buffer maps to the result only through index arrays
        (a point group, or a dimension the result repeats along)."""
        return any(isinstance(g, Points) for g in self.groups) or bool(self.broadcast_dims)

    def result_index(self, parts: tuple[Any, ...]) -> tuple[Any, ...]:
        """The cells of the result that a share of the buffer fills, given per group (a
        step-1 slice or an array of positions each), as an index into an array of the
        result's shape. Without :meth:`needs_index_arrays` it is slices and integers,
        selecting the share's runs in order (fixed axes gone); otherwise index arrays
        with one axis per group, then one per :attr:`broadcast_dims` entry."""
        arrays = self.needs_index_arrays()
        nbuf = len(self.groups) + len(self.broadcast_dims)
        index: list[Any] = [0] * len(self.shape)
        for b, (g, part) in enumerate(zip(self.groups, parts)):
            if isinstance(g, Run):
                if g.dim is None:
                    continue
                if g.backward:  # the buffer holds the run forwards, the result backwards
                    stop = g.count - part.stop - 1
                    part = slice(g.count - part.start - 1, stop if stop >= 0 else None, -1)
                index[g.dim] = _along(_indices(part, g.count), b, nbuf) if arrays else part
            else:
                positions = _indices(part, g.count)
                sizes = [self.shape[d] for d in g.dims]
                for d, c in zip(g.dims, np.unravel_index(positions, sizes)):
                    index[d] = _along(c, b, nbuf)
        for k, d in enumerate(self.broadcast_dims):
            index[d] = _along(np.arange(self.shape[d]), len(self.groups) + k, nbuf)
        return tuple(index)

    def read_target(self, result: np.ndarray) -> np.ndarray | None:
        """:meth:`buffer_of` ``result`` when it is a view that writes reach ``result``
        through, else ``None`` (read into a separate buffer, then copy)."""
        if self._plain and result.flags.c_contiguous:
            return result.reshape(self.buffer_shape)
        if self.unused and any(self.shape[d] != 1 for d in self.unused):
            return None
        buffer = self.buffer_of(result)
        if buffer.size and not np.may_share_memory(buffer, result):
            return None
        return buffer


def _indices(part: Any, count: int) -> np.ndarray:
    return np.arange(count)[part] if isinstance(part, slice) else np.asarray(part)


def _along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """``values`` as an array of rank ``ndim`` varying along ``axis`` (for broadcasting)."""
    shape = [1] * ndim
    shape[axis] = len(values)
    return values.reshape(shape)


def _run(axis: int, m: Strided, count: int) -> Run:
    if count <= 1:
        return Run(axis, m.start if count else 0, 1, count, m.dim, False)
    if m.step > 0:
        return Run(axis, m.start, m.step, count, m.dim, False)
    return Run(axis, m.start + m.step * (count - 1), -m.step, count, m.dim, True)


def _point_groups(indexed: dict[int, Indexed], shape: tuple[int, ...]) -> list[Points]:
    """Index-array axes grouped by the result dimensions they share (connected
    components), each flattened into points in C order of the group's dimensions."""
    parent = {axis: axis for axis in indexed}

    def root(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    owner: dict[int, int] = {}
    for axis, m in indexed.items():
        for d in m.dims:
            if d in owner:
                parent[root(axis)] = root(owner[d])
            else:
                owner[d] = axis
    members: dict[int, list[int]] = {}
    for axis in indexed:
        members.setdefault(root(axis), []).append(axis)
    groups = []
    for axes in members.values():
        dims = tuple(sorted({d for a in axes for d in indexed[a].dims}))
        sizes = tuple(shape[d] for d in dims)
        coords = []
        for a in axes:
            m = indexed[a]
            spread = [shape[d] if d in m.dims else 1 for d in dims]
            full = np.broadcast_to(m.index.reshape(spread), sizes)
            coords.append(np.ascontiguousarray(full, dtype=np.int64).reshape(-1))
        groups.append(Points(tuple(axes), dims, tuple(coords)))
    return groups
