"""The rules of writing one chunk, shared by whole chunks (:mod:`.write`) and the inner
chunks of a shard (:mod:`.shard_store`): a chunk the value covers is encoded from the value
where it lies; a partly covered one is built from its old value (or the fill value) and
the new cells; a chunk all fill value is not stored. And the hand-off of encoded values
to the I/O threads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from zarrx import config
from zarrx.abc.store import Store
from zarrx.codecs.pipeline import PreparedChain
from zarrx.errors import CodecError
from zarrx.runtime.elements import Elements
from zarrx.runtime.executor import BackgroundWrites
from zarrx.runtime.place import place
from zarrx.runtime.plan import ChunkProjection
from zarrx.runtime.scratch import scratch

#: All of a chunk, into all of a buffer of its shape.
WHOLE = ChunkProjection((), (Ellipsis,), (Ellipsis,), True)


def covers(p: ChunkProjection, shape: tuple[int, ...]) -> bool:
    """The projection's slices span the whole stored chunk (no fill needed around them)."""
    return not p.fancy and spans(p.chunk_selection, shape)


def spans(selection: tuple[Any, ...], shape: tuple[int, ...]) -> bool:
    """In-chunk slices that span all of a chunk of ``shape``."""
    return all(s.start == 0 and s.stop == n and s.step == 1 for s, n in zip(selection, shape))


#: Encoded values per chunk thread that may wait for the I/O threads: up to
#: :data:`IN_FLIGHT` while they hold at most :data:`IN_FLIGHT_BYTES`, and always
#: :data:`FEW_IN_FLIGHT` (large chunks or shards). A local write replacing a file takes
#: ~1-3 ms of wall time (the kernel starts writing the new file's data back at the
#: rename, and waits when the disk's queue is full) for ~1 ms of encoding. A full write
#: of 256 MiB in 1 MiB chunks (blosc lz4, 2 threads): with 4 a thread on 8 I/O threads the
#: chunk threads waited for room 8-44 ms (median 28) of each ~210 ms write; with 8 on 16
#: I/O threads (:data:`~zarrx.runtime.executor.IO_THREADS`), under 1 ms, and the write
#: took 0.95-0.97 of the wall time (4 interleaved pairs of 12).
IN_FLIGHT = 8
FEW_IN_FLIGHT = 4
IN_FLIGHT_BYTES = 8 << 20


def in_flight_bytes(value_bytes: int) -> int:
    """The most bytes one chunk thread's writes of values of up to ``value_bytes`` keep
    waiting for the I/O threads."""
    return max(FEW_IN_FLIGHT * value_bytes, min(IN_FLIGHT * value_bytes, IN_FLIGHT_BYTES))


@contextmanager
def background_writes(store: Store) -> Iterator[Store | BackgroundWrites]:
    """A ``BackgroundWrites`` that hands writes to the I/O threads, so encoding the next
    chunk overlaps writing this one; every write is done when the block ends. One thread
    (``zarrx.config``) means none: the store is then only ever called by the caller."""
    threads = config.get("threads")
    writes = None
    if threads > 1:
        writes = BackgroundWrites(store, limit=IN_FLIGHT * threads,
                                  few=FEW_IN_FLIGHT * threads,
                                  budget=IN_FLIGHT_BYTES * threads)
    try:
        yield store if writes is None else writes
    except BaseException:
        if writes is not None:
            writes.wait(raise_failure=False)  # finish what was handed over; keep this error
        raise
    if writes is not None:
        writes.wait()


def new_chunk(
    chain: PreparedChain,
    elements: Elements,
    value: np.ndarray,
    p: ChunkProjection,
    existing: Any,
    write_empty: bool,
    name: str,
) -> Any:
    """The stored bytes of the chunk ``p`` writes ``value[p.out_selection]`` into (built
    from its stored bytes ``existing`` when only partly covered), or ``None`` when it is
    all fill value and ``write_empty`` is false. ``name`` names the chunk in errors."""
    spec = chain.spec
    if existing is None and covers(p, spec.shape):
        # The new value is the whole chunk: encode it where it lies.
        return encode_chunk(chain, elements, write_empty, value[p.out_selection])
    if elements.variable:
        chunk = np.empty(spec.shape, dtype=spec.dtype)
        _build(chain, elements, value, p, existing, chunk, name)
        return encode_chunk(chain, elements, write_empty, chunk)
    with scratch(spec.nbytes) as memory:
        chunk = memory.view(spec.dtype).reshape(spec.shape)
        _build(chain, elements, value, p, existing, chunk, name)
        encoded = encode_chunk(chain, elements, write_empty, chunk)
        if encoded is not None and np.may_share_memory(np.frombuffer(encoded, "u1"), memory):
            encoded = bytes(encoded)  # the bytes codec alone returns a view
    return encoded


def encode_chunk(chain: PreparedChain, elements: Elements, write_empty: bool,
                 chunk: np.ndarray) -> Any:
    """The stored bytes of the whole chunk ``chunk`` (any strides), or ``None`` when it is
    all fill value and ``write_empty`` is false."""
    if not write_empty and elements.is_fill(chunk):
        return None
    return chain.encode(chunk)


def encode_chunks(chain: PreparedChain, elements: Elements, write_empty: bool,
                  chunks: list[np.ndarray]) -> list[Any]:
    """:func:`encode_chunk` of each of ``chunks`` (of one chain), the ones to store
    encoded together (:meth:`PreparedChain.encode_many`)."""
    keep = [i for i, chunk in enumerate(chunks) if write_empty or not elements.is_fill(chunk)]
    out: list[Any] = [None] * len(chunks)
    for i, data in zip(keep, chain.encode_many([chunks[i] for i in keep])):
        out[i] = data
    return out


def _build(
    chain: PreparedChain,
    elements: Elements,
    value: np.ndarray,
    p: ChunkProjection,
    existing: Any,
    chunk: np.ndarray,
    name: str,
) -> None:
    """Fill ``chunk`` with its new contents: the old value (or the fill value) around
    the written part."""
    if existing is not None:
        try:
            place(chain, elements, WHOLE, existing, chunk)
        except CodecError as e:
            raise type(e)(f"{name} could not be decoded: {e}") from None
    elif not covers(p, chunk.shape):
        elements.fill_region(chunk)
    if p.fancy:
        chunk[p.chunk_selection] = value[p.out_selection]
    else:
        elements.copy(value[p.out_selection], chunk[p.chunk_selection])
