"""Many chunks decoded and placed, or laid out and encoded, in one call without the GIL.

What each function takes, checks, trusts and guarantees: ``zarrx/_core/README.md``.
"""

from collections.abc import Sequence

import numpy as np
from typing_extensions import Buffer

def decode_place(
    sources: list[Buffer],
    which: np.ndarray | Sequence[int],
    offsets: np.ndarray | Sequence[int],
    sizes: np.ndarray | Sequence[int],
    starts: np.ndarray | Sequence[Sequence[int]],
    steps: np.ndarray | Sequence[Sequence[int]],
    counts: np.ndarray | Sequence[Sequence[int]],
    outs: np.ndarray | Sequence[Sequence[int]],
    out: np.ndarray,
    fill: Buffer,
    chunk_shape: Sequence[int],
    swap: int,
    stream: bool,
    decoders: Sequence[int],
    contexts: Sequence[int],
    releases: Sequence[int],
    capacities: Sequence[int],
) -> tuple[int, int, int] | None:
    """Decode chunk i (sources[which[i]][offsets[i]:offsets[i] + sizes[i]]; absent when
    sizes[i] < 0) through the steps in reverse, and copy its elements starts[i, d] +
    k * steps[i, d] (k < counts[i, d]) to out's outs[i, d] + k, each swap-byte unit
    reversed; absent chunks are filled. None when every chunk is placed, else (i, step,
    code) of the first chunk that could not be decoded (step -1: the decoded size,
    code)."""

def encode_chunks(
    chunks: list[np.ndarray],
    dtype: np.dtype,
    shape: Sequence[int],
    swap: int,
    shuffle: int,
    encoders: Sequence[int],
    contexts: Sequence[int],
    releases: Sequence[int],
    capacities: Sequence[int],
) -> tuple[list[bytes | None], int, int, int]:
    """Each chunk (an array of shape and dtype; anything else is left: None) laid out as
    its C-order image (swap-byte units reversed; byte-shuffled in blocks of shuffle bytes
    when set) and run through the steps into a new bytes object. Returns the results
    (None where left, or where a step declined), the index of the first chunk a step
    failed on (len(chunks): none; results from it on are None), that step and its code."""
