"""An array as the engine sees it: a store, where its chunks live, and its metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrx._core.assemble import all_equal, copy_strided, fill
from zarrx.abc.codec import ChunkSpec
from zarrx.abc.store import Store
from zarrx.data_types.core import fill_bytes
from zarrx.data_types.variable import is_variable_length
from zarrx.metadata.model import ArrayMetadata


def swap_unit(dtype: np.dtype) -> int:
    """Bytes per unit to reverse when ``dtype`` is not native (complex: each half)."""
    if dtype.isnative or dtype.itemsize == 1:
        return 0
    return dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize


@dataclass(frozen=True)
class ChunkStore:
    """Reads and writes the chunks of one array, format-independently."""

    store: Store
    data_prefix: str  # e.g. "path/to/array/" (v3), "data/root/path/" (draft)
    meta: ArrayMetadata
    node: str  # for messages
    fill: bytes = field(init=False)
    #: Elements are Python objects or NumPy strings: copied by NumPy, not as bytes.
    variable: bool = field(init=False)

    def __post_init__(self) -> None:
        variable = is_variable_length(self.meta.dtype)
        object.__setattr__(self, "variable", variable)
        object.__setattr__(
            self, "fill", b"" if variable else fill_bytes(self.meta.dtype, self.meta.fill_value)
        )

    # -- element operations: the Cython kernels for fixed-size types, NumPy otherwise ------
    def copy(self, src: np.ndarray, dst: np.ndarray) -> None:
        if self.variable or (src.dtype.fields is not None and src.dtype != dst.dtype):
            dst[...] = src  # NumPy converts records field by field
        else:
            copy_strided(src, dst, swap_unit(src.dtype))

    def fill_with_fill_value(self, dst: np.ndarray) -> None:
        if self.variable:
            dst[...] = self.meta.fill_value
        else:
            fill(dst, self.fill)

    def is_fill(self, chunk: np.ndarray) -> bool:
        if self.variable:
            return bool(np.all(chunk == self.meta.fill_value))
        return all_equal(chunk, self.fill)

    def key(self, coords: tuple[int, ...]) -> str:
        return self.data_prefix + self.meta.chunk_key(coords)

    def spec(self, coords: tuple[int, ...]) -> ChunkSpec:
        grid: Any = self.meta.chunk_grid
        return ChunkSpec(grid.chunk_shape_at(coords), self.meta.dtype, self.meta.fill_value)

    def partial_codec(self, coords: tuple[int, ...]) -> Any:
        """The array→bytes codec when it can decode part of a chunk from byte ranges
        (sharding) and nothing else in the chain needs the whole value; else ``None``."""
        chain = self.meta.codecs.prepare(self.spec(coords))
        if chain.array_array or chain.bytes_bytes or not chain.array_bytes.partial_decode:
            return None
        return chain.array_bytes

    def fetch(self, key: str) -> Any:
        """A function reading byte ranges of ``key`` in one batched request."""

        def fetch_ranges(ranges: Any) -> list[bytes | None]:
            return self.store.get_many([(key, r) for r in ranges])

        return fetch_ranges
