"""NumPy's indexing rules, written once: any index ``x[idx]`` accepts, as a transform.

The rules (NumPy's "Indexing on ndarrays"): integers, slices, ``Ellipsis`` and ``None`` are
basic indices. Integer and boolean arrays (lists too; a boolean array over ``k`` axes is
its ``nonzero()`` — ``k`` integer arrays; a boolean scalar is an array of one or no
element that indexes no axis) are advanced indices: they broadcast together into one block
of result dimensions, and once there is one, integers are advanced indices too. The block
takes the place of the first advanced index when all of them are next to each other in the
index, and goes first otherwise. A 0-d integer array is an integer. What NumPy refuses is
refused with the same builtin class (``IndexError`` for indices, ``TypeError`` for slice
bounds that are not integers, ``ValueError`` for a zero step).
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from zarrx.errors import BoundsCheckError, SelectionError, SelectionTypeError, SelectionValueError
from zarrx.selection.transform import Const, Indexed, IndexTransform, Strided

_INVALID = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)


class Selected(NamedTuple):
    """A parsed index: its transform, and which of NumPy's paths it takes (they differ in
    what they return and in what values they take): ``"scalar"`` (integers naming one
    element: a scalar is returned, one element set), ``"view"`` (basic indexing),
    ``"copy"`` (advanced indexing) or ``"mask"`` (one boolean array over every axis)."""

    transform: IndexTransform
    mode: str

    @property
    def scalar(self) -> bool:
        return self.mode == "scalar"

    @property
    def shape(self) -> tuple[int, ...]:
        return self.transform.shape


def numpy_transform(shape: tuple[int, ...], index: Any, node: str = "") -> Selected:
    """The transform of ``x[index]`` for ``x`` of ``shape``, as NumPy indexes."""
    return parse_index(shape, index, node).resolve()


def basic_transform(shape: tuple[int, ...], index: Any) -> Selected | None:
    """:func:`numpy_transform` of the commonest small index — one integer or slice per
    axis (a tuple, or one item for a 1-d array) — built without the general parse; the
    same :class:`Selected` it returns. ``None`` for any other index, or for one that is
    out of bounds or malformed: the general parse then reads it or raises NumPy's error."""
    items = index if type(index) is tuple else (index,)
    ndim = len(shape)
    if len(items) != ndim or not ndim:
        return None
    maps: list[Any] = []
    counts: list[int] = []
    for axis, item in enumerate(items):
        kind = type(item)
        size = shape[axis]
        if kind is slice:
            start, stop, step = item.start, item.stop, item.step
            if not (_plain_int(start) and _plain_int(stop) and _plain_int(step)) or step == 0:
                return None
            start, stop, step = item.indices(size)
            maps.append(Strided(len(counts), start, step))
            counts.append(len(range(start, stop, step)))
        elif kind is int or isinstance(item, np.integer):
            i = int(item)
            if not -size <= i < size:
                return None
            maps.append(Const(i + size if i < 0 else i))
        else:
            return None
    return Selected(IndexTransform(tuple(counts), tuple(maps)), "view" if counts else "scalar")


def _plain_int(value: Any) -> bool:
    """``None`` or a Python integer (not a bool): what a fast slice may hold."""
    return value is None or type(value) is int


