"""Writing: whole chunks are encoded from the value directly; partly covered chunks are
read, modified and written back. A chunk equal to the fill value is erased, not written,
unless ``write_empty_chunks`` is set."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from itertools import repeat
from typing import Any

import numpy as np

from zarrx import config
from zarrx.abc.store import Snapshot
from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.chunks import ChunkStore
from zarrx.errors import CodecError
from zarrx.runtime.executor import BackgroundWrites, run_all
from zarrx.runtime.place import place
from zarrx.runtime.plan import ChunkBatch, ChunkProjection, batches_of, plan_batches
from zarrx.runtime.scratch import scratch
from zarrx.selection.layout import Layout

#: All of a chunk, into all of a buffer of its shape.
WHOLE = ChunkProjection((), (Ellipsis,), (Ellipsis,), True)


def _covers(p: ChunkProjection, shape: tuple[int, ...]) -> bool:
    """The projection's slices span the whole stored chunk (no fill needed around them)."""
    return not p.fancy and _spans(p.chunk_selection, shape)


def _spans(selection: tuple[Any, ...], shape: tuple[int, ...]) -> bool:
    return all(s.start == 0 and s.stop == n and s.step == 1 for s, n in zip(selection, shape))


def write_selection(cs: ChunkStore, layout: Layout, value: np.ndarray) -> None:
    """Write ``value`` (NumPy's result shape for the selection, the array's dtype) into
    the cells the selection of ``layout`` names; where several name one cell, the last
    wins, as in NumPy."""
    if value.size:
        write_batches(cs, plan_batches(cs.grid, cs.meta.shape, layout), layout.buffer_of(value))


def write_from(cs: ChunkStore, projections: Iterable[ChunkProjection], value: np.ndarray) -> None:
    """Write ``value`` (shape = selection counts, native dtype) into the chunks of
    ``projections`` (see :func:`write_batches`)."""
    write_batches(cs, batches_of(projections, len(cs.meta.shape)), value)


def write_batches(cs: ChunkStore, batches: Iterable[ChunkBatch], value: np.ndarray) -> None:
    """Write ``value`` (shape = selection counts, native dtype) into the chunks.

    Partly covered chunks are read, modified and written back through the store's atomic
    update (:meth:`~zarrx.abc.store.Store.atomic_update`), so writers in other threads,
    processes or machines updating other parts of the same chunk (or shard) lose nothing;
    where the store lets an update start from a value read ahead, those are fetched in one
    batch. So is a chunk at the array's end that sticks out of it: what lies outside the
    shape this writer knows may be rows another writer appended meanwhile. Whole chunks
    are written by the I/O threads while the chunk threads encode the next ones; when
    this returns, every write is done.
    """
    write_empty = config.get("write_empty_chunks")
    threads = config.get("threads")
    # One thread means one thread: the store is then only ever called by the caller.
    writes = BackgroundWrites(cs.store, limit=2 * threads) if threads > 1 else None
    put = cs.store.set if writes is None else writes.set
    try:
        for batch in batches:
            keys = cs.keys(batch.coords)
            chains = cs.chains(batch.coords)
            fancy = batch.fancy or repeat(False)
            whole = [
                complete and not f and _spans(sel, chain.spec.shape)
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
    except BaseException:
        if writes is not None:
            writes.wait(raise_failure=False)  # finish what was handed over; keep this error
        raise
    if writes is not None:
        writes.wait()


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
    spec = chain.spec
    if existing is None and _covers(p, spec.shape):
        # The new value is the whole chunk: encode it where it lies.
        return _encode(cs, chain, write_empty, value[p.out_selection])
    if cs.elements.variable:
        chunk = np.empty(spec.shape, dtype=cs.meta.dtype)
        _build(cs, chain, value, p, key, existing, chunk)
        return _encode(cs, chain, write_empty, chunk)
    with scratch(spec.nbytes) as memory:
        chunk = memory.view(cs.meta.dtype).reshape(spec.shape)
        _build(cs, chain, value, p, key, existing, chunk)
        encoded = _encode(cs, chain, write_empty, chunk)
        if encoded is not None and np.may_share_memory(np.frombuffer(encoded, "u1"), memory):
            encoded = bytes(encoded)  # the bytes codec alone returns a view
    return encoded


def _encode(cs: ChunkStore, chain: PreparedChain, write_empty: bool, chunk: np.ndarray) -> Any:
    """The stored bytes of ``chunk``, or ``None`` when it is all fill value (and such
    chunks are not written)."""
    if not write_empty and cs.elements.is_fill(chunk):
        return None
    return chain.encode(chunk)


def _build(
    cs: ChunkStore,
    chain: PreparedChain,
    value: np.ndarray,
    p: ChunkProjection,
    key: str,
    existing: bytes | None,
    chunk: np.ndarray,
) -> None:
    """Fill ``chunk`` with its new contents: the old value (or the fill value) around
    the written part."""
    if existing is not None:
        try:
            place(chain, cs.elements, WHOLE, existing, chunk)
        except CodecError as e:
            raise type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}") from None
    elif not _covers(p, chunk.shape):
        cs.elements.fill_region(chunk)
    if p.fancy:
        chunk[p.chunk_selection] = value[p.out_selection]
    else:
        cs.elements.copy(value[p.out_selection], chunk[p.chunk_selection])
