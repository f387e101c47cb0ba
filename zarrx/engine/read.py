"""Reading: fetch a batch of chunks in one ``get_many``, then decode and assemble them
concurrently (codecs and the Cython copy release the GIL)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from functools import partial
from typing import Any

import numpy as np

from zarrx import config
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.executor import run_all
from zarrx.engine.plan import ChunkProjection
from zarrx.errors import CodecError


def decode_chunk(cs: ChunkStore, coords: tuple[int, ...], key: str, data: bytes) -> np.ndarray:
    """Decode one stored chunk, naming the node and key in any error."""
    chain = cs.meta.codecs.prepare(cs.spec(coords))
    try:
        return chain.decode(data)
    except CodecError as e:
        raise type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}") from None


def read_into(cs: ChunkStore, projections: Iterable[ChunkProjection], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``projections``."""
    it = iter(projections)
    while batch := list(itertools.islice(it, config.get("batch_chunks"))):
        keys = [cs.key(p.coords) for p in batch]
        part = [not p.complete and cs.partial_codec(p.coords) is not None for p in batch]
        fetched: dict[str, bytes | None] = {}
        if cs.store.batched_reads:
            whole = [k for k, is_part in zip(keys, part) if not is_part]
            fetched = dict(zip(whole, cs.store.get_many([(k, None) for k in whole])))
        items = [(p, k, is_part, fetched) for p, k, is_part in zip(batch, keys, part)]
        run_all(partial(_assemble, cs, out), items)


def _assemble(
    cs: ChunkStore,
    out: np.ndarray,
    item: tuple[ChunkProjection, str, bool, dict[str, bytes | None]],
) -> None:
    """Decode one chunk into its place in ``out``. Stores without batched reads are read
    here, in the worker, so each value is used and freed at once."""
    p, key, is_part, fetched = item
    if is_part:
        region, chunk_selection = _bounding_box(p)
        try:
            chunk = cs.partial_codec(p.coords).decode_partial(
                cs.fetch(key), region, cs.spec(p.coords)
            )
        except CodecError as e:
            raise type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}") from None
    else:
        data = fetched.pop(key) if key in fetched else cs.store.get(key)
        chunk = None if data is None else decode_chunk(cs, p.coords, key, data)
        chunk_selection = p.chunk_selection
    if p.fancy:
        out[p.out_selection] = cs.meta.fill_value if chunk is None else chunk[chunk_selection]
        return
    dst = out[p.out_selection]
    if chunk is None:
        cs.elements.fill_region(dst)
    else:
        cs.elements.copy(chunk[chunk_selection], dst)


def _bounding_box(p: ChunkProjection) -> tuple[tuple[slice, ...], tuple[Any, ...]]:
    """For a partial decode: the step-1 box around the selection, and the selection
    relative to that box."""
    if not p.fancy:
        return p.chunk_selection, (Ellipsis,)
    box = []
    relative = []
    for index in p.chunk_selection:
        lo, hi = int(index.min()), int(index.max()) + 1
        box.append(slice(lo, hi))
        relative.append(index - lo)
    return tuple(box), tuple(relative)
