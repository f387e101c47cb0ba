"""Chunk keys for a batch of grid coordinates, built in C.

What it takes, checks and guarantees: ``zarrx/_core/README.md``.
"""

import numpy.typing as npt

def chunk_keys(head: str, separator: str, coords: npt.ArrayLike) -> list[str]:
    """``head + separator.join(map(str, row))`` for each row of the 2-d ``coords``."""
