"""Part of a Blosc 1 frame decoded: only the bytes of its blocks a span needs (nogil).

What each function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

from typing_extensions import Buffer

def decode_span(
    frame: Buffer, start: int, stop: int, out: Buffer, lz4_partial: int = 0
) -> bool:
    """Write at least decoded bytes [start, stop) of the Blosc 1 frame into out (its whole
    decoded size) and return True, or return False when this kernel cannot (the caller
    decodes the whole frame). lz4_partial: the address of LZ4_decompress_safe_partial
    (LZ4 >= 1.9.0), or 0."""
