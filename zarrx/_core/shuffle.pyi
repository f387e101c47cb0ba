"""The gather of a strided chunk fused with Blosc's byte shuffle (nogil), and a header patch.

What each function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

import numpy as np
from typing_extensions import Buffer

def shuffle_strided(
    src: np.ndarray, dst: np.ndarray | Buffer, blocksize: int, swap: int = 0
) -> None:
    """Write src's C-order image, byte-shuffled per blocksize-byte block, into dst."""

def shuffle_compress_many(
    chunks: list[np.ndarray],
    scratch: np.ndarray | Buffer,
    blocksize: int,
    swap: int,
    compress_ctx: int,
    clevel: int,
    cname: bytes,
    typesize: int,
    forced: int,
    bits: int,
    unless: int,
) -> list[bytes | None]:
    """For each chunk (all with images of scratch's size): shuffle_strided(chunk, scratch,
    blocksize, swap), then c-blosc 1's blosc_compress_ctx (at address compress_ctx) of
    scratch with the shuffle off and block size forced, one internal thread, into a new
    frame whose flags byte gets bits; all chunks in one stretch without the GIL. A frame
    is None when its flags byte has any of the bits of unless (a plain copy, ...) or the
    images are shorter than a header."""

def patch_sole(frame: bytes, at: int, bits: int, unless: int = 0) -> bytes | None:
    """frame with bits or'ed into byte at (in place when only the caller's call holds
    it), or None when byte at has any of the bits of unless."""

def _refs_seen(frame: bytes, at: int, bits: int, unless: int = 0) -> int:
    """The reference count of frame inside a call shaped like patch_sole's."""

def _use_sse2(on: bool) -> bool:
    """Testing hook: use the SSE2 loops if on and available; returns whether used."""
