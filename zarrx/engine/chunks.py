"""An array as the engine sees it: a store, where its chunks live, and its metadata.

What the engine asks per chunk is answered per batch or per chunk shape here: the keys of
a batch of chunks are built at once (:func:`zarrx._core.keys.chunk_keys`, where the
array's key layout is ``head`` plus coordinates joined by a separator, as every Zarr
format's is), and the codec chain is prepared once per distinct chunk shape (a regular
grid has one) instead of once per chunk.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx import config
from zarrx._core.keys import chunk_keys
from zarrx.abc.codec import ChunkSpec
from zarrx.abc.store import Store
from zarrx.chunk_grids.regular import RegularChunkGrid
from zarrx.codecs.pipeline import PreparedChain
from zarrx.engine.sources import ChunkSource, KeyChunks
from zarrx.metadata.model import ArrayMetadata
from zarrx.runtime.elements import Elements

if TYPE_CHECKING:  # the sharding codec loads on first use, as every codec does
    from zarrx.codecs.sharding import ShardLayout


@dataclass(frozen=True)
class ChunkStore:
    """Reads and writes the chunks of one array, format-independently."""

    store: Store
    data_prefix: str  # e.g. "path/to/array/" (v3), "data/root/path/" (draft)
    meta: ArrayMetadata
    node: str  # for messages
    #: The array's own ``write_empty_chunks`` (its ``config=``), or ``None``: zarrx.config's.
    write_empty_chunks: bool | None = None
    elements: Elements = field(init=False)
    grid: Any = field(init=False, repr=False, compare=False)
    #: ``(head, separator)`` when every chunk key is ``head`` + the coordinates joined by
    #: ``separator`` (checked on probes; ``None``: ask :meth:`key` per chunk).
    key_layout: tuple[str, str] | None = field(init=False, repr=False, compare=False)
    _chains: dict[tuple[int, ...], PreparedChain] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "elements", Elements.of(self.meta.dtype, self.meta.fill_value))
        object.__setattr__(self, "key_layout", _key_layout(self.meta, self.data_prefix))
        object.__setattr__(self, "_chains", {})
        levels = self.levels
        # The grid the engine plans on: the innermost chunks' of a sharded array.
        object.__setattr__(self, "grid", self.meta.chunk_grid if not levels else
                           RegularChunkGrid(levels[-1].chunk_shape))

    def writes_empty_chunks(self) -> bool:
        """Whether a chunk whose every element equals the fill value is stored (else it is
        erased): the array's own setting, else ``zarrx.config``'s at the time of the write."""
        if self.write_empty_chunks is not None:
            return self.write_empty_chunks
        return bool(config.get("write_empty_chunks"))

    def key(self, coords: tuple[int, ...]) -> str:
        layout = self.key_layout
        if layout is not None:  # (proven equal to the metadata's key on probes)
            return layout[0] + layout[1].join(map(str, coords))
        return self.data_prefix + self.meta.chunk_key(coords)

    def keys(self, coords: np.ndarray) -> list[str]:
        """The keys of the chunks at the rows of ``coords`` (``(n, ndim)`` integers)."""
        if self.key_layout is not None and len(coords):
            return chunk_keys(*self.key_layout, coords)
        return [self.key(tuple(c)) for c in coords.tolist()]

    def spec(self, coords: tuple[int, ...]) -> ChunkSpec:
        return ChunkSpec(self.grid.chunk_shape_at(coords), self.meta.dtype, self.meta.fill_value)

    def chain(self, shape: tuple[int, ...]) -> PreparedChain:
        """The codec chain prepared for chunks of ``shape`` (of a sharded array: its inner
        chunks' chain), once per shape."""
        if self.levels:
            return self.levels[-1].inner
        found = self._chains.get(shape)
        if found is None:
            chain = self.meta.codecs.prepare(
                ChunkSpec(shape, self.meta.dtype, self.meta.fill_value)
            )
            with _lock:  # concurrent first uses agree on one value
                found = self._chains.setdefault(shape, chain)
        return found

    def chains(self, coords: np.ndarray) -> list[PreparedChain]:
        """The prepared chain of each chunk at the rows of ``coords``."""
        if self.uniform:
            return [self.chain(self.grid.chunk_shape)] * len(coords)
        return [self.chain(self.grid.chunk_shape_at(c)) for c in map(tuple, coords.tolist())]

    @property
    def uniform(self) -> bool:
        """Every chunk has one shape (a regular grid)."""
        return isinstance(self.grid, RegularChunkGrid)

    @cached_property
    def source(self) -> ChunkSource:
        """Where the chunks the engine plans are stored: a key each, or (a sharded array)
        many inner chunks to a shard (:mod:`.shard_store`)."""
        if not self.levels:
            return KeyChunks(self)
        from zarrx.engine.shard_store import ShardChunks

        return ShardChunks(self, self.levels)

    @cached_property
    def tiles(self) -> tuple[int, ...] | None:
        """Chunks per storage unit on each axis (a shard's innermost chunks), or ``None``: a
        chunk is a unit. The planner walks the chunks unit by unit."""
        if not self.levels:
            return None
        outer, innermost = self.levels[0].spec.shape, self.levels[-1].chunk_shape
        return tuple(s // c for s, c in zip(outer, innermost))

    @property
    def shards(self) -> ShardLayout | None:
        """The outermost shard layout of a sharded array (see :attr:`levels`), or ``None``."""
        return self.levels[0] if self.levels else None

    @cached_property
    def levels(self) -> list[ShardLayout]:
        """The shard layouts, outermost first, when the array's codecs are one codec
        declaring inner chunks (``sharding_indexed``) on a regular grid — and, while a
        shard's inner chunks are themselves one such codec, theirs (nested sharding): the
        engine then plans, reads and writes the innermost chunks, each shard a store of
        them (:mod:`.shard_store`). Empty otherwise (a shard inside a longer chain is one
        opaque chunk)."""
        codecs = self.meta.codecs.codecs
        grid = self.meta.chunk_grid
        if len(codecs) != 1 or not isinstance(grid, RegularChunkGrid) or not self.meta.shape:
            return []
        spec = ChunkSpec(grid.chunk_shape, self.meta.dtype, self.meta.fill_value)
        levels: list[ShardLayout] = []
        chain = self.meta.codecs.prepare(spec)
        while not chain.array_array and not chain.bytes_bytes:
            layout = chain.array_bytes.inner_chunks(chain.spec)
            if layout is None:
                break
            levels.append(layout)
            chain = layout.inner
        return levels


_lock = threading.Lock()


def _key_layout(meta: ArrayMetadata, prefix: str) -> tuple[str, str] | None:
    """``(head, separator)`` such that ``prefix + meta.chunk_key(c)`` is ``head`` plus the
    coordinates in decimal joined by ``separator``, proven on probes that tell every
    part apart (zero, one digit, many digits, all axes different); ``None`` when the
    array's key encoding is another one (a plugin's) or the array is 0-d."""
    ndim = len(meta.shape)
    if ndim == 0:
        return None
    probes = [
        tuple(range(101, 101 + 7 * ndim, 7)),
        (0,) * ndim,
        tuple(range(1, ndim + 1)),
        tuple(2**62 + k for k in range(ndim)),
    ]
    first = meta.chunk_key(probes[0])
    for separator in ("/", "."):
        tail = separator.join(map(str, probes[0]))
        if not first.endswith(tail):
            continue
        head = first[: len(first) - len(tail)]
        if all(
            meta.chunk_key(p) == head + separator.join(map(str, p)) for p in probes[1:]
        ):
            return prefix + head, separator
    return None
