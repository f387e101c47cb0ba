"""Reading: fetch a batch of chunks in one ``get_many``, then decode and assemble them
concurrently (codecs and the Cython copy release the GIL)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from functools import partial

import numpy as np

from zarrx import config
from zarrx._core.assemble import copy_strided, fill
from zarrx.engine.chunks import ChunkStore, swap_unit
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
    dst = out[p.out_selection]
    if is_part:
        try:
            src = cs.partial_codec(p.coords).decode_partial(
                cs.fetch(key), p.chunk_selection, cs.spec(p.coords)
            )
        except CodecError as e:
            raise type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}") from None
        if src is None:
            fill(dst, cs.fill)
        else:
            copy_strided(src, dst, swap_unit(src.dtype))
        return
    data = fetched.pop(key) if key in fetched else cs.store.get(key)
    if data is None:
        fill(dst, cs.fill)
        return
    src = decode_chunk(cs, p.coords, key, data)[p.chunk_selection]
    copy_strided(src, dst, swap_unit(src.dtype))
