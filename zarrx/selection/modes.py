"""zarr-python's other selection modes, as transforms (see :mod:`transform`):

- ``oindex``: each axis independently takes an int, a slice, an integer array or a
  boolean mask (the outer product, as ``np.ix_``);
- ``vindex``: integer arrays, one per axis, broadcast together into points, or one boolean
  mask of the array's shape;
- ``blocks``: ints and step-1 slices counted in chunks.

Plain ``a[...]`` follows NumPy instead (:mod:`numpy_index`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrx.errors import BoundsCheckError, SelectionError
from zarrx.selection.numpy_index import Selected, numpy_transform
from zarrx.selection.transform import AxisMap, Const, Indexed, IndexTransform, Strided


def _items(selection: Any, ndim: int, where: str, mode: str) -> list[Any]:
    items = list(selection) if isinstance(selection, tuple) else [selection]
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise SelectionError(f"{where}an index can only have a single ellipsis ('...')")
    if any(i is None for i in items):
        raise SelectionError(f"{where}{mode} selections do not take None (np.newaxis)")
    n_real = sum(1 for i in items if i is not Ellipsis)
    if n_real > ndim:
        raise SelectionError(
            f"{where}too many indices for array: array is {ndim}-dimensional, "
            f"but {n_real} were indexed"
        )
    fill = [slice(None)] * (ndim - n_real)
    at = next((k for k, i in enumerate(items) if i is Ellipsis), None)
    if at is not None:
        items[at:at + 1] = fill
    else:
        items += fill
    return items


def _axis_indices(item: Any, size: int, axis: int, where: str) -> np.ndarray:
    """An ``oindex`` array or mask for one axis, as in-bounds non-negative int64."""
    arr = np.asarray(item)
    if arr.dtype == bool:
        if arr.shape != (size,):
            raise SelectionError(
                f"{where}boolean index along axis {axis} has shape {arr.shape}, "
                f"expected ({size},)"
            )
        return np.flatnonzero(arr).astype(np.int64)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise SelectionError(f"{where}unsupported index {item!r} for axis {axis}: not integers")
    if arr.ndim != 1:
        raise SelectionError(f"{where}orthogonal index for axis {axis} must be 1-d")
    return _in_bounds(arr, size, axis, where)


def _in_bounds(arr: np.ndarray, size: int, axis: int, where: str) -> np.ndarray:
    if arr.size and (int(arr.min()) < -size or int(arr.max()) >= size):
        bad = arr[(arr < -size) | (arr >= size)].reshape(-1)[0]
        raise BoundsCheckError(
            f"{where}index {int(bad)} is out of bounds for axis {axis} with size {size}"
        )
    arr = arr.astype(np.int64, copy=False)
    return np.where(arr < 0, arr + size, arr)


def orthogonal_transform(shape: tuple[int, ...], selection: Any, node: str = "") -> Selected:
    """``a.oindex[selection]``: each axis selected on its own; whether it is a scalar."""
    where = f"{node}: " if node else ""
    items = _items(selection, len(shape), where, "orthogonal")
    maps: list[AxisMap] = []
    out: list[int] = []
    scalar = not any(i is Ellipsis for i in
                     (selection if isinstance(selection, tuple) else (selection,)))
    for axis, (item, size) in enumerate(zip(items, shape)):
        if isinstance(item, slice) or _is_int(item):
            sub = numpy_transform((size,), item, node).transform
            m = sub.maps[0]
            if isinstance(m, Strided):
                maps.append(Strided(len(out), m.start, m.step))
                out.append(sub.shape[0])
                scalar = False
            else:
                maps.append(m)
            continue
        indices = _axis_indices(item, size, axis, where)
        maps.append(Indexed((len(out),), indices))
        out.append(len(indices))
        scalar = False
    transform = IndexTransform(tuple(out), tuple(maps))
    fancy = any(isinstance(m, Indexed) for m in maps)
    return Selected(transform, "scalar" if scalar else "copy" if fancy else "view")


def _is_int(item: Any) -> bool:
    return isinstance(item, int | np.integer) and not isinstance(item, bool | np.bool_)


def coordinate_transform(shape: tuple[int, ...], selection: Any, node: str = "") -> Selected:
    """``a.vindex[selection]``: integer arrays broadcast into points, or a full mask."""
    where = f"{node}: " if node else ""
    items = selection if isinstance(selection, tuple) else (selection,)
    if len(items) == 1 and np.asarray(items[0]).dtype == bool:
        mask = np.asarray(items[0])
        if mask.shape != shape:
            raise SelectionError(
                f"{where}boolean mask of shape {mask.shape} does not match the array's {shape}"
            )
        if not shape:
            return Selected(IndexTransform((int(mask),), ()), "copy")
        coords = [c.astype(np.int64) for c in np.nonzero(mask)]
        points = IndexTransform((len(coords[0]),), tuple(Indexed((0,), c) for c in coords))
        return Selected(points, "copy")
    if len(items) != len(shape):
        raise SelectionError(
            f"{where}vectorized selection needs one index per axis ({len(shape)}), "
            f"got {len(items)}"
        )
    arrays = []
    for axis, item in enumerate(items):
        arr = np.asarray(item)
        if isinstance(item, slice) or (arr.dtype.kind not in "iu" and arr.size):
            raise SelectionError(
                f"{where}vectorized selection takes integer arrays, got {item!r} for axis {axis}"
            )
        arrays.append(arr.astype(np.int64, copy=False))
    try:
        arrays = list(np.broadcast_arrays(*arrays))
    except ValueError:
        raise SelectionError(
            f"{where}index arrays could not be broadcast together: {[a.shape for a in arrays]}"
        ) from None
    block = arrays[0].shape if arrays else ()
    dims = tuple(range(len(block)))
    maps = tuple(
        Indexed(dims, _in_bounds(a, size, axis, where)) if dims
        else Const(int(_in_bounds(a, size, axis, where)))
        for axis, (a, size) in enumerate(zip(arrays, shape))
    )
    return Selected(IndexTransform(tuple(block), maps), "copy")


def block_transform(
    shape: tuple[int, ...], chunks: Sequence[Any], selection: Any, node: str = ""
) -> Selected:
    """``a.blocks[selection]``: whole chunks, indexed in units of chunks. ``chunks`` has per
    axis the size of every chunk, or the sizes of the axis's chunks (a rectilinear grid)."""
    where = f"{node}: " if node else ""
    items = _items(selection, len(shape), where, "block")
    out = []
    for axis, (item, size, chunk) in enumerate(zip(items, shape, chunks)):
        starts: Sequence[int]
        if isinstance(chunk, int | np.integer):
            nblocks = -(-size // int(chunk))
            starts = range(0, nblocks * int(chunk) + 1, int(chunk))
        else:
            nblocks = len(chunk)
            starts = [0, *itertools.accumulate(chunk)]
        if _is_int(item):
            i: int = int(item)
            if not -nblocks <= i < nblocks:
                raise BoundsCheckError(
                    f"{where}block index {i} is out of bounds for axis {axis} "
                    f"with {nblocks} blocks"
                )
            i %= nblocks
            out.append(slice(starts[i], min(starts[i + 1], size)))
        elif isinstance(item, slice):
            start, stop, step = item.indices(nblocks)
            if step != 1:
                raise SelectionError(f"{where}block selections take slices with step 1 only")
            out.append(slice(starts[start], min(starts[max(stop, start)], size)))
        else:
            raise SelectionError(f"{where}unsupported block index {item!r} for axis {axis}")
    return numpy_transform(shape, tuple(out), node)
