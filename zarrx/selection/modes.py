"""Orthogonal, vectorized (coordinate/mask) and block selections, normalised without any
knowledge of chunks — the fancy-indexing counterparts of :mod:`normalize`.

- ``oindex``: each axis independently takes an int, a slice, an integer array or a
  boolean mask (the outer product, as ``np.ix_``).
- ``vindex``: integer arrays broadcast together into points (NumPy's advanced indexing),
  or one boolean mask of the array's shape.
- ``blocks``: ints and step-1 slices counted in chunks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx.errors import BoundsCheckError, SelectionError
from zarrx.selection.normalize import BasicSelection, normalize_basic


def _index_array(item: Any, size: int, axis: int) -> np.ndarray | None:
    """``item`` as a 1-d array of in-bounds, non-negative indices; ``None`` if not an array."""
    if isinstance(item, slice | int | np.integer) or item is None or item is Ellipsis:
        return None
    arr = np.asarray(item)
    if arr.dtype == bool:
        if arr.ndim != 1 or arr.shape[0] != size:
            raise SelectionError(
                f"boolean index along axis {axis} has shape {arr.shape}, expected ({size},)"
            )
        return np.flatnonzero(arr).astype(np.int64)
    if arr.dtype.kind not in "iu" and arr.size:
        raise SelectionError(f"unsupported index {item!r} for axis {axis}: not integers")
    arr = arr.astype(np.int64, copy=False).reshape(-1) if arr.ndim <= 1 else None
    if arr is None:
        raise SelectionError(f"orthogonal index for axis {axis} must be 1-d")
    return _check_bounds(arr, size, axis)


def _check_bounds(arr: np.ndarray, size: int, axis: int) -> np.ndarray:
    if arr.size and (arr.min() < -size or arr.max() >= size):
        bad = arr[(arr < -size) | (arr >= size)][0]
        raise BoundsCheckError(
            f"index {int(bad)} is out of bounds for axis {axis} with size {size}"
        )
    return np.where(arr < 0, arr + size, arr)


@dataclass(frozen=True)
class OrthogonalSelection(BasicSelection):
    """A basic selection where some axes are index arrays (``arrays[axis]`` not None)."""

    arrays: tuple[np.ndarray | None, ...] = ()


def normalize_orthogonal(selection: Any, shape: tuple[int, ...]) -> BasicSelection:
    """Normalise an orthogonal selection; plain basic selections come back unchanged."""
    items = selection if isinstance(selection, tuple) else (selection,)
    if any(i is Ellipsis for i in items):
        n_real = sum(1 for i in items if i is not None and i is not Ellipsis)
        at = next(k for k, i in enumerate(items) if i is Ellipsis)
        items = items[:at] + (slice(None),) * (len(shape) - n_real) + items[at + 1:]
    if any(i is None for i in items):
        raise SelectionError("orthogonal selections do not take None (np.newaxis)")
    if len(items) > len(shape):
        raise SelectionError(
            f"too many indices for array: array is {len(shape)}-dimensional, "
            f"but {len(items)} were indexed"
        )
    arrays = [_index_array(item, shape[axis], axis) for axis, item in enumerate(items)]
    if not any(a is not None for a in arrays):
        return normalize_basic(tuple(items), shape)
    # Array axes become full slices for the basic part, then carry their own indices.
    basic = normalize_basic(
        tuple(slice(None) if a is not None else item for item, a in zip(items, arrays)), shape
    )
    arrays += [None] * (len(shape) - len(arrays))
    counts = tuple(len(a) if a is not None else c for a, c in zip(arrays, basic.counts))
    result_shape = tuple(c for c, d in zip(counts, basic.dropped) if not d)
    return OrthogonalSelection(
        array_shape=basic.array_shape,
        starts=basic.starts,
        steps=basic.steps,
        counts=counts,
        flipped=basic.flipped,
        dropped=basic.dropped,
        newaxes=(),
        shape=result_shape,
        arrays=tuple(arrays),
    )


@dataclass(frozen=True)
class CoordinateSelection:
    """Points: one index array per axis (flattened), and the shape of NumPy's result."""

    coords: tuple[np.ndarray, ...]
    shape: tuple[int, ...]

    @property
    def npoints(self) -> int:
        return len(self.coords[0]) if self.coords else 1


