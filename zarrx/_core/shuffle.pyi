"""The gather of a strided chunk fused with Blosc's byte shuffle (nogil), and a header patch.

What each function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

import numpy as np
from typing_extensions import Buffer

def shuffle_strided(
    src: np.ndarray, dst: np.ndarray | Buffer, blocksize: int, swap: int = 0
) -> None:
    """Write src's C-order image, byte-shuffled per blocksize-byte block, into dst."""

def patch_sole(frame: bytes, at: int, bits: int, unless: int = 0) -> bytes | None:
    """frame with bits or'ed into byte at (in place when only the caller's call holds
    it), or None when byte at has any of the bits of unless."""

def _refs_seen(frame: bytes, at: int, bits: int, unless: int = 0) -> int:
    """The reference count of frame inside a call shaped like patch_sole's."""

def _use_sse2(on: bool) -> bool:
    """Testing hook: use the SSE2 loops if on and available; returns whether used."""
