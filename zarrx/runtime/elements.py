"""Copying, filling and comparing elements: the Cython kernels for fixed-size types, NumPy
for variable-length elements (Python objects, NumPy strings) and for records whose fields
change byte order (NumPy converts them field by field)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx._core.assemble import all_equal, copy_strided, fill
from zarrx.data_types.core import fill_bytes
from zarrx.data_types.variable import is_variable_length


def swap_unit(dtype: np.dtype) -> int:
    """Bytes per unit to reverse when ``dtype`` is not native (complex: each half; UTF-32
    strings: each code point)."""
    if dtype.isnative or dtype.itemsize == 1:
        return 0
    if dtype.kind == "U":  # UTF-32 code points
        return 4
    return dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize


@dataclass(frozen=True)
class Elements:
    """The element operations for one dtype and fill value."""

    fill_value: Any
    variable: bool
    fill: bytes  # the fill value's native bytes (empty for variable-length elements)

    @classmethod
    def of(cls, dtype: np.dtype, fill_value: Any) -> Elements:
        variable = is_variable_length(dtype)
        return cls(fill_value, variable, b"" if variable else fill_bytes(dtype, fill_value))

    def copy(self, src: np.ndarray, dst: np.ndarray, stream: bool = False) -> None:
        """``dst[...] = src``; ``stream``: ``dst`` is not read again soon (a large result):
        write it around the cache (:func:`zarrx._core.assemble.copy_strided`)."""
        if self.variable or (src.dtype.fields is not None and src.dtype != dst.dtype):
            dst[...] = src
        else:
            copy_strided(src, dst, swap_unit(src.dtype), stream)

    def fill_region(self, dst: np.ndarray) -> None:
        if self.variable:
            dst[...] = self.fill_value
        else:
            fill(dst, self.fill)

    def is_fill(self, chunk: np.ndarray) -> bool:
        if self.variable:
            return bool(np.all(chunk == self.fill_value))
        return all_equal(chunk, self.fill)
