"""An array as the engine sees it: a store, where its chunks live, and its metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from zarrx.abc.codec import ChunkSpec
from zarrx.abc.store import Store
from zarrx.chunk_grids.regular import RegularChunkGrid
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
    elements: Elements = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "elements", Elements.of(self.meta.dtype, self.meta.fill_value))

    def key(self, coords: tuple[int, ...]) -> str:
        return self.data_prefix + self.meta.chunk_key(coords)

    def spec(self, coords: tuple[int, ...]) -> ChunkSpec:
        grid: Any = self.meta.chunk_grid
        return ChunkSpec(grid.chunk_shape_at(coords), self.meta.dtype, self.meta.fill_value)

    @cached_property
    def shards(self) -> ShardLayout | None:
        """The shard layout when the array's codecs are one ``sharding_indexed`` codec on a
        regular grid: the engine then reads and writes inner chunks (:mod:`.shards`).
        ``None`` otherwise: a shard nested in a longer chain is one opaque chunk."""
        codecs = self.meta.codecs.codecs
        grid = self.meta.chunk_grid
        if len(codecs) != 1 or codecs[0].name != "sharding_indexed" or not hasattr(
            codecs[0], "layout"
        ):
            return None
        if not isinstance(grid, RegularChunkGrid) or not self.meta.shape:
            return None
        spec = self.spec((0,) * len(self.meta.shape))
        sharding: Any = self.meta.codecs.prepare(spec).array_bytes
        layout: ShardLayout = sharding.layout(spec)
        return layout
