"""Byte-level assembly kernels: strided copy with byte swapping, fill, fill test (nogil).

What each function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

import numpy as np
from typing_extensions import Buffer

def copy_strided(
    src: np.ndarray, dst: np.ndarray, swap: int = 0, stream: bool = False
) -> None:
    """Copy src into dst (same shape and itemsize), reversing each swap-byte unit if swap;
    stream: write contiguous rows with streaming (non-temporal) stores."""

def fill(dst: np.ndarray, value: Buffer) -> None:
    """Set every element of dst to the itemsize-byte pattern value."""

def all_equal(arr: np.ndarray, value: Buffer) -> bool:
    """True iff every element of arr has exactly the bytes of value (True when empty)."""

def _use_avx2(on: bool) -> bool:
    """Testing hook: use the AVX2 byte-swap loops if on and available; returns if used."""
