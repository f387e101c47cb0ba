"""Reading: fetch a batch of chunks in one ``get_many``, then decode and assemble them
concurrently (codecs and the Cython copy release the GIL). A sharded array is read inner
chunk by inner chunk (:mod:`.shards`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from functools import partial

import numpy as np

from zarrx import config
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.shards import read_shards
from zarrx.errors import CodecError
from zarrx.runtime.executor import run_all
from zarrx.runtime.place import place
from zarrx.runtime.plan import ChunkProjection, plan
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
        read_into(cs, plan(cs.meta.chunk_grid, cs.meta.shape, layout), buffer)
    if target is None:
        out[...] = layout.result(buffer)
    return out


def read_into(cs: ChunkStore, projections: Iterable[ChunkProjection], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``projections``."""
    it = iter(projections)
    while batch := list(itertools.islice(it, config.get("batch_chunks"))):
        keys = [cs.key(p.coords) for p in batch]
        fetched: dict[str, bytes | None] = {}
        if cs.store.batched_reads:
            fetched = dict(zip(keys, cs.store.get_many([(k, None) for k in keys])))
        items = [(p, k, fetched) for p, k in zip(batch, keys)]
        run_all(partial(_assemble, cs, out), items)


def _assemble(
    cs: ChunkStore,
    out: np.ndarray,
    item: tuple[ChunkProjection, str, dict[str, bytes | None]],
) -> None:
    """Decode one chunk into its place in ``out``. Stores without batched reads are read
    here, in the worker, so each value is used and freed at once."""
    p, key, fetched = item
    try:
        data = fetched.pop(key) if key in fetched else cs.store.get(key)
        place(cs.meta.codecs.prepare(cs.spec(p.coords)), cs.elements, p, data, out)
    except CodecError as e:
        raise type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}") from None
