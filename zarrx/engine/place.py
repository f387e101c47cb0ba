"""One stored chunk's share of a selection, put into the output buffer.

The whole chunk in its stored layout is decompressed straight into the output; any other
share is decoded into a per-thread scratch buffer and copied from there (see
:meth:`zarrx.codecs.pipeline.PreparedChain.decoded`). An absent chunk is the fill value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.elements import Elements
from zarrx.engine.plan import ChunkProjection


def place(
    chain: PreparedChain, elements: Elements, p: ChunkProjection, data: Any, out: np.ndarray
) -> None:
    """Decode ``data`` (``None``: absent) and write ``chunk[p.chunk_selection]`` into
    ``out[p.out_selection]``. Codec errors propagate for the caller to name the chunk."""
    if p.fancy:  # index arrays: NumPy gathers and scatters through copies
        if data is None:
            out[p.out_selection] = elements.fill_value
            return
        with chain.decoded(data) as chunk:
            out[p.out_selection] = chunk[p.chunk_selection]
        return
    dst = out[p.out_selection]
    if data is None:
        elements.fill_region(dst)
    elif not chain.decode_into(data, dst):
        with chain.decoded(data) as chunk:
            elements.copy(chunk[p.chunk_selection], dst)
