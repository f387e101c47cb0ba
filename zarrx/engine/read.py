"""Reading: fetch a batch of chunks in one ``get_many``, then decode and assemble them
concurrently (codecs and the Cython copy release the GIL). A sharded array is read inner
chunk by inner chunk (:mod:`.shards`)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

import numpy as np

from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.shards import read_shards
from zarrx.errors import CodecError
from zarrx.runtime.executor import run_all
from zarrx.runtime.place import place_selection
from zarrx.runtime.plan import ChunkBatch, ChunkProjection, batches_of, plan_batches
from zarrx.selection.layout import Layout


def read_selection(cs: ChunkStore, layout: Layout) -> np.ndarray:
    """A new array holding the selection of ``layout`` (NumPy's result, C-contiguous):
    each touched chunk fetched and decoded once, straight into the result where the
    selection's buffer is a view of it."""
    out = np.empty(layout.shape, dtype=cs.meta.dtype)
    if out.size == 0:
        return out
    target = layout.read_target(out)
    buffer = target if target is not None else np.empty(layout.buffer_shape, cs.meta.dtype)
    if cs.shards is not None:
        read_shards(cs, cs.shards, layout, buffer)
    else:
        read_batches(cs, plan_batches(cs.grid, cs.meta.shape, layout), buffer)
    if target is None:
        out[...] = layout.result(buffer)
    return out


def read_into(cs: ChunkStore, projections: Iterable[ChunkProjection], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``projections``."""
    read_batches(cs, batches_of(projections, len(cs.meta.shape)), out)


def read_batches(cs: ChunkStore, batches: Iterable[ChunkBatch], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``batches``: per batch, the
    keys are built at once, the codec chain comes prepared per chunk shape, and the pool's
    threads each decode chunk after chunk."""
    for batch in batches:
        n = len(batch)
        keys = cs.keys(batch.coords)
        chains = cs.chains(batch.coords)
        fetched: list[Any] = (
            list(cs.store.get_many([(k, None) for k in keys]))
            if cs.store.batched_reads else [_UNREAD] * n
        )
        run_all(partial(_assemble, cs, out, batch, keys, chains, fetched), range(n))


_UNREAD = object()  # a value the worker reads itself (stores without batched reads)


def _assemble(
    cs: ChunkStore,
    out: np.ndarray,
    batch: ChunkBatch,
    keys: list[str],
    chains: list[PreparedChain],
    fetched: list[Any],
    i: int,
) -> None:
    """Decode chunk ``i`` of ``batch`` into its place in ``out``. Stores without batched
    reads are read here, in the worker, so each value is used and freed at once."""
    key = keys[i]
    try:
        data = fetched[i]
        if data is _UNREAD:
            data = cs.store.get(key)
        else:
            fetched[i] = None
        place_selection(
            chains[i], cs.elements, batch.chunk_selections[i], batch.out_selections[i],
            batch.fancy is not None and batch.fancy[i], data, out,
        )
    except CodecError as e:
        raise type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}") from None
