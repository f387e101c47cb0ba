"""Reading: a selection planned into batches of chunks (the inner chunks of a sharded
array), each batch's values fetched through the array's chunk source (:mod:`.sources`:
every unit — a chunk, or a shard — from one version of its key's value), then decoded and
placed into the output concurrently (codecs and the Cython copies release the GIL): a
batch of chunks whose chain the batch kernel takes in one call per thread
(:attr:`PreparedChain.batch_decoder`), any other chunk by
:func:`~zarrx.runtime.place.place_selection`."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx import config
from zarrx._core.memory import empty_aligned
from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.chunks import ChunkStore
from zarrx.engine.sources import Fetched, Reads
from zarrx.errors import CodecError
from zarrx.runtime.executor import run_all
from zarrx.runtime.place import place_selection, streamed
from zarrx.runtime.plan import (
    ChunkBatch,
    ChunkProjection,
    batches_of,
    by_tiles,
    one_chunk,
    plan_batches,
)
from zarrx.runtime.scratch import scratch
from zarrx.selection.layout import Layout

if TYPE_CHECKING:
    from zarrx.codecs.partial import PartialRead

#: Chunks smaller than this (decoded) are fetched in one batch and placed by the caller:
#: decoding and placing one costs less than the GIL hand-offs of sharing them out to the
#: chunk threads (unless the batch kernel places them, without the GIL).
INLINE_BYTES = 16 << 10
#: Chunks of points (``vindex``) decoded at once by the batch kernel before their points
#: are gathered (:func:`_gather_points`): a per-thread scratch of at most this many bytes
#: (100 000 points in 2048 chunks of 128 KiB: 1, 4, 8 and 32 MiB within 3 % of each other).
GATHER_BYTES = 4 << 20


def read_selection(cs: ChunkStore, layout: Layout) -> np.ndarray:
    """A new array holding the selection of ``layout`` (NumPy's result, C-contiguous):
    each touched chunk fetched and decoded once, straight into the result where the
    selection's buffer is a view of it."""
    out = _new(layout.shape, cs.meta.dtype)
    if out.size == 0:
        return out
    target = layout.read_target(out)
    buffer = target if target is not None else _new(layout.buffer_shape, cs.meta.dtype)
    one = one_chunk(cs.grid, cs.meta.shape, layout)
    if one is None or not _read_one(cs, one, buffer):
        read_batches(cs, plan_batches(cs.grid, cs.meta.shape, layout, tiles=cs.tiles), buffer)
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
    batches = batches_of(projections, len(cs.meta.shape))
    tiles = cs.tiles
    read_batches(cs, batches if tiles is None else (by_tiles(b, tiles) for b in batches), out)


def read_batches(cs: ChunkStore, batches: Iterable[ChunkBatch], out: np.ndarray) -> None:
    """Fill ``out`` (the selection buffer) from the chunks of ``batches``.

    Per batch, the source prepares its reads (keys, partial reads, a shard's index and
    ranges); then either the chunk threads each fetch a unit and place its chunks (a
    store read file by file: reads and decoding overlap, each value freed once placed), or
    the batch is fetched at once — stores with batched reads, tiny chunks, a batch of
    fewer units than threads (one big shard) — and its chunks placed in as many slices
    as there are threads."""
    source = cs.source
    threads = config.get("threads")
    for batch in batches:
        n = len(batch)
        chains = cs.chains(batch.coords)
        reads = source.reads(batch, chains)
        bounds = reads.bounds
        units = n if bounds is None else len(bounds) - 1
        tiny = n > 1 and chains[0].spec.nbytes < INLINE_BYTES
        if cs.store.batched_reads or tiny or units < min(threads, n):
            fetched = reads.fetch_all()
            kernel = _kernel(cs, batch, chains, fetched)
            if tiny and kernel is None:  # their Python holds the GIL: threads would only
                _place(cs, batch, chains, reads, fetched, None, 0, n, out=out)  # take turns
                continue
            parts = max(1, min(threads, n))
            cuts = [n * k // parts for k in range(parts + 1)]
            place = partial(_place, cs, batch, chains, reads, fetched, kernel, out=out)
            run_all(_slice_of(place), pairwise(cuts))
        elif units == 1:  # (a small read: one unit, in this thread)
            _unit(cs, batch, chains, reads, out, bounds, 0)
        elif bounds is None:
            run_all(partial(_unit, cs, batch, chains, reads, out, None), range(n))
        else:
            run_all(partial(_unit, cs, batch, chains, reads, out, bounds), range(units))


def _read_one(cs: ChunkStore, p: ChunkProjection, out: np.ndarray) -> bool:
    """Read the one chunk of a small read (a point, a few elements: ``p``) into ``out``,
    in this thread, without a batch; ``False``, having read nothing, where the source
    reads it only as a batch."""
    chain = cs.chain(cs.grid.chunk_shape_at(p.coords))
    read = cs.source.read_one(p, chain)
    if read is None:
        return False
    try:
        _place_value(cs, chain, p.chunk_selection, p.out_selection, False, read.value(),
                     lambda _: read.key(), 0, out)
    except CodecError as e:
        raise read.named(e) from None
    return True


def _slice_of(place: Any) -> Any:
    def run(bounds: tuple[int, int]) -> None:
        place(*bounds)

    return run


def _unit(cs: ChunkStore, batch: ChunkBatch, chains: list[PreparedChain], reads: Reads,
          out: np.ndarray, bounds: np.ndarray | None, u: int) -> None:
    """Fetch unit ``u`` (in this chunk thread) and place its chunks."""
    fetched = reads.fetch(u)
    lo, hi = (u, u + 1) if bounds is None else (int(bounds[u]), int(bounds[u + 1]))
    _place(cs, batch, chains, reads, fetched, _kernel(cs, batch, chains, fetched), lo, hi,
           out=out)


def _kernel(cs: ChunkStore, batch: ChunkBatch, chains: list[PreparedChain],
            fetched: Fetched) -> Any:
    """The batch kernel that places these chunks in one call (``None``: one by one)."""
    if batch.starts is None or not cs.uniform or not fetched.plain():
        return None
    return getattr(chains[0], "batch_decoder", None)


def _place(cs: ChunkStore, batch: ChunkBatch, chains: list[PreparedChain], reads: Reads,
           fetched: Fetched, kernel: Any, lo: int, hi: int, *, out: np.ndarray) -> None:
    """Decode and place chunks ``lo`` to ``hi`` of ``batch`` (their values in ``fetched``)."""
    if lo >= hi:
        return
    if kernel is not None:
        a, b = lo - fetched.lo, hi - fetched.lo
        assert batch.starts is not None
        assert batch.counts is not None
        assert batch.outs is not None
        assert batch.steps is not None
        steps = np.broadcast_to(np.asarray(batch.steps, np.int64), (hi - lo, len(batch.steps)))
        try:
            kernel.place(fetched.sources, fetched.which[a:b], fetched.offsets[a:b],
                         fetched.sizes[a:b], batch.starts[lo:hi], steps,
                         batch.counts[lo:hi], batch.outs[lo:hi], out, cs.elements.fill)
        except CodecError as e:
            raise reads.named(lo + getattr(e, "chunk", 0), e) from None
        return
    selections, outs = batch.chunk_selections, batch.out_selections
    fancy = batch.fancy
    if fancy is not None and _gather_points(cs, batch, chains, reads, fetched, lo, hi, out):
        return
    for i in range(lo, hi):
        try:
            _place_value(cs, chains[i], selections[i], outs[i], fancy is not None and fancy[i],
                         fetched.value(i), reads.key, i, out)
        except CodecError as e:
            raise reads.named(i, e) from None


def _gather_points(cs: ChunkStore, batch: ChunkBatch, chains: list[PreparedChain],
                   reads: Reads, fetched: Fetched, lo: int, hi: int, out: np.ndarray) -> bool:
    """Chunks ``lo`` to ``hi`` of a batch of points (an index array on every axis of each
    chunk, into a 1-d buffer: ``vindex``), where their chain has a batch kernel: decoded
    whole by one kernel call without the GIL per :data:`GATHER_BYTES` of chunks into a
    stack of images, then every point gathered from the stack by one NumPy gather;
    ``False``, having done nothing, for any other batch."""
    decoder = getattr(chains[0], "batch_decoder", None) if cs.uniform else None
    selections, outs = batch.chunk_selections, batch.out_selections
    if decoder is None or out.ndim != 1 or not fetched.plain() or not all(
            len(outs[i]) == 1 and all(type(s) is np.ndarray and s.ndim == 1
                                      for s in (*selections[i], outs[i][0]))
            for i in range(lo, hi)):
        return False
    shape = chains[0].spec.shape
    dtype = chains[0].spec.dtype
    per = math.prod(shape)
    ndim = len(shape)
    group = max(1, GATHER_BYTES // (per * dtype.itemsize))
    for first in range(lo, hi, group):
        last = min(hi, first + group)
        k = last - first
        with scratch(k * per * dtype.itemsize) as raw:
            stack = raw.view(dtype).reshape((k * shape[0], *shape[1:]))
            at = np.zeros((k, ndim), dtype=np.int64)
            at[:, 0] = np.arange(k) * shape[0]
            a, b = first - fetched.lo, last - fetched.lo
            try:
                decoder.place(fetched.sources, fetched.which[a:b], fetched.offsets[a:b],
                              fetched.sizes[a:b], np.zeros((k, ndim), np.int64),
                              np.ones((k, ndim), np.int64), np.tile(shape, (k, 1)), at,
                              stack, cs.elements.fill)
            except CodecError as e:
                raise reads.named(first + getattr(e, "chunk", 0), e) from None
            flat = np.concatenate([np.ravel_multi_index(selections[i], shape) + (i - first) * per
                                   for i in range(first, last)])
            positions = np.concatenate([outs[i][0] for i in range(first, last)])
            out[positions] = stack.reshape(-1)[flat]
    return True


def _place_value(cs: ChunkStore, chain: PreparedChain, selection: tuple[Any, ...],
                 out_selection: tuple[Any, ...], fancy: bool, data: Any,
                 key: Callable[[int], str], i: int, out: np.ndarray) -> None:
    """Decode chunk ``i``'s ``data`` (stored bytes, ``None``: absent, or a partial read;
    ``key(i)`` its key) and place its ``selection`` at ``out_selection`` of ``out``."""
    if data is not None and not isinstance(data, bytes | memoryview):
        if _place_part(cs, out, selection, out_selection, data):
            return
        data = cs.store.get(key(i))  # a partial read (a chunk per key) that failed: all of it
    place_selection(chain, cs.elements, selection, out_selection, fancy, data, out)


def _place_part(cs: ChunkStore, out: np.ndarray, selection: tuple[Any, ...],
                out_selection: tuple[Any, ...], p: PartialRead) -> bool:
    """Place the partial read ``p`` of a chunk; ``False``, having written nothing, when it
    failed (the chunk is then read whole)."""
    if p.failed is not None:
        return False
    try:
        place_selection(p, cs.elements, selection, out_selection, False,
                        None if p.absent else p, out)
    except CodecError:
        return False
    return True
