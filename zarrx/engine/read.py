"""Reading: fetch a batch of chunks in one ``get_many``, then decode and assemble them
concurrently (codecs and the Cython copy release the GIL)."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import numpy as np

from zarrx import config
from zarrx.abc.store import ByteRange
from zarrx.engine.chunks import ChunkStore
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
    read_into(cs, plan(cs.meta.chunk_grid, cs.meta.shape, layout), buffer)
    if target is None:
        out[...] = layout.result(buffer)
    return out


def read_into(cs: ChunkStore, projections: Iterable[ChunkProjection], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``projections``."""
    it = iter(projections)
    while batch := list(itertools.islice(it, config.get("batch_chunks"))):
        keys = [cs.key(p.coords) for p in batch]
        part = [not p.complete and cs.partial_codec(p.coords) is not None for p in batch]
        fetched: dict[str, bytes | None] = {}
        ranges: dict[str, dict[ByteRange, bytes | None]] = {}
        if cs.store.batched_reads:
            whole = [k for k, is_part in zip(keys, part) if not is_part]
            if whole:
                fetched = dict(zip(whole, cs.store.get_many([(k, None) for k in whole])))
            parts = [(p, k) for p, k, is_part in zip(batch, keys, part) if is_part]
            ranges = _prefetch_parts(cs, parts) if len(parts) > 1 else {}
        items = [(p, k, is_part, fetched) for p, k, is_part in zip(batch, keys, part)]
        run_all(partial(_assemble, cs, out, ranges), items)


def _prefetch_parts(
    cs: ChunkStore, parts: list[tuple[ChunkProjection, str]]
) -> dict[str, dict[ByteRange, bytes | None]]:
    """On a high-latency store, the ranges that the partial decodes of ``parts`` will read,
    fetched for all of them in two batches (the shard indexes, then the inner chunks the
    selection needs) instead of two round trips per shard."""
    planned = []
    for p, key in parts:
        codec, spec = cs.partial_codec(p.coords), cs.spec(p.coords)
        index_range = codec.index_range(spec)
        if index_range is not None:
            planned.append((key, codec, spec, _bounding_box(p)[0], index_range))
    indexes = cs.store.get_many([(key, r) for key, _, _, _, r in planned])
    found: dict[str, dict[ByteRange, bytes | None]] = {}
    inner: list[tuple[str, ByteRange]] = []
    for (key, codec, spec, region, index_range), index in zip(planned, indexes):
        found[key] = {index_range: index}
        if index is not None:
            with contextlib.suppress(CodecError):  # the decode reports it, naming the chunk
                inner += [(key, r) for r in codec.inner_ranges(index, region, spec)]
    for (key, r), value in zip(inner, cs.store.get_many(inner)):
        found[key][r] = value
    return found


def _assemble(
    cs: ChunkStore,
    out: np.ndarray,
    ranges: dict[str, dict[ByteRange, bytes | None]],
    item: tuple[ChunkProjection, str, bool, dict[str, bytes | None]],
) -> None:
    """Decode one chunk into its place in ``out``. Stores without batched reads are read
    here, in the worker, so each value is used and freed at once."""
    p, key, is_part, fetched = item
    try:
        if is_part:
            fetch = cs.fetch(key)
            if key in ranges:
                fetch = _served(ranges.pop(key), fetch)
            _assemble_part(cs, out, p, key, fetch)
        else:
            data = fetched.pop(key) if key in fetched else cs.store.get(key)
            place(cs.meta.codecs.prepare(cs.spec(p.coords)), cs.elements, p, data, out)
    except CodecError as e:
        raise type(e)(f"{cs.node}: chunk {key!r} could not be decoded: {e}") from None


def _served(
    ready: dict[ByteRange, bytes | None], fetch: Callable[[Any], list[bytes | None]]
) -> Callable[[Any], list[bytes | None]]:
    """A fetch answering from the ranges read ahead, and reading any other."""

    def served(asked: Any) -> list[bytes | None]:
        if all(r in ready for r in asked):
            return [ready[r] for r in asked]
        return fetch(asked)

    return served


def _assemble_part(
    cs: ChunkStore, out: np.ndarray, p: ChunkProjection, key: str, fetch: Any
) -> None:
    """Decode only the part of the chunk the selection needs (a shard's inner chunks)."""
    region, relative = _bounding_box(p)
    spec = cs.spec(p.coords)
    if p.fancy:
        shape = tuple(s.stop - s.start for s in region)
        box = np.empty(shape, dtype=out.dtype)
        if cs.partial_codec(p.coords).decode_partial(fetch, region, spec, box):
            out[p.out_selection] = box[relative]
        else:
            out[p.out_selection] = cs.meta.fill_value
        return
    dst = out[p.out_selection]
    if not cs.partial_codec(p.coords).decode_partial(fetch, region, spec, dst):
        cs.elements.fill_region(dst)


def _bounding_box(p: ChunkProjection) -> tuple[tuple[slice, ...], tuple[Any, ...]]:
    """For a partial decode: the step-1 box around the selection, and the selection
    relative to that box."""
    if not p.fancy:
        return p.chunk_selection, (Ellipsis,)
    box = []
    relative: list[Any] = []
    for index in p.chunk_selection:
        if isinstance(index, slice):
            n = len(range(index.start, index.stop, index.step))
            box.append(slice(index.start, index.start + (n - 1) * index.step + 1))
            relative.append(slice(0, None, index.step))
        else:
            lo, hi = int(index.min()), int(index.max()) + 1
            box.append(slice(lo, hi))
            relative.append(index - lo)
    return tuple(box), tuple(relative)
