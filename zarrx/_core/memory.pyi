"""Result arrays whose memory starts on a cache-line or huge-page boundary.

What the function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

from typing import Any

import numpy as np

def empty_aligned(shape: Any, dtype: Any) -> np.ndarray:
    """np.empty(shape, dtype), its data on a 2 MiB (>= 2 MiB) or 64-byte boundary."""
