"""The gather of a strided chunk fused with Blosc's byte shuffle (nogil).

What each function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

import numpy as np
from typing_extensions import Buffer

def shuffle_strided(
    src: np.ndarray, dst: np.ndarray | Buffer, blocksize: int, swap: int = 0
) -> None:
    """Write src's C-order image, byte-shuffled per blocksize-byte block, into dst."""

def _use_sse2(on: bool) -> bool:
    """Testing hook: use the SSE2 loops if on and available; returns whether used."""
