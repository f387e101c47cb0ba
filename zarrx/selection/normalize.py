"""NumPy basic-indexing semantics, written once and knowing nothing of chunks.

A basic selection (ints, slices with any step, Ellipsis, ``None``) is reduced to one
positive-step range per array axis — ``start + k*step`` for ``k < count`` — plus how to turn
the buffer of shape ``counts`` into NumPy's result (reverse negative-step axes, drop
integer-indexed axes, insert new axes). Every read and write path reuses this.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx.errors import BoundsCheckError, SelectionError


@dataclass(frozen=True)
class BasicSelection:
    """A normalised basic selection over an array of shape ``array_shape``."""

    array_shape: tuple[int, ...]
    starts: tuple[int, ...]
    steps: tuple[int, ...]  # all >= 1
    counts: tuple[int, ...]
    flipped: tuple[bool, ...]  # axis selected with a negative step
    dropped: tuple[bool, ...]  # axis indexed by an integer
    newaxes: tuple[int, ...]  # positions of None in the result
    shape: tuple[int, ...]  # shape of NumPy's result
    ellipsis: bool = False  # an Ellipsis keeps a 0-d result an array, as in NumPy

    @classmethod
    def of_ranges(cls, slices: tuple[slice, ...], shape: tuple[int, ...]) -> BasicSelection:
        """The selection of ``slices`` that are already normalised (explicit start, stop and
        a positive step, inside ``shape``), as the engine hands to codecs: no checks."""
        starts = tuple(s.start for s in slices)
        steps = tuple(s.step or 1 for s in slices)
        counts = tuple(
            max(0, -(-(s.stop - start) // step)) for s, start, step in zip(slices, starts, steps)
        )
        flat = (False,) * len(slices)
        return cls(tuple(shape), starts, steps, counts, flat, flat, (), counts)

    def result(self, buffer: np.ndarray) -> Any:
        """NumPy's result, as a view of ``buffer`` (of shape ``counts``)."""
        index: list[Any] = []
        for flip, drop in zip(self.flipped, self.dropped):
            index.append(0 if drop else slice(None, None, -1) if flip else slice(None))
        if self.ellipsis:
            index.append(Ellipsis)
        out = buffer[tuple(index)]
        if self.newaxes:
            out = np.expand_dims(out, self.newaxes)
        return out

    def to_buffer(self, value: np.ndarray) -> np.ndarray:
        """``value`` broadcast to :attr:`shape`, as a view of shape ``counts`` (the inverse)."""
        try:
            value = np.broadcast_to(value, self.shape)
        except ValueError:
            raise SelectionError(
                f"could not broadcast value of shape {np.shape(value)} to the selection "
                f"of shape {self.shape}"
            ) from None
        if self.newaxes:
            value = value[tuple(0 if i in self.newaxes else slice(None)
                                for i in range(value.ndim))]
        dropped = tuple(i for i, d in enumerate(self.dropped) if d)
        if dropped:
            value = np.expand_dims(value, dropped)
        if any(self.flipped):
            value = value[tuple(slice(None, None, -1) if f else slice(None) for f in self.flipped)]
        return value


def _as_int(item: Any) -> int | None:
    if isinstance(item, bool | np.bool_):
        return None
    try:
        return operator.index(item)
    except TypeError:
        return None


def normalize_basic(selection: Any, shape: tuple[int, ...]) -> BasicSelection:
    """Normalise ``selection`` against ``shape`` as NumPy's basic indexing does."""
    items = selection if isinstance(selection, tuple) else (selection,)
    n_ellipsis = sum(1 for s in items if s is Ellipsis)
    if n_ellipsis > 1:
        raise SelectionError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for s in items if s is not None and s is not Ellipsis)
    if n_real > len(shape):
        raise SelectionError(
            f"too many indices for array: array is {len(shape)}-dimensional, "
            f"but {n_real} were indexed"
        )
    if n_ellipsis:
        i = next(i for i, s in enumerate(items) if s is Ellipsis)
        items = items[:i] + (slice(None),) * (len(shape) - n_real) + items[i + 1:]
    else:
        items = items + (slice(None),) * (len(shape) - n_real)

    starts: list[int] = []
    steps: list[int] = []
    counts: list[int] = []
    flipped: list[bool] = []
    dropped: list[bool] = []
    newaxes: list[int] = []
    result_shape: list[int] = []
    axis = 0
    for item in items:
        if item is None:
            newaxes.append(len(result_shape))
            result_shape.append(1)
            continue
        size = shape[axis]
        index = _as_int(item)
        if index is not None:
            if not -size <= index < size:
                raise BoundsCheckError(
                    f"index {index} is out of bounds for axis {axis} with size {size}"
                )
            starts.append(index % size)
            steps.append(1)
            counts.append(1)
            flipped.append(False)
            dropped.append(True)
        elif isinstance(item, slice):
            try:
                start, stop, step = item.indices(size)
            except (TypeError, ValueError) as e:
                raise SelectionError(f"invalid slice {item!r} for axis {axis}: {e}") from None
            r = range(start, stop, step)
            count = len(r)
            # With at most one element the step is irrelevant (and may exceed int64).
            if step > 0 or count == 0:
                starts.append(start if count else 0)
                steps.append(step if count > 1 else 1)
                flipped.append(False)
            else:
                starts.append(r[-1])
                steps.append(-step if count > 1 else 1)
                flipped.append(count > 1)
            counts.append(count)
            dropped.append(False)
            result_shape.append(count)
        else:
            raise SelectionError(
                f"unsupported index {item!r} for axis {axis}: basic indexing takes integers, "
                "slices, Ellipsis and None"
            )
        axis += 1
    return BasicSelection(
        array_shape=tuple(shape),
        starts=tuple(starts),
        steps=tuple(steps),
        counts=tuple(counts),
        flipped=tuple(flipped),
        dropped=tuple(dropped),
        newaxes=tuple(newaxes),
        shape=tuple(result_shape),
        ellipsis=n_ellipsis == 1,
    )
