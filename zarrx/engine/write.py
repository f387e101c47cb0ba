"""Writing: whole chunks are encoded from the value directly; partly covered chunks are
read, modified and written back. A chunk equal to the fill value is erased, not written,
unless ``write_empty_chunks`` is set. A sharded array is written inner chunk by inner
chunk, one update per shard (:mod:`.shards`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from itertools import repeat
from typing import Any

import numpy as np

from zarrx.abc.store import Snapshot
from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.shards import write_shards
from zarrx.engine.update import background_puts, new_chunk, spans
from zarrx.runtime.executor import run_all
from zarrx.runtime.plan import ChunkBatch, ChunkProjection, batches_of, plan_batches
from zarrx.selection.layout import Layout


def write_selection(cs: ChunkStore, layout: Layout, value: np.ndarray) -> None:
    """Write ``value`` (NumPy's result shape for the selection, the array's dtype) into
    the cells the selection of ``layout`` names; where several name one cell, the last
    wins, as in NumPy."""
    if not value.size:
        return
    if cs.shards is not None:
        write_shards(cs, cs.shards, layout, layout.buffer_of(value))
    else:
        write_batches(cs, plan_batches(cs.grid, cs.meta.shape, layout), layout.buffer_of(value))


def write_from(cs: ChunkStore, projections: Iterable[ChunkProjection], value: np.ndarray) -> None:
    """Write ``value`` (shape = selection counts, native dtype) into the chunks of
    ``projections`` (see :func:`write_batches`)."""
    write_batches(cs, batches_of(projections, len(cs.meta.shape)), value)


def write_batches(cs: ChunkStore, batches: Iterable[ChunkBatch], value: np.ndarray) -> None:
    """Write ``value`` (shape = selection counts, native dtype) into the chunks.

    Partly covered chunks are read, modified and written back through the store's atomic
    update (:meth:`~zarrx.abc.store.Store.atomic_update`), so writers in other threads,
    processes or machines updating other parts of the same chunk lose nothing; where the
    store lets an update start from a value read ahead, those are fetched in one batch.
    So is a chunk at the array's end that sticks out of it: what lies outside the shape
    this writer knows may be rows another writer appended meanwhile. Whole chunks are
    written by the I/O threads while the chunk threads encode the next ones; when this
    returns, every write is done.
    """
    write_empty = cs.writes_empty_chunks()
    with background_puts(cs.store) as put:
        for batch in batches:
            keys = cs.keys(batch.coords)
            chains = cs.chains(batch.coords)
            fancy = batch.fancy or repeat(False)
            whole = [
                complete and not f and spans(sel, chain.spec.shape)
                for complete, f, sel, chain in zip(
                    batch.complete.tolist(), fancy, batch.chunk_selections, chains
                )
            ]
            partly = [k for k, w in zip(keys, whole) if not w]
            ahead = cs.store.prefetch_for_update(partly) if partly else {}
            items = [
                (batch.projection(i), keys[i], whole[i], ahead.get(keys[i]), chains[i])
                for i in range(len(batch))
            ]
            run_all(partial(_update, cs, value, write_empty, put), items)


def _update(
    cs: ChunkStore,
    value: np.ndarray,
    write_empty: bool,
    put: Callable[[str, Any], None],
    item: tuple[ChunkProjection, str, bool, Snapshot | None, PreparedChain],
) -> None:
    p, key, whole, ahead, chain = item
    if whole:
        encoded = _chunk_bytes(cs, chain, value, write_empty, p, key, None)
        if encoded is not None:
            put(key, encoded)
        else:
            cs.store.erase(key)
    else:
        cs.store.atomic_update(
            key, partial(_chunk_bytes, cs, chain, value, write_empty, p, key), ahead
        )


def _chunk_bytes(
    cs: ChunkStore,
    chain: PreparedChain,
    value: np.ndarray,
    write_empty: bool,
    p: ChunkProjection,
    key: str,
    existing: bytes | None,
) -> Any:
    """The stored bytes of one chunk (built from its old value when only partly covered),
    or ``None`` when it is all fill value (and such chunks are not written). A stored chunk
    that an update leaves all fill value is written, not erased, where the store cannot
    erase on condition (:attr:`~zarrx.abc.store.Store.conditional_erase`)."""
    if existing is not None and not cs.store.conditional_erase:
        write_empty = True
    return new_chunk(chain, cs.elements, value, p, existing, write_empty,
                     f"{cs.node}: chunk {key!r}")
