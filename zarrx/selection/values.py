"""The value of an assignment ``x[idx] = value``, as NumPy's ``__setitem__`` sees it.

NumPy casts the value to the array's dtype first — a Python scalar or sequence it cannot
represent raises (``2**40`` into int32: ``OverflowError``; NaN into an integer type:
``ValueError``), an array casts unsafely — and then broadcasts it to the selection's shape,
dropping leading dimensions of length one the selection does not have (an index of
integers only sets one element, and takes a value only if it is one). Casting through a
NumPy array of the target dtype reproduces those rules, errors and warnings exactly, and
happens before anything is written.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from zarrx.errors import SelectionTypeError, ShapeError


class _Target(Protocol):
    mode: str

    @property
    def shape(self) -> tuple[int, ...]: ...


def assigned_value(value: Any, dtype: np.dtype, target: _Target, node: str = "") -> np.ndarray:
    """``value`` cast to ``dtype`` and broadcast (read-only view) to ``target.shape``, for
    a selection taking NumPy's path ``target.mode`` (see :class:`~zarrx.selection.
    numpy_index.Selected`). As in NumPy, the value is converted before the selection's
    shape is known (``target.shape`` may raise: index arrays that do not broadcast)."""
    where = f"{node}: " if node else ""
    mode = target.mode
    if mode == "scalar":  # one element: only what converts to one (no 1-element array)
        element = np.empty((), dtype=dtype)
        element[()] = value
        return element
    if isinstance(value, np.generic) and mode != "view":
        value = np.asarray(value)  # advanced paths cast NumPy scalars like arrays
    elif hasattr(value, "__array__") and not isinstance(value, np.ndarray | np.generic):
        value = np.asarray(value)  # array-likes (a zarrx Array, dask, ...) read once
    if isinstance(value, np.ndarray):
        if value.dtype == dtype:
            data = value
        else:
            data = np.empty(value.shape, dtype=dtype)
            data[...] = value
    elif dtype.fields is not None:  # records: a tuple is one element, not a sequence
        data = np.asarray(value, dtype=dtype)
    else:
        if mode == "view" and np.ndim(value) > len(target.shape):
            raise ShapeError(
                f"{where}setting an array element with a sequence: the value has "
                f"{np.ndim(value)} dimensions, the selection {len(target.shape)}"
            )
        data = np.empty(np.shape(value), dtype=dtype)
        data[...] = value
    shape = target.shape
    if mode == "mask":
        _check_mask_value(data, shape[0], where)
    while data.ndim > len(shape) and data.shape[0] == 1:
        data = data[0, ...]
    try:
        return np.broadcast_to(data, shape)
    except ValueError:
        raise ShapeError(
            f"{where}could not broadcast input array from shape {data.shape} into shape {shape}"
        ) from None


def _check_mask_value(data: np.ndarray, selected: int, where: str) -> None:
    """NumPy's rules for ``x[mask] = value`` with one mask over every axis."""
    if data.ndim > 1:
        raise SelectionTypeError(
            f"{where}boolean array indexing assignment requires a 0 or 1-dimensional "
            f"input, input has {data.ndim} dimensions"
        )
    if data.ndim == 1 and data.shape[0] not in (1, selected):
        raise ShapeError(
            f"{where}boolean array indexing assignment cannot assign {data.shape[0]} "
            f"input values to the {selected} output values where the mask is true"
        )
