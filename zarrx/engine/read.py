"""Reading: fetch a batch of chunks in one ``get_many``, then decode and assemble them
concurrently (codecs and the Cython copy release the GIL)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import numpy as np

from zarrx.abc.store import ByteRange
from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.chunks import ChunkStore
from zarrx.errors import CodecError
from zarrx.runtime.executor import run_all
from zarrx.runtime.place import place_selection
from zarrx.runtime.plan import ChunkBatch, ChunkProjection, batches_of, plan_batches
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
    read_batches(cs, plan_batches(cs.grid, cs.meta.shape, layout), buffer)
    if target is None:
        out[...] = layout.result(buffer)
    return out


def read_into(cs: ChunkStore, projections: Iterable[ChunkProjection], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``projections``."""
    read_batches(cs, batches_of(projections, len(cs.meta.shape)), out)


def read_batches(cs: ChunkStore, batches: Iterable[ChunkBatch], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``batches``: per batch, the
    keys are built at once, the codec chain comes prepared per chunk shape, and the pool's
    threads each decode chunk after chunk."""
    for batch in batches:
        n = len(batch)
        keys = cs.keys(batch.coords)
        chains = cs.chains(batch.coords)
        part = _partial(cs, batch, chains)
        fetched: list[Any] = [_UNREAD] * n
        ranges: dict[str, dict[ByteRange, bytes | None]] = {}
        if cs.store.batched_reads:
            whole = range(n) if part is None else [i for i in range(n) if not part[i]]
            values = cs.store.get_many([(keys[i], None) for i in whole]) if whole else []
            for i, value in zip(whole, values):
                fetched[i] = value
            if part is not None:
                parts = [(batch.projection(i), keys[i]) for i in range(n) if part[i]]
                ranges = _prefetch_parts(cs, parts) if len(parts) > 1 else {}
        run_all(partial(_assemble, cs, out, batch, keys, chains, part, fetched, ranges), range(n))


_UNREAD = object()  # a value the worker reads itself (stores without batched reads)


def _partial(cs: ChunkStore, batch: ChunkBatch, chains: list[PreparedChain]) -> list[bool] | None:
    """Per chunk of ``batch``: decoded in part (not wholly selected, and its chain can);
    ``None`` when no chunk is."""
    if batch.complete.all():
        return None
    if cs.uniform:
        return (~batch.complete).tolist() if cs.decodes_part(chains[0].spec.shape) else None
    part = [
        not complete and cs.decodes_part(chain.spec.shape)
        for complete, chain in zip(batch.complete.tolist(), chains)
    ]
    return part if any(part) else None


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
    batch: ChunkBatch,
    keys: list[str],
    chains: list[PreparedChain],
    part: list[bool] | None,
    fetched: list[Any],
    ranges: dict[str, dict[ByteRange, bytes | None]],
    i: int,
) -> None:
    """Decode chunk ``i`` of ``batch`` into its place in ``out``. Stores without batched
    reads are read here, in the worker, so each value is used and freed at once."""
    key = keys[i]
    try:
        if part is not None and part[i]:
            fetch = cs.fetch(key)
            if key in ranges:
                fetch = _served(ranges.pop(key), fetch)
            _assemble_part(cs, out, batch.projection(i), key, fetch)
            return
        data = fetched[i]
        if data is _UNREAD:
            data = cs.store.get(key)
        else:
            fetched[i] = None
        place_selection(
            chains[i], cs.elements, batch.chunk_selections[i], batch.out_selections[i],
            batch.fancy is not None and batch.fancy[i], data, out,
        )
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
