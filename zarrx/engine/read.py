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
        values = cs.store.get_many([(k, None) for k in keys])
        run_all(partial(_assemble, cs, out), zip(batch, keys, values))


def _assemble(
    cs: ChunkStore, out: np.ndarray, item: tuple[ChunkProjection, str, bytes | None]
) -> None:
    p, key, data = item
    dst = out[p.out_selection]
    if data is None:
        fill(dst, cs.fill)
        return
    src = decode_chunk(cs, p.coords, key, data)[p.chunk_selection]
    copy_strided(src, dst, swap_unit(src.dtype))