class ParsedIndex:
    """An index whose structure is checked (types, Ellipsis, integer bounds, mask shapes)
    but whose index arrays are not yet broadcast together or checked against the array's
    bounds: NumPy does both only after it has converted an assigned value, so a bad value
    is reported first. :attr:`shape` broadcasts them, :meth:`resolve` checks them."""

    __slots__ = ("_array_shape", "_block_at", "_dims", "_entries", "_maps", "_shape",
                 "_where", "mode")

    def __init__(
        self,
        array_shape: tuple[int, ...],
        maps: list[Any],
        dims: list[tuple[int, int | None, int, int]],
        entries: list[tuple[int | None, np.ndarray]],
        block_at: int,
        mode: str,
        where: str,
    ) -> None:
        self._array_shape = array_shape
        self._maps = maps
        self._dims = dims  # basic result dimensions: (size, array axis or None, start, step)
        self._entries = entries  # (array axis or None, index array)
        self._block_at = block_at  # where the broadcast block goes among ``dims``
        self._shape: tuple[int, ...] | None = None
        self.mode = mode
        self._where = where

    def _block(self) -> tuple[int, ...]:
        try:
            return np.broadcast_shapes(*(a.shape for _, a in self._entries))
        except ValueError:
            shapes = " ".join(str(a.shape) for _, a in self._entries)
            raise SelectionError(
                f"{self._where}shape mismatch: indexing arrays could not be broadcast "
                f"together with shapes {shapes}"
            ) from None

    @property
    def shape(self) -> tuple[int, ...]:
        """NumPy's result shape (``IndexError`` if the index arrays do not broadcast)."""
        if self._shape is None:
            sizes = [size for size, *_ in self._dims]
            if self._entries:
                sizes[self._block_at:self._block_at] = self._block()
            self._shape = tuple(sizes)
        return self._shape

    def resolve(self) -> Selected:
        """The selection, once its index arrays are checked (``IndexError`` naming the
        axis for an index out of bounds). NumPy checks them only where the broadcast
        selects something."""
        shape = self.shape
        maps = list(self._maps)
        nblock = len(shape) - len(self._dims)
        for i, (_, axis, start, step) in enumerate(self._dims):
            if axis is not None:
                maps[axis] = Strided(i + nblock if i >= self._block_at else i, start, step)
        block_dims = tuple(range(self._block_at, self._block_at + nblock))
        block = shape[self._block_at:self._block_at + nblock]
        for axis, arr in self._entries:
            if axis is not None:
                checked = (np.zeros((), np.int64) if 0 in block
                           else _check_array(arr, self._array_shape[axis], axis, self._where))
                maps[axis] = Indexed(block_dims, np.broadcast_to(checked, block))
        return Selected(IndexTransform(shape, tuple(maps)), self.mode)


def parse_index(shape: tuple[int, ...], index: Any, node: str = "") -> ParsedIndex:
    """``index`` parsed for an array of ``shape`` (see :class:`ParsedIndex`)."""
    where = f"{node}: " if node else ""
    items = index if isinstance(index, tuple) else (index,)
    parsed = [_classify(item, where) for item in items]
    consumed = sum(_consumes(kind, value) for kind, value in parsed)
    n_ellipsis = sum(1 for kind, _ in parsed if kind == "...")
    if n_ellipsis > 1:
        raise SelectionError(f"{where}an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise SelectionError(
            f"{where}too many indices for array: array is {len(shape)}-dimensional, "
            f"but {consumed} were indexed"
        )
    fill: list[tuple[str, Any]] = [("slice", slice(None))] * (len(shape) - consumed)
    if n_ellipsis:
        at = next(i for i, (kind, _) in enumerate(parsed) if kind == "...")
        # An Ellipsis that stands for no axis still separates advanced indices.
        parsed[at:at + 1] = fill or [("gap", None)]
    else:
        parsed += fill
    advanced = any(kind in ("array", "bool") for kind, _ in parsed)

    # Walk the index: array axes consumed, result dimensions produced, advanced entries.
    maps: list[Any] = [None] * len(shape)
    dims: list[tuple[int, int | None, int, int]] = []  # (size, axis or None, start, step)
    entries: list[tuple[int | None, np.ndarray]] = []  # (array axis, index array)
    positions: list[int] = []
    axis = 0
    for position, (kind, value) in enumerate(parsed):
        if kind == "gap":
            continue
        if kind == "new":
            dims.append((1, None, 0, 1))
        elif kind == "slice":
            size = shape[axis]
            start, stop, step = _slice_indices(value, size, axis, where)
            count = len(range(start, stop, step))
            dims.append((count, axis, start, step))
            axis += 1
        elif kind == "int":
            # Among advanced indices an integer still fixes its axis (it broadcasts as a
            # 0-d array); it only counts for where the block of dimensions goes.
            maps[axis] = Const(_check_int(value, shape[axis], axis, where))
            if advanced:
                positions.append(position)
            axis += 1
        elif kind == "array":
            entries.append((axis, value))
            positions.append(position)
            axis += 1
        else:  # a boolean array over value.ndim axes
            positions.append(position)
            if value.ndim == 0:
                entries.append((None, np.zeros(1 if value else 0, dtype=np.int64)))
                continue
            _check_mask(value, shape[axis:axis + value.ndim], axis, where)
            for k, coords in enumerate(np.nonzero(value)):
                entries.append((axis + k, coords.astype(np.int64, copy=False)))
            axis += value.ndim

    block_at = 0
    if positions:
        together = positions[-1] - positions[0] == len(positions) - 1
        before = sum(1 for p in range(positions[0]) if parsed[p][0] in ("slice", "new"))
        block_at = before if together else 0
    if not advanced:
        mode = "view" if n_ellipsis or dims else "scalar"
    else:
        whole_mask = len(items) == 1 and parsed[0][0] == "bool" and parsed[0][1].ndim == len(shape)
        mode = "mask" if whole_mask else "copy"
    return ParsedIndex(shape, maps, dims, entries, block_at, mode, where)


