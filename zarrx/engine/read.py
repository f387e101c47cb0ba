"""Reading: fetch a batch of chunks in one ``get_many``, then decode and assemble them
concurrently (codecs and the Cython copy release the GIL). A sharded array is read inner
chunk by inner chunk (:mod:`.shards`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx._core.memory import empty_aligned
from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.shards import read_shards
from zarrx.errors import CodecError
from zarrx.runtime.executor import run_all
from zarrx.runtime.place import place_selection, streamed
from zarrx.runtime.plan import ChunkBatch, ChunkProjection, batches_of, plan_batches
from zarrx.selection.layout import Layout

if TYPE_CHECKING:
    from zarrx.codecs.partial import PartialRead


def read_selection(cs: ChunkStore, layout: Layout) -> np.ndarray:
    """A new array holding the selection of ``layout`` (NumPy's result, C-contiguous):
    each touched chunk fetched and decoded once, straight into the result where the
    selection's buffer is a view of it."""
    out = _new(layout.shape, cs.meta.dtype)
    if out.size == 0:
        return out
    target = layout.read_target(out)
    buffer = target if target is not None else _new(layout.buffer_shape, cs.meta.dtype)
    if cs.shards is not None:
        read_shards(cs, cs.shards, layout, buffer)
    else:
        read_batches(cs, plan_batches(cs.grid, cs.meta.shape, layout), buffer)
    if target is None:
        out[...] = layout.result(buffer)
    return out


def _new(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised array for a result: where chunks are written into it with
    streaming stores (a large one, :mod:`zarrx.runtime.place`), its memory starts on a
    huge-page boundary (:mod:`zarrx._core.memory`), so that the rows of chunks are whole
    cache lines of it; else NumPy's own."""
    if streamed(math.prod(shape) * dtype.itemsize):
        return empty_aligned(shape, dtype)
    return np.empty(shape, dtype)


def read_into(cs: ChunkStore, projections: Iterable[ChunkProjection], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``projections``."""
    read_batches(cs, batches_of(projections, len(cs.meta.shape)), out)


def read_batches(cs: ChunkStore, batches: Iterable[ChunkBatch], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``batches``: per batch, the
    keys are built at once, the codec chain comes prepared per chunk shape, and the pool's
    threads each decode chunk after chunk. A chunk the selection touches little of is read
    in part where its chain can (:meth:`PreparedChain.partial_read`): only the byte ranges
    it needs are fetched, in rounds, and only those are decoded."""
    for batch in batches:
        n = len(batch)
        keys = cs.keys(batch.coords)
        chains = cs.chains(batch.coords)
        parts = _partial_reads(cs, batch, chains)
        tiny = n > 1 and chains[0].spec.nbytes < INLINE_BYTES
        if cs.store.batched_reads or tiny:
            fetched: list[Any] = _fetch(cs, keys, parts)
        else:
            fetched = [_UNREAD] * n
        assemble = partial(_assemble, cs, out, batch, keys, chains, parts, fetched)
        if tiny:  # fetched together; then their Python, which holds the GIL, is all there
            for i in range(n):  # is to them: threads would only take turns
                assemble(i)
        else:
            run_all(assemble, range(n))


_UNREAD = object()  # a value the worker reads itself (stores without batched reads)
#: Chunks smaller than this (decoded) are read in one batch (``get_many``) and placed by
#: the caller: decoding and placing one costs less than the GIL hand-offs of sharing
#: them out to the chunk threads.
INLINE_BYTES = 16 << 10


def _partial_reads(
    cs: ChunkStore, batch: ChunkBatch, chains: list[PreparedChain]
) -> list[PartialRead | None] | None:
    """Per chunk of ``batch``, its partial read, or ``None`` where it is read whole
    (``None`` for the batch when every chunk is)."""
    if not chains or (cs.uniform and not chains[0].reads_in_part()):
        return None
    complete, fancy = batch.complete.tolist(), batch.fancy
    parts: list[PartialRead | None] = [
        None if complete[i] or (fancy is not None and fancy[i])
        else chain.partial_read(batch.chunk_selections[i])
        for i, chain in enumerate(chains)
    ]
    return parts if any(p is not None for p in parts) else None


def _fetch(cs: ChunkStore, keys: list[str], parts: list[PartialRead | None] | None) -> list[Any]:
    """A batch's values from a store with batched reads: the whole chunks' values in one
    ``get_many``, the partial reads' rounds in one ``read_rounds`` (each round of them all
    at once, every round of one chunk from one version of it). A partial read stands in
    for its value."""
    if parts is None:
        return list(cs.store.get_many([(k, None) for k in keys]))
    whole = [(k, None) for k, p in zip(keys, parts) if p is None]
    values = iter(cs.store.get_many(whole) if whole else ())
    cs.store.read_rounds([(k, p) for k, p in zip(keys, parts) if p is not None])
    return [next(values) if p is None else p for p in parts]


def _assemble(
    cs: ChunkStore,
    out: np.ndarray,
    batch: ChunkBatch,
    keys: list[str],
    chains: list[PreparedChain],
    parts: list[PartialRead | None] | None,
    fetched: list[Any],
    i: int,
) -> None:
    """Decode chunk ``i`` of ``batch`` into its place in ``out``. Stores without batched
    reads are read here, in the worker, so each value is used and freed at once. A
    partial read that fails (a truncated or corrupt value) is followed by a
    whole read, which gives the chunk, or the error a whole read gives."""
    key = keys[i]
    try:
        data = fetched[i]
        fetched[i] = None
        p = parts[i] if parts is not None else None
        if p is not None:
            if _place_part(cs, out, batch, key, p, data is _UNREAD, i):
                return
            data = _UNREAD
        if data is _UNREAD:
            data = cs.store.get(key)
        place_selection(
            chains[i], cs.elements, batch.chunk_selections[i], batch.out_selections[i],
            batch.fancy is not None and batch.fancy[i], data, out,
        )
    except CodecError as e:
        raise type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}") from None


def _place_part(
    cs: ChunkStore, out: np.ndarray, batch: ChunkBatch, key: str, p: PartialRead,
    unread: bool, i: int,
) -> bool:
    """Finish the partial read ``p`` of chunk ``i`` (its rounds, when the worker reads)
    and place it; ``False``, having written nothing, when it failed."""
    if unread:
        cs.store.read_rounds([(key, p)])
    if p.failed is not None:
        return False
    try:
        place_selection(
            p, cs.elements, batch.chunk_selections[i], batch.out_selections[i], False,
            None if p.absent else p, out,
        )
    except CodecError:
        return False
    return True
