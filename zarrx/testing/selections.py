"""Hypothesis strategies for selections and assigned values, for differential tests in which
NumPy is the oracle: every index form NumPy accepts (and many it refuses), every kind of
value NumPy's ``__setitem__`` casts (and the ones it refuses).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st


def _int(draw: Any, n: int, wild: bool) -> int:
    if n and not (wild and draw(st.integers(0, 4)) == 0):
        return draw(st.integers(-n, n - 1))
    return draw(st.sampled_from([n, -n - 1, n + 3]))


def _slice(draw: Any, n: int) -> slice:
    bound = st.none() | st.integers(-n - 2, n + 2)
    return slice(draw(bound), draw(bound), draw(st.none() | st.integers(-4, 4).filter(bool)))


def _int_array(draw: Any, n: int, wild: bool, ndim: int | None = None) -> np.ndarray:
    if ndim is None:
        ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(0 if wild else 1, 3)) for _ in range(ndim))
    size = int(np.prod(shape))
    wild = wild and draw(st.integers(0, 7)) == 0  # one array in eight may stray
    values = [_int(draw, n, wild) for _ in range(size)]
    dtype = draw(st.sampled_from(["int64", "int32", "uint8", "intp"] if min(values, default=0)
                                 >= 0 else ["int64", "int32", "intp"]))
    if dtype == "uint8" and max(values, default=0) > 255:
        dtype = "int64"
    return np.array(values, dtype=dtype).reshape(shape)


@st.composite
def numpy_indices(draw: Any, shape: tuple[int, ...], wild: bool = True) -> Any:
    """An index for ``x[...]`` on an array of ``shape``: every form NumPy's indexing has
    (ints, slices of any step, Ellipsis, None, lists, integer arrays of any rank, boolean
    arrays over one or several axes, 0-d arrays, boolean scalars) in any mixture. With
    ``wild``, some are out of bounds, mis-shaped or of a refused type."""
    if shape and draw(st.booleans()):
        return draw(_mixed_indices(shape))
    items: list[Any] = []
    axis = 0
    length = draw(st.integers(0, len(shape) + (draw(st.integers(0, 5)) == 0 if wild else 0)))
    for _ in range(length):
        n = shape[axis] if axis < len(shape) else 0
        kinds = ["int", "slice", "slice", "array", "list", "mask", "none", "ellipsis",
                 "np-int", "0d-int", "bool-scalar"]
        if wild and draw(st.integers(0, 3)) == 0:
            kinds += ["refused"]
        if not wild and not n:  # nothing to pick on an empty axis
            kinds = ["slice", "mask", "none", "ellipsis", "bool-scalar"]
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            items.append(_int(draw, n, wild and draw(st.integers(0, 3)) == 0))
            axis += 1
        elif kind == "np-int":
            items.append(np.int64(_int(draw, n, wild)))
            axis += 1
        elif kind == "0d-int":
            items.append(np.array(_int(draw, n, wild)))
            axis += 1
        elif kind == "slice":
            items.append(_slice(draw, n))
            axis += 1
        elif kind == "array":
            items.append(_int_array(draw, n, wild, draw(st.integers(0, 3))))
            axis += 1
        elif kind == "list":
            items.append(_int_array(draw, n, wild, draw(st.integers(1, 2))).tolist())
            axis += 1
        elif kind == "mask":
            k = draw(st.integers(1, max(1, min(2, len(shape) - axis))))
            sizes = list(shape[axis:axis + k]) + [1] * max(0, axis + k - len(shape))
            if wild and draw(st.integers(0, 9)) == 0:
                sizes[0] += 1
            mask = np.array(draw(st.lists(st.booleans(), min_size=int(np.prod(sizes)),
                                          max_size=int(np.prod(sizes)))), dtype=bool)
            items.append(mask.reshape(sizes) if k > 1 or draw(st.booleans())
                         else mask.reshape(sizes).tolist())
            axis += k
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis":
            if any(i is Ellipsis for i in items) and not wild:
                continue
            items.append(Ellipsis)
        elif kind == "bool-scalar":
            items.append(draw(st.sampled_from([True, False, np.True_, np.False_,
                                               np.array(True), np.array(False)])))
        else:
            items.append(draw(st.sampled_from(
                [1.0, np.float64(2), np.array([0.0]), "a", [0, 1.5]]
            )))
            axis += 1
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@st.composite
def _mixed_indices(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """Index arrays mixed with slices and integers, one item per axis (the forms where
    the placement of the broadcast dimensions matters), with a None or an Ellipsis."""
    items: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "array", "int", "mask"] if n else ["slice", "mask"]))
        if kind == "slice":
            items.append(_slice(draw, n))
        elif kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "mask":
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                                  dtype=bool))
        else:
            shape_ = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 2))))
            items.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=int(
                np.prod(shape_)), max_size=int(np.prod(shape_))))).reshape(shape_))
    extra = draw(st.sampled_from(["", "none", "ellipsis"]))
    at = draw(st.integers(0, len(items)))
    if extra == "none":
        items.insert(at, None)
    elif extra == "ellipsis":
        cut = draw(st.integers(0, len(items)))
        items = [*items[:at], Ellipsis, *items[at + cut:]] if at + cut <= len(items) else items
    return tuple(items)


@st.composite
def orthogonal_indices(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """An ``oindex`` selection: per axis an int, a slice, an integer list/array or a
    boolean mask."""
    items: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "array", "mask"] if n
                                    else ["slice", "array", "mask"]))
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            items.append(_slice(draw, n))
        elif kind == "array":
            items.append(np.array(draw(st.lists(st.integers(-n, n - 1), max_size=5)) if n
                                  else [], dtype=np.int64))
        else:
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                                  dtype=bool))
    return tuple(items)


@st.composite
def assigned_values(draw: Any, shape: tuple[int, ...], dtype: np.dtype, wild: bool = True) -> Any:
    """A value for ``x[idx] = value`` where ``x[idx]`` has ``shape``: scalars (Python and
    NumPy, some out of range or NaN/inf), arrays and lists that broadcast (fewer
    dimensions, ones, an extra leading one), other dtypes; with ``wild``, also shapes
    that do not broadcast."""
    dtype = np.dtype(dtype)
    kind = draw(st.sampled_from(["scalar", "array", "array", "list"]))
    if kind == "scalar":
        choices: list[Any] = [0, 1, -1, 7, 2.5, True]
        if wild:
            choices += [2**40, -(2**40), float("nan"), float("inf"), np.float64("nan"),
                        np.int64(2**40), np.uint8(200), 1 + 2j]
        return draw(st.sampled_from(choices))
    vshape = list(shape)
    cut = draw(st.integers(0, len(vshape)))
    vshape = vshape[cut:]
    vshape = [1 if draw(st.integers(0, 4)) == 0 else n for n in vshape]
    if draw(st.integers(0, 5)) == 0:
        vshape = [1, *vshape]
    if wild and vshape and draw(st.integers(0, 9)) == 0:
        vshape[-1] += 1
    vdtype = draw(st.sampled_from([dtype, dtype, np.dtype("float64"), np.dtype("int64")]))
    size = int(np.prod(vshape))
    values = np.arange(1, size + 1, dtype=np.float64) * draw(st.sampled_from([1, -3, 0.5]))
    if wild and vdtype.kind == "f" and size and draw(st.integers(0, 4)) == 0:
        values[draw(st.integers(0, size - 1))] = np.nan
    with np.errstate(all="ignore"):
        arr = values.astype(vdtype).reshape(vshape)
    return arr.tolist() if kind == "list" else arr


def outer_selection(x: np.ndarray, sel: tuple[Any, ...]) -> np.ndarray:
    """NumPy's answer to ``oindex[sel]``: the outer product of the axes' selections, taken
    one axis at a time (an int drops its axis)."""
    out = x
    axis = 0
    for item in sel:
        index: list[Any] = [slice(None)] * out.ndim
        index[axis] = item
        out = out[tuple(index)]
        if not isinstance(item, int | np.integer):
            axis += 1
    return out
