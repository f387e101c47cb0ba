"""What every format's metadata offers the engine, and checks shared by all formats.

Each format module (``v3``, later ``v2`` and ``v3_draft``) parses its documents into frozen
objects that satisfy :class:`ArrayMetadata` / :class:`GroupMetadata`; nothing below the
metadata layer sees raw JSON or knows which format it serves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn, Protocol

import numpy as np

from zarrx.codecs.pipeline import CodecPipeline
from zarrx.errors import InvalidKeyError, MetadataError

MAX_INT64 = 2**63 - 1


class ArrayMetadata(Protocol):
    zarr_format: Any
    shape: tuple[int, ...]
    dtype: np.dtype  # native byte order
    fill_value: Any  # NumPy scalar of dtype
    chunk_grid: Any
    codecs: CodecPipeline
    attributes: dict[str, Any]
    dimension_names: tuple[str | None, ...] | None

    def chunk_key(self, coords: tuple[int, ...]) -> str: ...
    def to_json(self) -> dict[str, Any]: ...
    def with_attributes(self, attributes: dict[str, Any]) -> ArrayMetadata: ...
    def with_shape(self, shape: tuple[int, ...]) -> ArrayMetadata: ...


class GroupMetadata(Protocol):
    zarr_format: Any
    attributes: dict[str, Any]

    def to_json(self) -> dict[str, Any]: ...
    def with_attributes(self, attributes: dict[str, Any]) -> GroupMetadata: ...


def parse_shape(value: Any, *, where: str, field: str = "shape") -> tuple[int, ...]:
    """A list of non-negative integers whose product fits in int64."""
    if not isinstance(value, list | tuple) or not all(
        isinstance(s, int) and not isinstance(s, bool) for s in value
    ):
        raise MetadataError(f"{where}: {field} must be a list of integers, got {value!r}")
    if any(s < 0 for s in value):
        raise MetadataError(f"{where}: {field} must not be negative, got {list(value)}")
    check_product(value, where=where, field=field)
    return tuple(value)


def check_product(shape: Any, *, where: str, field: str, itemsize: int = 1) -> int:
    """The number of elements (times ``itemsize``), refusing sizes that overflow int64."""
    n = itemsize
    for s in shape:
        n *= s
    if n > MAX_INT64:
        raise MetadataError(
            f"{where}: {field} {list(shape)} holds {n} elements"
            f"{' x ' + str(itemsize) + ' bytes' if itemsize > 1 else ''}, more than 2**63-1"
        )
    return n


def parse_attributes(value: Any, *, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MetadataError(f"{where}: attributes must be an object, got {type(value).__name__}")
    return value


def parse_dimension_names(value: Any, ndim: int, *, where: str) -> tuple[str | None, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(
        v is None or isinstance(v, str) for v in value
    ):
        raise MetadataError(
            f"{where}: dimension_names must be a list of strings or nulls, got {value!r}"
        )
    if len(value) != ndim:
        raise MetadataError(
            f"{where}: dimension_names has {len(value)} entries for an array of rank {ndim}"
        )
    return tuple(value)


#: What makes one node unreadable without affecting its siblings: refused metadata, or a
#: key whose name is not a valid node name. Store failures (``StoreError``) still stop.
NODE_ERRORS = (MetadataError, InvalidKeyError)


@dataclass(frozen=True, eq=False)
class Unreadable:
    """A node found by a listing (or in consolidated metadata) that cannot be opened.

    Listings skip it with a :class:`~zarrx.errors.SkippedNodeWarning`, so its siblings
    list and open; opening it by name raises :attr:`error`, the error reading it alone
    would give (ZEP 10: an unknown must-understand extension stops that node only)."""

    error: Exception
    node_type: ClassVar[None] = None

    def reraise(self) -> NoReturn:
        raise self.error.with_traceback(None)


def parse_tolerant(tolerant: bool, parse: Callable[..., Any], /, *args: Any, **kw: Any) -> Any:
    """``parse(*args, **kw)``; when ``tolerant``, a refused node becomes an
    :class:`Unreadable` holding the error."""
    try:
        return parse(*args, **kw)
    except NODE_ERRORS as e:
        if not tolerant:
            raise
        return Unreadable(e)
