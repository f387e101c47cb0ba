"""Index transforms: the one description of a selection that every path shares.

A selection of an array is a map from the coordinates of its result (the *input* domain, of
shape :attr:`IndexTransform.shape`) to coordinates of the array, one rule per array axis:

- :class:`Const` ``(value)`` — the array axis is fixed at ``value``;
- :class:`Strided` ``(dim, start, step)`` — array index ``start + step * i[dim]``;
- :class:`Indexed` ``(dims, index)`` — array index ``index[i[dims[0]], i[dims[1]], ...]``,
  an integer array over some result dimensions (NumPy's index arrays and masks).

NumPy's indexing, ``oindex``, ``vindex`` and ``blocks`` each build one (see
:mod:`zarrx.selection.numpy_index` and :mod:`zarrx.selection.modes`). Transforms compose —
the selection of a selection is again a transform, which is what a lazy view holds — and
translate (an index domain that starts elsewhere). Every index a transform holds lies
inside the array it was built for; nothing here knows about chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class Const(NamedTuple):
    """The array axis is fixed at ``value``."""

    value: int


class Strided(NamedTuple):
    """Array index ``start + step * i[dim]`` (``step`` may be negative)."""

    dim: int
    start: int
    step: int


class Indexed(NamedTuple):
    """Array index ``index[i[dims]]``; ``index`` has one axis per entry of ``dims``
    (ascending), of the sizes of those result dimensions, and holds in-bounds indices."""

    dims: tuple[int, ...]
    index: np.ndarray


AxisMap = Const | Strided | Indexed


@dataclass(frozen=True, eq=False)
class IndexTransform:
    """A map from a result of shape ``shape`` into an array, one :data:`AxisMap` per axis."""

    shape: tuple[int, ...]
    maps: tuple[AxisMap, ...]

    @classmethod
    def identity(cls, shape: Sequence[int]) -> IndexTransform:
        return cls(tuple(shape), tuple(Strided(d, 0, 1) for d in range(len(shape))))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def translate(self, offsets: Sequence[int]) -> IndexTransform:
        """The same selection of an array whose coordinates are shifted by ``offsets``."""
        maps = []
        for m, o in zip(self.maps, offsets):
            if isinstance(m, Const):
                maps.append(Const(m.value + o))
            elif isinstance(m, Strided):
                maps.append(Strided(m.dim, m.start + o, m.step))
            else:
                maps.append(Indexed(m.dims, m.index + o))
        return IndexTransform(self.shape, tuple(maps))

    def compose(self, inner: IndexTransform) -> IndexTransform:
        """``self ∘ inner``: ``inner`` selects from the result of ``self`` (its maps have one
        entry per dimension of ``self.shape``); the composition selects from the array."""
        grids: dict[int, np.ndarray] = {}  # inner maps as arrays over inner's dimensions

        def as_array(view_dim: int) -> tuple[np.ndarray, tuple[int, ...]]:
            m = inner.maps[view_dim]
            if isinstance(m, Indexed):
                return _spread(m.index, m.dims, inner.ndim), m.dims
            if isinstance(m, Const):
                return np.full((1,) * inner.ndim, m.value, dtype=np.int64), ()
            if view_dim not in grids:
                axis = m.start + m.step * np.arange(inner.shape[m.dim], dtype=np.int64)
                grids[view_dim] = _spread(axis, (m.dim,), inner.ndim)
            return grids[view_dim], (m.dim,)

        maps: list[AxisMap] = []
        for m in self.maps:
            if isinstance(m, Const):
                maps.append(m)
            elif isinstance(m, Strided):
                sub = inner.maps[m.dim]
                if isinstance(sub, Const):
                    maps.append(Const(m.start + m.step * sub.value))
                elif isinstance(sub, Strided):
                    maps.append(Strided(sub.dim, m.start + m.step * sub.start, m.step * sub.step))
                else:
                    maps.append(Indexed(sub.dims, m.start + m.step * sub.index))
            else:
                parts = [as_array(d) for d in m.dims]
                dims = tuple(sorted({d for _, ds in parts for d in ds}))
                picked = m.index[tuple(a for a, _ in parts)]
                if not dims:
                    maps.append(Const(int(picked.reshape(-1)[0])))
                else:
                    full = np.broadcast_to(picked, _spread_shape(inner.shape, dims))
                    maps.append(Indexed(dims, full.reshape([inner.shape[d] for d in dims])))
        return IndexTransform(inner.shape, tuple(maps))

    def bounds(self) -> list[tuple[int, int]] | None:
        """The lowest and highest index selected on each array axis; ``None`` when the
        selection is empty."""
        if self.size == 0:
            return None
        out = []
        for m in self.maps:
            if isinstance(m, Const):
                out.append((m.value, m.value))
            elif isinstance(m, Strided):
                last = m.start + m.step * (self.shape[m.dim] - 1)
                out.append((min(m.start, last), max(m.start, last)))
            else:
                out.append((int(m.index.min()), int(m.index.max())))
        return out


def _spread_shape(shape: Sequence[int], dims: Sequence[int]) -> tuple[int, ...]:
    """A shape of rank ``len(shape)`` with ``shape[d]`` at ``dims`` and 1 elsewhere."""
    return tuple(shape[d] if d in dims else 1 for d in range(len(shape)))


def _spread(values: np.ndarray, dims: Sequence[int], ndim: int) -> np.ndarray:
    """``values`` (one axis per entry of ``dims``) as an array of rank ``ndim`` whose axes
    ``dims`` carry them (size 1 elsewhere), for broadcasting."""
    shape = [1] * ndim
    for axis, d in enumerate(dims):
        shape[d] = values.shape[axis]
    return values.reshape(shape)
