"""One stored chunk's share of a selection, put into the output buffer.

The whole chunk in its stored layout is decompressed straight into the output; any other
share is decoded into a per-thread scratch buffer and copied from there (see
:meth:`zarrx.codecs.pipeline.PreparedChain.decoded`). An absent chunk is the fill value.

The copy into an output larger than the caches (:data:`STREAM_BYTES`; the whole array
it is part of) writes with streaming stores: its lines are not read from memory before
they are written, and do not evict the scratch chunk and the codec's state. (The engine
allocates large results on a huge-page boundary, :func:`zarrx._core.memory.empty_aligned`,
so that the rows of a chunk are whole cache lines of the result.)
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np

from zarrx.runtime.elements import Elements
from zarrx.runtime.plan import ChunkProjection

#: An output (the whole array it is a view of) at least this large is written with
#: streaming stores: larger than the last-level caches, its lines would be evicted before
#: they are read again anyway.
STREAM_BYTES = 32 * 2**20


def streams(out: np.ndarray) -> bool:
    """Whether chunks are copied into ``out`` with streaming stores (see above)."""
    base = out.base
    return streamed((base if isinstance(base, np.ndarray) else out).nbytes)


def streamed(nbytes: int) -> bool:
    """Whether chunks are copied into an output of ``nbytes`` with streaming stores."""
    return nbytes >= STREAM_BYTES


class Decoder(Protocol):
    """What :func:`place` needs of a prepared codec chain
    (:class:`zarrx.codecs.pipeline.PreparedChain`), which lives in the layer above."""

    def decoded(
        self, data: Any, selection: tuple[Any, ...] | None = None
    ) -> AbstractContextManager[np.ndarray]: ...

    def decode_into(self, data: Any, out: np.ndarray) -> bool: ...


def place(
    chain: Decoder, elements: Elements, p: ChunkProjection, data: Any, out: np.ndarray
) -> None:
    """Decode ``data`` (``None``: absent) and write ``chunk[p.chunk_selection]`` into
    ``out[p.out_selection]``. Codec errors propagate for the caller to name the chunk."""
    place_selection(chain, elements, p.chunk_selection, p.out_selection, p.fancy, data, out)


def place_selection(
    chain: Decoder,
    elements: Elements,
    chunk_selection: tuple[Any, ...],
    out_selection: tuple[Any, ...],
    fancy: bool,
    data: Any,
    out: np.ndarray,
) -> None:
    """:func:`place` for one chunk of a :class:`~zarrx.runtime.plan.ChunkBatch`, given
    its fields instead of a :class:`ChunkProjection`."""
    if fancy:  # index arrays: NumPy gathers and scatters through copies
        if data is None:
            out[out_selection] = elements.fill_value
            return
        with chain.decoded(data, chunk_selection) as chunk:
            out[out_selection] = chunk[chunk_selection]
        return
    dst = out[out_selection]
    if data is None:
        elements.fill_region(dst)
    elif not chain.decode_into(data, dst):
        with chain.decoded(data, chunk_selection) as chunk:
            elements.copy(chunk[chunk_selection], dst, streams(out))
