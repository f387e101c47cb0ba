"""Chunk-index math for one axis of a regular chunk grid (Cython, GIL released).

What each function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

import numpy as np
import numpy.typing as npt

_I64 = npt.NDArray[np.int64]

def slice_chunks(
    start: int, step: int, count: int, chunk_size: int, dim_len: int
) -> tuple[_I64, _I64, _I64, _I64, _I64]:
    """Per touched chunk: (chunk_index, chunk_start, chunk_count, out_start, complete)."""

def points_chunks(indices: npt.ArrayLike, chunk_size: int) -> tuple[_I64, _I64, _I64, _I64]:
    """Group point indices by chunk, stably: (order, chunk_index, offsets, in_chunk)."""