def normalize_coordinates(selection: Any, shape: tuple[int, ...]) -> CoordinateSelection:
    """Normalise a vectorized selection: int arrays (broadcast) or one full boolean mask."""
    items = selection if isinstance(selection, tuple) else (selection,)
    if len(items) == 1 and np.asarray(items[0]).dtype == bool:
        mask = np.asarray(items[0])
        if mask.shape != shape:
            raise SelectionError(
                f"boolean mask of shape {mask.shape} does not match the array's {shape}"
            )
        coords = tuple(c.astype(np.int64) for c in np.nonzero(mask))
        return CoordinateSelection(coords, (len(coords[0]) if coords else int(mask),))
    if len(items) != len(shape):
        raise SelectionError(
            f"vectorized selection needs one index per axis ({len(shape)}), got {len(items)}"
        )
    arrays = []
    for axis, item in enumerate(items):
        arr = np.asarray(item)
        if isinstance(item, slice) or (arr.dtype.kind not in "iu" and arr.size):
            raise SelectionError(
                f"vectorized selection takes integer arrays, got {item!r} for axis {axis}"
            )
        arrays.append(arr.astype(np.int64, copy=False))
    try:
        arrays = np.broadcast_arrays(*arrays)
    except ValueError:
        raise SelectionError(
            f"index arrays could not be broadcast together: {[a.shape for a in arrays]}"
        ) from None
    out_shape = arrays[0].shape if arrays else ()
    coords = tuple(
        _check_bounds(a.reshape(-1), size, axis)
        for axis, (a, size) in enumerate(zip(arrays, shape))
    )
    return CoordinateSelection(coords, out_shape)


def normalize_blocks(
    selection: Any, shape: tuple[int, ...], chunks: tuple[int, ...]
) -> BasicSelection:
    """A block selection (in units of chunks) as the equivalent basic selection."""
    items = selection if isinstance(selection, tuple) else (selection,)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + (slice(None),) * (len(shape) - len(items) + 1) + items[at + 1:]
    if len(items) > len(shape):
        raise SelectionError(f"too many block indices for an array of rank {len(shape)}")
    items = items + (slice(None),) * (len(shape) - len(items))
    out = []
    for axis, (item, size, chunk) in enumerate(zip(items, shape, chunks)):
        nblocks = -(-size // chunk)
        if isinstance(item, int | np.integer) and not isinstance(item, bool):
            i = int(item)
            if not -nblocks <= i < nblocks:
                raise BoundsCheckError(
                    f"block index {i} is out of bounds for axis {axis} with {nblocks} blocks"
                )
            i %= nblocks
            out.append(slice(i * chunk, min((i + 1) * chunk, size)))
        elif isinstance(item, slice):
            start, stop, step = item.indices(nblocks)
            if step != 1:
                raise SelectionError("block selections take slices with step 1 only")
            out.append(slice(start * chunk, min(max(stop, start) * chunk, size)))
        else:
            raise SelectionError(f"unsupported block index {item!r} for axis {axis}")
    return normalize_basic(tuple(out), shape)


def is_coordinate_selection(selection: Any, shape: tuple[int, ...]) -> bool:
    """True for NumPy selections that mean points: a full boolean mask, or only arrays."""
    items = selection if isinstance(selection, tuple) else (selection,)
    arrays = [np.asarray(i) for i in items if not isinstance(i, slice | int | np.integer)
              and i is not None and i is not Ellipsis]
    if len(items) == 1 and arrays and arrays[0].dtype == bool and arrays[0].shape == shape \
            and len(shape) != 1:
        return True
    return len(arrays) == len(items) == len(shape) and len(shape) > 1 and all(
        a.dtype.kind in "iu" for a in arrays
    )


def is_basic_selection(selection: Any) -> bool:
    items = selection if isinstance(selection, tuple) else (selection,)
    return all(
        i is None or i is Ellipsis or isinstance(i, slice)
        or (isinstance(i, int | np.integer) and not isinstance(i, bool | np.bool_))
        for i in items
    )