def _consumes(kind: str, value: Any) -> int:
    if kind in ("int", "slice", "array"):
        return 1
    return value.ndim if kind == "bool" else 0


def _classify(item: Any, where: str) -> tuple[str, Any]:
    """``(kind, value)``: ``new``, ``...``, ``slice``, ``int``, ``array`` (integers) or
    ``bool`` (a boolean array, possibly 0-d)."""
    if item is None:
        return "new", None
    if item is Ellipsis:
        return "...", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, bool | np.bool_):
        return "bool", np.asarray(item)
    if not isinstance(item, np.ndarray):
        if isinstance(item, int | np.integer):
            return "int", int(item)
        if isinstance(item, str | bytes | float | complex | np.inexact | dict | set):
            raise SelectionError(f"{where}{_INVALID}")
        try:
            return "int", operator.index(item)
        except TypeError:
            pass
        try:
            arr = np.asarray(item)
        except (TypeError, ValueError):
            raise SelectionError(f"{where}{_INVALID}") from None
        if arr.size == 0 and arr.dtype.kind == "f":  # an empty sequence: NumPy's intp
            arr = arr.astype(np.intp)
        if arr.dtype.kind not in "iub":
            raise SelectionError(f"{where}{_INVALID}")
        item = arr
    if item.dtype.kind == "b":
        return "bool", item
    if item.dtype.kind not in "iu":
        raise SelectionError(
            f"{where}arrays used as indices must be of integer (or boolean) type"
        )
    if item.ndim == 0:
        return "int", int(item)
    return "array", item


def _slice_indices(item: slice, size: int, axis: int, where: str) -> tuple[int, int, int]:
    try:
        return item.indices(size)
    except TypeError:
        raise SelectionTypeError(
            f"{where}slice indices must be integers or None or have an __index__ method "
            f"(axis {axis}: {item!r})"
        ) from None
    except ValueError as e:
        raise SelectionValueError(f"{where}{e} (axis {axis}: {item!r})") from None


def _check_int(i: int, size: int, axis: int, where: str) -> int:
    if not -size <= i < size:
        raise BoundsCheckError(
            f"{where}index {i} is out of bounds for axis {axis} with size {size}"
        )
    return i + size if i < 0 else i


def _check_array(arr: np.ndarray, size: int, axis: int, where: str) -> np.ndarray:
    """Integer indices made non-negative int64, or a bounds error naming the axis."""
    if arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if lo < -size or hi >= size:
            bad = lo if lo < -size else hi
            raise BoundsCheckError(
                f"{where}index {bad} is out of bounds for axis {axis} with size {size}"
            )
        arr = arr.astype(np.int64, copy=False)
        if lo < 0:
            arr = np.where(arr < 0, arr + size, arr)
        return arr
    return arr.astype(np.int64, copy=False)


def _check_mask(mask: np.ndarray, sizes: tuple[int, ...], axis: int, where: str) -> None:
    empty = not mask.size  # NumPy lets an empty mask's axes of length 0 match any size
    for k, (n, m) in enumerate(zip(sizes, mask.shape)):
        if n != m and not (empty and m == 0):
            raise SelectionError(
                f"{where}boolean index did not match indexed array along axis {axis + k}; "
                f"size of axis is {n} but size of corresponding boolean axis is {m}"
            )
