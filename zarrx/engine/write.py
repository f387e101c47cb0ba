"""Writing: whole chunks are encoded from the value directly; partly covered chunks are
read, modified and written back. A chunk equal to the fill value is erased, not written,
unless ``write_empty_chunks`` is set."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import numpy as np

from zarrx import config
from zarrx.codecs.pipeline import PreparedChain
from zarrx.codecs.scratch import scratch
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.executor import BackgroundWrites, run_all
from zarrx.engine.place import place
from zarrx.engine.plan import ChunkProjection, plan
from zarrx.errors import CodecError
from zarrx.selection.layout import Layout

#: All of a chunk, into all of a buffer of its shape.
WHOLE = ChunkProjection((), (Ellipsis,), (Ellipsis,), True)


def _covers(p: ChunkProjection, shape: tuple[int, ...]) -> bool:
    """The projection's slices span the whole stored chunk (no fill needed around them)."""
    return not p.fancy and all(s.start == 0 and s.stop == n and s.step == 1
               for s, n in zip(p.chunk_selection, shape))


def write_selection(cs: ChunkStore, layout: Layout, value: np.ndarray) -> None:
    """Write ``value`` (NumPy's result shape for the selection, the array's dtype) into
    the cells the selection of ``layout`` names; where several name one cell, the last
    wins, as in NumPy."""
    if value.size:
        write_from(cs, plan(cs.meta.chunk_grid, cs.meta.shape, layout), layout.buffer_of(value))


def write_from(cs: ChunkStore, projections: Iterable[ChunkProjection], value: np.ndarray) -> None:
    """Write ``value`` (shape = selection counts, native dtype) into the chunks.

    Partly covered chunks are read, modified and written back. On stores that can lock
    (a local directory), that happens under the chunk's lock, so writers in other threads
    or processes updating other parts of the same chunk (or shard) lose nothing; elsewhere
    the old values are fetched in one batch up front. Whole chunks are written by the I/O
    threads while the chunk threads encode the next ones; when this returns, every write
    is done.
    """
    write_empty = config.get("write_empty_chunks")
    locking = cs.store.supports_locking
    threads = config.get("threads")
    # One thread means one thread: the store is then only ever called by the caller.
    writes = BackgroundWrites(cs.store, limit=2 * threads) if threads > 1 else None
    put = cs.store.set if writes is None else writes.set
    it = iter(projections)
    try:
        while batch := list(itertools.islice(it, config.get("batch_chunks"))):
            keys = [cs.key(p.coords) for p in batch]
            old: dict[str, bytes | None] = {}
            if not locking:
                partly = [k for k, p in zip(keys, batch) if not p.complete]
                old = dict(zip(partly, cs.store.get_many([(k, None) for k in partly])))
            items = [(p, k, old) for p, k in zip(batch, keys)]
            run_all(partial(_update, cs, value, write_empty, locking, put), items)
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
    locking: bool,
    put: Callable[[str, Any], None],
    item: tuple[ChunkProjection, str, dict[str, bytes | None]],
) -> None:
    p, key, old = item
    if p.complete:
        _store_chunk(cs, value, write_empty, p, key, None, put)
    elif locking:
        with cs.store.lock(key):
            _store_chunk(cs, value, write_empty, p, key, cs.store.get(key), cs.store.set)
    else:
        _store_chunk(cs, value, write_empty, p, key, old.get(key), put)


def _store_chunk(
    cs: ChunkStore,
    value: np.ndarray,
    write_empty: bool,
    p: ChunkProjection,
    key: str,
    existing: bytes | None,
    put: Callable[[str, Any], None],
) -> None:
    """Build one chunk (from its old value when only partly covered) and hand its encoded
    bytes to ``put``; erase it instead when it is all fill value."""
    spec = cs.spec(p.coords)
    chain = cs.meta.codecs.prepare(spec)
    if existing is None and _covers(p, spec.shape):
        # The new value is the whole chunk: encode it where it lies.
        encoded = _encode(cs, chain, write_empty, value[p.out_selection])
    elif cs.elements.variable:
        chunk = np.empty(spec.shape, dtype=cs.meta.dtype)
        _build(cs, chain, value, p, key, existing, chunk)
        encoded = _encode(cs, chain, write_empty, chunk)
    else:
        with scratch(spec.nbytes) as memory:
            chunk = memory.view(cs.meta.dtype).reshape(spec.shape)
            _build(cs, chain, value, p, key, existing, chunk)
            encoded = _encode(cs, chain, write_empty, chunk)
            if encoded is not None and np.may_share_memory(np.frombuffer(encoded, "u1"), memory):
                encoded = bytes(encoded)  # the bytes codec alone returns a view
    if encoded is not None:
        put(key, encoded)
    elif existing is not None or p.complete:
        cs.store.erase(key)


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
