"""A shard's inner chunks placed into an output region in one call (nogil).

What the function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

from collections.abc import Sequence

import numpy as np
from typing_extensions import Buffer

def place_chunks(
    shard: Buffer,
    index: np.ndarray,
    chunk_shape: tuple[int, ...],
    dst: np.ndarray,
    value: Buffer,
    swap: int = 0,
    start: Sequence[int] | None = None,
    step: Sequence[int] | None = None,
) -> None:
    """Put the shard's elements start + k*step (k < dst.shape) into dst; fill the missing."""
