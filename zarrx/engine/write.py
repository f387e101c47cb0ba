"""Writing: whole chunks are encoded from the value directly; partly covered chunks are
read, modified and written back. A chunk equal to the fill value is erased, not written,
unless ``write_empty_chunks`` is set."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from functools import partial

import numpy as np

from zarrx import config
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.executor import run_all
from zarrx.engine.place import place
from zarrx.engine.plan import ChunkProjection
from zarrx.errors import CodecError

#: All of a chunk, into all of a buffer of its shape.
WHOLE = ChunkProjection((), (Ellipsis,), (Ellipsis,), True)


def _covers(p: ChunkProjection, shape: tuple[int, ...]) -> bool:
    """The projection's slices span the whole stored chunk (no fill needed around them)."""
    return not p.fancy and all(s.start == 0 and s.stop == n and s.step == 1
               for s, n in zip(p.chunk_selection, shape))


def write_from(cs: ChunkStore, projections: Iterable[ChunkProjection], value: np.ndarray) -> None:
    """Write ``value`` (shape = selection counts, native dtype) into the chunks.

    Partly covered chunks are read, modified and written back. On stores that can lock
    (a local directory), that happens under the chunk's lock, so writers in other threads
    or processes updating other parts of the same chunk (or shard) lose nothing; elsewhere
    the old values are fetched in one batch up front.
    """
    write_empty = config.get("write_empty_chunks")
    locking = cs.store.supports_locking
    it = iter(projections)
    while batch := list(itertools.islice(it, config.get("batch_chunks"))):
        keys = [cs.key(p.coords) for p in batch]
        old: dict[str, bytes | None] = {}
        if not locking:
            partly = [k for k, p in zip(keys, batch) if not p.complete]
            old = dict(zip(partly, cs.store.get_many([(k, None) for k in partly])))
        items = [(p, k, old) for p, k in zip(batch, keys)]
        run_all(partial(_update, cs, value, write_empty, locking), items)


def _update(
    cs: ChunkStore,
    value: np.ndarray,
    write_empty: bool,
    locking: bool,
    item: tuple[ChunkProjection, str, dict[str, bytes | None]],
) -> None:
    p, key, old = item
    if p.complete:
        _store_chunk(cs, value, write_empty, p, key, None)
    elif locking:
        with cs.store.lock(key):
            _store_chunk(cs, value, write_empty, p, key, cs.store.get(key))
    else:
        _store_chunk(cs, value, write_empty, p, key, old.get(key))


def _store_chunk(
    cs: ChunkStore,
    value: np.ndarray,
    write_empty: bool,
    p: ChunkProjection,
    key: str,
    existing: bytes | None,
) -> None:
    """Build one chunk (from its old value when only partly covered) and store it."""
    spec = cs.spec(p.coords)
    chain = cs.meta.codecs.prepare(spec)
    chunk = np.empty(spec.shape, dtype=cs.meta.dtype)
    if existing is not None:
        try:
            place(chain, cs.elements, WHOLE, existing, chunk)
        except CodecError as e:
            raise type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}") from None
    elif not _covers(p, spec.shape):
        cs.elements.fill_region(chunk)
    if p.fancy:
        chunk[p.chunk_selection] = value[p.out_selection]
    else:
        cs.elements.copy(value[p.out_selection], chunk[p.chunk_selection])
    if not write_empty and cs.elements.is_fill(chunk):
        if existing is not None or p.complete:
            cs.store.erase(key)
        return
    cs.store.set(key, chain.encode(chunk))
