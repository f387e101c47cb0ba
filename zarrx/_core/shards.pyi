"""A shard's inner chunks placed into an output region in one call (nogil).

What the function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

import numpy as np
from typing_extensions import Buffer

def place_chunks(
    shard: Buffer,
    index: np.ndarray,
    chunk_shape: tuple[int, ...],
    dst: np.ndarray,
    value: Buffer,
    swap: int = 0,
) -> None:
    """Copy each stored inner chunk of shard meeting dst to its place; fill the missing."""
