"""Part of a Blosc 1 frame decoded: only the bytes of its blocks a span needs (nogil).

What each function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

import numpy as np
from typing_extensions import Buffer

def decode_span(
    frame: Buffer, start: int, stop: int, out: np.ndarray | Buffer, lz4_partial: int = 0,
    lz4_whole: int = 0, work: np.ndarray | Buffer | None = None,
    body: Buffer | None = None, at: int = 0,
) -> bool:
    """Write at least decoded bytes [start, stop) of the Blosc 1 frame into out (its whole
    decoded size) and return True, or return False when this kernel cannot (the caller
    decodes the whole frame). lz4_partial: the address of LZ4_decompress_safe_partial
    (LZ4 >= 1.9.0), or 0; lz4_whole: that of LZ4_decompress_safe, or 0 (then every
    stream is decoded in part); work: a writable byte buffer of at least the frame's
    block size to use as scratch (else one is allocated); body: the frame's bytes from
    offset at on, where its blocks are read (frame then needs to hold only the header
    and block starts), else frame itself."""
